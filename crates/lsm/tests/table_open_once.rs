//! Threads that miss the open-table cache on the same file at once open it
//! once (table_cache.rs): each open reads the file's whole index and filter,
//! and 32 connections meeting a cold file together used to read it 32 times
//! over (a TPC-C run at 600 MB was OOM-killed so).
#![allow(clippy::unwrap_used)]

mod common;
use common::OpenHookFs;
use lsm::vfs::{Fs, MemFs};
use lsm::{Db, Options};
use std::collections::HashMap;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

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
    // Reopened: the open-table cache is cold. Each open of a table file is
    // counted and takes 50 ms, so threads that miss together overlap.
    let opens: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let counted = opens.clone();
    let fs = Arc::new(OpenHookFs {
        inner: Arc::new(mem.clone()),
        on_open: Box::new(move |path| {
            let name = path.to_string_lossy().into_owned();
            if name.ends_with(".sst") {
                *counted.lock().unwrap().entry(name).or_default() += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        }),
    });
    let db = Arc::new(Db::open("/db", opts(fs.clone())).unwrap());
    opens.lock().unwrap().clear();
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
    let opens = opens.lock().unwrap().clone();
    assert!(!opens.is_empty(), "the reads must have opened a table");
    for (file, n) in &opens {
        assert_eq!(
            *n, 1,
            "{file} opened {n} times by threads that missed together"
        );
    }
}
