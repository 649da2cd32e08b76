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
//! the database.
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
