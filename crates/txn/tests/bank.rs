//! Bank transfers: writers move money between random accounts under row
//! locks taken in random order (so deadlocks happen and are retried),
//! while readers sum every account in consistent reads. The total never
//! changes, and every reader sees exactly the total.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use txn::{Error, Isolation, LockMode, TxnDb};

const ACCOUNTS: u64 = 16;
const START: u64 = 1000;
const WRITERS: u64 = 8;
const TRANSFERS_PER_WRITER: u64 = 600;

fn key(i: u64) -> Vec<u8> {
    format!("acct{i:04}").into_bytes()
}

fn decode(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(v);
    u64::from_be_bytes(b)
}

/// One transfer attempt. Err = a lock error to retry after rollback.
fn transfer(db: &TxnDb, rng: &mut Rng) -> Result<bool, Error> {
    let a = rng.below(ACCOUNTS);
    let mut b = rng.below(ACCOUNTS - 1);
    if b >= a {
        b += 1;
    }
    let amount = 1 + rng.below(50);
    let mut t = db.begin(Isolation::RepeatableRead);
    t.set_lock_wait_timeout(Duration::from_secs(2));
    t.begin_statement();
    // Sometimes read both consistently first (pins a snapshot that goes
    // stale), sometimes take S first and upgrade (upgrade deadlocks).
    if rng.chance(30) {
        t.get(CF, &key(a))?;
        t.get(CF, &key(b))?;
    }
    let upgrade = rng.chance(30);
    let first_mode = if upgrade {
        LockMode::Shared
    } else {
        LockMode::Exclusive
    };
    let (x, y) = if rng.chance(50) { (a, b) } else { (b, a) };
    t.get_locked(CF, &key(x), first_mode)?;
    t.get_locked(CF, &key(y), first_mode)?;
    let va = decode(
        &t.get_locked(CF, &key(a), LockMode::Exclusive)?
            .unwrap_or_default(),
    );
    let vb = decode(
        &t.get_locked(CF, &key(b), LockMode::Exclusive)?
            .unwrap_or_default(),
    );
    if va < amount {
        t.commit()?;
        return Ok(false);
    }
    t.put(CF, &key(a), &(va - amount).to_be_bytes());
    t.put(CF, &key(b), &(vb + amount).to_be_bytes());
    // Own writes are visible to the transaction's reads.
    assert_eq!(decode(&t.get(CF, &key(a))?.unwrap()), va - amount);
    t.commit()?;
    Ok(true)
}

fn consistent_sum(db: &TxnDb, rng: &mut Rng) -> u64 {
    let iso = if rng.chance(50) {
        Isolation::RepeatableRead
    } else {
        Isolation::ReadCommitted
    };
    let mut t = db.begin(iso);
    t.begin_statement();
    let reverse = rng.chance(50);
    let mut it = t.scan(CF, Some(b"acct"), Some(b"acct~"), reverse).unwrap();
    let mut sum = 0;
    let mut n = 0;
    while let Some((_, v)) = it.next().unwrap() {
        sum += decode(v);
        n += 1;
    }
    assert_eq!(n, ACCOUNTS);
    if iso == Isolation::RepeatableRead {
        // Point reads in the same transaction agree with the scan.
        let s2: u64 = (0..ACCOUNTS)
            .map(|i| decode(&t.get(CF, &key(i)).unwrap().unwrap()))
            .sum();
        assert_eq!(s2, sum, "RR point reads disagree with the scan");
    }
    t.commit().unwrap();
    sum
}

#[test]
fn bank_transfers_keep_the_total() {
    let seed = seed("bank_transfers_keep_the_total");
    let dir = TempDir::new("bank");
    let db = open(&dir, false);
    let mut t = db.begin(Isolation::RepeatableRead);
    for i in 0..ACCOUNTS {
        t.put_locked(CF, &key(i), &START.to_be_bytes()).unwrap();
    }
    t.commit().unwrap();
    let total = ACCOUNTS * START;

    let stop = Arc::new(AtomicBool::new(false));
    let retries = Arc::new(AtomicU64::new(0));
    let done_transfers = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, retries, done) = (db.clone(), retries.clone(), done_transfers.clone());
            thread::spawn(move || {
                let mut rng = Rng::new(seed.wrapping_add(w));
                let mut ok = 0;
                while ok < TRANSFERS_PER_WRITER {
                    match transfer(&db, &mut rng) {
                        Ok(_) => ok += 1,
                        Err(Error::Deadlock | Error::LockWaitTimeout) => {
                            retries.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("transfer failed: {e}"),
                    }
                }
                done.fetch_add(ok, Ordering::Relaxed);
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, stop) = (db.clone(), stop.clone());
            thread::spawn(move || {
                let mut rng = Rng::new(seed.wrapping_add(100 + r));
                let mut sums = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    assert_eq!(consistent_sum(&db, &mut rng), total, "inconsistent sum");
                    sums += 1;
                }
                sums
            })
        })
        .collect();
    // A flusher so reads cross memtables and table files.
    let flusher = {
        let (db, stop) = (db.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                db.db().flush().unwrap();
                thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let start = Instant::now();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let sums: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    flusher.join().unwrap();
    let mut rng = Rng::new(seed);
    assert_eq!(consistent_sum(&db, &mut rng), total);
    let s = db.stats();
    eprintln!(
        "bank: {} transfers, {} retries, {} consistent sums in {:?}; {:?}",
        done_transfers.load(Ordering::Relaxed),
        retries.load(Ordering::Relaxed),
        sums,
        start.elapsed(),
        s
    );
    assert_eq!(
        done_transfers.load(Ordering::Relaxed),
        WRITERS * TRANSFERS_PER_WRITER
    );
    assert!(sums > 0);
    assert_eq!(db.locked_rows(), 0);
    assert_eq!(s.row_lock_current_waits, 0);
    // Reopen: the total survived.
    drop(db);
    let db = open(&dir, false);
    assert_eq!(consistent_sum(&db, &mut rng), total);
}
