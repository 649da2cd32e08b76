//! Fault injection: wraps another [`Fs`] and makes writes or syncs of
//! chosen files fail with EIO or ENOSPC, on demand.
use super::{FileLock, Fs, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// Which error to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// errno EIO.
    Eio,
    /// errno ENOSPC.
    NoSpace,
}

struct Faults {
    fail_write: AtomicBool,
    fail_sync: AtomicBool,
    kind: AtomicU8,
    suffix: Mutex<String>,
}

/// A file system that fails on request.
#[derive(Clone)]
pub struct FaultFs {
    inner: Arc<dyn Fs>,
    faults: Arc<Faults>,
}

impl FaultFs {
    /// Wraps `inner`; no faults are active until set.
    pub fn new(inner: Arc<dyn Fs>) -> FaultFs {
        FaultFs {
            inner,
            faults: Arc::new(Faults {
                fail_write: AtomicBool::new(false),
                fail_sync: AtomicBool::new(false),
                kind: AtomicU8::new(0),
                suffix: Mutex::new(String::new()),
            }),
        }
    }

    /// Makes writes (and/or syncs) of files whose name ends with `suffix`
    /// fail with `kind` from now on. An empty suffix matches every file.
    pub fn set(&self, suffix: &str, writes: bool, syncs: bool, kind: FaultKind) {
        *self.faults.suffix.lock().unwrap_or_else(|p| p.into_inner()) = suffix.to_string();
        self.faults.kind.store(kind as u8, Ordering::SeqCst);
        self.faults.fail_write.store(writes, Ordering::SeqCst);
        self.faults.fail_sync.store(syncs, Ordering::SeqCst);
    }

    /// Stops injecting faults.
    pub fn clear(&self) {
        self.faults.fail_write.store(false, Ordering::SeqCst);
        self.faults.fail_sync.store(false, Ordering::SeqCst);
    }
}

impl Faults {
    fn check(&self, path: &Path, sync: bool) -> Result<()> {
        let on = if sync {
            &self.fail_sync
        } else {
            &self.fail_write
        };
        if !on.load(Ordering::SeqCst) {
            return Ok(());
        }
        let suffix = self
            .suffix
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if !path.to_string_lossy().ends_with(&suffix) {
            return Ok(());
        }
        let errno = if self.kind.load(Ordering::SeqCst) == FaultKind::NoSpace as u8 {
            28
        } else {
            5
        };
        let what = if sync { "fsync" } else { "write" };
        Err(Error::io(
            format!("{what} {} (injected)", path.display()),
            std::io::Error::from_raw_os_error(errno),
        ))
    }
}

struct FaultWritable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    faults: Arc<Faults>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.faults.check(&self.path, false)?;
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.faults.check(&self.path, false)?;
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.faults.check(&self.path, true)?;
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl Fs for FaultFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.faults.check(path, false)?;
        Ok(Box::new(FaultWritable {
            inner: self.inner.create(path)?,
            path: path.to_path_buf(),
            faults: self.faults.clone(),
        }))
    }
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.open(path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.inner.remove(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.link(from, to)
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.inner.sync_dir(dir)
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        self.faults.check(path, true)?;
        self.inner.sync_file(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}
