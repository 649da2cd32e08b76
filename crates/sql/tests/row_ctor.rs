//! Row constructors: `(a, b) op (x, y)` for = <> <=> < <= > >= (lexicographic,
//! with MySQL's NULLs), `ROW(..)`, `(a, b) [NOT] IN ((..), (..))` and
//! `(a, b) [NOT] IN (SELECT x, y ...)`, nested rows, prepared parameters,
//! 1241 for rows of the wrong size; EXPLAIN shows the keyset form
//! `(a, b) > (?, ?)` reading a range of the (a, b) key and a row IN list
//! probing the primary key. Expected answers are MariaDB 10.11's.
#![allow(clippy::unwrap_used)]
use sql::Value;

mod common;
use common::{err, q, rows as t, TestDb};

fn setup(s: &mut sql::Session) {
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE k (a INT, b INT, v VARCHAR(10), PRIMARY KEY (a, b))",
        "INSERT INTO k VALUES (1,1,'x'),(1,2,'y'),(1,3,'z'),(2,1,'p'),(2,2,'q'),(3,1,'r')",
        "CREATE TABLE n (id INT PRIMARY KEY, a INT, b INT)",
        "INSERT INTO n VALUES (1,1,1),(2,1,NULL),(3,NULL,1),(4,2,2),(5,NULL,NULL)",
        "CREATE TABLE s (id INT PRIMARY KEY, a INT, b INT, KEY ab (a, b))",
    ] {
        q(s, st);
    }
    let mut ins = String::from("INSERT INTO s VALUES ");
    for i in 0..300 {
        if i > 0 {
            ins.push(',');
        }
        ins.push_str(&format!("({i}, {}, {})", i / 10, i % 10));
    }
    q(s, &ins);
}

#[test]
fn comparisons_are_lexicographic() {
    let db = TestDb::open("sql-row-cmp");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    let ab = |s: &mut sql::Session, w: &str| {
        t(s, &format!("SELECT a, b FROM k WHERE {w} ORDER BY a, b"))
    };
    assert_eq!(ab(&mut s, "(a, b) > (1, 2)"), ["1|3", "2|1", "2|2", "3|1"]);
    assert_eq!(
        ab(&mut s, "(a, b) >= (1, 2) AND (a, b) < (2, 2)"),
        ["1|2", "1|3", "2|1"]
    );
    assert_eq!(ab(&mut s, "(a, b) <= (1, 2)"), ["1|1", "1|2"]);
    assert_eq!(ab(&mut s, "ROW(a, b) = ROW(2, 2)"), ["2|2"]);
    assert_eq!(
        ab(&mut s, "(a, b) <> (1, 1)"),
        ["1|2", "1|3", "2|1", "2|2", "3|1"]
    );
    assert_eq!(
        ab(&mut s, "(b, a) > (1, 1)"),
        ["1|2", "1|3", "2|1", "2|2", "3|1"]
    );
    // Strings compare under their collation (general_ci).
    assert_eq!(ab(&mut s, "(a, v) IN ((1, 'X'), (2, 'q'))"), ["1|1", "2|2"]);
    // Nested rows.
    assert_eq!(
        t(
            &mut s,
            "SELECT ((1, 2), 3) = ((1, 2), 3), ((1, 2), 3) < ((1, 3), 1)"
        ),
        ["1|1"]
    );
}

#[test]
fn null_semantics() {
    let db = TestDb::open("sql-row-null");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    assert_eq!(
        t(
            &mut s,
            "SELECT id, (a,b) = (1,1), (a,b) <> (1,1), (a,b) < (1,2), (a,b) >= (1,1), \
             (a,b) <=> (1,NULL), (a,b) IN ((1,1),(2,2)), (a,b) NOT IN ((1,1),(2,2)), \
             (a, b) > (1, 0) FROM n ORDER BY id"
        ),
        [
            "1|1|0|1|1|0|1|0|1",
            "2|NULL|NULL|NULL|NULL|1|NULL|NULL|NULL",
            "3|NULL|NULL|NULL|NULL|0|NULL|NULL|NULL",
            "4|0|1|0|1|0|1|0|1",
            "5|NULL|NULL|NULL|NULL|0|NULL|NULL|NULL"
        ]
    );
    // A difference before the NULL decides; a NULL before it makes NULL.
    assert_eq!(
        t(
            &mut s,
            "SELECT (1, NULL) < (2, 0), (NULL, 1) < (2, 0), (1, NULL) = (2, 2), \
             (1, NULL) <> (2, 2), (1, 3) IN ((1, 2), (3, NULL)), \
             (1, 3) NOT IN ((1, 2), (NULL, 3))"
        ),
        ["1|NULL|0|1|0|NULL"]
    );
}

#[test]
fn in_subquery() {
    let db = TestDb::open("sql-row-in-sub");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM n WHERE (a, b) IN (SELECT a, b FROM k) ORDER BY id"
        ),
        ["1", "4"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id, (a, b) IN (SELECT a, b FROM k), (a, b) NOT IN (SELECT a, b FROM k) \
             FROM n ORDER BY id"
        ),
        [
            "1|1|0",
            "2|NULL|NULL",
            "3|NULL|NULL",
            "4|1|0",
            "5|NULL|NULL"
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT (1, 2) IN (SELECT 1, 2 UNION SELECT 3, NULL), \
             (1, 5) IN (SELECT 1, 2 UNION SELECT 3, NULL), (1, 5) IN (SELECT 1, NULL), \
             (1, 5) NOT IN (SELECT 1, NULL), (NULL, 5) IN (SELECT 2, 3)"
        ),
        ["1|0|NULL|NULL|0"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT a, b FROM k WHERE (a, v) IN (SELECT a, 'Q' FROM n) ORDER BY a"
        ),
        ["2|2"]
    );
}

#[test]
fn wrong_sizes_are_1241() {
    let db = TestDb::open("sql-row-1241");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    for bad in [
        "SELECT (1, 2) = (1, 2, 3)",
        "SELECT (1, 2) = 1",
        "SELECT 1 = (1, 2)",
        "SELECT (1, 2)",
        "SELECT (1, 2) + 1",
        "SELECT (1, 2) IN ((1, 2), 3)",
        "SELECT (1, 2) IN ((1, 2), (3, 4, 5))",
        "SELECT 1 IN ((1, 2))",
        "SELECT (1, 2) IN (SELECT 1)",
        "SELECT (1, 2) IN (SELECT 1, 2, 3)",
        "SELECT a FROM k WHERE (a, b) > (1)",
    ] {
        assert_eq!(err(&mut s, bad), 1241, "{bad}");
    }
    // A row subquery as a comparison operand is not built.
    assert_eq!(err(&mut s, "SELECT (1, 2) = (SELECT 1, 2)"), 1235);
}

/// (table, type, key) of each EXPLAIN row.
fn explain(s: &mut sql::Session, sql: &str) -> Vec<(String, String, String)> {
    q(s, &format!("EXPLAIN {sql}"))
        .into_iter()
        .map(|r| {
            let t = |i: usize| String::from_utf8_lossy(&r[i].text()).into_owned();
            (t(2), t(3), t(5))
        })
        .collect()
}

#[test]
fn keyset_pagination_reads_a_range() {
    let db = TestDb::open("sql-row-keyset");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    let sql = "SELECT id, a, b FROM s WHERE (a, b) > (27, 7) ORDER BY a, b LIMIT 4";
    assert_eq!(
        t(&mut s, sql),
        ["278|27|8", "279|27|9", "280|28|0", "281|28|1"]
    );
    let e = explain(&mut s, sql);
    assert_eq!(e[0].1, "range", "{e:?}");
    assert_eq!(e[0].2, "ab", "{e:?}");
    // The same through a prepared statement with parameters.
    q(
        &mut s,
        "PREPARE p FROM 'SELECT id FROM s WHERE (a, b) > (?, ?) ORDER BY a, b LIMIT 3'",
    );
    q(&mut s, "SET @x = 29, @y = 7");
    assert_eq!(t(&mut s, "EXECUTE p USING @x, @y"), ["298", "299"]);
    q(&mut s, "SET @x = 3, @y = 9");
    assert_eq!(t(&mut s, "EXECUTE p USING @x, @y"), ["40", "41", "42"]);
    q(&mut s, "SET @x = NULL");
    assert!(t(&mut s, "EXECUTE p USING @x, @y").is_empty());
    // Descending pages.
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM s WHERE (a, b) < (1, 2) ORDER BY a DESC, b DESC"
        ),
        ["11", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1", "0"]
    );
}

#[test]
fn row_in_list_probes_the_key() {
    let db = TestDb::open("sql-row-in-list");
    let mut s = db.session(1, "root", None);
    setup(&mut s);
    let sql = "SELECT a, b, v FROM k WHERE (a, b) IN ((1, 3), (2, 1), (9, 9)) ORDER BY a, b";
    assert_eq!(t(&mut s, sql), ["1|3|z", "2|1|p"]);
    let e = explain(&mut s, sql);
    assert_eq!(e[0].2, "PRIMARY", "{e:?}");
    assert_ne!(e[0].1, "ALL", "{e:?}");
    assert_eq!(
        t(
            &mut s,
            "SELECT a, b FROM k WHERE (a, b) NOT IN ((1, 3), (2, 1)) ORDER BY a, b"
        ),
        ["1|1", "1|2", "2|2", "3|1"]
    );
    // Parameters in the list.
    q(
        &mut s,
        "PREPARE p FROM 'SELECT v FROM k WHERE (a, b) IN ((?, ?), (?, ?)) ORDER BY v'",
    );
    q(&mut s, "SET @a = 1, @b = 2, @c = 3, @d = 1");
    assert_eq!(t(&mut s, "EXECUTE p USING @a, @b, @c, @d"), ["r", "y"]);
    let rows = q(&mut s, "SELECT (2, 2) IN ((2, 2))");
    assert_eq!(rows, vec![vec![Value::Int(1)]]);
}
