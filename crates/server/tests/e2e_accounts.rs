//! Accounts and privileges against the real `strata` binary: CREATE /
//! ALTER / DROP / RENAME USER, SET PASSWORD, global GRANT / REVOKE and
//! SHOW GRANTS (messages and output as MariaDB 10.11 gives them), the
//! privilege checks (1142, 1044, 1227, 1045), logins against stored
//! hashes, accounts surviving a restart, and root's password from a file
//! or `--initialize`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, expect_err, q, q1, server_err, Server};
use mysql::prelude::Queryable;
use mysql::Conn;

const APP_HASH: &str = "*2B602296A79E0A8784ACC5C88D92E46588CCA3C3"; // 'pw1'

fn as_user(srv: &Server, user: &str, pw: &str, db: Option<&str>) -> mysql::Result<Conn> {
    Conn::new(
        srv.opts()
            .user(Some(user))
            .pass(Some(pw))
            .db_name(db.map(str::to_string)),
    )
}

#[test]
fn accounts_grants_and_privilege_checks() {
    let mut srv = Server::start("accounts");
    let mut root = srv.fresh_db("d1");
    exec(&mut root, "CREATE TABLE t (a INT)");
    exec(&mut root, "INSERT INTO t VALUES (1)");
    exec(&mut root, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw1'");
    let e = expect_err(&mut root, "CREATE USER app@'%', 'x'@'%'", 1396, "HY000");
    assert_eq!(e, "Operation CREATE USER failed for 'app'@'%'");
    // 'x' was created all the same, as MariaDB does.
    exec(&mut root, "DROP USER x");
    exec(&mut root, "CREATE USER IF NOT EXISTS app");
    assert_eq!(
        q(&mut root, "SHOW WARNINGS"),
        vec!["Note|1973|Can't create user 'app'@'%'; it already exists"]
    );
    let e = expect_err(&mut root, "DROP USER nobody, app2", 1396, "HY000");
    assert_eq!(e, "Operation DROP USER failed for 'nobody'@'%','app2'@'%'");
    exec(&mut root, "DROP USER IF EXISTS nobody");
    assert_eq!(
        q(&mut root, "SHOW WARNINGS"),
        vec!["Note|1974|Can't drop user 'nobody'@'%'; it doesn't exist"]
    );
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR app"),
        vec![format!(
            "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '{APP_HASH}'"
        )]
    );
    expect_err(&mut root, "SHOW GRANTS FOR nobody", 1141, "42000");
    expect_err(
        &mut root,
        "SET PASSWORD FOR nobody = PASSWORD('x')",
        1133,
        "28000",
    );
    expect_err(&mut root, "GRANT SELECT ON *.* TO nobody", 1133, "28000");
    expect_err(
        &mut root,
        "ALTER USER nobody IDENTIFIED BY 'x'",
        1396,
        "HY000",
    );
    expect_err(&mut root, "RENAME USER nobody TO n2", 1396, "HY000");
    let e = expect_err(
        &mut root,
        "CREATE USER b IDENTIFIED BY PASSWORD 'abc'",
        1372,
        "HY000",
    );
    assert_eq!(e, "Password hash should be a 41-digit hexadecimal number");
    // What Strata does not honour is refused, never ignored.
    for s in [
        "GRANT SELECT ON d1.* TO app",
        "GRANT SELECT (a) ON *.* TO app",
        "CREATE USER c REQUIRE X509",
        "CREATE ROLE r",
        "CREATE USER c IDENTIFIED VIA ed25519",
    ] {
        expect_err(&mut root, s, 1235, "42000");
    }

    // Wrong password, no password: 1045 with MySQL's message.
    let e = server_err(as_user(&srv, "app", "bad", None));
    assert_eq!(e.code, 1045);
    assert_eq!(
        e.message,
        "Access denied for user 'app'@'localhost' (using password: YES)"
    );
    // USAGE only: no database, no table.
    let e = server_err(as_user(&srv, "app", "pw1", Some("d1")));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1044, "Access denied for user 'app'@'%' to database 'd1'")
    );
    let mut app = as_user(&srv, "app", "pw1", None).unwrap();
    assert_eq!(q1(&mut app, "SELECT 1"), "1");
    assert_eq!(q(&mut app, "SHOW DATABASES"), vec!["information_schema"]);
    let denied = [
        ("SELECT * FROM d1.t", 1142, "SELECT command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("INSERT INTO d1.t VALUES (2)", 1142, "INSERT command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("UPDATE d1.t SET a = 1", 1142, "UPDATE command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("DELETE FROM d1.t", 1142, "DELETE command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("CREATE TABLE d1.u (a INT)", 1142, "CREATE command denied to user 'app'@'localhost' for table `d1`.`u`"),
        ("DROP TABLE d1.t", 1142, "DROP command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("SHOW CREATE TABLE d1.t", 1142, "SHOW command denied to user 'app'@'localhost' for table `d1`.`t`"),
        ("CREATE DATABASE d2", 1044, "Access denied for user 'app'@'%' to database 'd2'"),
        ("USE d1", 1044, "Access denied for user 'app'@'%' to database 'd1'"),
        ("SHOW TABLES FROM d1", 1044, "Access denied for user 'app'@'%' to database 'd1'"),
        ("SHOW GRANTS FOR root", 1044, "Access denied for user 'app'@'%' to database 'mysql'"),
        ("CREATE USER zz", 1227, "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"),
        ("FLUSH TABLES", 1227, "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"),
        ("GRANT SELECT ON *.* TO app", 1045, "Access denied for user 'app'@'%' (using password: YES)"),
    ];
    for (sql, code, msg) in denied {
        let e = server_err(app.query_drop(sql));
        assert_eq!((e.code, e.message.as_str()), (code, msg), "{sql}");
    }
    // A user changes its own password.
    exec(&mut app, "SET PASSWORD = PASSWORD('pw2')");
    drop(app);
    server_err(as_user(&srv, "app", "pw1", None));
    let mut app = as_user(&srv, "app", "pw2", None).unwrap();

    // GRANT takes effect on the next statement; SHOW GRANTS as MariaDB.
    exec(
        &mut root,
        "GRANT SELECT, INSERT, SHOW VIEW, PROCESS ON *.* TO app",
    );
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR 'app'@'%'")[0],
        "GRANT SELECT, INSERT, PROCESS, SHOW VIEW ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*B27918D2D9402882CEADA0EF687D35FBDC137D72'"
    );
    assert_eq!(q(&mut app, "SELECT a FROM d1.t"), vec!["1"]);
    exec(&mut app, "INSERT INTO d1.t VALUES (2)");
    let e = server_err(app.query_drop("DELETE FROM d1.t"));
    assert_eq!(e.code, 1142);
    // GRANT OPTION alone neither sets passwords nor creates accounts (CREATE USER's):
    // otherwise `GRANT USAGE ... TO root IDENTIFIED BY` would take root over.
    exec(&mut root, "GRANT SELECT ON *.* TO app WITH GRANT OPTION");
    for sql in [
        "GRANT USAGE ON *.* TO root IDENTIFIED BY 'mine'",
        "GRANT SELECT ON *.* TO nosuch",
    ] {
        let e = server_err(app.query_drop(sql));
        assert_eq!(e.code, 1227, "{sql}: {}", e.message);
    }
    exec(&mut app, "GRANT SELECT ON *.* TO app");
    exec(&mut root, "REVOKE GRANT OPTION ON *.* FROM app");
    // SELECT and INSERT only: no overwriting or deleting through other shapes.
    for (sql, cmd) in [
        ("REPLACE INTO d1.t VALUES (1)", "DELETE"),
        ("INSERT INTO d1.t VALUES (1) ON DUPLICATE KEY UPDATE a = 5", "UPDATE"),
        (
            "DELETE s FROM (SELECT 1 AS x FROM information_schema.ENGINES LIMIT 1) x JOIN d1.t s ON 1",
            "DELETE",
        ),
        (
            "UPDATE (SELECT 1 AS x FROM information_schema.ENGINES LIMIT 1) x JOIN d1.t s SET s.a = 9",
            "UPDATE",
        ),
    ] {
        let e = server_err(app.query_drop(sql));
        assert_eq!(e.code, 1142, "{sql}: {}", e.message);
        assert!(e.message.starts_with(cmd), "{sql}: {}", e.message);
    }
    assert_eq!(q(&mut app, "SELECT a FROM d1.t ORDER BY a"), vec!["1", "2"]);
    assert_eq!(
        q(&mut app, "SHOW DATABASES").len(),
        3,
        "information_schema, d1, test"
    );
    exec(&mut root, "GRANT ALL ON *.* TO app WITH GRANT OPTION");
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR app")[0],
        "GRANT ALL PRIVILEGES ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*B27918D2D9402882CEADA0EF687D35FBDC137D72' WITH GRANT OPTION"
    );
    exec(&mut app, "DELETE FROM d1.t WHERE a = 2");
    exec(&mut root, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM app");
    server_err(app.query_drop("SELECT * FROM d1.t"));

    // A more specific host wins; RENAME and ALTER USER.
    exec(
        &mut root,
        "CREATE USER 'app'@'localhost' IDENTIFIED BY 'local'",
    );
    exec(&mut root, "GRANT SELECT ON *.* TO 'app'@'localhost'");
    let mut local = as_user(&srv, "app", "local", None).unwrap();
    assert_eq!(q(&mut local, "SELECT COUNT(*) FROM d1.t"), vec!["1"]);
    server_err(as_user(&srv, "app", "pw2", None));
    exec(
        &mut root,
        "RENAME USER 'app'@'localhost' TO 'reader'@'localhost'",
    );
    exec(
        &mut root,
        "ALTER USER 'reader'@'localhost' IDENTIFIED BY 'r'",
    );
    as_user(&srv, "app", "pw2", None).unwrap();

    // Accounts survive a restart.
    drop((root, app, local));
    srv.restart();
    let mut r = as_user(&srv, "reader", "r", None).unwrap();
    assert_eq!(q(&mut r, "SELECT COUNT(*) FROM d1.t"), vec!["1"]);
    server_err(as_user(&srv, "reader", "local", None));
    let mut root = srv.conn();
    exec(&mut root, "DROP USER 'reader'@'localhost', app");
    server_err(as_user(&srv, "app", "pw2", None));
}

#[test]
fn root_password_from_a_file_and_initialize() {
    let dir = testkit::unique_temp_path("e2e-accounts-pwfile");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("pw");
    std::fs::write(&f, "from-file\n").unwrap();
    let arg = format!("--root-password-file={}", f.display());
    let mut srv = Server::start_with("accounts-file", &[&arg]);
    srv.password = Some("from-file".into());
    let mut c = srv.conn();
    assert_eq!(q1(&mut c, "SELECT 1"), "1");
    server_err(Conn::new(srv.opts().pass(Some("other"))));
    let _ = std::fs::remove_dir_all(&dir);

    let mut srv = Server::start_with("accounts-init", &["--initialize"]);
    let path = srv.datadir.join("root-password");
    let pw = std::fs::read_to_string(&path).unwrap().trim().to_string();
    assert!(pw.len() >= 16, "{pw}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    server_err(Conn::new(srv.opts().pass(None::<String>)));
    srv.password = Some(pw.clone());
    let mut c = srv.conn();
    exec(&mut c, "ALTER USER root IDENTIFIED BY 'changed'");
    // A later start with --initialize changes nothing.
    srv.password = Some("changed".into());
    srv.restart();
    let mut c = srv.conn();
    assert_eq!(q1(&mut c, "SELECT 1"), "1");
}
