//! Correlated `[NOT] EXISTS` subqueries of a WHERE clause rewritten as
//! uncorrelated IN subqueries, the form ORMs produce for "has a related row"
//! (SQLAlchemy's `any()`/`has()`, Django's `Exists`):
//!
//! ```sql
//! SELECT a.id FROM a WHERE EXISTS (SELECT 1 FROM p WHERE a.id = p.aid AND p.x = 5)
//! -- becomes
//! SELECT a.id FROM a WHERE (a.id IS NOT NULL AND a.id IN
//!   (SELECT p.aid FROM p WHERE p.aid IS NOT NULL AND p.x = 5))
//! ```
//!
//! Only when that is exactly equivalent: the subquery is a plain SELECT over
//! base tables (no GROUP BY, HAVING, aggregate, DISTINCT, LIMIT other than
//! `LIMIT n` with n >= 1, nested subqueries), and exactly one WHERE conjunct
//! reads the outer query:
//! `inner column = outer column` of one non-text comparison family (so IN's
//! comparison and `=` agree). The NULL guards make the IN two-valued, as
//! EXISTS is, also under NOT. The subquery's nodes are kept, so `?`
//! parameters stay where they were. Anything else is left alone, and the
//! binder refuses it (1235).
use super::decorrelate::{conjuncts, correlation, sides, tables_of, ungrouped, Side, Tables};
use rel::catalog::CatalogState;
use sqlparser::ast;

/// `sel` with the correlated EXISTS subqueries of its WHERE clause that can
/// be rewritten as IN subqueries rewritten, or None when there is none.
pub fn rewrite(sel: &ast::Select, st: &CatalogState, cur_db: Option<&str>) -> Option<ast::Select> {
    let w = sel.selection.as_ref()?;
    if sel.from.is_empty() || !has_exists(w) {
        return None;
    }
    let outer = tables_of(&sel.from, st, cur_db)?;
    let mut changed = false;
    let new = walk(w, &outer, st, cur_db, &mut changed);
    if !changed {
        return None;
    }
    let mut out = sel.clone();
    out.selection = Some(new);
    Some(out)
}

fn has_exists(e: &ast::Expr) -> bool {
    use ast::Expr as A;
    match e {
        A::Exists { .. } => true,
        A::UnaryOp { expr, .. } | A::Nested(expr) => has_exists(expr),
        A::BinaryOp { left, right, .. } => has_exists(left) || has_exists(right),
        _ => false,
    }
}

/// `e` with its EXISTS rewritten, through NOT, AND, OR and parentheses.
fn walk(
    e: &ast::Expr,
    outer: &Tables,
    st: &CatalogState,
    cur_db: Option<&str>,
    changed: &mut bool,
) -> ast::Expr {
    use ast::Expr as A;
    match e {
        A::Exists { subquery, negated } => match semi(subquery, outer, st, cur_db) {
            Some(x) => {
                *changed = true;
                let x = A::Nested(Box::new(x));
                if *negated {
                    A::UnaryOp {
                        op: ast::UnaryOperator::Not,
                        expr: Box::new(x),
                    }
                } else {
                    x
                }
            }
            None => e.clone(),
        },
        A::UnaryOp { op, expr } => A::UnaryOp {
            op: *op,
            expr: Box::new(walk(expr, outer, st, cur_db, changed)),
        },
        A::Nested(x) => A::Nested(Box::new(walk(x, outer, st, cur_db, changed))),
        A::BinaryOp { left, op, right } => A::BinaryOp {
            left: Box::new(walk(left, outer, st, cur_db, changed)),
            op: op.clone(),
            right: Box::new(walk(right, outer, st, cur_db, changed)),
        },
        other => other.clone(),
    }
}

fn and(a: ast::Expr, b: ast::Expr) -> ast::Expr {
    ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    }
}

/// `outer IS NOT NULL AND outer IN (SELECT inner FROM .. WHERE inner IS NOT
/// NULL AND <the other conjuncts>)` for `EXISTS (q)`, when equivalent.
fn semi(
    q: &ast::Query,
    outer: &Tables,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Option<ast::Expr> {
    // `LIMIT n` (n >= 1) does not change whether a row exists.
    let limit_ok = match &q.limit_clause {
        None => true,
        Some(ast::LimitClause::LimitOffset {
            limit: Some(ast::Expr::Value(v)),
            offset: None,
            limit_by,
        }) if limit_by.is_empty() => {
            matches!(&v.value, ast::Value::Number(n, _) if n.parse::<u64>().is_ok_and(|n| n >= 1))
        }
        Some(_) => false,
    };
    if q.with.is_some() || !limit_ok || q.fetch.is_some() || !q.locks.is_empty() {
        return None;
    }
    // Other clauses stay in the subquery, where the planner checks them.
    let s = ungrouped(q)?;
    let inner = tables_of(&s.from, st, cur_db)?;
    let only_inner = |e: &ast::Expr| {
        sides(e, &inner, outer).is_some_and(|v| v.iter().all(|s| matches!(s, Side::Inner(..))))
    };
    // The select list is not read, but must name real columns (and no
    // aggregate: `EXISTS (SELECT COUNT(*) ..)` is always true).
    for item in &s.projection {
        match item {
            ast::SelectItem::Wildcard(_) => {}
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }
                if only_inner(e) && !matches!(e, ast::Expr::Function(_)) => {}
            _ => return None,
        }
    }
    for twj in &s.from {
        for j in &twj.joins {
            use ast::JoinOperator as J;
            let c = match &j.join_operator {
                J::Join(c)
                | J::Inner(c)
                | J::CrossJoin(c)
                | J::StraightJoin(c)
                | J::Left(c)
                | J::LeftOuter(c) => c,
                _ => return None,
            };
            match c {
                ast::JoinConstraint::None => {}
                ast::JoinConstraint::On(e) if only_inner(e) => {}
                _ => return None,
            }
        }
    }
    let mut conj = Vec::new();
    if let Some(w) = &s.selection {
        conjuncts(w, &mut conj);
    }
    let mut rest: Vec<ast::Expr> = Vec::new();
    let mut pair: Option<(ast::Expr, ast::Expr)> = None;
    for c in conj {
        if only_inner(&c) {
            rest.push(c);
            continue;
        }
        // Text columns stay out: IN's comparison need not follow their collation.
        let (icol, ocol, _, fam) = correlation(&c, &inner, outer)?;
        if fam == 1 || pair.is_some() {
            return None;
        }
        pair = Some((icol.clone(), ocol.clone()));
    }
    let (icol, ocol) = pair?;
    let mut sub = s.clone();
    sub.projection = vec![ast::SelectItem::UnnamedExpr(icol.clone())];
    let mut w = ast::Expr::IsNotNull(Box::new(icol));
    for c in rest {
        w = and(w, c);
    }
    sub.selection = Some(w);
    let mut query = q.clone();
    query.body = Box::new(ast::SetExpr::Select(Box::new(sub)));
    query.limit_clause = None;
    Some(and(
        ast::Expr::IsNotNull(Box::new(ocol.clone())),
        ast::Expr::InSubquery {
            expr: Box::new(ocol),
            subquery: Box::new(query),
            negated: false,
        },
    ))
}
