//! Database- and table-level GRANT/REVOKE against the real `strata`
//! binary, with the codes and messages MariaDB 10.11 gives (checked
//! against Debian's mariadbd): the levels' errors (1221, 1144, 1146, 1046,
//! 1141, 1147), the checks combining global, database and table grants
//! (1142, 1044, 1143 for an UPDATE/DELETE reading columns it may not
//! SELECT), joins and subqueries, INSERT ... SELECT, prepared statements,
//! SHOW GRANTS, SHOW DATABASES / SHOW TABLES / information_schema showing
//! only what the account holds something on, the engine's STRATA_* views
//! behind PROCESS, DROP TABLE keeping grants, RENAME/DROP USER, grants
//! surviving a restart, and COM_CHANGE_USER checking the password before
//! the database. Fixes of privilege bypasses: WITH names hiding tables
//! only in their scope, multi-table DELETE/UPDATE checked on the table
//! written, ALTER TABLE ... RENAME as RENAME TABLE, information_schema
//! read-only (1044), over-long names (1102, 1103, 1470), SET GLOBAL
//! needing SUPER, GRANT OPTION on patterns, CREATE VIEW names in the view's
//! database and OR REPLACE needing DROP, writes and reads through views
//! (1356), SHOW TABLE STATUS filtered.
#![allow(clippy::unwrap_used)]

mod common;

use common::{as_user, exec, expect_err, q, server_err, Server};
use mysql::prelude::Queryable;
use mysql::Conn;

/// The error of `sql` as (code, message).
fn denied(c: &mut Conn, sql: &str) -> (u16, String) {
    let e = server_err(c.query_drop(sql));
    (e.code, e.message)
}

fn setup(srv: &Server) -> Conn {
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE d1",
        "CREATE DATABASE d2",
        "CREATE DATABASE d_x",
        "CREATE TABLE d1.t (a INT PRIMARY KEY, b INT)",
        "CREATE TABLE d1.u (a INT PRIMARY KEY)",
        "CREATE TABLE d2.x (a INT PRIMARY KEY)",
        "CREATE TABLE d_x.y (a INT PRIMARY KEY)",
        "INSERT INTO d1.t VALUES (1, 2)",
        "INSERT INTO d1.u VALUES (1)",
        "INSERT INTO d2.x VALUES (7)",
        "INSERT INTO d_x.y VALUES (9)",
        "CREATE USER k IDENTIFIED BY 'k'",
    ] {
        exec(&mut root, sql);
    }
    root
}

#[test]
fn grant_levels_errors_and_show_grants() {
    let srv = Server::start("grants-levels");
    let mut root = setup(&srv);
    // Privileges a level does not have, missing tables, no current database.
    let e = expect_err(&mut root, "GRANT SUPER ON d1.* TO k", 1221, "HY000");
    assert_eq!(e, "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES");
    let e = expect_err(&mut root, "GRANT PROCESS ON d1.t TO k", 1144, "42000");
    assert_eq!(
        e,
        "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used"
    );
    expect_err(&mut root, "GRANT EXECUTE ON d1.t TO k", 1144, "42000");
    let e = expect_err(&mut root, "GRANT SELECT ON d1.nosuch TO k", 1146, "42S02");
    assert_eq!(e, "Table 'd1.nosuch' doesn't exist");
    expect_err(&mut root, "GRANT SELECT ON nosuchdb.t TO k", 1146, "42S02");
    expect_err(&mut root, "GRANT SELECT ON t TO k", 1046, "3D000");
    expect_err(&mut root, "GRANT SELECT ON * TO k", 1046, "3D000");
    expect_err(&mut root, "GRANT SELECT ON d1.* TO nobody", 1133, "28000");
    // REVOKE of what was never granted.
    let e = expect_err(&mut root, "REVOKE SELECT ON d9.* FROM k", 1141, "42000");
    assert_eq!(e, "There is no such grant defined for user 'k' on host '%'");
    let e = expect_err(&mut root, "REVOKE SELECT ON d1.t FROM k", 1147, "42000");
    assert_eq!(
        e,
        "There is no such grant defined for user 'k' on host '%' on table 't'"
    );
    expect_err(
        &mut root,
        "REVOKE SELECT ON d1.* FROM nobody",
        1141,
        "42000",
    );
    expect_err(
        &mut root,
        "REVOKE SELECT ON d1.t FROM nobody",
        1141,
        "42000",
    );

    // The current database for `*` and a bare table name.
    exec(&mut root, "USE d1");
    exec(&mut root, "GRANT SELECT ON t TO k");
    exec(&mut root, "GRANT INSERT ON * TO k");
    exec(&mut root, "GRANT USAGE ON d2.* TO k");
    exec(&mut root, "GRANT ALL ON d2.* TO k");
    exec(&mut root, "GRANT SELECT ON `d\\_%`.* TO k");
    exec(&mut root, "GRANT UPDATE ON d1.t TO k WITH GRANT OPTION");
    exec(&mut root, "GRANT GRANT OPTION ON d1.u TO k");
    let hash = "*69A7BAE3D37A83849ECEF8F3FF9260B35E01555D";
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR k"),
        vec![
            format!("GRANT USAGE ON *.* TO `k`@`%` IDENTIFIED BY PASSWORD '{hash}'"),
            "GRANT INSERT ON `d1`.* TO `k`@`%`".to_string(),
            "GRANT ALL PRIVILEGES ON `d2`.* TO `k`@`%`".to_string(),
            "GRANT SELECT ON `d\\_%`.* TO `k`@`%`".to_string(),
            "GRANT SELECT, UPDATE ON `d1`.`t` TO `k`@`%` WITH GRANT OPTION".to_string(),
            "GRANT USAGE ON `d1`.`u` TO `k`@`%` WITH GRANT OPTION".to_string(),
        ]
    );
    // REVOKE of privileges a grant does not hold is no error; a grant left
    // with nothing goes, GRANT OPTION alone stays (as MariaDB).
    exec(&mut root, "REVOKE DELETE ON d1.* FROM k");
    exec(&mut root, "REVOKE ALL PRIVILEGES ON d2.* FROM k");
    exec(&mut root, "REVOKE SELECT, UPDATE ON d1.t FROM k");
    expect_err(&mut root, "REVOKE ALL ON d2.* FROM k", 1141, "42000");
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR k")[1..],
        [
            "GRANT INSERT ON `d1`.* TO `k`@`%`",
            "GRANT SELECT ON `d\\_%`.* TO `k`@`%`",
            "GRANT USAGE ON `d1`.`t` TO `k`@`%` WITH GRANT OPTION",
            "GRANT USAGE ON `d1`.`u` TO `k`@`%` WITH GRANT OPTION",
        ]
    );
    // REVOKE ALL PRIVILEGES, GRANT OPTION clears every level.
    exec(&mut root, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM k");
    assert_eq!(q(&mut root, "SHOW GRANTS FOR k").len(), 1);
}

#[test]
fn checks_combine_levels_and_filter_what_is_shown() {
    let mut srv = Server::start("grants-checks");
    let mut root = setup(&srv);
    exec(&mut root, "GRANT UPDATE ON d1.t TO k");
    exec(&mut root, "GRANT SELECT ON d1.u TO k");
    exec(&mut root, "GRANT INSERT ON d2.* TO k");
    exec(&mut root, "GRANT SELECT ON `d\\_%`.* TO k");
    exec(&mut root, "CREATE VIEW d1.v AS SELECT * FROM d1.t");
    let mut k = as_user(&srv, "k", "k", None).unwrap();
    let tbl = |cmd: &str, db: &str, t: &str| {
        (
            1142,
            format!("{cmd} command denied to user 'k'@'localhost' for table `{db}`.`{t}`"),
        )
    };
    let col = |c: &str, t: &str| {
        (
            1143,
            format!(
                "SELECT command denied to user 'k'@'localhost' for column '{c}' in table '{t}'"
            ),
        )
    };
    let dbe = |d: &str| {
        (
            1044,
            format!("Access denied for user 'k'@'%' to database '{d}'"),
        )
    };
    for (sql, want) in [
        ("SELECT * FROM d1.t", tbl("SELECT", "d1", "t")),
        ("SELECT * FROM d1.u JOIN d1.t", tbl("SELECT", "d1", "t")),
        (
            "SELECT * FROM d1.u WHERE a IN (SELECT a FROM d1.t)",
            tbl("SELECT", "d1", "t"),
        ),
        ("SELECT * FROM d1.v", tbl("SELECT", "d1", "v")),
        ("UPDATE d1.t SET a = 1 WHERE b = 2", col("b", "t")),
        ("UPDATE d1.t SET a = b", col("b", "t")),
        (
            "UPDATE d1.t, d1.u SET t.b = 1 WHERE t.a = u.a",
            col("a", "t"),
        ),
        ("DELETE FROM d1.t", tbl("DELETE", "d1", "t")),
        ("INSERT INTO d1.t VALUES (5, 5)", tbl("INSERT", "d1", "t")),
        (
            "INSERT INTO d2.x SELECT a FROM d1.t",
            tbl("SELECT", "d1", "t"),
        ),
        ("SELECT * FROM d2.x", tbl("SELECT", "d2", "x")),
        ("CREATE TABLE d1.n (a INT)", tbl("CREATE", "d1", "n")),
        ("DROP TABLE d1.t", tbl("DROP", "d1", "t")),
        ("SHOW CREATE TABLE d1.v", tbl("SHOW", "d1", "v")),
        ("USE d3", dbe("d3")),
        ("CREATE DATABASE d5", dbe("d5")),
        ("SELECT * FROM dax.y", tbl("SELECT", "dax", "y")),
    ] {
        assert_eq!(denied(&mut k, sql), want, "{sql}");
    }
    // What the grants allow.
    exec(&mut k, "UPDATE d1.t SET b = 3");
    exec(&mut k, "UPDATE d1.t SET b = (SELECT MAX(a) FROM d1.u)");
    assert_eq!(q(&mut k, "SELECT a FROM d1.u"), vec!["1"]);
    exec(&mut k, "INSERT INTO d2.x SELECT a + 10 FROM d1.u");
    exec(&mut k, "INSERT INTO d2.x VALUES (3)");
    assert_eq!(q(&mut k, "SELECT a FROM d_x.y"), vec!["9"], "pattern d\\_%");
    exec(&mut k, "USE d1");
    exec(&mut k, "USE d2");
    assert_eq!(
        q(&mut k, "SHOW DATABASES"),
        vec!["d1", "d2", "d_x", "information_schema"]
    );
    assert_eq!(q(&mut k, "SHOW TABLES FROM d1"), vec!["t", "u"]);
    assert_eq!(
        q(
            &mut k,
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA <> 'information_schema' ORDER BY 1, 2"
        ),
        vec!["d1|t", "d1|u", "d2|x", "d_x|y"]
    );
    assert_eq!(
        q(
            &mut k,
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"
        ),
        vec!["d1", "d2", "d_x", "information_schema"]
    );
    assert_eq!(
        q(
            &mut k,
            "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'd1' ORDER BY 1, 2"
        ),
        vec!["t|a", "t|b", "u|a"]
    );
    // The engine's views and status need PROCESS (as InnoDB's do in MariaDB).
    let process = (
        1227,
        "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation"
            .to_string(),
    );
    for sql in [
        "SELECT * FROM information_schema.STRATA_CF",
        "SELECT * FROM information_schema.STRATA_CF_OPTIONS",
        "SELECT * FROM information_schema.STRATA_SST_FILES",
        "SELECT * FROM information_schema.STRATA_COMPACTION_STATS",
        "SHOW ENGINE STRATA STATUS",
    ] {
        assert_eq!(denied(&mut k, sql), process, "{sql}");
    }
    exec(&mut root, "GRANT PROCESS ON *.* TO k");
    assert!(!q(&mut k, "SELECT * FROM information_schema.STRATA_CF").is_empty());
    // SHOW DATABASES shows every database.
    exec(&mut root, "CREATE DATABASE hidden");
    assert!(!q(&mut k, "SHOW DATABASES").contains(&"hidden".to_string()));
    exec(&mut root, "GRANT SHOW DATABASES ON *.* TO k");
    assert!(q(&mut k, "SHOW DATABASES").contains(&"hidden".to_string()));

    // Prepared statements: checked at prepare and at every execution.
    let e = server_err(k.prep("SELECT * FROM d1.t"));
    assert_eq!((e.code, e.message), tbl("SELECT", "d1", "t"));
    let st = k.prep("SELECT a FROM d1.u WHERE a = ?").unwrap();
    let got: Vec<i64> = k.exec(&st, (1,)).unwrap();
    assert_eq!(got, vec![1]);
    exec(&mut root, "REVOKE SELECT ON d1.u FROM k");
    let e = server_err(k.exec::<i64, _, _>(&st, (1,)));
    assert_eq!((e.code, e.message), tbl("SELECT", "d1", "u"));
    // SQL PREPARE / EXECUTE the same.
    let e = server_err(k.query_drop("PREPARE p FROM 'SELECT a FROM d2.x'"));
    assert_eq!((e.code, e.message), tbl("SELECT", "d2", "x"));
    exec(&mut root, "GRANT SELECT ON d2.x TO k");
    exec(&mut k, "PREPARE p FROM 'SELECT a FROM d2.x WHERE a = 7'");
    assert_eq!(q(&mut k, "EXECUTE p"), vec!["7"]);
    exec(&mut root, "REVOKE SELECT ON d2.x FROM k");
    let e = server_err(k.query_drop("EXECUTE p"));
    assert_eq!((e.code, e.message), tbl("SELECT", "d2", "x"));

    // The table's grant stays when it is dropped (MariaDB's too), and
    // applies to a table created again under the name.
    exec(&mut root, "GRANT SELECT ON d1.u TO k");
    exec(&mut root, "DROP TABLE d1.u");
    assert!(q(&mut root, "SHOW GRANTS FOR k")
        .contains(&"GRANT SELECT ON `d1`.`u` TO `k`@`%`".to_string()));
    exec(&mut root, "CREATE TABLE d1.u (a INT)");
    assert!(q(&mut k, "SELECT * FROM d1.u").is_empty());

    // Grants survive a restart; RENAME USER carries them, DROP USER drops them.
    drop((k, root));
    srv.restart();
    let mut root = srv.conn();
    let before = q(&mut root, "SHOW GRANTS FOR k");
    assert_eq!(before.len(), 5, "{before:?}");
    exec(&mut root, "RENAME USER k TO k2");
    let after = q(&mut root, "SHOW GRANTS FOR k2");
    assert_eq!(
        after,
        before
            .iter()
            .map(|l| l.replace("`k`@", "`k2`@"))
            .collect::<Vec<_>>()
    );
    let mut k2 = as_user(&srv, "k2", "k", None).unwrap();
    assert_eq!(q(&mut k2, "SELECT a FROM d_x.y"), vec!["9"]);
    exec(&mut root, "DROP USER k2");
    exec(&mut root, "CREATE USER k2");
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR k2"),
        vec!["GRANT USAGE ON *.* TO `k2`@`%`"]
    );
}

/// GRANT needs GRANT OPTION and the privileges at the level granted
/// (database: 1044, table: 1142 "GRANT command denied"), as MariaDB.
#[test]
fn granting_needs_the_privileges_at_that_level() {
    let srv = Server::start("grants-grantor");
    let mut root = setup(&srv);
    exec(&mut root, "CREATE USER m IDENTIFIED BY 'm'");
    exec(&mut root, "GRANT DELETE ON d1.t TO m");
    exec(&mut root, "GRANT SELECT ON d2.* TO m WITH GRANT OPTION");
    let mut m = as_user(&srv, "m", "m", None).unwrap();
    assert_eq!(
        denied(&mut m, "GRANT DELETE ON d1.t TO k"),
        (
            1142,
            "GRANT command denied to user 'm'@'localhost' for table `d1`.`t`".to_string()
        )
    );
    assert_eq!(
        denied(&mut m, "GRANT INSERT ON d2.* TO k"),
        (
            1044,
            "Access denied for user 'm'@'%' to database 'd2'".to_string()
        )
    );
    exec(&mut m, "GRANT SELECT ON d2.* TO k");
    exec(&mut m, "GRANT SELECT ON d2.x TO k");
    // DELETE needs SELECT on what it reads: its WHERE (1143), a multi-table
    // DELETE's tables (1142).
    assert_eq!(
        denied(&mut m, "DELETE FROM d1.t WHERE a = 5"),
        (
            1143,
            "SELECT command denied to user 'm'@'localhost' for column 'a' in table 't'".to_string()
        )
    );
    assert_eq!(
        denied(&mut m, "DELETE d1.t FROM d1.t JOIN d2.x ON t.a = x.a"),
        (
            1142,
            "SELECT command denied to user 'm'@'localhost' for table `d1`.`t`".to_string()
        )
    );
    exec(&mut m, "DELETE FROM d1.t");
    assert!(q(&mut root, "SELECT * FROM d1.t").is_empty());
}

/// COM_CHANGE_USER checks the password before the database: a client that
/// does not know it learns nothing (1045 whether the database exists or
/// not); one that does gets 1049 / 1044.
#[test]
fn change_user_checks_the_password_before_the_database() {
    let srv = Server::start("grants-change-user");
    let mut root = setup(&srv);
    exec(&mut root, "GRANT SELECT ON d1.* TO k");
    for (pw, db, code) in [
        ("wrong", "nosuchdb", 1045),
        ("wrong", "d2", 1045),
        ("k", "nosuchdb", 1049),
        ("k", "d2", 1044),
    ] {
        let mut c = srv.conn();
        let e = c
            .change_user(
                mysql::ChangeUserOpts::default()
                    .with_user(Some("k".into()))
                    .with_pass(Some(pw.into()))
                    .with_db_name(Some(db.into())),
            )
            .unwrap_err();
        assert_eq!(
            common::err_code(&e).map(|c| c.0),
            Some(code),
            "{pw} {db}: {e}"
        );
    }
    let mut c = srv.conn();
    c.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("k".into()))
            .with_pass(Some("k".into()))
            .with_db_name(Some("d1".into())),
    )
    .unwrap();
    assert_eq!(q(&mut c, "SELECT a FROM t"), vec!["1"]);
}

/// A WITH name hides a table only where the planner applies it: inside its
/// own query expression, in later CTEs (itself only WITH RECURSIVE) and
/// the body, never in its own definition, never outside.
#[test]
fn with_names_hide_tables_only_in_their_scope() {
    let srv = Server::start("grants-cte-scope");
    let mut root = setup(&srv);
    exec(&mut root, "GRANT INSERT ON d2.* TO k");
    let mut k = as_user(&srv, "k", "k", Some("d2")).unwrap();
    let x = (
        1142,
        "SELECT command denied to user 'k'@'localhost' for table `d2`.`x`".to_string(),
    );
    for sql in [
        "WITH x AS (SELECT * FROM x) SELECT * FROM x",
        "SELECT * FROM x WHERE EXISTS (WITH x AS (SELECT 1) SELECT 1)",
        "WITH y AS (SELECT * FROM x), x AS (SELECT 1 AS a) SELECT * FROM y",
        "SELECT * FROM (WITH x AS (SELECT 1 AS a) SELECT * FROM x) t JOIN x",
    ] {
        assert_eq!(denied(&mut k, sql), x, "{sql}");
    }
    for (sql, want) in [
        ("WITH x AS (SELECT 4 AS a) SELECT * FROM x", vec!["4"]),
        (
            "WITH y AS (SELECT 5 AS a), x AS (SELECT * FROM y) SELECT * FROM x",
            vec!["5"],
        ),
        (
            "WITH x AS (SELECT 6 AS a) SELECT * FROM x WHERE EXISTS (SELECT * FROM x)",
            vec!["6"],
        ),
    ] {
        assert_eq!(q(&mut k, sql), want, "{sql}");
    }

    // SET of a global (variable or transaction characteristics) needs
    // SUPER, told by the parsed scope: a value saying 'global' does not.
    let sup = (
        1227,
        "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
            .to_string(),
    );
    for sql in [
        "SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SET GLOBAL max_connections = 100",
        "SET @@global.max_connections = 100",
    ] {
        assert_eq!(denied(&mut k, sql), sup, "{sql}");
    }
    exec(&mut k, "SET @v = 'global'");
    exec(
        &mut k,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    assert_eq!(q(&mut k, "SELECT @v"), vec!["global"]);

    // CREATE VIEW checks bare names in the view's database, where its
    // query is planned; OR REPLACE needs DROP on the view.
    exec(&mut root, "GRANT CREATE VIEW ON d2.* TO k");
    exec(&mut root, "GRANT SELECT ON d1.* TO k");
    exec(&mut k, "USE d1");
    assert_eq!(denied(&mut k, "CREATE VIEW d2.v AS SELECT * FROM x"), x);
    assert_eq!(
        denied(&mut k, "CREATE OR REPLACE VIEW d2.v2 AS SELECT 1 AS a"),
        (
            1142,
            "DROP command denied to user 'k'@'localhost' for table `d2`.`v2`".to_string()
        )
    );
    exec(&mut k, "CREATE VIEW d2.v3 AS SELECT * FROM d1.u");

    // A write through a view needs the base table's privilege (the
    // invoker's here); a read through a view whose definer lost SELECT on
    // what it reads fails (1356, as MySQL).
    let invalid = |v: &str| {
        (
            1356,
            format!(
                "View '{v}' references invalid table(s) or column(s) or function(s) \
                 or definer/invoker of view lack rights to use them"
            ),
        )
    };
    exec(
        &mut root,
        "CREATE SQL SECURITY INVOKER VIEW d1.w AS SELECT a, b FROM d1.t",
    );
    exec(&mut root, "GRANT UPDATE, DELETE ON d1.w TO k");
    assert_eq!(denied(&mut k, "UPDATE d1.w SET b = 9"), invalid("d1.w"));
    assert_eq!(denied(&mut k, "DELETE FROM d1.w"), invalid("d1.w"));
    assert_eq!(q(&mut root, "SELECT b FROM d1.t"), vec!["2"]);
    exec(&mut root, "GRANT SELECT ON d2.v3 TO k");
    assert_eq!(q(&mut k, "SELECT * FROM d2.v3"), vec!["1"]);
    exec(&mut root, "REVOKE SELECT ON d1.* FROM k");
    assert_eq!(denied(&mut k, "SELECT * FROM d2.v3"), invalid("d2.v3"));

    // SHOW TABLE STATUS shows only what the account holds something on.
    let names: Vec<String> = q(&mut k, "SHOW TABLE STATUS")
        .iter()
        .map(|r| r.split('|').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, vec!["w"]);
}

/// A multi-table DELETE/UPDATE is checked on the table the executor
/// writes: the USING form's targets, and a target or assignment whose
/// database part names another table than the one the join holds.
#[test]
fn multi_table_writes_check_the_table_written() {
    let srv = Server::start("grants-multi-target");
    let mut root = setup(&srv);
    exec(&mut root, "GRANT SELECT, UPDATE, DELETE ON d1.* TO k");
    exec(&mut root, "GRANT SELECT ON d2.x TO k");
    let mut k = as_user(&srv, "k", "k", None).unwrap();
    let x = |cmd: &str| {
        (
            1142,
            format!("{cmd} command denied to user 'k'@'localhost' for table `d2`.`x`"),
        )
    };
    // A target naming no table of the statement (a database part
    // included) is MariaDB's 1109 / 1054 before any privilege (a
    // single-table UPDATE checks the table first), never ignored.
    let unknown_col = |c: &str| (1054, format!("Unknown column '{c}' in 'SET'"));
    let unknown_table = |t: &str| (1109, format!("Unknown table '{t}' in MULTI DELETE"));
    for (sql, want) in [
        ("DELETE FROM d2.x USING d2.x", x("DELETE")),
        (
            "DELETE FROM x USING d2.x",
            (1046, "No database selected".into()),
        ),
        ("DELETE d1.x FROM d2.x", unknown_table("x")),
        ("UPDATE d2.x SET d1.x.a = 5", x("UPDATE")),
        ("UPDATE d2.x SET nosuch.a = 5", x("UPDATE")),
        ("UPDATE d2.x, d1.u SET d1.x.a = 5", unknown_col("d1.x.a")),
        (
            "UPDATE d1.t JOIN d2.x ON t.a = x.a SET t9.b = 1",
            unknown_col("t9.b"),
        ),
    ] {
        assert_eq!(denied(&mut k, sql), want, "{sql}");
    }
    exec(&mut root, "USE d1");
    for (sql, want) in [
        ("DELETE d1.x FROM d2.x", unknown_table("x")),
        ("DELETE t9 FROM t JOIN u ON t.a = u.a", unknown_table("t9")),
        (
            "DELETE t, t9 FROM t JOIN u ON t.a = u.a",
            unknown_table("t9"),
        ),
        ("DELETE d2.t FROM t JOIN u ON t.a = u.a", unknown_table("t")),
        (
            "DELETE FROM t9 USING t JOIN u ON t.a = u.a",
            unknown_table("t9"),
        ),
        ("DELETE t FROM t s JOIN u ON s.a = u.a", unknown_table("t")),
        ("DELETE x FROM d2.x", unknown_table("x")),
        ("DELETE d2.x FROM d2.x y", unknown_table("x")),
        ("UPDATE d2.x SET d1.x.a = 5", unknown_col("d1.x.a")),
        ("UPDATE d2.x SET t9.a = 5", unknown_col("t9.a")),
        (
            "UPDATE t JOIN u ON t.a = u.a SET t9.b = 1",
            unknown_col("t9.b"),
        ),
        (
            "UPDATE t JOIN u ON t.a = u.a SET d9.t.b = 1",
            unknown_col("d9.t.b"),
        ),
        (
            "UPDATE t s JOIN u ON s.a = u.a SET d1.t.b = 1",
            unknown_col("d1.t.b"),
        ),
        (
            "UPDATE t JOIN u ON t.a = u.a SET t.b = 1, nosuch = 2",
            unknown_col("nosuch"),
        ),
    ] {
        assert_eq!(denied(&mut root, sql), want, "{sql}");
    }
    // The forms naming a table of the statement still write it.
    exec(&mut root, "UPDATE t s JOIN u ON s.a = u.a SET d1.s.b = 3");
    exec(&mut root, "UPDATE d2.x SET d2.x.a = 8");
    exec(&mut root, "DELETE d2.x FROM d2.x JOIN u ON 0");
    assert_eq!(q(&mut root, "SELECT b FROM d1.t"), vec!["3"]);
    exec(&mut root, "UPDATE d2.x SET x.a = 7");
    assert_eq!(q(&mut root, "SELECT a FROM d2.x"), vec!["7"]);
    exec(&mut k, "DELETE FROM d1.u USING d1.u");
    assert!(q(&mut root, "SELECT a FROM d1.u").is_empty());

    // ALTER TABLE ... RENAME needs ALTER and DROP on the old name, CREATE
    // and INSERT on the new (as RENAME TABLE); 1142 names what is missing
    // in MariaDB's order ("DROP, ALTER", "INSERT, CREATE").
    let renames = |k: &mut Conn, want: (u16, String)| {
        for sql in [
            "ALTER TABLE d2.x RENAME TO d2.s",
            "ALTER TABLE d2.x ADD COLUMN z INT, RENAME TO d2.s",
            "RENAME TABLE d2.x TO d2.s",
        ] {
            assert_eq!(denied(k, sql), want, "{sql}");
        }
    };
    let s = |cmd: &str| {
        (
            1142,
            format!("{cmd} command denied to user 'k'@'localhost' for table `d2`.`s`"),
        )
    };
    renames(&mut k, x("DROP, ALTER"));
    exec(&mut root, "GRANT DROP ON d2.x TO k");
    renames(&mut k, x("ALTER"));
    exec(&mut root, "REVOKE DROP ON d2.x FROM k");
    exec(&mut root, "GRANT ALTER ON d2.x TO k");
    renames(&mut k, x("DROP"));
    exec(&mut root, "GRANT DROP ON d2.x TO k");
    renames(&mut k, s("INSERT, CREATE"));
    exec(&mut root, "GRANT CREATE ON d2.* TO k");
    renames(&mut k, s("INSERT"));
    exec(&mut root, "REVOKE CREATE ON d2.* FROM k");
    exec(&mut root, "GRANT INSERT ON d2.* TO k");
    renames(&mut k, s("CREATE"));
    exec(&mut root, "REVOKE INSERT ON d2.* FROM k");
    exec(&mut root, "GRANT CREATE, INSERT ON d1.* TO k");
    exec(&mut k, "ALTER TABLE d2.x RENAME TO d1.s");
    assert_eq!(q(&mut k, "SELECT a FROM d1.s"), vec!["7"]);

    // information_schema is read-only for everyone, in any case (1044).
    for sql in [
        "CREATE DATABASE information_schema",
        "CREATE DATABASE INFORMATION_SCHEMA",
        "DROP DATABASE Information_Schema",
        "CREATE TABLE information_schema.t (a INT)",
        "CREATE TABLE INFORMATION_SCHEMA.t (a INT)",
        "RENAME TABLE d1.t TO information_schema.t",
        "GRANT SELECT ON information_schema.* TO k",
        "GRANT SELECT ON INFORMATION_SCHEMA.TABLES TO k",
    ] {
        expect_err(&mut root, sql, 1044, "42000");
    }
    expect_err(&mut k, "CREATE DATABASE INFORMATION_SCHEMA", 1044, "42000");
    assert!(!q(&mut root, "SHOW DATABASES").contains(&"INFORMATION_SCHEMA".to_string()));

    // Names over MySQL's limits are refused, never stored truncated.
    let long = "a".repeat(65);
    let e = expect_err(
        &mut root,
        &format!("GRANT SELECT ON {long}.* TO k"),
        1102,
        "42000",
    );
    assert_eq!(e, format!("Incorrect database name '{long}'"));
    let e = expect_err(
        &mut root,
        &format!("GRANT SELECT ON d1.{long} TO k"),
        1103,
        "42000",
    );
    assert_eq!(e, format!("Incorrect table name '{long}'"));
    // MariaDB 10.11's account name limits (128 and 255 characters), its
    // 1470 showing 67 characters and "...".
    let (user, host) = ("u".repeat(129), "h".repeat(256));
    let too_long = |c: char, what: &str, max: usize| {
        format!(
            "String '{}...' is too long for {what} (should be no longer than {max})",
            c.to_string().repeat(67)
        )
    };
    for sql in [
        format!("CREATE USER {user}"),
        format!("DROP USER '{user}'"),
        format!("GRANT SELECT ON *.* TO '{user}'"),
        format!("CREATE DEFINER = '{user}'@'%' VIEW d1.vl AS SELECT 1"),
    ] {
        let e = expect_err(&mut root, &sql, 1470, "HY000");
        assert_eq!(e, too_long('u', "user name", 128), "{sql}");
    }
    for sql in [
        format!("CREATE USER x@'{host}'"),
        format!("CREATE DEFINER = 'x'@'{host}' VIEW d1.vl AS SELECT 1"),
    ] {
        let e = expect_err(&mut root, &sql, 1470, "HY000");
        assert_eq!(e, too_long('h', "host name", 255), "{sql}");
    }
    exec(&mut root, &format!("CREATE USER '{}'", "u".repeat(128)));
    exec(&mut root, &format!("CREATE USER x@'{}'", "h".repeat(255)));

    // GRANT OPTION on a pattern grants only patterns it covers.
    exec(&mut root, "CREATE USER m");
    exec(&mut root, "GRANT SELECT ON `d_`.* TO k WITH GRANT OPTION");
    assert_eq!(
        denied(&mut k, "GRANT SELECT ON `d%`.* TO m"),
        (
            1044,
            "Access denied for user 'k'@'%' to database 'd%'".to_string()
        )
    );
    exec(&mut k, "GRANT SELECT ON `d_`.* TO m");
}
