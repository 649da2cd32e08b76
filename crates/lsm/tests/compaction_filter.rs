//! Compaction filters: compactions remove what the filter says, flushes never
//! consult it, a version a live snapshot can read is never offered, a removed
//! value never lets an older version of its key resurface, and a manual
//! compaction rewrites last-level files only when the factory has a filter.
mod common;

use common::temp_dir;
use lsm::{
    CfOptions, CompactionFilter, CompactionFilterFactory, Db, Decision, FilterContext,
    FilterFactoryRef, Options, ReadOptions, DEFAULT_CF,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Removes values starting with `x` while `on`; counts what it was offered.
#[derive(Default)]
struct Factory {
    on: AtomicBool,
    offered: Arc<AtomicU64>,
}

struct Filter {
    offered: Arc<AtomicU64>,
}

impl CompactionFilter for Filter {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> Decision {
        self.offered.fetch_add(1, Ordering::Relaxed);
        if value.starts_with(b"x") {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }
}

impl CompactionFilterFactory for Factory {
    fn name(&self) -> &str {
        "test-x-filter"
    }
    fn create(&self, _ctx: &FilterContext) -> Option<Box<dyn CompactionFilter>> {
        self.on.load(Ordering::Relaxed).then(|| {
            Box::new(Filter {
                offered: self.offered.clone(),
            }) as Box<dyn CompactionFilter>
        })
    }
}

fn open(dir: &std::path::Path) -> (Db, Arc<Factory>) {
    let f = Arc::new(Factory::default());
    f.on.store(true, Ordering::Relaxed);
    let db = Db::open(
        dir,
        Options {
            default_cf: CfOptions {
                compaction_filter: Some(FilterFactoryRef(f.clone())),
                ..CfOptions::default()
            },
            ..Options::default()
        },
    )
    .unwrap();
    (db, f)
}

/// Point entries (tombstones included) in the table files.
fn entries(db: &Db) -> u64 {
    db.sst_files().iter().map(|f| f.entries).sum()
}

/// `key` as the snapshot `snap` reads it.
fn get_at(db: &Db, snap: &lsm::Snapshot, key: &[u8]) -> Option<Vec<u8>> {
    let at = ReadOptions {
        snapshot: Some(snap.clone()),
        ..Default::default()
    };
    db.get_cf(&at, DEFAULT_CF, key).unwrap()
}

fn compact(db: &Db) {
    db.compact_range(DEFAULT_CF, None, None).unwrap();
}

#[test]
fn removes_what_the_filter_says_and_flush_keeps_all() {
    let dir = temp_dir("cfilter-basic");
    let (db, f) = open(&dir);
    for i in 0..100u32 {
        let v: &[u8] = if i % 2 == 0 { b"xdead" } else { b"alive" };
        db.put(format!("k{i:03}").as_bytes(), v).unwrap();
    }
    db.flush().unwrap();
    // A flush does not filter.
    assert_eq!(db.get(b"k000").unwrap().as_deref(), Some(&b"xdead"[..]));
    assert_eq!(entries(&db), 100);
    assert_eq!(db.stats().compaction_filtered, 0);
    compact(&db);
    for i in 0..100u32 {
        let got = db.get(format!("k{i:03}").as_bytes()).unwrap();
        assert_eq!(got.is_some(), i % 2 == 1, "k{i:03}");
    }
    // Bottommost with no snapshot: the removed values leave no tombstone.
    assert_eq!(entries(&db), 50);
    assert_eq!(db.stats().compaction_filtered, 50);
    assert_eq!(f.offered.load(Ordering::Relaxed), 100);
}

#[test]
fn snapshot_keeps_what_it_reads() {
    let dir = temp_dir("cfilter-snap");
    let (db, _f) = open(&dir);
    db.put(b"a", b"xold").unwrap();
    let snap = db.snapshot();
    compact(&db);
    // The snapshot can read "a": the filter was never asked about it.
    assert_eq!(get_at(&db, &snap, b"a").as_deref(), Some(&b"xold"[..]));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"xold"[..]));
    assert_eq!(db.stats().compaction_filtered, 0);
    drop(snap);
    compact(&db);
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(entries(&db), 0);
}

#[test]
fn removed_value_does_not_resurrect_older_version() {
    let dir = temp_dir("cfilter-resurrect");
    let (db, f) = open(&dir);
    // An older, kept version in the last level...
    db.put(b"k", b"old-kept").unwrap();
    compact(&db);
    // ...read by a snapshot, then overwritten with a value the filter removes.
    let snap = db.snapshot();
    db.put(b"k", b"xnew").unwrap();
    compact(&db);
    assert!(db.stats().compaction_filtered >= 1);
    // The latest state is "deleted", not the older version.
    assert_eq!(db.get(b"k").unwrap(), None);
    assert_eq!(get_at(&db, &snap, b"k").as_deref(), Some(&b"old-kept"[..]));
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    assert!(!it.valid(), "the filtered key is visible to an iterator");
    drop(it);
    drop(snap);
    // Nothing reads the old version any more: all of it goes.
    f.on.store(false, Ordering::Relaxed);
    compact(&db);
    assert_eq!(db.get(b"k").unwrap(), None);
    assert_eq!(entries(&db), 0);
}

#[test]
fn last_level_rewritten_only_with_a_filter() {
    let dir = temp_dir("cfilter-last");
    let (db, f) = open(&dir);
    f.on.store(false, Ordering::Relaxed);
    db.put(b"a", b"xsoon").unwrap();
    db.put(b"b", b"keep").unwrap();
    compact(&db);
    let before = db.stats().compactions;
    // Already compacted, no filter: the last level is left alone.
    compact(&db);
    assert_eq!(db.stats().compactions, before);
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"xsoon"[..]));
    // The filter now has work: the last level's file is rewritten.
    f.on.store(true, Ordering::Relaxed);
    compact(&db);
    assert_eq!(db.stats().compactions, before + 1);
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"keep"[..]));
    assert_eq!(entries(&db), 1);
}
