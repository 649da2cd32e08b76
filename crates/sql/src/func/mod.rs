//! Scalar functions that clients and applications use (string, numeric,
//! date/time, control flow, session information): the `Func` list, lookup
//! by name and evaluation; more string functions in `text.rs`, more date
//! and time functions in `time.rs`, regular expressions in `regexp.rs`,
//! number bases, addresses, FORMAT and UUID in `misc.rs`, STR_TO_DATE and
//! TIME_FORMAT in `strdate.rs`, logarithms, trigonometry, CRC32 and BIT_COUNT
//! in `math.rs`, JSON in `json.rs` (parser, paths, changes) and
//! `json_fn.rs` (the functions). Aggregates live in `agg.rs`.
mod json;
pub(crate) mod json_fn;
mod math;
mod misc;
mod regexp;
pub mod strdate;
mod text;
pub mod time;

use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use rel::value::{self as val, compare, Value};
use std::cmp::Ordering;

/// A scalar function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Func {
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Upper,
    Lower,
    Substring,
    Left,
    Right,
    Trim,
    LTrim,
    RTrim,
    /// `TRIM([BOTH|LEADING|TRAILING] remstr FROM str)`: the arguments are
    /// (str, remstr), removed bytewise (case-sensitively, as MySQL) from the
    /// start when `leading`, from the end when `trailing`.
    TrimFrom {
        leading: bool,
        trailing: bool,
    },
    /// `(args..) IN (SELECT ...)`: subquery k's rows (`subquery::row_in`),
    /// each pair compared under its collation (set by `collate::annotate`).
    RowInSubquery(usize, Vec<Option<rel::collation::Collation>>),
    Replace,
    Repeat,
    Reverse,
    Locate,
    Hex,
    Abs,
    Round,
    Truncate,
    Floor,
    Ceil,
    Sign,
    Sqrt,
    Pow,
    Mod,
    Rand,
    Greatest,
    Least,
    If,
    IfNull,
    NullIf,
    Coalesce,
    Now,
    CurDate,
    CurTime,
    UnixTimestamp,
    FromUnixtime,
    Date,
    Year,
    Month,
    Day,
    Database,
    Version,
    /// USER(), SESSION_USER(), SYSTEM_USER(): user@client host.
    User,
    /// CURRENT_USER(): the authenticated account (a DEFINER view's body
    /// has its definer instead, `select::view`).
    CurrentUser,
    ConnectionId,
    LastInsertId,
    RowCount,
    FoundRows,
    CastSigned,
    CastUnsigned,
    /// An ENUM (false) or SET (true) value's member number or bitmask
    /// (`crate::members`).
    MemberNumber(rel::members::Members, bool),
    /// CONVERT(x USING cs): x as a string of character set cs (characters
    /// cs lacks become `?`), of cs's default collation.
    ConvertUsing(rel::collation::Collation),
    /// A string literal of collation `c` (coercible, as a literal): an
    /// introducer (`_latin1'x'`, `_binary'x'`, `N'x'`) or, with `true`, a hex
    /// or bit literal (`X'41'`, `0x41`, `b'1'`), a binary string that is a
    /// number (BIGINT UNSIGNED) in numeric context (`crate::collate::numeric`).
    /// Evaluates to its one argument.
    Literal(rel::collation::Collation, bool),
    /// COLLATION(x) (0), CHARSET(x) (1) or COERCIBILITY(x) (2): x's
    /// collation and coercibility as planned (`collate::annotate` fills them
    /// in; None until then); a user variable's depend on its value.
    CollInfo(u8, Option<(rel::collation::Collation, u8)>),
    /// WEIGHT_STRING(x [, 'CHAR'|'BINARY', n]) under x's collation (set by
    /// `collate::annotate`; None: x is a number, the answer is NULL).
    WeightString(Option<rel::collation::Collation>),
    /// An ENUM/SET value compared with a parameter: its number when the
    /// parameter (the second argument) is a number, else its text.
    MemberOrText(rel::value::ColumnType),
    /// A hex or bit literal compared with a parameter: `[text, parameter,
    /// number]` gives the number when the parameter is a number, else the text.
    NumberOrText,
    /// FIND_IN_SET(str, list).
    FindInSet,
    /// FIND_IN_SET(str, set_column): the member number when its bit is set.
    SetFindInSet(rel::members::Members, rel::collation::Collation),
    CastChar,
    CastDecimal(u8, u8),
    CastDouble,
    CastDate,
    CastDateTime,
    Sleep,
    // text.rs
    Lpad,
    Rpad,
    Instr,
    SubstringIndex,
    Ascii,
    Space,
    Strcmp,
    Field,
    Elt,
    Md5,
    Sha1,
    Sha2,
    // time.rs
    Hour,
    Minute,
    Second,
    Microsecond,
    DayOfWeek,
    Weekday,
    DayOfYear,
    DayName,
    MonthName,
    LastDay,
    DateDiff,
    DateFormat,
    ConvertTz,
    /// DATE_ADD(d, INTERVAL n unit); DATE_SUB negates n when binding.
    DateAdd(time::Unit),
    /// TIMESTAMPDIFF(unit, a, b), bound with the unit taken out: args (a, b).
    TimestampDiff(time::Unit),
    /// A compound INTERVAL's text (`'1 2'` DAY_HOUR) as a count of its smallest unit.
    IntervalCount(time::Compound),
    MakeDate,
    StrToDate,
    TimeFormat,
    UuidShort,
    Quarter,
    ToDays,
    ToBase64,
    FromBase64,
    Ord,
    TimeToSec,
    SecToTime,
    // math.rs
    Ln,
    Log,
    Log2,
    Log10,
    Exp,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Cot,
    Degrees,
    Radians,
    Crc32,
    BitCount,
    PeriodAdd,
    PeriodDiff,
    // regexp.rs
    /// `s REGEXP p` / `s RLIKE p`.
    Regexp,
    RegexpLike,
    RegexpReplace,
    RegexpSubstr,
    RegexpInstr,
    // misc.rs
    Conv,
    Bin,
    Oct,
    Unhex,
    InetAton,
    InetNtoa,
    Format,
    Uuid,
    // json_fn.rs
    JsonValid,
    JsonExtract,
    JsonUnquote,
    JsonQuote,
    JsonObject,
    JsonArray,
    JsonContains,
    JsonContainsPath,
    JsonLength,
    JsonDepth,
    JsonKeys,
    JsonType,
    JsonSet,
    JsonInsert,
    JsonReplace,
    JsonRemove,
    JsonArrayAppend,
    JsonArrayInsert,
    JsonMergePreserve,
    JsonMergePatch,
    JsonSearch,
}

impl Func {
    /// The logarithmic, exponential, trigonometric and angle functions: DOUBLE
    /// results, arguments read as numbers (hex and bit literals too), evaluated by
    /// `math`. One list for the binder, the type inference and the evaluator.
    pub fn is_transcendental(&self) -> bool {
        matches!(
            self,
            Func::Ln
                | Func::Log
                | Func::Log2
                | Func::Log10
                | Func::Exp
                | Func::Sin
                | Func::Cos
                | Func::Tan
                | Func::Asin
                | Func::Acos
                | Func::Atan
                | Func::Atan2
                | Func::Cot
                | Func::Degrees
                | Func::Radians
        )
    }

    /// Looks a function up by (upper-case) name.
    pub fn by_name(name: &str) -> Option<Func> {
        Some(match name {
            "CONCAT" => Func::Concat,
            "CONCAT_WS" => Func::ConcatWs,
            "LENGTH" | "OCTET_LENGTH" => Func::Length,
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => Func::CharLength,
            "UPPER" | "UCASE" => Func::Upper,
            "LOWER" | "LCASE" => Func::Lower,
            "SUBSTRING" | "SUBSTR" | "MID" => Func::Substring,
            "LEFT" => Func::Left,
            "RIGHT" => Func::Right,
            "TRIM" => Func::Trim,
            "LTRIM" => Func::LTrim,
            "RTRIM" => Func::RTrim,
            "REPLACE" => Func::Replace,
            "REPEAT" => Func::Repeat,
            "REVERSE" => Func::Reverse,
            "LOCATE" => Func::Locate,
            "HEX" => Func::Hex,
            "COLLATION" => Func::CollInfo(0, None),
            "CHARSET" => Func::CollInfo(1, None),
            "COERCIBILITY" => Func::CollInfo(2, None),
            "WEIGHT_STRING" => Func::WeightString(Some(rel::collation::Collation::DEFAULT)),
            "ABS" => Func::Abs,
            "ROUND" => Func::Round,
            "TRUNCATE" => Func::Truncate,
            "FLOOR" => Func::Floor,
            "CEIL" | "CEILING" => Func::Ceil,
            "SIGN" => Func::Sign,
            "SQRT" => Func::Sqrt,
            "POW" | "POWER" => Func::Pow,
            "MOD" => Func::Mod,
            "RAND" => Func::Rand,
            "GREATEST" => Func::Greatest,
            "LEAST" => Func::Least,
            "IF" => Func::If,
            "IFNULL" => Func::IfNull,
            "NULLIF" => Func::NullIf,
            "COALESCE" => Func::Coalesce,
            "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP" => Func::Now,
            "CURDATE" | "CURRENT_DATE" => Func::CurDate,
            "CURTIME" | "CURRENT_TIME" => Func::CurTime,
            "UNIX_TIMESTAMP" => Func::UnixTimestamp,
            "FROM_UNIXTIME" => Func::FromUnixtime,
            "DATE" => Func::Date,
            "YEAR" => Func::Year,
            "MONTH" => Func::Month,
            "DAY" | "DAYOFMONTH" => Func::Day,
            "DATABASE" | "SCHEMA" => Func::Database,
            "VERSION" => Func::Version,
            "USER" | "SESSION_USER" | "SYSTEM_USER" => Func::User,
            "CURRENT_USER" => Func::CurrentUser,
            "CONNECTION_ID" => Func::ConnectionId,
            "LAST_INSERT_ID" => Func::LastInsertId,
            "ROW_COUNT" => Func::RowCount,
            "FOUND_ROWS" => Func::FoundRows,
            "SLEEP" => Func::Sleep,
            "LPAD" => Func::Lpad,
            "RPAD" => Func::Rpad,
            "INSTR" => Func::Instr,
            "FIND_IN_SET" => Func::FindInSet,
            "SUBSTRING_INDEX" => Func::SubstringIndex,
            "ASCII" => Func::Ascii,
            "SPACE" => Func::Space,
            "STRCMP" => Func::Strcmp,
            "FIELD" => Func::Field,
            "ELT" => Func::Elt,
            "MD5" => Func::Md5,
            "SHA1" | "SHA" => Func::Sha1,
            "SHA2" => Func::Sha2,
            "HOUR" => Func::Hour,
            "MINUTE" => Func::Minute,
            "SECOND" => Func::Second,
            "MICROSECOND" => Func::Microsecond,
            "DAYOFWEEK" => Func::DayOfWeek,
            "WEEKDAY" => Func::Weekday,
            "DAYOFYEAR" => Func::DayOfYear,
            "DAYNAME" => Func::DayName,
            "MONTHNAME" => Func::MonthName,
            "LAST_DAY" => Func::LastDay,
            "DATEDIFF" => Func::DateDiff,
            "DATE_FORMAT" => Func::DateFormat,
            "CONVERT_TZ" => Func::ConvertTz,
            "MAKEDATE" => Func::MakeDate,
            "STR_TO_DATE" => Func::StrToDate,
            "TIME_FORMAT" => Func::TimeFormat,
            "UUID_SHORT" => Func::UuidShort,
            "QUARTER" => Func::Quarter,
            "TO_BASE64" => Func::ToBase64,
            "FROM_BASE64" => Func::FromBase64,
            "ORD" => Func::Ord,
            "TO_DAYS" => Func::ToDays,
            "TIME_TO_SEC" => Func::TimeToSec,
            "SEC_TO_TIME" => Func::SecToTime,
            "LN" => Func::Ln,
            "LOG" => Func::Log,
            "LOG2" => Func::Log2,
            "LOG10" => Func::Log10,
            "EXP" => Func::Exp,
            "SIN" => Func::Sin,
            "COS" => Func::Cos,
            "TAN" => Func::Tan,
            "ASIN" => Func::Asin,
            "ACOS" => Func::Acos,
            "ATAN" => Func::Atan,
            "ATAN2" => Func::Atan2,
            "COT" => Func::Cot,
            "DEGREES" => Func::Degrees,
            "RADIANS" => Func::Radians,
            "CRC32" => Func::Crc32,
            "BIT_COUNT" => Func::BitCount,
            "PERIOD_ADD" => Func::PeriodAdd,
            "PERIOD_DIFF" => Func::PeriodDiff,
            "REGEXP_LIKE" => Func::RegexpLike,
            "REGEXP_REPLACE" => Func::RegexpReplace,
            "REGEXP_SUBSTR" => Func::RegexpSubstr,
            "REGEXP_INSTR" => Func::RegexpInstr,
            "CONV" => Func::Conv,
            "BIN" => Func::Bin,
            "OCT" => Func::Oct,
            "UNHEX" => Func::Unhex,
            "INET_ATON" => Func::InetAton,
            "INET_NTOA" => Func::InetNtoa,
            "FORMAT" => Func::Format,
            "UUID" => Func::Uuid,
            "JSON_VALID" => Func::JsonValid,
            "JSON_EXTRACT" => Func::JsonExtract,
            "JSON_UNQUOTE" => Func::JsonUnquote,
            "JSON_QUOTE" => Func::JsonQuote,
            "JSON_OBJECT" => Func::JsonObject,
            "JSON_ARRAY" => Func::JsonArray,
            "JSON_CONTAINS" => Func::JsonContains,
            "JSON_CONTAINS_PATH" => Func::JsonContainsPath,
            "JSON_LENGTH" => Func::JsonLength,
            "JSON_DEPTH" => Func::JsonDepth,
            "JSON_KEYS" => Func::JsonKeys,
            "JSON_TYPE" => Func::JsonType,
            "JSON_SET" => Func::JsonSet,
            "JSON_INSERT" => Func::JsonInsert,
            "JSON_REPLACE" => Func::JsonReplace,
            "JSON_REMOVE" => Func::JsonRemove,
            "JSON_ARRAY_APPEND" => Func::JsonArrayAppend,
            "JSON_ARRAY_INSERT" => Func::JsonArrayInsert,
            "JSON_MERGE_PRESERVE" | "JSON_MERGE" => Func::JsonMergePreserve,
            "JSON_MERGE_PATCH" => Func::JsonMergePatch,
            "JSON_SEARCH" => Func::JsonSearch,
            _ => return None,
        })
    }
}

pub(super) fn arg(args: &[Expr], i: usize, row: &[Value], env: &dyn Env) -> Result<Value> {
    match args.get(i) {
        Some(e) => e.eval(row, env),
        None => Err(SqlError::wrong_param_count()),
    }
}

pub(super) fn int_arg(
    args: &[Expr],
    i: usize,
    row: &[Value],
    env: &dyn Env,
) -> Result<Option<i64>> {
    Ok(arg(args, i, row, env)?
        .to_i128()
        .map(|v| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64))
}

fn bytes(v: Vec<u8>) -> Value {
    Value::Bytes(v)
}

/// Calls a scalar function.
pub fn call(f: &Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    match call_inner(f, args, row, env)? {
        // MySQL: a DOUBLE that overflows is an error (1690), never `inf`; NaN is NULL.
        Value::Double(d) if d.is_infinite() => {
            Err(SqlError::out_of_range("DOUBLE", format!("{f:?}")))
        }
        Value::Double(d) if d.is_nan() => Ok(Value::Null),
        v => Ok(v),
    }
}

/// Warns 1292 when a string converts to a number with something left over.
fn warn_truncated(v: &Value, kind: &str, env: &dyn Env) {
    if let Value::Bytes(b) = v {
        if !val::is_whole_number(b) {
            env.warn(SqlError::truncated_value(
                kind,
                String::from_utf8_lossy(&b[..b.len().min(64)]),
            ));
        }
    }
}

/// The longest string a function may build: max_allowed_packet, as MySQL.
pub(super) fn max_string(env: &dyn Env) -> usize {
    env.sys_var("max_allowed_packet", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(64 << 20)
        .clamp(1024, 1 << 30) as usize
}

/// A result over max_allowed_packet: NULL and warning 1301, as MySQL.
pub(super) fn too_large(f: Func, env: &dyn Env) -> Value {
    env.warn(SqlError::packet_overflowed(
        format!("{f:?}").to_ascii_lowercase(),
        max_string(env),
    ));
    Value::Null
}

fn call_inner(f: &Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let a = |i: usize| arg(args, i, row, env);
    Ok(match f {
        Func::Lpad
        | Func::Rpad
        | Func::Instr
        | Func::SubstringIndex
        | Func::Ascii
        | Func::Space
        | Func::Strcmp
        | Func::Field
        | Func::Elt
        | Func::Md5
        | Func::Sha1
        | Func::Sha2 => text::call(f.clone(), args, row, env)?,
        Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::DayOfWeek
        | Func::Weekday
        | Func::DayOfYear
        | Func::DayName
        | Func::MonthName
        | Func::LastDay
        | Func::DateDiff
        | Func::DateFormat
        | Func::ConvertTz
        | Func::DateAdd(_)
        | Func::TimestampDiff(_)
        | Func::IntervalCount(_)
        | Func::MakeDate
        | Func::PeriodAdd
        | Func::PeriodDiff
        | Func::Quarter
        | Func::ToDays
        | Func::TimeToSec
        | Func::SecToTime => time::call(f.clone(), args, row, env)?,
        Func::Ln
        | Func::Log
        | Func::Log2
        | Func::Log10
        | Func::Exp
        | Func::Sin
        | Func::Cos
        | Func::Tan
        | Func::Asin
        | Func::Acos
        | Func::Atan
        | Func::Atan2
        | Func::Cot
        | Func::Degrees
        | Func::Radians
        | Func::Crc32
        | Func::BitCount => math::call(f.clone(), args, row, env)?,
        Func::Regexp
        | Func::RegexpLike
        | Func::RegexpReplace
        | Func::RegexpSubstr
        | Func::RegexpInstr => regexp::call(f.clone(), args, row, env)?,
        Func::Conv
        | Func::Bin
        | Func::Oct
        | Func::Unhex
        | Func::InetAton
        | Func::InetNtoa
        | Func::Format
        | Func::Uuid
        | Func::UuidShort
        | Func::ToBase64
        | Func::FromBase64
        | Func::Ord => misc::call(f.clone(), args, row, env)?,
        Func::JsonValid
        | Func::JsonExtract
        | Func::JsonUnquote
        | Func::JsonQuote
        | Func::JsonObject
        | Func::JsonArray
        | Func::JsonContains
        | Func::JsonContainsPath
        | Func::JsonLength
        | Func::JsonDepth
        | Func::JsonKeys
        | Func::JsonType
        | Func::JsonSet
        | Func::JsonInsert
        | Func::JsonReplace
        | Func::JsonRemove
        | Func::JsonArrayAppend
        | Func::JsonArrayInsert
        | Func::JsonMergePreserve
        | Func::JsonMergePatch
        | Func::JsonSearch => json_fn::call(f.clone(), args, row, env)?,
        Func::TimeFormat => {
            if args.len() != 2 {
                return Err(SqlError::wrong_param_count());
            }
            let (t, fmt) = (a(0)?, a(1)?);
            if t.is_null() || fmt.is_null() {
                return Ok(Value::Null);
            }
            let neg = match &t {
                Value::Time(x) => *x < 0,
                Value::Bytes(b) => b.trim_ascii_start().starts_with(b"-"),
                _ => false,
            };
            match time::clock(&t) {
                Some(c) => {
                    strdate::time_format(neg, c, &fmt.text()).map_or(Value::Null, Value::Bytes)
                }
                None => Value::Null,
            }
        }
        Func::StrToDate => {
            if args.len() != 2 {
                return Err(SqlError::wrong_param_count());
            }
            let (s, fmt) = (a(0)?, a(1)?);
            if s.is_null() || fmt.is_null() {
                return Ok(Value::Null);
            }
            strdate::str_to_date(&s.text(), &fmt.text()).unwrap_or(Value::Null)
        }
        Func::Concat => {
            let max = max_string(env);
            let mut out = Vec::new();
            for e in args {
                let v = e.eval(row, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                v.to_text(&mut out);
                if out.len() > max {
                    return Ok(too_large(f.clone(), env));
                }
            }
            bytes(out)
        }
        Func::ConcatWs => {
            let sep = a(0)?;
            if sep.is_null() {
                return Ok(Value::Null);
            }
            let sep = sep.text();
            let mut out = Vec::new();
            let mut first = true;
            for e in &args[1..] {
                let v = e.eval(row, env)?;
                if v.is_null() {
                    continue;
                }
                if !first {
                    out.extend_from_slice(&sep);
                }
                first = false;
                v.to_text(&mut out);
                if out.len() > max_string(env) {
                    return Ok(too_large(f.clone(), env));
                }
            }
            bytes(out)
        }
        Func::Length => match a(0)? {
            Value::Null => Value::Null,
            v => Value::Int(v.text().len() as i64),
        },
        Func::CharLength => match a(0)? {
            Value::Null => Value::Null,
            v => Value::Int(String::from_utf8_lossy(&v.text()).chars().count() as i64),
        },
        Func::Upper | Func::Lower => match a(0)? {
            Value::Null => Value::Null,
            v => {
                // One character for one, as MySQL maps case ('ß' stays 'ß';
                // Unicode's full mapping would give "SS").
                let s = String::from_utf8_lossy(&v.text()).into_owned();
                let mapped: String = s
                    .chars()
                    .map(|c| {
                        let mut m: Vec<char> = if *f == Func::Upper {
                            c.to_uppercase().collect()
                        } else {
                            c.to_lowercase().collect()
                        };
                        if m.len() == 1 {
                            m.pop().unwrap_or(c)
                        } else {
                            c
                        }
                    })
                    .collect();
                bytes(mapped.into_bytes())
            }
        },
        Func::Substring => {
            let v = a(0)?;
            let pos = int_arg(args, 1, row, env)?;
            let len = if args.len() > 2 {
                int_arg(args, 2, row, env)?
            } else {
                Some(i64::MAX)
            };
            match (v, pos, len) {
                (Value::Null, _, _) | (_, None, _) | (_, _, None) => Value::Null,
                (v, Some(p), Some(l)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&v.text()).chars().collect();
                    let n = chars.len() as i64;
                    let start = if p > 0 {
                        p - 1
                    } else if p < 0 {
                        n + p
                    } else {
                        n
                    };
                    if start < 0 || start >= n || l <= 0 {
                        bytes(Vec::new())
                    } else {
                        let end = (start.saturating_add(l)).min(n);
                        bytes(
                            chars[start as usize..end as usize]
                                .iter()
                                .collect::<String>()
                                .into_bytes(),
                        )
                    }
                }
            }
        }
        Func::Left | Func::Right => {
            let v = a(0)?;
            match (v, int_arg(args, 1, row, env)?) {
                (Value::Null, _) | (_, None) => Value::Null,
                (v, Some(n)) => {
                    let chars: Vec<char> = String::from_utf8_lossy(&v.text()).chars().collect();
                    let n = (n.max(0) as usize).min(chars.len());
                    let s: String = if *f == Func::Left {
                        chars[..n].iter().collect()
                    } else {
                        chars[chars.len() - n..].iter().collect()
                    };
                    bytes(s.into_bytes())
                }
            }
        }
        Func::Trim | Func::LTrim | Func::RTrim => match a(0)? {
            Value::Null => Value::Null,
            v => {
                let t = v.text();
                let s = String::from_utf8_lossy(&t);
                let r = match f {
                    Func::Trim => s.trim_matches(' '),
                    Func::LTrim => s.trim_start_matches(' '),
                    _ => s.trim_end_matches(' '),
                };
                bytes(r.as_bytes().to_vec())
            }
        },
        Func::RowInSubquery(k, colls) => {
            let vals = args
                .iter()
                .map(|x| x.eval(row, env))
                .collect::<Result<Vec<_>>>()?;
            match env.subquery(*k) {
                Some(crate::subquery::SubResult::Rows(rows)) => {
                    match crate::subquery::row_in(&vals, rows, colls) {
                        None => Value::Null,
                        Some(b) => Value::Int(b as i64),
                    }
                }
                _ => return Err(SqlError::internal(format!("subquery {k} not computed"))),
            }
        }
        Func::TrimFrom { leading, trailing } => {
            let (s, rem) = (a(0)?, a(1)?);
            if s.is_null() || rem.is_null() {
                return Ok(Value::Null);
            }
            bytes(text::trim_from(&s.text(), &rem.text(), *leading, *trailing).to_vec())
        }
        Func::Replace => {
            let (s, from, to) = (a(0)?, a(1)?, a(2)?);
            if s.is_null() || from.is_null() || to.is_null() {
                return Ok(Value::Null);
            }
            let (s, from, to) = (s.text(), from.text(), to.text());
            if from.is_empty() {
                return Ok(bytes(s));
            }
            let max = max_string(env);
            let mut out = Vec::with_capacity(s.len());
            let mut i = 0;
            while i < s.len() {
                if s[i..].starts_with(&from) {
                    out.extend_from_slice(&to);
                    i += from.len();
                    if out.len() > max {
                        return Ok(too_large(f.clone(), env));
                    }
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            bytes(out)
        }
        Func::Repeat => match (a(0)?, int_arg(args, 1, row, env)?) {
            (Value::Null, _) | (_, None) => Value::Null,
            (v, Some(n)) => {
                let t = v.text();
                let n = n.max(0) as usize;
                if t.len().saturating_mul(n) > max_string(env) {
                    return Ok(too_large(f.clone(), env));
                }
                bytes(t.repeat(n))
            }
        },
        Func::Reverse => match a(0)? {
            Value::Null => Value::Null,
            v => bytes(
                String::from_utf8_lossy(&v.text())
                    .chars()
                    .rev()
                    .collect::<String>()
                    .into_bytes(),
            ),
        },
        Func::Locate => {
            let (sub, s) = (a(0)?, a(1)?);
            if sub.is_null() || s.is_null() {
                return Ok(Value::Null);
            }
            let (sub, s) = (sub.text(), s.text());
            let pos = s.windows(sub.len().max(1)).position(|w| w == &sub[..]);
            Value::Int(if sub.is_empty() {
                1
            } else {
                pos.map_or(0, |p| p as i64 + 1)
            })
        }
        Func::Hex => match a(0)? {
            Value::Null => Value::Null,
            v if v.is_numeric() => {
                bytes(format!("{:X}", v.to_i128().unwrap_or(0) as u64).into_bytes())
            }
            v => bytes(
                v.text()
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect::<String>()
                    .into_bytes(),
            ),
        },
        Func::Abs => match a(0)? {
            Value::Null => Value::Null,
            Value::Int(i) => match i.checked_abs() {
                Some(x) => Value::Int(x),
                None => return Err(SqlError::out_of_range("BIGINT", format!("abs({i})"))),
            },
            Value::Decimal(m, s) => Value::Decimal(m.abs(), s),
            Value::UInt(u) => Value::UInt(u),
            v => Value::Double(v.to_f64().unwrap_or(0.0).abs()),
        },
        Func::Round | Func::Truncate => {
            let v = a(0)?;
            let d = if args.len() > 1 {
                int_arg(args, 1, row, env)?.unwrap_or(0)
            } else {
                0
            };
            round(v, d, *f == Func::Truncate)
        }
        Func::Floor | Func::Ceil => match a(0)? {
            Value::Null => Value::Null,
            v @ (Value::Int(_) | Value::UInt(_)) => v,
            Value::Decimal(m, s) => {
                let p = 10i128.pow(s as u32);
                let q = m.div_euclid(p);
                let up = *f == Func::Ceil && m.rem_euclid(p) != 0;
                Value::Int((q + up as i128) as i64)
            }
            v => {
                let d = v.to_f64().unwrap_or(0.0);
                Value::Double(if *f == Func::Floor {
                    d.floor()
                } else {
                    d.ceil()
                })
            }
        },
        Func::Sign => match a(0)?.to_f64() {
            None => Value::Null,
            Some(d) => Value::Int(if d > 0.0 {
                1
            } else if d < 0.0 {
                -1
            } else {
                0
            }),
        },
        Func::Sqrt => match a(0)?.to_f64() {
            Some(d) if d >= 0.0 => Value::Double(d.sqrt()),
            _ => Value::Null,
        },
        Func::Pow => match (a(0)?.to_f64(), a(1)?.to_f64()) {
            (Some(x), Some(y)) => Value::Double(x.powf(y)),
            _ => Value::Null,
        },
        Func::Mod => {
            let e = Expr::Bin(
                crate::expr::BinOp::Mod,
                Box::new(Expr::Const(a(0)?)),
                Box::new(Expr::Const(a(1)?)),
            );
            e.eval(row, env)?
        }
        Func::Rand => Value::Double(rand01()),
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for e in args {
                let v = e.eval(row, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let better = match &best {
                    None => true,
                    Some(b) => {
                        let o = compare(&v, b);
                        if *f == Func::Greatest {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    }
                };
                if better {
                    best = Some(v);
                }
            }
            best.unwrap_or(Value::Null)
        }
        Func::If => {
            if a(0)?.truth() == Some(true) {
                a(1)?
            } else {
                a(2)?
            }
        }
        Func::IfNull => match a(0)? {
            Value::Null => a(1)?,
            v => v,
        },
        Func::NullIf => {
            let (x, y) = (a(0)?, a(1)?);
            if !x.is_null() && !y.is_null() && compare(&x, &y) == Ordering::Equal {
                Value::Null
            } else {
                x
            }
        }
        Func::Coalesce => {
            for e in args {
                let v = e.eval(row, env)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Func::Now => Value::DateTime(val::datetime_from_unix_micros(
            env.now_micros() / 1_000_000 * 1_000_000,
        )),
        Func::CurDate => {
            let p = val::datetime_from_unix_micros(env.now_micros());
            let (y, m, d, ..) = val::datetime_unpack(p);
            Value::Date(val::date_pack(y, m, d))
        }
        Func::CurTime => {
            Value::Time(env.now_micros().rem_euclid(86_400_000_000) / 1_000_000 * 1_000_000)
        }
        Func::UnixTimestamp => {
            if args.is_empty() {
                Value::Int(env.now_micros() / 1_000_000)
            } else {
                match to_datetime(&a(0)?) {
                    Some(p) => Value::Int(val::datetime_to_unix_secs(p)),
                    None => Value::Null,
                }
            }
        }
        // MySQL: NULL before the epoch and past 3001-01-18 (32536771199).
        Func::FromUnixtime => match a(0)?.to_i128() {
            Some(s) if (0..=32_536_771_199).contains(&s) => {
                Value::DateTime(val::datetime_from_unix_micros(s as i64 * 1_000_000))
            }
            _ => Value::Null,
        },
        Func::Date | Func::CastDate => match to_datetime(&a(0)?) {
            Some(p) => {
                let (y, m, d, ..) = val::datetime_unpack(p);
                Value::Date(val::date_pack(y, m, d))
            }
            None => Value::Null,
        },
        Func::CastDateTime => match to_datetime(&a(0)?) {
            Some(p) => Value::DateTime(p),
            None => Value::Null,
        },
        Func::Year | Func::Month | Func::Day => match to_datetime(&a(0)?) {
            Some(p) => {
                let (y, m, d, ..) = val::datetime_unpack(p);
                Value::Int(match f {
                    Func::Year => y,
                    Func::Month => m,
                    _ => d,
                } as i64)
            }
            None => Value::Null,
        },
        Func::Database => match env.current_db() {
            Some(d) => bytes(d.as_bytes().to_vec()),
            None => Value::Null,
        },
        Func::Version => env.sys_var("version", false).unwrap_or(Value::Null),
        Func::User => bytes(env.user_host(false).into_bytes()),
        Func::CurrentUser => bytes(env.user_host(true).into_bytes()),
        Func::ConnectionId => Value::UInt(env.connection_id()),
        Func::LastInsertId => Value::UInt(env.last_insert_id()),
        Func::RowCount => Value::Int(env.row_count()),
        Func::FoundRows => Value::UInt(env.found_rows()),
        // Integers keep their 64 bits (CAST(18446744073709551615 AS SIGNED) is -1, as
        // MySQL); other values round and saturate.
        Func::MemberNumber(m, set) => crate::members::number(a(0)?, m, *set),
        Func::ConvertUsing(c) => convert_using(a(0)?, *c),
        Func::Literal(..) => a(0)?,
        Func::CollInfo(k, info) => coll_info(*k, *info, args, row, env)?,
        Func::WeightString(c) => text::weight_string(*c, args, row, env)?,
        Func::FindInSet => crate::members::find_in_set(&a(0)?, &a(1)?, None),
        Func::MemberOrText(t) => match a(1)? {
            p if p.is_numeric() => {
                crate::members::number(a(0)?, &t.members, t.kind == rel::TypeKind::Set)
            }
            _ => a(0)?,
        },
        Func::NumberOrText => match a(1)? {
            p if p.is_numeric() => a(2)?,
            _ => a(0)?,
        },
        Func::SetFindInSet(m, c) => crate::members::set_find_in_set(&a(0)?, &a(1)?, m, *c),
        Func::CastSigned => match a(0)? {
            Value::Null => Value::Null,
            Value::UInt(u) => Value::Int(u as i64),
            v => {
                warn_truncated(&v, "INTEGER", env);
                match v {
                    Value::Bytes(b) => match val::parse_number_prefix(&b) {
                        Some(Value::UInt(u)) => Value::Int(u as i64),
                        Some(n) => Value::Int(
                            n.to_i128()
                                .unwrap_or(0)
                                .clamp(i64::MIN as i128, i64::MAX as i128)
                                as i64,
                        ),
                        None => Value::Int(0),
                    },
                    v => Value::Int(
                        v.to_i128()
                            .unwrap_or(0)
                            .clamp(i64::MIN as i128, i64::MAX as i128)
                            as i64,
                    ),
                }
            }
        },
        Func::CastUnsigned => match a(0)? {
            Value::Null => Value::Null,
            v => {
                warn_truncated(&v, "INTEGER", env);
                Value::UInt(v.to_i128().unwrap_or(0) as u64)
            }
        },
        Func::CastChar => match a(0)? {
            Value::Null => Value::Null,
            v => bytes(v.text()),
        },
        Func::CastDouble => match a(0)?.to_f64() {
            Some(d) => Value::Double(d),
            None => Value::Null,
        },
        Func::CastDecimal(_, s) => {
            let s = *s;
            match round(a(0)?, s as i64, false) {
                Value::Null => Value::Null,
                Value::Decimal(m, sc) => Value::Decimal(m * 10i128.pow((s - sc.min(s)) as u32), s),
                Value::Int(i) => Value::Decimal(i as i128 * 10i128.pow(s as u32), s),
                Value::Double(d) => Value::Decimal((d * 10f64.powi(s as i32)).round() as i128, s),
                other => other,
            }
        }
        Func::Sleep => {
            let secs = a(0)?.to_f64().unwrap_or(0.0).clamp(0.0, 3600.0);
            // In slices, so KILL and the statement's deadline stop it.
            let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
            loop {
                env.interrupted()?;
                let now = std::time::Instant::now();
                if now >= end {
                    break;
                }
                std::thread::sleep((end - now).min(std::time::Duration::from_millis(20)));
            }
            Value::Int(0)
        }
    })
}

pub(super) fn to_datetime(v: &Value) -> Option<i64> {
    match v {
        Value::DateTime(p) => Some(*p),
        Value::Date(d) => {
            let (y, m, dd) = val::date_unpack(*d);
            Some(val::datetime_pack(y, m, dd, 0, 0, 0, 0))
        }
        Value::Bytes(b) => val::parse_datetime(b),
        _ => None,
    }
}

fn round(v: Value, d: i64, truncate: bool) -> Value {
    let d = d.clamp(-30, 30);
    match v {
        Value::Null => Value::Null,
        Value::Int(_) | Value::UInt(_) if d >= 0 => v,
        Value::Decimal(m, s) if d >= 0 => {
            if d as u8 >= s {
                return Value::Decimal(m, s);
            }
            let p = 10i128.pow((s - d as u8) as u32);
            let q = m / p;
            let r = m % p;
            let q = if !truncate && r.abs() * 2 >= p {
                q + m.signum()
            } else {
                q
            };
            Value::Decimal(q, d as u8)
        }
        other => {
            let x = other.to_f64().unwrap_or(0.0);
            let p = 10f64.powi(d as i32);
            let y = if truncate {
                (x * p).trunc() / p
            } else {
                (x * p).round() / p
            };
            match other {
                Value::Int(_) | Value::UInt(_) | Value::Decimal(..) => Value::Int(y as i64),
                _ => Value::Double(y),
            }
        }
    }
}

fn rand01() -> f64 {
    use std::cell::Cell;
    thread_local!(static S: Cell<u64> = Cell::new(0));
    S.with(|s| {
        let mut x = s.get();
        if x == 0 {
            x = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        (x >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// CONVERT(v USING cs): characters of the value that character set `cs`
/// lacks become `?` (values stay UTF-8 inside Strata; binary keeps bytes).
/// COLLATION/CHARSET/COERCIBILITY of `args[0]` (see `Func::CollInfo`):
/// a number or temporal value is binary, coercibility 5 (MariaDB's
/// NUMERIC); a user variable is IMPLICIT (2), binary when NULL or a number.
fn coll_info(
    k: u8,
    info: Option<(rel::collation::Collation, u8)>,
    args: &[Expr],
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    use rel::collation::Collation;
    if args.len() != 1 {
        return Err(SqlError::wrong_param_count());
    }
    let (c, n) = match (&args[0], info) {
        (Expr::UserVar(_), info) => match arg(args, 0, row, env)? {
            Value::Null => (Collation::Binary, 2),
            Value::Bytes(_) => (info.map_or(Collation::DEFAULT, |i| i.0), 2),
            _ => (Collation::Binary, 5),
        },
        (_, Some(i)) => i,
        (_, None) => (Collation::Binary, 5),
    };
    Ok(match k {
        0 => Value::Bytes(c.name().as_bytes().to_vec()),
        1 => Value::Bytes(c.charset().as_bytes().to_vec()),
        _ => Value::Int(n as i64),
    })
}

fn convert_using(v: Value, c: rel::collation::Collation) -> Value {
    if v.is_null() {
        return v;
    }
    let b = v.text();
    Value::Bytes(match c.charset() {
        "latin1" => {
            let mut s = String::new();
            crate::text::latin1_to_utf8(&crate::text::utf8_to_latin1(&b), &mut s);
            s.into_bytes()
        }
        "utf8mb3" => match std::str::from_utf8(&b) {
            Ok(s) => s
                .chars()
                .map(|ch| if (ch as u32) > 0xFFFF { '?' } else { ch })
                .collect::<String>()
                .into_bytes(),
            Err(_) => b,
        },
        _ => b,
    })
}
