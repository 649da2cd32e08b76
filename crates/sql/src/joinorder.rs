//! Join order by estimated cost. The tables a join may reorder (the inner
//! joins before the first LEFT JOIN or parenthesized group, unless
//! STRAIGHT_JOIN) are ordered by dynamic programming over subsets (up to
//! `EXHAUSTIVE` tables: every left-deep order is considered) or greedily
//! beyond: each step adds the table whose access path, given the tables
//! already placed, is cheapest.
//!
//! The cost model (rows touched): a table reached by an index lookup reads
//! the rows per key of the index prefix it fixes (`rel::stats::Estimate`:
//! ANALYZE's cardinalities, else guesses) per outer row, plus one seek; a
//! full scan reads every row per outer row, or once when it can be hashed
//! (an equi-join on a base table with no usable index: `hash_keys`); the
//! conditions the access does not use keep a fraction of the rows.
use crate::access::{self, Access};
use crate::expr::{BinOp, Expr};
use crate::join::JoinTable;

/// Up to this many reorderable tables every order is considered.
const EXHAUSTIVE: usize = 8;
/// Rows assumed for a derived table (not known before it runs).
const DERIVED_ROWS: f64 = 100.0;

/// The conjuncts a join plans from, with the tables each reads.
pub struct Conds<'a> {
    pub tables: &'a [JoinTable],
    /// Per joined-row column: the FROM position of its table.
    pub owner: Vec<usize>,
    pub locking: bool,
}

/// One table's access given the tables before it.
pub struct Step {
    pub access: Access,
    /// Equi-join keys (inner key over the table's row, outer expression)
    /// when the table is a base table read in full: hash it once.
    pub hash: Vec<(Expr, Expr)>,
    /// Rows read per outer row (for a hash join: rows matched).
    pub rows: f64,
    /// Rows kept per outer row after the conditions.
    pub fanout: f64,
    /// Cost per outer row.
    pub cost: f64,
    /// Cost paid once (building the hash table).
    pub once: f64,
}

/// Bit set of FROM positions.
pub type Mask = u64;

impl<'a> Conds<'a> {
    pub fn new(tables: &'a [JoinTable], locking: bool) -> Conds<'a> {
        let width: usize = tables
            .iter()
            .map(|t| t.base + t.table.def.columns.len())
            .max()
            .unwrap_or(0);
        let mut owner = vec![usize::MAX; width];
        for (i, t) in tables.iter().enumerate() {
            for o in owner
                .iter_mut()
                .skip(t.base)
                .take(t.table.def.columns.len())
            {
                *o = i;
            }
        }
        Conds {
            tables,
            owner,
            locking,
        }
    }

    /// The tables `e` reads (None: a column of no table).
    pub fn mask(&self, e: &Expr) -> Option<Mask> {
        let mut m: Mask = 0;
        let mut ok = true;
        e.walk(&mut |x| {
            if let Expr::Col(c) = x {
                match self.owner.get(*c) {
                    Some(&t) if t < 64 => m |= 1 << t,
                    _ => ok = false,
                }
            }
        });
        ok.then_some(m)
    }

    /// `e` rewritten for table `i` with the tables `avail` before it: its
    /// own columns local, the others `Outer`; None if it reads another table.
    pub fn localize(&self, e: &Expr, i: usize, avail: Mask) -> Option<Expr> {
        let m = self.mask(e)?;
        if m & !(avail | (1 << i)) != 0 {
            return None;
        }
        let base = self.tables[i].base;
        let owner = &self.owner;
        Some(crate::join::map_cols(e, &|c| {
            if owner[c] == i {
                Expr::Col(c - base)
            } else {
                Expr::Outer(c)
            }
        }))
    }

    /// The access path and estimates of table `i` after the tables `avail`
    /// under the conjuncts `conj` (bound over the joined row).
    pub fn step(&self, i: usize, avail: Mask, conj: &[Expr]) -> Step {
        let t = &self.tables[i];
        let local: Vec<Expr> = conj
            .iter()
            .filter_map(|c| self.localize(c, i, avail))
            .collect();
        let filter = local
            .iter()
            .cloned()
            .reduce(|a, b| Expr::Bin(BinOp::And, Box::new(a), Box::new(b)));
        let used: Vec<usize> = (0..t.table.def.columns.len()).collect();
        let acc = access::choose(
            &t.table.def,
            filter.as_ref(),
            &used,
            None,
            self.locking,
            t.hint.as_ref(),
        );
        let est = &t.table.estimate;
        let n = if t.derived.is_some() {
            DERIVED_ROWS
        } else {
            est.rows().max(1) as f64
        };
        // Conditions the access path does not apply: each keeps a part.
        let applied = acc.ranges.first().map_or(0, |r| {
            r.eq.len() + usize::from(r.lo.is_some() || r.hi.is_some())
        });
        let rest = local.len().saturating_sub(applied);
        let keep = 0.2f64.powi(rest.min(6) as i32);
        let mut hash = Vec::new();
        let (rows, cost, once) = if t.derived.is_some() {
            let keyed = !crate::join::hash_keys(&local).is_empty();
            let r = if keyed { 1.0 } else { n };
            (r, r + 1.0, 0.0)
        } else if acc.ranges.is_empty() {
            hash = if self.locking {
                Vec::new()
            } else {
                hash_keys(&local)
            };
            if hash.is_empty() {
                (n, n + 1.0, 0.0)
            } else {
                let r = (n / 10f64.powi(hash.len().min(6) as i32)).max(1.0);
                (r, r + 1.0, n)
            }
        } else {
            let ix = access::index_of(&t.table.def, acc.index);
            let r = if acc.point {
                acc.ranges.len() as f64
            } else {
                let per = acc.ranges.iter().map(|r| {
                    let k = est.rows_per_key(ix, r.eq.len());
                    if r.lo.is_some() || r.hi.is_some() {
                        (k / 3.0).max(1.0)
                    } else {
                        k
                    }
                });
                per.sum::<f64>().min(n)
            };
            // A secondary index costs a primary key read per row unless covering.
            let extra = if acc.index > 0 && !acc.covering {
                r
            } else {
                0.0
            };
            (r, r + extra + acc.ranges.len() as f64, 0.0)
        };
        Step {
            access: acc,
            hash,
            rows,
            fanout: (rows * keep).max(if rows > 0.0 { 0.1 } else { 0.0 }),
            cost,
            once,
        }
    }

    /// The cheapest order of the tables `0..k` (FROM positions), each
    /// after the tables `fixed` (none today: the reorderable tables come
    /// first).
    pub fn order(&self, k: usize, conj: &[Expr]) -> Vec<usize> {
        if k <= 1 || k > 63 {
            return (0..k).collect();
        }
        if k <= EXHAUSTIVE {
            self.dp(k, conj)
        } else {
            self.greedy(k, conj)
        }
    }

    /// Best left-deep order by dynamic programming over subsets; ties keep
    /// FROM order.
    fn dp(&self, k: usize, conj: &[Expr]) -> Vec<usize> {
        let full: usize = (1 << k) - 1;
        // Per subset: (cost, rows, last table, previous subset).
        let mut best: Vec<Option<(f64, f64, usize)>> = vec![None; full + 1];
        best[0] = Some((0.0, 1.0, usize::MAX));
        for m in 0..full {
            let Some((cost, rows, _)) = best[m] else {
                continue;
            };
            for i in 0..k {
                if m & (1 << i) != 0 {
                    continue;
                }
                let s = self.step(i, m as Mask, conj);
                let c = cost + rows * s.cost + s.once;
                let r = (rows * s.fanout).max(1e-3);
                let nm = m | (1 << i);
                if best[nm].is_none_or(|(bc, _, _)| c < bc * (1.0 - 1e-9)) {
                    best[nm] = Some((c, r, i));
                }
            }
        }
        let mut out = Vec::with_capacity(k);
        let mut m = full;
        while m != 0 {
            let Some((_, _, i)) = best[m] else { break };
            out.push(i);
            m &= !(1 << i);
        }
        out.reverse();
        if out.len() == k {
            out
        } else {
            (0..k).collect()
        }
    }

    /// Greedy: at each step the table with the cheapest step.
    fn greedy(&self, k: usize, conj: &[Expr]) -> Vec<usize> {
        let mut placed: Mask = 0;
        let mut rows = 1.0;
        let mut out = Vec::with_capacity(k);
        while out.len() < k {
            let mut pick: Option<(f64, usize, f64)> = None;
            for i in (0..k).filter(|i| placed & (1 << i) == 0) {
                let s = self.step(i, placed, conj);
                let c = rows * s.cost + s.once + rows * s.fanout;
                if pick.is_none_or(|(bc, _, _)| c < bc) {
                    pick = Some((c, i, s.fanout));
                }
            }
            let Some((_, i, f)) = pick else { break };
            placed |= 1 << i;
            rows = (rows * f).max(1e-3);
            out.push(i);
        }
        out
    }
}

/// Equi-join keys of a base table: `col = e` (or the same under the
/// column's collation) with `e` over earlier tables only, as (key over
/// this table's row, key over the outer row). A collated comparison keys
/// on both sides' sort keys under that collation, so equal strings hash
/// alike.
pub fn hash_keys(local: &[Expr]) -> Vec<(Expr, Expr)> {
    let mut out: Vec<(Expr, Expr)> = Vec::new();
    for c in local {
        let (coll, eq) = match c {
            Expr::Collated(k, inner) => (Some(*k), &**inner),
            e => (None, e),
        };
        let Expr::Bin(BinOp::Eq, a, b) = eq else {
            continue;
        };
        let (j, e) = match (&**a, &**b) {
            (Expr::Col(j), e) | (e, Expr::Col(j)) if e.is_row_independent() && has_outer(e) => {
                (*j, e)
            }
            _ => continue,
        };
        let (k, o) = match coll {
            Some(k) => (
                Expr::SortKey(k, Box::new(Expr::Col(j))),
                Expr::SortKey(k, Box::new(e.clone())),
            ),
            None => (Expr::Col(j), e.clone()),
        };
        if !out.iter().any(|(x, _)| *x == k) {
            out.push((k, o));
        }
    }
    out
}

fn has_outer(e: &Expr) -> bool {
    let mut o = false;
    e.walk(&mut |x| o |= matches!(x, Expr::Outer(_)));
    o
}
