//! Date and time functions beyond the basics in `mod.rs`: fields (HOUR,
//! DAYOFWEEK, MONTHNAME, ...), LAST_DAY, DATEDIFF, DATE_FORMAT, CONVERT_TZ, and
//! DATE_ADD / DATE_SUB / `+ INTERVAL` with single units, TIMESTAMPDIFF (MySQL's calendar
//! rules: adding months clamps the day to the month's last, a result
//! outside years 1..9999 is NULL).
use super::{arg, to_datetime, Func};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use rel::value::{self as val, Value};

/// An INTERVAL unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Unit {
    /// The unit of `INTERVAL n <unit>` (single units only).
    pub fn from_field(f: &sqlparser::ast::DateTimeField) -> Result<Unit> {
        use sqlparser::ast::DateTimeField as F;
        Ok(match f {
            F::Microsecond | F::Microseconds => Unit::Microsecond,
            F::Second | F::Seconds => Unit::Second,
            F::Minute | F::Minutes => Unit::Minute,
            F::Hour | F::Hours => Unit::Hour,
            F::Day | F::Days => Unit::Day,
            F::Week(_) | F::Weeks => Unit::Week,
            F::Month | F::Months => Unit::Month,
            F::Quarter => Unit::Quarter,
            F::Year | F::Years => Unit::Year,
            other => return Err(SqlError::unsupported(format!("INTERVAL unit {other}"))),
        })
    }

    /// The unit named in TIMESTAMPDIFF / TIMESTAMPADD (`MONTH`, `SQL_TSI_MONTH`);
    pub fn from_name(name: &str) -> Result<Unit> {
        let up = name.to_ascii_uppercase();
        Ok(match up.strip_prefix("SQL_TSI_").unwrap_or(&up) {
            "MICROSECOND" | "FRAC_SECOND" => Unit::Microsecond,
            "SECOND" => Unit::Second,
            "MINUTE" => Unit::Minute,
            "HOUR" => Unit::Hour,
            "DAY" => Unit::Day,
            "WEEK" => Unit::Week,
            "MONTH" => Unit::Month,
            "QUARTER" => Unit::Quarter,
            "YEAR" => Unit::Year,
            _ => return Err(SqlError::parse(format!("unknown unit {name}"))),
        })
    }

    /// Units of a day or more keep a DATE a DATE.
    pub fn whole_days(self) -> bool {
        matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year
        )
    }
}

/// A compound INTERVAL unit (`DAY_HOUR`, ...), counted in its smallest part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compound {
    YearMonth,
    DayHour,
    DayMinute,
    DaySecond,
    HourMinute,
    HourSecond,
    MinuteSecond,
    DayMicrosecond,
    HourMicrosecond,
    MinuteMicrosecond,
    SecondMicrosecond,
}

impl Compound {
    /// The compound unit named `name`.
    pub fn from_name(name: &str) -> Result<Option<Compound>> {
        Ok(Some(match name.to_ascii_uppercase().as_str() {
            "YEAR_MONTH" => Compound::YearMonth,
            "DAY_HOUR" => Compound::DayHour,
            "DAY_MINUTE" => Compound::DayMinute,
            "DAY_SECOND" => Compound::DaySecond,
            "HOUR_MINUTE" => Compound::HourMinute,
            "HOUR_SECOND" => Compound::HourSecond,
            "MINUTE_SECOND" => Compound::MinuteSecond,
            "DAY_MICROSECOND" => Compound::DayMicrosecond,
            "HOUR_MICROSECOND" => Compound::HourMicrosecond,
            "MINUTE_MICROSECOND" => Compound::MinuteMicrosecond,
            // `parse` writes SECOND_MICROSECOND as `MICROSECOND TO SECOND`.
            "SECOND_MICROSECOND" | "MICROSECOND_SECOND" => Compound::SecondMicrosecond,
            _ => return Ok(None),
        }))
    }

    /// The single unit the interval is counted in.
    pub fn unit(self) -> Unit {
        match self {
            Compound::YearMonth => Unit::Month,
            Compound::DayHour => Unit::Hour,
            Compound::DayMinute | Compound::HourMinute => Unit::Minute,
            Compound::DayMicrosecond
            | Compound::HourMicrosecond
            | Compound::MinuteMicrosecond
            | Compound::SecondMicrosecond => Unit::Microsecond,
            _ => Unit::Second,
        }
    }

    /// The size of each part of the interval's text, in `unit()`.
    fn parts(self) -> &'static [i64] {
        match self {
            Compound::YearMonth => &[12, 1],
            Compound::DayHour => &[24, 1],
            Compound::DayMinute => &[1440, 60, 1],
            Compound::DaySecond => &[86400, 3600, 60, 1],
            Compound::HourMinute | Compound::MinuteSecond => &[60, 1],
            Compound::HourSecond => &[3600, 60, 1],
            Compound::DayMicrosecond => &[86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000, 1],
            Compound::HourMicrosecond => &[3_600_000_000, 60_000_000, 1_000_000, 1],
            Compound::MinuteMicrosecond => &[60_000_000, 1_000_000, 1],
            Compound::SecondMicrosecond => &[1_000_000, 1],
        }
    }

    /// The interval `'1 2'` etc. in `unit()`: digit groups fill the parts from the
    /// right (MySQL takes missing leading parts as 0); a leading `-` negates;
    /// None with more groups than parts. The microseconds group of the
    /// `_MICROSECOND` units is a fraction of a second, as MariaDB reads it
    /// (`'1.5'` is 1.500000 seconds, `'1.1234567'` 1.123456).
    pub fn count(self, text: &[u8]) -> Option<i64> {
        let s = String::from_utf8_lossy(text);
        let s = s.trim();
        let neg = s.starts_with('-');
        let groups: Vec<&str> = s
            .split(|c: char| !c.is_ascii_digit())
            .filter(|g| !g.is_empty())
            .collect();
        let parts = self.parts();
        if groups.len() > parts.len() {
            return None;
        }
        let micro = self.unit() == Unit::Microsecond;
        let mut n: i64 = 0;
        for (i, (g, m)) in groups.iter().rev().zip(parts.iter().rev()).enumerate() {
            let v = if micro && i == 0 {
                // Six digits: right-padded with zeros, cut past the sixth.
                let d: String = g.chars().chain(std::iter::repeat('0')).take(6).collect();
                d.parse::<i64>().ok()?
            } else {
                g.parse::<i64>().ok()?
            };
            n = n.checked_add(v.checked_mul(*m)?)?;
        }
        Some(if neg { -n } else { n })
    }
}

const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn days_in_month(y: i64, m: u32) -> u32 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// (hours, minutes, seconds, microseconds) of a TIME or the time of day of a
/// DATETIME; None for NULL or text that is neither.
pub(super) fn clock(v: &Value) -> Option<(u64, u32, u32, u32)> {
    let t = match v {
        Value::Time(t) => *t,
        Value::Bytes(b) if val::parse_datetime(b).is_none() || b.len() <= 8 => val::parse_time(b)?,
        other => {
            let (_, _, _, h, mi, s, us) = val::datetime_unpack(to_datetime(other)?);
            return Some((h as u64, mi, s, us));
        }
    };
    let t = t.unsigned_abs();
    let secs = t / 1_000_000;
    Some((
        secs / 3600,
        (secs / 60 % 60) as u32,
        (secs % 60) as u32,
        (t % 1_000_000) as u32,
    ))
}

/// Days since 1970-01-01 and the calendar fields of a date or datetime.
fn day_of(v: &Value) -> Option<(i64, (u32, u32, u32))> {
    let (y, m, d, ..) = val::datetime_unpack(to_datetime(v)?);
    if m == 0 || d == 0 {
        return None;
    }
    Some((val::days_from_civil(y as i64, m, d), (y, m, d)))
}

fn weekday(days: i64) -> usize {
    // 1970-01-01 was a Thursday (index 3 from Monday).
    (days + 3).rem_euclid(7) as usize
}

/// `when + n units`, or None out of range.
pub fn add(when: &Value, n: i64, unit: Unit) -> Option<Value> {
    let date_only = matches!(when, Value::Date(_))
        || matches!(when, Value::Bytes(b) if val::parse_date(b).is_some() && b.len() <= 10);
    let (y, mo, d, h, mi, s, us) = val::datetime_unpack(to_datetime(when)?);
    if mo == 0 || d == 0 {
        return None;
    }
    let (mut y, mut mo, mut d) = (y as i64, mo, d);
    let mut micros: i128 =
        ((h as i128 * 60 + mi as i128) * 60 + s as i128) * 1_000_000 + us as i128;
    let mut days = val::days_from_civil(y, mo, d) as i128;
    let n = n as i128;
    match unit {
        Unit::Microsecond => micros += n,
        Unit::Second => micros += n * 1_000_000,
        Unit::Minute => micros += n * 60_000_000,
        Unit::Hour => micros += n * 3_600_000_000,
        Unit::Day => days += n,
        Unit::Week => days += n * 7,
        Unit::Month | Unit::Quarter | Unit::Year => {
            let months = n * match unit {
                Unit::Month => 1,
                Unit::Quarter => 3,
                _ => 12,
            };
            let total = y as i128 * 12 + (mo as i128 - 1) + months;
            if !(12..=9999 * 12 + 11).contains(&total) {
                return None;
            }
            y = (total / 12) as i64;
            mo = (total % 12) as u32 + 1;
            d = d.min(days_in_month(y, mo));
            days = val::days_from_civil(y, mo, d) as i128;
        }
    }
    days += micros.div_euclid(86_400_000_000);
    let tod = micros.rem_euclid(86_400_000_000) as i64;
    let (y, mo, d) = val::civil_from_days(i64::try_from(days).ok()?);
    if !(1..=9999).contains(&y) {
        return None;
    }
    let (y, secs) = (y as u32, tod / 1_000_000);
    if unit == Unit::Microsecond && matches!(when, Value::Bytes(_)) {
        // Text in, text out: MariaDB writes all six digits of a
        // microsecond interval's result (as its DATETIME(6) would print).
        let mut out = Vec::with_capacity(26);
        rel::temporal::format_datetime(
            val::datetime_pack(
                y,
                mo,
                d,
                (secs / 3600) as u32,
                (secs / 60 % 60) as u32,
                (secs % 60) as u32,
                (tod % 1_000_000) as u32,
            ),
            6,
            &mut out,
        );
        return Some(Value::Bytes(out));
    }
    Some(if date_only && unit.whole_days() {
        Value::Date(val::date_pack(y, mo, d))
    } else {
        Value::DateTime(val::datetime_pack(
            y,
            mo,
            d,
            (secs / 3600) as u32,
            (secs / 60 % 60) as u32,
            (secs % 60) as u32,
            (tod % 1_000_000) as u32,
        ))
    })
}

/// DATE_FORMAT's text for one datetime.
fn format(p: i64, fmt: &[u8]) -> Vec<u8> {
    let (y, mo, d, h, mi, s, us) = val::datetime_unpack(p);
    let days = val::days_from_civil(y as i64, mo.max(1), d.max(1));
    let wd = weekday(days);
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let mut out = String::new();
    let mut it = fmt.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        let Some(&k) = it.next() else { break };
        fn name(v: &[&'static str], i: usize) -> &'static str {
            v.get(i).copied().unwrap_or("")
        }
        match k {
            b'Y' => out += &format!("{y:04}"),
            b'y' => out += &format!("{:02}", y % 100),
            b'm' => out += &format!("{mo:02}"),
            b'c' => out += &mo.to_string(),
            b'd' => out += &format!("{d:02}"),
            b'e' => out += &d.to_string(),
            b'H' => out += &format!("{h:02}"),
            b'k' => out += &h.to_string(),
            b'h' | b'I' => out += &format!("{h12:02}"),
            b'l' => out += &h12.to_string(),
            b'i' => out += &format!("{mi:02}"),
            b's' | b'S' => out += &format!("{s:02}"),
            b'f' => out += &format!("{us:06}"),
            b'p' => out += if h < 12 { "AM" } else { "PM" },
            b'T' => out += &format!("{h:02}:{mi:02}:{s:02}"),
            b'r' => {
                out += &format!(
                    "{h12:02}:{mi:02}:{s:02} {}",
                    if h < 12 { "AM" } else { "PM" }
                )
            }
            b'W' => out += name(&DAYS, wd),
            b'a' => out += &name(&DAYS, wd)[..3],
            b'M' => out += name(&MONTHS, (mo as usize).wrapping_sub(1)),
            b'b' => {
                out += name(&MONTHS, (mo as usize).wrapping_sub(1))
                    .get(..3)
                    .unwrap_or("")
            }
            b'j' => {
                let doy = days - val::days_from_civil(y as i64, 1, 1) + 1;
                out += &format!("{doy:03}")
            }
            b'w' => out += &((wd + 1) % 7).to_string(),
            b'D' => {
                let suffix = match (d % 10, d % 100) {
                    (_, 11..=13) => "th",
                    (1, _) => "st",
                    (2, _) => "nd",
                    (3, _) => "rd",
                    _ => "th",
                };
                out += &format!("{d}{suffix}")
            }
            other => out.push(other as char),
        }
    }
    out.into_bytes()
}

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let a = |i: usize| arg(args, i, row, env);
    Ok(match f {
        Func::Hour | Func::Minute | Func::Second | Func::Microsecond => match clock(&a(0)?) {
            None => Value::Null,
            Some((h, mi, s, us)) => Value::Int(match f {
                Func::Hour => h as i64,
                Func::Minute => mi as i64,
                Func::Second => s as i64,
                _ => us as i64,
            }),
        },
        Func::DayOfWeek | Func::Weekday | Func::DayOfYear | Func::DayName | Func::MonthName => {
            match day_of(&a(0)?) {
                None => Value::Null,
                Some((days, (y, m, _))) => match f {
                    Func::DayOfWeek => Value::Int((weekday(days) as i64 + 1) % 7 + 1),
                    Func::Weekday => Value::Int(weekday(days) as i64),
                    Func::DayOfYear => Value::Int(days - val::days_from_civil(y as i64, 1, 1) + 1),
                    Func::DayName => Value::Bytes(DAYS[weekday(days)].as_bytes().to_vec()),
                    _ => Value::Bytes(MONTHS[(m as usize - 1) % 12].as_bytes().to_vec()),
                },
            }
        }
        Func::LastDay => match day_of(&a(0)?) {
            None => Value::Null,
            Some((_, (y, m, _))) => Value::Date(val::date_pack(y, m, days_in_month(y as i64, m))),
        },
        Func::DateDiff => match (day_of(&a(0)?), day_of(&a(1)?)) {
            (Some((x, _)), Some((y, _))) => Value::Int(x - y),
            _ => Value::Null,
        },
        Func::DateFormat => {
            let (v, fmt) = (a(0)?, a(1)?);
            match (to_datetime(&v), fmt.is_null()) {
                (Some(p), false) => Value::Bytes(format(p, &fmt.text())),
                _ => Value::Null,
            }
        }
        Func::DateAdd(unit) => {
            let (v, n) = (a(0)?, a(1)?);
            match n.to_i128() {
                Some(n) if !v.is_null() => {
                    let n = n.clamp(i64::MIN as i128 / 2, i64::MAX as i128 / 2) as i64;
                    add(&v, n, unit).unwrap_or(Value::Null)
                }
                _ => Value::Null,
            }
        }
        Func::Quarter | Func::ToDays => match day_of(&a(0)?) {
            None => Value::Null,
            // TO_DAYS counts from year 0 (1970-01-01 is day 719528).
            Some((days, (_, m, _))) => Value::Int(if f == Func::Quarter {
                (m as i64 + 2) / 3
            } else {
                days + 719_528
            }),
        },
        Func::TimeToSec => {
            let v = a(0)?;
            let neg = match &v {
                Value::Time(t) => *t < 0,
                Value::Bytes(b) => b.trim_ascii_start().starts_with(b"-"),
                _ => false,
            };
            match clock(&v) {
                None => Value::Null,
                Some((h, mi, s, _)) => {
                    let secs = h as i64 * 3600 + mi as i64 * 60 + s as i64;
                    Value::Int(if neg { -secs } else { secs })
                }
            }
        }
        Func::SecToTime => match a(0)?.to_f64() {
            None => Value::Null,
            Some(x) => {
                // TIME's range: +-838:59:59.
                let max = 838.0 * 3600.0 + 59.0 * 60.0 + 59.0;
                let x = x.clamp(-max, max);
                Value::Time((x * 1_000_000.0).round() as i64)
            }
        },
        Func::ConvertTz => {
            if args.len() != 3 {
                return Err(SqlError::wrong_param_count());
            }
            let (v, from, to) = (a(0)?, a(1)?, a(2)?);
            match (to_datetime(&v), zone_offset(&from), zone_offset(&to)) {
                (Some(p), Some(f), Some(t)) => convert_tz(p, f, t).unwrap_or(Value::Null),
                _ => Value::Null,
            }
        }
        Func::IntervalCount(c) => match a(0)? {
            Value::Null => Value::Null,
            v => c.count(&v.text()).map_or(Value::Null, Value::Int),
        },
        Func::MakeDate => match (
            super::int_arg(args, 0, row, env)?,
            super::int_arg(args, 1, row, env)?,
        ) {
            (Some(y), Some(doy)) if (0..=9999).contains(&y) && doy > 0 => {
                let y = match y {
                    0..=69 => y + 2000,
                    70..=99 => y + 1900,
                    y => y,
                };
                let days = val::days_from_civil(y, 1, 1) + doy - 1;
                let (yy, m, d) = val::civil_from_days(days);
                if (1..=9999).contains(&yy) {
                    Value::Date(val::date_pack(yy as u32, m, d))
                } else {
                    Value::Null
                }
            }
            _ => Value::Null,
        },
        Func::PeriodAdd | Func::PeriodDiff => {
            match (
                super::int_arg(args, 0, row, env)?,
                super::int_arg(args, 1, row, env)?,
            ) {
                (Some(p), Some(n)) if f == Func::PeriodAdd => match period_months(p) {
                    Some(m) if p != 0 => {
                        let t = m + n;
                        Value::Int(t.div_euclid(12) * 100 + t.rem_euclid(12) + 1)
                    }
                    _ => Value::Int(0),
                },
                (Some(p), Some(q)) => match (period_months(p), period_months(q)) {
                    (Some(x), Some(y)) => Value::Int(x - y),
                    _ => return Err(SqlError::wrong_arguments("period_diff")),
                },
                _ => Value::Null,
            }
        }
        Func::TimestampDiff(unit) => match (a(0)?, a(1)?) {
            (x, y) if x.is_null() || y.is_null() => Value::Null,
            (x, y) => match (to_datetime(&x), to_datetime(&y)) {
                (Some(x), Some(y)) => timestamp_diff(x, y, unit).map_or(Value::Null, Value::Int),
                _ => Value::Null,
            },
        },
        _ => return Err(SqlError::internal(format!("{f:?} is not a time function"))),
    })
}

/// The offset from UTC in seconds of a time zone CONVERT_TZ knows: the names
/// `SET time_zone` accepts (SYSTEM is UTC, the system time zone) and
/// `+HH:MM` offsets; None (a NULL result, as MySQL's for an unknown zone)
/// for anything else.
fn zone_offset(z: &Value) -> Option<i64> {
    if z.is_null() {
        return None;
    }
    let t = String::from_utf8_lossy(&z.text()).to_ascii_uppercase();
    match t.as_str() {
        "SYSTEM" | "UTC" | "GMT" => Some(0),
        _ if crate::vars::is_offset(&t) => {
            let (h, m) = t[1..].split_once(':')?;
            let secs = h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60;
            Some(if t.starts_with('-') { -secs } else { secs })
        }
        _ => None,
    }
}

/// CONVERT_TZ of packed datetime `p` from offset `from` to `to` (seconds):
/// a zero date is NULL (None); a value whose UTC time is outside MySQL's
/// TIMESTAMP range (after the epoch, up to 3001-01-18 23:59:59) is returned
/// unchanged; fractional seconds are kept.
fn convert_tz(p: i64, from: i64, to: i64) -> Option<Value> {
    let (_, mo, d, .., us) = val::datetime_unpack(p);
    if mo == 0 || d == 0 {
        return None;
    }
    let utc = val::datetime_to_unix_secs(p) - from;
    if !(1..=32_536_771_199).contains(&utc) {
        return Some(Value::DateTime(p));
    }
    // Within 14 hours of that range: always a year between 1969 and 3001.
    let local = (utc + to) * 1_000_000 + us as i64;
    Some(Value::DateTime(val::datetime_from_unix_micros(local)))
}

/// Months since year 0 of a period YYMM or YYYYMM (YY < 70 is 20YY, else 19YY).
/// Period 0 is month 0 (as MySQL).
fn period_months(p: i64) -> Option<i64> {
    if p < 0 {
        return None;
    }
    if p == 0 {
        return Some(0);
    }
    let (y, m) = (p / 100, p % 100);
    let y = match y {
        0..=69 => y + 2000,
        70..=99 => y + 1900,
        y => y,
    };
    Some(y * 12 + m - 1)
}

/// TIMESTAMPDIFF(unit, a, b): whole units from `a` to `b`, truncated toward zero;
/// months count only when the day and time of day are reached.
fn timestamp_diff(a: i64, b: i64, unit: Unit) -> Option<i64> {
    let fields = |p: i64| {
        let (y, mo, d, h, mi, s, us) = val::datetime_unpack(p);
        let tod = ((h as i64 * 60 + mi as i64) * 60 + s as i64) * 1_000_000 + us as i64;
        (y as i64, mo, d, tod)
    };
    let (ya, ma, da, ta) = fields(a);
    let (yb, mb, db, tb) = fields(b);
    if ma == 0 || da == 0 || mb == 0 || db == 0 {
        return None;
    }
    let micros = |y: i64, m: u32, d: u32, t: i64| {
        val::days_from_civil(y, m, d) as i128 * 86_400_000_000 + t as i128
    };
    let diff = micros(yb, mb, db, tb) - micros(ya, ma, da, ta);
    let per: i128 = match unit {
        Unit::Microsecond => 1,
        Unit::Second => 1_000_000,
        Unit::Minute => 60_000_000,
        Unit::Hour => 3_600_000_000,
        Unit::Day => 86_400_000_000,
        Unit::Week => 7 * 86_400_000_000,
        Unit::Month | Unit::Quarter | Unit::Year => {
            let months = |from: (i64, u32, u32, i64), to: (i64, u32, u32, i64)| {
                let mut m = (to.0 * 12 + to.1 as i64) - (from.0 * 12 + from.1 as i64);
                if (to.2, to.3) < (from.2, from.3) {
                    m -= 1;
                }
                m
            };
            let (fa, fb) = ((ya, ma, da, ta), (yb, mb, db, tb));
            let m = if diff >= 0 {
                months(fa, fb)
            } else {
                -months(fb, fa)
            };
            return Some(match unit {
                Unit::Month => m,
                Unit::Quarter => m / 3,
                _ => m / 12,
            });
        }
    };
    i64::try_from(diff / per).ok()
}
