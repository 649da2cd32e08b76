//! `JOIN ... USING (cols)` and `NATURAL [LEFT] JOIN` with MySQL's column
//! merging: `SELECT *` lists a merged column once, first; an unqualified
//! name reaches the merged column, a qualified one each side's; nested
//! joins, parenthesized groups, NULLs (which never match), and the errors
//! (1054 for a column a side lacks, 1052 for one a side has twice); RIGHT
//! JOIN as the first join of its list (ON, USING, NATURAL: MySQL's column
//! order), 1235 elsewhere and in multi-table UPDATE/DELETE. Expected
//! answers are MariaDB 10.11's.
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, rows as t, TestDb};

fn setup(s: &mut sql::Session) {
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE t1 (a INT, b INT, c INT)",
        "CREATE TABLE t2 (a INT, b INT, d INT)",
        "CREATE TABLE t3 (a INT, e INT)",
        "INSERT INTO t1 VALUES (1, 1, 10), (2, 2, 20), (NULL, 3, 30)",
        "INSERT INTO t2 VALUES (1, 5, 100), (3, 3, 300), (NULL, 3, 400)",
        "INSERT INTO t3 VALUES (1, 7), (2, 8), (NULL, 9)",
        "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10))",
        "CREATE TABLE ch (cid INT PRIMARY KEY, id INT, KEY (id))",
        "INSERT INTO p VALUES (1, 'one'), (2, 'two'), (3, 'three')",
        "INSERT INTO ch VALUES (10, 1), (11, 1), (12, 3), (13, NULL)",
    ] {
        q(s, st);
    }
}

#[test]
fn using_merges_columns() {
    let db = TestDb::open("sql-join-using");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 JOIN t2 USING (a)"),
        ["1|1|10|5|100"]
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 LEFT JOIN t2 USING (a) ORDER BY c"),
        ["1|1|10|5|100", "2|2|20|NULL|NULL", "NULL|3|30|NULL|NULL"]
    );
    // The merged column first, then each side's others in order.
    assert_eq!(
        t(&mut s, "SELECT * FROM t2 JOIN t1 USING (a)"),
        ["1|5|100|1|10"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT a, t1.a, t2.a FROM t1 LEFT JOIN t2 USING (a) ORDER BY c"
        ),
        ["1|1|1", "2|2|NULL", "NULL|NULL|NULL"]
    );
    // Qualified stars list all of the table's columns.
    assert_eq!(
        t(&mut s, "SELECT t2.*, t1.* FROM t1 JOIN t2 USING (a)"),
        ["1|5|100|1|1|10"]
    );
    // Unqualified `a` is not ambiguous anywhere in the statement.
    assert_eq!(
        t(
            &mut s,
            "SELECT a, d FROM t1 JOIN t2 USING (a) WHERE a = 1 ORDER BY a"
        ),
        ["1|100"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT a, COUNT(*) FROM t1 LEFT JOIN t3 USING (a) GROUP BY a ORDER BY a"
        ),
        ["NULL|1", "1|1", "2|1"]
    );
    // Two columns; NULLs never match.
    assert!(t(&mut s, "SELECT * FROM t1 JOIN t2 USING (a, b)").is_empty());
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 JOIN t2 USING (b) ORDER BY c, d"),
        ["3|NULL|30|3|300", "3|NULL|30|NULL|400"]
    );
    // A column named twice is taken once.
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 JOIN t2 USING (a, a)"),
        ["1|1|10|5|100"]
    );
    // Key lookups through the USING condition.
    assert_eq!(
        t(&mut s, "SELECT * FROM p JOIN ch USING (id) ORDER BY cid"),
        ["1|one|10", "1|one|11", "3|three|12"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id, name, cid FROM p LEFT JOIN ch USING (id) ORDER BY id, cid"
        ),
        ["1|one|10", "1|one|11", "2|two|NULL", "3|three|12"]
    );
}

#[test]
fn natural_joins() {
    let db = TestDb::open("sql-join-natural");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    // t1 and t2 share a and b: no row has both equal.
    assert!(t(&mut s, "SELECT * FROM t1 NATURAL JOIN t2").is_empty());
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 NATURAL LEFT JOIN t2 ORDER BY c"),
        ["1|1|10|NULL", "2|2|20|NULL", "NULL|3|30|NULL"]
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 NATURAL JOIN t3 ORDER BY a"),
        ["1|1|10|7", "2|2|20|8"]
    );
    // No common column: a cross join.
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t3 NATURAL JOIN p"), ["9"]);
}

#[test]
fn nested_using_joins() {
    let db = TestDb::open("sql-join-using-nested");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    assert_eq!(
        t(
            &mut s,
            "SELECT * FROM t1 JOIN t2 USING (a) JOIN t3 USING (a)"
        ),
        ["1|1|10|5|100|7"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT * FROM t3 LEFT JOIN (t1 JOIN t2 USING (a)) USING (a) ORDER BY e"
        ),
        [
            "1|7|1|10|5|100",
            "2|8|NULL|NULL|NULL|NULL",
            "NULL|9|NULL|NULL|NULL|NULL"
        ]
    );
    // A later ON sees the merged column unqualified.
    assert_eq!(
        t(
            &mut s,
            "SELECT a, name FROM t1 JOIN t2 USING (a) JOIN p ON p.id = a"
        ),
        ["1|one"]
    );
    // ... but not where a third table has the name too.
    assert_eq!(
        err(
            &mut s,
            "SELECT a FROM t1 JOIN t2 USING (a) JOIN t3 ON t3.a = t1.a"
        ),
        1052
    );
}

#[test]
fn using_errors() {
    let db = TestDb::open("sql-join-using-errors");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    assert_eq!(err(&mut s, "SELECT * FROM t1 JOIN t2 USING (zz)"), 1054);
    assert_eq!(err(&mut s, "SELECT * FROM t1 JOIN t3 USING (b)"), 1054);
    // The left operand has two b's.
    assert_eq!(
        err(
            &mut s,
            "SELECT * FROM t1 JOIN t2 USING (a) JOIN t2 AS x USING (b)"
        ),
        1052
    );
    // Columns not merged stay ambiguous.
    assert_eq!(err(&mut s, "SELECT b FROM t1 JOIN t2 USING (a)"), 1052);
    // RIGHT JOIN only as the first join of its operand list.
    assert_eq!(
        err(
            &mut s,
            "SELECT * FROM t1 JOIN t3 USING (a) RIGHT JOIN t2 USING (a)"
        ),
        1235
    );
    assert_eq!(
        err(&mut s, "UPDATE t1 RIGHT JOIN t2 USING (a) SET t1.c = 0"),
        1235
    );
}

#[test]
fn right_joins() {
    let db = TestDb::open("sql-join-right");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    // `*` lists the left operand's columns first.
    assert_eq!(
        t(
            &mut s,
            "SELECT * FROM t1 RIGHT JOIN t2 ON t1.a = t2.a ORDER BY d"
        ),
        [
            "1|1|10|1|5|100",
            "NULL|NULL|NULL|3|3|300",
            "NULL|NULL|NULL|NULL|3|400"
        ]
    );
    // USING: the merged column (the right side's), its others, the left's.
    assert_eq!(
        t(
            &mut s,
            "SELECT * FROM t1 RIGHT JOIN t2 USING (a) ORDER BY d"
        ),
        ["1|5|100|1|10", "3|3|300|NULL|NULL", "NULL|3|400|NULL|NULL"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT a, t1.a, t2.a FROM t1 RIGHT JOIN t2 USING (a) ORDER BY d"
        ),
        ["1|1|1", "3|NULL|3", "NULL|NULL|NULL"]
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t1 NATURAL RIGHT JOIN t2 ORDER BY d"),
        ["1|5|100|NULL", "3|3|300|NULL", "NULL|3|400|NULL"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT * FROM t1 RIGHT JOIN t2 ON t1.a = t2.a LEFT JOIN t3 ON t3.e = t1.c / 10 + 6 \
             ORDER BY d"
        ),
        [
            "1|1|10|1|5|100|1|7",
            "NULL|NULL|NULL|3|3|300|NULL|NULL",
            "NULL|NULL|NULL|NULL|3|400|NULL|NULL"
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT p.id, name, cid FROM ch RIGHT OUTER JOIN p ON p.id = ch.id ORDER BY p.id, cid"
        ),
        ["1|one|10", "1|one|11", "2|two|NULL", "3|three|12"]
    );
}
