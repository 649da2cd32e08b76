//! Strata as a replication source, end to end (issue 13 part 2):
//! - the dump protocol itself on a raw connection: REPLICATION SLAVE needed
//!   (1227), the fake ROTATE and FORMAT_DESCRIPTION first, EOF at the end
//!   with BINLOG_DUMP_NON_BLOCK, 1236 for a bad start;
//! - a waiting dump: heartbeats at `@master_heartbeat_period`, commits
//!   delivered at once (not at the writer's timer), SHOW PROCESSLIST,
//!   ended by a newer dump for the same replica, by KILL, and by shutdown
//!   (SIGTERM completes promptly);
//! - `mariadb-binlog --read-from-remote-server` decodes the same events as
//!   it decodes from the files;
//! - a stock MariaDB replica (Debian's mariadbd, started here) replicates
//!   seeded random DML and DDL over several tables and types (NULLs,
//!   VARCHAR, DECIMAL, DATETIME, BLOB; updates, deletes, rollbacks) in GTID
//!   mode (MASTER_USE_GTID=slave_pos) and then by file and position, gets
//!   heartbeats when idle, is listed by SHOW SLAVE HOSTS; per-table content
//!   hashes are equal once its gtid_slave_pos reaches Strata's
//!   gtid_binlog_pos; then Strata is killed (SIGKILL) during a load and
//!   restarted on the same port: the replica reconnects by itself, the
//!   hashes are equal and no acknowledged commit is missing.
//!
//! A test that needs mariadbd or mariadb-binlog fails when it is missing,
//! unless STRATA_SKIP_MARIADB=1 (then it is skipped with a note).
//! `SEED=n` replays.
#![allow(clippy::unwrap_used)]

mod common;

use common::maria::{require, MariaDb, MARIADBD};
use common::replsrc::*;
use common::{exec, login_user, packet, q, q1, read_packet, Rng, Server};
use mysql::prelude::Queryable;
use std::io::Write;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs a non-blocking dump on a raw connection: the events (without the
/// 0x00 byte), or the error that ended it.
fn raw_dump(
    s: &mut std::net::TcpStream,
    pos: u32,
    file: &str,
) -> Result<Vec<Vec<u8>>, (u16, String)> {
    s.write_all(&packet(0, &dump_packet(pos, 1, 0, file)))
        .unwrap();
    let mut evs = Vec::new();
    loop {
        let (p, _) = read_packet(s).expect("a packet");
        if let Some(e) = err_of(&p) {
            return Err(e);
        }
        if p[0] == 0xFE && p.len() < 9 {
            return Ok(evs);
        }
        assert_eq!(p[0], 0, "event packet");
        evs.push(p[1..].to_vec());
    }
}

#[test]
fn dump_protocol_on_a_raw_connection() {
    let srv = Server::start_with("replsrc-raw", &["--log-bin", "--server-id=5"]);
    let mut c = srv.fresh_db("r");
    setup(&mut c);
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))");
    exec(&mut c, "INSERT INTO t VALUES (1, 'a'), (2, NULL)");

    // Without REPLICATION SLAVE: 1227 for both commands.
    let mut s = login_user(srv.port, "noprv", None, 45).unwrap();
    for p in [register_packet(9), dump_packet(4, 1, 9, "")] {
        s.write_all(&packet(0, &p)).unwrap();
        let (r, _) = read_packet(&mut s).unwrap();
        let (code, msg) = err_of(&r).expect("an error");
        assert_eq!(code, 1227, "{msg}");
        assert!(msg.contains("REPLICATION SLAVE"), "{msg}");
    }

    // As root: registration is listed; the whole log streams.
    let mut s = login_user(srv.port, "root", None, 45).unwrap();
    s.write_all(&packet(0, &register_packet(9))).unwrap();
    let (r, _) = read_packet(&mut s).unwrap();
    assert_eq!(r[0], 0, "OK for COM_REGISTER_SLAVE");
    assert_eq!(q(&mut c, "SHOW SLAVE HOSTS"), vec!["9|host|3307|5"]);
    // A reader that did not say it knows checksums cannot have the log.
    let (code, msg) = raw_dump(&mut s, 4, "").unwrap_err();
    assert_eq!(code, 1236);
    assert!(msg.contains("checksum"), "{msg}");
    // As mariadb-binlog says it: the fake ROTATE without a checksum.
    common::raw_exec(&mut s, b"SET @master_binlog_checksum = 'NONE'").unwrap();
    let evs = raw_dump(&mut s, 4, "").unwrap();
    // The fake ROTATE: log_pos 0, LOG_EVENT_ARTIFICIAL_F, position 4 and
    // the first file.
    let fake = &evs[0];
    assert_eq!(fake[4], 4, "ROTATE");
    assert_eq!(&fake[13..17], &[0, 0, 0, 0]);
    assert_eq!(u16::from_le_bytes([fake[17], fake[18]]), 0x20);
    assert_eq!(&fake[19..27], &4u64.to_le_bytes());
    assert_eq!(&fake[27..43], b"mysql-bin.000001");
    assert_eq!(fake.len(), 19 + 8 + 16, "no checksum");
    let kinds: Vec<u8> = evs.iter().map(|e| e[4]).collect();
    for k in [15, 163, 161, 162, 2, 19, 23, 16] {
        assert!(kinds.contains(&k), "event type {k} in {kinds:?}");
    }
    // Then the file's bytes as they are.
    let file = std::fs::read(srv.datadir.join("mysql-bin.000001")).unwrap();
    assert_eq!(
        evs[1..].concat(),
        file[4..],
        "the file's events, byte for byte"
    );
    // With CRC32, as a replica says it: the fake ROTATE has one too.
    common::raw_exec(
        &mut s,
        b"SET @master_binlog_checksum = @@global.binlog_checksum",
    )
    .unwrap();
    let evs = raw_dump(&mut s, 4, "mysql-bin.000001").unwrap();
    assert_eq!(evs[0].len(), 19 + 8 + 16 + 4);
    let crc = binlog_crc(&evs[0][..evs[0].len() - 4]);
    assert_eq!(evs[0][evs[0].len() - 4..], crc.to_le_bytes());
    assert_eq!(evs[1..].concat(), file[4..]);
    // From a later position: FORMAT_DESCRIPTION with log_pos 0, then from there.
    let (_, pos) = {
        let r = q1(&mut c, "SHOW MASTER STATUS");
        let mut it = r.split('|');
        (
            it.next().unwrap().to_string(),
            it.next().unwrap().parse::<u32>().unwrap(),
        )
    };
    exec(&mut c, "INSERT INTO t VALUES (3, 'c')");
    q(&mut c, "SHOW MASTER STATUS"); // the files caught up
    let evs = raw_dump(&mut s, pos, "mysql-bin.000001").unwrap();
    assert_eq!(evs[1][4], 15);
    assert_eq!(&evs[1][13..17], &[0, 0, 0, 0]);
    assert_eq!(evs[2][4], 162, "the next transaction's GTID");
    // Bad starts: 1236 with MariaDB's texts.
    let bad = |s: &mut std::net::TcpStream, pos, file: &str| raw_dump(s, pos, file).unwrap_err();
    let (code, msg) = bad(&mut s, 4, "nosuch.000001");
    assert_eq!(code, 1236);
    assert!(msg.contains("Could not find first log file name"), "{msg}");
    let (code, msg) = bad(&mut s, pos + 1, "mysql-bin.000001");
    assert_eq!(code, 1236);
    assert!(msg.contains("impossible position"), "{msg}");
    common::raw_exec(&mut s, b"SET @slave_connect_state = '0-5-999'").unwrap();
    let (code, msg) = bad(&mut s, 4, "");
    assert_eq!(code, 1236);
    assert!(msg.contains("not in the master's binlog"), "{msg}");
    // A GTID start skips what the replica has: the state of the second
    // transaction starts at the third.
    let gtids = |evs: &[Vec<u8>]| -> Vec<u64> {
        evs.iter()
            .filter(|e| e[4] == 162)
            .map(|e| u64::from_le_bytes(e[19..27].try_into().unwrap()))
            .collect()
    };
    common::raw_exec(&mut s, b"SET @slave_connect_state = ''").unwrap();
    let all = gtids(&raw_dump(&mut s, 4, "").unwrap());
    assert!(all.len() >= 4, "{all:?}");
    assert_eq!(all, (1..=all.len() as u64).collect::<Vec<_>>());
    common::raw_exec(&mut s, b"SET @slave_connect_state = '0-5-2'").unwrap();
    let evs = raw_dump(&mut s, 4, "").unwrap();
    assert_eq!(gtids(&evs), all[2..], "GTIDs after 0-5-2");
    // After the skip, a fake GTID_LIST (artificial) at the end of the
    // skipped transactions: the next GTID event starts there.
    let i = evs
        .iter()
        .position(|e| e[4] == 163 && u16::from_le_bytes([e[17], e[18]]) & 0x20 != 0)
        .expect("a fake GTID_LIST");
    let at = u32::from_le_bytes(evs[i][13..17].try_into().unwrap());
    let next = &evs[i + 1];
    assert_eq!(next[4], 162);
    let next_end = u32::from_le_bytes(next[13..17].try_into().unwrap());
    assert_eq!(at as usize, next_end as usize - next.len());
    // A GTID of another server id in the domain: not in the log, and
    // the log has higher sequence numbers (diverged), never skipped to.
    common::raw_exec(&mut s, b"SET @slave_connect_state = '0-7-1'").unwrap();
    let (code, msg) = bad(&mut s, 4, "");
    assert_eq!(code, 1236);
    assert_eq!(
        msg,
        "Connecting slave requested to start from GTID 0-7-1, which is not in the master's \
         binlog. Since the master's binlog contains GTIDs with higher sequence numbers, it \
         probably means that the slave has diverged due to executing extra erroneous transactions"
    );
    // A domain the log never had is ignored (START_ON_EMPTY_DOMAIN).
    common::raw_exec(&mut s, b"SET @slave_connect_state = '9-1-5,0-5-2'").unwrap();
    let evs = raw_dump(&mut s, 4, "").unwrap();
    assert_eq!(gtids(&evs), all[2..], "domain 9 ignored");
    // The connection goes on after a non-blocking dump; its registration
    // goes with it.
    assert_eq!(
        common::raw_query(&mut s, b"SELECT 1"),
        vec![Some(b"1".to_vec())]
    );
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !q(&mut c, "SHOW SLAVE HOSTS").is_empty() {
        assert!(Instant::now() < deadline, "registration kept");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn mariadb_binlog_reads_the_remote_stream() {
    if !require("mariadb-binlog", "mariadb_binlog_reads_the_remote_stream") {
        return;
    }
    let srv = Server::start_with("replsrc-remote", &["--log-bin", "--server-id=3"]);
    let mut c = srv.fresh_db("rm");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(8,2), dt DATETIME, b BLOB)",
    );
    for i in 0..50 {
        exec(
            &mut c,
            &format!("INSERT INTO t VALUES ({i}, 'v{i}', {i}.25, '2024-01-02 03:04:05', NULL)"),
        );
    }
    exec(&mut c, "UPDATE t SET v = NULL WHERE id % 3 = 0");
    exec(&mut c, "DELETE FROM t WHERE id % 7 = 0");
    exec(&mut c, "FLUSH BINARY LOGS");
    exec(&mut c, "INSERT INTO t VALUES (100, 'x', 1, NULL, 'blob')");
    let files: Vec<String> = q(&mut c, "SHOW BINARY LOGS")
        .iter()
        .map(|r| r.split('|').next().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 2);
    let run = |remote: bool| {
        let mut cmd = Command::new("mariadb-binlog");
        cmd.args(["--verbose", "--base64-output=decode-rows"]);
        if remote {
            cmd.args([
                "--read-from-remote-server",
                "--host=127.0.0.1",
                &format!("--port={}", srv.port),
                "--user=root",
                "--to-last-log",
                &files[0],
            ]);
        } else {
            cmd.args(files.iter().map(|f| srv.datadir.join(f)));
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "remote={remote}: {err}");
        assert!(!err.contains("ERROR"), "remote={remote}: {err}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The events (their headers with end_log_pos, checksums and decoded
    // rows) are the same. (The tool's "# at" lines past a rotation count
    // on from the previous file when reading remotely, as from MariaDB.)
    let events = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("###") || (l.starts_with('#') && l.contains("end_log_pos")))
            .map(|l| l.to_string())
            .collect()
    };
    let (local, mut remote) = (events(&run(false)), events(&run(true)));
    assert!(local.iter().filter(|l| l.starts_with("### INSERT")).count() >= 50);
    // The stream has a fake ROTATE (log_pos 0) before each file.
    let n = remote.len();
    remote.retain(|l| !(l.contains("end_log_pos 0 ") && l.contains("Rotate to")));
    let fakes = n - remote.len();
    assert_eq!(fakes, 2, "one fake ROTATE per file");
    if let Some(i) = (0..local.len().max(remote.len())).find(|&i| local.get(i) != remote.get(i)) {
        panic!(
            "remote stream differs from the files at line {i}: {:?} vs {:?}",
            remote.get(i),
            local.get(i)
        );
    }
}

/// Strata's tables and a generator of seeded random changes to them.
struct Load {
    rng: Rng,
    next: i64,
}

const TABLES: [&str; 3] = ["a", "b", "c"];

impl Load {
    fn ddl(c: &mut mysql::Conn) {
        exec(
            c,
            "CREATE TABLE a (id INT PRIMARY KEY, big BIGINT, v VARCHAR(40), d DECIMAL(12,3),
             dt DATETIME, bl BLOB, n INT)",
        );
        exec(
            c,
            "CREATE TABLE b (k VARCHAR(20) PRIMARY KEY, t TINYINT, c CHAR(4), dd DATE)",
        );
        exec(
            c,
            "CREATE TABLE c (x INT, y INT, note TEXT, PRIMARY KEY (x, y))",
        );
    }

    fn val(&mut self, lit: impl FnOnce(&mut Rng) -> String) -> String {
        if self.rng.below(5) == 0 {
            "NULL".into()
        } else {
            lit(&mut self.rng)
        }
    }

    fn word(rng: &mut Rng, max: u64) -> String {
        let n = rng.below(max + 1) as usize;
        let s: String = (0..n)
            .map(|_| (b'a' + rng.below(26) as u8) as char)
            .collect();
        format!("'{s}'")
    }

    fn row_a(&mut self, id: i64) -> String {
        let big = self.val(|r| (r.below(1 << 40) as i64 - (1 << 39)).to_string());
        let v = self.val(|r| Load::word(r, 40));
        let d = self.val(|r| {
            let m = r.below(2_000_000_000) as i64 - 1_000_000_000;
            format!(
                "{}{}.{:03}",
                if m < 0 { "-" } else { "" },
                m.abs() / 1000,
                m.abs() % 1000
            )
        });
        let dt = self.val(|r| {
            format!(
                "'{:04}-{:02}-{:02} {:02}:{:02}:{:02}'",
                1980 + r.below(50),
                1 + r.below(12),
                1 + r.below(28),
                r.below(24),
                r.below(60),
                r.below(60)
            )
        });
        let bl = self.val(|r| Load::word(r, 300));
        let n = self.val(|r| (r.below(1 << 32) as i64 - (1 << 31)).to_string());
        format!("({id}, {big}, {v}, {d}, {dt}, {bl}, {n})")
    }

    /// One statement or transaction of random changes.
    fn step(&mut self, c: &mut mysql::Conn) {
        let id = self.next;
        match self.rng.below(8) {
            0..=2 => {
                let rows: Vec<String> = (0..1 + self.rng.below(3))
                    .map(|i| self.row_a(id + i as i64))
                    .collect();
                self.next += rows.len() as i64;
                exec(c, &format!("INSERT INTO a VALUES {}", rows.join(", ")));
            }
            3 => {
                let k = Load::word(&mut self.rng, 19);
                let t = self.val(|r| (r.below(256) as i64 - 128).to_string());
                let ch = self.val(|r| Load::word(r, 4));
                let dd = self.val(|r| {
                    format!(
                        "'20{:02}-{:02}-{:02}'",
                        r.below(40),
                        1 + r.below(12),
                        1 + r.below(28)
                    )
                });
                exec(c, &format!("REPLACE INTO b VALUES ({k}, {t}, {ch}, {dd})"));
            }
            4 => {
                let (x, y) = (self.rng.below(20), self.rng.below(20));
                let note = self.val(|r| Load::word(r, 100));
                exec(
                    c,
                    &format!(
                        "INSERT INTO c (x, y, note) VALUES ({x}, {y}, {note}) ON DUPLICATE KEY UPDATE note = {note}"
                    ),
                );
            }
            5 => {
                let lo = self.rng.below(self.next.max(1) as u64) as i64;
                let v = self.val(|r| Load::word(r, 40));
                exec(
                    c,
                    &format!(
                        "UPDATE a SET v = {v}, n = n + 1 WHERE id BETWEEN {lo} AND {}",
                        lo + 3
                    ),
                );
            }
            6 => {
                let lo = self.rng.below(self.next.max(1) as u64) as i64;
                exec(
                    c,
                    &format!("DELETE FROM a WHERE id BETWEEN {lo} AND {}", lo + 1),
                );
                exec(
                    c,
                    &format!("DELETE FROM c WHERE x = {}", self.rng.below(20)),
                );
            }
            _ => {
                // A transaction, committed or rolled back.
                exec(c, "BEGIN");
                let row = self.row_a(id);
                self.next += 1;
                exec(c, &format!("INSERT INTO a VALUES {row}"));
                exec(c, &format!("UPDATE a SET big = NULL WHERE id = {}", id / 2));
                exec(
                    c,
                    &format!("DELETE FROM b WHERE k < {}", Load::word(&mut self.rng, 2)),
                );
                if self.rng.below(3) == 0 {
                    exec(c, "ROLLBACK");
                } else {
                    exec(c, "COMMIT");
                }
            }
        }
    }
}

#[test]
fn a_mariadb_replica_follows_strata() {
    if !require(MARIADBD, "a_mariadb_replica_follows_strata") {
        return;
    }
    let seed = testkit::seed("e2e_replsrc");
    // Strata's default version: a MariaDB replica uses GTIDs with it.
    let mut srv = Server::start_with("replsrc", &["--log-bin", "--server-id=1"]);
    let mut c = srv.fresh_db("rs");
    assert!(q1(&mut c, "SELECT VERSION()").starts_with("10.11.9-strata"));
    setup(&mut c);
    Load::ddl(&mut c);
    let mut load = Load {
        rng: Rng::new(seed),
        next: 0,
    };
    for _ in 0..100 {
        load.step(&mut c);
    }
    let m = MariaDb::start_with("server-id=2\nreport-host=replica-host\nreport-port=3399\n")
        .expect("mariadbd starts");
    let mut rep = m.conn().unwrap();
    exec(
        &mut rep,
        &format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl',
             MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1,
             MASTER_HEARTBEAT_PERIOD=1",
            srv.port
        ),
    );
    exec(&mut rep, "START SLAVE");
    for _ in 0..100 {
        load.step(&mut c);
    }
    exec(&mut c, "ALTER TABLE c ADD COLUMN z INT NULL");
    exec(&mut c, "UPDATE c SET z = x * y WHERE x < 10");
    sync(&mut c, &m, &mut rep);
    assert_same(&mut c, &mut rep, "rs", &TABLES);
    let st: Vec<mysql::Row> = rep.query("SHOW SLAVE STATUS").unwrap();
    assert_eq!(
        st[0].get::<String, _>("Using_Gtid").unwrap(),
        "Slave_Pos",
        "GTID mode kept"
    );
    assert_eq!(q(&mut c, "SHOW SLAVE HOSTS"), vec!["2|replica-host|3399|1"]);
    // Idle: heartbeats keep coming.
    let hb = |rep: &mut mysql::Conn| -> i64 {
        let r = q1(rep, "SHOW GLOBAL STATUS LIKE 'Slave_received_heartbeats'");
        r.split('|').nth(1).unwrap().parse().unwrap()
    };
    let before = hb(&mut rep);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(hb(&mut rep) > before, "no heartbeat while idle");

    // By file and position.
    exec(&mut rep, "STOP SLAVE");
    let status = q1(&mut c, "SHOW MASTER STATUS");
    let mut it = status.split('|');
    let (file, pos) = (it.next().unwrap(), it.next().unwrap());
    exec(
        &mut rep,
        &format!(
            "CHANGE MASTER TO MASTER_USE_GTID=no, MASTER_LOG_FILE='{file}', MASTER_LOG_POS={pos}"
        ),
    );
    exec(&mut rep, "START SLAVE");
    exec(&mut c, "FLUSH BINARY LOGS");
    for _ in 0..100 {
        load.step(&mut c);
    }
    sync(&mut c, &m, &mut rep);
    assert_same(&mut c, &mut rep, "rs", &TABLES);
    exec(&mut rep, "STOP SLAVE");
    exec(&mut rep, "CHANGE MASTER TO MASTER_USE_GTID=slave_pos");
    exec(&mut rep, "START SLAVE");

    // kill -9 during a load, restart on the same port: the replica comes
    // back by itself and has every acknowledged commit.
    exec(&mut c, "CREATE TABLE k (id INT PRIMARY KEY, w INT)");
    let acked = Arc::new(Mutex::new(Vec::<i64>::new()));
    let cycles = std::env::var("REPLSRC_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let mut next = 0i64;
    for cycle in 0..cycles {
        let opts = srv.opts().db_name(Some("rs"));
        let acked2 = acked.clone();
        let start = next;
        let writer = std::thread::spawn(move || {
            let Ok(mut w) = mysql::Conn::new(opts) else {
                return start;
            };
            let mut i = start;
            loop {
                match w.query_drop(format!("INSERT INTO k VALUES ({i}, {cycle})")) {
                    Ok(()) => acked2.lock().unwrap().push(i),
                    Err(_) => return i + 1,
                }
                i += 1;
            }
        });
        std::thread::sleep(Duration::from_millis(400 + 100 * cycle as u64));
        srv.kill9();
        next = writer.join().unwrap();
        srv.restart_same_port();
        c = srv.conn_db("rs");
        for _ in 0..30 {
            load.step(&mut c);
        }
    }
    sync(&mut c, &m, &mut rep);
    assert_same(&mut c, &mut rep, "rs", &["a", "b", "c", "k"]);
    let on_replica: std::collections::BTreeSet<i64> = q(&mut rep, "SELECT id FROM rs.k")
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let acked = acked.lock().unwrap();
    assert!(!acked.is_empty());
    for i in acked.iter() {
        assert!(
            on_replica.contains(i),
            "acknowledged commit {i} missing on the replica"
        );
    }
    exec(&mut rep, "STOP SLAVE");
}

/// Reads stream packets until one of event type `kind` (or None: the
/// connection ended or nothing came within the socket's timeout).
fn next_of_kind(s: &mut std::net::TcpStream, kind: u8) -> Option<Vec<u8>> {
    loop {
        let (p, _) = read_packet(s)?;
        if p.first() == Some(&0) && p.get(5) == Some(&kind) {
            return Some(p[1..].to_vec());
        }
        if p.first() != Some(&0) {
            return None;
        }
    }
}

#[test]
fn a_waiting_dump_wakes_beats_and_ends_on_kill_and_shutdown() {
    let mut srv = Server::start_with("replsrc-wait", &["--log-bin", "--server-id=4"]);
    let mut c = srv.fresh_db("w");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY)");
    let blocking_dump = |sid: u32| {
        let mut s = login_user(srv.port, "root", None, 45).unwrap();
        common::raw_exec(&mut s, b"SET @master_binlog_checksum = 'CRC32'").unwrap();
        common::raw_exec(&mut s, b"SET @master_heartbeat_period = 200000000").unwrap();
        s.write_all(&packet(0, &dump_packet(4, 0, sid, "")))
            .unwrap();
        s
    };
    let mut s = blocking_dump(7);
    // Idle: a HEARTBEAT with the replica's position (the end of what it
    // got) and the file name, checksummed.
    let hb = next_of_kind(&mut s, 27).expect("a heartbeat");
    let status = q1(&mut c, "SHOW MASTER STATUS");
    let pos: u32 = status.split('|').nth(1).unwrap().parse().unwrap();
    assert_eq!(u32::from_le_bytes(hb[13..17].try_into().unwrap()), pos);
    assert_eq!(&hb[19..hb.len() - 4], b"mysql-bin.000001");
    assert_eq!(
        hb[hb.len() - 4..],
        binlog_crc(&hb[..hb.len() - 4]).to_le_bytes()
    );
    // A commit reaches the waiting dump at once (the writer is woken by
    // the commit, the dump by the writer), not at the writer's 100 ms
    // timer: ten commits one after the other take far less than a second.
    let t0 = Instant::now();
    for i in 1..=10 {
        exec(&mut c, &format!("INSERT INTO t VALUES ({i})"));
        let xid = next_of_kind(&mut s, 16).expect("the commit's XID");
        assert!(xid.len() > 19);
    }
    let waited = t0.elapsed();
    assert!(waited < Duration::from_millis(500), "took {waited:?}");
    // It shows in SHOW PROCESSLIST.
    let dumps: Vec<String> = q(&mut c, "SHOW PROCESSLIST")
        .into_iter()
        .filter(|r| r.split('|').nth(4) == Some("Binlog Dump"))
        .collect();
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    // A newer dump for the same replica ends the old one.
    let mut s2 = blocking_dump(7);
    assert!(next_of_kind(&mut s2, 4).is_some(), "the new dump streams");
    assert_eq!(next_of_kind(&mut s, 27), None, "the old dump ended");
    // KILL ends a dump.
    let id: String = q(&mut c, "SHOW PROCESSLIST")
        .into_iter()
        .find(|r| r.split('|').nth(4) == Some("Binlog Dump"))
        .unwrap()
        .split('|')
        .next()
        .unwrap()
        .to_string();
    exec(&mut c, &format!("KILL {id}"));
    assert_eq!(next_of_kind(&mut s2, 27), None, "killed");
    // A waiting dump does not hold up shutdown.
    let mut s3 = blocking_dump(8);
    assert!(next_of_kind(&mut s3, 27).is_some());
    drop(c);
    let t0 = Instant::now();
    let pid = srv.pid().unwrap().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    while srv.is_running() {
        assert!(t0.elapsed() < Duration::from_secs(10), "shutdown hangs");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        srv.log_tail(5).contains("shutdown complete"),
        "{}",
        srv.log_tail(10)
    );
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}
