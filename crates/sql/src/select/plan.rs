//! Planning a SELECT: binding the query over its tables into a
//! `SelectPlan` (access path or join, filter, grouping and aggregates,
//! projection, DISTINCT, ORDER BY, LIMIT, locking).
use super::from::{derived_first, from_tables, FromCtx, FromTable};
use super::SelectPlan;
use crate::access;
use crate::bind::{AggCtx, AggFunc, AggSpec, Binder, Planned, Scope, SubPlanner};
use crate::collate::{self, annotate, Ctx};
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use crate::join::JoinTable;
use crate::result::{ColumnInfo, OutType};
use crate::subquery::SubKind;
use crate::types::infer;
use rel::catalog::{CatalogState, Table};
use rel::schema::Column;
use sqlparser::ast;
use std::cell::RefCell;
use std::sync::Arc;
use txn::LockMode;

/// Plans a query.
pub fn plan(
    q: &ast::Query,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
) -> Result<SelectPlan> {
    plan_in(q, st, cur_db, params, &[])
}

/// The subqueries of one query level, planned as the binder meets them.
pub struct SubPlans<'s> {
    st: &'s CatalogState,
    cur_db: Option<&'s str>,
    params: &'s [(u64, u64)],
    /// The scopes of the queries around this one, innermost last.
    outer: &'s [Scope],
    plans: RefCell<Vec<(SelectPlan, SubKind)>>,
    /// The positions of the innermost outer row this query reads
    /// (`Expr::Correlated(j)` is `refs[j]`).
    refs: RefCell<Vec<usize>>,
}

impl<'s> SubPlans<'s> {
    /// A planner for the subqueries of a statement outside any query.
    pub fn new(st: &'s CatalogState, cur_db: Option<&'s str>, params: &'s [(u64, u64)]) -> Self {
        SubPlans {
            st,
            cur_db,
            params,
            outer: &[],
            plans: RefCell::new(Vec::new()),
            refs: RefCell::new(Vec::new()),
        }
    }

    /// The subqueries planned, in the order expressions number them.
    pub fn into_plans(self) -> Vec<(SelectPlan, SubKind)> {
        self.plans.into_inner()
    }
}

impl SubPlanner for SubPlans<'_> {
    fn plan(&self, q: &ast::Query, kind: SubKind, scope: &Scope) -> Result<Planned> {
        let mut outer = self.outer.to_vec();
        outer.push(scope.clone());
        let p = plan_in(q, self.st, self.cur_db, self.params, &outer)?;
        match kind {
            SubKind::Exists => {}
            SubKind::InRow(n) if p.columns.len() != n => return Err(SqlError::operand_columns(n)),
            SubKind::InRow(_) => {}
            _ if p.columns.len() != 1 => return Err(SqlError::operand_columns(1)),
            _ => {}
        }
        let ty = p.columns.first().map_or(OutType::Null, |c| c.ty.clone());
        let refs = p.outer_refs.clone();
        let mut plans = self.plans.borrow_mut();
        plans.push((p, kind));
        Ok(Planned {
            k: plans.len() - 1,
            ty,
            refs,
        })
    }

    fn outer_ref(&self, table: Option<&str>, name: &str) -> Result<Option<Expr>> {
        let Some((near, far)) = self.outer.split_last() else {
            return Ok(None);
        };
        if let Some(pos) = near.find(table, name)? {
            let mut refs = self.refs.borrow_mut();
            let j = match refs.iter().position(|r| *r == pos) {
                Some(j) => j,
                None => {
                    refs.push(pos);
                    refs.len() - 1
                }
            };
            let ty = near
                .types
                .get(pos)
                .map_or(OutType::Null, |t| OutType::Column(t.clone()));
            return Ok(Some(Expr::Correlated(j, ty)));
        }
        if far.iter().any(|s| !matches!(s.find(table, name), Ok(None))) {
            let full = match table {
                Some(t) => format!("{t}.{name}"),
                None => name.to_string(),
            };
            return Err(SqlError::unsupported(format!(
                "correlated subqueries reading a query two or more levels out ({full})"
            )));
        }
        Ok(None)
    }
}

/// Plans a query inside queries whose columns are `outer` (innermost last).
fn plan_in(
    q: &ast::Query,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
    outer: &[Scope],
) -> Result<SelectPlan> {
    let _depth = crate::depth::PlanDepth::enter()?;
    if q.with.is_some() {
        return plan_in(&super::setop::inline_ctes(q)?, st, cur_db, params, outer);
    }
    crate::accept::check_query(q)?;
    let sel = match &*q.body {
        ast::SetExpr::SetOperation { .. } => {
            return plan_in(&super::setop::wrap_union(q), st, cur_db, params, outer)
        }
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            return plan_in(inner, st, cur_db, params, outer)
        }
        _ => return Err(SqlError::unsupported("UNION and other set operations")),
    };
    let rewritten;
    let sel = match super::decorrelate::rewrite(sel, st, cur_db)? {
        Some(s) => {
            rewritten = s;
            &rewritten
        }
        None => &**sel,
    };
    let semi;
    let sel = match super::semijoin::rewrite(sel, st, cur_db) {
        Some(s) => {
            semi = s;
            &semi
        }
        None => sel,
    };
    let subs = SubPlans {
        st,
        cur_db,
        params,
        outer,
        plans: RefCell::new(Vec::new()),
        refs: RefCell::new(Vec::new()),
    };
    let plan_body = |q: &ast::Query, outer: &[Scope]| match &*q.body {
        _ if super::recursive::is_marked(q) => {
            super::recursive::plan_cte(q, &|b| plan_in(b, st, cur_db, params, outer))
        }
        ast::SetExpr::SetOperation { .. } if q.order_by.is_none() && q.limit_clause.is_none() => {
            plan_union(q, st, cur_db, params, outer)
        }
        _ => plan_in(q, st, cur_db, params, outer),
    };
    let fctx = FromCtx {
        st,
        cur_db,
        params,
        sub: &subs,
        plan_derived: &|q| plan_body(q, outer),
        plan_view: &|q| plan_body(q, &[]),
        locks: &q.locks,
    };
    let (from, derived, layout) = from_tables(&sel.from, &fctx)?;
    if derived
        .iter()
        .any(|d| !d.outer_refs.is_empty() || d.union.iter().any(|(_, b)| !b.outer_refs.is_empty()))
    {
        return Err(SqlError::unsupported(
            "derived tables reading a column of the query around them",
        ));
    }
    let scope_of = |from: &[FromTable]| Scope {
        cols: from
            .iter()
            .flat_map(|(t, a, ..)| {
                t.def
                    .columns
                    .iter()
                    .map(move |c| (a.clone(), c.name.clone()))
            })
            .collect(),
        types: from
            .iter()
            .flat_map(|(t, ..)| t.def.columns.iter().map(|c| c.ty.clone()))
            .collect(),
        hidden: layout.hidden.clone(),
    };
    let mut from = from;
    let mut order: Vec<usize> = (0..from.len()).collect();
    // Comma joins with a derived table: read it before a table that can then
    // be probed on its key by the derived table's column (bound once in FROM
    // order to see the conditions; everything is bound again below).
    if let Some(w) = &sel.selection {
        if from.iter().any(|f| f.5.is_some())
            && from.iter().all(|f| !f.2 && f.3.is_none() && f.6.is_none())
        {
            let mark = subs.plans.borrow().len();
            let mut b = Binder::new(params);
            b.sub = Some(&subs);
            b.dependent = true;
            if let Ok(f) = b.expr(w, &scope_of(&from)) {
                order = derived_first(&mut from, &f);
            }
            subs.plans.borrow_mut().truncate(mark);
        }
    }
    let scope = scope_of(&from);
    // `*` lists columns in FROM order, whatever the join order.
    let star_all: Vec<usize> = {
        let mut bases = Vec::with_capacity(from.len());
        let mut b = 0;
        for f in &from {
            bases.push(b);
            b += f.0.def.columns.len();
        }
        (0..from.len())
            .filter_map(|orig| order.iter().position(|&o| o == orig))
            .flat_map(|k| bases[k]..bases[k] + from[k].0.def.columns.len())
            .collect()
    };
    // USING / NATURAL joins list their merged columns once, first, and a
    // RIGHT JOIN its left operand's columns first (`layout`, in the order
    // of `from` unless `derived_first` moved tables, which it does only
    // for comma joins, where the two agree).
    let star = if order.iter().enumerate().all(|(i, o)| i == *o) {
        layout.star.clone()
    } else {
        star_all.clone()
    };
    let all_cols: Vec<Column> = from
        .iter()
        .flat_map(|(t, ..)| t.def.columns.iter().cloned())
        .collect();
    // Position -> (table, alias, local column), for result metadata.
    let meta: Vec<(Arc<Table>, String, usize)> = from
        .iter()
        .flat_map(|(t, a, ..)| (0..t.def.columns.len()).map(move |i| (t.clone(), a.clone(), i)))
        .collect();
    let (table, alias) = match from.as_slice() {
        [(t, a, _, _, _, None, _)] => (Some(t.clone()), a.clone()),
        _ => (None, String::new()),
    };
    let single_hint = match from.as_slice() {
        [(.., h, _, _)] => h.clone(),
        _ => None,
    };
    let mut b = Binder::new(params);
    b.sub = Some(&subs);
    b.dependent = true;
    b.place = "where clause";
    let filter = match &sel.selection {
        Some(w) => Some(b.expr(w, &scope)?),
        None => None,
    };
    let group_ast: Vec<ast::Expr> = match &sel.group_by {
        ast::GroupByExpr::Expressions(v, _) => v.clone(),
        ast::GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    // Try without aggregation first; an aggregate call (also in HAVING)
    // fails with 1111.
    let mut use_agg = !group_ast.is_empty();
    // What GROUP BY positions count: the select list with `*` expanded
    // (without GROUP BY, bind_output reports a `t.*` of no table).
    let positions = if group_ast.is_empty() {
        Vec::new()
    } else {
        super::alias::expanded(&sel.projection, &scope, &star, &star_all)?
    };
    // Window PARTITION BY / ORDER BY may name select aliases: the list is
    // copied for them only when the query has a window function.
    let win_proj: std::sync::Arc<[ast::SelectItem]> =
        if super::alias::any_window(&sel.projection) || super::alias::any_window(&q.order_by) {
            sel.projection.clone().into()
        } else {
            std::sync::Arc::from([])
        };
    let mut attempt = 0;
    let mark = subs.plans.borrow().len();
    let (mut out, names, mut order, having, agg, calls, order_items) = loop {
        attempt += 1;
        // A retry binds the output again: drop the first attempt's subqueries.
        subs.plans.borrow_mut().truncate(mark);
        let mut b = Binder::new(params);
        b.sub = Some(&subs);
        b.dependent = true;
        if use_agg {
            let mut ctx = AggCtx::default();
            for g in &group_ast {
                // GROUP BY may name an output position or alias (alias.rs).
                let e = super::alias::group_item(g, &positions, &scope)?;
                b.place = "group statement";
                ctx.group.push(b.expr(&e, &scope)?);
                ctx.group_ast.push(e);
            }
            b.agg = Some(ctx);
        }
        b.place = "field list";
        let mut win = crate::window::WinCtx::new(&sel.named_window)?;
        win.proj = win_proj.clone();
        b.win = Some(win);
        let r = super::output::bind_output(&mut b, sel, q, &scope, [&star, &star_all], outer);
        match r {
            Err(e)
                if e.code == crate::error::ER_INVALID_GROUP_FUNC_USE
                    && !use_agg
                    && attempt == 1 =>
            {
                use_agg = true;
                continue;
            }
            Err(e) => return Err(e),
            Ok((out, names, order, having, order_items)) => {
                let agg = b.agg.take().map(|a| (a.group, a.aggs));
                let calls = b.win.take().map(|w| w.calls).unwrap_or_default();
                break (out, names, order, having, agg, calls, order_items);
            }
        }
    };
    let in_calls = calls.iter().any(|c| {
        c.args
            .iter()
            .chain(&c.spec.partition)
            .chain(c.spec.order.iter().map(|(e, _)| e))
            .chain(c.agg.as_ref().and_then(|a| a.arg.as_ref()))
            .any(Expr::has_dependent)
    });
    if in_calls
        || !calls.is_empty()
            && out
                .iter()
                .chain(order.iter().map(|(e, _)| e))
                .any(Expr::has_dependent)
    {
        return Err(SqlError::unsupported(
            "correlated subqueries in the field list of a query with window functions",
        ));
    }
    // HAVING in a query that does not aggregate filters its rows, as a WHERE
    // would (MySQL, MariaDB): not one group of the whole table.
    let (filter, having) = match (&agg, having) {
        (None, Some(h)) => (
            Some(match filter {
                Some(f) => Expr::Bin(crate::expr::BinOp::And, Box::new(f), Box::new(h)),
                None => h,
            }),
            None,
        ),
        (_, h) => (filter, h),
    };
    let distinct = matches!(sel.distinct, Some(ast::Distinct::Distinct));
    // Collations (collate.rs): string comparisons under their collation,
    // MIN/MAX and DISTINCT aggregates, then (below) GROUP BY, DISTINCT and
    // ORDER BY keys.
    let cx = Ctx::new(&all_cols);
    let filter = filter.map(|f| annotate(f, cx)).transpose()?;
    let agg = match agg {
        Some((g, aggs)) => Some((
            g.into_iter()
                .map(|e| annotate(e, cx))
                .collect::<Result<Vec<_>>>()?,
            aggs.into_iter()
                .map(|a| collate_agg(a, cx))
                .collect::<Result<Vec<_>>>()?,
        )),
        None => None,
    };
    // Window calls: their slots follow the (grouped) row; the select list and
    // ORDER BY are typed over that row with the slots as columns.
    let (window, tcols, tagg) = if calls.is_empty() {
        (None, all_cols.clone(), agg.clone())
    } else {
        let w = crate::window::finish(calls, &all_cols, agg.as_ref())?;
        for e in out.iter_mut().chain(order.iter_mut().map(|(e, _)| e)) {
            crate::window::renumber(e, w.plan.width);
        }
        (Some(w.plan), w.cols, w.agg)
    };
    let acx = Ctx {
        cols: &tcols,
        agg: tagg.as_ref(),
    };
    let out = out
        .into_iter()
        .map(|e| annotate(e, acx))
        .collect::<Result<Vec<_>>>()?;
    let having = having.map(|h| annotate(h, acx)).transpose()?;
    let order: Vec<(Expr, bool)> = order
        .into_iter()
        .map(|(e, d)| Ok((annotate(e, acx)?, d)))
        .collect::<Result<_>>()?;
    let group_colls = match &agg {
        Some((g, _)) => collate::group_colls(g, cx)?,
        None => Vec::new(),
    };
    let out_colls = collate::group_colls(&out, acx)?;
    // A key that is a computed select item takes the item's value (a plain
    // column stays a column: the access path may yield its order).
    let order_out: Vec<Option<usize>> = order_items
        .iter()
        .map(|i| i.filter(|&i| !matches!(out.get(i), Some(Expr::Col(_)) | None)))
        .collect();
    let order_keys: Vec<(Expr, bool)> = order
        .iter()
        .map(|(e, d)| Ok((collate::sort_key(e.clone(), acx)?, *d)))
        .collect::<Result<_>>()?;
    let (limit, offset) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let mut b = Binder::new(params);
            let l = match limit {
                Some(e) => Some(b.expr(e, &Scope::default())?),
                None => None,
            };
            let o = match offset {
                Some(o) => Some(b.expr(&o.value, &Scope::default())?),
                None => None,
            };
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let mut b = Binder::new(params);
            (
                Some(b.expr(limit, &Scope::default())?),
                Some(b.expr(offset, &Scope::default())?),
            )
        }
    };
    let lock = q.locks.first().map(|l| match l.lock_type {
        ast::LockType::Share => LockMode::Shared,
        ast::LockType::Update => LockMode::Exclusive,
    });
    // Columns read from the table.
    let mut used = Vec::new();
    match &agg {
        Some((g, aggs)) => {
            g.iter().for_each(|e| e.columns(&mut used));
            for a in aggs {
                if let Some(e) = &a.arg {
                    e.columns(&mut used);
                }
                a.order.iter().for_each(|(e, _)| e.columns(&mut used));
            }
        }
        None => {
            out.iter().for_each(|e| e.columns(&mut used));
            order.iter().for_each(|(e, _)| e.columns(&mut used));
            if let Some(w) = &window {
                used.retain(|c| *c < w.width);
                for c in &w.calls {
                    c.args
                        .iter()
                        .chain(&c.spec.partition)
                        .for_each(|e| e.columns(&mut used));
                    c.spec.order.iter().for_each(|(e, _)| e.columns(&mut used));
                    c.n.iter().for_each(|e| e.columns(&mut used));
                    if let Some(x) = c.agg.as_ref().and_then(|a| a.arg.as_ref()) {
                        x.columns(&mut used);
                    }
                }
            }
        }
    }
    // Without the WHERE's columns: what a row needs when the range read
    // replaces the WHERE (a WHERE never reads a window's columns).
    let unfiltered = used.clone();
    if let Some(f) = &filter {
        f.columns(&mut used);
    }
    let plain_order: Option<Vec<(usize, bool)>> = if agg.is_none() && !distinct && window.is_none()
    {
        order
            .iter()
            .map(|(e, d)| match e {
                Expr::Col(c) => Some((*c, *d)),
                _ => None,
            })
            .collect()
    } else {
        None
    };
    // Access paths and join order see the conjuncts that are not computed
    // per row (a correlated subquery cannot key an index).
    let keyable = filter.as_ref().and_then(Expr::without_dependent);
    let (access, want, want_ranged, presorted) = match &table {
        Some(t) => {
            let types: Vec<_> = t.def.columns.iter().map(|c| c.ty.clone()).collect();
            let implied = crate::equality::with_implied(keyable.as_ref(), &types);
            let acc = access::choose(
                &t.def,
                implied.as_ref().or(keyable.as_ref()),
                &used,
                plain_order.as_deref(),
                lock.is_some(),
                single_hint.as_ref(),
            );
            let presorted = plain_order
                .as_ref()
                .is_some_and(|o| access::satisfies_order(&t.def, &acc, o));
            let mut want = vec![false; t.def.columns.len()];
            for c in &used {
                want[*c] = true;
            }
            let mut want_ranged = vec![false; t.def.columns.len()];
            for c in &unfiltered {
                want_ranged[*c] = true;
            }
            if want_ranged == want {
                want_ranged.clear();
            }
            (Some(acc), want, want_ranged, presorted || order.is_empty())
        }
        None => (None, vec![], vec![], order.is_empty()),
    };
    // The window step reorders rows: only an empty ORDER BY is "presorted" then.
    let presorted = presorted && (window.is_none() || order.is_empty());
    let mut join = Vec::new();
    if table.is_none() && !from.is_empty() {
        let mut base = 0;
        for (t, a, left, on, hint, d, group) in &from {
            join.push(JoinTable {
                table: t.clone(),
                alias: a.clone(),
                base,
                access: access::choose(&t.def, None, &[], None, false, hint.as_ref()),
                on: on.clone().map(|e| annotate(e, cx)).transpose()?,
                left: *left,
                hint: hint.clone(),
                derived: *d,
                filter: None,
                hash: Vec::new(),
                group: group
                    .clone()
                    .map(|g| -> Result<crate::join::JoinGroup> {
                        Ok(crate::join::JoinGroup {
                            on: g.on.map(|e| annotate(e, cx)).transpose()?,
                            ..g
                        })
                    })
                    .transpose()?,
                shared: false,
                hash_join: Vec::new(),
                rows: 0.0,
            });
            base += t.def.columns.len();
        }
        let straight = sel
            .select_modifiers
            .as_ref()
            .is_some_and(|m| m.straight_join)
            || sel.from.iter().any(|f| {
                f.joins
                    .iter()
                    .any(|j| matches!(j.join_operator, ast::JoinOperator::StraightJoin(_)))
            });
        crate::join::plan(&mut join, keyable.as_ref(), lock.is_some(), straight);
    }
    let columns = names
        .into_iter()
        .zip(&out)
        .map(|((name, org), e)| {
            let mut ty = infer(e, &tcols, tagg.as_ref());
            if collate::is_binary_string(e, acx) {
                ty = crate::types::binary_string(ty);
            }
            match org.and_then(|p| meta.get(p)) {
                Some((t, alias, c)) => {
                    let col = &t.def.columns[*c];
                    ColumnInfo {
                        name,
                        org_name: col.name.clone(),
                        table: alias.clone(),
                        org_table: t.def.name.clone(),
                        db: t.def.db.clone(),
                        ty: OutType::Column(col.ty.clone()),
                        nullable: col.nullable || from.iter().any(|f| f.2),
                        primary: t.def.pk.columns.contains(c) && !t.def.hidden_pk,
                        auto_increment: col.auto_increment,
                    }
                }
                None => ColumnInfo::expr(name, ty),
            }
        })
        .collect();
    let _ = alias;
    let into = match &sel.into {
        None => None,
        Some(i) => Some(into_vars(&i.targets, out.len())?),
    };
    Ok(SelectPlan {
        table,
        access,
        join,
        want,
        want_ranged,
        filter,
        agg,
        having,
        window,
        out,
        order: order_keys,
        order_out,
        presorted,
        distinct,
        group_colls,
        out_colls,
        limit,
        offset,
        columns,
        lock,
        nonblock: q.locks.first().and_then(|l| l.nonblock),
        into,
        calc_found_rows: sel
            .select_modifiers
            .as_ref()
            .is_some_and(|m| m.sql_calc_found_rows),
        subqueries: subs.plans.into_inner(),
        derived,
        union: Vec::new(),
        sysview: None,
        recursive: None,
        outer_refs: subs.refs.into_inner(),
    })
}

/// An aggregate's argument under collations, and the collation its
/// MIN/MAX or DISTINCT compares strings by.
fn collate_agg(mut a: AggSpec, cx: Ctx) -> Result<AggSpec> {
    a.arg = a.arg.map(|e| annotate(e, cx)).transpose()?;
    if matches!(a.func, AggFunc::Sum | AggFunc::Avg) || a.func.statistic() {
        // Numeric aggregates read ENUM/SET values as their numbers.
        a.arg = a.arg.map(|e| crate::members::as_number(e, cx));
    }
    if let Some(x) = &a.arg {
        a.coll = collate::group_colls(std::slice::from_ref(x), cx)?[0];
    }
    a.order = a
        .order
        .into_iter()
        .map(|(e, d)| Ok((collate::sort_key(annotate(e, cx)?, cx)?, d)))
        .collect::<Result<_>>()?;
    Ok(a)
}

/// A UNION body as one plan: its first branch, the others in `union`.
fn plan_union(
    q: &ast::Query,
    st: &CatalogState,
    cur_db: Option<&str>,
    params: &[(u64, u64)],
    outer: &[Scope],
) -> Result<SelectPlan> {
    let mut parts = Vec::new();
    let mut distinct = Vec::new();
    for (d, b) in super::setop::union_branches(q)? {
        parts.push(plan_in(&b, st, cur_db, params, outer)?);
        distinct.push(d);
    }
    let columns = super::setop::union_columns(&parts)?;
    let mut rest = parts.split_off(1).into_iter();
    let Some(mut first) = parts.pop() else {
        return Err(SqlError::internal("empty UNION"));
    };
    first.columns = columns;
    first.union = distinct[1..].iter().copied().zip(rest.by_ref()).collect();
    Ok(first)
}

/// The user variables of `SELECT ... INTO @a, @b` (lower-cased names, without `@`).
fn into_vars(targets: &[ast::Expr], columns: usize) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for t in targets {
        let name = match t {
            ast::Expr::Identifier(id)
                if id.value.starts_with('@') && !id.value.starts_with("@@") =>
            {
                id.value[1..].to_ascii_lowercase()
            }
            _ => return Err(SqlError::unsupported(format!("SELECT ... INTO {t}"))),
        };
        names.push(name);
    }
    if names.len() != columns {
        return Err(SqlError::union_column_count());
    }
    Ok(names)
}
