//! The applier: a source's events, in order, become Strata transactions.
//! A transaction's rows events (TABLE_MAP + WRITE/UPDATE/DELETE_ROWS) are
//! applied through rel (`fk::Writer`) in one engine transaction, the
//! binlog's values converted to the replica's column types by position;
//! at its XID (or QUERY COMMIT) the applied position (the source's file,
//! the offset after the event, the transaction's GTID) is put into the same
//! transaction, which then commits: data and position are one batch, so a
//! crash never loses or repeats a transaction. DDL (QUERY events) runs
//! through the SQL layer in the event's database, then the position
//! commits alone. Replicated changes are not written to Strata's own
//! binary log (MariaDB's log_slave_updates=OFF).
use super::inner::{self, Inner};
use super::state::{encode_position, Position, KEY_POS};
use super::Shared;
use crate::error::SqlError;
use crate::Instance;
use binlog::event::{gtid_flag, kind, Gtid};
use binlog::parse::{self, Body, RowsKind, TableMap};
use binlog::unpack::{self, Datum};
use lsm::ColumnFamily;
use rel::catalog::Table;
use rel::table::{self as rt, Row};
use rel::temporal;
use rel::value::{ColumnType, TypeKind, Value};
use std::collections::HashMap;
use std::sync::Arc;
use txn::{Isolation, LockMode, Savepoint, Txn};

/// Why applying stopped: the source side (Last_IO_Errno) or the applying
/// side (Last_SQL_Errno).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    Io(u16, String),
    Sql(u16, String),
}

/// ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE, MariaDB's code for an event
/// that does not decode or fails its checksum.
const ER_EVENT_CORRUPT: u16 = 1743;

pub(crate) struct Applier {
    inst: Arc<Instance>,
    cf: ColumnFamily,
    shared: Arc<Shared>,
    own_server_id: u32,
    checksum: bool,
    /// The source's file the stream is in.
    file: String,
    maps: HashMap<u64, TableMap>,
    txn: Option<Txn>,
    /// The open transaction's GTID (or a standalone DDL's).
    gtid: Option<Gtid>,
    /// The open transaction's savepoints (SAVEPOINT events), oldest first.
    savepoints: Vec<(String, Savepoint)>,
}

fn sql_fault(e: SqlError) -> Fault {
    Fault::Sql(e.code, e.msg)
}

impl Applier {
    pub(crate) fn new(inst: Arc<Instance>, cf: ColumnFamily, shared: Arc<Shared>) -> Applier {
        let own_server_id = inst
            .global_var("server_id")
            .and_then(|v| v.to_i128())
            .unwrap_or(0) as u32;
        let file = shared.pos().file.clone();
        Applier {
            inst,
            cf,
            shared,
            own_server_id,
            checksum: true,
            file,
            maps: HashMap::new(),
            txn: None,
            gtid: None,
            savepoints: Vec::new(),
        }
    }

    /// Drops the open transaction (a reconnect resumes from the applied
    /// position, so it will come again whole).
    pub(crate) fn abort(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        self.gtid = None;
        self.savepoints.clear();
        self.maps.clear();
    }

    fn begin(&mut self) -> &mut Txn {
        let inst = &self.inst;
        self.txn.get_or_insert_with(|| {
            let mut t = inst.txdb.begin(Isolation::ReadCommitted);
            t.set_tag(inst.catalog.version());
            t
        })
    }

    /// Applies one event as the source sent it (header, body, checksum).
    pub(crate) fn event(&mut self, raw: &[u8]) -> Result<(), Fault> {
        let corrupt = |e: binlog::Error| Fault::Io(ER_EVENT_CORRUPT, e.to_string());
        let h = parse::header(raw).map_err(corrupt)?;
        if h.kind == kind::FORMAT_DESCRIPTION {
            self.checksum = parse::fde_checksum_alg(raw).map_err(corrupt)? == 1;
        }
        let (h, b) = parse::split(raw, self.checksum).map_err(corrupt)?;
        let body = parse::body(&h, b).map_err(|e| match e {
            binlog::Error::Invalid(m) => Fault::Sql(crate::error::ER_NOT_SUPPORTED_YET, m),
            e => corrupt(e),
        })?;
        {
            let mut st = self.shared.status();
            if h.log_pos != 0 {
                st.read_pos = h.log_pos as u64;
                st.read_file = self.file.clone();
            }
            if h.server_id != 0 && h.kind != kind::ROTATE {
                st.master_server_id = h.server_id;
            }
        }
        // Our own changes coming back (a ring): skipped, as MariaDB does.
        let own = h.server_id == self.own_server_id && self.own_server_id != 0;
        match body {
            Body::Rotate { pos, file } => {
                self.file = file;
                let mut st = self.shared.status();
                st.read_file = self.file.clone();
                st.read_pos = pos;
            }
            Body::Heartbeat(_) => {
                if self.txn.is_none() {
                    self.shared.status().behind = Some(0);
                }
            }
            Body::Gtid { gtid, flags2 } => {
                self.abort();
                self.gtid = Some(gtid);
                if flags2 & gtid_flag::STANDALONE == 0 && !own {
                    self.begin();
                }
            }
            Body::Query(q) => {
                let stmt = q.query.trim();
                if stmt.eq_ignore_ascii_case("BEGIN") {
                    self.begin();
                } else if stmt.eq_ignore_ascii_case("COMMIT") {
                    self.commit(h.log_pos, h.timestamp)?;
                } else if stmt.eq_ignore_ascii_case("ROLLBACK") {
                    self.abort();
                } else if self.txn.is_some() {
                    self.in_txn(stmt)?;
                } else if !own {
                    self.ddl(&q, h.log_pos, h.timestamp)?;
                }
            }
            Body::TableMap(m) => {
                self.maps.insert(m.table_id, m);
            }
            Body::Rows(r) => {
                if !own {
                    self.rows(&r, h.kind, h.log_pos)?;
                }
            }
            Body::Xid(_) => self.commit(h.log_pos, h.timestamp)?,
            Body::FormatDescription { .. }
            | Body::GtidList(_)
            | Body::BinlogCheckpoint(_)
            | Body::Annotate
            | Body::Skip => {}
        }
        Ok(())
    }

    /// The position after an event ending at `end` of the current file,
    /// with the open transaction's GTID.
    fn next_position(&self, end: u32) -> Position {
        let mut p = self.shared.pos().clone();
        if end != 0 {
            p.file = self.file.clone();
            p.pos = end as u64;
        }
        if let Some(g) = self.gtid {
            p.gtids.insert(g.domain, g);
        }
        p
    }

    fn published(&mut self, p: Position, ts: u32, ddl: bool) {
        *self.shared.pos() = p;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut st = self.shared.status();
        st.behind = Some(now.saturating_sub(ts as u64));
        if ddl {
            st.ddl_groups += 1;
        } else {
            st.trx_groups += 1;
        }
        self.gtid = None;
        self.savepoints.clear();
        self.maps.clear();
    }

    /// A statement logged inside the open transaction: savepoints are
    /// honoured on the applier's transaction; anything else stops
    /// replication (running it as DDL would end the transaction midway).
    fn in_txn(&mut self, stmt: &str) -> Result<(), Fault> {
        let refuse = || {
            Fault::Sql(
                crate::error::ER_NOT_SUPPORTED_YET,
                format!(
                    "This version of Strata doesn't yet support '{stmt}' inside a replicated \
                     transaction (only SAVEPOINT, ROLLBACK TO and RELEASE SAVEPOINT are applied there)"
                ),
            )
        };
        let Some(t) = self.txn.as_mut() else {
            return Err(refuse());
        };
        let pos = |sps: &[(String, Savepoint)], n: &str| {
            sps.iter()
                .rposition(|(s, _)| s.to_lowercase() == n.to_lowercase())
        };
        let unknown = |n: &str| Fault::Sql(1305, format!("SAVEPOINT {n} does not exist"));
        match inner::parse(stmt).ok_or_else(refuse)? {
            Inner::Savepoint(n) => {
                if let Some(i) = pos(&self.savepoints, &n) {
                    self.savepoints.remove(i);
                }
                self.savepoints.push((n, t.savepoint()));
            }
            Inner::RollbackTo(n) => {
                let i = pos(&self.savepoints, &n).ok_or_else(|| unknown(&n))?;
                let ok = t
                    .rollback_to_savepoint(&self.savepoints[i].1)
                    .map_err(|e| sql_fault(e.into()))?;
                if !ok {
                    return Err(unknown(&n));
                }
                self.savepoints.truncate(i + 1);
            }
            Inner::Release(n) => {
                let i = pos(&self.savepoints, &n).ok_or_else(|| unknown(&n))?;
                self.savepoints.truncate(i);
            }
        }
        Ok(())
    }

    /// Commits the open transaction with the position after `end`.
    fn commit(&mut self, end: u32, ts: u32) -> Result<(), Fault> {
        let p = self.next_position(end);
        let mut t = match self.txn.take() {
            Some(t) => t,
            // A transaction of our own server id (skipped) still moves the
            // position.
            None => {
                let mut t = self.inst.txdb.begin(Isolation::ReadCommitted);
                t.set_tag(self.inst.catalog.version());
                t
            }
        };
        t.put(self.cf, KEY_POS, &encode_position(&p));
        t.commit().map_err(|e| sql_fault(e.into()))?;
        self.published(p, ts, false);
        Ok(())
    }

    /// Runs a DDL statement in the event's database, then records the
    /// position (its own commit: DDL commits by itself in Strata too).
    fn ddl(&mut self, q: &parse::Query, end: u32, ts: u32) -> Result<(), Fault> {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
        let db = (!q.db.is_empty()).then(|| q.db.clone());
        let mut s = self.inst.session(0, "", db);
        let mut sink = crate::result::Collect::default();
        let r = s
            .query("SET SESSION sql_log_bin = 0", &mut sink)
            .and_then(|_| s.query(&q.query, &mut sink));
        if let Err(e) = r {
            return Err(Fault::Sql(
                e.code,
                format!(
                    "Error '{}' on query. Default database: '{}'. Query: '{}'",
                    e.msg, q.db, q.query
                ),
            ));
        }
        let p = self.next_position(end);
        let mut t = self.inst.txdb.begin(Isolation::ReadCommitted);
        t.put(self.cf, KEY_POS, &encode_position(&p));
        t.commit().map_err(|e| sql_fault(e.into()))?;
        self.published(p, ts, true);
        Ok(())
    }

    fn rows(&mut self, r: &parse::Rows<'_>, event_kind: u8, end: u32) -> Result<(), Fault> {
        let name = binlog::decode::type_name(event_kind);
        let map = self.maps.get(&r.table_id).cloned().ok_or_else(|| {
            Fault::Sql(
                ER_EVENT_CORRUPT,
                format!(
                    "{name} event for table id {} without a TABLE_MAP",
                    r.table_id
                ),
            )
        })?;
        let file = self.file.clone();
        let wrap = |e: SqlError| {
            Fault::Sql(
                e.code,
                format!(
                    "Could not execute {name} event on table {}.{}; {}, Error_code: {}; the event's master log {}, end_log_pos {end}",
                    map.db, map.table, e.msg, e.code, file
                ),
            )
        };
        let st = self.inst.catalog.state();
        let t = st
            .table(&map.db, &map.table)
            .cloned()
            .ok_or_else(|| wrap(SqlError::no_table(format!("{}.{}", map.db, map.table))))?;
        let map = with_local_fsp(&map, &t);
        let unpacked = |e: binlog::Error| match e {
            binlog::Error::Invalid(m) => wrap(SqlError::unsupported(m)),
            e => Fault::Io(ER_EVENT_CORRUPT, e.to_string()),
        };
        let changes = unpack::each(r, &map).map_err(unpacked)?;
        // NO_FOREIGN_KEY_CHECKS_F: the source ran with foreign_key_checks=0.
        let checks = r.flags & 2 == 0;
        let w = rel::fk::Writer::new(&st, checks);
        let txn = self.begin();
        for change in changes {
            let (before, after) = change.map_err(unpacked)?;
            let conv = |img: &Option<Vec<Datum>>| -> Result<Option<Vec<Value>>, SqlError> {
                img.as_ref().map(|i| row_values(&t, &map, i)).transpose()
            };
            let (b, a) = (conv(&before).map_err(wrap)?, conv(&after).map_err(wrap)?);
            let res: Result<(), SqlError> = (|| {
                match (r.kind, b, a) {
                    (RowsKind::Write, _, Some(a)) => {
                        w.insert(txn, &t, &a)?;
                        note_auto_inc(&t, &a);
                    }
                    (RowsKind::Update, Some(b), Some(a)) => {
                        let old = find(txn, &t, &b)?;
                        w.update(txn, &t, &old, &a)?;
                        note_auto_inc(&t, &a);
                    }
                    (RowsKind::Delete, Some(b), _) => {
                        let old = find(txn, &t, &b)?;
                        w.delete(txn, &t, &old)?;
                    }
                    _ => return Err(SqlError::internal("rows event without its image")),
                }
                Ok(())
            })();
            res.map_err(wrap)?;
        }
        Ok(())
    }
}

/// `map` with the precision of `t`'s columns given to its old-format
/// TIMESTAMP/DATETIME/TIME columns (`MapCol::local_fsp`: their values are
/// read by it, as MariaDB's replica reads them) where `t`'s column is of
/// that type; the others are refused when a row holds them.
fn with_local_fsp(map: &TableMap, t: &Table) -> TableMap {
    let mut map = map.clone();
    for (c, tc) in map.columns.iter_mut().zip(&t.def.columns) {
        let kind = match c.ty {
            7 => TypeKind::Timestamp,
            12 => TypeKind::DateTime,
            11 => TypeKind::Time,
            _ => continue,
        };
        if tc.ty.kind == kind {
            c.local_fsp = Some(tc.ty.scale);
        }
    }
    map
}

fn note_auto_inc(t: &Table, row: &[Value]) {
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
fn find(txn: &mut Txn, t: &Table, before: &[Value]) -> Result<Row, SqlError> {
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
fn row_values(t: &Table, map: &TableMap, img: &[Datum]) -> Result<Vec<Value>, SqlError> {
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
