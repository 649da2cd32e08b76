//! Ingestion with global sequence numbers: a file placed over existing data
//! or after live snapshots is hard-linked in, never rewritten, and every
//! entry reads with the number the manifest gives it, in point gets,
//! iterators, snapshots, compactions, range deletions, checkpoints, the
//! engine's file report, reopen and recovery after a crash.
#![allow(clippy::unwrap_used)]
mod common;

use common::temp_dir;
use lsm::db::SstFileWriter;
use lsm::vfs::OsFs;
use lsm::{CfOptions, Db, Options, ReadOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// Writes a table of keys `from..to` with value `v`.
fn table(dir: &Path, name: &str, from: u32, to: u32, v: &[u8]) -> PathBuf {
    let p = dir.join(name);
    let mut w = SstFileWriter::create(&OsFs, &p, &CfOptions::default()).unwrap();
    for i in from..to {
        w.put(&k(i), v).unwrap();
    }
    w.finish().unwrap();
    p
}

fn at(db: &Db, s: Option<&lsm::Snapshot>, key: &[u8]) -> Option<Vec<u8>> {
    let o = ReadOptions {
        snapshot: s.cloned(),
        ..Default::default()
    };
    db.get_cf(&o, lsm::DEFAULT_CF, key).unwrap()
}

/// Every (key, value) in `[from, to)` as the snapshot (or now) sees it.
fn scan(db: &Db, s: Option<&lsm::Snapshot>, from: u32, to: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let o = ReadOptions {
        snapshot: s.cloned(),
        ..Default::default()
    };
    let mut it = db.iter(o).unwrap();
    it.seek(&k(from));
    let mut out = Vec::new();
    while it.valid() && it.key() < &k(to)[..] {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

/// The database's table file that is a hard link to `src`, if any.
fn linked_copy(db_dir: &Path, src: &Path) -> Option<PathBuf> {
    let ino = std::fs::metadata(src).unwrap().ino();
    std::fs::read_dir(db_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .find(|p| std::fs::metadata(p).unwrap().ino() == ino)
}

/// The OLTP case: snapshots held (every SQL transaction registers one) and
/// writers running while a large file is ingested over existing data. The
/// file is linked in as is (same inode, no rewrite) with a global sequence
/// number; writers go on during the ingestion; a snapshot taken before does
/// not see the load, one taken after does, in gets and scans, also after a
/// compaction and a reopen.
#[test]
fn ingestion_under_snapshots_and_writers_links_without_rewriting() {
    let dir = temp_dir("ingest-gseq");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    db.flush().unwrap();
    // Writers and snapshot takers outside the ingested range, as OLTP load.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for w in 0..2 {
        let (db, stop, written) = (db.clone(), stop.clone(), written.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _snap = db.snapshot();
                db.put(format!("w{w}-{}", n % 500).as_bytes(), b"x")
                    .unwrap();
                n += 1;
                written.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let p = table(&dir, "big.sst", 500, 30_500, b"loaded");
    let before = db.snapshot();
    // In the middle of the ingestion (outside the state lock), writers must
    // make progress: wait for 100 more of their writes.
    let w2 = written.clone();
    db.set_ingest_hook(Some(Arc::new(move || {
        let start = w2.load(Ordering::Relaxed);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while w2.load(Ordering::Relaxed) < start + 100 {
            assert!(
                std::time::Instant::now() < until,
                "writers blocked by the ingestion"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    })));
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p]).unwrap();
    db.set_ingest_hook(None);
    let after = db.snapshot();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let s = db.stats();
    assert_eq!(s.ingested_files, 1, "{s:?}");
    assert_eq!(s.ingested_global_seqno_files, 1, "{s:?}");
    assert!(
        linked_copy(&dir.join("db"), &p).is_some(),
        "the file was rewritten instead of linked"
    );
    // The engine's report shows the global number on the level-0 file.
    let f = db
        .sst_files()
        .into_iter()
        .find(|f| f.entries == 30_000)
        .unwrap();
    assert_eq!(f.level, 0);
    assert!(f.smallest_seq > before.seq() && f.smallest_seq <= after.seq());
    assert_eq!(f.smallest_seq, f.largest_seq);
    let check = |db: &Db, before: Option<&lsm::Snapshot>, when: &str| {
        if let Some(b) = before {
            assert_eq!(
                at(db, Some(b), &k(600)).as_deref(),
                Some(&b"db"[..]),
                "{when}"
            );
            assert_eq!(at(db, Some(b), &k(20_000)), None, "{when}");
            let old = scan(db, Some(b), 0, 40_000);
            assert_eq!(old.len(), 1000, "{when}");
            assert!(old.iter().all(|(_, v)| v == b"db"), "{when}");
        }
        assert_eq!(at(db, None, &k(100)).as_deref(), Some(&b"db"[..]), "{when}");
        assert_eq!(
            at(db, None, &k(600)).as_deref(),
            Some(&b"loaded"[..]),
            "{when}"
        );
        assert_eq!(
            at(db, None, &k(30_499)).as_deref(),
            Some(&b"loaded"[..]),
            "{when}"
        );
        let now = scan(db, None, 0, 40_000);
        assert_eq!(now.len(), 30_500, "{when}");
        for (i, (key, v)) in now.iter().enumerate() {
            assert_eq!(key, &k(i as u32), "{when}");
            let want: &[u8] = if i < 500 { b"db" } else { b"loaded" };
            assert_eq!(v.as_slice(), want, "{when}: key {i}");
        }
    };
    check(&db, Some(&before), "after ingestion");
    assert_eq!(
        at(&db, Some(&after), &k(600)).as_deref(),
        Some(&b"loaded"[..])
    );
    // Seeks land right in the global-sequence file at every snapshot.
    let o = ReadOptions {
        snapshot: Some(before.clone()),
        ..Default::default()
    };
    let mut it = db.iter(o).unwrap();
    it.seek(&k(999));
    assert_eq!((it.key(), it.value()), (&k(999)[..], &b"db"[..]));
    it.next();
    assert!(!it.valid() || !it.key().starts_with(b"k"), "{:?}", it.key());
    drop(it);
    // A compaction rewrites the entries with their effective numbers.
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    check(&db, Some(&before), "after compaction");
    drop((before, after));
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    check(&db, None, "after compaction without snapshots");
    // A later write over the load wins.
    db.put(&k(700), b"later").unwrap();
    assert_eq!(at(&db, None, &k(700)).as_deref(), Some(&b"later"[..]));
    db.close().unwrap();
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    assert_eq!(at(&db, None, &k(700)).as_deref(), Some(&b"later"[..]));
    assert_eq!(at(&db, None, &k(701)).as_deref(), Some(&b"loaded"[..]));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reopen and crash (drop without close) right after an ingestion over
/// existing data: the manifest's global number is recovered, the load
/// still wins over what it overwrote, the data it overwrote (in the WAL
/// when the crash came) stays beneath it, and later writes still win over
/// the load (the recovered sequence is past the global number).
#[test]
fn a_crash_right_after_ingestion_keeps_the_global_sequence() {
    let dir = temp_dir("ingest-crash");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    let p = table(&dir, "over.sst", 500, 1500, b"loaded");
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    assert_eq!(db.stats().ingested_global_seqno_files, 1);
    db.put(&k(1200), b"after").unwrap();
    drop(db); // no close: the last write is only in the WAL
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    assert_eq!(at(&db, None, &k(100)).as_deref(), Some(&b"db"[..]));
    assert_eq!(at(&db, None, &k(700)).as_deref(), Some(&b"loaded"[..]));
    assert_eq!(at(&db, None, &k(1200)).as_deref(), Some(&b"after"[..]));
    db.put(&k(800), b"newer").unwrap();
    assert_eq!(at(&db, None, &k(800)).as_deref(), Some(&b"newer"[..]));
    let all = scan(&db, None, 0, 2000);
    assert_eq!(all.len(), 1500);
    drop(db);
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    assert_eq!(at(&db, None, &k(800)).as_deref(), Some(&b"newer"[..]));
    assert_eq!(at(&db, None, &k(801)).as_deref(), Some(&b"loaded"[..]));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Range deletions meet global numbers: a file ingested over a range
/// tombstone is newer than it and shows; a tombstone written after the
/// ingestion hides the load, also after compaction.
#[test]
fn range_deletions_and_global_sequence_numbers() {
    let dir = temp_dir("ingest-rdel");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    db.delete_range(lsm::DEFAULT_CF, &k(0), &k(1000)).unwrap();
    let p = table(&dir, "a.sst", 500, 1500, b"loaded");
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    assert_eq!(db.stats().ingested_global_seqno_files, 1);
    assert_eq!(at(&db, None, &k(100)), None);
    assert_eq!(at(&db, None, &k(600)).as_deref(), Some(&b"loaded"[..]));
    assert_eq!(scan(&db, None, 0, 2000).len(), 1000);
    db.delete_range(lsm::DEFAULT_CF, &k(1000), &k(1100))
        .unwrap();
    assert_eq!(at(&db, None, &k(1050)), None);
    assert_eq!(scan(&db, None, 0, 2000).len(), 900);
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    assert_eq!(at(&db, None, &k(1050)), None);
    assert_eq!(at(&db, None, &k(600)).as_deref(), Some(&b"loaded"[..]));
    assert_eq!(scan(&db, None, 0, 2000).len(), 900);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint taken after an ingestion over existing data copies the file
/// and its global number: the copy answers as the database does.
#[test]
fn a_checkpoint_keeps_the_global_sequence() {
    let dir = temp_dir("ingest-ckpt");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&k(i), b"db").unwrap();
    }
    db.flush().unwrap();
    let p = table(&dir, "a.sst", 500, 1500, b"loaded");
    db.ingest(lsm::DEFAULT_CF, &[&p]).unwrap();
    let info = db.checkpoint(dir.join("ckpt")).unwrap();
    assert_eq!(info.sequence, db.latest_sequence());
    db.close().unwrap();
    let c = Db::open(dir.join("ckpt"), Options::default()).unwrap();
    assert_eq!(at(&c, None, &k(100)).as_deref(), Some(&b"db"[..]));
    assert_eq!(at(&c, None, &k(700)).as_deref(), Some(&b"loaded"[..]));
    assert_eq!(scan(&c, None, 0, 2000).len(), 1500);
    c.put(&k(700), b"copy").unwrap();
    assert_eq!(at(&c, None, &k(700)).as_deref(), Some(&b"copy"[..]));
    c.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A manifest write that fails after the record was appended (its sync
/// fails) leaves the ingested files in place: the record may be on disk,
/// and a reopen then finds every file it names (they were removed, and the
/// database could not open again).
#[test]
fn a_failed_manifest_sync_keeps_the_ingested_files() {
    use lsm::vfs::{FaultFs, FaultKind, Fs, MemFs};
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let o = || Options {
        fs: Some(Arc::new(ffs.clone())),
        auto_resume_interval: None,
        ..Options::default()
    };
    let db = Db::open("/db", o()).unwrap();
    db.put(&k(5), b"db").unwrap();
    mem.create_dir_all(Path::new("/src")).unwrap();
    let src = Path::new("/src/a.sst");
    let mut w = SstFileWriter::create(&mem, src, &CfOptions::default()).unwrap();
    for i in 0..10 {
        w.put(&k(i), b"ingested").unwrap();
    }
    w.finish().unwrap();
    // Once the files are linked in, every sync fails: the manifest record
    // is appended, its sync fails.
    let f = ffs.clone();
    db.set_ingest_hook(Some(Arc::new(move || {
        f.set("", false, true, FaultKind::Eio)
    })));
    assert!(db.ingest(lsm::DEFAULT_CF, &[src]).is_err());
    db.set_ingest_hook(None);
    let _ = db.close();
    ffs.clear();
    let db = Db::open("/db", o()).expect("the manifest names files that must exist");
    for i in 0..10 {
        assert_eq!(at(&db, None, &k(i)).as_deref(), Some(&b"ingested"[..]));
    }
    db.close().unwrap();
}

/// Writes a table of raw internal keys (sequence number 0) and range
/// tombstones, as no `SstFileWriter` would.
fn raw_table(dir: &Path, name: &str, keys: &[u32], tombs: &[(u32, u32)]) -> PathBuf {
    use lsm::key::{internal_key, ValueKind};
    use lsm::sstable::{TableBuilder, TableOptions};
    use lsm::vfs::Fs;
    let p = dir.join(name);
    let o = TableOptions {
        cmp: lsm::Comparator::Bytewise,
        block_size: 4096,
        restart_interval: 16,
        bloom_bits: 10,
        prefix_len: None,
        compression: lsm::Compression::None,
    };
    let mut b = TableBuilder::new(OsFs.create(&p).unwrap(), o);
    for &i in keys {
        b.add(&internal_key(&k(i), 0, ValueKind::Value), b"raw")
            .unwrap();
    }
    for &(s, e) in tombs {
        b.add_range_tombstone(lsm::range_del::RangeTombstone {
            start: k(s),
            end: k(e),
            seq: 0,
        });
    }
    b.finish().unwrap();
    p
}

/// Files the ingestion cannot place correctly are refused with a clear
/// error and change nothing: range tombstones (a file's bounds come from
/// its point keys, so a tombstone past them, or a file of tombstones only,
/// hid data from iterators but not from gets, or was skipped), a user key
/// twice (two identical internal keys once they share one sequence
/// number), and a file holding sequence numbers among files placed over
/// data (checked before any other file takes a number).
#[test]
fn files_the_ingestion_cannot_place_are_refused() {
    let dir = temp_dir("ingest-refuse");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..100 {
        db.put(&k(i), b"db").unwrap();
    }
    let only_tombs = raw_table(&dir, "t.sst", &[], &[(0, 100)]);
    let wide_tomb = raw_table(&dir, "w.sst", &[10], &[(10, 100)]);
    let dup = raw_table(&dir, "d.sst", &[200, 201, 201, 202], &[]);
    for (p, what) in [
        (&only_tombs, "range deletions"),
        (&wide_tomb, "range deletions"),
        (&dup, "strictly increasing"),
    ] {
        match db.ingest(lsm::DEFAULT_CF, &[p]) {
            Err(lsm::Error::InvalidArgument(m)) => assert!(m.contains(what), "{m}"),
            other => panic!("{} was accepted: {other:?}", p.display()),
        }
    }
    assert_eq!(at(&db, None, &k(50)).as_deref(), Some(&b"db"[..]));
    assert_eq!(scan(&db, None, 0, 300).len(), 100);
    // A table of the database's own (sequence numbers > 0) after a good
    // file over existing data: refused before the good file takes a
    // number or is published.
    db.flush().unwrap();
    let own = std::fs::read_dir(dir.join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    let own_copy = dir.join("own.sst");
    std::fs::copy(&own, &own_copy).unwrap();
    let good = table(&dir, "g.sst", 0, 10, b"good");
    let seq = db.latest_sequence();
    let tables = db.stats().ingested_files;
    assert!(db.ingest(lsm::DEFAULT_CF, &[&good, &own_copy]).is_err());
    assert_eq!(db.stats().ingested_files, tables);
    // No sequence number was taken: the next write gets the next one.
    db.put(b"next", b"write").unwrap();
    assert_eq!(db.latest_sequence(), seq + 1);
    assert_eq!(at(&db, None, &k(5)).as_deref(), Some(&b"db"[..]));
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hard-linked source whose writer never synced it is synced before the
/// manifest names it: a crash right after the ingestion keeps its data (the
/// directory entry alone was durable, over an empty file).
#[test]
fn an_unsynced_linked_source_is_durable_once_ingested() {
    use lsm::vfs::{Fs, MemFs};
    let mem = MemFs::new();
    let o = || Options {
        fs: Some(Arc::new(mem.clone())),
        auto_resume_interval: None,
        ..Options::default()
    };
    mem.create_dir_all(Path::new("/src")).unwrap();
    let synced = Path::new("/src/a.sst");
    let mut w = SstFileWriter::create(&mem, synced, &CfOptions::default()).unwrap();
    for i in 0..10 {
        w.put(&k(i), b"ingested").unwrap();
    }
    w.finish().unwrap();
    // The same bytes, written and never synced.
    let data = mem.read_all(synced).unwrap();
    let src = Path::new("/src/b.sst");
    let mut f = mem.create(src).unwrap();
    f.append(&data).unwrap();
    f.flush().unwrap();
    drop(f);
    let db = Db::open("/db", o()).unwrap();
    db.ingest(lsm::DEFAULT_CF, &[src]).unwrap();
    drop(db);
    mem.crash();
    let db = Db::open("/db", o()).expect("the ingested table survives the crash");
    for i in 0..10 {
        assert_eq!(at(&db, None, &k(i)).as_deref(), Some(&b"ingested"[..]));
    }
    db.close().unwrap();
}

/// A bulk load into an empty key range while another session holds a
/// snapshot (sysbench prepare's threads, a CREATE INDEX of another table):
/// the file takes a global sequence number (the older snapshot must not see
/// it) but still goes to the last level, not into level 0, from where
/// compactions would rewrite the whole load. Writes over it later, a
/// compaction and a reopen keep every version right.
#[test]
fn non_overlapping_ingestion_under_a_snapshot_goes_to_the_last_level() {
    let dir = temp_dir("ingest-gseq-bottom");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    for i in 0..100 {
        db.put(&k(i), b"db").unwrap();
    }
    db.flush().unwrap();
    let old = db.snapshot();
    let p = table(&dir, "load.sst", 1000, 6000, b"loaded");
    db.ingest_after_snapshots(lsm::DEFAULT_CF, &[&p]).unwrap();
    let s = db.stats();
    assert_eq!(s.ingested_global_seqno_files, 1, "{s:?}");
    let f = db
        .sst_files()
        .into_iter()
        .find(|f| f.entries == 5000)
        .unwrap();
    assert_eq!(f.level, lsm::options::NUM_LEVELS - 1, "{f:?}");
    assert_eq!(at(&db, Some(&old), &k(1500)), None);
    assert!(scan(&db, Some(&old), 1000, 6000).is_empty());
    assert_eq!(at(&db, None, &k(1500)).as_deref(), Some(&b"loaded"[..]));
    // Newer writes over the loaded range win over it.
    db.put(&k(2000), b"newer").unwrap();
    let mid = db.snapshot();
    db.delete(&k(3000)).unwrap();
    let check = |db: &Db, old: Option<&lsm::Snapshot>, when: &str| {
        if let Some(old) = old {
            assert!(scan(db, Some(old), 1000, 6000).is_empty(), "{when}");
        }
        let all = scan(db, None, 1000, 6000);
        assert_eq!(all.len(), 4999, "{when}");
        assert_eq!(
            at(db, None, &k(2000)).as_deref(),
            Some(&b"newer"[..]),
            "{when}"
        );
        assert_eq!(at(db, None, &k(3000)), None, "{when}");
        assert_eq!(
            at(db, None, &k(5999)).as_deref(),
            Some(&b"loaded"[..]),
            "{when}"
        );
    };
    check(&db, Some(&old), "after the writes");
    assert_eq!(
        at(&db, Some(&mid), &k(3000)).as_deref(),
        Some(&b"loaded"[..])
    );
    db.flush().unwrap();
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    check(&db, Some(&old), "after a compaction");
    assert_eq!(
        at(&db, Some(&mid), &k(3000)).as_deref(),
        Some(&b"loaded"[..])
    );
    assert_eq!(
        at(&db, Some(&mid), &k(2000)).as_deref(),
        Some(&b"newer"[..])
    );
    drop((old, mid));
    db.close().unwrap();
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    check(&db, None, "after a reopen");
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
