//! Row statements (SELECT, INSERT/REPLACE, UPDATE, DELETE): their plans
//! (cached with prepared statements) and their execution inside the
//! session's transaction, with the statement's warnings, affected-row
//! counts and user-variable assignments handed back to the session.
use crate::dml;
use crate::env::{DivZero, StmtEnv};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::result::{Outcome, ResultSink};
use crate::select::{self, SelectPlan};
use crate::session::Session;
use crate::stmt::RowStmt;
pub use crate::stmt_cache::Plan;
use rel::value::Value;
use sqlparser::ast;
use std::time::Duration;
use txn::Txn;

/// Plans a row statement in the session's current database, its literals
/// under the connection's collation; `params` are the positions of its `?`
/// placeholders.
pub fn plan(s: &Session, stmt: &RowStmt, params: &[(u64, u64)]) -> Result<Plan> {
    plan_under(s, stmt, params, s.conn_collation())
}

/// `plan` with literals under collation `literals` (a prepared statement
/// planned again keeps the collation it was prepared under).
pub fn plan_under(
    s: &Session,
    stmt: &RowStmt,
    params: &[(u64, u64)],
    literals: rel::collation::Collation,
) -> Result<Plan> {
    let _literals = crate::collate::literals(literals);
    let st = s.inst.catalog.state();
    let db = s.db.as_deref();
    Ok(match stmt {
        RowStmt::Select(q) => Plan::Select(Box::new(select::plan(q, &st, db, params)?)),
        RowStmt::Insert(i) => Plan::Insert(Box::new(dml::plan_insert(i, &st, db, params)?)),
        RowStmt::Update(u) if crate::multidml::is_multi_update(u) => {
            Plan::MultiModify(Box::new(crate::multidml::plan_update(u, &st, db, params)?))
        }
        RowStmt::Delete(d, true) if crate::multidml::is_multi_delete(d) => {
            return Err(SqlError::unsupported("multi-table DELETE IGNORE"));
        }
        RowStmt::Delete(d, _) if crate::multidml::is_multi_delete(d) => {
            Plan::MultiModify(Box::new(crate::multidml::plan_delete(d, &st, db, params)?))
        }
        RowStmt::Update(u) => Plan::Modify(Box::new(dml::plan_update(u, &st, db, params)?)),
        RowStmt::Delete(d, ignore) => {
            let mut p = dml::plan_delete(d, &st, db, params)?;
            p.ignore = *ignore;
            Plan::Modify(Box::new(p))
        }
    })
}

/// The statement's deadline: MySQL's max_execution_time (ms, SELECT only)
/// and MariaDB's max_statement_time (seconds, every row statement), from the
/// statement's start; the earlier one, flagged true for max_statement_time.
fn deadline(s: &Session, plan: &Plan) -> Option<(std::time::Instant, bool)> {
    let start = s.proc.since();
    let mut d: Option<(std::time::Instant, bool)> = None;
    if matches!(plan, Plan::Select(_)) {
        let ms = s.var_int("max_execution_time");
        if ms > 0 {
            d = Some((start + Duration::from_millis(ms as u64), false));
        }
    }
    let secs = crate::slowlog::secs_var(s, "max_statement_time");
    if secs > 0.0 {
        let m = start + Duration::from_secs_f64(secs.min(31_536_000.0));
        if d.is_none_or(|(x, _)| m < x) {
            d = Some((m, true));
        }
    }
    d
}

/// Runs a planned row statement inside the session's transaction
/// (autocommit wraps it in its own).
pub fn run(
    s: &mut Session,
    plan: &Plan,
    params: &[Value],
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    if !matches!(plan, Plan::Select(_)) {
        s.check_write()?;
    }
    if let Plan::Insert(p) = plan {
        if s.var_int("strata_bulk_load") != 0 {
            if let Some(out) = crate::bulk::session_insert(s, p, params)? {
                return Ok(out);
            }
        }
    }
    let mut txn = s.statement_txn();
    let (result, warnings, assign) = {
        let mut env = StmtEnv::new(s, params);
        env.div_zero = div_zero(env.sql_mode(), plan);
        let mut nowait = false;
        env.deadline = deadline(s, plan);
        if let Plan::Select(p) = plan {
            if p.lock.is_some() && p.nonblock.is_some() {
                // NOWAIT / SKIP LOCKED: never wait for a row lock.
                nowait = true;
                env.skip_locked = p.nonblock == Some(ast::NonBlock::SkipLocked);
                txn.set_lock_wait_timeout(Duration::ZERO);
            }
        }
        let mut r = exec_plan(plan, &mut txn, &env, sink);
        if nowait {
            txn.set_lock_wait_timeout(s.lock_timeout());
            if let Err(e) = &mut r {
                if e.code == crate::error::ER_LOCK_WAIT_TIMEOUT {
                    *e = SqlError::lock_nowait();
                }
            }
        }
        (r, env.warnings.into_inner(), env.assign.into_inner())
    };
    for (level, w) in warnings {
        s.warn(level, w);
    }
    s.user_vars.extend(assign);
    match result {
        Ok((mut out, row_count, found)) => {
            for w in std::mem::take(&mut out.0.warnings) {
                s.warn("Warning", w);
            }
            if let Some(id) = out.1 {
                s.last_insert_id = id;
            }
            s.row_count = row_count;
            s.found_rows = found;
            s.end_statement(txn, None)?;
            Ok(out.0)
        }
        Err(e) => {
            s.end_statement(txn, Some(&e))?;
            Err(e)
        }
    }
}

type Exec = ((Outcome, Option<u64>), i64, u64);

/// ERROR_FOR_DIVISION_BY_ZERO (MariaDB's semantics): a division by zero warns, and
/// fails an INSERT or UPDATE (not IGNORE) under strict mode; without the flag it
/// is NULL and nothing else.
fn div_zero(mode: crate::sqlmode::SqlMode, plan: &Plan) -> DivZero {
    if !mode.has(crate::sqlmode::SqlMode::ERROR_FOR_DIVISION_BY_ZERO) {
        return DivZero::Silent;
    }
    let write = match plan {
        Plan::Select(_) => false,
        Plan::Insert(p) => !matches!(p.on_dup, dml::OnDup::Ignore),
        Plan::Modify(p) => !p.set.is_empty() && !p.ignore,
        Plan::MultiModify(p) => p.is_update(),
    };
    if write && mode.strict() {
        DivZero::Fail
    } else {
        DivZero::Warn
    }
}

/// SELECT ... INTO @vars: the single row goes to user variables (assigned by the
/// session after the statement), no result set.
fn select_into(p: &SelectPlan, vars: &[String], txn: &mut Txn, env: &StmtEnv) -> Result<Exec> {
    let mut c = crate::result::Collect::default();
    let (n, _) = select::execute_counted(p, txn, env, &mut c, Some(2))?;
    if n > 1 {
        return Err(SqlError::too_many_rows());
    }
    match c.rows.pop() {
        None => env.warn(SqlError::no_data()),
        Some(row) => {
            let mut a = env.assign.borrow_mut();
            for (v, x) in vars.iter().zip(row) {
                a.insert(v.clone(), x);
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
            let st = env.s.inst.catalog.state();
            let r = dml::insert(p, txn, env, env.s.writer(&st))?;
            let info = if r.records > 1 || r.duplicates > 0 {
                format!(
                    "Records: {}  Duplicates: {}  Warnings: {}",
                    r.records,
                    r.duplicates,
                    r.ignored.len() + env.warnings.borrow().len()
                )
            } else {
                String::new()
            };
            let out = Outcome {
                result_set: false,
                affected_rows: r.affected,
                last_insert_id: r.first_auto_id.unwrap_or(0),
                info,
                warnings: r.ignored,
                ..Default::default()
            };
            Ok(((out, r.first_auto_id), r.affected as i64, 0))
        }
        Plan::Modify(p) => {
            // sql_safe_updates: no UPDATE or DELETE of a whole table (no key range
            // chosen from the WHERE clause) without a LIMIT (MySQL's 1175).
            if env.s.var_int("sql_safe_updates") != 0
                && p.limit.is_none()
                && p.access.ranges.is_empty()
            {
                return Err(SqlError::safe_update());
            }
            let st = env.s.inst.catalog.state();
            let (matched, changed) = dml::modify(p, txn, env, env.s.writer(&st))?;
            Ok(modified(!p.set.is_empty(), matched, changed, env))
        }
        Plan::MultiModify(_) if env.s.var_int("sql_safe_updates") != 0 => Err(
            SqlError::unsupported("multi-table UPDATE or DELETE under sql_safe_updates=1"),
        ),
        Plan::MultiModify(p) => {
            let st = env.s.inst.catalog.state();
            let w = env.s.writer(&st);
            let (matched, changed) = crate::multidml::run(p, txn, env, w)?;
            Ok(modified(p.is_update(), matched, changed, env))
        }
    }
}

/// The outcome of an UPDATE (`update`: with its "Rows matched" info) or DELETE.
fn modified(update: bool, matched: u64, changed: u64, env: &StmtEnv) -> Exec {
    let info = if update {
        let w = env.warnings.borrow().len();
        format!("Rows matched: {matched}  Changed: {changed}  Warnings: {w}")
    } else {
        String::new()
    };
    let out = Outcome {
        result_set: false,
        affected_rows: changed,
        found_rows: update.then_some(matched),
        last_insert_id: 0,
        info,
        warnings: Vec::new(),
    };
    ((out, None), changed as i64, 0)
}
