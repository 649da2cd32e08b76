//! Select-list aliases in GROUP BY and HAVING: which names of those clauses
//! stand for a select item rather than a column of the FROM tables
//! (MariaDB's rules), and the rewrite of the clause's AST that puts the
//! item in their place, anywhere in the clause but inside its subqueries.
//!
//! - GROUP BY: a number is a position in the select list; a name is a FROM
//!   column if there is one, else a select alias (also inside expressions:
//!   `GROUP BY ABS(kk)`).
//! - HAVING: a name is a select alias first, unless GROUP BY names the FROM
//!   column of that name on its own (`SELECT id AS k ... GROUP BY k HAVING
//!   k = 1` reads the column k).
//! - ORDER BY: a name alone is a select item's first (output.rs), a name in
//!   an expression a FROM column's first, as in GROUP BY; a window's ORDER
//!   BY the same, its PARTITION BY as GROUP BY (`window_item`).
//! - Parentheses around a position or a name change nothing: `GROUP BY (1)`
//!   and `ORDER BY (k)` are `GROUP BY 1` and `ORDER BY k` (MariaDB).
use crate::bind::Scope;
use crate::error::{Result, SqlError};
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The address of the unit keyword of a TIMESTAMPDIFF/TIMESTAMPADD call
/// (`MONTH` in `TIMESTAMPDIFF(MONTH, a, b)` is no name); compared, never
/// dereferenced.
fn unit_of(f: &ast::Function) -> Option<usize> {
    let name = f.name.to_string();
    if !name.eq_ignore_ascii_case("TIMESTAMPDIFF") && !name.eq_ignore_ascii_case("TIMESTAMPADD") {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) => match l.args.first() {
            Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(u))) => {
                Some(u as *const ast::Expr as usize)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `e` with each unqualified name outside its subqueries replaced by what
/// `f` gives for it (kept when `f` gives None). A replacement is not
/// searched again.
fn replace_names(e: &ast::Expr, f: &mut dyn FnMut(&str, bool) -> Option<ast::Expr>) -> ast::Expr {
    struct Names<'a> {
        /// Subqueries entered: their names are theirs.
        depth: usize,
        /// Per expression entered, whether it is an aggregate call: `f`
        /// learns whether a name is inside one's arguments.
        aggregates: Vec<bool>,
        /// Addresses of the unit keywords of TIMESTAMPDIFF/TIMESTAMPADD
        /// (`MONTH` in `TIMESTAMPDIFF(MONTH, a, b)` is no name); compared,
        /// never dereferenced.
        units: Vec<usize>,
        f: &'a mut dyn FnMut(&str, bool) -> Option<ast::Expr>,
    }
    impl VisitorMut for Names<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            let mut agg = false;
            if let ast::Expr::Function(f) = e {
                agg = f.over.is_none() && is_aggregate(&f.name.to_string());
                self.units.extend(unit_of(f));
            }
            self.aggregates.push(agg);
            ControlFlow::Continue(())
        }
        fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        // After the children: a replacement is not visited.
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            self.aggregates.pop();
            let in_agg = self.aggregates.iter().any(|a| *a);
            let unit = self.units.contains(&(e as *const ast::Expr as usize));
            if self.depth == 0 && !unit {
                if let ast::Expr::Identifier(id) = e {
                    // `@v` and `@@v` are variables, not names.
                    if !id.value.starts_with('@') {
                        if let Some(x) = (self.f)(&id.value, in_agg) {
                            *e = x;
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut e = e.clone();
    let _ = e.visit(&mut Names {
        depth: 0,
        aggregates: Vec::new(),
        units: Vec::new(),
        f,
    });
    e
}

/// The select item aliased `name`: its index in the select list and expression.
pub(super) fn aliased<'p>(
    name: &str,
    proj: &'p [ast::SelectItem],
) -> Option<(usize, &'p ast::Expr)> {
    proj.iter().enumerate().find_map(|(i, p)| match p {
        ast::SelectItem::ExprWithAlias { expr, alias }
            if alias.value.eq_ignore_ascii_case(name) =>
        {
            Some((i, expr))
        }
        _ => None,
    })
}

/// The FROM column `e` names on its own (`k`, `t.k`), if any.
pub(super) fn direct_column(e: &ast::Expr, scope: &Scope) -> Option<usize> {
    match e {
        ast::Expr::Identifier(id) => scope.find(None, &id.value).ok().flatten(),
        ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => {
            let n = ids.len();
            scope
                .find(Some(&ids[n - 2].value), &ids[n - 1].value)
                .ok()
                .flatten()
        }
        _ => None,
    }
}

/// True if `name` is a column of the FROM tables (an ambiguous one too:
/// binding it reports that).
fn is_column(name: &str, scope: &Scope) -> bool {
    !matches!(scope.find(None, name), Ok(None))
}

/// `e` without the parentheses and unary pluses around it (`((k))` is `k`,
/// `+1` is `1`: MariaDB's parser drops both).
pub(crate) fn unparen(mut e: &ast::Expr) -> &ast::Expr {
    loop {
        match e {
            ast::Expr::Nested(x)
            | ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Plus,
                expr: x,
            } => e = x,
            _ => return e,
        }
    }
}

/// The 1-based select-list position an integer literal names (`GROUP BY 2`,
/// `ORDER BY 2`); None for any other expression (`1.5` is a constant).
/// A position past the list (or 0) is 1054 in `place`.
pub(super) fn position(e: &ast::Expr, len: usize, place: &str) -> Result<Option<usize>> {
    let ast::Expr::Value(ast::ValueWithSpan {
        value: ast::Value::Number(n, _),
        ..
    }) = e
    else {
        return Ok(None);
    };
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return Ok(None);
    }
    match n.parse::<usize>() {
        Ok(i) if (1..=len).contains(&i) => Ok(Some(i - 1)),
        _ => Err(SqlError::unknown_column(n, place)),
    }
}

/// The select list with each `*` and `t.*` replaced by the columns it
/// lists (as `t.c`), as positions count them (`SELECT * ... GROUP BY 2`).
/// `star` lists the columns of `*`, `star_all` those `t.*` picks from.
pub(super) fn expanded(
    proj: &[ast::SelectItem],
    scope: &Scope,
    star: &[usize],
    star_all: &[usize],
) -> Result<Vec<ast::SelectItem>> {
    let mut out = Vec::with_capacity(proj.len());
    for item in proj {
        let qual = match item {
            ast::SelectItem::Wildcard(_) => None,
            ast::SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) => Some(
                n.0.last()
                    .map(|p| p.to_string().trim_matches('`').to_string())
                    .unwrap_or_default(),
            ),
            other => {
                out.push(other.clone());
                continue;
            }
        };
        let list = if qual.is_some() { star_all } else { star };
        let before = out.len();
        for &i in list {
            let Some((t, c)) = scope.cols.get(i) else {
                continue;
            };
            if qual.as_ref().is_some_and(|q| !q.eq_ignore_ascii_case(t)) {
                continue;
            }
            out.push(ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(
                vec![ast::Ident::new(t.clone()), ast::Ident::new(c.clone())],
            )));
        }
        if let Some(q) = qual.filter(|_| out.len() == before) {
            return Err(SqlError::unknown_table(q));
        }
    }
    Ok(out)
}

/// True if anything in `node` calls a window function (subqueries too: a
/// cheap over-approximation).
pub(super) fn any_window<V: ast::Visit>(node: &V) -> bool {
    ast::visit_expressions(node, |e| match e {
        ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// A GROUP BY item with positions and select aliases resolved; `proj` is
/// the select list with its wildcards `expanded`. A position out of the
/// list is 1054.
pub(super) fn group_item(
    g: &ast::Expr,
    proj: &[ast::SelectItem],
    scope: &Scope,
) -> Result<ast::Expr> {
    let g = unparen(g);
    if let Some(i) = position(g, proj.len(), "group statement")? {
        return match &proj[i] {
            ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. } => {
                Ok(x.clone())
            }
            _ => Err(SqlError::unsupported("this select item")),
        };
    }
    Ok(by_column_first(g, proj, scope))
}

/// A window's PARTITION BY or ORDER BY item with select aliases resolved:
/// PARTITION BY as GROUP BY (a FROM column first), ORDER BY as the query's
/// ORDER BY (a name alone is a select alias first, a name in an expression
/// a FROM column first), as MariaDB does. A number is a constant,
/// not a position. An alias of a window function is left alone (binding
/// it fails: no window function in a window's clauses).
pub(crate) fn window_item(
    e: &ast::Expr,
    proj: &[ast::SelectItem],
    scope: &Scope,
    partition: bool,
) -> ast::Expr {
    let e = unparen(e);
    if partition {
        return by_column_first(e, proj, scope);
    }
    if let ast::Expr::Identifier(id) = e {
        return match aliased(&id.value, proj) {
            Some((_, x)) if !id.value.starts_with('@') && !any_window(x) => x.clone(),
            _ => e.clone(),
        };
    }
    by_column_first(e, proj, scope)
}

/// `e` with each name that is no FROM column but a select alias replaced by
/// the item's expression (GROUP BY, and an ORDER BY expression).
pub(super) fn by_column_first(e: &ast::Expr, proj: &[ast::SelectItem], scope: &Scope) -> ast::Expr {
    replace_names(e, &mut |name, _| {
        if is_column(name, scope) {
            return None;
        }
        aliased(name, proj).map(|(_, x)| x.clone())
    })
}

/// The FROM columns GROUP BY names on their own (`k`, `(k)`, `t.k`): each
/// column's name and the GROUP BY item naming it.
pub(super) fn grouped_columns(group: &[ast::Expr], scope: &Scope) -> Vec<(String, ast::Expr)> {
    group
        .iter()
        .filter_map(|g| match unparen(g) {
            x @ ast::Expr::Identifier(id) if is_column(&id.value, scope) => {
                Some((id.value.clone(), x.clone()))
            }
            x @ ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => {
                let (t, c) = (&ids[ids.len() - 2].value, &ids[ids.len() - 1].value);
                (!matches!(scope.find(Some(t), c), Ok(None))).then(|| (c.clone(), x.clone()))
            }
            _ => None,
        })
        .collect()
}

/// False when two different select items show a column named `name`
/// (`SELECT p.k, q.k`).
fn shown_once(name: &str, proj: &[ast::SelectItem]) -> bool {
    let mut shown = proj.iter().filter_map(|p| match p {
        ast::SelectItem::UnnamedExpr(x) => match unparen(x) {
            ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case(name) => Some(x),
            ast::Expr::CompoundIdentifier(ids)
                if ids
                    .last()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(name)) =>
            {
                Some(x)
            }
            _ => None,
        },
        _ => None,
    });
    match shown.next() {
        Some(first) => shown.all(|x| x == first),
        None => true,
    }
}

/// HAVING with select aliases resolved: `item` gives what stands for select
/// item `i` (its expression, or a reference to its computed value). A name
/// GROUP BY gives as a column on its own is that column (`GROUP BY p.k
/// HAVING k` in a join reads p.k, not an ambiguous k).
pub(super) fn having(
    h: &ast::Expr,
    proj: &[ast::SelectItem],
    grouped: &[(String, ast::Expr)],
    item: &mut dyn FnMut(usize, &ast::Expr) -> ast::Expr,
) -> ast::Expr {
    replace_names(h, &mut |name, in_agg| {
        let mut by_group = grouped.iter().filter(|(g, _)| g.eq_ignore_ascii_case(name));
        if let Some((_, g)) = by_group.next() {
            // Inside an aggregate's arguments, named by two GROUP BY columns
            // or shown by two select items, the name stays a FROM name
            // (1052 when ambiguous, as MariaDB).
            let one = by_group.all(|(_, x)| x == g) && shown_once(name, proj);
            return (!in_agg && one).then(|| g.clone());
        }
        aliased(name, proj).map(|(i, x)| item(i, x))
    })
}

/// True for the name of an aggregate function (its arguments read the rows
/// of a group).
pub(super) fn is_aggregate(name: &str) -> bool {
    AGGREGATES.iter().any(|a| name.eq_ignore_ascii_case(a))
}

const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "GROUP_CONCAT",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
    "ANY_VALUE",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
];

/// MariaDB's rule for the FROM columns HAVING reads outside aggregate
/// arguments and subqueries: each must be one GROUP BY names on its own or
/// one the select list shows on its own (`SELECT k`, `SELECT k AS x`, `*`),
/// else 1054 in 'having clause' (`SELECT v+1 FROM p HAVING v > 10`). A name
/// that stands for a select alias (`having`) is the item's. `proj` is the
/// select list with its wildcards `expanded`.
pub(super) fn check_having_columns(
    h: &ast::Expr,
    proj: &[ast::SelectItem],
    group: &[ast::Expr],
    scope: &Scope,
    outer: &[Scope],
) -> Result<()> {
    let column = |e: &ast::Expr| direct_column(unparen(e), scope);
    let mut allowed = vec![false; scope.cols.len()];
    let items = proj.iter().filter_map(|p| match p {
        ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. } => Some(x),
        _ => None,
    });
    for i in items.chain(group).filter_map(column) {
        if let Some(a) = allowed.get_mut(i) {
            *a = true;
        }
    }
    let grouped = grouped_columns(group, scope);
    struct Walk<'a> {
        subqueries: usize,
        aggregates: Vec<bool>,
        /// Addresses of TIMESTAMPDIFF/TIMESTAMPADD unit keywords (no names).
        units: Vec<usize>,
        check: &'a mut dyn FnMut(&ast::Expr) -> Result<()>,
        err: Option<SqlError>,
    }
    impl ast::Visitor for Walk<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            self.subqueries += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            self.subqueries -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            let mut agg = false;
            if let ast::Expr::Function(f) = e {
                agg = f.over.is_none() && is_aggregate(&f.name.to_string());
                self.units.extend(unit_of(f));
            }
            self.aggregates.push(agg);
            let unit = self.units.contains(&(e as *const ast::Expr as usize));
            if self.subqueries == 0 && !unit && !self.aggregates.iter().any(|a| *a) {
                if let Err(e) = (self.check)(e) {
                    self.err = Some(e);
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, _: &ast::Expr) -> ControlFlow<()> {
            self.aggregates.pop();
            ControlFlow::Continue(())
        }
    }
    let mut check = |e: &ast::Expr| -> Result<()> {
        let name = match e {
            ast::Expr::Identifier(id) => {
                let alias = !grouped
                    .iter()
                    .any(|(g, _)| g.eq_ignore_ascii_case(&id.value))
                    && aliased(&id.value, proj).is_some();
                if alias || id.value.starts_with('@') {
                    return Ok(());
                }
                id.value.clone()
            }
            ast::Expr::CompoundIdentifier(ids) => ids
                .iter()
                .map(|i| i.value.as_str())
                .collect::<Vec<_>>()
                .join("."),
            _ => return Ok(()),
        };
        let Some(i) = column(e) else { return Ok(()) };
        if allowed.get(i).copied().unwrap_or(true) {
            return Ok(());
        }
        // A column `JOIN ... USING` / NATURAL JOIN merged: its right-hand
        // copy (reached only qualified) may be the one shown or grouped.
        let c = &scope.cols[i].1;
        let merged = |j: usize| {
            allowed[j] && scope.cols[j].1.eq_ignore_ascii_case(c) && scope.hidden.contains(&j)
        };
        if (0..allowed.len()).any(merged) {
            return Ok(());
        }
        // MariaDB reads the query around's column of that name then (a
        // HAVING in a subquery): not bound so here yet.
        let qual = match e {
            ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => Some(&ids[ids.len() - 2].value),
            _ => None,
        };
        if outer
            .iter()
            .any(|o| !matches!(o.find(qual.map(|q| q.as_str()), c), Ok(None)))
        {
            return Err(SqlError::unsupported(format!(
                "HAVING naming {name}, a column of the query around that is neither grouped nor \
                 shown here"
            )));
        }
        Err(SqlError::unknown_column(&name, "having clause"))
    };
    let mut w = Walk {
        subqueries: 0,
        aggregates: Vec::new(),
        units: Vec::new(),
        check: &mut check,
        err: None,
    };
    let _ = ast::Visit::visit(h, &mut w);
    match w.err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
