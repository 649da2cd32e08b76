//! TIME_FORMAT(time, format): DATE_FORMAT's time specifiers (a date
//! specifier makes it NULL; %H and %k show hours past 23, the 12-hour ones
//! wrap). STR_TO_DATE(text, format): the inverse of DATE_FORMAT for MySQL's
//! specifiers (`%Y %y %m %c %d %e %D %j %M %b %W %a %H %k %h %I %l %i %s %S
//! %f %p %T %r %%`). The result is a DATE when the format names only date
//! parts, a TIME when only time parts, else a DATETIME. Text that does not
//! match the format, or a date that does not exist (month 13, 30 February, a
//! zero day as with NO_ZERO_IN_DATE), gives NULL; text left after the format is
//! ignored, as MySQL does.
use rel::value::{self as val, Value};

/// What a format yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Date,
    Time,
    DateTime,
}

/// The kind of value `format` yields.
pub fn kind(format: &[u8]) -> Kind {
    let (mut date, mut time) = (false, false);
    let mut it = format.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            continue;
        }
        match it.next() {
            Some(
                b'Y' | b'y' | b'm' | b'c' | b'd' | b'e' | b'D' | b'j' | b'M' | b'b' | b'W' | b'a',
            ) => date = true,
            Some(
                b'H' | b'k' | b'h' | b'I' | b'l' | b'i' | b's' | b'S' | b'f' | b'p' | b'T' | b'r',
            ) => time = true,
            _ => {}
        }
    }
    match (date, time) {
        (true, false) => Kind::Date,
        (false, true) => Kind::Time,
        _ => Kind::DateTime,
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

#[derive(Default)]
struct Parts {
    year: Option<i64>,
    month: u32,
    day: u32,
    yday: Option<i64>,
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
    pm: Option<bool>,
    twelve: bool,
}

struct Input<'a> {
    s: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn skip_spaces(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// Up to `max` digits (at least one).
    fn number(&mut self, max: usize) -> Option<(i64, usize)> {
        let start = self.at;
        let mut n: i64 = 0;
        while self.at - start < max {
            match self.s.get(self.at) {
                Some(c) if c.is_ascii_digit() => {
                    n = n * 10 + (c - b'0') as i64;
                    self.at += 1;
                }
                _ => break,
            }
        }
        (self.at > start).then_some((n, self.at - start))
    }

    /// One of `names` (or its first three letters when `abbrev`), case-insensitively:
    /// its index.
    fn name(&mut self, names: &[&str], abbrev: bool) -> Option<usize> {
        let rest = &self.s[self.at..];
        for (i, n) in names.iter().enumerate() {
            let n = if abbrev { &n[..3] } else { n };
            if rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n.as_bytes()) {
                self.at += n.len();
                return Some(i);
            }
        }
        None
    }
}

fn two_digit_year(y: i64) -> i64 {
    if y < 70 {
        y + 2000
    } else {
        y + 1900
    }
}

/// Reads `s` by `format` into `p`; None when it does not match.
fn read(input: &mut Input, format: &[u8], p: &mut Parts) -> Option<()> {
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        if c.is_ascii_whitespace() {
            input.skip_spaces();
            i += 1;
            continue;
        }
        if c != b'%' || i + 1 == format.len() {
            if input.s.get(input.at) != Some(&c) {
                return None;
            }
            input.at += 1;
            i += 1;
            continue;
        }
        let spec = format[i + 1];
        i += 2;
        if spec != b'%' {
            input.skip_spaces();
        }
        match spec {
            b'Y' => {
                let (y, n) = input.number(4)?;
                p.year = Some(if n <= 2 { two_digit_year(y) } else { y });
            }
            b'y' => p.year = Some(two_digit_year(input.number(2)?.0)),
            b'm' | b'c' => p.month = input.number(2)?.0 as u32,
            b'd' | b'e' => p.day = input.number(2)?.0 as u32,
            b'D' => {
                p.day = input.number(2)?.0 as u32;
                input.at = (input.at + 2).min(input.s.len());
            }
            b'j' => p.yday = Some(input.number(3)?.0),
            b'M' => p.month = input.name(&MONTHS, false)? as u32 + 1,
            b'b' => p.month = input.name(&MONTHS, true)? as u32 + 1,
            b'W' => {
                input.name(&DAYS, false)?;
            }
            b'a' => {
                input.name(&DAYS, true)?;
            }
            b'H' | b'k' => p.hour = input.number(2)?.0 as u32,
            b'h' | b'I' | b'l' => {
                p.hour = input.number(2)?.0 as u32;
                p.twelve = true;
            }
            b'i' => p.minute = input.number(2)?.0 as u32,
            b's' | b'S' => p.second = input.number(2)?.0 as u32,
            b'f' => {
                let (f, n) = input.number(6)?;
                p.micro = (f * 10i64.pow(6 - n as u32)) as u32;
            }
            b'p' => {
                let r = &input.s[input.at..];
                let am = r.len() >= 2 && r[..2].eq_ignore_ascii_case(b"AM");
                let pm = r.len() >= 2 && r[..2].eq_ignore_ascii_case(b"PM");
                if !am && !pm {
                    return None;
                }
                p.pm = Some(pm);
                input.at += 2;
            }
            b'T' => read(input, b"%H:%i:%s", p)?,
            b'r' => read(input, b"%I:%i:%S %p", p)?,
            b'%' => {
                if input.s.get(input.at) != Some(&b'%') {
                    return None;
                }
                input.at += 1;
            }
            _ => return None,
        }
    }
    Some(())
}

/// STR_TO_DATE(s, format); None gives NULL.
pub fn str_to_date(s: &[u8], format: &[u8]) -> Option<Value> {
    let mut p = Parts::default();
    read(&mut Input { s, at: 0 }, format, &mut p)?;
    if p.twelve {
        if !(1..=12).contains(&p.hour) {
            return None;
        }
        p.hour %= 12;
        if p.pm == Some(true) {
            p.hour += 12;
        }
    } else if p.pm == Some(true) && p.hour < 12 {
        p.hour += 12;
    }
    if p.hour > 23 || p.minute > 59 || p.second > 59 {
        return None;
    }
    let kind = kind(format);
    if kind == Kind::Time {
        let secs = (p.hour as i64 * 60 + p.minute as i64) * 60 + p.second as i64;
        return Some(Value::Time(secs * 1_000_000 + p.micro as i64));
    }
    let year = p.year?;
    if let Some(yd) = p.yday {
        let days_in_year = val::days_from_civil(year + 1, 1, 1) - val::days_from_civil(year, 1, 1);
        if !(1..=days_in_year).contains(&yd) {
            return None;
        }
        let (_, m, d) = val::civil_from_days(val::days_from_civil(year, 1, 1) + yd - 1);
        p.month = m;
        p.day = d;
    }
    if !(1..=9999).contains(&year) || !(1..=12).contains(&p.month) || p.day == 0 {
        return None;
    }
    let (ny, nm, nd) = val::civil_from_days(val::days_from_civil(year, p.month, p.day));
    if (ny, nm, nd) != (year, p.month, p.day) {
        return None;
    }
    let y = year as u32;
    Some(match kind {
        Kind::Date => Value::Date(val::date_pack(y, p.month, p.day)),
        _ => Value::DateTime(val::datetime_pack(
            y, p.month, p.day, p.hour, p.minute, p.second, p.micro,
        )),
    })
}

/// TIME_FORMAT of (negative, hours, minutes, seconds, microseconds); None for a
/// specifier that is not a time one.
pub fn time_format(
    neg: bool,
    (h, mi, s, us): (u64, u32, u32, u32),
    format: &[u8],
) -> Option<Vec<u8>> {
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let ampm = if h % 24 < 12 { "AM" } else { "PM" };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let mut it = format.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        let Some(&spec) = it.next() else {
            out.push('%');
            break;
        };
        match spec {
            b'H' => out += &format!("{h:02}"),
            b'k' => out += &h.to_string(),
            b'h' | b'I' => out += &format!("{h12:02}"),
            b'l' => out += &h12.to_string(),
            b'i' => out += &format!("{mi:02}"),
            b's' | b'S' => out += &format!("{s:02}"),
            b'f' => out += &format!("{us:06}"),
            b'p' => out += ampm,
            b'r' => out += &format!("{h12:02}:{mi:02}:{s:02} {ampm}"),
            b'T' => out += &format!("{h:02}:{mi:02}:{s:02}"),
            b'%' => out.push('%'),
            c if c.is_ascii_alphabetic() => return None,
            other => out.push(other as char),
        }
    }
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txt(v: Option<Value>) -> String {
        v.map_or("NULL".into(), |v| {
            String::from_utf8_lossy(&v.text()).into_owned()
        })
    }

    #[test]
    fn formats_as_mysql() {
        let t = |s: &str, f: &str| txt(str_to_date(s.as_bytes(), f.as_bytes()));
        assert_eq!(t("2024-03-05", "%Y-%m-%d"), "2024-03-05");
        assert_eq!(
            t("05/03/2024 13:04:09", "%d/%m/%Y %H:%i:%s"),
            "2024-03-05 13:04:09"
        );
        assert_eq!(t("13:04", "%H:%i"), "13:04:00");
        assert_eq!(t("March 5 2024", "%M %e %Y"), "2024-03-05");
        assert_eq!(t("5-Mar-24", "%e-%b-%y"), "2024-03-05");
        assert_eq!(t("01:02:03 PM", "%r"), "13:02:03");
        assert_eq!(t("12:00 AM", "%h:%i %p"), "00:00:00");
        assert_eq!(t("2024 060", "%Y %j"), "2024-02-29");
        assert_eq!(t("  2024-03-05", "%Y-%m-%d"), "2024-03-05");
        assert_eq!(t("2024-03-05 extra", "%Y-%m-%d"), "2024-03-05");
        assert_eq!(t("20240305", "%Y%m%d"), "2024-03-05");
        assert_eq!(t("75-03-05", "%y-%m-%d"), "1975-03-05");
        assert_eq!(t("2024-13-01", "%Y-%m-%d"), "NULL");
        assert_eq!(t("2024-02-30", "%Y-%m-%d"), "NULL");
        assert_eq!(t("2024/03/05", "%Y-%m-%d"), "NULL");
        assert_eq!(t("abc", "%Y"), "NULL");
        assert_eq!(t("2024-03", "%Y-%m"), "NULL");
        assert_eq!(t("x", "%Q"), "NULL");
        assert_eq!(t("2024", "%"), "NULL");
    }

    #[test]
    fn time_format_as_mysql() {
        let f = |neg, t, fmt: &str| {
            time_format(neg, t, fmt.as_bytes()).map(|v| String::from_utf8(v).unwrap())
        };
        assert_eq!(
            f(false, (10, 5, 3, 0), "%H %k %h %I %l %i %s %p %r %T %f").as_deref(),
            Some("10 10 10 10 10 05 03 AM 10:05:03 AM 10:05:03 000000")
        );
        assert_eq!(
            f(false, (25, 0, 0, 0), "%H %k %h").as_deref(),
            Some("25 25 01")
        );
        assert_eq!(f(true, (1, 2, 3, 0), "%T").as_deref(), Some("-01:02:03"));
        assert_eq!(f(false, (10, 5, 3, 0), "%Y %d"), None);
    }
}
