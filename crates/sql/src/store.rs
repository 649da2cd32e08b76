//! Storing a value in a column under the statement's sql_mode: strict mode
//! refuses a value that does not fit (`convert::for_store`'s errors); without
//! strict mode, or under INSERT/UPDATE IGNORE, the value is adjusted and a
//! warning recorded, as MariaDB does: numbers clamped to the column's range
//! (1264), text cut to its length (1265), number text read up to its first
//! bad character (1265; 0 and 1366 when there is no number), bad dates and
//! times as zero (1265), a NULL for a NOT NULL column as the type's implicit
//! default (1048). NO_ZERO_DATE makes '0000-00-00' a bad date.
use crate::convert::{for_store, member_fallback, to_decimal};
use crate::error::{self, Result, SqlError};
use crate::expr::Env;
use crate::sqlmode::SqlMode;
use rel::schema::Column;
use rel::value::{self as val, parse_number_prefix, TypeKind, Value};

/// How a statement stores values that do not fit their column.
#[derive(Debug, Clone, Copy, Default)]
pub struct Storing {
    /// Adjust the value with a warning instead of failing (no strict mode, or IGNORE).
    pub adjust: bool,
    /// NULL for a NOT NULL column stores the type's implicit default with a
    /// warning (MariaDB: not for a single-row INSERT ... VALUES without IGNORE).
    pub null_default: bool,
    /// NO_ZERO_DATE: a zero date or datetime is a bad value.
    pub no_zero_date: bool,
}

impl Storing {
    /// The storing rules of a statement under `mode`; `ignore` for IGNORE.
    pub fn new(mode: SqlMode, ignore: bool) -> Storing {
        let adjust = ignore || !mode.strict();
        Storing {
            adjust,
            null_default: adjust,
            no_zero_date: mode.has(SqlMode::NO_ZERO_DATE),
        }
    }
}

/// `v` as stored in `col` (row `row` of the statement, for messages) under `how`.
pub fn store(v: Value, col: &Column, row: usize, how: Storing, env: &dyn Env) -> Result<Value> {
    if v.is_null() && !col.nullable {
        if !how.null_default {
            return Err(SqlError::not_null(&col.name));
        }
        env.warn(SqlError::not_null(&col.name));
        return Ok(zero_value(col));
    }
    let stored = if how.adjust {
        match for_store(v.clone(), col, row) {
            Ok(x) => x,
            Err(e) => adjust(v, col, row, e, env)?,
        }
    } else {
        for_store(v, col, row)?
    };
    if how.no_zero_date && is_zero_date(&stored) {
        let what = if col.ty.kind == TypeKind::Date {
            "date"
        } else {
            "datetime"
        };
        if !how.adjust {
            let shown = String::from_utf8_lossy(&stored.text()).into_owned();
            return Err(SqlError::incorrect_temporal(what, shown, &col.name, row));
        }
        // MariaDB's warning without strict mode.
        env.warn(SqlError::column_out_of_range(&col.name, row));
    }
    Ok(stored)
}

fn is_zero_date(v: &Value) -> bool {
    matches!(v, Value::Date(0) | Value::DateTime(0))
}

/// The value MySQL stores for a column given nothing usable: 0, '', the zero
/// date, 00:00:00, an ENUM's '' (a BINARY(n)'s n zero bytes).
pub fn zero_value(col: &Column) -> Value {
    let t = &col.ty;
    match t.kind {
        _ if t.is_integer() => {
            if t.unsigned && t.kind == TypeKind::BigInt {
                Value::UInt(0)
            } else {
                Value::Int(0)
            }
        }
        TypeKind::Float | TypeKind::Double => Value::Double(0.0),
        TypeKind::Decimal => Value::Decimal(0, t.scale),
        TypeKind::Date => Value::Date(0),
        TypeKind::DateTime | TypeKind::Timestamp => Value::DateTime(0),
        TypeKind::Time => Value::Time(0),
        TypeKind::Binary => Value::Bytes(vec![0; t.len as usize]),
        _ => Value::Bytes(Vec::new()),
    }
}

/// The strict error `e` for `v` turned into the adjusted value and a warning.
fn adjust(v: Value, col: &Column, row: usize, e: SqlError, env: &dyn Env) -> Result<Value> {
    if !adjustable(&e) {
        return Err(e);
    }
    let t = &col.ty;
    let truncated = || SqlError::data_truncated(&col.name, row);
    let range = || SqlError::column_out_of_range(&col.name, row);
    let (stored, warning) = match t.kind {
        _ if t.is_integer() => {
            let (n, w) = number_of(&v, col, row);
            let (lo, hi) = t.int_range();
            let exact = match n {
                Value::Int(_) | Value::UInt(_) => n.to_i128().unwrap_or(0),
                _ => {
                    let d = n.to_f64().unwrap_or(0.0).round();
                    d.clamp(lo as f64 - 1.0, hi as f64 + 1.0) as i128
                }
            };
            let i = exact.clamp(lo, hi);
            let w = if i != exact {
                range()
            } else {
                w.unwrap_or_else(range)
            };
            let x = if t.unsigned && t.kind == TypeKind::BigInt {
                Value::UInt(i as u64)
            } else {
                Value::Int(i as i64)
            };
            (x, w)
        }
        TypeKind::Float | TypeKind::Double => {
            let (n, w) = number_of(&v, col, row);
            let d = n.to_f64().unwrap_or(0.0);
            let max = if t.kind == TypeKind::Float {
                f32::MAX as f64
            } else {
                f64::MAX
            };
            let c = if d.is_nan() { 0.0 } else { d.clamp(-max, max) };
            let w = if c != d || d.is_infinite() {
                range()
            } else {
                w.unwrap_or_else(range)
            };
            (Value::Double(c), w)
        }
        TypeKind::Decimal => {
            let (n, w) = number_of(&v, col, row);
            let digits = t.len.clamp(1, 38);
            let max = 10i128.pow(digits) - 1;
            let lo = if t.unsigned { 0 } else { -max };
            let m = to_decimal(&n, t.scale);
            let c = m.unwrap_or(if n.to_f64().unwrap_or(0.0) < 0.0 {
                lo
            } else {
                max
            });
            let c2 = c.clamp(lo, max);
            let w = if m.is_none() || c2 != c {
                range()
            } else {
                w.unwrap_or_else(range)
            };
            (Value::Decimal(c2, t.scale), w)
        }
        TypeKind::Enum | TypeKind::Set => (Value::Bytes(member_fallback(&v, t)), truncated()),
        _ if t.is_string() => {
            let mut b = match v {
                Value::Bytes(b) => b,
                other => other.text(),
            };
            let mut w = None;
            if !t.is_binary() && std::str::from_utf8(&b).is_err() {
                // MariaDB stores '?' for each byte that is not UTF-8.
                b = String::from_utf8_lossy(&b)
                    .replace('\u{FFFD}', "?")
                    .into_bytes();
                w = Some(e.clone());
            }
            if let Ok(s) = std::str::from_utf8(&b) {
                if !t.is_binary() && crate::convert::outside_charset(s, t.coll).is_some() {
                    // And '?' for each character the column's charset lacks.
                    b = crate::convert::to_charset_lossy(s, t.coll).into_bytes();
                    w = Some(e.clone());
                }
            }
            let limit = match t.kind {
                TypeKind::Text | TypeKind::Blob => t.max_bytes(),
                _ => t.len as usize,
            };
            let cut = if t.is_binary() {
                limit.min(b.len())
            } else if matches!(t.kind, TypeKind::Text) {
                let s = std::str::from_utf8(&b).unwrap_or("");
                let mut end = limit.min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                end
            } else {
                let s = std::str::from_utf8(&b).unwrap_or("");
                s.char_indices().nth(limit).map_or(s.len(), |(i, _)| i)
            };
            if cut < b.len() {
                b.truncate(cut);
                w = Some(truncated());
            }
            let x = for_store(Value::Bytes(b), col, row)?;
            (x, w.unwrap_or(e))
        }
        TypeKind::Date => (Value::Date(0), truncated()),
        TypeKind::DateTime | TypeKind::Timestamp => (Value::DateTime(0), truncated()),
        TypeKind::Time => (Value::Time(0), truncated()),
        _ => return Err(e),
    };
    env.warn(warning);
    Ok(stored)
}

/// A number read from `v` for a numeric column: text up to its first bad
/// character (1265 when something was left, 1366 when there was no number),
/// None for the warning when nothing was cut.
fn number_of(v: &Value, col: &Column, row: usize) -> (Value, Option<SqlError>) {
    match v {
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let t = s.trim();
            let kind = match col.ty.kind {
                TypeKind::Decimal => "decimal",
                TypeKind::Float | TypeKind::Double => "double",
                _ => "integer",
            };
            if !t.bytes().any(|c| c.is_ascii_digit()) || !starts_numeric(t) {
                let e = SqlError::incorrect_value(kind, t, &col.name, row);
                return (Value::Int(0), Some(e));
            }
            let n = parse_number_prefix(t.as_bytes()).unwrap_or(Value::Int(0));
            let whole = val::is_whole_number(t.as_bytes());
            (
                n,
                (!whole).then(|| SqlError::data_truncated(&col.name, row)),
            )
        }
        other => (other.clone(), None),
    }
}

/// Whether text starts a number (a sign, a digit or a point and a digit).
fn starts_numeric(t: &str) -> bool {
    let b = t.trim_start_matches(['+', '-']).as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'.') => b.get(1).is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Whether error `e` is one a non-strict store turns into a warning (the
/// codes `adjust` handles).
fn adjustable(e: &SqlError) -> bool {
    matches!(
        e.code,
        error::ER_WARN_DATA_OUT_OF_RANGE
            | error::WARN_DATA_TRUNCATED
            | error::ER_DATA_TOO_LONG
            | error::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
            | error::ER_TRUNCATED_WRONG_VALUE
    )
}
