//! One partition's window values: peer groups from the ORDER BY keys, ranks, NTILE,
//! LAG/LEAD, the values at a frame's edges, and aggregates over frames. A frame's edges
//! only move forward as the current row does (ROWS and RANGE alike), so an aggregate
//! adds each row once and removes it once (`Slide`): O(n) per partition, MIN/MAX with a
//! monotonic queue; RANGE offsets find their edges by binary search (O(n log n)).
use super::{Bound, Frame, WinCall, WinKind};
use crate::agg::{add, bits_of, finish, AggState};
use crate::bind::{AggFunc, AggSpec};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Env, Expr, NoEnv};
use crate::sort::sort_cmp;
use rel::value::Value;
use std::cmp::Ordering;
use std::collections::VecDeque;

/// A partition being computed: its rows (base values then window slots) and each
/// row's ORDER BY key values.
pub struct Partition<'p> {
    pub rows: &'p mut [Vec<Value>],
    pub keys: &'p [Vec<Value>],
    /// Direction of the (single) ORDER BY key RANGE offsets follow.
    pub desc: bool,
}

/// Computes `calls` (each with its slot position in the row) over one partition.
pub fn partition(p: Partition, calls: &[(usize, &WinCall)], env: &dyn Env) -> Result<()> {
    let n = p.rows.len();
    // Peer groups: rows with equal ORDER BY keys (all rows without ORDER BY).
    let (mut ps, mut pe) = (vec![0; n], vec![0; n]);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && same(&p.keys[j], &p.keys[i]) {
            j += 1;
        }
        for r in i..j {
            ps[r] = i;
            pe[r] = j;
        }
        i = j;
    }
    let peers = Peers {
        start: &ps,
        end: &pe,
        keys: p.keys,
        desc: p.desc,
    };
    for (slot, c) in calls {
        let out = values(c, p.rows, &peers, env)?;
        for (r, v) in p.rows.iter_mut().zip(out) {
            if let Some(x) = r.get_mut(*slot) {
                *x = v;
            }
        }
    }
    Ok(())
}

fn same(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| sort_cmp(x, y).is_eq())
}

struct Peers<'a> {
    start: &'a [usize],
    end: &'a [usize],
    keys: &'a [Vec<Value>],
    desc: bool,
}

/// A constant argument (NTILE, LAG/LEAD offset, NTH_VALUE) as a whole number
/// (MariaDB rounds a fraction); None for NULL.
fn constant(e: &Option<Expr>, rows: &[Vec<Value>], env: &dyn Env) -> Result<Option<i64>> {
    let Some(e) = e else { return Ok(None) };
    let v = e.eval(rows.first().map_or(&[][..], |r| &r[..]), env)?;
    Ok(v.to_f64()
        .map(|d| d.round().clamp(i64::MIN as f64, i64::MAX as f64) as i64))
}

fn values(c: &WinCall, rows: &[Vec<Value>], pe: &Peers, env: &dyn Env) -> Result<Vec<Value>> {
    let n = rows.len();
    let arg = |j: usize| -> Result<Value> {
        match c.args.first() {
            Some(x) => x.eval(&rows[j], env),
            None => Ok(Value::Null),
        }
    };
    let mut out = Vec::with_capacity(n);
    match c.kind {
        WinKind::RowNumber => out.extend((1..=n).map(|i| Value::Int(i as i64))),
        WinKind::Rank => out.extend(pe.start.iter().map(|s| Value::Int(*s as i64 + 1))),
        WinKind::DenseRank => {
            let mut rank = 0;
            for i in 0..n {
                if pe.start[i] == i {
                    rank += 1;
                }
                out.push(Value::Int(rank));
            }
        }
        WinKind::PercentRank => out.extend(pe.start.iter().map(|s| {
            Value::Double(if n > 1 {
                *s as f64 / (n - 1) as f64
            } else {
                0.0
            })
        })),
        WinKind::CumeDist => out.extend(pe.end.iter().map(|e| Value::Double(*e as f64 / n as f64))),
        WinKind::Ntile => {
            let k = match constant(&c.n, rows, env)? {
                Some(k) if k > 0 => k as u64,
                _ => return Err(SqlError::ntile_argument()),
            };
            // MariaDB's split: the first n % k buckets have one row more.
            let (q, rem) = (n as u64 / k, n as u64 % k);
            for i in 1..=n as u64 {
                out.push(Value::Int(if i <= rem * (q + 1) {
                    1 + (i - 1) / (q + 1)
                } else {
                    1 + rem + (i - 1 - rem * (q + 1)) / q.max(1)
                } as i64));
            }
        }
        WinKind::Lag | WinKind::Lead => {
            let off = match &c.n {
                None => Some(1),
                Some(_) => constant(&c.n, rows, env)?,
            };
            for (i, row) in rows.iter().enumerate() {
                let Some(off) = off else {
                    out.push(Value::Null);
                    continue;
                };
                // A negative LAG offset reads ahead (MariaDB).
                let j = if c.kind == WinKind::Lag {
                    (i as i128) - off as i128
                } else {
                    (i as i128) + off as i128
                };
                out.push(if j >= 0 && (j as usize) < n {
                    arg(j as usize)?
                } else {
                    match c.args.get(1) {
                        Some(d) => d.eval(row, env)?,
                        None => Value::Null,
                    }
                });
            }
        }
        WinKind::FirstValue | WinKind::LastValue | WinKind::NthValue => {
            let nth = match c.kind {
                WinKind::NthValue => constant(&c.n, rows, env)?,
                _ => Some(1),
            };
            for i in 0..n {
                let (lo, hi) = bounds(&c.frame, i, n, pe)?;
                let at = match (c.kind, nth) {
                    (_, _) if hi <= lo => None,
                    (WinKind::LastValue, _) => Some(hi - 1),
                    (_, Some(k)) if k >= 1 && (k as u128) <= (hi - lo) as u128 => {
                        Some(lo + k as usize - 1)
                    }
                    _ => None,
                };
                out.push(match at {
                    Some(j) => arg(j)?,
                    None => Value::Null,
                });
            }
        }
        WinKind::Agg => {
            let Some(a) = &c.agg else {
                return Err(SqlError::internal("window aggregate without its spec"));
            };
            let vals = rows
                .iter()
                .map(|r| match &a.arg {
                    Some(x) => x.eval(r, env),
                    None => Ok(Value::Int(1)),
                })
                .collect::<Result<Vec<_>>>()?;
            let mut s = Slide::new(a, &vals);
            let (mut cl, mut ch) = (0, 0);
            for i in 0..n {
                let (lo, hi) = bounds(&c.frame, i, n, pe)?;
                let hi = hi.max(lo);
                if lo < cl || hi < ch {
                    // Edges never move back; start over if they ever did.
                    s = Slide::new(a, &vals);
                    (cl, ch) = (lo, lo);
                }
                while ch < hi {
                    s.add(ch)?;
                    ch += 1;
                }
                while cl < lo {
                    s.remove(cl)?;
                    cl += 1;
                }
                out.push(s.result(env, i + 1)?);
            }
        }
    }
    Ok(out)
}

fn count(v: &Value) -> usize {
    v.to_i128()
        .map_or(0, |i| i.clamp(0, usize::MAX as i128) as usize)
}

/// Row `i`'s frame as a half-open range of partition rows (may be empty).
fn bounds(f: &Frame, i: usize, n: usize, pe: &Peers) -> Result<(usize, usize)> {
    if f.rows {
        let lo = match &f.start {
            Bound::UnboundedPreceding => 0,
            Bound::Preceding(k) => i.saturating_sub(count(k)),
            Bound::CurrentRow => i,
            Bound::Following(k) => i.saturating_add(count(k)),
            Bound::UnboundedFollowing => n,
        };
        let hi = match &f.end {
            Bound::UnboundedPreceding => 0,
            Bound::Preceding(k) => (i + 1).saturating_sub(count(k)),
            Bound::CurrentRow => i + 1,
            Bound::Following(k) => i.saturating_add(count(k)).saturating_add(1),
            Bound::UnboundedFollowing => n,
        };
        return Ok((lo.min(n), hi.min(n)));
    }
    Ok((
        range_edge(&f.start, i, n, pe, true)?,
        range_edge(&f.end, i, n, pe, false)?,
    ))
}

/// A RANGE frame edge: the first row of the frame (`start`) or one past its last.
fn range_edge(b: &Bound, i: usize, n: usize, pe: &Peers, start: bool) -> Result<usize> {
    let (v, ahead) = match b {
        Bound::UnboundedPreceding => return Ok(0),
        Bound::UnboundedFollowing => return Ok(n),
        Bound::CurrentRow => return Ok(if start { pe.start[i] } else { pe.end[i] }),
        Bound::Preceding(v) => (v, false),
        Bound::Following(v) => (v, true),
    };
    let key = pe.keys[i].first().cloned().unwrap_or(Value::Null);
    if key.is_null() {
        // A NULL key's offsets reach its peers (the other NULLs) only.
        return Ok(if start { pe.start[i] } else { pe.end[i] });
    }
    // Ascending, PRECEDING is smaller; descending, larger.
    let op = if ahead != pe.desc {
        BinOp::Add
    } else {
        BinOp::Sub
    };
    let exact = |x: &Value| match x {
        Value::Int(_) | Value::UInt(_) => Value::Decimal(x.to_i128().unwrap_or(0), 0),
        other => other.clone(),
    };
    let target = Expr::Bin(
        op,
        Box::new(Expr::Const(exact(&key))),
        Box::new(Expr::Const(exact(v))),
    )
    .eval(&[], &NoEnv)?;
    let cmp = |j: usize| -> Ordering {
        let k = pe.keys[j].first().unwrap_or(&Value::Null);
        let o = sort_cmp(k, &target);
        if pe.desc {
            o.reverse()
        } else {
            o
        }
    };
    // Rows are sorted by the key: find the first row at or past the target
    // (start) or past it (end).
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let before = match cmp(mid) {
            Ordering::Less => true,
            Ordering::Equal => !start,
            Ordering::Greater => false,
        };
        if before {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// An aggregate over a sliding frame: rows enter at the end, leave at the start.
struct Slide<'v> {
    spec: &'v AggSpec,
    vals: &'v [Value],
    /// Rows counted (non-NULL values, or all rows for COUNT(*)).
    n: i64,
    sum: Option<Value>,
    mean: f64,
    m2: f64,
    bits: [u32; 64],
    /// MIN/MAX: candidate rows, values in order, the answer first.
    queue: VecDeque<usize>,
}

impl<'v> Slide<'v> {
    fn new(spec: &'v AggSpec, vals: &'v [Value]) -> Slide<'v> {
        Slide {
            spec,
            vals,
            n: 0,
            sum: None,
            mean: 0.0,
            m2: 0.0,
            bits: [0; 64],
            queue: VecDeque::new(),
        }
    }

    fn add(&mut self, j: usize) -> Result<()> {
        let v = &self.vals[j];
        if v.is_null() {
            return Ok(());
        }
        self.n += 1;
        match self.spec.func {
            AggFunc::Sum | AggFunc::Avg => self.sum = Some(add(self.sum.take(), v)?),
            AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                let x = v.to_f64().unwrap_or(0.0);
                let d = x - self.mean;
                self.mean += d / self.n as f64;
                self.m2 += d * (x - self.mean);
            }
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => {
                let b = bits_of(v);
                for (k, c) in self.bits.iter_mut().enumerate() {
                    *c += ((b >> k) & 1) as u32;
                }
            }
            AggFunc::Min | AggFunc::Max => {
                let min = self.spec.func == AggFunc::Min;
                while let Some(&last) = self.queue.back() {
                    let o = crate::collate::cmp(&self.vals[last], v, self.spec.coll);
                    if (min && o.is_gt()) || (!min && o.is_lt()) {
                        self.queue.pop_back();
                    } else {
                        break;
                    }
                }
                self.queue.push_back(j);
            }
            _ => {}
        }
        Ok(())
    }

    fn remove(&mut self, j: usize) -> Result<()> {
        let v = &self.vals[j];
        if v.is_null() {
            return Ok(());
        }
        self.n -= 1;
        if self.n == 0 {
            *self = Slide::new(self.spec, self.vals);
            return Ok(());
        }
        match self.spec.func {
            AggFunc::Sum | AggFunc::Avg => {
                let neg = match v {
                    Value::Int(_) | Value::UInt(_) => Value::Decimal(-v.to_i128().unwrap_or(0), 0),
                    Value::Decimal(m, s) => Value::Decimal(-m, *s),
                    other => Value::Double(-other.to_f64().unwrap_or(0.0)),
                };
                self.sum = Some(add(self.sum.take(), &neg)?);
            }
            AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                let x = v.to_f64().unwrap_or(0.0);
                let before = (self.mean * (self.n + 1) as f64 - x) / self.n as f64;
                self.m2 -= (x - before) * (x - self.mean);
                self.mean = before;
            }
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => {
                let b = bits_of(v);
                for (k, c) in self.bits.iter_mut().enumerate() {
                    *c -= ((b >> k) & 1) as u32;
                }
            }
            AggFunc::Min | AggFunc::Max if self.queue.front() == Some(&j) => {
                self.queue.pop_front();
            }
            _ => {}
        }
        Ok(())
    }

    fn result(&self, env: &dyn Env, row: usize) -> Result<Value> {
        let f = self.spec.func;
        let state = match f {
            AggFunc::Count | AggFunc::CountStar => AggState::Count(self.n),
            AggFunc::Sum => AggState::Sum(self.sum.clone()),
            AggFunc::Avg => AggState::Avg(self.sum.clone(), self.n),
            AggFunc::Min | AggFunc::Max => {
                AggState::MinMax(self.queue.front().map(|&j| self.vals[j].clone()))
            }
            AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                AggState::Var(self.n, self.mean, self.m2)
            }
            AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => {
                let mut b = 0u64;
                for (k, c) in self.bits.iter().enumerate() {
                    let set = match f {
                        AggFunc::BitAnd => *c as i64 == self.n,
                        AggFunc::BitOr => *c > 0,
                        _ => c % 2 == 1,
                    };
                    b |= (set as u64) << k;
                }
                AggState::Bits(b)
            }
            AggFunc::GroupConcat
            | AggFunc::AnyValue
            | AggFunc::JsonArrayAgg
            | AggFunc::JsonObjectAgg => {
                return Err(SqlError::unsupported("this aggregate as window function"))
            }
        };
        finish(state, self.spec, env, row)
    }
}
