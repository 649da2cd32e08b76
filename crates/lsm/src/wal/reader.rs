//! Reads framed records back, reporting corruption with its byte offset.
use super::{BLOCK_SIZE, FIRST, FULL, HEADER_SIZE, LAST, MIDDLE};
use crate::coding::unmask_crc;
use crate::error::{Error, Result};

/// What to do with a bad fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailPolicy {
    /// Any bad fragment is an error (manifests, closed WAL files).
    Strict,
    /// A bad fragment with no valid fragment after it is a torn tail left
    /// by a crash: reading stops there. A bad fragment followed by valid
    /// ones is corruption of acknowledged data: an error.
    TolerateTornTail,
    /// Stop at the first bad fragment, whatever follows (RocksDB's
    /// kPointInTimeRecovery).
    PointInTime,
    /// Only a record cut short by the end of the file (a header, fragment or
    /// record that the writer had not finished when it died), or zeros to the
    /// end of the file, is a torn tail; any other bad fragment (a checksum
    /// mismatch in a complete fragment, say) is an error wherever it is, as
    /// LevelDB and RocksDB read their manifests. For manifests: dropping a
    /// complete record could drop acknowledged state.
    TruncatedTail,
}

/// Reasons a fragment is bad that only the end of the file can cause.
const CUT_SHORT: [&str; 3] = [
    "truncated header",
    "truncated fragment",
    "record without its last fragment",
];

/// Iterates over the records of an in-memory copy of a log file.
pub struct LogReader {
    data: Vec<u8>,
    name: String,
    pos: usize,
    policy: TailPolicy,
    /// Offset of the start of the last record returned.
    pub last_record_offset: u64,
    /// Set when reading stopped early at a torn tail (offset of the bad fragment).
    pub dropped_tail_at: Option<u64>,
}

enum Frag<'a> {
    Ok(u8, &'a [u8]),
    Eof,
    Bad(&'static str),
}

impl LogReader {
    /// Reads `data`, naming `name` in errors.
    pub fn new(data: Vec<u8>, name: &str, policy: TailPolicy) -> LogReader {
        LogReader {
            data,
            name: name.to_string(),
            pos: 0,
            policy,
            last_record_offset: 0,
            dropped_tail_at: None,
        }
    }

    fn frag_at(data: &[u8], pos: usize) -> (Frag<'_>, usize) {
        let in_block = pos % BLOCK_SIZE;
        let left = BLOCK_SIZE - in_block;
        if left < HEADER_SIZE {
            return (Frag::Eof, pos + left); // trailer: skip
        }
        let Some(h) = data.get(pos..pos + HEADER_SIZE) else {
            return if pos >= data.len() {
                (Frag::Eof, pos)
            } else {
                (Frag::Bad("truncated header"), pos)
            };
        };
        let typ = h[6];
        let len = u16::from_le_bytes([h[4], h[5]]) as usize;
        if typ == 0 && len == 0 && h[..4] == [0, 0, 0, 0] {
            return (Frag::Bad("zero header"), pos);
        }
        if !(FULL..=LAST).contains(&typ) {
            return (Frag::Bad("unknown fragment type"), pos);
        }
        if HEADER_SIZE + len > left {
            return (Frag::Bad("fragment crosses block boundary"), pos);
        }
        let Some(payload) = data.get(pos + HEADER_SIZE..pos + HEADER_SIZE + len) else {
            return (Frag::Bad("truncated fragment"), pos);
        };
        let stored = unmask_crc(u32::from_le_bytes([h[0], h[1], h[2], h[3]]));
        let crc = crc32c::crc32c_append(crc32c::crc32c(&[typ]), payload);
        if crc != stored {
            return (Frag::Bad("checksum mismatch"), pos);
        }
        (Frag::Ok(typ, payload), pos + HEADER_SIZE + len)
    }

    /// True if any valid fragment starts after `pos`.
    fn valid_fragment_after(&self, pos: usize) -> bool {
        let mut p = pos + 1;
        while p + HEADER_SIZE <= self.data.len() {
            if let (Frag::Ok(..), _) = Self::frag_at(&self.data, p) {
                return true;
            }
            p += 1;
        }
        false
    }

    fn bad(&mut self, at: usize, what: &str) -> Result<Option<Vec<u8>>> {
        let stop = match self.policy {
            TailPolicy::Strict => false,
            TailPolicy::PointInTime => true,
            TailPolicy::TolerateTornTail => !self.valid_fragment_after(at),
            TailPolicy::TruncatedTail => {
                CUT_SHORT.contains(&what)
                    || self.data[at.min(self.data.len())..].iter().all(|b| *b == 0)
            }
        };
        if stop {
            self.dropped_tail_at = Some(at as u64);
            self.pos = self.data.len();
            return Ok(None);
        }
        Err(Error::corruption(
            self.name.clone(),
            at as u64,
            format!("log record: {what}"),
        ))
    }

    /// The next whole record, `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>> {
        let mut rec: Option<(usize, Vec<u8>)> = None;
        loop {
            let start = self.pos;
            let (frag, next) = Self::frag_at(&self.data, self.pos);
            match frag {
                Frag::Eof => {
                    self.pos = next;
                    if next >= self.data.len() {
                        return match rec {
                            Some((at, _)) => self.bad(at, "record without its last fragment"),
                            None => Ok(None),
                        };
                    }
                }
                Frag::Bad(what) => return self.bad(start, what),
                Frag::Ok(typ, payload) => {
                    self.pos = next;
                    match (typ, rec.as_mut()) {
                        (FULL, None) => {
                            self.last_record_offset = start as u64;
                            return Ok(Some(payload.to_vec()));
                        }
                        (FIRST, None) => rec = Some((start, payload.to_vec())),
                        (MIDDLE, Some((_, buf))) => buf.extend_from_slice(payload),
                        (LAST, Some((_, buf))) => {
                            buf.extend_from_slice(payload);
                            let (at, buf) = rec.take().unwrap_or_default();
                            self.last_record_offset = at as u64;
                            return Ok(Some(buf));
                        }
                        _ => return self.bad(start, "fragment out of order"),
                    }
                }
            }
        }
    }
}
