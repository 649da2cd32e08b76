//! The applier: a source's events, in order, become Strata transactions.
//! A transaction's rows events (TABLE_MAP + WRITE/UPDATE/DELETE_ROWS) are
//! applied through rel (`fk::Writer`) in one engine transaction, the
//! binlog's values converted to the replica's column types by position;
//! at its XID (or QUERY COMMIT) the applied position (the source's file,
//! the offset after the event, the transaction's GTID) is put into the same
//! transaction, which then commits: data and position are one batch, so a
//! crash never loses or repeats a transaction. DDL (QUERY events) runs
//! through the SQL layer in the event's database, then the position
//! commits alone. Replicated changes are not written to Strata's own
//! binary log (MariaDB's log_slave_updates=OFF).
use super::query::{self, Query};
use super::state::{encode_position, Position, KEY_POS};
use super::values::{find, note_auto_inc, row_values};
use super::versioned;
use super::Shared;
use crate::error::SqlError;
use crate::sqlmode::SqlMode;
use crate::Instance;
use binlog::event::{gtid_flag, kind, Gtid};
use binlog::parse::{self, Body, RowsKind, TableMap};
use binlog::unpack::{self, Datum};
use lsm::ColumnFamily;
use rel::value::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use txn::{Isolation, Savepoint, Txn};

/// Why applying stopped: the source side (Last_IO_Errno) or the applying
/// side (Last_SQL_Errno).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    Io(u16, String),
    Sql(u16, String),
}

/// ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE, MariaDB's code for an event
/// that does not decode or fails its checksum.
const ER_EVENT_CORRUPT: u16 = 1743;

pub(crate) struct Applier {
    inst: Arc<Instance>,
    cf: ColumnFamily,
    shared: Arc<Shared>,
    own_server_id: u32,
    checksum: bool,
    /// The source's file the stream is in.
    file: String,
    maps: HashMap<u64, TableMap>,
    txn: Option<Txn>,
    /// The open transaction's GTID (or a standalone DDL's).
    gtid: Option<Gtid>,
    /// The open transaction's savepoints (SAVEPOINT events), oldest first.
    savepoints: Vec<(String, Savepoint)>,
    /// The applier's session slot (see `Session`'s): the catalog version
    /// its open transaction began under (`u64::MAX` idle), so that ALTER
    /// TABLE and ADD INDEX wait for it as for any session's transaction.
    slot: Arc<AtomicU64>,
    /// The raw events of the open transaction, replayed when it is retried
    /// (1205, 1213, 1412); None once they outgrow GROUP_BUFFER_MAX (such a
    /// transaction is not retried).
    group: Option<Vec<Vec<u8>>>,
    group_bytes: usize,
    /// The open group is skipped (sql_slave_skip_counter).
    skipping: bool,
    /// The open group is a transaction not applied (ours or skipped): its
    /// events are passed over up to its end.
    skip_txn: bool,
    /// The source's MariaDB version (its FORMAT_DESCRIPTION's), by which
    /// the executable comments of its statements are read (`versioned`).
    source_version: Option<u64>,
}

/// The most bytes of one transaction's events kept for a retry.
const GROUP_BUFFER_MAX: usize = 64 << 20;

/// Errors after which the transaction is rolled back and applied again:
/// lock wait timeout, deadlock (MariaDB's slave_transaction_retries) and a
/// table an ALTER TABLE replaced meanwhile.
fn retryable(code: u16) -> bool {
    matches!(code, 1205 | 1213 | crate::error::ER_TABLE_DEF_CHANGED)
}

/// The session settings a DDL event runs under: the source's sql_mode
/// (ONLY_FULL_GROUP_BY dropped: it concerns queries only, and Strata
/// refuses it; any other flag Strata does not honour stops replication
/// with SET's 1235) and, from flags2, foreign_key_checks and unique_checks.
fn session_settings(q: &parse::Query) -> Vec<String> {
    const ONLY_FULL_GROUP_BY: u64 = 1 << 5;
    let mut v = vec!["SET SESSION sql_log_bin = 0".to_string()];
    if let Some(m) = q.sql_mode {
        v.push(format!(
            "SET SESSION sql_mode = {}",
            m & !ONLY_FULL_GROUP_BY
        ));
    }
    // Q_CHARSET_CODE: the text is in character_set_client; literals take
    // collation_connection, new databases collation_server.
    if let Some(ids) = q.charset {
        for (var, id) in [
            "character_set_client",
            "collation_connection",
            "collation_server",
        ]
        .into_iter()
        .zip(ids)
        {
            if let Some(c) = rel::collation::Collation::from_id(id) {
                let name = match var {
                    "character_set_client" => c.charset(),
                    _ => c.name(),
                };
                v.push(format!("SET SESSION {var} = '{name}'"));
            }
        }
    }
    if let Some(f) = q.flags2 {
        // OPTION_NO_FOREIGN_KEY_CHECKS, OPTION_RELAXED_UNIQUE_CHECKS.
        v.push(format!(
            "SET SESSION foreign_key_checks = {}",
            (f & 1 << 26 == 0) as u8
        ));
        v.push(format!(
            "SET SESSION unique_checks = {}",
            (f & 1 << 27 == 0) as u8
        ));
    }
    v
}

/// A savepoint statement of the open transaction.
enum Sp {
    Set(String),
    RollbackTo(String),
    Release(String),
}

/// A QUERY event the applier does not run: 1235 with the reason, the
/// default database and the statement.
fn refused(q: &parse::Query, why: &str) -> Fault {
    Fault::Sql(
        crate::error::ER_NOT_SUPPORTED_YET,
        format!(
            "This version of Strata doesn't yet support '{why}'. Default database: '{}'. Query: '{}'",
            q.db,
            shown(&q.query)
        ),
    )
}

/// The most characters of a statement an error shows (Last_SQL_Error).
const SHOWN_MAX: usize = 512;

/// A statement's text for an error message: its first `SHOWN_MAX`
/// characters, "..." marking the cut (a multi-MB statement stays out of
/// SHOW SLAVE STATUS).
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(SHOWN_MAX) {
        Some((i, _)) => format!("{}...", &text[..i]).into(),
        None => text.into(),
    }
}

/// A DDL event's error, as MariaDB words it.
fn ddl_failed(q: &parse::Query, e: SqlError) -> Fault {
    Fault::Sql(
        e.code,
        format!(
            "Error '{}' on query. Default database: '{}'. Query: '{}'",
            e.msg,
            q.db,
            shown(&q.query)
        ),
    )
}

/// The text a DDL event runs as. CREATE OR REPLACE TABLE (and, `always`,
/// any plain CREATE TABLE) drops the table first, in `s`, without the
/// position (a crash between the two runs both again), and runs as CREATE
/// TABLE.
fn drop_first<'q>(
    s: &mut crate::Session,
    q: &'q parse::Query,
    always: bool,
) -> Result<std::borrow::Cow<'q, [u8]>, Fault> {
    use std::borrow::Cow;
    let Some(c) = query::creates_table(&q.query).filter(|c| always || c.or_replace) else {
        return Ok(Cow::Borrowed(&q.query_bytes));
    };
    let text = match c.or_replace {
        true => Cow::Owned(query::without_or_replace(&q.query_bytes).ok_or_else(|| {
            refused(
                q,
                "CREATE OR REPLACE TABLE with comments between its first words",
            )
        })?),
        false => Cow::Borrowed(q.query_bytes.as_slice()),
    };
    drop_table(s, q, &c.name)?;
    Ok(text)
}

fn drop_table(s: &mut crate::Session, q: &parse::Query, name: &str) -> Result<(), Fault> {
    s.query(
        &format!("DROP TABLE IF EXISTS {name}"),
        &mut crate::result::Collect::default(),
    )
    .map(|_| ())
    .map_err(|e| ddl_failed(q, e))
}

fn sql_fault(e: SqlError) -> Fault {
    Fault::Sql(e.code, e.msg)
}

impl Applier {
    pub(crate) fn new(inst: Arc<Instance>, cf: ColumnFamily, shared: Arc<Shared>) -> Applier {
        let own_server_id = inst
            .global_var("server_id")
            .and_then(|v| v.to_i128())
            .unwrap_or(0) as u32;
        let file = shared.pos().file.clone();
        let slot = inst.register_session_slot();
        Applier {
            inst,
            cf,
            shared,
            own_server_id,
            checksum: true,
            file,
            maps: HashMap::new(),
            txn: None,
            gtid: None,
            savepoints: Vec::new(),
            slot,
            group: Some(Vec::new()),
            group_bytes: 0,
            skipping: false,
            skip_txn: false,
            source_version: None,
        }
    }

    /// Drops the open transaction (a reconnect resumes from the applied
    /// position, so it will come again whole).
    pub(crate) fn abort(&mut self) {
        self.rollback();
        self.gtid = None;
        self.ended();
    }

    /// Rolls back the open transaction, if any.
    fn rollback(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.slot.store(u64::MAX, Ordering::Release);
    }

    /// What a group leaves behind once it ended.
    fn ended(&mut self) {
        self.savepoints.clear();
        self.maps.clear();
        self.group = Some(Vec::new());
        self.group_bytes = 0;
        self.skipping = false;
        self.skip_txn = false;
    }

    /// Opens the applier's transaction (if not open), announced in its
    /// session slot first, interruptible by STOP SLAVE.
    fn begin(&mut self) {
        if self.txn.is_some() {
            return;
        }
        self.slot
            .store(self.inst.catalog.version(), Ordering::Release);
        let mut t = self.inst.txdb.begin(Isolation::ReadCommitted);
        t.set_tag(self.slot.load(Ordering::Acquire));
        t.set_interrupt(self.shared.kill.clone());
        // A lock wait ends as a session's does (1205, then retried).
        let secs = self
            .inst
            .global_var("innodb_lock_wait_timeout")
            .and_then(|v| v.to_i128())
            .unwrap_or(50)
            .clamp(0, 1 << 30);
        t.set_lock_wait_timeout(Duration::from_secs(secs as u64));
        self.txn = Some(t);
    }

    /// Applies one event as the source sent it (header, body, checksum).
    /// A transaction that fails with a retryable error is rolled back and
    /// applied again from its first event, up to slave_transaction_retries
    /// times.
    pub(crate) fn event(&mut self, raw: &[u8]) -> Result<(), Fault> {
        match self.apply(raw) {
            Ok(()) => {
                self.keep(raw);
                Ok(())
            }
            Err(f) => self.retry(raw, f),
        }
    }

    /// Keeps an event of the open transaction for a retry.
    fn keep(&mut self, raw: &[u8]) {
        if self.txn.is_none() {
            return;
        }
        if let Some(g) = self.group.as_mut() {
            self.group_bytes += raw.len();
            if self.group_bytes > GROUP_BUFFER_MAX {
                self.group = None;
            } else {
                g.push(raw.to_vec());
            }
        }
    }

    /// After `first` failed the open transaction at event `raw`: rolls it
    /// back, waits (for the ALTER TABLE to finish, or a moment), and
    /// applies its events again. Ok without having applied it when STOP
    /// SLAVE came meanwhile.
    fn retry(&mut self, raw: &[u8], first: Fault) -> Result<(), Fault> {
        let events = match (&first, self.txn.is_some(), self.group.take()) {
            (Fault::Sql(c, _), true, Some(mut g)) if retryable(*c) => {
                g.push(raw.to_vec());
                g
            }
            _ => return Err(first),
        };
        let mut last = first;
        for attempt in 1..=self.retries() {
            let Fault::Sql(code, _) = &last else {
                break;
            };
            let code = *code;
            let seen = self.inst.catalog.version();
            self.abort();
            if !self.wait_to_retry(code, seen, attempt) {
                return Ok(());
            }
            match self.replay(&events) {
                Ok(()) => return Ok(()),
                Err(f @ Fault::Sql(c, _)) if retryable(c) => last = f,
                Err(f) => return Err(f),
            }
        }
        Err(last)
    }

    fn replay(&mut self, events: &[Vec<u8>]) -> Result<(), Fault> {
        for e in events {
            self.apply(e)?;
            self.keep(e);
        }
        Ok(())
    }

    /// @@slave_transaction_retries (MariaDB's default 10).
    fn retries(&self) -> u32 {
        self.inst
            .global_var("slave_transaction_retries")
            .and_then(|v| v.to_i128())
            .unwrap_or(10)
            .clamp(0, 1_000_000) as u32
    }

    /// Waits before a retry: for a table being rebuilt, until the catalog
    /// changes (the ALTER TABLE ended; at most lock_wait_timeout); after a
    /// lock wait timeout or deadlock, a pause growing with the attempts.
    /// False when replication is stopping.
    fn wait_to_retry(&self, code: u16, seen: u64, attempt: u32) -> bool {
        let ddl = code == crate::error::ER_TABLE_DEF_CHANGED;
        let wait = if ddl {
            let secs = self
                .inst
                .global_var("lock_wait_timeout")
                .and_then(|v| v.to_i128())
                .unwrap_or(50)
                .clamp(1, 3600);
            Duration::from_secs(secs as u64)
        } else {
            Duration::from_millis(50 * attempt.min(20) as u64)
        };
        let until = Instant::now() + wait;
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                return false;
            }
            if (ddl && self.inst.catalog.version() != seen) || Instant::now() >= until {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Applies one event (no retry).
    fn apply(&mut self, raw: &[u8]) -> Result<(), Fault> {
        let corrupt = |e: binlog::Error| Fault::Io(ER_EVENT_CORRUPT, e.to_string());
        let h = parse::header(raw).map_err(corrupt)?;
        if h.kind == kind::FORMAT_DESCRIPTION {
            self.checksum = parse::fde_checksum_alg(raw).map_err(corrupt)? == 1;
        }
        let (h, b) = parse::split(raw, self.checksum).map_err(corrupt)?;
        let body = parse::body(&h, b).map_err(|e| match e {
            binlog::Error::Invalid(m) => Fault::Sql(crate::error::ER_NOT_SUPPORTED_YET, m),
            e => corrupt(e),
        })?;
        {
            let mut st = self.shared.status();
            if h.log_pos != 0 {
                st.read_pos = h.log_pos as u64;
                st.read_file = self.file.clone();
            }
            if h.server_id != 0 && h.kind != kind::ROTATE {
                st.master_server_id = h.server_id;
            }
        }
        // Our own changes coming back (a ring): skipped, as MariaDB does.
        let own = h.server_id == self.own_server_id && self.own_server_id != 0;
        // Groups not applied (ours, or skipped by sql_slave_skip_counter)
        // still move the position.
        let skip = own || self.skipping;
        match body {
            Body::Rotate { pos, file } => {
                self.file = file;
                let mut st = self.shared.status();
                st.read_file = self.file.clone();
                st.read_pos = pos;
                drop(st);
                // Not the rotation a dump starts with (log_pos 0): that one
                // names where reading starts.
                if h.log_pos != 0 {
                    self.between_groups(pos);
                }
            }
            Body::Heartbeat(_) => {
                if self.txn.is_none() {
                    self.shared.status().behind = Some(0);
                }
            }
            Body::Gtid { gtid, flags2 } => {
                self.abort();
                self.gtid = Some(gtid);
                self.skipping = self.shared.take_skip();
                let txn = flags2 & gtid_flag::STANDALONE == 0;
                if txn && (own || self.skipping) {
                    self.skip_txn = true;
                } else if txn {
                    self.begin();
                }
            }
            // The statements of a transaction not applied are not looked at.
            Body::Query(q) if self.skip_txn => {
                if matches!(query::classify(&q.query), Query::Commit | Query::Rollback) {
                    self.commit(h.log_pos, h.timestamp)?;
                }
            }
            Body::Query(q) => {
                let q = self.as_executed(q);
                match query::classify(&q.query) {
                    Query::Begin if skip => self.skip_txn = true,
                    Query::Begin => self.begin(),
                    Query::Commit => self.commit(h.log_pos, h.timestamp)?,
                    // A group the source rolled back (it logs one when a
                    // non-transactional change cannot be undone): nothing of
                    // it is applied, but its position and GTID are.
                    Query::Rollback => {
                        self.rollback();
                        self.commit(h.log_pos, h.timestamp)?;
                    }
                    Query::Savepoint(n) => self.savepoint(&q.query, Sp::Set(n))?,
                    Query::RollbackTo(n) => self.savepoint(&q.query, Sp::RollbackTo(n))?,
                    Query::Release(n) => self.savepoint(&q.query, Sp::Release(n))?,
                    Query::Nothing | Query::Run | Query::Refused(_) if skip => {
                        self.position_only(h.log_pos, h.timestamp, true)?
                    }
                    Query::Nothing => {
                        if self.txn.is_none() {
                            self.position_only(h.log_pos, h.timestamp, true)?;
                        }
                    }
                    // ROW-format CREATE TABLE ... SELECT: the table's
                    // definition first, then its rows.
                    Query::Run
                        if self.txn.is_some()
                            && self.maps.is_empty()
                            && query::creates_table(&q.query).is_some() =>
                    {
                        self.create_in_group(&q)?
                    }
                    Query::Run if self.txn.is_some() => return Err(refused(
                        &q,
                        "DDL inside a replicated transaction (it would end the transaction midway)",
                    )),
                    Query::Run => self.ddl(&q, h.log_pos, h.timestamp)?,
                    Query::Refused(why) => return Err(refused(&q, &why)),
                }
            }
            Body::TableMap(m) => {
                self.maps.insert(m.table_id, m);
            }
            Body::Rows(r) => {
                if !skip {
                    self.rows(&r, h.kind, h.log_pos)?;
                }
            }
            Body::Xid(_) => self.commit(h.log_pos, h.timestamp)?,
            Body::FormatDescription { server_version, .. } => {
                self.source_version = versioned::mariadb_version(&server_version);
                self.between_groups(h.log_pos as u64);
            }
            Body::GtidList(_) | Body::BinlogCheckpoint(_) => self.between_groups(h.log_pos as u64),
            Body::Annotate | Body::Skip => {}
        }
        Ok(())
    }

    /// An event outside any group (a rotation, the header events of the
    /// source's next file) moves the executed position past it, as
    /// MariaDB's SQL thread does (Exec_Master_Log_Pos reaches the source's
    /// position after a rotation with no transaction). In memory only: a
    /// restart reads such events again from the last group's position.
    /// `end` 0 (the events a dump starts with) moves nothing, and the
    /// position never moves back (reconnecting starts from it: a header
    /// event of the file a dump resumes in must not send it back to the
    /// file's start).
    fn between_groups(&mut self, end: u64) {
        if end == 0 || self.txn.is_some() || self.gtid.is_some() || self.skip_txn {
            return;
        }
        let mut p = self.shared.pos();
        let back = match self.file.cmp(&p.file) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => end <= p.pos,
            std::cmp::Ordering::Greater => false,
        };
        if !back {
            p.file = self.file.clone();
            p.pos = end;
        }
    }

    /// A QUERY event's text as a MariaDB source executed it: its
    /// executable comments opened or dropped by MariaDB's rules for the
    /// source's version (`versioned`). A source that is not MariaDB (or
    /// before its FORMAT_DESCRIPTION) leaves them to Strata's parser.
    fn as_executed(&self, mut q: parse::Query) -> parse::Query {
        let Some(v) = self.source_version else {
            return q;
        };
        let escapes = q
            .sql_mode
            .is_none_or(|m| m & SqlMode::NO_BACKSLASH_ESCAPES == 0);
        if let Some(text) = versioned::expand(&q.query_bytes, v, escapes) {
            q.query = String::from_utf8_lossy(&text).into_owned();
            q.query_bytes = text;
        }
        q
    }

    /// The position after an event ending at `end` of the current file,
    /// with the open transaction's GTID.
    fn next_position(&self, end: u32) -> Position {
        let mut p = self.shared.pos().clone();
        if end != 0 {
            p.file = self.file.clone();
            p.pos = end as u64;
        }
        if let Some(g) = self.gtid {
            p.gtids.insert(g.domain, g);
        }
        p
    }

    fn published(&mut self, p: Position, ts: u32, ddl: bool) {
        *self.shared.pos() = p;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut st = self.shared.status();
        st.behind = Some(now.saturating_sub(ts as u64));
        if ddl {
            st.ddl_groups += 1;
        } else {
            st.trx_groups += 1;
        }
        drop(st);
        self.gtid = None;
        self.ended();
    }

    /// A savepoint statement logged inside the open transaction, honoured
    /// on the applier's transaction (outside one it is refused).
    fn savepoint(&mut self, stmt: &str, sp: Sp) -> Result<(), Fault> {
        let Some(t) = self.txn.as_mut() else {
            return Err(Fault::Sql(
                crate::error::ER_NOT_SUPPORTED_YET,
                format!(
                    "This version of Strata doesn't yet support '{stmt}' outside a replicated \
                     transaction"
                ),
            ));
        };
        let pos = |sps: &[(String, Savepoint)], n: &str| {
            sps.iter()
                .rposition(|(s, _)| s.to_lowercase() == n.to_lowercase())
        };
        let unknown = |n: &str| Fault::Sql(1305, format!("SAVEPOINT {n} does not exist"));
        match sp {
            Sp::Set(n) => {
                if let Some(i) = pos(&self.savepoints, &n) {
                    self.savepoints.remove(i);
                }
                self.savepoints.push((n, t.savepoint()));
            }
            Sp::RollbackTo(n) => {
                let i = pos(&self.savepoints, &n).ok_or_else(|| unknown(&n))?;
                let ok = t
                    .rollback_to_savepoint(&self.savepoints[i].1)
                    .map_err(|e| sql_fault(e.into()))?;
                if !ok {
                    return Err(unknown(&n));
                }
                self.savepoints.truncate(i + 1);
            }
            Sp::Release(n) => {
                let i = pos(&self.savepoints, &n).ok_or_else(|| unknown(&n))?;
                self.savepoints.truncate(i);
            }
        }
        Ok(())
    }

    /// Commits the open transaction with the position after `end`.
    fn commit(&mut self, end: u32, ts: u32) -> Result<(), Fault> {
        let Some(t) = self.txn.take() else {
            // A group with nothing to apply (ours, or rolled back) still
            // moves the position.
            return self.position_only(end, ts, false);
        };
        self.commit_with_position(t, end, ts, false)
    }

    /// Records the position after `end` (and the group's GTID) alone.
    fn position_only(&mut self, end: u32, ts: u32, ddl: bool) -> Result<(), Fault> {
        let t = self.inst.txdb.begin(Isolation::ReadCommitted);
        self.commit_with_position(t, end, ts, ddl)
    }

    fn commit_with_position(
        &mut self,
        mut t: Txn,
        end: u32,
        ts: u32,
        ddl: bool,
    ) -> Result<(), Fault> {
        let p = self.next_position(end);
        t.put(self.cf, KEY_POS, &encode_position(&p));
        let r = t.commit();
        self.slot.store(u64::MAX, Ordering::Release);
        r.map_err(|e| sql_fault(e.into()))?;
        self.published(p, ts, ddl);
        Ok(())
    }

    /// Runs a DDL statement in the event's database with the event's
    /// sql_mode, foreign_key_checks and unique_checks. The position after
    /// it (with its GTID) goes into the batch of the catalog write that
    /// makes the statement visible (`rel::binlog::set_ddl_put`), so a crash
    /// cannot leave the DDL done and its position not (a rerun would stop
    /// with 1050); a statement that writes no catalog entry (IF NOT EXISTS
    /// finding the table, account statements) has its position written
    /// after it.
    fn ddl(&mut self, q: &parse::Query, end: u32, ts: u32) -> Result<(), Fault> {
        self.rollback();
        if let Some(m) = query::drop_missing(&q.query, &q.db, &self.inst.catalog.state()) {
            return Err(ddl_failed(q, SqlError::unknown_table(m)));
        }
        let mut s = self.ddl_session(q)?;
        let text = drop_first(&mut s, q, false)?;
        let mut sink = crate::result::Collect::default();
        let p = self.next_position(end);
        // A lock wait timeout (local transactions or a bulk load holding
        // the table) is retried as a transaction's is.
        let mut attempt = 0;
        let (r, carried) = loop {
            rel::binlog::set_ddl_put(Some(rel::binlog::DdlPut {
                cf: self.cf.0,
                key: KEY_POS.to_vec(),
                value: encode_position(&p),
            }));
            let r = s.query_bytes(&text, &mut sink);
            let carried = rel::binlog::take_ddl_put().is_none();
            match r {
                Err(e) if e.code == 1205 && !carried && attempt < self.retries() => {
                    attempt += 1;
                    if !self.wait_to_retry(1205, 0, attempt) {
                        break (Err(e), carried);
                    }
                }
                r => break (r, carried),
            }
        };
        if carried {
            // In the engine with the catalog change (even if the statement
            // then failed, e.g. DROP TABLE a, missing: what it did stays).
            self.published(p, ts, true);
        }
        r.map_err(|e| match ddl_failed(q, e) {
            // Failed after its first catalog write: that (and the position)
            // stays; say so, as START SLAVE continues after the event.
            Fault::Sql(c, m) if carried => Fault::Sql(
                c,
                format!("{m}; the statement failed after a change it made was committed with the event's position: the event counts as applied"),
            ),
            f => f,
        })?;
        #[cfg(test)]
        if tests::CRASH_AFTER_DDL.with(|c| c.get()) {
            return Err(Fault::Io(0, "crashed after the DDL (test)".into()));
        }
        if carried {
            return Ok(());
        }
        self.position_only(end, ts, true)
    }

    /// The CREATE TABLE MariaDB logs first in the group of a ROW-format
    /// CREATE [OR REPLACE] TABLE ... SELECT (the generated definition; the
    /// selected rows follow as WRITE_ROWS): runs as DDL, its position left
    /// to the group's end, where it commits with the rows. A table of that
    /// name is dropped first, as MariaDB's replica runs this CREATE as
    /// CREATE OR REPLACE: the group applied again after a crash before its
    /// commit (or retried) finds the table its first run made.
    fn create_in_group(&mut self, q: &parse::Query) -> Result<(), Fault> {
        // Nothing of the group is applied yet: the DDL must not wait for
        // the applier's own transaction.
        self.rollback();
        let mut s = self.ddl_session(q)?;
        let text = drop_first(&mut s, q, true)?;
        s.query_bytes(&text, &mut crate::result::Collect::default())
            .map_err(|e| ddl_failed(q, e))?;
        #[cfg(test)]
        if tests::CRASH_AFTER_DDL.with(|c| c.get()) {
            return Err(Fault::Io(0, "crashed after the DDL (test)".into()));
        }
        self.begin();
        Ok(())
    }

    /// A session for a DDL event: its database and `session_settings`.
    fn ddl_session(&self, q: &parse::Query) -> Result<crate::Session, Fault> {
        let db = (!q.db.is_empty()).then(|| q.db.clone());
        let mut s = self.inst.session(0, "", db);
        {
            let mut p = self.shared.ddl_proc();
            *p = Some(s.proc.clone());
            if self.shared.stop.load(Ordering::SeqCst) {
                s.proc.kill(false);
            }
        }
        let mut sink = crate::result::Collect::default();
        for set in session_settings(q) {
            s.query(&set, &mut sink).map_err(|e| ddl_failed(q, e))?;
        }
        Ok(s)
    }

    fn rows(&mut self, r: &parse::Rows<'_>, event_kind: u8, end: u32) -> Result<(), Fault> {
        let name = binlog::decode::type_name(event_kind);
        let map = self.maps.get(&r.table_id).cloned().ok_or_else(|| {
            Fault::Sql(
                ER_EVENT_CORRUPT,
                format!(
                    "{name} event for table id {} without a TABLE_MAP",
                    r.table_id
                ),
            )
        })?;
        let file = self.file.clone();
        let wrap = |e: SqlError| {
            Fault::Sql(
                e.code,
                format!(
                    "Could not execute {name} event on table {}.{}; {}, Error_code: {}; the event's master log {}, end_log_pos {end}",
                    map.db, map.table, e.msg, e.code, file
                ),
            )
        };
        let st = self.inst.catalog.state();
        let t = st
            .table(&map.db, &map.table)
            .cloned()
            .ok_or_else(|| wrap(SqlError::no_table(format!("{}.{}", map.db, map.table))))?;
        let map = with_local_fsp(&map, &t);
        let unpacked = |e: binlog::Error| match e {
            binlog::Error::Invalid(m) => wrap(SqlError::unsupported(m)),
            e => Fault::Io(ER_EVENT_CORRUPT, e.to_string()),
        };
        let changes = unpack::each(r, &map).map_err(unpacked)?;
        // NO_FOREIGN_KEY_CHECKS_F: the source ran with foreign_key_checks=0.
        let checks = r.flags & 2 == 0;
        let w = rel::fk::Writer::new(&st, checks);
        self.begin();
        let Some(txn) = self.txn.as_mut() else {
            return Err(Fault::Sql(
                1105,
                "the applier's transaction is not open".into(),
            ));
        };
        for change in changes {
            let (before, after) = change.map_err(unpacked)?;
            let conv = |img: &Option<Vec<Datum>>| -> Result<Option<Vec<Value>>, SqlError> {
                img.as_ref().map(|i| row_values(&t, &map, i)).transpose()
            };
            let (b, a) = (conv(&before).map_err(wrap)?, conv(&after).map_err(wrap)?);
            let res: Result<(), SqlError> = (|| {
                match (r.kind, b, a) {
                    (RowsKind::Write, _, Some(a)) => {
                        w.insert(txn, &t, &a)?;
                        note_auto_inc(&t, &a);
                    }
                    (RowsKind::Update, Some(b), Some(a)) => {
                        let old = find(txn, &t, &b)?;
                        w.update(txn, &t, &old, &a)?;
                        note_auto_inc(&t, &a);
                    }
                    (RowsKind::Delete, Some(b), _) => {
                        let old = find(txn, &t, &b)?;
                        w.delete(txn, &t, &old)?;
                    }
                    _ => return Err(SqlError::internal("rows event without its image")),
                }
                Ok(())
            })();
            res.map_err(wrap)?;
        }
        Ok(())
    }
}

/// `map` with the precision of `t`'s columns given to its old-format
/// TIMESTAMP/DATETIME/TIME columns (`MapCol::local_fsp`: their values are
/// read by it, as MariaDB's replica reads them) where `t`'s column is of
/// that type; the others are refused when a row holds them.
fn with_local_fsp(map: &TableMap, t: &rel::catalog::Table) -> TableMap {
    use rel::value::TypeKind;
    let mut map = map.clone();
    for (c, tc) in map.columns.iter_mut().zip(&t.def.columns) {
        let kind = match c.ty {
            7 => TypeKind::Timestamp,
            12 => TypeKind::DateTime,
            11 => TypeKind::Time,
            _ => continue,
        };
        if tc.ty.kind == kind {
            c.local_fsp = Some(tc.ty.scale);
        }
    }
    map
}

#[cfg(test)]
pub(super) mod tests {
    thread_local! {
        /// Makes the next DDL fail as if the server died right after the
        /// statement (before the applier's own position write).
        pub(in crate::replica) static CRASH_AFTER_DDL: std::cell::Cell<bool> =
            const { std::cell::Cell::new(false) };
    }
}
