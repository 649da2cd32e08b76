//! Converting values to a column's type: for storage (INSERT/UPDATE, with
//! strict-mode errors as MySQL's default `STRICT_TRANS_TABLES` gives) and
//! for index lookups (where a probe that cannot match is reported so the
//! planner can skip the range).
use crate::error::{Result, SqlError};
use rel::schema::Column;
use rel::value::{self as val, compare, parse_number_prefix, ColumnType, TypeKind, Value};
use std::cmp::Ordering;

fn out_of_range(col: &Column, row: usize) -> SqlError {
    SqlError::column_out_of_range(&col.name, row)
}

fn incorrect(col: &Column, v: &Value, row: usize, what: &str) -> SqlError {
    // MySQL: a bad temporal value is 1292 (22007), a bad number or string 1366.
    let shown = String::from_utf8_lossy(&v.text()).into_owned();
    match what {
        "date" | "datetime" | "time" => SqlError::incorrect_temporal(what, shown, &col.name, row),
        _ => SqlError::incorrect_value(what, shown, &col.name, row),
    }
}

/// The byte offset of the first character of `s` that character set of
/// `coll` cannot hold (latin1: cp1252's; utf8mb3: up to 3 bytes), if any.
pub(crate) fn outside_charset(s: &str, coll: rel::collation::Collation) -> Option<usize> {
    let fits: fn(char) -> bool = match coll.charset() {
        "latin1" => |c| c == '?' || rel::collation::latin1_byte(c) != b'?',
        "utf8mb3" => |c| c.len_utf8() < 4,
        _ => return None,
    };
    s.char_indices().find(|(_, c)| !fits(*c)).map(|(i, _)| i)
}

/// `s` with each character the character set of `coll` cannot hold as `?`
/// (what MariaDB stores without strict mode).
pub(crate) fn to_charset_lossy(s: &str, coll: rel::collation::Collation) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = outside_charset(rest, coll) {
        out.push_str(&rest[..at]);
        out.push('?');
        let n = rest[at..].chars().next().map_or(1, char::len_utf8);
        rest = &rest[at + n..];
    }
    out.push_str(rest);
    out
}

/// Converts `v` for storage in `col` (row number `row` for messages).
pub fn for_store(v: Value, col: &Column, row: usize) -> Result<Value> {
    if v.is_null() {
        if !col.nullable {
            return Err(SqlError::not_null(&col.name));
        }
        return Ok(Value::Null);
    }
    let t = &col.ty;
    match t.kind {
        _ if t.is_integer() => {
            let i = match &v {
                Value::Bytes(b) => {
                    let s = std::str::from_utf8(b).unwrap_or("").trim();
                    match parse_number_prefix(s.as_bytes()) {
                        Some(n) if !s.is_empty() && is_full_number(s) => n.to_i128(),
                        _ if s.is_empty() => return Err(incorrect(col, &v, row, "integer")),
                        _ => return Err(incorrect(col, &v, row, "integer")),
                    }
                }
                other => other.to_i128(),
            }
            .ok_or_else(|| out_of_range(col, row))?;
            let (lo, hi) = t.int_range();
            if i < lo || i > hi {
                return Err(out_of_range(col, row));
            }
            Ok(if t.unsigned && t.kind == TypeKind::BigInt {
                Value::UInt(i as u64)
            } else {
                Value::Int(i as i64)
            })
        }
        TypeKind::Float | TypeKind::Double => {
            if let Value::Bytes(b) = &v {
                let s = std::str::from_utf8(b).unwrap_or("").trim();
                if !is_full_number(s) {
                    return Err(incorrect(col, &v, row, "double"));
                }
            }
            let d = v.to_f64().unwrap_or(0.0);
            if !d.is_finite() {
                return Err(out_of_range(col, row));
            }
            Ok(Value::Double(if t.kind == TypeKind::Float {
                d as f32 as f64
            } else {
                d
            }))
        }
        TypeKind::Decimal => {
            let m = to_decimal(&v, t.scale).ok_or_else(|| incorrect(col, &v, row, "decimal"))?;
            let digits = (t.len.max(1)) as u32;
            if digits <= 38 && m.unsigned_abs() >= 10u128.pow(digits) {
                return Err(out_of_range(col, row));
            }
            if t.unsigned && m < 0 {
                return Err(out_of_range(col, row));
            }
            Ok(Value::Decimal(m, t.scale))
        }
        TypeKind::Enum | TypeKind::Set => to_member(&v, t)
            .map(Value::Bytes)
            .ok_or_else(|| SqlError::data_truncated(&col.name, row)),
        _ if t.is_string() => {
            let mut b = match v {
                Value::Bytes(b) => b,
                other => other.text(),
            };
            if t.kind == TypeKind::Char {
                let n = rel::keycodec::trim_trailing_spaces(&b).len();
                b.truncate(n);
            }
            let chars = if t.is_binary() {
                b.len()
            } else {
                // Text columns hold utf8mb4: bytes that are not UTF-8 (from
                // X'..', a _binary literal or a BLOB) are refused, as MySQL's
                // strict mode does, never stored to be mangled later.
                let bad = |at: usize| {
                    let shown: String = b[at..]
                        .iter()
                        .take(6)
                        .map(|c| format!("\\x{c:02X}"))
                        .collect();
                    SqlError::incorrect_value("string", shown, &col.name, row)
                };
                match std::str::from_utf8(&b) {
                    // A character the column's character set lacks (latin1
                    // beyond cp1252, utf8mb3 beyond 3 bytes) is refused as
                    // MariaDB refuses it, whether or not the binary log
                    // (which holds the column's own encoding) is on.
                    Ok(s) => match outside_charset(s, t.coll) {
                        Some(at) => return Err(bad(at)),
                        None => s.chars().count(),
                    },
                    Err(e) => return Err(bad(e.valid_up_to())),
                }
            };
            let limit = match t.kind {
                TypeKind::Text | TypeKind::Blob => t.max_bytes(),
                _ => t.len as usize,
            };
            let measured = if matches!(t.kind, TypeKind::Text | TypeKind::Blob) {
                b.len()
            } else {
                chars
            };
            if measured > limit {
                return Err(SqlError::data_too_long(&col.name, row));
            }
            // BINARY(n) holds exactly n bytes: shorter values are padded with 0x00.
            if t.kind == TypeKind::Binary && b.len() < limit {
                b.resize(limit, 0);
            }
            Ok(Value::Bytes(b))
        }
        TypeKind::Date => match to_date_time(&v) {
            Some(p) => {
                let (y, m, d, ..) = val::datetime_unpack(p);
                Ok(Value::Date(val::date_pack(y, m, d)))
            }
            None => Err(incorrect(col, &v, row, "date")),
        },
        TypeKind::DateTime | TypeKind::Timestamp => match to_date_time(&v) {
            Some(p) => Ok(Value::DateTime(p)),
            None => Err(incorrect(col, &v, row, "datetime")),
        },
        TypeKind::Time => match &v {
            Value::Time(t) => Ok(Value::Time(*t)),
            Value::Bytes(b) => val::parse_time(b)
                .map(Value::Time)
                .ok_or_else(|| incorrect(col, &v, row, "time")),
            Value::DateTime(p) => Ok(Value::Time(p.rem_euclid(86_400_000_000))),
            // A number is [-]HHMMSS[.ffffff]: its text goes through the same
            // range check as a string (838:59:59 at most, minutes and
            // seconds below 60), so a huge number is refused, never wrapped.
            other => val::parse_time(&other.text())
                .map(Value::Time)
                .ok_or_else(|| incorrect(col, &v, row, "time")),
        },
        _ => Ok(v),
    }
}

fn is_full_number(s: &str) -> bool {
    !s.is_empty() && (s.parse::<f64>().is_ok() || s.parse::<i128>().is_ok())
}

/// The value as a decimal mantissa at `scale` (rounded half away from 0).
pub fn to_decimal(v: &Value, scale: u8) -> Option<i128> {
    match v {
        Value::Int(i) => (*i as i128).checked_mul(10i128.pow(scale as u32)),
        Value::UInt(u) => (*u as i128).checked_mul(10i128.pow(scale as u32)),
        Value::Decimal(m, s) => {
            if *s <= scale {
                m.checked_mul(10i128.pow((scale - s) as u32))
            } else {
                let p = 10i128.pow((s - scale) as u32);
                let q = m / p;
                let r = m % p;
                Some(if r.abs() * 2 >= p { q + m.signum() } else { q })
            }
        }
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            parse_decimal(s, scale)
        }
        Value::Double(d) => Some((d * 10f64.powi(scale as i32)).round() as i128),
        other => other.to_i128().map(|i| i * 10i128.pow(scale as u32)),
    }
}

/// Parses a decimal literal exactly.
pub fn parse_decimal(s: &str, scale: u8) -> Option<i128> {
    if s.contains(['e', 'E']) {
        let d: f64 = s.parse().ok()?;
        return Some((d * 10f64.powi(scale as i32)).round() as i128);
    }
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (ip, fp) = s.split_once('.').unwrap_or((s, ""));
    if ip.is_empty() && fp.is_empty() {
        return None;
    }
    if !ip.chars().all(|c| c.is_ascii_digit()) || !fp.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut m: i128 = if ip.is_empty() { 0 } else { ip.parse().ok()? };
    let mut round_up = false;
    for (i, c) in fp.chars().enumerate() {
        let d = c as i128 - '0' as i128;
        if i < scale as usize {
            m = m.checked_mul(10)?.checked_add(d)?;
        } else {
            round_up = i == scale as usize && d >= 5;
            break;
        }
    }
    for _ in fp.len()..scale as usize {
        m = m.checked_mul(10)?;
    }
    if round_up {
        m += 1;
    }
    Some(if neg { -m } else { m })
}

fn to_date_time(v: &Value) -> Option<i64> {
    match v {
        Value::DateTime(p) => Some(*p),
        Value::Date(d) => {
            let (y, m, dd) = val::date_unpack(*d);
            Some(val::datetime_pack(y, m, dd, 0, 0, 0, 0))
        }
        Value::Bytes(b) => val::parse_datetime(b),
        Value::Int(_) | Value::UInt(_) => {
            // YYYYMMDD or YYYYMMDDhhmmss
            let n = v.to_i128()?;
            let s = n.to_string();
            if s.len() == 8 {
                val::parse_datetime(s.as_bytes())
            } else if s.len() == 14 {
                let t = format!("{} {}:{}:{}", &s[..8], &s[8..10], &s[10..12], &s[12..14]);
                val::parse_datetime(t.as_bytes())
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The canonical text of `v` as a value of ENUM/SET type `t`: a member
/// (under the column's collation, so 'A' stores 'a' under a _ci one) or a
/// member number (a number, or a string of one that names no member); for
/// SET, members separated by commas in any order (stored in declaration
/// order) or a bitmask. None when it is neither (MariaDB: 1265).
pub fn to_member(v: &Value, t: &ColumnType) -> Option<Vec<u8>> {
    let m = &t.members;
    let set = t.kind == TypeKind::Set;
    let number = match v {
        Value::Bytes(b) => {
            let found = if set {
                m.set_mask(b, t.coll).map(|mask| m.set_text(mask))
            } else {
                m.position(b, t.coll).map(|n| m.get(n).to_vec())
            };
            if found.is_some() || !val::is_whole_number(b) {
                return found;
            }
            parse_number_prefix(b)?.to_i128()?
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => v.to_i128()?,
        other => return to_member(&Value::Bytes(other.text()), t),
    };
    if set {
        let mask = u64::try_from(number).ok()?;
        (mask & !m.full_mask() == 0).then(|| m.set_text(mask))
    } else {
        (number >= 1 && number <= m.len() as i128).then(|| m.get(number as u64).to_vec())
    }
}

/// What a value that is not a member stores where MariaDB only warns: ''
/// for ENUM, the parts that are members for SET.
pub fn member_fallback(v: &Value, t: &ColumnType) -> Vec<u8> {
    match v {
        Value::Bytes(b) if t.kind == TypeKind::Set => {
            let mask = b
                .split(|&c| c == b',')
                .filter_map(|p| t.members.position(p, t.coll))
                .fold(0u64, |m, n| m | 1u64 << (n - 1));
            t.members.set_text(mask)
        }
        _ => Vec::new(),
    }
}

/// How a probe value maps onto a key column.
pub enum KeyProbe {
    /// Converted without loss: equal keys are exactly the equal rows.
    Exact(Value),
    /// Rounded or clamped: usable only as an inclusive range bound.
    Inexact(Value),
    /// Cannot be represented (NULL, unparsable): matches nothing.
    Impossible,
    /// The comparison does not follow the key's order (a number against a
    /// string column compares as doubles: '01', '1.0' and '1e0' all equal
    /// 1): the probe bounds nothing, the range must span this column.
    Unordered,
}

/// Converts a lookup value for a key column.
pub fn for_key(v: &Value, ty: &ColumnType) -> KeyProbe {
    if v.is_null() {
        return KeyProbe::Impossible;
    }
    let conv = match ty.kind {
        _ if ty.is_integer() => {
            let (lo, hi) = ty.int_range();
            let i = match v {
                Value::Double(d) if d.is_finite() => {
                    // Clamp before rounding to avoid overflow.
                    Some(d.clamp(lo as f64 - 1.0, hi as f64 + 1.0).round() as i128)
                }
                Value::Double(d) => Some(if *d > 0.0 { hi + 1 } else { lo - 1 }),
                other => other.to_i128(),
            };
            let Some(i) = i else {
                return KeyProbe::Impossible;
            };
            let c = i.clamp(lo, hi);
            if ty.unsigned && ty.kind == TypeKind::BigInt {
                Value::UInt(c as u64)
            } else {
                Value::Int(c as i64)
            }
        }
        TypeKind::Float | TypeKind::Double => match v.to_f64() {
            Some(d) => Value::Double(d),
            None => return KeyProbe::Impossible,
        },
        TypeKind::Decimal => match to_decimal(v, ty.scale) {
            Some(m) => Value::Decimal(m, ty.scale),
            None => return KeyProbe::Impossible,
        },
        // Keys hold member numbers while comparisons compare the text.
        TypeKind::Enum | TypeKind::Set => return KeyProbe::Unordered,
        _ if ty.is_string() => match v {
            Value::Bytes(b) => Value::Bytes(b.clone()),
            _ => return KeyProbe::Unordered,
        },
        TypeKind::Date => match to_date_time(v) {
            Some(p) => {
                let (y, m, d, h, mi, s, us) = val::datetime_unpack(p);
                let dv = Value::Date(val::date_pack(y, m, d));
                if h == 0 && mi == 0 && s == 0 && us == 0 {
                    dv
                } else {
                    return KeyProbe::Inexact(dv);
                }
            }
            None => return KeyProbe::Impossible,
        },
        TypeKind::DateTime | TypeKind::Timestamp => match to_date_time(v) {
            Some(p) => Value::DateTime(p),
            None => return KeyProbe::Impossible,
        },
        TypeKind::Time => match v {
            Value::Time(t) => Value::Time(*t),
            Value::Bytes(b) => match val::parse_time(b) {
                Some(t) => Value::Time(t),
                None => return KeyProbe::Impossible,
            },
            _ => return KeyProbe::Impossible,
        },
        _ => return KeyProbe::Impossible,
    };
    if compare(&conv, v) == Ordering::Equal {
        KeyProbe::Exact(conv)
    } else {
        KeyProbe::Inexact(conv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_and_round() {
        assert_eq!(parse_decimal("12.345", 2), Some(1235));
        assert_eq!(parse_decimal("-0.5", 0), Some(-1));
        assert_eq!(parse_decimal("7", 3), Some(7000));
        assert_eq!(parse_decimal("abc", 2), None);
        assert_eq!(to_decimal(&Value::Decimal(12345, 3), 1), Some(123));
    }

    #[test]
    fn key_probes() {
        let int = ColumnType::new(TypeKind::Int);
        assert!(matches!(
            for_key(&Value::Int(5), &int),
            KeyProbe::Exact(Value::Int(5))
        ));
        assert!(matches!(
            for_key(&Value::Double(1.5), &int),
            KeyProbe::Inexact(Value::Int(2))
        ));
        assert!(matches!(
            for_key(&Value::Int(1 << 40), &int),
            KeyProbe::Inexact(_)
        ));
        assert!(matches!(
            for_key(&Value::Bytes(b"5".to_vec()), &int),
            KeyProbe::Exact(Value::Int(5))
        ));
        assert!(matches!(for_key(&Value::Null, &int), KeyProbe::Impossible));
        let text = ColumnType::new(TypeKind::VarChar);
        assert!(matches!(
            for_key(&Value::Bytes(b"01".to_vec()), &text),
            KeyProbe::Exact(_)
        ));
        for v in [Value::Int(1), Value::Double(1.0), Value::Decimal(10, 1)] {
            assert!(matches!(for_key(&v, &text), KeyProbe::Unordered));
        }
    }
}
