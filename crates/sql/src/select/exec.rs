//! Running a `SelectPlan`: reading rows through the access path or join,
//! filtering, then either streaming them (LIMIT/OFFSET applied on the fly)
//! or handing them to the grouping and sorting tail.
use super::SelectPlan;
use crate::access;
use crate::error::{Result, SqlError};
use crate::expr::{accepts, Env, Expr};
use crate::result::{OutType, ResultSink};
use crate::tail::{Grouper, Tail};
use rel::collation::Collation;
use rel::value::{TypeKind, Value};
use std::borrow::Cow;
use txn::Txn;

/// The ORDER BY keys as the tail's sorter takes them: a collated string key
/// (`Expr::SortKey`) as its string, compared under the collation by the sorter
/// (`Sorter::collated`: in place, without a sort key per row when it can).
fn tail_keys(p: &SelectPlan) -> (Vec<&Expr>, Vec<Option<Collation>>) {
    p.order
        .iter()
        .map(|(e, _)| match e {
            Expr::SortKey(c, x) => (&**x, Some(*c)),
            e => (e, None),
        })
        .unzip()
}

/// True when DISTINCT can be done on the sorted rows (`Tail::new`'s `by_keys`):
/// every ORDER BY key is a column of the row that is also an output column
/// under the same collation, and every output column is such a key.
fn distinct_by_keys(p: &SelectPlan, keys: &[&Expr], colls: &[Option<Collation>]) -> bool {
    // Rows of derived tables, UNIONs and system views are not converted to
    // their column's type, so a column may mix an exact number and a DOUBLE
    // of the same value, which the sort orders apart (`sort::sort_cmp`) but
    // DISTINCT takes as one; a DOUBLE column also holds -0.0 and 0.0. Only
    // stored non-floating columns of base tables are sure to sort equal
    // values together.
    if !p.derived.is_empty() || !p.union.is_empty() || p.recursive.is_some() || p.sysview.is_some()
    {
        return false;
    }
    let stored_exact = |j: usize| {
        matches!(p.columns.get(j).map(|c| &c.ty),
            Some(OutType::Column(c)) if !matches!(c.kind, TypeKind::Float | TypeKind::Double))
    };
    let mut covered = vec![false; p.out.len()];
    for (k, c) in keys.iter().zip(colls) {
        if !matches!(k, Expr::Col(_)) {
            return false;
        }
        let mut found = false;
        for (j, o) in p.out.iter().enumerate() {
            if o == *k && p.out_colls.get(j).copied().flatten() == *c && stored_exact(j) {
                covered[j] = true;
                found = true;
            }
        }
        if !found {
            return false;
        }
    }
    covered.iter().all(|c| *c)
}

/// Per output expression, the column it is when the value can move out of a
/// row the statement owns instead of being cloned: a plain column that no
/// other output expression and no ORDER BY key reads (`visit` evaluates those
/// after the output). `None` everywhere when correlated subqueries read the
/// row too.
fn movable_outputs(p: &SelectPlan, keys: &[&Expr], correlated: bool) -> Vec<Option<usize>> {
    if correlated {
        return vec![None; p.out.len()];
    }
    let mut reads: Vec<usize> = Vec::new();
    for e in p.out.iter().chain(keys.iter().copied()) {
        e.walk(&mut |x| {
            let cols = match x {
                Expr::Col(c) | Expr::Outer(c) => std::slice::from_ref(c),
                Expr::Dependent(_, refs) => refs.as_slice(),
                _ => &[],
            };
            for &c in cols {
                if reads.len() <= c {
                    reads.resize(c + 1, 0);
                }
                reads[c] += 1;
            }
        });
    }
    p.out
        .iter()
        .map(|e| match e {
            Expr::Col(c) if reads.get(*c) == Some(&1) => Some(*c),
            _ => None,
        })
        .collect()
}

/// Per ORDER BY key, the column it is when its value can move out of a row
/// the statement owns: a plain column no later key reads (the outputs are
/// evaluated before the keys, and an output that moved its column away is
/// one no key reads: `movable_outputs`). `None` everywhere when correlated
/// subqueries read the row too.
fn movable_keys(keys: &[&Expr], correlated: bool) -> Vec<Option<usize>> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| match k {
            Expr::Col(c) if !correlated => {
                let mut later = false;
                for e in keys.iter().skip(i + 1) {
                    e.walk(&mut |x| {
                        later |= match x {
                            Expr::Col(d) | Expr::Outer(d) => d == c,
                            Expr::Dependent(_, refs) => refs.contains(c),
                            _ => false,
                        }
                    });
                }
                (!later).then_some(*c)
            }
            _ => None,
        })
        .collect()
}

/// `e` over `row`; column `m` of it moved out instead when the row is owned.
fn take_or_eval(
    e: &Expr,
    m: Option<usize>,
    row: &mut Cow<[Value]>,
    env: &dyn Env,
) -> Result<Value> {
    if let (Some(c), Cow::Owned(r)) = (m, &mut *row) {
        if let Some(v) = r.get_mut(c) {
            return Ok(std::mem::replace(v, Value::Null));
        }
    }
    e.eval(row, env)
}

/// Evaluates LIMIT / OFFSET.
fn count_of(e: &Option<Expr>, env: &dyn Env) -> Result<Option<u64>> {
    match e {
        None => Ok(None),
        Some(x) => {
            let v = x.eval(&[], env)?;
            match v.to_i128() {
                Some(i) if i >= 0 => Ok(Some(i.min(u64::MAX as i128) as u64)),
                _ => Err(SqlError::wrong_arguments("LIMIT")),
            }
        }
    }
}

/// Runs a planned SELECT, sending the result set to `sink`. Returns the
/// number of rows sent.
pub fn execute(
    p: &SelectPlan,
    txn: &mut Txn,
    env: &dyn Env,
    sink: &mut dyn ResultSink,
) -> Result<u64> {
    Ok(execute_counted(p, txn, env, sink, None)?.0)
}

/// Runs a planned SELECT; returns the rows sent and FOUND_ROWS(): the rows sent, or
/// with SQL_CALC_FOUND_ROWS the rows there would have been without LIMIT.
/// `default_limit` is sql_select_limit for a client's SELECT without LIMIT.
pub fn execute_counted(
    p: &SelectPlan,
    txn: &mut Txn,
    env: &dyn Env,
    sink: &mut dyn ResultSink,
    default_limit: Option<u64>,
) -> Result<(u64, u64)> {
    let qenv;
    let env: &dyn Env = if p.subqueries.is_empty() && p.derived.is_empty() {
        env
    } else {
        qenv = super::sub::QueryEnv::prepare(p, txn, env)?;
        &qenv
    };
    sink.columns(&p.columns)?;
    let limit = match count_of(&p.limit, env)? {
        None => default_limit,
        l => l,
    };
    let offset = count_of(&p.offset, env)?.unwrap_or(0);
    let calc = p.calc_found_rows;
    if limit == Some(0) && !calc {
        return Ok((0, 0));
    }
    let mut total = 0u64;
    let streaming =
        p.agg.is_none() && p.window.is_none() && !p.distinct && (p.order.is_empty() || p.presorted);
    let mut sent = 0u64;
    let mut skipped = 0u64;
    // Everything a non-streaming query holds is bounded by tmp_table_size and
    // spills to disk past it: groups, DISTINCT, ORDER BY (tail.rs).
    let budget = env
        .sys_var("tmp_table_size", false)
        .and_then(|v| v.to_i128())
        .map_or(16 << 20, |b| b.clamp(0, 1 << 40) as usize);
    let keep = limit.map(|l| (l.saturating_add(offset)).min(usize::MAX as u64) as usize);
    let (key_exprs, key_colls) = tail_keys(p);
    let mut tail = (!streaming).then(|| {
        Tail::new(
            p.distinct,
            p.out_colls.clone(),
            (p.order.iter().map(|(_, d)| *d).collect(), key_colls.clone()),
            p.distinct && distinct_by_keys(p, &key_exprs, &key_colls),
            budget,
            // With SQL_CALC_FOUND_ROWS every row is counted, so none is dropped early.
            if calc { None } else { keep },
        )
    });
    if let Some(t) = &mut tail {
        t.set_interrupt(env.interrupt());
    }
    let mut grouper = p.agg.as_ref().map(|(gexprs, aggs)| {
        let mut g = Grouper::new(gexprs, &p.group_colls, aggs, budget);
        g.set_interrupt(env.interrupt());
        g
    });
    let mut windower = p.window.as_ref().map(|w| {
        let mut w = crate::window::Windower::new(w, budget);
        w.set_interrupt(env.interrupt());
        w
    });
    let mut outbuf: Vec<Value> = Vec::with_capacity(p.out.len());
    // Correlated subqueries: computed per row once the WHERE conjuncts
    // without them hold (`correlated.rs`).
    let mut deps = super::correlated::Dependents::of(p, env);
    let has_deps = !deps.is_empty();
    let pre = if deps.is_empty() {
        None
    } else {
        p.filter.as_ref().and_then(Expr::without_dependent)
    };
    let movable = movable_outputs(p, &key_exprs, has_deps);
    let movable_keys = movable_keys(&key_exprs, has_deps);
    {
        // `checked`: the row passed the WHERE already (the access path
        // applied it; with correlated subqueries, only its conjuncts
        // without them).
        // A row the access path read is owned (`Cow::Owned`): `movable` output
        // columns move out of it.
        let mut visit = |txn: &mut Txn, row: &mut Cow<[Value]>, checked: bool| -> Result<bool> {
            let row_subs;
            let renv;
            let env: &dyn Env = if deps.is_empty() {
                env
            } else {
                if let Some(f) = pre.as_ref().filter(|_| !checked) {
                    if !accepts(&f.eval(row, env)?) {
                        return Ok(true);
                    }
                }
                row_subs = deps.compute(p, row, txn, env)?;
                renv = super::correlated::RowEnv {
                    inner: env,
                    subs: &row_subs,
                };
                &renv
            };
            if let Some(f) = p.filter.as_ref().filter(|_| !checked || has_deps) {
                if !accepts(&f.eval(row, env)?) {
                    return Ok(true);
                }
            }
            if let Some(g) = grouper.as_mut() {
                g.push(row, env)?;
                return Ok(true);
            }
            if let Some(w) = windower.as_mut() {
                w.push(row.to_vec(), env)?;
                return Ok(true);
            }
            outbuf.clear();
            for (e, m) in p.out.iter().zip(&movable) {
                outbuf.push(take_or_eval(e, *m, row, env)?);
            }
            if streaming {
                total += 1;
                if skipped < offset {
                    skipped += 1;
                    return Ok(true);
                }
                if limit.is_some_and(|l| sent >= l) {
                    return Ok(calc);
                }
                sink.row(&outbuf)?;
                sent += 1;
                return Ok(calc || limit.is_none_or(|l| sent < l));
            }
            let mut keys = Vec::with_capacity(key_exprs.len());
            for (k, (e, m)) in key_exprs.iter().zip(&movable_keys).enumerate() {
                keys.push(match p.order_out.get(k).copied().flatten() {
                    Some(i) => outbuf[i].clone(),
                    None => take_or_eval(e, *m, row, env)?,
                });
            }
            if let Some(t) = tail.as_mut() {
                // The row moves into the tail (no copy of its strings).
                let out = std::mem::replace(&mut outbuf, Vec::with_capacity(p.out.len()));
                t.push(out, keys)?;
            }
            Ok(true)
        };
        match (&p.table, &p.access) {
            (Some(t), Some(acc)) => {
                let want = if p.want.iter().all(|w| *w) {
                    None
                } else {
                    Some(&p.want[..])
                };
                let filter = if has_deps {
                    pre.as_ref()
                } else {
                    p.filter.as_ref()
                };
                // Correlated subqueries evaluate the whole WHERE per row.
                let want_ranged = if has_deps || p.want_ranged.is_empty() {
                    None
                } else {
                    Some(&p.want_ranged[..])
                };
                access::for_each_row(
                    txn,
                    t,
                    acc,
                    p.lock,
                    want,
                    want_ranged,
                    filter,
                    &[],
                    env,
                    &mut |txn, r| visit(txn, &mut Cow::Owned(r.values), true),
                )?;
            }
            _ if !p.join.is_empty() => {
                crate::join::for_each(txn, &p.join, p.lock, env, &mut |txn, row| {
                    visit(txn, &mut Cow::Borrowed(row), false)
                })?;
            }
            (None, None) if matches!(p.recursive.as_deref(), Some(super::Rec::Work(_))) => {
                if let Some(super::Rec::Work(id)) = p.recursive.as_deref() {
                    let rows = env.work_table(*id).ok_or_else(|| {
                        crate::error::SqlError::internal("recursive CTE work table")
                    })?;
                    for r in rows {
                        if !visit(txn, &mut Cow::Borrowed(r), false)? {
                            break;
                        }
                    }
                }
            }
            (None, None) if p.sysview.is_some() => {
                if let Some(v) = p.sysview {
                    for r in env.view_rows(v)? {
                        if !visit(txn, &mut Cow::Owned(r), false)? {
                            break;
                        }
                    }
                }
            }
            _ => {
                visit(txn, &mut Cow::Borrowed(&[]), false)?;
            }
        }
    }
    let Some(mut tail) = tail else {
        return Ok((sent, if calc { total } else { sent }));
    };
    // The select list and ORDER BY over a finished row (grouped row, or a row
    // with its window values).
    let mut emit = |row: Vec<Value>| -> Result<()> {
        let out = p
            .out
            .iter()
            .map(|e| e.eval(&row, env))
            .collect::<Result<Vec<_>>>()?;
        let keys = key_exprs
            .iter()
            .enumerate()
            .map(|(k, e)| match p.order_out.get(k).copied().flatten() {
                Some(i) => Ok(out[i].clone()),
                None => e.eval(&row, env),
            })
            .collect::<Result<Vec<_>>>()?;
        tail.push(out, keys)
    };
    if let (Some(g), Some((gexprs, _))) = (grouper, &p.agg) {
        g.finish(env, gexprs.is_empty(), &mut |grow| {
            if let Some(h) = &p.having {
                if !accepts(&h.eval(&grow, env)?) {
                    return Ok(());
                }
            }
            match windower.as_mut() {
                Some(w) => w.push(grow, env),
                None => emit(grow),
            }
        })?;
    }
    if let Some(w) = windower {
        w.finish(env, &mut emit)?;
    }
    let (sent, total) = tail.finish(sink, offset, limit)?;
    Ok((sent, if calc { total } else { sent }))
}
