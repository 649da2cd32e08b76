//! Reading binlog files back: splitting a file into events (checking each
//! event's length, position and CRC32) and describing them as SHOW BINLOG
//! EVENTS does. Bytes from disk never panic this module: anything malformed
//! is an `Error::Corrupt`.
use crate::event::{crc32, kind, CHECKSUM_LEN, HEADER_LEN, MAGIC};
use crate::{Error, Result};

/// One event of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<'a> {
    /// Offset of the event in its file.
    pub pos: u64,
    pub timestamp: u32,
    pub kind: u8,
    pub server_id: u32,
    /// The header's log_pos: the offset after the event.
    pub end_pos: u64,
    pub flags: u16,
    /// The body, without header and checksum.
    pub body: &'a [u8],
}

/// Splits a whole binlog file into events; `Corrupt` on a bad magic, a
/// torn or mis-sized event, a wrong log_pos or a checksum mismatch.
pub fn events(file: &[u8]) -> Result<Vec<Event<'_>>> {
    if file.len() < 4 || file[..4] != MAGIC {
        return Err(Error::Corrupt("not a binlog file (bad magic)".into()));
    }
    events_at(&file[4..], 4)
}

/// Splits `bytes`, the part of a file that starts at offset `base` (an
/// event boundary), into whole events, with the same checks as [`events`].
pub fn events_at(bytes: &[u8], base: u64) -> Result<Vec<Event<'_>>> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p < bytes.len() {
        let file = bytes;
        let at = base + p as u64;
        let bad = |what: &str| Error::Corrupt(format!("event at {at}: {what}"));
        let h = file
            .get(p..p + HEADER_LEN)
            .ok_or_else(|| bad("torn header"))?;
        let size = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as usize;
        if size < HEADER_LEN + CHECKSUM_LEN {
            return Err(bad("size below the header"));
        }
        let ev = file.get(p..p + size).ok_or_else(|| bad("torn event"))?;
        out.push(event_at(ev, at)?);
        p += size;
    }
    Ok(out)
}

/// Checks one whole event `ev` found at offset `pos` of its file (size,
/// log_pos, CRC32) and splits it as [`events`] does.
pub fn event_at(ev: &[u8], pos: u64) -> Result<Event<'_>> {
    let bad = |what: &str| Error::Corrupt(format!("event at {pos}: {what}"));
    let h = ev.get(..HEADER_LEN).ok_or_else(|| bad("torn header"))?;
    let le32 = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
    let size = le32(9) as usize;
    if size != ev.len() || size < HEADER_LEN + CHECKSUM_LEN {
        return Err(bad("size does not match"));
    }
    let (data, sum) = ev.split_at(size - CHECKSUM_LEN);
    if crc32(data).to_le_bytes() != sum {
        return Err(bad("checksum mismatch"));
    }
    let end = le32(13) as u64;
    if end != (pos + size as u64) & 0xffff_ffff {
        return Err(bad("log_pos does not follow the event"));
    }
    Ok(Event {
        pos,
        timestamp: le32(0),
        kind: h[4],
        server_id: le32(5),
        end_pos: end,
        flags: u16::from_le_bytes([h[17], h[18]]),
        body: &data[HEADER_LEN..],
    })
}

/// SHOW BINLOG EVENTS' Event_type for a type code.
pub fn type_name(k: u8) -> String {
    match k {
        kind::QUERY => "Query".into(),
        kind::ROTATE => "Rotate".into(),
        kind::FORMAT_DESCRIPTION => "Format_desc".into(),
        kind::XID => "Xid".into(),
        kind::TABLE_MAP => "Table_map".into(),
        kind::WRITE_ROWS_V1 => "Write_rows_v1".into(),
        kind::UPDATE_ROWS_V1 => "Update_rows_v1".into(),
        kind::DELETE_ROWS_V1 => "Delete_rows_v1".into(),
        kind::BINLOG_CHECKPOINT => "Binlog_checkpoint".into(),
        kind::GTID => "Gtid".into(),
        kind::GTID_LIST => "Gtid_list".into(),
        k => format!("Unknown_{k}"),
    }
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

fn table_id(b: &[u8]) -> Option<u64> {
    let mut x = [0u8; 8];
    x[..6].copy_from_slice(b.get(..6)?);
    Some(u64::from_le_bytes(x))
}

/// SHOW BINLOG EVENTS' Info for an event (as MariaDB words it).
pub fn info(e: &Event<'_>) -> String {
    describe(e).unwrap_or_else(|| "(malformed event)".into())
}

fn describe(e: &Event<'_>) -> Option<String> {
    let b = e.body;
    let text = |x: &[u8]| String::from_utf8_lossy(x).into_owned();
    Some(match e.kind {
        kind::FORMAT_DESCRIPTION => {
            let ver = b.get(2..52)?;
            let ver = &ver[..ver.iter().position(|&c| c == 0).unwrap_or(ver.len())];
            format!(
                "Server ver: {}, Binlog ver: {}",
                text(ver),
                u16::from_le_bytes([b[0], b[1]])
            )
        }
        kind::ROTATE => format!("{};pos={}", text(b.get(8..)?), u64_at(b, 0)?),
        kind::XID => format!("COMMIT /* xid={} */", u64_at(b, 0)?),
        kind::BINLOG_CHECKPOINT => {
            let n = u32_at(b, 0)? as usize;
            text(b.get(4..4 + n)?)
        }
        kind::GTID => {
            let (seq, domain, fl) = (u64_at(b, 0)?, u32_at(b, 8)?, *b.get(12)?);
            let g = format!("{}-{}-{}", domain, e.server_id, seq);
            if fl & crate::event::gtid_flag::STANDALONE != 0 {
                format!("GTID {g}")
            } else {
                format!("BEGIN GTID {g}")
            }
        }
        kind::GTID_LIST => {
            let n = (u32_at(b, 0)? & 0x0fff_ffff) as usize;
            // Never more entries than the bytes present hold.
            let mut v = Vec::with_capacity(n.min(b.len() / 16));
            for i in 0..n {
                let o = 4 + 16 * i;
                v.push(format!(
                    "{}-{}-{}",
                    u32_at(b, o)?,
                    u32_at(b, o + 4)?,
                    u64_at(b, o + 8)?
                ));
            }
            format!("[{}]", v.join(","))
        }
        kind::QUERY => {
            let db_len = *b.get(8)? as usize;
            let status_len = u16::from_le_bytes([*b.get(11)?, *b.get(12)?]) as usize;
            let db_at = 13 + status_len;
            let db = text(b.get(db_at..db_at + db_len)?);
            let q = text(b.get(db_at + db_len + 1..)?);
            if db.is_empty() {
                q
            } else {
                format!("use `{}`; {q}", db.replace('`', "``"))
            }
        }
        kind::TABLE_MAP => {
            let id = table_id(b)?;
            let dl = *b.get(8)? as usize;
            let db = text(b.get(9..9 + dl)?);
            let tl = *b.get(10 + dl)? as usize;
            let t = text(b.get(11 + dl..11 + dl + tl)?);
            format!("table_id: {id} ({db}.{t})")
        }
        kind::WRITE_ROWS_V1 | kind::UPDATE_ROWS_V1 | kind::DELETE_ROWS_V1 => {
            let id = table_id(b)?;
            let fl = u16::from_le_bytes([*b.get(6)?, *b.get(7)?]);
            if fl & crate::event::STMT_END_F != 0 {
                format!("table_id: {id} flags: STMT_END_F")
            } else {
                format!("table_id: {id}")
            }
        }
        _ => String::new(),
    })
}
