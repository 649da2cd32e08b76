//! Views through a Session: CREATE [OR REPLACE] VIEW / ALTER VIEW / DROP VIEW
//! with MariaDB's errors, views read in joins, subqueries, other views and
//! INSERT ... SELECT, column lists, a view whose table is gone (1356), view
//! recursion (1462), multi-table writes through a view refused (1235), SHOW CREATE
//! VIEW / TABLE, SHOW [FULL] TABLES, SHOW TABLE STATUS, SHOW COLUMNS,
//! information_schema.VIEWS and TABLES, RENAME TABLE, and views surviving a
//! restart. (The diff corpus compares the same statements with MariaDB.)
mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn warnings(s: &mut sql::Session) -> Vec<String> {
    rows(s, "SHOW WARNINGS")
}

fn setup(s: &mut sql::Session) {
    for st in [
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))",
        "CREATE TABLE u (a INT PRIMARY KEY, c INT)",
        "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL)",
        "INSERT INTO u VALUES (1, 10), (2, 20), (4, 40)",
    ] {
        q(s, st);
    }
}

#[test]
fn views_read_like_tables() {
    let db = TestDb::open("sql-views-read");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1");
    q(&mut s, "CREATE VIEW v2 (x, y) AS SELECT a, c * 2 FROM u");
    assert_eq!(
        rows(&mut s, "SELECT * FROM v ORDER BY a"),
        ["2|y", "3|NULL"]
    );
    assert_eq!(
        rows(&mut s, "SELECT x, y FROM v2 ORDER BY x"),
        ["1|20", "2|40", "4|80"]
    );
    // Joined with tables and with each other, aliased.
    assert_eq!(
        rows(
            &mut s,
            "SELECT v.a, w.y FROM v JOIN v2 AS w ON w.x = v.a ORDER BY v.a"
        ),
        ["2|40"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT t.a, v2.y FROM t LEFT JOIN v2 ON v2.x = t.a ORDER BY t.a"
        ),
        ["1|20", "2|40", "3|NULL"]
    );
    // In subqueries, aggregated, a view of a view.
    assert_eq!(
        rows(
            &mut s,
            "SELECT a FROM t WHERE a IN (SELECT x FROM v2) ORDER BY a"
        ),
        ["1", "2"]
    );
    assert_eq!(rows(&mut s, "SELECT (SELECT MAX(y) FROM v2)"), ["80"]);
    q(
        &mut s,
        "CREATE VIEW vv AS SELECT COUNT(*) AS n, SUM(y) AS s FROM v2 WHERE x < 4",
    );
    assert_eq!(rows(&mut s, "SELECT n, s FROM vv"), ["2|60"]);
    // Read from another database: the view's own tables.
    q(&mut s, "CREATE DATABASE other");
    q(&mut s, "USE other");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM d.v"), ["2"]);
    q(&mut s, "USE d");
    // INSERT ... SELECT from a view; CREATE TABLE ... SELECT from a view.
    q(&mut s, "CREATE TABLE copy (a INT, b VARCHAR(10))");
    q(&mut s, "INSERT INTO copy SELECT * FROM v");
    assert_eq!(
        rows(&mut s, "SELECT * FROM copy ORDER BY a"),
        ["2|y", "3|NULL"]
    );
    // A UNION and a CTE as view bodies.
    q(
        &mut s,
        "CREATE VIEW vu AS SELECT a FROM t UNION SELECT a FROM u",
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM vu ORDER BY a"),
        ["1", "2", "3", "4"]
    );
    q(
        &mut s,
        "CREATE VIEW vc AS WITH c AS (SELECT a FROM t WHERE a < 3) SELECT a FROM c",
    );
    assert_eq!(rows(&mut s, "SELECT * FROM vc ORDER BY a"), ["1", "2"]);
    // A view sees later rows.
    q(&mut s, "INSERT INTO t VALUES (9, 'z')");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM v"), ["3"]);
    // SHOW COLUMNS / DESCRIBE of a view.
    let cols = rows(&mut s, "SHOW COLUMNS FROM v2");
    assert_eq!(cols.len(), 2);
    assert!(cols[0].starts_with("x|"), "{cols:?}");
    assert!(cols[1].starts_with("y|"), "{cols:?}");
}

#[test]
fn view_ddl_and_errors() {
    let db = TestDb::open("sql-views-ddl");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE VIEW v AS SELECT a, b FROM t");
    // Names shared with tables: 1050 both ways.
    assert_eq!(err(&mut s, "CREATE VIEW v AS SELECT 1"), 1050);
    assert_eq!(err(&mut s, "CREATE VIEW t AS SELECT 1"), 1050);
    assert_eq!(err(&mut s, "CREATE OR REPLACE VIEW t AS SELECT 1"), 1050);
    assert_eq!(err(&mut s, "CREATE TABLE v (x INT)"), 1050);
    assert_eq!(err(&mut s, "RENAME TABLE u TO v"), 1050);
    // Column lists and duplicate names.
    assert_eq!(err(&mut s, "CREATE VIEW w (a) AS SELECT 1, 2"), 1353);
    assert_eq!(err(&mut s, "CREATE VIEW w AS SELECT a, a FROM t"), 1060);
    assert_eq!(err(&mut s, "CREATE VIEW w (p, p) AS SELECT 1, 2"), 1060);
    // What the SELECT names must exist.
    assert_eq!(err(&mut s, "CREATE VIEW w AS SELECT * FROM nosuch"), 1146);
    assert_eq!(err(&mut s, "CREATE VIEW w AS SELECT nosuch FROM t"), 1054);
    assert_eq!(
        err(&mut s, "CREATE VIEW w AS SELECT a FROM t WHERE a = ?"),
        1351
    );
    // Multi-table writes through a view are refused, the tables unchanged
    // (single-table ones: tests/views_write.rs).
    assert_eq!(
        err(&mut s, "UPDATE v JOIN u ON u.a = v.a SET u.c = 0"),
        1235
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT SUM(c) FROM u"), ["70"]);
    // Table statements on a view and view statements on a table.
    assert_eq!(err(&mut s, "DROP TABLE v"), 1965);
    q(&mut s, "DROP TABLE IF EXISTS v");
    assert_eq!(warnings(&mut s), ["Note|1965|'d.v' is a view"]);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM v"), ["3"]);
    assert_eq!(err(&mut s, "DROP VIEW t"), 4092);
    assert_eq!(err(&mut s, "DROP VIEW nosuch"), 4092);
    q(&mut s, "DROP VIEW IF EXISTS nosuch");
    assert_eq!(warnings(&mut s), ["Note|4092|Unknown VIEW: 'd.nosuch'"]);
    assert_eq!(err(&mut s, "ALTER TABLE v ADD COLUMN z INT"), 1347);
    assert_eq!(err(&mut s, "SHOW CREATE VIEW t"), 1347);
    assert_eq!(err(&mut s, "ALTER VIEW nosuch AS SELECT 1"), 1146);
    // OR REPLACE and ALTER VIEW change the definition.
    q(&mut s, "CREATE OR REPLACE VIEW v AS SELECT 1 AS one");
    assert_eq!(rows(&mut s, "SELECT * FROM v"), ["1"]);
    q(&mut s, "ALTER VIEW v (two) AS SELECT 2");
    assert_eq!(rows(&mut s, "SELECT two FROM v"), ["2"]);
    q(
        &mut s,
        "ALTER ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW v AS SELECT a FROM t",
    );
    assert_eq!(
        rows(&mut s, "SHOW CREATE VIEW v")[0].split('|').nth(1).unwrap(),
        "CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW `v` AS SELECT a FROM t"
    );
    // A view whose table is gone: 1356 when used; back when it returns.
    q(&mut s, "CREATE TABLE gone (a INT)");
    q(&mut s, "CREATE VIEW vg AS SELECT a FROM gone");
    q(&mut s, "DROP TABLE gone");
    assert_eq!(err(&mut s, "SELECT * FROM vg"), 1356);
    q(&mut s, "CREATE TABLE gone (b INT)");
    assert_eq!(err(&mut s, "SELECT * FROM vg"), 1356);
    q(&mut s, "DROP TABLE gone");
    q(&mut s, "CREATE TABLE gone (a INT)");
    assert!(rows(&mut s, "SELECT * FROM vg").is_empty());
    // View recursion through CREATE OR REPLACE: 1462 at use.
    q(&mut s, "CREATE VIEW r1 AS SELECT 1 AS x");
    q(&mut s, "CREATE VIEW r2 AS SELECT x FROM r1");
    q(&mut s, "CREATE OR REPLACE VIEW r1 AS SELECT x FROM r2");
    assert_eq!(err(&mut s, "SELECT * FROM r2"), 1462);
    // DROP VIEW of several, some missing: the others go, 4092 names the rest.
    assert_eq!(err(&mut s, "DROP VIEW r1, nosuch, r2"), 4092);
    assert_eq!(err(&mut s, "SELECT * FROM r1"), 1146);
    // RENAME TABLE of a view.
    q(&mut s, "RENAME TABLE vg TO vg2");
    assert!(rows(&mut s, "SELECT * FROM vg2").is_empty());
    assert_eq!(err(&mut s, "SELECT * FROM vg"), 1146);
    // DROP DATABASE takes its views.
    q(&mut s, "CREATE DATABASE e");
    q(&mut s, "CREATE VIEW e.ve AS SELECT 1 AS k");
    assert_eq!(rows(&mut s, "SELECT k FROM e.ve"), ["1"]);
    q(&mut s, "DROP DATABASE e");
    q(&mut s, "CREATE DATABASE e");
    assert_eq!(err(&mut s, "SELECT k FROM e.ve"), 1146);
    // A literal with a backslash would not read back as written: refused, not
    // stored as another string; a view without one is unaffected.
    assert_eq!(
        err(&mut s, r"CREATE VIEW e.vb AS SELECT 'C:\\dir' AS p"),
        1235
    );
    assert_eq!(err(&mut s, r"CREATE VIEW e.vb AS SELECT 'x\\' AS p"), 1235);
    q(&mut s, "CREATE VIEW e.vb AS SELECT 'C:/dir' AS p");
    assert_eq!(rows(&mut s, "SELECT p FROM e.vb"), ["C:/dir"]);
}

#[test]
fn views_in_show_and_information_schema() {
    let db = TestDb::open("sql-views-show");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE VIEW v (x) AS SELECT a FROM t");
    assert_eq!(rows(&mut s, "SHOW TABLES"), ["t", "u", "v"]);
    assert_eq!(
        rows(&mut s, "SHOW FULL TABLES"),
        ["t|BASE TABLE", "u|BASE TABLE", "v|VIEW"]
    );
    let create = rows(&mut s, "SHOW CREATE TABLE v");
    assert_eq!(
        create,
        ["v|CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `v` (`x`) AS SELECT a FROM t|utf8mb4|utf8mb4_general_ci"]
    );
    assert_eq!(rows(&mut s, "SHOW CREATE VIEW v"), create);
    let status = rows(&mut s, "SHOW TABLE STATUS LIKE 'v'");
    assert_eq!(status.len(), 1);
    assert!(status[0].starts_with("v|NULL|") && status[0].ends_with("|VIEW"));
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COMMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'd' ORDER BY TABLE_NAME"
        ),
        [
            "t|BASE TABLE|STRATA|",
            "u|BASE TABLE|STRATA|",
            "v|VIEW|NULL|VIEW"
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, VIEW_DEFINITION, CHECK_OPTION, DEFINER, SECURITY_TYPE, ALGORITHM \
             FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'd'"
        ),
        ["v|SELECT a FROM t|NONE|root@localhost|DEFINER|UNDEFINED"]
    );
}

#[test]
fn views_survive_a_restart() {
    let dir = testkit::TempDir::new("sql-views-restart");
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        for st in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))",
            "INSERT INTO t VALUES (1, 'x'), (2, 'y')",
            "CREATE VIEW v (p, q) AS SELECT a, b FROM t WHERE a > 1",
            "CREATE VIEW gone AS SELECT 1",
            "DROP VIEW gone",
            "CREATE SQL SECURITY INVOKER VIEW w AS SELECT COUNT(*) AS n FROM v",
        ] {
            q(&mut s, st);
        }
        inst.shutdown().unwrap();
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(rows(&mut s, "SELECT p, q FROM v"), ["2|y"]);
    assert_eq!(rows(&mut s, "SELECT n FROM w"), ["1"]);
    assert_eq!(err(&mut s, "SELECT * FROM gone"), 1146);
    assert_eq!(
        rows(&mut s, "SHOW CREATE VIEW w")[0].split('|').nth(1).unwrap(),
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW `w` AS SELECT COUNT(*) AS n FROM v"
    );
}

/// A second session's locking read of `a` in `t`: the error code, or None if
/// it got the row.
fn second_locker(db: &TestDb, a: i32) -> Option<u16> {
    let mut b = session_in_d(db);
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    q(&mut b, "BEGIN");
    let mut c = sql::result::Collect::default();
    let r = b.query(&format!("SELECT * FROM t WHERE a = {a} FOR UPDATE"), &mut c);
    q(&mut b, "ROLLBACK");
    r.err().map(|e| e.code)
}

#[test]
fn locking_reads_through_views_lock_the_base_rows() {
    let db = TestDb::open("sql-views-lock");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE VIEW v AS SELECT a, b FROM t");
    q(&mut s, "CREATE VIEW vv AS SELECT * FROM v WHERE a < 3");
    q(
        &mut s,
        "CREATE VIEW vj AS SELECT t.a, u.c FROM t JOIN u ON u.a = t.a",
    );
    for (sel, rows_read) in [
        ("SELECT * FROM v WHERE a = 1 FOR UPDATE", vec!["1|x"]),
        (
            "SELECT * FROM v WHERE a = 1 LOCK IN SHARE MODE",
            vec!["1|x"],
        ),
        ("SELECT * FROM vv WHERE a = 1 FOR UPDATE", vec!["1|x"]),
        ("SELECT a FROM vj WHERE a = 1 FOR UPDATE", vec!["1"]),
        (
            "SELECT v.a FROM v JOIN u ON u.a = v.a WHERE v.a = 1 FOR UPDATE",
            vec!["1"],
        ),
    ] {
        q(&mut s, "BEGIN");
        assert_eq!(rows(&mut s, sel), rows_read, "{sel}");
        assert_eq!(second_locker(&db, 1), Some(1205), "{sel}");
        q(&mut s, "COMMIT");
        assert_eq!(second_locker(&db, 1), None, "{sel}");
    }
    // Views MariaDB materializes cannot be locked: refused, never read
    // without the locks asked for.
    for body in [
        "SELECT b, COUNT(*) AS n FROM t GROUP BY b",
        "SELECT COUNT(*) AS n FROM t",
        "SELECT DISTINCT b FROM t",
        "SELECT a FROM t LIMIT 2",
        "SELECT a FROM t UNION SELECT a FROM u",
        "SELECT a, ROW_NUMBER() OVER () AS r FROM t",
        "SELECT x.a FROM (SELECT a FROM t) AS x",
    ] {
        q(&mut s, "DROP VIEW IF EXISTS w");
        q(&mut s, &format!("CREATE VIEW w AS {body}"));
        q(&mut s, "BEGIN");
        assert_eq!(err(&mut s, "SELECT * FROM w FOR UPDATE"), 1235, "{body}");
        assert_eq!(
            err(&mut s, "SELECT * FROM w LOCK IN SHARE MODE"),
            1235,
            "{body}"
        );
        assert_eq!(second_locker(&db, 1), None, "{body}");
        q(&mut s, "COMMIT");
        // Without a locking clause it reads as before.
        assert!(!rows(&mut s, "SELECT * FROM w").is_empty(), "{body}");
    }
    q(
        &mut s,
        "CREATE ALGORITHM=TEMPTABLE VIEW tv AS SELECT a FROM t",
    );
    assert_eq!(err(&mut s, "SELECT * FROM tv FOR UPDATE"), 1235);
}

#[test]
fn view_bodies_never_see_the_outer_query() {
    let db = TestDb::open("sql-views-outer");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE TABLE o (c INT)");
    q(&mut s, "INSERT INTO o VALUES (7)");
    q(&mut s, "CREATE VIEW v AS SELECT c FROM u");
    assert_eq!(rows(&mut s, "SELECT (SELECT MAX(c) FROM v) FROM o"), ["40"]);
    q(&mut s, "ALTER TABLE u RENAME COLUMN c TO d");
    // `c` must not bind to o.c: the view is invalid.
    for sel in [
        "SELECT (SELECT MAX(c) FROM v) FROM o",
        "SELECT * FROM o WHERE EXISTS (SELECT * FROM v)",
        "SELECT * FROM o WHERE c IN (SELECT c FROM v)",
        "SELECT * FROM v",
    ] {
        assert_eq!(err(&mut s, sel), 1356, "{sel}");
    }
    q(&mut s, "CREATE TABLE gone_soon (a INT)");
    q(&mut s, "CREATE VIEW w AS SELECT a FROM gone_soon");
    q(&mut s, "DROP TABLE gone_soon");
    assert_eq!(err(&mut s, "SELECT (SELECT COUNT(*) FROM w) FROM o"), 1356);
}

#[test]
fn views_joining_views_twice_are_bounded() {
    let db = TestDb::open("sql-views-expand");
    let mut s = session_in_d(&db);
    setup(&mut s);
    // Built from the top down, each view over base tables standing in for
    // the next view down (CREATE VIEW of v6 itself would be 1116 already).
    for i in 1..25 {
        q(&mut s, &format!("CREATE TABLE v{i} (a INT)"));
    }
    for i in (1..=25).rev() {
        if i < 25 {
            q(&mut s, &format!("DROP TABLE v{i}"));
        }
        let p = if i == 1 {
            "t".to_string()
        } else {
            format!("v{}", i - 1)
        };
        q(
            &mut s,
            &format!("CREATE VIEW v{i} AS SELECT x.a FROM {p} x JOIN {p} y ON y.a = x.a"),
        );
    }
    assert_eq!(
        err(
            &mut s,
            "CREATE VIEW v26 AS SELECT x.a FROM v25 x JOIN v25 y ON y.a = x.a"
        ),
        1116
    );
    // v5 reads 32 tables: fine; v6 64: MariaDB's 1116.
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM v5"), ["3"]);
    let started = std::time::Instant::now();
    for i in [6, 10, 25] {
        assert_eq!(err(&mut s, &format!("SELECT * FROM v{i}")), 1116, "v{i}");
        assert_eq!(
            err(
                &mut s,
                &format!("SELECT * FROM t WHERE a IN (SELECT a FROM v{i})")
            ),
            1116
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // The bound is per join, views counted by the tables they read.
    assert_eq!(err(&mut s, "SELECT * FROM v5 x, v5 y"), 1116);
    let many: Vec<String> = (0..62).map(|i| format!("t t{i}")).collect();
    assert_eq!(
        err(&mut s, &format!("SELECT COUNT(*) FROM {}", many.join(", "))),
        1116
    );
    let ok: Vec<String> = (0..61).map(|i| format!("u u{i}")).collect();
    q(&mut s, "DELETE FROM u WHERE a > 1");
    assert_eq!(
        rows(&mut s, &format!("SELECT COUNT(*) FROM {}", ok.join(", "))),
        ["1"]
    );
}
