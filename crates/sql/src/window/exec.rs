//! Running the window step: the rows left after WHERE / GROUP BY / HAVING, each
//! widened by one slot per window call, go through one sort per window (PARTITION BY
//! keys, then ORDER BY keys; `sort::Sorter`, which spills past tmp_table_size); the
//! sorted rows are cut into partitions, one held in memory at a time (bounded like a
//! derived table: four times tmp_table_size, at least 64 MiB, else 1114), computed
//! (`compute`), and passed on to the next window's sort or to the caller.
use super::compute::{partition, Partition};
use super::WindowPlan;
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::sort::{sort_cmp, Sorter};
use rel::value::Value;

/// Gathers rows for the window step and gives them back with their window values.
pub struct Windower<'a> {
    plan: &'a WindowPlan,
    budget: usize,
    max: usize,
    first: Sorter,
    /// Polled by the sorts' merges (KILL, the statement's deadline).
    interrupt: Option<crate::runmerge::Interrupt>,
}

fn value_bytes(v: &Value) -> usize {
    24 + match v {
        Value::Bytes(b) => b.len(),
        _ => 0,
    }
}

impl<'a> Windower<'a> {
    /// `budget`: tmp_table_size (the sorts' memory before spilling).
    pub fn new(plan: &'a WindowPlan, budget: usize) -> Windower<'a> {
        Windower {
            plan,
            budget,
            max: budget.saturating_mul(4).max(64 << 20),
            first: Sorter::new(dirs(plan, 0), budget, None),
            interrupt: None,
        }
    }

    /// Polls `check` while the windows' sorts merge runs (see
    /// `Env::interrupt`).
    pub fn set_interrupt(&mut self, check: Option<crate::runmerge::Interrupt>) {
        self.first.set_interrupt(check.clone());
        self.interrupt = check;
    }

    /// Adds a row (table row or grouped row).
    pub fn push(&mut self, mut row: Vec<Value>, env: &dyn Env) -> Result<()> {
        row.resize(self.plan.width + self.plan.calls.len(), Value::Null);
        let keys = keys(self.plan, 0, &row, env)?;
        row.extend(keys.iter().cloned());
        self.first.push((row, keys))
    }

    /// Computes every window and calls `f` with each row (base values, then window values).
    pub fn finish(self, env: &dyn Env, f: &mut dyn FnMut(Vec<Value>) -> Result<()>) -> Result<()> {
        let plan = self.plan;
        let mut sorter = self.first;
        for s in 0..plan.stages.len() {
            let mut next = (s + 1 < plan.stages.len()).then(|| {
                let mut n = Sorter::new(dirs(plan, s + 1), self.budget, None);
                n.set_interrupt(self.interrupt.clone());
                n
            });
            let np = plan.calls[plan.stages[s][0]].spec.partition.len();
            let mut part: Vec<Vec<Value>> = Vec::new();
            let mut pkeys: Vec<Vec<Value>> = Vec::new();
            let mut bytes = 0usize;
            let max = self.max;
            let mut out = |part: &mut Vec<Vec<Value>>, pkeys: &mut Vec<Vec<Value>>| -> Result<()> {
                env.check_interrupt()?;
                flush(plan, s, part, pkeys, env)?;
                for row in part.drain(..) {
                    match next.as_mut() {
                        Some(n) => {
                            let mut row = row;
                            let k = keys(plan, s + 1, &row, env)?;
                            row.extend(k.iter().cloned());
                            n.push((row, k))?;
                        }
                        None => f(row)?,
                    }
                }
                pkeys.clear();
                Ok(())
            };
            sorter.finish(&mut |mut row| {
                let nk = np + plan.calls[plan.stages[s][0]].spec.order.len();
                let keys = row.split_off(row.len().saturating_sub(nk));
                let new_part = pkeys.first().is_some_and(|k: &Vec<Value>| {
                    k[..np]
                        .iter()
                        .zip(&keys[..np])
                        .any(|(a, b)| sort_cmp(a, b).is_ne())
                });
                if new_part {
                    out(&mut part, &mut pkeys)?;
                    bytes = 0;
                }
                bytes += row.iter().chain(&keys).map(value_bytes).sum::<usize>();
                if bytes > max {
                    return Err(SqlError::table_full("#sql-window"));
                }
                part.push(row);
                pkeys.push(keys);
                Ok(true)
            })?;
            if !part.is_empty() {
                out(&mut part, &mut pkeys)?;
            }
            match next {
                Some(n) => sorter = n,
                None => break,
            }
        }
        Ok(())
    }
}

/// Sort directions of stage `s`: partition keys ascending, then the ORDER BY's.
fn dirs(plan: &WindowPlan, s: usize) -> Vec<bool> {
    let spec = &plan.calls[plan.stages[s][0]].spec;
    let mut d = vec![false; spec.partition.len()];
    d.extend(spec.order.iter().map(|(_, desc)| *desc));
    d
}

/// Stage `s`'s sort keys of a row: PARTITION BY values, then ORDER BY values.
fn keys(plan: &WindowPlan, s: usize, row: &[Value], env: &dyn Env) -> Result<Vec<Value>> {
    let spec = &plan.calls[plan.stages[s][0]].spec;
    spec.partition
        .iter()
        .chain(spec.order.iter().map(|(e, _)| e))
        .map(|e| e.eval(row, env))
        .collect()
}

/// Computes stage `s`'s calls over one partition (its rows and their sort keys).
fn flush(
    plan: &WindowPlan,
    s: usize,
    part: &mut [Vec<Value>],
    pkeys: &[Vec<Value>],
    env: &dyn Env,
) -> Result<()> {
    let spec = &plan.calls[plan.stages[s][0]].spec;
    let np = spec.partition.len();
    let okeys: Vec<Vec<Value>> = pkeys.iter().map(|k| k[np..].to_vec()).collect();
    let calls: Vec<(usize, &super::WinCall)> = plan.stages[s]
        .iter()
        .map(|&k| (plan.width + k, &plan.calls[k]))
        .collect();
    partition(
        Partition {
            rows: part,
            keys: &okeys,
            desc: spec.order.first().is_some_and(|(_, d)| *d),
        },
        &calls,
        env,
    )
}
