//! Aggregation: the per-group state of COUNT/SUM/AVG/MIN/MAX/GROUP_CONCAT/ANY_VALUE,
//! the standard deviations and variances (Welford's recurrence, as MySQL), BIT_AND/OR/XOR,
//! DISTINCT aggregates, GROUP_CONCAT's ORDER BY, SEPARATOR and group_concat_max_len
//! cut (warning 1260), JSON_ARRAYAGG and JSON_OBJECTAGG (GROUP_CONCAT of JSON
//! pieces, bracketed), and the hashable image used for group and DISTINCT keys.
use crate::bind::{AggFunc, AggSpec};
use crate::error::Result;
use crate::error::SqlError;
use crate::expr::{Env, Expr};
use rel::value::Value;

/// A hashable image of a value consistent with `compare` equality.
pub fn hash_image(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(_) | Value::UInt(_) => {
            out.push(1);
            out.extend_from_slice(&v.to_i128().unwrap_or(0).to_le_bytes());
        }
        Value::Decimal(m, s) => {
            let (mut m, mut s) = (*m, *s);
            while s > 0 && m % 10 == 0 {
                m /= 10;
                s -= 1;
            }
            if s == 0 {
                out.push(1);
                out.extend_from_slice(&m.to_le_bytes());
            } else {
                out.push(2);
                out.extend_from_slice(&m.to_le_bytes());
                out.push(s);
            }
        }
        Value::Double(d) => {
            if d.fract() == 0.0 && d.abs() < 1e30 {
                out.push(1);
                out.extend_from_slice(&(*d as i128).to_le_bytes());
            } else {
                out.push(3);
                out.extend_from_slice(&d.to_bits().to_le_bytes());
            }
        }
        Value::Bytes(b) => {
            out.push(4);
            let t: &[u8] = b;
            out.extend_from_slice(&(t.len() as u32).to_le_bytes());
            out.extend_from_slice(t);
        }
        other => {
            out.push(5);
            out.extend_from_slice(&other.text());
            out.push(0);
        }
    }
}

pub(crate) enum AggState {
    Count(i64),
    Sum(Option<Value>),
    Avg(Option<Value>, i64),
    MinMax(Option<Value>),
    Concat(Concat),
    Any(Option<Value>),
    /// Count, running mean and sum of squared deviations.
    Var(i64, f64, f64),
    Bits(u64),
}

/// GROUP_CONCAT's state: pieces in arrival order (or with their ORDER BY keys).
#[derive(Default)]
pub(crate) struct Concat {
    pieces: Vec<(Vec<Value>, Vec<u8>)>,
    /// Bytes held (pieces plus separators): the result is cut at group_concat_max_len.
    len: usize,
    cut: bool,
}

pub(crate) fn new_state(a: &AggSpec) -> AggState {
    match a.func {
        AggFunc::CountStar | AggFunc::Count => AggState::Count(0),
        AggFunc::Sum => AggState::Sum(None),
        AggFunc::Avg => AggState::Avg(None, 0),
        AggFunc::Min | AggFunc::Max => AggState::MinMax(None),
        AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
            AggState::Concat(Concat::default())
        }
        AggFunc::AnyValue => AggState::Any(None),
        AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
            AggState::Var(0, 0.0, 0.0)
        }
        AggFunc::BitAnd => AggState::Bits(u64::MAX),
        AggFunc::BitOr | AggFunc::BitXor => AggState::Bits(0),
    }
}

pub(crate) fn add(acc: Option<Value>, v: &Value) -> Result<Value> {
    // An integer onto an exact sum of integers (SUM of an integer column):
    // `arith`'s checked addition at scale 0, without its general path.
    let i = match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        _ => None,
    };
    if let (Some(Value::Decimal(m, 0)), Some(i)) = (&acc, i) {
        if let Some(r) = m.checked_add(i) {
            return Ok(Value::Decimal(r, 0));
        }
    }
    let v = match v {
        Value::Int(_) | Value::UInt(_) => Value::Decimal(v.to_i128().unwrap_or(0), 0),
        Value::Bytes(_) => Value::Double(v.to_f64().unwrap_or(0.0)),
        other => other.clone(),
    };
    Ok(match acc {
        None => v,
        // What `a + v` evaluates to, without building the expression.
        Some(a) => crate::expr::arith(crate::expr::BinOp::Add, &a, &v)?,
    })
}

pub(crate) struct Group {
    pub(crate) key: Vec<Value>,
    pub(crate) states: Vec<AggState>,
    pub(crate) seen: Vec<Option<std::collections::HashSet<Vec<u8>>>>,
}

pub(crate) fn feed(g: &mut Group, aggs: &[AggSpec], row: &[Value], env: &dyn Env) -> Result<()> {
    for (i, a) in aggs.iter().enumerate() {
        let v = match (a.func, &a.arg) {
            (AggFunc::JsonArrayAgg, Some(e)) => {
                let mut p = Vec::new();
                crate::func::json_fn::append_value(e, &e.eval(row, env)?, &mut p);
                Value::Bytes(p)
            }
            (AggFunc::JsonObjectAgg, Some(Expr::Func(_, kv))) if kv.len() == 2 => {
                let k = kv[0].eval(row, env)?;
                if k.is_null() {
                    continue;
                }
                let mut p = b"\"".to_vec();
                p.extend_from_slice(&crate::func::json_fn::escape(&k.text()));
                p.extend_from_slice(b"\":");
                crate::func::json_fn::append_value(&kv[1], &kv[1].eval(row, env)?, &mut p);
                Value::Bytes(p)
            }
            (_, Some(e)) => e.eval(row, env)?,
            (_, None) => Value::Int(1),
        };
        if a.func != AggFunc::CountStar && a.func != AggFunc::AnyValue && v.is_null() {
            continue;
        }
        if a.distinct {
            let mut img = Vec::new();
            crate::collate::image(&v, a.coll, &mut img);
            let set = g.seen[i].get_or_insert_with(Default::default);
            if !set.insert(img) {
                continue;
            }
        }
        match &mut g.states[i] {
            AggState::Count(n) => *n += 1,
            AggState::Sum(s) => *s = Some(add(s.take(), &v)?),
            AggState::Avg(s, n) => {
                *s = Some(add(s.take(), &v)?);
                *n += 1;
            }
            AggState::MinMax(m) => {
                let better = match m {
                    None => true,
                    Some(cur) => {
                        let o = crate::collate::cmp(&v, cur, a.coll);
                        if a.func == AggFunc::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if better {
                    *m = Some(v);
                }
            }
            AggState::Concat(c) => {
                let mut piece = Vec::new();
                v.to_text(&mut piece);
                let keys = a
                    .order
                    .iter()
                    .map(|(e, _)| e.eval(row, env))
                    .collect::<Result<Vec<_>>>()?;
                if a.order.is_empty() {
                    // Arrival order: nothing past the cut is ever needed.
                    let max = group_concat_max(env);
                    if c.len >= max {
                        c.cut = true;
                        continue;
                    }
                }
                c.len += piece.len() + if c.pieces.is_empty() { 0 } else { a.sep.len() };
                c.pieces.push((keys, piece));
            }
            AggState::Any(x) => {
                if x.is_none() {
                    *x = Some(v);
                }
            }
            AggState::Var(n, mean, m2) => {
                let x = v.to_f64().unwrap_or(0.0);
                *n += 1;
                let d = x - *mean;
                *mean += d / *n as f64;
                *m2 += d * (x - *mean);
            }
            AggState::Bits(b) => {
                let x = bits_of(&v);
                *b = match a.func {
                    AggFunc::BitAnd => *b & x,
                    AggFunc::BitOr => *b | x,
                    _ => *b ^ x,
                };
            }
        }
    }
    Ok(())
}

/// A BIT_AND/OR/XOR operand as 64 bits (a negative integer as its two's complement;
/// other values rounded to an integer, as MySQL converts them).
pub(crate) fn bits_of(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        other => match other.to_f64() {
            Some(d) if d < 0.0 => d.round().max(i64::MIN as f64) as i64 as u64,
            Some(d) => d.round().min(u64::MAX as f64) as u64,
            None => 0,
        },
    }
}

/// `group_concat_max_len`: the longest GROUP_CONCAT result, in bytes.
fn group_concat_max(env: &dyn Env) -> usize {
    env.sys_var("group_concat_max_len", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(1 << 20)
        .clamp(4, 1 << 32) as usize
}

pub(crate) fn finish(s: AggState, a: &AggSpec, env: &dyn Env, row: usize) -> Result<Value> {
    Ok(match s {
        AggState::Count(n) => Value::Int(n),
        AggState::Sum(v) | AggState::MinMax(v) | AggState::Any(v) => v.unwrap_or(Value::Null),
        AggState::Var(n, _, m2) => {
            let samp = matches!(a.func, AggFunc::StdSamp | AggFunc::VarSamp);
            let div = if samp { n - 1 } else { n };
            if div <= 0 {
                return Ok(Value::Null);
            }
            let var = (m2 / div as f64).max(0.0);
            Value::Double(match a.func {
                AggFunc::StdPop | AggFunc::StdSamp => var.sqrt(),
                _ => var,
            })
        }
        AggState::Bits(b) => Value::UInt(b),
        AggState::Avg(None, _) => Value::Null,
        AggState::Avg(Some(sum), n) => match sum {
            Value::Decimal(m, s) => {
                let e = Expr::Bin(
                    crate::expr::BinOp::Div,
                    Box::new(Expr::Const(Value::Decimal(m, s))),
                    Box::new(Expr::Const(Value::Int(n))),
                );
                e.eval(&[], &crate::expr::NoEnv)?
            }
            other => Value::Double(other.to_f64().unwrap_or(0.0) / n as f64),
        },
        AggState::Concat(mut c) => {
            if c.pieces.is_empty() {
                return Ok(Value::Null);
            }
            if !a.order.is_empty() {
                let dirs: Vec<bool> = a.order.iter().map(|(_, d)| *d).collect();
                c.pieces.sort_by(|x, y| {
                    for (i, desc) in dirs.iter().enumerate() {
                        let o = crate::sort::sort_cmp(&x.0[i], &y.0[i]);
                        let o = if *desc { o.reverse() } else { o };
                        if o.is_ne() {
                            return o;
                        }
                    }
                    std::cmp::Ordering::Equal
                });
            }
            let max = group_concat_max(env);
            let mut out = Vec::new();
            for (i, (_, p)) in c.pieces.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(&a.sep);
                }
                out.extend_from_slice(p);
                if out.len() >= max {
                    break;
                }
            }
            if out.len() > max || c.cut {
                // MySQL cuts at a character boundary and warns (1260).
                let mut end = out.len().min(max);
                while end > 0 && end < out.len() && (out[end] & 0xC0) == 0x80 {
                    end -= 1;
                }
                c.cut |= end < out.len();
                out.truncate(end);
            }
            if c.cut {
                env.warn(SqlError::group_concat_cut(row));
            }
            match a.func {
                AggFunc::JsonArrayAgg => wrap(b'[', out, b']'),
                AggFunc::JsonObjectAgg => wrap(b'{', out, b'}'),
                _ => Value::Bytes(out),
            }
        }
    })
}

fn wrap(open: u8, body: Vec<u8>, close: u8) -> Value {
    let mut out = Vec::with_capacity(body.len() + 2);
    out.push(open);
    out.extend_from_slice(&body);
    out.push(close);
    Value::Bytes(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `add`'s integer path gives what the general addition gives, up to the
    /// edge of the exact range, and fails past it as it does.
    #[test]
    fn integer_sums_add_as_arith_does() {
        let big = Value::Decimal(i128::MAX - 5, 0);
        let cases = [
            (None, Value::Int(7)),
            (Some(Value::Decimal(-3, 0)), Value::Int(i64::MIN)),
            (Some(Value::Decimal(10, 0)), Value::UInt(u64::MAX)),
            (Some(big.clone()), Value::Int(5)),
            (Some(big.clone()), Value::Int(6)),
            (Some(big), Value::UInt(9)),
            (Some(Value::Decimal(15, 1)), Value::Int(2)),
            (Some(Value::Double(0.5)), Value::Int(2)),
        ];
        for (acc, v) in cases {
            let general = match &acc {
                None => Ok(Value::Decimal(v.to_i128().unwrap_or(0), 0)),
                Some(a) => crate::expr::arith(
                    crate::expr::BinOp::Add,
                    a,
                    &Value::Decimal(v.to_i128().unwrap_or(0), 0),
                ),
            };
            let got = add(acc.clone(), &v);
            assert_eq!(got.as_ref().ok(), general.as_ref().ok(), "{acc:?} + {v:?}");
            assert_eq!(got.is_err(), general.is_err(), "{acc:?} + {v:?}");
        }
    }
}
