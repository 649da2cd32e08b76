//! Sessions against the real `strata` binary: SHOW [FULL] PROCESSLIST and
//! information_schema.PROCESSLIST of other sessions, KILL QUERY stopping a
//! long scan and a row lock wait (1317), KILL CONNECTION closing a session
//! and releasing its locks, unknown ids (1094, 1957), a client that goes
//! away mid-statement, max_execution_time (3024) and max_statement_time
//! (1969), the Com_* / Questions / Threads_* status counters, and the slow
//! query log file.
#![allow(clippy::unwrap_used)]

mod common;

use common::{err_code, exec, expect_err, q, q1, q_i64, try_exec, Server};
use std::time::{Duration, Instant};

/// A query that runs for minutes: a cross join of 400 rows four times.
const LONG: &str = "SELECT COUNT(*) FROM big a, big b, big c, big d \
    WHERE a.v + b.v + c.v + d.v = -1 AND a.id >= 0 AND b.id >= 0 AND c.id >= 0";

fn setup(srv: &Server) -> mysql::Conn {
    let mut c = srv.fresh_db("p");
    exec(&mut c, "CREATE TABLE big (id INT PRIMARY KEY, v INT)");
    let vals: Vec<String> = (0..400).map(|i| format!("({i}, {i})")).collect();
    exec(
        &mut c,
        &format!("INSERT INTO big VALUES {}", vals.join(",")),
    );
    exec(&mut c, "CREATE TABLE r (id INT PRIMARY KEY, v INT)");
    exec(&mut c, "INSERT INTO r VALUES (1, 1), (2, 2)");
    c
}

/// Waits (up to 10 s) until the processlist shows a session whose Info
/// starts with `prefix`; returns its row.
fn wait_for_query(c: &mut mysql::Conn, prefix: &str) -> Vec<String> {
    let start = Instant::now();
    loop {
        for row in q(c, "SHOW FULL PROCESSLIST") {
            let f: Vec<String> = row.split('|').map(|s| s.to_string()).collect();
            if f[7].starts_with(prefix) {
                return f;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no session runs {prefix}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status(c: &mut mysql::Conn, sql: &str) -> i64 {
    q(c, sql)[0].split('|').nth(1).unwrap().parse().unwrap()
}

#[test]
fn processlist_and_kill_query() {
    let srv = Server::start("procs-kill");
    let mut c = setup(&srv);
    let id1 = q_i64(&mut c, "SELECT CONNECTION_ID()");
    let mut c2 = srv.conn();
    let id2 = q_i64(&mut c2, "SELECT CONNECTION_ID()");

    // Both sessions are listed, the idle one sleeping with no statement.
    let rows = q(&mut c2, "SHOW PROCESSLIST");
    assert!(
        rows.contains(&format!("{id1}|root|127.0.0.1|p|Sleep|0||NULL|0.000")),
        "{rows:?}"
    );
    assert!(
        rows.contains(&format!(
            "{id2}|root|127.0.0.1|NULL|Query|0|executing|SHOW PROCESSLIST|0.000"
        )),
        "{rows:?}"
    );
    assert_eq!(
        q(
            &mut c2,
            "SELECT ID, USER, DB, COMMAND, INFO, INFO_BINARY, QUERY_ID > 0, TID = ID \
             FROM information_schema.PROCESSLIST ORDER BY ID"
        ),
        vec![
            format!("{id1}|root|p|Sleep|NULL|NULL|1|1"),
            format!(
                "{id2}|root|NULL|Query|SELECT ID, USER, DB, COMMAND, INFO, INFO_BINARY, QUERY_ID > 0, TID = ID FROM information_schema.PROCESSLIST ORDER BY ID|SELECT ID, USER, DB, COMMAND, INFO, INFO_BINARY, QUERY_ID > 0, TID = ID FROM information_schema.PROCESSLIST ORDER BY ID|1|1"
            ),
        ]
    );

    // KILL QUERY stops a long scan within a second; the session goes on.
    let t = std::thread::spawn(move || {
        let r = try_exec(&mut c, LONG);
        let at = Instant::now();
        (c, r, at)
    });
    let row = wait_for_query(&mut c2, "SELECT COUNT(*) FROM big");
    assert_eq!(row[0], id1.to_string());
    assert_eq!(row[4], "Query");
    assert_eq!(row[7], LONG);
    // Not FULL: the statement text is cut at 100 characters.
    let short = q(&mut c2, "SHOW PROCESSLIST");
    assert!(
        short
            .iter()
            .any(|r| r.split('|').nth(7) == Some(&LONG[..100])),
        "{short:?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let examined = q_i64(
        &mut c2,
        &format!("SELECT EXAMINED_ROWS FROM information_schema.PROCESSLIST WHERE ID = {id1}"),
    );
    assert!(examined > 0, "EXAMINED_ROWS {examined}");
    let killed_at = Instant::now();
    exec(&mut c2, &format!("KILL QUERY {id1}"));
    let (mut c, r, at) = t.join().unwrap();
    let e = r.unwrap_err();
    assert_eq!(err_code(&e), Some((1317, "70100".into())), "{e}");
    assert!(
        at.duration_since(killed_at) < Duration::from_secs(1),
        "stopped after {:?}",
        at.duration_since(killed_at)
    );
    assert_eq!(q1(&mut c, "SELECT 1"), "1");

    // A KILL QUERY of an idle session does not fail its next statement.
    exec(&mut c2, &format!("KILL QUERY {id1}"));
    assert_eq!(q1(&mut c, "SELECT 2"), "2");

    // Unknown ids.
    expect_err(&mut c2, "KILL 999999", 1094, "HY000");
    expect_err(&mut c2, "KILL QUERY 999999", 1094, "HY000");
    expect_err(&mut c2, "KILL CONNECTION 999999", 1094, "HY000");
    expect_err(&mut c2, "KILL QUERY ID 999999", 1957, "HY000");
    expect_err(&mut c2, "KILL SOFT 1", 1235, "42000");
    exec(&mut c2, "KILL USER 'nobody'");

    // KILL QUERY stops a row lock wait; the waiter's transaction stays open.
    exec(&mut c, "BEGIN");
    exec(&mut c, "UPDATE r SET v = 10 WHERE id = 1");
    let mut c3 = srv.conn_db("p");
    let id3 = q_i64(&mut c3, "SELECT CONNECTION_ID()");
    exec(&mut c3, "BEGIN");
    exec(&mut c3, "UPDATE r SET v = 20 WHERE id = 2");
    let t = std::thread::spawn(move || {
        let r = try_exec(&mut c3, "UPDATE r SET v = 30 WHERE id = 1");
        (c3, r)
    });
    wait_for_query(&mut c2, "UPDATE r SET v = 30");
    std::thread::sleep(Duration::from_millis(100));
    exec(&mut c2, &format!("KILL QUERY {id3}"));
    let (mut c3, r) = t.join().unwrap();
    assert_eq!(err_code(&r.unwrap_err()), Some((1317, "70100".into())));
    // Only the statement was undone: its earlier row change is still there.
    assert_eq!(q(&mut c3, "SELECT v FROM r WHERE id = 2"), vec!["20"]);
    exec(&mut c3, "ROLLBACK");
    exec(&mut c, "ROLLBACK");

    // KILL CONNECTION: the session's transaction rolls back and its row
    // locks are released; its client sees the connection gone.
    exec(&mut c, "BEGIN");
    exec(&mut c, "UPDATE r SET v = 100 WHERE id = 1");
    exec(&mut c2, &format!("KILL CONNECTION {id1}"));
    let r = try_exec(&mut c, "SELECT 1");
    assert!(r.is_err(), "the killed connection still answers");
    exec(&mut c3, "SET innodb_lock_wait_timeout = 5");
    exec(&mut c3, "UPDATE r SET v = 7 WHERE id = 1");
    assert_eq!(q(&mut c3, "SELECT v FROM r ORDER BY id"), vec!["7", "2"]);
    let start = Instant::now();
    while q(&mut c2, "SHOW PROCESSLIST")
        .iter()
        .any(|r| r.starts_with(&format!("{id1}|")))
    {
        assert!(start.elapsed() < Duration::from_secs(5), "still listed");
        std::thread::sleep(Duration::from_millis(20));
    }

    // KILL (CONNECTION by default) of a session running a long scan.
    let mut c4 = srv.conn_db("p");
    let id4 = q_i64(&mut c4, "SELECT CONNECTION_ID()");
    let t = std::thread::spawn(move || try_exec(&mut c4, LONG));
    wait_for_query(&mut c2, "SELECT COUNT(*) FROM big");
    let killed_at = Instant::now();
    exec(&mut c2, &format!("KILL {id4}"));
    assert!(t.join().unwrap().is_err());
    assert!(killed_at.elapsed() < Duration::from_secs(2));
}

#[test]
fn client_gone_mid_statement_is_stopped() {
    let srv = Server::start("procs-gone");
    let mut c = setup(&srv);
    let mut raw = common::login(srv.port, Some("p")).expect("login");
    let mut pkt = vec![3u8];
    pkt.extend_from_slice(LONG.as_bytes());
    use std::io::Write;
    raw.write_all(&common::packet(0, &pkt)).unwrap();
    wait_for_query(&mut c, "SELECT COUNT(*) FROM big");
    drop(raw);
    let start = Instant::now();
    loop {
        let rows = q(&mut c, "SHOW PROCESSLIST");
        if rows.len() == 1 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the statement of a client gone still runs: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Aborted_clients'") >= 1);
}

#[test]
fn statement_time_limits() {
    let srv = Server::start("procs-timeout");
    let mut c = setup(&srv);
    exec(&mut c, "SET max_execution_time = 200");
    let start = Instant::now();
    expect_err(&mut c, LONG, 3024, "HY000");
    assert!(start.elapsed() < Duration::from_secs(2));
    exec(&mut c, "SET max_execution_time = 0");
    exec(&mut c, "SET max_statement_time = 0.2");
    assert_eq!(q1(&mut c, "SELECT @@max_statement_time"), "0.200000");
    let start = Instant::now();
    expect_err(&mut c, LONG, 1969, "70100");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(
        status(
            &mut c,
            "SHOW GLOBAL STATUS LIKE 'Max_statement_time_exceeded'"
        ),
        1
    );
    exec(&mut c, "SET max_statement_time = 0");
    expect_err(&mut c, "SET max_statement_time = 'x'", 1232, "42000");
}

#[test]
fn status_counters() {
    let srv = Server::start("procs-status");
    let mut c = setup(&srv);
    let com = |c: &mut mysql::Conn, name: &str| {
        status(c, &format!("SHOW SESSION STATUS LIKE 'Com_{name}'"))
    };
    let before: Vec<i64> = ["select", "insert", "update", "delete", "begin", "commit"]
        .iter()
        .map(|n| com(&mut c, n))
        .collect();
    let questions = status(&mut c, "SHOW STATUS LIKE 'Questions'");
    exec(&mut c, "SELECT 1");
    exec(&mut c, "INSERT INTO r VALUES (3, 3)");
    exec(&mut c, "BEGIN");
    exec(&mut c, "UPDATE r SET v = 4 WHERE id = 3");
    exec(&mut c, "DELETE FROM r WHERE id = 3");
    exec(&mut c, "COMMIT");
    let after: Vec<i64> = ["select", "insert", "update", "delete", "begin", "commit"]
        .iter()
        .map(|n| com(&mut c, n))
        .collect();
    let diff: Vec<i64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(diff, vec![1, 1, 1, 1, 1, 1]);
    // 6 statements, plus the six SHOW STATUS of `before` and the one of `after`'s first.
    assert_eq!(
        status(&mut c, "SHOW STATUS LIKE 'Questions'") - questions,
        6 + 6 + 1
    );
    // Prepared statements count in Com_stmt_* and in the statement's counter.
    let sel = com(&mut c, "select");
    let mut p = srv.conn_db("p");
    let psel = com(&mut p, "select");
    use mysql::prelude::Queryable;
    let st = p.prep("SELECT v FROM r WHERE id = ?").unwrap();
    let _: Vec<mysql::Row> = p.exec(&st, (1,)).unwrap();
    let _: Vec<mysql::Row> = p.exec(&st, (2,)).unwrap();
    // Two executions and this SELECT.
    assert_eq!(
        q(
            &mut p,
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.SESSION_STATUS \
             WHERE VARIABLE_NAME IN ('COM_STMT_PREPARE', 'COM_STMT_EXECUTE', 'COM_SELECT') \
             ORDER BY 1"
        ),
        vec![
            format!("COM_SELECT|{}", psel + 3),
            "COM_STMT_EXECUTE|2".into(),
            "COM_STMT_PREPARE|1".into()
        ]
    );
    assert_eq!(com(&mut c, "select"), sel);
    assert!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Com_select'") >= sel + 3);
    assert_eq!(
        status(&mut c, "SHOW GLOBAL STATUS LIKE 'Threads_connected'"),
        2
    );
    assert_eq!(
        status(&mut c, "SHOW GLOBAL STATUS LIKE 'Threads_running'"),
        1
    );
    assert!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Max_used_connections'") >= 2);
    assert!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Threads_created'") >= 2);
    assert!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Connections'") >= 2);
    let _ = status(&mut c, "SHOW GLOBAL STATUS LIKE 'Uptime'");
    assert_eq!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Slow_queries'"), 0);
    exec(&mut c, "SET @a = 1");
    assert_eq!(com(&mut c, "set_option"), 1);
    expect_err(
        &mut c,
        "SHOW STATUS WHERE Variable_name = 'x'",
        1235,
        "42000",
    );
}

/// Robust on a loaded machine: the statements that must not be logged run
/// under a 10 s long_query_time (or with the log off), the slow one sleeps
/// 2 s against 1 s, and the log holds exactly the expected statements.
#[test]
fn slow_query_log() {
    let srv = Server::start_with(
        "procs-slow",
        &["--slow-query-log=1", "--long-query-time=10"],
    );
    let mut c = setup(&srv);
    assert_eq!(q1(&mut c, "SELECT @@slow_query_log"), "1");
    assert_eq!(q1(&mut c, "SELECT @@long_query_time"), "10.000000");
    assert_eq!(
        q1(&mut c, "SELECT @@slow_query_log_file"),
        "strata-slow.log"
    );
    exec(&mut c, "SELECT 'fast one'");
    // Timed against its new value, 1 s: far below it.
    exec(&mut c, "SET long_query_time = 1");
    exec(&mut c, "SELECT SLEEP(2), 'slow one'");
    exec(&mut c, "SET long_query_time = 10");
    exec(&mut c, "SET GLOBAL slow_query_log = OFF");
    // Slower than the threshold, but the log is off.
    exec(&mut c, "SET long_query_time = 0");
    exec(&mut c, "SELECT SLEEP(0.1), 'not logged'");
    exec(&mut c, "SET long_query_time = 10");
    exec(&mut c, "SET GLOBAL log_slow_query = ON");
    exec(&mut c, "SET long_query_time = 0");
    exec(&mut c, "SELECT 'all logged now'");
    let log = std::fs::read_to_string(srv.datadir.join("strata-slow.log")).unwrap();
    let statements: Vec<&str> = log
        .lines()
        .filter(|l| l.ends_with(';') && !l.starts_with("use ") && !l.starts_with("SET timestamp="))
        .collect();
    // The slow one, SET long_query_time = 0 (timed against its new value) and the last.
    assert_eq!(
        statements,
        [
            "SELECT SLEEP(2), 'slow one';",
            "SET long_query_time = 0;",
            "SELECT 'all logged now';"
        ],
        "{log}"
    );
    assert!(
        log.contains("# User@Host: root[root] @ 127.0.0.1 []"),
        "{log}"
    );
    assert!(log.contains("Rows_sent: 1  Rows_examined: "), "{log}");
    assert!(log.contains("\nuse p;\n"), "{log}");
    assert!(log.contains("\nSET timestamp="), "{log}");
    assert!(log.contains("# Time: 20"), "{log}");
    assert_eq!(status(&mut c, "SHOW GLOBAL STATUS LIKE 'Slow_queries'"), 3);
    expect_err(&mut c, "SET SESSION slow_query_log = 1", 1229, "HY000");
    expect_err(&mut c, "SET GLOBAL log_output = 'TABLE'", 1235, "42000");
}
