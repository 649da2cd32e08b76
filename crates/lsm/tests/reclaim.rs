//! Manual compaction (`compact_range`) and the background reclamation of
//! range-deleted key ranges (`reclaim_range`): disk space comes back without
//! further writes, other ranges stay intact, snapshots keep what they read,
//! and a crash (SIGKILL of a child process) in the middle loses nothing.
//! Also the engine's self-description (`cf_infos`, `sst_files`).
mod common;

use common::{seed, temp_dir, Rng};
use lsm::{CfOptions, Db, Options, WriteBatch, WriteOptions, DEFAULT_CF};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn opts() -> Options {
    Options {
        default_cf: CfOptions {
            write_buffer_size: 256 << 10,
            target_file_size: 256 << 10,
            max_bytes_for_level_base: 1 << 20,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

fn key(t: u8, i: u32) -> Vec<u8> {
    let mut k = vec![t];
    k.extend_from_slice(format!("{i:08}").as_bytes());
    k
}

fn value(t: u8, i: u32) -> Vec<u8> {
    // Incompressible: a xorshift stream seeded by the key.
    let mut x = (t as u64) << 32 | i as u64 | 1;
    let mut v = format!("{}-{i}-", t as char).into_bytes();
    while v.len() < 200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

/// Writes `n` rows of "table" `t` (unsynced batches).
fn fill(db: &Db, t: u8, n: u32) {
    let mut b = WriteBatch::new();
    for i in 0..n {
        b.put(&key(t, i), &value(t, i));
        if b.count() >= 500 {
            db.write(
                WriteOptions {
                    sync: false,
                    disable_wal: false,
                },
                std::mem::take(&mut b),
            )
            .unwrap();
        }
    }
    db.write(
        WriteOptions {
            sync: false,
            disable_wal: false,
        },
        b,
    )
    .unwrap();
}

/// Every row of `t` is there with its value.
fn check(db: &Db, t: u8, n: u32) {
    for i in (0..n).step_by(7) {
        assert_eq!(
            db.get(&key(t, i)).unwrap().as_deref(),
            Some(&value(t, i)[..]),
            "row {i} of {}",
            t as char
        );
    }
    let mut it = db.iter(Default::default()).unwrap();
    it.seek(&[t]);
    let mut count = 0;
    while it.valid() && it.key()[0] == t {
        count += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(count, n, "rows of {}", t as char);
}

fn gone(db: &Db, t: u8) {
    let mut it = db.iter(Default::default()).unwrap();
    it.seek(&[t]);
    assert!(
        !(it.valid() && it.key()[0] == t),
        "rows of dropped {} still visible",
        t as char
    );
}

/// Bytes of the files in a directory.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn drop_table(db: &Db, t: u8) {
    db.delete_range(DEFAULT_CF, &[t], &[t + 1]).unwrap();
    db.reclaim_range(DEFAULT_CF, &[t], &[t + 1]);
}

const ROWS: u32 = 20_000; // about 4 MB per table

#[test]
fn dropped_range_leaves_the_disk_in_the_background() {
    let dir = temp_dir("reclaim");
    let db = Db::open(&dir, opts()).unwrap();
    fill(&db, b'a', ROWS);
    fill(&db, b'b', ROWS);
    fill(&db, b'c', ROWS);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    // Some of b's newest rows only in the memtable.
    fill(&db, b'b', 500);
    let before = dir_bytes(&dir);
    assert!(before > 5 << 20, "three tables on disk: {before}");
    drop_table(&db, b'b');
    gone(&db, b'b');
    assert!(
        db.wait_for_reclaims(Duration::from_secs(30)),
        "reclaim did not finish"
    );
    db.wait_for_compactions().unwrap();
    let after = dir_bytes(&dir);
    assert!(
        after < before * 3 / 4,
        "dropped table still on disk: {before} -> {after} bytes"
    );
    // No file holds b's keys any more.
    for f in db.sst_files() {
        assert!(
            !(f.smallest[0] == b'b' && f.largest[0] == b'b'),
            "file {} of b left at L{}",
            f.number,
            f.level
        );
    }
    check(&db, b'a', ROWS);
    check(&db, b'c', ROWS);
    gone(&db, b'b');
    db.close().unwrap();
    let db = Db::open(&dir, opts()).unwrap();
    check(&db, b'a', ROWS);
    check(&db, b'c', ROWS);
    gone(&db, b'b');
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_snapshot_keeps_the_range_until_released() {
    let dir = temp_dir("reclaim-snap");
    let db = Db::open(&dir, opts()).unwrap();
    fill(&db, b'a', 5000);
    fill(&db, b'b', ROWS);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let snap = db.snapshot();
    drop_table(&db, b'b');
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(db.pending_reclaims(), 1, "must wait for the snapshot");
    let ro = lsm::ReadOptions {
        snapshot: Some(snap.clone()),
        ..Default::default()
    };
    assert_eq!(
        db.get_cf(&ro, DEFAULT_CF, &key(b'b', 77))
            .unwrap()
            .as_deref(),
        Some(&value(b'b', 77)[..])
    );
    let held = db.live_table_bytes();
    drop(ro);
    drop(snap);
    assert!(db.wait_for_reclaims(Duration::from_secs(30)));
    let after = db.live_table_bytes();
    assert!(after * 2 < held, "{held} -> {after}");
    check(&db, b'a', 5000);
    gone(&db, b'b');
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of the crash test: drops `b` and reclaims until killed.
#[test]
fn reclaim_crash_child() {
    let Ok(dir) = std::env::var("STRATA_RECLAIM_CHILD") else {
        return;
    };
    let db = Db::open(&dir, opts()).unwrap();
    drop_table(&db, b'b');
    println!("dropped");
    loop {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_crash_during_reclaim_loses_nothing_else() {
    let s = seed("reclaim_crash");
    let mut r = Rng::new(s);
    let dir = temp_dir("reclaim-crash");
    let exe = std::env::current_exe().unwrap();
    {
        let db = Db::open(&dir, opts()).unwrap();
        fill(&db, b'a', ROWS);
        fill(&db, b'c', ROWS);
        db.close().unwrap();
    }
    for cycle in 0..6 {
        {
            let db = Db::open(&dir, opts()).unwrap();
            fill(&db, b'b', ROWS / 2);
            if cycle % 2 == 0 {
                db.flush().unwrap();
            }
            db.close().unwrap();
        }
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "reclaim_crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("STRATA_RECLAIM_CHILD", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        // Wait for the drop to be acknowledged, then kill at a random moment.
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !String::from_utf8_lossy(&buf).contains("dropped") {
            use std::io::Read;
            if out.read(&mut byte).unwrap() == 0 {
                break;
            }
            buf.push(byte[0]);
        }
        std::thread::sleep(Duration::from_millis(r.below(300)));
        child.kill().unwrap();
        child.wait().unwrap();
        let db = Db::open(&dir, opts()).unwrap();
        check(&db, b'a', ROWS);
        check(&db, b'c', ROWS);
        gone(&db, b'b');
        db.close().unwrap();
        eprintln!("seed {s} cycle {cycle} ok");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compact_range_moves_a_range_to_the_last_level_beside_background_work() {
    let dir = temp_dir("compact-range");
    let db = Db::open(&dir, opts()).unwrap();
    fill(&db, b'a', ROWS);
    // Overwrite and delete part of it so a rewrite drops something.
    let mut b = WriteBatch::new();
    for i in (0..ROWS).step_by(2) {
        b.delete(&key(b'a', i));
    }
    db.write(WriteOptions::default(), b).unwrap();
    // Background compactions keep running on writes to another range.
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || fill(&db, b'c', ROWS))
    };
    db.compact_range(DEFAULT_CF, Some(b"a"), Some(b"a\xff"))
        .unwrap();
    writer.join().unwrap();
    let last = lsm::options::NUM_LEVELS - 1;
    for f in db.sst_files() {
        if f.smallest[0] == b'a' && f.largest[0] == b'a' {
            assert_eq!(f.level, last, "file {} of a at L{}", f.number, f.level);
            assert_eq!(f.deletions, 0, "tombstones left in file {}", f.number);
        }
    }
    let infos = db.cf_infos();
    assert_eq!(infos[0].name, "default");
    assert!(infos[0].levels[last].files > 0);
    assert!(infos[0].levels[last].bytes > 0);
    assert!(infos[0].levels.iter().map(|l| l.written_bytes).sum::<u64>() > 0);
    assert!(infos[0]
        .options
        .iter()
        .any(|(k, _)| *k == "write_buffer_size"));
    let mut it = db.iter(Default::default()).unwrap();
    it.seek(b"a");
    let mut n = 0;
    while it.valid() && it.key()[0] == b'a' {
        n += 1;
        it.next();
    }
    assert_eq!(n, ROWS / 2);
    db.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
