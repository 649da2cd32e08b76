//! Compact row values: the columns a primary-key entry's value holds (all
//! columns not in the primary key). Byte layout in docs/formats/rows.md:
//!
//! ```text
//! version: u8 = 1
//! ncols:   varint            columns stored (older rows may hold fewer
//!                            after ADD COLUMN; missing ones take defaults)
//! nulls:   ceil(ncols/8) bytes, bit i set = column i is NULL
//! values:  for each non-NULL column, by type:
//!   signed integers      zigzag varint
//!   unsigned integers    varint
//!   FLOAT                4 bytes little-endian f32
//!   DOUBLE               8 bytes little-endian f64
//!   DECIMAL              zigzag varint of the mantissa at the column scale
//!                        (i128 as two varints when it does not fit i64)
//!   strings / blobs      varint length + bytes
//!   DATE                 varint
//!   DATETIME, TIMESTAMP, TIME   zigzag varint
//! ```
//! Integrity comes from the engine's per-block CRC32C; decoding is
//! bounds-checked and returns `Corruption` on bad bytes.
use crate::value::{ColumnType, TypeKind, Value};
use crate::{Error, Result};
use lsm::coding::{put_varint64, Decoder};

/// Row format version written today.
pub const ROW_FORMAT_V1: u8 = 1;

fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Encodes `vals` (already coerced to `types`) into `out`.
pub fn encode(out: &mut Vec<u8>, types: &[&ColumnType], vals: &[&Value]) {
    out.push(ROW_FORMAT_V1);
    put_varint64(out, vals.len() as u64);
    let nb = vals.len().div_ceil(8);
    let base = out.len();
    out.resize(base + nb, 0);
    for (i, v) in vals.iter().enumerate() {
        if v.is_null() {
            out[base + i / 8] |= 1 << (i % 8);
        }
    }
    for (t, v) in types.iter().zip(vals) {
        if !v.is_null() {
            encode_value(out, t, v);
        }
    }
}

fn encode_value(out: &mut Vec<u8>, t: &ColumnType, v: &Value) {
    match t.kind {
        TypeKind::Float => out.extend_from_slice(&(v.to_f64().unwrap_or(0.0) as f32).to_le_bytes()),
        TypeKind::Double => out.extend_from_slice(&v.to_f64().unwrap_or(0.0).to_le_bytes()),
        TypeKind::Decimal => {
            let m = match v {
                Value::Decimal(m, _) => *m,
                o => o.to_i128().unwrap_or(0),
            };
            if let Ok(small) = i64::try_from(m) {
                put_varint64(out, zigzag(small) << 1);
            } else {
                put_varint64(out, (zigzag((m >> 64) as i64) << 1) | 1);
                put_varint64(out, m as u64);
            }
        }
        TypeKind::Date => put_varint64(
            out,
            match v {
                Value::Date(d) => *d as u32 as u64,
                _ => 0,
            },
        ),
        TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time => put_varint64(
            out,
            zigzag(match v {
                Value::DateTime(t) | Value::Time(t) => *t,
                _ => 0,
            }),
        ),
        TypeKind::Enum | TypeKind::Set => put_varint64(out, crate::members::stored_number(t, v)),
        _ if t.is_string() => {
            let b: &[u8] = match v {
                Value::Bytes(b) => b,
                _ => &[],
            };
            put_varint64(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        _ => {
            if t.unsigned {
                put_varint64(out, v.to_i128().unwrap_or(0) as u64)
            } else {
                put_varint64(out, zigzag(v.to_i128().unwrap_or(0) as i64))
            }
        }
    }
}

fn corrupt(what: &str) -> Error {
    Error::Corruption(format!("row value: {what}"))
}

/// A decoded view of a row value: call `next` once per stored column.
pub struct RowReader<'a> {
    d: Decoder<'a>,
    nulls: &'a [u8],
    ncols: usize,
    idx: usize,
}

impl<'a> RowReader<'a> {
    /// Parses the header.
    pub fn new(buf: &'a [u8]) -> Result<RowReader<'a>> {
        let mut d = Decoder::new(buf);
        match d.u8() {
            Some(ROW_FORMAT_V1) => {}
            Some(v) => return Err(corrupt(&format!("unknown row format version {v}"))),
            None => return Err(corrupt("empty")),
        }
        let ncols = d.varint64().ok_or_else(|| corrupt("column count"))? as usize;
        if ncols > 65536 {
            return Err(corrupt("column count too large"));
        }
        let nulls = d
            .bytes(ncols.div_ceil(8))
            .ok_or_else(|| corrupt("null bitmap"))?;
        Ok(RowReader {
            d,
            nulls,
            ncols,
            idx: 0,
        })
    }

    /// Columns stored in this value.
    pub fn stored(&self) -> usize {
        self.ncols
    }

    /// Decodes the next column (of type `t`), or skips it if `!want`
    /// (returning Null). Past the stored columns, returns `None`.
    pub fn next(&mut self, t: &ColumnType, want: bool) -> Result<Option<Value>> {
        if self.idx >= self.ncols {
            return Ok(None);
        }
        let i = self.idx;
        self.idx += 1;
        if self.nulls[i / 8] & (1 << (i % 8)) != 0 {
            return Ok(Some(Value::Null));
        }
        let d = &mut self.d;
        let bad = || corrupt("truncated value");
        let v = match t.kind {
            TypeKind::Float => {
                let b = d.bytes(4).ok_or_else(bad)?;
                Value::Double(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
            }
            TypeKind::Double => {
                let u = d.fixed64().ok_or_else(bad)?;
                Value::Double(f64::from_bits(u))
            }
            TypeKind::Decimal => {
                let h = d.varint64().ok_or_else(bad)?;
                let m = if h & 1 == 0 {
                    unzigzag(h >> 1) as i128
                } else {
                    let lo = d.varint64().ok_or_else(bad)?;
                    ((unzigzag(h >> 1) as i128) << 64) | lo as i128
                };
                Value::Decimal(m, t.scale)
            }
            TypeKind::Date => Value::Date(d.varint64().ok_or_else(bad)? as u32 as i32),
            TypeKind::DateTime | TypeKind::Timestamp => {
                Value::DateTime(unzigzag(d.varint64().ok_or_else(bad)?))
            }
            TypeKind::Time => Value::Time(unzigzag(d.varint64().ok_or_else(bad)?)),
            TypeKind::Enum | TypeKind::Set => {
                crate::members::stored_value(t, d.varint64().ok_or_else(bad)?)
            }
            _ if t.is_string() => {
                let n = d.varint64().ok_or_else(bad)? as usize;
                let b = d.bytes(n).ok_or_else(bad)?;
                if want {
                    Value::Bytes(b.to_vec())
                } else {
                    Value::Null
                }
            }
            _ => {
                let u = d.varint64().ok_or_else(bad)?;
                if t.unsigned {
                    if t.kind == TypeKind::BigInt {
                        Value::UInt(u)
                    } else {
                        Value::Int(u as i64)
                    }
                } else {
                    Value::Int(unzigzag(u))
                }
            }
        };
        Ok(Some(if want { v } else { Value::Null }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let types = [
            ColumnType::new(TypeKind::Int),
            ColumnType {
                kind: TypeKind::BigInt,
                unsigned: true,
                len: 0,
                scale: 0,
                coll: crate::collation::Collation::Binary,
                members: crate::members::Members::NONE,
            },
            ColumnType::new(TypeKind::VarChar),
            ColumnType::new(TypeKind::Double),
            ColumnType {
                kind: TypeKind::Decimal,
                unsigned: false,
                len: 38,
                scale: 3,
                coll: crate::collation::Collation::Binary,
                members: crate::members::Members::NONE,
            },
            ColumnType::new(TypeKind::DateTime),
            ColumnType::new(TypeKind::Float),
        ];
        let vals = [
            Value::Int(-5),
            Value::UInt(u64::MAX),
            Value::Bytes(b"hello".to_vec()),
            Value::Null,
            Value::Decimal(-(1i128 << 100) - 7, 3),
            Value::DateTime(123456789),
            Value::Double(1.5),
        ];
        let refs: Vec<&Value> = vals.iter().collect();
        let mut buf = Vec::new();
        let trefs: Vec<&ColumnType> = types.iter().collect();
        encode(&mut buf, &trefs, &refs);
        let mut r = RowReader::new(&buf).unwrap();
        for (t, v) in types.iter().zip(&vals) {
            assert_eq!(r.next(t, true).unwrap().as_ref(), Some(v));
        }
        assert_eq!(r.next(&types[0], true).unwrap(), None);
        for cut in 0..buf.len() {
            let res = RowReader::new(&buf[..cut]).and_then(|mut r| {
                for t in &types {
                    r.next(t, true)?;
                }
                Ok(())
            });
            assert!(res.is_err(), "cut at {cut} decoded");
        }
    }
}
