//! Checkpoints, ingestion, column families and delete-range on real files.
mod common;

use common::temp_dir;
use lsm::db::SstFileWriter;
use lsm::vfs::OsFs;
use lsm::{CfOptions, Comparator, Db, Options, ReadOptions};

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn checkpoint_is_a_consistent_openable_copy() {
    let dir = temp_dir("ckpt");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..5000 {
        db.put(&k(i), b"old").unwrap();
    }
    db.flush().unwrap();
    for i in 0..100 {
        db.put(&k(i), b"new").unwrap(); // only in the memtable + WAL
    }
    let info = db.checkpoint(dir.join("ckpt")).unwrap();
    assert!(info.sequence >= 5100, "{info:?}");
    assert!(info.files >= 3 && info.bytes > 0, "{info:?}");
    for i in 0..100 {
        db.put(&k(i), b"after").unwrap();
    }
    assert!(
        db.checkpoint(dir.join("ckpt")).is_err(),
        "existing target must be refused"
    );
    // An empty directory is a fine target.
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    db.checkpoint(dir.join("empty")).unwrap();
    db.close().unwrap();
    let c = Db::open(dir.join("ckpt"), Options::default()).unwrap();
    assert_eq!(c.get(&k(5)).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(c.get(&k(4000)).unwrap().as_deref(), Some(&b"old"[..]));
    let mut it = c.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 5000);
    c.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ingest_places_files_low_and_overlapping_files_win() {
    let dir = temp_dir("ingest");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    let opts = CfOptions::default();
    // Disjoint range: goes to the last level untouched.
    let p1 = dir.join("a.sst");
    let mut w = SstFileWriter::create(&OsFs, &p1, &opts).unwrap();
    for i in 2000..3000 {
        w.put(&k(i), b"ingested").unwrap();
    }
    assert!(
        w.put(&k(10), b"x").is_err(),
        "out of order keys must be refused"
    );
    w.finish().unwrap();
    // Overlapping range: must override the existing values.
    let p2 = dir.join("b.sst");
    let mut w = SstFileWriter::create(&OsFs, &p2, &opts).unwrap();
    for i in 500..1500 {
        w.put(&k(i), b"ingested").unwrap();
    }
    w.finish().unwrap();
    db.ingest(lsm::DEFAULT_CF, &[&p1, &p2]).unwrap();
    assert_eq!(db.get(&k(100)).unwrap().as_deref(), Some(&b"db"[..]));
    assert_eq!(db.get(&k(700)).unwrap().as_deref(), Some(&b"ingested"[..]));
    assert_eq!(db.get(&k(2500)).unwrap().as_deref(), Some(&b"ingested"[..]));
    let levels = db.level_summary(lsm::DEFAULT_CF);
    assert_eq!(
        levels[6].0, 1,
        "disjoint file should land in the last level: {levels:?}"
    );
    db.put(&k(2500), b"later").unwrap();
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    assert_eq!(db.get(&k(2500)).unwrap().as_deref(), Some(&b"later"[..]));
    assert_eq!(db.get(&k(700)).unwrap().as_deref(), Some(&b"ingested"[..]));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn column_families_are_separate_and_persist() {
    let dir = temp_dir("cf");
    let rev = CfOptions {
        comparator: Comparator::ReverseBytewise,
        ..CfOptions::default()
    };
    {
        let db = Db::open_cf(&dir, Options::default(), &[("rev", rev.clone())]).unwrap();
        let cf = db.cf("rev").unwrap();
        let mut b = lsm::WriteBatch::new();
        b.put(b"a", b"default");
        b.put_cf(cf.0, b"a", b"rev-a");
        b.put_cf(cf.0, b"b", b"rev-b");
        db.write(Default::default(), b).unwrap();
        let mut it = db.iter_cf(ReadOptions::default(), cf).unwrap();
        it.seek_to_first();
        assert_eq!(it.key(), b"b", "reverse comparator orders b before a");
        let tmp = db.create_cf("tmp", CfOptions::default()).unwrap();
        db.drop_cf(tmp).unwrap();
        assert!(db.create_cf("rev", CfOptions::default()).is_err());
    }
    let db = Db::open_cf(&dir, Options::default(), &[("rev", rev)]).unwrap();
    let cf = db.cf("rev").unwrap();
    assert_eq!(
        db.get_cf(&ReadOptions::default(), cf, b"a")
            .unwrap()
            .as_deref(),
        Some(&b"rev-a"[..])
    );
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"default"[..]));
    assert!(db.cf("tmp").is_none());
    // The per-CF conveniences touch only their column family.
    let get = |c, k: &[u8]| db.get_cf(&ReadOptions::default(), c, k).unwrap();
    db.put_cf(cf, b"c", b"rev-c").unwrap();
    db.delete_cf(cf, b"b").unwrap();
    db.single_delete(cf, b"c").unwrap();
    db.put_cf(cf, b"d", b"rev-d").unwrap();
    db.single_delete(lsm::DEFAULT_CF, b"a").unwrap();
    assert_eq!(get(cf, b"b"), None);
    assert_eq!(get(cf, b"c"), None);
    assert_eq!(get(cf, b"d").as_deref(), Some(&b"rev-d"[..]));
    assert_eq!(get(cf, b"a").as_deref(), Some(&b"rev-a"[..]));
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"d").unwrap(), None);
    let wrong = Db::open_cf(dir.join("x"), Options::default(), &[]);
    assert!(wrong.is_ok());
    drop(db);
    let mismatch = Db::open_cf(&dir, Options::default(), &[("rev", CfOptions::default())]);
    assert!(
        mismatch.is_err(),
        "opening with another comparator must fail"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn delete_range_hides_and_compaction_reclaims() {
    let dir = temp_dir("delrange");
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 0..20_000 {
        db.put(&k(i), &[1u8; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    let before = db.live_table_bytes();
    db.delete_range(lsm::DEFAULT_CF, &k(1000), &k(19_000))
        .unwrap();
    assert!(db.get(&k(5000)).unwrap().is_none());
    assert!(db.get(&k(999)).unwrap().is_some());
    assert!(db.get(&k(19_000)).unwrap().is_some());
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    let after = db.live_table_bytes();
    assert!(
        after * 5 < before,
        "space not reclaimed: {before} -> {after}"
    );
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 2000);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prefix_iteration_stays_in_prefix_and_uses_prefix_bloom() {
    let dir = temp_dir("prefix");
    let cf = CfOptions {
        prefix_len: Some(4),
        write_buffer_size: 4 << 10,
        ..CfOptions::default()
    };
    let db = Db::open(
        &dir,
        Options {
            default_cf: cf,
            ..Options::default()
        },
    )
    .unwrap();
    for p in ["aaaa", "bbbb", "dddd"] {
        for i in 0..300 {
            db.put(format!("{p}{i:05}").as_bytes(), b"v").unwrap();
        }
        db.flush().unwrap(); // one table per prefix
    }
    let ro = ReadOptions {
        prefix_same_as_start: true,
        ..Default::default()
    };
    let mut it = db.iter(ro.clone()).unwrap();
    it.seek(b"bbbb00100");
    let mut n = 0;
    while it.valid() {
        assert!(
            it.key().starts_with(b"bbbb"),
            "left the prefix: {:?}",
            String::from_utf8_lossy(it.key())
        );
        n += 1;
        it.next();
    }
    assert_eq!(n, 200);
    // A prefix no table holds: nothing, and the next prefix is not returned.
    it.seek(b"cccc00000");
    assert!(!it.valid());
    it.status().unwrap();
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn direct_reads_return_the_same_data() {
    let dir = temp_dir("direct");
    let opts = Options {
        use_direct_reads: true,
        block_cache_size: 0,
        ..Options::default()
    };
    let db = Db::open(&dir, opts.clone()).unwrap();
    for i in 0..20_000 {
        db.put(&k(i), format!("value-{i}").as_bytes()).unwrap();
    }
    db.close().unwrap();
    let db = Db::open(&dir, opts).unwrap();
    for i in (0..20_000).step_by(7) {
        assert_eq!(
            db.get(&k(i)).unwrap(),
            Some(format!("value-{i}").into_bytes())
        );
    }
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_last();
    assert_eq!(it.key(), k(19_999).as_slice());
    assert!(db.stats().bytes_read > 0);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

fn scan_all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

#[test]
fn ingest_over_bottom_level_data_wins_in_get_scan_and_compaction() {
    let dir = temp_dir("ingest-bottom");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    let levels = db.level_summary(lsm::DEFAULT_CF);
    assert!(
        levels[6].0 > 0,
        "old data should be at the bottom: {levels:?}"
    );
    let p = dir.join("over.sst");
    let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
    for i in 500..1500 {
        w.put(&k(i), b"ingested").unwrap();
    }
    w.finish().unwrap();
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    let want = |i: u32| -> &'static [u8] {
        if i < 500 {
            b"db"
        } else {
            b"ingested"
        }
    };
    let check = |db: &Db, when: &str| {
        for i in (0..1500).step_by(37) {
            assert_eq!(
                db.get(&k(i)).unwrap().as_deref(),
                Some(want(i)),
                "{when}: get {i}"
            );
        }
        let all = scan_all(db);
        assert_eq!(all.len(), 1500, "{when}");
        for (j, (key, v)) in all.iter().enumerate() {
            assert_eq!(key, &k(j as u32), "{when}");
            assert_eq!(v.as_slice(), want(j as u32), "{when}: scan {j}");
        }
    };
    check(&db, "after ingest");
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    check(&db, "after compaction");
    db.close().unwrap();
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    check(&db, "after reopen");
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn single_delete_after_put_delete_put_history_does_not_resurrect_old_values() {
    // put a / single-delete / put b / single-delete: the first single delete
    // is dropped in the flush (shadowed by put b); when the second one meets
    // put b in a compaction, put a still lives in a deeper level and must
    // stay hidden.
    let dir = temp_dir("sd-history");
    let opts = Options {
        default_cf: CfOptions {
            dynamic_level_bytes: false,
            level0_compaction_trigger: 1,
            ..CfOptions::default()
        },
        ..Options::default()
    };
    let db = Db::open(&dir, opts.clone()).unwrap();
    let sd = |db: &Db, key: &[u8]| {
        let mut b = lsm::WriteBatch::new();
        b.single_delete_cf(0, key);
        db.write(Default::default(), b).unwrap();
    };
    // put a, at the bottom level (an ingested file nothing overlaps).
    let p = dir.join("a.sst");
    let mut w = SstFileWriter::create(&OsFs, &p, &opts.default_cf).unwrap();
    w.put(b"k", b"a").unwrap();
    w.put(b"z", b"keeps the range wide").unwrap();
    w.finish().unwrap();
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    assert_eq!(
        db.level_summary(lsm::DEFAULT_CF)[6].0,
        1,
        "put a at the bottom"
    );
    sd(&db, b"k");
    db.put(b"k", b"b").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"b"[..]));
    let levels = db.level_summary(lsm::DEFAULT_CF);
    assert!(
        levels[1].0 == 1 && levels[6].0 == 1,
        "put b above put a: {levels:?}"
    );
    sd(&db, b"k");
    assert_eq!(db.get(b"k").unwrap(), None);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"k").unwrap(), None, "{}", db.describe_levels());
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None, "{}", db.describe_levels());
    assert_eq!(
        db.get(b"z").unwrap().as_deref(),
        Some(&b"keeps the range wide"[..])
    );
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bottom_level_values_lose_their_sequence_but_no_reader_notices() {
    let dir = temp_dir("seqzero");
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 0..3000 {
        db.put(&k(i), b"v1").unwrap();
    }
    let snap = db.snapshot();
    for i in 0..1000 {
        db.put(&k(i), b"v2").unwrap();
    }
    db.delete(&k(5)).unwrap();
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    let at = |db: &Db, s: Option<lsm::Snapshot>, i: u32| {
        db.get_cf(
            &ReadOptions {
                snapshot: s,
                ..Default::default()
            },
            lsm::DEFAULT_CF,
            &k(i),
        )
        .unwrap()
    };
    let check = |db: &Db, when: &str| {
        for i in [0u32, 5, 999, 1000, 2999] {
            let want: Option<&[u8]> = match i {
                5 => None,
                0..=999 => Some(b"v2"),
                _ => Some(b"v1"),
            };
            assert_eq!(at(db, None, i).as_deref(), want, "{when}: key {i}");
        }
    };
    // The snapshot still sees v1 under v2: both versions kept, the older one
    // (visible to every snapshot) may be zeroed, the newer one may not.
    for i in [0u32, 5, 999, 2999] {
        assert_eq!(
            at(&db, Some(snap.clone()), i).as_deref(),
            Some(&b"v1"[..]),
            "snapshot key {i}"
        );
    }
    check(&db, "with a snapshot");
    drop(snap);
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    check(&db, "after compaction");
    let levels = db.level_summary(lsm::DEFAULT_CF);
    assert_eq!(
        levels.iter().filter(|(n, _)| *n > 0).count(),
        1,
        "{levels:?}"
    );
    // Every table file now holds sequence 0 only (smallest and largest).
    let ssts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    assert!(!ssts.is_empty());
    for p in &ssts {
        let f = lsm::vfs::Fs::open(&OsFs, p).unwrap();
        let t = lsm::sstable::Table::open(
            f,
            "t",
            Comparator::Bytewise,
            None,
            Default::default(),
            None,
            true,
        )
        .unwrap();
        assert_eq!(t.properties().largest_seq, 0, "{}", p.display());
    }
    // New writes after zeroed values win; a delete-range hides zeroed data.
    db.put(&k(2999), b"v3").unwrap();
    db.delete_range(lsm::DEFAULT_CF, &k(0), &k(10)).unwrap();
    assert_eq!(at(&db, None, 2999).as_deref(), Some(&b"v3"[..]));
    assert_eq!(at(&db, None, 3), None);
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    assert_eq!(at(&db, None, 2999).as_deref(), Some(&b"v3"[..]));
    assert_eq!(at(&db, None, 3), None);
    db.close().unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(at(&db, None, 2999).as_deref(), Some(&b"v3"[..]));
    assert_eq!(at(&db, None, 11).as_deref(), Some(&b"v2"[..]));
    db.put(&k(11), b"v4").unwrap();
    assert_eq!(at(&db, None, 11).as_deref(), Some(&b"v4"[..]));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ingest_after_snapshots_hides_entries_from_older_snapshots() {
    let dir = temp_dir("ingest-snap");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    db.put(b"a", b"before").unwrap();
    let write = |name: &str, from: u32| {
        let p = dir.join(name);
        let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
        for i in from..from + 100 {
            w.put(&k(i), b"loaded").unwrap();
        }
        w.finish().unwrap();
        p
    };
    let at = |snap: &lsm::Snapshot, key: &[u8]| {
        let o = ReadOptions {
            snapshot: Some(snap.clone()),
            ..Default::default()
        };
        db.get_cf(&o, lsm::DEFAULT_CF, key).unwrap()
    };
    // Plain ingest: a file that overlaps nothing keeps sequence number 0, so even an
    // older snapshot sees it (what bulk loads that bypass transactions accept).
    let old = db.snapshot();
    let p1 = write("one.sst", 0);
    db.ingest(lsm::DEFAULT_CF, &[&p1]).unwrap();
    assert_eq!(at(&old, &k(5)).as_deref(), Some(&b"loaded"[..]));
    // After snapshots: the older snapshot does not see the entries, new reads do.
    let p2 = write("two.sst", 1000);
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p2]).unwrap();
    assert_eq!(
        at(&old, &k(1005)),
        None,
        "an older snapshot must not see the load"
    );
    assert_eq!(db.get(&k(1005)).unwrap().as_deref(), Some(&b"loaded"[..]));
    let newer = db.snapshot();
    assert_eq!(at(&newer, &k(1005)).as_deref(), Some(&b"loaded"[..]));
    assert_eq!(at(&old, b"a").as_deref(), Some(&b"before"[..]));
    drop((old, newer));
    // Without live snapshots the file goes in as is and is visible.
    let p3 = write("three.sst", 2000);
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p3]).unwrap();
    assert_eq!(db.get(&k(2050)).unwrap().as_deref(), Some(&b"loaded"[..]));
    db.close().unwrap();
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for key in [k(5), k(1005), k(2050)] {
        assert_eq!(db.get(&key).unwrap().as_deref(), Some(&b"loaded"[..]));
    }
}

/// A file given a fresh (global) sequence number because a snapshot is
/// live is linked in outside the state lock: a write from another thread
/// during the ingestion completes before the ingestion does (the hook runs
/// between linking and publishing and waits for that write; with the lock
/// held it would never finish). The older snapshot still does not see the
/// load.
#[test]
fn ingest_does_not_block_writers() {
    use std::sync::mpsc;
    use std::sync::Arc;
    let dir = temp_dir("ingest-nonblock");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    db.put(b"a", b"before").unwrap();
    let p = dir.join("big.sst");
    let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
    for i in 0..20_000 {
        w.put(&k(i), b"loaded").unwrap();
    }
    w.finish().unwrap();
    let old = db.snapshot();
    let (tx, rx) = mpsc::channel::<bool>();
    let rx = std::sync::Mutex::new(rx);
    let writer_db = db.clone();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = calls.clone();
    db.set_ingest_hook(Some(Arc::new(move || {
        c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let d = writer_db.clone();
        let tx = tx.clone();
        std::thread::spawn(move || {
            d.put(b"during", b"ingest").unwrap();
            let _ = tx.send(true);
        });
        // Generous: only a writer blocked by the ingestion takes this long.
        let done = rx
            .lock()
            .unwrap()
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or(false);
        assert!(done, "a write was blocked by the ingestion");
    })));
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p]).unwrap();
    db.set_ingest_hook(None);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(db.get(b"during").unwrap().as_deref(), Some(&b"ingest"[..]));
    assert_eq!(db.get(&k(19_999)).unwrap().as_deref(), Some(&b"loaded"[..]));
    let o = ReadOptions {
        snapshot: Some(old.clone()),
        ..Default::default()
    };
    assert_eq!(db.get_cf(&o, lsm::DEFAULT_CF, &k(5)).unwrap(), None);
    drop(old);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A snapshot taken while an ingestion runs outside the lock must never see
/// the load appear: the global sequence number is taken under the lock at
/// publication, after that snapshot, so the snapshot never sees the rows,
/// before or after (and nothing is rewritten for it).
#[test]
fn snapshot_taken_during_ingest_never_sees_it_appear() {
    use std::sync::Arc;
    let dir = temp_dir("ingest-midsnap");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    let p = dir.join("f.sst");
    let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
    for i in 0..100 {
        w.put(&k(i), b"loaded").unwrap();
    }
    w.finish().unwrap();
    let old = db.snapshot();
    let mid: Arc<std::sync::Mutex<Option<lsm::Snapshot>>> = Arc::default();
    let (m2, d2) = (mid.clone(), db.clone());
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = calls.clone();
    db.set_ingest_hook(Some(Arc::new(move || {
        // A write then a snapshot at its sequence number, mid-ingestion.
        if c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            d2.put(b"x", b"y").unwrap();
            *m2.lock().unwrap() = Some(d2.snapshot());
        }
    })));
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p]).unwrap();
    db.set_ingest_hook(None);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(db.stats().ingested_global_seqno_files, 1);
    let snap = mid.lock().unwrap().take().unwrap();
    let at = |s: &lsm::Snapshot, key: &[u8]| {
        let o = ReadOptions {
            snapshot: Some(s.clone()),
            ..Default::default()
        };
        db.get_cf(&o, lsm::DEFAULT_CF, key).unwrap()
    };
    assert_eq!(at(&snap, b"x").as_deref(), Some(&b"y"[..]));
    assert_eq!(at(&snap, &k(5)), None, "the snapshot saw the load appear");
    assert_eq!(at(&old, &k(5)), None);
    assert_eq!(db.get(&k(5)).unwrap().as_deref(), Some(&b"loaded"[..]));
    drop((old, snap));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A write into the ingested range that lands in the memtable while the
/// files are linked in (outside the lock) is older than the sequence number
/// the files then get, yet a point read trusts the memtable over every
/// table: the ingestion must flush that memtable first, so that `get` and
/// an iterator agree on the newer, ingested value.
#[test]
fn a_write_into_the_range_during_ingest_does_not_shadow_the_load() {
    use std::sync::Arc;
    let dir = temp_dir("ingest-memshadow");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    // A table under the range, so that the file takes a global sequence number.
    db.put(&k(50), b"old").unwrap();
    db.flush().unwrap();
    let p = dir.join("f.sst");
    let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
    for i in 0..100 {
        w.put(&k(i), b"loaded").unwrap();
    }
    w.finish().unwrap();
    let held: Arc<std::sync::Mutex<Option<lsm::Snapshot>>> = Arc::default();
    let (h2, d2) = (held.clone(), db.clone());
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = calls.clone();
    db.set_ingest_hook(Some(Arc::new(move || {
        if c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            d2.put(&k(5), b"written").unwrap();
            *h2.lock().unwrap() = Some(d2.snapshot());
        }
    })));
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    db.set_ingest_hook(None);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek(&k(5));
    assert!(it.valid());
    assert_eq!(it.key(), &k(5)[..]);
    let from_iter = it.value().to_vec();
    drop(it);
    let from_get = db.get(&k(5)).unwrap();
    assert_eq!(
        from_get.as_deref(),
        Some(&from_iter[..]),
        "get and iterator disagree"
    );
    assert_eq!(
        from_iter, b"loaded",
        "the ingestion is newer than the write"
    );
    drop(held);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
