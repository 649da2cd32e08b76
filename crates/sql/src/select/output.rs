//! Binding a SELECT's output: the select list (with `*` expanded), ORDER BY
//! (positions, names of select items first, expressions; each key that is a
//! select item remembered, so its value is not computed again) and HAVING
//! (select aliases, and the columns it may read: alias.rs).
use super::alias::direct_column;
use crate::bind::{Binder, Scope};
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use sqlparser::ast;

/// The select list, its names, ORDER BY keys, HAVING, and per ORDER BY key
/// the select item it is.
pub(super) type Bound = (
    Vec<Expr>,
    Vec<(String, Option<usize>)>,
    Vec<(Expr, bool)>,
    Option<Expr>,
    Vec<Option<usize>>,
);

pub(super) fn bind_output(
    b: &mut Binder,
    sel: &ast::Select,
    q: &ast::Query,
    scope: &Scope,
    [star, star_all]: [&[usize]; 2],
    outer: &[Scope],
) -> Result<Bound> {
    let mut out = Vec::new();
    let mut names: Vec<(String, Option<usize>)> = Vec::new();
    for item in &sel.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => {
                let x = b.expr(e, scope)?;
                let org = direct_column(e, scope);
                let name = match (e, org) {
                    (ast::Expr::Identifier(id), _) => id.value.clone(),
                    (ast::Expr::CompoundIdentifier(ids), _) => {
                        ids.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    _ => literal_name(e).unwrap_or_else(|| e.to_string()),
                };
                out.push(x);
                names.push((name, org));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                out.push(b.expr(expr, scope)?);
                names.push((alias.value.clone(), direct_column(expr, scope)));
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                if scope.cols.is_empty() {
                    return Err(SqlError::no_tables_used());
                }
                let qual = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => {
                        n.0.last()
                            .map(|p| p.to_string().trim_matches('`').to_string())
                    }
                    _ => None,
                };
                let mut any = false;
                // `t.*` lists all of t's columns, merged ones included.
                let list = if qual.is_some() { star_all } else { star };
                for &i in list {
                    let (t, c) = &scope.cols[i];
                    if qual.as_ref().is_some_and(|q| !q.eq_ignore_ascii_case(t)) {
                        continue;
                    }
                    any = true;
                    out.push(b.column_ref(i)?);
                    names.push((c.clone(), Some(i)));
                }
                if !any {
                    return Err(SqlError::unknown_table(qual.unwrap_or_default()));
                }
            }
            _ => return Err(SqlError::unsupported("this select item")),
        }
    }
    let mut order = Vec::new();
    let mut order_items = Vec::new();
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(items) = &ob.kind else {
            return Err(SqlError::unsupported("ORDER BY ALL"));
        };
        for it in items {
            let desc = matches!(it.options.sort, Some(ast::OrderBySort::Desc));
            b.place = "order clause";
            let expr = super::alias::unparen(&it.expr);
            // The select item the key is (its value is the key: not
            // evaluated again, so RAND() or `@r := @r + 1` sorts by what
            // the row shows).
            let (e, item) = match expr {
                ast::Expr::Value(_) => {
                    match super::alias::position(expr, out.len(), "order clause")? {
                        Some(i) => (out[i].clone(), Some(i)),
                        None => (b.expr(expr, scope)?, None),
                    }
                }
                // A name: a select item's first, then a FROM column's; in
                // an expression the other way round (alias.rs).
                ast::Expr::Identifier(id) => {
                    let mut items = names
                        .iter()
                        .zip(&out)
                        .enumerate()
                        .filter(|(_, ((n, _), _))| n.eq_ignore_ascii_case(&id.value))
                        .map(|(i, (_, e))| (i, e));
                    match items.next() {
                        Some((i, e)) if items.all(|(_, x)| x == e) => (e.clone(), Some(i)),
                        Some(_) => {
                            return Err(SqlError::ambiguous_column(&id.value, "order clause"))
                        }
                        None => (b.expr(expr, scope)?, None),
                    }
                }
                other => (
                    b.expr(
                        &super::alias::by_column_first(other, &sel.projection, scope),
                        scope,
                    )?,
                    None,
                ),
            };
            order.push((e, desc));
            order_items.push(item);
        }
    }
    let having = match &sel.having {
        Some(h) => {
            b.place = "having clause";
            // HAVING may use output aliases (alias.rs; but no window
            // function: 4015).
            let grouped = match &sel.group_by {
                ast::GroupByExpr::Expressions(g, _) => super::alias::grouped_columns(g, scope),
                ast::GroupByExpr::All(_) => Vec::new(),
            };
            let group: &[ast::Expr] = match &sel.group_by {
                ast::GroupByExpr::Expressions(g, _) => g,
                ast::GroupByExpr::All(_) => &[],
            };
            let shown = super::alias::expanded(&sel.projection, scope, star, star_all)?;
            super::alias::check_having_columns(h, &shown, group, scope, outer)?;
            let h = super::alias::having(h, &sel.projection, &grouped, &mut |_, x| x.clone());
            let win = b.win.take();
            let h = b.expr(&h, scope);
            b.win = win;
            Some(h?)
        }
        None => None,
    };
    Ok((out, names, order, having, order_items))
}

/// The name MariaDB gives an unaliased select item that is a literal: a
/// string's text (`'it''s'` names its column it's, `_latin1'z'` z, `N'q'`
/// q), TRUE, FALSE and NULL in capitals. None for anything else (named by
/// its SQL text).
fn literal_name(e: &ast::Expr) -> Option<String> {
    let text = |e: &ast::Expr| match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s)
            | ast::Value::DoubleQuotedString(s)
            | ast::Value::NationalStringLiteral(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    };
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Boolean(b) => Some(if *b { "TRUE" } else { "FALSE" }.to_string()),
            ast::Value::Null => Some("NULL".to_string()),
            _ => text(e),
        },
        ast::Expr::Prefixed { value, .. } => text(value),
        _ => None,
    }
}
