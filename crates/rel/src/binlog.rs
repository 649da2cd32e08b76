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
        TypeKind::Char | TypeKind::Binary => ColType::String {
            max_bytes: char_bytes(ty),
        },
        TypeKind::VarChar | TypeKind::VarBinary => ColType::VarString {
            max_bytes: char_bytes(ty),
        },
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

/// The byte length MariaDB gives a CHAR/VARCHAR (characters times the
/// character set's bytes per character: latin1 VARCHAR(100) is 100,
/// utf8mb3 300, utf8mb4 400) or BINARY/VARBINARY column.
fn char_bytes(ty: &crate::value::ColumnType) -> u32 {
    let per = match ty.kind {
        TypeKind::Char | TypeKind::VarChar => ty.coll.max_len(),
        _ => 1,
    };
    ty.len.saturating_mul(per)
}

/// True for a character column whose values the log holds in latin1
/// (Strata keeps every text value in UTF-8; MariaDB logs a column's own
/// character set).
fn is_latin1(ty: &crate::value::ColumnType) -> bool {
    matches!(ty.kind, TypeKind::Char | TypeKind::VarChar | TypeKind::Text)
        && ty.coll.charset() == "latin1"
}

/// UTF-8 text as latin1 (cp1252) bytes, `?` for what latin1 lacks.
fn to_latin1(b: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(b)
        .chars()
        .map(crate::collation::latin1_byte)
        .collect()
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
    let latin1: Vec<Option<Vec<u8>>> = def
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| match v {
            Value::Bytes(b) if is_latin1(&c.ty) => Some(to_latin1(b)),
            _ => None,
        })
        .collect();
    let cells: Vec<Cell<'_>> = def
        .columns
        .iter()
        .zip(row)
        .zip(&latin1)
        .map(|((c, v), l)| match l {
            Some(b) => Cell::Bytes(b),
            None => cell(&c.ty, v),
        })
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

fn log(txn: &mut Txn, t: &Table, event_kind: u8, flags: u16, images: &[&[Value]]) -> Result<()> {
    let Some(annex) = txn.annex() else {
        return Ok(());
    };
    let def = &t.def;
    let tag = ((def.pk.id as u64) << 24) | ((flags as u64) << 8) | event_kind as u64;
    let mut items = Vec::new();
    if annex.mark() != Some(tag) {
        record::item(&mut items, record::TAG_TABLE_MAP, &table_map(def));
        let id = def.pk.id as u64;
        record::rows_head_item(&mut items, event_kind, id, flags, def.columns.len());
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

/// Logs an inserted row (`flags`: the rows event's, see
/// `binlog::record::rows_flag`).
pub fn log_insert(txn: &mut Txn, t: &Table, flags: u16, row: &[Value]) -> Result<()> {
    log(txn, t, kind::WRITE_ROWS_V1, flags, &[row])
}

/// Logs an update (before and after images).
pub fn log_update(
    txn: &mut Txn,
    t: &Table,
    flags: u16,
    old: &[Value],
    new: &[Value],
) -> Result<()> {
    log(txn, t, kind::UPDATE_ROWS_V1, flags, &[old, new])
}

/// Logs a deleted row.
pub fn log_delete(txn: &mut Txn, t: &Table, flags: u16, old: &[Value]) -> Result<()> {
    log(txn, t, kind::DELETE_ROWS_V1, flags, &[old])
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

/// A DDL statement's binlog record (a QUERY event) waiting for the catalog
/// write that makes the statement visible: see [`set_ddl_record`].
pub struct DdlRecord {
    pub cf: u32,
    pub prefix: Vec<u8>,
    /// The whole record (header and QUERY item).
    pub bytes: Vec<u8>,
}

thread_local! {
    static DDL_RECORD: std::cell::RefCell<Option<DdlRecord>> =
        const { std::cell::RefCell::new(None) };
}

/// Sets (or clears) the record of the DDL statement this thread is running.
/// The first catalog write that makes the statement visible (a definition
/// stored, replaced or dropped: [`attach_ddl_record`]) carries it as a
/// sequence-keyed put in its own batch, so the QUERY event is in the log
/// iff the change is in the engine, and orders before every transaction
/// that could see the change. Returns the record set before.
pub fn set_ddl_record(r: Option<DdlRecord>) -> Option<DdlRecord> {
    DDL_RECORD.with(|c| c.replace(r))
}

/// Takes the record back if no catalog write carried it.
pub fn take_ddl_record() -> Option<DdlRecord> {
    DDL_RECORD.with(|c| c.borrow_mut().take())
}

/// Adds the pending DDL record (if any) and the pending put (if any,
/// [`set_ddl_put`]) to `b`, the batch of a catalog write that makes a DDL
/// statement visible; both are consumed.
pub(crate) fn attach_ddl_record(b: &mut lsm::WriteBatch) {
    if let Some(r) = take_ddl_record() {
        b.put_cf_seq_keyed(r.cf, &r.prefix, &r.bytes);
    }
    if let Some(p) = take_ddl_put() {
        b.put_cf(p.cf, &p.key, &p.value);
    }
}

/// A key/value to write in the same batch as a DDL statement's catalog
/// change: the replica's applied position (`sql::replica`), so that a
/// replicated DDL and its position are one write.
pub struct DdlPut {
    pub cf: u32,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

thread_local! {
    static DDL_PUT: std::cell::RefCell<Option<DdlPut>> = const { std::cell::RefCell::new(None) };
}

/// Sets (or clears) the put the first catalog write of the DDL statement
/// this thread runs carries, as [`set_ddl_record`] does for its record.
pub fn set_ddl_put(p: Option<DdlPut>) -> Option<DdlPut> {
    DDL_PUT.with(|c| c.replace(p))
}

/// Takes the put back if no catalog write carried it.
pub fn take_ddl_put() -> Option<DdlPut> {
    DDL_PUT.with(|c| c.borrow_mut().take())
}
