//! One client cannot take the server down or lock others out (issue 14): a panic in a
//! statement ends only its connection (error packet, transaction rolled back, locks and
//! connection slot freed, counted in Strata_panics); a packet over max_allowed_packet closes
//! the connection instead of running the rest of it as commands; an unauthenticated client
//! cannot make the server read more than a handshake needs.
//!
//! Panics are injected in debug builds by `STRATA_TEST_PANIC_ON=<text>`: a query containing
//! the text panics in the server before it runs.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    err_code, exec, expect_err, login, packet, q_i64, read_packet, threads_connected, Server,
};
use mysql::prelude::Queryable;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const MARK: &str = "strata-test-panic-here";

fn panic_server(name: &str, extra: &[&str]) -> Server {
    // Inherited by the server process; every test of this file uses the same value.
    std::env::set_var("STRATA_TEST_PANIC_ON", MARK);
    Server::start_with(name, extra)
}

fn status(c: &mut mysql::Conn, name: &str) -> i64 {
    let rows: Vec<(String, String)> = c
        .query(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    rows[0].1.parse().unwrap()
}

/// Waits for Threads_connected to reach `n` (sessions end asynchronously).
fn wait_threads(c: &mut mysql::Conn, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = threads_connected(c);
        if now == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Threads_connected {now}, expected {n}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_panic_ends_only_its_connection_and_frees_its_locks_and_slot() {
    if !cfg!(debug_assertions) {
        return; // the injection hook exists in debug builds only
    }
    let srv = panic_server("robust-panic", &["--max-connections=4"]);
    let mut admin = srv.fresh_db("r");
    exec(&mut admin, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    exec(&mut admin, "INSERT INTO t VALUES (1, 10)");
    let base = threads_connected(&mut admin);

    // A session holding a row lock inside a transaction panics.
    let mut a = srv.conn_db("r");
    exec(&mut a, "BEGIN");
    exec(&mut a, "UPDATE t SET v = 11 WHERE id = 1");
    let e = a.query_drop(format!("SELECT '{MARK}'")).unwrap_err();
    let msg = e.to_string();
    assert_eq!(err_code(&e).map(|c| c.0), Some(1105), "{msg}");
    assert!(msg.contains("Internal error"), "{msg}");
    // Its connection is closed; its transaction rolled back; its lock freed.
    assert!(a.query_drop("SELECT 1").is_err());
    let mut b = srv.conn_db("r");
    exec(&mut b, "SET innodb_lock_wait_timeout = 2");
    exec(&mut b, "BEGIN");
    assert_eq!(q_i64(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE"), 10);
    exec(&mut b, "COMMIT");
    drop(b);
    drop(a);
    wait_threads(&mut admin, base);
    assert_eq!(status(&mut admin, "Strata_panics"), 1);

    // More panicking connections than max_connections: none leaks its slot.
    for _ in 0..10 {
        let mut c = srv.conn_db("r");
        assert!(c.query_drop(format!("SELECT '{MARK}'")).is_err());
    }
    wait_threads(&mut admin, base);
    assert_eq!(status(&mut admin, "Strata_panics"), 11);
    let mut again = srv.conn_db("r");
    assert_eq!(q_i64(&mut again, "SELECT v FROM t WHERE id = 1"), 10);
}

#[test]
fn set_of_a_non_ascii_variable_name_is_an_error_not_a_panic() {
    let srv = Server::start("robust-set");
    let mut c = srv.conn();
    let before = status(&mut c, "Strata_panics");
    expect_err(&mut c, "SET abcdeé = 1", 1193, "HY000");
    expect_err(&mut c, "SET @@global.é = 1", 1193, "HY000");
    expect_err(&mut c, "SELECT X'é1'", 1064, "42000");
    assert_eq!(q_i64(&mut c, "SELECT 1"), 1);
    assert_eq!(status(&mut c, "Strata_panics"), before);
}

#[test]
fn an_oversized_packet_closes_the_connection_without_running_its_contents() {
    let srv = Server::start_with("robust-big", &["--max-allowed-packet=1M"]);
    let mut c = srv.fresh_db("r");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY)");
    let mut s = login(srv.port, Some("r")).unwrap();
    // A 2 MB packet whose payload starts with a complete, valid COM_QUERY packet.
    let mut inner = vec![0x03];
    inner.extend_from_slice(b"INSERT INTO t VALUES (99)");
    let mut payload = packet(0, &inner);
    payload.resize(2 << 20, b'x');
    let mut big = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    big.push(0);
    s.write_all(&big).unwrap();
    let _ = s.write_all(&payload); // the server may close before reading it all
    let (err, _) = read_packet(&mut s).expect("an error packet");
    assert_eq!(err[0], 0xFF);
    assert_eq!(u16::from_le_bytes([err[1], err[2]]), 1153);
    // Then the server closes the socket (EOF, or a reset for the unread bytes).
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(
        rest.is_empty(),
        "more replies after 1153: {} bytes",
        rest.len()
    );
    assert_eq!(
        q_i64(&mut c, "SELECT COUNT(*) FROM t"),
        0,
        "the embedded INSERT ran"
    );
}

#[test]
fn before_login_a_client_cannot_send_a_large_packet() {
    let srv = Server::start("robust-preauth");
    let mut s = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    read_packet(&mut s).expect("greeting");
    // A handshake response announced at 8 MB (max_allowed_packet is 64 MB).
    s.write_all(&[0, 0, 0x80, 1]).unwrap();
    s.write_all(&vec![b'a'; 100_000]).unwrap_or(());
    let (err, _) = read_packet(&mut s).expect("an error packet");
    assert_eq!(err[0], 0xFF);
    assert_eq!(u16::from_le_bytes([err[1], err[2]]), 1153);
    let mut c = srv.conn();
    assert_eq!(q_i64(&mut c, "SELECT 1"), 1);
}

#[test]
fn silent_sockets_cannot_lock_anyone_out_and_are_dropped_after_connect_timeout() {
    let srv = Server::start_with(
        "robust-silent",
        &["--max-connections=3", "--connect-timeout=1"],
    );
    let mut silent = Vec::new();
    for _ in 0..40 {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        read_packet(&mut s).expect("greeting");
        silent.push(s); // never answers the greeting
    }
    // Not counted against max_connections: sessions still get in.
    let mut c = srv.conn();
    assert_eq!(q_i64(&mut c, "SELECT 1"), 1);
    assert_eq!(threads_connected(&mut c), 1);
    // Each silent socket is closed by the server after connect_timeout.
    let start = Instant::now();
    for s in &mut silent {
        let mut b = [0u8; 16];
        assert!(matches!(s.read(&mut b), Ok(0) | Err(_)));
    }
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn max_connections_counts_sessions_and_keeps_one_for_root() {
    let srv = Server::start_with("robust-maxconn", &["--max-connections=2"]);
    // root: max_connections + 1 sessions.
    let conns: Vec<mysql::Conn> = (0..3).map(|_| srv.conn()).collect();
    let e = mysql::Conn::new(srv.opts()).map(|_| ()).unwrap_err();
    assert_eq!(err_code(&e).map(|c| c.0), Some(1040), "{e}");
    drop(conns);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        match mysql::Conn::new(srv.opts()) {
            Ok(c) => break c,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("{e}"),
        }
    };
    wait_threads(&mut c, 1);
}

#[test]
fn an_idle_session_is_closed_after_wait_timeout() {
    let srv = Server::start("robust-wait");
    let mut c = srv.conn();
    exec(&mut c, "SET SESSION wait_timeout = 1");
    assert_eq!(q_i64(&mut c, "SELECT @@session.wait_timeout"), 1);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        c.query_drop("SELECT 1").is_err(),
        "still open after wait_timeout"
    );
    let mut d = srv.conn();
    wait_threads(&mut d, 1);
    assert!(q_i64(&mut d, "SELECT @@global.wait_timeout") >= 28800);
}

#[test]
fn impossible_temporal_parameters_are_refused_as_their_text_would_be() {
    let srv = Server::start("robust-temporal");
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(&mut c, "USE d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, d DATE, dt DATETIME, tm TIME)",
    );
    let ins = "INSERT INTO t (id, d, dt, tm) VALUES (?, ?, ?, ?)";
    let ok = (
        1,
        mysql::Value::Date(2024, 2, 29, 0, 0, 0, 0),
        mysql::Value::Date(2024, 12, 31, 23, 59, 59, 5),
        mysql::Value::Time(true, 34, 22, 59, 59, 0),
    );
    c.exec_drop(ins, ok).unwrap();
    assert_eq!(
        common::q(&mut c, "SELECT d, dt, tm FROM t"),
        vec!["2024-02-29|2024-12-31 23:59:59.000005|-838:59:59"]
    );
    for (i, bad) in [
        (
            mysql::Value::Date(2024, 13, 1, 0, 0, 0, 0),
            mysql::Value::NULL,
            mysql::Value::NULL,
        ),
        (
            mysql::Value::Date(2023, 2, 29, 0, 0, 0, 0),
            mysql::Value::NULL,
            mysql::Value::NULL,
        ),
        (
            mysql::Value::NULL,
            mysql::Value::Date(2024, 1, 1, 24, 0, 0, 0),
            mysql::Value::NULL,
        ),
        (
            mysql::Value::NULL,
            mysql::Value::Date(2024, 1, 1, 1, 60, 0, 0),
            mysql::Value::NULL,
        ),
        (
            mysql::Value::NULL,
            mysql::Value::NULL,
            mysql::Value::Time(false, 35, 0, 0, 0, 0),
        ),
        (
            mysql::Value::NULL,
            mysql::Value::NULL,
            mysql::Value::Time(false, 4_000_000, 0, 0, 0, 0),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let r = c.exec_drop(ins, (10 + i as i64, bad.0, bad.1, bad.2));
        let e = r.expect_err("an impossible value was stored");
        assert_eq!(err_code(&e).map(|x| x.0), Some(1292), "case {i}: {e}");
    }
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM t"), 1);
}

/// Reads packets up to and including the next EOF (0xFE, short).
fn skip_to_eof(s: &mut std::net::TcpStream) {
    loop {
        let (p, _) = read_packet(s).unwrap();
        if p[0] == 0xFE && p.len() < 9 {
            return;
        }
    }
}

#[test]
fn malformed_execute_and_change_user_get_an_error_and_the_connection_goes_on() {
    let srv = Server::start("robust-malformed");
    let mut s = login(srv.port, None).unwrap();
    let mut p = vec![0x16];
    p.extend_from_slice(b"SELECT ?");
    s.write_all(&packet(0, &p)).unwrap();
    let (ok, _) = read_packet(&mut s).unwrap();
    assert_eq!(ok[0], 0, "prepare failed: {ok:?}");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    skip_to_eof(&mut s); // parameter definitions
    skip_to_eof(&mut s); // column definitions
                         // COM_STMT_EXECUTE cut before its NULL bitmap and parameter types.
    let mut e = vec![0x17];
    e.extend_from_slice(&id.to_le_bytes());
    e.push(0);
    e.extend_from_slice(&1u32.to_le_bytes());
    s.write_all(&packet(0, &e)).unwrap();
    let (r, _) = read_packet(&mut s).unwrap();
    assert_eq!(r[0], 0xFF);
    assert_eq!(u16::from_le_bytes([r[1], r[2]]), 1210);
    assert_eq!(
        common::raw_query(&mut s, b"SELECT 7"),
        vec![Some(b"7".to_vec())]
    );
    // COM_CHANGE_USER with nothing after the command byte.
    s.write_all(&packet(0, &[0x11])).unwrap();
    let (r, _) = read_packet(&mut s).unwrap();
    assert_eq!(r[0], 0xFF, "{r:?}");
    assert_eq!(
        common::raw_query(&mut s, b"SELECT 8"),
        vec![Some(b"8".to_vec())]
    );
}

#[test]
fn change_user_starts_a_fresh_session_and_checks_the_password() {
    let srv = Server::start_with("robust-change-user", &["--root-password=sekret"]);
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(&mut c, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    exec(&mut c, "SET @x = 1");
    exec(&mut c, "BEGIN");
    exec(&mut c, "INSERT INTO d.t VALUES (1)");
    c.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("root".into()))
            .with_pass(Some("sekret".into()))
            .with_db_name(Some("d".into())),
    )
    .unwrap();
    assert_eq!(common::q1(&mut c, "SELECT DATABASE()"), "d");
    assert_eq!(common::q1(&mut c, "SELECT @x IS NULL"), "1");
    // The open transaction was rolled back with the old session.
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM t"), 0);
    let bad = c.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("root".into()))
            .with_pass(Some("wrong".into())),
    );
    let e = bad.expect_err("a wrong password was accepted");
    assert_eq!(err_code(&e).map(|x| x.0), Some(1045), "{e}");
    let mut c2 = srv.conn();
    assert_eq!(q_i64(&mut c2, "SELECT 1"), 1);
}

#[test]
fn multi_statement_queries_return_one_result_each() {
    let srv = Server::start("robust-multi");
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(&mut c, "USE d");
    let mut sets = Vec::new();
    {
        let mut r = c
            .query_iter("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2); SELECT id FROM t ORDER BY id; SELECT 'a;b'")
            .unwrap();
        while let Some(set) = r.iter() {
            let rows: Vec<String> = set
                .map(|row| {
                    let row = row.unwrap();
                    common::join_row(&common::row_strings(&row))
                })
                .collect();
            sets.push(rows);
        }
    }
    assert_eq!(sets.len(), 4, "{sets:?}");
    assert_eq!(sets[2], vec!["1", "2"]);
    assert_eq!(sets[3], vec!["a;b"]);
    // The first error ends the query: the statement after it does not run.
    let mut failed = None;
    {
        let mut r = c
            .query_iter(
                "INSERT INTO t VALUES (3); INSERT INTO nope VALUES (1); INSERT INTO t VALUES (4)",
            )
            .unwrap();
        while let Some(set) = r.iter() {
            for row in set {
                if let Err(e) = row {
                    failed = err_code(&e);
                }
            }
        }
    }
    assert_eq!(failed.map(|x| x.0), Some(1146));
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM t"), 3);
}

#[test]
fn long_data_past_max_allowed_packet_fails_the_execution_instead_of_being_cut() {
    let srv = Server::start_with("robust-long-data", &["--max-allowed-packet=1M"]);
    let mut s = login(srv.port, None).unwrap();
    let mut p = vec![0x16];
    p.extend_from_slice(b"SELECT LENGTH(?)");
    s.write_all(&packet(0, &p)).unwrap();
    let (ok, _) = read_packet(&mut s).unwrap();
    assert_eq!(ok[0], 0, "prepare failed: {ok:?}");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    skip_to_eof(&mut s);
    skip_to_eof(&mut s);
    let long_data = |s: &mut std::net::TcpStream, n: usize| {
        let mut d = vec![0x18];
        d.extend_from_slice(&id.to_le_bytes());
        d.extend_from_slice(&0u16.to_le_bytes());
        d.extend(std::iter::repeat_n(b'z', n));
        s.write_all(&packet(0, &d)).unwrap();
    };
    let execute = |s: &mut std::net::TcpStream| -> Vec<u8> {
        let mut e = vec![0x17];
        e.extend_from_slice(&id.to_le_bytes());
        e.push(0);
        e.extend_from_slice(&1u32.to_le_bytes());
        e.push(0); // NULL bitmap
        e.push(1); // types follow
        e.extend_from_slice(&[0xFC, 0]); // BLOB, its value sent as long data
        s.write_all(&packet(0, &e)).unwrap();
        read_packet(s).unwrap().0
    };
    for _ in 0..3 {
        long_data(&mut s, 400 << 10);
    }
    let r = execute(&mut s);
    assert_eq!(r[0], 0xFF, "{r:?}");
    assert_eq!(u16::from_le_bytes([r[1], r[2]]), 1153);
    // The statement is usable again: long data within the limit arrives whole.
    long_data(&mut s, 100_000);
    long_data(&mut s, 100_000);
    let r = execute(&mut s);
    assert_eq!(r, vec![1], "one result column expected");
    skip_to_eof(&mut s); // column definition
    let (row, _) = read_packet(&mut s).unwrap();
    assert_eq!(row[0], 0);
    assert_eq!(i64::from_le_bytes(row[2..10].try_into().unwrap()), 200_000);
    skip_to_eof(&mut s);
    assert_eq!(
        common::raw_query(&mut s, b"SELECT 9"),
        vec![Some(b"9".to_vec())]
    );
}

/// Runs the binary once more with `args`; returns (exit success, its output).
fn run_second(args: &[String]) -> (bool, String) {
    let bin =
        std::env::var("STRATA_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_strata").to_string());
    let mut child = std::process::Command::new(bin)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            return (true, String::from_utf8_lossy(&out.stderr).into_owned());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_datadir_is_private_and_a_second_server_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let sock = testkit::unique_temp_path("robust-second.sock");
    let _ = std::fs::remove_file(&sock);
    let srv = Server::start_with("robust-second", &[&format!("--socket={}", sock.display())]);
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(&mut c, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&srv.datadir), 0o700);
    let mut files = 0;
    for e in std::fs::read_dir(&srv.datadir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            assert_eq!(mode(&p), 0o600, "{}", p.display());
            files += 1;
        }
    }
    assert!(files >= 3, "expected CURRENT, a manifest and a WAL");
    // The same datadir: refused by its LOCK, before any socket is touched.
    let other_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (ok, log) = run_second(&[
        format!("--datadir={}", srv.datadir.display()),
        format!("--port={other_port}"),
        "--bind-address=127.0.0.1".into(),
        format!("--socket={}", sock.display()),
    ]);
    assert!(!ok, "a second server opened the same datadir: {log}");
    assert!(
        log.contains("locked") || log.contains("another server"),
        "{log}"
    );
    // Another datadir but our socket: refused, the socket stays ours.
    let other = testkit::unique_temp_path("robust-second-other");
    let (ok, log) = run_second(&[
        format!("--datadir={}", other.display()),
        format!("--port={other_port}"),
        "--bind-address=127.0.0.1".into(),
        format!("--socket={}", sock.display()),
    ]);
    assert!(!ok, "a second server took the socket: {log}");
    assert!(log.contains("another server is listening"), "{log}");
    let mut u = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .socket(Some(sock.display().to_string()))
            .user(Some("root")),
    )
    .unwrap();
    assert_eq!(q_i64(&mut u, "SELECT COUNT(*) FROM d.t"), 0);
    drop(u);
    drop(srv);
    let _ = std::fs::remove_dir_all(&other);
    let _ = std::fs::remove_file(&sock);
}
