//! Numeric and temporal edges answer as MySQL does or fail with its error, never with a
//! silently wrong value (issue 14 item 9).
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::Session;

mod common;
use common::TestDb;

fn open() -> TestDb {
    TestDb::open("sql-numeric")
}

fn cell(s: &mut Session, sql: &str) -> String {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(c.rows.len(), 1, "{sql}");
    String::from_utf8_lossy(&c.rows[0][0].text()).into_owned()
}

fn err(s: &mut Session, sql: &str) -> u16 {
    let mut c = Collect::default();
    match s.query(sql, &mut c) {
        Ok(_) => panic!("accepted: {sql}: {:?}", c.rows),
        Err(e) => e.code,
    }
}

fn warning_codes(s: &mut Session) -> Vec<String> {
    let mut c = Collect::default();
    s.query("SHOW WARNINGS", &mut c).unwrap();
    c.rows
        .iter()
        .map(|r| String::from_utf8_lossy(&r[1].text()).into_owned())
        .collect()
}

#[test]
fn decimal_arithmetic_keeps_its_value() {
    let inst = open();
    let mut s = inst.session(1, "root", None);
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE m (id INT PRIMARY KEY, a DECIMAL(36,18), b DECIMAL(36,18))",
    ] {
        s.query(sql, &mut Collect::default()).unwrap();
    }
    s.query(
        "INSERT INTO m VALUES (1, 2.0, 3.0)",
        &mut Collect::default(),
    )
    .unwrap();
    // Scale 36 > 30: the product is rounded to scale 30, not shifted by powers of ten.
    let p = cell(&mut s, "SELECT a * b FROM m");
    assert!(p.starts_with("6.000000"), "{p}");
    assert_eq!(
        cell(&mut s, "SELECT a * b = 6 FROM m"),
        "1",
        "2.0 x 3.0 must equal 6"
    );
    // As MySQL: a product below the 30th decimal rounds to zero.
    assert_eq!(
        cell(
            &mut s,
            "SELECT 0.000000000000000001 * 0.000000000000000001 = 0"
        ),
        "1"
    );
    assert_eq!(
        cell(&mut s, "SELECT 0.000000000000005 * 0.0000000000000001"),
        "0.000000000000000000000000000001"
    );
    // Overflow is an error, not a wrapped or saturated value.
    assert_eq!(
        err(
            &mut s,
            "SELECT 99999999999999999999.99999999999999999 * 99999999999999999999.99999999999999999"
        ),
        1690
    );
}

#[test]
fn numeric_edges_match_mysql() {
    let inst = open();
    let mut s = inst.session(1, "root", None);
    assert_eq!(err(&mut s, "SELECT ABS(-9223372036854775808)"), 1690);
    assert_eq!(
        cell(&mut s, "SELECT ABS(-9223372036854775807)"),
        "9223372036854775807"
    );
    assert_eq!(err(&mut s, "SELECT 1e308 * 10"), 1690);
    assert_eq!(err(&mut s, "SELECT POW(2, 10000)"), 1690);
    assert_eq!(err(&mut s, "SELECT -1e308 - 1e308"), 1690);
    assert_eq!(cell(&mut s, "SELECT SQRT(-1) IS NULL"), "1");
    assert_eq!(
        cell(&mut s, "SELECT CAST(18446744073709551615 AS SIGNED)"),
        "-1"
    );
    assert_eq!(
        cell(&mut s, "SELECT CAST(-1 AS UNSIGNED)"),
        "18446744073709551615"
    );
    assert_eq!(
        cell(&mut s, "SELECT CAST('18446744073709551615' AS SIGNED)"),
        "-1"
    );
    assert_eq!(cell(&mut s, "SELECT FROM_UNIXTIME(-1) IS NULL"), "1");
    assert_eq!(
        cell(&mut s, "SELECT FROM_UNIXTIME(0)"),
        "1970-01-01 00:00:00"
    );
    assert_eq!(
        cell(&mut s, "SELECT FROM_UNIXTIME(99999999999) IS NULL"),
        "1"
    );
    assert_eq!(cell(&mut s, "SELECT CAST('12abc' AS SIGNED)"), "12");
    assert_eq!(warning_codes(&mut s), vec!["1292"]);
    assert_eq!(cell(&mut s, "SELECT CAST(' 12 ' AS SIGNED)"), "12");
    assert!(warning_codes(&mut s).is_empty());
    // Found by the differential test against MariaDB: XOR ranks below comparisons,
    // BETWEEN with a NULL bound is three-valued.
    assert_eq!(cell(&mut s, "SELECT 0 XOR 'x' LIKE 'x%'"), "1");
    assert_eq!(cell(&mut s, "SELECT 1 IS NULL XOR 2 > 1"), "1");
    assert_eq!(cell(&mut s, "SELECT 1 = 1 XOR 1 = 1 OR 1"), "1");
    assert_eq!(cell(&mut s, "SELECT 1 BETWEEN 2 AND NULL"), "0");
    assert_eq!(cell(&mut s, "SELECT NOT (19 BETWEEN 20 AND NULL)"), "1");
    assert_eq!(cell(&mut s, "SELECT 3 BETWEEN NULL AND 5 IS NULL"), "1");
    assert_eq!(cell(&mut s, "SELECT 3 NOT BETWEEN NULL AND 2"), "1");
    // UPDATE IGNORE runs (tests/sql_mode.rs); these spellings are still refused.
    assert_eq!(err(&mut s, "UPDATE LOW_PRIORITY IGNORE t SET a = 1"), 1235);
    assert_eq!(err(&mut s, "DELETE LOW_PRIORITY IGNORE FROM t"), 1235);
}
