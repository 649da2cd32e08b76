//! Shared test helpers, from the workspace's testkit crate: a seeded PRNG (seed from
//! `SEED=...` or the clock, always printed) and temporary directories.
#![allow(unused_imports, dead_code)] // each test file uses a different subset
pub use testkit::{seed, temp_dir, Rng};

use lsm::vfs::{FileLock, Fs, RandomAccessFile, WritableFile};
use std::path::Path;
use std::sync::Arc;

/// A file system that passes everything to `inner` and calls `on_open`
/// before each `open` (to count opens or hold one).
pub struct OpenHookFs {
    pub inner: Arc<dyn Fs>,
    pub on_open: Box<dyn Fn(&Path) + Send + Sync>,
}

impl Fs for OpenHookFs {
    fn create(&self, path: &Path) -> lsm::Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn open(&self, path: &Path) -> lsm::Result<Arc<dyn RandomAccessFile>> {
        (self.on_open)(path);
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
