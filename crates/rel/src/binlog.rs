//! Binary log capture: the row changes a statement makes, appended to the
//! transaction's annex (`txn::Annex`, set by the SQL layer when the binary
//! log is on) as binlog record items: a TABLE_MAP and a rows head whenever
//! the table or the kind of change differs from the last item, then one
//! full row image (binlog_row_image=FULL) per change. The record commits in
//! the transaction's own engine batch (`strata-binlog` renders it into
//! events). [`crate::fk::Writer`] calls this for the rows a statement
//! writes; foreign key cascades are not logged, as MariaDB does not log
//! InnoDB's (a replica's own foreign keys apply them).
use crate::catalog::Table;
use crate::schema::TableDef;
use crate::temporal;
use crate::value::{TypeKind, Value};
use crate::{Error, Result};
use binlog::event::kind;
use binlog::record;
use binlog::row::{Cell, ColType};
use txn::Txn;

/// How a column is described in the binary log.
pub fn col_type(ty: &crate::value::ColumnType) -> ColType {
    let max = |t: &crate::value::ColumnType| t.max_bytes().min(u32::MAX as usize) as u32;
    match ty.kind {
        TypeKind::TinyInt => ColType::Int(1),
        TypeKind::SmallInt => ColType::Int(2),
        TypeKind::MediumInt => ColType::Int(3),
        TypeKind::Int => ColType::Int(4),
        TypeKind::BigInt => ColType::Int(8),
        TypeKind::Year => ColType::Year,
        TypeKind::Float => ColType::Float,
        TypeKind::Double => ColType::Double,
        TypeKind::Decimal => ColType::Decimal {
            precision: ty.len.min(65) as u8,
            scale: ty.scale,
        },
        TypeKind::Char | TypeKind::Binary => ColType::String { max_bytes: max(ty) },
        TypeKind::VarChar | TypeKind::VarBinary => ColType::VarString { max_bytes: max(ty) },
        TypeKind::Text | TypeKind::Blob => ColType::Blob {
            pack: match max(ty) {
                0..=255 => 1,
                256..=65_535 => 2,
                65_536..=16_777_215 => 3,
                _ => 4,
            },
        },
        TypeKind::Date => ColType::Date,
        TypeKind::DateTime => ColType::DateTime2 { fsp: ty.scale },
        TypeKind::Timestamp => ColType::Timestamp2 { fsp: ty.scale },
        TypeKind::Time => ColType::Time2 { fsp: ty.scale },
        TypeKind::Enum => ColType::Enum {
            pack: if ty.members.len() < 256 { 1 } else { 2 },
        },
        TypeKind::Set => ColType::Set {
            pack: match ty.members.len().div_ceil(8) {
                0..=1 => 1,
                2 => 2,
                3 => 3,
                4 => 4,
                _ => 8,
            },
        },
    }
}

/// A value as the binary log packs it for a column of type `ty`.
fn cell<'a>(ty: &crate::value::ColumnType, v: &'a Value) -> Cell<'a> {
    let k = ty.kind;
    match v {
        Value::Null => Cell::Null,
        // ENUM and SET values are their text here; the log holds the number.
        _ if ty.is_enum_or_set() => Cell::UInt(crate::members::stored_number(ty, v)),
        Value::Int(i) => Cell::Int(*i),
        Value::UInt(u) => Cell::UInt(*u),
        Value::Double(d) => Cell::Double(*d),
        Value::Decimal(m, s) => Cell::Decimal(*m, *s),
        Value::Bytes(b) => Cell::Bytes(b),
        Value::Date(p) => {
            let (y, m, d) = temporal::date_unpack(*p);
            Cell::Date { y, m, d }
        }
        // TIMESTAMP values are held in UTC (time_zone SYSTEM is UTC).
        Value::DateTime(p) if k == TypeKind::Timestamp => Cell::Timestamp {
            secs: temporal::datetime_to_unix_secs(*p),
            us: (p.rem_euclid(1_000_000)) as u32,
        },
        Value::DateTime(p) => {
            let (y, mo, d, h, mi, s, us) = temporal::datetime_unpack(*p);
            Cell::DateTime {
                y,
                mo,
                d,
                h,
                mi,
                s,
                us,
            }
        }
        Value::Time(t) => Cell::Time(*t),
    }
}

fn put_image(out: &mut Vec<u8>, def: &TableDef, row: &[Value]) -> Result<()> {
    let cols: Vec<ColType> = def.columns.iter().map(|c| col_type(&c.ty)).collect();
    let cells: Vec<Cell<'_>> = def
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| cell(&c.ty, v))
        .collect();
    binlog::row::put_row(out, &cols, &cells).map_err(|e| Error::Internal(e.to_string()))
}

/// The TABLE_MAP event body of a table (its id: the primary index's id).
pub fn table_map(def: &TableDef) -> Vec<u8> {
    let cols: Vec<_> = def
        .columns
        .iter()
        .map(|c| col_type(&c.ty).map_column(c.nullable))
        .collect();
    binlog::event::table_map(def.pk.id as u64, &def.db, &def.name, &cols)
}

fn log(txn: &mut Txn, t: &Table, event_kind: u8, images: &[&[Value]]) -> Result<()> {
    let Some(annex) = txn.annex() else {
        return Ok(());
    };
    let def = &t.def;
    let tag = ((def.pk.id as u64) << 8) | event_kind as u64;
    let mut items = Vec::new();
    if annex.mark() != Some(tag) {
        record::item(&mut items, record::TAG_TABLE_MAP, &table_map(def));
        let head = record::rows_head_payload(event_kind, def.pk.id as u64, def.columns.len());
        record::item(&mut items, record::TAG_ROWS_HEAD, &head);
    }
    let mut img = Vec::new();
    for r in images {
        put_image(&mut img, def, r)?;
    }
    record::item(&mut items, record::TAG_ROW, &img);
    annex.push(&items);
    annex.set_mark(tag);
    Ok(())
}

/// Logs an inserted row.
pub fn log_insert(txn: &mut Txn, t: &Table, row: &[Value]) -> Result<()> {
    log(txn, t, kind::WRITE_ROWS_V1, &[row])
}

/// Logs an update (before and after images).
pub fn log_update(txn: &mut Txn, t: &Table, old: &[Value], new: &[Value]) -> Result<()> {
    log(txn, t, kind::UPDATE_ROWS_V1, &[old, new])
}

/// Logs a deleted row.
pub fn log_delete(txn: &mut Txn, t: &Table, old: &[Value]) -> Result<()> {
    log(txn, t, kind::DELETE_ROWS_V1, &[old])
}

/// Logs a statement (DDL) as a QUERY event.
pub fn log_query(txn: &mut Txn, q: &binlog::event::QueryInfo<'_>) {
    if let Some(annex) = txn.annex() {
        let mut items = Vec::new();
        record::item(&mut items, record::TAG_QUERY, &binlog::event::query(q));
        annex.push(&items);
        annex.set_mark(u64::MAX);
    }
}
