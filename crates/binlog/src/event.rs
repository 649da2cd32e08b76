//! Binlog events as MariaDB 10.x writes them (binlog version 4, checksum
//! CRC32): the common header, the CRC32 trailer, and the body of every event
//! type Strata writes. Byte layouts: docs/formats/binlog.md. Everything is
//! little-endian; "packed" integers are the protocol's length-encoded ints.

/// The four bytes every binlog file begins with.
pub const MAGIC: [u8; 4] = [0xfe, b'b', b'i', b'n'];
/// Common header length (v4).
pub const HEADER_LEN: usize = 19;
/// CRC32 trailer length.
pub const CHECKSUM_LEN: usize = 4;
/// The server version written into FORMAT_DESCRIPTION (a MariaDB 10.x
/// string, so readers apply MariaDB's rules: GTID events, v1 row events).
pub const SERVER_VERSION: &str = "10.11.9-MariaDB-strata-log";
/// Binlog checksum algorithm byte: CRC32.
pub const CHECKSUM_ALG_CRC32: u8 = 1;

/// Event type codes (MariaDB's numbering).
pub mod kind {
    pub const QUERY: u8 = 2;
    pub const ROTATE: u8 = 4;
    pub const FORMAT_DESCRIPTION: u8 = 15;
    pub const XID: u8 = 16;
    pub const TABLE_MAP: u8 = 19;
    pub const WRITE_ROWS_V1: u8 = 23;
    pub const UPDATE_ROWS_V1: u8 = 24;
    pub const DELETE_ROWS_V1: u8 = 25;
    pub const BINLOG_CHECKPOINT: u8 = 161;
    pub const GTID: u8 = 162;
    pub const GTID_LIST: u8 = 163;
}

/// Header flags.
pub mod flag {
    /// LOG_EVENT_SUPPRESS_USE_F (MariaDB sets it on GTID events).
    pub const SUPPRESS_USE: u16 = 0x08;
}

/// GTID event flags (flags2).
pub mod gtid_flag {
    pub const STANDALONE: u8 = 0x01;
    pub const TRANSACTIONAL: u8 = 0x04;
    pub const ALLOW_PARALLEL: u8 = 0x08;
    pub const DDL: u8 = 0x20;
}

/// Rows event flag: the last rows event of a statement (table maps end).
pub const STMT_END_F: u16 = 0x0001;
/// Table map flag MariaDB always sets (TM_BIT_LEN_EXACT_F).
pub const TM_BIT_LEN_EXACT_F: u16 = 0x0001;

/// Number of event types FORMAT_DESCRIPTION describes (MariaDB 10.x's
/// LOG_EVENT_TYPES).
pub const EVENT_TYPES: usize = 171;

/// The post-header length of each event type 1..=EVENT_TYPES, as MariaDB
/// 10.x's FORMAT_DESCRIPTION lists them (types not listed: 0).
pub fn post_header_lengths() -> [u8; EVENT_TYPES] {
    let mut a = [0u8; EVENT_TYPES];
    let set: &[(usize, u8)] = &[
        (1, 56),   // START_V3
        (2, 13),   // QUERY
        (4, 8),    // ROTATE
        (6, 18),   // LOAD
        (8, 4),    // CREATE_FILE
        (9, 4),    // APPEND_BLOCK
        (10, 4),   // EXEC_LOAD
        (11, 4),   // DELETE_FILE
        (12, 18),  // NEW_LOAD
        (15, 228), // FORMAT_DESCRIPTION: 2 + 50 + 4 + 1 + EVENT_TYPES
        (17, 4),   // BEGIN_LOAD_QUERY
        (18, 26),  // EXECUTE_LOAD_QUERY
        (19, 8),   // TABLE_MAP
        (23, 8),   // WRITE_ROWS_V1
        (24, 8),   // UPDATE_ROWS_V1
        (25, 8),   // DELETE_ROWS_V1
        (26, 2),   // INCIDENT
        (30, 10),  // WRITE_ROWS (v2)
        (31, 10),  // UPDATE_ROWS (v2)
        (32, 10),  // DELETE_ROWS (v2)
        (39, 10),  // MySQL's PARTIAL_UPDATE etc. (v2 rows layouts)
        (40, 10),
        (41, 10),
        (161, 4),  // BINLOG_CHECKPOINT
        (162, 19), // GTID
        (163, 4),  // GTID_LIST
        (165, 13), // QUERY_COMPRESSED
        (166, 8),  // WRITE_ROWS_COMPRESSED_V1
        (167, 8),
        (168, 8),
        (169, 10), // WRITE_ROWS_COMPRESSED (v2)
        (170, 10),
        (171, 10),
    ];
    for &(t, n) in set {
        a[t - 1] = n;
    }
    a
}

/// CRC-32 (IEEE 802.3, the polynomial zlib's `crc32` uses), as the binlog
/// checksums events.
pub fn crc32(data: &[u8]) -> u32 {
    const fn table() -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    static TABLE: [u32; 256] = table();
    let mut c = !0u32;
    for &b in data {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Appends a length-encoded ("packed") integer: the protocol's, one codec
/// for both (`wire::codec`).
pub use wire::codec::put_lenenc_int as put_packed;

/// Appends the 6-byte table id.
fn put_table_id(out: &mut Vec<u8>, id: u64) {
    out.extend_from_slice(&id.to_le_bytes()[..6]);
}

/// The fields of the common header that the writer chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub timestamp: u32,
    pub kind: u8,
    pub server_id: u32,
    pub flags: u16,
}

/// Appends one whole event (header, `body`, CRC32) that starts at file
/// offset `pos`; returns the offset after it (the header's log_pos).
pub fn write_event(out: &mut Vec<u8>, pos: u64, h: Header, body: &[u8]) -> u64 {
    let start = out.len();
    let size = (HEADER_LEN + body.len() + CHECKSUM_LEN) as u32;
    let next = pos + size as u64;
    out.extend_from_slice(&h.timestamp.to_le_bytes());
    out.push(h.kind);
    out.extend_from_slice(&h.server_id.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    // Positions past 4 GiB wrap, as MariaDB's 4-byte log_pos does.
    out.extend_from_slice(&(next as u32).to_le_bytes());
    out.extend_from_slice(&h.flags.to_le_bytes());
    out.extend_from_slice(body);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    next
}

/// FORMAT_DESCRIPTION body (the checksum algorithm byte included).
pub fn format_description(created: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(2 + 50 + 4 + 1 + EVENT_TYPES + 1);
    b.extend_from_slice(&4u16.to_le_bytes());
    let mut ver = [0u8; 50];
    let v = SERVER_VERSION.as_bytes();
    ver[..v.len()].copy_from_slice(v);
    b.extend_from_slice(&ver);
    b.extend_from_slice(&created.to_le_bytes());
    b.push(HEADER_LEN as u8);
    b.extend_from_slice(&post_header_lengths());
    b.push(CHECKSUM_ALG_CRC32);
    b
}

/// ROTATE body: the next file's first position and name.
pub fn rotate(pos: u64, next_file: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + next_file.len());
    b.extend_from_slice(&pos.to_le_bytes());
    b.extend_from_slice(next_file.as_bytes());
    b
}

/// One GTID: domain, server id, sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gtid {
    pub domain: u32,
    pub server_id: u32,
    pub seq_no: u64,
}

impl std::fmt::Display for Gtid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.domain, self.server_id, self.seq_no)
    }
}

/// GTID_LIST body: the binlog state before the file (MariaDB pads an empty
/// list with two zero bytes; so do we).
pub fn gtid_list(list: &[Gtid]) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + 16 * list.len());
    b.extend_from_slice(&(list.len() as u32 & 0x0fff_ffff).to_le_bytes());
    for g in list {
        b.extend_from_slice(&g.domain.to_le_bytes());
        b.extend_from_slice(&g.server_id.to_le_bytes());
        b.extend_from_slice(&g.seq_no.to_le_bytes());
    }
    if list.is_empty() {
        b.extend_from_slice(&[0, 0]);
    }
    b
}

/// BINLOG_CHECKPOINT body: the oldest file crash recovery would need.
pub fn binlog_checkpoint(file: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + file.len());
    b.extend_from_slice(&(file.len() as u32).to_le_bytes());
    b.extend_from_slice(file.as_bytes());
    b
}

/// GTID body (the server id is in the header): seq_no, domain, flags2,
/// padded to the 19-byte post-header.
pub fn gtid(seq_no: u64, domain: u32, flags2: u8) -> Vec<u8> {
    let mut b = Vec::with_capacity(19);
    b.extend_from_slice(&seq_no.to_le_bytes());
    b.extend_from_slice(&domain.to_le_bytes());
    b.push(flags2);
    b.resize(19, 0);
    b
}

/// XID body.
pub fn xid(xid: u64) -> Vec<u8> {
    xid.to_le_bytes().to_vec()
}

/// What a QUERY event carries besides its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryInfo<'a> {
    pub thread_id: u32,
    /// Session option bits (`Q_FLAGS2_CODE`: e.g. 1 << 26 foreign key
    /// checks off).
    pub flags2: u32,
    /// Default database ("" for none).
    pub db: &'a str,
    pub sql_mode: u64,
    /// character_set_client, collation_connection, collation_server ids.
    pub charset: [u16; 3],
    pub query: &'a str,
}

/// QUERY body: post-header, status variables (flags2, sql_mode, catalog
/// "std", charsets: what MariaDB writes for DDL), db, NUL, query text.
pub fn query(q: &QueryInfo<'_>) -> Vec<u8> {
    let mut status = Vec::with_capacity(32);
    status.push(0); // Q_FLAGS2_CODE
    status.extend_from_slice(&q.flags2.to_le_bytes());
    status.push(1); // Q_SQL_MODE_CODE
    status.extend_from_slice(&q.sql_mode.to_le_bytes());
    status.push(6); // Q_CATALOG_NZ_CODE
    status.push(3);
    status.extend_from_slice(b"std");
    status.push(4); // Q_CHARSET_CODE
    for c in q.charset {
        status.extend_from_slice(&c.to_le_bytes());
    }
    let db = &q.db.as_bytes()[..q.db.len().min(255)];
    let mut b = Vec::with_capacity(13 + status.len() + db.len() + 1 + q.query.len());
    b.extend_from_slice(&q.thread_id.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // exec_time
    b.push(db.len() as u8);
    b.extend_from_slice(&0u16.to_le_bytes()); // error code
    b.extend_from_slice(&(status.len() as u16).to_le_bytes());
    b.extend_from_slice(&status);
    b.extend_from_slice(db);
    b.push(0);
    b.extend_from_slice(q.query.as_bytes());
    b
}

/// One column of a TABLE_MAP: its binlog type and metadata bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapColumn {
    pub ty: u8,
    pub meta: Vec<u8>,
    pub nullable: bool,
}

/// TABLE_MAP body.
pub fn table_map(table_id: u64, db: &str, table: &str, cols: &[MapColumn]) -> Vec<u8> {
    let mut b = Vec::with_capacity(32 + db.len() + table.len() + 3 * cols.len());
    put_table_id(&mut b, table_id);
    b.extend_from_slice(&TM_BIT_LEN_EXACT_F.to_le_bytes());
    let db = &db.as_bytes()[..db.len().min(255)];
    let table = &table.as_bytes()[..table.len().min(255)];
    b.push(db.len() as u8);
    b.extend_from_slice(db);
    b.push(0);
    b.push(table.len() as u8);
    b.extend_from_slice(table);
    b.push(0);
    put_packed(&mut b, cols.len() as u64);
    b.extend(cols.iter().map(|c| c.ty));
    let meta: Vec<u8> = cols.iter().flat_map(|c| c.meta.iter().copied()).collect();
    put_packed(&mut b, meta.len() as u64);
    b.extend_from_slice(&meta);
    let mut nulls = vec![0u8; cols.len().div_ceil(8)];
    for (i, c) in cols.iter().enumerate() {
        if c.nullable {
            nulls[i / 8] |= 1 << (i % 8);
        }
    }
    b.extend_from_slice(&nulls);
    b
}

/// The part of a v1 rows event body after its flags: column count and the
/// all-columns bitmap(s) (full row images: one for WRITE/DELETE, two for
/// UPDATE).
pub fn rows_head(kind: u8, ncols: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + 2 * ncols.div_ceil(8));
    put_packed(&mut b, ncols as u64);
    let images = if kind == kind::UPDATE_ROWS_V1 { 2 } else { 1 };
    for _ in 0..images {
        let mut bits = vec![0xffu8; ncols.div_ceil(8)];
        if !ncols.is_multiple_of(8) {
            if let Some(l) = bits.last_mut() {
                *l = (1u8 << (ncols % 8)) - 1;
            }
        }
        b.extend_from_slice(&bits);
    }
    b
}

/// A v1 rows event body: table id, flags, `head` (from [`rows_head`]) and
/// the row images.
pub fn rows(table_id: u64, flags: u16, head: &[u8], images: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + head.len() + images.len());
    put_table_id(&mut b, table_id);
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(head);
    b.extend_from_slice(images);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The CRC-32 check value of "123456789".
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn packed_ints() {
        let mut b = Vec::new();
        for v in [0u64, 250, 251, 65535, 65536, 1 << 24] {
            put_packed(&mut b, v);
        }
        assert_eq!(
            b,
            [0, 250, 0xfc, 251, 0, 0xfc, 0xff, 0xff, 0xfd, 0, 0, 1, 0xfe, 0, 0, 0, 1, 0, 0, 0, 0]
        );
    }

    #[test]
    fn rows_head_bitmaps() {
        assert_eq!(rows_head(kind::WRITE_ROWS_V1, 13), [13, 0xff, 0x1f]);
        assert_eq!(rows_head(kind::UPDATE_ROWS_V1, 8), [8, 0xff, 0xff]);
        assert_eq!(rows_head(kind::DELETE_ROWS_V1, 2), [2, 0x03]);
    }
}
