//! The binary log end to end: a server with `--log-bin` runs DDL and DML on
//! a table of many column types (seeded random rows, NULLs, multi-statement
//! transactions, rollbacks, a failed statement, a rotation), then MariaDB's
//! own `mariadb-binlog --verbose --base64-output=decode-rows` must decode the
//! files without an error and its `### INSERT/UPDATE/DELETE` row images must
//! be exactly the committed changes, in commit order. The crash test kills
//! the server (SIGKILL) during concurrent commits: after the restart every
//! acknowledged commit is in the binary log, the log holds exactly the rows
//! the tables hold (a commit is in the log iff it is in the engine), no
//! transaction is there in part, and the files are re-derived byte for byte
//! by another restart. Skipped (with a note) when `mariadb-binlog` is not
//! installed. `SEED=n` replays.
#![allow(clippy::unwrap_used)]

mod common;

use common::{err_code, exec, q, q1, Rng, Server};
use mysql::prelude::Queryable;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// One decoded row event: the statement kind, the table and its images
/// (one for INSERT/DELETE, before and after for UPDATE), each a list of
/// column values as mariadb-binlog prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RowEv {
    kind: &'static str,
    table: String,
    images: Vec<Vec<String>>,
}

fn have_mariadb_binlog() -> bool {
    Command::new("mariadb-binlog")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs mariadb-binlog on `files`; panics on a failure or an error line.
fn decode(files: &[std::path::PathBuf]) -> String {
    let out = Command::new("mariadb-binlog")
        .args(["--verbose", "--base64-output=decode-rows"])
        .args(files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mariadb-binlog failed: {stderr}");
    assert!(!stderr.contains("ERROR"), "mariadb-binlog: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("ERROR:"), "{text}");
    text
}

/// The `###` row images of mariadb-binlog's verbose output, grouped per
/// transaction (START TRANSACTION .. COMMIT).
fn parse(text: &str) -> Vec<Vec<RowEv>> {
    let mut trx: Vec<Vec<RowEv>> = Vec::new();
    let mut cur: Option<Vec<RowEv>> = None;
    for line in text.lines() {
        if line.starts_with("START TRANSACTION") {
            cur = Some(Vec::new());
            continue;
        }
        if line.starts_with("COMMIT") {
            trx.push(cur.take().expect("COMMIT without START TRANSACTION"));
            continue;
        }
        let Some(l) = line.strip_prefix("### ") else {
            continue;
        };
        let evs = cur.as_mut().expect("row event outside a transaction");
        let head = |k: &'static str, p: &str| {
            l.strip_prefix(p).map(|t| RowEv {
                kind: k,
                table: t.trim().to_string(),
                images: Vec::new(),
            })
        };
        if let Some(e) = head("INSERT", "INSERT INTO ")
            .or_else(|| head("UPDATE", "UPDATE "))
            .or_else(|| head("DELETE", "DELETE FROM "))
        {
            evs.push(e);
        } else if l == "SET" || l == "WHERE" {
            evs.last_mut().unwrap().images.push(Vec::new());
        } else if let Some(v) = l.trim_start().strip_prefix('@') {
            let (_, val) = v.split_once('=').unwrap();
            // Integers print their unsigned reading too: `-5 (18446744073709551611)`.
            let val = match val.find(" (") {
                Some(i) if !val.starts_with('\'') => &val[..i],
                _ => val,
            };
            let e = evs.last_mut().unwrap();
            e.images.last_mut().unwrap().push(val.to_string());
        }
    }
    assert!(cur.is_none(), "unterminated transaction");
    trx
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A random row of table `t` and its values as SQL literals and as
/// mariadb-binlog prints them.
fn random_row(rng: &mut Rng, id: i64) -> (Vec<String>, Vec<String>) {
    let null = |rng: &mut Rng| rng.below(5) == 0;
    let mut sql = vec![id.to_string()];
    let mut want = vec![id.to_string()];
    let mut push = |s: String, w: String| {
        sql.push(s);
        want.push(w);
    };
    // b BIGINT
    if null(rng) {
        push("NULL".into(), "NULL".into());
    } else {
        let v = rng.below(2_000_000_000_000) as i64 - 1_000_000_000_000;
        push(v.to_string(), v.to_string());
    }
    // v VARCHAR(20), c CHAR(5)
    for max in [20, 5] {
        if null(rng) {
            push("NULL".into(), "NULL".into());
        } else {
            let n = rng.below(max as u64 + 1) as usize;
            let s: String = (0..n)
                .map(|_| (b'a' + rng.below(26) as u8) as char)
                .collect();
            push(format!("'{s}'"), format!("'{s}'"));
        }
    }
    // d DECIMAL(10,2)
    if null(rng) {
        push("NULL".into(), "NULL".into());
    } else {
        let cents = rng.below(2_000_000_000) as i64 - 1_000_000_000;
        let s = format!(
            "{}{}.{:02}",
            if cents < 0 { "-" } else { "" },
            cents.abs() / 100,
            cents.abs() % 100
        );
        push(s.clone(), s);
    }
    // dt DATETIME, ts TIMESTAMP
    for ts in [false, true] {
        if null(rng) {
            push("NULL".into(), "NULL".into());
            continue;
        }
        let (y, mo, d) = (
            1990 + rng.below(40) as i64,
            1 + rng.below(12) as i64,
            1 + rng.below(28) as i64,
        );
        let (h, mi, s) = (
            rng.below(24) as i64,
            rng.below(60) as i64,
            rng.below(60) as i64,
        );
        let lit = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
        let w = if ts {
            (days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s).to_string()
        } else {
            format!("'{lit}'")
        };
        push(format!("'{lit}'"), w);
    }
    // f DOUBLE (quarters print exactly)
    if null(rng) {
        push("NULL".into(), "NULL".into());
    } else {
        let q = rng.below(4000) as i64 - 2000;
        let v = q as f64 / 4.0;
        push(format!("{v}"), format!("{v}"));
    }
    // bl BLOB
    if null(rng) {
        push("NULL".into(), "NULL".into());
    } else {
        let n = rng.below(300) as usize;
        let s: String = (0..n)
            .map(|_| (b'A' + rng.below(26) as u8) as char)
            .collect();
        push(format!("'{s}'"), format!("'{s}'"));
    }
    // n INT
    if null(rng) {
        push("NULL".into(), "NULL".into());
    } else {
        let v = rng.below(1 << 32) as i64 - (1 << 31);
        push(v.to_string(), v.to_string());
    }
    (sql, want)
}

fn tuple(sql: &[String]) -> String {
    format!("({})", sql.join(", "))
}

const COLS: &str = "id INT PRIMARY KEY, b BIGINT, v VARCHAR(20), c CHAR(5), d DECIMAL(10,2),
    dt DATETIME, ts TIMESTAMP NULL, f DOUBLE, bl BLOB, n INT";

fn binlog_files(srv: &Server) -> Vec<std::path::PathBuf> {
    let mut c = srv.conn();
    q(&mut c, "SHOW BINARY LOGS")
        .iter()
        .map(|r| srv.datadir.join(r.split('|').next().unwrap()))
        .collect()
}

#[test]
fn mariadb_binlog_decodes_the_committed_rows() {
    if !have_mariadb_binlog() {
        eprintln!("mariadb-binlog not installed: skipped");
        return;
    }
    let seed = testkit::seed("e2e_binlog");
    let mut rng = Rng::new(seed);
    let srv = Server::start_with("binlog", &["--log-bin", "--server-id=7"]);
    let mut c = srv.fresh_db("bl");
    assert_eq!(q1(&mut c, "SELECT @@log_bin"), "1");
    assert_eq!(q1(&mut c, "SELECT @@binlog_format"), "ROW");
    for bad in [
        "SET binlog_format = STATEMENT",
        "SET GLOBAL binlog_format = 'MIXED'",
        "SET binlog_row_image = MINIMAL",
    ] {
        assert_eq!(
            err_code(&c.query_drop(bad).unwrap_err()).unwrap().0,
            1235,
            "{bad}"
        );
    }
    exec(&mut c, "SET binlog_format = ROW");
    exec(&mut c, "SET GLOBAL sync_binlog = 1");
    exec(&mut c, &format!("CREATE TABLE t ({COLS})"));
    // The expected transactions: row events in commit order.
    let mut want: Vec<Vec<RowEv>> = Vec::new();
    let mut rows: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    let ev = |kind, images| RowEv {
        kind,
        table: "`bl`.`t`".into(),
        images,
    };
    let mut next_id = 1;
    for round in 0..60 {
        match rng.below(6) {
            // Autocommit multi-row INSERT.
            0 | 1 => {
                let n = 1 + rng.below(4);
                let mut sql = Vec::new();
                let mut evs = Vec::new();
                for _ in 0..n {
                    let (s, w) = random_row(&mut rng, next_id);
                    sql.push(tuple(&s));
                    evs.push(ev("INSERT", vec![w.clone()]));
                    rows.insert(next_id, w);
                    next_id += 1;
                }
                exec(&mut c, &format!("INSERT INTO t VALUES {}", sql.join(", ")));
                want.push(evs);
            }
            // A transaction: UPDATE a row, DELETE a row, INSERT one.
            2 | 3 if rows.len() >= 2 => {
                let keys: Vec<i64> = rows.keys().copied().collect();
                let up = keys[rng.below(keys.len() as u64) as usize];
                let mut del = keys[rng.below(keys.len() as u64) as usize];
                if del == up {
                    del = *keys.iter().find(|k| **k != up).unwrap();
                }
                exec(&mut c, "BEGIN");
                // Every column but the key takes a new random value.
                let (lits, new) = random_row(&mut rng, up);
                let old = rows[&up].clone();
                let names = ["b", "v", "c", "d", "dt", "ts", "f", "bl", "n"];
                let assign: Vec<String> = names
                    .iter()
                    .zip(&lits[1..])
                    .map(|(c, v)| format!("{c} = {v}"))
                    .collect();
                exec(
                    &mut c,
                    &format!("UPDATE t SET {} WHERE id = {up}", assign.join(", ")),
                );
                let dold = rows[&del].clone();
                exec(&mut c, &format!("DELETE FROM t WHERE id = {del}"));
                let (s, w) = random_row(&mut rng, next_id);
                exec(&mut c, &format!("INSERT INTO t VALUES {}", tuple(&s)));
                exec(&mut c, "COMMIT");
                want.push(vec![
                    ev("UPDATE", vec![old, new.clone()]),
                    ev("DELETE", vec![dold]),
                    ev("INSERT", vec![w.clone()]),
                ]);
                rows.insert(up, new);
                rows.remove(&del);
                rows.insert(next_id, w);
                next_id += 1;
            }
            // Rolled back: nothing of it is logged.
            4 => {
                exec(&mut c, "BEGIN");
                let (s, _) = random_row(&mut rng, next_id + 1_000_000);
                exec(&mut c, &format!("INSERT INTO t VALUES {}", tuple(&s)));
                exec(&mut c, "DELETE FROM t");
                exec(&mut c, "ROLLBACK");
            }
            // A statement that fails half way (duplicate key) inside a
            // transaction that then commits its other statement.
            _ if !rows.is_empty() => {
                exec(&mut c, "BEGIN");
                let (s, w) = random_row(&mut rng, next_id);
                exec(&mut c, &format!("INSERT INTO t VALUES {}", tuple(&s)));
                let dup = *rows.keys().next().unwrap();
                let (s2, _) = random_row(&mut rng, next_id + 1);
                let (s3, _) = random_row(&mut rng, dup);
                let e = c
                    .query_drop(format!(
                        "INSERT INTO t VALUES {}, {}",
                        tuple(&s2),
                        tuple(&s3)
                    ))
                    .unwrap_err();
                assert_eq!(err_code(&e).unwrap().0, 1062);
                exec(&mut c, "COMMIT");
                want.push(vec![ev("INSERT", vec![w.clone()])]);
                rows.insert(next_id, w);
                next_id += 2;
            }
            _ => {}
        }
        if round == 30 {
            exec(&mut c, "FLUSH BINARY LOGS");
        }
    }
    // The engine's rows are the log's.
    let count: usize = q1(&mut c, "SELECT COUNT(*) FROM t").parse().unwrap();
    assert_eq!(count, rows.len());
    let files = binlog_files(&srv);
    assert!(files.len() >= 2, "{files:?}");
    let status = q(&mut c, "SHOW MASTER STATUS");
    let last = files.last().unwrap();
    let size = std::fs::metadata(last).unwrap().len();
    assert_eq!(
        status,
        [format!(
            "{}|{size}||",
            last.file_name().unwrap().to_string_lossy()
        )]
    );
    // DDL is logged as QUERY events; every transaction has a GTID 0-7-n.
    // DROP DATABASE IF EXISTS, CREATE DATABASE, CREATE TABLE, then the DML.
    let pos = q1(&mut c, "SELECT @@gtid_binlog_pos");
    assert_eq!(pos, format!("0-7-{}", want.len() + 3), "seed {seed}");
    let events = q(
        &mut c,
        &format!(
            "SHOW BINLOG EVENTS IN '{}' LIMIT 4",
            files[0].file_name().unwrap().to_string_lossy()
        ),
    );
    let kinds: Vec<&str> = events
        .iter()
        .map(|r| r.split('|').nth(2).unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["Format_desc", "Gtid_list", "Binlog_checkpoint", "Gtid"]
    );
    let text = decode(&files);
    assert!(text.contains("CREATE TABLE t"), "{text}");
    let got = parse(&text);
    assert_eq!(got.len(), want.len(), "seed {seed}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "transaction {i}, seed {seed}");
    }
}

#[test]
fn binlog_statements_and_errors() {
    let srv = Server::start_with(
        "binlog-stmts",
        &["--log-bin=strata-bin", "--max-binlog-size=4096"],
    );
    let mut c = srv.fresh_db("bs");
    exec(
        &mut c,
        "CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(100))",
    );
    for i in 0..100 {
        exec(
            &mut c,
            &format!("INSERT INTO k VALUES ({i}, REPEAT('x', 90))"),
        );
    }
    // max_binlog_size rotated the log.
    let logs = q(&mut c, "SHOW BINARY LOGS");
    assert!(logs.len() >= 3, "{logs:?}");
    assert!(logs[0].starts_with("strata-bin.000001|"));
    let index = std::fs::read_to_string(srv.datadir.join("strata-bin.index")).unwrap();
    assert_eq!(index.lines().count(), logs.len());
    let second = logs[1].split('|').next().unwrap().to_string();
    let err = c
        .query_drop("PURGE BINARY LOGS TO 'nope.000001'")
        .unwrap_err();
    assert_eq!(err_code(&err).unwrap().0, 1373);
    exec(&mut c, &format!("PURGE BINARY LOGS TO '{second}'"));
    let after = q(&mut c, "SHOW BINARY LOGS");
    assert_eq!(after[0].split('|').next().unwrap(), second);
    assert!(!srv.datadir.join("strata-bin.000001").exists());
    let err = c
        .query_drop("SHOW BINLOG EVENTS IN 'strata-bin.000001'")
        .unwrap_err();
    assert_eq!(err_code(&err).unwrap().0, 1220);
    let ev = q(
        &mut c,
        &format!("SHOW BINLOG EVENTS IN '{second}' FROM 4 LIMIT 1, 2"),
    );
    assert_eq!(ev.len(), 2);
    assert!(ev[0].contains("|Gtid_list|"), "{ev:?}");
    exec(&mut c, "PURGE BINARY LOGS BEFORE '2000-01-01 00:00:00'");
    assert_eq!(q(&mut c, "SHOW BINARY LOGS").len(), after.len());
    for bad in [
        "SET GLOBAL strata_bulk_load = 1",
        "CREATE TABLE k2 AS SELECT * FROM k",
        // Replication options Strata does not honour (e2e_replica has the rest).
        "CHANGE MASTER TO MASTER_SSL=1",
        "START SLAVE SQL_THREAD",
    ] {
        assert_eq!(
            err_code(&c.query_drop(bad).unwrap_err()).unwrap().0,
            1235,
            "{bad}"
        );
    }
    // ENUM and SET values are logged as their numbers (they reach the
    // writer as text).
    exec(
        &mut c,
        "CREATE TABLE es (id INT PRIMARY KEY, e ENUM('r','g','b'), s SET('p','q','r'))",
    );
    exec(&mut c, "INSERT INTO es VALUES (1, 'g', 'p,r')");
    if have_mariadb_binlog() {
        let text = decode(&binlog_files(&srv));
        assert!(
            text.contains("###   @2=2\n###   @3=b'00000101'\n"),
            "{text}"
        );
    }
    // sql_log_bin=0: the session's changes stay out of the log.
    let before = q1(&mut c, "SELECT @@gtid_binlog_pos");
    exec(&mut c, "SET sql_log_bin = 0");
    exec(&mut c, "INSERT INTO k VALUES (1000, 'unlogged')");
    assert_eq!(q1(&mut c, "SELECT @@gtid_binlog_pos"), before);
    // Without --log-bin.
    let plain = Server::start("binlog-off");
    let mut p = plain.conn();
    assert_eq!(q1(&mut p, "SELECT @@log_bin"), "0");
    assert!(q(&mut p, "SHOW MASTER STATUS").is_empty());
    assert_eq!(
        err_code(&p.query_drop("SHOW BINARY LOGS").unwrap_err())
            .unwrap()
            .0,
        1381
    );
    assert_eq!(q1(&mut p, "SELECT @@gtid_binlog_pos"), "");
}

#[test]
fn crash_keeps_the_log_and_the_engine_in_step() {
    if !have_mariadb_binlog() {
        eprintln!("mariadb-binlog not installed: skipped");
        return;
    }
    let seed = testkit::seed("e2e_binlog_crash");
    let mut rng = Rng::new(seed);
    let cycles: u64 = std::env::var("BINLOG_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut srv = Server::start_with("binlog-crash", &["--log-bin", "--max-binlog-size=65536"]);
    {
        let mut c = srv.fresh_db("cr");
        exec(&mut c, "CREATE TABLE e (id BIGINT PRIMARY KEY, txn BIGINT NOT NULL, part INT NOT NULL, pad VARCHAR(100))");
    }
    let mut acked: BTreeMap<i64, i64> = BTreeMap::new(); // txn -> rows
    let mut next_txn = 1i64;
    for cycle in 0..cycles {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut handles = Vec::new();
        for w in 0..3i64 {
            let opts = srv.opts().db_name(Some("cr"));
            let stop = stop.clone();
            let base = next_txn + w * 1_000_000;
            let mut r = Rng::new(rng.next_u64() ^ w as u64);
            handles.push(std::thread::spawn(move || {
                let mut done = Vec::new();
                let Ok(mut c) = mysql::Conn::new(opts) else {
                    return done;
                };
                let mut t = base;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let n = 1 + r.below(5) as i64;
                    let vals: Vec<String> = (0..n)
                        .map(|p| {
                            format!("({}, {t}, {p}, REPEAT('p', {}))", t * 10 + p, r.below(100))
                        })
                        .collect();
                    if c.query_drop(format!("INSERT INTO e VALUES {}", vals.join(",")))
                        .is_err()
                    {
                        break;
                    }
                    done.push((t, n));
                    t += 1;
                }
                done
            }));
        }
        std::thread::sleep(std::time::Duration::from_millis(300 + rng.below(700)));
        srv.kill9();
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for h in handles {
            for (t, n) in h.join().unwrap() {
                acked.insert(t, n);
            }
        }
        next_txn += 10_000_000;
        srv.restart();
        let mut c = srv.conn_db("cr");
        // The engine's rows.
        let mut engine: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for r in q(&mut c, "SELECT txn, part FROM e") {
            let (t, p) = r.split_once('|').unwrap();
            engine
                .entry(t.parse().unwrap())
                .or_default()
                .insert(p.parse().unwrap());
        }
        for (t, n) in &acked {
            assert_eq!(
                engine.get(t).map(|s| s.len() as i64),
                Some(*n),
                "acked txn {t} lost, cycle {cycle}, seed {seed}"
            );
        }
        // The log's rows: whole transactions only, the same as the engine's.
        let files = binlog_files(&srv);
        let mut logged: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        for trx in parse(&decode(&files)) {
            let mut txns = BTreeSet::new();
            for ev in trx {
                assert_eq!(ev.kind, "INSERT");
                for img in ev.images {
                    let t: i64 = img[1].parse().unwrap();
                    txns.insert(t);
                    assert!(
                        logged.entry(t).or_default().insert(img[2].parse().unwrap()),
                        "row logged twice"
                    );
                }
            }
            assert_eq!(txns.len(), 1, "one transaction per GTID");
        }
        assert_eq!(
            logged, engine,
            "log and engine differ after crash {cycle}, seed {seed}"
        );
        // Re-deriving the files gives the same bytes.
        let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        drop(c);
        srv.restart();
        let again: Vec<Vec<u8>> = binlog_files(&srv)
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect();
        assert!(
            before == again,
            "files re-derived differently, cycle {cycle}, seed {seed}"
        );
    }
}
