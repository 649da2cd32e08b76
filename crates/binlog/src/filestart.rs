//! The `F` records of the binary log (one per file, key `'F'` + file number
//! big-endian): where each file starts in the records, the GTID state
//! before it, and the max_binlog_size and basename it was started with, so
//! that every file is re-derived byte for byte whatever the settings are
//! later. Layout: docs/formats/binlog.md.
use crate::event::Gtid;
use crate::{Error, Result};

/// Key prefix of file records.
pub(crate) const FILE_PREFIX: u8 = b'F';
/// `F` record versions: 1 (no max size or basename: the configured ones
/// apply), 2 (with them).
const FILE_RECORD_VERSION: u8 = 2;

/// Bytes as lowercase hex (keys in error messages).
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One file's start, as its `F` record keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileStart {
    pub(crate) num: u32,
    /// max_binlog_size when the file was started: it rotates after the
    /// first record that takes it to this size, whatever the setting is
    /// later (positions already served never move).
    pub(crate) max_size: u64,
    /// The basename the file was started under (its name).
    pub(crate) base: String,
    /// The file holds the records with sequence numbers above this (up to
    /// the next file's `after_seq`).
    pub(crate) after_seq: u64,
    pub(crate) timestamp: u32,
    pub(crate) server_id: u32,
    /// The last GTID before the file.
    pub(crate) gtid: Option<Gtid>,
}

impl FileStart {
    pub(crate) fn key(num: u32) -> Vec<u8> {
        let mut k = vec![FILE_PREFIX];
        k.extend_from_slice(&num.to_be_bytes());
        k
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = vec![FILE_RECORD_VERSION];
        v.extend_from_slice(&self.after_seq.to_le_bytes());
        v.extend_from_slice(&self.timestamp.to_le_bytes());
        v.extend_from_slice(&self.server_id.to_le_bytes());
        match self.gtid {
            None => v.push(0),
            Some(g) => {
                v.push(1);
                v.extend_from_slice(&g.domain.to_le_bytes());
                v.extend_from_slice(&g.server_id.to_le_bytes());
                v.extend_from_slice(&g.seq_no.to_le_bytes());
            }
        }
        v.extend_from_slice(&self.max_size.to_le_bytes());
        let base = &self.base.as_bytes()[..self.base.len().min(255)];
        v.push(base.len() as u8);
        v.extend_from_slice(base);
        v
    }

    /// Decodes an `F` record; a version 1 record gets `cfg`'s max size and
    /// basename.
    pub(crate) fn decode(key: &[u8], v: &[u8], cfg_max: u64, cfg_base: &str) -> Result<FileStart> {
        let bad = || {
            Error::Corrupt(format!(
                "binlog file record (key {}) does not decode",
                hex(key)
            ))
        };
        let num = u32::from_be_bytes(
            key.get(1..5)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        let version = v.first().copied().ok_or_else(bad)?;
        if version != 1 && version != FILE_RECORD_VERSION {
            return Err(bad());
        }
        let u32_at = |o: usize| -> Result<u32> {
            Ok(u32::from_le_bytes(
                v.get(o..o + 4)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            ))
        };
        let u64_at = |o: usize| -> Result<u64> {
            Ok(u64::from_le_bytes(
                v.get(o..o + 8)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            ))
        };
        let (gtid, end) = match v.get(17) {
            Some(0) => (None, 18),
            Some(1) => (
                Some(Gtid {
                    domain: u32_at(18)?,
                    server_id: u32_at(22)?,
                    seq_no: u64_at(26)?,
                }),
                34,
            ),
            _ => return Err(bad()),
        };
        let (max_size, base) = if version == 1 {
            (cfg_max, cfg_base.to_string())
        } else {
            let n = *v.get(end + 8).ok_or_else(bad)? as usize;
            let b = v.get(end + 9..end + 9 + n).ok_or_else(bad)?;
            let base = String::from_utf8(b.to_vec()).map_err(|_| bad())?;
            if base.is_empty() || base.contains(['/', '\\']) {
                return Err(bad());
            }
            (u64_at(end)?, base)
        };
        Ok(FileStart {
            num,
            max_size,
            base,
            after_seq: u64_at(1)?,
            timestamp: u32_at(9)?,
            server_id: u32_at(13)?,
            gtid,
        })
    }
}
