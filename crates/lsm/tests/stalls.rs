//! Write stalls (docs/WRITE-STALLS.md): with compaction made slow through the
//! file system (SlowFs), writes keep completing (the longest interval without
//! a completed write stays bounded), a flush never waits behind a
//! compaction, and each throttle cause (L0 files, pending compaction bytes,
//! memtables waiting for a flush) counts its slowdowns, stops and wait time.
mod common;

use common::{seed, Rng};
use lsm::vfs::{FileLock, Fs, MemFs, RandomAccessFile, WritableFile};
use lsm::{CfOptions, Db, Options, WriteBatch, WriteOptions};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A MemFs whose table files are slow: reads of `.sst` files (only
/// compactions read them here: the tests do not read) cost `read_us_per_kb`,
/// appends to them `write_us_per_kb`, and `gate_reads` blocks table reads
/// until `release`.
#[derive(Clone)]
struct SlowFs {
    inner: MemFs,
    knobs: Arc<Knobs>,
}

#[derive(Default)]
struct Knobs {
    read_us_per_kb: AtomicU64,
    write_us_per_kb: AtomicU64,
    gate: Mutex<bool>,
    gate_cv: Condvar,
    gated_reads: AtomicU64,
}

impl Knobs {
    fn pause(&self, per_kb: &AtomicU64, len: usize) {
        let us = per_kb.load(Ordering::Relaxed) * len as u64 / 1024;
        if us > 0 {
            std::thread::sleep(Duration::from_micros(us));
        }
    }
    fn wait_gate(&self) {
        let mut g = self.gate.lock().unwrap();
        if *g {
            self.gated_reads.fetch_add(1, Ordering::SeqCst);
        }
        while *g {
            g = self.gate_cv.wait(g).unwrap();
        }
    }
}

impl SlowFs {
    fn new() -> SlowFs {
        SlowFs {
            inner: MemFs::new(),
            knobs: Arc::new(Knobs::default()),
        }
    }
    fn slow_reads(&self, us_per_kb: u64) {
        self.knobs
            .read_us_per_kb
            .store(us_per_kb, Ordering::Relaxed);
    }
    fn slow_writes(&self, us_per_kb: u64) {
        self.knobs
            .write_us_per_kb
            .store(us_per_kb, Ordering::Relaxed);
    }
    fn gate_reads(&self) {
        *self.knobs.gate.lock().unwrap() = true;
    }
    fn release(&self) {
        *self.knobs.gate.lock().unwrap() = false;
        self.knobs.gate_cv.notify_all();
    }
}

struct SlowRandom {
    inner: Arc<dyn RandomAccessFile>,
    knobs: Arc<Knobs>,
}

impl RandomAccessFile for SlowRandom {
    fn read_at(&self, offset: u64, len: usize) -> lsm::Result<Vec<u8>> {
        self.knobs.wait_gate();
        self.knobs.pause(&self.knobs.read_us_per_kb, len);
        self.inner.read_at(offset, len)
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

struct SlowWritable {
    inner: Box<dyn WritableFile>,
    knobs: Arc<Knobs>,
}

impl WritableFile for SlowWritable {
    fn append(&mut self, data: &[u8]) -> lsm::Result<()> {
        self.knobs.pause(&self.knobs.write_us_per_kb, data.len());
        self.inner.append(data)
    }
    fn flush(&mut self) -> lsm::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> lsm::Result<()> {
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

fn is_table(p: &Path) -> bool {
    p.to_string_lossy().ends_with(".sst")
}

impl Fs for SlowFs {
    fn create(&self, path: &Path) -> lsm::Result<Box<dyn WritableFile>> {
        let f = self.inner.create(path)?;
        if !is_table(path) {
            return Ok(f);
        }
        Ok(Box::new(SlowWritable {
            inner: f,
            knobs: self.knobs.clone(),
        }))
    }
    fn open(&self, path: &Path) -> lsm::Result<Arc<dyn RandomAccessFile>> {
        let f = self.inner.open(path)?;
        if !is_table(path) {
            return Ok(f);
        }
        Ok(Arc::new(SlowRandom {
            inner: f,
            knobs: self.knobs.clone(),
        }))
    }
    fn read_all(&self, path: &Path) -> lsm::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove(&self, path: &Path) -> lsm::Result<()> {
        self.inner.remove(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> lsm::Result<()> {
        self.inner.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> lsm::Result<()> {
        self.inner.link(from, to)
    }
    fn list(&self, dir: &Path) -> lsm::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> lsm::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> lsm::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn sync_file(&self, path: &Path) -> lsm::Result<()> {
        self.inner.sync_file(path)
    }
    fn file_size(&self, path: &Path) -> lsm::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> lsm::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

/// Small memtables and triggers, so that throttles fire within seconds.
fn small(fs: &SlowFs, jobs: usize) -> Options {
    Options {
        fs: Some(Arc::new(fs.clone())),
        max_background_jobs: jobs,
        block_cache_size: 0,
        default_cf: CfOptions {
            write_buffer_size: 64 << 10,
            max_write_buffer_number: 2,
            target_file_size: 64 << 10,
            max_bytes_for_level_base: 256 << 10,
            level0_compaction_trigger: 2,
            level0_slowdown_trigger: 4,
            level0_stop_trigger: 10,
            block_size: 1024,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

/// `threads` writers put random keys (seeded) for `dur`; returns the
/// longest interval in which no write completed, and the writes done.
fn write_for(db: &Db, seed: u64, threads: usize, dur: Duration) -> (Duration, u64) {
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let mut hs = Vec::new();
    for t in 0..threads {
        let (db, done) = (db.clone(), done.clone());
        hs.push(std::thread::spawn(move || {
            let mut rng = Rng::new(seed ^ (t as u64 + 1) * 0x9e37_79b9);
            let mut times = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let mut b = WriteBatch::new();
                let k = format!("k{:08}", rng.below(200_000));
                b.put(k.as_bytes(), &rng.bytes(100));
                db.write(WriteOptions::default(), b).unwrap();
                times.push(start.elapsed());
            }
            times
        }));
    }
    std::thread::sleep(dur);
    done.store(true, Ordering::Relaxed);
    let mut all = vec![Duration::ZERO];
    for h in hs {
        all.extend(h.join().unwrap());
    }
    all.sort();
    let n = all.len() as u64 - 1;
    // Only intervals inside the window count (the last writes may end after it).
    let mut longest = Duration::ZERO;
    for w in all.windows(2) {
        if w[0] < dur {
            longest = longest.max(w[1].min(dur) - w[0]);
        }
    }
    (longest, n)
}

/// The case: compaction is slow (its reads crawl) and writers push as
/// fast as they can. Before the write controller and the flush thread (fixed
/// 0.1-2 ms sleeps, flushes sharing threads with compactions), L0 ran into its
/// stop and writes stopped for 0.8-1.05 s at a time (3 runs: 32-38 stops);
/// now the delayed write rate keeps L0 below the stop (about 30 ms at most).
#[test]
fn slow_compaction_never_stops_writes_for_long() {
    let s = seed("slow_compaction_never_stops_writes_for_long");
    let fs = SlowFs::new();
    let mut o = small(&fs, 2);
    o.delayed_write_rate = 512 << 10;
    let db = Db::open("/db", o).unwrap();
    fs.slow_reads(2000); // compaction reads at about 0.5 MB/s
    let (longest, n) = write_for(&db, s, 4, Duration::from_secs(6));
    let st = db.stats();
    eprintln!(
        "seed {s}: {n} writes, longest interval without a completed write {longest:?}; \
         slowdowns {} stops {} stall {} us (l0 {}/{} pending {}/{} memtable {}/{}), longest wait {} us",
        st.slowdowns,
        st.stops,
        st.stall_micros,
        st.stall_l0_slowdowns,
        st.stall_l0_stops,
        st.stall_pending_slowdowns,
        st.stall_pending_stops,
        st.stall_memtable_slowdowns,
        st.stall_memtable_stops,
        st.stall_longest_micros
    );
    fs.slow_reads(0);
    assert!(n > 100, "only {n} writes");
    assert!(
        longest < Duration::from_millis(300),
        "seed {s}: no write completed for {longest:?}"
    );
}

/// A flush completes while every compaction thread is stuck in a compaction.
#[test]
fn flush_does_not_wait_behind_a_compaction() {
    let fs = SlowFs::new();
    let o = small(&fs, 1);
    let db = Db::open("/db", o).unwrap();
    fs.gate_reads(); // compactions block on their first table read
    let mut i = 0u64;
    let t = Instant::now();
    while fs.knobs.gated_reads.load(Ordering::SeqCst) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no compaction started"
        );
        // Overlapping key ranges: compactions merge (no trivial moves).
        db.put(format!("k{:08}", i % 700).as_bytes(), &[7u8; 100])
            .unwrap();
        i += 1;
    }
    db.put(b"after", b"the compaction started").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let d = db.clone();
    std::thread::spawn(move || tx.send(d.flush()));
    let r = rx.recv_timeout(Duration::from_secs(5));
    fs.release();
    assert!(
        matches!(r, Ok(Ok(()))),
        "the flush waited behind a compaction: {r:?}"
    );
    assert_eq!(
        db.get(b"after").unwrap().as_deref(),
        Some(&b"the compaction started"[..])
    );
}

/// Too many L0 files: slowdowns first, then the stop, each counted as L0.
#[test]
fn l0_files_count_as_their_cause() {
    let s = seed("l0_files_count_as_their_cause");
    let fs = SlowFs::new();
    let mut o = small(&fs, 2);
    o.default_cf.level0_stop_trigger = 6;
    o.default_cf.soft_pending_compaction_bytes = u64::MAX;
    o.default_cf.hard_pending_compaction_bytes = u64::MAX;
    let db = Db::open("/db", o).unwrap();
    fs.slow_reads(5000); // L0 compactions fall far behind
    write_for(&db, s, 4, Duration::from_secs(3));
    let st = db.stats();
    fs.slow_reads(0);
    assert!(st.stall_l0_slowdowns > 0, "{st:?}");
    assert!(st.stall_l0_stops > 0, "{st:?}");
    assert!(st.stall_l0_micros > 0, "{st:?}");
    assert_eq!(st.stall_pending_slowdowns + st.stall_pending_stops, 0);
    assert!(st.slowdowns >= st.stall_l0_slowdowns && st.stops >= st.stall_l0_stops);
    assert!(st.stall_micros >= st.stall_l0_micros);
}

/// Pending compaction bytes over the soft limit slow writes; over the hard
/// limit, a memtable switch stops until compaction pays the debt.
#[test]
fn pending_compaction_bytes_count_as_their_cause() {
    let s = seed("pending_compaction_bytes_count_as_their_cause");
    let fs = SlowFs::new();
    let mut o = small(&fs, 2);
    o.default_cf.level0_slowdown_trigger = 1000;
    o.default_cf.level0_stop_trigger = 1000;
    o.default_cf.soft_pending_compaction_bytes = 1;
    o.default_cf.hard_pending_compaction_bytes = 256 << 10;
    let db = Db::open("/db", o).unwrap();
    fs.slow_reads(3000);
    write_for(&db, s, 4, Duration::from_secs(3));
    let st = db.stats();
    fs.slow_reads(0);
    assert!(st.stall_pending_slowdowns > 0, "{st:?}");
    assert!(st.stall_pending_stops > 0, "{st:?}");
    assert!(st.stall_pending_micros > 0, "{st:?}");
    assert_eq!(st.stall_l0_slowdowns + st.stall_l0_stops, 0, "{st:?}");
    db.put(b"still", b"writable").unwrap();
}

/// Slow flushes: the active memtable fills while the other waits for its
/// flush; writes slow down over its second half, then stop when it is full.
#[test]
fn memtables_waiting_for_flush_count_as_their_cause() {
    let s = seed("memtables_waiting_for_flush_count_as_their_cause");
    let fs = SlowFs::new();
    let mut o = small(&fs, 2);
    o.default_cf.level0_slowdown_trigger = 1000;
    o.default_cf.level0_stop_trigger = 1000;
    o.default_cf.level0_compaction_trigger = 1000;
    let db = Db::open("/db", o).unwrap();
    fs.slow_writes(20_000); // a 64 KB flush takes about a second
    write_for(&db, s, 4, Duration::from_secs(4));
    let st = db.stats();
    fs.slow_writes(0);
    assert!(st.stall_memtable_slowdowns > 0, "{st:?}");
    assert!(st.stall_memtable_stops > 0, "{st:?}");
    assert!(st.stall_memtable_micros > 0, "{st:?}");
    assert_eq!(st.stall_l0_slowdowns + st.stall_l0_stops, 0, "{st:?}");
    assert!(st.stall_longest_micros > 0);
}
