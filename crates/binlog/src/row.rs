//! Row images: MariaDB's binlog column types, their TABLE_MAP metadata and
//! how each value is packed into a row image (MariaDB's `Field::pack`
//! layouts). The caller maps its own column types and values onto
//! [`ColType`] and [`Cell`]; this module knows no SQL.
use crate::event::MapColumn;
use crate::{Error, Result};

/// MariaDB field type codes used in TABLE_MAP.
pub mod ty {
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const YEAR: u8 = 13;
    pub const VARCHAR: u8 = 15;
    pub const TIMESTAMP2: u8 = 17;
    pub const DATETIME2: u8 = 18;
    pub const TIME2: u8 = 19;
    pub const NEWDECIMAL: u8 = 246;
    pub const ENUM: u8 = 247;
    pub const SET: u8 = 248;
    pub const BLOB: u8 = 252;
    pub const STRING: u8 = 254;
}

/// A column as the binlog describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// Integers of 1, 2, 3, 4 or 8 bytes.
    Int(u8),
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Year,
    Date,
    Time2 {
        fsp: u8,
    },
    DateTime2 {
        fsp: u8,
    },
    Timestamp2 {
        fsp: u8,
    },
    /// VARCHAR / VARBINARY of at most `max_bytes` bytes.
    VarString {
        max_bytes: u32,
    },
    /// CHAR / BINARY of `max_bytes` bytes.
    String {
        max_bytes: u32,
    },
    /// BLOB / TEXT with a length prefix of `pack` (1..=4) bytes.
    Blob {
        pack: u8,
    },
    /// ENUM stored in `pack` (1 or 2) bytes.
    Enum {
        pack: u8,
    },
    /// SET stored in `pack` (1..=8) bytes.
    Set {
        pack: u8,
    },
}

impl ColType {
    /// The TABLE_MAP entry (type code and metadata bytes).
    pub fn map_column(&self, nullable: bool) -> MapColumn {
        let (ty, meta): (u8, Vec<u8>) = match *self {
            ColType::Int(1) => (ty::TINY, vec![]),
            ColType::Int(2) => (ty::SHORT, vec![]),
            ColType::Int(3) => (ty::INT24, vec![]),
            ColType::Int(4) => (ty::LONG, vec![]),
            ColType::Int(_) => (ty::LONGLONG, vec![]),
            ColType::Float => (ty::FLOAT, vec![4]),
            ColType::Double => (ty::DOUBLE, vec![8]),
            ColType::Decimal { precision, scale } => (ty::NEWDECIMAL, vec![precision, scale]),
            ColType::Year => (ty::YEAR, vec![]),
            ColType::Date => (ty::DATE, vec![]),
            ColType::Time2 { fsp } => (ty::TIME2, vec![fsp]),
            ColType::DateTime2 { fsp } => (ty::DATETIME2, vec![fsp]),
            ColType::Timestamp2 { fsp } => (ty::TIMESTAMP2, vec![fsp]),
            ColType::VarString { max_bytes } => {
                (ty::VARCHAR, (max_bytes as u16).to_le_bytes().to_vec())
            }
            ColType::String { max_bytes } => {
                // Lengths over 255 keep their two high bits in the real
                // type byte (MariaDB's encoding, XORed in).
                let real = ty::STRING ^ (((max_bytes & 0x300) >> 4) as u8);
                (ty::STRING, vec![real, max_bytes as u8])
            }
            ColType::Blob { pack } => (ty::BLOB, vec![pack]),
            ColType::Enum { pack } => (ty::STRING, vec![ty::ENUM, pack]),
            ColType::Set { pack } => (ty::STRING, vec![ty::SET, pack]),
        };
        MapColumn { ty, meta, nullable }
    }
}

/// A value to pack.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    /// `mantissa * 10^-scale`.
    Decimal(i128, u8),
    Bytes(&'a [u8]),
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
    /// Seconds since the epoch (UTC) and microseconds.
    Timestamp {
        secs: i64,
        us: u32,
    },
    /// Signed microseconds.
    Time(i64),
}

/// Appends one row image of `cols`: the null bitmap (padding bits set, as
/// MariaDB writes it), then each non-null value.
pub fn put_row(out: &mut Vec<u8>, cols: &[ColType], cells: &[Cell<'_>]) -> Result<()> {
    if cols.len() != cells.len() {
        return Err(Error::Invalid(format!(
            "row of {} values for {} columns",
            cells.len(),
            cols.len()
        )));
    }
    let at = out.len();
    out.resize(at + cols.len().div_ceil(8), 0xff);
    for (i, (c, v)) in cols.iter().zip(cells).enumerate() {
        if matches!(v, Cell::Null) {
            continue;
        }
        out[at + i / 8] &= !(1 << (i % 8));
        put_value(out, c, v)?;
    }
    Ok(())
}

fn mismatch(c: &ColType, v: &Cell<'_>) -> Error {
    Error::Invalid(format!("value {v:?} for a {c:?} column"))
}

fn int_of(v: &Cell<'_>) -> Option<u64> {
    match *v {
        Cell::Int(i) => Some(i as u64),
        Cell::UInt(u) => Some(u),
        _ => None,
    }
}

/// Appends one non-null value.
fn put_value(out: &mut Vec<u8>, c: &ColType, v: &Cell<'_>) -> Result<()> {
    match *c {
        ColType::Int(n) => {
            let x = int_of(v).ok_or_else(|| mismatch(c, v))?;
            let n = if matches!(n, 1..=4) { n } else { 8 } as usize;
            out.extend_from_slice(&x.to_le_bytes()[..n]);
        }
        ColType::Float => match *v {
            Cell::Double(d) => out.extend_from_slice(&(d as f32).to_le_bytes()),
            _ => return Err(mismatch(c, v)),
        },
        ColType::Double => match *v {
            Cell::Double(d) => out.extend_from_slice(&d.to_le_bytes()),
            _ => return Err(mismatch(c, v)),
        },
        ColType::Decimal { precision, scale } => {
            let (m, s) = match *v {
                Cell::Decimal(m, s) => (m, s),
                Cell::Int(i) => (i as i128, 0),
                Cell::UInt(u) => (u as i128, 0),
                _ => return Err(mismatch(c, v)),
            };
            put_decimal(out, precision, scale, m, s)?;
        }
        ColType::Year => {
            let y = int_of(v).ok_or_else(|| mismatch(c, v))?;
            out.push(if y == 0 {
                0
            } else {
                y.saturating_sub(1900) as u8
            });
        }
        ColType::Date => match *v {
            Cell::Date { y, m, d } => {
                let p = d | (m << 5) | (y << 9);
                out.extend_from_slice(&p.to_le_bytes()[..3]);
            }
            _ => return Err(mismatch(c, v)),
        },
        ColType::DateTime2 { fsp } => match *v {
            Cell::DateTime {
                y,
                mo,
                d,
                h,
                mi,
                s,
                us,
            } => {
                let ymd = (((y as u64) * 13 + mo as u64) << 5) | d as u64;
                let hms = ((h as u64) << 12) | ((mi as u64) << 6) | s as u64;
                let packed = ((ymd << 17) | hms) + 0x80_0000_0000;
                out.extend_from_slice(&packed.to_be_bytes()[3..]);
                put_frac(out, fsp, us);
            }
            _ => return Err(mismatch(c, v)),
        },
        ColType::Timestamp2 { fsp } => match *v {
            Cell::Timestamp { secs, us } => {
                out.extend_from_slice(&(secs.clamp(0, u32::MAX as i64) as u32).to_be_bytes());
                put_frac(out, fsp, us);
            }
            _ => return Err(mismatch(c, v)),
        },
        ColType::Time2 { fsp } => match *v {
            Cell::Time(t) => put_time2(out, fsp, t),
            _ => return Err(mismatch(c, v)),
        },
        ColType::VarString { max_bytes } | ColType::String { max_bytes } => match *v {
            Cell::Bytes(b) => {
                if b.len() > max_bytes as usize {
                    return Err(Error::Invalid(format!(
                        "a value of {} bytes in a column of at most {max_bytes}",
                        b.len()
                    )));
                }
                if max_bytes > 255 {
                    out.extend_from_slice(&(b.len() as u16).to_le_bytes());
                } else {
                    out.push(b.len() as u8);
                }
                out.extend_from_slice(b);
            }
            _ => return Err(mismatch(c, v)),
        },
        ColType::Blob { pack } => match *v {
            Cell::Bytes(b) => {
                let n = pack.clamp(1, 4) as usize;
                out.extend_from_slice(&(b.len() as u32).to_le_bytes()[..n]);
                out.extend_from_slice(b);
            }
            _ => return Err(mismatch(c, v)),
        },
        ColType::Enum { pack } | ColType::Set { pack } => {
            let x = int_of(v).ok_or_else(|| mismatch(c, v))?;
            let n = pack.clamp(1, 8) as usize;
            out.extend_from_slice(&x.to_le_bytes()[..n]);
        }
    }
    Ok(())
}

/// Fractional seconds of DATETIME2/TIMESTAMP2: 0 to 3 big-endian bytes.
fn put_frac(out: &mut Vec<u8>, fsp: u8, us: u32) {
    match fsp {
        1 | 2 => out.push((us / 10_000) as u8),
        3 | 4 => out.extend_from_slice(&((us / 100) as u16).to_be_bytes()),
        5 | 6 => out.extend_from_slice(&us.to_be_bytes()[1..]),
        _ => {}
    }
}

/// TIME2: the packed time (`(hh<<12 | mm<<6 | ss) << 24 | us`, negated for
/// negative times) in 3 + 0..3 big-endian bytes.
fn put_time2(out: &mut Vec<u8>, fsp: u8, t: i64) {
    let a = t.unsigned_abs();
    let (secs, us) = (a / 1_000_000, (a % 1_000_000) as i64);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mag = ((((h << 12) | (m << 6) | s) as i64) << 24) + us;
    let nr = if t < 0 { -mag } else { mag };
    let int3 = |out: &mut Vec<u8>, x: i64| {
        out.extend_from_slice(&((x + 0x80_0000) as u32).to_be_bytes()[1..]);
    };
    let frac = nr % (1 << 24);
    match fsp {
        1 | 2 => {
            int3(out, nr >> 24);
            out.push((frac / 10_000) as i8 as u8);
        }
        3 | 4 => {
            int3(out, nr >> 24);
            out.extend_from_slice(&((frac / 100) as i16).to_be_bytes());
        }
        5 | 6 => out.extend_from_slice(&((nr + 0x8000_0000_0000) as u64).to_be_bytes()[2..]),
        _ => int3(out, nr >> 24),
    }
}

/// Bytes of a group of `n` leftover decimal digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/// MySQL's binary DECIMAL(precision, scale) of `m * 10^-s`: base 10^9
/// groups big-endian, a partial group at each end, the sign in the top
/// bit (negative values stored inverted).
pub fn put_decimal(out: &mut Vec<u8>, precision: u8, scale: u8, m: i128, s: u8) -> Result<()> {
    let bad = || {
        Error::Invalid(format!(
            "decimal {m}e-{s} does not fit ({precision},{scale})"
        ))
    };
    if scale > precision || scale > 38 {
        return Err(bad());
    }
    // The value at the column's scale.
    let mut a = m.unsigned_abs();
    if s < scale {
        a = a
            .checked_mul(10u128.pow((scale - s) as u32))
            .ok_or_else(bad)?;
    } else if s > scale {
        a /= 10u128.pow((s - scale) as u32);
    }
    let neg = m < 0 && a != 0;
    let p10 = 10u128.pow(scale as u32);
    let (mut ip, fp) = (a / p10, a % p10);
    let intg = (precision - scale) as usize;
    let (intg0, intg0x) = (intg / 9, intg % 9);
    let (frac0, frac0x) = (scale as usize / 9, scale as usize % 9);
    let start = out.len();
    // Integer groups, least significant first, then reversed into place.
    let mut groups: Vec<(u32, usize)> = Vec::with_capacity(intg0 + 1);
    for _ in 0..intg0 {
        groups.push(((ip % 1_000_000_000) as u32, 4));
        ip /= 1_000_000_000;
    }
    if intg0x > 0 {
        let lim = 10u128.pow(intg0x as u32);
        groups.push(((ip % lim) as u32, DIG2BYTES[intg0x]));
        ip /= lim;
    }
    if ip != 0 {
        return Err(bad());
    }
    for &(g, n) in groups.iter().rev() {
        out.extend_from_slice(&g.to_be_bytes()[4 - n..]);
    }
    // Fraction groups, most significant first.
    let mut rest = scale as u32;
    for _ in 0..frac0 {
        rest -= 9;
        let g = (fp / 10u128.pow(rest) % 1_000_000_000) as u32;
        out.extend_from_slice(&g.to_be_bytes());
    }
    if frac0x > 0 {
        let g = (fp % 10u128.pow(frac0x as u32)) as u32;
        let n = DIG2BYTES[frac0x];
        out.extend_from_slice(&g.to_be_bytes()[4 - n..]);
    }
    if out.len() == start {
        return Ok(());
    }
    if neg {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    out[start] ^= 0x80;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u8, s: u8, m: i128, ms: u8) -> Vec<u8> {
        let mut b = Vec::new();
        put_decimal(&mut b, p, s, m, ms).expect("fits");
        b
    }

    #[test]
    fn decimals_as_mariadb_packs_them() {
        // Bytes from a MariaDB 10.11 binlog (see lib.rs tests).
        assert_eq!(dec(10, 2, -12345, 2), [0x7f, 0xff, 0xff, 0x84, 0xd2]);
        assert_eq!(
            dec(20, 5, 12345678901234567, 5),
            [0x80, 0x00, 0x7b, 0x1b, 0x3a, 0x0c, 0x14, 0x00, 0x87, 0x07]
        );
        // Rescaled to the column's scale; zero is never negative.
        assert_eq!(dec(10, 2, -1234500, 4), [0x7f, 0xff, 0xff, 0x84, 0xd2]);
        assert_eq!(dec(4, 1, 0, 0), dec(4, 1, -0, 3));
        assert!(put_decimal(&mut Vec::new(), 3, 1, 10000, 1).is_err());
    }

    #[test]
    fn temporal_packing() {
        let mut b = Vec::new();
        let dt = Cell::DateTime {
            y: 2024,
            mo: 1,
            d: 2,
            h: 3,
            mi: 4,
            s: 5,
            us: 123456,
        };
        put_value(&mut b, &ColType::DateTime2 { fsp: 0 }, &dt).expect("ok");
        assert_eq!(b, [0x99, 0xb2, 0x44, 0x31, 0x05]);
        b.clear();
        put_value(&mut b, &ColType::DateTime2 { fsp: 6 }, &dt).expect("ok");
        assert_eq!(b, [0x99, 0xb2, 0x44, 0x31, 0x05, 0x01, 0xe2, 0x40]);
        b.clear();
        let ts = Cell::Timestamp {
            secs: 1_704_164_645,
            us: 0,
        };
        put_value(&mut b, &ColType::Timestamp2 { fsp: 0 }, &ts).expect("ok");
        assert_eq!(b, [0x65, 0x93, 0x7d, 0x25]);
        b.clear();
        put_value(
            &mut b,
            &ColType::Date,
            &Cell::Date {
                y: 2024,
                m: 1,
                d: 2,
            },
        )
        .expect("ok");
        assert_eq!(b, [0x22, 0xd0, 0x0f]);
        b.clear();
        // TIME2 '-01:00:00.5' at fsp 1: int part floored, fraction signed.
        put_time2(&mut b, 1, -3_600_500_000);
        assert_eq!(b, [0x7f, 0xef, 0xff, 0xce]);
    }

    #[test]
    fn null_bitmap_keeps_padding_bits() {
        let cols = [ColType::Int(4), ColType::VarString { max_bytes: 80 }];
        let mut b = Vec::new();
        put_row(&mut b, &cols, &[Cell::Int(1), Cell::Null]).expect("ok");
        assert_eq!(b, [0xfe, 1, 0, 0, 0]);
        assert!(put_row(&mut b, &cols, &[Cell::Int(1)]).is_err());
        assert!(put_row(&mut b, &cols, &[Cell::Double(1.0), Cell::Null]).is_err());
    }
}
