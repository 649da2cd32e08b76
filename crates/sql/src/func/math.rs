//! Floating-point math and bit functions: LN, LOG (one or two arguments),
//! LOG2, LOG10, EXP, SIN, COS, TAN, ASIN, ACOS, ATAN (one or two), ATAN2, COT,
//! DEGREES, RADIANS, CRC32, BIT_COUNT. As MySQL: a logarithm of a value <= 0
//! (or to base 1) is NULL, an argument outside a function's domain is NULL
//! (NaN), an overflow is 1690 (`func::call` checks infinities).
use super::{arg, Func};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use rel::value::Value;

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let arity = match f {
        Func::Log | Func::Atan => 1..=2,
        Func::Atan2 => 2..=2,
        _ => 1..=1,
    };
    if !arity.contains(&args.len()) {
        return Err(SqlError::wrong_param_count());
    }
    let vals = (0..args.len())
        .map(|i| arg(args, i, row, env))
        .collect::<Result<Vec<_>>>()?;
    if vals.iter().any(|v| v.is_null()) {
        return Ok(Value::Null);
    }
    match f {
        Func::Crc32 => return Ok(Value::UInt(crc32(&vals[0].text()) as u64)),
        Func::BitCount => {
            let n = match &vals[0] {
                Value::UInt(u) => *u,
                v => match v.to_i128() {
                    Some(i) => i as i64 as u64,
                    None => 0,
                },
            };
            return Ok(Value::Int(n.count_ones() as i64));
        }
        _ => {}
    }
    let x: Vec<f64> = vals.iter().map(|v| v.to_f64().unwrap_or(0.0)).collect();
    let log = |v: f64| (v > 0.0).then(|| v.ln());
    let r = match f {
        Func::Ln => log(x[0]),
        Func::Log if x.len() == 2 => match (log(x[0]), log(x[1])) {
            (Some(b), Some(v)) if b != 0.0 => Some(v / b),
            _ => None,
        },
        Func::Log => log(x[0]),
        Func::Log2 => (x[0] > 0.0).then(|| x[0].log2()),
        Func::Log10 => (x[0] > 0.0).then(|| x[0].log10()),
        Func::Exp => Some(x[0].exp()),
        Func::Sin => Some(x[0].sin()),
        Func::Cos => Some(x[0].cos()),
        Func::Tan => Some(x[0].tan()),
        Func::Asin => Some(x[0].asin()),
        Func::Acos => Some(x[0].acos()),
        Func::Atan if x.len() == 2 => Some(x[0].atan2(x[1])),
        Func::Atan => Some(x[0].atan()),
        Func::Atan2 => Some(x[0].atan2(x[1])),
        Func::Cot => Some(1.0 / x[0].tan()),
        Func::Degrees => Some(x[0].to_degrees()),
        Func::Radians => Some(x[0].to_radians()),
        _ => return Err(SqlError::internal(format!("{f:?} is not in func::math"))),
    };
    Ok(r.map_or(Value::Null, Value::Double))
}

/// CRC-32 (IEEE 802.3, as zlib and MySQL's CRC32()).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_known_values() {
        assert_eq!(crc32(b"MySQL"), 3259397556);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
