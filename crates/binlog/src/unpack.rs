//! Unpacking row images a source sends (the inverse of [`crate::row`]'s
//! packing, for every column type MariaDB 10.11 and MySQL 8 put in a
//! TABLE_MAP): each value becomes a [`Datum`], which the caller converts
//! to its own column type by position. Malformed images are
//! `Error::Corrupt`; nothing here panics on bytes from the network.
use crate::parse::{MapCol, Rd, Rows, RowsKind, TableMap};
use crate::row::ty;
use crate::{Error, Result};

/// One value of a row image.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// The column is not in this image (binlog_row_image=MINIMAL/NOBLOB).
    Absent,
    Null,
    /// An integer's bytes as stored (`width` bytes, little-endian): the
    /// binlog does not say whether the column is signed, the caller does.
    Int {
        raw: u64,
        width: u8,
    },
    Float(f32),
    Double(f64),
    /// `mantissa * 10^-scale`.
    Decimal(i128, u8),
    Bytes(Vec<u8>),
    /// YEAR (0 or 1901..=2155).
    Year(u16),
    Date {
        y: u32,
        m: u32,
        d: u32,
    },
    DateTime {
        y: u32,
        mo: u32,
        d: u32,
        h: u32,
        mi: u32,
        s: u32,
        us: u32,
    },
    /// TIMESTAMP: seconds since the epoch (UTC) and microseconds.
    Timestamp {
        secs: u32,
        us: u32,
    },
    /// TIME: signed microseconds.
    Time(i64),
    /// ENUM's member number, SET's bit mask, BIT's bits.
    Enum(u16),
    Set(u64),
    Bit(u64),
}

impl Datum {
    /// An integer as a signed value of its width (sign-extended).
    pub fn int_signed(raw: u64, width: u8) -> i64 {
        let bits = 8 * width.clamp(1, 8) as u32;
        ((raw << (64 - bits)) as i64) >> (64 - bits)
    }
}

/// A row change: before/after images (None where the kind has none).
pub type Change = (Option<Vec<Datum>>, Option<Vec<Datum>>);

/// The row changes of a rows event, unpacked with its table map one at a
/// time (`each`): memory stays at one change's images whatever the event
/// holds (a MINIMAL image of one column of a 4096-column table is 2 bytes
/// of input and 4096 datums of output).
pub struct Changes<'a> {
    ev: &'a Rows<'a>,
    cols: &'a [MapCol],
    r: Rd<'a>,
    failed: bool,
}

/// The row changes of `ev`, decoded as they are iterated; after an error
/// the iteration ends.
pub fn each<'a>(ev: &'a Rows<'a>, map: &'a TableMap) -> Result<Changes<'a>> {
    if let Some(why) = &map.unsupported {
        return Err(Error::Invalid(format!(
            "table {}.{}: {why}",
            map.db, map.table
        )));
    }
    if ev.ncols > map.columns.len() {
        return Err(Error::Corrupt(format!(
            "rows event of {} columns for a table map of {}",
            ev.ncols,
            map.columns.len()
        )));
    }
    if !ev.present.contains(&true) {
        return Err(Error::Corrupt("rows event without columns".into()));
    }
    Ok(Changes {
        ev,
        cols: &map.columns[..ev.ncols],
        r: Rd::new(ev.images),
        failed: false,
    })
}

impl Iterator for Changes<'_> {
    type Item = Result<Change>;

    fn next(&mut self) -> Option<Result<Change>> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let (r, cols, ev) = (&mut self.r, self.cols, self.ev);
        let c = image(r, cols, &ev.present).and_then(|first| {
            Ok(match ev.kind {
                RowsKind::Write => (None, Some(first)),
                RowsKind::Delete => (Some(first), None),
                RowsKind::Update => (Some(first), Some(image(r, cols, &ev.present_after)?)),
            })
        });
        self.failed = c.is_err();
        Some(c)
    }
}

/// Every row change of a rows event at once (tests; see `each`).
#[cfg(test)]
pub fn rows(ev: &Rows<'_>, map: &TableMap) -> Result<Vec<Change>> {
    each(ev, map)?.collect()
}

/// One image: a null bitmap over the present columns, then their values.
fn image(r: &mut Rd<'_>, cols: &[MapCol], present: &[bool]) -> Result<Vec<Datum>> {
    let n = present.iter().filter(|&&p| p).count();
    let nulls = r.take(n.div_ceil(8))?;
    let mut out = Vec::with_capacity(cols.len());
    let mut k = 0;
    for (c, &p) in cols.iter().zip(present) {
        if !p {
            out.push(Datum::Absent);
            continue;
        }
        let null = nulls[k / 8] & (1 << (k % 8)) != 0;
        k += 1;
        out.push(if null { Datum::Null } else { value(r, c)? });
    }
    Ok(out)
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| (a << 8) | x as u64)
}

/// Fractional seconds of a temporal2 value: 0..3 big-endian bytes.
fn frac(r: &mut Rd<'_>, fsp: u16) -> Result<u32> {
    Ok(match fsp {
        1 | 2 => r.u8()? as u32 * 10_000,
        3 | 4 => be(r.take(2)?) as u32 * 100,
        5 | 6 => be(r.take(3)?) as u32,
        0 => 0,
        f => return Err(Error::Corrupt(format!("fractional precision {f}"))),
    })
}

fn time_from_packed(p: i64) -> i64 {
    let a = p.unsigned_abs();
    let (hms, us) = ((a >> 24) as i64, (a & 0xff_ffff) as i64);
    let (h, m, s) = ((hms >> 12) & 0x3ff, (hms >> 6) & 0x3f, hms & 0x3f);
    let v = ((h * 60 + m) * 60 + s) * 1_000_000 + us;
    if p < 0 {
        -v
    } else {
        v
    }
}

/// TIME2 (MySQL's `my_time_packed_from_binary`).
fn time2(r: &mut Rd<'_>, fsp: u16) -> Result<i64> {
    const INT_OFS: i64 = 0x80_0000;
    let packed = match fsp {
        0 => (be(r.take(3)?) as i64 - INT_OFS) << 24,
        1 | 2 => {
            let mut ip = be(r.take(3)?) as i64 - INT_OFS;
            let mut f = r.u8()? as i64;
            if ip < 0 && f != 0 {
                ip += 1;
                f -= 0x100;
            }
            (ip << 24) + f * 10_000
        }
        3 | 4 => {
            let mut ip = be(r.take(3)?) as i64 - INT_OFS;
            let mut f = be(r.take(2)?) as i64;
            if ip < 0 && f != 0 {
                ip += 1;
                f -= 0x1_0000;
            }
            (ip << 24) + f * 100
        }
        5 | 6 => be(r.take(6)?) as i64 - 0x8000_0000_0000,
        f => return Err(Error::Corrupt(format!("TIME precision {f}"))),
    };
    Ok(time_from_packed(packed))
}

/// Bytes of a group of `n` leftover decimal digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// MySQL's binary DECIMAL(precision, scale) (see [`crate::row::put_decimal`]).
pub(crate) fn decimal(r: &mut Rd<'_>, precision: u8, scale: u8) -> Result<(i128, u8)> {
    if scale > precision || precision > 65 || precision == 0 {
        return Err(Error::Corrupt(format!("DECIMAL({precision},{scale})")));
    }
    let intg = (precision - scale) as usize;
    let (intg0, intg0x) = (intg / 9, intg % 9);
    let (frac0, frac0x) = (scale as usize / 9, scale as usize % 9);
    let size = intg0 * 4 + DIG2BYTES[intg0x] + frac0 * 4 + DIG2BYTES[frac0x];
    let mut b = r.take(size)?.to_vec();
    let neg = b[0] & 0x80 == 0;
    b[0] ^= 0x80;
    if neg {
        for x in &mut b {
            *x = !*x;
        }
    }
    let too_big = || Error::Invalid(format!("DECIMAL({precision},{scale}) value past 38 digits"));
    let mut m: i128 = 0;
    let mut p = 0;
    let mut push = |m: &mut i128, bytes: usize, digits: u32| -> Result<()> {
        let g = be(&b[p..p + bytes]) as i128;
        p += bytes;
        if g >= 10i128.pow(digits) {
            return Err(Error::Corrupt("decimal digit group out of range".into()));
        }
        *m = m
            .checked_mul(10i128.pow(digits))
            .and_then(|x| x.checked_add(g))
            .ok_or_else(too_big)?;
        Ok(())
    };
    if intg0x > 0 {
        push(&mut m, DIG2BYTES[intg0x], intg0x as u32)?;
    }
    for _ in 0..intg0 {
        push(&mut m, 4, 9)?;
    }
    for _ in 0..frac0 {
        push(&mut m, 4, 9)?;
    }
    if frac0x > 0 {
        push(&mut m, DIG2BYTES[frac0x], frac0x as u32)?;
    }
    Ok((if neg { -m } else { m }, scale))
}

/// The replica column's precision an old TIMESTAMP/DATETIME/TIME column
/// is read with (`MapCol::local_fsp`).
fn local_fsp(c: &MapCol) -> Result<u8> {
    match c.local_fsp {
        Some(f @ 0..=6) => Ok(f),
        Some(f) => Err(Error::Invalid(format!("fractional precision {f}"))),
        None => Err(Error::Invalid(format!(
            "an old-format temporal column (type {}) replicated to a column of another type",
            c.ty
        ))),
    }
}

/// The fraction of an old TIMESTAMP(f): f digits in 1 to 3 big-endian
/// bytes, as microseconds.
fn old_frac(r: &mut Rd<'_>, f: u8) -> Result<u32> {
    let n = [0, 1, 1, 2, 2, 3, 3][f as usize];
    let v = be(r.take(n)?) * 10u64.pow(6 - f as u32);
    if v >= 1_000_000 {
        return Err(Error::Corrupt("TIMESTAMP fraction out of range".into()));
    }
    Ok(v as u32)
}

/// An old-format DATETIME from its year, [month, day, hour, minute,
/// second] and microseconds, refused as corrupt outside DATETIME's range
/// (a zero month or day is MariaDB's zero date, kept).
fn old_datetime(y: u64, [mo, d, h, mi, s]: [u64; 5], us: u64) -> Result<Datum> {
    if y > 9999 || mo > 12 || d > 31 || h > 23 || mi > 59 || s > 59 || us > 999_999 {
        return Err(Error::Corrupt("DATETIME out of range".into()));
    }
    // In range: every field fits a u32.
    let f = |v: u64| v as u32;
    Ok(Datum::DateTime {
        y: f(y),
        mo: f(mo),
        d: f(d),
        h: f(h),
        mi: f(mi),
        s: f(s),
        us: f(us),
    })
}

/// An old-format TIME in microseconds, refused as corrupt outside
/// TIME's range (±838:59:59.999999).
fn old_time(us: i64) -> Result<Datum> {
    if us.unsigned_abs() > 3_020_399_999_999 {
        return Err(Error::Corrupt("TIME out of range".into()));
    }
    Ok(Datum::Time(us))
}

pub(crate) fn value(r: &mut Rd<'_>, c: &MapCol) -> Result<Datum> {
    let meta = c.meta;
    let int = |r: &mut Rd<'_>, w: u8| -> Result<Datum> {
        Ok(Datum::Int {
            raw: r.uint(w as usize)?,
            width: w,
        })
    };
    Ok(match c.ty {
        ty::TINY => int(r, 1)?,
        ty::SHORT => int(r, 2)?,
        ty::INT24 => int(r, 3)?,
        ty::LONG => int(r, 4)?,
        ty::LONGLONG => int(r, 8)?,
        ty::FLOAT => Datum::Float(f32::from_le_bytes([r.u8()?, r.u8()?, r.u8()?, r.u8()?])),
        ty::DOUBLE => Datum::Double(f64::from_bits(r.uint(8)?)),
        ty::YEAR => match r.u8()? {
            0 => Datum::Year(0),
            y => Datum::Year(1900 + y as u16),
        },
        ty::DATE | 14 => {
            let v = r.uint(3)? as u32;
            Datum::Date {
                y: v >> 9,
                m: (v >> 5) & 15,
                d: v & 31,
            }
        }
        ty::DATETIME2 => {
            let p = be(r.take(5)?) as i64 - 0x80_0000_0000;
            let us = frac(r, meta)?;
            let p = p.unsigned_abs();
            let (ymd, hms) = (p >> 17, p & 0x1_ffff);
            let ym = ymd >> 5;
            Datum::DateTime {
                y: (ym / 13) as u32,
                mo: (ym % 13) as u32,
                d: (ymd & 31) as u32,
                h: (hms >> 12) as u32,
                mi: ((hms >> 6) & 63) as u32,
                s: (hms & 63) as u32,
                us,
            }
        }
        12 => match local_fsp(c)? {
            0 => {
                // Old DATETIME: YYYYMMDDhhmmss as an 8-byte integer.
                let v = r.uint(8)?;
                let (d, t) = (v / 1_000_000, v % 1_000_000);
                old_datetime(
                    d / 10_000,
                    [d / 100 % 100, d % 100, t / 10_000, t / 100 % 100, t % 100],
                    0,
                )?
            }
            f => {
                // MariaDB's DATETIME(f) of before 10.1 (Field_datetime_hires):
                // its packed form (`pack_time`) shifted to f digits,
                // big-endian in 5 to 8 bytes.
                let n = [5, 6, 6, 7, 7, 7, 8][f as usize];
                let mut p = be(r.take(n)?)
                    .checked_mul(10u64.pow(6 - f as u32))
                    .ok_or_else(|| Error::Corrupt("DATETIME out of range".into()))?;
                let mut next = |m: u64| {
                    let v = p % m;
                    p /= m;
                    v
                };
                let (us, s, mi, h) = (next(1_000_000), next(60), next(60), next(24));
                let (d, mo) = (next(32), next(13));
                old_datetime(p, [mo, d, h, mi, s], us)?
            }
        },
        ty::TIMESTAMP2 => {
            let secs = be(r.take(4)?) as u32;
            Datum::Timestamp {
                secs,
                us: frac(r, meta)?,
            }
        }
        7 => match local_fsp(c)? {
            0 => Datum::Timestamp {
                secs: r.uint(4)? as u32,
                us: 0,
            },
            // TIMESTAMP(f) of before 10.1 (Field_timestamp_hires): seconds,
            // then the fraction in f digits, both big-endian.
            f => Datum::Timestamp {
                secs: be(r.take(4)?) as u32,
                us: old_frac(r, f)?,
            },
        },
        ty::TIME2 => Datum::Time(time2(r, meta)?),
        11 => match local_fsp(c)? {
            0 => {
                // Old TIME: [-]HHMMSS as a 3-byte integer.
                let v = Datum::int_signed(r.uint(3)?, 3);
                let a = v.unsigned_abs() as i64;
                let us = ((a / 10_000) * 3600 + (a / 100 % 100) * 60 + a % 100) * 1_000_000;
                old_time(if v < 0 { -us } else { us })?
            }
            f => {
                // TIME(f) of before 10.1 (Field_time_hires): microseconds
                // shifted to f digits, offset by 838:59:59 + 1 s so that it
                // is unsigned, big-endian in 3 to 6 bytes.
                let n = [3, 4, 4, 5, 5, 5, 6][f as usize];
                let shift = 10i64.pow(6 - f as u32);
                let zero = 3_020_400_000_000 / shift;
                old_time((be(r.take(n)?) as i64 - zero) * shift)?
            }
        },
        ty::NEWDECIMAL => {
            let (m, s) = decimal(r, (meta >> 8) as u8, meta as u8)?;
            Datum::Decimal(m, s)
        }
        ty::VARCHAR | 253 => {
            let n = if meta > 255 { r.uint(2)? } else { r.uint(1)? } as usize;
            Datum::Bytes(r.take(n)?.to_vec())
        }
        ty::STRING => {
            let (b0, b1) = ((meta >> 8) as u8, meta & 0xff);
            // Lengths over 255 keep bits 8-9 in the real-type byte.
            let (real, len) = if b0 & 0x30 != 0x30 {
                (b0 | 0x30, b1 | (((b0 as u16 & 0x30) ^ 0x30) << 4))
            } else {
                (b0, b1)
            };
            match real {
                ty::ENUM => match len {
                    1 => Datum::Enum(r.u8()? as u16),
                    2 => Datum::Enum(r.uint(2)? as u16),
                    n => return Err(Error::Corrupt(format!("ENUM of {n} bytes"))),
                },
                ty::SET => {
                    if !(1..=8).contains(&len) {
                        return Err(Error::Corrupt(format!("SET of {len} bytes")));
                    }
                    Datum::Set(r.uint(len as usize)?)
                }
                _ => {
                    let n = if len > 255 { r.uint(2)? } else { r.uint(1)? } as usize;
                    Datum::Bytes(r.take(n)?.to_vec())
                }
            }
        }
        16 => {
            let (bits, bytes) = (meta & 0xff, (meta >> 8) as usize);
            let n = bytes + usize::from(bits > 0);
            if n > 8 {
                return Err(Error::Corrupt(format!("BIT of {n} bytes")));
            }
            Datum::Bit(be(r.take(n)?))
        }
        ty::BLOB | 249..=251 | 255 | 245 => {
            if !(1..=4).contains(&meta) {
                return Err(Error::Corrupt(format!("BLOB length of {meta} bytes")));
            }
            let n = r.uint(meta as usize)? as usize;
            Datum::Bytes(r.take(n)?.to_vec())
        }
        other => {
            return Err(Error::Invalid(format!(
                "column type {other} in a row image is not supported"
            )))
        }
    })
}
