//! The binary log's record of one transaction, as it is stored in the
//! `__binlog__` column family (docs/formats/binlog.md), and how a record
//! becomes events. A record is position-free: GTID sequence numbers, file
//! offsets and the XID are given to it when the log files are written, so
//! the committing transaction needs no ordering step of its own.
//!
//! ```text
//! record := version u8 (1) | server_id u32 | timestamp u32 | item*
//! item   := tag u8 | len u32 | payload
//!   1 TABLE_MAP  payload = TABLE_MAP event body
//!   2 ROWS_HEAD  payload = event type u8 | table id u64 | rows_head bytes
//!   3 ROW        payload = one row image (UPDATE: before image, after image)
//!   4 QUERY      payload = QUERY event body
//!   5 ROWS_HEAD_F payload = event type u8 | table id u64 | rows event flags
//!                u16 | rows_head bytes (a ROWS_HEAD whose events carry
//!                NO_FOREIGN_KEY_CHECKS_F / RELAXED_UNIQUE_CHECKS_F)
//!   6 QUERY_F    payload = event header flags u16 | QUERY event body
//!                (LOG_EVENT_SUPPRESS_USE_F for CREATE/DROP DATABASE)
//! ```
use crate::event::{self, gtid_flag, kind, Gtid, Header};
use crate::{Error, Result};

/// The record format version.
pub const VERSION: u8 = 1;
/// Bytes of the record header.
pub const HEADER_LEN: usize = 9;

pub const TAG_TABLE_MAP: u8 = 1;
pub const TAG_ROWS_HEAD: u8 = 2;
pub const TAG_ROW: u8 = 3;
pub const TAG_QUERY: u8 = 4;
pub const TAG_ROWS_HEAD_F: u8 = 5;
pub const TAG_QUERY_F: u8 = 6;

/// Rows event flags (besides STMT_END_F, which rendering sets).
pub mod rows_flag {
    /// NO_FOREIGN_KEY_CHECKS_F: foreign_key_checks was 0.
    pub const NO_FOREIGN_KEY_CHECKS: u16 = 0x0002;
    /// RELAXED_UNIQUE_CHECKS_F: unique_checks was 0.
    pub const RELAXED_UNIQUE_CHECKS: u16 = 0x0004;
}

/// Rows events are cut at about this many bytes of row images (MariaDB's
/// binlog_row_event_max_size default).
pub const MAX_ROWS_BYTES: usize = 8192;

/// A record's header.
pub fn header(server_id: u32, timestamp: u32) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.push(VERSION);
    h.extend_from_slice(&server_id.to_le_bytes());
    h.extend_from_slice(&timestamp.to_le_bytes());
    h
}

/// Appends one item.
pub fn item(out: &mut Vec<u8>, tag: u8, payload: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
}

/// A ROWS_HEAD payload.
pub fn rows_head_payload(event_kind: u8, table_id: u64, ncols: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(16);
    p.push(event_kind);
    p.extend_from_slice(&table_id.to_le_bytes());
    p.extend_from_slice(&event::rows_head(event_kind, ncols));
    p
}

/// Appends a rows head item: ROWS_HEAD, or ROWS_HEAD_F when the events get
/// `flags` (see [`rows_flag`]).
pub fn rows_head_item(out: &mut Vec<u8>, event_kind: u8, table_id: u64, flags: u16, ncols: usize) {
    if flags == 0 {
        item(
            out,
            TAG_ROWS_HEAD,
            &rows_head_payload(event_kind, table_id, ncols),
        );
        return;
    }
    let mut p = Vec::with_capacity(18);
    p.push(event_kind);
    p.extend_from_slice(&table_id.to_le_bytes());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&event::rows_head(event_kind, ncols));
    item(out, TAG_ROWS_HEAD_F, &p);
}

/// Appends a QUERY item whose event header gets `flags`.
pub fn query_item(out: &mut Vec<u8>, flags: u16, body: &[u8]) {
    if flags == 0 {
        item(out, TAG_QUERY, body);
        return;
    }
    let mut p = Vec::with_capacity(2 + body.len());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(body);
    item(out, TAG_QUERY_F, &p);
}

/// A decoded record: header fields and items.
#[derive(Debug)]
pub struct Record<'a> {
    pub server_id: u32,
    pub timestamp: u32,
    pub items: Vec<(u8, &'a [u8])>,
}

/// Decodes a record; `Corrupt` if it does not decode.
pub fn decode(b: &[u8]) -> Result<Record<'_>> {
    let bad = |w: &str| Error::Corrupt(format!("binlog record: {w}"));
    if b.len() < HEADER_LEN {
        return Err(bad("shorter than its header"));
    }
    if b[0] != VERSION {
        return Err(bad(&format!("unknown version {}", b[0])));
    }
    let le32 = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let (server_id, timestamp) = (le32(1), le32(5));
    let mut items = Vec::new();
    let mut p = HEADER_LEN;
    while p < b.len() {
        let h = b.get(p..p + 5).ok_or_else(|| bad("torn item header"))?;
        let n = u32::from_le_bytes([h[1], h[2], h[3], h[4]]) as usize;
        let payload = b.get(p + 5..p + 5 + n).ok_or_else(|| bad("torn item"))?;
        if !(TAG_TABLE_MAP..=TAG_QUERY_F).contains(&h[0]) {
            return Err(bad(&format!("unknown item tag {}", h[0])));
        }
        items.push((h[0], payload));
        p += 5 + n;
    }
    Ok(Record {
        server_id,
        timestamp,
        items,
    })
}

/// Where the log stands when a record is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// Offset in the current file.
    pub pos: u64,
    /// The last GTID written (None: none yet).
    pub gtid: Option<Gtid>,
}

/// Appends the events of record `rec` (engine sequence number `seq`, also
/// its XID) at `cur`: GTID, then TABLE_MAP / rows events / QUERY in the
/// record's order, then XID when the transaction changed rows. Advances
/// `cur`.
pub fn render(out: &mut Vec<u8>, cur: &mut Cursor, rec: &Record<'_>, seq: u64) -> Result<()> {
    let has_rows = rec
        .items
        .iter()
        .any(|(t, _)| *t == TAG_ROWS_HEAD || *t == TAG_ROWS_HEAD_F);
    let flags2 = if has_rows {
        gtid_flag::TRANSACTIONAL | gtid_flag::ALLOW_PARALLEL
    } else {
        gtid_flag::STANDALONE | gtid_flag::ALLOW_PARALLEL | gtid_flag::DDL
    };
    let seq_no = cur.gtid.map_or(0, |g| g.seq_no) + 1;
    let h = |k: u8, flags: u16| Header {
        timestamp: rec.timestamp,
        kind: k,
        server_id: rec.server_id,
        flags,
    };
    cur.pos = event::write_event(
        out,
        cur.pos,
        h(kind::GTID, event::flag::SUPPRESS_USE),
        &event::gtid(seq_no, 0, flags2),
    );
    cur.gtid = Some(Gtid {
        domain: 0,
        server_id: rec.server_id,
        seq_no,
    });
    let mut pending: Option<Pending<'_>> = None;
    for &(tag, payload) in &rec.items {
        match tag {
            TAG_TABLE_MAP => {
                flush(out, cur, rec, &mut pending, true);
                cur.pos = event::write_event(out, cur.pos, h(kind::TABLE_MAP, 0), payload);
            }
            TAG_ROWS_HEAD | TAG_ROWS_HEAD_F => {
                flush(out, cur, rec, &mut pending, true);
                let head_at = if tag == TAG_ROWS_HEAD { 9 } else { 11 };
                if payload.len() < head_at {
                    return Err(Error::Corrupt("binlog record: short rows head".into()));
                }
                let mut id = [0u8; 8];
                id.copy_from_slice(&payload[1..9]);
                let flags = match tag {
                    TAG_ROWS_HEAD => 0,
                    _ => u16::from_le_bytes([payload[9], payload[10]]),
                };
                pending = Some(Pending {
                    kind: payload[0],
                    table_id: u64::from_le_bytes(id),
                    flags,
                    head: &payload[head_at..],
                    images: Vec::new(),
                });
            }
            TAG_ROW => {
                let Some(p) = pending.as_ref() else {
                    return Err(Error::Corrupt("binlog record: row before rows head".into()));
                };
                if !p.images.is_empty() && p.images.len() + payload.len() > MAX_ROWS_BYTES {
                    flush(out, cur, rec, &mut pending, false);
                }
                if let Some(p) = pending.as_mut() {
                    p.images.extend_from_slice(payload);
                }
            }
            TAG_QUERY_F => {
                flush(out, cur, rec, &mut pending, true);
                let (fl, body) = match payload {
                    [a, b, body @ ..] => (u16::from_le_bytes([*a, *b]), body),
                    _ => return Err(Error::Corrupt("binlog record: short query".into())),
                };
                cur.pos = event::write_event(out, cur.pos, h(kind::QUERY, fl), body);
            }
            _ => {
                flush(out, cur, rec, &mut pending, true);
                cur.pos = event::write_event(out, cur.pos, h(kind::QUERY, 0), payload);
            }
        }
    }
    flush(out, cur, rec, &mut pending, true);
    if has_rows {
        cur.pos = event::write_event(out, cur.pos, h(kind::XID, 0), &event::xid(seq));
    }
    Ok(())
}

/// A rows event being gathered.
struct Pending<'a> {
    kind: u8,
    table_id: u64,
    flags: u16,
    head: &'a [u8],
    images: Vec<u8>,
}

/// Writes the gathered rows event (flagged STMT_END_F when `end`, which
/// also ends the gathering).
fn flush(
    out: &mut Vec<u8>,
    cur: &mut Cursor,
    rec: &Record<'_>,
    p: &mut Option<Pending<'_>>,
    end: bool,
) {
    if let Some(g) = p.as_mut() {
        let flags = g.flags | if end { event::STMT_END_F } else { 0 };
        let body = event::rows(g.table_id, flags, g.head, &g.images);
        let h = Header {
            timestamp: rec.timestamp,
            kind: g.kind,
            server_id: rec.server_id,
            flags: 0,
        };
        cur.pos = event::write_event(out, cur.pos, h, &body);
        g.images.clear();
    }
    if end {
        *p = None;
    }
}
