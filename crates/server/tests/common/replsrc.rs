//! Helpers of the replication-source end-to-end tests (e2e_replsrc*):
//! raw COM_REGISTER_SLAVE / COM_BINLOG_DUMP packets, the binlog's CRC,
//! table hashes compared between Strata and a MariaDB replica, waiting for
//! a replica to catch up.
use super::maria::MariaDb;
use super::{exec, q, q1};
use mysql::prelude::Queryable;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// COM_REGISTER_SLAVE for server id `sid`.
pub fn register_packet(sid: u32) -> Vec<u8> {
    let mut p = vec![0x15];
    p.extend_from_slice(&sid.to_le_bytes());
    p.extend_from_slice(&[4, b'h', b'o', b's', b't', 0, 0]);
    p.extend_from_slice(&3307u16.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p
}

/// COM_BINLOG_DUMP.
pub fn dump_packet(pos: u32, flags: u16, sid: u32, file: &str) -> Vec<u8> {
    let mut p = vec![0x12];
    p.extend_from_slice(&pos.to_le_bytes());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&sid.to_le_bytes());
    p.extend_from_slice(file.as_bytes());
    p
}

pub fn err_of(p: &[u8]) -> Option<(u16, String)> {
    (p.first() == Some(&0xFF)).then(|| {
        (
            u16::from_le_bytes([p[1], p[2]]),
            String::from_utf8_lossy(&p[9..]).into_owned(),
        )
    })
}

/// CRC-32 as the binlog has it (zlib's).
pub fn binlog_crc(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

pub fn setup(c: &mut mysql::Conn) {
    exec(c, "CREATE USER noprv");
    exec(c, "CREATE USER repl IDENTIFIED BY 'pw'");
    exec(c, "GRANT REPLICATION SLAVE ON *.* TO repl");
}

/// A hash of a table's rows in primary key order, and the rows.
pub fn table_hash(c: &mut mysql::Conn, db: &str, t: &str) -> (u64, Vec<String>) {
    let rows = q(c, &format!("SELECT * FROM {db}.{t} ORDER BY 1, 2"));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    rows.hash(&mut h);
    (h.finish(), rows)
}

pub fn assert_same(src: &mut mysql::Conn, rep: &mut mysql::Conn, db: &str, tables: &[&str]) {
    for t in tables {
        let (hs, rs) = table_hash(src, db, t);
        let (hr, rr) = table_hash(rep, db, t);
        if hs != hr {
            let first = rs.iter().zip(&rr).position(|(a, b)| a != b);
            panic!(
                "{db}.{t} differs: {} rows on Strata, {} on the replica; first difference at {first:?}: {:?} vs {:?}",
                rs.len(),
                rr.len(),
                first.map(|i| &rs[i]),
                first.map(|i| &rr[i])
            );
        }
    }
}

/// Waits until the replica has applied everything Strata has logged.
pub fn sync(src: &mut mysql::Conn, m: &MariaDb, rep: &mut mysql::Conn) {
    let want = q1(src, "SELECT @@gtid_binlog_pos");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let have = q1(rep, "SELECT @@gtid_slave_pos");
        if have == want {
            return;
        }
        if Instant::now() > deadline {
            let st: Vec<mysql::Row> = rep.query("SHOW SLAVE STATUS").unwrap();
            let err: Vec<String> = st
                .first()
                .map(|r| {
                    [
                        "Slave_IO_Running",
                        "Slave_SQL_Running",
                        "Last_IO_Error",
                        "Last_SQL_Error",
                    ]
                    .iter()
                    .map(|k| format!("{k}={:?}", r.get::<Option<String>, _>(*k).flatten()))
                    .collect()
                })
                .unwrap_or_default();
            let log = m.error_log();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            panic!("replica at {have}, Strata at {want}: {err:?}\n{tail:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
