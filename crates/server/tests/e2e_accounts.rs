//! Accounts and privileges against the real `strata` binary: CREATE /
//! ALTER / DROP / RENAME USER, SET PASSWORD, global GRANT / REVOKE and
//! SHOW GRANTS (messages and output as MariaDB 10.11 gives them), the
//! privilege checks (1142, 1044, 1227, 1045), logins against stored
//! hashes, accounts surviving a restart, and root's password from a file
//! or `--initialize`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{as_user, exec, expect_err, q, q1, server_err, Server};
use mysql::prelude::Queryable;
use mysql::Conn;

const APP_HASH: &str = "*2B602296A79E0A8784ACC5C88D92E46588CCA3C3"; // 'pw1'

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
        "GRANT EXECUTE ON PROCEDURE d1.p TO app",
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
    // (An unqualified multi-table DELETE target needs a current database:
    // 1046 without one, as MariaDB.)
    exec(&mut app, "USE d1");
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

/// Sends COM_PROCESS_KILL (the protocol's kill) for `id`; Ok on OK, the
/// error code on ERR.
fn com_process_kill(s: &mut std::net::TcpStream, id: i64) -> Result<(), u16> {
    use std::io::Write;
    let mut p = vec![0x0C];
    p.extend_from_slice(&(id as u32).to_le_bytes());
    s.write_all(&common::packet(0, &p)).unwrap();
    let (r, _) = common::read_packet(s).expect("a reply");
    match r[0] {
        0x00 => Ok(()),
        0xFF => Err(u16::from_le_bytes([r[1], r[2]])),
        x => panic!("unexpected reply {x:#x}"),
    }
}

fn ids(c: &mut Conn, sql: &str) -> Vec<i64> {
    q(c, sql)
        .iter()
        .map(|r| r.split('|').next().unwrap().parse().unwrap())
        .collect()
}

/// SHOW PROCESSLIST, information_schema.PROCESSLIST, KILL and the protocol's
/// COM_PROCESS_KILL go by privileges (PROCESS to see, SUPER to kill another
/// user's sessions), never by the user's name: an account named root
/// without privileges sees and kills only its own user's sessions.
#[test]
fn sessions_are_seen_and_killed_by_privilege_not_by_name() {
    let srv = Server::start("accounts-procs");
    let mut root = srv.fresh_db("d1");
    let root_id = common::q_i64(&mut root, "SELECT CONNECTION_ID()");
    exec(&mut root, "CREATE USER app IDENTIFIED BY 'pw1'");
    let mut app = as_user(&srv, "app", "pw1", None).unwrap();
    let app_id = common::q_i64(&mut app, "SELECT CONNECTION_ID()");
    // From now on a client of 127.0.0.1 logging in as root is
    // 'root'@'localhost' (more specific than '%'): no privileges at all.
    exec(&mut root, "CREATE USER 'root'@'localhost'");
    let mut weak = srv.conn();
    let weak_id = common::q_i64(&mut weak, "SELECT CONNECTION_ID()");
    for sql in [
        "SHOW PROCESSLIST",
        "SHOW FULL PROCESSLIST",
        "SELECT ID FROM information_schema.PROCESSLIST ORDER BY ID",
    ] {
        assert_eq!(ids(&mut weak, sql), vec![root_id, weak_id], "{sql}");
        assert_eq!(ids(&mut app, sql), vec![app_id], "{sql}");
        assert_eq!(ids(&mut root, sql), vec![root_id, app_id, weak_id], "{sql}");
    }
    let msg = format!("You are not owner of thread {app_id}");
    for sql in [
        format!("KILL {app_id}"),
        format!("KILL QUERY {app_id}"),
        format!("KILL CONNECTION {app_id}"),
        "KILL USER app".to_string(),
    ] {
        let e = server_err(weak.query_drop(&sql));
        assert_eq!((e.code, e.message.as_str()), (1095, msg.as_str()), "{sql}");
    }
    // The protocol's kill is checked the same way.
    let mut raw = common::login(srv.port, None).expect("raw login as 'root'@'localhost'");
    assert_eq!(com_process_kill(&mut raw, app_id), Err(1095));
    assert_eq!(q1(&mut app, "SELECT 1"), "1", "app's session lives");
    let e = server_err(app.query_drop(format!("KILL {root_id}")));
    assert_eq!(e.code, 1095);
    // Its own user's sessions a user may kill without any privilege.
    let mut app2 = as_user(&srv, "app", "pw1", None).unwrap();
    let app2_id = common::q_i64(&mut app2, "SELECT CONNECTION_ID()");
    exec(&mut app, &format!("KILL {app2_id}"));
    assert!(app2.query_drop("SELECT 1").is_err(), "killed");
    // PROCESS shows every session, but killing another user's needs SUPER.
    exec(&mut root, "GRANT PROCESS ON *.* TO app");
    let seen = ids(&mut app, "SHOW PROCESSLIST");
    for id in [root_id, app_id, weak_id] {
        assert!(seen.contains(&id), "{id} in {seen:?}");
    }
    let e = server_err(app.query_drop(format!("KILL QUERY {weak_id}")));
    assert_eq!(e.code, 1095);
    exec(&mut root, "GRANT SUPER ON *.* TO 'root'@'localhost'");
    assert_eq!(com_process_kill(&mut raw, app_id), Ok(()));
    assert!(
        app.query_drop("SELECT 1").is_err(),
        "killed by COM_PROCESS_KILL"
    );
}

/// COM_RESET_CONNECTION and COM_CHANGE_USER find the account from the
/// client's real address (an account for '127.0.0.1' keeps its privileges),
/// COM_CHANGE_USER authenticates (a wrong password is 1045 and the
/// connection closes), and COM_STMT_PREPARE checks privileges (1142) before
/// telling a table's columns, and execution checks them again.
#[test]
fn session_commands_keep_the_account_and_prepare_checks_privileges() {
    let srv = Server::start("accounts-session");
    let mut root = srv.fresh_db("d1");
    exec(&mut root, "CREATE TABLE t (a INT, secret TEXT)");
    exec(&mut root, "INSERT INTO t VALUES (1, 'x')");
    exec(
        &mut root,
        "CREATE USER 'ip'@'127.0.0.1' IDENTIFIED BY 'ipw'",
    );
    exec(&mut root, "GRANT SELECT ON *.* TO 'ip'@'127.0.0.1'");
    let mut ip = as_user(&srv, "ip", "ipw", None).unwrap();
    assert_eq!(q(&mut ip, "SELECT a FROM d1.t"), vec!["1"]);
    ip.reset().unwrap();
    assert_eq!(q(&mut ip, "SELECT a FROM d1.t"), vec!["1"], "after reset");
    ip.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("ip".into()))
            .with_pass(Some("ipw".into())),
    )
    .unwrap();
    assert_eq!(
        q(&mut ip, "SELECT a FROM d1.t"),
        vec!["1"],
        "after change_user"
    );
    // A wrong password: 1045, and the connection is closed.
    let e = ip
        .change_user(
            mysql::ChangeUserOpts::default()
                .with_user(Some("ip".into()))
                .with_pass(Some("wrong".into())),
        )
        .unwrap_err();
    assert_eq!(common::err_code(&e).map(|c| c.0), Some(1045), "{e}");
    assert!(
        ip.query_drop("SELECT 1").is_err(),
        "closed after a failed change"
    );

    exec(&mut root, "CREATE USER app IDENTIFIED BY 'pw1'");
    let mut app = as_user(&srv, "app", "pw1", None).unwrap();
    for sql in ["SELECT * FROM d1.t", "SELECT * FROM d1.nosuch"] {
        let e = server_err(app.prep(sql));
        assert_eq!(e.code, 1142, "{sql}: {}", e.message);
        assert_eq!(
            e.message,
            format!(
                "SELECT command denied to user 'app'@'localhost' for table `d1`.`{}`",
                if sql.ends_with('t') { "t" } else { "nosuch" }
            )
        );
    }
    let e = server_err(app.prep("INSERT INTO d1.t VALUES (?, ?)"));
    assert_eq!(e.code, 1142);
    exec(&mut root, "GRANT SELECT ON *.* TO app");
    let st = app.prep("SELECT a FROM d1.t WHERE a = ?").unwrap();
    let got: Vec<i64> = app.exec(&st, (1,)).unwrap();
    assert_eq!(got, vec![1]);
    exec(&mut root, "REVOKE SELECT ON *.* FROM app");
    let e = server_err(app.exec::<i64, _, _>(&st, (1,)));
    assert_eq!(e.code, 1142);
}

/// Dropping every account does not bring a passwordless root back at the
/// next start (MySQL never recreates root); `--skip-grant-tables`, bound to
/// a loopback address only, lets an administrator create one again.
#[test]
fn no_root_comes_back_after_all_accounts_are_dropped() {
    let mut srv = Server::start("accounts-none");
    let mut root = srv.conn();
    exec(&mut root, "DROP USER root");
    drop(root);
    srv.restart();
    let e = server_err(Conn::new(srv.opts()));
    assert_eq!(e.code, 1045, "{}", e.message);
    assert!(
        srv.log_tail(20).contains("there are no accounts"),
        "{}",
        srv.log_tail(20)
    );
    // Recovery: any login holds every privilege, on loopback only.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg(format!("--datadir={}", srv.datadir.display()))
        .args([
            "--port=1",
            "--socket=",
            "--bind-address=0.0.0.0",
            "--skip-grant-tables",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("loopback"), "{err}");
    srv.set_args(&["--skip-grant-tables"]);
    srv.restart();
    // Whatever password a client sends (MySQL's skip-grant-tables too).
    let mut c = Conn::new(srv.opts().user(Some("root")).pass(Some("any-old-pw"))).unwrap();
    exec(&mut c, "SELECT 1");
    let mut c = Conn::new(srv.opts().user(Some("anyone"))).unwrap();
    exec(&mut c, "CREATE USER admin IDENTIFIED BY 'back'");
    exec(&mut c, "GRANT ALL ON *.* TO admin WITH GRANT OPTION");
    drop(c);
    srv.set_args(&[]);
    srv.restart();
    server_err(Conn::new(srv.opts().user(Some("anyone"))));
    let mut admin = as_user(&srv, "admin", "back", None).unwrap();
    exec(&mut admin, "CREATE DATABASE back_again");
}

/// COM_FIELD_LIST of `table` with `wild` on a raw connection: the (schema, table,
/// name) of each column definition, or the ERR's code and message.
fn field_list(
    s: &mut std::net::TcpStream,
    table: &str,
    wild: &str,
) -> Result<Vec<String>, (u16, String)> {
    use std::io::Write;
    let mut p = vec![0x04];
    p.extend_from_slice(table.as_bytes());
    p.push(0);
    p.extend_from_slice(wild.as_bytes());
    s.write_all(&common::packet(0, &p)).unwrap();
    let mut out = Vec::new();
    loop {
        let (r, _) = common::read_packet(s).unwrap();
        match r[0] {
            0xFF => {
                let code = u16::from_le_bytes([r[1], r[2]]);
                return Err((code, String::from_utf8_lossy(&r[9..]).into_owned()));
            }
            0xFE if r.len() < 9 => return Ok(out),
            _ => {}
        }
        // catalog, schema, table, org_table, name (length-encoded, short).
        let mut parts = Vec::new();
        let mut i = 0;
        for _ in 0..5 {
            let n = usize::from(r[i]);
            parts.push(String::from_utf8_lossy(&r[i + 1..i + 1 + n]).into_owned());
            i += 1 + n;
        }
        out.push(format!("{}.{}.{}", parts[1], parts[2], parts[4]));
    }
}

#[test]
fn com_field_list_as_mariadb() {
    // What the `mariadb` client's name completion (mysql_list_fields) sends:
    // columns of a table or view, filtered by a LIKE wildcard; 1146 for a table
    // unknown or not visible to the account, 1046 without a database (MariaDB's
    // answers, checked against mariadbd 10.11).
    let srv = Server::start("field-list");
    let mut root = srv.fresh_db("d");
    exec(
        &mut root,
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(9), bb INT)",
    );
    exec(&mut root, "CREATE TABLE hidden (x INT)");
    exec(&mut root, "CREATE VIEW v AS SELECT a, b FROM t");
    exec(&mut root, "CREATE USER lim");
    exec(&mut root, "GRANT SELECT ON d.t TO lim");
    let mut s = common::login(srv.port, Some("d")).unwrap();
    assert_eq!(
        field_list(&mut s, "t", ""),
        Ok(vec!["d.t.a".into(), "d.t.b".into(), "d.t.bb".into()])
    );
    assert_eq!(
        field_list(&mut s, "t", "B%"),
        Ok(vec!["d.t.b".into(), "d.t.bb".into()])
    );
    assert_eq!(field_list(&mut s, "t", "b_"), Ok(vec!["d.t.bb".into()]));
    assert_eq!(
        field_list(&mut s, "v", ""),
        Ok(vec!["d.v.a".into(), "d.v.b".into()])
    );
    assert_eq!(
        field_list(&mut s, "nope", ""),
        Err((1146, "Table 'd.nope' doesn't exist".into()))
    );
    let mut s = common::login(srv.port, None).unwrap();
    assert_eq!(
        field_list(&mut s, "t", ""),
        Err((1046, "No database selected".into()))
    );
    let mut s = common::login_user(srv.port, "lim", Some("d"), 45).unwrap();
    assert_eq!(field_list(&mut s, "t", "a"), Ok(vec!["d.t.a".into()]));
    assert_eq!(
        field_list(&mut s, "hidden", ""),
        Err((1146, "Table 'd.hidden' doesn't exist".into()))
    );
    // The connection goes on.
    assert_eq!(
        common::raw_query(&mut s, b"SELECT 7"),
        vec![Some(b"7".to_vec())]
    );
}

#[test]
fn broken_views_name_only_themselves() {
    // A view whose body names what is gone is 1356 naming the view the
    // statement names, never a table or view beneath it: COM_FIELD_LIST,
    // SHOW COLUMNS and SELECT alike (mariadbd 10.11's answers).
    let srv = Server::start("broken-views");
    let mut root = srv.fresh_db("d");
    for sql in [
        "CREATE TABLE b (a INT, x INT)",
        "CREATE VIEW v AS SELECT a, x FROM b",
        "CREATE VIEW v3 AS SELECT * FROM v",
        "CREATE VIEW v4 AS SELECT a FROM v3",
        "CREATE DATABASE e",
        "CREATE TABLE e.t (a INT)",
        "CREATE VIEW ve AS SELECT * FROM e.t",
        "DROP DATABASE e",
        "DROP TABLE b",
    ] {
        exec(&mut root, sql);
    }
    let invalid = |v: &str| {
        (
            1356,
            format!(
                "View 'd.{v}' references invalid table(s) or column(s) or function(s) or \
                 definer/invoker of view lack rights to use them"
            ),
        )
    };
    let mut s = common::login(srv.port, Some("d")).unwrap();
    for v in ["v", "v3", "v4", "ve"] {
        assert_eq!(field_list(&mut s, v, ""), Err(invalid(v)), "{v}");
        for sql in [
            format!("SHOW COLUMNS FROM {v}"),
            format!("SHOW FULL COLUMNS FROM {v}"),
            format!("SELECT * FROM {v}"),
        ] {
            let e = common::server_err(root.query_drop(&sql));
            assert_eq!((e.code, e.message), invalid(v), "{sql}");
        }
    }
}
