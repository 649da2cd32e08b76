//! Multi-table UPDATE (`UPDATE t1 JOIN t2 ON ... SET t1.a = t2.b`, `UPDATE t1, t2
//! SET ...`) and DELETE (`DELETE t1 FROM t1 JOIN t2 ...`, `DELETE t1, t2 FROM ...`,
//! `DELETE FROM t1 USING t1, t2 ...`). The join is planned as a locking SELECT of
//! every table's columns (`SELECT a.*, b.* FROM <join> WHERE ... FOR UPDATE`): the
//! rows of the tables changed are read under exclusive locks and those of the
//! tables only read under shared locks, as InnoDB does. The joined rows are spooled
//! (bounded memory), then each target row is changed once, at the first joined row
//! that matched it: it is read again at its latest version (a cascade may have
//! changed or deleted it) and written through `rel::fk::Writer`. SET assignments
//! are evaluated in order over the joined row, each seeing the ones before it.
//! ORDER BY and LIMIT are MySQL's error 1221; a derived table may be joined but
//! not changed (1288).
use crate::bind::{Binder, Scope};
use crate::check::Checks;
use crate::dml::{reads_table, subquery_env, tmp_table_size, write_update, Spool, TxnLimits};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::select::{self, resolve_table, table_scope, SelectPlan};
use crate::sort::Sorter;
use crate::store::{store, Storing};
use crate::subquery::SubKind;
use rel::catalog::{CatalogState, Table};
use rel::fk::Writer;
use rel::table as rt;
use rel::value::Value;
use sqlparser::ast;
use std::collections::HashSet;
use std::sync::Arc;
use txn::{LockMode, Txn};

/// A table changed: its definition and the position of its first column in the
/// joined row.
pub type Target = (Arc<Table>, usize);

/// A planned multi-table UPDATE or DELETE.
#[derive(Debug, Clone)]
pub struct MultiPlan {
    /// The join, selecting every column of every FROM table in FROM order.
    pub select: SelectPlan,
    /// The tables changed: (table, position of its first column in the joined row).
    pub targets: Vec<Target>,
    /// UPDATE: (target, column, value over the joined row), in SET order. Empty
    /// for DELETE.
    pub set: Vec<(usize, usize, crate::expr::Expr)>,
    /// Uncorrelated subqueries of SET, run before the first row.
    pub subqueries: Vec<(SelectPlan, SubKind)>,
}

impl MultiPlan {
    /// True for an UPDATE.
    pub fn is_update(&self) -> bool {
        !self.set.is_empty()
    }
}

/// True when an UPDATE names more than one table (or a join).
pub fn is_multi_update(u: &ast::Update) -> bool {
    !u.table.joins.is_empty()
}

/// True when a DELETE has the multi-table form.
pub fn is_multi_delete(d: &ast::Delete) -> bool {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    !d.tables.is_empty() || d.using.is_some() || from.len() != 1 || !from[0].joins.is_empty()
}

/// A FROM item: a table (None for a derived table), the name it goes by and its
/// columns' names.
struct FromTable {
    table: Option<Arc<Table>>,
    alias: String,
    /// How targets name it (`delete_target`, `set_owner`).
    name: FromName,
    /// Position of its first column in the joined row.
    base: usize,
    scope: Scope,
}

fn from_tables(
    from: &[ast::TableWithJoins],
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<Vec<FromTable>> {
    let mut out: Vec<FromTable> = Vec::new();
    let mut base = 0;
    // The join row would not be in FROM order (`select::from` reads a RIGHT
    // JOIN's right operand first).
    let right = from.iter().flat_map(|twj| &twj.joins).any(|j| {
        matches!(
            j.join_operator,
            ast::JoinOperator::Right(_) | ast::JoinOperator::RightOuter(_)
        )
    });
    if right {
        return Err(SqlError::unsupported(
            "RIGHT JOIN in a multi-table UPDATE or DELETE",
        ));
    }
    let relations = from.iter().flat_map(|twj| {
        std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation))
    });
    for r in relations {
        let (table, alias, scope, fname) = match r {
            ast::TableFactor::Table { name, alias, .. } => {
                select::view::refuse_write(st, cur_db, name, "multi-table UPDATE or DELETE")?;
                let table = resolve_table(st, cur_db, name)?;
                let fname = FromName {
                    table: Some((table.def.db.clone(), table.def.name.clone())),
                    alias: alias.as_ref().map(|a| a.name.value.clone()),
                };
                let alias = fname.name().to_string();
                let scope = table_scope(&table, &alias);
                (Some(table), alias, scope, fname)
            }
            ast::TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                ..
            } => {
                let alias = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .ok_or_else(SqlError::derived_alias)?;
                // Planned here for its column names only; the join plans it again.
                let p = select::plan(subquery, st, cur_db, params)?;
                let cols = p.columns.iter().map(|c| (alias.clone(), c.name.clone()));
                (
                    None,
                    alias.clone(),
                    Scope {
                        cols: cols.collect(),
                        types: Vec::new(),
                        hidden: Vec::new(),
                    },
                    FromName {
                        table: None,
                        alias: Some(alias),
                    },
                )
            }
            _ => {
                return Err(SqlError::unsupported(
                    "this table reference in a multi-table UPDATE or DELETE",
                ))
            }
        };
        if out.iter().any(|f| f.alias.eq_ignore_ascii_case(&alias)) {
            return Err(SqlError::duplicate_alias(&alias));
        }
        let width = scope.cols.len();
        out.push(FromTable {
            table,
            alias,
            name: fname,
            base,
            scope,
        });
        base += width;
    }
    Ok(out)
}

/// A FROM item as the targets of a multi-table statement name it: its
/// table (database, name; None for a derived table) and its alias. The
/// planner and the privilege check (`account::rows`) resolve targets with
/// the same functions, so they always agree on the table written.
#[derive(Debug, Clone)]
pub struct FromName {
    pub table: Option<(String, String)>,
    pub alias: Option<String>,
}

impl FromName {
    /// The name its columns are qualified with (alias, else table name).
    pub fn name(&self) -> &str {
        match (&self.alias, &self.table) {
            (Some(a), _) => a,
            (None, Some((_, t))) => t,
            (None, None) => "",
        }
    }
}

/// The FROM item a multi-table DELETE target (`t` or `db.t`) names, as
/// MariaDB matches them: `db.t` only an item without an alias, of that
/// database and name; `t` an item's alias, or an item without one named
/// `t` in the current database (1046 without one). None: 1109 `Unknown
/// table 't' in MULTI DELETE`; two: 1066.
pub fn delete_target(
    items: &[&FromName],
    target: &[String],
    cur_db: Option<&str>,
) -> Result<usize> {
    let (db, name) = match target {
        [t] => (cur_db.ok_or_else(SqlError::no_db)?, t.as_str()),
        [d, t] => (d.as_str(), t.as_str()),
        _ => return Err(SqlError::parse("bad table name")),
    };
    let qualified = target.len() == 2;
    let mut hit = None;
    for (i, f) in items.iter().enumerate() {
        let same = match (&f.alias, &f.table) {
            (Some(_), _) if qualified => false,
            (Some(a), _) => a.eq_ignore_ascii_case(name),
            (None, Some((d, t))) => d == db && t.eq_ignore_ascii_case(name),
            (None, None) => false,
        };
        if same {
            if hit.is_some() {
                return Err(SqlError::duplicate_alias(name));
            }
            hit = Some(i);
        }
    }
    hit.ok_or_else(|| SqlError::unknown_table_in(name, "MULTI DELETE"))
}

/// The FROM item an UPDATE column's qualifier (`t` or `db.t`) names: the
/// item going by that name (alias or table name), of that database when
/// one is given (MariaDB's rule; a derived table has none). None: 1054
/// `Unknown column 'db.t.c' in 'SET'`.
pub fn set_owner(items: &[&FromName], qual: &[String]) -> Option<usize> {
    let (db, name) = match qual {
        [t] => (None, t),
        [d, t] => (Some(d.as_str()), t),
        _ => return None,
    };
    items.iter().position(|f| {
        f.name().eq_ignore_ascii_case(name)
            && db.is_none_or(|d| f.table.as_ref().is_some_and(|(td, _)| td == d))
    })
}

/// `SELECT a.*, b.* ... FROM <from> WHERE <selection> FOR UPDATE`, keeping the
/// clauses' own nodes (their `?` positions bind to the statement's parameters).
fn join_query(
    from: Vec<ast::TableWithJoins>,
    selection: Option<ast::Expr>,
    tables: &[FromTable],
) -> Result<ast::Query> {
    let cols: Vec<String> = tables
        .iter()
        .map(|t| format!("`{}`.*", t.alias.replace('`', "``")))
        .collect();
    let text = format!("SELECT {} FROM dual FOR UPDATE", cols.join(", "));
    let dialect = crate::dialect::StrataDialect::default();
    let mut stmts = sqlparser::parser::Parser::parse_sql(&dialect, &text)
        .map_err(|e| SqlError::internal(format!("multi-table statement: {e}")))?;
    let Some(ast::Statement::Query(mut q)) = stmts.pop() else {
        return Err(SqlError::internal("multi-table statement: no query"));
    };
    let ast::SetExpr::Select(s) = &mut *q.body else {
        return Err(SqlError::internal("multi-table statement: no select"));
    };
    s.from = from;
    s.selection = selection;
    Ok(*q)
}

/// Plans the join and checks the targets; `targets` pick FROM items
/// (`delete_target`, `set_owner`).
#[allow(clippy::too_many_arguments)]
fn plan_join(
    from: &[ast::TableWithJoins],
    tables: &[FromTable],
    selection: Option<&ast::Expr>,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
    targets: &[usize],
    verb: &str,
) -> Result<(SelectPlan, Vec<Target>)> {
    let mut chosen: Vec<Target> = Vec::new();
    for &i in targets {
        let f = tables
            .get(i)
            .ok_or_else(|| SqlError::internal("target outside the join"))?;
        let Some(table) = &f.table else {
            return Err(SqlError::not_updatable(&f.alias, verb));
        };
        if table.def.hidden_pk {
            return Err(SqlError::unsupported(format!(
                "multi-table {verb} of a table without a primary key ({})",
                f.alias
            )));
        }
        if !chosen.iter().any(|(_, b)| *b == f.base) {
            chosen.push((table.clone(), f.base));
        }
    }
    let q = join_query(from.to_vec(), selection.cloned(), tables)?;
    let mut select = select::plan(&q, st, cur_db, params)?;
    // Tables only read are read under shared locks.
    for j in &mut select.join {
        j.shared = !targets
            .iter()
            .any(|&i| tables[i].alias.eq_ignore_ascii_case(&j.alias));
    }
    let changed = |s: &SelectPlan| chosen.iter().find(|(t, _)| reads_table(s, t));
    if let Some((t, _)) = select.subqueries.iter().find_map(|(s, _)| changed(s)) {
        return Err(SqlError::update_table_used(&t.def.name));
    }
    Ok((select, chosen))
}

fn scope_of(tables: &[FromTable]) -> Scope {
    let mut scope = Scope::default();
    for f in tables {
        scope.cols.extend(f.scope.cols.iter().cloned());
    }
    scope
}

fn refuse_order_limit(
    order_by: &[ast::OrderByExpr],
    limit: Option<&ast::Expr>,
    verb: &str,
) -> Result<()> {
    if !order_by.is_empty() {
        return Err(SqlError::wrong_usage(verb, "ORDER BY"));
    }
    if limit.is_some() {
        return Err(SqlError::wrong_usage(verb, "LIMIT"));
    }
    Ok(())
}

/// Plans a multi-table UPDATE.
pub fn plan_update(
    u: &ast::Update,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<MultiPlan> {
    let ast::Update {
        update_token: _,
        optimizer_hints: _,
        table,
        assignments,
        from,
        selection,
        returning,
        output,
        or,
        order_by,
        limit,
    } = u;
    if from.is_some() || returning.is_some() || output.is_some() || or.is_some() {
        return Err(SqlError::unsupported("this UPDATE form"));
    }
    refuse_order_limit(order_by, limit.as_ref(), "UPDATE")?;
    let from = std::slice::from_ref(table);
    let tables = from_tables(from, st, cur_db, params)?;
    let scope = scope_of(&tables);
    // Each assignment's column decides its table: a qualifier names a FROM
    // item (its database too, when given), else 1054 as MariaDB.
    let mut cols = Vec::new();
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let parts = crate::stmt::name_parts(n);
        let unknown = || SqlError::unknown_column(parts.join("."), "SET");
        let Some((col, qual)) = parts.split_last() else {
            return Err(SqlError::parse("empty column name"));
        };
        let pos = if qual.is_empty() {
            scope.find(None, col)?.ok_or_else(unknown)?
        } else {
            let names: Vec<&FromName> = tables.iter().map(|f| &f.name).collect();
            let i = set_owner(&names, qual).ok_or_else(unknown)?;
            let f = &tables[i];
            let c = f.scope.find(None, col)?.ok_or_else(unknown)?;
            f.base + c
        };
        let i = tables
            .iter()
            .rposition(|f| f.base <= pos)
            .ok_or_else(|| SqlError::internal("column outside the join"))?;
        cols.push((i, tables[i].base, pos - tables[i].base));
    }
    let names: Vec<usize> = cols.iter().map(|(i, ..)| *i).collect();
    let (select, targets) = plan_join(
        from,
        &tables,
        selection.as_ref(),
        st,
        cur_db,
        params,
        &names,
        "UPDATE",
    )?;
    let subs = crate::select::SubPlans::new(st, cur_db, params);
    let mut b = Binder::new(params);
    b.sub = Some(&subs);
    b.place = "field list";
    // The joined row's column types, for the collations of SET expressions.
    let row_cols: Vec<rel::schema::Column> = select
        .columns
        .iter()
        .map(|ci| rel::schema::Column::plain(&ci.name, crate::types::column_type(ci.ty.clone())))
        .collect();
    let mut set = Vec::new();
    for (a, (_, base, c)) in assignments.iter().zip(cols) {
        let Some(ti) = targets.iter().position(|(_, b)| *b == base) else {
            return Err(SqlError::internal("assignment outside the targets"));
        };
        let t = &targets[ti].0;
        let e = if matches!(&a.value, ast::Expr::Identifier(id)
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"))
        {
            crate::expr::Expr::Const(t.def.columns[c].default.clone().unwrap_or(Value::Null))
        } else {
            crate::collate::annotate(
                b.expr(&a.value, &scope)?,
                crate::collate::Ctx::new(&row_cols),
            )?
        };
        set.push((ti, c, e));
    }
    let subqueries = subs.into_plans();
    if let Some((t, _)) = targets
        .iter()
        .find(|(t, _)| subqueries.iter().any(|(s, _)| reads_table(s, t)))
    {
        return Err(SqlError::update_table_used(&t.def.name));
    }
    Ok(MultiPlan {
        select,
        targets,
        set,
        subqueries,
    })
}

/// Plans a multi-table DELETE.
pub fn plan_delete(
    d: &ast::Delete,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<MultiPlan> {
    let ast::Delete {
        delete_token: _,
        optimizer_hints: _,
        tables,
        from,
        using,
        selection,
        returning,
        output,
        order_by,
        limit,
    } = d;
    if returning.is_some() || output.is_some() {
        return Err(SqlError::unsupported("RETURNING"));
    }
    refuse_order_limit(order_by, limit.as_ref(), "DELETE")?;
    let from = match from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    // DELETE t1, t2 FROM <join> | DELETE FROM t1, t2 USING <join>.
    let (names, join): (Vec<&ast::ObjectName>, &[ast::TableWithJoins]) = match using {
        Some(u) if tables.is_empty() => {
            let mut names = Vec::new();
            for f in from {
                match &f.relation {
                    ast::TableFactor::Table { name, .. } if f.joins.is_empty() => names.push(name),
                    _ => {
                        return Err(SqlError::parse(
                            "DELETE FROM takes table names before USING",
                        ))
                    }
                }
            }
            (names, u)
        }
        None => (tables.iter().collect(), from),
        Some(_) => return Err(SqlError::parse("DELETE with both a table list and USING")),
    };
    let tables = from_tables(join, st, cur_db, params)?;
    let items: Vec<&FromName> = tables.iter().map(|f| &f.name).collect();
    let mut picked = Vec::new();
    for n in names {
        picked.push(delete_target(&items, &crate::stmt::name_parts(n), cur_db)?);
    }
    let (select, targets) = plan_join(
        join,
        &tables,
        selection.as_ref(),
        st,
        cur_db,
        params,
        &picked,
        "DELETE",
    )?;
    Ok(MultiPlan {
        select,
        targets,
        set: Vec::new(),
        subqueries: Vec::new(),
    })
}

/// Runs a multi-table UPDATE or DELETE. Returns (rows matched, rows changed).
pub fn run(p: &MultiPlan, txn: &mut Txn, env: &dyn Env, w: Writer) -> Result<(u64, u64)> {
    let qenv = subquery_env(&p.subqueries, txn, env)?;
    let env: &dyn Env = qenv.as_ref().map_or(env, |q| q);
    let mut spool = Spool(Sorter::new(vec![], tmp_table_size(env), None));
    spool.0.set_interrupt(env.interrupt());
    select::execute(&p.select, txn, env, &mut spool)?;
    let mut limits = TxnLimits::of(env);
    let checks = if p.set.is_empty() {
        vec![]
    } else {
        p.targets
            .iter()
            .map(|(t, _)| Checks::of(&t.def))
            .collect::<Result<Vec<_>>>()?
    };
    let mut seen: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); p.targets.len()];
    let (mut matched, mut changed) = (0u64, 0u64);
    let how = Storing::new(env.sql_mode(), false);
    spool.0.finish(&mut |mut row| {
        // The targets this joined row is the first to reach (a LEFT JOIN's
        // missing side reaches nothing).
        let mut fresh = Vec::new();
        for (i, (t, base)) in p.targets.iter().enumerate() {
            let Some(part) = row.get(*base..*base + t.def.columns.len()) else {
                return Err(SqlError::internal("joined row shorter than its tables"));
            };
            if t.def.pk.columns.iter().any(|&c| part[c].is_null()) {
                continue;
            }
            let key = rt::pk_key(&t.def, part, None)?;
            if seen[i].insert(key.clone()) {
                fresh.push((i, key));
            }
        }
        // SET in order over the joined row, each assignment seeing the earlier ones.
        for (ti, c, e) in &p.set {
            if !fresh.iter().any(|(i, _)| i == ti) {
                continue;
            }
            let (t, base) = &p.targets[*ti];
            let v = e.eval(&row, env)?;
            let v = store(v, &t.def.columns[*c], matched as usize + 1, how, env)?;
            if let Some(slot) = row.get_mut(base + c) {
                *slot = v;
            }
        }
        for (i, key) in fresh {
            let (t, base) = &p.targets[i];
            let Some(old) = rt::get(txn, &t.def, &key, Some(LockMode::Exclusive), None)? else {
                continue;
            };
            matched += 1;
            if p.set.is_empty() {
                w.delete(txn, t, &old)?;
                changed += 1;
                limits.after_write(txn)?;
                continue;
            }
            let assigned: Vec<usize> = p.set.iter().filter(|s| s.0 == i).map(|s| s.1).collect();
            let mut new = old.values.clone();
            for &c in &assigned {
                if let (Some(n), Some(v)) = (new.get_mut(c), row.get(base + c)) {
                    *n = v.clone();
                }
            }
            let checks = &checks[i];
            if write_update(txn, t, (w, checks), &old, new, &assigned, env, &mut limits)? {
                changed += 1;
            }
        }
        Ok(true)
    })?;
    Ok((matched, changed))
}
