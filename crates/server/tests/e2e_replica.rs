//! Strata as a replica of a stock MariaDB 10.11 source (issue 13 part 3):
//! a MariaDB started by the test (log-bin, binlog_format=ROW, server_id=1,
//! TCP on a free port), Strata replicating with CHANGE MASTER TO / START
//! SLAVE; seeded DML and DDL on the source (INT, BIGINT UNSIGNED, VARCHAR,
//! DECIMAL, DATETIME(3), DATE, TIME, DOUBLE, BLOB, ENUM, NULLs; updates,
//! deletes, a table without a primary key); per-table content equal once
//! caught up; kill -9 of Strata while the source writes, restart, resumed
//! with no duplicate and no gap; an apply error stops the SQL side with
//! Last_SQL_Errno as MariaDB does; file/position replication from the
//! source's current position through rotations and a kill -9. Without /usr/sbin/mariadbd
//! the tests fail (skipped only with STRATA_SKIP_MARIADB=1). Rerun a seed with SEED=...
#![allow(clippy::unwrap_used)]

mod common;

use common::maria::{require, MariaDb, MARIADBD};
use common::{q, q1, Rng, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A MariaDB source (`common::maria`) with the binary log on, listening
/// on 127.0.0.1.
struct Source {
    m: MariaDb,
    port: u16,
}

impl Source {
    /// Starts one for `test` with the replication account `repl`@`127.0.0.1`
    /// (not logged) and database `r`, runs `setup` on it; its connection.
    /// None (skipped) only when mariadbd is not installed and
    /// STRATA_SKIP_MARIADB=1 (`common::maria::require`); else that fails.
    fn with_setup(test: &str, setup: &[&str]) -> Option<(Source, Conn)> {
        if !require(MARIADBD, test) {
            return None;
        }
        let source = Source::start().expect("start the MariaDB source");
        let mut src = source.conn();
        for s in [
            "SET sql_log_bin = 0",
            "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'replpw'",
            "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'",
            "SET sql_log_bin = 1",
            "CREATE DATABASE r",
        ]
        .iter()
        .chain(setup)
        {
            src.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        Some((source, src))
    }

    fn start() -> Option<Source> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Later lines win over maria.rs's skip-networking and skip-log-bin.
        let m = MariaDb::start_with(&format!(
            "skip-networking=0\nport={port}\nbind-address=127.0.0.1\nlog-bin=mysql-bin\n\
             binlog_format=ROW\nserver_id=1\nmax_binlog_size=65536"
        ))?;
        Some(Source { m, port })
    }

    fn conn(&self) -> Conn {
        self.m.conn().expect("connect to the MariaDB source")
    }
}

const TABLES: [&str; 2] = ["t1", "t2"];

/// Per-table content: every row as text, sorted, and a checksum of it.
fn contents(c: &mut Conn) -> BTreeMap<String, (usize, u64)> {
    let mut out = BTreeMap::new();
    for t in TABLES {
        let mut rows = q(c, &format!("SELECT * FROM r.{t}"));
        rows.sort();
        // FNV-1a over the sorted rows.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for r in &rows {
            for b in r.bytes().chain([b'\n']) {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        out.insert(t.to_string(), (rows.len(), h));
    }
    out
}

fn slave_status(c: &mut Conn) -> BTreeMap<String, String> {
    let rows: Vec<mysql::Row> = c.query("SHOW SLAVE STATUS").unwrap();
    let Some(r) = rows.first() else {
        return BTreeMap::new();
    };
    let vals = common::row_strings(r);
    r.columns_ref()
        .iter()
        .zip(vals)
        .map(|(col, v)| {
            (
                col.name_str().to_string(),
                v.unwrap_or_else(|| "NULL".into()),
            )
        })
        .collect()
}

/// Waits until the replica applied everything the source logged.
fn wait_caught_up(src: &mut Conn, rep: &mut Conn, srv: &Server) {
    let want = q1(src, "SELECT @@gtid_binlog_pos");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = q1(rep, "SELECT @@gtid_slave_pos");
        if got == want {
            return;
        }
        let st = slave_status(rep);
        assert!(
            Instant::now() < deadline
                && st.get("Slave_SQL_Running").map(String::as_str) != Some("No"),
            "not caught up: source {want}, replica {got}; status {st:?}\n{}",
            srv.log_tail(20)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn lit(rng: &mut Rng, id: i64) -> String {
    let null = |rng: &mut Rng, s: String| if rng.one_in(5) { "NULL".to_string() } else { s };
    let v = {
        let n = rng.below(30) as usize;
        let s: String = (0..n)
            .map(|_| (b'a' + rng.below(26) as u8) as char)
            .collect();
        format!("'{s}{}'", if rng.one_in(3) { "é€" } else { "" })
    };
    let i = rng.range(-2_000_000_000, 2_000_000_000).to_string();
    let u = rng.next_u64().to_string();
    let d = format!(
        "{}.{:03}",
        rng.range(-999_999_999, 999_999_999),
        rng.below(1000)
    );
    let dt = format!(
        "'{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}'",
        rng.range(1000, 9999),
        rng.range(1, 12),
        rng.range(1, 28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
        rng.below(1000)
    );
    let dd = format!(
        "'{:04}-{:02}-{:02}'",
        rng.range(1970, 2100),
        rng.range(1, 12),
        rng.range(1, 28)
    );
    let tm = format!(
        "'{}{:02}:{:02}:{:02}'",
        if rng.one_in(2) { "-" } else { "" },
        rng.below(800),
        rng.below(60),
        rng.below(60)
    );
    let nb = rng.below(40) as usize;
    let b = format!("x'{}'", common::hex(&rng.bytes(nb)));
    let e = ["'x'", "'y'", "'z'"][rng.below(3) as usize].to_string();
    let f = format!("{}", rng.range(-1000, 1000) as f64 / 4.0);
    let vals = [i, u, v, d, dt, dd, tm, b, e, f];
    let vals: Vec<String> = vals.into_iter().map(|x| null(rng, x)).collect();
    format!("({id}, {})", vals.join(", "))
}

/// `n` random transactions on the source.
fn workload(src: &mut Conn, rng: &mut Rng, next_id: &mut i64, n: usize) {
    for _ in 0..n {
        src.query_drop("BEGIN").unwrap();
        for _ in 0..1 + rng.below(4) {
            match rng.below(10) {
                0..=4 => {
                    let id = *next_id;
                    *next_id += 1;
                    let row = lit(rng, id);
                    src.query_drop(format!("INSERT INTO r.t1 VALUES {row}"))
                        .unwrap();
                }
                5 | 6 => {
                    let id = rng.range(1, *next_id);
                    let i = if rng.one_in(4) {
                        "NULL".to_string()
                    } else {
                        rng.range(-1000, 1000).to_string()
                    };
                    let d = format!("{}.{:03}", rng.range(-99_999, 99_999), rng.below(1000));
                    src.query_drop(format!(
                        "UPDATE r.t1 SET i = {i}, d = {d}, v = CONCAT(IFNULL(v, ''), 'u') WHERE id = {id}"
                    ))
                    .unwrap();
                }
                7 => {
                    let id = rng.range(1, *next_id);
                    src.query_drop(format!("DELETE FROM r.t1 WHERE id = {id}"))
                        .unwrap();
                }
                8 => {
                    let a = rng.below(20);
                    src.query_drop(format!(
                        "INSERT INTO r.t2 (a, b) VALUES ({a}, 'k{}'), (NULL, NULL)",
                        rng.below(5)
                    ))
                    .unwrap();
                }
                _ => {
                    let a = rng.below(20);
                    src.query_drop(format!("DELETE FROM r.t2 WHERE a = {a} LIMIT 1"))
                        .unwrap();
                    src.query_drop(format!(
                        "UPDATE r.t2 SET b = 'w' WHERE a = {} LIMIT 1",
                        rng.below(20)
                    ))
                    .unwrap();
                }
            }
        }
        src.query_drop("COMMIT").unwrap();
    }
}

#[test]
fn replicates_a_mariadb_source_and_resumes_after_kill9() {
    let test = "replicates_a_mariadb_source_and_resumes_after_kill9";
    let Some((source, mut src)) = Source::with_setup(
        test,
        &[
            "CREATE TABLE r.t1 (id INT PRIMARY KEY, i INT, u BIGINT UNSIGNED, v VARCHAR(40), \
             d DECIMAL(13,3), dt DATETIME(3), dd DATE, tm TIME, b BLOB, e ENUM('x','y','z'), \
             f DOUBLE)",
            "CREATE TABLE r.t2 (a INT, b VARCHAR(10))",
        ],
    ) else {
        return;
    };
    let mut rng = Rng::from_env(test);
    let mut next_id = 1;
    workload(&mut src, &mut rng, &mut next_id, 30);

    let mut srv = Server::start_with("replica", &["--server-id=2"]);
    let mut rep = srv.conn();
    assert!(slave_status(&mut rep).is_empty());
    rep.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', \
         MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos, MASTER_HEARTBEAT_PERIOD=1",
        source.port
    ))
    .unwrap();
    rep.query_drop("START SLAVE").unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    workload(&mut src, &mut rng, &mut next_id, 40);
    // DDL in the stream: a column added mid-way.
    src.query_drop("ALTER TABLE r.t2 ADD COLUMN c INT").unwrap();
    src.query_drop("INSERT INTO r.t2 VALUES (1, 'after', 7)")
        .unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    let c = contents(&mut src);
    eprintln!("source tables: {c:?}");
    assert!(c["t1"].0 > 20 && c["t2"].0 > 5, "{c:?}");
    assert_eq!(c, contents(&mut rep));
    let st = slave_status(&mut rep);
    assert_eq!(st["Slave_IO_Running"], "Yes", "{st:?}");
    assert_eq!(st["Slave_SQL_Running"], "Yes", "{st:?}");
    assert_eq!(st["Using_Gtid"], "Slave_Pos");
    assert_eq!(st["Last_Errno"], "0");
    assert_eq!(st["Master_Server_Id"], "1");
    // File and position follow the source's log (several files: 64 KiB each).
    let ms: Vec<(String, u64, String, String)> = src.query("SHOW MASTER STATUS").unwrap();
    assert_eq!(st["Relay_Master_Log_File"], ms[0].0, "{st:?}");
    assert_eq!(st["Exec_Master_Log_Pos"], ms[0].1.to_string(), "{st:?}");

    // kill -9 while the replica applies what the source just wrote, more
    // writes while it is down; the restarted replica resumes by itself.
    let mut rng2 = Rng::new(rng.next_u64());
    for round in 0..3 {
        workload(&mut src, &mut rng2, &mut next_id, 20);
        srv.kill9();
        workload(&mut src, &mut rng2, &mut next_id, 20);
        srv.restart();
        let mut rep = srv.conn();
        wait_caught_up(&mut src, &mut rep, &srv);
        assert_eq!(
            contents(&mut src),
            contents(&mut rep),
            "after kill -9 #{round}"
        );
    }

    // An apply error stops the SQL side (1062), as MariaDB's does.
    let mut rep = srv.conn();
    rep.query_drop("INSERT INTO r.t1 (id) VALUES (1000000)")
        .unwrap();
    src.query_drop("INSERT INTO r.t1 (id, v) VALUES (1000000, 'src')")
        .unwrap();
    let st = wait_status(&mut rep, "Slave_SQL_Running", "No");
    assert_eq!(st["Last_SQL_Errno"], "1062", "{st:?}");
    assert!(st["Last_SQL_Error"].contains("Duplicate entry"), "{st:?}");
    rep.query_drop("DELETE FROM r.t1 WHERE id = 1000000")
        .unwrap();
    rep.query_drop("START SLAVE").unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    assert_eq!(contents(&mut src), contents(&mut rep));
    assert_eq!(q1(&mut rep, "SELECT v FROM r.t1 WHERE id = 1000000"), "src");

    // STOP SLAVE, then changes made meanwhile arrive after START SLAVE.
    rep.query_drop("STOP SLAVE").unwrap();
    assert_eq!(slave_status(&mut rep)["Slave_IO_Running"], "No");
    workload(&mut src, &mut rng2, &mut next_id, 10);
    rep.query_drop("START SLAVE").unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    assert_eq!(contents(&mut src), contents(&mut rep));

    // File/position replication from where the source is now (as after
    // loading a dump), through rotations and a kill -9.
    rep.query_drop("STOP SLAVE").unwrap();
    let ms: Vec<(String, u64, String, String)> = src.query("SHOW MASTER STATUS").unwrap();
    rep.query_drop(format!(
        "CHANGE MASTER TO MASTER_LOG_FILE='{}', MASTER_LOG_POS={}",
        ms[0].0, ms[0].1
    ))
    .unwrap();
    assert_eq!(slave_status(&mut rep)["Using_Gtid"], "No");
    rep.query_drop("START SLAVE").unwrap();
    workload(&mut src, &mut rng2, &mut next_id, 30);
    srv.kill9();
    workload(&mut src, &mut rng2, &mut next_id, 30);
    srv.restart();
    let mut rep = srv.conn();
    wait_caught_up(&mut src, &mut rep, &srv);
    assert_eq!(contents(&mut src), contents(&mut rep), "file/position");
    // Caught up by GTID, the replica may still be reading the events of a
    // rotation that carries no transaction (the source's next file holds
    // only its header events): its position reaches the source's soon after.
    let ms: Vec<(String, u64, String, String)> = src.query("SHOW MASTER STATUS").unwrap();
    let want = (ms[0].0.clone(), ms[0].1.to_string());
    let deadline = Instant::now() + Duration::from_secs(30);
    let st = loop {
        let st = slave_status(&mut rep);
        let got = (
            st["Relay_Master_Log_File"].clone(),
            st["Exec_Master_Log_Pos"].clone(),
        );
        if got == want || Instant::now() > deadline {
            assert_eq!(got, want, "the replica's executed position");
            break st;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["Using_Gtid"], "No");
}

/// Waits until SHOW SLAVE STATUS's `field` is `value`; the status then.
fn wait_status(rep: &mut Conn, field: &str, value: &str) -> BTreeMap<String, String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let st = slave_status(rep);
        if st.get(field).map(String::as_str) == Some(value) {
            return st;
        }
        assert!(Instant::now() < deadline, "no stop: {st:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Review s31: SAVEPOINT / ROLLBACK TO inside a row-format transaction
/// (MariaDB logs them as QUERY events) apply to the replica's transaction;
/// BINARY(n) values keep their trailing 0x00; a replica with the source's
/// server id stops with 1593 instead of skipping everything.
#[test]
fn savepoints_binary_and_equal_server_ids() {
    let Some((source, mut src)) = Source::with_setup(
        "savepoints_binary_and_equal_server_ids",
        &[
            "CREATE TABLE r.s (id INT PRIMARY KEY) ENGINE=InnoDB",
            "CREATE TABLE r.b (id INT PRIMARY KEY, v BINARY(4))",
            "BEGIN",
            "INSERT INTO r.s VALUES (1)",
            "SAVEPOINT a",
            "INSERT INTO r.s VALUES (2)",
            "ROLLBACK TO a",
            "INSERT INTO r.s VALUES (3)",
            "COMMIT",
            "INSERT INTO r.b VALUES (1, X'6100'), (2, X'00'), (3, X'01020304')",
        ],
    ) else {
        return;
    };
    let change = format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', \
         MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos",
        source.port
    );
    let srv = Server::start_with("replica-sp", &["--server-id=2"]);
    let mut rep = srv.conn();
    rep.query_drop(&change).unwrap();
    rep.query_drop("START SLAVE").unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    assert_eq!(q(&mut rep, "SELECT id FROM r.s ORDER BY id"), ["1", "3"]);
    let hex = "SELECT id, HEX(v), LENGTH(v) FROM r.b ORDER BY id";
    assert_eq!(q(&mut rep, hex), q(&mut src, hex));
    assert_eq!(q(&mut rep, hex)[0], "1|61000000|4");
    // Statement-format DML (a MIXED or STATEMENT source) stops replication
    // (1235) with the advice to use ROW.
    src.query_drop("SET SESSION binlog_format = 'STATEMENT'")
        .unwrap();
    for s in ["BEGIN", "INSERT INTO r.s VALUES (10)", "COMMIT"] {
        src.query_drop(s).unwrap();
    }
    let st = wait_status(&mut rep, "Slave_SQL_Running", "No");
    assert_eq!(st["Last_SQL_Errno"], "1235", "{st:?}");
    assert!(
        st["Last_SQL_Error"].contains("statement-format INSERT")
            && st["Last_SQL_Error"].contains("binlog_format=ROW"),
        "{st:?}"
    );
    assert_eq!(q(&mut rep, "SELECT id FROM r.s ORDER BY id"), ["1", "3"]);
    drop(srv);

    let srv = Server::start_with("replica-eq", &["--server-id=1"]);
    let mut rep = srv.conn();
    rep.query_drop(&change).unwrap();
    rep.query_drop("START SLAVE").unwrap();
    let st = wait_status(&mut rep, "Slave_IO_Running", "No");
    assert_eq!(st["Last_IO_Errno"], "1593", "{st:?}");
    assert!(
        st["Last_IO_Error"].contains("equal MariaDB server ids"),
        "{st:?}"
    );
}

/// Review s32 H1: ROW-format CREATE [OR REPLACE] TABLE ... SELECT (one
/// group: the generated CREATE, then the selected rows) replicates; so
/// do CREATE OR REPLACE TABLE and a CTAS that selects nothing.
#[test]
fn create_table_select_in_row_format() {
    let Some((source, mut src)) = Source::with_setup(
        "create_table_select_in_row_format",
        &[
            "CREATE TABLE r.s (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO r.s VALUES (1, 'a'), (2, 'b'), (3, NULL)",
            "CREATE TABLE r.c SELECT * FROM r.s",
            "CREATE TABLE r.e (k INT PRIMARY KEY) SELECT id AS k FROM r.s WHERE id > 9",
            "CREATE OR REPLACE TABLE r.c SELECT id * 10 AS id FROM r.s",
            "CREATE OR REPLACE TABLE r.o (x INT)",
            "INSERT INTO r.o VALUES (5)",
        ],
    ) else {
        return;
    };
    let srv = Server::start_with("replica-ctas", &["--server-id=2"]);
    let mut rep = srv.conn();
    rep.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl', \
         MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos",
        source.port
    ))
    .unwrap();
    rep.query_drop("START SLAVE").unwrap();
    wait_caught_up(&mut src, &mut rep, &srv);
    for sql in [
        "SELECT * FROM r.c ORDER BY id",
        "SELECT COUNT(*) FROM r.e",
        "SELECT * FROM r.o",
    ] {
        assert_eq!(q(&mut rep, sql), q(&mut src, sql), "{sql}");
    }
    assert_eq!(
        q(&mut rep, "SELECT * FROM r.c ORDER BY id"),
        ["10", "20", "30"]
    );
}
