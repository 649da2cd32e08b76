//! LOAD DATA progress seen from another connection (the real binary), as
//! MariaDB 10.11 reports it (checked): information_schema.PROCESSLIST's
//! STAGE / MAX_STAGE (1 of 2 while the file is read) and PROGRESS (the
//! stage's percent: bytes read of the file's size) and SHOW PROCESSLIST's
//! Progress (over both stages, so at most 50 while reading) grow while a
//! server-side file is read; State ("Reading file" in MariaDB) also names
//! the rows read and bytes so far; LOCAL (size unknown) shows rows and
//! bytes in State with Progress 0.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q, q1, spawn_mariadb, Server, TempDir};
use std::time::{Duration, Instant};

const ROWS: u64 = 300_000;

fn big_file(dir: &TempDir) -> (String, u64) {
    let mut body = String::new();
    for i in 1..=ROWS {
        body.push_str(&format!("{i},{},\"name {i} padded a little\"\n", i % 10));
    }
    let p = dir.0.join("big.csv");
    std::fs::write(&p, &body).unwrap();
    (p.display().to_string(), body.len() as u64)
}

/// One observation of the loading session.
#[derive(Debug, Clone)]
struct Seen {
    stage: i64,
    max_stage: i64,
    progress: f64,
    state: String,
    examined: u64,
    show_progress: f64,
}

/// Polls session `id` until `done` says the load ended; returns what was
/// seen while it ran a LOAD DATA.
fn watch(c: &mut mysql::Conn, id: &str, done: &dyn Fn() -> bool) -> Vec<Seen> {
    let mut seen = Vec::new();
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(300), "load too slow");
        let r = q(
            c,
            &format!(
                "SELECT STAGE, MAX_STAGE, PROGRESS, STATE, EXAMINED_ROWS \
                 FROM information_schema.PROCESSLIST WHERE ID = {id} AND INFO LIKE 'LOAD DATA%'"
            ),
        );
        let show = q(c, "SHOW PROCESSLIST");
        let show_row = show
            .iter()
            .find(|r| r.split('|').next() == Some(id) && r.contains("LOAD DATA"));
        if let (Some(r), Some(sr)) = (r.first(), show_row) {
            let f: Vec<&str> = r.split('|').collect();
            // Not yet reporting (the statement is being set up), or the
            // file not yet opened: nothing to check.
            if f[1] == "0" || f[3] == "Reading file: 0 rows" {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            seen.push(Seen {
                stage: f[0].parse().unwrap(),
                max_stage: f[1].parse().unwrap(),
                progress: f[2].parse().unwrap(),
                state: f[3].to_string(),
                examined: f[4].parse().unwrap(),
                show_progress: sr.rsplit('|').next().unwrap().parse().unwrap(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen
}

#[test]
fn load_data_progress_in_the_processlist() {
    let files = TempDir::new("e2e-load-progress-files");
    let (path, size) = big_file(&files);
    let srv = Server::start_with("load-progress", &["--secure-file-priv="]);
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(40))",
    );
    let id = q1(&mut c, "SELECT CONNECTION_ID()");
    let mut w = srv.conn();

    // Server-side file into the empty table (the bulk path).
    let sql =
        format!("LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'");
    let t = std::thread::spawn(move || {
        exec(&mut c, &sql);
        c
    });
    let seen = watch(&mut w, &id, &|| t.is_finished());
    let mut c = t.join().unwrap();
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), ROWS.to_string());
    let reading: Vec<&Seen> = seen.iter().filter(|s| s.stage == 1).collect();
    assert!(reading.len() >= 3, "too few observations: {seen:?}");
    let prefix = "Reading file: ";
    let suffix = format!(" of {size} bytes");
    for (a, b) in reading.iter().zip(reading.iter().skip(1)) {
        assert!(b.progress >= a.progress, "{a:?} then {b:?}");
        assert!(b.examined >= a.examined, "{a:?} then {b:?}");
    }
    for s in &seen {
        assert_eq!(s.max_stage, 2, "{s:?}");
        assert!((0.0..=100.0).contains(&s.progress), "{s:?}");
        if s.stage == 1 {
            // SHOW PROCESSLIST's Progress is over both stages: half the
            // stage's (read a moment later, so not below it).
            assert!(s.show_progress + 0.002 >= s.progress / 2.0, "{s:?}");
            assert!(s.show_progress <= 50.0, "{s:?}");
            assert!(
                s.state.starts_with(prefix) && s.state.ends_with(&suffix),
                "{s:?}"
            );
            let rows: u64 = s.state[prefix.len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(rows <= ROWS, "{s:?}");
        } else {
            assert_eq!(s.stage, 2, "{s:?}");
            assert!(s.state.starts_with("End bulk insert"), "{s:?}");
        }
    }
    let first = reading.first().unwrap();
    let last = reading.last().unwrap();
    assert!(
        last.progress > first.progress && last.examined > first.examined,
        "no progress seen: {first:?} .. {last:?}"
    );
    assert!(
        reading
            .iter()
            .any(|s| s.progress > 0.0 && s.progress < 100.0),
        "{reading:?}"
    );
    eprintln!(
        "{} observations, first {first:?}, last {last:?}",
        seen.len()
    );

    // LOCAL through the stock client into the (now full) table, row by
    // row: the size is unknown, so State counts rows and bytes, Progress
    // stays 0.
    exec(
        &mut c,
        "CREATE TABLE t2 (id INT PRIMARY KEY, k INT, name VARCHAR(40))",
    );
    exec(&mut c, "INSERT INTO t2 VALUES (0, 0, 'first')");
    let sql = format!(
        "LOAD DATA LOCAL INFILE '{path}' INTO TABLE t2 FIELDS TERMINATED BY ',' ENCLOSED BY '\"'"
    );
    let child = spawn_mariadb(srv.port, "d", &["--local-infile=1"], &sql);
    let start = Instant::now();
    let lid = loop {
        let r = q(
            &mut w,
            "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'LOAD DATA LOCAL%'",
        );
        if let Some(id) = r.first() {
            break id.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "LOCAL load not seen"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let child = std::sync::Mutex::new(child);
    let seen = watch(&mut w, &lid, &|| {
        matches!(child.lock().unwrap().try_wait(), Ok(Some(_)))
    });
    let out = child.into_inner().unwrap().wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        q1(&mut c, "SELECT COUNT(*) FROM t2"),
        (ROWS + 1).to_string()
    );
    let reading: Vec<&Seen> = seen.iter().filter(|s| s.stage == 1).collect();
    assert!(reading.len() >= 3, "too few observations: {seen:?}");
    let rows_of = |s: &Seen| -> (u64, u64) {
        let rest = s.state.strip_prefix("Reading file: ").unwrap();
        let mut p = rest.split(' ');
        let rows = p.next().unwrap().parse().unwrap();
        let bytes = p.nth(1).map_or(0, |b| b.parse().unwrap());
        (rows, bytes)
    };
    for s in &reading {
        assert_eq!(s.progress, 0.0, "{s:?}");
        assert_eq!(s.max_stage, 2, "{s:?}");
        let (_, bytes) = rows_of(s);
        assert!(bytes <= size, "{s:?}");
        assert!(!s.state.contains(" of "), "{s:?}");
    }
    let (r0, b0) = rows_of(reading[0]);
    let (r1, b1) = rows_of(reading[reading.len() - 1]);
    assert!(r1 > r0 && b1 > b0, "{:?}", reading);
}
