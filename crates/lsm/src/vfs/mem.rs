//! An in-memory file system that remembers, per file, how many bytes were
//! synced, and per directory, which entries (names) were made durable by a
//! sync of the directory. [`MemFs::crash`] simulates a power loss: the
//! directories go back to their last synced entries (creations, renames,
//! links and removals since then are undone) and every file is cut back to
//! its synced length.
use super::{FileLock, Fs, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Default)]
struct MemFile {
    data: Vec<u8>,
    synced: usize,
}

type Shared = Arc<Mutex<MemFile>>;

#[derive(Default)]
struct State {
    files: HashMap<PathBuf, Shared>,
    /// Directory entries as of the last sync of their directory.
    durable: HashMap<PathBuf, Shared>,
    locks: HashSet<PathBuf>,
}

/// An in-memory, crashable file system.
#[derive(Clone, Default)]
pub struct MemFs {
    state: Arc<Mutex<State>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn not_found(p: &Path) -> Error {
    Error::io(
        p.display().to_string(),
        std::io::Error::from(std::io::ErrorKind::NotFound),
    )
}

impl MemFs {
    /// A new empty file system.
    pub fn new() -> MemFs {
        MemFs::default()
    }

    /// Drops everything not durable, as a power loss would: directory
    /// entries not made durable by [`Fs::sync_dir`] (a created file whose
    /// directory was not synced vanishes, an unsynced rename or removal is
    /// undone) and unsynced bytes. Locks are released (the process died).
    pub fn crash(&self) {
        let mut st = lock(&self.state);
        st.files = st.durable.clone();
        for f in st.files.values() {
            let mut f = lock(f);
            let n = f.synced;
            f.data.truncate(n);
        }
        st.locks.clear();
    }

    /// Flips one bit of a file (for corruption tests).
    pub fn flip_bit(&self, path: &Path, offset: usize, bit: u8) -> bool {
        let st = lock(&self.state);
        match st.files.get(path) {
            Some(f) => {
                let mut f = lock(f);
                match f.data.get_mut(offset) {
                    Some(b) => {
                        *b ^= 1 << (bit % 8);
                        true
                    }
                    None => false,
                }
            }
            None => false,
        }
    }

    fn get(&self, path: &Path) -> Result<Shared> {
        lock(&self.state)
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| not_found(path))
    }
}

struct MemWritable {
    file: Shared,
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        lock(&self.file).data.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        let mut f = lock(&self.file);
        f.synced = f.data.len();
        Ok(())
    }
    fn size(&self) -> u64 {
        lock(&self.file).data.len() as u64
    }
}

struct MemRandom {
    file: Shared,
    name: String,
}

impl RandomAccessFile for MemRandom {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let f = lock(&self.file);
        let start = offset as usize;
        match f.data.get(start..start.saturating_add(len)) {
            Some(s) => Ok(s.to_vec()),
            None => Err(Error::io(
                format!("read {} at {offset}+{len}", self.name),
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn size(&self) -> u64 {
        lock(&self.file).data.len() as u64
    }
}

struct MemLock {
    fs: MemFs,
    path: PathBuf,
}
impl FileLock for MemLock {}
impl Drop for MemLock {
    fn drop(&mut self) {
        lock(&self.fs.state).locks.remove(&self.path);
    }
}

impl Fs for MemFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let f: Shared = Arc::default();
        lock(&self.state)
            .files
            .insert(path.to_path_buf(), f.clone());
        Ok(Box::new(MemWritable { file: f }))
    }
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(MemRandom {
            file: self.get(path)?,
            name: path.display().to_string(),
        }))
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        let f = self.get(path)?;
        let d = lock(&f).data.clone();
        Ok(d)
    }
    fn exists(&self, path: &Path) -> bool {
        lock(&self.state).files.contains_key(path)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        lock(&self.state)
            .files
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = lock(&self.state);
        let f = st.files.remove(from).ok_or_else(|| not_found(from))?;
        st.files.insert(to.to_path_buf(), f);
        Ok(())
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = lock(&self.state);
        let f = st.files.get(from).cloned().ok_or_else(|| not_found(from))?;
        st.files.insert(to.to_path_buf(), f);
        Ok(())
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let st = lock(&self.state);
        Ok(st
            .files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn create_dir_all(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        let f = self.get(path)?;
        let mut f = lock(&f);
        f.synced = f.data.len();
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let mut st = lock(&self.state);
        let st = &mut *st;
        st.durable.retain(|p, _| p.parent() != Some(dir));
        for (p, f) in &st.files {
            if p.parent() == Some(dir) {
                st.durable.insert(p.clone(), f.clone());
            }
        }
        Ok(())
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        let f = self.get(path)?;
        let n = lock(&f).data.len() as u64;
        Ok(n)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut st = lock(&self.state);
        if !st.locks.insert(path.to_path_buf()) {
            return Err(Error::Busy(format!("{} is locked", path.display())));
        }
        Ok(Box::new(MemLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }
}
