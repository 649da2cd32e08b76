//! Decoding the events a MariaDB 10.x (or MySQL) source sends a replica,
//! next to their encoders in [`crate::event`]: one event's header, CRC32
//! check and body (FORMAT_DESCRIPTION with its checksum algorithm, ROTATE,
//! GTID, GTID_LIST, BINLOG_CHECKPOINT, ANNOTATE_ROWS, QUERY, TABLE_MAP,
//! WRITE/UPDATE/DELETE_ROWS v1 and v2, XID, HEARTBEAT). Row images are
//! unpacked by [`crate::unpack`]. Bytes from the network never panic this
//! module: malformed input is `Error::Corrupt`, and an event Strata cannot
//! apply (compressed events, encryption) is `Error::Unsupported`-worded
//! `Error::Invalid` naming it.
use crate::event::{crc32, kind, Gtid, CHECKSUM_LEN, HEADER_LEN};
use crate::{Error, Result};

/// More event type codes a source sends (MariaDB's numbering).
pub mod more_kind {
    pub const STOP: u8 = 3;
    pub const INTVAR: u8 = 5;
    pub const RAND: u8 = 13;
    pub const USER_VAR: u8 = 14;
    pub const HEARTBEAT: u8 = 27;
    pub const IGNORABLE: u8 = 28;
    pub const ROWS_QUERY: u8 = 29;
    pub const WRITE_ROWS_V2: u8 = 30;
    pub const UPDATE_ROWS_V2: u8 = 31;
    pub const DELETE_ROWS_V2: u8 = 32;
    pub const MYSQL_GTID: u8 = 33;
    pub const MYSQL_ANONYMOUS_GTID: u8 = 34;
    pub const MYSQL_PREVIOUS_GTIDS: u8 = 35;
    pub const ANNOTATE_ROWS: u8 = 160;
    pub const START_ENCRYPTION: u8 = 164;
    pub const QUERY_COMPRESSED: u8 = 165;
    pub const WRITE_ROWS_COMPRESSED_V1: u8 = 166;
    pub const DELETE_ROWS_COMPRESSED: u8 = 171;
}

/// LOG_EVENT_IGNORABLE_F: a reader that does not know the event may skip it.
pub const IGNORABLE_F: u16 = 0x80;

/// An event's common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub timestamp: u32,
    pub kind: u8,
    pub server_id: u32,
    /// The whole event's size (header, body, checksum).
    pub size: u32,
    /// The position after the event in the source's file (0 for events the
    /// source makes up: the first ROTATE, a re-sent FORMAT_DESCRIPTION).
    pub log_pos: u32,
    pub flags: u16,
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(what.to_string())
}

/// A little-endian reader over an event body: every read is checked.
pub(crate) struct Rd<'a> {
    b: &'a [u8],
}

impl<'a> Rd<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Rd<'a> {
        Rd { b }
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.b.len() {
            return Err(corrupt(format!("needs {n} bytes, {} left", self.b.len())));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    pub(crate) fn uint(&mut self, n: usize) -> Result<u64> {
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(self.take(n)?);
        Ok(u64::from_le_bytes(x))
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn packed(&mut self) -> Result<u64> {
        match self.u8()? {
            n @ 0..=250 => Ok(n as u64),
            0xfc => self.uint(2),
            0xfd => self.uint(3),
            0xfe => self.uint(8),
            b => Err(corrupt(format!("bad packed integer byte {b:#x}"))),
        }
    }
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
}

/// Reads an event's common header.
pub fn header(ev: &[u8]) -> Result<Header> {
    let mut r = Rd::new(ev);
    let h = Header {
        timestamp: r.uint(4)? as u32,
        kind: r.u8()?,
        server_id: r.uint(4)? as u32,
        size: r.uint(4)? as u32,
        log_pos: r.uint(4)? as u32,
        flags: r.uint(2)? as u16,
    };
    if (h.size as usize) < HEADER_LEN || h.size as usize != ev.len() {
        return Err(corrupt(format!(
            "event size {} for {} bytes",
            h.size,
            ev.len()
        )));
    }
    Ok(h)
}

/// The checksum algorithm of a FORMAT_DESCRIPTION event (its byte just
/// before the 4 checksum bytes, which the event always carries): 0 off,
/// 1 CRC32.
pub fn fde_checksum_alg(ev: &[u8]) -> Result<u8> {
    header(ev)?;
    ev.len()
        .checked_sub(CHECKSUM_LEN + 1)
        .filter(|&i| i >= HEADER_LEN + 57)
        .map(|i| ev[i])
        .ok_or_else(|| corrupt("FORMAT_DESCRIPTION too short"))
}

/// Checks one event (`checksum`: a CRC32 trailer is present and must
/// match) and returns its header and body. A FORMAT_DESCRIPTION always
/// carries the 4 trailer bytes and says itself whether they are a CRC32
/// (`fde_checksum_alg`), whatever `checksum` says: its body ends before
/// them, so that its algorithm byte is the body's last.
pub fn split(ev: &[u8], checksum: bool) -> Result<(Header, &[u8])> {
    let h = header(ev)?;
    let fde = h.kind == kind::FORMAT_DESCRIPTION;
    let checksum = if fde {
        fde_checksum_alg(ev)? == 1
    } else {
        checksum
    };
    let end = if checksum || fde {
        let end = ev
            .len()
            .checked_sub(CHECKSUM_LEN)
            .filter(|&e| e >= HEADER_LEN)
            .ok_or_else(|| corrupt("event shorter than its checksum"))?;
        if !checksum {
            return Ok((h, &ev[HEADER_LEN..end]));
        }
        let sum = u32::from_le_bytes([ev[end], ev[end + 1], ev[end + 2], ev[end + 3]]);
        // A FORMAT_DESCRIPTION's checksum is taken with
        // LOG_EVENT_BINLOG_IN_USE_F (set while its file is open) clear.
        let crc = if h.kind == kind::FORMAT_DESCRIPTION && h.flags & 1 != 0 {
            let mut v = ev[..end].to_vec();
            v[17] &= !1;
            crc32(&v)
        } else {
            crc32(&ev[..end])
        };
        if crc != sum {
            return Err(corrupt(format!(
                "checksum mismatch in a type {} event at {}",
                h.kind, h.log_pos
            )));
        }
        end
    } else {
        ev.len()
    };
    Ok((h, &ev[HEADER_LEN..end]))
}

/// The kind of a rows event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsKind {
    Write,
    Update,
    Delete,
}

/// A TABLE_MAP event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMap {
    pub table_id: u64,
    pub db: String,
    pub table: String,
    /// Each column's type code and metadata (as in TABLE_MAP).
    pub columns: Vec<MapCol>,
    /// Why its rows cannot be read (a column type whose metadata this
    /// decoder does not know): reported when a rows event uses the map,
    /// not when the map arrives, so a table the replica never writes
    /// does not stop it.
    pub unsupported: Option<String>,
}

/// One TABLE_MAP column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapCol {
    pub ty: u8,
    /// The metadata bytes (0 to 2), little-endian in a u16.
    pub meta: u16,
    pub nullable: bool,
    /// The fractional precision of the replica's own column, which the
    /// caller sets for the old TIMESTAMP, DATETIME and TIME types (7, 12,
    /// 11): their TABLE_MAP entry has no metadata, and MariaDB stores their
    /// fractional forms (`mysql56_temporal_format=OFF`) by the column's
    /// precision, so only the replica's column tells how to read them (as
    /// MariaDB's replica reads them). None: such a column is refused.
    pub local_fsp: Option<u8>,
}

impl MapCol {
    /// Whether the column is of an old temporal type whose values cannot
    /// be read without `local_fsp`.
    pub fn needs_local_fsp(&self) -> bool {
        matches!(self.ty, 7 | 11 | 12)
    }
}

/// A rows event: which columns its images hold, and the images' bytes
/// (unpacked with the table map by [`crate::unpack::rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows<'a> {
    pub kind: RowsKind,
    pub table_id: u64,
    pub flags: u16,
    pub ncols: usize,
    /// Columns present in the (before) image.
    pub present: Vec<bool>,
    /// Columns present in an UPDATE's after image.
    pub present_after: Vec<bool>,
    pub images: &'a [u8],
}

/// A QUERY event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub thread_id: u32,
    pub error_code: u16,
    pub db: String,
    pub query: String,
    /// Q_SQL_MODE_CODE, if present.
    pub sql_mode: Option<u64>,
    /// Q_FLAGS2_CODE, if present.
    pub flags2: Option<u32>,
    /// Q_CHARSET_CODE, if present: character_set_client,
    /// collation_connection and collation_server ids.
    pub charset: Option<[u16; 3]>,
    /// The statement's bytes as logged (in character_set_client; `query`
    /// is them read as UTF-8, for messages).
    pub query_bytes: Vec<u8>,
}

/// An event body, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    FormatDescription {
        binlog_version: u16,
        server_version: String,
        checksum_alg: u8,
    },
    Rotate {
        pos: u64,
        file: String,
    },
    /// MariaDB's GTID event: the start of a transaction (or a standalone
    /// DDL) with the source's server id from the header.
    Gtid {
        gtid: Gtid,
        flags2: u8,
    },
    GtidList(Vec<Gtid>),
    BinlogCheckpoint(String),
    /// ANNOTATE_ROWS (the statement's text; informative only).
    Annotate,
    Query(Query),
    TableMap(TableMap),
    Rows(Rows<'a>),
    Xid(u64),
    /// A heartbeat: the source's current file (its header has the position).
    Heartbeat(String),
    /// STOP, or an unknown event flagged ignorable: nothing to do.
    Skip,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn bitmap(r: &mut Rd<'_>, n: usize) -> Result<Vec<bool>> {
    let b = r.take(n.div_ceil(8))?;
    Ok((0..n).map(|i| b[i / 8] & (1 << (i % 8)) != 0).collect())
}

/// Decodes an event body; `h` is its header.
pub fn body<'a>(h: &Header, b: &'a [u8]) -> Result<Body<'a>> {
    use more_kind as mk;
    let mut r = Rd::new(b);
    Ok(match h.kind {
        kind::FORMAT_DESCRIPTION => {
            let binlog_version = r.uint(2)? as u16;
            let v = r.take(50)?;
            let v = &v[..v.iter().position(|&c| c == 0).unwrap_or(v.len())];
            r.take(4)?;
            if r.u8()? as usize != HEADER_LEN {
                return Err(corrupt("FORMAT_DESCRIPTION with a header length other than 19"));
            }
            let rest = r.rest();
            Body::FormatDescription {
                binlog_version,
                server_version: text(v),
                checksum_alg: rest.last().copied().unwrap_or(0),
            }
        }
        kind::ROTATE => Body::Rotate {
            pos: r.uint(8)?,
            file: text(r.rest()),
        },
        kind::GTID => {
            let seq_no = r.uint(8)?;
            let domain = r.uint(4)? as u32;
            let flags2 = r.u8()?;
            Body::Gtid {
                gtid: Gtid {
                    domain,
                    server_id: h.server_id,
                    seq_no,
                },
                flags2,
            }
        }
        kind::GTID_LIST => {
            let n = (r.uint(4)? & 0x0fff_ffff) as usize;
            if n > b.len() / 16 {
                return Err(corrupt("GTID_LIST count past the event"));
            }
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(Gtid {
                    domain: r.uint(4)? as u32,
                    server_id: r.uint(4)? as u32,
                    seq_no: r.uint(8)?,
                });
            }
            Body::GtidList(v)
        }
        kind::BINLOG_CHECKPOINT => {
            let n = r.uint(4)? as usize;
            Body::BinlogCheckpoint(text(r.take(n)?))
        }
        mk::ANNOTATE_ROWS | mk::ROWS_QUERY => Body::Annotate,
        kind::QUERY => Body::Query(query(&mut r)?),
        kind::TABLE_MAP => Body::TableMap(table_map(&mut r)?),
        kind::WRITE_ROWS_V1 | kind::UPDATE_ROWS_V1 | kind::DELETE_ROWS_V1 => {
            Body::Rows(rows(&mut r, h.kind - kind::WRITE_ROWS_V1, false)?)
        }
        mk::WRITE_ROWS_V2 | mk::UPDATE_ROWS_V2 | mk::DELETE_ROWS_V2 => {
            Body::Rows(rows(&mut r, h.kind - mk::WRITE_ROWS_V2, true)?)
        }
        kind::XID => Body::Xid(r.uint(8)?),
        mk::HEARTBEAT => Body::Heartbeat(text(r.rest())),
        mk::STOP => Body::Skip,
        mk::QUERY_COMPRESSED..=mk::DELETE_ROWS_COMPRESSED => {
            return Err(Error::Invalid(format!(
                "compressed binlog events (type {}) are not supported: set log_bin_compress=OFF on the source",
                h.kind
            )))
        }
        mk::START_ENCRYPTION => {
            return Err(Error::Invalid(
                "encrypted binary logs are not supported".into(),
            ))
        }
        mk::INTVAR | mk::RAND | mk::USER_VAR => {
            return Err(Error::Invalid(format!(
                "statement-based replication events (type {}) are not supported: the source needs binlog_format=ROW",
                h.kind
            )))
        }
        mk::MYSQL_GTID | mk::MYSQL_ANONYMOUS_GTID | mk::MYSQL_PREVIOUS_GTIDS => {
            return Err(Error::Invalid(format!(
                "MySQL GTID events (type {}) are not supported: the source must be MariaDB",
                h.kind
            )))
        }
        _ if h.flags & IGNORABLE_F != 0 || h.kind == mk::IGNORABLE => Body::Skip,
        k => {
            return Err(Error::Invalid(format!(
                "binlog event type {k} is not supported"
            )))
        }
    })
}

fn query(r: &mut Rd<'_>) -> Result<Query> {
    let thread_id = r.uint(4)? as u32;
    r.take(4)?; // exec_time
    let db_len = r.u8()? as usize;
    let error_code = r.uint(2)? as u16;
    let status_len = r.uint(2)? as usize;
    let mut st = Rd::new(r.take(status_len)?);
    let (mut sql_mode, mut flags2, mut charset) = (None, None, None);
    // Status variables: a code, then a value of a size fixed by the code.
    // Unknown codes end the walk (what follows is not needed).
    while !st.is_empty() {
        match st.u8()? {
            0 => flags2 = Some(st.uint(4)? as u32),
            1 => sql_mode = Some(st.uint(8)?),
            2 => {
                let n = st.u8()? as usize;
                st.take(n + 1)?; // catalog (old form, NUL-terminated)
            }
            3 => {
                st.take(4)?; // auto_increment increment, offset
            }
            4 => {
                let mut c = [0u16; 3];
                for x in &mut c {
                    *x = st.uint(2)? as u16;
                }
                charset = Some(c);
            }
            5 | 6 => {
                let n = st.u8()? as usize;
                st.take(n)?; // time zone, catalog
            }
            7 => {
                st.take(2)?; // lc_time_names
            }
            8 => {
                st.take(2)?; // charset_database
            }
            9 => {
                st.take(8)?; // table_map_for_update
            }
            _ => break,
        }
    }
    let db = text(r.take(db_len)?);
    r.take(1)?;
    let query_bytes = r.rest().to_vec();
    Ok(Query {
        thread_id,
        error_code,
        db,
        query: text(&query_bytes),
        sql_mode,
        flags2,
        charset,
        query_bytes,
    })
}

/// The metadata byte count of a column type in TABLE_MAP (None: a type
/// this decoder does not know).
fn meta_len(ty: u8) -> Option<usize> {
    use crate::row::ty as t;
    Some(match ty {
        t::TINY | t::SHORT | t::LONG | t::LONGLONG | t::INT24 | t::DATE | t::YEAR => 0,
        6 /* NULL */ | 7 /* TIMESTAMP */ | 11 /* TIME */ | 12 /* DATETIME */ | 14 /* NEWDATE */ => 0,
        0 /* old DECIMAL (before 5.0) */ => 0,
        t::FLOAT | t::DOUBLE | t::TIMESTAMP2 | t::DATETIME2 | t::TIME2 => 1,
        t::BLOB | 249 | 250 | 251 /* TINY/MEDIUM/LONG_BLOB */ | 255 /* GEOMETRY */ | 245 /* JSON */ => 1,
        141 /* MariaDB's BLOB_COMPRESSED */ => 1,
        t::VARCHAR | 253 /* VAR_STRING */ | 16 /* BIT */ | t::NEWDECIMAL | t::STRING | t::ENUM | t::SET => 2,
        140 /* MariaDB's VARCHAR_COMPRESSED */ => 2,
        _ => return None,
    })
}

fn table_map(r: &mut Rd<'_>) -> Result<TableMap> {
    let table_id = r.uint(6)?;
    r.take(2)?; // flags
    let n = r.u8()? as usize;
    let db = text(r.take(n)?);
    r.take(1)?;
    let n = r.u8()? as usize;
    let table = text(r.take(n)?);
    r.take(1)?;
    let ncols = r.packed()? as usize;
    let types = r.take(ncols)?;
    let meta_total = r.packed()? as usize;
    let mut meta = Rd::new(r.take(meta_total)?);
    let mut cols = Vec::with_capacity(ncols);
    let mut unsupported = None;
    for &ty in types {
        let Some(len) = meta_len(ty).filter(|_| unsupported.is_none()) else {
            // The metadata of the columns after it cannot be told apart.
            unsupported
                .get_or_insert_with(|| format!("column type {ty} in TABLE_MAP is not supported"));
            cols.push(MapCol {
                ty,
                meta: 0,
                nullable: false,
                local_fsp: None,
            });
            continue;
        };
        let m = match len {
            0 => 0,
            1 => meta.u8()? as u16,
            // STRING/ENUM/SET keep (real type, length) and NEWDECIMAL
            // (precision, scale) as two bytes in that order (high, low);
            // VARCHAR and BIT are little-endian.
            _ if matches!(
                ty,
                crate::row::ty::STRING
                    | crate::row::ty::ENUM
                    | crate::row::ty::SET
                    | crate::row::ty::NEWDECIMAL
                    | 253
            ) =>
            {
                let a = meta.u8()? as u16;
                (a << 8) | meta.u8()? as u16
            }
            _ => meta.uint(2)? as u16,
        };
        cols.push(MapCol {
            ty,
            meta: m,
            nullable: false,
            local_fsp: None,
        });
    }
    if !meta.is_empty() && unsupported.is_none() {
        return Err(corrupt("TABLE_MAP metadata longer than its columns need"));
    }
    let nulls = bitmap(r, ncols)?;
    for (c, n) in cols.iter_mut().zip(nulls) {
        c.nullable = n;
    }
    // Optional metadata (binlog_row_metadata) follows; not needed.
    Ok(TableMap {
        table_id,
        db,
        table,
        columns: cols,
        unsupported,
    })
}

fn rows<'a>(r: &mut Rd<'a>, k: u8, v2: bool) -> Result<Rows<'a>> {
    let kind = match k {
        0 => RowsKind::Write,
        1 => RowsKind::Update,
        _ => RowsKind::Delete,
    };
    let table_id = r.uint(6)?;
    let flags = r.uint(2)? as u16;
    if v2 {
        // Extra data: its length includes the two length bytes.
        let n = (r.uint(2)? as usize)
            .checked_sub(2)
            .ok_or_else(|| corrupt("rows event extra data length below 2"))?;
        r.take(n)?;
    }
    let ncols = r.packed()? as usize;
    if ncols > 4096 {
        return Err(corrupt(format!("rows event of {ncols} columns")));
    }
    let present = bitmap(r, ncols)?;
    let present_after = if kind == RowsKind::Update {
        bitmap(r, ncols)?
    } else {
        Vec::new()
    };
    Ok(Rows {
        kind,
        table_id,
        flags,
        ncols,
        present,
        present_after,
        images: r.rest(),
    })
}
