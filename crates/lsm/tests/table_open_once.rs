//! Threads that miss the open-table cache on the same file at once open it
//! once (table_cache.rs): each open reads the file's whole index and filter,
//! and 32 connections meeting a cold file together used to read it 32 times
//! over (a TPC-C run at 600 MB was OOM-killed so).
#![allow(clippy::unwrap_used)]

use lsm::vfs::{FileLock, Fs, MemFs, RandomAccessFile, WritableFile};
use lsm::{Db, Options};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

/// Counts the opens of each table file; an open takes 50 ms, so threads
/// that miss together overlap.
struct CountFs {
    inner: Arc<dyn Fs>,
    opens: Mutex<HashMap<String, usize>>,
}

impl Fs for CountFs {
    fn create(&self, path: &Path) -> lsm::Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn open(&self, path: &Path) -> lsm::Result<Arc<dyn RandomAccessFile>> {
        let name = path.to_string_lossy().into_owned();
        if name.ends_with(".sst") {
            *self.opens.lock().unwrap().entry(name).or_default() += 1;
            std::thread::sleep(Duration::from_millis(50));
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

#[test]
fn threads_missing_on_one_table_open_it_once() {
    let mem = MemFs::new();
    let opts = |fs: Arc<dyn Fs>| Options {
        fs: Some(fs),
        auto_resume_interval: None,
        ..Options::default()
    };
    let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:06}").as_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    // Reopened: the open-table cache is cold.
    let fs = Arc::new(CountFs {
        inner: Arc::new(mem.clone()),
        opens: Mutex::new(HashMap::new()),
    });
    let db = Arc::new(Db::open("/db", opts(fs.clone())).unwrap());
    fs.opens.lock().unwrap().clear();
    let n = 16;
    let start = Arc::new(Barrier::new(n));
    let threads: Vec<_> = (0..n)
        .map(|t| {
            let (db, start) = (db.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let k = format!("k{:06}", t * 100);
                assert_eq!(
                    db.get(k.as_bytes()).unwrap().as_deref(),
                    Some(&b"value"[..])
                );
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let opens = fs.opens.lock().unwrap().clone();
    assert!(!opens.is_empty(), "the reads must have opened a table");
    for (file, n) in &opens {
        assert_eq!(
            *n, 1,
            "{file} opened {n} times by threads that missed together"
        );
    }
}
