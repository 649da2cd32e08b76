//! Subqueries and derived tables through a Session: scalar, IN, EXISTS and
//! FROM (SELECT ...) results, their errors, prepared parameters inside them,
//! and the shapes of sysbench-tpcc's consistency checks. (Their results are
//! also compared with MariaDB's in the server's diff_mariadb corpus.)
use sql::result::Collect;
use sql::{Instance, InstanceOptions, Value};

mod common;
use common::{err, q, texts};

#[test]
fn subqueries_and_derived_tables() {
    // Removed on drop, also when an assertion fails.
    let d = testkit::TempDir::new("sql-subquery");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)",
        "CREATE TABLE u (id INT PRIMARY KEY, tid INT, x INT)",
        "INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30), (4, 2, NULL), (5, 3, 50)",
        "INSERT INTO u VALUES (1, 1, 5), (2, 1, 5), (3, 3, 7), (4, NULL, 9)",
    ] {
        q(&mut s, st);
    }
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    // Scalar subqueries: a value, NULL when empty; the access path may use them.
    assert_eq!(
        t(
            &mut s,
            "SELECT (SELECT MAX(v) FROM t), (SELECT v FROM t WHERE id = 9)"
        ),
        vec!["50|NULL"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE id = (SELECT MAX(tid) FROM u)"
        ),
        vec!["3"]
    );
    assert_eq!(err(&mut s, "SELECT (SELECT v FROM t)"), 1242);
    assert_eq!(
        err(&mut s, "SELECT (SELECT id, v FROM t WHERE id = 1)"),
        1241
    );
    // IN / NOT IN with NULLs in the set, EXISTS.
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE id IN (SELECT tid FROM u) ORDER BY id"
        ),
        vec!["1", "3"]
    );
    assert!(t(
        &mut s,
        "SELECT id FROM t WHERE id NOT IN (SELECT tid FROM u)"
    )
    .is_empty());
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE id NOT IN (SELECT tid FROM u WHERE tid IS NOT NULL) ORDER BY id"),
        vec!["2", "4", "5"]
    );
    assert_eq!(
        t(&mut s, "SELECT 2 IN (SELECT tid FROM u), NULL IN (SELECT tid FROM u WHERE id > 9), 1 IN (SELECT tid FROM u)"),
        vec!["NULL|0|1"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT * FROM u WHERE x > 8)"
        ),
        vec!["5"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE x > 8)"
        ),
        vec!["0"]
    );
    // Correlated subqueries are refused, not answered wrongly.
    // A correlated aggregate in the select list runs as a LEFT JOIN to a grouped
    // derived table (COUNT of nothing is 0, SUM of nothing NULL).
    assert_eq!(
        t(&mut s, "SELECT id, (SELECT COUNT(*) FROM u WHERE u.tid = t.id), (SELECT SUM(x) FROM u WHERE tid = t.id) FROM t ORDER BY id"),
        vec!["1|2|10", "2|0|NULL", "3|1|7", "4|0|NULL", "5|0|NULL"]
    );
    let plan = q(
        &mut s,
        "EXPLAIN SELECT id, (SELECT COUNT(*) FROM u WHERE u.tid = t.id) FROM t",
    );
    assert_eq!(plan.len(), 2, "{plan:?}");
    // Not an equality between columns of one family: computed per row.
    assert_eq!(
        t(
            &mut s,
            "SELECT id, (SELECT COUNT(*) FROM u WHERE u.tid > t.id) FROM t ORDER BY id"
        ),
        vec!["1|1", "2|1", "3|0", "4|0", "5|0"]
    );
    // A correlated EXISTS linked by one column equality runs as IN (orm_shapes.rs);
    // other correlations per row (correlated.rs).
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE tid = t.id) ORDER BY id"
        ),
        vec!["1", "3"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE tid > t.id) ORDER BY id"
        ),
        vec!["1", "2"]
    );
    // UPDATE and DELETE with subqueries (in a transaction rolled back: the
    // data stays as the rest of the test expects).
    q(&mut s, "BEGIN");
    q(&mut s, "UPDATE t SET v = 0 WHERE id IN (SELECT tid FROM u)");
    q(
        &mut s,
        "UPDATE t SET v = (SELECT MAX(x) FROM u) WHERE id = 5",
    );
    assert_eq!(
        t(&mut s, "SELECT id, v FROM t ORDER BY id"),
        vec!["1|0", "2|20", "3|0", "4|NULL", "5|9"]
    );
    q(
        &mut s,
        "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE x > 8) AND id > 3",
    );
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t"), vec!["3"]);
    // Reading the modified table in a subquery is MySQL's 1093, unless through
    // a derived table (materialized first).
    assert_eq!(
        err(&mut s, "DELETE FROM t WHERE id IN (SELECT id FROM t)"),
        1093
    );
    assert_eq!(err(&mut s, "UPDATE t SET v = (SELECT MAX(v) FROM t)"), 1093);
    q(
        &mut s,
        "DELETE FROM t WHERE id IN (SELECT m FROM (SELECT MAX(id) m FROM t) d)",
    );
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t"), vec!["2"]);
    q(&mut s, "ROLLBACK");
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t"), vec!["5"]);
    // Correlated subqueries in UPDATE/DELETE are refused.
    assert_eq!(
        err(
            &mut s,
            "UPDATE t SET v = 0 WHERE EXISTS (SELECT 1 FROM u WHERE u.tid = t.id)"
        ),
        1235
    );
    // Row IN subqueries (row_ctor.rs has the NULL cases).
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE (id, g) IN (SELECT id, tid FROM u) ORDER BY id"
        ),
        vec!["1", "2"]
    );
    // Derived tables.
    assert_eq!(
        t(
            &mut s,
            "SELECT g, s FROM (SELECT g, SUM(v) s FROM t GROUP BY g) x WHERE s > 25 ORDER BY g"
        ),
        vec!["1|30", "2|30", "3|50"]
    );
    assert_eq!(err(&mut s, "SELECT * FROM (SELECT 1)"), 1248);
    assert_eq!(err(&mut s, "SELECT * FROM (SELECT 1 a, 2 a) x"), 1060);
    assert_eq!(err(&mut s, "SELECT nope FROM (SELECT 1 a) x"), 1054);
    assert_eq!(
        t(&mut s, "SELECT t.id, c.n FROM t LEFT JOIN (SELECT tid, COUNT(*) n FROM u GROUP BY tid) c ON c.tid = t.id ORDER BY t.id"),
        vec!["1|2", "2|NULL", "3|1", "4|NULL", "5|NULL"]
    );
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM (SELECT g, SUM(v) s1 FROM t GROUP BY g) a, (SELECT tid, SUM(x) s2 FROM u GROUP BY tid) b WHERE a.g = b.tid AND s1 <> s2"),
        vec!["2"]
    );
    // A subquery inside a derived table, a derived table inside a subquery.
    assert_eq!(
        t(
            &mut s,
            "SELECT m FROM (SELECT MAX(id) m FROM t WHERE id IN (SELECT tid FROM u)) z"
        ),
        vec!["3"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE v = (SELECT MAX(s) FROM (SELECT SUM(v) s FROM t GROUP BY g) y)"
        ),
        vec!["5"]
    );
    // sysbench-tpcc's check 8 shape, and EXPLAIN of a derived table.
    assert_eq!(
        t(&mut s, "SELECT count(*) cn FROM (SELECT g, v, SUM(x) sm FROM u, t WHERE tid = t.id AND g = 1 GROUP BY g) t1 WHERE v <> sm"),
        vec!["0"]
    );
    assert_eq!(
        t(&mut s, "SELECT count(*) cn FROM (SELECT g, v, SUM(x) sm FROM u, t WHERE tid = t.id AND g = 1 GROUP BY g) t1 WHERE v = sm"),
        vec!["1"]
    );
    assert!(!q(&mut s, "EXPLAIN SELECT * FROM (SELECT g FROM t) x").is_empty());
    // sysbench-tpcc's purge shape: the derived table is read first and `t` is
    // probed on its key by it, while `*` keeps FROM order.
    let purge = "SELECT * FROM t, (SELECT g, COUNT(*) c FROM t GROUP BY g HAVING COUNT(*) > 1) x WHERE x.g = t.id ORDER BY t.id";
    let plan = q(&mut s, &format!("EXPLAIN {purge}"));
    let table = |r: &Vec<Value>| String::from_utf8_lossy(&r[2].text()).into_owned();
    assert_eq!(table(&plan[0]), "x", "{plan:?}");
    assert_ne!(
        String::from_utf8_lossy(&plan[1][3].text()),
        "ALL",
        "{plan:?}"
    );
    assert_eq!(t(&mut s, purge), vec!["1|1|10|1|2", "2|1|20|2|2"]);
    // UNION and WITH (their results are compared with MariaDB's in diff_mariadb).
    assert_eq!(
        t(&mut s, "SELECT g FROM t UNION SELECT tid FROM u ORDER BY g"),
        vec!["NULL", "1", "2", "3"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT 1 UNION ALL SELECT 1 UNION SELECT 2 UNION ALL SELECT 2"
        ),
        vec!["1", "2", "2"]
    );
    assert_eq!(
        err(&mut s, "SELECT g, v FROM t UNION SELECT tid FROM u"),
        1222
    );
    assert_eq!(
        err(&mut s, "SELECT g FROM t INTERSECT SELECT tid FROM u"),
        1235
    );
    assert_eq!(
        t(&mut s, "WITH a AS (SELECT g, COUNT(*) n FROM t GROUP BY g), b AS (SELECT * FROM a WHERE n > 1) SELECT g FROM b ORDER BY g"),
        vec!["1", "2"]
    );
    // WITH RECURSIVE (more in cte_recursive.rs).
    assert_eq!(
        t(&mut s, "WITH RECURSIVE r AS (SELECT 1 n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"),
        vec!["1", "2", "3"]
    );
    // Parameters inside subqueries, and a prepared statement run twice sees new data.
    let (id, n, _) = s
        .prepare("SELECT COUNT(*) FROM t WHERE id IN (SELECT tid FROM u WHERE x > ?) AND v > (SELECT ? + 0)")
        .unwrap();
    assert_eq!(n, 2);
    let run = |s: &mut sql::Session, a: i64, b: i64| {
        let mut c = Collect::default();
        s.execute_prepared(id, &[Value::Int(a), Value::Int(b)], &mut c)
            .unwrap();
        texts(c.rows)
    };
    assert_eq!(run(&mut s, 4, 0), vec!["2"]);
    assert_eq!(run(&mut s, 6, 0), vec!["1"]);
    q(&mut s, "INSERT INTO u VALUES (5, 2, 8)");
    assert_eq!(run(&mut s, 6, 0), vec!["2"]);
    assert_eq!(run(&mut s, 6, 25), vec!["1"]);
    drop(s);
    drop(inst);
}
