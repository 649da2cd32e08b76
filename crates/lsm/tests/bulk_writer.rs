//! `BulkWriter`'s file thread: an error there (a full disk) reaches the next
//! `put` instead of a batch later, a writer dropped unfinished removes its
//! files, and `seal` ends the thread before the ingestion (a load keeps one
//! writer per index until then: one thread each otherwise).
#![allow(clippy::unwrap_used)]

use lsm::vfs::{FaultFs, FaultKind, Fs, MemFs};
use lsm::{CfOptions, Db, Options, DEFAULT_CF};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The tests count the process's bulk threads: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn open(fs: Arc<dyn Fs>) -> Db {
    Db::open(
        Path::new("/db"),
        Options {
            fs: Some(fs),
            default_cf: CfOptions {
                target_file_size: 256 << 10,
                ..CfOptions::default()
            },
            ..Options::default()
        },
    )
    .unwrap()
}

fn k(i: u64) -> Vec<u8> {
    format!("key{i:010}").into_bytes()
}

/// Threads of this process named `strata-bulk`.
fn bulk_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.trim() == "strata-bulk")
        .count()
}

/// The writer's temporary files in the database directory.
fn tmp_files(fs: &MemFs) -> Vec<String> {
    let mut v = fs.list(Path::new("/db")).unwrap();
    v.retain(|n| n.ends_with(".tmp"));
    v
}

#[test]
fn a_failed_file_write_reaches_the_next_put() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = open(Arc::new(ffs.clone()));
    ffs.set(".sst.tmp", true, false, FaultKind::NoSpace);
    let mut w = db.bulk_writer(DEFAULT_CF).unwrap();
    // A little over one batch (1 MiB, some 8,600 entries): the first goes
    // to the thread, which fails on it; the error comes back at the first
    // put after that (before, only when the next batch was sent, another
    // 8,600 entries later).
    let v = [b'v'; 100];
    let mut failed = None;
    for i in 0..9_000 {
        if let Err(e) = w.put(&k(i), &v) {
            failed = Some(e);
            break;
        }
    }
    // The thread may not have failed yet: put on until its error comes back
    // (a fixed 300 ms wait was flaky on a loaded machine).
    let e = failed.unwrap_or_else(|| {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let mut i = 9_000;
        loop {
            match w.put(&k(i), &v) {
                Err(e) => break e,
                Ok(()) if std::time::Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                    i += 1;
                }
                Ok(()) => panic!("no error from the bulk writer's thread in 10 s"),
            }
        }
    });
    assert!(e.to_string().contains("injected"), "{e}");
    drop(w);
    ffs.clear();
    assert!(tmp_files(&mem).is_empty(), "{:?}", tmp_files(&mem));
    // The database writes on.
    db.put(b"a", b"b").unwrap();
}

#[test]
fn sealed_writers_hold_no_thread_and_dropped_ones_leave_no_files() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mem = MemFs::new();
    let db = open(Arc::new(mem.clone()));
    let before = bulk_threads();
    let mut writers = Vec::new();
    for w in 0..6u64 {
        let mut bw = db.bulk_writer(DEFAULT_CF).unwrap();
        for i in 0..5000 {
            bw.put(&k(w * 10_000 + i), &[b'x'; 200]).unwrap();
        }
        bw.seal().unwrap();
        writers.push(bw);
    }
    assert_eq!(bulk_threads(), before, "sealed writers kept their threads");
    lsm::BulkWriter::ingest_all(writers).unwrap();
    assert_eq!(db.get(&k(50_000)).unwrap(), Some(vec![b'x'; 200]));
    // Unfinished, with batches queued: dropped, its files go.
    let mut bw = db.bulk_writer(DEFAULT_CF).unwrap();
    for i in 0..20_000 {
        bw.put(&k(100_000 + i), &[b'y'; 200]).unwrap();
    }
    drop(bw);
    assert!(tmp_files(&mem).is_empty(), "{:?}", tmp_files(&mem));
    assert_eq!(bulk_threads(), before);
}
