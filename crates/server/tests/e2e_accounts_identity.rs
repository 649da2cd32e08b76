//! Who a session is, against the real `strata` binary and the stock `mariadb`
//! client (review of the sha2/accounts work): CURRENT_USER() is the account
//! the login matched (`'u'@'%'` for a login from localhost matched by `%`),
//! the definer inside a SQL SECURITY DEFINER view; USER(), SESSION_USER()
//! and SYSTEM_USER() are the user at the client's host (MariaDB 10.11). An
//! unknown user's stand-in keeps its plugin across restarts (the key that
//! picks it is kept in the datadir, mode 0600).
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, handshake_response, packet, read_packet, Server};
use std::io::Write;
use std::process::{Command, Stdio};

/// The `mariadb` client's batch output (tab-separated rows) of `sql` run as
/// `user`/`pw` over TCP to 127.0.0.1.
fn mariadb(srv: &Server, user: &str, pw: &str, sql: &str) -> Vec<String> {
    let o = Command::new("mariadb")
        .args([
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{}", srv.port),
            "--skip-ssl",
            &format!("-u{user}"),
            &format!("-p{pw}"),
            "-N",
            "-B",
            "-e",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run the mariadb client");
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn current_user_is_the_account_and_user_the_client() {
    let srv = Server::start("identity");
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE idb",
        "CREATE TABLE idb.t (a INT)",
        "INSERT INTO idb.t VALUES (1)",
        "CREATE USER cu IDENTIFIED BY 'pw1'",
        "CREATE USER cl@localhost IDENTIFIED BY 'pw2'",
        "CREATE USER dv",
        "GRANT SELECT ON idb.t TO dv",
        "GRANT SELECT ON idb.* TO cu",
        "CREATE DEFINER = dv VIEW idb.vd AS \
         SELECT CURRENT_USER() AS c, CURRENT_USER AS c2, USER() AS u, a FROM idb.t",
        "CREATE DEFINER = dv SQL SECURITY INVOKER VIEW idb.vi AS \
         SELECT CURRENT_USER() AS c, USER() AS u FROM idb.t",
        "CREATE DEFINER = cu VIEW idb.vo AS SELECT c, CURRENT_USER() AS mine FROM idb.vd",
    ] {
        exec(&mut root, sql);
    }
    // Matched by `%` from localhost.
    assert_eq!(
        mariadb(
            &srv,
            "cu",
            "pw1",
            "SELECT CURRENT_USER(), CURRENT_USER, USER(), SESSION_USER(), SYSTEM_USER()"
        ),
        ["cu@%\tcu@%\tcu@localhost\tcu@localhost\tcu@localhost"]
    );
    assert_eq!(
        mariadb(&srv, "cl", "pw2", "SELECT CURRENT_USER(), USER()"),
        ["cl@localhost\tcl@localhost"]
    );
    // A DEFINER view's body runs as its definer, an INVOKER view's as the
    // session; each view of a nest as its own definer.
    assert_eq!(
        mariadb(&srv, "cu", "pw1", "SELECT * FROM idb.vd"),
        ["dv@%\tdv@%\tcu@localhost\t1"]
    );
    assert_eq!(
        mariadb(&srv, "cu", "pw1", "SELECT * FROM idb.vi"),
        ["cu@%\tcu@localhost"]
    );
    assert_eq!(
        mariadb(&srv, "cu", "pw1", "SELECT * FROM idb.vo"),
        ["dv@%\tcu@%"]
    );
    // Outside the view the session's own account again.
    assert_eq!(
        mariadb(
            &srv,
            "cu",
            "pw1",
            "SELECT (SELECT c FROM idb.vd), CURRENT_USER()"
        ),
        ["dv@%\tcu@%"]
    );
}

/// The first answer to a native-password login of `user` with a wrong
/// response: 0xFF (an ERR: a native stand-in) or 0xFE (a switch to
/// caching_sha2_password: a caching_sha2 stand-in).
fn first_answer(port: u16, user: &str) -> u8 {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    read_packet(&mut s).unwrap();
    let p = handshake_response(user, &[0x5a; 20], None, 45);
    s.write_all(&packet(1, &p)).unwrap();
    let (r, _) = read_packet(&mut s).unwrap();
    assert!(matches!(r[0], 0xFE | 0xFF), "{r:?}");
    r[0]
}

#[test]
fn unknown_users_keep_their_plugin_across_restarts() {
    use std::os::unix::fs::PermissionsExt;
    let mut srv = Server::start("identity-decoy");
    let names: Vec<String> = (0..24).map(|i| format!("nobody{i}")).collect();
    let trace = |port: u16| -> Vec<u8> { names.iter().map(|n| first_answer(port, n)).collect() };
    let before = trace(srv.port);
    assert!(
        before.contains(&0xFE) && before.contains(&0xFF),
        "{before:?}"
    );
    let key = srv.datadir.join("auth-decoy-key");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    srv.restart();
    assert_eq!(
        trace(srv.port),
        before,
        "the same stand-ins after a restart"
    );
    // A damaged key file stops the server rather than change every stand-in.
    srv.kill9();
    let mut b = std::fs::read(&key).unwrap();
    b[10] ^= 1;
    std::fs::write(&key, &b).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg(format!("--datadir={}", srv.datadir.display()))
        .args(["--port=0", "--bind-address=127.0.0.1", "--socket="])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!status.status.success());
    let err = String::from_utf8_lossy(&status.stderr);
    assert!(err.contains("auth-decoy-key: checksum mismatch"), "{err}");
}
