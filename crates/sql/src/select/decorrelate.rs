//! Correlated scalar subqueries of a select list rewritten as LEFT JOINs to
//! derived tables, the form sysbench-tpcc's consistency checks need:
//!
//! ```sql
//! SELECT c.id, (SELECT SUM(o.amount) FROM o WHERE o.cid = c.id AND o.x > 0) FROM c
//! -- becomes
//! SELECT c.id, __sq0.__v FROM c LEFT JOIN
//!   (SELECT o.cid AS __k0, SUM(o.amount) AS __v FROM o WHERE o.x > 0 GROUP BY o.cid) AS __sq0
//!   ON __sq0.__k0 = c.id
//! ```
//!
//! Only when that is exactly equivalent: the subquery is one aggregate
//! (COUNT becomes COALESCE(.., 0), as no row counts 0) over base tables,
//! without GROUP BY, HAVING, DISTINCT, LIMIT, parameters or nested
//! subqueries; every WHERE conjunct that reads the outer query is
//! `inner column = outer column` of one comparison family (so grouping and
//! `=` agree and the join yields at most one row per outer row). Constants
//! the outer WHERE puts on those outer columns are copied into the derived
//! table. Anything else is left alone, and the binder refuses it (1235).
use super::resolve_table;
use crate::error::Result;
use rel::catalog::{CatalogState, Table};
use sqlparser::ast::{self, Visit};
use sqlparser::parser::Parser;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Tables of one query level: (alias, table).
pub(super) type Tables = Vec<(String, Arc<Table>)>;

/// Base tables of a FROM clause with their aliases; None if it has
/// anything else or a table does not resolve.
pub(super) fn tables_of(
    from: &[ast::TableWithJoins],
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Option<Tables> {
    let mut out = Vec::new();
    let mut add = |f: &ast::TableFactor| -> Option<()> {
        let ast::TableFactor::Table { name, alias, .. } = f else {
            return None;
        };
        let t = resolve_table(st, cur_db, name).ok()?;
        let a = alias
            .as_ref()
            .map_or(t.def.name.clone(), |a| a.name.value.clone());
        out.push((a, t));
        Some(())
    };
    for twj in from {
        add(&twj.relation)?;
        for j in &twj.joins {
            add(&j.relation)?;
        }
    }
    Some(out)
}

/// Which table of `tables` a column reference names (index, column position).
fn find(tables: &Tables, qual: Option<&str>, name: &str) -> Option<(usize, usize)> {
    let mut hit = None;
    for (i, (a, t)) in tables.iter().enumerate() {
        if qual.is_some_and(|q| !q.eq_ignore_ascii_case(a)) {
            continue;
        }
        if let Some(c) = t
            .def
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
        {
            if hit.is_some() {
                return None; // ambiguous
            }
            hit = Some((i, c));
        }
    }
    hit
}

fn column_ref(e: &ast::Expr) -> Option<(Option<&str>, &str)> {
    match e {
        ast::Expr::Identifier(i) => Some((None, &i.value)),
        ast::Expr::CompoundIdentifier(ids) if ids.len() == 2 => {
            Some((Some(&ids[0].value), &ids[1].value))
        }
        _ => None,
    }
}

/// Where a column reference of the subquery resolves.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Side {
    Inner(usize, usize),
    Outer(usize, usize),
}

fn side(inner: &Tables, outer: &Tables, qual: Option<&str>, name: &str) -> Option<Side> {
    let inner_alias = qual.is_some_and(|q| inner.iter().any(|(a, _)| a.eq_ignore_ascii_case(q)));
    if qual.is_none() || inner_alias {
        if let Some((t, c)) = find(inner, qual, name) {
            return Some(Side::Inner(t, c));
        }
        if inner_alias {
            return None;
        }
    }
    find(outer, qual, name).map(|(t, c)| Side::Outer(t, c))
}

/// The sides of every column reference in `e`; None if one does not
/// resolve, or `e` holds a subquery.
pub(super) fn sides(e: &ast::Expr, inner: &Tables, outer: &Tables) -> Option<Vec<Side>> {
    let mut out = Vec::new();
    let flow = e.visit(&mut ExprVisitor(|x: &ast::Expr| {
        match x {
            ast::Expr::Subquery(_) | ast::Expr::InSubquery { .. } | ast::Expr::Exists { .. } => {
                return ControlFlow::Break(())
            }
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => {
                let Some((q, n)) = column_ref(x) else {
                    return ControlFlow::Break(());
                };
                match side(inner, outer, q, n) {
                    Some(s) => out.push(s),
                    None => return ControlFlow::Break(()),
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }));
    flow.is_continue().then_some(out)
}

struct ExprVisitor<F>(F);

impl<F: FnMut(&ast::Expr) -> ControlFlow<()>> ast::Visitor for ExprVisitor<F> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
        (self.0)(e)
    }
}

pub(super) fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ast::Expr::Nested(x) => conjuncts(x, out),
        other => out.push(other.clone()),
    }
}

fn parse_select(sql: &str) -> Option<ast::Select> {
    let mut stmts = Parser::parse_sql(&crate::dialect::StrataDialect::default(), sql).ok()?;
    let ast::Statement::Query(q) = stmts.pop()? else {
        return None;
    };
    match *q.body {
        ast::SetExpr::Select(s) => Some(*s),
        _ => None,
    }
}

/// The SELECT of `q` when it has no GROUP BY, HAVING or DISTINCT.
pub(super) fn ungrouped(q: &ast::Query) -> Option<&ast::Select> {
    let ast::SetExpr::Select(s) = &*q.body else {
        return None;
    };
    let grouped = match &s.group_by {
        ast::GroupByExpr::Expressions(v, m) => !v.is_empty() || !m.is_empty(),
        ast::GroupByExpr::All(_) => true,
    };
    (!grouped && s.distinct.is_none() && s.having.is_none()).then_some(s)
}

/// A conjunct `inner column = outer column` (either way round) whose columns
/// compare in one comparison family: (inner column, outer column, the outer
/// side, the family); None for anything else.
pub(super) fn correlation<'e>(
    c: &'e ast::Expr,
    inner: &Tables,
    outer: &Tables,
) -> Option<(&'e ast::Expr, &'e ast::Expr, Side, u8)> {
    let ast::Expr::BinaryOp {
        left,
        op: ast::BinaryOperator::Eq,
        right,
    } = c
    else {
        return None;
    };
    let l = column_ref(left).and_then(|(q, n)| side(inner, outer, q, n))?;
    let r = column_ref(right).and_then(|(q, n)| side(inner, outer, q, n))?;
    let (i, o, itxt, otxt) = match (l, r) {
        (Side::Inner(..), Side::Outer(..)) => (l, r, left, right),
        (Side::Outer(..), Side::Inner(..)) => (r, l, right, left),
        _ => return None,
    };
    let (Side::Inner(it, ic), Side::Outer(ot, oc)) = (i, o) else {
        return None;
    };
    let fam = crate::equality::family(&inner[it].1.def.columns[ic].ty)?;
    (Some(fam) == crate::equality::family(&outer[ot].1.def.columns[oc].ty))
        .then_some((&**itxt, &**otxt, o, fam))
}

/// One rewritten subquery: the join to add and the expression replacing it.
struct Rewrite {
    join: ast::Join,
    value: ast::Expr,
}

fn rewrite_one(
    q: &ast::Query,
    n: usize,
    outer: &Tables,
    outer_where: &[ast::Expr],
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Option<Rewrite> {
    if q.with.is_some()
        || q.order_by.is_some()
        || q.limit_clause.is_some()
        || q.fetch.is_some()
        || !q.locks.is_empty()
        || q.to_string().contains('?')
    {
        return None;
    }
    let s = ungrouped(q)?;
    if s.projection.len() != 1 {
        return None;
    }
    let agg = match &s.projection[0] {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
        _ => return None,
    };
    let ast::Expr::Function(f) = agg else {
        return None;
    };
    let fname = f.name.to_string().to_ascii_uppercase();
    // `SUM(x) OVER (...)` is a window function, one value per row: not an aggregate.
    if !matches!(fname.as_str(), "COUNT" | "SUM" | "MIN" | "MAX" | "AVG") || f.over.is_some() {
        return None;
    }
    for twj in &s.from {
        for j in &twj.joins {
            use ast::JoinOperator as J;
            let c = match &j.join_operator {
                J::Join(c) | J::Inner(c) | J::CrossJoin(c) | J::StraightJoin(c) => c,
                _ => return None,
            };
            if !matches!(c, ast::JoinConstraint::None | ast::JoinConstraint::On(_)) {
                return None;
            }
        }
    }
    let inner = tables_of(&s.from, st, cur_db)?;
    // The aggregate and any ON read only the subquery's own tables.
    let only_inner = |e: &ast::Expr| {
        sides(e, &inner, outer).is_some_and(|v| v.iter().all(|s| matches!(s, Side::Inner(..))))
    };
    if !only_inner(agg) {
        return None;
    }
    for twj in &s.from {
        for j in &twj.joins {
            use ast::JoinOperator as J;
            if let J::Join(ast::JoinConstraint::On(e))
            | J::Inner(ast::JoinConstraint::On(e))
            | J::StraightJoin(ast::JoinConstraint::On(e)) = &j.join_operator
            {
                if !only_inner(e) {
                    return None;
                }
            }
        }
    }
    let mut conj = Vec::new();
    if let Some(w) = &s.selection {
        conjuncts(w, &mut conj);
    }
    let mut rest: Vec<String> = Vec::new();
    // (inner column text, outer column text, outer side)
    let mut pairs: Vec<(String, String, Side)> = Vec::new();
    for c in &conj {
        let sd = sides(c, &inner, outer)?;
        if sd.iter().all(|s| matches!(s, Side::Inner(..))) {
            rest.push(c.to_string());
            continue;
        }
        let (itxt, otxt, o, _) = correlation(c, &inner, outer)?;
        pairs.push((itxt.to_string(), otxt.to_string(), o));
    }
    if pairs.is_empty() {
        return None;
    }
    // Constants the outer WHERE puts on a correlated outer column.
    for oc in outer_where {
        let ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::Eq,
            right,
        } = oc
        else {
            continue;
        };
        let (col, lit) = match (&**left, &**right) {
            (c, ast::Expr::Value(v)) | (ast::Expr::Value(v), c) => (c, v),
            _ => continue,
        };
        let Some((q, name)) = column_ref(col) else {
            continue;
        };
        let Some((t, c)) = find(outer, q, name) else {
            continue;
        };
        for (itxt, _, o) in &pairs {
            if *o == Side::Outer(t, c) {
                rest.push(format!("{itxt} = {lit}"));
            }
        }
    }
    let alias = format!("__sq{n}");
    let keys: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(k, (i, _, _))| format!("{i} AS __k{k}"))
        .collect();
    let group: Vec<&str> = pairs.iter().map(|(i, _, _)| i.as_str()).collect();
    let from: Vec<String> = s.from.iter().map(|t| t.to_string()).collect();
    let on: Vec<String> = pairs
        .iter()
        .enumerate()
        .map(|(k, (_, o, _))| format!("{alias}.__k{k} = {o}"))
        .collect();
    let sql = format!(
        "SELECT {v} FROM __outer LEFT JOIN (SELECT {keys}, {agg} AS __v FROM {from}{wh} GROUP BY {group}) AS {alias} ON {on}",
        v = if fname == "COUNT" {
            format!("COALESCE({alias}.__v, 0)")
        } else {
            format!("{alias}.__v")
        },
        keys = keys.join(", "),
        from = from.join(", "),
        wh = if rest.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", rest.join(" AND "))
        },
        group = group.join(", "),
        on = on.join(" AND "),
    );
    let mut sel = parse_select(&sql)?;
    let join = sel.from.pop()?.joins.pop()?;
    let value = match sel.projection.pop()? {
        ast::SelectItem::UnnamedExpr(e) => e,
        _ => return None,
    };
    Some(Rewrite { join, value })
}

/// `sel` with its select list's correlated scalar subqueries rewritten as
/// LEFT JOINs, or None when it has none that can be.
pub fn rewrite(
    sel: &ast::Select,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Result<Option<ast::Select>> {
    let has_sub = sel.projection.iter().any(|p| match p {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            matches!(e, ast::Expr::Subquery(_))
        }
        _ => false,
    });
    if !has_sub || sel.from.is_empty() {
        return Ok(None);
    }
    let Some(outer) = tables_of(&sel.from, st, cur_db) else {
        return Ok(None);
    };
    let mut outer_where = Vec::new();
    if let Some(w) = &sel.selection {
        conjuncts(w, &mut outer_where);
    }
    let mut out = sel.clone();
    let mut joins = Vec::new();
    for item in out.projection.iter_mut() {
        let (e, name) = match item {
            ast::SelectItem::UnnamedExpr(e) => (e.clone(), Some(e.to_string())),
            ast::SelectItem::ExprWithAlias { expr, .. } => (expr.clone(), None),
            _ => continue,
        };
        let ast::Expr::Subquery(q) = &e else {
            continue;
        };
        let Some(r) = rewrite_one(q, joins.len(), &outer, &outer_where, st, cur_db) else {
            continue;
        };
        joins.push(r.join);
        *item = match (item.clone(), name) {
            (_, Some(n)) => ast::SelectItem::ExprWithAlias {
                expr: r.value,
                alias: ast::Ident::new(n),
            },
            (ast::SelectItem::ExprWithAlias { alias, .. }, None) => {
                ast::SelectItem::ExprWithAlias {
                    expr: r.value,
                    alias,
                }
            }
            (other, None) => other,
        };
    }
    if joins.is_empty() {
        return Ok(None);
    }
    if let Some(last) = out.from.last_mut() {
        last.joins.extend(joins);
    }
    Ok(Some(out))
}
