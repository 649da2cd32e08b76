//! DATE, DATETIME/TIMESTAMP and TIME: packing (order-preserving integers),
//! parsing from text, formatting, and conversion to and from Unix time.
//! DATE is `year*512 + month*32 + day`; DATETIME is microseconds of
//! `date_packed * 86400 + seconds of the day`; TIME is signed microseconds.

fn write_fmt(out: &mut Vec<u8>, args: std::fmt::Arguments) -> std::fmt::Result {
    struct W<'a>(&'a mut Vec<u8>);
    impl std::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    std::fmt::Write::write_fmt(&mut W(out), args)
}

/// Packs a date.
pub fn date_pack(y: u32, m: u32, d: u32) -> i32 {
    (y * 512 + m * 32 + d) as i32
}

/// Unpacks a date into (year, month, day).
pub fn date_unpack(p: i32) -> (u32, u32, u32) {
    let p = p.max(0) as u32;
    (p / 512, (p / 32) % 16, p % 32)
}

/// Packs a datetime into microseconds of a calendar-ordered number.
pub fn datetime_pack(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> i64 {
    let ymd = date_pack(y, mo, d) as i64;
    ((ymd * 86_400) + (h as i64 * 3600 + mi as i64 * 60 + s as i64)) * 1_000_000 + us as i64
}

/// Unpacks a datetime into (y, mo, d, h, mi, s, us).
pub fn datetime_unpack(p: i64) -> (u32, u32, u32, u32, u32, u32, u32) {
    let p = p.max(0);
    let us = (p % 1_000_000) as u32;
    let secs = p / 1_000_000;
    let tod = (secs % 86_400) as u32;
    let (y, mo, d) = date_unpack((secs / 86_400) as i32);
    (y, mo, d, tod / 3600, (tod / 60) % 60, tod % 60, us)
}

pub(crate) fn date_to_datetime(d: i32) -> i64 {
    d as i64 * 86_400 * 1_000_000
}

pub(crate) fn date_to_yyyymmdd(d: i32) -> i64 {
    let (y, m, dd) = date_unpack(d);
    y as i64 * 10000 + m as i64 * 100 + dd as i64
}

pub(crate) fn datetime_to_number(p: i64) -> i128 {
    let (y, mo, d, h, mi, s, _) = datetime_unpack(p);
    ((y as i128 * 100 + mo as i128) * 100 + d as i128) * 1_000_000
        + (h as i128 * 10000 + mi as i128 * 100 + s as i128)
}

/// Formats a packed datetime with `fsp` fraction digits (0 prints
/// microseconds only when non-zero).
pub fn format_datetime(p: i64, fsp: u8, out: &mut Vec<u8>) {
    let (y, mo, d, h, mi, s, us) = datetime_unpack(p);
    let _ = write_fmt(
        out,
        format_args!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
    );
    if fsp > 0 {
        let digits = format!("{us:06}");
        out.push(b'.');
        out.extend_from_slice(&digits.as_bytes()[..(fsp as usize).min(6)]);
    } else if us != 0 {
        let _ = write_fmt(out, format_args!(".{us:06}"));
    }
}

/// Formats TIME microseconds with exactly `fsp` fraction digits (a TIME(fsp)
/// column's values).
pub fn format_time_fsp(t: i64, fsp: u8, out: &mut Vec<u8>) {
    let start = out.len();
    format_time(t - t % 1_000_000, out);
    if fsp > 0 {
        let digits = format!("{:06}", (t % 1_000_000).unsigned_abs());
        out.push(b'.');
        out.extend_from_slice(&digits.as_bytes()[..(fsp as usize).min(6)]);
    }
    // A negative time above -1 s keeps its sign.
    if t < 0 && t > -1_000_000 && out.get(start) != Some(&b'-') {
        out.insert(start, b'-');
    }
}

/// Formats TIME microseconds as [-]HH:MM:SS[.ffffff].
pub fn format_time(t: i64, out: &mut Vec<u8>) {
    if t < 0 {
        out.push(b'-');
    }
    let a = t.unsigned_abs();
    let us = a % 1_000_000;
    let s = a / 1_000_000;
    let _ = write_fmt(
        out,
        format_args!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60),
    );
    if us != 0 {
        let _ = write_fmt(out, format_args!(".{us:06}"));
    }
}

fn num(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.iter().all(|c| c.is_ascii_digit()) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Parses 'YYYY-MM-DD' (also YYYYMMDD) into a packed date.
pub fn parse_date(s: &[u8]) -> Option<i32> {
    let s = trim(s);
    let parts: Vec<&[u8]> = s.split(|&c| c == b'-' || c == b'/').collect();
    let (y, m, d) = if parts.len() == 3 {
        (num(parts[0])?, num(parts[1])?, num(parts[2])?)
    } else if s.len() == 8 {
        (num(&s[..4])?, num(&s[4..6])?, num(&s[6..])?)
    } else {
        return None;
    };
    valid_date(y, m, d).then(|| date_pack(y, m, d))
}

fn valid_date(y: u32, m: u32, d: u32) -> bool {
    if y > 9999 || m > 12 || d > 31 {
        return false;
    }
    if m == 0 || d == 0 {
        return y == 0 && m == 0 && d == 0;
    }
    let dim = match m {
        2 => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= dim
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// Parses 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' (or 'T' as separator) into a
/// packed datetime.
pub fn parse_datetime(s: &[u8]) -> Option<i64> {
    let s = trim(s);
    let split = s.iter().position(|&c| c == b' ' || c == b'T');
    let (dpart, tpart) = match split {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let d = parse_date(dpart)?;
    let (y, mo, dd) = date_unpack(d);
    let (mut h, mut mi, mut sec, mut us) = (0, 0, 0, 0);
    if let Some(t) = tpart {
        let (hms, frac) = match t.iter().position(|&c| c == b'.') {
            Some(i) => (&t[..i], Some(&t[i + 1..])),
            None => (t, None),
        };
        let p: Vec<&[u8]> = hms.split(|&c| c == b':').collect();
        if p.is_empty() || p.len() > 3 {
            return None;
        }
        h = num(p[0])?;
        mi = if p.len() > 1 { num(p[1])? } else { 0 };
        sec = if p.len() > 2 { num(p[2])? } else { 0 };
        if let Some(f) = frac {
            let f = &f[..f.len().min(6)];
            us = num(f)? * 10u32.pow(6 - f.len() as u32);
        }
        if h > 23 || mi > 59 || sec > 59 {
            return None;
        }
    }
    Some(datetime_pack(y, mo, dd, h, mi, sec, us))
}

/// Parses '[-]HH:MM:SS[.ffffff]' into microseconds.
pub fn parse_time(s: &[u8]) -> Option<i64> {
    let s = trim(s);
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let (hms, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let p: Vec<&[u8]> = hms.split(|&c| c == b':').collect();
    let (h, m, sec) = match p.len() {
        3 => (num(p[0])?, num(p[1])?, num(p[2])?),
        2 => (num(p[0])?, num(p[1])?, 0),
        1 => {
            let n = num(p[0])?;
            (n / 10000, (n / 100) % 100, n % 100)
        }
        _ => return None,
    };
    // MySQL's TIME range is -838:59:59 to 838:59:59.
    if m > 59 || sec > 59 || h > 838 {
        return None;
    }
    let mut us = 0i64;
    if let Some(f) = frac {
        let f = &f[..f.len().min(6)];
        us = num(f)? as i64 * 10i64.pow(6 - f.len() as u32);
    }
    let t = (h as i64 * 3600 + m as i64 * 60 + sec as i64) * 1_000_000 + us;
    Some(if neg { -t } else { t })
}

/// Days since 0000-03-01-ish epoch for a civil date (for date arithmetic).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Inverse of `days_from_civil` (days since 1970-01-01 to y/m/d).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The packed datetime for a Unix time in microseconds (UTC).
pub fn datetime_from_unix_micros(us: i64) -> i64 {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400) as u32;
    let (y, m, d) = civil_from_days(days);
    datetime_pack(
        y.clamp(0, 9999) as u32,
        m,
        d,
        tod / 3600,
        (tod / 60) % 60,
        tod % 60,
        frac,
    )
}

/// Unix seconds for a packed datetime (UTC).
pub fn datetime_to_unix_secs(p: i64) -> i64 {
    let (y, mo, d, h, mi, s, _) = datetime_unpack(p);
    days_from_civil(y as i64, mo, d) * 86_400 + (h * 3600 + mi * 60 + s) as i64
}
