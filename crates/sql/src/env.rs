//! The evaluation environment of one statement (`Env` for expressions): its parameters,
//! start time, session variables, warnings raised while evaluating, the
//! max_execution_time deadline, SKIP LOCKED, and user variables set by SELECT ... INTO
//! or `@v := expr` (seen by the statement's later reads, kept by the session after it).
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::session::Session;
use rel::value::Value;
use std::sync::atomic::Ordering;

/// Evaluation environment of one statement.
pub struct StmtEnv<'a> {
    pub s: &'a Session,
    pub params: &'a [Value],
    pub now: i64,
    /// Warnings raised while evaluating (moved to the session after the statement).
    /// (level, warning): "Warning" or "Note".
    pub warnings: std::cell::RefCell<Vec<(&'static str, SqlError)>>,
    /// The statement's deadline: max_execution_time's (SELECT only; 3024)
    /// or, flagged true, MariaDB's max_statement_time (1969), the earlier.
    pub deadline: Option<(std::time::Instant, bool)>,
    ticks: std::cell::Cell<u32>,
    pub skip_locked: bool,
    /// User variables assigned by SELECT ... INTO or `:=` (applied to the session
    /// after the statement, also when it fails, as MySQL keeps them).
    pub assign: std::cell::RefCell<std::collections::HashMap<String, Value>>,
    /// What a division by zero does besides giving NULL (sql_mode's
    /// ERROR_FOR_DIVISION_BY_ZERO).
    pub div_zero: DivZero,
}

/// What a division by zero does besides giving NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DivZero {
    /// Nothing (ERROR_FOR_DIVISION_BY_ZERO not set).
    #[default]
    Silent,
    /// Warning 1365.
    Warn,
    /// Error 1365: an INSERT or UPDATE (not IGNORE) under strict mode.
    Fail,
}

impl<'a> StmtEnv<'a> {
    /// The environment of a statement starting now.
    pub fn new(s: &'a Session, params: &'a [Value]) -> StmtEnv<'a> {
        StmtEnv {
            s,
            params,
            now: now_micros(),
            warnings: Default::default(),
            deadline: None,
            ticks: Default::default(),
            skip_locked: false,
            assign: Default::default(),
            div_zero: DivZero::Silent,
        }
    }
}

impl Env for StmtEnv<'_> {
    fn param(&self, i: usize) -> Option<&Value> {
        self.params.get(i)
    }
    fn sys_var(&self, name: &str, global: bool) -> Option<Value> {
        self.s.get_var(name, global)
    }
    fn sql_mode(&self) -> crate::sqlmode::SqlMode {
        self.s.sql_mode()
    }
    fn user_var(&self, name: &str) -> Value {
        if let Some(v) = self.assign.borrow().get(name) {
            return v.clone();
        }
        self.s.user_vars.get(name).cloned().unwrap_or(Value::Null)
    }
    fn set_user_var(&self, name: &str, v: Value) -> Result<()> {
        self.assign.borrow_mut().insert(name.to_string(), v);
        Ok(())
    }
    fn current_db(&self) -> Option<&str> {
        self.s.db.as_deref()
    }
    fn user(&self) -> &str {
        &self.s.user
    }
    fn user_host(&self, current: bool) -> String {
        match &self.s.account {
            Some((u, h)) if current => format!("{u}@{h}"),
            _ => format!("{}@{}", self.s.user, self.s.host),
        }
    }
    fn connection_id(&self) -> u64 {
        self.s.conn_id
    }
    fn last_insert_id(&self) -> u64 {
        self.s.last_insert_id
    }
    fn row_count(&self) -> i64 {
        self.s.row_count
    }
    fn found_rows(&self) -> u64 {
        self.s.found_rows
    }
    fn now_micros(&self) -> i64 {
        self.now
    }
    fn warn(&self, e: SqlError) {
        let mut w = self.warnings.borrow_mut();
        if w.len() < 1024 {
            w.push(("Warning", e));
        }
    }
    fn note(&self, e: SqlError) {
        let mut w = self.warnings.borrow_mut();
        if w.len() < 1024 {
            w.push(("Note", e));
        }
    }
    fn skip_locked(&self) -> bool {
        self.skip_locked
    }
    fn division_by_zero(&self) -> Result<()> {
        match self.div_zero {
            DivZero::Silent => {}
            DivZero::Warn => self.warn(SqlError::division_by_zero()),
            DivZero::Fail => return Err(SqlError::division_by_zero()),
        }
        Ok(())
    }
    fn autocommit_statement(&self) -> bool {
        self.s.autocommit() && !self.s.explicit()
    }
    fn check_interrupt(&self) -> Result<()> {
        // One row read: counted (Rows_examined, the processlist), and the
        // kill flag checked (KILL QUERY / CONNECTION, a client gone).
        let p = &self.s.proc;
        p.examined
            .store(p.examined.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        if let Some(e) = p.kill_error() {
            return Err(e);
        }
        if self.deadline.is_none() {
            return Ok(());
        }
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        if t.is_multiple_of(64) {
            return self.past_deadline();
        }
        Ok(())
    }
    fn interrupted(&self) -> Result<()> {
        if let Some(e) = self.s.proc.kill_error() {
            return Err(e);
        }
        self.past_deadline()
    }
    fn interrupt(&self) -> Option<crate::runmerge::Interrupt> {
        let (proc, inst, deadline) = (self.s.proc.clone(), self.s.inst.clone(), self.deadline);
        Some(std::sync::Arc::new(move || {
            if let Some(e) = proc.kill_error() {
                return Err(e);
            }
            deadline_check(deadline, &inst)
        }))
    }
    fn view_rows(&self, v: crate::infoschema::View) -> Result<Vec<Vec<Value>>> {
        v.rows(self.s)
    }
}

impl StmtEnv<'_> {
    /// The deadline's error once it has passed.
    fn past_deadline(&self) -> Result<()> {
        deadline_check(self.deadline, &self.s.inst)
    }
}

/// The error of a statement past its `deadline` (see `StmtEnv::deadline`),
/// counted in the instance's statement timeouts for max_statement_time.
fn deadline_check(
    deadline: Option<(std::time::Instant, bool)>,
    inst: &crate::Instance,
) -> Result<()> {
    let Some((d, maria)) = deadline else {
        return Ok(());
    };
    if std::time::Instant::now() < d {
        return Ok(());
    }
    Err(if maria {
        inst.counters
            .statement_timeouts
            .fetch_add(1, Ordering::Relaxed);
        SqlError::statement_timeout()
    } else {
        SqlError::execution_time_exceeded()
    })
}

pub(crate) fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Inside `impl Env for X`: forwards every session method (all but the
/// statement's materialized results: `subquery`, `derived`,
/// `derived_index`, `work_table`) to the `Env` in field `self.$inner`, for
/// environments that add results to an outer one.
macro_rules! forward_session_env {
    ($inner:ident) => {
        fn param(&self, i: usize) -> Option<&rel::value::Value> {
            self.$inner.param(i)
        }
        fn sys_var(&self, name: &str, global: bool) -> Option<rel::value::Value> {
            self.$inner.sys_var(name, global)
        }
        fn user_var(&self, name: &str) -> rel::value::Value {
            self.$inner.user_var(name)
        }
        fn set_user_var(&self, name: &str, v: rel::value::Value) -> crate::error::Result<()> {
            self.$inner.set_user_var(name, v)
        }
        fn current_db(&self) -> Option<&str> {
            self.$inner.current_db()
        }
        fn user(&self) -> &str {
            self.$inner.user()
        }
        fn user_host(&self, current: bool) -> String {
            self.$inner.user_host(current)
        }
        fn connection_id(&self) -> u64 {
            self.$inner.connection_id()
        }
        fn last_insert_id(&self) -> u64 {
            self.$inner.last_insert_id()
        }
        fn row_count(&self) -> i64 {
            self.$inner.row_count()
        }
        fn found_rows(&self) -> u64 {
            self.$inner.found_rows()
        }
        fn now_micros(&self) -> i64 {
            self.$inner.now_micros()
        }
        fn warn(&self, w: crate::error::SqlError) {
            self.$inner.warn(w)
        }
        fn note(&self, w: crate::error::SqlError) {
            self.$inner.note(w)
        }
        fn autocommit_statement(&self) -> bool {
            self.$inner.autocommit_statement()
        }
        fn skip_locked(&self) -> bool {
            self.$inner.skip_locked()
        }
        fn division_by_zero(&self) -> crate::error::Result<()> {
            self.$inner.division_by_zero()
        }
        fn check_interrupt(&self) -> crate::error::Result<()> {
            self.$inner.check_interrupt()
        }
        fn interrupted(&self) -> crate::error::Result<()> {
            self.$inner.interrupted()
        }
        fn interrupt(&self) -> Option<crate::runmerge::Interrupt> {
            self.$inner.interrupt()
        }
        fn view_rows(
            &self,
            v: crate::infoschema::View,
        ) -> crate::error::Result<Vec<Vec<rel::value::Value>>> {
            self.$inner.view_rows(v)
        }
    };
}
pub(crate) use forward_session_env;
