//! WITH RECURSIVE through a Session: number series, a hierarchy walk joined
//! with a base table, column lists, several recursive CTEs and references,
//! UNION DISTINCT ending a cycle, rows converted to the anchor's column types
//! (1406 when a string outgrows it, as MariaDB), the iteration bound
//! (cte_max_recursion_depth / max_recursive_iterations: 3636), the
//! restrictions on the recursive SELECT (MariaDB's 4008, 4005, 4002 and
//! MySQL's 1235), and a view over a recursive CTE across a restart. (The diff
//! corpus compares the same queries with MariaDB.)
mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn setup(s: &mut sql::Session) {
    q(
        s,
        "CREATE TABLE emp (id INT PRIMARY KEY, boss INT, name VARCHAR(20))",
    );
    q(
        s,
        "INSERT INTO emp VALUES (1, NULL, 'ann'), (2, 1, 'bob'), (3, 1, 'cy'), (4, 2, 'di'), \
         (5, 4, 'ed'), (6, NULL, 'fay')",
    );
}

#[test]
fn recursive_results() {
    let db = TestDb::open("sql-cte-rec");
    let mut s = session_in_d(&db);
    setup(&mut s);
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM n WHERE n < 10) \
             SELECT * FROM n"
        ),
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
    );
    // A hierarchy walk joined with the table, with a column list and a path.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE sub (id, lvl, path) AS (SELECT id, 0, CAST(name AS CHAR(100)) FROM emp \
             WHERE id = 1 UNION ALL SELECT e.id, s.lvl + 1, CONCAT(s.path, '/', e.name) \
             FROM sub s JOIN emp e ON e.boss = s.id) SELECT * FROM sub ORDER BY id"
        ),
        ["1|0|ann", "2|1|ann/bob", "3|1|ann/cy", "4|2|ann/bob/di", "5|3|ann/bob/di/ed"]
    );
    // The CTE on the outer side of a LEFT JOIN.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE sub AS (SELECT id FROM emp WHERE id = 1 UNION ALL SELECT e.id FROM sub s \
             LEFT JOIN emp e ON e.boss = s.id WHERE e.id IS NOT NULL) SELECT * FROM sub ORDER BY id"
        ),
        ["1", "2", "3", "4", "5"]
    );
    // Several columns, ORDER BY and LIMIT outside.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE fib (n, a, b) AS (SELECT 1, 0, 1 UNION ALL SELECT n + 1, b, a + b \
             FROM fib WHERE n < 10) SELECT n, a FROM fib ORDER BY n DESC LIMIT 3"
        ),
        ["10|34", "9|21", "8|13"]
    );
    // A later CTE reads a recursive one; two references; in a subquery.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 3), \
             m AS (SELECT x * 10 AS y FROM n) SELECT * FROM m ORDER BY y"
        ),
        ["10", "20", "30"]
    );
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 3) \
             SELECT a.x, b.x FROM n a JOIN n b ON b.x = a.x + 1 ORDER BY a.x"
        ),
        ["1|2", "2|3"]
    );
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 3) \
             SELECT name FROM emp WHERE id IN (SELECT x FROM n) ORDER BY id"
        ),
        ["ann", "bob", "cy"]
    );
    // UNION DISTINCT stops a cycle; an anchor after the recursive SELECT.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION SELECT x FROM n) SELECT * FROM n"
        ),
        ["1"]
    );
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION SELECT 3 - x FROM n) SELECT * FROM n"
        ),
        ["1", "2"]
    );
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 3 \
             UNION ALL SELECT 10) SELECT * FROM n"
        ),
        ["1", "10", "2", "3"]
    );
    // Two recursive SELECTs each read the previous round.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT n+1 FROM n WHERE n < 3 \
             UNION ALL SELECT n+10 FROM n WHERE n < 3) SELECT * FROM n"
        ),
        ["1", "2", "11", "3", "12"]
    );
    // Values take the anchor's column type (an integer here).
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 0.5 FROM n WHERE x < 3) \
             SELECT * FROM n"
        ),
        ["1", "2", "3"]
    );
    // INSERT ... SELECT from a recursive CTE.
    q(&mut s, "CREATE TABLE nums (k INT PRIMARY KEY)");
    q(
        &mut s,
        "INSERT INTO nums WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n \
         WHERE x < 100) SELECT x FROM n",
    );
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*), SUM(k) FROM nums"),
        ["100|5050"]
    );
}

#[test]
fn recursion_bounds_and_errors() {
    let db = TestDb::open("sql-cte-rec-err");
    let mut s = session_in_d(&db);
    setup(&mut s);
    // 1000 productive rounds are allowed by default, one more is 3636.
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 1001) \
             SELECT COUNT(*) FROM n"
        ),
        ["1001"]
    );
    let forever = "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n) \
                   SELECT COUNT(*) FROM n";
    assert_eq!(err(&mut s, forever), 3636);
    q(&mut s, "SET cte_max_recursion_depth = 5000");
    assert_eq!(
        rows(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 3000) \
             SELECT COUNT(*) FROM n"
        ),
        ["3000"]
    );
    q(&mut s, "SET max_recursive_iterations = 3");
    assert_eq!(
        err(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM n WHERE x < 5) \
             SELECT * FROM n"
        ),
        3636
    );
    assert_eq!(rows(&mut s, "SELECT @@cte_max_recursion_depth"), ["3"]);
    q(&mut s, "SET max_recursive_iterations = DEFAULT");
    assert_eq!(rows(&mut s, "SELECT @@max_recursive_iterations"), ["1000"]);
    // A string outgrowing the anchor's column.
    assert_eq!(
        err(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 'a' AS s UNION ALL SELECT CONCAT(s, 'bc') FROM n \
             WHERE LENGTH(s) < 5) SELECT * FROM n"
        ),
        1406
    );
    // Restrictions on the recursive SELECT.
    let restricted = [
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT SUM(n) FROM n WHERE n < 5) SELECT * FROM n",
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM n WHERE n < 5 GROUP BY n) SELECT * FROM n",
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT (SELECT MAX(n) FROM n) + 1 FROM n WHERE n < 3) SELECT * FROM n",
        "WITH RECURSIVE sub AS (SELECT id FROM emp WHERE id = 1 UNION ALL SELECT e.id FROM emp e \
         LEFT JOIN sub s ON e.boss = s.id WHERE s.id IS NOT NULL) SELECT * FROM sub",
    ];
    for st in restricted {
        assert_eq!(err(&mut s, st), 4008, "{st}");
    }
    assert_eq!(
        err(
            &mut s,
            "WITH RECURSIVE n AS (SELECT n + 1 FROM n WHERE n < 5) SELECT * FROM n"
        ),
        4005
    );
    assert_eq!(
        err(
            &mut s,
            "WITH RECURSIVE n(a, b) AS (SELECT 1 UNION ALL SELECT a + 1 FROM n WHERE a < 5) SELECT * FROM n"
        ),
        4002
    );
    assert_eq!(
        err(&mut s, "WITH n(a) AS (SELECT 1, 2) SELECT * FROM n"),
        4002
    );
    for st in [
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL (SELECT n + 1 FROM n WHERE n < 5 LIMIT 1)) SELECT * FROM n",
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT DISTINCT n + 1 FROM n WHERE n < 5) SELECT * FROM n",
        "WITH RECURSIVE n AS (SELECT 1 AS n UNION ALL SELECT a.n + 1 FROM n a, n b WHERE a.n < 5) SELECT * FROM n",
        "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM (SELECT * FROM n) d WHERE x < 3) SELECT * FROM n",
    ] {
        assert_eq!(err(&mut s, st), 1235, "{st}");
    }
    assert_eq!(
        err(
            &mut s,
            "WITH RECURSIVE n AS (SELECT 1 AS x UNION ALL SELECT x + 1, 2 FROM n WHERE x < 3) SELECT * FROM n"
        ),
        1222
    );
}

#[test]
fn a_view_over_a_recursive_cte_survives_a_restart() {
    let dir = testkit::TempDir::new("sql-cte-rec-view");
    {
        let inst = common::open_at(&dir);
        let mut s = common::root_in_d(&inst);
        setup(&mut s);
        q(
            &mut s,
            "CREATE VIEW chain (id, depth) AS WITH RECURSIVE c AS (SELECT id, 0 AS depth FROM emp \
             WHERE boss IS NULL UNION ALL SELECT e.id, c.depth + 1 FROM c JOIN emp e ON e.boss = c.id) \
             SELECT id, depth FROM c",
        );
        inst.shutdown().unwrap();
    }
    let inst = common::open_at(&dir);
    let mut s = common::root_in_d(&inst);
    assert_eq!(
        rows(&mut s, "SELECT id, depth FROM chain ORDER BY id"),
        ["1|0", "2|1", "3|1", "4|2", "5|3", "6|0"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT e.name FROM emp e JOIN chain c ON c.id = e.id WHERE c.depth = 2"
        ),
        ["di"]
    );
}
