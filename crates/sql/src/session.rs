//! A client session's state: current database, variables, the open
//! transaction and its lifecycle (autocommit, BEGIN, statement rollback),
//! the prepared-statement table, warnings. It runs no statements itself:
//! `dispatch` does (its entry points `query`, `prepare` and
//! `execute_prepared` are methods on `Session` defined there), and each
//! statement's home reads and changes the state through this type.
use crate::error::{Result, SqlError};
use crate::stmt_cache::Compiled;
use crate::Instance;
use rel::value::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use txn::{Isolation, Savepoint, Txn};

/// A prepared statement: its text and the shared compiled form.
pub struct Prepared {
    pub(crate) sql: Arc<str>,
    /// `sql` as the processlist and the slow log show it
    /// (`slowlog::redact_secrets`).
    pub(crate) shown: Arc<str>,
    pub params: usize,
    pub(crate) compiled: Arc<Compiled>,
}

/// One warning / note for SHOW WARNINGS.
#[derive(Debug, Clone)]
pub struct Warning {
    pub level: &'static str,
    pub code: u16,
    pub msg: String,
}

/// The TLS parameters of a session's connection, in OpenSSL's names (the
/// Ssl_cipher and Ssl_version status variables).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsInfo {
    pub cipher: String,
    pub version: String,
}

/// A session's state.
pub struct Session {
    pub inst: Arc<Instance>,
    pub conn_id: u64,
    pub user: String,
    /// The account the session logged in as (user, host pattern): its
    /// privileges are checked on every statement (`account::check`);
    /// `None` (embedded use, tests): every statement is allowed.
    pub account: Option<(String, String)>,
    /// `account` as last looked up in the catalog (`account::check`).
    pub(crate) account_memo: std::cell::RefCell<Option<crate::account::check::AccountMemo>>,
    /// The client's host, as access-denied messages name it.
    pub host: String,
    /// The connection's TLS, if it runs over TLS (set by the server).
    pub tls: Option<TlsInfo>,
    pub db: Option<String>,
    /// Variables set in this session (`set_var`; others read the globals).
    vars: HashMap<String, Value>,
    /// Bumped whenever `vars` changes (the memo's generation).
    vars_gen: u64,
    /// The hot variables as last read (`varmemo`).
    memo: std::cell::RefCell<crate::varmemo::VarMemo>,
    pub user_vars: HashMap<String, Value>,
    txn: Option<Txn>,
    /// BEGIN / START TRANSACTION or autocommit=0 with work pending.
    explicit: bool,
    pub last_insert_id: u64,
    pub row_count: i64,
    pub found_rows: u64,
    pub warnings: Vec<Warning>,
    pub(crate) stmts: HashMap<u32, Prepared>,
    pub(crate) next_stmt: u32,
    /// PREPARE's names (lower case) → statement ids in `stmts`.
    pub(crate) named_stmts: HashMap<String, u32>,
    /// `?` positions and values of the statement being run (for SET).
    pub(crate) stmt_params: (Vec<(u64, u64)>, Vec<Value>),
    /// Hot settings, refreshed whenever a session variable is set.
    autocommit: bool,
    iso: Isolation,
    lock_timeout: Duration,
    /// SET TRANSACTION without SESSION/GLOBAL: isolation and access mode of the next
    /// transaction only.
    pub(crate) next_txn: (Option<Isolation>, Option<bool>),
    /// The open transaction was started READ ONLY.
    txn_read_only: bool,
    /// SAVEPOINTs of the open transaction, oldest first (names compared
    /// case-insensitively; a name set again moves to the end).
    savepoints: Vec<(String, Savepoint)>,
    /// The catalog version this session's open transaction (or running
    /// statement) started under; `u64::MAX` when idle. DDL that changes
    /// how rows are written waits until every slot has caught up. It is
    /// stored before the transaction begins and kept until it ends; the
    /// transaction carries it as its tag (`Txn::tag`), and ALTER TABLE
    /// refuses writes to the table it replaces from transactions tagged
    /// with its version or later, and waits for the others.
    slot: Arc<AtomicU64>,
    /// The `strata_bulk_load` load in progress (`bulk`).
    pub(crate) bulk: Option<crate::bulk::SessionLoad>,
    /// This session's entry in the instance's registry (SHOW PROCESSLIST, KILL).
    pub proc: Arc<crate::procs::Proc>,
    /// This session's Com_* counters (`com::NAMES` order) and Questions.
    pub(crate) com: Vec<u64>,
    pub(crate) questions: u64,
    /// What this session's bulk loads did (`Strata_bulk_load_*`).
    pub(crate) bulk_counts: crate::bulk::Counts,
}

impl Session {
    /// A new session.
    pub fn new(inst: Arc<Instance>, conn_id: u64, user: &str, db: Option<String>) -> Session {
        let slot_owner = inst.clone();
        let mut s = Session {
            inst,
            conn_id,
            user: user.to_string(),
            account: None,
            account_memo: Default::default(),
            host: "localhost".to_string(),
            tls: None,
            db,
            vars: HashMap::new(),
            vars_gen: 0,
            memo: Default::default(),
            user_vars: HashMap::new(),
            txn: None,
            explicit: false,
            last_insert_id: 0,
            row_count: -1,
            found_rows: 0,
            warnings: Vec::new(),
            stmts: HashMap::new(),
            next_stmt: 1,
            named_stmts: HashMap::new(),
            stmt_params: (Vec::new(), Vec::new()),
            autocommit: true,
            iso: Isolation::RepeatableRead,
            lock_timeout: Duration::from_secs(50),
            next_txn: (None, None),
            txn_read_only: false,
            savepoints: Vec::new(),
            slot: slot_owner.register_session_slot(),
            bulk: None,
            proc: slot_owner.procs.register(conn_id, user, None),
            com: vec![0; crate::com::NAMES.len()],
            questions: 0,
            bulk_counts: Default::default(),
        };
        s.proc.set_db(s.db.clone());
        s.refresh();
        s
    }

    /// Sets a session variable (already validated).
    pub fn set_var(&mut self, name: String, v: Value) {
        self.vars.insert(name, v);
        self.vars_gen += 1;
        self.refresh();
    }

    /// A variable's value set in this session (None: it reads the global).
    pub fn session_var(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }

    /// The generations a memoized variable was read under.
    fn var_generation(&self) -> (u64, u64) {
        (self.inst.globals_generation(), self.vars_gen)
    }

    /// A variable's session-then-global value as seconds, `parse`d once per
    /// change of the variables when it is a memoized one.
    pub(crate) fn var_secs(&self, name: &str, parse: impl Fn(Option<Value>) -> f64) -> f64 {
        let generation = self.var_generation();
        if let Ok(mut m) = self.memo.try_borrow_mut() {
            if let Some(v) = m.secs(generation, name, || parse(self.read_var(name, false))) {
                return v;
            }
        }
        parse(self.get_var(name, false))
    }

    /// The session's sql_mode, parsed.
    pub fn sql_mode(&self) -> crate::sqlmode::SqlMode {
        let generation = self.var_generation();
        let read = || self.get_var("sql_mode", false);
        match self.memo.try_borrow_mut() {
            Ok(mut m) => m.sql_mode(generation, read),
            Err(_) => crate::sqlmode::SqlMode::of(read().as_ref()),
        }
    }

    fn refresh(&mut self) {
        self.autocommit = self.var_int("autocommit") != 0;
        self.iso = match self.get_var("transaction_isolation", false) {
            // READ UNCOMMITTED runs as READ COMMITTED (dirty reads are allowed, not
            // promised); SET warns about it.
            Some(Value::Bytes(b))
                if b.eq_ignore_ascii_case(b"READ-COMMITTED")
                    || b.eq_ignore_ascii_case(b"READ-UNCOMMITTED") =>
            {
                Isolation::ReadCommitted
            }
            _ => Isolation::RepeatableRead,
        };
        let secs = self.var_int("innodb_lock_wait_timeout").clamp(0, 1 << 30);
        self.lock_timeout = Duration::from_secs(secs as u64);
    }

    /// foreign_key_checks: whether row writes and DDL enforce foreign keys.
    /// The row writer of a statement: foreign keys checked unless
    /// foreign_key_checks is off; both it and unique_checks reach the
    /// binary log's rows event flags.
    pub(crate) fn writer<'a>(&self, st: &'a rel::catalog::CatalogState) -> rel::fk::Writer<'a> {
        rel::fk::Writer::new(st, self.fk_checks()).unique_checks(self.var_int("unique_checks") != 0)
    }

    pub fn fk_checks(&self) -> bool {
        self.get_var("foreign_key_checks", false)
            .and_then(|v| v.to_i128())
            .is_none_or(|v| v != 0)
    }

    /// A variable's value (session first unless `global`).
    pub fn get_var(&self, name: &str, global: bool) -> Option<Value> {
        // The hot ones are asked for by their canonical names.
        let generation = self.var_generation();
        if let Ok(mut m) = self.memo.try_borrow_mut() {
            let read = || self.read_var(name, global);
            if let Some(v) = m.get(generation, name, global, read) {
                return v;
            }
        }
        self.read_var(name, global)
    }

    /// `f` of a variable's session-then-global value, without copying a
    /// memoized one (a statement's character_set_results, say).
    pub fn with_var<R>(&self, name: &str, f: impl FnOnce(Option<&Value>) -> R) -> R {
        let generation = self.var_generation();
        if let Ok(mut m) = self.memo.try_borrow_mut() {
            if let Some(v) = m.peek(generation, name, false, || self.read_var(name, false)) {
                return f(v);
            }
        }
        f(self.read_var(name, false).as_ref())
    }

    /// A variable's value, read from the session's and the global map.
    fn read_var(&self, name: &str, global: bool) -> Option<Value> {
        let n = crate::vars::canonical(name);
        if n == "warning_count" {
            return Some(Value::Int(self.warnings.len() as i64));
        }
        if n == "gtid_binlog_pos" || n == "gtid_current_pos" {
            return Some(crate::binlogsql::gtid_pos(self));
        }
        if n == "gtid_slave_pos" {
            return Some(crate::result::text(self.inst.replica.gtid_slave_pos()));
        }
        if n == "last_insert_id" || n == "identity" {
            return Some(Value::UInt(self.last_insert_id));
        }
        if !global && (n == "character_set_database" || n == "collation_database") {
            // The current database's default (MySQL: follows USE).
            let st = self.inst.catalog.state();
            if let Some(c) = self.db.as_ref().and_then(|d| st.databases.get(d)) {
                // Unknown: the database's record could not be read.
                let Ok(c) = c else {
                    return Some(Value::Null);
                };
                let v = if n == "collation_database" {
                    c.name()
                } else {
                    c.charset()
                };
                return Some(Value::Bytes(v.as_bytes().to_vec()));
            }
        }
        if !global {
            if let Some(v) = self.vars.get(&n) {
                return Some(v.clone());
            }
        }
        self.inst.global_var(&n)
    }

    pub(crate) fn var_int(&self, name: &str) -> i64 {
        self.get_var(name, false)
            .and_then(|v| v.to_i128())
            .unwrap_or(0) as i64
    }

    /// True inside BEGIN / START TRANSACTION (or autocommit=0 with work pending).
    pub(crate) fn explicit(&self) -> bool {
        self.explicit
    }

    /// True when autocommit is on.
    pub fn autocommit(&self) -> bool {
        self.autocommit
    }

    /// True while a transaction is open (SERVER_STATUS_IN_TRANS).
    pub fn in_transaction(&self) -> bool {
        self.explicit || self.txn.as_ref().is_some_and(|t| !t.is_read_only())
    }

    fn begin(&mut self) -> Txn {
        let (iso, ro) = std::mem::take(&mut self.next_txn);
        self.txn_read_only = ro.unwrap_or(self.var_int("transaction_read_only") != 0);
        self.begin_with(iso.unwrap_or(self.iso))
    }

    /// Refuses a write in a READ ONLY transaction (1792) or, for everyone but root,
    /// while the server is read_only (1290).
    pub fn check_write(&self) -> Result<()> {
        let ro = if self.txn.is_some() || self.explicit {
            self.txn_read_only
        } else {
            self.next_txn
                .1
                .unwrap_or(self.var_int("transaction_read_only") != 0)
        };
        if ro {
            return Err(SqlError::read_only_transaction());
        }
        let global_ro = self
            .get_var("read_only", true)
            .and_then(|v| v.to_i128())
            .unwrap_or(0)
            != 0;
        if global_ro && self.user != "root" {
            return Err(SqlError::read_only_server());
        }
        Ok(())
    }

    fn begin_with(&self, iso: Isolation) -> Txn {
        let mut t = self.inst.txdb.begin(iso);
        t.set_lock_wait_timeout(self.lock_timeout);
        t.set_interrupt(self.proc.killed.clone());
        // The version announced for this transaction (see `slot`): ALTER
        // TABLE refuses its writes to a table frozen at or before it.
        self.announce();
        t.set_tag(self.slot.load(Ordering::Acquire));
        crate::binlogsql::begin(self, &mut t);
        t
    }

    /// Commits the open transaction, if any.
    pub fn commit(&mut self) -> Result<()> {
        self.explicit = false;
        self.savepoints.clear();
        let r = match self.txn.take() {
            Some(t) => t.commit(),
            None => Ok(()),
        };
        crate::replsrc::committed(self);
        self.slot.store(u64::MAX, Ordering::Release);
        r.map_err(Into::into)
    }

    /// Marks the start of a statement for DDL waiting (see `slot`).
    pub(crate) fn announce(&self) {
        if self.slot.load(Ordering::Acquire) == u64::MAX {
            self.slot
                .store(self.inst.catalog.version(), Ordering::Release);
        }
    }

    /// While a statement waits for an ALTER TABLE to finish (its write was
    /// refused and rolled back): stops announcing a catalog version if no
    /// transaction stays open, so the ALTER does not wait for the statement
    /// waiting for it. Returns whether it did; `announce` takes the current
    /// version again. (An open transaction keeps the version it was tagged
    /// with until it ends.)
    pub(crate) fn pause_for_ddl(&self) -> bool {
        let idle = self.txn.is_none();
        if idle {
            self.slot.store(u64::MAX, Ordering::Release);
        }
        idle
    }

    /// Marks the end of a statement: idle unless a transaction is open.
    pub(crate) fn statement_done(&self) {
        if self.txn.is_none() && !self.explicit {
            self.slot.store(u64::MAX, Ordering::Release);
        }
    }

    /// Ends the open `strata_bulk_load` load, if any (its rows are
    /// ingested): the server calls it before the session is replaced
    /// (COM_RESET_CONNECTION, COM_CHANGE_USER), so that a failure reaches
    /// the client as that command's error.
    pub fn end_bulk_load(&mut self) -> Result<()> {
        crate::bulk::end_session_load(self, false)
    }

    /// Rolls back the open transaction, if any.
    pub fn rollback(&mut self) {
        self.explicit = false;
        self.savepoints.clear();
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.slot.store(u64::MAX, Ordering::Release);
    }

    /// The connection's collation (`collation_connection`): string literals
    /// and parameters take it.
    pub fn conn_collation(&self) -> rel::collation::Collation {
        self.get_var("collation_connection", false)
            .and_then(|v| rel::collation::Collation::from_name(&String::from_utf8_lossy(&v.text())))
            .unwrap_or(rel::collation::Collation::DEFAULT)
    }

    /// The character set the client's statement bytes are in
    /// (`character_set_client`, set by the handshake and SET NAMES).
    pub fn client_charset(&self) -> crate::text::ClientCharset {
        match self.get_var("character_set_client", false) {
            Some(Value::Bytes(b)) => {
                crate::text::ClientCharset::from_name(&String::from_utf8_lossy(&b))
            }
            _ => crate::text::ClientCharset::Utf8,
        }
    }

    /// The transaction a row statement runs in: the open one, or a new one
    /// (a lone autocommit statement gets READ COMMITTED: it needs only a
    /// statement-level view, and point reads then need no snapshot).
    pub(crate) fn statement_txn(&mut self) -> Txn {
        let mut txn = match self.txn.take() {
            Some(t) => t,
            None if self.autocommit && !self.explicit => {
                self.next_txn = (None, None);
                self.begin_with(Isolation::ReadCommitted)
            }
            None => self.begin(),
        };
        txn.begin_statement();
        // innodb_lock_wait_timeout applies from the next statement, also inside an
        // open transaction (InnoDB reads it at each wait).
        txn.set_lock_wait_timeout(self.lock_timeout);
        txn
    }

    /// The session's lock wait timeout (innodb_lock_wait_timeout).
    pub(crate) fn lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    /// Ends a row statement run in `txn` (from `statement_txn`): a lone
    /// autocommit statement commits or rolls back; inside a transaction a
    /// failed statement is undone alone, except errors that end the whole
    /// transaction (deadlock).
    pub(crate) fn end_statement(&mut self, mut txn: Txn, error: Option<&SqlError>) -> Result<()> {
        let lone = self.autocommit && !self.explicit;
        match error {
            None if lone => {
                txn.commit()?;
                crate::replsrc::committed(self);
            }
            None => self.txn = Some(txn),
            Some(e) if e.rolls_back_transaction() => {
                txn.rollback();
                self.explicit = false;
                self.savepoints.clear();
            }
            Some(_) if lone => txn.rollback(),
            Some(_) => {
                txn.rollback_statement()?;
                self.txn = Some(txn);
            }
        }
        Ok(())
    }

    /// Starts a transaction (BEGIN / START TRANSACTION).
    pub fn start_transaction(
        &mut self,
        snapshot_now: bool,
        iso: Option<Isolation>,
        read_only: Option<bool>,
    ) -> Result<()> {
        self.commit()?;
        let (next_iso, next_ro) = std::mem::take(&mut self.next_txn);
        self.txn_read_only = read_only
            .or(next_ro)
            .unwrap_or(self.var_int("transaction_read_only") != 0);
        let mut t = self.begin_with(iso.or(next_iso).unwrap_or(self.iso));
        if snapshot_now {
            t.take_snapshot();
        }
        self.txn = Some(t);
        self.explicit = true;
        Ok(())
    }

    /// The isolation level and access mode COMMIT/ROLLBACK AND CHAIN give the
    /// next transaction: the open one's, else the session's.
    pub(crate) fn chain_modes(&self) -> (Isolation, bool) {
        match &self.txn {
            Some(t) => (t.isolation(), self.txn_read_only),
            None if self.explicit => (self.iso, self.txn_read_only),
            None => (self.iso, self.var_int("transaction_read_only") != 0),
        }
    }

    /// SAVEPOINT name: marks the open transaction's write position (with
    /// autocommit and no transaction open, nothing to mark: MySQL accepts it
    /// and forgets it at once). A savepoint of the same name is replaced.
    pub(crate) fn set_savepoint(&mut self, name: &str) {
        if self.txn.is_none() {
            if self.autocommit && !self.explicit {
                return;
            }
            let t = self.begin();
            self.txn = Some(t);
        }
        let Some(t) = &self.txn else { return };
        let sp = t.savepoint();
        self.savepoints.retain(|(n, _)| !same_name(n, name));
        self.savepoints.push((name.to_string(), sp));
    }

    fn savepoint_index(&self, name: &str) -> Result<usize> {
        self.savepoints
            .iter()
            .position(|(n, _)| same_name(n, name))
            .ok_or_else(|| SqlError::unknown_savepoint(name))
    }

    /// ROLLBACK TO SAVEPOINT name: undoes the writes made after it and forgets
    /// the savepoints set after it. Row locks taken since stay held, as InnoDB
    /// keeps them.
    pub(crate) fn rollback_to_savepoint(&mut self, name: &str) -> Result<()> {
        let i = self.savepoint_index(name)?;
        let sp = self.savepoints[i].1;
        let ok = match self.txn.as_mut() {
            Some(t) => t.rollback_to_savepoint(&sp)?,
            None => false,
        };
        if !ok {
            // Invalidated underneath (a commit in the middle of a huge statement).
            self.savepoints.truncate(i);
            return Err(SqlError::unknown_savepoint(name));
        }
        self.savepoints.truncate(i + 1);
        Ok(())
    }

    /// RELEASE SAVEPOINT name: forgets it and every savepoint set after it.
    pub(crate) fn release_savepoint(&mut self, name: &str) -> Result<()> {
        let i = self.savepoint_index(name)?;
        self.savepoints.truncate(i);
        Ok(())
    }

    /// Marks that autocommit=0 keeps later statements in one transaction.
    pub fn set_autocommit(&mut self, on: bool) -> Result<()> {
        if on {
            self.commit()?;
        }
        self.set_var("autocommit".into(), Value::Int(on as i64));
        Ok(())
    }

    /// Adds a warning (level "Warning" or "Note") for SHOW WARNINGS.
    pub fn warn(&mut self, level: &'static str, e: SqlError) {
        // sql_notes=0: notes are not recorded (mariadb-dump sets it).
        if level == "Note" && self.var_int("sql_notes") == 0 {
            return;
        }
        self.warnings.push(Warning {
            level,
            code: e.code,
            msg: e.msg,
        });
    }

    /// Ends the session: rolls back.
    pub fn close(&mut self) {
        self.rollback();
    }
}

/// Savepoint names compare case-insensitively.
fn same_name(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

impl Drop for Session {
    /// A session's prepared statements end with it (max_prepared_stmt_count).
    fn drop(&mut self) {
        // A bulk load still open ends with the session (MyRocks' too).
        if let Err(e) = crate::bulk::end_session_load(self, false) {
            eprintln!(
                "strata: bulk load of connection {} failed at its end: {}",
                self.conn_id, e.msg
            );
        }
        self.inst.procs.unregister(&self.proc);
        let n = self.stmts.len() as u64;
        if n > 0 {
            self.inst.prepared.fetch_sub(n, Ordering::AcqRel);
        }
    }
}
