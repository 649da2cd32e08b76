//! Strata as a replication source, end to end (continued from e2e_replsrc):
//! - PURGE BINARY LOGS while a replica lags (its dump blocked in the first
//!   file): the files it reads stay, it gets every event, and the purge
//!   goes through once it is gone;
//! - a newer dump for the same replica closes the old one's connection even
//!   when it is blocked writing;
//! - a dump ends when its replica sends COM_QUIT (a replica sends nothing
//!   else during a dump);
//! - a heartbeat period below 1 ms is 1 ms;
//! - SHOW SLAVE HOSTS needs REPLICATION MASTER ADMIN (SUPER), as MariaDB
//!   10.5+, not REPLICATION SLAVE;
//! - a stock MariaDB replica, with Strata's default settings (no
//!   --server-version), replicates in GTID mode while max_binlog_size is
//!   4 KiB under a concurrent load (files rotate every few commits); then
//!   the files it read are purged and it goes on.
//!
//! The MariaDB test fails when mariadbd is missing unless
//! STRATA_SKIP_MARIADB=1. `SEED=n` replays.
#![allow(clippy::unwrap_used)]

mod common;

use common::maria::{require, MariaDb, MARIADBD};
use common::replsrc::*;
use common::{as_user, exec, login_user, packet, q, q1, read_packet, server_err, Server};
use mysql::prelude::Queryable;
use std::io::Write;
use std::time::{Duration, Instant};

/// The Binlog Dump rows of SHOW PROCESSLIST.
fn dumps(c: &mut mysql::Conn) -> Vec<String> {
    q(c, "SHOW PROCESSLIST")
        .into_iter()
        .filter(|r| r.split('|').nth(4) == Some("Binlog Dump"))
        .collect()
}

fn wait_no_dump(c: &mut mysql::Conn, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !dumps(c).is_empty() {
        assert!(Instant::now() < deadline, "{what}: {:?}", dumps(c));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn binary_logs(c: &mut mysql::Conn) -> Vec<String> {
    q(c, "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| r.split('|').next().unwrap().to_string())
        .collect()
}

/// A blocking dump (CRC32) from `file` at 4 for replica `sid`, as root.
fn blocking_dump(port: u16, sid: u32, file: &str) -> std::net::TcpStream {
    let mut s = login_user(port, "root", None, 45).unwrap();
    common::raw_exec(&mut s, b"SET @master_binlog_checksum = 'CRC32'").unwrap();
    s.write_all(&packet(0, &dump_packet(4, 0, sid, file)))
        .unwrap();
    s
}

/// About 24 MB in the first file (more than the socket buffers hold, so a
/// dump that is not read stays in it), a second and a third file.
fn three_files(c: &mut mysql::Conn) -> Vec<String> {
    exec(c, "CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)");
    for i in 0..120 {
        exec(
            c,
            &format!("INSERT INTO big VALUES ({i}, REPEAT('x', 200000))"),
        );
    }
    exec(c, "FLUSH BINARY LOGS");
    exec(c, "INSERT INTO big VALUES (1000, 'y')");
    exec(c, "FLUSH BINARY LOGS");
    let files = binary_logs(c);
    assert_eq!(files.len(), 3, "{files:?}");
    files
}

#[test]
fn purge_keeps_the_files_a_lagging_replica_reads() {
    let srv = Server::start_with("replsrc2-purge", &["--log-bin", "--server-id=7"]);
    let mut c = srv.fresh_db("p");
    let files = three_files(&mut c);
    let mut s = blocking_dump(srv.port, 42, &files[0]);
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The fake ROTATE, then the replica stops reading.
    let (p, _) = read_packet(&mut s).unwrap();
    assert_eq!((p[0], p[5]), (0, 4), "fake ROTATE");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(dumps(&mut c).len(), 1);
    // MariaDB 10.11: the purge stops before the file in use, silently.
    exec(&mut c, &format!("PURGE BINARY LOGS TO '{}'", files[2]));
    assert_eq!(
        binary_logs(&mut c),
        files,
        "files a lagging replica reads were purged"
    );
    exec(&mut c, "PURGE BINARY LOGS BEFORE '2999-01-01 00:00:00'");
    assert_eq!(binary_logs(&mut c), files);
    // It reads on: every row event of the three files, no error.
    let (mut writes, mut rotates_to_last) = (0, 0);
    while writes < 121 || rotates_to_last == 0 {
        let (p, _) = read_packet(&mut s).expect("the stream goes on");
        assert_eq!(p[0], 0, "{:?}", err_of(&p));
        match p[5] {
            30 | 23 => writes += 1,
            4 if p.windows(files[2].len()).any(|w| w == files[2].as_bytes()) => {
                rotates_to_last += 1
            }
            _ => {}
        }
    }
    // Gone: the purge goes through.
    drop(s);
    wait_no_dump(&mut c, "the dump ended with its connection");
    exec(&mut c, &format!("PURGE BINARY LOGS TO '{}'", files[2]));
    assert_eq!(binary_logs(&mut c), files[2..].to_vec());
}

#[test]
fn a_newer_dump_closes_the_old_one_blocked_on_its_replica() {
    let srv = Server::start_with("replsrc2-zombie", &["--log-bin", "--server-id=8"]);
    let mut c = srv.fresh_db("z");
    let files = three_files(&mut c);
    // The replica stopped reading (gone without a word): its dump is
    // blocked writing in the first file.
    let mut old = blocking_dump(srv.port, 21, &files[0]);
    let (p, _) = read_packet(&mut old).unwrap();
    assert_eq!(p[0], 0);
    std::thread::sleep(Duration::from_millis(300));
    // It reconnects: the old dump's connection is closed, not left until
    // the write times out.
    let mut new = blocking_dump(srv.port, 21, &files[2]);
    let (p, _) = read_packet(&mut new).unwrap();
    assert_eq!(p[0], 0);
    let deadline = Instant::now() + Duration::from_secs(3);
    while dumps(&mut c).len() != 1 {
        assert!(Instant::now() < deadline, "{:?}", dumps(&mut c));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_dump_ends_when_its_replica_quits() {
    let srv = Server::start_with("replsrc2-quit", &["--log-bin", "--server-id=6"]);
    let mut c = srv.fresh_db("q");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY)");
    let mut s = blocking_dump(srv.port, 11, "");
    let (p, _) = read_packet(&mut s).unwrap();
    assert_eq!(p[0], 0);
    let deadline = Instant::now() + Duration::from_secs(3);
    while dumps(&mut c).is_empty() {
        assert!(Instant::now() < deadline, "no dump");
        std::thread::sleep(Duration::from_millis(20));
    }
    // COM_QUIT, the socket left open (as a TLS close_notify would be).
    s.write_all(&packet(0, &[0x01])).unwrap();
    wait_no_dump(&mut c, "the dump outlived its replica's COM_QUIT");
}

#[test]
fn a_tiny_heartbeat_period_is_one_millisecond() {
    let srv = Server::start_with("replsrc2-beat", &["--log-bin", "--server-id=6"]);
    let mut s = login_user(srv.port, "root", None, 45).unwrap();
    common::raw_exec(&mut s, b"SET @master_binlog_checksum = 'CRC32'").unwrap();
    // 1 ns: a replica would refuse it; a raw client gets 1 ms, not a flood.
    common::raw_exec(&mut s, b"SET @master_heartbeat_period = 1").unwrap();
    s.write_all(&packet(0, &dump_packet(4, 0, 12, ""))).unwrap();
    let t0 = Instant::now();
    let mut beats = 0;
    while t0.elapsed() < Duration::from_millis(500) {
        let (p, _) = read_packet(&mut s).unwrap();
        assert_eq!(p[0], 0, "{:?}", err_of(&p));
        beats += (p[5] == 27) as u32;
    }
    assert!((50..=600).contains(&beats), "{beats} heartbeats in 500 ms");
}

#[test]
fn show_slave_hosts_needs_replication_master_admin() {
    let srv = Server::start_with("replsrc2-hosts", &["--log-bin", "--server-id=6"]);
    let mut c = srv.conn();
    setup(&mut c);
    exec(&mut c, "CREATE USER admin IDENTIFIED BY 'pw'");
    exec(&mut c, "GRANT SUPER ON *.* TO admin");
    let mut repl = as_user(&srv, "repl", "pw", None).unwrap();
    let e = server_err(repl.query_drop("SHOW SLAVE HOSTS"));
    assert_eq!(e.code, 1227, "{}", e.message);
    assert_eq!(
        e.message,
        "Access denied; you need (at least one of) the SUPER, REPLICATION MASTER ADMIN \
         privilege(s) for this operation"
    );
    let mut admin = as_user(&srv, "admin", "pw", None).unwrap();
    assert!(q(&mut admin, "SHOW REPLICA HOSTS").is_empty());
}

#[test]
fn a_mariadb_replica_with_default_settings_and_small_files_under_load() {
    if !require(
        MARIADBD,
        "a_mariadb_replica_with_default_settings_and_small_files_under_load",
    ) {
        return;
    }
    let seed = testkit::seed("e2e_replsrc2");
    // No --server-version: the default must do for a MariaDB replica.
    let srv = Server::start_with("replsrc2-small", &["--log-bin", "--server-id=1"]);
    let mut c = srv.fresh_db("sm");
    setup(&mut c);
    exec(&mut c, "SET GLOBAL max_binlog_size = 4096");
    exec(
        &mut c,
        "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(100), n INT)",
    );
    let m = MariaDb::start_with("server-id=2\n").expect("mariadbd starts");
    let mut rep = m.conn().unwrap();
    exec(
        &mut rep,
        &format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='repl',
             MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            srv.port
        ),
    );
    exec(&mut rep, "START SLAVE");
    // Four writers at once, each on its own keys.
    let threads: Vec<_> = (0..4u64)
        .map(|w| {
            let opts = srv.opts().db_name(Some("sm"));
            std::thread::spawn(move || {
                let mut rng = testkit::Rng::new(seed ^ (w + 1));
                let mut cn = mysql::Conn::new(opts).unwrap();
                for i in 0..150u64 {
                    let id = w * 1000 + rng.below(60);
                    let sql = match rng.below(4) {
                        0 => format!("DELETE FROM a WHERE id = {id}"),
                        1 => format!("UPDATE a SET n = n + 1 WHERE id = {id}"),
                        _ => format!(
                            "REPLACE INTO a VALUES ({id}, '{}', {i})",
                            "v".repeat(rng.below(90) as usize)
                        ),
                    };
                    cn.query_drop(sql).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let files = binary_logs(&mut c);
    assert!(files.len() > 10, "small files rotated: {}", files.len());
    sync(&mut c, &m, &mut rep);
    assert_same(&mut c, &mut rep, "sm", &["a"]);
    let st: Vec<mysql::Row> = rep.query("SHOW SLAVE STATUS").unwrap();
    assert_eq!(
        st[0].get::<String, _>("Using_Gtid").unwrap(),
        "Slave_Pos",
        "GTID mode with the default version"
    );
    // Everything it read purged (the active file stays): it goes on.
    let last = files.last().unwrap().clone();
    exec(&mut c, &format!("PURGE BINARY LOGS TO '{last}'"));
    assert_eq!(binary_logs(&mut c)[0], last);
    exec(&mut c, "INSERT INTO a VALUES (99999, 'after purge', 0)");
    sync(&mut c, &m, &mut rep);
    assert_same(&mut c, &mut rep, "sm", &["a"]);
    assert_eq!(
        q1(&mut rep, "SELECT v FROM sm.a WHERE id = 99999"),
        "after purge"
    );
    exec(&mut rep, "STOP SLAVE");
}
