//! Expression depth, bounded before any recursive pass sees a statement (issue 14 item 2).
//!
//! sqlparser limits nesting through parentheses, function calls and the like (its recursion
//! limit), but reads a chain of infix or postfix operators (`1+1+...`, `a OR b OR ...`,
//! `x IS NULL IS NULL ...`) in a loop into a left-deep tree as deep as the chain is long,
//! which every recursive pass after it (binding, planning, evaluation, dropping) would walk
//! on the connection thread's stack. So, right after parsing:
//! - chains of AND, OR or XOR (associative also in three-valued logic) are rebuilt as
//!   balanced trees, so thousands of terms nest only as deep as their logarithm;
//! - any other chain longer than [`MAX_CHAIN`] is refused with error 1436 (thread stack
//!   overrun), as MySQL refuses a statement its stack cannot hold;
//! - so is a chain of set operations (`SELECT 1 UNION SELECT 1 UNION ...`, also left-deep),
//!   taken apart iteratively so that not even dropping it recurses.
//!
//! Planning recurses once per query level (subqueries, derived tables, set operations,
//! CTEs and the bodies of the views a query reads); sqlparser bounds the levels of one
//! statement's text, but views nest other statements' text. [`PlanDepth`] counts the levels
//! planned on this thread across view expansion and refuses past [`MAX_PLAN_DEPTH`] (1436).
//!
//! The walk itself is sqlparser's visitor, which descends only after the pre-visit hook has
//! balanced or refused the node, so it never goes deeper than the bound.
use crate::error::{Result, SqlError};
use sqlparser::ast::{BinaryOperator as Op, Expr, Query, SetExpr, Statement, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Longest operator chain accepted (each link is a level of recursion in later passes;
/// `crate::SESSION_STACK_SIZE` is sized for it).
pub const MAX_CHAIN: usize = 2000;

/// Most query levels planned inside one another (each a `plan_in` frame and the binding
/// under it; `crate::SESSION_STACK_SIZE` is sized for it).
pub const MAX_PLAN_DEPTH: usize = 250;

thread_local! {
    static PLAN_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One query level being planned on this thread; dropping it leaves the level.
pub struct PlanDepth(());

impl PlanDepth {
    /// Enters a query level: 1436 past [`MAX_PLAN_DEPTH`] levels.
    pub fn enter() -> Result<PlanDepth> {
        PLAN_DEPTH.with(|d| {
            if d.get() >= MAX_PLAN_DEPTH {
                return Err(SqlError::plan_too_deep(MAX_PLAN_DEPTH));
            }
            d.set(d.get() + 1);
            Ok(PlanDepth(()))
        })
    }
}

impl Drop for PlanDepth {
    fn drop(&mut self) {
        PLAN_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Balances AND/OR/XOR chains and refuses other chains past [`MAX_CHAIN`].
pub fn bound(stmt: &mut Statement) -> Result<()> {
    match stmt.visit(&mut Bounder) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

struct Bounder;

impl VisitorMut for Bounder {
    type Break = SqlError;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<SqlError> {
        let mut n = 0;
        let mut e = &*q.body;
        while let SetExpr::SetOperation { left, .. } = e {
            n += 1;
            e = left;
        }
        if n > MAX_CHAIN {
            dismantle(&mut q.body);
            return ControlFlow::Break(SqlError::too_deep(n, MAX_CHAIN));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<SqlError> {
        if let Expr::BinaryOp { op, .. } = expr {
            if matches!(op, Op::And | Op::Or | Op::Xor) {
                let op = op.clone();
                balance(expr, &op);
            }
        }
        let n = chain_len(expr);
        if n > MAX_CHAIN {
            return ControlFlow::Break(SqlError::too_deep(n, MAX_CHAIN));
        }
        ControlFlow::Continue(())
    }
}

/// The operand through which a chain of infix or postfix operators continues.
fn chain_next(e: &Expr) -> Option<&Expr> {
    Some(match e {
        Expr::BinaryOp { left, .. } => left,
        Expr::IsNull(x)
        | Expr::IsNotNull(x)
        | Expr::IsTrue(x)
        | Expr::IsNotTrue(x)
        | Expr::IsFalse(x)
        | Expr::IsNotFalse(x)
        | Expr::IsUnknown(x)
        | Expr::IsNotUnknown(x)
        | Expr::IsDistinctFrom(x, _)
        | Expr::IsNotDistinctFrom(x, _) => x,
        Expr::Between { expr, .. }
        | Expr::InList { expr, .. }
        | Expr::Like { expr, .. }
        | Expr::ILike { expr, .. }
        | Expr::RLike { expr, .. }
        | Expr::SimilarTo { expr, .. }
        | Expr::Collate { expr, .. }
        | Expr::AtTimeZone {
            timestamp: expr, ..
        }
        | Expr::InSubquery { expr, .. } => expr,
        Expr::UnaryOp { expr, .. } => expr,
        _ => return None,
    })
}

/// Unlinks a left-deep chain of set operations one link at a time, so that dropping
/// it never recurses deeper than one link.
fn dismantle(body: &mut SetExpr) {
    let empty = || {
        SetExpr::Values(sqlparser::ast::Values {
            explicit_row: false,
            value_keyword: false,
            rows: vec![],
        })
    };
    let mut cur = std::mem::replace(body, empty());
    while let SetExpr::SetOperation { mut left, .. } = cur {
        cur = std::mem::replace(&mut *left, empty());
    }
}

/// Length of the chain starting at `e` (iterative).
fn chain_len(mut e: &Expr) -> usize {
    let mut n = 0;
    while let Some(next) = chain_next(e) {
        n += 1;
        e = next;
    }
    n
}

/// Rebuilds the maximal tree of `op` rooted at `expr` as a balanced tree over the same
/// operands in the same order.
fn balance(expr: &mut Expr, op: &Op) {
    let mut operands = Vec::new();
    // Iterative in-order flattening: left before right.
    let mut stack = vec![std::mem::replace(
        expr,
        Expr::value(sqlparser::ast::Value::Null),
    )];
    while let Some(e) = stack.pop() {
        match e {
            Expr::BinaryOp { left, op: o, right } if &o == op => {
                stack.push(*right);
                stack.push(*left);
            }
            other => operands.push(other),
        }
    }
    *expr = build(operands, op);
}

fn build(mut operands: Vec<Expr>, op: &Op) -> Expr {
    if operands.len() == 1 {
        if let Some(e) = operands.pop() {
            return e;
        }
    }
    let right = operands.split_off(operands.len() / 2);
    Expr::BinaryOp {
        left: Box::new(build(operands, op)),
        op: op.clone(),
        right: Box::new(build(right, op)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn parse(sql: &str) -> Statement {
        let mut v = Parser::parse_sql(&crate::dialect::StrataDialect::default(), sql).unwrap();
        v.remove(0)
    }

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::BinaryOp { left, right, .. } => 1 + depth(left).max(depth(right)),
            _ => 0,
        }
    }

    fn where_of(s: &Statement) -> &Expr {
        let Statement::Query(q) = s else { panic!() };
        let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() else {
            panic!()
        };
        sel.selection.as_ref().unwrap()
    }

    #[test]
    fn long_union_chains_are_refused() {
        let ok = vec!["SELECT 1"; 100].join(" UNION ALL ");
        assert!(bound(&mut parse(&ok)).is_ok());
        let long = vec!["SELECT 1"; MAX_CHAIN + 2].join(" UNION ALL ");
        let e = bound(&mut parse(&long)).unwrap_err();
        assert_eq!(e.code, 1436);
    }

    #[test]
    fn or_chains_become_balanced_and_keep_their_order() {
        let terms: Vec<String> = (0..1000).map(|i| format!("a = {i}")).collect();
        let mut s = parse(&format!("SELECT 1 FROM t WHERE {}", terms.join(" OR ")));
        bound(&mut s).unwrap();
        let w = where_of(&s);
        assert!(depth(w) <= 11, "depth {}", depth(w));
        // Same operands, same order.
        let text = w.to_string().replace(['(', ')'], "");
        assert_eq!(text, terms.join(" OR "));
    }

    #[test]
    fn mixed_and_or_keep_their_meaning() {
        let mut s = parse("SELECT 1 FROM t WHERE a = 1 OR b = 2 AND c = 3 OR d = 4");
        bound(&mut s).unwrap();
        assert_eq!(
            where_of(&s).to_string(),
            "a = 1 OR b = 2 AND c = 3 OR d = 4"
        );
    }

    #[test]
    fn other_chains_past_the_bound_are_refused() {
        let ok = vec!["1"; MAX_CHAIN + 1].join(" - ");
        bound(&mut parse(&format!("SELECT {ok}"))).unwrap();
        let long = vec!["1"; MAX_CHAIN + 2].join(" - ");
        let e = bound(&mut parse(&format!("SELECT {long}"))).unwrap_err();
        assert_eq!(e.code, 1436);
        let is_null = format!("SELECT 1{}", " IS NULL".repeat(MAX_CHAIN + 5));
        assert_eq!(bound(&mut parse(&is_null)).unwrap_err().code, 1436);
    }
}
