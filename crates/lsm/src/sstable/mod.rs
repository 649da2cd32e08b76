//! Sorted string tables: immutable files of sorted internal entries.
//!
//! ```text
//! table := data block* | filter block? | range-del block? | properties block
//!          | index block | footer
//! ```
//! Each block is followed by a 5-byte trailer (compression type + CRC32C).
//! The index block maps a separator key (>= the last key of a data block,
//! < the first key of the next) to that block's handle. See
//! docs/formats/sstable.md for the byte-level description.
pub mod block;
pub mod builder;
pub mod filter;
pub mod format;
pub mod table;

pub use builder::{TableBuilder, TableInfo, TableOptions, MAX_FILTER_HASHES};
pub use format::Compression;
pub use table::{Table, TableIter};

use crate::coding::{put_length_prefixed, put_varint64, Decoder};
use crate::error::{Error, Result};

/// Facts about a table, stored in its properties block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableProperties {
    /// Point entries (values and point tombstones).
    pub num_entries: u64,
    /// Point tombstones (Delete and SingleDelete).
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// Sum of internal key sizes.
    pub raw_key_size: u64,
    /// Sum of value sizes.
    pub raw_value_size: u64,
    /// Bytes of data blocks as stored.
    pub data_size: u64,
    /// Bytes of the index block.
    pub index_size: u64,
    /// Bytes of the filter block.
    pub filter_size: u64,
    /// Number of data blocks.
    pub num_data_blocks: u64,
    /// Smallest sequence number in the table.
    pub smallest_seq: u64,
    /// Largest sequence number in the table.
    pub largest_seq: u64,
    /// Smallest internal key (or range tombstone start); empty in format-1 tables.
    pub smallest_key: Vec<u8>,
    /// Largest internal key (or range tombstone end sentinel); empty in format-1 tables.
    pub largest_key: Vec<u8>,
    /// The compression the table's data blocks were written with (a block that
    /// would not shrink is stored as is); None in tables written before it was recorded.
    pub compression: Option<Compression>,
}

const PROPS: &[&str] = &[
    "num_entries",
    "num_deletions",
    "num_range_deletions",
    "raw_key_size",
    "raw_value_size",
    "data_size",
    "index_size",
    "filter_size",
    "num_data_blocks",
    "smallest_seq",
    "largest_seq",
];

impl TableProperties {
    fn fields(&self) -> [u64; 11] {
        [
            self.num_entries,
            self.num_deletions,
            self.num_range_deletions,
            self.raw_key_size,
            self.raw_value_size,
            self.data_size,
            self.index_size,
            self.filter_size,
            self.num_data_blocks,
            self.smallest_seq,
            self.largest_seq,
        ]
    }

    /// Encodes as `(name: lenprefixed, value)*`: numbers as varint64, the
    /// two key-range entries (`smallest_key`, `largest_key`) length-prefixed.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for (n, x) in PROPS.iter().zip(self.fields()) {
            put_length_prefixed(&mut v, n.as_bytes());
            put_varint64(&mut v, x);
        }
        for (n, k) in [
            ("smallest_key", &self.smallest_key),
            ("largest_key", &self.largest_key),
        ] {
            put_length_prefixed(&mut v, n.as_bytes());
            put_length_prefixed(&mut v, k);
        }
        if let Some(c) = self.compression {
            put_length_prefixed(&mut v, b"compression");
            put_varint64(&mut v, c as u64);
        }
        v
    }

    /// Decodes; unknown names are skipped (newer writers may add some).
    pub fn decode(b: &[u8]) -> Result<TableProperties> {
        let mut p = TableProperties::default();
        let mut d = Decoder::new(b);
        while !d.is_empty() {
            let bad = || Error::corruption("", 0, "properties block");
            let name = d.length_prefixed().ok_or_else(bad)?;
            if name == b"smallest_key" || name == b"largest_key" {
                let k = d.length_prefixed().ok_or_else(bad)?.to_vec();
                if name == b"smallest_key" {
                    p.smallest_key = k;
                } else {
                    p.largest_key = k;
                }
                continue;
            }
            let val = d.varint64().ok_or_else(bad)?;
            if name == b"compression" {
                p.compression = Some(
                    u8::try_from(val)
                        .ok()
                        .and_then(Compression::from_u8)
                        .ok_or_else(bad)?,
                );
                continue;
            }
            let slot = match name {
                b"num_entries" => &mut p.num_entries,
                b"num_deletions" => &mut p.num_deletions,
                b"num_range_deletions" => &mut p.num_range_deletions,
                b"raw_key_size" => &mut p.raw_key_size,
                b"raw_value_size" => &mut p.raw_value_size,
                b"data_size" => &mut p.data_size,
                b"index_size" => &mut p.index_size,
                b"filter_size" => &mut p.filter_size,
                b"num_data_blocks" => &mut p.num_data_blocks,
                b"smallest_seq" => &mut p.smallest_seq,
                b"largest_seq" => &mut p.largest_seq,
                _ => continue,
            };
            *slot = val;
        }
        Ok(p)
    }

    /// (name, value) pairs for dumps.
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        PROPS.iter().copied().zip(self.fields()).collect()
    }
}
