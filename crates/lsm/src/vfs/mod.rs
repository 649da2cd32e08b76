//! The file-system seam. Every byte the engine reads or writes goes through
//! an [`Fs`]: [`OsFs`] is the real one; [`MemFs`] keeps files in memory and
//! can simulate a power loss (dropping every byte not yet synced); [`FaultFs`]
//! wraps another `Fs` and injects EIO or ENOSPC into writes and syncs.
//!
//! Implementations are shared between threads (`Send + Sync`); a
//! `WritableFile` is used by one thread at a time.
mod direct;
mod fault;
mod mem;
mod os;

pub use direct::DirectFs;
pub use fault::{FaultFs, FaultKind};
pub use mem::MemFs;
pub use os::{drop_page_cache, OsFs};

use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// A file being written sequentially.
pub trait WritableFile: Send {
    /// Appends bytes (may be buffered in user space).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered bytes to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Makes every appended byte durable (flush + fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn size(&self) -> u64;
}

/// A file read at arbitrary offsets, shared between threads.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `len` bytes at `offset` (an error if the file is shorter).
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>>;
    /// The file's size.
    fn size(&self) -> u64;
    /// Hints that the file will be read sequentially (compaction, scans).
    fn advise_sequential(&self) {}
}

/// A held lock on the database directory; released on drop.
pub trait FileLock: Send + Sync {}

/// The file system the engine runs on.
pub trait Fs: Send + Sync {
    /// Creates (or truncates) a file for writing.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens a file for positional reads.
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> Result<Vec<u8>>;
    /// True if the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Removes a file.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Atomically renames a file.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Creates a hard link (used by checkpoints).
    fn link(&self, from: &Path, to: &Path) -> Result<()>;
    /// File names (not paths) in a directory.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Makes renames and creations in a directory durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Makes an existing file's data durable (fsync), e.g. one hard-linked
    /// in that another process wrote.
    fn sync_file(&self, path: &Path) -> Result<()>;
    /// Size of a file in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Takes an exclusive lock on `path`, creating it if needed.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
}

/// Writes `data` to `path` and syncs it (used for CURRENT and small files).
pub fn write_file_synced(fs: &dyn Fs, path: &Path, data: &[u8]) -> Result<()> {
    let mut f = fs.create(path)?;
    f.append(data)?;
    f.sync()
}
