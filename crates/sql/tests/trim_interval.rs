//! `TRIM([BOTH|LEADING|TRAILING] remstr FROM str)` (remstr removed bytewise,
//! repeatedly, case-sensitively) and microsecond intervals: `INTERVAL n
//! MICROSECOND`, `TIMESTAMPADD(MICROSECOND, ...)` and the `_MICROSECOND`
//! compound units (the last part a fraction of a second, as MariaDB reads
//! it), typed DATETIME(6) for temporal operands and written with six digits
//! for text ones. Expected answers are MariaDB 10.11's.
#![allow(clippy::unwrap_used)]

mod common;
use common::{q, rows as t, show_create, TestDb};

#[test]
fn trim_from() {
    let db = TestDb::open("sql-trim-from");
    let mut s = db.session(1, "root", None);
    assert_eq!(
        t(
            &mut s,
            "SELECT TRIM(BOTH 'x' FROM 'xxaxx'), TRIM(LEADING 'xy' FROM 'xyxyaxy'), \
             TRIM('x' FROM 'xax'), TRIM('X' FROM 'xax'), TRIM(LEADING 'ab' FROM 'ababa'), \
             TRIM(TRAILING 'aa' FROM 'aaaaa'), TRIM(BOTH 'é' FROM 'éaé'), TRIM(1 FROM 1121)"
        ),
        ["a|axy|a|xax|a|a|a|2"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT TRIM('a' FROM NULL), TRIM(NULL FROM 'a'), TRIM('' FROM 'aa'), \
             TRIM('x' FROM 'xxx'), TRIM(BOTH 'ab' FROM 'abxab'), TRIM(LEADING 'a' FROM 'aAa'), \
             CONCAT('[', TRIM(TRAILING ' ' FROM ' x '), ']')"
        ),
        ["NULL|NULL|aa||x|Aa|[ x]"]
    );
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(&mut s, "CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20))");
    q(
        &mut s,
        "INSERT INTO w VALUES (1, '--a--'), (2, '-b'), (3, NULL)",
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id, TRIM(BOTH '-' FROM s), TRIM(LEADING '-' FROM s) FROM w ORDER BY id"
        ),
        ["1|a|a--", "2|b|b", "3|NULL|NULL"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM w WHERE TRIM('-' FROM s) = 'B'"),
        ["2"]
    );
}

#[test]
fn microsecond_intervals() {
    let db = TestDb::open("sql-interval-micro");
    let mut s = db.session(1, "root", None);
    assert_eq!(
        t(
            &mut s,
            "SELECT '2020-01-01 00:00:00' + INTERVAL 1 MICROSECOND, \
             '2020-01-01' + INTERVAL 0 MICROSECOND, \
             TIMESTAMPADD(MICROSECOND, 1500000, '2020-01-01'), \
             TIMESTAMPADD(MICROSECOND, -1, '2020-01-01')"
        ),
        ["2020-01-01 00:00:00.000001|2020-01-01 00:00:00.000000|\
             2020-01-01 00:00:01.500000|2019-12-31 23:59:59.999999"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT DATE_ADD(DATE'2020-01-01', INTERVAL 5 MICROSECOND), \
             TIMESTAMP'2020-01-01 10:00:00' - INTERVAL 1 MICROSECOND, \
             DATE_SUB(TIMESTAMP'2020-03-01 00:00:00', INTERVAL 1 MICROSECOND), \
             DATE_ADD('9999-12-31 23:59:59.999999', INTERVAL 1 MICROSECOND)"
        ),
        ["2020-01-01 00:00:00.000005|2020-01-01 09:59:59.999999|\
             2020-02-29 23:59:59.999999|NULL"]
    );
    // Compound units: the last part is a fraction of a second.
    let c = |s: &mut sql::Session, iv: &str| {
        t(
            s,
            &format!("SELECT DATE_ADD('2020-01-01 00:00:00', INTERVAL {iv})"),
        )
        .remove(0)
    };
    for (iv, want) in [
        ("'1.5' SECOND_MICROSECOND", "2020-01-01 00:00:01.500000"),
        (
            "'1.000002' SECOND_MICROSECOND",
            "2020-01-01 00:00:01.000002",
        ),
        (
            "'1.1234567' SECOND_MICROSECOND",
            "2020-01-01 00:00:01.123456",
        ),
        ("'5' SECOND_MICROSECOND", "2020-01-01 00:00:00.500000"),
        ("'-1.5' SECOND_MICROSECOND", "2019-12-31 23:59:58.500000"),
        (
            "'1:1.000002' MINUTE_MICROSECOND",
            "2020-01-01 00:01:01.000002",
        ),
        ("'12' MINUTE_MICROSECOND", "2020-01-01 00:00:00.120000"),
        ("'1:1:1.1' HOUR_MICROSECOND", "2020-01-01 01:01:01.100000"),
        ("'1 1:1:1.1' DAY_MICROSECOND", "2020-01-02 01:01:01.100000"),
        ("'1:2:3:4:5' DAY_MICROSECOND", "2020-01-02 02:03:04.500000"),
        ("'1:2:3' SECOND_MICROSECOND", "NULL"),
    ] {
        assert_eq!(c(&mut s, iv), want, "{iv}");
    }
    // Temporal operands give DATETIME(6).
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(&mut s, "CREATE TABLE tm (d DATETIME, dt DATE)");
    q(
        &mut s,
        "INSERT INTO tm VALUES ('2020-01-01 01:02:03', '2020-02-02')",
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT dt + INTERVAL 1 MICROSECOND, d - INTERVAL '0.25' SECOND_MICROSECOND FROM tm"
        ),
        ["2020-02-02 00:00:00.000001|2020-01-01 01:02:02.750000"]
    );
    q(
        &mut s,
        "CREATE TABLE tm2 AS SELECT d + INTERVAL 0 MICROSECOND a, \
         TIMESTAMPADD(MICROSECOND, 0, dt) b, d + INTERVAL '1.1' SECOND_MICROSECOND e FROM tm",
    );
    let sc = show_create(&mut s, "tm2");
    assert!(sc.contains("`a` datetime(6)"), "{sc}");
    assert!(sc.contains("`b` datetime(6)"), "{sc}");
    assert!(sc.contains("`e` datetime(6)"), "{sc}");
}
