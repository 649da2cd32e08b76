//! The applier against synthetic event streams (no network, no MariaDB):
//! what each QUERY event kind does, positions and GTIDs of groups that
//! apply nothing, and the applier's transaction as other sessions see it.
use super::apply::{Applier, Fault};
use crate::result::Collect;
use crate::{Instance, InstanceOptions, Session};
use binlog::event::{self, gtid_flag, kind, Header, QueryInfo};
use binlog::row::{put_row, Cell, ColType};
use std::sync::Arc;

/// A fake source: events numbered and positioned as in one binlog file.
pub(super) struct Src {
    pub(super) inst: Arc<Instance>,
    pub(super) app: Applier,
    pub(super) pos: u64,
    pub(super) seq: u64,
    _dir: testkit::TempDir,
}

pub(super) const TS: u32 = 1_700_000_000;

impl Src {
    pub(super) fn new(name: &str) -> Src {
        let dir = testkit::TempDir::new(name);
        let o = InstanceOptions {
            sync_on_commit: false,
            ..Default::default()
        };
        let inst = Instance::open(&dir.0, &o).unwrap();
        let r = &inst.replica;
        let app = Applier::new(inst.clone(), r.store.cf().unwrap(), r.shared.clone());
        Src {
            inst,
            app,
            pos: 4,
            seq: 0,
            _dir: dir,
        }
    }

    pub(super) fn send(&mut self, kind: u8, body: &[u8]) -> Result<(), Fault> {
        let mut v = Vec::new();
        let h = Header {
            timestamp: TS,
            kind,
            server_id: 7,
            flags: 0,
        };
        self.pos = event::write_event(&mut v, self.pos, h, body);
        self.app.event(&v)
    }

    /// A GTID event opening the next group.
    pub(super) fn gtid(&mut self, standalone: bool) -> Result<(), Fault> {
        self.seq += 1;
        let fl = if standalone {
            gtid_flag::STANDALONE
        } else {
            gtid_flag::TRANSACTIONAL
        };
        self.send(kind::GTID, &event::gtid(self.seq, 0, fl))
    }

    pub(super) fn query_with(&mut self, q: &QueryInfo<'_>) -> Result<(), Fault> {
        self.send(kind::QUERY, &event::query(q))
    }

    pub(super) fn query(&mut self, db: &str, sql: &str) -> Result<(), Fault> {
        self.query_with(&QueryInfo {
            thread_id: 1,
            flags2: 0,
            db,
            sql_mode: crate::sqlmode::SqlMode::DEFAULT.0,
            charset: [45, 45, 45],
            query: sql,
        })
    }

    /// A standalone DDL group.
    pub(super) fn ddl(&mut self, db: &str, sql: &str) -> Result<(), Fault> {
        self.gtid(true)?;
        self.query(db, sql)
    }

    pub(super) fn xid(&mut self) -> Result<(), Fault> {
        self.send(kind::XID, &event::xid(self.seq))
    }

    /// TABLE_MAP (id 1) and WRITE_ROWS of `rows` into `db.table`, whose
    /// columns are all INT.
    pub(super) fn insert(&mut self, db: &str, table: &str, rows: &[&[i64]]) -> Result<(), Fault> {
        let cols = vec![ColType::Int(4); rows[0].len()];
        let cells: Vec<Vec<Cell<'_>>> = rows
            .iter()
            .map(|r| r.iter().map(|v| Cell::Int(*v)).collect())
            .collect();
        self.write_rows(db, table, &cols, &cells)
    }

    /// TABLE_MAP (id 1) and WRITE_ROWS of `rows` of `cols` into `db.table`.
    pub(super) fn write_rows(
        &mut self,
        db: &str,
        table: &str,
        cols: &[ColType],
        rows: &[Vec<Cell<'_>>],
    ) -> Result<(), Fault> {
        let map: Vec<_> = cols.iter().map(|c| c.map_column(true)).collect();
        self.send(kind::TABLE_MAP, &event::table_map(1, db, table, &map))?;
        let mut images = Vec::new();
        for r in rows {
            put_row(&mut images, cols, r).unwrap();
        }
        let head = event::rows_head(kind::WRITE_ROWS_V1, cols.len());
        let body = event::rows(1, event::STMT_END_F, &head, &images);
        self.send(kind::WRITE_ROWS_V1, &body)
    }

    /// TABLE_MAP (id 1) and UPDATE_ROWS of one row of `db.table` (INT
    /// columns) from `before` to `after`.
    pub(super) fn update_int(
        &mut self,
        db: &str,
        table: &str,
        before: &[i64],
        after: &[i64],
    ) -> Result<(), Fault> {
        let n = before.len();
        let cols = vec![ColType::Int(4); n];
        let map: Vec<_> = cols.iter().map(|c| c.map_column(true)).collect();
        self.send(kind::TABLE_MAP, &event::table_map(1, db, table, &map))?;
        let mut images = Vec::new();
        for r in [before, after] {
            let cells: Vec<Cell<'_>> = r.iter().map(|v| Cell::Int(*v)).collect();
            put_row(&mut images, &cols, &cells).unwrap();
        }
        let head = event::rows_head(kind::UPDATE_ROWS_V1, n);
        let body = event::rows(1, event::STMT_END_F, &head, &images);
        self.send(kind::UPDATE_ROWS_V1, &body)
    }

    pub(super) fn session(&self) -> Session {
        Session::new(self.inst.clone(), 99, "root", None)
    }

    pub(super) fn rows(&self, sql: &str) -> Vec<String> {
        let mut s = self.session();
        let mut c = Collect::default();
        s.query(sql, &mut c)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        c.texts()
    }

    /// @@gtid_slave_pos and the stored position (file offset).
    pub(super) fn applied(&self) -> (String, u64) {
        let p = self.inst.replica.store.load_position().unwrap();
        (p.gtid_text(), p.pos)
    }
}

/// The error code of a statement that must fail.
pub(super) fn code(l: &mut Session, sql: &str) -> u16 {
    match l.query(sql, &mut Collect::default()) {
        Err(e) => e.code,
        Ok(_) => panic!("{sql} succeeded"),
    }
}

pub(super) fn sql_err(r: Result<(), Fault>) -> (u16, String) {
    match r {
        Err(Fault::Sql(c, m)) => (c, m),
        r => panic!("expected an SQL fault, got {r:?}"),
    }
}

/// Creates d.t (a INT PRIMARY KEY, b INT) through a replicated DDL.
pub(super) fn with_table(name: &str) -> Src {
    let mut s = Src::new(name);
    s.ddl("", "CREATE DATABASE d").unwrap();
    s.ddl("d", "CREATE TABLE t (a INT PRIMARY KEY, b INT)")
        .unwrap();
    s
}

#[test]
fn statement_format_dml_stops_with_advice() {
    // Standalone (a non-transactional table on the source).
    let mut s = with_table("apply-stmt-dml");
    s.gtid(true).unwrap();
    let (code, msg) = sql_err(s.query("d", "INSERT INTO t VALUES (1, 1)"));
    assert_eq!(code, 1235);
    assert!(msg.contains("statement-format INSERT"), "{msg}");
    assert!(msg.contains("binlog_format=ROW"), "{msg}");
    assert!(
        msg.contains("Query: 'INSERT INTO t VALUES (1, 1)'"),
        "{msg}"
    );
    // Nothing ran and the position did not move past the refused group.
    assert!(s.rows("SELECT * FROM d.t").is_empty());
    assert_eq!(s.applied().0, "0-7-2");
    // Inside a transaction (MIXED logs UPDATE as a statement): refused.
    s.app.abort();
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[5, 5]]).unwrap();
    let (code, msg) = sql_err(s.query("d", "UPDATE t SET b = b + 1"));
    assert_eq!(code, 1235);
    assert!(msg.contains("statement-format UPDATE"), "{msg}");
    s.app.abort();
    assert!(s.rows("SELECT * FROM d.t").is_empty());
    // DDL inside a transaction is refused too (never ends it midway),
    // but for the CREATE TABLE opening a ROW-format CREATE TABLE ...
    // SELECT's group (`ddl_tests`).
    s.gtid(false).unwrap();
    let (code, _) = sql_err(s.query("d", "ALTER TABLE t ADD c INT"));
    assert_eq!(code, 1235);
    s.app.abort();
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[5, 5]]).unwrap();
    let (code, _) = sql_err(s.query("d", "CREATE TABLE u (a INT)"));
    assert_eq!(code, 1235);
    s.app.abort();
    assert!(s.rows("SHOW TABLES FROM d LIKE 'u'").is_empty());
    assert_eq!(s.rows("SHOW COLUMNS FROM d.t").len(), 2);
}

#[test]
fn ddl_and_row_groups_apply() {
    let mut s = with_table("apply-ddl-rows");
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 10], &[2, 20]]).unwrap();
    s.xid().unwrap();
    assert_eq!(s.rows("SELECT * FROM d.t ORDER BY a"), ["1|10", "2|20"]);
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // Comment-only statements do nothing but move the position.
    s.ddl("d", "/* nothing */").unwrap();
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
}

#[test]
fn groups_that_apply_nothing_record_their_position() {
    let mut s = with_table("apply-empty-groups");
    // BEGIN .. ROLLBACK (MariaDB logs it when a transaction that touched a
    // non-transactional table rolls back): nothing applied, GTID recorded.
    s.gtid(false).unwrap();
    s.query("d", "BEGIN").unwrap();
    s.insert("d", "t", &[&[1, 1]]).unwrap();
    s.query("d", "ROLLBACK").unwrap();
    assert!(s.rows("SELECT * FROM d.t").is_empty());
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // An empty transaction: GTID, XID.
    s.gtid(false).unwrap();
    s.xid().unwrap();
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
    // GTID, BEGIN, COMMIT.
    s.gtid(false).unwrap();
    s.query("d", "BEGIN").unwrap();
    s.query("d", "COMMIT").unwrap();
    assert_eq!(s.applied(), ("0-7-5".into(), s.pos));
}

/// Runs `sql` in a new root session (panics on error).
pub(super) fn run(inst: &Arc<Instance>, sql: &str) {
    let mut s = Session::new(inst.clone(), 98, "root", None);
    s.query(sql, &mut Collect::default())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[test]
fn local_alter_waits_for_the_applier_transaction() {
    let mut s = with_table("apply-alter-waits");
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 10], &[2, 20]]).unwrap();
    let inst = s.inst.clone();
    let alter = std::thread::spawn(move || run(&inst, "ALTER TABLE d.t ADD INDEX ib (b)"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The applier's open transaction holds the ALTER back, as a session's.
    assert!(!alter.is_finished(), "ALTER did not wait for the applier");
    s.xid().unwrap();
    alter.join().unwrap();
    assert_eq!(
        s.rows("SELECT a FROM d.t FORCE INDEX (ib) WHERE b >= 10 ORDER BY b"),
        ["1", "2"]
    );
}

#[test]
fn a_table_rebuilt_meanwhile_is_retried_not_a_stop() {
    let mut s = with_table("apply-table-changed");
    // A local transaction keeps the ALTER waiting with the table frozen;
    // the applier's transaction, begun after the freeze, is refused (1412)
    // and applied again once the ALTER is done.
    let inst = s.inst.clone();
    let local = std::thread::spawn(move || {
        let mut l = Session::new(inst.clone(), 97, "root", None);
        let mut c = Collect::default();
        l.query("BEGIN", &mut c).unwrap();
        l.query("INSERT INTO d.t VALUES (100, 100)", &mut c)
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        l.query("COMMIT", &mut c).unwrap();
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    let inst = s.inst.clone();
    let alter = std::thread::spawn(move || run(&inst, "ALTER TABLE d.t MODIFY b BIGINT"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 10]]).unwrap();
    s.xid().unwrap();
    local.join().unwrap();
    alter.join().unwrap();
    assert_eq!(s.rows("SELECT * FROM d.t ORDER BY a"), ["1|10", "100|100"]);
    assert_eq!(s.applied().0, "0-7-3");
}

#[test]
fn lock_wait_timeouts_are_retried_and_stop_interrupts_a_wait() {
    let mut s = with_table("apply-lock-retry");
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 10]]).unwrap();
    s.xid().unwrap();
    run(&s.inst, "SET GLOBAL innodb_lock_wait_timeout = 1");
    // A local transaction holds row 1 for 1.5 s: the applier's update
    // times out (1205) and succeeds on a retry.
    let inst = s.inst.clone();
    let local = std::thread::spawn(move || {
        let mut l = Session::new(inst.clone(), 97, "root", None);
        let mut c = Collect::default();
        l.query("BEGIN", &mut c).unwrap();
        l.query("UPDATE d.t SET b = 11 WHERE a = 1", &mut c)
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        l.query("COMMIT", &mut c).unwrap();
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    s.gtid(false).unwrap();
    s.update_int("d", "t", &[1, 10], &[1, 12]).unwrap();
    s.xid().unwrap();
    local.join().unwrap();
    assert_eq!(s.rows("SELECT * FROM d.t"), ["1|12"]);
    // STOP SLAVE ends a lock wait at once (here a long one).
    run(&s.inst, "SET GLOBAL innodb_lock_wait_timeout = 50");
    let mut l = s.session();
    let mut c = Collect::default();
    l.query("BEGIN", &mut c).unwrap();
    l.query("UPDATE d.t SET b = 13 WHERE a = 1", &mut c)
        .unwrap();
    let shared = s.inst.replica.shared.clone();
    let t0 = std::time::Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        shared.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        shared.kill.store(1, std::sync::atomic::Ordering::SeqCst);
    });
    s.gtid(false).unwrap();
    let _ = s.update_int("d", "t", &[1, 12], &[1, 14]);
    stopper.join().unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    s.app.abort();
    l.query("ROLLBACK", &mut c).unwrap();
    assert_eq!(s.rows("SELECT * FROM d.t"), ["1|12"]);
}

#[test]
fn ddl_and_its_position_are_one_write() {
    let mut s = with_table("apply-ddl-atomic");
    super::apply::tests::CRASH_AFTER_DDL.with(|c| c.set(true));
    let r = s.ddl("d", "CREATE TABLE u (a INT PRIMARY KEY)");
    super::apply::tests::CRASH_AFTER_DDL.with(|c| c.set(false));
    assert!(matches!(r, Err(Fault::Io(..))), "{r:?}");
    // The "crash" came after the statement: its position is durable with
    // it, so the restarted applier does not run it again (1050).
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // A DDL that writes no catalog entry still records its position.
    s.ddl("d", "CREATE TABLE IF NOT EXISTS u (a INT PRIMARY KEY)")
        .unwrap();
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
}

#[test]
fn ddl_runs_with_the_events_session_flags() {
    let mut s = with_table("apply-ddl-flags");
    // foreign_key_checks=0 on the source (flags2 bit 26): a foreign key to
    // a table not there yet is accepted, as it was on the source.
    s.gtid(true).unwrap();
    s.query_with(&QueryInfo {
        thread_id: 1,
        flags2: 1 << 26,
        db: "d",
        sql_mode: crate::sqlmode::SqlMode::DEFAULT.0,
        charset: [45, 45, 45],
        query: "CREATE TABLE c (a INT, FOREIGN KEY (a) REFERENCES p (a))",
    })
    .unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'c'"), ["c"]);
    // The source's sql_mode: without NO_ZERO_DATE/strict a zero default
    // date is taken; a flag Strata does not honour stops with 1235.
    s.gtid(true).unwrap();
    s.query_with(&QueryInfo {
        thread_id: 1,
        flags2: 0,
        db: "d",
        sql_mode: 1 << 5 | 1 << 21,
        charset: [45, 45, 45],
        query: "CREATE TABLE z (a INT)",
    })
    .unwrap();
    s.gtid(true).unwrap();
    let r = s.query_with(&QueryInfo {
        thread_id: 1,
        flags2: 0,
        db: "d",
        sql_mode: 1 << 2,
        charset: [45, 45, 45],
        query: "CREATE TABLE y (a INT)",
    });
    assert_eq!(sql_err(r).0, 1235);
}

#[test]
fn skip_counter_skips_whole_groups_and_records_them() {
    let mut s = with_table("apply-skip");
    s.inst
        .replica
        .shared
        .skip
        .store(2, std::sync::atomic::Ordering::SeqCst);
    // A refused statement and a transaction (with a savepoint) skipped.
    s.ddl("d", "INSERT INTO t VALUES (9, 9)").unwrap();
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 1]]).unwrap();
    s.query("d", "SAVEPOINT `a`").unwrap();
    s.xid().unwrap();
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
    // The next group applies.
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[2, 2]]).unwrap();
    s.xid().unwrap();
    assert_eq!(s.rows("SELECT * FROM d.t"), ["2|2"]);
    assert_eq!(s.applied(), ("0-7-5".into(), s.pos));
}

#[test]
fn gtid_slave_pos_and_skip_counter_are_set_while_stopped() {
    let s = Src::new("apply-set-globals");
    let mut l = s.session();
    let mut c = Collect::default();
    assert_eq!(code(&mut l, "SET GLOBAL gtid_slave_pos = '0-1'"), 1941);
    assert_eq!(
        code(&mut l, "SET GLOBAL gtid_slave_pos = '0-1-2,0-2-3'"),
        1943
    );
    assert_eq!(code(&mut l, "SET SESSION gtid_slave_pos = '0-1-2'"), 1229);
    assert_eq!(code(&mut l, "SET SESSION sql_slave_skip_counter = 1"), 1229);
    l.query("SET GLOBAL gtid_slave_pos = '0-1-5, 3-2-9'", &mut c)
        .unwrap();
    assert_eq!(s.rows("SELECT @@gtid_slave_pos"), ["0-1-5,3-2-9"]);
    assert_eq!(s.applied().0, "0-1-5,3-2-9");
    l.query("SET GLOBAL sql_slave_skip_counter = 3", &mut c)
        .unwrap();
    assert_eq!(s.rows("SELECT @@global.sql_slave_skip_counter"), ["3"]);
    // Running (a source that cannot be reached): both refused with 1198.
    s.inst
        .replica
        .set_connector(Arc::new(|_: &super::ConnectRequest| {
            Err(super::SourceError::Network("unreachable".into()))
        }));
    l.query(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=1, MASTER_USER='r', \
         MASTER_USE_GTID=slave_pos",
        &mut c,
    )
    .unwrap();
    l.query("START SLAVE", &mut c).unwrap();
    // START took the counter over.
    assert_eq!(s.rows("SELECT @@global.sql_slave_skip_counter"), ["0"]);
    assert_eq!(code(&mut l, "SET GLOBAL gtid_slave_pos = '0-1-6'"), 1198);
    assert_eq!(code(&mut l, "SET GLOBAL sql_slave_skip_counter = 1"), 1198);
    l.query("STOP SLAVE", &mut c).unwrap();
    assert_eq!(s.rows("SELECT @@gtid_slave_pos"), ["0-1-5,3-2-9"]);
}

/// A source that streams nothing until interrupted, as a MIXED source.
struct Idle(Arc<std::sync::atomic::AtomicBool>);

impl super::Source for Idle {
    fn next_event(&mut self) -> Result<Option<Vec<u8>>, super::SourceError> {
        while !self.0.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Err(super::SourceError::Network("closed".into()))
    }
    fn interrupter(&self) -> Box<dyn Fn() + Send + Sync> {
        let f = self.0.clone();
        Box::new(move || f.store(true, std::sync::atomic::Ordering::SeqCst))
    }
    fn binlog_format(&self) -> Option<String> {
        Some("MIXED".into())
    }
}

#[test]
fn a_source_not_in_row_format_is_warned_about() {
    let s = Src::new("apply-format-warning");
    s.inst
        .replica
        .set_connector(Arc::new(|_: &super::ConnectRequest| {
            let b: Box<dyn super::Source> =
                Box::new(Idle(Arc::new(std::sync::atomic::AtomicBool::new(false))));
            Ok(b)
        }));
    let mut l = s.session();
    let mut c = Collect::default();
    l.query(
        "CHANGE MASTER TO MASTER_HOST='h', MASTER_PORT=1, MASTER_USER='r', MASTER_USE_GTID=slave_pos",
        &mut c,
    )
    .unwrap();
    l.query("START SLAVE", &mut c).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let st = s.inst.replica.shared.status().clone();
        if st.io_running == super::IoState::Yes {
            assert_eq!(st.last_io_errno, 0);
            assert!(
                st.last_io_error.contains("binlog_format is MIXED"),
                "{}",
                st.last_io_error
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never connected");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    l.query("STOP SLAVE", &mut c).unwrap();
}

#[test]
fn latin1_text_becomes_utf8() {
    let mut s = with_table("apply-latin1");
    // A DDL sent by a latin1 client (Q_CHARSET_CODE 8: latin1_swedish_ci):
    // its text is latin1 bytes.
    s.gtid(true).unwrap();
    let mut body = event::query(&QueryInfo {
        thread_id: 1,
        flags2: 0,
        db: "d",
        sql_mode: crate::sqlmode::SqlMode::DEFAULT.0,
        charset: [8, 8, 8],
        query: "",
    });
    body.extend_from_slice(
        b"CREATE TABLE l (a INT PRIMARY KEY, s VARCHAR(10), u VARCHAR(10) DEFAULT '\xe9\x80') \
          CHARSET latin1",
    );
    s.send(kind::QUERY, &body).unwrap();
    // Rows: a latin1 column's bytes are cp1252.
    s.gtid(false).unwrap();
    let cols = [
        ColType::Int(4),
        ColType::VarString { max_bytes: 10 },
        ColType::VarString { max_bytes: 10 },
    ];
    s.write_rows(
        "d",
        "l",
        &cols,
        &[vec![Cell::Int(1), Cell::Bytes(b"caf\xe9 \x80"), Cell::Null]],
    )
    .unwrap();
    s.xid().unwrap();
    assert_eq!(s.rows("SELECT s FROM d.l"), ["café €"]);
    let mut l = s.session();
    l.query("INSERT INTO d.l (a) VALUES (2)", &mut Collect::default())
        .unwrap();
    assert_eq!(s.rows("SELECT u FROM d.l WHERE a = 2"), ["é€"]);
}
