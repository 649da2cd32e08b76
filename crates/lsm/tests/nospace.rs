//! A full disk makes the database read-only, never loses an acknowledged write, and the
//! database resumes writing once space is free (`Db::resume`, or by itself every
//! `auto_resume_interval`), also when it was opened on a full disk. Other errors (EIO)
//! stay final until a reopen.
#![allow(clippy::unwrap_used)]

use lsm::vfs::{FaultFs, FaultKind, Fs, MemFs};
use lsm::{CfOptions, Db, Error, Options};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn opts(fs: Arc<dyn Fs>, auto: Option<Duration>) -> Options {
    Options {
        fs: Some(fs),
        default_cf: CfOptions {
            write_buffer_size: 16 << 10,
            block_size: 512,
            ..CfOptions::default()
        },
        auto_resume_interval: auto,
        ..Options::default()
    }
}

fn k(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn v(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

fn check(db: &Db, present: impl Iterator<Item = u64>) {
    for i in present {
        assert_eq!(db.get(&k(i)).unwrap(), Some(v(i)), "key {i}");
    }
}

#[test]
fn writes_resume_after_a_full_disk_on_wal_flush_and_manifest_writes() {
    for suffix in [".log", ".sst", ""] {
        let mem = MemFs::new();
        let ffs = FaultFs::new(Arc::new(mem.clone()));
        let dir = Path::new("/db");
        let db = Db::open(dir, opts(Arc::new(ffs.clone()), None)).unwrap();
        for i in 0..300 {
            db.put(&k(i), &v(i)).unwrap();
        }
        ffs.set(suffix, true, false, FaultKind::NoSpace);
        // Writes until one fails (a flush may need a few memtables to fill up).
        let mut next = 300;
        let failed_at = loop {
            match db.put(&k(next), &v(next)) {
                Ok(()) => next += 1,
                Err(_) => break next,
            }
            assert!(next < 5000, "{suffix}: no write failed on a full disk");
            if suffix == ".sst" && next % 50 == 0 {
                let _ = db.flush();
            }
        };
        let e = db.put(&k(failed_at + 1), b"x").unwrap_err();
        assert!(
            matches!(e, Error::ReadOnly(_) | Error::NoSpace(_)),
            "{suffix}: {e}"
        );
        // Still full: resume fails and the database stays read-only.
        assert!(db.resume().is_err(), "{suffix}: resumed on a full disk");
        assert!(db.put(&k(failed_at + 1), b"x").is_err());
        check(&db, 0..failed_at);
        ffs.clear();
        db.resume().unwrap();
        for i in failed_at + 1..failed_at + 200 {
            db.put(&k(i), &v(i)).unwrap();
        }
        check(&db, (0..failed_at).chain(failed_at + 1..failed_at + 200));
        // Everything acknowledged survives a power loss.
        drop(db);
        mem.crash();
        let db = Db::open(dir, opts(Arc::new(mem.clone()), None)).unwrap();
        check(&db, (0..failed_at).chain(failed_at + 1..failed_at + 200));
        assert!(db.get(&k(failed_at)).unwrap().is_none());
    }
}

#[test]
fn the_database_resumes_by_itself_once_space_is_free() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open(
        "/db",
        opts(Arc::new(ffs.clone()), Some(Duration::from_millis(50))),
    )
    .unwrap();
    for i in 0..50 {
        db.put(&k(i), &v(i)).unwrap();
    }
    ffs.set(".log", true, false, FaultKind::NoSpace);
    assert!(db.put(&k(50), &v(50)).is_err());
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        db.put(&k(51), &v(51)).is_err(),
        "resumed while the disk is full"
    );
    ffs.clear();
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.put(&k(52), &v(52)).is_err() {
        assert!(Instant::now() < deadline, "writes did not resume");
        std::thread::sleep(Duration::from_millis(20));
    }
    check(&db, (0..50).chain(52..53));
}

#[test]
fn a_database_opened_on_a_full_disk_serves_reads_and_resumes() {
    let mem = MemFs::new();
    let dir = Path::new("/db");
    {
        let db = Db::open(dir, opts(Arc::new(mem.clone()), None)).unwrap();
        for i in 0..400 {
            db.put(&k(i), &v(i)).unwrap();
        }
    }
    // The process dies with data in its WALs; the disk is full when it restarts.
    mem.crash();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    ffs.set("", true, true, FaultKind::NoSpace);
    let db = Db::open(
        dir,
        opts(Arc::new(ffs.clone()), Some(Duration::from_millis(50))),
    )
    .unwrap();
    check(&db, 0..400);
    let e = db.put(&k(400), &v(400)).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    ffs.clear();
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.put(&k(400), &v(400)).is_err() {
        assert!(Instant::now() < deadline, "writes did not resume");
        std::thread::sleep(Duration::from_millis(20));
    }
    check(&db, 0..401);
    drop(db);
    mem.crash();
    let db = Db::open(dir, opts(Arc::new(mem.clone()), None)).unwrap();
    check(&db, 0..401);
}

#[test]
fn an_io_error_is_not_resumed() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open(
        "/db",
        opts(Arc::new(ffs.clone()), Some(Duration::from_millis(20))),
    )
    .unwrap();
    db.put(&k(1), &v(1)).unwrap();
    ffs.set(".log", true, false, FaultKind::Eio);
    assert!(db.put(&k(2), &v(2)).is_err());
    ffs.clear();
    assert!(db.resume().is_err());
    std::thread::sleep(Duration::from_millis(100));
    assert!(matches!(db.put(&k(3), &v(3)), Err(Error::ReadOnly(_))));
    check(&db, 1..2);
}
