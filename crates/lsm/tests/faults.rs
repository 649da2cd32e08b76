//! Simulated power loss (MemFs drops unsynced bytes), injected I/O errors
//! (EIO, ENOSPC on write and on fsync) and bit flips in tables and WALs:
//! each is detected and reported, and nothing acknowledged is lost.
mod common;

use common::{seed, Rng};
use lsm::vfs::{FaultFs, FaultKind, Fs, MemFs};
use lsm::{CfOptions, Db, Error, Options, ReadOptions, WriteBatch, WriteOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn opts(fs: Arc<dyn Fs>) -> Options {
    Options {
        fs: Some(fs),
        default_cf: CfOptions {
            write_buffer_size: 16 << 10,
            block_size: 512,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

fn k(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

#[test]
fn power_loss_keeps_synced_writes_and_a_prefix() {
    let s = seed("power_loss");
    let mut r = Rng::new(s);
    let fs = MemFs::new();
    let dir = PathBuf::from("/db");
    let mut synced_upto: i64 = -1;
    let mut next = 0u64;
    for round in 0..20 {
        let db = Db::open(&dir, opts(Arc::new(fs.clone()))).unwrap();
        // Recovered state: a prefix 0..n that includes every synced write.
        let mut n = 0u64;
        while db.get(&k(n)).unwrap().is_some() {
            n += 1;
        }
        assert!(
            n as i64 > synced_upto,
            "seed {s} round {round}: synced write {synced_upto} lost (have {n})"
        );
        for j in n..next {
            assert!(
                db.get(&k(j)).unwrap().is_none(),
                "seed {s} round {round}: hole: {j} present after gap at {n}"
            );
        }
        next = n;
        for _ in 0..r.below(3000) {
            let sync = r.chance(20);
            let mut b = WriteBatch::new();
            b.put(&k(next), &next.to_le_bytes());
            db.write(
                WriteOptions {
                    sync,
                    disable_wal: false,
                },
                b,
            )
            .unwrap();
            if sync {
                synced_upto = next as i64;
            }
            next += 1;
        }
        drop(db);
        fs.crash();
    }
}

#[test]
fn wal_write_error_makes_db_read_only_and_loses_nothing_acknowledged() {
    for (kind, on_sync) in [
        (FaultKind::Eio, false),
        (FaultKind::NoSpace, false),
        (FaultKind::Eio, true),
        (FaultKind::NoSpace, true),
    ] {
        let mem = MemFs::new();
        let ffs = FaultFs::new(Arc::new(mem.clone()));
        let dir = Path::new("/db");
        let db = Db::open(dir, opts(Arc::new(ffs.clone()))).unwrap();
        for i in 0..100 {
            db.put(&k(i), b"v").unwrap();
        }
        ffs.set(".log", !on_sync, on_sync, kind);
        let e = db.put(&k(100), b"v").unwrap_err();
        if kind == FaultKind::NoSpace {
            assert!(
                matches!(e, Error::NoSpace(_)),
                "{kind:?} sync={on_sync}: {e}"
            );
        } else {
            assert!(
                matches!(e, Error::Io { .. }),
                "{kind:?} sync={on_sync}: {e}"
            );
        }
        ffs.clear();
        // Every later write is refused with a clear error, reads still work.
        let e2 = db.put(&k(101), b"v").unwrap_err();
        assert!(matches!(e2, Error::ReadOnly(_)), "{e2}");
        assert!(e2.to_string().contains("read-only"), "{e2}");
        assert_eq!(db.get(&k(5)).unwrap().as_deref(), Some(&b"v"[..]));
        drop(db);
        mem.crash();
        let db = Db::open(dir, opts(Arc::new(mem.clone()))).unwrap();
        for i in 0..100 {
            assert!(
                db.get(&k(i)).unwrap().is_some(),
                "acknowledged key {i} lost after {kind:?}"
            );
        }
        assert!(db.get(&k(101)).unwrap().is_none());
    }
}

#[test]
fn flush_error_is_reported_not_silent() {
    let mem = MemFs::new();
    let ffs = FaultFs::new(Arc::new(mem.clone()));
    let db = Db::open("/db", opts(Arc::new(ffs.clone()))).unwrap();
    for i in 0..200 {
        db.put(&k(i), b"v").unwrap();
    }
    ffs.set(".sst", true, false, FaultKind::NoSpace);
    let e = db.flush().unwrap_err();
    assert!(
        matches!(e, Error::ReadOnly(_)) && e.to_string().contains("No space"),
        "{e}"
    );
    ffs.clear();
    drop(db);
    let db = Db::open("/db", opts(Arc::new(mem))).unwrap();
    assert_eq!(db.get(&k(150)).unwrap().as_deref(), Some(&b"v"[..]));
}

fn files(fs: &MemFs, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .map(|n| Path::new("/db").join(n))
        .collect();
    v.sort();
    v
}

#[test]
fn bit_flips_in_tables_are_corruption_never_wrong_answers() {
    let s = seed("bitflip_sst");
    let mut r = Rng::new(s);
    for round in 0..30 {
        let mem = MemFs::new();
        let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
        for i in 0..2000u64 {
            db.put(&k(i), format!("value-{i}-{}", i * 7).as_bytes())
                .unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let ssts = files(&mem, ".sst");
        let f = &ssts[r.below(ssts.len() as u64) as usize];
        let size = mem.file_size(f).unwrap() as usize;
        let off = r.below(size as u64) as usize;
        mem.flip_bit(f, off, r.below(8) as u8);
        let db = match Db::open(
            "/db",
            Options {
                block_cache_size: 0,
                ..opts(Arc::new(mem.clone()))
            },
        ) {
            Ok(db) => db,
            Err(e) => {
                assert!(
                    e.is_corruption() || matches!(e, Error::Io { .. }),
                    "seed {s} round {round}: {e}"
                );
                continue;
            }
        };
        let mut errors = 0;
        for i in 0..2000u64 {
            match db.get(&k(i)) {
                Ok(Some(v)) => assert_eq!(
                    v,
                    format!("value-{i}-{}", i * 7).into_bytes(),
                    "seed {s} round {round}: wrong value"
                ),
                Ok(None) => panic!(
                    "seed {s} round {round}: key {i} silently missing (flip at {off} of {})",
                    f.display()
                ),
                Err(e) => {
                    assert!(e.is_corruption(), "seed {s}: {e}");
                    assert!(
                        e.to_string().contains(".sst"),
                        "error must name the file: {e}"
                    );
                    errors += 1;
                }
            }
        }
        let mut it = match db.iter(ReadOptions::default()) {
            Ok(it) => it,
            Err(e) => {
                assert!(
                    e.is_corruption() && e.to_string().contains(".sst"),
                    "seed {s}: {e}"
                );
                continue;
            }
        };
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        assert!(
            n == 2000 || it.status().is_err(),
            "seed {s} round {round}: scan saw {n} keys without an error"
        );
        let _ = errors;
    }
}

#[test]
fn bit_flip_in_wal_middle_is_reported_with_file_and_offset() {
    let mem = MemFs::new();
    let db = Db::open("/db", opts(Arc::new(mem.clone()))).unwrap();
    for i in 0..50u64 {
        db.put(&k(i), &[7u8; 100]).unwrap();
    }
    drop(db);
    let wal = files(&mem, ".log").pop().unwrap();
    assert!(mem.flip_bit(&wal, 1000, 3));
    match Db::open("/db", opts(Arc::new(mem.clone()))) {
        Ok(_) => panic!("corrupted WAL opened silently"),
        Err(e) => {
            let m = e.to_string();
            assert!(
                e.is_corruption() && m.contains(".log") && m.contains("offset"),
                "{m}"
            );
        }
    }
}
