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
