//! The real file system, through `std::fs`, with a user-space write buffer.
use super::{FileLock, Fs, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const WRITE_BUFFER: usize = 64 * 1024;
/// Written bytes between asynchronous write-back requests (RocksDB's
/// `bytes_per_sync`): a big table file reaches the disk in a steady stream
/// instead of one burst at its final fsync, which would queue the WAL's
/// fsyncs behind it.
const BYTES_PER_SYNC: u64 = 1 << 20;

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsFs;

struct OsWritable {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    size: u64,
    /// Bytes handed to write-back so far (`sync_file_range`).
    range_synced: u64,
}

impl OsWritable {
    /// Starts write-back of what was written since the last call, once it
    /// reaches `BYTES_PER_SYNC`. A hint: failure is ignored (fsync reports errors).
    #[allow(unsafe_code)]
    fn range_sync(&mut self) {
        let written = self.size - self.buf.len() as u64;
        if written < self.range_synced + BYTES_PER_SYNC {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: a valid open descriptor; the call reads no memory.
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    self.range_synced as libc::off64_t,
                    (written - self.range_synced) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.range_synced = written;
    }
}

impl WritableFile for OsWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.size += data.len() as u64;
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush()?;
            if data.len() > WRITE_BUFFER {
                self.file
                    .write_all(data)
                    .map_err(|e| Error::io(format!("write {}", self.path.display()), e))?;
                self.range_sync();
                return Ok(());
            }
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            let r = self.file.write_all(&self.buf);
            self.buf.clear();
            r.map_err(|e| Error::io(format!("write {}", self.path.display()), e))?;
            self.range_sync();
        }
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io(format!("fsync {}", self.path.display()), e))
    }
    fn size(&self) -> u64 {
        self.size
    }
}

struct OsRandom {
    file: File,
    path: PathBuf,
    size: u64,
}

impl RandomAccessFile for OsRandom {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(len);
        pread_exact(&self.file, &mut buf, len, offset)
            .map_err(|e| Error::io(format!("read {} at {offset}+{len}", self.path.display()), e))?;
        Ok(buf)
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn advise_sequential(&self) {}
}

/// Reads exactly `len` bytes at `offset` into `buf`'s spare capacity (`buf` is
/// empty on entry and holds the bytes on success), without zero-filling it
/// first: `vec![0; len]` + `read_exact_at` wrote every byte twice, which was 2%
/// of the server's CPU under sysbench writes (compaction readahead reads of
/// 256 KiB and more, bench/results/write-cpu-2026-11-27b.md).
#[allow(unsafe_code)]
fn pread_exact(file: &File, buf: &mut Vec<u8>, len: usize, offset: u64) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    buf.clear();
    buf.reserve_exact(len);
    let mut done = 0usize;
    while done < len {
        let at = offset
            .checked_add(done as u64)
            .and_then(|o| libc::off_t::try_from(o).ok())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: the destination is the vector's spare capacity, `len - done`
        // bytes from offset `done` of an allocation of at least `len` bytes
        // (reserved above; `done <= len`); pread writes at most that many bytes
        // there and reads no memory. The fd is open for the call's duration.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                buf.as_mut_ptr().add(done).cast::<libc::c_void>(),
                len - done,
                at,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "failed to fill whole buffer",
            ));
        }
        // pread returns at most the count it was given.
        done += (n as usize).min(len - done);
    }
    // SAFETY: pread initialized bytes 0..len (each call filled done..done+n).
    unsafe { buf.set_len(len) };
    Ok(())
}

/// Turns off the kernel's readahead for a table file (RocksDB's
/// `advise_random_on_open`): point reads want one block, and scans and
/// compactions read ahead themselves (`Readahead`), so kernel readahead only
/// pulls pages nobody asked for into a page cache that, under a memory
/// limit, evicts useful ones to make room. A hint: failure is ignored.
/// Tells the kernel a file's pages are not needed in the page cache any more (after
/// they were written back): for temporary files whose dirty pages a memory limit would
/// count. A hint: failure is ignored.
#[allow(unsafe_code)]
pub fn drop_page_cache(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a valid open descriptor; the call reads no memory.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[allow(unsafe_code)]
fn advise_random(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a valid open descriptor; the call reads no memory.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

struct OsLock(#[allow(dead_code)] File);
impl FileLock for OsLock {}

/// Files and directories the engine creates are its owner's alone (0600 / 0700): a
/// database holds its users' data.
pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;

fn ctx(op: &str, p: &Path) -> String {
    format!("{op} {}", p.display())
}

impl Fs for OsFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(FILE_MODE)
            .open(path)
            .map_err(|e| Error::io(ctx("create", path), e))?;
        Ok(Box::new(OsWritable {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(WRITE_BUFFER),
            size: 0,
            range_synced: 0,
        }))
    }
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io(ctx("open", path), e))?;
        advise_random(&file);
        let size = file
            .metadata()
            .map_err(|e| Error::io(ctx("stat", path), e))?
            .len();
        Ok(Arc::new(OsRandom {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        fs::read(path).map_err(|e| Error::io(ctx("read", path), e))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn remove(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io(ctx("remove", path), e))
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| Error::io(ctx("rename", from), e))
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        fs::hard_link(from, to).map_err(|e| Error::io(ctx("link", from), e))
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir).map_err(|e| Error::io(ctx("list", dir), e))? {
            let e = e.map_err(|e| Error::io(ctx("list", dir), e))?;
            out.push(e.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)
            .map_err(|e| Error::io(ctx("mkdir", dir), e))
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let f = File::open(dir).map_err(|e| Error::io(ctx("open dir", dir), e))?;
        f.sync_all()
            .map_err(|e| Error::io(ctx("fsync dir", dir), e))
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        let f = File::open(path).map_err(|e| Error::io(ctx("open", path), e))?;
        f.sync_all().map_err(|e| Error::io(ctx("fsync", path), e))
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(fs::metadata(path)
            .map_err(|e| Error::io(ctx("stat", path), e))?
            .len())
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(FILE_MODE)
            .open(path)
            .map_err(|e| Error::io(ctx("open lock", path), e))?;
        match f.try_lock() {
            Ok(()) => Ok(Box::new(OsLock(f))),
            Err(_) => Err(Error::Busy(format!(
                "{} is locked: is another process using this database?",
                path.display()
            ))),
        }
    }
}
