//! Statement shapes ORMs generate, through a Session (the ORMs themselves run in
//! the server's e2e_orm.rs): parenthesized joins (`t LEFT JOIN (a JOIN b ON ..)
//! ON ..`, SQLAlchemy's eager load of a many-to-many relationship), correlated
//! `[NOT] EXISTS` rewritten as IN subqueries (`any()`/`has()`) with NULLs on
//! both sides and `?` parameters inside, the EXISTS forms still refused, and
//! CONVERT_TZ (Django's connection check and time zone lookups). The same
//! statements' answers are compared with MariaDB's in the diff_mariadb corpus.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::Value;

mod common;
use common::{err, q, texts, TestDb};

fn setup(s: &mut sql::Session) {
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE a (id INT PRIMARY KEY, k INT)",
        "CREATE TABLE b (id INT PRIMARY KEY, aid INT, KEY (aid))",
        "CREATE TABLE c (id INT PRIMARY KEY, bid INT, k INT)",
        "INSERT INTO a VALUES (1, 1), (2, 2), (3, NULL), (4, 4)",
        "INSERT INTO b VALUES (10, 1), (11, 2), (12, 2), (13, 3), (14, NULL)",
        "INSERT INTO c VALUES (100, 10, 5), (101, 12, 7), (102, 13, 5), (103, NULL, 5)",
    ] {
        q(s, st);
    }
}

#[test]
fn parenthesized_joins() {
    let db = TestDb::open("sql-orm-nested");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    // The group matches as a whole or is NULL-extended as a whole: a's row 2
    // has b 11 (no c) and b 12 (with c 101); only 12 pairs.
    assert_eq!(
        t(
            &mut s,
            "SELECT a.id, b.id, c.id FROM a LEFT JOIN (b JOIN c ON c.bid = b.id) ON b.aid = a.id \
             ORDER BY a.id, b.id"
        ),
        vec!["1|10|100", "2|12|101", "3|13|102", "4|NULL|NULL"]
    );
    // A LEFT JOIN inside the group: its NULL rows reach the group's ON condition.
    assert_eq!(
        t(
            &mut s,
            "SELECT a.id, b.id, c.id FROM a LEFT JOIN (b LEFT JOIN c ON c.bid = b.id) \
             ON b.aid = a.id AND (c.k = 5 OR c.k IS NULL) ORDER BY a.id, b.id"
        ),
        vec!["1|10|100", "2|11|NULL", "3|13|102", "4|NULL|NULL"]
    );
    // Inner-joined groups filter; nested groups; a group's condition reading a
    // table before it.
    assert_eq!(
        t(
            &mut s,
            "SELECT a.id, b.id FROM a JOIN (b JOIN c ON c.bid = b.id AND c.k = 5) ON b.aid = a.id \
             ORDER BY a.id"
        ),
        vec!["1|10", "3|13"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT a.id, b.id, c.id FROM a LEFT JOIN (b LEFT JOIN (c JOIN a AS a2 ON a2.k = c.k - 4) \
             ON c.bid = b.id) ON b.aid = a.id WHERE a.id < 3 ORDER BY a.id, b.id"
        ),
        vec!["1|10|100", "2|11|NULL", "2|12|NULL"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM a LEFT JOIN (b JOIN c ON c.bid = b.id AND c.k = a.k + 4) ON b.aid = a.id"
        ),
        vec!["4"]
    );
    // Parentheses without a join condition change nothing.
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM (a JOIN b ON b.aid = a.id)"),
        vec!["4"]
    );
    assert_eq!(
        err(
            &mut s,
            "SELECT * FROM a JOIN (b JOIN c ON c.bid = b.id) AS x ON x.aid = a.id"
        ),
        1235
    );
}

#[test]
fn correlated_exists_runs_as_in() {
    let db = TestDb::open("sql-orm-exists");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id) ORDER BY id"
        ),
        vec!["1", "2", "3"]
    );
    // NULL on the outer side: EXISTS is false, NOT EXISTS true (never NULL).
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE b.aid = a.k) ORDER BY id"
        ),
        vec!["3", "4"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM a WHERE NOT (EXISTS (SELECT 1 FROM b WHERE b.aid = a.k) AND id > 1) \
             ORDER BY id"
        ),
        vec!["1", "3", "4"]
    );
    // NULLs among the inner values do not make NOT EXISTS NULL.
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM b WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.bid = b.id) ORDER BY id"
        ),
        vec!["11", "14"]
    );
    // Joins inside, other conditions, OR around, LIMIT 1, has() direction.
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b, c WHERE a.id = b.aid AND c.bid = b.id \
             AND c.k > 5 LIMIT 1) OR a.id = 4 ORDER BY id"
        ),
        vec!["2", "4"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM b WHERE EXISTS (SELECT 1 FROM a WHERE a.id = b.aid AND a.k IS NULL) ORDER BY id"),
        vec!["13"]
    );
    // `?` parameters before, inside and after the subquery keep their places.
    let (id, n, _) = s
        .prepare(
            "SELECT id FROM a WHERE id > ? AND EXISTS (SELECT 1 FROM c, b WHERE c.bid = b.id \
             AND b.aid = a.id AND c.k = ?) AND id < ? ORDER BY id",
        )
        .unwrap();
    assert_eq!(n, 3);
    let mut run = |a: i64, b: i64, c: i64| {
        let mut out = Collect::default();
        s.execute_prepared(id, &[Value::Int(a), Value::Int(b), Value::Int(c)], &mut out)
            .unwrap();
        texts(out.rows)
    };
    assert_eq!(run(0, 5, 9), vec!["1", "3"]);
    assert_eq!(run(1, 5, 9), vec!["3"]);
    assert_eq!(run(0, 7, 9), vec!["2"]);
    assert_eq!(run(0, 5, 3), vec!["1"]);
    // Forms that are not a single column equality run per row (MariaDB's answers).
    for (st, want) in [
        (
            "SELECT id FROM a WHERE EXISTS (SELECT COUNT(*) FROM b WHERE b.aid = a.id)",
            "1,2,3,4",
        ),
        (
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id AND b.id > a.k)",
            "1,2",
        ),
        (
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id OR b.id = 10)",
            "1,2,3,4",
        ),
        (
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id LIMIT 0)",
            "",
        ),
        (
            "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id GROUP BY b.aid)",
            "1,2,3",
        ),
    ] {
        assert_eq!(
            t(&mut s, &format!("{st} ORDER BY id")).join(","),
            want,
            "{st}"
        );
    }
    // A wrong column in the subquery's select list is MySQL's 1054.
    let e = err(
        &mut s,
        "SELECT id FROM a WHERE EXISTS (SELECT nosuch FROM b WHERE b.aid = a.id)",
    );
    assert_eq!(e, 1054);
}

#[test]
fn convert_tz() {
    let db = TestDb::open("sql-orm-tz");
    let mut s = db.session(1, "root", None);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(
            &mut s,
            "SELECT CONVERT_TZ('2001-01-01 01:00:00', 'UTC', 'utc') IS NOT NULL, \
             CONVERT_TZ('2001-01-01 01:00:00', 'SYSTEM', '+01:00'), \
             CONVERT_TZ('2001-01-01 01:00:00', '+00:00', '+05:30'), \
             CONVERT_TZ('2001-03-01 23:00:00', '-02:00', 'GMT'), \
             CONVERT_TZ('2001-01-01 01:00:00.123456', '+00:00', '+01:00')"
        ),
        vec!["1|2001-01-01 02:00:00|2001-01-01 06:30:00|2001-03-02 01:00:00|2001-01-01 02:00:00.123456"]
    );
    // Unknown zones, offsets out of range, NULL and zero dates are NULL; values
    // outside the TIMESTAMP range are returned unchanged.
    assert_eq!(
        t(
            &mut s,
            "SELECT CONVERT_TZ('2001-01-01 01:00:00', 'Europe/Paris', '+00:00'), \
             CONVERT_TZ('2001-01-01 01:00:00', '+00:00', '+14:01'), \
             CONVERT_TZ(NULL, '+00:00', '+01:00'), CONVERT_TZ('2001-00-01', '+00:00', '+01:00'), \
             CONVERT_TZ('1960-01-01 01:00:00', '+00:00', '+01:00'), \
             CONVERT_TZ('1970-01-01 00:30:00', '+01:00', '+00:00')"
        ),
        vec!["NULL|NULL|NULL|NULL|1960-01-01 01:00:00|1970-01-01 00:30:00"]
    );
    assert_eq!(
        err(&mut s, "SELECT CONVERT_TZ('2001-01-01', '+00:00')"),
        1582
    );
}
