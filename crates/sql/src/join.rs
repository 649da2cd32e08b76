//! Joins: left-deep nested loops in FROM order (comma joins, [INNER] JOIN,
//! CROSS JOIN, LEFT [OUTER] JOIN ... ON). Each inner table gets its own
//! access path, chosen from the conjuncts that reference only it and the
//! tables before it; those earlier columns become `Expr::Outer` lookup
//! keys evaluated against the current outer row, so `a.id = b.a_id` turns
//! into an index lookup on `b` per row of `a`.
//!
//! A parenthesized join `t LEFT JOIN (a JOIN b ON x) ON y` is a group: its
//! tables stay consecutive in the loop, the group's ON condition is checked
//! once all of them have a row, and when no row of the group matches, all
//! of its tables are NULL-extended together.
use crate::access::{self, Access};
use crate::error::{Result, SqlError};
use crate::expr::{accepts, BinOp, Env, Expr};
use crate::hashjoin::Probe;
use rel::catalog::Table;
use rel::value::Value;
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
    let mut ok = true;
    e.walk(&mut |x| {
        if let Expr::Col(c) = x {
            if *c >= base + width {
                ok = false;
            }
        }
    });
    if !ok {
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

fn map_cols(e: &Expr, f: &dyn Fn(usize) -> Expr) -> Expr {
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
        Expr::Func(func, args) => Expr::Func(*func, args.iter().map(|a| map_cols(a, f)).collect()),
        other => other.clone(),
    }
}

fn and_all(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter()
        .reduce(|a, b| Expr::Bin(BinOp::And, Box::new(a), Box::new(b)))
}

/// Chooses each table's access path. `where_` is the WHERE clause over the
/// joined row; it guides only tables not on the inner side of a LEFT JOIN
/// (their WHERE applies after NULL extension).
pub fn plan(tables: &mut [JoinTable], where_: Option<&Expr>, locking: bool) {
    let mut where_conj: Vec<Expr> = where_
        .map(|w| w.conjuncts().into_iter().cloned().collect())
        .unwrap_or_default();
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
            t.table
                .def
                .columns
                .iter()
                .map(move |c| if t.derived.is_some() { opaque } else { c.ty })
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
    for i in 0..n {
        let (base, width) = (tables[i].base, tables[i].table.def.columns.len());
        let mut local = Vec::new();
        let mut sources: Vec<&Expr> = Vec::new();
        let after_left = tables[..=i].iter().any(|t| t.left);
        if !after_left {
            sources.extend(where_conj.iter());
        }
        let on_conj: Vec<Expr> = tables[i]
            .on
            .as_ref()
            .map(|o| o.conjuncts().into_iter().cloned().collect())
            .unwrap_or_default();
        sources.extend(on_conj.iter());
        // The ON conditions of the groups holding this table, unless a LEFT
        // JOIN inside the group comes first (its NULL rows must be seen).
        let group_conj: Vec<Expr> = (0..=i)
            .filter_map(|s| Some((s, tables[s].group.as_ref()?)))
            .filter(|(s, g)| s + g.len > i && !tables[s + 1..=i].iter().any(|t| t.left))
            .filter_map(|(_, g)| g.on.as_ref())
            .flat_map(|o| o.conjuncts().into_iter().cloned())
            .collect();
        sources.extend(group_conj.iter());
        for c in sources {
            if let Some(l) = localize(c, base, width) {
                local.push(l);
            }
        }
        if tables[i].derived.is_some() {
            tables[i].filter = if after_left {
                None
            } else {
                and_all(
                    where_conj
                        .iter()
                        .filter(|c| localize(c, base, width).is_some())
                        .cloned()
                        .collect(),
                )
            };
        }
        if tables[i].derived.is_some() {
            tables[i].hash = hash_keys(&local);
        }
        let filter = and_all(local);
        let used: Vec<usize> = (0..width).collect();
        tables[i].access = access::choose(
            &tables[i].table.def,
            filter.as_ref(),
            &used,
            None,
            locking,
            tables[i].hint.as_ref(),
        );
    }
}

/// `col = e` conjuncts (localized) where `e` reads no column of this table.
fn hash_keys(local: &[Expr]) -> Vec<(usize, Expr)> {
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
/// returns false.
pub fn for_each(
    txn: &mut Txn,
    tables: &[JoinTable],
    lock: Option<LockMode>,
    env: &dyn Env,
    visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
) -> Result<()> {
    let mut row = Vec::new();
    let mut visit = |_: &mut Txn, row: &mut Vec<Value>| visit(row);
    let at = Level {
        i: 0,
        stop: tables.len(),
        entered: false,
    };
    level(txn, tables, at, lock, env, &mut row, &mut visit)?;
    Ok(())
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

/// The loop over a group starting at `at.i`: each row of its tables that
/// passes its ON condition goes on to the tables after it; without one, a
/// LEFT-joined group goes on once with all of its columns NULL.
#[allow(clippy::too_many_arguments)]
fn group_level(
    txn: &mut Txn,
    tables: &[JoinTable],
    at: Level,
    g: &JoinGroup,
    lock: Option<LockMode>,
    env: &dyn Env,
    row: &mut Vec<Value>,
    visit: &mut Visit,
) -> Result<bool> {
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
    let mut cont = level(txn, tables, inner, lock, env, row, &mut |txn, row| {
        if let Some(on) = &g.on {
            if !accepts(&on.eval(row, env)?) {
                return Ok(true);
            }
        }
        matched = true;
        level(txn, tables, after, lock, env, row, visit)
    })?;
    if !matched && jt.left && cont {
        let width: usize = tables[at.i..end]
            .iter()
            .map(|t| t.table.def.columns.len())
            .sum();
        row.truncate(jt.base);
        row.extend(std::iter::repeat_n(Value::Null, width));
        cont = level(txn, tables, after, lock, env, row, visit)?;
    }
    Ok(cont)
}

fn level(
    txn: &mut Txn,
    tables: &[JoinTable],
    at: Level,
    lock: Option<LockMode>,
    env: &dyn Env,
    row: &mut Vec<Value>,
    visit: &mut Visit,
) -> Result<bool> {
    let i = at.i;
    if i >= at.stop {
        return visit(txn, row);
    }
    let Some(jt) = tables.get(i) else {
        return visit(txn, row);
    };
    if let (Some(g), false) = (&jt.group, at.entered) {
        return group_level(txn, tables, at, g, lock, env, row, visit);
    }
    let next = Level {
        i: i + 1,
        stop: at.stop,
        entered: false,
    };
    // The first table of a group is an inner table of its group's loop.
    let left = jt.left && jt.group.is_none();
    let outer: Vec<Value> = row[..jt.base].to_vec();
    let mut matched = false;
    let mut cont = true;
    let mut each = |txn: &mut Txn, values: Vec<Value>| -> Result<bool> {
        row.truncate(jt.base);
        row.extend(values);
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
        cont = level(txn, tables, next, lock, env, row, visit)?;
        Ok(cont)
    };
    match jt.derived {
        Some(k) => {
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
            match probe {
                Some(hits) => {
                    for &i in hits {
                        env.check_interrupt()?;
                        if !each(txn, rows[i as usize].clone())? {
                            break;
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
        }
        None => access::for_each_row(
            txn,
            &jt.table,
            &jt.access,
            if jt.shared {
                lock.map(|_| LockMode::Shared)
            } else {
                lock
            },
            None,
            &outer,
            env,
            &mut |txn, r| each(txn, r.values),
        )?,
    }
    if !matched && left && cont {
        row.truncate(jt.base);
        row.extend(std::iter::repeat_n(Value::Null, jt.table.def.columns.len()));
        cont = level(txn, tables, next, lock, env, row, visit)?;
    }
    Ok(cont)
}
