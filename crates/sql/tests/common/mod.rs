//! Helpers shared by the sql crate's integration tests: run a statement on a
//! Session and render its rows as text.
#![allow(dead_code)]
use sql::result::Collect;
use sql::{Session, Value};
pub mod ttl;

/// Runs one statement, panicking with the statement on error; its rows.
pub fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

/// Rows as `a|b|c` text, as the text protocol would send each value.
pub fn texts(rows: Vec<Vec<Value>>) -> Vec<String> {
    Collect {
        rows,
        ..Default::default()
    }
    .texts()
}

/// Rows of a statement as `a|b|c` text (see `texts`).
pub fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

/// A root session on `db` using database `d` (created if missing).
pub fn session_in_d(db: &TestDb) -> Session {
    let mut s = Session::new(db.inst.clone(), 1, "root", None);
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

/// (code, message) of a failing statement (panics if it succeeds).
pub fn fails(s: &mut Session, sql: &str) -> (u16, String) {
    let mut c = Collect::default();
    let e = s.query(sql, &mut c).expect_err(sql);
    (e.code, e.msg)
}

/// SHOW CREATE TABLE's statement for `table`.
pub fn show_create(s: &mut Session, table: &str) -> String {
    let r = rows(s, &format!("SHOW CREATE TABLE {table}"));
    r[0].split_once('|')
        .map(|x| x.1.to_string())
        .unwrap_or_default()
}

/// Asserts CHECK TABLE `table` answers OK.
pub fn check_ok(s: &mut Session, table: &str) {
    let r = rows(s, &format!("CHECK TABLE {table}"));
    assert_eq!(
        r[0].rsplit('|').next(),
        Some("OK"),
        "CHECK TABLE {table}: {r:?}"
    );
}

/// The error code a statement fails with (panics if it succeeds).
pub fn err(s: &mut Session, sql: &str) -> u16 {
    let mut c = Collect::default();
    s.query(sql, &mut c).expect_err(sql).code
}

/// A temporary directory made `db`'s secure_file_priv (LOAD DATA reads its
/// files there), with a root session in database d.
pub fn with_files(db: TestDb, name: &str) -> (TestDb, testkit::TempDir, Session) {
    let files = testkit::TempDir::new(&format!("{name}-files"));
    db.inst.set_global(
        "secure_file_priv",
        Value::Bytes(files.0.display().to_string().into_bytes()),
    );
    let s = session_in_d(&db);
    (db, files, s)
}

/// Writes `body` to file `name` of `dir`; its path.
pub fn write_file(dir: &testkit::TempDir, name: &str, body: &[u8]) -> String {
    let p = dir.0.join(name);
    std::fs::write(&p, body).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    p.display().to_string()
}

/// A numeric status variable as SHOW STATUS (the session's) gives it.
pub fn status(s: &mut Session, name: &str) -> u64 {
    rows(s, &format!("SHOW STATUS LIKE '{name}'"))
        .first()
        .and_then(|r| r.split('|').nth(1)?.parse().ok())
        .unwrap_or_else(|| panic!("no status variable {name}"))
}

/// Waits until session `id` shows `state` in SHOW PROCESSLIST (as seen
/// by `s`, not a session with a bulk load open: the statement would end it).
pub fn wait_state(s: &mut Session, id: u64, state: &str) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let list = rows(s, "SHOW PROCESSLIST");
        let found = list
            .iter()
            .any(|r| r.starts_with(&format!("{id}|")) && r.contains(state));
        if found {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "session {id} never showed {state}: {list:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Opens (or, after a restart, reopens) an instance on `dir` with
/// `sync_on_commit` off; for tests that restart it (`shutdown` first).
pub fn open_at(dir: &testkit::TempDir) -> std::sync::Arc<sql::Instance> {
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    sql::Instance::open(&dir.0, &o).unwrap_or_else(|e| panic!("open: {e}"))
}

/// A root session of `inst` in database d (created if missing).
pub fn root_in_d(inst: &std::sync::Arc<sql::Instance>) -> Session {
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

/// An instance on a temporary directory that is removed when this is dropped (after
/// the instance, also when the test panics).
pub struct TestDb {
    pub inst: std::sync::Arc<sql::Instance>,
    _dir: testkit::TempDir,
}

impl TestDb {
    /// Opens an instance with `sync_on_commit` off on a fresh directory.
    pub fn open(name: &str) -> TestDb {
        TestDb::open_with(
            name,
            sql::InstanceOptions {
                sync_on_commit: false,
                ..Default::default()
            },
        )
    }

    /// Opens an instance with the binary log on (basename `binlog`) and
    /// `sync_on_commit` off on a fresh directory.
    pub fn open_logged(name: &str) -> TestDb {
        TestDb::open_with(
            name,
            sql::InstanceOptions {
                sync_on_commit: false,
                log_bin: Some("binlog".into()),
                ..Default::default()
            },
        )
    }

    /// Opens an instance with options `o` on a fresh directory.
    pub fn open_with(name: &str, o: sql::InstanceOptions) -> TestDb {
        let dir = testkit::TempDir::new(name);
        let inst = sql::Instance::open(&dir.0, &o).unwrap_or_else(|e| panic!("open: {e}"));
        TestDb { inst, _dir: dir }
    }
}

impl std::ops::Deref for TestDb {
    type Target = std::sync::Arc<sql::Instance>;
    fn deref(&self) -> &Self::Target {
        &self.inst
    }
}

/// Whether the engine holds any key under index ids `first .. end`, in any
/// column family (what a dropped, abandoned or reclaimed index or table must
/// not leave).
pub fn has_entries(inst: &sql::Instance, first: u32, end: u32) -> bool {
    let db = inst.catalog.db();
    let lo = first.to_be_bytes().to_vec();
    rel::cf::all(db).into_iter().any(|cf| {
        let hi = end.to_be_bytes();
        let mut it =
            rel::keyrange::KeyIter::new(db, cf, lsm::ReadOptions::default(), &lo, Some(&hi))
                .expect("engine iterator");
        it.seek_to_first();
        it.valid()
    })
}

/// The user index ids holding keys that no table has (nor builds): an index
/// abandoned or dropped whose entries stayed.
pub fn orphan_index_ids(inst: &sql::Instance) -> Vec<u32> {
    let st = inst.catalog.state();
    let live: std::collections::HashSet<u32> = st
        .tables
        .values()
        .flat_map(|t| t.def.indexes().chain(&t.building).map(|i| i.id))
        .collect();
    let lo = rel::catalog::FIRST_USER_INDEX_ID.to_be_bytes().to_vec();
    let db = inst.catalog.db();
    let mut orphans = Vec::new();
    for cf in rel::cf::all(db) {
        let mut it = rel::keyrange::KeyIter::new(db, cf, lsm::ReadOptions::default(), &lo, None)
            .expect("engine iterator");
        it.seek_to_first();
        while it.valid() {
            let k = it.key();
            let id = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
            if !live.contains(&id) && !orphans.contains(&id) {
                orphans.push(id);
            }
            it.next();
        }
    }
    orphans
}
