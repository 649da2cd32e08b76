//! KILL QUERY against long statements over a 100k-row table (the real
//! binary): a cross join COUNT, a hash join, GROUP BY and ORDER BY over a
//! cross join, COUNT(DISTINCT) and a window function, each killed from
//! another connection, must fail with 1317 within a second of the KILL and
//! leave the session usable; the same through the stock `mariadb` client.
#![allow(clippy::unwrap_used)]

mod common;

use common::{err_code, exec, q1, q_i64, spawn_mariadb, try_exec, Server};
use std::time::{Duration, Instant};

const ROWS: usize = 100_000;

/// Statements that run for minutes over `t` (100k rows).
const LONG: &[&str] = &[
    "SELECT COUNT(*) FROM t a, t b",
    "SELECT COUNT(*) FROM t a JOIN t b ON a.g = b.g",
    "SELECT a.g, SUM(b.v) FROM t a, t b GROUP BY a.g",
    "SELECT a.id, b.id FROM t a, t b ORDER BY a.v + b.v DESC LIMIT 1",
    "SELECT COUNT(DISTINCT a.v + b.v) FROM t a, t b",
    "SELECT MAX(x) FROM (SELECT SUM(a.v) OVER (ORDER BY a.v, b.v) AS x FROM t a, t b) d",
    // Correlated on `v` (about 100k distinct values): correlated on `g` (10 values) the
    // subquery's results are reused per value and the statement ends in ~0.3 s.
    "SELECT COUNT(*) FROM t a WHERE a.v > (SELECT COUNT(*) FROM t b WHERE b.v <> a.v)",
];

fn setup(srv: &Server) -> mysql::Conn {
    let mut c = srv.fresh_db("k");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT, s VARCHAR(20))",
    );
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(5000) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, {}, 'row{i}')", i % 10, (i * 7919) % 100_003))
            .collect();
        exec(&mut c, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), ROWS.to_string());
    c
}

/// Waits until session `id` has run its statement for a moment (it is
/// past planning and inside the scan).
fn wait_running(c2: &mut mysql::Conn, id: i64, sql: &str) {
    let start = Instant::now();
    loop {
        let n = q_i64(
            c2,
            &format!(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                 WHERE ID = {id} AND COMMAND = 'Query' AND TIME_MS > 300"
            ),
        );
        if n == 1 {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{sql} never seen running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_query_stops_long_statements_within_a_second() {
    let srv = Server::start("kill-long");
    let mut c = setup(&srv);
    let id = q_i64(&mut c, "SELECT CONNECTION_ID()");
    let mut c2 = srv.conn();
    for sql in LONG {
        let sql = sql.to_string();
        let s2 = sql.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            let r = try_exec(&mut c, &s2);
            (c, r, Instant::now(), start.elapsed())
        });
        wait_running(&mut c2, id, &sql);
        let killed_at = Instant::now();
        exec(&mut c2, &format!("KILL QUERY {id}"));
        let (c1, r, at, ran) = t.join().unwrap();
        c = c1;
        let e = match r {
            Err(e) => e,
            Ok(()) => panic!("{sql}: finished in {ran:?} instead of running long"),
        };
        assert_eq!(err_code(&e), Some((1317, "70100".into())), "{sql}: {e}");
        let took = at.duration_since(killed_at);
        assert!(
            took < Duration::from_secs(1),
            "{sql}: stopped {took:?} after KILL"
        );
        eprintln!("{sql}: stopped {took:?} after KILL");
        // The session goes on, its next statement unaffected.
        assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t WHERE g = 3"), "10000");
    }
}

/// The stock `mariadb` client: its statement is killed from the test's
/// connection and it prints error 1317 and exits at once. (It runs no
/// further statement of its `-e` list, even with --force: the same against
/// MariaDB 10.11, checked.)
#[test]
fn kill_query_with_the_mariadb_client() {
    let srv = Server::start("kill-client");
    let mut c = setup(&srv);
    let child = spawn_mariadb(
        srv.port,
        "k",
        &["-N", "-B"],
        "SELECT COUNT(*) FROM t a, t b",
    );
    // Find its session.
    let start = Instant::now();
    let id = loop {
        let ids = common::q(
            &mut c,
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE INFO = 'SELECT COUNT(*) FROM t a, t b' AND TIME_MS > 300",
        );
        if let Some(id) = ids.first() {
            break id.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(30), "client not seen");
        std::thread::sleep(Duration::from_millis(20));
    };
    let killed_at = Instant::now();
    exec(&mut c, &format!("KILL QUERY {id}"));
    let out = child.wait_with_output().unwrap();
    let took = killed_at.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ERROR 1317 (70100)") && stderr.contains("Query execution was interrupted"),
        "{stderr}"
    );
    assert_eq!(stdout.trim(), "", "{stderr}");
    assert!(
        took < Duration::from_secs(1),
        "client ended {took:?} after KILL"
    );
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t WHERE g = 1"), "10000");
}
