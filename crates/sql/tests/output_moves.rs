//! A SELECT's output columns move out of the rows the access path read
//! instead of being cloned (`select::exec::movable_outputs`) only when
//! nothing reads that column after them: the same column twice, in another
//! output expression, in ORDER BY, in a correlated subquery, in the WHERE, or
//! rows of a join all give every value. So do ORDER BY keys that move their
//! column (`movable_keys`) when a later key reads it.
#![allow(clippy::unwrap_used)]

mod common;
use common::{q, rows, session_in_d, TestDb};

#[test]
fn every_reader_of_a_moved_column_sees_its_value() {
    let db = TestDb::open("output-moves");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20), k INT, KEY (k))",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 'pear', 3), (2, 'apple', 1), (3, 'fig', 2), (4, NULL, 2)",
    );
    q(&mut s, "CREATE TABLE u (c VARCHAR(20), n INT)");
    q(&mut s, "INSERT INTO u VALUES ('fig', 7), ('pear', 8)");
    // Case variants: equal under the column's collation, apart in bytes.
    q(&mut s, "CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(20))");
    q(&mut s, "INSERT INTO w VALUES (1, 'b'), (2, 'B'), (3, 'a')");
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT c FROM t WHERE id BETWEEN 1 AND 3",
            &["pear", "apple", "fig"],
        ),
        (
            "SELECT c, c FROM t WHERE id BETWEEN 1 AND 3",
            &["pear|pear", "apple|apple", "fig|fig"],
        ),
        (
            "SELECT c, LENGTH(c), id FROM t WHERE id < 4",
            &["pear|4|1", "apple|5|2", "fig|3|3"],
        ),
        (
            "SELECT UPPER(c), c FROM t WHERE id < 3",
            &["PEAR|pear", "APPLE|apple"],
        ),
        (
            "SELECT c FROM t WHERE id < 4 ORDER BY c",
            &["apple", "fig", "pear"],
        ),
        (
            "SELECT DISTINCT c FROM t WHERE id < 4 ORDER BY c DESC",
            &["pear", "fig", "apple"],
        ),
        (
            "SELECT c, id FROM t WHERE id < 4 ORDER BY LENGTH(c), id",
            &["fig|3", "pear|1", "apple|2"],
        ),
        (
            "SELECT id, c FROM t WHERE c LIKE '%p%' ORDER BY id",
            &["1|pear", "2|apple"],
        ),
        (
            "SELECT c, (SELECT n FROM u WHERE u.c = t.c) FROM t WHERE id < 4",
            &["pear|8", "apple|NULL", "fig|7"],
        ),
        (
            "SELECT t.c, u.c, n FROM t JOIN u ON u.c = t.c ORDER BY n",
            &["fig|fig|7", "pear|pear|8"],
        ),
        ("SELECT c FROM t WHERE k = 2 ORDER BY id", &["fig", "NULL"]),
        ("SELECT c FROM t WHERE id = 2", &["apple"]),
        ("SELECT c FROM t WHERE id < 4 LIMIT 1 OFFSET 1", &["apple"]),
        // ORDER BY keys move their column too (`movable_keys`), unless a
        // later key reads it.
        ("SELECT id FROM t WHERE id < 4 ORDER BY c", &["2", "3", "1"]),
        ("SELECT id FROM w ORDER BY c, BINARY c", &["3", "2", "1"]),
        (
            "SELECT c FROM w ORDER BY c, BINARY c DESC",
            &["a", "b", "B"],
        ),
        (
            "SELECT id, c FROM w ORDER BY c DESC, id",
            &["1|b", "2|B", "3|a"],
        ),
    ];
    for (sql, want) in cases {
        // Twice: also as a prepared statement would run it again.
        for _ in 0..2 {
            assert_eq!(rows(&mut s, sql), *want, "{sql}");
        }
    }
}
