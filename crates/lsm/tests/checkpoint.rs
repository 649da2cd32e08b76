//! Checkpoints under load: writers committing multi-key batches in two
//! column families while memtables flush and compactions run; the copy
//! holds every batch acknowledged before the checkpoint began, each batch
//! whole or not at all, and opens on its own. Also the copy fallback
//! (another file system) and the refusal of a non-empty target.
mod common;

use common::{seed, temp_dir, Rng};
use lsm::{CfOptions, Db, Options, ReadOptions, WriteBatch, WriteOptions};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const WRITERS: u32 = 3;
const KEYS: u32 = 400;

fn small_opts() -> Options {
    let mut o = Options::default();
    o.default_cf.write_buffer_size = 64 << 10;
    o.default_cf.target_file_size = 64 << 10;
    o.default_cf.max_bytes_for_level_base = 256 << 10;
    o
}

fn cf_opts() -> CfOptions {
    CfOptions {
        write_buffer_size: 32 << 10,
        ..CfOptions::default()
    }
}

/// Key `i` of writer `w` in the default family, its index entry in "idx".
fn key(w: u32, i: u32) -> Vec<u8> {
    format!("w{w}k{i:05}").into_bytes()
}

/// Runs writers until stopped; each batch writes version `n` of two keys of
/// the default family and one of "idx". Returns the last version each key
/// had acknowledged before `mark` was set, per writer.
fn load_and_checkpoint(dir: &Path, target: &Path) -> (lsm::CheckpointInfo, Vec<HashMap<u32, u64>>) {
    let db = Db::open_cf(dir, small_opts(), &[("idx", cf_opts())]).unwrap();
    let idx = db.cf("idx").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let seed = seed("checkpoint");
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let (db, stop, started) = (db.clone(), stop.clone(), started.clone());
        let acked = Arc::new(Mutex::new(HashMap::<u32, u64>::new()));
        let a2 = acked.clone();
        handles.push((
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed ^ w as u64);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let i = rng.below(KEYS as u64) as u32;
                    let j = (i + 1) % KEYS;
                    let v = format!("{n:010}").repeat(8).into_bytes();
                    let mut b = WriteBatch::new();
                    b.put(&key(w, i), &v);
                    b.put(&key(w, j), &v);
                    b.put_cf(idx.0, &key(w, i), &v);
                    db.write(WriteOptions::default(), b).unwrap();
                    // Acknowledged before the checkpoint began: must be in the copy.
                    if !started.load(Ordering::SeqCst) {
                        let mut m = a2.lock().unwrap();
                        m.insert(i, n);
                        m.insert(j, n);
                    }
                }
            }),
            acked,
        ));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    started.store(true, Ordering::SeqCst);
    let info = db.checkpoint(target).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let mut acked = Vec::new();
    for (h, a) in handles {
        h.join().unwrap();
        acked.push(a.lock().unwrap().clone());
    }
    db.close().unwrap();
    (info, acked)
}

/// The copy holds every acknowledged version (or a later one), and every
/// batch whole: the pair (i, i+1) written together and the "idx" entry.
fn verify(target: &Path, acked: &[HashMap<u32, u64>]) {
    let c = Db::open_cf(target, small_opts(), &[("idx", cf_opts())]).unwrap();
    let idx = c.cf("idx").unwrap();
    let version = |v: &[u8]| {
        std::str::from_utf8(&v[..10])
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    for (w, acked) in acked.iter().enumerate() {
        let w = w as u32;
        let mut got = HashMap::new();
        for i in 0..KEYS {
            if let Some(v) = c.get(&key(w, i)).unwrap() {
                got.insert(i, version(&v));
            }
        }
        for (i, n) in acked {
            let g = got.get(i).copied().unwrap_or(0);
            assert!(
                g >= *n,
                "writer {w} key {i}: acknowledged {n}, copy has {g}"
            );
        }
        // All-or-nothing: version n is on key i in "idx" exactly when the
        // batch wrote i (the default family then has n on i, unless a later
        // batch overwrote i, whose idx entry is then there too).
        let ro = ReadOptions::default();
        for i in 0..KEYS {
            if let Some(v) = c.get_cf(&ro, idx, &key(w, i)).unwrap() {
                let n = version(&v);
                let d = got.get(&i).copied().unwrap_or(0);
                assert!(d >= n, "writer {w} key {i}: idx has {n}, table has {d}");
                let j = (i + 1) % KEYS;
                let dj = got.get(&j).copied().unwrap_or(0);
                assert!(dj >= n, "writer {w} key {j}: half of batch {n} missing");
            }
        }
        // Every default-family version has the rest of its batch: as key i
        // (its idx entry) or as key i+1 (key i-1 and its idx entry).
        for (i, n) in &got {
            let p = (i + KEYS - 1) % KEYS;
            let ix = |k: u32| {
                c.get_cf(&ro, idx, &key(w, k))
                    .unwrap()
                    .map_or(0, |v| version(&v))
            };
            let whole = ix(*i) >= *n || (got.get(&p).copied().unwrap_or(0) >= *n && ix(p) >= *n);
            assert!(whole, "writer {w} key {i}: batch {n} is half there");
        }
    }
    let mut it = c.iter(ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert!(n > 0);
    c.close().unwrap();
}

#[test]
fn checkpoint_under_writes_flushes_and_compactions() {
    let dir = temp_dir("ckpt-load");
    let (info, acked) = load_and_checkpoint(&dir.join("db"), &dir.join("ckpt"));
    assert!(info.linked > 0, "tables are hard-linked: {info:?}");
    verify(&dir.join("ckpt"), &acked);
    let _ = std::fs::remove_dir_all(&dir);
}

/// /dev/shm is another file system where it exists: tables are copied.
#[test]
fn checkpoint_copies_across_file_systems() {
    use std::os::unix::fs::MetadataExt;
    let dir = temp_dir("ckpt-xfs");
    let shm = Path::new("/dev/shm");
    let other = shm.exists()
        && std::fs::metadata(shm).map(|m| m.dev()).ok()
            != std::fs::metadata(&dir).map(|m| m.dev()).ok();
    if !other {
        eprintln!("no second file system: skipped");
        return;
    }
    let target = shm.join(format!("strata-ckpt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&target);
    let (info, acked) = load_and_checkpoint(&dir.join("db"), &target);
    assert_eq!(info.linked, 0, "{info:?}");
    verify(&target, &acked);
    let _ = std::fs::remove_dir_all(&target);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn checkpoint_refuses_a_non_empty_target() {
    let dir = temp_dir("ckpt-busy");
    let db = Db::open(dir.join("db"), Options::default()).unwrap();
    db.put(b"a", b"1").unwrap();
    std::fs::create_dir_all(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/x"), b"x").unwrap();
    let e = db.checkpoint(dir.join("t")).unwrap_err().to_string();
    assert!(e.contains("not empty"), "{e}");
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A seal naming a file outside its directory (`../x`, an absolute path) or
/// one file twice is refused, even with a correct checksum: restore copies
/// the files a seal lists, so such a name would read or write elsewhere.
#[test]
fn a_seal_with_a_path_outside_its_directory_is_refused() {
    let dir = common::temp_dir("seal-names");
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("outside"), b"x").unwrap();
    std::fs::write(dir.join("b").join("inside"), b"x").unwrap();
    let crc = crc32c_of(b"x");
    for name in [
        "../outside",
        "/etc/hostname",
        "inside\nfile 0 0 inside",
        "a/../inside",
    ] {
        let body = format!("strata-backup 1\nfile {crc:08x} 1 {name}\n");
        seal_with(&dir.join("b"), &body);
        let e = lsm::seal::verify(&dir.join("b")).err();
        assert!(e.is_some(), "accepted a seal naming {name:?}");
    }
    let body = format!("strata-backup 1\nfile {crc:08x} 1 inside\nfile {crc:08x} 1 inside\n");
    seal_with(&dir.join("b"), &body);
    assert!(
        lsm::seal::verify(&dir.join("b")).is_err(),
        "accepted a file listed twice"
    );
    // The same directory sealed properly verifies.
    let body = format!("strata-backup 1\nfile {crc:08x} 1 inside\n");
    seal_with(&dir.join("b"), &body);
    lsm::seal::verify(&dir.join("b")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

fn crc32c_of(b: &[u8]) -> u32 {
    let p = std::env::temp_dir().join(format!("seal-crc-{}", std::process::id()));
    std::fs::write(&p, b).unwrap();
    let (_, c) = lsm::seal::file_crc(&p).unwrap();
    let _ = std::fs::remove_file(&p);
    c
}

/// Writes BACKUP-INFO with `body` and its correct end line.
fn seal_with(dir: &std::path::Path, body: &str) {
    // The end line's checksum is CRC32C of the body: take it from a file.
    let p = dir.with_extension("body");
    std::fs::write(&p, body).unwrap();
    let (_, c) = lsm::seal::file_crc(&p).unwrap();
    let _ = std::fs::remove_file(&p);
    std::fs::write(dir.join("BACKUP-INFO"), format!("{body}end {c:08x}\n")).unwrap();
}
