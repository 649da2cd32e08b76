//! Tests of the log's files against its records: positions already served
//! never move (max_binlog_size changed at restart or by SET GLOBAL), and
//! every missing or torn closed file is re-derived byte for byte; SHOW
//! BINLOG EVENTS with LIMIT; writer state after a failed write.
use crate::event::{self, QueryInfo};
use crate::log::{Binlog, Config, TXN_PREFIX};
use crate::record;
use lsm::{Db, Options, WriteBatch, WriteOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub(crate) fn open(dir: &Path, base: &str, max: u64) -> (Db, Arc<Binlog>) {
    let db = Db::open(dir.join("db"), Options::default()).expect("open db");
    let b = Binlog::open(
        &db,
        Config {
            dir: dir.to_path_buf(),
            basename: base.into(),
            server_id: 1,
            max_size: max,
        },
    )
    .expect("open binlog");
    (db, b)
}

pub(crate) fn close(db: Db, b: Arc<Binlog>) {
    drop(b);
    // The writer thread lets go of its handle at its next wake-up.
    std::thread::sleep(std::time::Duration::from_millis(250));
    drop(db);
}

/// Commits `n` DDL-like records of about 300 bytes each.
pub(crate) fn commit(db: &Db, b: &Binlog, n: usize, tag: &str) {
    for i in 0..n {
        let text = format!("CREATE TABLE {tag}_{i} (a INT) /* {} */", "x".repeat(250));
        let q = QueryInfo {
            thread_id: 1,
            flags2: 0,
            db: "d",
            sql_mode: 0,
            charset: [45, 45, 45],
            query: &text,
        };
        let mut rec = record::header(1, 1_700_000_000 + i as u32);
        record::query_item(&mut rec, 0, &event::query(&q));
        let mut wb = WriteBatch::new();
        wb.put_cf_seq_keyed(b.cf().0, TXN_PREFIX, &rec);
        db.write(WriteOptions::default(), wb).expect("commit");
    }
}

/// Every file of the log (after catching up): name -> bytes.
fn files(b: &Binlog) -> BTreeMap<String, Vec<u8>> {
    b.list()
        .expect("list")
        .into_iter()
        .map(|(n, _)| {
            let bytes = std::fs::read(b.dir().join(&n)).expect("read file");
            (n, bytes)
        })
        .collect()
}

#[test]
fn restart_with_another_max_size_moves_no_position() {
    let dir = testkit::TempDir::new("binlog-restart-max");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 10, "a");
    b.flush_logs().expect("flush");
    commit(&db, &b, 40, "b");
    let before = files(&b);
    assert_eq!(before.len(), 2);
    close(db, b);
    // The files, the active one (about 13 KiB) included, come back byte for
    // byte whatever max_binlog_size the restart is given: the active file
    // rotates at the size it was started with.
    for max in [4096, 8192, 1 << 21] {
        let (db, b) = open(&dir.0, "mb", max);
        assert_eq!(files(&b), before, "restart with max {max}");
        close(db, b);
    }
    // The new size applies from the next file on.
    let (db, b) = open(&dir.0, "mb", 4096);
    b.flush_logs().expect("flush");
    commit(&db, &b, 40, "c");
    assert!(files(&b).len() > 4);
    close(db, b);
}

#[test]
fn set_max_size_applies_from_the_next_file() {
    let dir = testkit::TempDir::new("binlog-set-max");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 5, "a");
    let (name, pos) = b.status().expect("status");
    b.set_max_size(4096).expect("set max");
    commit(&db, &b, 30, "b");
    let got = files(&b);
    // The file that held records at the SET was closed then, at its size.
    let closed = &got[&name];
    let rotate = event::HEADER_LEN + 8 + name.len() + event::CHECKSUM_LEN;
    assert_eq!(closed.len(), pos as usize + rotate);
    assert!(got.len() > 3, "the new max rotates: {:?}", got.keys());
    close(db, b);
    // Restarting with the old max keeps every byte.
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    assert_eq!(files(&b), got);
    close(db, b);
}

#[test]
fn missing_and_torn_files_are_rederived() {
    let dir = testkit::TempDir::new("binlog-rederive");
    let (db, b) = open(&dir.0, "mb", 4096);
    commit(&db, &b, 60, "a");
    let before = files(&b);
    let names: Vec<&String> = before.keys().collect();
    assert!(names.len() >= 5);
    close(db, b);
    // Two closed files lost (a restore that did not carry them), one torn
    // before its ROTATE, one emptied (a lost directory entry's data).
    std::fs::remove_file(dir.0.join(names[0])).unwrap();
    std::fs::remove_file(dir.0.join(names[2])).unwrap();
    let torn = &before[names[1]];
    std::fs::write(dir.0.join(names[1]), &torn[..torn.len() - 10]).unwrap();
    std::fs::write(dir.0.join(names[3]), b"").unwrap();
    let (db, b) = open(&dir.0, "mb", 4096);
    assert_eq!(files(&b), before);
    close(db, b);
}

#[test]
fn a_new_basename_names_new_files_only() {
    let dir = testkit::TempDir::new("binlog-basename");
    let (db, b) = open(&dir.0, "old", 4096);
    commit(&db, &b, 20, "a");
    let before = files(&b);
    close(db, b);
    for n in before.keys() {
        if n != before.keys().last().unwrap() {
            std::fs::remove_file(dir.0.join(n)).unwrap();
        }
    }
    let (db, b) = open(&dir.0, "new", 4096);
    let after = files(&b);
    // The closed files come back under their own names; the active one
    // was closed (its bytes kept, a ROTATE added) for a file of the new name.
    for (n, bytes) in &before {
        assert!(after[n].starts_with(bytes), "{n}");
        assert_eq!(
            after[n].len() == bytes.len(),
            n != before.keys().last().unwrap()
        );
    }
    assert_eq!(b.active_name(), format!("new.{:06}", before.len() + 1));
    assert!(after.contains_key(&b.active_name()));
    commit(&db, &b, 3, "b");
    close(db, b);
}

#[test]
fn show_events_reads_what_it_is_asked_for() {
    let dir = testkit::TempDir::new("binlog-events-limit");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 10, "a");
    let all = b.events(None, 0).unwrap().unwrap();
    let some = b.events_limit(None, 0, 3, 2).unwrap().unwrap();
    assert_eq!(some, all[3..5].to_vec());
    let from = all[4].pos;
    let tail = b.events_limit(None, from, 1, 100).unwrap().unwrap();
    assert_eq!(tail, all[5..].to_vec());
    assert!(b
        .events_limit(Some("mb.000009"), 0, 0, 1)
        .unwrap()
        .is_none());
    close(db, b);
}

#[test]
fn a_corrupt_record_stops_the_files_not_the_server() {
    let dir = testkit::TempDir::new("binlog-corrupt-record");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 2, "a");
    let mut wb = WriteBatch::new();
    wb.put_cf_seq_keyed(b.cf().0, TXN_PREFIX, &[9, 9, 9]);
    db.write(WriteOptions::default(), wb).unwrap();
    let e = b.status().expect_err("a record that does not decode");
    assert!(e.to_string().contains("record T"), "{e}");
    close(db, b);
    // Opening again works; the error names the record's key.
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    let e = b.status().expect_err("still there");
    assert!(e.to_string().contains("record T"), "{e}");
    close(db, b);
}

/// Version 1 `F` records (written before they kept the max size and
/// basename) take the settings of the first open after the upgrade and
/// keep them: a later basename does not rename their files.
#[test]
fn version_1_file_records_are_pinned_at_the_first_open() {
    let dir = testkit::TempDir::new("binlog-f-v1");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 3, "a");
    b.flush_logs().expect("flush");
    commit(&db, &b, 3, "b");
    let before = files(&b);
    let cf = b.cf();
    let mut v1 = WriteBatch::new();
    let mut it = db.iter_cf(lsm::ReadOptions::default(), cf).expect("iter");
    it.seek(b"F");
    while it.valid() && it.key().first() == Some(&b'F') {
        let v = it.value();
        let end = if v[17] == 0 { 18 } else { 34 };
        let mut old = vec![1];
        old.extend_from_slice(&v[1..end]);
        v1.put_cf(cf.0, it.key(), &old);
        it.next();
    }
    assert_eq!(v1.count(), 2);
    drop(it);
    db.write(
        WriteOptions {
            sync: true,
            disable_wal: false,
        },
        v1,
    )
    .expect("write v1");
    close(db, b);
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    assert_eq!(files(&b), before);
    close(db, b);
    let (db, b) = open(&dir.0, "nb", 1 << 20);
    // (A new basename starts a new file under it.)
    let names: Vec<String> = files(&b).into_keys().collect();
    assert_eq!(names, ["mb.000001", "mb.000002", "nb.000003"]);
    close(db, b);
}

/// A record that does not decode: the files are written through the last
/// good record before it, and retries leave the active file alone (no
/// re-derivation truncating it every few seconds).
#[test]
fn a_corrupt_record_is_written_up_to_and_not_retried_by_truncation() {
    let dir = testkit::TempDir::new("binlog-corrupt-through");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    b.catch_up().expect("catch up");
    // Two good records and a bad one, committed at once.
    let mut wb = WriteBatch::new();
    for tag in ["good_one", "good_two"] {
        let q = QueryInfo {
            thread_id: 1,
            flags2: 0,
            db: "d",
            sql_mode: 0,
            charset: [45, 45, 45],
            query: &format!("CREATE TABLE {tag} (a INT)"),
        };
        let mut rec = record::header(1, 1_700_000_000);
        record::query_item(&mut rec, 0, &event::query(&q));
        wb.put_cf_seq_keyed(b.cf().0, TXN_PREFIX, &rec);
    }
    wb.put_cf_seq_keyed(b.cf().0, TXN_PREFIX, &[9, 9, 9]);
    db.write(WriteOptions::default(), wb).unwrap();
    let e = b.catch_up().expect_err("a record that does not decode");
    assert!(!e.to_string().contains("PURGE"), "{e}");
    let path = b.dir().join("mb.000001");
    let bytes = std::fs::read(&path).unwrap();
    let has = |hay: &[u8], s: &str| hay.windows(s.len()).any(|w| w == s.as_bytes());
    assert!(has(&bytes, "good_one") && has(&bytes, "good_two"));
    // A marker after the file's end survives the retries: the file is not
    // rewritten.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, b"MARKER").unwrap();
    for _ in 0..3 {
        b.catch_up().expect_err("still there");
    }
    assert!(std::fs::read(&path).unwrap().ends_with(b"MARKER"));
    close(db, b);
}

#[test]
fn the_writer_thread_holds_the_log_only_while_writing() {
    let dir = testkit::TempDir::new("binlog-bg-weak");
    let (db, b) = open(&dir.0, "mb", 1 << 20);
    commit(&db, &b, 3, "a");
    b.kick();
    // Idle: the background thread waits without a handle on the log. With
    // its wake-up lock held it cannot start a catch-up, so once a running
    // one ended the count stays at 1 (no sampling against its timer).
    let alone = b.with_writer_thread_parked(|| {
        let t = std::time::Instant::now();
        while Arc::strong_count(&b) != 1 && t.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Arc::strong_count(&b) == 1
    });
    assert!(alone, "the writer thread holds the log while idle");
    // Dropped: the engine is free to open again (no "LOCK is locked").
    drop(b);
    drop(db);
    let t = std::time::Instant::now();
    loop {
        match Db::open(dir.0.join("db"), Options::default()) {
            Ok(db) => {
                drop(db);
                break;
            }
            Err(e) => assert!(t.elapsed().as_millis() < 1000, "reopen: {e}"),
        }
    }
}

#[test]
fn files_are_rederived_in_chunks_not_whole_in_memory() {
    // About 5.5 MB of records in one closed and one active file of a log
    // whose files may grow to 1 GiB: re-deriving them at open (the active
    // file always, the closed one when lost) goes through the writer's
    // buffer in chunks; before, each file was rendered whole in memory (a
    // server under a 600 MB limit was OOM-killed at start with a 1 GiB file).
    let dir = testkit::TempDir::new("binlog-chunks");
    let (db, b) = open(&dir.0, "mb", 1 << 30);
    commit(&db, &b, 5000, "a");
    b.flush_logs().expect("flush");
    commit(&db, &b, 13000, "b");
    let before = files(&b);
    assert_eq!(before.len(), 2);
    let first = before.keys().next().expect("a file").clone();
    assert!(before[&first].len() > 1_400_000, "{}", before[&first].len());
    close(db, b);
    std::fs::remove_file(dir.0.join(&first)).unwrap();
    let (db, b) = open(&dir.0, "mb", 1 << 30);
    assert_eq!(files(&b), before);
    let cap = b.buf_capacity();
    // A chunk of 1 MiB plus a record, in a Vec that may have doubled once.
    assert!(
        cap <= (2 << 20) + 65536,
        "the writer held {cap} bytes at once"
    );
    assert!(before.values().any(|f| f.len() > 4 << 20));
    close(db, b);
}
