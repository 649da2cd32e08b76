//! Joins: left-deep nested loops (comma joins, [INNER] JOIN, CROSS JOIN,
//! STRAIGHT_JOIN, LEFT [OUTER] JOIN ... ON). The inner joins before the
//! first LEFT JOIN or group run in the order `joinorder` finds cheapest
//! (FROM order under STRAIGHT_JOIN); the rest in FROM order. The joined
//! row keeps FROM order whatever the loop order (each table writes its
//! columns at its `base`). Each inner table gets its own access path,
//! chosen from the conjuncts that reference only it and the tables before
//! it; those earlier columns become `Expr::Outer` lookup keys evaluated
//! against the current row, so `a.id = b.a_id` turns into an index lookup
//! on `b` per row of `a`. A base table with no usable index but an
//! equi-join condition is read once into a hash table (bounded by
//! tmp_table_size; beyond it the loop scans per outer row) and probed.
//! WHERE conjuncts are checked as soon as their tables have a row.
//!
//! A parenthesized join `t LEFT JOIN (a JOIN b ON x) ON y` is a group: its
//! tables stay consecutive in the loop, the group's ON condition is checked
//! once all of them have a row, and when no row of the group matches, all
//! of its tables are NULL-extended together.
use crate::access::{self, Access};
use crate::error::{Result, SqlError};
use crate::expr::{accepts, BinOp, Env, Expr};
use crate::hashjoin::{HashIndex, Probe};
use crate::joinorder::{Conds, Mask};
use rel::catalog::Table;
use rel::value::Value;
use std::cell::OnceCell;
use std::sync::Arc;
use txn::{LockMode, Txn};

/// One table of a join, in execution order.
#[derive(Debug, Clone)]
pub struct JoinTable {
    pub table: Arc<Table>,
    pub alias: String,
    /// Position of its first column in the joined row.
    pub base: usize,
    pub access: Access,
    /// ON condition over the joined row (columns up to this table).
    pub on: Option<Expr>,
    /// LEFT JOIN: emit NULLs when nothing matches.
    pub left: bool,
    /// USE/FORCE/IGNORE INDEX.
    pub hint: Option<crate::accept::IndexHint>,
    /// A derived table: rows come from the plan's derived table k (and
    /// `table` is a stand-in describing its columns).
    pub derived: Option<usize>,
    /// For a derived table, the WHERE conjuncts over the tables up to it,
    /// applied to the joined row as soon as it has this table's columns.
    pub filter: Option<Expr>,
    /// For a derived table, equalities `column = expression over the earlier
    /// tables (Outer)`: its rows are hash-indexed on those columns.
    pub hash: Vec<(usize, Expr)>,
    /// Read under a shared lock when the statement locks (a table a
    /// multi-table UPDATE or DELETE only reads).
    pub shared: bool,
    /// On the first table of a parenthesized join: the group it starts
    /// (`left` then says whether the whole group is LEFT-joined).
    pub group: Option<JoinGroup>,
    /// A base table read in full under an equi-join: (key over its row,
    /// key over the joined row); its rows (read with `access`, which then
    /// uses no outer column) are hashed once per execution.
    pub hash_join: Vec<(Expr, Expr)>,
    /// Estimated rows read per row of the tables before it (EXPLAIN).
    pub rows: f64,
}

/// A parenthesized join in FROM: `len` consecutive tables joined to the
/// tables before them as one, under `on` (bound over the joined row up to
/// the group's last table).
#[derive(Debug, Clone)]
pub struct JoinGroup {
    pub len: usize,
    pub on: Option<Expr>,
}

/// Rewrites `e` for the table at `base` with `width` columns: its columns
/// become local positions, earlier tables' columns become `Outer`. None if
/// `e` reads a later table.
pub fn localize(e: &Expr, base: usize, width: usize) -> Option<Expr> {
    if !reads_below(e, base + width) {
        return None;
    }
    Some(map_cols(e, &|c| {
        if c >= base {
            Expr::Col(c - base)
        } else {
            Expr::Outer(c)
        }
    }))
}

/// True if `e` reads no column at or past `end`.
fn reads_below(e: &Expr, end: usize) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if let Expr::Col(c) = x {
            if *c >= end {
                ok = false;
            }
        }
    });
    ok
}

/// `e` with each column reference replaced by `f(column)`.
pub(crate) fn map_cols(e: &Expr, f: &dyn Fn(usize) -> Expr) -> Expr {
    let m = |x: &Expr| Box::new(map_cols(x, f));
    match e {
        Expr::Col(c) => f(*c),
        Expr::Neg(x) => Expr::Neg(m(x)),
        Expr::Not(x) => Expr::Not(m(x)),
        Expr::BitNot(x) => Expr::BitNot(m(x)),
        Expr::Bin(op, a, b) => Expr::Bin(*op, m(a), m(b)),
        Expr::IsNull(x, n) => Expr::IsNull(m(x), *n),
        Expr::IsBool(x, a, b) => Expr::IsBool(m(x), *a, *b),
        Expr::In(x, l, n) => Expr::In(m(x), l.iter().map(|y| map_cols(y, f)).collect(), *n),
        Expr::InSubquery(x, k, n) => Expr::InSubquery(m(x), *k, *n),
        Expr::Assign(v, x) => Expr::Assign(v.clone(), m(x)),
        Expr::Between(a, b, c, n) => Expr::Between(m(a), m(b), m(c), *n),
        Expr::Like(a, b, n, esc) => Expr::Like(m(a), m(b), *n, *esc),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => Expr::Case {
            operand: operand.as_ref().map(|o| m(o)),
            whens: whens
                .iter()
                .map(|(w, t)| (map_cols(w, f), map_cols(t, f)))
                .collect(),
            otherwise: otherwise.as_ref().map(|o| m(o)),
        },
        Expr::Func(func, args) => {
            Expr::Func(func.clone(), args.iter().map(|a| map_cols(a, f)).collect())
        }
        Expr::Collate(x, c) => Expr::Collate(m(x), *c),
        Expr::Collated(c, x) => Expr::Collated(*c, m(x)),
        Expr::SortKey(c, x) => Expr::SortKey(*c, m(x)),
        // The row positions a correlated subquery reads move with the row.
        Expr::Dependent(x, refs) => Expr::Dependent(
            m(x),
            refs.iter()
                .map(|r| match f(*r) {
                    Expr::Col(n) => n,
                    _ => *r,
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn and_all(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter()
        .reduce(|a, b| Expr::Bin(BinOp::And, Box::new(a), Box::new(b)))
}

/// Chooses the join order and each table's access path, leaving `tables`
/// (given in FROM order) in execution order. `where_` is the WHERE clause
/// over the joined row; it guides only tables not on the inner side of a
/// LEFT JOIN (their WHERE applies after NULL extension). `straight` keeps
/// FROM order (STRAIGHT_JOIN).
pub fn plan(tables: &mut [JoinTable], where_: Option<&Expr>, locking: bool, straight: bool) {
    let own_where: Vec<Expr> = where_
        .map(|w| w.conjuncts().into_iter().cloned().collect())
        .unwrap_or_default();
    let mut where_conj = own_where.clone();
    let n = tables.len();
    // Equalities carried across the join conditions (`c.w = w.id AND w.id = ?`
    // gives `c.w = ?`). With a LEFT JOIN, ON and WHERE hold at different
    // moments: only WHERE's own conjuncts are combined then.
    // A derived table's column types are what its expressions infer, not
    // what its values must be: its columns stay out of propagation.
    let opaque = rel::value::ColumnType::new(rel::value::TypeKind::Double);
    let types: Vec<rel::value::ColumnType> = tables
        .iter()
        .flat_map(|t| {
            t.table.def.columns.iter().map(|c| {
                if t.derived.is_some() {
                    opaque.clone()
                } else {
                    c.ty.clone()
                }
            })
        })
        .collect();
    let any_left = tables.iter().any(|t| t.left);
    let mut all: Vec<&Expr> = where_conj.iter().collect();
    let on_inner: Vec<Expr> = if any_left {
        Vec::new()
    } else {
        tables
            .iter()
            .flat_map(|t| [t.on.as_ref(), t.group.as_ref().and_then(|g| g.on.as_ref())])
            .flatten()
            .flat_map(|o| o.conjuncts().into_iter().cloned())
            .collect()
    };
    all.extend(on_inner.iter());
    let extra = crate::equality::implied(&all, &types);
    where_conj.extend(extra);
    // The inner joins before the first LEFT JOIN or group may run in any
    // order: their ON conditions are conditions on the joined row, checked
    // as soon as their tables have a row.
    // A derived table's size is not known before it runs: joins with one
    // keep the order `select::from::derived_first` gave.
    let k = if straight || n > 63 || tables.iter().any(|t| t.derived.is_some()) {
        0
    } else {
        tables
            .iter()
            .position(|t| t.left || t.group.is_some())
            .unwrap_or(n)
    };
    let mut pooled: Vec<Expr> = Vec::new();
    if k > 1 {
        for t in tables[..k].iter_mut() {
            if let Some(on) = t.on.take() {
                pooled.extend(on.conjuncts().into_iter().cloned());
            }
        }
    }
    let conds = Conds::new(tables, locking);
    let mut exec: Vec<usize> = {
        let mut c = where_conj.clone();
        c.extend(pooled.iter().cloned());
        conds.order(k, &c)
    };
    exec.extend(k..n);
    let pos_of = |i: usize| exec.iter().position(|&x| x == i).unwrap_or(n);
    // The position at which all tables of `m` have a row.
    let done_at = |m: Mask| {
        (0..n.min(64))
            .filter(|t| m & (1 << t) != 0)
            .map(pos_of)
            .max()
    };
    let mut on_at: Vec<Vec<Expr>> = vec![Vec::new(); n];
    for c in pooled.iter() {
        let p = conds.mask(c).and_then(done_at).unwrap_or(0).min(k - 1);
        on_at[exec[p]].push(c.clone());
    }
    // WHERE conjuncts checked at the first table that completes them (not
    // under a LEFT JOIN, and only conditions whose evaluation has no effect).
    let mut where_at: Vec<Vec<Expr>> = vec![Vec::new(); n];
    if n > 1 {
        for c in own_where.iter().filter(|c| pure(c)) {
            if let Some(p) = conds.mask(c).filter(|m| *m != 0).and_then(done_at) {
                let i = exec[p];
                if !tables[..=i].iter().any(|t| t.left) {
                    where_at[i].push(c.clone());
                }
            }
        }
    }
    let mut planned: Vec<JoinTable> = Vec::with_capacity(n);
    let mut avail: Mask = 0;
    for &i in &exec {
        let mut sources: Vec<Expr> = Vec::new();
        let after_left = tables[..=i].iter().any(|t| t.left);
        if !after_left {
            sources.extend(where_conj.iter().cloned());
            sources.extend(pooled.iter().cloned());
        }
        if let Some(o) = &tables[i].on {
            sources.extend(o.conjuncts().into_iter().cloned());
        }
        // The ON conditions of the groups holding this table, unless a LEFT
        // JOIN inside the group comes first (its NULL rows must be seen).
        let group_conj: Vec<Expr> = (0..=i)
            .filter_map(|s| Some((s, tables[s].group.as_ref()?)))
            .filter(|(s, g)| s + g.len > i && !tables[s + 1..=i].iter().any(|t| t.left))
            .filter_map(|(_, g)| g.on.as_ref())
            .flat_map(|o| o.conjuncts().into_iter().cloned())
            .collect();
        sources.extend(group_conj);
        let step = conds.step(i, avail, &sources);
        let mut jt = tables[i].clone();
        if jt.derived.is_some() {
            let local: Vec<Expr> = sources
                .iter()
                .filter_map(|c| conds.localize(c, i, avail))
                .collect();
            jt.hash = hash_keys(&local);
        }
        if !on_at[i].is_empty() {
            jt.on = and_all(std::mem::take(&mut on_at[i]));
        }
        jt.filter = and_all(std::mem::take(&mut where_at[i]));
        jt.access = step.access;
        jt.hash_join = step.hash;
        jt.rows = step.rows;
        planned.push(jt);
        if i < 64 {
            avail |= 1 << i;
        }
    }
    for (slot, jt) in tables.iter_mut().zip(planned) {
        *slot = jt;
    }
}

/// True if evaluating `e` more or fewer times changes nothing (no
/// assignment, no RAND(), SLEEP() or UUID()).
fn pure(e: &Expr) -> bool {
    use crate::func::Func;
    let mut ok = true;
    e.walk(&mut |x| match x {
        Expr::Assign(..) => ok = false,
        Expr::Func(Func::Rand | Func::Sleep | Func::Uuid | Func::UuidShort, _) => ok = false,
        _ => {}
    });
    ok
}

/// `col = e` conjuncts (localized) where `e` reads no column of this table.
pub(crate) fn hash_keys(local: &[Expr]) -> Vec<(usize, Expr)> {
    let mut out: Vec<(usize, Expr)> = Vec::new();
    for c in local {
        if let Expr::Bin(BinOp::Eq, a, b) = c {
            let pair = match (&**a, &**b) {
                (Expr::Col(j), e) | (e, Expr::Col(j)) if e.is_row_independent() => (*j, e),
                _ => continue,
            };
            if !out.iter().any(|(j, _)| *j == pair.0) {
                out.push((pair.0, pair.1.clone()));
            }
        }
    }
    out
}

/// Calls `visit` with every joined row (before the WHERE clause) until it
/// returns false; it may read through the transaction it is given.
pub fn for_each(
    txn: &mut Txn,
    tables: &[JoinTable],
    lock: Option<LockMode>,
    env: &dyn Env,
    visit: &mut dyn FnMut(&mut Txn, &[Value]) -> Result<bool>,
) -> Result<()> {
    let width = tables
        .iter()
        .map(|t| t.base + t.table.def.columns.len())
        .max()
        .unwrap_or(0);
    let mut row = vec![Value::Null; width];
    let mut visit = |txn: &mut Txn, row: &mut Vec<Value>| visit(txn, row);
    let run = Run {
        tables,
        lock,
        env,
        hashed: (0..tables.len()).map(|_| OnceCell::new()).collect(),
    };
    let at = Level {
        i: 0,
        stop: tables.len(),
        entered: false,
    };
    level(txn, &run, at, &mut row, &mut visit)?;
    Ok(())
}

/// One execution of a join: its tables and the hash tables built so far.
struct Run<'r> {
    tables: &'r [JoinTable],
    lock: Option<LockMode>,
    env: &'r dyn Env,
    /// Per table with `hash_join`: its rows and their hash index, once
    /// read (None: too big for memory, the loop scans instead).
    hashed: Vec<OnceCell<Option<Hashed>>>,
}

/// A base table's rows hashed on their join keys.
struct Hashed {
    rows: Vec<Vec<Value>>,
    index: HashIndex,
}

/// What one execution may hold in hash tables: tmp_table_size (its
/// default when unset).
fn hash_budget(env: &dyn Env) -> usize {
    env.sys_var("tmp_table_size", false)
        .and_then(|v| v.to_i128())
        .map_or(16 << 20, |b| b.clamp(0, 1 << 40) as usize)
}

/// Reads table `jt` once through its access path (which uses no outer
/// column) into a hash table on its join keys; None past the budget.
fn build_hash(txn: &mut Txn, run: &Run, jt: &JoinTable) -> Result<Option<Hashed>> {
    let budget = hash_budget(run.env);
    let mut used = 0usize;
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut keys: Vec<Vec<Value>> = Vec::new();
    let mut over = false;
    let lock = jt_lock(jt, run.lock);
    access::for_each_row(
        txn,
        &jt.table,
        &jt.access,
        lock,
        None,
        None,
        None,
        &[],
        run.env,
        &mut |_, r| {
            run.env.check_interrupt()?;
            used += r.values.iter().map(value_size).sum::<usize>() + 64;
            if used > budget {
                over = true;
                return Ok(false);
            }
            let k = jt
                .hash_join
                .iter()
                .map(|(e, _)| e.eval(&r.values, run.env))
                .collect::<Result<Vec<_>>>()?;
            keys.push(k);
            rows.push(r.values);
            Ok(true)
        },
    )?;
    if over {
        return Ok(None);
    }
    let index = HashIndex::build(&keys, (0..jt.hash_join.len()).collect());
    Ok(Some(Hashed { rows, index }))
}

/// Rough bytes a value holds.
fn value_size(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => 24 + b.len(),
        _ => 24,
    }
}

fn jt_lock(jt: &JoinTable, lock: Option<LockMode>) -> Option<LockMode> {
    if jt.shared {
        lock.map(|_| LockMode::Shared)
    } else {
        lock
    }
}

/// Where the nested loop is: table `i`, ending before table `stop`;
/// `entered` when table `i` starts a group whose loop is running (it is then
/// an ordinary inner table of the group).
#[derive(Clone, Copy)]
struct Level {
    i: usize,
    stop: usize,
    entered: bool,
}

type Visit<'v> = dyn FnMut(&mut Txn, &mut Vec<Value>) -> Result<bool> + 'v;

/// Writes a table's values at its place in the joined row.
fn put(row: &mut [Value], base: usize, values: impl IntoIterator<Item = Value>) {
    for (slot, v) in row[base..].iter_mut().zip(values) {
        *slot = v;
    }
}

/// The loop over a group starting at `at.i`: each row of its tables that
/// passes its ON condition goes on to the tables after it; without one, a
/// LEFT-joined group goes on once with all of its columns NULL.
fn group_level(
    txn: &mut Txn,
    run: &Run,
    at: Level,
    g: &JoinGroup,
    row: &mut Vec<Value>,
    visit: &mut Visit,
) -> Result<bool> {
    let tables = run.tables;
    let jt = &tables[at.i];
    let end = at.i + g.len;
    let after = Level {
        i: end,
        stop: at.stop,
        entered: false,
    };
    let mut matched = false;
    let inner = Level {
        i: at.i,
        stop: end,
        entered: true,
    };
    let mut cont = level(txn, run, inner, row, &mut |txn, row| {
        if let Some(on) = &g.on {
            if !accepts(&on.eval(row, run.env)?) {
                return Ok(true);
            }
        }
        matched = true;
        level(txn, run, after, row, visit)
    })?;
    if !matched && jt.left && cont {
        // A group's tables are consecutive in FROM order too.
        let width: usize = tables[at.i..end]
            .iter()
            .map(|t| t.table.def.columns.len())
            .sum();
        put(row, jt.base, std::iter::repeat_n(Value::Null, width));
        cont = level(txn, run, after, row, visit)?;
    }
    Ok(cont)
}

fn level(
    txn: &mut Txn,
    run: &Run,
    at: Level,
    row: &mut Vec<Value>,
    visit: &mut Visit,
) -> Result<bool> {
    let (tables, env) = (run.tables, run.env);
    let i = at.i;
    if i >= at.stop {
        return visit(txn, row);
    }
    let Some(jt) = tables.get(i) else {
        return visit(txn, row);
    };
    if let (Some(g), false) = (&jt.group, at.entered) {
        return group_level(txn, run, at, g, row, visit);
    }
    let next = Level {
        i: i + 1,
        stop: at.stop,
        entered: false,
    };
    // The first table of a group is an inner table of its group's loop.
    let left = jt.left && jt.group.is_none();
    let outer: Vec<Value> = row.clone();
    let mut matched = false;
    let mut cont = true;
    let mut each = |txn: &mut Txn, values: Vec<Value>| -> Result<bool> {
        put(row, jt.base, values);
        if let Some(on) = &jt.on {
            if !accepts(&on.eval(row, env)?) {
                return Ok(true);
            }
        }
        matched = true;
        if let Some(f) = &jt.filter {
            if !accepts(&f.eval(row, env)?) {
                return Ok(true);
            }
        }
        cont = level(txn, run, next, row, visit)?;
        Ok(cont)
    };
    let hashed = if jt.hash_join.is_empty() || jt.derived.is_some() {
        None
    } else {
        let cell = &run.hashed[i];
        if cell.get().is_none() {
            let h = build_hash(txn, run, jt)?;
            let _ = cell.set(h);
        }
        cell.get().and_then(|h| h.as_ref())
    };
    match (jt.derived, hashed) {
        (Some(k), _) => {
            let rows = env
                .derived(k)
                .ok_or_else(|| SqlError::internal(format!("derived table {k} not computed")))?;
            let probe = match env.derived_index(k) {
                Some(ix) if !jt.hash.is_empty() => {
                    let key = jt
                        .hash
                        .iter()
                        .map(|(_, e)| e.eval(&outer, env))
                        .collect::<Result<Vec<_>>>()?;
                    match ix.probe(&key) {
                        Probe::Rows(r) => Some(r),
                        Probe::None => Some(&[][..]),
                        Probe::All => None,
                    }
                }
                _ => None,
            };
            each_of(txn, rows, probe, env, &mut each)?;
        }
        (None, Some(h)) => {
            let key = jt
                .hash_join
                .iter()
                .map(|(_, e)| e.eval(&outer, env))
                .collect::<Result<Vec<_>>>()?;
            let probe = match h.index.probe(&key) {
                Probe::Rows(r) => Some(r),
                Probe::None => Some(&[][..]),
                Probe::All => None,
            };
            each_of(txn, &h.rows, probe, env, &mut each)?;
        }
        (None, None) => access::for_each_row(
            txn,
            &jt.table,
            &jt.access,
            jt_lock(jt, run.lock),
            None,
            None,
            None,
            &outer,
            env,
            &mut |txn, r| each(txn, r.values),
        )?,
    }
    if !matched && left && cont {
        put(
            row,
            jt.base,
            std::iter::repeat_n(Value::Null, jt.table.def.columns.len()),
        );
        cont = level(txn, run, next, row, visit)?;
    }
    Ok(cont)
}

/// Calls `each` with the rows `hits` names (None: every row) until it
/// returns false.
fn each_of(
    txn: &mut Txn,
    rows: &[Vec<Value>],
    hits: Option<&[u32]>,
    env: &dyn Env,
    each: &mut dyn FnMut(&mut Txn, Vec<Value>) -> Result<bool>,
) -> Result<()> {
    match hits {
        Some(hits) => {
            for &i in hits {
                env.check_interrupt()?;
                if let Some(r) = rows.get(i as usize) {
                    if !each(txn, r.clone())? {
                        break;
                    }
                }
            }
        }
        None => {
            for r in rows {
                env.check_interrupt()?;
                if !each(txn, r.clone())? {
                    break;
                }
            }
        }
    }
    Ok(())
}
