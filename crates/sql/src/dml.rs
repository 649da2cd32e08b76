//! INSERT (VALUES or SELECT; IGNORE; REPLACE; ON DUPLICATE KEY UPDATE),
//! UPDATE and DELETE (WHERE, ORDER BY, LIMIT) on one table. Rows to change
//! are found through an access path with exclusive locks and re-checked
//! at their latest committed version (InnoDB's "current read"), then
//! written through `rel::table`.
use crate::access::{self, Access};
use crate::bind::{Binder, Scope};
use crate::check::Checks;
use crate::collate::{annotate, Ctx};
use crate::error::{Result, SqlError};
use crate::expr::{accepts, Env, Expr};
use crate::result::ResultSink;
use crate::select::{self, resolve_table, table_scope, SelectPlan};
use crate::sort::Sorter;
use crate::store::{store, zero_value, Storing};
use rel::catalog::{CatalogState, Table};
use rel::fk::Writer;
use rel::table::{self as rt, Row};
use rel::value::{self as val, Value};
use sqlparser::ast;
use std::sync::Arc;
use txn::{LockMode, Txn};

/// Where inserted rows come from.
#[derive(Debug, Clone)]
pub enum InsertSource {
    /// Each row: one expression per listed column (`None` = DEFAULT).
    Values(Vec<Vec<Option<Expr>>>),
    Select(Box<SelectPlan>),
}

/// What to do on a duplicate key.
#[derive(Debug, Clone)]
pub enum OnDup {
    Error,
    Ignore,
    Replace,
    /// ON DUPLICATE KEY UPDATE: (column, expr over existing row ++ new row).
    Update(Vec<(usize, Expr)>),
}

/// A planned INSERT.
#[derive(Debug, Clone)]
pub struct InsertPlan {
    pub table: Arc<Table>,
    pub cols: Vec<usize>,
    pub source: InsertSource,
    pub on_dup: OnDup,
    /// Through a view WITH CHECK OPTION: its condition (`crate::viewdml`).
    pub view_check: Option<(String, String, Expr)>,
}

/// A planned UPDATE or DELETE.
#[derive(Debug, Clone)]
pub struct ModifyPlan {
    pub table: Arc<Table>,
    pub access: Access,
    pub filter: Option<Expr>,
    /// Empty for DELETE.
    pub set: Vec<(usize, Expr)>,
    pub order: Vec<(Expr, bool)>,
    pub limit: Option<Expr>,
    /// Uncorrelated subqueries of SET and WHERE, run before the first row.
    pub subqueries: Vec<(crate::select::SelectPlan, crate::subquery::SubKind)>,
    /// UPDATE IGNORE: bad values adjusted with warnings, rows that would
    /// duplicate a key left unchanged.
    pub ignore: bool,
    /// Through a view WITH CHECK OPTION: its condition (`crate::viewdml`).
    pub view_check: Option<(String, String, Expr)>,
}

fn column_list(t: &Table, cols: &[ast::ObjectName]) -> Result<Vec<usize>> {
    if cols.is_empty() {
        return Ok((0..t.def.columns.len()).collect());
    }
    cols.iter()
        .map(|c| {
            let name = c.0.last().map(|p| p.to_string()).unwrap_or_default();
            let name = name.trim_matches('`');
            t.def
                .column(name)
                .ok_or_else(|| SqlError::unknown_column(name, "field list"))
        })
        .collect()
}

fn is_default_kw(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
}

/// Plans an INSERT / REPLACE.
pub fn plan_insert(
    ins: &ast::Insert,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<InsertPlan> {
    crate::accept::check_insert(ins)?;
    if let Some((ins, check)) = crate::viewdml::insert(ins, st, cur_db)? {
        let mut p = plan_insert(&ins, st, cur_db, params)?;
        p.view_check = bind_check(check.as_ref(), &p.table)?;
        return Ok(p);
    }
    let name = match &ins.table {
        ast::TableObject::TableName(n) => n,
        _ => return Err(SqlError::unsupported("INSERT INTO a table function")),
    };
    let t = resolve_table(st, cur_db, name)?;
    let mut cols = column_list(&t, &ins.columns)?;
    let mut b = Binder::new(params);
    let empty = Scope::default();
    let source = if !ins.assignments.is_empty() {
        // INSERT ... SET a=1, b=2
        cols.clear();
        let mut row = Vec::new();
        for a in &ins.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            let cname = n.0.last().map(|p| p.to_string()).unwrap_or_default();
            cols.push(
                t.def
                    .column(&cname)
                    .ok_or_else(|| SqlError::unknown_column(&cname, "field list"))?,
            );
            let ty = &t.def.columns[*cols.last().unwrap_or(&0)].ty;
            row.push(if is_default_kw(&a.value) {
                None
            } else {
                Some(stored_as(
                    annotate(b.expr(&a.value, &empty)?, Ctx::new(&[]))?,
                    ty,
                ))
            });
        }
        InsertSource::Values(vec![row])
    } else {
        let q = ins
            .source
            .as_ref()
            .ok_or_else(|| SqlError::parse("INSERT without VALUES"))?;
        match &*q.body {
            ast::SetExpr::Values(v) => {
                let mut rows = Vec::with_capacity(v.rows.len());
                for (i, r) in v.rows.iter().enumerate() {
                    let r = &r.content;
                    if r.len() != cols.len() && !(r.is_empty() && ins.columns.is_empty()) {
                        return Err(SqlError::value_count(i + 1));
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for (j, e) in r.iter().enumerate() {
                        row.push(if is_default_kw(e) {
                            None
                        } else {
                            let x = annotate(b.expr(e, &empty)?, Ctx::new(&[]))?;
                            match cols.get(j) {
                                Some(&c) => Some(stored_as(x, &t.def.columns[c].ty)),
                                None => Some(x),
                            }
                        });
                    }
                    if r.is_empty() {
                        row = vec![None; cols.len()];
                    }
                    rows.push(row);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let p = select::plan(q, st, cur_db, params)?;
                if p.out.len() != cols.len() {
                    return Err(SqlError::value_count(1));
                }
                InsertSource::Select(Box::new(p))
            }
        }
    };
    let on_dup = if ins.replace_into {
        OnDup::Replace
    } else if let Some(ast::OnInsert::DuplicateKeyUpdate(assigns)) = &ins.on {
        let scope = table_scope(&t, &t.def.name);
        let mut b = Binder::new(params);
        b.values_base = Some(t.def.columns.len());
        let mut set = Vec::new();
        for a in assigns {
            set.push(assignment(&t, a, &mut b, &scope)?);
        }
        OnDup::Update(set)
    } else if ins.ignore {
        OnDup::Ignore
    } else {
        OnDup::Error
    };
    Ok(InsertPlan {
        table: t,
        cols,
        source,
        on_dup,
        view_check: None,
    })
}

pub(crate) fn assignment(
    t: &Table,
    a: &ast::Assignment,
    b: &mut Binder,
    scope: &Scope,
) -> Result<(usize, Expr)> {
    let ast::AssignmentTarget::ColumnName(n) = &a.target else {
        return Err(SqlError::unsupported("tuple assignment"));
    };
    let cname = n.0.last().map(|p| p.to_string()).unwrap_or_default();
    let cname = cname.trim_matches('`');
    let c = t
        .def
        .column(cname)
        .ok_or_else(|| SqlError::unknown_column(cname, "field list"))?;
    let e = if is_default_kw(&a.value) {
        Expr::Const(t.def.columns[c].default.clone().unwrap_or(Value::Null))
    } else {
        let x = annotate(b.expr(&a.value, scope)?, Ctx::new(&t.def.columns))?;
        stored_as(x, &t.def.columns[c].ty)
    };
    Ok((c, e))
}

/// A hex or bit literal stored into a numeric column is its number (MySQL:
/// `INSERT INTO t (i) VALUES (0x41)` stores 65); other values unchanged.
fn stored_as(e: Expr, ty: &rel::value::ColumnType) -> Expr {
    use rel::value::TypeKind as K;
    if ty.is_integer() || matches!(ty.kind, K::Float | K::Double | K::Decimal) {
        crate::bind::hex_number(e)
    } else {
        e
    }
}

/// The value a column gets when an INSERT does not give one.
pub(crate) fn implicit_default(t: &Table, c: usize, env: &dyn Env) -> Result<Value> {
    let col = &t.def.columns[c];
    if col.default_now {
        return Ok(Value::DateTime(val::datetime_from_unix_micros(
            env.now_micros() / 1_000_000 * 1_000_000,
        )));
    }
    match &col.default {
        Some(v) => Ok(v.clone()),
        None if col.nullable || col.auto_increment => Ok(Value::Null),
        // MariaDB: a NOT NULL ENUM without DEFAULT takes its first member.
        None if col.ty.kind == rel::TypeKind::Enum => {
            Ok(Value::Bytes(col.ty.members.get(1).to_vec()))
        }
        None => Err(SqlError::no_default(&col.name)),
    }
}

/// Result of an INSERT.
#[derive(Debug, Default)]
pub struct InsertResult {
    pub affected: u64,
    pub first_auto_id: Option<u64>,
    pub duplicates: u64,
    pub records: u64,
    /// Duplicate-key and foreign key errors turned into warnings by IGNORE.
    pub ignored: Vec<SqlError>,
    /// 1364 (a NOT NULL column without a default not given) was warned about:
    /// MariaDB warns once per statement.
    warned_no_default: bool,
}

/// Runs an INSERT.
pub fn insert(p: &InsertPlan, txn: &mut Txn, env: &dyn Env, w: Writer) -> Result<InsertResult> {
    let mut ins = Inserter::new(p, env, w)?;
    match &p.source {
        InsertSource::Values(rows) => {
            // MariaDB: NULL for a NOT NULL column fails a single-row INSERT ... VALUES
            // even without strict mode (IGNORE aside).
            ins.how.null_default &= rows.len() > 1 || ins.ignore;
            for (rn, r) in rows.iter().enumerate() {
                // KILL and the statement's deadline (not a row read).
                env.interrupted()?;
                let given = r
                    .iter()
                    .map(|e| e.as_ref().map(|e| e.eval(&[], env)).transpose())
                    .collect::<Result<Vec<_>>>()?;
                ins.row(txn, rn, given, None)?;
            }
        }
        InsertSource::Select(sp) => {
            // The selected rows are spooled (to disk past tmp_table_size) before any is
            // inserted: memory stays bounded and the SELECT never sees its own inserts.
            let mut spool = Spool(Sorter::new(vec![], tmp_table_size(env), None));
            spool.0.set_interrupt(env.interrupt());
            select::execute(sp, txn, env, &mut spool)?;
            let mut rn = 0;
            spool.0.finish(&mut |row| {
                ins.row(txn, rn, row.into_iter().map(Some).collect(), None)?;
                rn += 1;
                Ok(true)
            })?;
        }
    }
    Ok(ins.res)
}

/// Inserts rows one at a time for an INSERT or LOAD DATA (`InsertPlan`'s
/// source unused): defaults, AUTO_INCREMENT, conversions under sql_mode,
/// CHECK constraints, duplicates handling, transaction limits.
pub(crate) struct Inserter<'p> {
    p: &'p InsertPlan,
    env: &'p dyn Env,
    w: Writer<'p>,
    checks: Checks,
    pub(crate) how: Storing,
    pub(crate) ignore: bool,
    auto_zero: bool,
    limits: TxnLimits,
    pub(crate) res: InsertResult,
}

impl<'p> Inserter<'p> {
    pub(crate) fn new(p: &'p InsertPlan, env: &'p dyn Env, w: Writer<'p>) -> Result<Inserter<'p>> {
        let checks = Checks::of(&p.table.def)?.with_view(p.view_check.as_ref());
        let mode = env.sql_mode();
        let ignore = matches!(p.on_dup, OnDup::Ignore);
        Ok(Inserter {
            p,
            env,
            w,
            checks,
            how: Storing::new(mode, ignore),
            ignore,
            auto_zero: !mode.has(crate::sqlmode::SqlMode::NO_AUTO_VALUE_ON_ZERO),
            limits: TxnLimits::of(env),
            res: InsertResult::default(),
        })
    }

    /// Inserts row `rn` (from 0): one value per column of the plan's list
    /// (`None`: the column's default); into `bulk` instead of the
    /// transaction when given (duplicates are then found when it finishes).
    pub(crate) fn row(
        &mut self,
        txn: &mut Txn,
        rn: usize,
        given: Vec<Option<Value>>,
        bulk: Option<&mut crate::bulk::BulkLoad>,
    ) -> Result<()> {
        insert_row(
            self.p,
            txn,
            self.env,
            (self.w, &self.checks, self.how, self.auto_zero),
            rn,
            given,
            &mut self.res,
            bulk,
        )?;
        self.limits.after_write(txn)
    }
}

/// Inserts one row of an INSERT (row number `rn` from 0).
fn insert_row(
    p: &InsertPlan,
    txn: &mut Txn,
    env: &dyn Env,
    (w, checks, how, auto_zero): (Writer, &Checks, Storing, bool),
    rn: usize,
    given: Vec<Option<Value>>,
    res: &mut InsertResult,
    bulk: Option<&mut crate::bulk::BulkLoad>,
) -> Result<()> {
    let t = &p.table;
    let ncols = t.def.columns.len();
    let ai = t.def.auto_inc_column();
    {
        let rownum = rn + 1;
        res.records += 1;
        let mut row = vec![Value::Null; ncols];
        let mut set = vec![false; ncols];
        for (i, v) in given.into_iter().enumerate() {
            let c = p.cols[i];
            if let Some(v) = v {
                row[c] = v;
                set[c] = true;
            }
        }
        for c in 0..ncols {
            if !set[c] {
                row[c] = match implicit_default(t, c, env) {
                    // Without strict mode (or with IGNORE) the type's implicit
                    // default, with a warning once per statement (MariaDB).
                    Err(e) if how.adjust && e.code == crate::error::ER_NO_DEFAULT_FOR_FIELD => {
                        if !res.warned_no_default {
                            res.warned_no_default = true;
                            env.warn(e);
                        }
                        zero_value(&t.def.columns[c])
                    }
                    r => r?,
                };
            }
        }
        if let Some(a) = ai {
            // NO_AUTO_VALUE_ON_ZERO: only NULL generates a value, 0 is stored.
            let zero = row[a].is_null() || (auto_zero && row[a].to_i128() == Some(0));
            if zero {
                let id = t.reserve_auto_inc(1);
                row[a] = Value::UInt(id);
                res.first_auto_id.get_or_insert(id);
            } else if let Some(v) = row[a].to_i128() {
                if v > 0 {
                    t.note_auto_inc(v as u64);
                }
            }
        }
        for (c, v) in row.iter_mut().enumerate() {
            let col = &t.def.columns[c];
            // INSERT IGNORE and non-strict modes adjust a value that does not fit
            // (an ENUM value that is not a member stores '', a SET value keeps its
            // members) with a warning (MariaDB).
            *v = store(std::mem::replace(v, Value::Null), col, rownum, how, env)?;
        }
        // INSERT IGNORE skips a row a CHECK refuses, with a warning.
        if let (OnDup::Ignore, Err(e)) = (&p.on_dup, checks.verify(&row, env)) {
            if e.code != crate::error::ER_CONSTRAINT_FAILED {
                return Err(e);
            }
            res.ignored.push(e);
            return Ok(());
        }
        if !matches!(p.on_dup, OnDup::Update(_)) {
            checks.verify(&row, env)?;
        }
        if let Some(b) = bulk {
            b.add(&row)?;
            res.affected += 1;
            return Ok(());
        }
        match &p.on_dup {
            OnDup::Error => {
                w.insert(txn, t, &row)?;
                res.affected += 1;
            }
            OnDup::Ignore => {
                // A foreign key error (1452: no parent; 1451: the expired row
                // of a TTL table the new one replaces still has RESTRICT
                // children) skips the row with a warning, counted as a
                // duplicate, as MariaDB's IGNORE does; what the failed write
                // buffered (the replaced row's cascades, its binlog row) is
                // undone and the statement goes on.
                let sp = txn.savepoint();
                match w.insert(txn, t, &row) {
                    Ok(_) => res.affected += 1,
                    Err(e @ rel::Error::DupKey(..)) => {
                        res.duplicates += 1;
                        res.ignored.push(SqlError::from(e));
                    }
                    Err(e @ (rel::Error::NoParent(_) | rel::Error::RowReferenced(_))) => {
                        if !txn.rollback_to_savepoint(&sp).map_err(SqlError::from)? {
                            return Err(e.into());
                        }
                        res.duplicates += 1;
                        res.ignored.push(SqlError::from(e));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            OnDup::Replace => {
                let mut guard = 0;
                while let Some((old, _)) = rt::find_conflict(txn, t, &row)? {
                    w.delete(txn, t, &old)?;
                    res.affected += 1;
                    res.duplicates += 1;
                    guard += 1;
                    if guard > 64 {
                        return Err(SqlError::internal("REPLACE did not converge"));
                    }
                }
                w.insert(txn, t, &row)?;
                res.affected += 1;
            }
            OnDup::Update(assigns) => match rt::find_conflict(txn, t, &row)? {
                None => {
                    checks.verify(&row, env)?;
                    w.insert(txn, t, &row)?;
                    res.affected += 1;
                }
                Some((old, _)) => {
                    res.duplicates += 1;
                    let mut scope_row = old.values.clone();
                    scope_row.extend(row.iter().cloned());
                    let mut new = old.values.clone();
                    for (c, e) in assigns {
                        let v = e.eval(&scope_row, env)?;
                        new[*c] = store(v, &t.def.columns[*c], rownum, how, env)?;
                        scope_row[*c] = new[*c].clone();
                    }
                    if new != old.values {
                        touch_on_update(t, &old, &mut new, assigns.iter().map(|(c, _)| *c), env);
                        checks.verify(&new, env)?;
                        w.update(txn, t, &old, &new)?;
                        res.affected += 2;
                    }
                }
            },
        }
    }
    Ok(())
}

/// tmp_table_size: memory for rows a statement holds before spilling them to disk.
pub(crate) fn tmp_table_size(env: &dyn Env) -> usize {
    env.sys_var("tmp_table_size", false)
        .and_then(|v| v.to_i128())
        .map_or(16 << 20, |b| b.clamp(0, 1 << 40) as usize)
}

/// Rows held for a statement in bounded memory (a `Sorter`, with or without keys).
pub(crate) struct Spool(pub(crate) Sorter);

impl ResultSink for Spool {
    fn columns(&mut self, _: &[crate::result::ColumnInfo]) -> Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.0.push((row.to_vec(), vec![]))
    }
}

/// A transaction's size limits, read once per statement (MyRocks' variables):
/// `rocksdb_max_row_locks` (rows locked), `rocksdb_write_batch_max_bytes` (0 = no
/// limit) and, for an autocommit statement, `rocksdb_commit_in_the_middle` (commit
/// every `rocksdb_bulk_load_size` rows; a failure leaves the rows before it).
pub(crate) struct TxnLimits {
    max_locks: usize,
    max_bytes: usize,
    /// strata_max_txn_memory: the transaction's estimated memory (its write batch, the
    /// index over it, its undo log and its row locks).
    max_memory: usize,
    commit_every: Option<u64>,
    written: u64,
}

impl TxnLimits {
    pub(crate) fn of(env: &dyn Env) -> TxnLimits {
        let int = |name: &str, default: i128| {
            env.sys_var(name, false)
                .and_then(|v| v.to_i128())
                .unwrap_or(default)
                .max(0)
        };
        let middle = int("rocksdb_commit_in_the_middle", 0) != 0 && env.autocommit_statement();
        TxnLimits {
            max_locks: int("rocksdb_max_row_locks", 1 << 20).min(usize::MAX as i128) as usize,
            max_bytes: int("rocksdb_write_batch_max_bytes", 0).min(usize::MAX as i128) as usize,
            max_memory: int("strata_max_txn_memory", 256 << 20).min(usize::MAX as i128) as usize,
            commit_every: middle.then(|| int("rocksdb_bulk_load_size", 1000).max(1) as u64),
            written: 0,
        }
    }

    /// Called after each row written.
    pub(crate) fn after_write(&mut self, txn: &mut Txn) -> Result<()> {
        self.written += 1;
        if let Some(n) = self.commit_every {
            if self.written.is_multiple_of(n) {
                return txn.commit_and_continue().map_err(SqlError::from);
            }
        }
        self.check_locks(txn)?;
        if self.max_bytes > 0 && txn.buffered_bytes() > self.max_bytes {
            return Err(SqlError::txn_too_big(format!(
                "The transaction's writes exceed rocksdb_write_batch_max_bytes ({} bytes)",
                self.max_bytes
            )));
        }
        Ok(())
    }

    /// Fails once the transaction holds more row locks, or more memory, than allowed.
    fn check_locks(&self, txn: &Txn) -> Result<()> {
        // Measured (bench/txn-memory, 2M-row INSERT ... SELECT): beside the batch itself
        // about 110 bytes per buffered write (its index and undo entries) and 250 per
        // row lock (the lock table entry and the transaction's list of its locks).
        let memory =
            txn.buffered_bytes() + txn.write_count() as usize * 110 + txn.lock_count() * 250;
        if self.max_memory > 0 && memory > self.max_memory {
            return Err(SqlError::txn_too_big(format!(
                "The transaction needs more than strata_max_txn_memory ({} bytes)",
                self.max_memory
            )));
        }
        if txn.lock_count() > self.max_locks {
            return Err(SqlError::txn_too_big(format!(
                "The transaction holds more than rocksdb_max_row_locks ({}) row locks",
                self.max_locks
            )));
        }
        Ok(())
    }
}

fn touch_on_update(
    t: &Table,
    old: &Row,
    new: &mut [Value],
    assigned: impl Iterator<Item = usize>,
    env: &dyn Env,
) {
    let assigned: Vec<usize> = assigned.collect();
    for (c, col) in t.def.columns.iter().enumerate() {
        if col.on_update_now && !assigned.contains(&c) && new[c] == old.values[c] {
            new[c] = Value::DateTime(val::datetime_from_unix_micros(
                env.now_micros() / 1_000_000 * 1_000_000,
            ));
        }
    }
}

/// Plans an UPDATE.
pub fn plan_update(
    u: &ast::Update,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<ModifyPlan> {
    crate::accept::check_update(u)?;
    if let Some((u, check)) = crate::viewdml::update(u, st, cur_db)? {
        let mut p = plan_update(&u, st, cur_db, params)?;
        p.view_check = bind_check(check.as_ref(), &p.table)?;
        return Ok(p);
    }
    let (t, alias, hint) = single_table(&u.table, st, cur_db)?;
    let scope = table_scope(&t, &alias);
    let subs = crate::select::SubPlans::new(st, cur_db, params);
    let mut b = Binder::new(params);
    b.sub = Some(&subs);
    let me = crate::multidml::FromName {
        table: Some((t.def.db.clone(), t.def.name.clone())),
        alias: Some(alias.clone()),
    };
    let mut set = Vec::new();
    for a in &u.assignments {
        // A qualifier must name the table (and its database): 1054 as
        // MariaDB, never ignored.
        if let ast::AssignmentTarget::ColumnName(n) = &a.target {
            let parts = crate::stmt::name_parts(n);
            if let Some((_, qual)) = parts.split_last() {
                if !qual.is_empty() && crate::multidml::set_owner(&[&me], qual).is_none() {
                    return Err(SqlError::unknown_column(parts.join("."), "SET"));
                }
            }
        }
        set.push(assignment(&t, a, &mut b, &scope)?);
    }
    let p = finish_modify(
        t,
        scope,
        b,
        u.selection.as_ref(),
        &u.order_by,
        u.limit.as_ref(),
        set,
        hint,
    )?;
    let mut p = with_subqueries(p, subs.into_plans(), "UPDATE")?;
    p.ignore = matches!(u.or, Some(ast::SqliteOnConflict::Ignore));
    Ok(p)
}

/// A modification's subqueries; MySQL refuses one that reads the modified
/// table other than through a derived table (1093).
fn with_subqueries(
    mut p: ModifyPlan,
    subs: Vec<(crate::select::SelectPlan, crate::subquery::SubKind)>,
    verb: &str,
) -> Result<ModifyPlan> {
    if subs.iter().any(|(q, _)| reads_table(q, &p.table)) {
        let e = SqlError::update_table_used(&p.table.def.name);
        return Err(SqlError {
            msg: e.msg.replace("'UPDATE'", &format!("'{verb}'")),
            ..e
        });
    }
    p.subqueries = subs;
    Ok(p)
}

/// True when a subquery reads table `t` (other than through a derived table).
pub(crate) fn reads_table(s: &crate::select::SelectPlan, t: &Table) -> bool {
    let same = |x: &Table| x.def.db == t.def.db && x.def.name == t.def.name;
    s.table.as_deref().is_some_and(same)
        || s.join.iter().any(|j| j.derived.is_none() && same(&j.table))
        || s.subqueries.iter().any(|(q, _)| reads_table(q, t))
        || s.union.iter().any(|(_, q)| reads_table(q, t))
}

/// Plans a DELETE.
pub fn plan_delete(
    d: &ast::Delete,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<ModifyPlan> {
    crate::accept::check_delete(d)?;
    if let Some(d) = crate::viewdml::delete(d, st, cur_db)? {
        return plan_delete(&d, st, cur_db, params);
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    if from.len() != 1 || !d.tables.is_empty() || d.using.is_some() {
        return Err(SqlError::unsupported("multi-table DELETE"));
    }
    if !from[0].joins.is_empty() {
        return Err(SqlError::unsupported("multi-table DELETE"));
    }
    let (t, alias, hint) = single_table(&from[0], st, cur_db)?;
    let scope = table_scope(&t, &alias);
    let subs = crate::select::SubPlans::new(st, cur_db, params);
    let mut b = Binder::new(params);
    b.sub = Some(&subs);
    let p = finish_modify(
        t,
        scope,
        b,
        d.selection.as_ref(),
        &d.order_by,
        d.limit.as_ref(),
        vec![],
        hint,
    )?;
    with_subqueries(p, subs.into_plans(), "DELETE")
}

/// A view's CHECK OPTION condition bound over the table a write through
/// it changes.
fn bind_check(
    c: Option<&crate::viewdml::Check>,
    t: &Table,
) -> Result<Option<(String, String, Expr)>> {
    c.map(|c| crate::check::bind_view_check(c, &t.def))
        .transpose()
}

fn single_table(
    twj: &ast::TableWithJoins,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Result<(Arc<Table>, String, Option<crate::accept::IndexHint>)> {
    match &twj.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            let t = resolve_table(st, cur_db, name)?;
            let hint = crate::accept::check_table(&twj.relation, &t.def)?;
            let a = alias
                .as_ref()
                .map_or(t.def.name.clone(), |a| a.name.value.clone());
            Ok((t, a, hint))
        }
        _ => Err(SqlError::unsupported("derived tables")),
    }
}

fn finish_modify(
    t: Arc<Table>,
    scope: Scope,
    mut b: Binder,
    selection: Option<&ast::Expr>,
    order_by: &[ast::OrderByExpr],
    limit: Option<&ast::Expr>,
    set: Vec<(usize, Expr)>,
    hint: Option<crate::accept::IndexHint>,
) -> Result<ModifyPlan> {
    b.place = "where clause";
    let cx = Ctx::new(&t.def.columns);
    let filter = match selection {
        Some(w) => Some(annotate(b.expr(w, &scope)?, cx)?),
        None => None,
    };
    b.place = "order clause";
    let mut order = Vec::new();
    for o in order_by {
        order.push((
            annotate(b.expr(&o.expr, &scope)?, cx)?,
            matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
        ));
    }
    let limit = match limit {
        Some(l) => Some(b.expr(l, &Scope::default())?),
        None => None,
    };
    let plain: Option<Vec<(usize, bool)>> = order
        .iter()
        .map(|(e, d)| {
            if let Expr::Col(c) = e {
                Some((*c, *d))
            } else {
                None
            }
        })
        .collect();
    let types: Vec<_> = t.def.columns.iter().map(|c| c.ty.clone()).collect();
    let implied = crate::equality::with_implied(filter.as_ref(), &types);
    let access = access::choose(
        &t.def,
        implied.as_ref().or(filter.as_ref()),
        &[],
        plain.as_deref(),
        true,
        hint.as_ref(),
    );
    let order = order
        .into_iter()
        .map(|(e, d)| Ok((crate::collate::sort_key(e, cx)?, d)))
        .collect::<Result<Vec<_>>>()?;
    Ok(ModifyPlan {
        table: t,
        access,
        filter,
        set,
        order,
        limit,
        subqueries: Vec::new(),
        ignore: false,
        view_check: None,
    })
}

/// Writes an updated row when it changed (columns with ON UPDATE CURRENT_TIMESTAMP
/// that were not assigned are touched; AUTO_INCREMENT notes a larger value); true
/// when written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_update(
    txn: &mut Txn,
    t: &Table,
    (w, checks): (Writer, &Checks),
    old: &Row,
    mut new: Vec<Value>,
    assigned: &[usize],
    env: &dyn Env,
    limits: &mut TxnLimits,
) -> Result<bool> {
    if new == old.values {
        return Ok(false);
    }
    touch_on_update(t, old, &mut new, assigned.iter().copied(), env);
    checks.verify(&new, env)?;
    if let Some(a) = t.def.auto_inc_column() {
        if let Some(v) = new.get(a).and_then(|v| v.to_i128()).filter(|v| *v > 0) {
            t.note_auto_inc(v as u64);
        }
    }
    w.update(txn, t, old, &new)?;
    limits.after_write(txn)?;
    Ok(true)
}

/// The environment a statement's uncorrelated subqueries run in (None without any).
pub(crate) fn subquery_env<'e>(
    subqueries: &[(SelectPlan, crate::subquery::SubKind)],
    txn: &mut Txn,
    env: &'e dyn Env,
) -> Result<Option<crate::select::QueryEnv<'e>>> {
    if subqueries.is_empty() {
        return Ok(None);
    }
    crate::select::QueryEnv::for_subqueries(subqueries, txn, env).map(Some)
}

/// Runs an UPDATE or DELETE. Returns (rows matched, rows changed).
pub fn modify(p: &ModifyPlan, txn: &mut Txn, env: &dyn Env, w: Writer) -> Result<(u64, u64)> {
    let qenv = subquery_env(&p.subqueries, txn, env)?;
    let env: &dyn Env = qenv.as_ref().map_or(env, |q| q);
    let t = &p.table;
    let checks = if p.set.is_empty() {
        Checks::default()
    } else {
        Checks::of(&t.def)?.with_view(p.view_check.as_ref())
    };
    let limit = match &p.limit {
        Some(e) => Some(e.eval(&[], env)?.to_i128().unwrap_or(0).max(0) as u64),
        None => None,
    };
    let presorted = {
        let plain: Option<Vec<(usize, bool)>> = p
            .order
            .iter()
            .map(|(e, d)| {
                if let Expr::Col(c) = e {
                    Some((*c, *d))
                } else {
                    None
                }
            })
            .collect();
        plain.is_some_and(|o| access::satisfies_order(&t.def, &p.access, &o))
    };
    // The rows to change are spooled first (sorted when ORDER BY needs it, on disk
    // past tmp_table_size): changing rows while scanning an index they move in would
    // meet them again, and a million-row UPDATE must not hold a million rows.
    let sort = !p.order.is_empty() && !presorted;
    let dirs = if sort {
        p.order.iter().map(|(_, d)| *d).collect()
    } else {
        vec![]
    };
    // DELETE IGNORE ... LIMIT n deletes n rows: the rows a foreign key keeps do
    // not count (MariaDB), so its spool takes every matching row and the
    // deleting stops at the n-th delete.
    let delete_ignore = p.set.is_empty() && p.ignore;
    let keep = limit
        .filter(|_| !delete_ignore)
        .map(|l| l.min(usize::MAX as u64) as usize);
    let mut spool = Sorter::new(dirs, tmp_table_size(env), keep);
    spool.set_interrupt(env.interrupt());
    let mut taken = 0u64;
    // Rows matched so far: the row number in an UPDATE's warnings (MariaDB counts
    // every row read, also those the WHERE clause refuses).
    let mut examined = 0u64;
    let mut limits = TxnLimits::of(env);
    // Committing in the middle, rows are read without locks and each is locked, read
    // again at its latest version and re-checked just before it changes, so the locks
    // held never exceed one batch. Otherwise every row is locked as it is read.
    let middle = limits.commit_every.is_some();
    access::for_each_row(
        txn,
        t,
        &p.access,
        (!middle).then_some(LockMode::Exclusive),
        None,
        None,
        p.filter.as_ref(),
        &[],
        env,
        &mut |txn, row| {
            examined += 1;
            let keys = if sort {
                p.order
                    .iter()
                    .map(|(e, _)| e.eval(&row.values, env))
                    .collect::<Result<Vec<_>>>()?
            } else {
                vec![]
            };
            let mut vals = row.values;
            vals.push(row.hidden.map_or(Value::Null, Value::UInt));
            vals.push(Value::UInt(examined));
            spool.push((vals, keys))?;
            taken += 1;
            if !middle {
                limits.check_locks(txn)?;
            }
            Ok(!(!sort && !delete_ignore && limit.is_some_and(|l| taken >= l)))
        },
    )?;
    let (mut matched, mut changed) = (0u64, 0u64);
    let how = Storing::new(env.sql_mode(), p.ignore);
    spool.finish(&mut |mut vals| {
        let rownum = vals.pop().and_then(|v| v.to_i128()).unwrap_or(0) as usize;
        let hidden = match vals.pop() {
            Some(Value::UInt(h)) => Some(h),
            _ => None,
        };
        let mut old = Row::new(vals, hidden);
        if middle {
            let key = rt::pk_key(&t.def, &old.values, old.hidden)?;
            match rt::get(txn, &t.def, &key, Some(LockMode::Exclusive), None)? {
                Some(latest) => old = latest,
                None => return Ok(true),
            }
            if let Some(f) = &p.filter {
                if !accepts(&f.eval(&old.values, env)?) {
                    return Ok(true);
                }
            }
        }
        matched += 1;
        if p.set.is_empty() {
            // DELETE IGNORE keeps a row a foreign key holds (1451: a RESTRICT
            // child, also one a cascade reaches) with the warning and goes
            // on, as MariaDB; what its cascades buffered is undone.
            let sp = p.ignore.then(|| txn.savepoint());
            match w.delete(txn, t, &old) {
                Ok(_) => {
                    changed += 1;
                    limits.after_write(txn)?;
                }
                Err(e) => skip_refused(txn, sp.as_ref(), SqlError::from(e), env, true)?,
            }
            return Ok(!(delete_ignore && limit.is_some_and(|l| changed >= l)));
        }
        let mut new = old.values.clone();
        for (c, e) in &p.set {
            let v = e.eval(&new, env)?;
            new[*c] = store(v, &t.def.columns[*c], rownum, how, env)?;
        }
        let assigned: Vec<usize> = p.set.iter().map(|(c, _)| *c).collect();
        // UPDATE IGNORE leaves a row unchanged when its new values would duplicate
        // a key or fail a foreign key (1452 no parent, 1451 a RESTRICT child, also
        // one its cascades reach) silently, as MariaDB 10.11, or fail a CHECK
        // (with the warning); what the failed write buffered (a moved primary
        // key's delete, cascades) is undone.
        let sp = p.ignore.then(|| txn.savepoint());
        match write_update(txn, t, (w, &checks), &old, new, &assigned, env, &mut limits) {
            Ok(true) => changed += 1,
            Ok(false) => {}
            Err(e) => {
                let warn = e.code == crate::error::ER_CONSTRAINT_FAILED;
                skip_refused(txn, sp.as_ref(), e, env, warn)?
            }
        }
        Ok(true)
    })?;
    Ok((matched, changed))
}

/// Under IGNORE (`sp` is the savepoint taken before the row's write), undoes
/// the write of a row that a duplicate key, a CHECK or a foreign key refused
/// and warns with its error when `warn`; any other error, or one without
/// IGNORE, is returned.
fn skip_refused(
    txn: &mut Txn,
    sp: Option<&txn::Savepoint>,
    e: SqlError,
    env: &dyn Env,
    warn: bool,
) -> Result<()> {
    use crate::error::{
        ER_CONSTRAINT_FAILED, ER_DUP_ENTRY, ER_NO_REFERENCED_ROW_2, ER_ROW_IS_REFERENCED_2,
    };
    let Some(sp) = sp else {
        return Err(e);
    };
    if !matches!(
        e.code,
        ER_DUP_ENTRY | ER_CONSTRAINT_FAILED | ER_NO_REFERENCED_ROW_2 | ER_ROW_IS_REFERENCED_2
    ) || !txn.rollback_to_savepoint(sp).map_err(SqlError::from)?
    {
        return Err(e);
    }
    if warn {
        env.warn(e);
    }
    Ok(())
}
