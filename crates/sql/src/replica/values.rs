//! The applier's row work below the transaction: a binlog row image's
//! values converted to the replica's column types by position (BINARY
//! padding, CHAR trailing spaces, TIMESTAMP from epoch seconds, ...), the
//! stored row a before image names, and AUTO_INCREMENT counters moved past
//! replicated values.
use crate::error::SqlError;
use binlog::parse::TableMap;
use binlog::unpack::Datum;
use rel::catalog::Table;
use rel::table::{self as rt, Row};
use rel::temporal;
use rel::value::{ColumnType, TypeKind, Value};
use txn::{LockMode, Txn};

pub(super) fn note_auto_inc(t: &Table, row: &[Value]) {
    if let Some(a) = t.def.columns.iter().position(|c| c.auto_increment) {
        if let Some(v) = row.get(a).and_then(|v| v.to_i128()) {
            if v > 0 {
                t.note_auto_inc(v as u64);
            }
        }
    }
}

/// The stored row a before image names: by primary key, or (a table
/// without one) the first row equal to the image in every column.
pub(super) fn find(txn: &mut Txn, t: &Table, before: &[Value]) -> Result<Row, SqlError> {
    let def = &t.def;
    let missing = || SqlError::key_not_found(&def.name);
    if !def.hidden_pk {
        let key = rt::pk_key(def, before, None)?;
        return rt::get(txn, def, &key, Some(LockMode::Exclusive), None)?.ok_or_else(missing);
    }
    let cf = rel::cf::of(txn.db(), &def.pk).map_err(rel::Error::Engine)?;
    let lo = rel::keycodec::index_prefix(def.pk.id);
    let hi = rel::keycodec::prefix_successor(&lo);
    let mut it =
        rel::keyrange::scan(txn, cf, &lo, hi.as_deref(), false, true).map_err(rel::Error::Txn)?;
    while let Some((k, v)) = it.next().map_err(rel::Error::Txn)? {
        let row = rt::decode_row(def, k, v, None)?;
        if row.values == before {
            return Ok(row);
        }
    }
    Err(missing())
}

/// A binlog column type's name for error messages (MariaDB's words).
fn binlog_type_name(d: &Datum) -> &'static str {
    match d {
        Datum::Int { width: 1, .. } => "tinyint",
        Datum::Int { width: 2, .. } => "smallint",
        Datum::Int { width: 3, .. } => "mediumint",
        Datum::Int { width: 4, .. } => "int",
        Datum::Int { .. } => "bigint",
        Datum::Float(_) => "float",
        Datum::Double(_) => "double",
        Datum::Decimal(..) => "decimal",
        Datum::Bytes(_) => "string",
        Datum::Year(_) => "year",
        Datum::Date { .. } => "date",
        Datum::DateTime { .. } => "datetime",
        Datum::Timestamp { .. } => "timestamp",
        Datum::Time(_) => "time",
        Datum::Enum(_) => "enum",
        Datum::Set(_) => "set",
        Datum::Bit(_) => "bit",
        Datum::Absent | Datum::Null => "null",
    }
}

/// An image's values as the replica's row, converted by column position.
pub(super) fn row_values(t: &Table, map: &TableMap, img: &[Datum]) -> Result<Vec<Value>, SqlError> {
    let cols = &t.def.columns;
    if img.len() != cols.len() {
        return Err(SqlError::unsupported(format!(
            "replicating into {}.{}: the source's table has {} columns, the replica's {}",
            map.db,
            map.table,
            img.len(),
            cols.len()
        )));
    }
    img.iter()
        .zip(cols)
        .enumerate()
        .map(|(i, (d, c))| {
            convert(d, &c.ty).ok_or_else(|| match d {
                Datum::Absent => SqlError::unsupported(
                    "row images without every column (the source needs binlog_row_image=FULL)",
                ),
                _ => SqlError::slave_conversion_failed(
                    i,
                    format!("{}.{}", map.db, map.table),
                    binlog_type_name(d),
                    c.ty.sql_name(),
                ),
            })
        })
        .collect()
}

/// One binlog value as a value of column type `ty` (None: they do not
/// match).
fn convert(d: &Datum, ty: &ColumnType) -> Option<Value> {
    let k = ty.kind;
    Some(match d {
        Datum::Absent => return None,
        Datum::Null => Value::Null,
        Datum::Int { raw, width } if ty.is_integer() && k != TypeKind::Year => {
            if ty.unsigned {
                if k == TypeKind::BigInt {
                    Value::UInt(*raw)
                } else {
                    Value::Int(*raw as i64)
                }
            } else {
                Value::Int(Datum::int_signed(*raw, *width))
            }
        }
        Datum::Year(y) if k == TypeKind::Year => Value::Int(*y as i64),
        Datum::Float(f) if matches!(k, TypeKind::Float | TypeKind::Double) => {
            Value::Double(*f as f64)
        }
        Datum::Double(f) if matches!(k, TypeKind::Float | TypeKind::Double) => {
            Value::Double(if k == TypeKind::Float {
                *f as f32 as f64
            } else {
                *f
            })
        }
        Datum::Decimal(m, s) if k == TypeKind::Decimal => {
            let (m, s) = (*m, *s);
            let m = if s <= ty.scale {
                m.checked_mul(10i128.checked_pow((ty.scale - s) as u32)?)?
            } else {
                m / 10i128.checked_pow((s - ty.scale) as u32)?
            };
            Value::Decimal(m, ty.scale)
        }
        Datum::Bytes(b) if ty.is_string() && !ty.is_enum_or_set() => {
            let mut b = b.clone();
            // MariaDB strips BINARY(n)'s trailing 0x00 when it logs the
            // value; the column holds exactly n bytes (as SQL inserts pad).
            if k == TypeKind::Binary && b.len() < ty.len as usize {
                b.resize(ty.len as usize, 0);
            }
            if k == TypeKind::Char {
                let n = rel::keycodec::trim_trailing_spaces(&b).len();
                b.truncate(n);
            }
            // A latin1 column's bytes are cp1252 in the binlog (MariaDB's
            // latin1); Strata keeps every text value in UTF-8.
            if ty.is_text() && ty.coll.charset() == "latin1" {
                let mut s = String::with_capacity(b.len() + 8);
                crate::text::latin1_to_utf8(&b, &mut s);
                b = s.into_bytes();
            }
            Value::Bytes(b)
        }
        Datum::Date { y, m, d } if k == TypeKind::Date => {
            Value::Date(temporal::date_pack(*y, *m, *d))
        }
        Datum::DateTime {
            y,
            mo,
            d,
            h,
            mi,
            s,
            us,
        } if matches!(k, TypeKind::DateTime | TypeKind::Timestamp) => {
            Value::DateTime(temporal::datetime_pack(*y, *mo, *d, *h, *mi, *s, *us))
        }
        Datum::Timestamp { secs, us } if matches!(k, TypeKind::Timestamp | TypeKind::DateTime) => {
            if *secs == 0 {
                Value::DateTime(temporal::datetime_pack(0, 0, 0, 0, 0, 0, 0))
            } else {
                Value::DateTime(temporal::datetime_from_unix_micros(
                    *secs as i64 * 1_000_000 + *us as i64,
                ))
            }
        }
        Datum::Time(us) if k == TypeKind::Time => Value::Time(*us),
        Datum::Enum(n) if k == TypeKind::Enum => Value::Bytes(ty.members.get(*n as u64).to_vec()),
        Datum::Set(m) if k == TypeKind::Set => Value::Bytes(ty.members.set_text(*m)),
        _ => return None,
    })
}
