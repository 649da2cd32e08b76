//! Recovery never trades data for an open database: a damaged MANIFEST, a lost CURRENT, a
//! CURRENT naming a missing manifest or a missing table file make `Db::open` fail with an
//! error naming the file, and leave every file in place. Only a manifest whose last record
//! was cut short by the end of the file (a write a crash interrupted, never acknowledged)
//! opens, and the tables only that record named are moved to `lost/`, not deleted.
#![allow(clippy::unwrap_used)]

mod common;

use lsm::{Db, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A database with two flushed tables and some data only in the WAL.
fn make_db(name: &str) -> testkit::TempDir {
    let dir = testkit::TempDir::new(name);
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 0..300 {
        db.put(&key(i), b"v").unwrap();
        if i == 99 || i == 199 {
            db.flush().unwrap();
        }
    }
    db.close().unwrap();
    dir
}

/// Every file (name -> size), also those under lost/, without the LOCK file.
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for sub in ["", "lost"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n != "LOCK" && e.file_type().unwrap().is_file() {
                out.insert(n, e.metadata().unwrap().len());
            }
        }
    }
    out
}

fn tables(dir: &Path) -> Vec<String> {
    files(dir)
        .into_keys()
        .filter(|n| n.ends_with(".sst"))
        .collect()
}

fn manifest(dir: &Path) -> PathBuf {
    let cur = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(cur.trim_end())
}

/// (offset, length) of each log fragment of a small manifest (one block).
fn records(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 7 <= data.len() {
        let len = u16::from_le_bytes([data[pos + 4], data[pos + 5]]) as usize;
        if len == 0 && data[pos..pos + 7].iter().all(|b| *b == 0) {
            break;
        }
        out.push((pos, 7 + len));
        pos += 7 + len;
    }
    out
}

/// Opening must fail naming `what`, and leave every file as it was.
fn refuses(dir: &Path, what: &str) {
    let before = files(dir);
    let err = match Db::open(dir, Options::default()) {
        Ok(_) => panic!("opened a damaged database ({what})"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(what), "error {err:?} does not name {what}");
    assert_eq!(files(dir), before, "files changed by a refused open");
}

#[test]
fn a_clean_reopen_keeps_everything() {
    let dir = make_db("rec-clean");
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 0..300 {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&b"v"[..]), "{i}");
    }
}

#[test]
fn a_flipped_byte_in_the_last_manifest_record_refuses_to_open() {
    let dir = make_db("rec-flip-last");
    let m = manifest(&dir);
    let mut data = std::fs::read(&m).unwrap();
    let recs = records(&data);
    assert!(recs.len() >= 3, "{recs:?}");
    let (at, len) = *recs.last().unwrap();
    data[at + len - 1] ^= 0x40;
    std::fs::write(&m, &data).unwrap();
    refuses(&dir, m.file_name().unwrap().to_str().unwrap());
}

#[test]
fn a_flipped_byte_in_an_earlier_manifest_record_refuses_to_open() {
    let dir = make_db("rec-flip-first");
    let m = manifest(&dir);
    let mut data = std::fs::read(&m).unwrap();
    let (at, len) = records(&data)[0];
    data[at + len / 2 + 3] ^= 0x01;
    std::fs::write(&m, &data).unwrap();
    refuses(&dir, m.file_name().unwrap().to_str().unwrap());
}

#[test]
fn a_manifest_cut_inside_its_last_record_opens_and_keeps_every_table() {
    let dir = make_db("rec-torn");
    let before = tables(&dir);
    let m = manifest(&dir);
    let data = std::fs::read(&m).unwrap();
    let (at, len) = *records(&data).last().unwrap();
    std::fs::write(&m, &data[..at + len / 2]).unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    drop(db);
    // No table was deleted: each is still live or kept under lost/.
    assert_eq!(tables(&dir), before);
}

#[test]
fn a_lost_current_refuses_to_create_a_new_database_over_the_tables() {
    let dir = make_db("rec-no-current");
    std::fs::remove_file(dir.join("CURRENT")).unwrap();
    refuses(&dir, "CURRENT");
    assert!(!tables(&dir).is_empty());
}

#[test]
fn current_naming_a_missing_manifest_refuses_to_open() {
    let dir = make_db("rec-current-missing-manifest");
    std::fs::write(dir.join("CURRENT"), "MANIFEST-999999\n").unwrap();
    refuses(&dir, "MANIFEST-999999");
}

#[test]
fn garbage_in_current_refuses_to_open() {
    let dir = make_db("rec-current-garbage");
    std::fs::write(dir.join("CURRENT"), b"\xff\x00junk").unwrap();
    refuses(&dir, "CURRENT");
}

#[test]
fn a_missing_table_file_refuses_to_open() {
    let dir = make_db("rec-missing-table");
    let t = tables(&dir).into_iter().next().unwrap();
    std::fs::remove_file(dir.join(&t)).unwrap();
    refuses(&dir, &t);
}

#[test]
fn an_empty_directory_or_one_with_an_empty_wal_is_a_new_database() {
    let dir = testkit::TempDir::new("rec-new");
    std::fs::write(dir.join("000007.log"), b"").unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
