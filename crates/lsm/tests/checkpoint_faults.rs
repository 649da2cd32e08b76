//! Checkpoints and failures: a WAL that cannot be created fails the
//! checkpoint but leaves the database writable; `resume` after a full disk
//! keeps the WALs a running checkpoint still copies; writes made without a
//! WAL are in the copy; the copy's sequence number is the visible one.
#![allow(clippy::unwrap_used)]

use lsm::vfs::{FaultFs, FaultKind, FileLock, Fs, MemFs, RandomAccessFile, WritableFile};
use lsm::{Db, Options, WriteBatch, WriteOptions};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn opts(fs: Arc<dyn Fs>) -> Options {
    Options {
        fs: Some(fs),
        auto_resume_interval: None,
        ..Options::default()
    }
}

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn a_failed_wal_create_fails_the_checkpoint_but_not_the_database() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open("/db", opts(Arc::new(ffs.clone()))).unwrap();
    for i in 0..100 {
        db.put(&k(i), b"v").unwrap();
    }
    // Creating a new WAL fails (syncs of the old one still work).
    ffs.set(".log", true, false, FaultKind::Eio);
    assert!(
        db.checkpoint("/ckpt1").is_err(),
        "checkpoint without its WAL switch"
    );
    ffs.clear();
    db.put(b"after", b"the failure")
        .expect("a failed backup must leave the database writable");
    assert_eq!(db.stats().background_errors, 0);
    // The next checkpoint (into a fresh directory) works and holds everything.
    db.checkpoint("/ckpt2").unwrap();
    db.close().unwrap();
    let c = Db::open("/ckpt2", opts(Arc::new(mem.clone()))).unwrap();
    assert_eq!(c.get(&k(99)).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(
        c.get(b"after").unwrap().as_deref(),
        Some(&b"the failure"[..])
    );
    c.close().unwrap();
}

#[test]
fn a_failed_sync_of_the_old_wal_is_still_fatal() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open("/db", opts(Arc::new(ffs.clone()))).unwrap();
    db.put(b"a", b"1").unwrap();
    ffs.set(".log", false, true, FaultKind::Eio);
    assert!(db.checkpoint("/ckpt").is_err());
    ffs.clear();
    assert!(
        db.put(b"b", b"2").is_err(),
        "an unsynced WAL must make the database read-only"
    );
}

/// A file system that, once armed, holds the first `open` of a WAL in the
/// database directory (a checkpoint copying it) until released.
struct GateFs {
    inner: Arc<dyn Fs>,
    armed: AtomicBool,
    reached: Mutex<Option<mpsc::Sender<()>>>,
    release: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Fs for GateFs {
    fn create(&self, path: &Path) -> lsm::Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn open(&self, path: &Path) -> lsm::Result<Arc<dyn RandomAccessFile>> {
        let wal = path.starts_with("/db") && path.to_string_lossy().ends_with(".log");
        if wal && self.armed.swap(false, Ordering::SeqCst) {
            if let Some(tx) = self.reached.lock().unwrap().take() {
                tx.send(()).unwrap();
            }
            if let Some(rx) = self.release.lock().unwrap().take() {
                rx.recv_timeout(Duration::from_secs(60)).unwrap();
            }
        }
        self.inner.open(path)
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

/// `resume` flushes every memtable and drops the old WALs, but one a
/// running checkpoint pinned is still being copied: it must stay.
#[test]
fn resume_keeps_the_wals_a_running_checkpoint_copies() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let (reached_tx, reached_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let gate = Arc::new(GateFs {
        inner: Arc::new(ffs.clone()),
        armed: AtomicBool::new(false),
        reached: Mutex::new(Some(reached_tx)),
        release: Mutex::new(Some(release_rx)),
    });
    let db = Db::open("/db", opts(gate.clone())).unwrap();
    for i in 0..200 {
        db.put(&k(i), b"in the wal").unwrap();
    }
    gate.armed.store(true, Ordering::SeqCst);
    let d2 = db.clone();
    let ckpt = std::thread::spawn(move || d2.checkpoint("/ckpt"));
    reached_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    // The checkpoint cut and is about to copy the pinned WAL: fill the disk.
    ffs.set(".log", true, false, FaultKind::NoSpace);
    assert!(db.put(b"x", b"y").is_err());
    ffs.clear();
    db.resume().unwrap();
    db.put(b"after", b"resume").unwrap();
    release_tx.send(()).unwrap();
    let info = ckpt
        .join()
        .unwrap()
        .expect("the checkpoint lost its pinned WAL");
    assert!(info.sequence >= 200, "{info:?}");
    // Once the checkpoint is done, the WALs it pinned go (without waiting
    // for a flush): only the current one is left.
    let wals: Vec<String> = mem
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(wals.len(), 1, "{wals:?}");
    db.close().unwrap();
    let c = Db::open("/ckpt", opts(Arc::new(mem.clone()))).unwrap();
    for i in 0..200 {
        assert_eq!(
            c.get(&k(i)).unwrap().as_deref(),
            Some(&b"in the wal"[..]),
            "key {i}"
        );
    }
    assert_eq!(c.get(b"after").unwrap(), None);
    c.close().unwrap();
}

/// Writes made with `disable_wal` live only in a memtable: the checkpoint
/// flushes them so that the copy holds them, and reports the visible
/// sequence number.
#[test]
fn a_checkpoint_holds_writes_made_without_the_wal() {
    let mem = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
    db.put(b"logged", b"1").unwrap();
    let mut b = WriteBatch::new();
    for i in 0..50 {
        b.put(&k(i), b"unlogged");
    }
    let no_wal = WriteOptions {
        disable_wal: true,
        ..WriteOptions::default()
    };
    db.write(no_wal, b).unwrap();
    let info = db.checkpoint("/ckpt").unwrap();
    assert_eq!(info.sequence, db.latest_sequence());
    assert_eq!(info.sequence, 51);
    db.close().unwrap();
    let c = Db::open("/ckpt", opts(Arc::new(mem.clone()))).unwrap();
    assert_eq!(c.get(b"logged").unwrap().as_deref(), Some(&b"1"[..]));
    for i in 0..50 {
        assert_eq!(
            c.get(&k(i)).unwrap().as_deref(),
            Some(&b"unlogged"[..]),
            "key {i} written without the WAL is missing from the copy"
        );
    }
    c.close().unwrap();
}

/// A write made with `disable_wal` marks only the memtable it goes into: an
/// empty memtable of another column family (which a flush does not switch)
/// must not hold every later checkpoint at Busy.
#[test]
fn a_write_without_the_wal_to_one_cf_does_not_block_later_checkpoints() {
    let mem = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
    let other = db.create_cf("other", lsm::CfOptions::default()).unwrap();
    let no_wal = WriteOptions {
        disable_wal: true,
        ..WriteOptions::default()
    };
    let mut b = WriteBatch::new();
    b.put_cf(other.0, b"only", b"in other");
    db.write(no_wal, b).unwrap();
    // An empty batch without the WAL marks nothing either.
    db.write(no_wal, WriteBatch::new()).unwrap();
    db.checkpoint("/ckpt1")
        .expect("the default column family's empty memtable holds no unlogged write");
    db.checkpoint("/ckpt2").expect("a second checkpoint too");
    db.close().unwrap();
    let c = Db::open("/ckpt2", opts(Arc::new(mem.clone()))).unwrap();
    let cf = c.cf("other").unwrap();
    assert_eq!(
        c.get_cf(&lsm::ReadOptions::default(), cf, b"only")
            .unwrap()
            .as_deref(),
        Some(&b"in other"[..])
    );
    c.close().unwrap();
}
