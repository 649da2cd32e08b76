//! SQL values and column types: what a row holds in memory, how values
//! compare, print and convert between types (MySQL's rules, simplified).
//!
//! Strings and blobs are bytes compared bytewise (a binary collation); CHAR
//! values are stored without trailing spaces, as MySQL returns them.
//! DATE is packed as `year*512 + month*32 + day`, DATETIME/TIMESTAMP as
//! microseconds in a packed calendar form (`datetime_pack`), both ordered
//! like the dates they encode.
pub use crate::collation::Collation;
pub use crate::members::Members;
use std::cmp::Ordering;
use std::fmt::Write as _;

/// One SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Signed integer (all signed integer types).
    Int(i64),
    /// Unsigned integer (BIGINT UNSIGNED may not fit an i64).
    UInt(u64),
    /// FLOAT and DOUBLE.
    Double(f64),
    /// DECIMAL: `mantissa * 10^-scale`.
    Decimal(i128, u8),
    /// CHAR, VARCHAR, TEXT, BINARY, VARBINARY, BLOB.
    Bytes(Vec<u8>),
    /// DATE, packed (see module docs).
    Date(i32),
    /// DATETIME and TIMESTAMP, packed (see `datetime_pack`).
    DateTime(i64),
    /// TIME, signed microseconds.
    Time(i64),
}

/// The kind of a column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeKind {
    TinyInt,
    SmallInt,
    MediumInt,
    Int,
    BigInt,
    Float,
    Double,
    Decimal,
    Char,
    VarChar,
    Text,
    Binary,
    VarBinary,
    Blob,
    Date,
    DateTime,
    Timestamp,
    Time,
    Year,
    /// ENUM: one member of `ColumnType::members`, stored as its number.
    Enum,
    /// SET: any members of `ColumnType::members`, stored as a bitmask.
    Set,
}

/// A column's declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnType {
    pub kind: TypeKind,
    /// UNSIGNED (integer kinds).
    pub unsigned: bool,
    /// Display width / character length / precision.
    pub len: u32,
    /// DECIMAL scale, or fractional seconds digits.
    pub scale: u8,
    /// How values compare (string kinds; `Binary` for the others).
    pub coll: Collation,
    /// ENUM and SET members (`Members::NONE` for the other kinds).
    pub members: Members,
}

impl ColumnType {
    /// A type with no length or scale (character kinds get the default
    /// collation, binary ones `binary`).
    pub fn new(kind: TypeKind) -> ColumnType {
        let mut t = ColumnType {
            kind,
            unsigned: false,
            len: 0,
            scale: 0,
            coll: Collation::Binary,
            members: Members::NONE,
        };
        t.coll = Collation::default_for(&t);
        t
    }

    /// True for CHAR, VARCHAR, TEXT, ENUM and SET (strings with a
    /// character set).
    pub fn is_text(&self) -> bool {
        (self.is_string() && !self.is_binary()) || self.is_enum_or_set()
    }

    /// True for ENUM and SET (values are members of `members`).
    pub fn is_enum_or_set(&self) -> bool {
        matches!(self.kind, TypeKind::Enum | TypeKind::Set)
    }

    /// The collation string comparisons on this column follow when they
    /// are not bytewise (None: numbers, temporal, binary).
    pub fn text_coll(&self) -> Option<Collation> {
        (self.is_text() && !self.coll.is_bytewise()).then_some(self.coll)
    }

    /// True for the integer kinds (and YEAR).
    pub fn is_integer(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::TinyInt
                | TypeKind::SmallInt
                | TypeKind::MediumInt
                | TypeKind::Int
                | TypeKind::BigInt
                | TypeKind::Year
        )
    }

    /// True for string and binary kinds.
    pub fn is_string(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Char
                | TypeKind::VarChar
                | TypeKind::Text
                | TypeKind::Binary
                | TypeKind::VarBinary
                | TypeKind::Blob
        )
    }

    /// True for binary (non-character) string kinds.
    pub fn is_binary(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Binary | TypeKind::VarBinary | TypeKind::Blob
        )
    }

    /// Width in bytes of an integer kind's key image.
    pub fn int_width(&self) -> usize {
        match self.kind {
            TypeKind::TinyInt => 1,
            TypeKind::SmallInt | TypeKind::Year => 2,
            TypeKind::MediumInt => 3,
            TypeKind::Int => 4,
            _ => 8,
        }
    }

    /// The inclusive range of an integer kind.
    pub fn int_range(&self) -> (i128, i128) {
        let bits = (self.int_width() * 8) as u32;
        if self.kind == TypeKind::Year {
            return (0, 2155);
        }
        if self.unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        }
    }

    /// SQL spelling, as SHOW CREATE TABLE prints it.
    pub fn sql_name(&self) -> String {
        let base = match self.kind {
            TypeKind::TinyInt => "tinyint",
            TypeKind::SmallInt => "smallint",
            TypeKind::MediumInt => "mediumint",
            TypeKind::Int => "int",
            TypeKind::BigInt => "bigint",
            TypeKind::Float => "float",
            TypeKind::Double => "double",
            TypeKind::Decimal => {
                return format!("decimal({},{})", self.len, self.scale);
            }
            TypeKind::Char => return format!("char({})", self.len),
            TypeKind::VarChar => return format!("varchar({})", self.len),
            TypeKind::Binary => return format!("binary({})", self.len),
            TypeKind::VarBinary => return format!("varbinary({})", self.len),
            TypeKind::Text => text_name(self.len, "text"),
            TypeKind::Blob => text_name(self.len, "blob"),
            TypeKind::Date => "date",
            TypeKind::DateTime => "datetime",
            TypeKind::Timestamp => "timestamp",
            TypeKind::Time => "time",
            TypeKind::Year => "year",
            TypeKind::Enum => return format!("enum({})", self.members.sql_list()),
            TypeKind::Set => return format!("set({})", self.members.sql_list()),
        };
        let mut s = base.to_string();
        if self.is_integer() && self.kind != TypeKind::Year && self.len > 0 {
            let _ = write!(s, "({})", self.len);
        }
        if matches!(
            self.kind,
            TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time
        ) && self.scale > 0
        {
            let _ = write!(s, "({})", self.scale);
        }
        // YEAR is stored unsigned but has no UNSIGNED attribute in SQL.
        if self.unsigned && self.kind != TypeKind::Year {
            s.push_str(" unsigned");
        }
        s
    }

    /// Maximum byte length of a string kind (`len` is in characters of up
    /// to 4 bytes for character types).
    pub fn max_bytes(&self) -> usize {
        match self.kind {
            TypeKind::Char | TypeKind::VarChar => self.len as usize * 4,
            TypeKind::Binary | TypeKind::VarBinary => self.len as usize,
            TypeKind::Text | TypeKind::Blob => {
                if self.len == 0 {
                    65535
                } else {
                    self.len as usize
                }
            }
            _ => usize::MAX,
        }
    }
}

fn text_name(len: u32, base: &'static str) -> &'static str {
    match (len, base) {
        (255, "text") => "tinytext",
        (16777215, "text") => "mediumtext",
        (4294967295, "text") => "longtext",
        (255, _) => "tinyblob",
        (16777215, _) => "mediumblob",
        (4294967295, _) => "longblob",
        _ => base,
    }
}

impl Value {
    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as an i128 if it is numeric and integral after rounding
    /// (MySQL rounds when storing a fraction into an integer column).
    pub fn to_i128(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(*i as i128),
            Value::UInt(u) => Some(*u as i128),
            Value::Double(d) => {
                if d.is_finite() {
                    Some(d.round() as i128)
                } else {
                    None
                }
            }
            Value::Decimal(m, s) => Some(round_div_pow10(*m, *s)),
            Value::Bytes(b) => parse_number_prefix(b).and_then(|v| v.to_i128()),
            Value::Date(d) => Some(date_to_yyyymmdd(*d) as i128),
            Value::DateTime(p) => Some(datetime_to_number(*p)),
            Value::Time(t) => Some((*t / 1_000_000) as i128),
            Value::Null => None,
        }
    }

    /// The value as a double (strings parse their numeric prefix, as MySQL).
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            Value::Double(d) => Some(*d),
            Value::Decimal(m, s) => Some(*m as f64 / 10f64.powi(*s as i32)),
            Value::Bytes(b) => Some(
                parse_number_prefix(b)
                    .and_then(|v| v.to_f64())
                    .unwrap_or(0.0),
            ),
            Value::Null => None,
            other => other.to_i128().map(|i| i as f64),
        }
    }

    /// Truth value for WHERE: NULL is unknown (`None`).
    pub fn truth(&self) -> Option<bool> {
        match self {
            Value::Null => None,
            Value::Int(i) => Some(*i != 0),
            Value::UInt(u) => Some(*u != 0),
            Value::Double(d) => Some(*d != 0.0),
            Value::Decimal(m, _) => Some(*m != 0),
            other => Some(other.to_f64().unwrap_or(0.0) != 0.0),
        }
    }

    /// The text form sent in text result sets and used for string
    /// conversion.
    pub fn to_text(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => out.extend_from_slice(b"NULL"),
            Value::Int(i) => {
                let _ = write_fmt(out, format_args!("{i}"));
            }
            Value::UInt(u) => {
                let _ = write_fmt(out, format_args!("{u}"));
            }
            Value::Double(d) => format_double(*d, out),
            Value::Decimal(m, s) => format_decimal(*m, *s, out),
            Value::Bytes(b) => out.extend_from_slice(b),
            Value::Date(d) => {
                let (y, m, dd) = date_unpack(*d);
                let _ = write_fmt(out, format_args!("{y:04}-{m:02}-{dd:02}"));
            }
            Value::DateTime(p) => format_datetime(*p, 0, out),
            Value::Time(t) => format_time(*t, out),
        }
    }

    /// `to_text` into a fresh vector.
    pub fn text(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.to_text(&mut v);
        v
    }

    /// True if the value is a number kind (not string, not temporal).
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(..)
        )
    }
}

struct VecWriter<'a>(&'a mut Vec<u8>);
impl std::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
fn write_fmt(out: &mut Vec<u8>, args: std::fmt::Arguments) -> std::fmt::Result {
    VecWriter(out).write_fmt(args)
}

/// Formats a double the way MySQL prints it (shortest round-trip digits,
/// no trailing ".0", exponent for very large or small magnitudes).
pub fn format_double(d: f64, out: &mut Vec<u8>) {
    if d == 0.0 {
        out.push(b'0');
        return;
    }
    let a = d.abs();
    if !(1e-5..1e15).contains(&a) {
        let s = format!("{d:e}");
        // Rust prints 1e20 / 1.5e-7; MySQL prints 1e20 / 1.5e-7 too.
        out.extend_from_slice(s.as_bytes());
        return;
    }
    let _ = write_fmt(out, format_args!("{d}"));
}

/// Formats a decimal mantissa with `scale` fraction digits.
pub fn format_decimal(m: i128, scale: u8, out: &mut Vec<u8>) {
    if m < 0 {
        out.push(b'-');
    }
    let u = m.unsigned_abs();
    if scale == 0 {
        let _ = write_fmt(out, format_args!("{u}"));
        return;
    }
    let p = 10u128.pow(scale as u32);
    let _ = write_fmt(
        out,
        format_args!("{}.{:0width$}", u / p, u % p, width = scale as usize),
    );
}

fn round_div_pow10(m: i128, s: u8) -> i128 {
    if s == 0 {
        return m;
    }
    let p = 10i128.pow(s as u32);
    let q = m / p;
    let r = (m % p).abs();
    if r * 2 >= p {
        if m < 0 {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    }
}

/// Parses the longest numeric prefix of a string, as MySQL's string to
/// number conversion does ("12abc" is 12, "abc" is 0). Returns an Int
/// when integral, else a Double.
pub fn parse_number_prefix(b: &[u8]) -> Option<Value> {
    let s = std::str::from_utf8(b).ok()?;
    let t = s.trim_start();
    let (end, digits_start, is_float) = number_prefix(t.as_bytes());
    if end == digits_start {
        return Some(Value::Int(0));
    }
    let num = &t[..end];
    if !is_float {
        if let Ok(i) = num.parse::<i64>() {
            return Some(Value::Int(i));
        }
        if let Ok(u) = num.parse::<u64>() {
            return Some(Value::UInt(u));
        }
    }
    num.parse::<f64>().ok().map(Value::Double)
}

/// True when the whole string (spaces around it aside) is a number, so converting it
/// loses nothing; MySQL warns (1292 "Truncated incorrect ... value") otherwise.
pub fn is_whole_number(b: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(b) else {
        return false;
    };
    let t = s.trim();
    let (end, digits_start, _) = number_prefix(t.as_bytes());
    end > digits_start && end == t.len()
}

/// The end of the numeric prefix of `bytes`, where its digits start (after a sign),
/// and whether it has a fraction or an exponent.
fn number_prefix(bytes: &[u8]) -> (usize, usize, bool) {
    let mut end = 0;
    if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
        end += 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    let mut is_float = false;
    if end < bytes.len() && bytes[end] == b'.' {
        is_float = true;
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end == digits_start {
        return (end, digits_start, false);
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut e = end + 1;
        if e < bytes.len() && (bytes[e] == b'-' || bytes[e] == b'+') {
            e += 1;
        }
        let ds = e;
        while e < bytes.len() && bytes[e].is_ascii_digit() {
            e += 1;
        }
        if e > ds {
            is_float = true;
            end = e;
        }
    }
    (end, digits_start, is_float)
}

/// Compares two non-NULL values with MySQL's coercions: numbers
/// numerically, strings bytewise (trailing spaces ignored, PAD SPACE),
/// temporal values by their packed form, a string against a number
/// numerically, a string against a temporal value by parsing the string.
/// NULL sorts first (used by ORDER BY); callers treat NULL comparisons in
/// predicates as unknown before calling this.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Less,
        (_, Null) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => (*x as i128).cmp(&(*y as i128)),
        (UInt(x), Int(y)) => (*x as i128).cmp(&(*y as i128)),
        (Decimal(m1, s1), Decimal(m2, s2)) => {
            let s = (*s1).max(*s2);
            rescale(*m1, *s1, s).cmp(&rescale(*m2, *s2, s))
        }
        (Decimal(m, s), Int(_) | UInt(_)) => {
            let i = b.to_i128().unwrap_or(0);
            (*m).cmp(&rescale(i, 0, *s))
        }
        (Int(_) | UInt(_), Decimal(m, s)) => {
            let i = a.to_i128().unwrap_or(0);
            rescale(i, 0, *s).cmp(m)
        }
        // Strings without a collation are binary strings: NO PAD, every byte
        // counts (text under a collation goes through `Collation::compare`).
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (DateTime(x), DateTime(y)) => x.cmp(y),
        (Date(x), DateTime(y)) => date_to_datetime(*x).cmp(y),
        (DateTime(x), Date(y)) => x.cmp(&date_to_datetime(*y)),
        (Time(x), Time(y)) => x.cmp(y),
        (Bytes(s), Date(_) | DateTime(_)) => match parse_datetime(s) {
            Some(p) => p.cmp(&temporal_as_datetime(b)),
            None => cmp_pad_space(s, &b.text()),
        },
        (Date(_) | DateTime(_), Bytes(s)) => match parse_datetime(s) {
            Some(p) => temporal_as_datetime(a).cmp(&p),
            None => cmp_pad_space(&a.text(), s),
        },
        (Bytes(s), Time(t)) => parse_time(s).unwrap_or(0).cmp(t),
        (Time(t), Bytes(s)) => t.cmp(&parse_time(s).unwrap_or(0)),
        _ => {
            let x = a.to_f64().unwrap_or(0.0);
            let y = b.to_f64().unwrap_or(0.0);
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn temporal_as_datetime(v: &Value) -> i64 {
    match v {
        Value::Date(d) => date_to_datetime(*d),
        Value::DateTime(p) => *p,
        _ => 0,
    }
}

fn rescale(m: i128, from: u8, to: u8) -> i128 {
    if to >= from {
        m.saturating_mul(10i128.pow((to - from) as u32))
    } else {
        m / 10i128.pow((from - to) as u32)
    }
}

/// Bytewise comparison ignoring trailing spaces: strings compared without
/// a collation (`binary` ones, and values of no string column). Character
/// strings under a collation compare with `Collation::compare`, which pads
/// as MySQL does (a control byte below 0x20 after a common prefix sorts
/// first there; trimming sorts it last).
pub fn cmp_pad_space(a: &[u8], b: &[u8]) -> Ordering {
    crate::keycodec::trim_trailing_spaces(a).cmp(crate::keycodec::trim_trailing_spaces(b))
}

pub use crate::temporal::*;
use crate::temporal::{date_to_datetime, date_to_yyyymmdd, datetime_to_number};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_order() {
        let a = parse_datetime(b"2024-02-29 23:59:58.5").unwrap();
        let b = parse_datetime(b"2024-03-01").unwrap();
        assert!(a < b);
        let mut s = Vec::new();
        format_datetime(a, 0, &mut s);
        assert_eq!(s, b"2024-02-29 23:59:58.500000");
        assert!(parse_date(b"2023-02-29").is_none());
        assert_eq!(
            Value::Date(parse_date(b"2023-01-05").unwrap()).text(),
            b"2023-01-05"
        );
        let u = 1_700_000_000i64;
        let p = datetime_from_unix_micros(u * 1_000_000);
        assert_eq!(datetime_to_unix_secs(p), u);
        assert_eq!(parse_time(b"-01:02:03").unwrap(), -3_723_000_000);
    }

    #[test]
    fn comparisons_follow_mysql() {
        assert_eq!(
            compare(&Value::Int(-1), &Value::UInt(u64::MAX)),
            Ordering::Less
        );
        // Binary strings: NO PAD, trailing spaces count (MariaDB).
        assert_eq!(
            compare(
                &Value::Bytes(b"ab ".to_vec()),
                &Value::Bytes(b"ab".to_vec())
            ),
            Ordering::Greater
        );
        assert_eq!(
            compare(
                &Value::Bytes(b"ab\x01".to_vec()),
                &Value::Bytes(b"ab".to_vec())
            ),
            Ordering::Greater
        );
        assert_eq!(
            compare(&Value::Bytes(b"10".to_vec()), &Value::Int(9)),
            Ordering::Greater
        );
        assert_eq!(
            compare(&Value::Decimal(150, 2), &Value::Int(1)),
            Ordering::Greater
        );
        assert_eq!(
            compare(&Value::Decimal(100, 2), &Value::Decimal(1, 0)),
            Ordering::Equal
        );
        assert_eq!(parse_number_prefix(b"12abc"), Some(Value::Int(12)));
        assert_eq!(parse_number_prefix(b" 1.5e2x"), Some(Value::Double(150.0)));
    }

    #[test]
    fn number_formatting() {
        let mut o = Vec::new();
        format_decimal(-1205, 2, &mut o);
        assert_eq!(o, b"-12.05");
        assert_eq!(Value::Double(0.5).text(), b"0.5");
        assert_eq!(Value::Double(3.0).text(), b"3");
        assert_eq!(Value::Decimal(5, 3).text(), b"0.005");
    }
}
