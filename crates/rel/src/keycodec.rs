//! Order-preserving ("memcomparable") encoding of column values in keys:
//! comparing two encoded keys bytewise gives the SQL order of the values.
//! Byte layout in docs/formats/rows.md.
//!
//! - nullable column: one byte 0x00 (NULL, sorts first) or 0x01, then the value
//! - integers: big-endian in the column's width (1, 2, 3, 4 or 8 bytes),
//!   signed ones with the sign bit flipped
//! - FLOAT/DOUBLE: IEEE-754 double bits, sign bit flipped for positives and
//!   all bits flipped for negatives (8 bytes)
//! - DECIMAL: mantissa at the column's scale as a sign-flipped big-endian
//!   i64 (precision <= 18) or i128
//! - BINARY/VARBINARY/BLOB: the bytes with 0x00 escaped as 0x00 0xFF,
//!   terminated by 0x00 0x01
//! - CHAR/VARCHAR/TEXT, by the table's key format (`KeyFormat`): format 2
//!   (tables created or rebuilt since) the collation's `key_image`: PAD
//!   SPACE segments ordered as MySQL pads (`collation::pad`), NO PAD the
//!   escaped weights; format 1 (tables written before) the weights without
//!   trailing spaces (`_bin` PAD SPACE: the bytes without them), escaped
//!   and terminated as above, which sorts a string continuing with a
//!   character below a space after its prefix (the old order, kept so that
//!   old indexes stay consistent until the table is rebuilt)
//! - ENUM: the member number, 2 bytes big-endian; SET: the bitmask, 8 bytes
//! - DATE: 4-byte packed; DATETIME/TIMESTAMP/TIME: 8-byte sign-flipped
use crate::collation::pad;
use crate::value::{ColumnType, TypeKind, Value};
use crate::{Error, Result};

/// How a table's index keys hold strings (recorded in its definition,
/// docs/formats/catalog.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyFormat {
    /// Format 1: trimmed weights (tables whose definition predates key
    /// formats). Strings continuing with a character that weighs less
    /// than a space sort after their prefix in such an index.
    Trimmed,
    /// Format 2: PAD SPACE segments (`Collation::key_image`), MySQL's
    /// order. Every table created or rebuilt gets it.
    #[default]
    PadSpace,
}

/// Appends the key image of `v` for a column of type `ty`. `v` must already
/// be converted to the column's type (see `convert::coerce`).
pub fn encode(
    out: &mut Vec<u8>,
    fmt: KeyFormat,
    ty: &ColumnType,
    nullable: bool,
    v: &Value,
) -> Result<()> {
    if nullable {
        if v.is_null() {
            out.push(0);
            return Ok(());
        }
        out.push(1);
    } else if v.is_null() {
        return Err(Error::Internal("NULL in a NOT NULL key column".into()));
    }
    match ty.kind {
        TypeKind::Float | TypeKind::Double => {
            let d = v.to_f64().unwrap_or(0.0);
            let bits = d.to_bits();
            let k = if d.is_sign_negative() {
                !bits
            } else {
                bits ^ (1 << 63)
            };
            out.extend_from_slice(&k.to_be_bytes());
        }
        TypeKind::Decimal => {
            let m = match v {
                Value::Decimal(m, _) => *m,
                other => other.to_i128().unwrap_or(0),
            };
            if ty.len <= 18 {
                out.extend_from_slice(&((m as i64 as u64) ^ (1 << 63)).to_be_bytes());
            } else {
                out.extend_from_slice(&((m as u128) ^ (1 << 127)).to_be_bytes());
            }
        }
        TypeKind::Date => {
            let d = match v {
                Value::Date(d) => *d,
                _ => 0,
            };
            out.extend_from_slice(&(d as u32).to_be_bytes());
        }
        TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time => {
            let t = match v {
                Value::DateTime(t) | Value::Time(t) => *t,
                _ => 0,
            };
            out.extend_from_slice(&((t as u64) ^ (1 << 63)).to_be_bytes());
        }
        TypeKind::Enum => {
            let n = crate::members::stored_number(ty, v).min(u16::MAX as u64) as u16;
            out.extend_from_slice(&n.to_be_bytes());
        }
        TypeKind::Set => {
            out.extend_from_slice(&crate::members::stored_number(ty, v).to_be_bytes());
        }
        _ if ty.is_string() => {
            let b: &[u8] = match v {
                Value::Bytes(b) => b,
                _ => return Err(Error::Internal("non-string value in a string key".into())),
            };
            if !ty.is_binary() && fmt == KeyFormat::PadSpace {
                ty.coll.key_image(b, out);
                return Ok(());
            }
            let mut weights = Vec::new();
            let b = if ty.is_binary() {
                b
            } else if !ty.coll.is_lossy_v1() {
                trim_trailing_spaces(b)
            } else {
                ty.coll.weights(b, &mut weights);
                &weights
            };
            for &c in b {
                out.push(c);
                if c == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0, 1]);
        }
        _ => {
            let w = ty.int_width();
            let i = v.to_i128().unwrap_or(0);
            let u = if ty.unsigned {
                i as u64
            } else {
                (i as i64 as u64) ^ (1u64 << (w * 8 - 1))
            };
            out.extend_from_slice(&u.to_be_bytes()[8 - w..]);
        }
    }
    Ok(())
}

/// Removes trailing spaces (PAD SPACE comparison).
pub fn trim_trailing_spaces(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
    &b[..end]
}

fn take<'a>(src: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    if src.len() < n {
        return Err(Error::Corruption("key image too short".into()));
    }
    let (a, b) = src.split_at(n);
    *src = b;
    Ok(a)
}

/// The big-endian number of `b` (at most 8 bytes), byte by byte: the
/// widths are 1 to 8 and known only at run time, where a copy into an
/// array called `memcpy`.
fn be_u64(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | u64::from(x))
}

/// Decodes one key image from the front of `src`, advancing it.
pub fn decode(src: &mut &[u8], fmt: KeyFormat, ty: &ColumnType, nullable: bool) -> Result<Value> {
    if nullable {
        match take(src, 1)?[0] {
            0 => return Ok(Value::Null),
            1 => {}
            _ => return Err(Error::Corruption("bad NULL marker in key".into())),
        }
    }
    Ok(match ty.kind {
        TypeKind::Float | TypeKind::Double => {
            let k = be_u64(take(src, 8)?);
            let bits = if k & (1 << 63) != 0 {
                k ^ (1 << 63)
            } else {
                !k
            };
            Value::Double(f64::from_bits(bits))
        }
        TypeKind::Decimal => {
            let m = if ty.len <= 18 {
                (be_u64(take(src, 8)?) ^ (1 << 63)) as i64 as i128
            } else {
                let b = take(src, 16)?;
                let mut a = [0u8; 16];
                a.copy_from_slice(b);
                (u128::from_be_bytes(a) ^ (1 << 127)) as i128
            };
            Value::Decimal(m, ty.scale)
        }
        TypeKind::Date => Value::Date(be_u64(take(src, 4)?) as u32 as i32),
        TypeKind::DateTime | TypeKind::Timestamp => {
            Value::DateTime((be_u64(take(src, 8)?) ^ (1 << 63)) as i64)
        }
        TypeKind::Time => Value::Time((be_u64(take(src, 8)?) ^ (1 << 63)) as i64),
        TypeKind::Enum => crate::members::stored_value(ty, be_u64(take(src, 2)?)),
        TypeKind::Set => crate::members::stored_value(ty, be_u64(take(src, 8)?)),
        _ if ty.is_string() => {
            if is_lossy(ty, fmt) {
                return Err(Error::Internal(format!(
                    "the key image of a {} column holds weights, not the value",
                    ty.coll.name()
                )));
            }
            if pad_segments(ty, fmt) {
                return pad::decode_bin_image(src)
                    .map(Value::Bytes)
                    .ok_or_else(|| Error::Corruption("bad string segment in key".into()));
            }
            let mut out = Vec::new();
            loop {
                let c = take(src, 1)?[0];
                if c != 0 {
                    out.push(c);
                    continue;
                }
                match take(src, 1)?[0] {
                    0xFF => out.push(0),
                    1 => break,
                    _ => return Err(Error::Corruption("bad string escape in key".into())),
                }
            }
            Value::Bytes(out)
        }
        _ => {
            let w = ty.int_width();
            let u = be_u64(take(src, w)?);
            if ty.unsigned {
                if ty.kind == TypeKind::BigInt {
                    Value::UInt(u)
                } else {
                    Value::Int(u as i64)
                }
            } else {
                let bits = w * 8;
                let x = u ^ (1u64 << (bits - 1));
                // sign-extend from `bits`
                let shift = 64 - bits;
                Value::Int(((x << shift) as i64) >> shift)
            }
        }
    })
}

/// True when a column's key image cannot be decoded into its value: its
/// value is kept in the row value instead, and an index holding it does
/// not cover it. Format 1: a string column under a collation with weights
/// other than its bytes. Format 2: every CHAR/VARCHAR/TEXT column but a
/// CHAR under a PAD SPACE `_bin` collation (a PAD SPACE image drops
/// trailing spaces, which VARCHAR and TEXT keep and CHAR does not).
pub fn is_lossy(ty: &ColumnType, fmt: KeyFormat) -> bool {
    let bin_char = ty.kind == TypeKind::Char && ty.coll.is_bin() && ty.coll.pad_space();
    ty.is_text()
        && !ty.is_enum_or_set()
        && match fmt {
            KeyFormat::PadSpace => !bin_char,
            KeyFormat::Trimmed => ty.coll.is_lossy_v1(),
        }
}

/// True when a column's key image is `collation::pad` segments.
fn pad_segments(ty: &ColumnType, fmt: KeyFormat) -> bool {
    fmt == KeyFormat::PadSpace && ty.is_text() && !ty.is_enum_or_set() && ty.coll.pad_space()
}

/// Skips one key image at the front of `src`.
pub fn skip(src: &mut &[u8], fmt: KeyFormat, ty: &ColumnType, nullable: bool) -> Result<()> {
    if pad_segments(ty, fmt) {
        if nullable {
            match take(src, 1)?[0] {
                0 => return Ok(()),
                1 => {}
                _ => return Err(Error::Corruption("bad NULL marker in key".into())),
            }
        }
        return pad::skip_image(src)
            .ok_or_else(|| Error::Corruption("bad string segment in key".into()));
    }
    if ty.is_string() {
        if nullable {
            match take(src, 1)?[0] {
                0 => return Ok(()),
                1 => {}
                _ => return Err(Error::Corruption("bad NULL marker in key".into())),
            }
        }
        loop {
            if take(src, 1)?[0] != 0 {
                continue;
            }
            match take(src, 1)?[0] {
                0xFF => {}
                1 => return Ok(()),
                _ => return Err(Error::Corruption("bad string escape in key".into())),
            }
        }
    }
    decode(src, fmt, ty, nullable).map(|_| ())
}

/// The 4-byte prefix of every key of index `id`.
pub fn index_prefix(id: u32) -> [u8; 4] {
    id.to_be_bytes()
}

/// The smallest key greater than every key starting with `prefix`
/// (None when the prefix is all 0xFF).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut v = prefix.to_vec();
    while let Some(last) = v.pop() {
        if last != 0xFF {
            v.push(last + 1);
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::compare;

    fn ty(kind: TypeKind, unsigned: bool, len: u32, scale: u8) -> ColumnType {
        ColumnType {
            kind,
            unsigned,
            len,
            scale,
            coll: crate::collation::Collation::Utf8mb4Bin,
            members: crate::members::Members::NONE,
        }
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn random_value(r: &mut Rng, t: &ColumnType) -> Value {
        if r.next() % 10 == 0 {
            return Value::Null;
        }
        match t.kind {
            TypeKind::Double => Value::Double((r.next() as i64 as f64) / 1e6),
            TypeKind::Decimal => Value::Decimal((r.next() as i64 % 1_000_000_000) as i128, t.scale),
            TypeKind::Char | TypeKind::VarChar | TypeKind::VarBinary | TypeKind::Blob => {
                // binary strings keep trailing spaces in keys (and compare() counts them)
                let n = (r.next() % 6) as usize;
                let alphabet: &[u8] = if t.is_binary() {
                    &[0, 1, b'a', 0xFF]
                } else {
                    &[0, 1, b' ', b'a', 0xFF]
                };
                Value::Bytes(
                    (0..n)
                        .map(|_| alphabet[(r.next() % alphabet.len() as u64) as usize])
                        .collect(),
                )
            }
            TypeKind::DateTime => Value::DateTime((r.next() % (1u64 << 50)) as i64),
            _ => {
                let (lo, hi) = t.int_range();
                let span = (hi - lo + 1) as u128;
                let v = lo + ((r.next() as u128 * 7919) % span) as i128;
                if t.unsigned && t.kind == TypeKind::BigInt {
                    Value::UInt(v as u64)
                } else {
                    Value::Int(v as i64)
                }
            }
        }
    }

    #[test]
    fn order_and_round_trip_are_preserved() {
        let seed: u64 = std::env::var("SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_1234);
        println!("keycodec seed {seed} (rerun with SEED={seed})");
        let mut r = Rng(seed | 1);
        let types = [
            ty(TypeKind::TinyInt, false, 0, 0),
            ty(TypeKind::MediumInt, true, 0, 0),
            ty(TypeKind::Int, false, 0, 0),
            ty(TypeKind::BigInt, true, 0, 0),
            ty(TypeKind::BigInt, false, 0, 0),
            ty(TypeKind::Double, false, 0, 0),
            ty(TypeKind::Decimal, false, 12, 2),
            ty(TypeKind::Decimal, false, 30, 4),
            ty(TypeKind::VarBinary, false, 10, 0),
            ty(TypeKind::VarChar, false, 10, 0),
            ty(TypeKind::Blob, false, 10, 0),
            ty(TypeKind::DateTime, false, 0, 0),
        ];
        let mut char_bin = ty(TypeKind::Char, false, 10, 0);
        char_bin.coll = crate::collation::Collation::Latin1Bin;
        for fmt in [KeyFormat::Trimmed, KeyFormat::PadSpace] {
            for t in types.iter().chain([&char_bin]) {
                for _ in 0..2000 {
                    let a = random_value(&mut r, t);
                    let b = random_value(&mut r, t);
                    let (mut ka, mut kb) = (Vec::new(), Vec::new());
                    encode(&mut ka, fmt, t, true, &a).unwrap();
                    encode(&mut kb, fmt, t, true, &b).unwrap();
                    // Format 1 orders text as trimmed bytes (`cmp_pad_space`),
                    // format 2 as PAD SPACE (the collation's compare).
                    let want = match (&a, &b) {
                        (Value::Bytes(x), Value::Bytes(y))
                            if t.is_text() && fmt == KeyFormat::PadSpace =>
                        {
                            t.coll.compare(x, y)
                        }
                        (Value::Bytes(x), Value::Bytes(y)) if t.is_text() => {
                            crate::value::cmp_pad_space(x, y)
                        }
                        _ => compare(&a, &b),
                    };
                    assert_eq!(ka.cmp(&kb), want, "{fmt:?} {t:?} {a:?} {b:?}");
                    let mut s = &ka[..];
                    skip(&mut s, fmt, t, true).unwrap();
                    assert!(s.is_empty());
                    if is_lossy(t, fmt) {
                        continue;
                    }
                    let mut s = &ka[..];
                    let back = decode(&mut s, fmt, t, true).unwrap();
                    assert!(s.is_empty());
                    // Text comes back without trailing spaces (PAD SPACE).
                    let same = match (&back, &a) {
                        (Value::Bytes(x), Value::Bytes(y)) if t.is_text() => {
                            crate::value::cmp_pad_space(x, y)
                        }
                        _ => compare(&back, &a),
                    };
                    assert_eq!(same, std::cmp::Ordering::Equal, "{t:?} {a:?} {back:?}");
                }
            }
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let t = ty(TypeKind::VarChar, false, 10, 0);
        let mut s: &[u8] = &[b'a', 0, 7];
        assert!(decode(&mut s, KeyFormat::Trimmed, &t, false).is_err());
        let mut s: &[u8] = &[1, 2];
        let int = ty(TypeKind::Int, false, 0, 0);
        assert!(decode(&mut s, KeyFormat::PadSpace, &int, false).is_err());
        let c = ty(TypeKind::Char, false, 10, 0);
        for bad in [&[b'a'; 8][..], &[b'a'; 9], &[0; 18]] {
            let mut s = bad;
            assert!(decode(&mut s, KeyFormat::PadSpace, &c, false).is_err());
            let mut s = bad;
            assert!(skip(&mut s, KeyFormat::PadSpace, &c, false).is_err());
        }
        assert_eq!(prefix_successor(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xFF]), None);
    }
}
