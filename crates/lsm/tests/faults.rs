//! Simulated power loss (MemFs drops unsynced bytes), injected I/O errors
//! (EIO, ENOSPC on write and on fsync) and bit flips in tables and WALs:
//! each is detected and reported, and nothing acknowledged is lost.
mod common;

use common::{seed, Rng};
use lsm::vfs::{FaultFs, FaultKind, FileLock, Fs, MemFs, RandomAccessFile, WritableFile};
use lsm::{CfOptions, Db, Error, Options, ReadOptions, WriteBatch, WriteOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A MemFs wrapper for crash-point and interleaving tests:
/// - `die_after(n)`: the process "dies" after `n` more mutating operations
///   (create, append, sync, rename, remove, link, sync_dir): every later one
///   fails, so nothing more reaches the disk; then `MemFs::crash` drops what
///   was not durable;
/// - `arm_gate()`: creating a `.sst` file blocks until `release_gate()`.
#[derive(Clone)]
struct HookFs {
    inner: MemFs,
    hooks: Arc<Hooks>,
}

struct Hooks {
    ops: AtomicU64,
    die_at: AtomicU64,
    gate: Mutex<(bool, usize)>,
    cv: Condvar,
}

impl HookFs {
    fn new(inner: MemFs) -> HookFs {
        HookFs {
            inner,
            hooks: Arc::new(Hooks {
                ops: AtomicU64::new(0),
                die_at: AtomicU64::new(u64::MAX),
                gate: Mutex::new((false, 0)),
                cv: Condvar::new(),
            }),
        }
    }
    fn die_after(&self, n: u64) {
        let now = self.hooks.ops.load(Ordering::SeqCst);
        self.hooks
            .die_at
            .store(now.saturating_add(n), Ordering::SeqCst);
    }
    /// Mutating operations so far.
    fn ops(&self) -> u64 {
        self.hooks.ops.load(Ordering::SeqCst)
    }
    fn arm_gate(&self) {
        *self.hooks.gate.lock().unwrap() = (true, 0);
    }
    /// Waits until some thread is blocked at the gate.
    fn wait_gate_hit(&self) {
        let mut g = self.hooks.gate.lock().unwrap();
        while g.1 == 0 {
            g = self.hooks.cv.wait(g).unwrap();
        }
    }
    fn release_gate(&self) {
        self.hooks.gate.lock().unwrap().0 = false;
        self.hooks.cv.notify_all();
    }
}

impl Hooks {
    fn op(&self, what: &str, path: &Path) -> lsm::Result<()> {
        let n = self.ops.fetch_add(1, Ordering::SeqCst);
        if n >= self.die_at.load(Ordering::SeqCst) {
            return Err(Error::io(
                format!("{what} {} (process died)", path.display()),
                std::io::Error::from_raw_os_error(5),
            ));
        }
        Ok(())
    }
}

struct HookWritable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    hooks: Arc<Hooks>,
}

impl WritableFile for HookWritable {
    fn append(&mut self, data: &[u8]) -> lsm::Result<()> {
        self.hooks.op("append", &self.path)?;
        self.inner.append(data)
    }
    fn flush(&mut self) -> lsm::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> lsm::Result<()> {
        self.hooks.op("sync", &self.path)?;
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl Fs for HookFs {
    fn create(&self, path: &Path) -> lsm::Result<Box<dyn WritableFile>> {
        if path.to_string_lossy().ends_with(".sst") {
            let mut g = self.hooks.gate.lock().unwrap();
            if g.0 {
                g.1 += 1;
                self.hooks.cv.notify_all();
                while g.0 {
                    g = self.hooks.cv.wait(g).unwrap();
                }
            }
        }
        self.hooks.op("create", path)?;
        Ok(Box::new(HookWritable {
            inner: self.inner.create(path)?,
            path: path.to_path_buf(),
            hooks: self.hooks.clone(),
        }))
    }
    fn open(&self, path: &Path) -> lsm::Result<Arc<dyn RandomAccessFile>> {
        self.inner.open(path)
    }
    fn read_all(&self, path: &Path) -> lsm::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove(&self, path: &Path) -> lsm::Result<()> {
        self.hooks.op("remove", path)?;
        self.inner.remove(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> lsm::Result<()> {
        self.hooks.op("rename", from)?;
        self.inner.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> lsm::Result<()> {
        self.hooks.op("link", from)?;
        self.inner.link(from, to)
    }
    fn list(&self, dir: &Path) -> lsm::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> lsm::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> lsm::Result<()> {
        self.hooks.op("sync_dir", dir)?;
        self.inner.sync_dir(dir)
    }
    fn sync_file(&self, path: &Path) -> lsm::Result<()> {
        self.hooks.op("sync_file", path)?;
        self.inner.sync_file(path)
    }
    fn file_size(&self, path: &Path) -> lsm::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> lsm::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

fn opts(fs: Arc<dyn Fs>) -> Options {
    Options {
        fs: Some(fs),
        default_cf: CfOptions {
            write_buffer_size: 16 << 10,
            block_size: 512,
            ..CfOptions::default()
        },
        // These tests look at the read-only state itself (tests/nospace.rs resumes).
        auto_resume_interval: None,
        ..Options::default()
    }
}

fn k(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

#[test]
fn power_loss_keeps_synced_writes_and_a_prefix() {
    let s = seed("power_loss");
    let mut r = Rng::new(s);
    let fs = MemFs::new();
    let dir = PathBuf::from("/db");
    let mut synced_upto: i64 = -1;
    let mut next = 0u64;
    for round in 0..20 {
        let db = Db::open(&dir, opts(Arc::new(fs.clone()))).unwrap();
        // Recovered state: a prefix 0..n that includes every synced write.
        let mut n = 0u64;
        while db.get(&k(n)).unwrap().is_some() {
            n += 1;
        }
        assert!(
            n as i64 > synced_upto,
            "seed {s} round {round}: synced write {synced_upto} lost (have {n})"
        );
        for j in n..next {
            assert!(
                db.get(&k(j)).unwrap().is_none(),
                "seed {s} round {round}: hole: {j} present after gap at {n}"
            );
        }
        next = n;
        for _ in 0..r.below(3000) {
            let sync = r.chance(20);
            let mut b = WriteBatch::new();
            b.put(&k(next), &next.to_le_bytes());
            db.write(
                WriteOptions {
                    sync,
                    disable_wal: false,
                },
                b,
            )
            .unwrap();
            if sync {
                synced_upto = next as i64;
            }
            next += 1;
        }
        drop(db);
        fs.crash();
    }
}

#[test]
fn wal_write_error_makes_db_read_only_and_loses_nothing_acknowledged() {
    for (kind, on_sync) in [
        (FaultKind::Eio, false),
        (FaultKind::NoSpace, false),
        (FaultKind::Eio, true),
        (FaultKind::NoSpace, true),
    ] {
        let mem = MemFs::new();
        let ffs = FaultFs::new(Arc::new(mem.clone()));
        let dir = Path::new("/db");
        let db = Db::open(dir, opts(Arc::new(ffs.clone()))).unwrap();
        for i in 0..100 {
            db.put(&k(i), b"v").unwrap();
        }
        ffs.set(".log", !on_sync, on_sync, kind);
        let e = db.put(&k(100), b"v").unwrap_err();
        if kind == FaultKind::NoSpace {
            assert!(
                matches!(e, Error::NoSpace(_)),
                "{kind:?} sync={on_sync}: {e}"
            );
        } else {
            assert!(
                matches!(e, Error::Io { .. }),
                "{kind:?} sync={on_sync}: {e}"
            );
        }
        ffs.clear();
        // Every later write is refused with a clear error, reads still work.
        let e2 = db.put(&k(101), b"v").unwrap_err();
        assert!(matches!(e2, Error::ReadOnly(_)), "{e2}");
        assert!(e2.to_string().contains("read-only"), "{e2}");
        assert_eq!(db.get(&k(5)).unwrap().as_deref(), Some(&b"v"[..]));
        drop(db);
        mem.crash();
        let db = Db::open(dir, opts(Arc::new(mem.clone()))).unwrap();
        for i in 0..100 {
            assert!(
                db.get(&k(i)).unwrap().is_some(),
                "acknowledged key {i} lost after {kind:?}"
            );
        }
        assert!(db.get(&k(101)).unwrap().is_none());
    }
}

#[test]
fn flush_error_is_reported_not_silent() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open("/db", opts(Arc::new(ffs.clone()))).unwrap();
    for i in 0..200 {
        db.put(&k(i), b"v").unwrap();
    }
    ffs.set(".sst", true, false, FaultKind::NoSpace);
    let e = db.flush().unwrap_err();
    assert!(
        matches!(e, Error::ReadOnly(_)) && e.to_string().contains("No space"),
        "{e}"
    );
    ffs.clear();
    drop(db);
    let db = Db::open("/db", opts(Arc::new(mem))).unwrap();
    assert_eq!(db.get(&k(150)).unwrap().as_deref(), Some(&b"v"[..]));
}

fn files(fs: &MemFs, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .map(|n| Path::new("/db").join(n))
        .collect();
    v.sort();
    v
}

#[test]
fn bit_flips_in_tables_are_corruption_never_wrong_answers() {
    let s = seed("bitflip_sst");
    let mut r = Rng::new(s);
    for round in 0..30 {
        let mem = MemFs::new();
        let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
        for i in 0..2000u64 {
            db.put(&k(i), format!("value-{i}-{}", i * 7).as_bytes())
                .unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let ssts = files(&mem, ".sst");
        let f = &ssts[r.below(ssts.len() as u64) as usize];
        let size = mem.file_size(f).unwrap() as usize;
        let off = r.below(size as u64) as usize;
        mem.flip_bit(f, off, r.below(8) as u8);
        let db = match Db::open(
            "/db",
            Options {
                block_cache_size: 0,
                ..opts(Arc::new(mem.clone()))
            },
        ) {
            Ok(db) => db,
            Err(e) => {
                assert!(
                    e.is_corruption() || matches!(e, Error::Io { .. }),
                    "seed {s} round {round}: {e}"
                );
                continue;
            }
        };
        let mut errors = 0;
        for i in 0..2000u64 {
            match db.get(&k(i)) {
                Ok(Some(v)) => assert_eq!(
                    v,
                    format!("value-{i}-{}", i * 7).into_bytes(),
                    "seed {s} round {round}: wrong value"
                ),
                Ok(None) => panic!(
                    "seed {s} round {round}: key {i} silently missing (flip at {off} of {})",
                    f.display()
                ),
                Err(e) => {
                    assert!(e.is_corruption(), "seed {s}: {e}");
                    assert!(
                        e.to_string().contains(".sst"),
                        "error must name the file: {e}"
                    );
                    errors += 1;
                }
            }
        }
        let mut it = match db.iter(ReadOptions::default()) {
            Ok(it) => it,
            Err(e) => {
                assert!(
                    e.is_corruption() && e.to_string().contains(".sst"),
                    "seed {s}: {e}"
                );
                continue;
            }
        };
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        assert!(
            n == 2000 || it.status().is_err(),
            "seed {s} round {round}: scan saw {n} keys without an error"
        );
        let _ = errors;
    }
}

#[test]
fn bit_flip_in_wal_middle_is_reported_with_file_and_offset() {
    let mem = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
    for i in 0..50u64 {
        db.put(&k(i), &[7u8; 100]).unwrap();
    }
    drop(db);
    let wal = files(&mem, ".log").pop().unwrap();
    assert!(mem.flip_bit(&wal, 1000, 3));
    match Db::open("/db", opts(Arc::new(mem.clone()))) {
        Ok(_) => panic!("corrupted WAL opened silently"),
        Err(e) => {
            let m = e.to_string();
            assert!(
                e.is_corruption() && m.contains(".log") && m.contains("offset"),
                "{m}"
            );
        }
    }
}

#[test]
fn dropping_a_column_family_during_its_compaction_keeps_the_db_openable() {
    let mem = MemFs::new();
    let hfs = HookFs::new(mem.clone());
    let cfo = CfOptions {
        write_buffer_size: 16 << 10,
        block_size: 512,
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 200,
        level0_stop_trigger: 300,
        ..CfOptions::default()
    };
    let db = Db::open_cf("/db", opts(Arc::new(hfs.clone())), &[("x", cfo.clone())]).unwrap();
    let cf = db.cf("x").unwrap();
    for round in 0..2u64 {
        for i in 0..300 {
            let mut b = WriteBatch::new();
            b.put_cf(cf.0, &k(i), &round.to_le_bytes());
            db.write(WriteOptions::default(), b).unwrap();
        }
        db.flush().unwrap(); // two overlapping L0 tables: not a trivial move
    }
    for i in 0..50 {
        db.put(&k(i), b"default").unwrap();
    }
    db.flush().unwrap();
    hfs.arm_gate();
    let t = {
        let db = db.clone();
        std::thread::spawn(move || db.compact_range(cf, None, None))
    };
    hfs.wait_gate_hit(); // the compaction is creating its output
    db.drop_cf(cf).unwrap();
    hfs.release_gate();
    let _ = t.join().unwrap(); // an error (no such family) is fine
    db.put(b"after", b"drop").unwrap();
    db.flush().unwrap();
    let live: usize = db.level_summary(lsm::DEFAULT_CF).iter().map(|l| l.0).sum();
    db.close().unwrap();
    assert_eq!(
        files(&mem, ".sst").len(),
        live,
        "tables of the dropped family (inputs and outputs) must be deleted"
    );
    let db = Db::open("/db", opts(Arc::new(mem.clone())))
        .expect("a family dropped during its compaction must not make the db unopenable");
    assert!(db.cf("x").is_none());
    assert_eq!(db.get(&k(7)).unwrap().as_deref(), Some(&b"default"[..]));
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"drop"[..]));
    db.close().unwrap();
    // The family can be created again, empty.
    let db = Db::open_cf("/db", opts(Arc::new(mem)), &[("x", cfo)]).unwrap();
    let cf = db.cf("x").unwrap();
    assert!(db
        .get_cf(&ReadOptions::default(), cf, &k(7))
        .unwrap()
        .is_none());
}

fn val(i: u64, generation: u64) -> Vec<u8> {
    format!("value-{i}-{generation}").into_bytes()
}

/// Options for crash-point sweeps: one memtable holds everything (no
/// background flush on its own) and compactions run only when asked.
fn sweep_opts(fs: Arc<dyn Fs>) -> Options {
    Options {
        fs: Some(fs),
        max_background_jobs: 1,
        default_cf: CfOptions {
            write_buffer_size: 1 << 20,
            block_size: 512,
            level0_compaction_trigger: 100,
            level0_slowdown_trigger: 200,
            level0_stop_trigger: 300,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

/// Checks that keys `0..n` hold generation `gen_of(i)`.
fn check_all(db: &Db, n: u64, gen_of: impl Fn(u64) -> u64, what: &str) {
    for i in 0..n {
        let got = db
            .get(&k(i))
            .unwrap_or_else(|e| panic!("{what}: get {i}: {e}"));
        assert_eq!(got, Some(val(i, gen_of(i))), "{what}: key {i}");
    }
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        seen += 1;
        it.next();
    }
    it.status()
        .unwrap_or_else(|e| panic!("{what}: scan after {seen} keys: {e}"));
    assert_eq!(seen, n, "{what}: scan");
}

#[test]
fn power_loss_right_after_flush_and_compaction_loses_nothing() {
    for compact in [false, true] {
        let mem = MemFs::new();
        let db = Db::open("/db", sweep_opts(Arc::new(mem.clone()))).unwrap();
        for i in 0..400 {
            db.put(&k(i), &val(i, 0)).unwrap();
        }
        db.flush().unwrap();
        if compact {
            for i in (0..400).step_by(2) {
                db.put(&k(i), &val(i, 1)).unwrap();
            }
            db.flush().unwrap();
            db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
        }
        drop(db);
        mem.crash();
        let what = if compact {
            "after compaction"
        } else {
            "after flush"
        };
        let db = Db::open("/db", sweep_opts(Arc::new(mem.clone())))
            .unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        let gen = |i: u64| u64::from(compact && i % 2 == 0);
        check_all(&db, 400, gen, what);
    }
}

/// Runs `work` with the process dying after each possible number of
/// file-system operations in turn; after a power loss the database must
/// reopen with every synced write.
#[test]
fn crash_at_every_point_of_flush_and_compaction_recovers() {
    let n = 300u64;
    let gen = |i: u64| u64::from(i % 3 == 0);
    let run = |die_after: Option<u64>| -> u64 {
        let mem = MemFs::new();
        let hfs = HookFs::new(mem.clone());
        let db = Db::open("/db", sweep_opts(Arc::new(hfs.clone()))).unwrap();
        for i in 0..n {
            db.put(&k(i), &val(i, 0)).unwrap();
        }
        db.flush().unwrap();
        for i in (0..n).step_by(3) {
            db.put(&k(i), &val(i, 1)).unwrap();
        }
        let start = hfs.ops();
        if let Some(d) = die_after {
            hfs.die_after(d);
        }
        let r = db
            .flush()
            .and_then(|()| db.compact_range(lsm::DEFAULT_CF, None, None));
        let used = hfs.ops() - start;
        if die_after.is_none() {
            r.unwrap();
        }
        drop(db);
        mem.crash();
        let what = format!("crash after {die_after:?} ops");
        let db = Db::open("/db", sweep_opts(Arc::new(mem.clone())))
            .unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        check_all(&db, n, gen, &what);
        db.close().unwrap();
        // And once more: recovery itself left a sound state.
        mem.crash();
        let db = Db::open("/db", sweep_opts(Arc::new(mem)))
            .unwrap_or_else(|e| panic!("{what}: second reopen: {e}"));
        check_all(&db, n, gen, &what);
        used
    };
    let total = run(None);
    assert!(total > 10, "{total} ops");
    for d in 0..=total {
        run(Some(d));
    }
}

/// Leaves a database whose last WAL ends in a torn record (a crash in the
/// middle of an unsynced write) and holds `n` synced writes.
fn db_with_torn_wal(mem: &MemFs, n: u64) {
    let db = Db::open("/db", sweep_opts(Arc::new(mem.clone()))).unwrap();
    for i in 0..n {
        db.put(&k(i), &val(i, 0)).unwrap();
    }
    drop(db);
    mem.crash();
    let wal = files(mem, ".log").pop().unwrap();
    let mut data = mem.read_all(&wal).unwrap();
    data.extend_from_slice(&[0x5a, 0x11, 0x22, 0x33, 0x40, 0x00, 0x01, 0xab, 0xcd]);
    let mut f = mem.create(&wal).unwrap();
    f.append(&data).unwrap();
    f.sync().unwrap();
    mem.sync_dir(Path::new("/db")).unwrap();
}

#[test]
fn crash_at_every_point_of_open_after_a_torn_wal_recovers() {
    let n = 200u64;
    let run = |die_after: Option<u64>| -> u64 {
        let mem = MemFs::new();
        db_with_torn_wal(&mem, n);
        let hfs = HookFs::new(mem.clone());
        if let Some(d) = die_after {
            hfs.die_after(d);
        }
        let r = Db::open("/db", sweep_opts(Arc::new(hfs.clone())));
        let used = hfs.ops();
        match r {
            Ok(db) => drop(db),
            Err(e) => assert!(die_after.is_some(), "open: {e}"),
        }
        mem.crash();
        let what = format!("crash after {die_after:?} ops of open");
        let db = Db::open("/db", sweep_opts(Arc::new(mem)))
            .unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        check_all(&db, n, |_| 0, &what);
        used
    };
    let total = run(None);
    assert!(total > 5, "{total} ops");
    for d in 0..=total {
        run(Some(d));
    }
}

#[test]
fn torn_wal_followed_only_by_empty_wals_opens_and_otherwise_is_corruption() {
    // Left by older versions that created the next WAL before logging that
    // the old ones were replayed, then crashed.
    let mem = MemFs::new();
    db_with_torn_wal(&mem, 100);
    let last = files(&mem, ".log").pop().unwrap();
    let name = last.file_name().unwrap().to_string_lossy().into_owned();
    let n: u64 = name.trim_end_matches(".log").parse().unwrap();
    let later = Path::new("/db").join(format!("{:06}.log", n + 50));
    mem.create(&later).unwrap().sync().unwrap();
    mem.sync_dir(Path::new("/db")).unwrap();
    let db = Db::open("/db", sweep_opts(Arc::new(mem.clone()))).unwrap();
    check_all(&db, 100, |_| 0, "torn WAL + empty WAL");
    drop(db);
    // A torn record followed by a WAL holding data is corruption.
    let mem = MemFs::new();
    db_with_torn_wal(&mem, 100);
    let torn = files(&mem, ".log").pop().unwrap();
    let data = mem.read_all(&torn).unwrap();
    let name = torn.file_name().unwrap().to_string_lossy().into_owned();
    let n: u64 = name.trim_end_matches(".log").parse().unwrap();
    let later = Path::new("/db").join(format!("{:06}.log", n + 50));
    let mut f = mem.create(&later).unwrap();
    f.append(&data[..data.len() - 9]).unwrap(); // whole records
    f.sync().unwrap();
    mem.sync_dir(Path::new("/db")).unwrap();
    match Db::open("/db", sweep_opts(Arc::new(mem))) {
        Ok(_) => panic!("a torn record before a newer WAL must be reported"),
        Err(e) => assert!(e.is_corruption(), "{e}"),
    }
}

fn manifest_name(mem: &MemFs) -> String {
    let mut v: Vec<String> = mem
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect();
    v.sort();
    v.pop().unwrap()
}

/// Every failed manifest append, table write or fsync, and WAL switch puts
/// the database in the read-only state: the failing call reports an error,
/// every later write (and column family change) is refused even once the
/// disk works again, and a reopen recovers everything acknowledged.
#[test]
fn manifest_table_and_wal_switch_errors_make_the_db_read_only() {
    type Action = fn(&Db, &FaultFs, &MemFs) -> lsm::Result<()>;
    let scenarios: Vec<(&str, &str, bool, bool, Action)> = vec![
        // (name, fault suffix ("M" = the manifest), writes, syncs, action)
        ("manifest write in flush", "M", true, false, |db, _, _| {
            db.flush()
        }),
        ("manifest sync in flush", "M", false, true, |db, _, _| {
            db.flush()
        }),
        (
            "manifest write in compaction",
            "M",
            true,
            false,
            |db, _, _| db.compact_range(lsm::DEFAULT_CF, None, None),
        ),
        (
            "manifest sync in create_cf",
            "M",
            false,
            true,
            |db, _, _| db.create_cf("y", CfOptions::default()).map(|_| ()),
        ),
        ("manifest write in drop_cf", "M", true, false, |db, _, _| {
            db.drop_cf(db.cf("x").unwrap())
        }),
        (
            "manifest write in ingest",
            "M",
            true,
            false,
            |db, _, mem| {
                let p = Path::new("/ext/in.sst");
                let mut w = lsm::db::SstFileWriter::create(mem, p, &CfOptions::default())?;
                w.put(b"zz-ingested", b"v")?;
                w.finish()?;
                db.ingest(lsm::DEFAULT_CF, &[p])
            },
        ),
        ("table fsync in flush", ".sst", false, true, |db, _, _| {
            db.flush()
        }),
        (
            "table write in compaction",
            ".sst",
            true,
            false,
            |db, _, _| db.compact_range(lsm::DEFAULT_CF, None, None),
        ),
        ("WAL create in switch", ".log", true, false, |db, _, _| {
            db.flush()
        }),
        (
            "old WAL fsync in switch",
            ".log",
            false,
            true,
            |db, _, _| db.flush(),
        ),
    ];
    for (name, suffix, writes, syncs, action) in scenarios {
        let mem = MemFs::new();
        let ffs = FaultFs::new(Arc::new(mem.clone()));
        let o = sweep_opts(Arc::new(ffs.clone()));
        let db = Db::open_cf("/db", o, &[("x", CfOptions::default())]).unwrap();
        for i in 0..200 {
            db.put(&k(i), &val(i, 0)).unwrap();
        }
        db.flush().unwrap();
        for i in 100..300 {
            db.put(&k(i), &val(i, 1)).unwrap();
        }
        db.flush().unwrap(); // two overlapping L0 tables
        for i in 300..400 {
            db.put(&k(i), &val(i, 2)).unwrap(); // in the memtable
        }
        let gen = |i: u64| match i {
            0..100 => 0,
            100..300 => 1,
            _ => 2,
        };
        let suffix = if suffix == "M" {
            manifest_name(&mem)
        } else {
            suffix.to_string()
        };
        ffs.set(&suffix, writes, syncs, FaultKind::Eio);
        let r = action(&db, &ffs, &mem);
        ffs.clear();
        let e = r.expect_err(name);
        assert!(
            matches!(e, Error::Io { .. } | Error::ReadOnly(_)),
            "{name}: {e}"
        );
        let e = db.put(b"later", b"v").expect_err(name);
        assert!(matches!(e, Error::ReadOnly(_)), "{name}: later write: {e}");
        assert!(db.create_cf("z", CfOptions::default()).is_err(), "{name}");
        assert!(db.flush().is_err(), "{name}: flush");
        assert_eq!(
            db.get(&k(5)).unwrap(),
            Some(val(5, 0)),
            "{name}: reads still work"
        );
        drop(db);
        let what = format!("{name}: reopen");
        let db = Db::open("/db", sweep_opts(Arc::new(mem.clone())))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        check_all(&db, 400, gen, &what);
        assert!(db.get(b"later").unwrap().is_none(), "{name}");
        drop(db);
        mem.crash();
        let what = format!("{name}: reopen after power loss");
        let db = Db::open("/db", sweep_opts(Arc::new(mem.clone())))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        check_all(&db, 400, gen, &what);
    }
}

#[test]
fn manifest_error_when_delete_range_drops_files_makes_the_db_read_only() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open("/db", sweep_opts(Arc::new(ffs.clone()))).unwrap();
    for i in 0..300 {
        db.put(&k(i), &val(i, 0)).unwrap();
    }
    db.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    db.put(&k(1000), b"outside").unwrap();
    ffs.set(&manifest_name(&mem), true, false, FaultKind::Eio);
    // The tombstone is written; dropping the covered tables fails.
    assert!(db.delete_range(lsm::DEFAULT_CF, &k(0), &k(500)).is_err());
    ffs.clear();
    let e = db.put(b"later", b"v").unwrap_err();
    assert!(matches!(e, Error::ReadOnly(_)), "{e}");
    assert!(db.get(&k(5)).unwrap().is_none());
    drop(db);
    mem.crash();
    let db = Db::open("/db", sweep_opts(Arc::new(mem))).unwrap();
    assert!(db.get(&k(5)).unwrap().is_none());
    assert_eq!(db.get(&k(1000)).unwrap().as_deref(), Some(&b"outside"[..]));
    assert!(db.get(b"later").unwrap().is_none());
}

#[test]
fn immutable_memtables_piling_up_slow_writes_before_the_stop() {
    let mem = MemFs::new();
    let hfs = HookFs::new(mem.clone());
    let o = Options {
        fs: Some(Arc::new(hfs.clone())),
        default_cf: CfOptions {
            write_buffer_size: 4 << 10,
            max_write_buffer_number: 5,
            ..CfOptions::default()
        },
        ..Options::default()
    };
    let db = Db::open("/db", o).unwrap();
    hfs.arm_gate(); // flushes cannot finish: immutable memtables pile up
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..2000 {
                db.put(&k(i), &[b'v'; 100]).unwrap();
            }
        })
    };
    hfs.wait_gate_hit();
    let t = std::time::Instant::now();
    while db.stats().slowdowns == 0 && t.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (slowdowns, stops) = (db.stats().slowdowns, db.stats().stops);
    hfs.release_gate();
    writer.join().unwrap();
    assert!(
        slowdowns > 0,
        "writes were not slowed before the stop ({stops} stops)"
    );
    db.flush().unwrap();
    assert_eq!(db.get(&k(1999)).unwrap().as_deref(), Some(&[b'v'; 100][..]));
}
