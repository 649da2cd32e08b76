//! Consistent reads: REPEATABLE READ keeps one view for the transaction
//! (no non-repeatable reads, no phantoms in scans); READ COMMITTED sees
//! commits at its next statement; nobody sees uncommitted data; locking
//! reads see the latest committed value.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use txn::{Isolation, LockMode};

fn v(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn scan_keys(t: &mut txn::Txn) -> Vec<Vec<u8>> {
    t.scan(CF, Some(b"r"), Some(b"s"), false)
        .unwrap()
        .collect_all()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

#[test]
fn repeatable_read_keeps_its_view() {
    let dir = TempDir::new("rr");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"1");
    put_committed(&db, b"r1", b"x");

    let mut rr = db.begin(Isolation::RepeatableRead);
    rr.begin_statement();
    assert!(!rr.has_snapshot());
    assert_eq!(rr.get(CF, b"k").unwrap(), v("1"));
    assert!(rr.has_snapshot());
    assert_eq!(scan_keys(&mut rr), vec![b"r1".to_vec()]);

    // Another transaction commits an update and an insert into the range.
    let mut w = db.begin(Isolation::RepeatableRead);
    w.put_locked(CF, b"k", b"2").unwrap();
    w.put_locked(CF, b"r2", b"y").unwrap();
    w.put_locked(CF, b"other", b"z").unwrap();
    w.commit().unwrap();

    for _ in 0..2 {
        rr.begin_statement();
        // Non-repeatable read prevented.
        assert_eq!(rr.get(CF, b"k").unwrap(), v("1"));
        // Phantom prevented.
        assert_eq!(scan_keys(&mut rr), vec![b"r1".to_vec()]);
        // A key committed after the snapshot is invisible too.
        assert_eq!(rr.get(CF, b"other").unwrap(), None);
    }
    // A locking read is a current read: it sees the latest committed value.
    assert_eq!(rr.get_locked(CF, b"k", LockMode::Shared).unwrap(), v("2"));
    let latest: Vec<_> = rr
        .scan_latest(CF, Some(b"r"), Some(b"s"), false)
        .unwrap()
        .collect_all()
        .unwrap();
    assert_eq!(latest.len(), 2);
    // The consistent view is unchanged.
    assert_eq!(rr.get(CF, b"k").unwrap(), v("1"));
    rr.commit().unwrap();

    // A new transaction sees everything.
    let mut rr2 = db.begin(Isolation::RepeatableRead);
    assert_eq!(rr2.get(CF, b"k").unwrap(), v("2"));
    assert_eq!(scan_keys(&mut rr2), vec![b"r1".to_vec(), b"r2".to_vec()]);
}

#[test]
fn repeatable_read_view_starts_at_first_read() {
    let dir = TempDir::new("rrstart");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"1");
    let mut rr = db.begin(Isolation::RepeatableRead);
    // Committed after BEGIN but before the first read: visible (InnoDB).
    put_committed(&db, b"k", b"2");
    assert_eq!(rr.get(CF, b"k").unwrap(), v("2"));
    put_committed(&db, b"k", b"3");
    assert_eq!(rr.get(CF, b"k").unwrap(), v("2"));
    // WITH CONSISTENT SNAPSHOT pins at once.
    let mut rr2 = db.begin(Isolation::RepeatableRead);
    rr2.take_snapshot();
    put_committed(&db, b"k", b"4");
    assert_eq!(rr2.get(CF, b"k").unwrap(), v("3"));
}

#[test]
fn read_committed_sees_commits_at_next_statement() {
    let dir = TempDir::new("rc");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"1");
    put_committed(&db, b"r1", b"x");

    let mut rc = db.begin(Isolation::ReadCommitted);
    rc.begin_statement();
    assert_eq!(rc.get(CF, b"k").unwrap(), v("1"));
    assert_eq!(scan_keys(&mut rc), vec![b"r1".to_vec()]);
    assert!(rc.has_snapshot());

    put_committed(&db, b"r2", b"y");
    put_committed(&db, b"k", b"2");

    // Within the statement that scanned, the statement's view holds.
    assert_eq!(scan_keys(&mut rc), vec![b"r1".to_vec()]);
    assert_eq!(rc.get(CF, b"k").unwrap(), v("1"));

    // Next statement: fresh view.
    rc.begin_statement();
    assert!(!rc.has_snapshot());
    assert_eq!(rc.get(CF, b"k").unwrap(), v("2"));
    assert!(!rc.has_snapshot(), "RC point reads take no snapshot");
    assert_eq!(scan_keys(&mut rc), vec![b"r1".to_vec(), b"r2".to_vec()]);
    rc.commit().unwrap();
}

#[test]
fn no_dirty_reads() {
    let dir = TempDir::new("dirty");
    let db = open(&dir, false);
    put_committed(&db, b"k", b"1");
    let mut w = db.begin(Isolation::RepeatableRead);
    w.put_locked(CF, b"k", b"dirty").unwrap();
    w.put_locked(CF, b"r9", b"dirty").unwrap();
    w.delete_locked(CF, b"k2").unwrap();

    for iso in [Isolation::ReadCommitted, Isolation::RepeatableRead] {
        let mut r = db.begin(iso);
        r.begin_statement();
        assert_eq!(r.get(CF, b"k").unwrap(), v("1"));
        assert!(scan_keys(&mut r).is_empty());
        let all = r.scan(CF, None, None, true).unwrap().collect_all().unwrap();
        assert_eq!(all, vec![(b"k".to_vec(), b"1".to_vec())]);
        let latest = r
            .scan_latest(CF, None, None, false)
            .unwrap()
            .collect_all()
            .unwrap();
        assert_eq!(latest, vec![(b"k".to_vec(), b"1".to_vec())]);
        assert_eq!(db.get_latest(CF, b"k").unwrap(), v("1"));
    }
    w.rollback();
    let mut r = db.begin(Isolation::ReadCommitted);
    assert_eq!(r.get(CF, b"k").unwrap(), v("1"));
    assert_eq!(r.get(CF, b"r9").unwrap(), None);
}
