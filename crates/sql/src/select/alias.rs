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
//! - ORDER BY: a name alone is a select item's first (plan.rs), a name in
//!   an expression a FROM column's first, as in GROUP BY.
use crate::bind::Scope;
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// `e` with each unqualified name outside its subqueries replaced by what
/// `f` gives for it (kept when `f` gives None). A replacement is not
/// searched again.
fn replace_names(e: &ast::Expr, f: &mut dyn FnMut(&str) -> Option<ast::Expr>) -> ast::Expr {
    struct Names<'a> {
        /// Subqueries entered: their names are theirs.
        depth: usize,
        /// Addresses of the unit keywords of TIMESTAMPDIFF/TIMESTAMPADD
        /// (`MONTH` in `TIMESTAMPDIFF(MONTH, a, b)` is no name); compared,
        /// never dereferenced.
        units: Vec<usize>,
        f: &'a mut dyn FnMut(&str) -> Option<ast::Expr>,
    }
    impl VisitorMut for Names<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            if let ast::Expr::Function(f) = e {
                let name = f.name.to_string();
                if name.eq_ignore_ascii_case("TIMESTAMPDIFF")
                    || name.eq_ignore_ascii_case("TIMESTAMPADD")
                {
                    if let ast::FunctionArguments::List(l) = &f.args {
                        if let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(u))) =
                            l.args.first()
                        {
                            self.units.push(u as *const ast::Expr as usize);
                        }
                    }
                }
            }
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
            let unit = self.units.contains(&(e as *const ast::Expr as usize));
            if self.depth == 0 && !unit {
                if let ast::Expr::Identifier(id) = e {
                    // `@v` and `@@v` are variables, not names.
                    if !id.value.starts_with('@') {
                        if let Some(x) = (self.f)(&id.value) {
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

/// True if `name` is a column of the FROM tables (an ambiguous one too:
/// binding it reports that).
fn is_column(name: &str, scope: &Scope) -> bool {
    !matches!(scope.find(None, name), Ok(None))
}

/// A GROUP BY item with positions and select aliases resolved.
pub(super) fn group_item(g: &ast::Expr, proj: &[ast::SelectItem], scope: &Scope) -> ast::Expr {
    if let ast::Expr::Value(ast::ValueWithSpan {
        value: ast::Value::Number(n, _),
        ..
    }) = g
    {
        let item = n
            .parse::<usize>()
            .ok()
            .and_then(|i| proj.get(i.checked_sub(1)?));
        return match item {
            Some(
                ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. },
            ) => x.clone(),
            _ => g.clone(),
        };
    }
    by_column_first(g, proj, scope)
}

/// `e` with each name that is no FROM column but a select alias replaced by
/// the item's expression (GROUP BY, and an ORDER BY expression).
pub(super) fn by_column_first(e: &ast::Expr, proj: &[ast::SelectItem], scope: &Scope) -> ast::Expr {
    replace_names(e, &mut |name| {
        if is_column(name, scope) {
            return None;
        }
        aliased(name, proj).map(|(_, x)| x.clone())
    })
}

/// The names of the FROM columns GROUP BY names on their own (`k`, `t.k`).
pub(super) fn grouped_columns(group: &[ast::Expr], scope: &Scope) -> Vec<String> {
    group
        .iter()
        .filter_map(|g| match g {
            ast::Expr::Identifier(id) if is_column(&id.value, scope) => Some(id.value.clone()),
            ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => {
                let (t, c) = (&ids[ids.len() - 2].value, &ids[ids.len() - 1].value);
                (!matches!(scope.find(Some(t), c), Ok(None))).then(|| c.clone())
            }
            _ => None,
        })
        .collect()
}

/// HAVING with select aliases resolved: `item` gives what stands for select
/// item `i` (its expression, or a reference to its computed value).
pub(super) fn having(
    h: &ast::Expr,
    proj: &[ast::SelectItem],
    grouped: &[String],
    item: &mut dyn FnMut(usize, &ast::Expr) -> ast::Expr,
) -> ast::Expr {
    replace_names(h, &mut |name| {
        if grouped.iter().any(|g| g.eq_ignore_ascii_case(name)) {
            return None;
        }
        aliased(name, proj).map(|(i, x)| item(i, x))
    })
}
