//! Evaluation under a collation: the comparisons `annotate` wrapped in
//! `Expr::Collated` (=, <, IN, BETWEEN, LIKE per character, CASE x WHEN,
//! STRCMP, FIELD, NULLIF, GREATEST/LEAST, LOCATE/INSTR, FIND_IN_SET), and the
//! comparison and hash image of values under a collation.
use super::is_cmp;
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Env, Expr};
use crate::func::Func;
use crate::subquery::SubResult;
use rel::collation::{for_each_char, Collation};
use rel::value::{compare, Value};
use std::cmp::Ordering;

/// Compares two values, strings under `coll` when given.
pub fn cmp(x: &Value, y: &Value, coll: Option<Collation>) -> Ordering {
    match (coll, x, y) {
        (Some(c), Value::Bytes(a), Value::Bytes(b)) => c.compare(a, b),
        _ => compare(x, y),
    }
}

/// Appends the hash image of a value: strings under `coll` by their weights.
pub fn image(v: &Value, coll: Option<Collation>, out: &mut Vec<u8>) {
    match (coll, v) {
        (Some(c), Value::Bytes(b)) => {
            let mut w = Vec::with_capacity(b.len() * 2);
            c.weights(b, &mut w);
            out.push(4);
            out.extend_from_slice(&(w.len() as u32).to_le_bytes());
            out.extend_from_slice(&w);
        }
        _ => crate::agg::hash_image(v, out),
    }
}

/// Evaluates `e`, a comparison wrapped by `annotate`, under `c`.
pub fn eval_collated(c: Collation, e: &Expr, row: &[Value], env: &dyn Env) -> Result<Value> {
    let c = Some(c);
    match e {
        Expr::Bin(op, a, b) if is_cmp(*op) => {
            let (x, y) = (a.eval(row, env)?, b.eval(row, env)?);
            Ok(compare_op(*op, &x, &y, c))
        }
        Expr::In(x, list, negated) => eval_in(x, list, *negated, c, row, env),
        Expr::Between(x, lo, hi, negated) => eval_between(x, lo, hi, *negated, c, row, env),
        Expr::Like(x, p, negated, esc) => eval_like(x, p, *negated, *esc, c, row, env),
        Expr::InSubquery(x, k, negated) => eval_in_subquery(x, *k, *negated, c, row, env),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => eval_case(operand.as_deref(), whens, otherwise.as_deref(), c, row, env),
        Expr::Func(f, args) => eval_func(f, args, c, row, env),
        other => other.eval(row, env),
    }
}

/// The functions that compare strings, under collation `c` (wrapped by
/// `annotate`).
fn eval_func(
    f: &Func,
    args: &[Expr],
    c: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let a = |i: usize| -> Result<Value> {
        match args.get(i) {
            Some(e) => e.eval(row, env),
            None => Ok(Value::Null),
        }
    };
    Ok(match f {
        Func::FindInSet => crate::members::find_in_set(&a(0)?, &a(1)?, c),
        Func::NullIf => {
            let (x, y) = (a(0)?, a(1)?);
            if !x.is_null() && !y.is_null() && cmp(&x, &y, c).is_eq() {
                Value::Null
            } else {
                x
            }
        }
        Func::Strcmp => {
            let (x, y) = (a(0)?, a(1)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            let o = cmp(&Value::Bytes(x.text()), &Value::Bytes(y.text()), c);
            Value::Int(o as i64)
        }
        Func::Field => {
            let x = a(0)?;
            if !x.is_null() {
                for i in 1..args.len() {
                    let y = a(i)?;
                    if !y.is_null() && cmp(&x, &y, c).is_eq() {
                        return Ok(Value::Int(i as i64));
                    }
                }
            }
            Value::Int(0)
        }
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for i in 0..args.len() {
                let v = a(i)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let o = best.as_ref().map(|b| cmp(&v, b, c));
                let want = if *f == Func::Greatest {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                if o.is_none_or(|o| o == want) {
                    best = Some(v);
                }
            }
            best.unwrap_or(Value::Null)
        }
        Func::Locate | Func::Instr => {
            let (needle, hay) = if *f == Func::Locate {
                (a(0)?, a(1)?)
            } else {
                (a(1)?, a(0)?)
            };
            let from = if *f == Func::Locate && args.len() > 2 {
                match a(2)?.to_i128() {
                    None => return Ok(Value::Null),
                    Some(p) if p < 1 => return Ok(Value::Int(0)),
                    Some(p) => p as usize,
                }
            } else {
                1
            };
            if needle.is_null() || hay.is_null() {
                return Ok(Value::Null);
            }
            match c {
                Some(c) => Value::Int(find_chars(&hay.text(), &needle.text(), from, c)),
                None => crate::func::call(f, args, row, env)?,
            }
        }
        _ => crate::func::call(f, args, row, env)?,
    })
}

/// 1-based character position of `needle` in `hay` at or after character
/// `from` under `c` (0: not found).
fn find_chars(hay: &[u8], needle: &[u8], from: usize, c: Collation) -> i64 {
    let (h, n) = (units(hay), units(needle));
    let eq = |a: u32, b: u32| match (char::from_u32(a), char::from_u32(b)) {
        (Some(x), Some(y)) => c.char_eq(x, y),
        _ => a == b,
    };
    if from > h.len() + 1 {
        return 0;
    }
    if n.is_empty() {
        return from as i64;
    }
    for start in from - 1..h.len() {
        if start + n.len() > h.len() {
            break;
        }
        if n.iter().zip(&h[start..]).all(|(x, y)| eq(*x, *y)) {
            return start as i64 + 1;
        }
    }
    0
}

/// A comparison operator applied to two values.
pub fn compare_op(op: BinOp, x: &Value, y: &Value, coll: Option<Collation>) -> Value {
    if op == BinOp::NullSafeEq {
        return Value::Int(match (x.is_null(), y.is_null()) {
            (true, true) => 1,
            (false, false) => cmp(x, y, coll).is_eq() as i64,
            _ => 0,
        });
    }
    if x.is_null() || y.is_null() {
        return Value::Null;
    }
    let o = cmp(x, y, coll);
    let r = match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    };
    Value::Int(r as i64)
}

/// `x [NOT] IN (list)` in three-valued logic.
pub fn eval_in(
    x: &Expr,
    list: &[Expr],
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for e in list {
        let xv = e.eval(row, env)?;
        if xv.is_null() {
            saw_null = true;
        } else if cmp(&v, &xv, coll) == Ordering::Equal {
            return Ok(Value::Int(!negated as i64));
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Int(negated as i64)
    })
}

/// `x [NOT] BETWEEN lo AND hi`: (x >= lo AND x <= hi) in three-valued
/// logic (a NULL bound makes it NULL only when the other test does not fail).
pub fn eval_between(
    x: &Expr,
    lo: &Expr,
    hi: &Expr,
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let l = lo.eval(row, env)?;
    let h = hi.eval(row, env)?;
    let ge = (!l.is_null()).then(|| cmp(&v, &l, coll) != Ordering::Less);
    let le = (!h.is_null()).then(|| cmp(&v, &h, coll) != Ordering::Greater);
    Ok(match (ge, le) {
        (Some(false), _) | (_, Some(false)) => Value::Int(negated as i64),
        (Some(true), Some(true)) => Value::Int(!negated as i64),
        _ => Value::Null,
    })
}

/// `x [NOT] IN (subquery k)`.
pub fn eval_in_subquery(
    x: &Expr,
    k: usize,
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    match env.subquery(k) {
        Some(SubResult::Set(s)) => Ok(match s.contains_coll(&v, coll) {
            None => Value::Null,
            Some(b) => Value::Int((b != negated) as i64),
        }),
        _ => Err(SqlError::internal(format!("subquery {k} not computed"))),
    }
}

/// CASE [operand] WHEN ... THEN ... [ELSE ...] END.
pub fn eval_case(
    operand: Option<&Expr>,
    whens: &[(Expr, Expr)],
    otherwise: Option<&Expr>,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let op = match operand {
        Some(o) => Some(o.eval(row, env)?),
        None => None,
    };
    for (w, t) in whens {
        let wv = w.eval(row, env)?;
        let hit = match &op {
            Some(o) => !o.is_null() && !wv.is_null() && cmp(o, &wv, coll) == Ordering::Equal,
            None => wv.truth() == Some(true),
        };
        if hit {
            return t.eval(row, env);
        }
    }
    match otherwise {
        Some(e) => e.eval(row, env),
        None => Ok(Value::Null),
    }
}

/// `x [NOT] LIKE p [ESCAPE esc]`: bytewise under no collation, else
/// character by character under it.
#[allow(clippy::too_many_arguments)]
pub fn eval_like(
    x: &Expr,
    p: &Expr,
    negated: bool,
    esc: u8,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    let pv = p.eval(row, env)?;
    if v.is_null() || pv.is_null() {
        return Ok(Value::Null);
    }
    let m = match coll {
        None => crate::expr::like(&v.text(), &pv.text(), esc),
        Some(c) => like_chars(&v.text(), &pv.text(), esc, c),
    };
    Ok(Value::Int((m != negated) as i64))
}

/// A character of a LIKE operand: a code point, or 0x110000 + byte for a
/// byte that is not UTF-8.
fn units(s: &[u8]) -> Vec<u32> {
    let mut v = Vec::with_capacity(s.len());
    for_each_char(s, |c| {
        v.push(match c {
            Ok(c) => c as u32,
            Err(b) => 0x110000 + b as u32,
        })
    });
    v
}

/// LIKE over characters, each compared under `c`.
pub fn like_chars(s: &[u8], p: &[u8], esc: u8, c: Collation) -> bool {
    let (s, p) = (units(s), units(p));
    let esc = esc as u32;
    let eq = |a: u32, b: u32| match (char::from_u32(a), char::from_u32(b)) {
        (Some(x), Some(y)) => c.char_eq(x, y),
        _ => a == b,
    };
    crate::expr::like_units(&s, &p, '%' as u32, '_' as u32, esc, eq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_follows_the_collation_per_character() {
        let ci = Collation::Utf8mb4GeneralCi;
        assert!(like_chars(b"ABC", b"a%", b'\\', ci));
        assert!(like_chars("é".as_bytes(), b"_", b'\\', ci));
        assert!(like_chars("Résumé".as_bytes(), b"res_me", b'\\', ci));
        assert!(!like_chars(b"abc", b"a_", b'\\', ci));
        assert!(like_chars(b"a%c", b"A\\%C", b'\\', ci));
        assert!(!like_chars(b"ABC", b"a%", b'\\', Collation::Utf8mb4Bin));
        assert!(like_chars(
            "é".as_bytes(),
            b"_",
            b'\\',
            Collation::Utf8mb4Bin
        ));
    }
}
