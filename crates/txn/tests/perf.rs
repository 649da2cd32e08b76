//! Overhead of the transaction layer over a raw engine point read
//! (ignored by default: `cargo test -p strata-txn --test perf -- --ignored --nocapture`).
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use std::time::Instant;
use txn::Isolation;

#[test]
#[ignore]
fn perf_point_reads() {
    let dir = TempDir::new("perf");
    let db = open(&dir, false);
    let mut t = db.begin(Isolation::ReadCommitted);
    for i in 0..10000u32 {
        t.put(CF, &i.to_be_bytes(), &[7u8; 100]);
    }
    t.commit().unwrap();
    let n = 300_000u32;
    let ro = lsm::ReadOptions::default();
    for round in 0..2 {
        let s = Instant::now();
        for i in 0..n {
            db.db().get_cf(&ro, CF, &(i % 10000).to_be_bytes()).unwrap();
        }
        let raw = s.elapsed();
        let s = Instant::now();
        for i in 0..n {
            db.get_latest(CF, &(i % 10000).to_be_bytes()).unwrap();
        }
        let latest = s.elapsed();
        let s = Instant::now();
        for i in 0..n {
            let mut t = db.begin(Isolation::ReadCommitted);
            t.begin_statement();
            t.get(CF, &(i % 10000).to_be_bytes()).unwrap();
            t.commit().unwrap();
        }
        let rc = s.elapsed();
        let s = Instant::now();
        for i in 0..n {
            let mut t = db.begin(Isolation::RepeatableRead);
            t.begin_statement();
            t.get(CF, &(i % 10000).to_be_bytes()).unwrap();
            t.commit().unwrap();
        }
        let rr = s.elapsed();
        let s = Instant::now();
        for i in 0..n {
            let mut t = db.begin(Isolation::RepeatableRead);
            t.get_locked(CF, &(i % 10000).to_be_bytes(), txn::LockMode::Exclusive)
                .unwrap();
            t.commit().unwrap();
        }
        let locked = s.elapsed();
        let per = |d: std::time::Duration| d.as_nanos() as f64 / n as f64;
        eprintln!("round {round}: raw {:.0} ns, get_latest {:.0} ns, RC txn {:.0} ns, RR txn {:.0} ns, locked RR {:.0} ns", per(raw), per(latest), per(rc), per(rr), per(locked));
    }
}
