//! Reads a table: verifies the footer, keeps range tombstones in memory
//! while the table is open, and reads data blocks through the shared block
//! cache. The index block and filter are either pinned in the table (the
//! default, and always for level-0 tables) or, with
//! `cache_index_and_filter_blocks`, kept in the block cache and charged to
//! its capacity at high priority: evicted only after data blocks, or when
//! they fill more than half the cache (read again from the file then).
use super::block::{Block, BlockIter};
use super::builder::PREFIX_SALT;
use super::filter::{self, Bloom};
use super::format::{read_block, BlockHandle, Footer, FOOTER_SIZE};
use super::TableProperties;
use crate::cache::LruCache;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, Comparator, SeqNo};
use crate::range_del::{RangeTombstone, Tombstones};
use crate::stats::Stats;
use crate::vfs::RandomAccessFile;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What the block cache holds.
#[derive(Clone)]
pub enum Cached {
    /// A data or index block.
    Block(Arc<Block>),
    /// A filter.
    Filter(Arc<Bloom>),
}

/// The block cache type: (cache id, offset) -> block or filter. A table of
/// a database is cached under its file number (file numbers are never
/// reused in a database, and each database has its own cache), so a flush
/// can insert the blocks it writes before the table is opened, and a table
/// opened again (after the table cache dropped it) finds its blocks.
/// Tables opened outside a database take ids from [`fresh_cache_id`].
pub type BlockCache = LruCache<(u64, u64), Cached>;

/// Ids for tables not named by a file number: above any file number.
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1 << 63);

/// A cache id no file number and no other table uses.
pub fn fresh_cache_id() -> u64 {
    NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed)
}

/// An open table.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    name: String,
    cmp: Comparator,
    index_handle: BlockHandle,
    filter_handle: Option<BlockHandle>,
    pinned_index: Option<Arc<Block>>,
    pinned_filter: Option<Arc<Bloom>>,
    range_dels: Vec<RangeTombstone>,
    props: TableProperties,
    cache: Option<Arc<BlockCache>>,
    cache_id: u64,
    stats: Arc<Stats>,
    prefix_len: Option<usize>,
    /// When not 0, every entry reads with this sequence number (an
    /// ingested table's global sequence number, from the manifest).
    global_seq: SeqNo,
    /// Held while an index or filter block is read again (`cached_meta`).
    meta_gate: Mutex<()>,
}

impl Table {
    /// Opens and verifies a table, cached (if `cache`) under a fresh id.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        name: &str,
        cmp: Comparator,
        cache: Option<Arc<BlockCache>>,
        stats: Arc<Stats>,
        prefix_len: Option<usize>,
        pin: bool,
    ) -> Result<Table> {
        let cache = cache.map(|c| (c, fresh_cache_id()));
        Table::open_cached(file, name, cmp, cache, stats, prefix_len, pin)
    }

    /// Opens and verifies a table whose blocks are cached in `cache.0`
    /// under id `cache.1` (a database's table: its file number).
    pub fn open_cached(
        file: Arc<dyn RandomAccessFile>,
        name: &str,
        cmp: Comparator,
        cache: Option<(Arc<BlockCache>, u64)>,
        stats: Arc<Stats>,
        prefix_len: Option<usize>,
        pin: bool,
    ) -> Result<Table> {
        let (cache, cache_id) = match cache {
            Some((c, id)) => (Some(c), id),
            None => (None, 0),
        };
        let size = file.size();
        if size < FOOTER_SIZE as u64 {
            return Err(Error::corruption(name, 0, "file too short to be a table"));
        }
        let foff = size - FOOTER_SIZE as u64;
        let footer = Footer::decode(&file.read_at(foff, FOOTER_SIZE)?, name, foff)?;
        let rd = |h: BlockHandle| read_block(file.as_ref(), h, name);
        let index = Block::new(rd(footer.index)?).map_err(|e| e.in_file(name))?;
        let props =
            TableProperties::decode(&rd(footer.properties)?).map_err(|e| e.in_file(name))?;
        let filter = if footer.filter.size > 0 {
            Some(Arc::new(Bloom::new(rd(footer.filter)?).ok_or_else(
                || Error::corruption(name, footer.filter.offset, "malformed filter block"),
            )?))
        } else {
            None
        };
        let mut range_dels = Vec::new();
        if footer.range_del.size > 0 {
            let b = Arc::new(Block::new(rd(footer.range_del)?).map_err(|e| e.in_file(name))?);
            let mut it = BlockIter::new(b, cmp);
            it.seek_to_first();
            while it.valid() {
                let p = key::parse_internal_key(it.key()).ok_or_else(|| {
                    Error::corruption(name, footer.range_del.offset, "bad range tombstone key")
                })?;
                range_dels.push(RangeTombstone {
                    start: p.user_key.to_vec(),
                    end: it.value().to_vec(),
                    seq: p.seq,
                });
                it.next();
            }
            it.status().map_err(|e| e.in_file(name))?;
        }
        let pin = pin || cache.is_none();
        let index = Arc::new(index);
        if let (false, Some(c)) = (pin, &cache) {
            c.insert_high(
                (cache_id, footer.index.offset),
                Cached::Block(index.clone()),
                index.size() + 64,
            );
            if let Some(f) = &filter {
                c.insert_high(
                    (cache_id, footer.filter.offset),
                    Cached::Filter(f.clone()),
                    f.size() + 64,
                );
            }
        }
        Ok(Table {
            file,
            name: name.to_string(),
            cmp,
            index_handle: footer.index,
            filter_handle: (footer.filter.size > 0).then_some(footer.filter),
            pinned_index: pin.then_some(index),
            pinned_filter: if pin { filter } else { None },
            range_dels,
            props,
            cache,
            cache_id,
            stats,
            prefix_len,
            global_seq: 0,
            meta_gate: Mutex::new(()),
        })
    }

    /// Makes every entry and range tombstone of the table read with
    /// sequence number `seq` (0: as stored), RocksDB's global sequence
    /// number: an ingested table's entries are written with 0 and take the
    /// number the manifest gives the file.
    pub fn with_global_seq(mut self, seq: SeqNo) -> Table {
        if seq != 0 {
            self.global_seq = seq;
            for t in &mut self.range_dels {
                t.seq = seq;
            }
        }
        self
    }

    /// The global sequence number (0: none).
    pub fn global_seq(&self) -> SeqNo {
        self.global_seq
    }

    /// The index block (pinned, cached, or read again).
    fn index(&self) -> Result<Arc<Block>> {
        if let Some(i) = &self.pinned_index {
            return Ok(i.clone());
        }
        let h = self.index_handle;
        match self.cached_meta(h, || {
            let b = Block::new(read_block(self.file.as_ref(), h, &self.name)?)
                .map_err(|e| e.in_file(&self.name))?;
            Ok(Cached::Block(Arc::new(b)))
        })? {
            Cached::Block(b) => Ok(b),
            Cached::Filter(_) => Err(Error::corruption(&self.name, h.offset, "index is a filter")),
        }
    }

    /// The filter, if the table has one.
    fn filter(&self) -> Result<Option<Arc<Bloom>>> {
        if self.pinned_index.is_some() {
            return Ok(self.pinned_filter.clone());
        }
        let Some(h) = self.filter_handle else {
            return Ok(None);
        };
        match self.cached_meta(h, || {
            let f = Bloom::new(read_block(self.file.as_ref(), h, &self.name)?)
                .ok_or_else(|| Error::corruption(&self.name, h.offset, "malformed filter block"))?;
            Ok(Cached::Filter(Arc::new(f)))
        })? {
            Cached::Filter(f) => Ok(Some(f)),
            Cached::Block(_) => Err(Error::corruption(&self.name, h.offset, "filter is a block")),
        }
    }

    /// An index or filter block kept in the block cache: found there, or
    /// read by `read` and inserted at high priority. One reader at a time
    /// per table reads it again (`meta_gate`): each is megabytes for a large
    /// file, and 32 connections missing together would hold 32 copies.
    fn cached_meta(&self, h: BlockHandle, read: impl FnOnce() -> Result<Cached>) -> Result<Cached> {
        let lookup = || {
            self.cache
                .as_ref()
                .and_then(|c| c.get(&(self.cache_id, h.offset)))
        };
        if let Some(m) = lookup() {
            return Ok(m);
        }
        let _one = self.meta_gate.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = lookup() {
            return Ok(m);
        }
        let m = read()?;
        Stats::add(&self.stats.bytes_read, h.size + 5);
        if let Some(c) = &self.cache {
            let size = match &m {
                Cached::Block(b) => b.size(),
                Cached::Filter(f) => f.size(),
            };
            c.insert_high((self.cache_id, h.offset), m.clone(), size + 64);
        }
        Ok(m)
    }

    /// The table's properties.
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }
    /// The table's range tombstones.
    pub fn range_tombstones(&self) -> &[RangeTombstone] {
        &self.range_dels
    }
    /// File name used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Memory held outside the block cache (pinned index + filter).
    pub fn pinned_bytes(&self) -> usize {
        self.pinned_index.as_ref().map_or(0, |i| i.size())
            + self.pinned_filter.as_ref().map_or(0, |f| f.size())
    }

    /// Highest tombstone sequence covering `user_key` visible at `snapshot`.
    pub fn max_covering_tombstone(&self, user_key: &[u8], snapshot: SeqNo) -> SeqNo {
        if self.range_dels.is_empty() {
            return 0;
        }
        Tombstones::max_covering_in(&self.range_dels, self.cmp, user_key, snapshot)
    }

    /// False if the filter proves no key has this prefix.
    pub fn may_contain_prefix(&self, prefix: &[u8]) -> bool {
        match (self.filter(), self.prefix_len) {
            (Ok(Some(f)), Some(n)) if prefix.len() == n => {
                f.may_contain(filter::key_hash(prefix) ^ PREFIX_SALT)
            }
            _ => true,
        }
    }

    /// Reads a data block through the cache.
    pub fn block(&self, h: BlockHandle, fill_cache: bool) -> Result<Arc<Block>> {
        self.block_with(h, fill_cache, None)
    }

    /// Like [`Table::block`], reading misses through a readahead window
    /// (sequential scans and compactions).
    fn block_with(
        &self,
        h: BlockHandle,
        fill_cache: bool,
        ra: Option<&mut Readahead>,
    ) -> Result<Arc<Block>> {
        if let Some(c) = &self.cache {
            if let Some(Cached::Block(b)) = c.get(&(self.cache_id, h.offset)) {
                Stats::add(&self.stats.block_cache_hits, 1);
                return Ok(b);
            }
            Stats::add(&self.stats.block_cache_misses, 1);
        }
        let raw = match ra {
            Some(ra) => ra.read(self, h)?,
            None => {
                Stats::add(&self.stats.bytes_read, h.size + 5);
                read_block(self.file.as_ref(), h, &self.name)?
            }
        };
        let b = Arc::new(
            Block::new(raw).map_err(|e| Error::corruption(&self.name, h.offset, e.to_string()))?,
        );
        if let (Some(c), true) = (&self.cache, fill_cache) {
            c.insert(
                (self.cache_id, h.offset),
                Cached::Block(b.clone()),
                b.size() + 64,
            );
        }
        Ok(b)
    }

    /// First entry `>= target` whose user key equals `user_key`, if any.
    /// `hash` is the filter hash of `user_key`.
    pub fn get(
        &self,
        target: &[u8],
        user_key: &[u8],
        hash: u64,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if let Some(f) = self.filter()? {
            Stats::add(&self.stats.bloom_checked, 1);
            if !f.may_contain(hash) {
                Stats::add(&self.stats.bloom_useful, 1);
                return Ok(None);
            }
        }
        let mut idx = BlockIter::new(self.index()?, self.cmp);
        idx.seek(target);
        while idx.valid() {
            let h = BlockHandle::decode_varint(idx.value()).ok_or_else(|| {
                Error::corruption(
                    &self.name,
                    self.index_handle.offset,
                    "bad block handle in index",
                )
            })?;
            let mut it = BlockIter::new(self.block(h, true)?, self.cmp);
            it.seek(target);
            it.status()
                .map_err(|e| Error::corruption(&self.name, h.offset, e.to_string()))?;
            if it.valid() {
                if self.cmp.compare(key::user_key(it.key()), user_key) == std::cmp::Ordering::Equal
                {
                    if self.global_seq == 0 {
                        return Ok(Some((it.key().to_vec(), it.value().to_vec())));
                    }
                    // One entry per user key in such a table: it is newer
                    // than the lookup, or it is the entry.
                    if self.global_seq > key::seq_of(target) {
                        return Ok(None);
                    }
                    let mut k = Vec::new();
                    key::replace_seq(&mut k, it.key(), self.global_seq);
                    return Ok(Some((k, it.value().to_vec())));
                }
                return Ok(None);
            }
            idx.next();
        }
        idx.status()
            .map_err(|e| e.in_block(&self.name, self.index_handle.offset))?;
        Ok(None)
    }

    /// A cursor over every point entry.
    pub fn iter(self: &Arc<Self>, fill_cache: bool) -> TableIter {
        let (index, err) = match self.index() {
            Ok(i) => (i, None),
            Err(e) => (Arc::new(Block::empty()), Some(e)),
        };
        TableIter {
            index: BlockIter::new(index, self.cmp),
            gkey: Vec::new(),
            table: self.clone(),
            data: None,
            data_handle: None,
            err: None,
            index_err: err,
            fill_cache,
            prefix_check: false,
            // A scan that bypasses the cache reads ahead at once; one that
            // fills it starts after two sequential block misses (a point
            // lookup or short range scan reads just the blocks it needs).
            readahead: if fill_cache {
                Readahead::after_sequential_misses(2)
            } else {
                Readahead::default()
            },
        }
    }
}

/// A window of the file read ahead of a sequential reader.
#[derive(Default)]
pub struct Readahead {
    offset: u64,
    buf: Vec<u8>,
    size: usize,
    /// Blocks missed in a row, each starting where the previous one ended,
    /// read one by one before the window is used (0: use it at once).
    after: u32,
    /// Sequential misses so far (outside the window).
    run: u32,
    /// End of the last block read.
    last_end: Option<u64>,
}

/// Largest gap between two blocks that still counts as sequential.
const SEQUENTIAL_GAP: u64 = 8192;

impl Readahead {
    /// A window used only after `n` sequential block misses (RocksDB's
    /// automatic readahead for iterators that fill the cache).
    pub fn after_sequential_misses(n: u32) -> Readahead {
        Readahead {
            after: n,
            ..Readahead::default()
        }
    }

    fn read(&mut self, t: &Table, h: BlockHandle) -> Result<Vec<u8>> {
        let need = usize::try_from(h.size)
            .ok()
            .filter(|n| *n < 1 << 30)
            .ok_or_else(|| Error::corruption(&t.name, h.offset, "block size out of range"))?
            + super::format::TRAILER_SIZE;
        let end = h.offset.saturating_add(need as u64);
        let in_window = h.offset >= self.offset && end <= self.offset + self.buf.len() as u64;
        let sequential = self
            .last_end
            .is_some_and(|e| h.offset >= e && h.offset <= e.saturating_add(SEQUENTIAL_GAP));
        self.last_end = Some(end);
        if !in_window && self.after > 0 {
            if sequential {
                self.run = self.run.saturating_add(1);
            } else {
                // A jump: start over (the next window starts small).
                self.run = 1;
                self.buf.clear();
                self.size = 0;
            }
            if self.run <= self.after {
                Stats::add(&t.stats.bytes_read, h.size + 5);
                return read_block(t.file.as_ref(), h, &t.name);
            }
        }
        if !in_window {
            // Grow the window while reads continue where the last one ended
            // (up to 1 MiB); a jump reads just the block.
            let window_end = self.offset + self.buf.len() as u64;
            let sequential = self.buf.is_empty()
                || (h.offset >= window_end && h.offset <= window_end + SEQUENTIAL_GAP);
            self.size = if sequential {
                (self.size * 2).clamp(64 << 10, 1 << 20)
            } else {
                0
            };
            let len = (self.size as u64)
                .min(t.file.size().saturating_sub(h.offset))
                .max(need as u64);
            if h.offset.saturating_add(len) > t.file.size() {
                return Err(Error::corruption(
                    &t.name,
                    h.offset,
                    "block handle beyond end of file",
                ));
            }
            self.buf = t.file.read_at(h.offset, len as usize)?;
            self.offset = h.offset;
            Stats::add(&t.stats.bytes_read, len);
        }
        let start = (h.offset - self.offset) as usize;
        super::format::decode_block(self.buf[start..start + need].to_vec(), h, &t.name)
    }
}

/// Two-level iterator: the index block picks data blocks.
pub struct TableIter {
    table: Arc<Table>,
    /// The current key with the table's global sequence number (when it
    /// has one).
    gkey: Vec<u8>,
    index: BlockIter,
    data: Option<BlockIter>,
    data_handle: Option<u64>,
    err: Option<Error>,
    /// The index block could not be read: the iterator is empty and failed.
    index_err: Option<Error>,
    fill_cache: bool,
    /// Seeks consult the prefix bloom first (prefix-mode iteration).
    prefix_check: bool,
    /// Read-ahead window for block cache misses.
    readahead: Readahead,
}

impl TableIter {
    /// Makes seeks skip the table when its prefix bloom rules the seek
    /// key's prefix out (for iterators that stay within one prefix).
    pub fn with_prefix_check(mut self, on: bool) -> TableIter {
        self.prefix_check = on;
        self
    }

    fn init_data(&mut self) {
        if !self.index.valid() {
            self.data = None;
            self.data_handle = None;
            return;
        }
        let Some(h) = BlockHandle::decode_varint(self.index.value()) else {
            self.err = Some(Error::corruption(
                self.table.name(),
                self.table.index_handle.offset,
                "bad block handle in index",
            ));
            self.data = None;
            return;
        };
        if self.data_handle == Some(h.offset) && self.data.is_some() {
            return;
        }
        match self
            .table
            .block_with(h, self.fill_cache, Some(&mut self.readahead))
        {
            Ok(b) => {
                self.data = Some(BlockIter::new(b, self.table.cmp));
                self.data_handle = Some(h.offset);
            }
            Err(e) => {
                self.err = Some(e);
                self.data = None;
                self.data_handle = None;
            }
        }
    }

    fn data_valid(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn check_data_status(&mut self) {
        if let Some(d) = &self.data {
            if let Err(e) = d.status() {
                let off = self.data_handle.unwrap_or(0);
                self.err = Some(Error::corruption(self.table.name(), off, e.to_string()));
                self.data = None;
            }
        }
    }

    /// Rebuilds `gkey` for the current entry (tables with a global
    /// sequence number only).
    fn apply_global(&mut self) {
        let g = self.table.global_seq;
        if g != 0 {
            if let Some(d) = self.data.as_ref().filter(|d| d.valid()) {
                key::replace_seq(&mut self.gkey, d.key(), g);
            }
        }
    }

    fn skip_forward(&mut self) {
        self.check_data_status();
        while !self.data_valid() && self.err.is_none() {
            if !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.next();
            self.init_data();
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
            self.check_data_status();
        }
    }

    fn skip_backward(&mut self) {
        self.check_data_status();
        while !self.data_valid() && self.err.is_none() {
            if !self.index.valid() {
                self.data = None;
                return;
            }
            self.index.prev();
            self.init_data();
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
            self.check_data_status();
        }
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.err.is_none() && self.index_err.is_none() && self.data_valid()
    }
    fn seek_to_first(&mut self) {
        self.err = None;
        self.index.seek_to_first();
        self.init_data();
        if let Some(d) = &mut self.data {
            d.seek_to_first();
        }
        self.skip_forward();
        self.apply_global();
    }
    fn seek_to_last(&mut self) {
        self.err = None;
        self.index.seek_to_last();
        self.init_data();
        if let Some(d) = &mut self.data {
            d.seek_to_last();
        }
        self.skip_backward();
        self.apply_global();
    }
    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        if self.prefix_check {
            if let Some(n) = self.table.prefix_len {
                let uk = key::user_key(target);
                if uk.len() >= n && !self.table.may_contain_prefix(&uk[..n]) {
                    self.data = None;
                    self.data_handle = None;
                    return;
                }
            }
        }
        self.index.seek(target);
        self.init_data();
        if let Some(d) = &mut self.data {
            d.seek(target);
        }
        self.skip_forward();
        self.apply_global();
        // The stored entry of the target's user key (sequence 0) is at or
        // after the target, but with the global number it may be before it
        // (newer than the target's number): then the next entry is the one.
        let g = self.table.global_seq;
        if g != 0
            && self.valid()
            && g > key::seq_of(target)
            && self
                .table
                .cmp
                .compare(key::user_key(&self.gkey), key::user_key(target))
                == std::cmp::Ordering::Equal
        {
            self.next();
        }
    }
    fn next(&mut self) {
        if let Some(d) = &mut self.data {
            d.next();
        }
        self.skip_forward();
        self.apply_global();
    }
    fn prev(&mut self) {
        if let Some(d) = &mut self.data {
            d.prev();
        }
        self.skip_backward();
        self.apply_global();
    }
    fn key(&self) -> &[u8] {
        if self.table.global_seq != 0 {
            return &self.gkey;
        }
        self.data.as_ref().map_or(&[], |d| d.key())
    }
    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }
    fn status(&self) -> Result<()> {
        if let Some(e) = self.index_err.as_ref().or(self.err.as_ref()) {
            return Err(e.clone());
        }
        self.index
            .status()
            .map_err(|e| e.in_file(self.table.name()))
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
