//! Read-your-own-writes, rollback, commit durability across reopen,
//! statement rollback and savepoints, commit failure, counters.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use std::sync::Arc;
use std::time::Duration;
use txn::{Error, Isolation, LockMode, TxnDb, TxnOptions};

fn v(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

#[test]
fn read_own_writes_rollback_commit_and_reopen() {
    let dir = TempDir::new("basic");
    {
        let db = open(&dir, true);
        put_committed(&db, b"a", b"0");

        // Rollback discards.
        let mut t = db.begin(Isolation::RepeatableRead);
        t.put_locked(CF, b"a", b"1").unwrap();
        t.put_locked(CF, b"b", b"2").unwrap();
        assert_eq!(t.get(CF, b"a").unwrap(), v("1"));
        assert_eq!(t.get(CF, b"b").unwrap(), v("2"));
        t.delete_locked(CF, b"a").unwrap();
        assert_eq!(t.get(CF, b"a").unwrap(), None);
        assert_eq!(t.get_locked(CF, b"a", LockMode::Exclusive).unwrap(), None);
        assert_eq!(t.write_count(), 3);
        assert!(!t.is_read_only());
        // Others see nothing uncommitted.
        assert_eq!(db.get_latest(CF, b"a").unwrap(), v("0"));
        assert_eq!(db.get_latest(CF, b"b").unwrap(), None);
        t.rollback();
        assert_eq!(db.locked_rows(), 0);
        assert_eq!(db.get_latest(CF, b"a").unwrap(), v("0"));
        assert_eq!(db.get_latest(CF, b"b").unwrap(), None);

        // Drop = rollback.
        {
            let mut t = db.begin(Isolation::ReadCommitted);
            t.put_locked(CF, b"c", b"3").unwrap();
        }
        assert_eq!(db.locked_rows(), 0);
        assert_eq!(db.get_latest(CF, b"c").unwrap(), None);

        // Commit persists.
        let mut t = db.begin(Isolation::RepeatableRead);
        t.put_locked(CF, b"a", b"10").unwrap();
        t.put_locked(CF, b"d", b"4").unwrap();
        t.delete_locked(CF, b"d").unwrap();
        t.put_locked(CF, b"e", b"5").unwrap();
        t.commit().unwrap();
        assert_eq!(db.locked_rows(), 0);
        let s = db.stats();
        assert_eq!(s.commits, 2);
        assert_eq!(s.rollbacks, 2);
    }
    // Reopen (no clean close: the synced WAL must carry the commits).
    let db = open(&dir, true);
    let mut t = db.begin(Isolation::RepeatableRead);
    assert_eq!(t.get(CF, b"a").unwrap(), v("10"));
    assert_eq!(t.get(CF, b"b").unwrap(), None);
    assert_eq!(t.get(CF, b"c").unwrap(), None);
    assert_eq!(t.get(CF, b"d").unwrap(), None);
    assert_eq!(t.get(CF, b"e").unwrap(), v("5"));
    assert!(t.is_read_only());
    t.commit().unwrap();
}

#[test]
fn read_only_commit_writes_nothing() {
    let dir = TempDir::new("readonly");
    let db = open(&dir, true);
    put_committed(&db, b"k", b"v");
    let seq = db.db().latest_sequence();
    let mut t = db.begin(Isolation::RepeatableRead);
    assert_eq!(t.get_locked(CF, b"k", LockMode::Shared).unwrap(), v("v"));
    assert_eq!(t.lock_count(), 1);
    t.commit().unwrap();
    assert_eq!(db.db().latest_sequence(), seq);
    assert_eq!(db.locked_rows(), 0);
    // Writes fully undone by a statement rollback also write nothing.
    let mut t = db.begin(Isolation::RepeatableRead);
    t.begin_statement();
    t.put_locked(CF, b"k", b"w").unwrap();
    t.rollback_statement().unwrap();
    assert!(t.is_read_only());
    t.commit().unwrap();
    assert_eq!(db.db().latest_sequence(), seq);
    assert_eq!(db.get_latest(CF, b"k").unwrap(), v("v"));
}

#[test]
fn statement_rollback_undoes_only_that_statement() {
    let dir = TempDir::new("stmt");
    let db = open(&dir, false);
    put_committed(&db, b"x", b"orig");
    let mut t = db.begin(Isolation::RepeatableRead);
    t.begin_statement();
    t.put_locked(CF, b"a", b"1").unwrap();
    t.put_locked(CF, b"x", b"s1").unwrap();
    t.begin_statement();
    t.put_locked(CF, b"a", b"2").unwrap();
    t.delete_locked(CF, b"x").unwrap();
    t.put_locked(CF, b"b", b"new").unwrap();
    t.single_delete(CF, b"a");
    assert_eq!(t.get(CF, b"a").unwrap(), None);
    t.rollback_statement().unwrap();
    // The second statement's writes are gone, the first's remain; locks stay.
    assert_eq!(t.get(CF, b"a").unwrap(), v("1"));
    assert_eq!(t.get(CF, b"x").unwrap(), v("s1"));
    assert_eq!(t.get(CF, b"b").unwrap(), None);
    assert_eq!(t.write_count(), 2);
    assert_eq!(t.lock_count(), 3);
    let all = t
        .scan(CF, None, None, false)
        .unwrap()
        .collect_all()
        .unwrap();
    assert_eq!(
        all,
        vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"x".to_vec(), b"s1".to_vec())
        ]
    );
    // A third statement, committed.
    t.begin_statement();
    t.put_locked(CF, b"c", b"3").unwrap();
    t.commit().unwrap();
    assert_eq!(db.get_latest(CF, b"a").unwrap(), v("1"));
    assert_eq!(db.get_latest(CF, b"x").unwrap(), v("s1"));
    assert_eq!(db.get_latest(CF, b"b").unwrap(), None);
    assert_eq!(db.get_latest(CF, b"c").unwrap(), v("3"));
}

#[test]
fn named_savepoints() {
    let dir = TempDir::new("savepoints");
    let db = open(&dir, false);
    let mut t = db.begin(Isolation::RepeatableRead);
    t.put(CF, b"a", b"1");
    let sp1 = t.savepoint();
    t.put(CF, b"b", b"2");
    let sp2 = t.savepoint();
    t.put(CF, b"a", b"3");
    assert!(t.rollback_to_savepoint(&sp1).unwrap());
    assert_eq!(t.get(CF, b"a").unwrap(), v("1"));
    assert_eq!(t.get(CF, b"b").unwrap(), None);
    t.put(CF, b"c", b"4");
    t.put(CF, b"d", b"5");
    // sp2 was discarded by rolling back past it.
    assert!(!t.rollback_to_savepoint(&sp2).unwrap());
    assert_eq!(t.get(CF, b"d").unwrap(), v("5"));
    t.commit().unwrap();
    let mut r = db.begin(Isolation::ReadCommitted);
    let all = r
        .scan(CF, None, None, false)
        .unwrap()
        .collect_all()
        .unwrap();
    let keys: Vec<_> = all.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, vec![b"a".to_vec(), b"c".to_vec(), b"d".to_vec()]);
}

#[test]
fn single_delete_is_preserved_in_the_batch() {
    let dir = TempDir::new("sd");
    let db = open(&dir, false);
    put_committed(&db, b"i", b"");
    let mut t = db.begin(Isolation::RepeatableRead);
    t.lock(CF, b"i", LockMode::Exclusive).unwrap();
    t.single_delete(CF, b"i");
    t.commit().unwrap();
    assert_eq!(db.get_latest(CF, b"i").unwrap(), None);
    // After flush + compaction the single delete and the put cancel out and
    // nothing resurfaces.
    db.db().compact_range(CF, None, None).unwrap();
    assert_eq!(db.get_latest(CF, b"i").unwrap(), None);
}

#[test]
fn commit_failure_rolls_back_and_releases_locks() {
    let dir = TempDir::new("commitfail");
    let fault = lsm::vfs::FaultFs::new(Arc::new(lsm::vfs::OsFs));
    let eopts = lsm::Options {
        fs: Some(Arc::new(fault.clone())),
        ..engine_opts()
    };
    let db = TxnDb::new(
        lsm::Db::open(dir.path(), eopts).unwrap(),
        TxnOptions::default(),
    );
    let mut t = db.begin(Isolation::RepeatableRead);
    t.put_locked(CF, b"k", b"v").unwrap();
    fault.set(".log", true, true, lsm::vfs::FaultKind::Eio);
    match t.commit() {
        Err(Error::Engine(_)) => {}
        other => panic!("expected an engine error, got {other:?}"),
    }
    assert_eq!(db.locked_rows(), 0);
    assert_eq!(db.stats().rollbacks, 1);
    assert_eq!(db.stats().commits, 0);
    // The row is free for others.
    let mut t2 = db.begin(Isolation::RepeatableRead);
    t2.set_lock_wait_timeout(Duration::ZERO);
    t2.lock(CF, b"k", LockMode::Exclusive).unwrap();
    assert_eq!(t2.get(CF, b"k").unwrap(), None);
}

#[test]
fn column_families_are_separate() {
    let dir = TempDir::new("cfs");
    let db = open(&dir, false);
    let cf1 = db.db().create_cf("one", lsm::CfOptions::default()).unwrap();
    let mut t = db.begin(Isolation::RepeatableRead);
    t.put_locked(CF, b"k", b"default").unwrap();
    t.put_locked(cf1, b"k", b"one").unwrap();
    assert_eq!(t.get(CF, b"k").unwrap(), v("default"));
    assert_eq!(t.get(cf1, b"k").unwrap(), v("one"));
    let s: Vec<_> = t
        .scan(cf1, None, None, false)
        .unwrap()
        .collect_all()
        .unwrap();
    assert_eq!(s, vec![(b"k".to_vec(), b"one".to_vec())]);
    t.commit().unwrap();
    assert_eq!(db.get_latest(cf1, b"k").unwrap(), v("one"));
    assert_eq!(db.get_latest(CF, b"k").unwrap(), v("default"));
}

#[test]
fn reverse_comparator_scan_merges_in_engine_order() {
    let dir = TempDir::new("revcmp");
    let db = open(&dir, false);
    let cf = db
        .db()
        .create_cf(
            "rev",
            lsm::CfOptions {
                comparator: lsm::Comparator::ReverseBytewise,
                ..lsm::CfOptions::default()
            },
        )
        .unwrap();
    let mut t = db.begin(Isolation::ReadCommitted);
    for k in [b"a", b"c", b"e"] {
        t.put_locked(cf, k, b"old").unwrap();
    }
    t.commit().unwrap();
    let mut t = db.begin(Isolation::RepeatableRead);
    t.put(cf, b"b", b"new");
    t.put(cf, b"c", b"new");
    t.delete(cf, b"e");
    t.put(cf, b"f", b"new");
    let keys = |it: &mut txn::TxnIter| -> Vec<String> {
        it.collect_all()
            .unwrap()
            .into_iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(&k),
                    String::from_utf8_lossy(&v)
                )
            })
            .collect()
    };
    // Engine order is descending bytes; bounds are in that order.
    let mut it = t.scan(cf, None, None, false).unwrap();
    assert_eq!(keys(&mut it), ["f=new", "c=new", "b=new", "a=old"]);
    let mut it = t.scan(cf, Some(b"e"), Some(b"a"), false).unwrap();
    assert_eq!(keys(&mut it), ["c=new", "b=new"]);
    let mut it = t.scan(cf, Some(b"e"), Some(b"a"), true).unwrap();
    assert_eq!(keys(&mut it), ["b=new", "c=new"]);
}

#[test]
fn stats_count_waits() {
    let dir = TempDir::new("stats");
    let db = open(&dir, false);
    let mut a = db.begin(Isolation::RepeatableRead);
    a.lock(CF, b"k", LockMode::Exclusive).unwrap();
    let db2 = db.clone();
    let h = std::thread::spawn(move || {
        let mut b = db2.begin(Isolation::RepeatableRead);
        b.lock(CF, b"k", LockMode::Exclusive).unwrap();
        b.commit().unwrap();
    });
    while db.stats().row_lock_current_waits == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    a.commit().unwrap();
    h.join().unwrap();
    let s = db.stats();
    assert_eq!(s.row_lock_waits, 1);
    assert_eq!(s.row_lock_current_waits, 0);
    assert!(s.row_lock_time_micros >= 15_000, "{s:?}");
    assert!(s.row_lock_time_max_micros >= 15_000, "{s:?}");
    assert_eq!(s.commits, 2);
}

/// The annex commits in the writes' batch under its sequence number, and
/// rolls back with statements and savepoints.
#[test]
fn annex_follows_statements_and_commits_seq_keyed() {
    let dir = TempDir::new("annex");
    let db = open(&dir, true);
    let mut t = db.begin(Isolation::RepeatableRead);
    t.set_annex(CF, b"T", b"H".to_vec());
    t.begin_statement();
    t.put_locked(CF, b"a", b"1").unwrap();
    t.annex().unwrap().push(b"one");
    t.annex().unwrap().set_mark(7);
    assert_eq!(t.annex().unwrap().mark(), Some(7));
    t.begin_statement();
    t.put_locked(CF, b"b", b"2").unwrap();
    t.annex().unwrap().push(b"two");
    assert_eq!(t.annex().unwrap().mark(), None);
    t.rollback_statement().unwrap();
    assert_eq!(t.annex().unwrap().bytes(), b"Hone");
    assert_eq!(t.annex().unwrap().mark(), Some(7));
    let sp = t.savepoint();
    t.annex().unwrap().push(b"three");
    t.rollback_to_savepoint(&sp).unwrap();
    let before = db.db().latest_sequence();
    t.commit().unwrap();
    // Ops: a's put (seq before+1), then the annex (before+2).
    let mut key = b"T".to_vec();
    key.extend_from_slice(&(before + 2).to_be_bytes());
    assert_eq!(db.get_latest(CF, &key).unwrap(), v("Hone"));
    // An annex holding only its header writes nothing.
    let mut t = db.begin(Isolation::RepeatableRead);
    t.set_annex(CF, b"T", b"H".to_vec());
    t.put_locked(CF, b"c", b"3").unwrap();
    let before = db.db().latest_sequence();
    t.commit().unwrap();
    assert_eq!(db.db().latest_sequence(), before + 1);
}
