//! COM_STMT_EXECUTE: the [`ExecutePacket`] header and decoding of its binary-protocol
//! parameter values ([`decode_params`]) into [`Param`]s.

use crate::codec::Reader;
use crate::consts::ColumnType;
use crate::error::{malformed, Result};

/// Header of a COM_STMT_EXECUTE; the parameter block stays raw until
/// [`decode_params`] is called with the statement's parameter count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutePacket {
    pub stmt_id: u32,
    /// Cursor type flags (ignored: no cursors).
    pub flags: u8,
    pub iteration_count: u32,
    /// Null bitmap, new-params-bound flag, types, values.
    pub params: Vec<u8>,
}

impl ExecutePacket {
    /// Parses the packet body after the command byte.
    pub fn parse(b: &[u8]) -> Result<ExecutePacket> {
        let mut r = Reader::new(b);
        let stmt_id = r.u32()?;
        let flags = r.u8()?;
        let iteration_count = r.u32()?;
        Ok(ExecutePacket {
            stmt_id,
            flags,
            iteration_count,
            params: r.take_rest().to_vec(),
        })
    }
}

/// A parameter's bound type: the type byte and the unsigned flag (0x80 of the flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    pub col_type: ColumnType,
    pub unsigned: bool,
}

/// One decoded parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    /// Signed TINY/SHORT/YEAR/LONG/INT24/LONGLONG.
    Int(i64),
    /// Unsigned TINY/SHORT/LONG/INT24/LONGLONG.
    UInt(u64),
    Float(f32),
    Double(f64),
    /// Strings, decimals, blobs, JSON, bits, enums/sets, geometry, long data.
    Bytes(Vec<u8>),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    /// DATETIME and TIMESTAMP.
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micro: u32,
    },
    Time {
        neg: bool,
        days: u32,
        hours: u8,
        minutes: u8,
        seconds: u8,
        micro: u32,
    },
}

/// Decodes the parameters of an execute packet.
///
/// `types` persists per statement: when the packet's new-params-bound flag is 1 it is
/// replaced, otherwise the previously bound types are used (`Err` if there are none).
/// `long_data[i]`, filled from COM_STMT_SEND_LONG_DATA, supplies parameter `i` when
/// present (its value is not inline); it is taken (left `None`).
pub fn decode_params(
    pkt: &ExecutePacket,
    num_params: usize,
    types: &mut Vec<ParamType>,
    long_data: &mut [Option<Vec<u8>>],
) -> Result<Vec<Param>> {
    if num_params == 0 {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(&pkt.params);
    let bitmap = r.take(num_params.div_ceil(8))?;
    let bound = r.u8()?;
    match bound {
        1 => {
            types.clear();
            for _ in 0..num_params {
                let t = r.u8()?;
                let f = r.u8()?;
                let col_type = ColumnType::from_u8(t)
                    .ok_or_else(|| malformed(format!("unknown parameter type {t}")))?;
                types.push(ParamType {
                    col_type,
                    unsigned: f & 0x80 != 0,
                });
            }
        }
        0 => {
            if types.len() != num_params {
                return Err(malformed("parameters were never bound to types"));
            }
        }
        x => return Err(malformed(format!("invalid new_params_bound flag {x}"))),
    }
    let mut out = Vec::with_capacity(num_params);
    for (i, t) in types.iter().enumerate() {
        if let Some(data) = long_data.get_mut(i).and_then(Option::take) {
            out.push(Param::Bytes(data));
        } else if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            out.push(Param::Null);
        } else {
            out.push(decode_value(&mut r, *t)?);
        }
    }
    Ok(out)
}

fn int(v: i64, u: u64, unsigned: bool) -> Param {
    if unsigned {
        Param::UInt(u)
    } else {
        Param::Int(v)
    }
}

fn decode_value(r: &mut Reader<'_>, t: ParamType) -> Result<Param> {
    use ColumnType::*;
    let u = t.unsigned;
    Ok(match t.col_type {
        Null => Param::Null,
        Tiny => {
            let b = r.u8()?;
            int(i64::from(b as i8), u64::from(b), u)
        }
        Short | Year => {
            let b = r.u16()?;
            int(i64::from(b as i16), u64::from(b), u)
        }
        Long | Int24 => {
            let b = r.u32()?;
            int(i64::from(b as i32), u64::from(b), u)
        }
        LongLong => {
            let b = r.u64()?;
            int(b as i64, b, u)
        }
        Float => Param::Float(f32::from_bits(r.u32()?)),
        Double => Param::Double(f64::from_bits(r.u64()?)),
        Date | NewDate | DateTime | Timestamp => {
            let n = r.u8()?;
            let mut v = Reader::new(r.take(usize::from(n))?);
            let (mut year, mut month, mut day) = (0, 0, 0);
            let (mut hour, mut minute, mut second, mut micro) = (0, 0, 0, 0);
            match n {
                0 => {}
                4 | 7 | 11 => {
                    year = v.u16()?;
                    month = v.u8()?;
                    day = v.u8()?;
                    if n >= 7 {
                        hour = v.u8()?;
                        minute = v.u8()?;
                        second = v.u8()?;
                    }
                    if n == 11 {
                        micro = v.u32()?;
                    }
                }
                _ => return Err(malformed(format!("invalid date/time length {n}"))),
            }
            if matches!(t.col_type, Date | NewDate) {
                Param::Date { year, month, day }
            } else {
                Param::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micro,
                }
            }
        }
        Time => {
            let n = r.u8()?;
            let mut v = Reader::new(r.take(usize::from(n))?);
            match n {
                0 => Param::Time {
                    neg: false,
                    days: 0,
                    hours: 0,
                    minutes: 0,
                    seconds: 0,
                    micro: 0,
                },
                8 | 12 => Param::Time {
                    neg: v.u8()? != 0,
                    days: v.u32()?,
                    hours: v.u8()?,
                    minutes: v.u8()?,
                    seconds: v.u8()?,
                    micro: if n == 12 { v.u32()? } else { 0 },
                },
                _ => return Err(malformed(format!("invalid time length {n}"))),
            }
        }
        Decimal | NewDecimal | VarChar | Bit | Json | Enum | Set | TinyBlob | MediumBlob
        | LongBlob | Blob | VarString | String | Geometry => {
            Param::Bytes(r.lenenc_bytes()?.to_vec())
        }
    })
}
