//! A client session: current database, variables, the open transaction,
//! prepared statements with cached plans, warnings. `execute` runs one
//! statement: transaction control, DDL (with an implicit commit), and
//! reads and writes inside the session's transaction (autocommit wraps a
//! single statement in its own). A failed statement is rolled back alone;
//! a deadlock rolls back the whole transaction, as MySQL does.
use crate::dml::{self, InsertPlan, ModifyPlan};
pub use crate::env::StmtEnv;
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::parse::{self, Parsed, Stmt};
use crate::result::{ColumnInfo, Outcome, ResultSink};
use crate::select::{self, SelectPlan};
use crate::stmt_cache::Compiled;
use crate::Instance;
use rel::value::Value;
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use txn::{Isolation, Txn};

/// A plan that can be cached with a prepared statement.
#[derive(Debug, Clone)]
pub enum Plan {
    Select(Box<SelectPlan>),
    Insert(Box<InsertPlan>),
    Modify(Box<ModifyPlan>),
}

/// A prepared statement: its text and the shared compiled form.
pub struct Prepared {
    sql: String,
    pub params: usize,
    compiled: Arc<Compiled>,
}

/// One warning / note for SHOW WARNINGS.
#[derive(Debug, Clone)]
pub struct Warning {
    pub level: &'static str,
    pub code: u16,
    pub msg: String,
}

/// A session's state.
pub struct Session {
    pub inst: Arc<Instance>,
    pub conn_id: u64,
    pub user: String,
    pub db: Option<String>,
    pub vars: HashMap<String, Value>,
    pub user_vars: HashMap<String, Value>,
    txn: Option<Txn>,
    /// BEGIN / START TRANSACTION or autocommit=0 with work pending.
    explicit: bool,
    pub last_insert_id: u64,
    pub row_count: i64,
    pub found_rows: u64,
    pub warnings: Vec<Warning>,
    stmts: HashMap<u32, Prepared>,
    next_stmt: u32,
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
    /// The catalog version this session's open transaction (or running
    /// statement) started under; `u64::MAX` when idle. DDL that changes
    /// how rows are written waits until every slot has caught up.
    slot: Arc<AtomicU64>,
}

impl Session {
    /// A new session.
    pub fn new(inst: Arc<Instance>, conn_id: u64, user: &str, db: Option<String>) -> Session {
        let slot_owner = inst.clone();
        let mut s = Session {
            inst,
            conn_id,
            user: user.to_string(),
            db,
            vars: HashMap::new(),
            user_vars: HashMap::new(),
            txn: None,
            explicit: false,
            last_insert_id: 0,
            row_count: -1,
            found_rows: 0,
            warnings: Vec::new(),
            stmts: HashMap::new(),
            next_stmt: 1,
            stmt_params: (Vec::new(), Vec::new()),
            autocommit: true,
            iso: Isolation::RepeatableRead,
            lock_timeout: Duration::from_secs(50),
            next_txn: (None, None),
            txn_read_only: false,
            slot: slot_owner.register_session_slot(),
        };
        s.refresh();
        s
    }

    /// Sets a session variable (already validated).
    pub fn set_var(&mut self, name: String, v: Value) {
        self.vars.insert(name, v);
        self.refresh();
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

    /// A variable's value (session first unless `global`).
    pub fn get_var(&self, name: &str, global: bool) -> Option<Value> {
        let n = crate::vars::canonical(name);
        if n == "warning_count" {
            return Some(Value::Int(self.warnings.len() as i64));
        }
        if n == "last_insert_id" || n == "identity" {
            return Some(Value::UInt(self.last_insert_id));
        }
        if !global {
            if let Some(v) = self.vars.get(&n) {
                return Some(v.clone());
            }
        }
        self.inst.global_var(&n)
    }

    fn var_int(&self, name: &str) -> i64 {
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
            return Err(SqlError::new(
                1792,
                "25006",
                "Cannot execute statement in a READ ONLY transaction.",
            ));
        }
        let global_ro = self
            .inst
            .global_var("read_only")
            .and_then(|v| v.to_i128())
            .unwrap_or(0)
            != 0;
        if global_ro && self.user != "root" {
            return Err(SqlError::new(
                1290,
                "HY000",
                "The MySQL server is running with the --read-only option so it cannot execute this statement",
            ));
        }
        Ok(())
    }

    fn begin_with(&self, iso: Isolation) -> Txn {
        let mut t = self.inst.txdb.begin(iso);
        t.set_lock_wait_timeout(self.lock_timeout);
        t
    }

    /// Commits the open transaction, if any.
    pub fn commit(&mut self) -> Result<()> {
        self.explicit = false;
        let r = match self.txn.take() {
            Some(t) => t.commit(),
            None => Ok(()),
        };
        self.slot.store(u64::MAX, Ordering::Release);
        r.map_err(Into::into)
    }

    /// Marks the start of a statement for DDL waiting (see `slot`).
    fn announce(&self) {
        if self.slot.load(Ordering::Acquire) == u64::MAX {
            self.slot
                .store(self.inst.catalog.version(), Ordering::Release);
        }
    }

    /// Marks the end of a statement: idle unless a transaction is open.
    fn statement_done(&self) {
        if self.txn.is_none() && !self.explicit {
            self.slot.store(u64::MAX, Ordering::Release);
        }
    }

    /// Rolls back the open transaction, if any.
    pub fn rollback(&mut self) {
        self.explicit = false;
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.slot.store(u64::MAX, Ordering::Release);
    }

    /// Parses and runs one text-protocol statement.
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

    /// Runs a statement given as the bytes the client sent, read in the
    /// connection's character set (string literals keep their exact bytes).
    pub fn query_bytes(&mut self, sql: &[u8], sink: &mut dyn ResultSink) -> Result<Outcome> {
        let text = crate::text::decode(sql, self.client_charset())?;
        self.query(&text, sink)
    }

    /// Prepares a statement given as the bytes the client sent.
    pub fn prepare_bytes(&mut self, sql: &[u8]) -> Result<(u32, usize, Vec<ColumnInfo>)> {
        let text = crate::text::decode(sql, self.client_charset())?;
        self.prepare(&text)
    }

    pub fn query(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<Outcome> {
        self.inst.count_question();
        let parsed = parse::parse(sql)?;
        if !matches!(parsed.stmt, Stmt::ShowWarnings | Stmt::ShowErrors) {
            self.warnings.clear();
        }
        self.announce();
        let r = self.run(&parsed, &[], None, sink);
        self.statement_done();
        r
    }

    /// Prepares a statement; returns (id, parameter count, result columns).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, usize, Vec<ColumnInfo>)> {
        let max = self
            .inst
            .global_var("max_prepared_stmt_count")
            .and_then(|v| v.to_i128())
            .unwrap_or(16382)
            .max(0) as u64;
        // Reserve a place first: many sessions preparing at once cannot pass the limit.
        if self.inst.prepared.fetch_add(1, Ordering::AcqRel) >= max {
            self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
            return Err(SqlError::new(
                1461,
                "42000",
                format!(
                    "Can't create more than max_prepared_stmt_count statements (current value: {max})"
                ),
            ));
        }
        let compiled = match self.compile(sql) {
            Ok(c) => c,
            Err(e) => {
                self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
                return Err(e);
            }
        };
        let params = compiled.parsed.params.len();
        let columns = compiled.columns.clone();
        let id = self.next_stmt;
        self.next_stmt = self.next_stmt.wrapping_add(1).max(1);
        let old = self.stmts.insert(
            id,
            Prepared {
                sql: sql.to_string(),
                params,
                compiled,
            },
        );
        if old.is_some() {
            self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
        }
        Ok((id, params, columns))
    }

    /// The compiled form of `sql` in the current database at the current
    /// catalog version: from the instance's cache, or parsed and planned now
    /// (which reports errors and result columns at prepare time).
    fn compile(&self, sql: &str) -> Result<Arc<Compiled>> {
        let version = self.inst.catalog.version();
        if let Some(c) = self.inst.stmt_cache.get(sql, &self.db, version) {
            return Ok(c);
        }
        let parsed = parse::parse(sql)?;
        let plan = self.plan(&parsed)?;
        let columns = match &plan {
            Some(Plan::Select(s)) => s.columns.clone(),
            _ => vec![],
        };
        Ok(self.inst.stmt_cache.put(
            sql,
            Compiled {
                parsed,
                columns,
                plan,
                version,
                db: self.db.clone(),
            },
        ))
    }

    /// Runs a prepared statement with bound parameters.
    pub fn execute_prepared(
        &mut self,
        id: u32,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        self.inst.count_question();
        self.warnings.clear();
        self.announce();
        let r = self.execute_prepared_inner(id, params, sink);
        self.statement_done();
        r
    }

    fn execute_prepared_inner(
        &mut self,
        id: u32,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        let mut p = self.stmts.remove(&id).ok_or_else(|| {
            SqlError::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            )
        })?;
        if params.len() != p.params {
            self.stmts.insert(id, p);
            return Err(SqlError::new(
                1210,
                "HY000",
                "Incorrect arguments to mysqld_stmt_execute",
            ));
        }
        let version = self.inst.catalog.version();
        if !p.compiled.current(version, &self.db) {
            match self.compile(&p.sql) {
                Ok(c) => p.compiled = c,
                Err(e) => {
                    self.stmts.insert(id, p);
                    return Err(e);
                }
            }
        }
        let c = p.compiled.clone();
        self.stmts.insert(id, p);
        self.run(&c.parsed, params, c.plan.as_ref(), sink)
    }

    /// Forgets a prepared statement.
    pub fn close_prepared(&mut self, id: u32) {
        if self.stmts.remove(&id).is_some() {
            self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Parameter count of a prepared statement.
    pub fn prepared_params(&self, id: u32) -> Option<usize> {
        self.stmts.get(&id).map(|p| p.params)
    }

    fn plan(&self, parsed: &Parsed) -> Result<Option<Plan>> {
        let Stmt::Ast(stmt) = &parsed.stmt else {
            return Ok(None);
        };
        let st = self.inst.catalog.state();
        let db = self.db.as_deref();
        Ok(match &**stmt {
            ast::Statement::Query(q) => Some(Plan::Select(Box::new(select::plan(
                q,
                &st,
                db,
                &parsed.params,
            )?))),
            ast::Statement::Insert(i) => Some(Plan::Insert(Box::new(dml::plan_insert(
                i,
                &st,
                db,
                &parsed.params,
            )?))),
            ast::Statement::Update(u) => Some(Plan::Modify(Box::new(dml::plan_update(
                u,
                &st,
                db,
                &parsed.params,
            )?))),
            ast::Statement::Delete(d) => Some(Plan::Modify(Box::new(dml::plan_delete(
                d,
                &st,
                db,
                &parsed.params,
            )?))),
            _ => None,
        })
    }

    fn run(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        cached: Option<&Plan>,
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        if let Some(p) = cached {
            return self.run_plan(p, params, sink);
        }
        match self.plan(parsed)? {
            Some(p) => self.run_plan(&p, params, sink),
            None => crate::admin::run(self, parsed, params, sink),
        }
    }

    /// Runs a statement that reads or writes rows inside the session's
    /// transaction.
    fn run_plan(
        &mut self,
        plan: &Plan,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        let autocommit = self.autocommit();
        if !matches!(plan, Plan::Select(_)) {
            self.check_write()?;
        }
        let mut txn = match self.txn.take() {
            Some(t) => t,
            // A lone autocommit statement needs only a statement-level
            // view: READ COMMITTED gives it without a snapshot for point reads.
            None if autocommit && !self.explicit => {
                self.next_txn = (None, None);
                self.begin_with(Isolation::ReadCommitted)
            }
            None => self.begin(),
        };
        txn.begin_statement();
        // innodb_lock_wait_timeout applies from the next statement, also inside an
        // open transaction (InnoDB reads it at each wait).
        txn.set_lock_wait_timeout(self.lock_timeout);
        let (result, warnings) = {
            let mut env = StmtEnv::new(self, params);
            let mut nowait = false;
            if let Plan::Select(p) = plan {
                let ms = self.var_int("max_execution_time");
                if ms > 0 {
                    env.deadline =
                        Some(std::time::Instant::now() + Duration::from_millis(ms as u64));
                }
                if p.lock.is_some() && p.nonblock.is_some() {
                    // NOWAIT / SKIP LOCKED: never wait for a row lock.
                    nowait = true;
                    env.skip_locked = p.nonblock == Some(ast::NonBlock::SkipLocked);
                    txn.set_lock_wait_timeout(Duration::ZERO);
                }
            }
            let mut r = exec_plan(plan, &mut txn, &env, sink);
            if nowait {
                txn.set_lock_wait_timeout(self.lock_timeout);
                if let Err(e) = &mut r {
                    if e.code == 1205 {
                        *e = SqlError::new(
                            3572,
                            "HY000",
                            "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.",
                        );
                    }
                }
            }
            (r, (env.warnings.into_inner(), env.assign.into_inner()))
        };
        let (warnings, assign) = warnings;
        for (code, msg) in warnings {
            self.warn("Warning", code, msg);
        }
        if result.is_ok() {
            for (k, v) in assign {
                self.user_vars.insert(k, v);
            }
        }
        match result {
            Ok((mut out, row_count, found)) => {
                for (code, msg) in std::mem::take(&mut out.0.warnings) {
                    self.warn("Warning", code, msg);
                }
                if let Some(id) = out.1 {
                    self.last_insert_id = id;
                }
                self.row_count = row_count;
                self.found_rows = found;
                if autocommit && !self.explicit {
                    txn.commit()?;
                } else {
                    self.txn = Some(txn);
                }
                Ok(out.0)
            }
            Err(e) => {
                if e.rolls_back_transaction() {
                    txn.rollback();
                    self.explicit = false;
                } else if autocommit && !self.explicit {
                    txn.rollback();
                } else {
                    txn.rollback_statement()?;
                    self.txn = Some(txn);
                }
                Err(e)
            }
        }
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

    /// Marks that autocommit=0 keeps later statements in one transaction.
    pub fn set_autocommit(&mut self, on: bool) -> Result<()> {
        if on {
            self.commit()?;
        }
        self.set_var("autocommit".into(), Value::Int(on as i64));
        Ok(())
    }

    /// Adds a warning.
    pub fn warn(&mut self, level: &'static str, code: u16, msg: impl Into<String>) {
        self.warnings.push(Warning {
            level,
            code,
            msg: msg.into(),
        });
    }

    /// Ends the session: rolls back.
    pub fn close(&mut self) {
        self.rollback();
    }
}

impl Drop for Session {
    /// A session's prepared statements end with it (max_prepared_stmt_count).
    fn drop(&mut self) {
        let n = self.stmts.len() as u64;
        if n > 0 {
            self.inst.prepared.fetch_sub(n, Ordering::AcqRel);
        }
    }
}

type Exec = ((Outcome, Option<u64>), i64, u64);

/// SELECT ... INTO @vars: the single row goes to user variables (assigned by the
/// session after the statement), no result set.
fn select_into(p: &SelectPlan, vars: &[String], txn: &mut Txn, env: &StmtEnv) -> Result<Exec> {
    let mut c = crate::result::Collect::default();
    let (n, _) = select::execute_counted(p, txn, env, &mut c, Some(2))?;
    if n > 1 {
        return Err(SqlError::new(
            1172,
            "42000",
            "Result consisted of more than one row",
        ));
    }
    match c.rows.pop() {
        None => env.warn(
            1329,
            "No data - zero rows fetched, selected, or processed".into(),
        ),
        Some(row) => {
            let mut a = env.assign.borrow_mut();
            for (v, x) in vars.iter().zip(row) {
                a.push((v.clone(), x));
            }
        }
    }
    Ok(((Outcome::affected(n.min(1)), None), n as i64, n))
}

fn exec_plan(plan: &Plan, txn: &mut Txn, env: &StmtEnv, sink: &mut dyn ResultSink) -> Result<Exec> {
    match plan {
        Plan::Select(p) => {
            let default_limit = env
                .sys_var("sql_select_limit", false)
                .and_then(|v| v.to_i128())
                .filter(|l| *l >= 0 && *l < u64::MAX as i128)
                .map(|l| l as u64);
            if let Some(vars) = &p.into {
                return select_into(p, vars, txn, env);
            }
            let (_, found) = select::execute_counted(p, txn, env, sink, default_limit)?;
            Ok((
                (
                    Outcome {
                        result_set: true,
                        ..Default::default()
                    },
                    None,
                ),
                -1,
                found,
            ))
        }
        Plan::Insert(p) => {
            let r = dml::insert(p, txn, env)?;
            let info = if r.records > 1 || r.duplicates > 0 {
                format!(
                    "Records: {}  Duplicates: {}  Warnings: {}",
                    r.records,
                    r.duplicates,
                    r.ignored.len()
                )
            } else {
                String::new()
            };
            let out = Outcome {
                result_set: false,
                affected_rows: r.affected,
                last_insert_id: r.first_auto_id.unwrap_or(0),
                info,
                warnings: r.ignored.into_iter().map(|m| (1062, m)).collect(),
                ..Default::default()
            };
            Ok(((out, r.first_auto_id), r.affected as i64, 0))
        }
        Plan::Modify(p) => {
            let (matched, changed) = dml::modify(p, txn, env)?;
            let info = if p.set.is_empty() {
                String::new()
            } else {
                format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0")
            };
            Ok((
                (
                    Outcome {
                        result_set: false,
                        affected_rows: changed,
                        found_rows: (!p.set.is_empty()).then_some(matched),
                        last_insert_id: 0,
                        info,
                        warnings: Vec::new(),
                    },
                    None,
                ),
                changed as i64,
                0,
            ))
        }
    }
}
