//! String functions beyond the basics in `mod.rs`: padding, searching,
//! splitting, character codes, comparison, lists and digests (MD5, SHA1,
//! SHA2), each NULL in, NULL out as in MySQL.
use super::{arg, int_arg, max_string, too_large, Func};
use crate::error::Result;
use crate::expr::{Env, Expr};
use rel::value::{compare, Value};
use sha1::Digest;
use std::cmp::Ordering;

fn chars(v: &Value) -> Vec<char> {
    String::from_utf8_lossy(&v.text()).chars().collect()
}

fn text(c: &[char]) -> Value {
    Value::Bytes(c.iter().collect::<String>().into_bytes())
}

fn hex(d: &[u8]) -> Value {
    Value::Bytes(
        d.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into_bytes(),
    )
}

/// Position (1-based, 0 if absent) of `needle` in `hay`, in characters.
fn find(hay: &[char], needle: &[char], from: usize) -> i64 {
    if needle.is_empty() {
        return (from + 1).min(hay.len() + 1) as i64;
    }
    (from..hay.len().saturating_sub(needle.len() - 1))
        .find(|&i| hay[i..i + needle.len()] == *needle)
        .map_or(0, |i| i as i64 + 1)
}

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let a = |i: usize| arg(args, i, row, env);
    Ok(match f {
        Func::Lpad | Func::Rpad => {
            let (s, n, pad) = (a(0)?, int_arg(args, 1, row, env)?, a(2)?);
            let (Some(n), false, false) = (n, s.is_null(), pad.is_null()) else {
                return Ok(Value::Null);
            };
            if n < 0 {
                return Ok(Value::Null);
            }
            let n = n as usize;
            if n > max_string(env) {
                return Ok(too_large(f, env));
            }
            let (s, pad) = (chars(&s), chars(&pad));
            if n <= s.len() {
                return Ok(text(&s[..n]));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let fill: Vec<char> = pad.iter().cycle().take(n - s.len()).copied().collect();
            if f == Func::Lpad {
                text(&[fill, s].concat())
            } else {
                text(&[s, fill].concat())
            }
        }
        Func::Instr => {
            let (s, sub) = (a(0)?, a(1)?);
            if s.is_null() || sub.is_null() {
                return Ok(Value::Null);
            }
            Value::Int(find(&chars(&s), &chars(&sub), 0))
        }
        Func::SubstringIndex => {
            let (s, d, n) = (a(0)?, a(1)?, int_arg(args, 2, row, env)?);
            let (Some(n), false, false) = (n, s.is_null(), d.is_null()) else {
                return Ok(Value::Null);
            };
            let (s, d) = (s.text(), d.text());
            if d.is_empty() || n == 0 {
                return Ok(Value::Bytes(Vec::new()));
            }
            let mut at = Vec::new();
            let mut i = 0;
            while i + d.len() <= s.len() {
                if s[i..].starts_with(&d) {
                    at.push(i);
                    i += d.len();
                } else {
                    i += 1;
                }
            }
            let k = n.unsigned_abs() as usize;
            if k > at.len() {
                return Ok(Value::Bytes(s));
            }
            if n > 0 {
                Value::Bytes(s[..at[k - 1]].to_vec())
            } else {
                Value::Bytes(s[at[at.len() - k] + d.len()..].to_vec())
            }
        }
        Func::Ascii => match a(0)? {
            Value::Null => Value::Null,
            v => Value::Int(v.text().first().copied().unwrap_or(0) as i64),
        },
        Func::Space => match int_arg(args, 0, row, env)? {
            None => Value::Null,
            Some(n) if n.max(0) as usize > max_string(env) => too_large(f, env),
            Some(n) => Value::Bytes(vec![b' '; n.max(0) as usize]),
        },
        Func::Strcmp => {
            let (x, y) = (a(0)?, a(1)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            Value::Int(
                match compare(&Value::Bytes(x.text()), &Value::Bytes(y.text())) {
                    Ordering::Less => -1,
                    Ordering::Equal => 0,
                    Ordering::Greater => 1,
                },
            )
        }
        Func::Field => {
            let x = a(0)?;
            if x.is_null() {
                return Ok(Value::Int(0));
            }
            for (i, e) in args.iter().enumerate().skip(1) {
                let y = e.eval(row, env)?;
                if !y.is_null() && compare(&x, &y) == Ordering::Equal {
                    return Ok(Value::Int(i as i64));
                }
            }
            Value::Int(0)
        }
        Func::Elt => match int_arg(args, 0, row, env)? {
            Some(n) if n >= 1 && (n as usize) < args.len() => a(n as usize)?,
            _ => Value::Null,
        },
        Func::Md5 | Func::Sha1 => match a(0)? {
            Value::Null => Value::Null,
            v => {
                let t = v.text();
                if f == Func::Md5 {
                    hex(&md5::Md5::digest(&t))
                } else {
                    hex(&sha1::Sha1::digest(&t))
                }
            }
        },
        Func::Sha2 => {
            let (v, bits) = (a(0)?, int_arg(args, 1, row, env)?);
            if v.is_null() {
                return Ok(Value::Null);
            }
            let t = v.text();
            match bits {
                Some(0 | 256) => hex(&sha2::Sha256::digest(&t)),
                Some(224) => hex(&sha2::Sha224::digest(&t)),
                Some(384) => hex(&sha2::Sha384::digest(&t)),
                Some(512) => hex(&sha2::Sha512::digest(&t)),
                _ => Value::Null,
            }
        }
        _ => {
            return Err(crate::error::SqlError::internal(format!(
                "{f:?} is not a text function"
            )))
        }
    })
}

/// WEIGHT_STRING(x [, 'CHAR'|'BINARY', n]) under collation `c` (see
/// `rel::collation::Collation::weight_string`): AS BINARY(n) is x's bytes
/// cut or padded with zero bytes to n; NULL past max_allowed_packet.
pub(super) fn weight_string(
    c: Option<rel::collation::Collation>,
    args: &[Expr],
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = super::arg(args, 0, row, env)?;
    let Some(c) = c.filter(|_| !v.is_null()) else {
        return Ok(Value::Null);
    };
    let max = max_string(env);
    let b = v.text();
    let w = match args.len() {
        1 => c.weight_string(&b, None, max),
        _ => {
            let n = super::arg(args, 2, row, env)?
                .to_i128()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0);
            if super::arg(args, 1, row, env)?.text() == b"BINARY" {
                rel::collation::Collation::Binary.weight_string(&b, Some(n), max)
            } else {
                c.weight_string(&b, Some(n), max)
            }
        }
    };
    Ok(match w {
        Some(w) => Value::Bytes(w),
        None => {
            env.warn(crate::error::SqlError::packet_overflowed(
                "weight_string",
                max,
            ));
            Value::Null
        }
    })
}

/// `TRIM(... rem FROM s)`: every leading (and/or trailing) copy of `rem`
/// removed, bytewise as MySQL compares it.
pub(super) fn trim_from<'a>(s: &'a [u8], rem: &[u8], leading: bool, trailing: bool) -> &'a [u8] {
    let mut t = s;
    if rem.is_empty() {
        return t;
    }
    if leading {
        while let Some(r) = t.strip_prefix(rem) {
            t = r;
        }
    }
    if trailing {
        while let Some(r) = t.strip_suffix(rem) {
            t = r;
        }
    }
    t
}
