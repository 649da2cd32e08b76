//! Scan merge correctness: a seeded random model test. Committed data
//! (spread over memtables and table files), a transaction's own puts and
//! deletes (with statement rollbacks), commits by others after the
//! transaction's snapshot, and random ranges scanned forward and backward
//! are checked against BTreeMap models.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use std::collections::BTreeMap;
use txn::{Isolation, Txn, TxnDb};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn rand_key(rng: &mut Rng) -> Vec<u8> {
    let len = 1 + rng.below(3) as usize;
    (0..len).map(|_| b'a' + rng.below(4) as u8).collect()
}

fn rand_value(rng: &mut Rng) -> Vec<u8> {
    let len = rng.below(12) as usize;
    (0..len).map(|_| rng.below(256) as u8).collect()
}

fn expected(
    model: &Model,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    reverse: bool,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v: Vec<_> = model
        .iter()
        .filter(|(k, _)| lower.is_none_or(|l| k.as_slice() >= l))
        .filter(|(k, _)| upper.is_none_or(|u| k.as_slice() < u))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if reverse {
        v.reverse();
    }
    v
}

fn overlay(base: &Model, own: &BTreeMap<Vec<u8>, Option<Vec<u8>>>) -> Model {
    let mut m = base.clone();
    for (k, v) in own {
        match v {
            Some(v) => m.insert(k.clone(), v.clone()),
            None => m.remove(k),
        };
    }
    m
}

/// Commits random changes from a separate transaction.
fn commit_random(db: &TxnDb, rng: &mut Rng, model: &mut Model, n: u64) {
    let mut t = db.begin(Isolation::ReadCommitted);
    for _ in 0..n {
        let k = rand_key(rng);
        if rng.chance(70) {
            let v = rand_value(rng);
            t.put_locked(CF, &k, &v).unwrap();
            model.insert(k, v);
        } else {
            t.delete_locked(CF, &k).unwrap();
            model.remove(&k);
        }
    }
    t.commit().unwrap();
    if rng.chance(30) {
        db.db().flush().unwrap();
    }
}

fn rand_bound(rng: &mut Rng) -> Option<Vec<u8>> {
    if rng.chance(25) {
        None
    } else {
        Some(rand_key(rng))
    }
}

fn check_scans(t: &mut Txn, rng: &mut Rng, view: &Model, latest: &Model, round: u64) {
    for _ in 0..4 {
        let lower = rand_bound(rng);
        let upper = rand_bound(rng);
        let reverse = rng.chance(50);
        let (lo, hi) = (lower.as_deref(), upper.as_deref());
        let got = t.scan(CF, lo, hi, reverse).unwrap().collect_all().unwrap();
        assert_eq!(
            got,
            expected(view, lo, hi, reverse),
            "round {round}: scan {lower:?}..{upper:?} reverse={reverse}"
        );
        let got = t
            .scan_latest(CF, lo, hi, reverse)
            .unwrap()
            .collect_all()
            .unwrap();
        assert_eq!(
            got,
            expected(latest, lo, hi, reverse),
            "round {round}: scan_latest {lower:?}..{upper:?} reverse={reverse}"
        );
    }
}

#[test]
fn scan_merge_matches_model() {
    let seed = seed("scan_merge_matches_model");
    let mut rng = Rng::new(seed);
    let dir = TempDir::new("scanmodel");
    let db = open(&dir, false);
    let mut committed = Model::new();
    commit_random(&db, &mut rng, &mut committed, 150);
    for round in 0..150 {
        let n = rng.below(40);
        commit_random(&db, &mut rng, &mut committed, n);
        let mut t = db.begin(Isolation::RepeatableRead);
        t.take_snapshot();
        let snap = committed.clone();
        // Others commit after our snapshot (on keys we will not lock: the
        // model does not need locks, only views).
        let n = rng.below(30);
        commit_random(&db, &mut rng, &mut committed, n);
        let mut own: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        for _stmt in 0..1 + rng.below(4) {
            t.begin_statement();
            let before = own.clone();
            for _ in 0..rng.below(25) {
                let k = rand_key(&mut rng);
                if rng.chance(60) {
                    let v = rand_value(&mut rng);
                    t.put(CF, &k, &v);
                    own.insert(k, Some(v));
                } else {
                    t.delete(CF, &k);
                    own.insert(k, None);
                }
            }
            if rng.chance(25) {
                t.rollback_statement().unwrap();
                own = before;
            }
            let view = overlay(&snap, &own);
            let latest = overlay(&committed, &own);
            check_scans(&mut t, &mut rng, &view, &latest, round);
            // Point reads agree too.
            for _ in 0..8 {
                let k = rand_key(&mut rng);
                assert_eq!(
                    t.get(CF, &k).unwrap(),
                    view.get(&k).cloned(),
                    "round {round}: get"
                );
                assert_eq!(
                    t.get_latest(CF, &k).unwrap(),
                    latest.get(&k).cloned(),
                    "round {round}: get_latest"
                );
            }
        }
        if rng.chance(50) {
            t.commit().unwrap();
            for (k, v) in own {
                match v {
                    Some(v) => committed.insert(k, v),
                    None => committed.remove(&k),
                };
            }
        } else {
            t.rollback();
        }
    }
    // Everything committed is what the engine holds, before and after a
    // full compaction.
    let mut r = db.begin(Isolation::RepeatableRead);
    let all = r
        .scan(CF, None, None, false)
        .unwrap()
        .collect_all()
        .unwrap();
    assert_eq!(all, expected(&committed, None, None, false));
    drop(r);
    db.db().compact_range(CF, None, None).unwrap();
    let mut r = db.begin(Isolation::RepeatableRead);
    let all = r.scan(CF, None, None, true).unwrap().collect_all().unwrap();
    assert_eq!(all, expected(&committed, None, None, true));
}

#[test]
fn cursor_is_independent_of_later_writes() {
    let dir = TempDir::new("cursor");
    let db = open(&dir, false);
    put_committed(&db, b"a", b"1");
    put_committed(&db, b"c", b"3");
    let mut t = db.begin(Isolation::RepeatableRead);
    t.put(CF, b"b", b"2");
    let mut it = t.scan(CF, None, None, false).unwrap();
    assert_eq!(it.next().unwrap(), Some((&b"a"[..], &b"1"[..])));
    // Writes after the cursor was opened are not in it.
    t.put(CF, b"bb", b"x");
    t.delete(CF, b"c");
    let rest = it.collect_all().unwrap();
    assert_eq!(
        rest,
        vec![
            (b"b".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
    assert_eq!(it.next().unwrap(), None);
    // Empty and inverted ranges.
    assert!(t
        .scan(CF, Some(b"x"), Some(b"b"), false)
        .unwrap()
        .collect_all()
        .unwrap()
        .is_empty());
    assert!(t
        .scan(CF, Some(b"b"), Some(b"b"), true)
        .unwrap()
        .collect_all()
        .unwrap()
        .is_empty());
}
