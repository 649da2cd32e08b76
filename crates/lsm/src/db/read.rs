//! The read path. A point lookup consults the memtable, the immutable
//! memtables (newest first), the level-0 tables (newest first) and then at
//! most one table per deeper level, stopping at the first entry for the key;
//! range tombstones met on the way hide older entries. An iterator merges
//! all those sources under the snapshot.
use super::iter::DbIterator;
use super::{ColumnFamily, Db, DEFAULT_CF};
use crate::error::{Error, Result};
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{self, SeqNo, ValueKind};
use crate::memtable::{Lookup, MemTable};
use crate::options::ReadOptions;
use crate::range_del::Tombstones;
use crate::sstable::filter;
use crate::stats::Stats;
use crate::table_cache::{file_contains, LevelIter};
use crate::version::Version;
use std::sync::Arc;

/// What a reader pins: memtables (newest first) and the version.
pub(crate) struct ReadView {
    pub mems: Vec<Arc<MemTable>>,
    pub version: Arc<Version>,
    pub seq: SeqNo,
    pub opts: Arc<crate::options::CfOptions>,
}

impl Db {
    pub(crate) fn view(&self, cf: ColumnFamily, snapshot: Option<SeqNo>) -> Result<ReadView> {
        let st = self.inner.lock();
        let c = st
            .cfs
            .get(&cf.0)
            .ok_or_else(|| Error::InvalidArgument(format!("no column family {}", cf.0)))?;
        let v = st
            .versions
            .cfs
            .get(&cf.0)
            .ok_or_else(|| Error::InvalidArgument(format!("no column family {}", cf.0)))?;
        let mut mems = Vec::with_capacity(1 + c.imms.len());
        mems.push(c.mem.clone());
        mems.extend(c.imms.iter().rev().cloned());
        Ok(ReadView {
            mems,
            version: v.current.clone(),
            seq: snapshot.unwrap_or(st.visible_seq),
            opts: c.opts.clone(),
        })
    }

    /// Reads `key` from the default column family.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_cf(&ReadOptions::default(), DEFAULT_CF, key)
    }

    /// Reads `key` from a column family, at the snapshot in `opts` if any.
    pub fn get_cf(
        &self,
        opts: &ReadOptions,
        cf: ColumnFamily,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        Stats::add(&self.inner.stats.gets, 1);
        let view = self.view(cf, opts.snapshot.as_ref().map(|s| s.seq()))?;
        let seq = view.seq;
        let mut covered: SeqNo = 0;
        for m in &view.mems {
            covered = covered.max(m.max_covering_tombstone(key, seq));
            match m.get(key, seq) {
                Some(Lookup::Value(v, s)) if s >= covered => return Ok(Some(v)),
                Some(_) => return Ok(None),
                None => {}
            }
        }
        let cmp = view.version.cmp;
        let target = key::internal_key(key, seq, key::KIND_FOR_SEEK);
        let hash = filter::key_hash(key);
        for (level, files) in view.version.levels.iter().enumerate() {
            // Level 0: every file holding the key, newest first; below: the
            // one file whose range holds it (no list built per level).
            let overlapping = if level == 0 { &files[..] } else { &[] };
            let one = if level == 0 {
                None
            } else {
                view.version.find_file(level, &target)
            };
            let candidates = overlapping
                .iter()
                .filter(|f| file_contains(cmp, f, key))
                .chain(one);
            for f in candidates {
                let t = self.inner.tables.get(f, level, cmp, view.opts.prefix_len)?;
                covered = covered.max(t.max_covering_tombstone(key, seq));
                if let Some((ik, v)) = t.get(&target, key, hash)? {
                    let p = key::parse_internal_key(&ik)
                        .ok_or_else(|| Error::corruption(t.name(), 0, "bad internal key"))?;
                    return Ok(match p.kind {
                        ValueKind::Value if p.seq >= covered => Some(v),
                        _ => None,
                    });
                }
            }
        }
        Ok(None)
    }

    /// An iterator over the default column family.
    pub fn iter(&self, opts: ReadOptions) -> Result<DbIterator> {
        self.iter_cf(opts, DEFAULT_CF)
    }

    /// An iterator over a column family.
    pub fn iter_cf(&self, opts: ReadOptions, cf: ColumnFamily) -> Result<DbIterator> {
        let view = self.view(cf, opts.snapshot.as_ref().map(|s| s.seq()))?;
        let cmp = view.version.cmp;
        let fill = !opts.no_fill_cache;
        let prefix_check = opts.prefix_same_as_start && view.opts.prefix_len.is_some();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        let mut tombs = Vec::new();
        for m in &view.mems {
            children.push(Box::new(m.iter()));
            tombs.extend(m.range_tombstones());
        }
        let in_bounds = |f: &crate::version::FileMeta| {
            let below = opts
                .upper_bound
                .as_ref()
                .is_some_and(|u| cmp.compare(f.smallest_user(), u) != std::cmp::Ordering::Less);
            let above = opts
                .lower_bound
                .as_ref()
                .is_some_and(|l| cmp.compare(f.largest_user(), l) == std::cmp::Ordering::Less);
            !below && !above
        };
        for (level, files) in view.version.levels.iter().enumerate() {
            let files: Vec<_> = files.iter().filter(|f| in_bounds(f)).cloned().collect();
            for f in &files {
                if f.info.num_range_deletions > 0 {
                    let t = self.inner.tables.get(f, level, cmp, view.opts.prefix_len)?;
                    tombs.extend(t.range_tombstones().iter().cloned());
                }
            }
            if level == 0 {
                for f in files {
                    let t = self
                        .inner
                        .tables
                        .get(&f, level, cmp, view.opts.prefix_len)?;
                    children.push(Box::new(t.iter(fill).with_prefix_check(prefix_check)));
                }
            } else if !files.is_empty() {
                children.push(Box::new(
                    LevelIter::new(
                        self.inner.tables.clone(),
                        files,
                        level,
                        cmp,
                        view.opts.prefix_len,
                        fill,
                    )
                    .with_prefix_check(prefix_check),
                ));
            }
        }
        let merged = MergingIterator::new(cmp, children);
        let tombstones = Tombstones::new(cmp, tombs, view.seq);
        Ok(DbIterator::new(
            Box::new(merged),
            cmp,
            view,
            tombstones,
            opts,
        ))
    }
}

impl Db {
    /// Roughly how many entries (versions and tombstones included) the
    /// default column family holds with user keys in `[lo, hi)`, as
    /// RocksDB's `GetApproximateSizes` with memtables: a table file wholly
    /// inside the range counts all of its entries, one that straddles a
    /// bound counts half; memtable entries are counted up to `mem_cap` per
    /// memtable. For planner estimates, never exact.
    pub fn approximate_entries(&self, lo: &[u8], hi: &[u8], mem_cap: u64) -> Result<u64> {
        self.approximate_entries_cf(DEFAULT_CF, lo, hi, mem_cap)
    }

    /// As [`Db::approximate_entries`], in column family `cf`.
    pub fn approximate_entries_cf(
        &self,
        cf: ColumnFamily,
        lo: &[u8],
        hi: &[u8],
        mem_cap: u64,
    ) -> Result<u64> {
        let view = self.view(cf, None)?;
        let cmp = view.version.cmp;
        let mut n: u64 = 0;
        for files in &view.version.levels {
            for f in files {
                let (s, l) = (f.smallest_user(), f.largest_user());
                if cmp.compare(l, lo).is_lt() || cmp.compare(s, hi).is_ge() {
                    continue;
                }
                let inside = cmp.compare(s, lo).is_ge() && cmp.compare(l, hi).is_lt();
                let e = f.info.num_entries;
                n = n.saturating_add(if inside { e } else { e / 2 });
            }
        }
        let target = key::internal_key(lo, key::MAX_SEQ, key::KIND_FOR_SEEK);
        for m in &view.mems {
            let mut it = m.iter();
            it.seek(&target);
            let mut k = 0;
            while it.valid() && k < mem_cap && cmp.compare(key::user_key(it.key()), hi).is_lt() {
                k += 1;
                it.next();
            }
            n = n.saturating_add(k);
        }
        Ok(n)
    }
}
