//! O_DIRECT reads (`use_direct_reads`): table files are read around the page
//! cache, with offsets and lengths widened to 4 KiB alignment and the bytes
//! read into an aligned buffer. Writes stay buffered (as RocksDB's
//! `use_direct_reads` without `use_direct_io_for_flush_and_compaction`).
//! Where the file system refuses O_DIRECT (tmpfs), reads fall back to
//! buffered I/O.
use super::{FileLock, Fs, OsFs, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ALIGN: u64 = 4096;

/// The OS file system with O_DIRECT table reads.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectFs;

struct DirectRandom {
    file: File,
    path: PathBuf,
    size: u64,
}

impl RandomAccessFile for DirectRandom {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let start = offset / ALIGN * ALIGN;
        let end = (offset + len as u64).div_ceil(ALIGN) * ALIGN;
        let n = (end - start) as usize;
        let mut buf = vec![0u8; n + ALIGN as usize];
        let shift = (ALIGN as usize - (buf.as_ptr() as usize % ALIGN as usize)) % ALIGN as usize;
        let window = &mut buf[shift..shift + n];
        let mut got = 0;
        while got < n {
            match self.file.read_at(&mut window[got..], start + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("read {} at {offset}+{len}", self.path.display()),
                        e,
                    ))
                }
            }
        }
        let skip = (offset - start) as usize;
        if got < skip + len {
            return Err(Error::io(
                format!("read {} at {offset}+{len}", self.path.display()),
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            ));
        }
        Ok(window[skip..skip + len].to_vec())
    }
    fn size(&self) -> u64 {
        self.size
    }
}

impl Fs for DirectFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        OsFs.create(path)
    }
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(file) => {
                let size = file
                    .metadata()
                    .map_err(|e| Error::io(format!("stat {}", path.display()), e))?
                    .len();
                Ok(Arc::new(DirectRandom {
                    file,
                    path: path.to_path_buf(),
                    size,
                }))
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => OsFs.open(path),
            Err(e) => Err(Error::io(format!("open {}", path.display()), e)),
        }
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        OsFs.read_all(path)
    }
    fn exists(&self, path: &Path) -> bool {
        OsFs.exists(path)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        OsFs.remove(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        OsFs.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        OsFs.link(from, to)
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        OsFs.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        OsFs.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        OsFs.sync_dir(dir)
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        OsFs.sync_file(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        OsFs.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        OsFs.lock(path)
    }
}
