//! Tests of `Binlog::dump` against the writer and PURGE: a file a running
//! dump reads (or will read) is never purged.
use crate::dump::{End, Options, Start, Target};
use crate::event::kind;
use crate::log_tests::{close, commit, open};
use lsm::Db;
use std::sync::{mpsc, Arc};
use std::time::{Duration, SystemTime};

/// A target that holds the dump at its first event until told to go on,
/// and keeps what it got.
struct Held {
    started: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
    held: bool,
    events: Vec<Vec<u8>>,
}

impl Target for Held {
    fn event(&mut self, ev: &[u8]) -> std::io::Result<()> {
        if !self.held {
            self.held = true;
            let _ = self.started.send(());
            let _ = self.go.recv();
        }
        self.events.push(ev.to_vec());
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn stopped(&self) -> bool {
        false
    }
}

impl Held {
    /// A target, the receiver told when the dump is held at its first
    /// event, and the sender that lets it go on.
    fn new() -> (Held, mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (started_tx, started) = mpsc::channel();
        let (go, go_rx) = mpsc::channel();
        let t = Held {
            started: started_tx,
            go: go_rx,
            held: false,
            events: Vec::new(),
        };
        (t, started, go)
    }
}

/// A log on a fresh directory `name` (files of at most `max` bytes) with
/// `n` committed statements; the directory, database and log.
fn committed(name: &str, max: u64, n: usize) -> (testkit::TempDir, Db, Arc<crate::Binlog>) {
    let dir = testkit::TempDir::new(name);
    let (db, b) = open(&dir.0, "mb", max);
    commit(&db, &b, n, "a");
    (dir, db, b)
}

/// The names of the log's files.
fn file_names(b: &crate::Binlog) -> Vec<String> {
    b.list().unwrap().into_iter().map(|f| f.0).collect()
}

fn non_block() -> Options {
    Options {
        checksum: true,
        heartbeat: None,
        non_block: true,
        gtid_strict: false,
    }
}

#[test]
fn purge_keeps_the_files_a_lagging_dump_needs() {
    let (_dir, db, b) = committed("binlog-purge-lagging", 4096, 60);
    let names = file_names(&b);
    assert!(names.len() >= 4, "{names:?}");
    let (mut t, started, go) = Held::new();
    std::thread::scope(|s| {
        let b2 = &b;
        let h = s.spawn(move || {
            let start = Start::File {
                name: String::new(),
                pos: 4,
            };
            let r = b2.dump(5, &start, non_block(), &mut t);
            (r, t.events)
        });
        started.recv().unwrap();
        // The dump is in the first file: a purge up to the third removes
        // nothing (MariaDB: silently, no error), nor does BEFORE a future
        // time.
        let to = b.purge_to(&names[2]);
        let before = b.purge_before(SystemTime::now() + Duration::from_secs(60));
        let now = file_names(&b);
        // Released before checking (a failed check must not leave it held).
        go.send(()).unwrap();
        assert_eq!(to, Ok(true));
        assert_eq!(before, Ok(()));
        assert_eq!(now, names, "files a running dump needs were purged");
        let (r, events) = h.join().unwrap();
        assert_eq!(r.unwrap(), End::EndOfLog);
        // Every file was sent: one fake ROTATE per file, and every QUERY.
        let rotates = events
            .iter()
            .filter(|e| e[4] == kind::ROTATE && e[0..4] == [0; 4])
            .count();
        assert_eq!(rotates, names.len(), "a fake ROTATE per file");
        let queries = events.iter().filter(|e| e[4] == kind::QUERY).count();
        assert_eq!(queries, 60);
    });
    // No dump: the purge goes through.
    assert!(b.purge_to(&names[2]).unwrap());
    let now = file_names(&b);
    assert_eq!(now, names[2..].to_vec());
    close(db, b);
}

/// A target that keeps every event.
#[derive(Default)]
struct Keep(Vec<Vec<u8>>);

impl Target for Keep {
    fn event(&mut self, ev: &[u8]) -> std::io::Result<()> {
        self.0.push(ev.to_vec());
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn stopped(&self) -> bool {
        false
    }
}

/// The sequence numbers of the GTID events a GTID-mode dump from `state`
/// sends.
fn gtid_dump(b: &crate::Binlog, state: &str) -> Vec<u64> {
    let mut t = Keep::default();
    let start = Start::Gtid(crate::dump::parse_gtid_list(state).unwrap());
    assert_eq!(
        b.dump(0, &start, non_block(), &mut t).unwrap(),
        End::EndOfLog
    );
    t.0.iter()
        .filter(|e| e[4] == kind::GTID)
        .map(|e| crate::dumpgtid::event_gtid(e).unwrap().seq_no)
        .collect()
}

#[test]
fn gtid_connect_reads_only_new_bytes_and_the_holding_file() {
    let (_dir, db, b) = committed("binlog-gtid-index", 4096, 60);
    let sizes: Vec<u64> = b.list().unwrap().into_iter().map(|f| f.1).collect();
    assert!(sizes.len() >= 5, "{sizes:?}");
    let total: u64 = sizes.iter().sum();
    let biggest = *sizes.iter().max().unwrap();
    let scanned = || b.gtid_scanned.load(std::sync::atomic::Ordering::Relaxed);
    // Each state starts right after its GTID, whatever file holds it.
    for n in [1u64, 13, 30, 59, 60] {
        assert_eq!(
            gtid_dump(&b, &format!("0-1-{n}")),
            (n + 1..=60).collect::<Vec<_>>(),
            "0-1-{n}"
        );
    }
    assert_eq!(gtid_dump(&b, ""), (1..=60).collect::<Vec<_>>());
    // A state beyond the log, another server id, a purged GTID: refused.
    for bad in ["0-1-61", "0-2-5"] {
        let mut t = Keep::default();
        let start = Start::Gtid(crate::dump::parse_gtid_list(bad).unwrap());
        assert!(b.dump(0, &start, non_block(), &mut t).is_err(), "{bad}");
    }
    // The first connect read the log once; later ones only what was
    // committed since (not even the file holding the GTID: a connect
    // waits for no file scan behind the index's lock).
    let before = scanned();
    let events = total - 4 * sizes.len() as u64;
    assert!(before >= events, "{before} < {events}");
    gtid_dump(&b, "0-1-30");
    let one = scanned() - before;
    assert_eq!(one, 0, "a connect read {one} bytes (files up to {biggest})");
    commit(&db, &b, 10, "b");
    b.catch_up().unwrap();
    let before = scanned();
    assert_eq!(gtid_dump(&b, "0-1-65"), (66..=70).collect::<Vec<_>>());
    let added: u64 = b.list().unwrap().into_iter().map(|f| f.1).sum::<u64>() - total;
    assert!(
        scanned() - before <= added,
        "{} > {added}",
        scanned() - before
    );
    // After a purge the index drops the files; a state in them is purged.
    let names = file_names(&b);
    assert!(b.purge_to(&names[2]).unwrap());
    let mut t = Keep::default();
    let start = Start::Gtid(crate::dump::parse_gtid_list("0-1-2").unwrap());
    let e = b.dump(0, &start, non_block(), &mut t).unwrap_err();
    assert!(e.to_string().contains("purged"), "{e}");
    assert_eq!(gtid_dump(&b, "0-1-69"), vec![70]);
    close(db, b);
}

/// A non-blocking file-and-position dump: its events or its error.
fn file_dump(b: &crate::Binlog, name: &str, pos: u64) -> crate::Result<Vec<Vec<u8>>> {
    let mut t = Keep::default();
    let start = Start::File {
        name: name.into(),
        pos,
    };
    b.dump(0, &start, non_block(), &mut t)?;
    Ok(t.0)
}

#[test]
fn positions_at_the_end_of_a_closed_file_and_below_four() {
    let (_dir, db, b) = committed("binlog-dump-positions", 1 << 20, 3);
    b.flush_logs().unwrap();
    commit(&db, &b, 2, "b");
    let files = b.list().unwrap();
    let (first, len) = files[0].clone();
    // At the exact end of the closed file (past its ROTATE): the next
    // file follows, as MariaDB sends it (fake ROTATE, FORMAT_DESCRIPTION
    // with log_pos 0, fake ROTATE to the next file, its events).
    let evs = file_dump(&b, &first, len).unwrap();
    let kinds: Vec<u8> = evs.iter().map(|e| e[4]).collect();
    assert_eq!(
        &kinds[..3],
        &[kind::ROTATE, kind::FORMAT_DESCRIPTION, kind::ROTATE]
    );
    let next = files[1].0.as_bytes();
    assert!(
        evs[2].windows(next.len()).any(|w| w == next),
        "ROTATE to {}",
        files[1].0
    );
    assert_eq!(kinds.iter().filter(|&&k| k == kind::QUERY).count(), 2);
    // Below 4: MariaDB's error.
    for pos in [0, 3] {
        let e = file_dump(&b, &first, pos).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "Client requested master to start replication from impossible position; the \
                 first event '{first}' at {pos}, the last event read from '{first}' at 4, the \
                 last byte read from '{first}' at 4."
            )
        );
    }
    // Past the end: refused as before.
    assert!(file_dump(&b, &first, len + 1).is_err());
    close(db, b);
}

#[test]
fn a_stale_view_never_moves_the_gtid_index_past_what_it_saw() {
    // MED1: a connect that read the files and the published position
    // before another connect moved the index to a newer file must not read
    // that file up to an offset of the older one.
    let (_dir, db, b) = committed("binlog-gtid-stale", 1 << 20, 10);
    b.catch_up().unwrap();
    let old_files = b.file_starts();
    let old_seen = *b.progress.lock().unwrap();
    b.flush_logs().unwrap();
    commit(&db, &b, 1, "b");
    b.catch_up().unwrap();
    let new_seen = *b.progress.lock().unwrap();
    assert!(new_seen.active > old_seen.active && new_seen.pos < old_seen.pos);
    let mut ix = b.gtid_index.lock().unwrap();
    b.advance_index(&mut ix, &b.file_starts(), new_seen)
        .unwrap();
    let at = ix.state.clone();
    b.advance_index(&mut ix, &old_files, old_seen).unwrap();
    assert_eq!(ix.state, at);
    drop(ix);
    assert_eq!(gtid_dump(&b, "0-1-10"), vec![11]);
    close(db, b);
}

#[test]
fn a_file_dump_resolves_its_file_after_a_running_purge() {
    // LOW3: the dump's slot (0: every file kept) is registered first, then
    // its file is looked up under the writer's lock, so a PURGE that
    // started before the dump (holding that lock) finishes first and the
    // dump never opens a file PURGE is removing.
    let (_dir, db, b) = committed("binlog-dump-resolve", 1 << 20, 2);
    let first = b.list().unwrap()[0].0.clone();
    let (mut t, started, go) = Held::new();
    std::thread::scope(|s| {
        let b2 = &b;
        let sent_while_held = b.with_writer_held(|| {
            s.spawn(move || {
                let start = Start::File {
                    name: first,
                    pos: 4,
                };
                b2.dump(5, &start, non_block(), &mut t)
            });
            started.recv_timeout(Duration::from_millis(300)).is_ok()
        });
        let after = sent_while_held || started.recv_timeout(Duration::from_secs(20)).is_ok();
        go.send(()).unwrap();
        assert!(
            !sent_while_held,
            "the dump resolved its file during a PURGE"
        );
        assert!(after);
    });
    close(db, b);
}

#[test]
fn reset_master_takes_the_gtid_index_before_the_writer_lock() {
    // Review s33 H3: a GTID connect holds the index and then wants the
    // writer's lock (`with_gtid_index` -> `file_starts`); RESET MASTER must
    // take the index first too, or each waits for the other for ever.
    let (_dir, db, b) = committed("binlog-reset-gtid-order", 1 << 20, 3);
    b.catch_up().unwrap();
    std::thread::scope(|s| {
        // The connect, parked inside `with_gtid_index`.
        let ix = b.gtid_index.lock().unwrap();
        let b2 = &b;
        let reset = s.spawn(move || b2.reset(1));
        // Let the reset get as far as it can.
        std::thread::sleep(Duration::from_millis(300));
        let (tx, rx) = mpsc::channel();
        s.spawn(move || {
            let _ = tx.send(b2.file_starts().len());
        });
        let connect_went_on = rx.recv_timeout(Duration::from_secs(5)).is_ok();
        drop(ix);
        assert!(
            connect_went_on,
            "the connect waits for RESET MASTER's writer lock"
        );
        reset.join().unwrap().unwrap();
    });
    assert_eq!(b.file_starts().len(), 1);
    close(db, b);
}
