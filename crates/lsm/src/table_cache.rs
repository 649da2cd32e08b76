//! The open-table cache: keeps up to `max_open_files` tables open (file
//! handle, index block, filter, range tombstones) keyed by file number.
//! Also the `LevelIter`, which walks the sorted files of one level and opens
//! each through this cache as it reaches it. Threads that miss on the same
//! file at once wait for the one opening it (`opening`): each open reads
//! the file's whole index and filter, megabytes for a large file, and 32
//! connections meeting a cold file together read it 32 times over (a
//! TPC-C run at 600 MB was OOM-killed so).
use crate::cache::LruCache;
use crate::error::Result;
use crate::filename;
use crate::iter::InternalIterator;
use crate::key::{self, Comparator};
use crate::sstable::table::BlockCache;
use crate::sstable::{Table, TableIter};
use crate::stats::Stats;
use crate::version::FileMeta;
use crate::vfs::Fs;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

/// Open tables by file number.
pub struct TableCache {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    tables: LruCache<u64, Arc<Table>>,
    blocks: Option<Arc<BlockCache>>,
    stats: Arc<Stats>,
    cache_index_and_filter: bool,
    /// A gate per file being opened (see the module comment).
    opening: Mutex<HashMap<u64, Arc<Mutex<()>>>>,
}

impl TableCache {
    /// A cache of up to `max_open` tables.
    pub fn new(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        max_open: usize,
        blocks: Option<Arc<BlockCache>>,
        stats: Arc<Stats>,
        cache_index_and_filter: bool,
    ) -> Self {
        TableCache {
            fs,
            dir,
            tables: LruCache::new(max_open.max(16)),
            blocks,
            stats,
            cache_index_and_filter,
            opening: Mutex::new(HashMap::new()),
        }
    }

    /// The open table for file `f`, which lives in `level` (level-0
    /// tables pin their index and filter), reading with the file's global
    /// sequence number if it has one.
    pub fn get(
        &self,
        f: &FileMeta,
        level: usize,
        cmp: Comparator,
        prefix_len: Option<usize>,
    ) -> Result<Arc<Table>> {
        let number = f.number();
        if let Some(t) = self.tables.get(&number) {
            return Ok(t);
        }
        // One thread opens the file; the others wait for it, then find it.
        let gate = self
            .opening
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(number)
            .or_default()
            .clone();
        let r = {
            let _one = gate.lock().unwrap_or_else(|e| e.into_inner());
            match self.tables.get(&number) {
                Some(t) => Ok(t),
                None => self.open(f, level, cmp, prefix_len),
            }
        };
        let mut opening = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        if opening.get(&number).is_some_and(|g| Arc::ptr_eq(g, &gate)) {
            opening.remove(&number);
        }
        r
    }

    /// Opens file `f` and caches it (`get` without the cache lookup).
    fn open(
        &self,
        f: &FileMeta,
        level: usize,
        cmp: Comparator,
        prefix_len: Option<usize>,
    ) -> Result<Arc<Table>> {
        let number = f.number();
        let path = filename::table(&self.dir, number);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = self.fs.open(&path)?;
        let pin = !self.cache_index_and_filter || level == 0;
        let t = Arc::new(
            Table::open_cached(
                file,
                &name,
                cmp,
                self.blocks.clone().map(|c| (c, number)),
                self.stats.clone(),
                prefix_len,
                pin,
            )?
            .with_global_seq(f.info.global_seq),
        );
        self.tables.insert(number, t.clone(), 1);
        Ok(t)
    }

    /// Forgets a deleted file.
    pub fn evict(&self, number: u64) {
        self.tables.remove(&number);
    }

    /// The block cache, if any.
    pub fn block_cache(&self) -> Option<&Arc<BlockCache>> {
        self.blocks.as_ref()
    }
}

/// Iterates over the disjoint, sorted files of one level.
pub struct LevelIter {
    cache: Arc<TableCache>,
    files: Vec<Arc<FileMeta>>,
    cmp: Comparator,
    prefix_len: Option<usize>,
    level: usize,
    prefix_check: bool,
    idx: usize,
    cur: Option<TableIter>,
    err: Option<crate::Error>,
    fill_cache: bool,
}

impl LevelIter {
    /// Iterates over `files` (sorted, disjoint) of `level`.
    pub fn new(
        cache: Arc<TableCache>,
        files: Vec<Arc<FileMeta>>,
        level: usize,
        cmp: Comparator,
        prefix_len: Option<usize>,
        fill_cache: bool,
    ) -> LevelIter {
        let idx = files.len();
        LevelIter {
            cache,
            files,
            cmp,
            prefix_len,
            level,
            prefix_check: false,
            idx,
            cur: None,
            err: None,
            fill_cache,
        }
    }

    /// See [`TableIter::with_prefix_check`].
    pub fn with_prefix_check(mut self, on: bool) -> LevelIter {
        self.prefix_check = on;
        self
    }

    fn open(&mut self, i: usize) -> bool {
        self.idx = i;
        self.cur = None;
        let Some(f) = self.files.get(i) else {
            return false;
        };
        match self.cache.get(f, self.level, self.cmp, self.prefix_len) {
            Ok(t) => {
                self.cur = Some(t.iter(self.fill_cache).with_prefix_check(self.prefix_check));
                true
            }
            Err(e) => {
                self.err = Some(e);
                false
            }
        }
    }

    fn cur_valid(&self) -> bool {
        self.cur.as_ref().is_some_and(|c| c.valid())
    }

    fn cur_error(&mut self) -> bool {
        if let Some(c) = &self.cur {
            if let Err(e) = c.status() {
                self.err = Some(e);
                return true;
            }
        }
        self.err.is_some()
    }

    fn skip_forward(&mut self) {
        while !self.cur_valid() && !self.cur_error() {
            if self.idx + 1 >= self.files.len() {
                self.cur = None;
                self.idx = self.files.len();
                return;
            }
            if self.open(self.idx + 1) {
                if let Some(c) = &mut self.cur {
                    c.seek_to_first();
                }
            }
        }
    }

    fn skip_backward(&mut self) {
        while !self.cur_valid() && !self.cur_error() {
            if self.idx == 0 || self.idx > self.files.len() {
                self.cur = None;
                self.idx = self.files.len();
                return;
            }
            if self.open(self.idx - 1) {
                if let Some(c) = &mut self.cur {
                    c.seek_to_last();
                }
            }
        }
    }
}

impl InternalIterator for LevelIter {
    fn valid(&self) -> bool {
        self.err.is_none() && self.cur_valid()
    }
    fn seek_to_first(&mut self) {
        self.err = None;
        if self.open(0) {
            if let Some(c) = &mut self.cur {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }
    fn seek_to_last(&mut self) {
        self.err = None;
        if !self.files.is_empty() && self.open(self.files.len() - 1) {
            if let Some(c) = &mut self.cur {
                c.seek_to_last();
            }
        }
        self.skip_backward();
    }
    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        let cmp = self.cmp;
        let i = self
            .files
            .partition_point(|f| cmp.compare_internal(&f.info.largest, target) == Ordering::Less);
        if self.open(i) {
            if let Some(c) = &mut self.cur {
                c.seek(target);
            }
        }
        self.skip_forward();
    }
    fn next(&mut self) {
        if let Some(c) = &mut self.cur {
            c.next();
        }
        self.skip_forward();
    }
    fn prev(&mut self) {
        if let Some(c) = &mut self.cur {
            c.prev();
        }
        self.skip_backward();
    }
    fn key(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.key())
    }
    fn value(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.value())
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// True if `k`'s user key is within the file's user key range.
pub fn file_contains(cmp: Comparator, f: &FileMeta, user_key: &[u8]) -> bool {
    cmp.compare(user_key, f.smallest_user()) != Ordering::Less
        && cmp.compare(user_key, key::user_key(&f.info.largest)) != Ordering::Greater
}
