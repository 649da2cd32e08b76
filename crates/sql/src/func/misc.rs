//! Number bases, addresses, number formatting and identifiers: CONV, BIN,
//! OCT, UNHEX, INET_ATON, INET_NTOA, FORMAT, UUID, UUID_SHORT, TO_BASE64 (a
//! newline every 76 characters), FROM_BASE64 and ORD, with MySQL's NULL and
//! overflow rules (CONV works on 64-bit unsigned values; a negative target
//! base prints a signed value).
use super::{arg, int_arg, Func};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use rel::value::Value;

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let a = |i: usize| arg(args, i, row, env);
    let arity = match f {
        Func::Conv => 3..=3,
        Func::Format => 2..=3,
        Func::Uuid | Func::UuidShort => 0..=0,
        _ => 1..=1,
    };
    if !arity.contains(&args.len()) {
        return Err(SqlError::wrong_param_count());
    }
    Ok(match f {
        Func::Conv => {
            let n = a(0)?;
            let (Some(from), Some(to)) = (int_arg(args, 1, row, env)?, int_arg(args, 2, row, env)?)
            else {
                return Ok(Value::Null);
            };
            if n.is_null() {
                return Ok(Value::Null);
            }
            conv(&n.text(), from, to).map_or(Value::Null, |s| Value::Bytes(s.into_bytes()))
        }
        Func::Bin | Func::Oct => {
            let n = a(0)?;
            if n.is_null() {
                return Ok(Value::Null);
            }
            let to = if f == Func::Bin { 2 } else { 8 };
            conv(&n.text(), 10, to).map_or(Value::Null, |s| Value::Bytes(s.into_bytes()))
        }
        Func::Unhex => match a(0)? {
            Value::Null => Value::Null,
            v => unhex(&v.text()).map_or(Value::Null, Value::Bytes),
        },
        Func::InetAton => match a(0)? {
            Value::Null => Value::Null,
            v => inet_aton(&v.text()).map_or(Value::Null, Value::UInt),
        },
        Func::InetNtoa => match a(0)? {
            Value::Null => Value::Null,
            v => match v.to_i128() {
                Some(n) if (0..=u32::MAX as i128).contains(&n) => {
                    Value::Bytes(std::net::Ipv4Addr::from(n as u32).to_string().into_bytes())
                }
                _ => Value::Null,
            },
        },
        Func::Format => {
            let x = a(0)?;
            let Some(d) = int_arg(args, 1, row, env)? else {
                return Ok(Value::Null);
            };
            if args.len() == 3 {
                let loc = a(2)?;
                if !loc.is_null() && !loc.text().eq_ignore_ascii_case(b"en_US") {
                    return Err(SqlError::unsupported(
                        "FORMAT with a locale other than en_US",
                    ));
                }
            }
            if x.is_null() {
                return Ok(Value::Null);
            }
            Value::Bytes(format_number(&x, d.clamp(0, 30) as usize).into_bytes())
        }
        Func::Uuid => Value::Bytes(uuid_v1(env.now_micros()).into_bytes()),
        Func::UuidShort => Value::UInt(uuid_short(env)),
        Func::ToBase64 | Func::FromBase64 | Func::Ord => match a(0)? {
            Value::Null => Value::Null,
            v => {
                let t = v.text();
                match f {
                    Func::ToBase64 => Value::Bytes(to_base64(&t)),
                    Func::FromBase64 => from_base64(&t).map_or(Value::Null, Value::Bytes),
                    _ => Value::Int(ord(&t)),
                }
            }
        },
        _ => return Err(SqlError::internal(format!("{f:?} is not in func::misc"))),
    })
}

/// CONV(n, from, to): None for a base outside 2..=36 (by absolute value) or
/// an empty `n`.
fn conv(n: &[u8], from: i64, to: i64) -> Option<String> {
    let (fb, tb) = (from.unsigned_abs(), to.unsigned_abs());
    if !(2..=36).contains(&fb) || !(2..=36).contains(&tb) || n.is_empty() {
        return None;
    }
    let s = String::from_utf8_lossy(n);
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut v: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let Some(d) = c.to_digit(36).filter(|d| (*d as u64) < fb) else {
            break;
        };
        match v.checked_mul(fb).and_then(|x| x.checked_add(d as u64)) {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    if overflow {
        v = if from < 0 && !neg {
            i64::MAX as u64
        } else if from < 0 {
            i64::MIN as u64
        } else {
            u64::MAX
        };
    } else if neg {
        v = v.wrapping_neg();
    }
    let (sign, mut mag) = if to < 0 && (v as i64) < 0 {
        ("-", (v as i64).unsigned_abs())
    } else {
        ("", v)
    };
    let mut out = Vec::new();
    loop {
        let d = (mag % tb) as u32;
        out.push(
            std::char::from_digit(d, 36)
                .unwrap_or('0')
                .to_ascii_uppercase(),
        );
        mag /= tb;
        if mag == 0 {
            break;
        }
    }
    out.reverse();
    Some(format!("{sign}{}", out.into_iter().collect::<String>()))
}

/// UNHEX: pairs of hex digits (an odd count gets a leading 0); None for a non-hex digit.
fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len() / 2 + 1);
    let mut i = 0;
    if s.len() % 2 == 1 {
        out.push(digit(s[0])?);
        i = 1;
    }
    while i + 1 < s.len() {
        out.push(digit(s[i])? << 4 | digit(s[i + 1])?);
        i += 2;
    }
    Some(out)
}

/// INET_ATON: `a.b.c.d`, with `a.b.c` meaning `a.b.0.c` and `a.b` meaning `a.0.0.b`
/// (more than four parts are not refused: each shifts the value by a byte, as MySQL).
fn inet_aton(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.last() == Some(&b'.') {
        return None;
    }
    let (mut result, mut byte, mut dots) = (0u64, 0u64, 0);
    for &c in s {
        match c {
            b'0'..=b'9' => {
                byte = byte * 10 + (c - b'0') as u64;
                if byte > 255 {
                    return None;
                }
            }
            b'.' => {
                dots += 1;
                result = (result << 8).wrapping_add(byte);
                byte = 0;
            }
            _ => return None,
        }
    }
    match dots {
        1 => result <<= 16,
        2 => result <<= 8,
        _ => {}
    }
    Some((result << 8).wrapping_add(byte))
}

/// FORMAT(x, d): rounded half away from zero to `d` decimals, thousands separated
/// by commas.
fn format_number(x: &Value, d: usize) -> String {
    let plain = match x {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(..)
            if x.text()
                .iter()
                .all(|c| c.is_ascii_digit() || *c == b'.' || *c == b'-') =>
        {
            round_decimal_text(&String::from_utf8_lossy(&x.text()), d)
        }
        other => format!("{:.*}", d, other.to_f64().unwrap_or(0.0)),
    };
    let (neg, body) = match plain.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, plain.as_str()),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let neg = neg && (int.chars().any(|c| c != '0') || frac.chars().any(|c| c != '0'));
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&grouped);
    if d > 0 {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// An exact decimal's text rounded half away from zero to `d` decimals (padded).
fn round_decimal_text(s: &str, d: usize) -> String {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let mut digits: Vec<u8> = int
        .bytes()
        .chain(frac.bytes().take(d))
        .map(|c| c - b'0')
        .collect();
    let pad = d.saturating_sub(frac.len());
    digits.extend(std::iter::repeat_n(0, pad));
    if frac.as_bytes().get(d).is_some_and(|c| *c >= b'5') {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let split = digits.len() - d;
    let txt = |v: &[u8]| v.iter().map(|c| (c + b'0') as char).collect::<String>();
    let int = txt(&digits[..split]);
    let int = if int.is_empty() { "0".to_string() } else { int };
    let sign = if neg { "-" } else { "" };
    if d == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{}", txt(&digits[split..]))
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 with `=` padding and a newline after every 76 characters (as MySQL).
fn to_base64(d: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(d.len() * 4 / 3 + d.len() / 57 + 4);
    let mut line = 0;
    for chunk in d.chunks(3) {
        if line == 76 {
            out.push(b'\n');
            line = 0;
        }
        let n = chunk.iter().fold(0u32, |n, &b| n << 8 | b as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                B64[(n >> (18 - 6 * i) & 63) as usize]
            } else {
                b'='
            });
        }
        line += 4;
    }
    out
}

/// FROM_BASE64: whitespace is skipped; None for another character, a group cut short
/// or misplaced padding.
fn from_base64(s: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if !digits.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() / 4 * 3);
    let groups = digits.len() / 4;
    for (g, quad) in digits.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|c| **c == b'=').count();
        if pad > 2 || (pad > 0 && g + 1 != groups) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = n << 6 | B64.iter().position(|b| *b == c)? as u32;
        }
        n <<= 6 * pad as u32;
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    Some(out)
}

/// ORD: the leftmost character's bytes as a big-endian number.
fn ord(s: &[u8]) -> i64 {
    let Some(&first) = s.first() else { return 0 };
    let len = match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    s.iter().take(len).fold(0i64, |n, &b| n << 8 | b as i64)
}

/// UUID_SHORT(): `(server_id & 255) << 56 | startup seconds << 24`, plus one per call
/// (as MySQL).
fn uuid_short(env: &dyn Env) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let server = env
            .sys_var("server_id", false)
            .and_then(|v| v.to_i128())
            .unwrap_or(0) as u64;
        let secs = (env.now_micros().max(0) / 1_000_000) as u64;
        AtomicU64::new((server & 255) << 56 | (secs & 0xff_ffff_ffff) << 24)
    });
    next.fetch_add(1, Ordering::Relaxed)
}

/// A version 1 UUID (time-based, as MySQL's UUID()): 100 ns intervals since
/// 1582-10-15, a clock sequence and a random node with the multicast bit set.
fn uuid_v1(now_micros: i64) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    static NODE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let random = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(now_micros as u64);
        h.finish()
    };
    let node = *NODE.get_or_init(|| (random() & 0xffff_ffff_ffff) | 0x0100_0000_0000);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    // Distinct values within one microsecond: the sequence fills the 100 ns digit.
    let t = (now_micros as u64)
        .wrapping_add(12_219_292_800_000_000)
        .wrapping_mul(10)
        .wrapping_add(seq % 10);
    let clock = (seq / 10 + (node >> 8)) & 0x3fff | 0x8000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        t & 0xffff_ffff,
        (t >> 32) & 0xffff,
        ((t >> 48) & 0x0fff) | 0x1000,
        clock,
        node
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_as_mysql() {
        assert_eq!(conv(b"ff", 16, 10).as_deref(), Some("255"));
        assert_eq!(conv(b"255", 10, 2).as_deref(), Some("11111111"));
        assert_eq!(conv(b"-1", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFFF"));
        assert_eq!(conv(b"zz", 36, 10).as_deref(), Some("1295"));
        assert_eq!(conv(b"10", 10, -16).as_deref(), Some("A"));
        assert_eq!(conv(b"-10", 10, -10).as_deref(), Some("-10"));
        assert_eq!(conv(b"1x", 16, 10).as_deref(), Some("1"));
        assert_eq!(conv(b"10", 1, 10), None);
        assert_eq!(conv(b"", 10, 10), None);
        assert_eq!(conv(b"x", 10, 10).as_deref(), Some("0"));
        assert_eq!(
            conv(b"99999999999999999999999", 10, 10).as_deref(),
            Some("18446744073709551615")
        );
    }

    #[test]
    fn addresses_hex_and_format() {
        assert_eq!(inet_aton(b"10.0.5.9"), Some(167773449));
        assert_eq!(inet_aton(b"1.2.3"), Some(16908291));
        assert_eq!(inet_aton(b"127.1"), Some(2130706433));
        assert_eq!(inet_aton(b"1.2.3.256"), None);
        assert_eq!(inet_aton(b"1.2.3.4.5"), Some(4328719365));
        assert_eq!(inet_aton(b"1."), None);
        assert_eq!(unhex(b"616263"), Some(b"abc".to_vec()));
        assert_eq!(unhex(b"6"), Some(vec![6]));
        assert_eq!(unhex(b"zz"), None);
        assert_eq!(round_decimal_text("1234567.891", 2), "1234567.89");
        assert_eq!(round_decimal_text("-0.5", 0), "-1");
        assert_eq!(round_decimal_text("9.995", 2), "10.00");
        assert_eq!(round_decimal_text("12", 3), "12.000");
        assert_eq!(
            format_number(&Value::Decimal(1234567891, 3), 2),
            "1,234,567.89"
        );
        assert_eq!(format_number(&Value::Int(-1234567), 0), "-1,234,567");
        assert_eq!(format_number(&Value::Decimal(-4, 1), 0), "0");
        assert_eq!(
            format_number(&Value::Double(1e20), 2),
            "100,000,000,000,000,000,000.00"
        );
    }

    #[test]
    fn base64_and_ord() {
        assert_eq!(to_base64(b"abc"), b"YWJj".to_vec());
        assert_eq!(to_base64(b"ab"), b"YWI=".to_vec());
        assert_eq!(to_base64(b""), b"".to_vec());
        assert_eq!(to_base64(&[b'x'; 100]).len(), 137);
        assert_eq!(from_base64(b"YWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(from_base64(b"YW Jj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(from_base64(b"YWI=").as_deref(), Some(&b"ab"[..]));
        assert_eq!(from_base64(b"YWJ"), None);
        assert_eq!(from_base64(b"!!!!"), None);
        assert_eq!(from_base64(&to_base64(&[7u8; 200])), Some(vec![7u8; 200]));
        assert_eq!(ord(b"a"), 97);
        assert_eq!(ord("é".as_bytes()), 50089);
        assert_eq!(ord("€x".as_bytes()), 14844588);
        assert_eq!(ord(b""), 0);
    }

    #[test]
    fn uuids_are_v1_and_distinct() {
        let a = uuid_v1(1_700_000_000_000_000);
        let b = uuid_v1(1_700_000_000_000_000);
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "1");
        assert_eq!(a.matches('-').count(), 4);
    }
}
