//! INSERT (VALUES or SELECT; IGNORE; REPLACE; ON DUPLICATE KEY UPDATE),
//! UPDATE and DELETE (WHERE, ORDER BY, LIMIT) on one table. Rows to change
//! are found through an access path with exclusive locks and re-checked
//! at their latest committed version (InnoDB's "current read"), then
//! written through `rel::table`.
use crate::access::{self, Access};
use crate::bind::{Binder, Scope};
use crate::convert::for_store;
use crate::error::{Result, SqlError};
use crate::expr::{accepts, Env, Expr};
use crate::result::Collect;
use crate::select::{self, resolve_table, table_scope, SelectPlan};
use rel::catalog::{CatalogState, Table};
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
            row.push(if is_default_kw(&a.value) {
                None
            } else {
                Some(b.expr(&a.value, &empty)?)
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
                        return Err(SqlError::new(
                            1136,
                            "21S01",
                            format!("Column count doesn't match value count at row {}", i + 1),
                        ));
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for e in r {
                        row.push(if is_default_kw(e) {
                            None
                        } else {
                            Some(b.expr(e, &empty)?)
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
                    return Err(SqlError::new(
                        1136,
                        "21S01",
                        "Column count doesn't match value count at row 1",
                    ));
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
    })
}

fn assignment(
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
        b.expr(&a.value, scope)?
    };
    Ok((c, e))
}

/// The value a column gets when an INSERT does not give one.
fn implicit_default(t: &Table, c: usize, env: &dyn Env) -> Result<Value> {
    let col = &t.def.columns[c];
    if col.default_now {
        return Ok(Value::DateTime(val::datetime_from_unix_micros(
            env.now_micros() / 1_000_000 * 1_000_000,
        )));
    }
    match &col.default {
        Some(v) => Ok(v.clone()),
        None if col.nullable || col.auto_increment => Ok(Value::Null),
        None => Err(SqlError::new(
            1364,
            "HY000",
            format!("Field '{}' doesn't have a default value", col.name),
        )),
    }
}

/// Result of an INSERT.
#[derive(Debug, Default)]
pub struct InsertResult {
    pub affected: u64,
    pub first_auto_id: Option<u64>,
    pub duplicates: u64,
    pub records: u64,
    /// Duplicate-key errors turned into warnings by IGNORE.
    pub ignored: Vec<String>,
}

/// Runs an INSERT.
pub fn insert(p: &InsertPlan, txn: &mut Txn, env: &dyn Env) -> Result<InsertResult> {
    let t = &p.table;
    let ncols = t.def.columns.len();
    let ai = t.def.auto_inc_column();
    let mut res = InsertResult::default();
    let source_rows: Vec<Vec<Option<Value>>> = match &p.source {
        InsertSource::Values(rows) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| e.as_ref().map(|e| e.eval(&[], env)).transpose())
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?,
        InsertSource::Select(sp) => {
            let mut sink = Collect::default();
            select::execute(sp, txn, env, &mut sink)?;
            sink.rows
                .into_iter()
                .map(|r| r.into_iter().map(Some).collect())
                .collect()
        }
    };
    for (rn, given) in source_rows.into_iter().enumerate() {
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
                row[c] = implicit_default(t, c, env)?;
            }
        }
        if let Some(a) = ai {
            let zero = row[a].is_null() || row[a].to_i128() == Some(0);
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
            *v = for_store(std::mem::replace(v, Value::Null), &t.def.columns[c], rownum)?;
        }
        match &p.on_dup {
            OnDup::Error => {
                rt::insert(txn, t, &row)?;
                res.affected += 1;
            }
            OnDup::Ignore => match rt::insert(txn, t, &row) {
                Ok(_) => res.affected += 1,
                Err(e @ rel::Error::DupKey(..)) => {
                    res.duplicates += 1;
                    res.ignored.push(e.to_string());
                }
                Err(e) => return Err(e.into()),
            },
            OnDup::Replace => {
                let mut guard = 0;
                while let Some((old, _)) = rt::find_conflict(txn, t, &row)? {
                    rt::delete(txn, t, &old)?;
                    res.affected += 1;
                    res.duplicates += 1;
                    guard += 1;
                    if guard > 64 {
                        return Err(SqlError::internal("REPLACE did not converge"));
                    }
                }
                rt::insert(txn, t, &row)?;
                res.affected += 1;
            }
            OnDup::Update(assigns) => match rt::find_conflict(txn, t, &row)? {
                None => {
                    rt::insert(txn, t, &row)?;
                    res.affected += 1;
                }
                Some((old, _)) => {
                    res.duplicates += 1;
                    let mut scope_row = old.values.clone();
                    scope_row.extend(row.iter().cloned());
                    let mut new = old.values.clone();
                    for (c, e) in assigns {
                        let v = e.eval(&scope_row, env)?;
                        new[*c] = for_store(v, &t.def.columns[*c], rownum)?;
                        scope_row[*c] = new[*c].clone();
                    }
                    if new != old.values {
                        touch_on_update(t, &old, &mut new, assigns.iter().map(|(c, _)| *c), env);
                        rt::update(txn, t, &old, &new)?;
                        res.affected += 2;
                    }
                }
            },
        }
    }
    Ok(res)
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
    let (t, alias, hint) = single_table(&u.table, st, cur_db)?;
    let scope = table_scope(&t, &alias);
    let mut b = Binder::new(params);
    let mut set = Vec::new();
    for a in &u.assignments {
        set.push(assignment(&t, a, &mut b, &scope)?);
    }
    finish_modify(
        t,
        scope,
        b,
        u.selection.as_ref(),
        &u.order_by,
        u.limit.as_ref(),
        set,
        hint,
    )
}

/// Plans a DELETE.
pub fn plan_delete(
    d: &ast::Delete,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<ModifyPlan> {
    crate::accept::check_delete(d)?;
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
    let b = Binder::new(params);
    finish_modify(
        t,
        scope,
        b,
        d.selection.as_ref(),
        &d.order_by,
        d.limit.as_ref(),
        vec![],
        hint,
    )
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
    let filter = match selection {
        Some(w) => Some(b.expr(w, &scope)?),
        None => None,
    };
    b.place = "order clause";
    let mut order = Vec::new();
    for o in order_by {
        order.push((
            b.expr(&o.expr, &scope)?,
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
    let access = access::choose(
        &t.def,
        filter.as_ref(),
        &[],
        plain.as_deref(),
        true,
        hint.as_ref(),
    );
    Ok(ModifyPlan {
        table: t,
        access,
        filter,
        set,
        order,
        limit,
    })
}

/// Runs an UPDATE or DELETE. Returns (rows matched, rows changed).
pub fn modify(p: &ModifyPlan, txn: &mut Txn, env: &dyn Env) -> Result<(u64, u64)> {
    let t = &p.table;
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
    let mut targets: Vec<Row> = Vec::new();
    access::for_each_row(
        txn,
        t,
        &p.access,
        Some(LockMode::Exclusive),
        None,
        &[],
        env,
        &mut |_txn, row| {
            if let Some(f) = &p.filter {
                if !accepts(&f.eval(&row.values, env)?) {
                    return Ok(true);
                }
            }
            targets.push(row);
            Ok(!(presorted && limit.is_some_and(|l| targets.len() as u64 >= l)))
        },
    )?;
    if !p.order.is_empty() && !presorted {
        let mut keyed = targets
            .into_iter()
            .map(|r| {
                let k = p
                    .order
                    .iter()
                    .map(|(e, _)| e.eval(&r.values, env))
                    .collect::<Result<Vec<_>>>()?;
                Ok((k, r))
            })
            .collect::<Result<Vec<_>>>()?;
        keyed.sort_by(|a, b| {
            for (i, (_, d)) in p.order.iter().enumerate() {
                let o = crate::sort::sort_cmp(&a.0[i], &b.0[i]);
                if o.is_ne() {
                    return if *d { o.reverse() } else { o };
                }
            }
            std::cmp::Ordering::Equal
        });
        targets = keyed.into_iter().map(|(_, r)| r).collect();
    }
    if let Some(l) = limit {
        targets.truncate(l as usize);
    }
    let matched = targets.len() as u64;
    let mut changed = 0;
    for (i, old) in targets.iter().enumerate() {
        if p.set.is_empty() {
            rt::delete(txn, t, old)?;
            changed += 1;
            continue;
        }
        let mut new = old.values.clone();
        for (c, e) in &p.set {
            let v = e.eval(&new, env)?;
            new[*c] = for_store(v, &t.def.columns[*c], i + 1)?;
        }
        if new != old.values {
            touch_on_update(t, old, &mut new, p.set.iter().map(|(c, _)| *c), env);
            if let Some(a) = t.def.auto_inc_column() {
                if let Some(v) = new[a].to_i128() {
                    if v > 0 {
                        t.note_auto_inc(v as u64);
                    }
                }
            }
            rt::update(txn, t, old, &new)?;
            changed += 1;
        }
    }
    Ok((matched, changed))
}
