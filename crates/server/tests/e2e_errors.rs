//! The MySQL error codes and SQLSTATEs clients depend on, through the text
//! protocol, at prepare time and at execute time, with the statement
//! undone and the connection still usable; a bad password at login.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, expect_err, q, q1, q_i64, server_err, Server};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};

#[test]
fn error_codes_and_sqlstates() {
    let srv = Server::start("errors");
    let mut c = srv.fresh_db("d");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY, u VARCHAR(4) NOT NULL, n TINYINT, p TINYINT UNSIGNED, m DECIMAL(4,2), UNIQUE KEY uu (u))");
    exec(&mut c, "INSERT INTO t VALUES (1, 'a', 1, 1, 1.5)");
    let before = q(&mut c, "SELECT * FROM t");

    // Text protocol.
    let m = expect_err(
        &mut c,
        "INSERT INTO t VALUES (1, 'b', 0, 0, 0)",
        1062,
        "23000",
    );
    assert_eq!(m, "Duplicate entry '1' for key 'PRIMARY'");
    let m = expect_err(
        &mut c,
        "INSERT INTO t VALUES (2, 'a', 0, 0, 0)",
        1062,
        "23000",
    );
    assert!(m.contains("'a'") && m.contains("uu"), "{m}");
    expect_err(&mut c, "SELECT * FROM nosuch", 1146, "42S02");
    expect_err(&mut c, "INSERT INTO nosuch VALUES (1)", 1146, "42S02");
    expect_err(&mut c, "SELEC 1", 1064, "42000");
    expect_err(&mut c, "SELECT * FROM t WHERE", 1064, "42000");
    expect_err(&mut c, "SELECT nocol FROM t", 1054, "42S22");
    expect_err(&mut c, "SELECT id FROM t WHERE nocol = 1", 1054, "42S22");
    expect_err(
        &mut c,
        "INSERT INTO t (id, nocol) VALUES (5, 1)",
        1054,
        "42S22",
    );
    expect_err(&mut c, "UPDATE t SET nocol = 1", 1054, "42S22");
    expect_err(&mut c, "USE nosuchdb", 1049, "42000");
    expect_err(
        &mut c,
        "INSERT INTO t (id, u) VALUES (5, NULL)",
        1048,
        "23000",
    );
    expect_err(&mut c, "UPDATE t SET u = NULL", 1048, "23000");
    expect_err(
        &mut c,
        "INSERT INTO t (id, u) VALUES (5, 'abcde')",
        1406,
        "22001",
    );
    expect_err(&mut c, "UPDATE t SET u = 'abcde'", 1406, "22001");
    expect_err(
        &mut c,
        "INSERT INTO t (id, u, n) VALUES (5, 'x', 128)",
        1264,
        "22003",
    );
    expect_err(
        &mut c,
        "INSERT INTO t (id, u, n) VALUES (5, 'x', -129)",
        1264,
        "22003",
    );
    expect_err(
        &mut c,
        "INSERT INTO t (id, u, p) VALUES (5, 'x', -1)",
        1264,
        "22003",
    );
    expect_err(
        &mut c,
        "INSERT INTO t (id, u, m) VALUES (5, 'x', 100)",
        1264,
        "22003",
    );
    expect_err(&mut c, "UPDATE t SET n = n + 200", 1264, "22003");

    // Prepared statements: errors at prepare time and at execute time.
    let e = server_err(c.prep("SELECT * FROM nosuch WHERE id = ?"));
    assert_eq!((e.code, e.state.as_str()), (1146, "42S02"));
    let e = server_err(c.prep("SELEC ?"));
    assert_eq!((e.code, e.state.as_str()), (1064, "42000"));
    let e = server_err(c.prep("SELECT nocol FROM t WHERE id = ?"));
    assert_eq!((e.code, e.state.as_str()), (1054, "42S22"));
    let ins = c
        .prep("INSERT INTO t (id, u, n, p, m) VALUES (?, ?, ?, ?, ?)")
        .unwrap();
    let cases: Vec<(Vec<Value>, u16, &str)> = vec![
        (
            vec![1.into(), "b".into(), 0.into(), 0.into(), 0.into()],
            1062,
            "23000",
        ),
        (
            vec![2.into(), "a".into(), 0.into(), 0.into(), 0.into()],
            1062,
            "23000",
        ),
        (
            vec![2.into(), Value::NULL, 0.into(), 0.into(), 0.into()],
            1048,
            "23000",
        ),
        (
            vec![2.into(), "abcde".into(), 0.into(), 0.into(), 0.into()],
            1406,
            "22001",
        ),
        (
            vec![2.into(), "b".into(), 300.into(), 0.into(), 0.into()],
            1264,
            "22003",
        ),
        (
            vec![2.into(), "b".into(), 0.into(), (-1).into(), 0.into()],
            1264,
            "22003",
        ),
        (
            vec![2.into(), "b".into(), 0.into(), 0.into(), 123.25.into()],
            1264,
            "22003",
        ),
        (
            vec![2.into(), "b".into(), "999".into(), 0.into(), 0.into()],
            1264,
            "22003",
        ),
    ];
    for (params, code, state) in cases {
        let e = server_err(c.exec_drop(&ins, params.clone()));
        assert_eq!((e.code, e.state.as_str()), (code, state), "{params:?}: {e}");
    }
    // Nothing changed, and the statement still works afterwards.
    assert_eq!(q(&mut c, "SELECT * FROM t"), before);
    c.exec_drop(&ins, (2, "b", -128, 255, "-99.99")).unwrap();
    assert_eq!(
        q(&mut c, "SELECT * FROM t WHERE id = 2"),
        vec!["2|b|-128|255|-99.99"]
    );

    // A default database that does not exist fails the handshake.
    let e = server_err(Conn::new(srv.opts().db_name(Some("nosuchdb"))));
    assert_eq!((e.code, e.state.as_str()), (1049, "42000"));
    // The connection is still fine after all these errors.
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM t"), 2);
}

#[test]
fn bad_password_is_rejected() {
    let srv = Server::start_with("auth", &["--root-password=s3cret"]);
    // Right password.
    let mut c = srv.conn();
    // The account the login matched ('root'@'%'); USER() has the client's host.
    assert_eq!(q1(&mut c, "SELECT CURRENT_USER()"), "root@%");
    assert_eq!(q1(&mut c, "SELECT USER()"), "root@localhost");
    // Wrong password, no password, unknown user.
    for (user, pass) in [
        ("root", Some("wrong")),
        ("root", None),
        ("nobody", Some("s3cret")),
    ] {
        let e = server_err(Conn::new(srv.opts().user(Some(user)).pass(pass)));
        assert_eq!(
            (e.code, e.state.as_str()),
            (1045, "28000"),
            "{user}/{pass:?}: {e}"
        );
        assert!(
            e.message
                .starts_with(&format!("Access denied for user '{user}'")),
            "{e}"
        );
    }
    // The server keeps serving.
    assert_eq!(q_i64(&mut c, "SELECT 1 + 1"), 2);
}

/// DELETE IGNORE and UPDATE IGNORE over foreign keys through the stock
/// `mariadb` client: what it prints (counts, warnings) is what it prints
/// for MariaDB 10.11 with InnoDB tables (the same script run there): rows a
/// RESTRICT child (also a grandchild under a cascade) holds are kept with a
/// 1451 warning each by DELETE IGNORE, left silently by UPDATE IGNORE.
#[test]
fn update_and_delete_ignore_over_foreign_keys_in_the_client() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let srv = Server::start("errors-fk-ignore");
    let mut c = srv.fresh_db("d");
    for s in [
        "CREATE TABLE p (id INT PRIMARY KEY, k INT, UNIQUE KEY uk (k))",
        "CREATE TABLE c (id INT PRIMARY KEY, pk INT, KEY kp (pk), FOREIGN KEY (pk) REFERENCES p (k) ON DELETE CASCADE ON UPDATE CASCADE)",
        "CREATE TABLE g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id))",
        "CREATE TABLE r (id INT PRIMARY KEY, pk INT, KEY kp (pk), FOREIGN KEY (pk) REFERENCES p (k))",
        "INSERT INTO p VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)",
        "INSERT INTO c VALUES (1, 10), (2, 20), (3, 30)",
        "INSERT INTO g VALUES (1, 2)",
        "INSERT INTO r VALUES (4, 40)",
    ] {
        exec(&mut c, s);
    }
    let mut cmd = Command::new("mariadb");
    cmd.args(["--protocol=TCP", "-h127.0.0.1", &format!("-P{}", srv.port)])
        .args(["--skip-ssl", "-uroot", "-vvv", "-D", "d"]);
    if let Some(pw) = &srv.password {
        cmd.arg(format!("--password={pw}"));
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"DELETE IGNORE FROM p WHERE id < 5;\nSHOW WARNINGS;\n\
              UPDATE IGNORE p SET k = k + 1;\nUPDATE IGNORE r SET pk = 99;\n\
              SELECT id, k FROM p ORDER BY id;\nSELECT id, pk FROM c;\n",
        )
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    // The lines that count, without timings and table padding.
    let lines: Vec<String> = out
        .lines()
        .filter(|l| {
            ["Query OK", "Rows matched", "| Warning", "|  "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| {
            let l = match l.strip_prefix("Query OK") {
                Some(rest) => rest.split(" (").next().unwrap_or(rest),
                None => l,
            };
            l.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect();
    let fk = |child: &str, col: &str, parent: &str, pcol: &str| {
        format!(
            "| Warning | 1451 | Cannot delete or update a parent row: a foreign key constraint \
             fails (`d`.`{child}`, CONSTRAINT `{child}_ibfk_1` FOREIGN KEY (`{col}`) \
             REFERENCES `{parent}` (`{pcol}`)) |"
        )
    };
    assert_eq!(
        lines,
        [
            ", 2 rows affected, 2 warnings".to_string(),
            fk("g", "cid", "c", "id"),
            fk("r", "pk", "p", "k"),
            ", 2 rows affected".into(),
            "Rows matched: 3 Changed: 2 Warnings: 0".into(),
            ", 0 rows affected".into(),
            "Rows matched: 1 Changed: 0 Warnings: 0".into(),
            "| 2 | 21 |".into(),
            "| 4 | 40 |".into(),
            "| 5 | 51 |".into(),
            "| 2 | 21 |".into(),
        ],
        "{out}"
    );
}
