//! A range read that replaces the WHERE (`id BETWEEN a AND b` on the primary
//! key, `access::range_is_filter`) decodes only the columns the rest of the
//! statement reads (`SelectPlan::want_ranged`): every other reader of the
//! range's column (outputs, ORDER BY, GROUP BY, aggregates, windows,
//! correlated subqueries, a WHERE the range does not replace) still sees
//! its value, also as a prepared statement with the bounds as parameters.
#![allow(clippy::unwrap_used)]
use sql::Value;

mod common;
use common::{q, rows, session_in_d, texts, TestDb};

#[test]
fn readers_of_the_range_column_see_its_value() {
    let db = TestDb::open("ranged-want");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), pad CHAR(10))",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 10, 'a', 'x'), (2, 20, 'b', 'y'), (3, 30, 'c', NULL), \
         (4, 40, NULL, 'z'), (5, 50, 'e', 'w')",
    );
    q(&mut s, "CREATE TABLE u (n INT, m INT)");
    q(&mut s, "INSERT INTO u VALUES (2, 7), (3, 8), (3, 9)");
    // Two key columns, the range on the first.
    q(
        &mut s,
        "CREATE TABLE p (a INT, b INT, v INT, PRIMARY KEY (a, b))",
    );
    q(
        &mut s,
        "INSERT INTO p VALUES (1, 5, 100), (2, 6, 200), (2, 7, 300), (3, 8, 400)",
    );
    let cases: &[(&str, &[&str])] = &[
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4", &["b", "c", "NULL"]),
        ("SELECT id, c FROM t WHERE id BETWEEN 2 AND 4", &["2|b", "3|c", "4|NULL"]),
        ("SELECT pad FROM t WHERE id BETWEEN 2 AND 4", &["y", "NULL", "z"]),
        ("SELECT SUM(k) FROM t WHERE id BETWEEN 2 AND 4", &["90"]),
        ("SELECT SUM(id), COUNT(*) FROM t WHERE id BETWEEN 2 AND 4", &["9|3"]),
        ("SELECT k + id FROM t WHERE id BETWEEN 2 AND 3", &["22", "33"]),
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4 ORDER BY id DESC", &["NULL", "c", "b"]),
        ("SELECT c FROM t WHERE id BETWEEN 1 AND 5 ORDER BY c", &["NULL", "a", "b", "c", "e"]),
        ("SELECT DISTINCT c FROM t WHERE id BETWEEN 2 AND 5 ORDER BY c", &["NULL", "b", "c", "e"]),
        ("SELECT id % 2, COUNT(*) FROM t WHERE id BETWEEN 1 AND 5 GROUP BY id % 2 ORDER BY 1", &["0|2", "1|3"]),
        (
            "SELECT k, ROW_NUMBER() OVER (ORDER BY id DESC) FROM t WHERE id BETWEEN 2 AND 3",
            &["30|1", "20|2"],
        ),
        (
            "SELECT c, (SELECT COUNT(*) FROM u WHERE u.n = t.id) FROM t WHERE id BETWEEN 2 AND 4",
            &["b|1", "c|2", "NULL|0"],
        ),
        (
            "SELECT c FROM t WHERE id BETWEEN 1 AND 5 AND EXISTS (SELECT 1 FROM u WHERE u.n = t.id)",
            &["b", "c"],
        ),
        // No range: key columns only other parts of the statement read.
        (
            "SELECT c, (SELECT COUNT(*) FROM u WHERE u.n = t.id) FROM t WHERE k > 15 AND k < 45",
            &["b|1", "c|2", "NULL|0"],
        ),
        ("SELECT k FROM t WHERE c > 'a' ORDER BY id DESC", &["50", "30", "20"]),
        ("SELECT SUM(id) FROM t WHERE k >= 20", &["14"]),
        // Not the range alone: the WHERE decides, on the column's value.
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4 AND id <> 3", &["b", "NULL"]),
        ("SELECT c FROM t WHERE id BETWEEN 2.5 AND 4", &["c", "NULL"]),
        ("SELECT c FROM t WHERE id BETWEEN '2' AND 3", &["b", "c"]),
        ("SELECT v FROM p WHERE a BETWEEN 2 AND 3", &["200", "300", "400"]),
        ("SELECT b, v FROM p WHERE a BETWEEN 2 AND 2", &["6|200", "7|300"]),
        ("SELECT a, b FROM p WHERE a BETWEEN 1 AND 2", &["1|5", "2|6", "2|7"]),
    ];
    for (sql, want) in cases {
        for _ in 0..2 {
            assert_eq!(rows(&mut s, sql), *want, "{sql}");
        }
    }
    // Prepared, the bounds as parameters (sysbench's form).
    for (sql, want) in [
        ("SELECT c FROM t WHERE id BETWEEN ? AND ?", "b c NULL"),
        (
            "SELECT id, c FROM t WHERE id BETWEEN ? AND ?",
            "2|b 3|c 4|NULL",
        ),
        ("SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", "90"),
        ("SELECT SUM(id) FROM t WHERE id BETWEEN ? AND ?", "9"),
        (
            "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY id DESC",
            "NULL c b",
        ),
    ] {
        let (id, n, _) = s.prepare(sql).unwrap();
        assert_eq!(n, 2);
        for (lo, hi) in [
            (Value::Int(2), Value::Int(4)),
            (Value::Bytes(b"2".to_vec()), Value::Int(4)),
        ] {
            let mut out = sql::result::Collect::default();
            s.execute_prepared(id, &[lo, hi], &mut out).unwrap();
            assert_eq!(texts(out.rows).join(" "), want, "{sql}");
        }
    }
}
