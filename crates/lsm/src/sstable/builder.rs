//! Writes a table file from entries added in internal-key order, and
//! optionally puts each data block it writes into the block cache
//! (`prepopulate_block_cache`).
use super::block::{Block, BlockBuilder};
use super::filter;
use super::format::{encode_block, BlockHandle, Compression, Footer};
use super::table::{BlockCache, Cached};
use super::TableProperties;
use crate::error::Result;
use crate::key::{self, Comparator, ValueKind, MAX_SEQ};
use crate::range_del::RangeTombstone;
use crate::vfs::WritableFile;
use std::sync::Arc;

/// How to build a table.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// User key order.
    pub cmp: Comparator,
    /// Target uncompressed data block size.
    pub block_size: usize,
    /// Entries between restart points.
    pub restart_interval: usize,
    /// Bloom filter bits per key (0 = no filter).
    pub bloom_bits: u32,
    /// Also filter on fixed-length key prefixes of this length.
    pub prefix_len: Option<usize>,
    /// Data block compression.
    pub compression: Compression,
}

/// What a finished table contains.
#[derive(Debug, Clone)]
pub struct TableInfo {
    /// File size in bytes.
    pub file_size: u64,
    /// Smallest internal key (or range tombstone start).
    pub smallest: Vec<u8>,
    /// Largest internal key (or range tombstone end sentinel).
    pub largest: Vec<u8>,
    /// Properties as written.
    pub props: TableProperties,
}

/// Builds one table.
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    opts: TableOptions,
    offset: u64,
    data: BlockBuilder,
    index: BlockBuilder,
    pending: Option<BlockHandle>,
    last_key: Vec<u8>,
    last_user_hashed: Vec<u8>,
    hashes: filter::Hashes,
    range_dels: Vec<RangeTombstone>,
    props: TableProperties,
    smallest: Option<Vec<u8>>,
    largest: Option<Vec<u8>>,
    scratch: Vec<u8>,
    /// Where written data blocks go, and the table's cache id there.
    prepopulate: Option<(Arc<BlockCache>, u64)>,
}

impl TableBuilder {
    /// Starts a table in `file`.
    pub fn new(file: Box<dyn WritableFile>, opts: TableOptions) -> TableBuilder {
        let compression = Some(opts.compression);
        TableBuilder {
            file,
            data: BlockBuilder::new(opts.restart_interval),
            index: BlockBuilder::new(1),
            opts,
            offset: 0,
            pending: None,
            last_key: Vec::new(),
            last_user_hashed: Vec::new(),
            hashes: filter::Hashes::default(),
            range_dels: Vec::new(),
            props: TableProperties {
                smallest_seq: u64::MAX,
                compression,
                ..Default::default()
            },
            smallest: None,
            largest: None,
            scratch: Vec::new(),
            prepopulate: None,
        }
    }

    /// Inserts each data block, as written, into `cache` under `cache_id`
    /// (the id the table will be read with: its file number), at low
    /// priority. The cache key of a block is its offset, which a reader
    /// gets from the index, so a later read of the table finds it.
    pub fn with_block_cache(mut self, cache: Arc<BlockCache>, cache_id: u64) -> TableBuilder {
        self.prepopulate = Some((cache, cache_id));
        self
    }

    fn note_seq(&mut self, seq: u64) {
        self.props.smallest_seq = self.props.smallest_seq.min(seq);
        self.props.largest_seq = self.props.largest_seq.max(seq);
    }

    fn widen(&mut self, lo: &[u8], hi: &[u8]) {
        let cmp = self.opts.cmp;
        match &self.smallest {
            Some(s) if cmp.compare_internal(s, lo) != std::cmp::Ordering::Greater => {}
            _ => self.smallest = Some(lo.to_vec()),
        }
        match &self.largest {
            Some(l) if cmp.compare_internal(l, hi) != std::cmp::Ordering::Less => {}
            _ => self.largest = Some(hi.to_vec()),
        }
    }

    /// Adds a point entry; keys must be added in increasing internal order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if let Some(h) = self.pending.take() {
            let sep = self.separator(ikey);
            self.scratch.clear();
            h.encode_varint(&mut self.scratch);
            self.index.add(&sep, &self.scratch);
        }
        let p = key::parse_internal_key(ikey);
        if let Some(p) = p {
            self.note_seq(p.seq);
            if p.kind != ValueKind::Value {
                self.props.num_deletions += 1;
            }
            if self.opts.bloom_bits > 0
                && (self.hashes.is_empty() || self.last_user_hashed != p.user_key)
            {
                self.hashes.push(filter::key_hash(p.user_key));
                if let Some(n) = self.opts.prefix_len {
                    if p.user_key.len() >= n {
                        self.hashes
                            .push(filter::key_hash(&p.user_key[..n]) ^ PREFIX_SALT);
                    }
                }
                self.last_user_hashed.clear();
                self.last_user_hashed.extend_from_slice(p.user_key);
            }
        }
        if self.smallest.is_none() {
            self.smallest = Some(ikey.to_vec());
        }
        self.props.num_entries += 1;
        self.props.raw_key_size += ikey.len() as u64;
        self.props.raw_value_size += value.len() as u64;
        self.data.add(ikey, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        if self.data.size_estimate() >= self.opts.block_size {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Adds a range tombstone (any order).
    pub fn add_range_tombstone(&mut self, t: RangeTombstone) {
        let lo = key::internal_key(&t.start, t.seq, ValueKind::RangeDelete);
        let hi = key::internal_key(&t.end, MAX_SEQ, ValueKind::RangeDelete);
        self.widen(&lo, &hi);
        self.note_seq(t.seq);
        self.props.num_range_deletions += 1;
        self.range_dels.push(t);
    }

    fn separator(&self, next: &[u8]) -> Vec<u8> {
        let (a, b) = (key::user_key(&self.last_key), key::user_key(next));
        let s = self.opts.cmp.shortest_separator(a, b);
        if s.len() < a.len() && self.opts.cmp.compare(a, &s) == std::cmp::Ordering::Less {
            key::internal_key(&s, MAX_SEQ, key::KIND_FOR_SEEK)
        } else {
            self.last_key.clone()
        }
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        let mut raw = self.data.finish();
        // The next block is about as large: no regrowth while it fills.
        self.data.reserve(raw.len() + raw.len() / 8);
        let mut out = Vec::with_capacity(raw.len() + 8);
        let h = encode_block(&mut out, self.offset, &raw, self.opts.compression);
        self.write(&out)?;
        self.props.data_size += out.len() as u64;
        self.props.num_data_blocks += 1;
        self.pending = Some(h);
        if let Some((cache, id)) = &self.prepopulate {
            // Charged by length as a block read from the file is: no slack.
            if raw.capacity() > raw.len() + raw.len() / 8 {
                raw.shrink_to_fit();
            }
            // Our own block always has a valid restart array.
            if let Ok(b) = Block::new(raw) {
                let charge = b.size() + 64;
                cache.insert((*id, h.offset), Cached::Block(Arc::new(b)), charge);
            }
        }
        Ok(())
    }

    fn write(&mut self, b: &[u8]) -> Result<()> {
        self.file.append(b)?;
        self.offset += b.len() as u64;
        Ok(())
    }

    fn write_block(&mut self, raw: &[u8], c: Compression) -> Result<BlockHandle> {
        let mut out = Vec::with_capacity(raw.len() + 8);
        let h = encode_block(&mut out, self.offset, raw, c);
        self.write(&out)?;
        Ok(h)
    }

    /// Bytes written so far (approximate final size).
    pub fn file_size(&self) -> u64 {
        self.offset + self.data.size_estimate() as u64
    }

    /// Whether the table should end before the next user key: at
    /// `target_size` bytes, or at `MAX_FILTER_HASHES` filter hashes (a file
    /// of small keys would otherwise hold millions of them while it is
    /// built, 8 bytes each, and give a filter block of many megabytes that
    /// every cache miss reads whole).
    pub fn full(&self, target_size: u64) -> bool {
        self.file_size() >= target_size || self.hashes.len() >= MAX_FILTER_HASHES
    }

    /// Memory the builder holds beyond the data block being filled: the
    /// filter's key hashes and the index block.
    pub fn memory(&self) -> usize {
        self.hashes.memory() + self.index.size_estimate()
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.props.num_entries + self.props.num_range_deletions
    }

    /// Writes the remaining blocks and the footer, and syncs the file.
    pub fn finish(mut self) -> Result<TableInfo> {
        self.flush_block()?;
        if let Some(h) = self.pending.take() {
            self.scratch.clear();
            h.encode_varint(&mut self.scratch);
            let k = self.last_key.clone();
            self.index.add(&k, &self.scratch);
        }
        if !self.last_key.is_empty() {
            let (s, l) = (
                self.smallest.clone().unwrap_or_default(),
                self.last_key.clone(),
            );
            self.widen(&s, &l);
        }
        let mut footer = Footer::default();
        if self.opts.bloom_bits > 0 && !self.hashes.is_empty() {
            let f = filter::build(&self.hashes, self.opts.bloom_bits);
            self.props.filter_size = f.len() as u64;
            footer.filter = self.write_block(&f, Compression::None)?;
        }
        if !self.range_dels.is_empty() {
            let cmp = self.opts.cmp;
            let mut ts = std::mem::take(&mut self.range_dels);
            let mut keyed: Vec<(Vec<u8>, Vec<u8>)> = ts
                .drain(..)
                .map(|t| {
                    (
                        key::internal_key(&t.start, t.seq, ValueKind::RangeDelete),
                        t.end,
                    )
                })
                .collect();
            keyed.sort_by(|a, b| cmp.compare_internal(&a.0, &b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
            let mut b = BlockBuilder::new(1);
            for (k, v) in &keyed {
                b.add(k, v);
            }
            footer.range_del = self.write_block(&b.finish(), Compression::None)?;
        }
        let index = self.index.finish();
        self.props.index_size = index.len() as u64;
        if self.props.smallest_seq == u64::MAX {
            self.props.smallest_seq = 0;
        }
        self.props.smallest_key = self.smallest.clone().unwrap_or_default();
        self.props.largest_key = self.largest.clone().unwrap_or_default();
        let props = self.props.encode();
        footer.properties = self.write_block(&props, Compression::None)?;
        footer.index = self.write_block(&index, Compression::None)?;
        let f = footer.encode();
        self.write(&f)?;
        self.file.sync()?;
        Ok(TableInfo {
            file_size: self.offset,
            smallest: self.smallest.unwrap_or_default(),
            largest: self.largest.unwrap_or_default(),
            props: self.props,
        })
    }
}

/// Filter hashes after which compactions, flushes and bulk loads start a new
/// file (`TableBuilder::full`): 2M keys, 16 MiB of hashes while building, a
/// 2.5 MB filter at 10 bits a key.
pub const MAX_FILTER_HASHES: usize = 1 << 21;

/// Mixed into prefix hashes so a prefix never collides with an equal full key.
pub const PREFIX_SALT: u64 = 0x5bd1_e995_0000_0001;
