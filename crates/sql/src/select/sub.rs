//! Before a plan reads its first row: its uncorrelated subqueries are run
//! once and its derived tables materialized, and the results are offered to
//! its expressions and joins through a `QueryEnv` wrapped around the
//! statement's environment. Nested plans do the same with their own.
use super::{exec, SelectPlan};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::hashjoin::HashIndex;
use crate::join::JoinTable;
use crate::result::{ColumnInfo, ResultSink};
use crate::subquery::{SubKind, SubResult, SubSet};
use rel::value::Value;
use txn::Txn;

/// A statement's environment plus one plan's subquery results and derived
/// tables.
pub struct QueryEnv<'e> {
    inner: &'e dyn Env,
    /// Per subquery of the plan: its result (None: correlated, computed
    /// per row by `correlated.rs`).
    subs: Vec<Option<SubResult>>,
    derived: Vec<Vec<Vec<Value>>>,
    /// Per derived table: a hash index on its join columns.
    indexes: Vec<Option<HashIndex>>,
}

/// Rows held in memory, at most `max` bytes of them (estimated).
pub(super) struct Held {
    pub rows: Vec<Vec<Value>>,
    pub bytes: usize,
    pub max: usize,
    /// For an error message: the derived table or "subquery".
    pub what: String,
    /// Scalar and EXISTS subqueries need only their first two rows.
    pub stop_after: Option<usize>,
}

impl ResultSink for Held {
    fn columns(&mut self, _: &[ColumnInfo]) -> Result<()> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        if self.stop_after.is_some_and(|n| self.rows.len() >= n) {
            return Ok(());
        }
        self.bytes += 32
            + row
                .iter()
                .map(|v| 24 + if let Value::Bytes(b) = v { b.len() } else { 0 })
                .sum::<usize>();
        if self.bytes > self.max {
            return Err(SqlError::table_full(&self.what));
        }
        self.rows.push(row.to_vec());
        Ok(())
    }
}

impl<'e> QueryEnv<'e> {
    /// Runs `p`'s subqueries and derived tables in `txn`.
    pub fn prepare(p: &SelectPlan, txn: &mut Txn, env: &'e dyn Env) -> Result<QueryEnv<'e>> {
        QueryEnv::build(&p.subqueries, &p.derived, &p.join, txn, env)
    }

    fn build(
        subqueries: &[(SelectPlan, SubKind)],
        derived: &[SelectPlan],
        join: &[JoinTable],
        txn: &mut Txn,
        env: &'e dyn Env,
    ) -> Result<QueryEnv<'e>> {
        let max = held_max(env);
        let mut q = QueryEnv {
            inner: env,
            subs: Vec::with_capacity(subqueries.len()),
            derived: Vec::with_capacity(derived.len()),
            indexes: Vec::with_capacity(derived.len()),
        };
        for (i, d) in derived.iter().enumerate() {
            let what = join
                .iter()
                .find(|j| j.derived == Some(i))
                .map_or_else(|| "derived table".to_string(), |j| j.alias.clone());
            let rows = q.run(d, txn, max, what, None)?;
            let cols: Vec<usize> = join
                .iter()
                .find(|j| j.derived == Some(i))
                .map(|j| j.hash.iter().map(|(c, _)| *c).collect())
                .unwrap_or_default();
            q.indexes
                .push((!cols.is_empty()).then(|| HashIndex::build(&rows, cols)));
            q.derived.push(rows);
        }
        for (sp, kind) in subqueries {
            if !sp.outer_refs.is_empty() {
                q.subs.push(None);
                continue;
            }
            let rows = q.run(sp, txn, max, "subquery".into(), stop_after(*kind))?;
            q.subs.push(Some(sub_result(*kind, rows)?));
        }
        Ok(q)
    }

    /// Runs the subqueries of a statement that is not a SELECT (UPDATE,
    /// DELETE).
    pub fn for_subqueries(
        subqueries: &[(SelectPlan, SubKind)],
        txn: &mut Txn,
        env: &'e dyn Env,
    ) -> Result<QueryEnv<'e>> {
        QueryEnv::build(subqueries, &[], &[], txn, env)
    }

    /// Runs one inner plan (its own subqueries see this environment's
    /// statement, not this plan's results).
    fn run(
        &self,
        p: &SelectPlan,
        txn: &mut Txn,
        max: usize,
        what: String,
        stop_after: Option<usize>,
    ) -> Result<Vec<Vec<Value>>> {
        let held = Held {
            rows: Vec::new(),
            bytes: 0,
            max,
            what,
            stop_after,
        };
        run_held(p, txn, self.inner, held)
    }
}

/// What a statement may hold in memory for its subqueries and derived
/// tables: four times tmp_table_size, at least 64 MiB (they do not spill to
/// disk yet).
pub(super) fn held_max(env: &dyn Env) -> usize {
    env.sys_var("tmp_table_size", false)
        .and_then(|v| v.to_i128())
        .map_or(16 << 20, |b| b.clamp(0, 1 << 40) as usize)
        .saturating_mul(4)
        .max(64 << 20)
}

/// Scalar and EXISTS subqueries need only their first two rows, one row.
pub(super) fn stop_after(kind: SubKind) -> Option<usize> {
    match kind {
        SubKind::Scalar => Some(2),
        SubKind::Exists => Some(1),
        SubKind::In | SubKind::InRow(_) => None,
    }
}

/// Runs plan `p` (with its UNION branches, or as a recursive CTE) into `held`.
pub(super) fn run_held(
    p: &SelectPlan,
    txn: &mut Txn,
    env: &dyn Env,
    mut held: Held,
) -> Result<Vec<Vec<Value>>> {
    if let Some(super::Rec::Cte(c)) = p.recursive.as_deref() {
        return super::recursive::run(p, c, txn, env, held);
    }
    exec::execute_counted(p, txn, env, &mut held, None)?;
    union_rest(p, txn, env, &mut held)?;
    Ok(held.rows)
}

/// What a subquery used as `kind` evaluates to, from its rows.
pub(super) fn sub_result(kind: SubKind, rows: Vec<Vec<Value>>) -> Result<SubResult> {
    Ok(match kind {
        SubKind::Scalar => {
            if rows.len() > 1 {
                return Err(SqlError::subquery_rows());
            }
            SubResult::Scalar(
                rows.into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null),
            )
        }
        SubKind::Exists => SubResult::Exists(!rows.is_empty()),
        SubKind::InRow(_) => SubResult::Rows(rows),
        SubKind::In => SubResult::Set(SubSet::new(
            rows.into_iter()
                .filter_map(|r| r.into_iter().next())
                .collect(),
        )),
    })
}

/// Adds the rows of `p`'s UNION branches to `held` (see `QueryEnv::union_rest`).
pub(super) fn union_rest(
    p: &SelectPlan,
    txn: &mut Txn,
    env: &dyn Env,
    held: &mut Held,
) -> Result<()> {
    {
        // A UNION deduplicates each column under the collation of the first
        // branch that compares it as a string under one.
        let colls: Vec<_> = (0..p.out.len())
            .map(|i| {
                std::iter::once(p)
                    .chain(p.union.iter().map(|(_, b)| b))
                    .find_map(|b| b.out_colls.get(i).copied().flatten())
            })
            .collect();
        for (distinct, b) in &p.union {
            exec::execute_counted(b, txn, env, held, None)?;
            if *distinct {
                let mut seen = std::collections::HashSet::new();
                held.rows.retain(|r| {
                    let mut k = Vec::new();
                    for (i, v) in r.iter().enumerate() {
                        crate::collate::image(v, colls.get(i).copied().flatten(), &mut k);
                    }
                    seen.insert(k)
                });
            }
        }
        Ok(())
    }
}

impl Env for QueryEnv<'_> {
    crate::env::forward_session_env!(inner);
    fn correlated(&self, j: usize) -> Option<&Value> {
        self.inner.correlated(j)
    }
    fn subquery(&self, k: usize) -> Option<&SubResult> {
        self.subs.get(k).and_then(Option::as_ref)
    }
    fn derived(&self, k: usize) -> Option<&[Vec<Value>]> {
        self.derived.get(k).map(|v| &v[..])
    }
    fn work_table(&self, id: usize) -> Option<&[Vec<Value>]> {
        self.inner.work_table(id)
    }
    fn derived_index(&self, k: usize) -> Option<&HashIndex> {
        self.indexes.get(k).and_then(|i| i.as_ref())
    }
}
