//! Row locks: lost updates prevented, lock wait timeouts, deadlock
//! detection (2- and 3-transaction cycles, S->X upgrades), S/S
//! compatibility.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use txn::{Error, Isolation, LockMode, TxnDb};

fn wait_for_waiters(db: &TxnDb, n: u64) {
    let start = Instant::now();
    while db.stats().row_lock_current_waits < n {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "waiters never queued"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn lost_update_prevented() {
    let dir = TempDir::new("counter");
    let db = open(&dir, false);
    put_committed(&db, b"counter", b"0");
    const PER_THREAD: u64 = 300;
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let db = db.clone();
            thread::spawn(move || {
                let iso = if i == 0 {
                    Isolation::RepeatableRead
                } else {
                    Isolation::ReadCommitted
                };
                for _ in 0..PER_THREAD {
                    let mut t = db.begin(iso);
                    // A consistent read first pins an (RR) snapshot that
                    // soon goes stale: the locking read must still see the
                    // latest value.
                    let _ = t.get(CF, b"counter").unwrap();
                    let cur = t.get_locked(CF, b"counter", LockMode::Exclusive).unwrap();
                    let n: u64 = String::from_utf8(cur.unwrap()).unwrap().parse().unwrap();
                    t.put(CF, b"counter", (n + 1).to_string().as_bytes());
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        db.get_latest(CF, b"counter").unwrap(),
        Some((2 * PER_THREAD).to_string().into_bytes())
    );
    assert_eq!(db.locked_rows(), 0);
}

#[test]
fn lock_wait_timeout_then_continue() {
    let dir = TempDir::new("timeout");
    let db = open(&dir, false);
    let mut holder = db.begin(Isolation::RepeatableRead);
    holder.put_locked(CF, b"k", b"h").unwrap();

    let mut t = db.begin(Isolation::RepeatableRead);
    t.set_lock_wait_timeout(Duration::from_millis(200));
    t.put_locked(CF, b"other", b"mine").unwrap();
    let start = Instant::now();
    let e = t.get_locked(CF, b"k", LockMode::Exclusive).unwrap_err();
    let took = start.elapsed();
    assert!(matches!(e, Error::LockWaitTimeout), "{e:?}");
    assert!(e.is_retryable());
    assert!(took >= Duration::from_millis(190), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(db.stats().lock_wait_timeouts, 1);
    // The transaction stays usable with its earlier locks and writes.
    assert_eq!(t.get(CF, b"other").unwrap(), Some(b"mine".to_vec()));
    t.put_locked(CF, b"other2", b"x").unwrap();
    // S also conflicts with X.
    assert!(matches!(
        t.get_locked(CF, b"k", LockMode::Shared),
        Err(Error::LockWaitTimeout)
    ));
    t.commit().unwrap();
    assert_eq!(db.get_latest(CF, b"other2").unwrap(), Some(b"x".to_vec()));

    // A new waiter gets in once the holder commits.
    let db2 = db.clone();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let mut w = db2.begin(Isolation::RepeatableRead);
        let v = w.get_locked(CF, b"k", LockMode::Exclusive).unwrap();
        tx.send(Instant::now()).unwrap();
        w.commit().unwrap();
        v
    });
    wait_for_waiters(&db, 1);
    thread::sleep(Duration::from_millis(30));
    assert!(rx.try_recv().is_err(), "waiter got the lock while held");
    let released = Instant::now();
    holder.commit().unwrap();
    let got = rx.recv().unwrap();
    assert!(got >= released);
    // The waiter's current read sees the holder's commit.
    assert_eq!(h.join().unwrap(), Some(b"h".to_vec()));
    assert_eq!(db.locked_rows(), 0);
}

#[test]
fn shared_locks_are_compatible() {
    let dir = TempDir::new("shared");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"v");
    let mut a = db.begin(Isolation::RepeatableRead);
    let mut b = db.begin(Isolation::RepeatableRead);
    a.set_lock_wait_timeout(Duration::from_millis(50));
    b.set_lock_wait_timeout(Duration::from_millis(50));
    assert!(a.get_locked(CF, b"k", LockMode::Shared).unwrap().is_some());
    assert!(b.get_locked(CF, b"k", LockMode::Shared).unwrap().is_some());
    // Re-entrant.
    a.lock(CF, b"k", LockMode::Shared).unwrap();
    assert_eq!(a.lock_count(), 1);
    // Neither can upgrade while the other holds S.
    assert!(matches!(
        a.lock(CF, b"k", LockMode::Exclusive),
        Err(Error::LockWaitTimeout)
    ));
    b.commit().unwrap();
    // Now a is the only holder: the upgrade is immediate.
    let start = Instant::now();
    a.lock(CF, b"k", LockMode::Exclusive).unwrap();
    assert!(start.elapsed() < Duration::from_millis(40));
    assert_eq!(a.lock_count(), 1);
    let mut c = db.begin(Isolation::RepeatableRead);
    c.set_lock_wait_timeout(Duration::ZERO);
    assert!(matches!(
        c.lock(CF, b"k", LockMode::Shared),
        Err(Error::LockWaitTimeout)
    ));
    a.rollback();
    c.lock(CF, b"k", LockMode::Shared).unwrap();
}

/// Requests a lock for `t` on its own thread; hands back the transaction,
/// the outcome and how long it took.
fn spawn_lock(
    mut t: txn::Txn,
    key: &'static [u8],
    mode: LockMode,
) -> thread::JoinHandle<(txn::Txn, Result<(), Error>, Duration)> {
    thread::spawn(move || {
        let start = Instant::now();
        let r = t.lock(CF, key, mode);
        (t, r, start.elapsed())
    })
}

#[test]
fn two_transaction_deadlock() {
    let dir = TempDir::new("deadlock2");
    let db = open(&dir, false);
    let mut t1 = db.begin(Isolation::RepeatableRead);
    let mut t2 = db.begin(Isolation::RepeatableRead);
    t1.put_locked(CF, b"A", b"1").unwrap();
    t2.put_locked(CF, b"B", b"2").unwrap();
    // T1 waits for B.
    let h1 = spawn_lock(t1, b"B", LockMode::Exclusive);
    wait_for_waiters(&db, 1);
    // T2 asks for A: deadlock, reported at once (timeout is 20 s).
    let start = Instant::now();
    let e = t2.lock(CF, b"A", LockMode::Exclusive).unwrap_err();
    assert!(matches!(e, Error::Deadlock), "{e:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(db.stats().deadlocks, 1);
    t2.rollback();
    let (t1, r, _) = h1.join().unwrap();
    r.unwrap();
    let mut t1 = t1;
    t1.put(CF, b"B", b"1");
    t1.commit().unwrap();
    assert_eq!(db.get_latest(CF, b"A").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get_latest(CF, b"B").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.locked_rows(), 0);
}

#[test]
fn three_transaction_deadlock() {
    let dir = TempDir::new("deadlock3");
    let db = open(&dir, false);
    let mut t1 = db.begin(Isolation::RepeatableRead);
    let mut t2 = db.begin(Isolation::RepeatableRead);
    let mut t3 = db.begin(Isolation::RepeatableRead);
    t1.lock(CF, b"A", LockMode::Exclusive).unwrap();
    t2.lock(CF, b"B", LockMode::Exclusive).unwrap();
    t3.lock(CF, b"C", LockMode::Exclusive).unwrap();
    let h1 = spawn_lock(t1, b"B", LockMode::Exclusive); // T1 -> T2
    wait_for_waiters(&db, 1);
    let h2 = spawn_lock(t2, b"C", LockMode::Shared); // T2 -> T3
    wait_for_waiters(&db, 2);
    // T3 -> T1 closes the cycle.
    let start = Instant::now();
    let e = t3.lock(CF, b"A", LockMode::Shared).unwrap_err();
    assert!(matches!(e, Error::Deadlock), "{e:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    t3.rollback();
    // T2 gets C, commits, then T1 gets B.
    let (t2, r2, _) = h2.join().unwrap();
    r2.unwrap();
    t2.commit().unwrap();
    let (t1, r1, _) = h1.join().unwrap();
    r1.unwrap();
    t1.commit().unwrap();
    assert_eq!(db.stats().deadlocks, 1);
    assert_eq!(db.locked_rows(), 0);
}

#[test]
fn upgrade_deadlock() {
    let dir = TempDir::new("upgrade");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"0");
    let mut t1 = db.begin(Isolation::RepeatableRead);
    let mut t2 = db.begin(Isolation::RepeatableRead);
    t1.get_locked(CF, b"k", LockMode::Shared).unwrap();
    t2.get_locked(CF, b"k", LockMode::Shared).unwrap();
    let h1 = spawn_lock(t1, b"k", LockMode::Exclusive);
    wait_for_waiters(&db, 1);
    let start = Instant::now();
    let e = t2.lock(CF, b"k", LockMode::Exclusive).unwrap_err();
    assert!(matches!(e, Error::Deadlock), "{e:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    t2.rollback();
    let (mut t1, r, _) = h1.join().unwrap();
    r.unwrap();
    t1.put(CF, b"k", b"1");
    t1.commit().unwrap();
    assert_eq!(db.get_latest(CF, b"k").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn upgrade_waits_ahead_of_new_waiters() {
    let dir = TempDir::new("upgradeq");
    let db = open(&dir, false);
    let mut t1 = db.begin(Isolation::RepeatableRead);
    let mut t2 = db.begin(Isolation::RepeatableRead);
    let t3 = db.begin(Isolation::RepeatableRead);
    t1.lock(CF, b"k", LockMode::Shared).unwrap();
    t2.lock(CF, b"k", LockMode::Shared).unwrap();
    // T3 queues for X behind both S holders.
    let h3 = spawn_lock(t3, b"k", LockMode::Exclusive);
    wait_for_waiters(&db, 1);
    // T1 upgrades: waits only for T2 (ahead of T3), no deadlock.
    let h1 = spawn_lock(t1, b"k", LockMode::Exclusive);
    wait_for_waiters(&db, 2);
    t2.commit().unwrap();
    let (t1, r1, _) = h1.join().unwrap();
    r1.unwrap();
    assert_eq!(db.stats().row_lock_current_waits, 1);
    t1.commit().unwrap();
    let (t3, r3, _) = h3.join().unwrap();
    r3.unwrap();
    t3.commit().unwrap();
    assert_eq!(db.stats().deadlocks, 0);
}

#[test]
fn without_detection_a_deadlock_times_out() {
    let dir = TempDir::new("nodetect");
    let db = TxnDb::new(
        lsm::Db::open(dir.path(), engine_opts()).unwrap(),
        txn::TxnOptions {
            deadlock_detect: false,
            lock_wait_timeout: Duration::from_millis(300),
            sync: false,
        },
    );
    let mut t1 = db.begin(Isolation::RepeatableRead);
    let mut t2 = db.begin(Isolation::RepeatableRead);
    t1.lock(CF, b"A", LockMode::Exclusive).unwrap();
    t2.lock(CF, b"B", LockMode::Exclusive).unwrap();
    t1.set_lock_wait_timeout(Duration::from_secs(20));
    let h1 = spawn_lock(t1, b"B", LockMode::Exclusive);
    wait_for_waiters(&db, 1);
    let e = t2.lock(CF, b"A", LockMode::Exclusive).unwrap_err();
    assert!(matches!(e, Error::LockWaitTimeout), "{e:?}");
    drop(t2);
    let (_t1, r, _) = h1.join().unwrap();
    r.unwrap();
    assert_eq!(db.stats().deadlocks, 0);
}

#[test]
fn many_waiters_all_served() {
    // X waiters and S waiters mixed on one hot key: everyone gets through.
    let dir = TempDir::new("hot");
    let db = open(&dir, false);
    put_committed(&db, b"hot", b"0");
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let db = db.clone();
            thread::spawn(move || {
                for _ in 0..100 {
                    let mut t = db.begin(Isolation::ReadCommitted);
                    if i % 3 == 0 {
                        t.get_locked(CF, b"hot", LockMode::Shared).unwrap();
                    } else {
                        let n: u64 = String::from_utf8(
                            t.get_locked(CF, b"hot", LockMode::Exclusive)
                                .unwrap()
                                .unwrap(),
                        )
                        .unwrap()
                        .parse()
                        .unwrap();
                        t.put(CF, b"hot", (n + 1).to_string().as_bytes());
                    }
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(db.get_latest(CF, b"hot").unwrap(), Some(b"400".to_vec()));
    assert_eq!(db.stats().deadlocks, 0);
    assert_eq!(db.locked_rows(), 0);
}

#[test]
fn random_lock_stress_keeps_exclusion() {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    let seed = seed("random_lock_stress_keeps_exclusion");
    let dir = TempDir::new("lockstress");
    let db = open(&dir, false);
    // key -> (exclusive holder, shared holders)
    type Held = HashMap<u64, (Option<u64>, Vec<u64>)>;
    let held: Arc<Mutex<Held>> = Arc::default();
    let threads: Vec<_> = (0..6)
        .map(|w| {
            let (db, held) = (db.clone(), held.clone());
            thread::spawn(move || {
                let mut rng = Rng::new(seed.wrapping_add(w));
                let (mut done, mut deadlocks) = (0, 0);
                while done < 300 {
                    let mut t = db.begin(Isolation::RepeatableRead);
                    t.set_lock_wait_timeout(Duration::from_secs(5));
                    let mut mine: Vec<(u64, LockMode)> = Vec::new();
                    let mut failed = false;
                    for _ in 0..1 + rng.below(4) {
                        let k = rng.below(6);
                        let mode = if rng.chance(50) {
                            LockMode::Shared
                        } else {
                            LockMode::Exclusive
                        };
                        match t.lock(CF, &k.to_be_bytes(), mode) {
                            Ok(()) => {
                                let mut h = held.lock().unwrap();
                                let e = h.entry(k).or_default();
                                let id = t.id();
                                if let Some(x) = e.0 {
                                    assert_eq!(x, id, "key {k}: X held by {x}, granted to {id}");
                                }
                                if mode == LockMode::Exclusive {
                                    assert!(
                                        e.1.iter().all(|s| *s == id),
                                        "key {k}: X granted to {id} while S held by {:?}",
                                        e.1
                                    );
                                    e.0 = Some(id);
                                } else if e.0 != Some(id) && !e.1.contains(&id) {
                                    e.1.push(id);
                                }
                                mine.push((k, mode));
                            }
                            Err(Error::Deadlock) => {
                                deadlocks += 1;
                                failed = true;
                                break;
                            }
                            Err(e) => panic!("unexpected {e:?}"),
                        }
                    }
                    {
                        let mut h = held.lock().unwrap();
                        for (k, _) in &mine {
                            if let Some(e) = h.get_mut(k) {
                                if e.0 == Some(t.id()) {
                                    e.0 = None;
                                }
                                e.1.retain(|s| *s != t.id());
                            }
                        }
                    }
                    if failed {
                        t.rollback();
                    } else {
                        t.commit().unwrap();
                        done += 1;
                    }
                }
                deadlocks
            })
        })
        .collect();
    let deadlocks: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!("lock stress: {deadlocks} deadlocks; {:?}", db.stats());
    assert_eq!(db.stats().lock_wait_timeouts, 0);
    assert_eq!(db.locked_rows(), 0);
}
