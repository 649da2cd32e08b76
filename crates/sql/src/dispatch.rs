//! Runs statements: the session's entry points (text queries, prepare,
//! execute) and the one match that sends each kind of statement (decided
//! by `stmt::classify`) to its home.
use crate::com::com;
use crate::error::{Result, SqlError};
use crate::exec::{self, Plan};
use crate::parse::{self, Parsed};
use crate::result::{ColumnInfo, Outcome, ResultSink};
use crate::session::{Prepared, Session};
use crate::stmt::{ShowStmt, Stmt};
use crate::stmt_cache::Compiled;
use crate::{ddl, explain, maint, set, show, txnctl};
use rel::value::Value;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Session {
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
        let shown: Arc<str> = Arc::from(&*crate::slowlog::redact_secrets(sql));
        self.observed("Query", shown, sink, |s, sink| s.query_inner(sql, sink))
    }

    /// Runs a client's statement as the registry and the status counters
    /// see it: Questions, the processlist entry (command, text, time), rows
    /// sent, the kill flag's error, the slow query log. `shown` is the
    /// statement's text as they show it (`slowlog::redact_secrets`).
    fn observed(
        &mut self,
        command: &'static str,
        shown: Arc<str>,
        sink: &mut dyn ResultSink,
        f: impl FnOnce(&mut Session, &mut dyn ResultSink) -> Result<Outcome>,
    ) -> Result<Outcome> {
        self.inst.count_question();
        self.questions += 1;
        let qid = self.inst.procs.next_query_id();
        let proc = self.proc.clone();
        proc.begin_shared(command, shown.clone(), qid);
        let text: &str = &shown;
        let start_micros = crate::env::now_micros();
        let started = std::time::Instant::now();
        let mut counting = Counting {
            inner: sink,
            proc: &proc,
        };
        let mut r = f(self, &mut counting);
        // A statement stopped by KILL fails with the kill's error, whatever
        // layer noticed it first (a lock wait, a row check).
        if let (Err(e), Some(k)) = (&mut r, proc.kill_error()) {
            if e.code == crate::error::ER_QUERY_INTERRUPTED || e.code == k.code {
                *e = k;
            }
        }
        crate::slowlog::record(
            self,
            &crate::slowlog::Entry {
                text,
                start_micros,
                query_secs: started.elapsed().as_secs_f64(),
                rows_sent: proc.sent.load(Ordering::Relaxed),
                rows_examined: proc.examined.load(Ordering::Relaxed),
            },
        );
        proc.end(&self.db);
        r
    }

    /// Counts a statement in its Com_* counter (this session's and the instance's).
    pub fn count_com(&mut self, name: &str) {
        self.count_com_at(crate::com::index(name));
    }

    /// `count_com` of the counter at position `i` of `com::NAMES` (`com!`).
    pub(crate) fn count_com_at(&mut self, i: usize) {
        if let Some(c) = self.com.get_mut(i) {
            *c += 1;
        }
        self.inst.com.add(i);
    }

    /// `query` without the client-statement bookkeeping (for statements run
    /// inside another, as CREATE TABLE ... SELECT runs its INSERT).
    pub(crate) fn query_inner(&mut self, sql: &str, sink: &mut dyn ResultSink) -> Result<Outcome> {
        if let Some((c, params)) = self.auto_compiled(sql) {
            self.warnings.clear();
            self.announce();
            let r = run(self, sql, &c.parsed, &params, c.plan.as_ref(), sink);
            self.statement_done();
            return r;
        }
        let parsed = parse::parse(sql)?;
        if !matches!(
            parsed.stmt,
            Stmt::Show(ShowStmt::Warnings | ShowStmt::Errors)
        ) {
            self.warnings.clear();
        }
        self.announce();
        let r = run(self, sql, &parsed, &[], None, sink);
        self.statement_done();
        r
    }

    /// Prepares a statement; returns (id, parameter count, result columns).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, usize, Vec<ColumnInfo>)> {
        self.count_com_at(com!("stmt_prepare"));
        let max = self
            .inst
            .global_var("max_prepared_stmt_count")
            .and_then(|v| v.to_i128())
            .unwrap_or(16382)
            .max(0) as u64;
        // Reserve a place first: many sessions preparing at once cannot pass the limit.
        if self.inst.prepared.fetch_add(1, Ordering::AcqRel) >= max {
            self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
            return Err(SqlError::too_many_prepared(max));
        }
        let compiled = match self.compile(sql, self.conn_collation()) {
            Ok(c) if matches!(c.parsed.stmt, Stmt::Prep(_)) => {
                self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
                return Err(SqlError::unsupported_ps());
            }
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
                sql: Arc::from(sql),
                shown: Arc::from(&*crate::slowlog::redact_secrets(sql)),
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
    /// catalog version, its literals under `coll`: from the instance's cache,
    /// or parsed and planned now (which reports errors and result columns at
    /// prepare time); refused (1142, 1044, ...) unless the session's account
    /// may run it.
    fn compile(&self, sql: &str, coll: rel::collation::Collation) -> Result<Arc<Compiled>> {
        let version = self.inst.catalog.version();
        if let Some(c) = self.inst.stmt_cache.get(sql, &self.db, coll, version) {
            crate::account::check(self, &c.parsed.stmt)?;
            return Ok(c);
        }
        let parsed = parse::parse(sql)?;
        // Privileges first, as MySQL checks them at prepare (1142): a statement
        // the account may not run is neither planned nor described (its result
        // columns would tell a table's columns). Execution checks again.
        crate::account::check(self, &parsed.stmt)?;
        let plan = match &parsed.stmt {
            Stmt::Rows(r) => Some(exec::plan_under(self, r, &parsed.params, coll)?),
            _ => None,
        };
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
                coll,
            },
        ))
    }

    /// The shared compiled form of a text statement whose literals were taken
    /// out (see `autoparam`), with their values; None when the statement has
    /// none to take out, or its literal-free form cannot stand for it.
    fn auto_compiled(&self, sql: &str) -> Option<(Arc<Compiled>, Vec<Value>)> {
        let on = self
            .get_var("strata_auto_parameterize", false)
            .and_then(|v| v.to_i128())
            .is_none_or(|v| v != 0);
        if !on {
            return None;
        }
        let n = crate::autoparam::normalize(sql)?;
        // A key space of its own: the entry of a client's prepared statement with
        // the same text is not checked for eligibility.
        let key = format!("\u{1}{}", n.text);
        let version = self.inst.catalog.version();
        let coll = self.conn_collation();
        let c = match self.inst.stmt_cache.get(&key, &self.db, coll, version) {
            Some(c) => c,
            None => {
                let compiled = parse::parse(&n.text).ok().and_then(|parsed| {
                    let Stmt::Rows(r) = &parsed.stmt else {
                        return None;
                    };
                    if parsed.params.len() != n.params.len() || !crate::autoparam::eligible(r) {
                        return None;
                    }
                    let plan = exec::plan_under(self, r, &parsed.params, coll).ok()?;
                    Some((parsed, plan))
                });
                // Not eligible: remembered as an entry without a plan.
                let (parsed, plan) = match compiled {
                    Some((p, plan)) => (p, Some(plan)),
                    None => (
                        Parsed {
                            stmt: Stmt::Empty,
                            params: vec![],
                        },
                        None,
                    ),
                };
                self.inst.stmt_cache.put(
                    &key,
                    Compiled {
                        parsed,
                        columns: vec![],
                        plan,
                        version,
                        db: self.db.clone(),
                        coll,
                    },
                )
            }
        };
        c.plan.is_some().then_some((c, n.params))
    }

    /// Runs a prepared statement with bound parameters.
    pub fn execute_prepared(
        &mut self,
        id: u32,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        self.count_com_at(com!("stmt_execute"));
        let shown = self
            .stmts
            .get(&id)
            .map_or_else(|| Arc::from(""), |p| p.shown.clone());
        self.observed("Execute", shown, sink, |s, sink| {
            s.warnings.clear();
            s.announce();
            let r = s.execute_prepared_inner(id, params, sink);
            s.statement_done();
            r
        })
    }

    pub(crate) fn execute_prepared_inner(
        &mut self,
        id: u32,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> Result<Outcome> {
        let (text, compiled) = match self.stmts.get(&id) {
            None => return Err(SqlError::unknown_statement(id, "mysqld_stmt_execute")),
            Some(p) if params.len() != p.params => {
                return Err(SqlError::wrong_arguments("mysqld_stmt_execute"))
            }
            Some(p) => (p.sql.clone(), p.compiled.clone()),
        };
        let version = self.inst.catalog.version();
        let c = if compiled.current(version, &self.db) {
            compiled
        } else {
            // Planned again; on an error the statement keeps its old plan.
            let c = self.compile(&text, compiled.coll)?;
            if let Some(p) = self.stmts.get_mut(&id) {
                p.compiled = c.clone();
            }
            c
        };
        run(self, &text, &c.parsed, params, c.plan.as_ref(), sink)
    }

    /// Forgets a prepared statement.
    pub fn close_prepared(&mut self, id: u32) {
        self.count_com_at(com!("stmt_close"));
        if self.stmts.remove(&id).is_some() {
            self.inst.prepared.fetch_sub(1, Ordering::AcqRel);
            if !self.named_stmts.is_empty() {
                self.named_stmts.retain(|_, v| *v != id);
            }
        }
    }

    /// Parameter count of a prepared statement.
    pub fn prepared_params(&self, id: u32) -> Option<usize> {
        self.stmts.get(&id).map(|p| p.params)
    }
}

/// How long a statement waits for DDL (MySQL's lock_wait_timeout).
fn ddl_lock_wait(s: &Session) -> std::time::Duration {
    let secs = s
        .get_var("lock_wait_timeout", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(50)
        .clamp(1, 3600) as u64;
    std::time::Duration::from_secs(secs)
}

/// Runs a parsed statement (text `text`: what the binary log records for
/// DDL); `cached` is a prepared statement's plan.
fn run(
    s: &mut Session,
    text: &str,
    parsed: &Parsed,
    params: &[Value],
    cached: Option<&Plan>,
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    crate::account::check(s, &parsed.stmt)?;
    // A bulk load ends before any statement but an INSERT (which may go on
    // with it) or SET (SET strata_bulk_load = 0 ends it below).
    if s.bulk.is_some()
        && !matches!(
            &parsed.stmt,
            Stmt::Rows(crate::stmt::RowStmt::Insert(_)) | Stmt::Set(_)
        )
    {
        crate::bulk::end_session_load(s, true)?;
    }
    if let Some(i) = crate::com::of(&parsed.stmt) {
        s.count_com_at(i);
        // SQL-level EXECUTE is also a statement execution (PREPARE counts
        // itself in `prepare`), as MariaDB counts them.
        if let Stmt::Prep(crate::stmt::PrepStmt::Execute { .. }) = &parsed.stmt {
            s.count_com_at(com!("stmt_execute"));
        }
    }
    match &parsed.stmt {
        Stmt::Rows(r) => {
            let mut res = match cached {
                Some(p) => exec::run(s, p, params, sink),
                None => {
                    let p = exec::plan(s, r, &parsed.params)?;
                    exec::run(s, &p, params, sink)
                }
            };
            // A write into a table ALTER TABLE is replacing: wait for the
            // ALTER to end, then run the statement again on the new table.
            // (Not when the read view is older than the table: running it
            // again in the same transaction would not help.)
            let mut deadline = None;
            while matches!(&res, Err(e) if e.code == crate::error::ER_TABLE_DEF_CHANGED
                && !e.is_read_view_too_old())
            {
                let seen = s.inst.catalog.version();
                let end =
                    *deadline.get_or_insert_with(|| std::time::Instant::now() + ddl_lock_wait(s));
                let paused = s.pause_for_ddl();
                while s.inst.catalog.version() == seen {
                    if std::time::Instant::now() >= end {
                        return Err(SqlError::lock_wait_timeout());
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                if paused {
                    s.announce();
                }
                let p = exec::plan(s, r, &parsed.params)?;
                res = exec::run(s, &p, params, sink);
            }
            res
        }
        Stmt::Explain(r) => explain::explain(s, r, &parsed.params, sink),
        Stmt::Txn(t) => txnctl::run(s, t),
        Stmt::Set(x) => {
            // SET evaluates expressions that may hold `?` (prepared SET).
            s.stmt_params = (parsed.params.clone(), params.to_vec());
            let r = set::run(s, x)?;
            if s.var_int("strata_bulk_load") == 0 {
                crate::bulk::end_session_load(s, true)?;
            }
            Ok(r)
        }
        Stmt::Show(x) => show::run(s, x, sink),
        Stmt::Ddl(d) => {
            // DDL commits the open transaction, then obeys the session's read-only settings.
            s.commit()?;
            s.check_write()?;
            if matches!(d, crate::stmt::DdlStmt::CreateTable(c) if c.query.is_some()) {
                crate::binlogsql::refuse_unlogged(s, "CREATE TABLE ... SELECT")?;
            }
            crate::binlogsql::run_ddl(s, text, d, |s| ddl::run(s, d))
        }
        Stmt::Maint(m) => maint::run(s, m, sink),
        Stmt::Load(l) => crate::load::run(s, l, sink),
        Stmt::Prep(p) => {
            s.stmt_params = (parsed.params.clone(), params.to_vec());
            crate::sqlprep::run(s, p, sink)
        }
        Stmt::Account(a) => crate::account::run(s, a, sink),
        Stmt::Empty => Err(SqlError::empty_query()),
        Stmt::Replica(r) => crate::replica::execute(s, r, sink),
        Stmt::CommentOnly => crate::result::ok(),
    }
}

/// A sink that counts the rows sent (Rows_sent, the slow log).
struct Counting<'a, 'b> {
    inner: &'a mut dyn ResultSink,
    proc: &'b crate::procs::Proc,
}

impl ResultSink for Counting<'_, '_> {
    fn columns(&mut self, cols: &[ColumnInfo]) -> Result<()> {
        self.inner.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        let n = &self.proc.sent;
        n.store(n.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.inner.row(row)
    }
    fn local_infile(&mut self, name: &str) -> Result<Box<dyn std::io::Read + '_>> {
        self.inner.local_infile(name)
    }
}
