//! Correlated subqueries that no rewrite turned into a join
//! (`decorrelate.rs`, `semijoin.rs`): computed for each row of the query
//! around them, as MySQL's DEPENDENT SUBQUERY. The binder marks each use
//! `Expr::Dependent(e, refs)` (the outer row positions it reads; inside the
//! subquery they are `Expr::Correlated(j)`); the executor's row callback
//! runs them through the transaction it is handed, after the conjuncts of
//! the WHERE clause that need no subquery, and evaluates the row under a
//! `RowEnv` holding their results. Results are remembered per distinct
//! outer values for one execution (up to the statement's memory bound).
use super::sub::{held_max, run_held, stop_after, sub_result, Held};
use super::SelectPlan;
use crate::error::Result;
use crate::expr::{Env, Expr};
use crate::subquery::SubResult;
use rel::value::Value;
use std::collections::HashMap;
use txn::Txn;

/// The correlated subqueries of one plan, with their remembered results.
pub(super) struct Dependents {
    /// (subquery index, outer row positions it reads).
    items: Vec<(usize, Vec<usize>)>,
    /// Number of the plan's subqueries (the length of a row's results).
    n: usize,
    memo: HashMap<(usize, Vec<u8>), SubResult>,
    memo_bytes: usize,
    max: usize,
}

impl Dependents {
    /// The correlated subqueries `p`'s row expressions use.
    pub fn of(p: &SelectPlan, env: &dyn Env) -> Dependents {
        let mut items: Vec<(usize, Vec<usize>)> = Vec::new();
        if p.subqueries.is_empty() {
            // A correlated subquery is one of the plan's subqueries: none
            // here (the plans of most statements), nothing to look for.
            return Dependents {
                items,
                n: 0,
                memo: HashMap::new(),
                memo_bytes: 0,
                max: 0,
            };
        }
        let mut add = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Dependent(inner, refs) = x {
                    let mut k = None;
                    inner.walk(&mut |y| match y {
                        Expr::Subquery(i, _)
                        | Expr::InSubquery(_, i, _)
                        | Expr::Exists(i, _)
                        | Expr::Func(crate::func::Func::RowInSubquery(i, _), _)
                            if k.is_none() =>
                        {
                            k = Some(*i)
                        }
                        _ => {}
                    });
                    if let Some(k) = k {
                        if !items.iter().any(|(i, _)| *i == k) {
                            items.push((k, refs.clone()));
                        }
                    }
                }
            })
        };
        // What is evaluated over each input row: WHERE, and the select list
        // and ORDER BY, or the grouping and aggregate arguments (the binder
        // keeps correlated subqueries out of what reads grouped rows).
        p.filter.iter().for_each(&mut add);
        p.out.iter().for_each(&mut add);
        p.order.iter().for_each(|(e, _)| add(e));
        if let Some((groups, aggs)) = &p.agg {
            groups.iter().for_each(&mut add);
            for a in aggs {
                a.arg.iter().for_each(&mut add);
                a.order.iter().for_each(|(e, _)| add(e));
            }
        }
        Dependents {
            items,
            n: p.subqueries.len(),
            memo: HashMap::new(),
            memo_bytes: 0,
            max: held_max(env),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The results of the correlated subqueries for `row` (indexed by
    /// subquery; None for the others).
    pub fn compute(
        &mut self,
        p: &SelectPlan,
        row: &[Value],
        txn: &mut Txn,
        env: &dyn Env,
    ) -> Result<Vec<Option<SubResult>>> {
        let mut out: Vec<Option<SubResult>> = vec![None; self.n];
        for (k, refs) in &self.items {
            let vals: Vec<Value> = refs
                .iter()
                .map(|r| row.get(*r).cloned().unwrap_or(Value::Null))
                .collect();
            // Exact images: 'a' and 'A', 1 and 1.0 may give different rows.
            let key = (*k, exact_image(&vals));
            if let Some(r) = self.memo.get(&key) {
                out[*k] = Some(r.clone());
                continue;
            }
            let Some((sp, kind)) = p.subqueries.get(*k) else {
                continue;
            };
            let held = Held {
                rows: Vec::new(),
                bytes: 0,
                max: self.max,
                what: "subquery".into(),
                stop_after: stop_after(*kind),
            };
            let cenv = CorrEnv {
                inner: env,
                vals: &vals,
            };
            let rows = run_held(sp, txn, &cenv, held)?;
            let bytes = 64 + rows.iter().map(|r| 32 + 24 * r.len()).sum::<usize>();
            let r = sub_result(*kind, rows)?;
            if self.memo_bytes + bytes > self.max / 4 {
                self.memo.clear();
                self.memo_bytes = 0;
            }
            self.memo_bytes += bytes + key.1.len();
            self.memo.insert(key, r.clone());
            out[*k] = Some(r);
        }
        Ok(out)
    }
}

/// The environment a row is evaluated in: its correlated subqueries'
/// results, the rest from the plan's environment.
pub(super) struct RowEnv<'e> {
    pub inner: &'e dyn Env,
    pub subs: &'e [Option<SubResult>],
}

impl Env for RowEnv<'_> {
    crate::env::forward_session_env!(inner);
    fn correlated(&self, j: usize) -> Option<&Value> {
        self.inner.correlated(j)
    }
    fn subquery(&self, k: usize) -> Option<&SubResult> {
        match self.subs.get(k) {
            Some(Some(r)) => Some(r),
            _ => self.inner.subquery(k),
        }
    }
    fn derived(&self, k: usize) -> Option<&[Vec<Value>]> {
        self.inner.derived(k)
    }
    fn work_table(&self, id: usize) -> Option<&[Vec<Value>]> {
        self.inner.work_table(id)
    }
    fn derived_index(&self, k: usize) -> Option<&crate::hashjoin::HashIndex> {
        self.inner.derived_index(k)
    }
}

/// The environment of one run of a correlated subquery: the outer row's
/// values it reads; the statement's session, not the outer plan's
/// subqueries or derived tables (its own are its plan's).
struct CorrEnv<'e> {
    inner: &'e dyn Env,
    vals: &'e [Value],
}

impl Env for CorrEnv<'_> {
    crate::env::forward_session_env!(inner);
    fn correlated(&self, j: usize) -> Option<&Value> {
        self.vals.get(j)
    }
    fn work_table(&self, id: usize) -> Option<&[Vec<Value>]> {
        self.inner.work_table(id)
    }
}

/// An exact, unambiguous byte image of outer values for the memo: a type tag, then
/// the value's bits (strings length-prefixed). Equal images mean identical values, so
/// a remembered result is reused only for exactly the same outer row (two values that
/// compare equal under a collation or numerically may still differ here: a miss, never
/// a wrong answer).
fn exact_image(vals: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(vals.len() * 10);
    for v in vals {
        crate::sort::encode_value(v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_images_tell_apart_what_may_answer_differently() {
        let img = |v: Vec<Value>| exact_image(&v);
        assert_ne!(
            img(vec![Value::Bytes(b"a".to_vec())]),
            img(vec![Value::Bytes(b"A".to_vec())])
        );
        assert_ne!(img(vec![Value::Int(1)]), img(vec![Value::Double(1.0)]));
        assert_ne!(
            img(vec![Value::Decimal(10, 1)]),
            img(vec![Value::Decimal(1, 0)])
        );
        assert_ne!(img(vec![Value::Null]), img(vec![Value::Int(0)]));
        // Length prefixes: ("ab", "c") is not ("a", "bc").
        assert_ne!(
            img(vec![
                Value::Bytes(b"ab".to_vec()),
                Value::Bytes(b"c".to_vec())
            ]),
            img(vec![
                Value::Bytes(b"a".to_vec()),
                Value::Bytes(b"bc".to_vec())
            ])
        );
        assert_eq!(
            img(vec![Value::Int(7), Value::Null]),
            img(vec![Value::Int(7), Value::Null])
        );
    }
}
