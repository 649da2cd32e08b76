//! Access paths: which index a single-table read uses and which key ranges
//! it scans, chosen from the WHERE conjuncts (equalities, IN lists, ranges
//! and ORs of ranges on one column), then executed through a transaction.
//!
//! The chosen ranges are always a superset of the matching rows: the full
//! WHERE is still applied to every row read, so inexact conversions (a
//! fractional probe on an INT key, a clamped out-of-range bound) only
//! widen a range, never lose a row. (Except where the range is the WHERE
//! exactly: `k BETWEEN lo AND hi` on an integer key with integer bounds,
//! `range_is_filter`; every row read then satisfies it.)
use crate::convert::{for_key, KeyProbe};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Env, Expr};
use rel::catalog::Table;
use rel::keycodec::{self, prefix_successor};
use rel::schema::{Index, TableDef};
use rel::table::{self as rt, Row};
use rel::value::Value;
use txn::{LockMode, Txn};

/// A range over one index, as expressions evaluated per execution.
#[derive(Debug, Clone)]
pub struct RangeTpl {
    /// Values of the leading index columns.
    pub eq: Vec<Expr>,
    /// Bounds on the next column: (value, inclusive).
    pub lo: Option<(Expr, bool)>,
    pub hi: Option<(Expr, bool)>,
}

/// How rows are found.
#[derive(Debug, Clone)]
pub struct Access {
    /// 0 = primary key, i = secondary index i-1.
    pub index: usize,
    /// Empty = the whole index.
    pub ranges: Vec<RangeTpl>,
    /// Every range fixes all primary key columns: use point gets.
    pub point: bool,
    /// Scan in descending key order.
    pub reverse: bool,
    /// The secondary index holds every column the statement reads.
    pub covering: bool,
}

impl Access {
    /// Human-readable form for EXPLAIN.
    pub fn describe(&self, def: &TableDef) -> (String, String) {
        let ix = index_of(def, self.index);
        let kind = if self.point {
            "const"
        } else if self.ranges.is_empty() {
            if self.index == 0 {
                "ALL"
            } else {
                "index"
            }
        } else if self.ranges.iter().all(|r| r.lo.is_none() && r.hi.is_none()) {
            "ref"
        } else {
            "range"
        };
        (kind.to_string(), ix.name.clone())
    }
}

/// Index `i` of a table (0 = primary).
pub fn index_of(def: &TableDef, i: usize) -> &Index {
    if i == 0 {
        &def.pk
    } else {
        &def.secondary[i - 1]
    }
}

#[derive(Default, Clone)]
struct ColCond {
    eq: Option<Vec<Expr>>,
    lo: Option<(Expr, bool)>,
    hi: Option<(Expr, bool)>,
    /// OR of ranges/points: (lo, hi) each inclusive when present.
    multi: Option<Vec<(Option<Expr>, Option<Expr>)>>,
}

fn const_side(e: &Expr) -> bool {
    e.is_row_independent()
}

/// False when `v` is a constant that cannot probe column `col` through its
/// key: a number, date or time against a string column compares as a number
/// or a date, not in the key's byte order.
fn probes(def: &TableDef, col: usize, v: &Expr) -> bool {
    let string_col = def
        .columns
        .get(col)
        .is_some_and(|c| c.ty.is_string() || c.ty.is_enum_or_set());
    !string_col
        || match v {
            Expr::Const(c) => matches!(c, Value::Bytes(_) | Value::Null),
            Expr::Neg(_) => false,
            // An outer query's column: only a string one compares as a string.
            Expr::Correlated(_, t) => {
                matches!(t, crate::result::OutType::Column(ct) if ct.is_string())
            }
            _ => true,
        }
}

/// The ENUM/SET column `x` reads as `crate::members` rewrote it for a
/// comparison with `v`: its number against a numeric constant, its number
/// or text against a parameter (`v`). Their probes follow the value's type
/// (`crate::members::key_probe`).
fn member_col(x: &Expr, v: &Expr) -> Option<usize> {
    let Expr::Func(f, args) = x else { return None };
    match (f, args.as_slice()) {
        (crate::func::Func::MemberNumber(..), [Expr::Col(i)]) => matches!(
            v,
            Expr::Const(Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_))
        )
        .then_some(*i),
        (crate::func::Func::MemberOrText(_), [Expr::Col(i), p @ Expr::Param(_)]) => {
            (p == v).then_some(*i)
        }
        _ => None,
    }
}

/// True when constant `v` probes ENUM/SET column `col` nowhere in key
/// order (`crate::members::key_probe` says Unordered: a string range bound,
/// or text that also equals the '' error value): such a condition would
/// read the whole index, so it is no key condition (a table scan, and
/// EXPLAIN says so).
fn spans(def: &TableDef, col: usize, v: &Expr, bound: bool) -> bool {
    match (def.columns.get(col), v) {
        (Some(c), Expr::Const(v)) if c.ty.is_enum_or_set() => matches!(
            crate::members::key_probe(v, &c.ty, bound),
            KeyProbe::Unordered
        ),
        _ => false,
    }
}

/// A lookup value for key column type `ty`, as an equality (`bound` false)
/// or a range bound.
fn probe(v: &Value, ty: &rel::value::ColumnType, bound: bool) -> KeyProbe {
    if ty.is_enum_or_set() {
        crate::members::key_probe(v, ty, bound)
    } else {
        for_key(v, ty)
    }
}

/// The comparison a key may serve, or None. A comparison under a
/// collation (`collate::annotate`) is seen as the plain comparison when its
/// collation is that of the column it tests: the column's index keys hold
/// that collation's weights, so its probes find exactly the rows the
/// comparison accepts (and the full WHERE still runs). One under another
/// collation, or a plain (binary or numeric) comparison of a text column
/// of a non-binary collation (`s > BINARY 'a'` on a `_ci` column), does
/// not follow the key order: None (scan and filter).
fn keyed<'a>(def: &TableDef, e: &'a Expr) -> Option<&'a Expr> {
    let (coll, inner) = match e {
        Expr::Collated(c, inner) => (Some(*c), &**inner),
        e => (None, e),
    };
    let col = match inner {
        Expr::Bin(op, a, b) if *op != BinOp::Or && *op != BinOp::And => match (&**a, &**b) {
            (Expr::Col(i), _) | (_, Expr::Col(i)) => Some(*i),
            (x, v) | (v, x) if member_col(x, v).is_some() => member_col(x, v),
            _ => None,
        },
        Expr::In(a, ..) | Expr::Between(a, ..) => match &**a {
            Expr::Col(i) => Some(*i),
            _ => None,
        },
        _ => None,
    };
    let column = col.and_then(|i| def.columns.get(i));
    match (coll, column) {
        (Some(c), Some(column)) if column.ty.is_text() && column.ty.coll == c => Some(inner),
        (Some(_), _) => None,
        (None, Some(column))
            if column.ty.is_text()
                && !column.ty.is_enum_or_set()
                && column.ty.coll != rel::collation::Collation::Binary =>
        {
            None
        }
        (None, _) => Some(e),
    }
}

/// True when column `c`'s index keys are in its SQL order. Not for a
/// CHAR/VARCHAR/TEXT column under a PAD SPACE collation of a table in key
/// format 1 (trimmed weights: a string continuing with a character below
/// a space sorts after its prefix there, before it in MySQL): such a
/// column's keys serve equality probes only, never ranges or ORDER BY.
fn key_ordered(def: &TableDef, c: usize) -> bool {
    def.key_format != rel::keycodec::KeyFormat::Trimmed
        || def.columns.get(c).is_none_or(|col| {
            !col.ty.is_text() || col.ty.is_enum_or_set() || !col.ty.coll.pad_space()
        })
}

/// Conditions per column from the WHERE conjuncts.
fn analyze(def: &TableDef, filter: Option<&Expr>) -> Vec<ColCond> {
    let ncols = def.columns.len();
    let mut conds = vec![ColCond::default(); ncols];
    let Some(f) = filter else { return conds };
    for c in f.conjuncts() {
        let Some(c) = keyed(def, c) else { continue };
        match c {
            Expr::Bin(op, a, b) => {
                let (col, v, op, checked) = match (&**a, &**b) {
                    (Expr::Col(i), v) if const_side(v) => (*i, v, *op, false),
                    (v, Expr::Col(i)) if const_side(v) => (*i, v, flip(*op), false),
                    (x, v) if member_col(x, v).is_some() => {
                        (member_col(x, v).unwrap_or(ncols), v, *op, true)
                    }
                    (v, x) if member_col(x, v).is_some() => {
                        (member_col(x, v).unwrap_or(ncols), v, flip(*op), true)
                    }
                    _ => {
                        if *op == BinOp::Or {
                            or_ranges(def, c, &mut conds);
                        }
                        continue;
                    }
                };
                if col >= ncols
                    || !(checked || probes(def, col, v))
                    || spans(def, col, v, op != BinOp::Eq)
                {
                    continue;
                }
                let cc = &mut conds[col];
                match op {
                    BinOp::Eq => cc.eq = Some(vec![v.clone()]),
                    BinOp::Gt => cc.lo = Some((v.clone(), false)),
                    BinOp::Ge => cc.lo = Some((v.clone(), true)),
                    BinOp::Lt => cc.hi = Some((v.clone(), false)),
                    BinOp::Le => cc.hi = Some((v.clone(), true)),
                    _ => {}
                }
            }
            Expr::In(a, list, false) => {
                let col = match &**a {
                    Expr::Col(i) if list.iter().all(|v| const_side(v) && probes(def, *i, v)) => {
                        Some(*i)
                    }
                    // A parameter decides ENUM/SET number or text for the
                    // whole list: only a single one probes by its own type.
                    x if list.len() == 1 || !matches!(list.first(), Some(Expr::Param(_))) => {
                        let first = list.first().and_then(|v| member_col(x, v));
                        first.filter(|i| list.iter().all(|v| member_col(x, v) == Some(*i)))
                    }
                    _ => None,
                };
                let col = col.filter(|i| !list.iter().any(|v| spans(def, *i, v, false)));
                if let Some(i) = col.filter(|i| *i < ncols && conds[*i].eq.is_none()) {
                    conds[i].eq = Some(list.clone());
                }
            }
            Expr::Between(a, lo, hi, false) => {
                let col = match &**a {
                    Expr::Col(i)
                        if const_side(lo)
                            && const_side(hi)
                            && probes(def, *i, lo)
                            && probes(def, *i, hi) =>
                    {
                        Some(*i)
                    }
                    x => member_col(x, lo).filter(|i| member_col(x, hi) == Some(*i)),
                };
                let col = col.filter(|i| !spans(def, *i, lo, true) && !spans(def, *i, hi, true));
                if let Some(i) = col.filter(|i| *i < ncols) {
                    conds[i].lo = Some(((**lo).clone(), true));
                    conds[i].hi = Some(((**hi).clone(), true));
                }
            }
            _ => {}
        }
    }
    conds
}

/// `a OR b OR ...` where each term is `col = v`, `col BETWEEN x AND y` or
/// `col IN (...)` on the same column.
fn or_ranges(def: &TableDef, e: &Expr, conds: &mut [ColCond]) {
    let mut terms = Vec::new();
    fn flatten<'a>(e: &'a Expr, v: &mut Vec<&'a Expr>) {
        if let Expr::Bin(BinOp::Or, a, b) = e {
            flatten(a, v);
            flatten(b, v);
        } else {
            v.push(e);
        }
    }
    flatten(e, &mut terms);
    let mut col = None;
    let mut ranges = Vec::new();
    for t in terms {
        let Some(t) = keyed(def, t) else { return };
        let (c, r) = match t {
            Expr::Bin(BinOp::Eq, a, b) => match (&**a, &**b) {
                (Expr::Col(i), v) | (v, Expr::Col(i)) if const_side(v) => {
                    (*i, vec![(Some(v.clone()), Some(v.clone()))])
                }
                // An ENUM/SET column against a parameter (an IN list of
                // parameters is split into such equalities).
                (x, v) | (v, x) if member_col(x, v).is_some() => match member_col(x, v) {
                    Some(i) => (i, vec![(Some(v.clone()), Some(v.clone()))]),
                    None => return,
                },
                _ => return,
            },
            Expr::Between(a, lo, hi, false) => match &**a {
                Expr::Col(i) if const_side(lo) && const_side(hi) => {
                    (*i, vec![(Some((**lo).clone()), Some((**hi).clone()))])
                }
                _ => return,
            },
            Expr::In(a, list, false) => match &**a {
                Expr::Col(i) if list.iter().all(const_side) => (
                    *i,
                    list.iter()
                        .map(|v| (Some(v.clone()), Some(v.clone())))
                        .collect(),
                ),
                _ => return,
            },
            _ => return,
        };
        if col.is_some_and(|x| x != c)
            || !r.iter().all(|(a, b)| {
                a.iter()
                    .chain(b.iter())
                    .all(|v| probes(def, c, v) && !spans(def, c, v, a != b))
            })
        {
            return;
        }
        col = Some(c);
        ranges.extend(r);
    }
    let Some(c) = col.filter(|c| *c < conds.len() && conds[*c].eq.is_none()) else {
        return;
    };
    // Points on an ENUM/SET column probe as equalities (a string is a
    // member, not a bound in key order).
    let member = def.columns[c].ty.is_enum_or_set();
    if member && ranges.iter().all(|(a, b)| a.is_some() && a == b) {
        conds[c].eq = Some(ranges.into_iter().filter_map(|(a, _)| a).collect());
    } else if !member
        || ranges
            .iter()
            .all(|(a, b)| a.iter().chain(b.iter()).all(|v| !spans(def, c, v, true)))
    {
        conds[c].multi = Some(ranges);
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// Chooses the access path for a table read. `used` lists the columns the
/// statement reads (for covering indexes); `order` is the ORDER BY as
/// (column, descending) when every term is a plain column.
pub fn choose(
    def: &TableDef,
    filter: Option<&Expr>,
    used: &[usize],
    order: Option<&[(usize, bool)]>,
    locking: bool,
    hint: Option<&crate::accept::IndexHint>,
) -> Access {
    let conds = analyze(def, filter);
    let mut best: Option<(i64, Access)> = None;
    let n_ix = 1 + def.secondary.len();
    for i in 0..n_ix {
        if (i == 0 && def.hidden_pk) || !crate::accept::IndexHint::allows(hint, i) {
            continue;
        }
        let ix = index_of(def, i);
        let mut prefixes: Vec<Vec<Expr>> = vec![vec![]];
        let mut eq_cols = 0;
        let mut ranges: Vec<RangeTpl> = Vec::new();
        let mut has_range = false;
        for &c in &ix.columns {
            let cc = &conds[c];
            if let Some(vals) = &cc.eq {
                if prefixes.len() * vals.len() > 4096 {
                    break;
                }
                prefixes = prefixes
                    .into_iter()
                    .flat_map(|p| {
                        vals.iter().map(move |v| {
                            let mut q = p.clone();
                            q.push(v.clone());
                            q
                        })
                    })
                    .collect();
                eq_cols += 1;
                continue;
            }
            if !key_ordered(def, c) {
                // Only equality probes use this column's keys.
                break;
            }
            if cc.lo.is_some() || cc.hi.is_some() {
                for p in &prefixes {
                    ranges.push(RangeTpl {
                        eq: p.clone(),
                        lo: cc.lo.clone(),
                        hi: cc.hi.clone(),
                    });
                }
                has_range = true;
            } else if let Some(m) = &cc.multi {
                for p in &prefixes {
                    for (lo, hi) in m {
                        ranges.push(RangeTpl {
                            eq: p.clone(),
                            lo: lo.clone().map(|v| (v, true)),
                            hi: hi.clone().map(|v| (v, true)),
                        });
                    }
                }
                has_range = true;
            }
            break;
        }
        if !has_range && eq_cols > 0 {
            ranges = prefixes
                .into_iter()
                .map(|p| RangeTpl {
                    eq: p,
                    lo: None,
                    hi: None,
                })
                .collect();
        }
        let full_unique = ix.unique && eq_cols == ix.columns.len() && !has_range;
        let point = i == 0 && full_unique;
        let covering = i > 0
            && !locking
            && used.iter().all(|c| {
                (ix.columns.contains(c) || def.pk.columns.contains(c))
                    && !rel::keycodec::is_lossy(&def.columns[*c].ty, def.key_format)
            })
            && !def.hidden_pk;
        // Order satisfied by this index after the equality prefix?
        let ordered = order.is_some_and(|o| {
            !o.is_empty()
                && o.iter().all(|(c, _)| key_ordered(def, *c))
                && o.iter().all(|(_, d)| *d == o[0].1)
                && o.iter()
                    .enumerate()
                    .all(|(k, (c, _))| ix.columns.get(eq_cols + k) == Some(c))
        });
        let mut score: i64 = if point {
            1_000_000
        } else if full_unique {
            500_000
        } else {
            (eq_cols as i64) * 1000 + if has_range { 500 } else { 0 }
        };
        if score == 0 && !ordered {
            // A full index scan only makes sense when it avoids a sort.
            if i != 0 {
                continue;
            }
        }
        if i == 0 {
            score += 10; // no extra lookup
        }
        if covering {
            score += 20;
        }
        if ordered {
            score += 5;
        }
        if hint.is_some_and(|h| h.force) && (eq_cols > 0 || has_range || ordered) {
            // FORCE INDEX: a table scan only when no named index can be used.
            score += 2_000_000;
        }
        let acc = Access {
            index: i,
            ranges: if score <= 30 && !has_range && eq_cols == 0 {
                vec![]
            } else {
                ranges
            },
            point,
            reverse: ordered && order.is_some_and(|o| o[0].1),
            covering,
        };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, acc));
        }
    }
    match best {
        Some((_, a)) => a,
        None => Access {
            index: 0,
            ranges: vec![],
            point: false,
            reverse: false,
            covering: false,
        },
    }
}

/// True if this access path returns rows in the ORDER BY's order.
pub fn satisfies_order(def: &TableDef, acc: &Access, order: &[(usize, bool)]) -> bool {
    if order.is_empty() {
        return true;
    }
    let ix = index_of(def, acc.index);
    if def.hidden_pk && acc.index == 0 {
        return false;
    }
    let eq_cols = acc.ranges.first().map_or(0, |r| r.eq.len());
    let same_eq = acc.ranges.iter().all(|r| r.eq.len() == eq_cols);
    // An equality on a string column fixes the key only when its value is a
    // string: a number (a parameter bound as one) spans the column
    // (KeyProbe::Unordered) and the rows come in (col, next) order.
    let fixed = acc.ranges.iter().all(|r| {
        r.eq.iter().enumerate().all(|(k, e)| {
            let ty = &def.columns[ix.columns[k]].ty;
            !ty.is_string()
                || matches!(e, Expr::Const(Value::Bytes(_)))
                    && !(ty.is_enum_or_set() && ty.members.position(b"", ty.coll).is_some())
        })
    });
    // With several ranges the order holds only when ranges are scanned in
    // key order, which `scan` does (sorted, merged).
    same_eq
        && fixed
        && order.iter().all(|(c, _)| key_ordered(def, *c))
        && order.iter().all(|(_, d)| *d == acc.reverse)
        && order.iter().enumerate().all(|(k, (c, _))| {
            // Equality columns may also appear in ORDER BY; skip them.
            ix.columns.get(eq_cols + k) == Some(c)
                || ix.columns[..eq_cols.min(ix.columns.len())].contains(c)
        })
}

/// A byte range [lo, hi) of index keys (hi None = to the end).
type KeyRange = (Vec<u8>, Option<Vec<u8>>);

/// Byte ranges [lo, hi) of an access path for this execution, sorted and
/// merged, and whether they are point keys (`acc.point` unless a probe
/// turned out unordered and a range had to span a key column).
fn byte_ranges(
    def: &TableDef,
    acc: &Access,
    outer: &[Value],
    env: &dyn Env,
) -> Result<(Vec<KeyRange>, bool)> {
    let ix = index_of(def, acc.index);
    let base = keycodec::index_prefix(ix.id).to_vec();
    if acc.ranges.is_empty() {
        return Ok((vec![(base.clone(), prefix_successor(&base))], false));
    }
    let mut point = acc.point;
    let mut out: Vec<KeyRange> = Vec::with_capacity(acc.ranges.len());
    'ranges: for r in &acc.ranges {
        let mut prefix = base.clone();
        let mut spans = false;
        for (k, e) in r.eq.iter().enumerate() {
            let col = &def.columns[ix.columns[k]];
            match probe(&e.eval(outer, env)?, &col.ty, false) {
                KeyProbe::Exact(v) => {
                    keycodec::encode(&mut prefix, def.key_format, &col.ty, col.nullable, &v)?
                }
                KeyProbe::Unordered => {
                    // Every key under the prefix so far; the WHERE decides.
                    spans = true;
                    point = false;
                    break;
                }
                _ => continue 'ranges,
            }
        }
        let (mut lo, mut hi) = (prefix.clone(), prefix_successor(&prefix));
        if !spans && (r.lo.is_some() || r.hi.is_some()) {
            let col = &def.columns[ix.columns[r.eq.len()]];
            let mut lo_set = false;
            if let Some((e, incl)) = &r.lo {
                let mut k = prefix.clone();
                match probe(&e.eval(outer, env)?, &col.ty, true) {
                    KeyProbe::Exact(v) => {
                        keycodec::encode(&mut k, def.key_format, &col.ty, col.nullable, &v)?;
                        lo = if *incl {
                            k
                        } else {
                            prefix_successor(&k).unwrap_or(k)
                        };
                        lo_set = true;
                    }
                    KeyProbe::Inexact(v) => {
                        keycodec::encode(&mut k, def.key_format, &col.ty, col.nullable, &v)?;
                        lo = k;
                        lo_set = true;
                    }
                    KeyProbe::Unordered => {}
                    KeyProbe::Impossible => continue 'ranges,
                }
            }
            if !lo_set && col.nullable {
                // Not bounded below: NULLs never match a comparison.
                lo.push(1);
            }
            if let Some((e, incl)) = &r.hi {
                let mut k = prefix.clone();
                match probe(&e.eval(outer, env)?, &col.ty, true) {
                    KeyProbe::Exact(v) => {
                        keycodec::encode(&mut k, def.key_format, &col.ty, col.nullable, &v)?;
                        hi = if *incl { prefix_successor(&k) } else { Some(k) };
                    }
                    KeyProbe::Inexact(v) => {
                        keycodec::encode(&mut k, def.key_format, &col.ty, col.nullable, &v)?;
                        hi = prefix_successor(&k);
                    }
                    KeyProbe::Unordered => {}
                    KeyProbe::Impossible => continue 'ranges,
                }
            }
        }
        if hi.as_ref().is_some_and(|h| *h <= lo) {
            continue;
        }
        out.push((lo, hi));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    if point {
        // Point gets read only each range's start key: drop exact
        // duplicates, never merge neighbours (key 4's range ends where
        // key 5's starts).
        out.dedup_by(|a, b| a.0 == b.0);
        if acc.reverse {
            out.reverse();
        }
        return Ok((out, true));
    }
    let mut merged: Vec<KeyRange> = Vec::with_capacity(out.len());
    for (lo, hi) in out {
        if let Some(last) = merged.last_mut() {
            let overlaps = match &last.1 {
                None => true,
                Some(h) => lo <= *h,
            };
            if overlaps {
                last.1 = match (&last.1, hi) {
                    (None, _) | (_, None) => None,
                    (Some(a), Some(b)) => Some(if *a > b { a.clone() } else { b }),
                };
                continue;
            }
        }
        merged.push((lo, hi));
    }
    if acc.reverse {
        merged.reverse();
    }
    Ok((merged, false))
}

/// Reads the rows an access path yields, calling `f` until it returns
/// false. With `lock`, each row is locked and read at its latest committed
/// version. `want` selects decoded columns (None = all), `want_ranged`
/// those when the range read replaces `filter` (see `range_is_filter`;
/// None = `want`). Rows failing
/// `filter` (the statement's WHERE on this table) are not passed to `f`;
/// in READ COMMITTED a locking read gives back the lock it took on such a
/// row, as InnoDB does (REPEATABLE READ keeps every row it read locked).
#[allow(clippy::too_many_arguments)]
pub fn for_each_row(
    txn: &mut Txn,
    t: &Table,
    acc: &Access,
    lock: Option<LockMode>,
    want: Option<&[bool]>,
    want_ranged: Option<&[bool]>,
    filter: Option<&Expr>,
    outer: &[Value],
    env: &dyn Env,
    f: &mut dyn FnMut(&mut Txn, Row) -> Result<bool>,
) -> Result<()> {
    let def = &t.def;
    if lock.is_none() {
        // A consistent read must not read index ids newer than its read view
        // (a table created, rebuilt or truncated, or an index filled, after
        // it) as if they were empty: MySQL's 1412.
        if let Some(seq) = txn.snapshot_seq() {
            let ix = index_of(def, acc.index).id;
            if seq < t.readable_since(def.pk.id).max(t.readable_since(ix)) {
                return Err(SqlError::read_view_too_old());
            }
        }
    }
    // A locking read through a secondary index re-reads each row's latest
    // version after its lock (the row may have changed since its index entry
    // was read, e.g. while this read waited for the lock): only the WHERE
    // tells whether that version is still in the range.
    let (filter, want) = match filter {
        Some(f) if (lock.is_none() || acc.index == 0) && range_is_filter(def, acc, f, env)? => {
            (None, want_ranged.or(want))
        }
        f => (f, want),
    };
    let release =
        lock.is_some() && filter.is_some() && txn.isolation() == txn::Isolation::ReadCommitted;
    let pcf = rel::cf::of(txn.db(), &def.pk)?;
    // The row read at `key` (None: absent) through the filter into `f`.
    let mut pass = |txn: &mut Txn, key: &[u8], got: Option<(Row, bool)>| -> Result<bool> {
        let Some((row, fresh)) = got else {
            return Ok(true);
        };
        if let Some(flt) = filter {
            if !crate::expr::accepts(&flt.eval(&row.values, env)?) {
                if fresh {
                    txn.unlock_last(pcf, key);
                }
                return Ok(true);
            }
        }
        f(txn, row)
    };
    let (ranges, point) = byte_ranges(def, acc, outer, env)?;
    if point {
        for (key, _) in &ranges {
            env.check_interrupt()?;
            let got = get_row(txn, def, key, lock, want, env, release)?;
            if !pass(txn, key, got)? {
                return Ok(());
            }
        }
        return Ok(());
    }
    let ix = index_of(def, acc.index).clone();
    let icf = rel::cf::of(txn.db(), &ix)?;
    for (lo, hi) in ranges {
        let mut it = rel::keyrange::scan(txn, icf, &lo, hi.as_deref(), acc.reverse, lock.is_some())
            .map_err(SqlError::from)?;
        // TTL tables: entries of expired rows read as absent.
        let now = def.ttl.map(|_| {
            if lock.is_some() {
                rel::ttl::now_latest()
            } else {
                rel::ttl::now_for(txn)
            }
        });
        loop {
            let next = it.next().map_err(SqlError::from)?;
            let Some((k, v)) = next else { break };
            env.check_interrupt()?;
            if let Some(now) = now {
                // An expired entry may have outlived its row (`sk_skipped`).
                let hidden = if acc.index == 0 {
                    rel::ttl::pk_hidden(def, k, v, now)
                } else {
                    rt::sk_skipped(txn, def, &ix, (k, v), now, lock.is_some())?
                };
                if hidden {
                    continue;
                }
            }
            let (key, got) = if acc.index == 0 {
                match lock {
                    None => (vec![], Some((rt::decode_row(def, k, v, want)?, false))),
                    Some(m) => {
                        let key = k.to_vec();
                        let got = get_row(txn, def, &key, Some(m), want, env, release)?;
                        (key, got)
                    }
                }
            } else if acc.covering && lock.is_none() {
                (vec![], Some((rt::decode_sk(def, &ix, k)?, false)))
            } else {
                let pk = rt::pk_of_sk(def, &ix, k)?;
                let got = get_row(txn, def, &pk, lock, want, env, release)?;
                // A TTL table's row may expire, or be compacted away, before
                // its secondary entries.
                if got.is_none() && lock.is_none() && def.ttl.is_none() {
                    return Err(SqlError::engine(format!(
                        "index {} of {} points to a missing row",
                        ix.name, def.name
                    )));
                }
                (pk, got)
            };
            if !pass(txn, &key, got)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// True when `filter` is exactly the condition the access path's one range
/// scans, so every row the range gives satisfies it and it need not be
/// evaluated per row (sysbench's `id BETWEEN ? AND ?`): `k BETWEEN lo AND hi`
/// on the index's first column, an integer column (not YEAR), with constant or
/// parameter bounds whose values are integers the key holds exactly (an
/// integer compares with an integer exactly, in key order; a string, decimal
/// or double bound, or one clamped to the column's range, widens the range
/// instead, and the WHERE decides). Any other WHERE is evaluated in full.
fn range_is_filter(def: &TableDef, acc: &Access, f: &Expr, env: &dyn Env) -> Result<bool> {
    let ([r], false) = (acc.ranges.as_slice(), acc.point) else {
        return Ok(false);
    };
    let (true, Some((lo, true)), Some((hi, true))) = (r.eq.is_empty(), &r.lo, &r.hi) else {
        return Ok(false);
    };
    let Expr::Between(x, flo, fhi, false) = f else {
        return Ok(false);
    };
    let Some(&c) = index_of(def, acc.index).columns.first() else {
        return Ok(false);
    };
    let Some(col) = def
        .columns
        .get(c)
        .filter(|col| col.ty.is_integer() && col.ty.kind != rel::value::TypeKind::Year)
    else {
        return Ok(false);
    };
    if **x != Expr::Col(c) || **flo != *lo || **fhi != *hi {
        return Ok(false);
    }
    for e in [lo, hi] {
        if !matches!(e, Expr::Param(_) | Expr::Const(_)) {
            return Ok(false);
        }
        let v = e.eval(&[], env)?;
        if !matches!(v, Value::Int(_) | Value::UInt(_))
            || !matches!(for_key(&v, &col.ty), KeyProbe::Exact(_))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads one row by primary key, and whether this read took its lock
/// (only asked for with `fresh`: READ COMMITTED may give it back); under
/// SKIP LOCKED a row another transaction has locked reads as absent (the
/// statement runs with a zero lock wait timeout).
fn get_row(
    txn: &mut Txn,
    def: &TableDef,
    key: &[u8],
    lock: Option<LockMode>,
    want: Option<&[bool]>,
    env: &dyn Env,
    fresh: bool,
) -> Result<Option<(Row, bool)>> {
    let skipped = |e: &SqlError| {
        e.code == crate::error::ER_LOCK_WAIT_TIMEOUT && lock.is_some() && env.skip_locked()
    };
    let mut took = false;
    let pcf = rel::cf::of(txn.db(), &def.pk)?;
    if let (Some(m), true) = (lock, fresh) {
        match txn.lock_new(pcf, key, m).map_err(SqlError::from) {
            Ok(t) => took = t,
            Err(e) if skipped(&e) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    match rt::get(txn, def, key, lock, want).map_err(SqlError::from) {
        Err(e) if skipped(&e) => Ok(None),
        Ok(None) => {
            if took {
                txn.unlock_last(pcf, key);
            }
            Ok(None)
        }
        r => r.map(|o| o.map(|row| (row, took))),
    }
}

/// Convenience: the constant value of a row-independent expression.
pub fn eval_const(e: &Expr, env: &dyn Env) -> Result<Value> {
    e.eval(&[], env)
}
