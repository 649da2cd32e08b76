//! Background work: flushing immutable memtables to level 0 and running
//! compactions. Threads come in two pools, as RocksDB's high- and
//! low-priority pools: flush threads (`max_background_jobs / 4`, at least
//! one) run only flushes, so a flush never waits for a thread behind a long
//! compaction; compaction threads (the rest, at least one) run flushes first,
//! then compactions. Each job is picked and installed under the state lock
//! and run without it. A failed job puts the database in the read-only
//! error state.
use super::{Db, Inner, State};
use crate::compaction::{self, Compaction, OutputSpec};
use crate::error::Result;
use crate::filename;
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::SeqNo;
use crate::memtable::MemTable;
use crate::options::{CfOptions, PrepopulateBlockCache};
use crate::sstable::table::BlockCache;
use crate::stats::Stats;
use crate::table_cache::LevelIter;
use crate::version::{NewFile, Version, VersionEdit};
use crate::vfs::Fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

pub(crate) use compaction::pending_compaction_bytes as pending_bytes;

/// Estimated pending compaction bytes (used for write stalls).
pub(crate) fn pending_compaction_bytes(v: &Version, o: &CfOptions) -> u64 {
    pending_bytes(v, o)
}

/// Writes the entries of `mems` to one level-0 table (None if empty).
pub(crate) fn write_level0_table(
    fs: &Arc<dyn Fs>,
    dir: &Path,
    opts: &CfOptions,
    number: u64,
    mems: &[Arc<MemTable>],
    stats: &Stats,
) -> Result<Option<NewFile>> {
    write_flush(fs, dir, opts, number, mems, stats, &[], None, None)
}

/// Writes the flush of `mems` to table `number`; `cache` is the block
/// cache, which gets the table's data blocks if the family's
/// `prepopulate_block_cache` says so.
#[allow(clippy::too_many_arguments)]
fn write_flush(
    fs: &Arc<dyn Fs>,
    dir: &Path,
    opts: &CfOptions,
    number: u64,
    mems: &[Arc<MemTable>],
    stats: &Stats,
    snapshots: &[SeqNo],
    limiter: Option<crate::rate_limit::Pacer<'_>>,
    cache: Option<&Arc<BlockCache>>,
) -> Result<Option<NewFile>> {
    let children: Vec<Box<dyn InternalIterator>> = mems
        .iter()
        .map(|m| Box::new(m.iter()) as Box<dyn InternalIterator>)
        .collect();
    let mut it = MergingIterator::new(opts.comparator, children);
    let tombs = mems.iter().flat_map(|m| m.range_tombstones()).collect();
    let spec = OutputSpec {
        fs,
        dir,
        opts,
        level: 0,
        bottommost: false,
        snapshots,
        target_file_size: u64::MAX,
        version: None,
        rate_limiter: limiter,
        filter: None,
        block_cache: cache
            .filter(|_| opts.prepopulate_block_cache != PrepopulateBlockCache::Disable),
    };
    let mut used = false;
    let mut next = || {
        used = true;
        number
    };
    let mut written = 0;
    let mut files =
        compaction::write_table_from_iter(&mut it, tombs, &spec, &mut next, &mut written, &mut 0)?;
    Stats::add(&stats.flush_bytes, written);
    Stats::add(&stats.flushes, 1);
    Ok(files.pop())
}

pub(super) enum Job {
    Flush {
        cf: u32,
        mems: Vec<Arc<MemTable>>,
        number: u64,
        opts: CfOptions,
        snapshots: Vec<SeqNo>,
    },
    Compact {
        cf: u32,
        c: Compaction,
        version: Arc<Version>,
        opts: CfOptions,
        snapshots: Vec<SeqNo>,
        /// When `snapshots` was taken (`FilterContext::unix_time`).
        unix_time: u64,
    },
}

pub(super) fn snapshots(st: &State) -> Vec<SeqNo> {
    st.snapshots.keys().copied().collect()
}

/// Which jobs a background thread runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Pool {
    /// Flushes only (RocksDB's high-priority pool).
    Flush,
    /// Flushes first, then compactions.
    Compaction,
}

/// Flush and compaction threads for `max_background_jobs` (RocksDB's split:
/// a quarter flush, at least one of each).
pub(crate) fn pool_sizes(jobs: usize) -> (usize, usize) {
    let flush = (jobs / 4).max(1);
    (flush, jobs.saturating_sub(flush).max(1))
}

fn pick_job(st: &mut State, pool: Pool, auto_compactions: bool) -> Option<Job> {
    if st.bg_error.is_some() || st.closing {
        return None;
    }
    let snaps = snapshots(st);
    // Still under the lock: a snapshot missing from `snaps` is newer.
    let unix_time = super::unix_now();
    for (id, cf) in st.cfs.iter_mut() {
        if !cf.imms.is_empty() && !cf.flushing {
            cf.flushing = true;
            let mems = cf.imms.clone();
            let opts = (*cf.opts).clone();
            let number = st.versions.new_file_number();
            return Some(Job::Flush {
                cf: *id,
                mems,
                number,
                opts,
                snapshots: snaps,
            });
        }
    }
    if pool == Pool::Flush || !auto_compactions {
        return None;
    }
    let oldest = snaps.first().copied().unwrap_or(SeqNo::MAX);
    for (id, cf) in st.cfs.iter() {
        let Some(v) = st.versions.cfs.get(id) else {
            continue;
        };
        if let Some(c) = compaction::pick(&v.current, &cf.opts, oldest) {
            for f in c.all_files() {
                f.being_compacted.store(true, Ordering::Release);
            }
            return Some(Job::Compact {
                cf: *id,
                c,
                version: v.current.clone(),
                opts: (*cf.opts).clone(),
                snapshots: snaps,
                unix_time,
            });
        }
    }
    None
}

pub(crate) fn background_loop(inner: Arc<Inner>, pool: Pool) {
    let mut st = inner.lock();
    let mut last_resume = std::time::Instant::now();
    loop {
        if st.closing {
            break;
        }
        if pool == Pool::Compaction && super::resume::due(&st, &inner, &mut last_resume) {
            drop(st);
            let _ = inner.resume();
            st = inner.lock();
            continue;
        }
        match pick_job(&mut st, pool, inner.auto_compactions) {
            Some(job) => {
                st.running_jobs += 1;
                drop(st);
                let r = run_job(&inner, job);
                st = inner.lock();
                st.running_jobs -= 1;
                if let Err(e) = r {
                    inner.set_bg_error(&mut st, "background job failed", &e);
                }
                inner.bg_cv.notify_all();
                inner.notify_writers(&st);
            }
            None => {
                st = inner.wait_bg(st, Duration::from_millis(500));
            }
        }
    }
}

/// How a flush (`high`) or a compaction pays the rate limiter.
fn pacer(inner: &Inner, high: bool) -> Option<crate::rate_limit::Pacer<'_>> {
    let limiter = inner.rate_limiter.as_ref()?;
    Stats::set(&inner.stats.compaction_rate_limit, limiter.rate());
    Some(crate::rate_limit::Pacer {
        limiter,
        high_priority: high,
        urgent: Some(&inner.compaction_urgent),
        slept_micros: Some(&inner.stats.compaction_rate_limited_micros),
    })
}

pub(super) fn run_job(inner: &Inner, job: Job) -> Result<()> {
    match job {
        Job::Flush {
            cf,
            mems,
            number,
            opts,
            snapshots,
        } => {
            let r = write_flush(
                &inner.fs,
                &inner.dir,
                &opts,
                number,
                &mems,
                &inner.stats,
                &snapshots,
                pacer(inner, true),
                inner.tables.block_cache(),
            )
            .and_then(|f| {
                // The new file's directory entry must be durable before the
                // manifest names it.
                if f.is_some() {
                    inner.fs.sync_dir(&inner.dir)?;
                }
                Ok(f)
            });
            let mut st = inner.lock();
            if let Some(c) = st.cfs.get_mut(&cf) {
                c.flushing = false;
            }
            let file = r?;
            inner
                .level_stats
                .record(0, 0, file.as_ref().map_or(0, |f| f.size));
            install_flush(inner, &mut st, cf, mems.len(), file)
        }
        Job::Compact {
            cf,
            c,
            version,
            opts,
            snapshots,
            unix_time,
        } => {
            let r = run_compaction_job(inner, cf, &c, &version, &opts, &snapshots, unix_time);
            let mut st = inner.lock();
            for f in c.all_files() {
                f.being_compacted.store(false, Ordering::Release);
            }
            let edit = r?;
            if !st.versions.cfs.contains_key(&cf) {
                // The family was dropped while the job ran: its outputs are
                // garbage (trivially moved inputs are the family's own files,
                // deleted with it), and there is nothing to log.
                for (_, f) in &edit.added {
                    if !edit.deleted.iter().any(|(_, n)| *n == f.number) {
                        remove_table(inner, f.number);
                    }
                }
                return Ok(());
            }
            inner.log_and_apply(&mut st, edit)
        }
    }
}

fn install_flush(
    inner: &Inner,
    st: &mut MutexGuard<'_, State>,
    cf: u32,
    n: usize,
    file: Option<NewFile>,
) -> Result<()> {
    let Some(c) = st.cfs.get(&cf) else {
        // Dropped meanwhile: the table is garbage.
        if let Some(f) = file {
            remove_table(inner, f.number);
        }
        return Ok(());
    };
    let log_number = c
        .imms
        .get(n)
        .map(|m| m.wal_number)
        .unwrap_or(c.mem.wal_number);
    let mut edit = VersionEdit {
        cf,
        log_number: Some(log_number),
        ..Default::default()
    };
    if let Some(f) = file {
        edit.added.push((0, f));
    }
    inner.log_and_apply(st, edit)?;
    if let Some(c) = st.cfs.get_mut(&cf) {
        c.imms.drain(..n.min(c.imms.len()));
    }
    delete_obsolete_wals(inner, st);
    Ok(())
}

/// Deletes a table file no version references.
fn remove_table(inner: &Inner, number: u64) {
    inner.tables.evict(number);
    let _ = inner.fs.remove(&filename::table(&inner.dir, number));
}

pub(super) fn delete_obsolete_wals(inner: &Inner, st: &mut State) {
    let current = st.wal_number;
    let min_needed = st
        .cfs
        .values()
        .map(|c| match c.imms.first() {
            Some(m) => m.wal_number,
            None if !c.mem.is_empty() => c.mem.wal_number,
            None => current,
        })
        .chain(st.wal_pins.iter().copied())
        .min()
        .unwrap_or(current);
    let (dead, live): (Vec<u64>, Vec<u64>) = st.live_wals.iter().partition(|w| **w < min_needed);
    st.live_wals = live;
    for w in dead {
        let _ = inner.fs.remove(&filename::wal(&inner.dir, w));
    }
}

fn input_iter(
    inner: &Inner,
    c: &Compaction,
    cmp: crate::key::Comparator,
    opts: &CfOptions,
) -> Result<(MergingIterator, Vec<crate::range_del::RangeTombstone>)> {
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut tombs = Vec::new();
    for f in c.all_files() {
        if f.info.num_range_deletions > 0 {
            let t = inner.tables.get(f, c.level, cmp, opts.prefix_len)?;
            tombs.extend(t.range_tombstones().iter().cloned());
        }
    }
    if c.level == 0 {
        for f in &c.inputs {
            let t = inner.tables.get(f, 0, cmp, opts.prefix_len)?;
            children.push(Box::new(t.iter(false)));
        }
    } else {
        children.push(Box::new(LevelIter::new(
            inner.tables.clone(),
            c.inputs.clone(),
            c.level,
            cmp,
            opts.prefix_len,
            false,
        )));
    }
    if !c.next.is_empty() {
        children.push(Box::new(LevelIter::new(
            inner.tables.clone(),
            c.next.clone(),
            c.output_level,
            cmp,
            opts.prefix_len,
            false,
        )));
    }
    Ok((MergingIterator::new(cmp, children), tombs))
}

fn run_compaction_job(
    inner: &Inner,
    cf: u32,
    c: &Compaction,
    version: &Version,
    opts: &CfOptions,
    snapshots: &[SeqNo],
    unix_time: u64,
) -> Result<VersionEdit> {
    let mut edit = VersionEdit {
        cf,
        ..Default::default()
    };
    for f in &c.inputs {
        edit.deleted.push((c.level, f.number()));
    }
    for f in &c.next {
        edit.deleted.push((c.output_level, f.number()));
    }
    if c.trivial_move {
        for f in &c.inputs {
            edit.added.push((c.output_level, f.info.clone()));
        }
        Stats::add(&inner.stats.trivial_moves, 1);
        return Ok(edit);
    }
    let cmp = version.cmp;
    let (mut it, tombs) = input_iter(inner, c, cmp, opts)?;
    let filter = opts.compaction_filter.as_ref().and_then(|f| {
        f.0.create(&compaction::FilterContext {
            cf,
            output_level: c.output_level,
            bottommost: c.bottommost,
            unix_time,
        })
    });
    let spec = OutputSpec {
        fs: &inner.fs,
        dir: &inner.dir,
        opts,
        level: c.output_level,
        bottommost: c.bottommost,
        snapshots,
        target_file_size: opts.target_file_size,
        version: Some(version),
        rate_limiter: pacer(inner, false),
        filter: filter.as_deref(),
        // Compaction outputs are not put into the cache: measured with
        // L0 outputs on TPC-C, no gain (bench/results/prepopulate-2026-11-27.md).
        block_cache: None,
    };
    let mut next = || inner.lock().versions.new_file_number();
    let mut written = 0;
    let mut filtered = 0;
    let files = compaction::write_table_from_iter(
        &mut it,
        tombs,
        &spec,
        &mut next,
        &mut written,
        &mut filtered,
    )?;
    Stats::add(&inner.stats.compaction_filtered, filtered);
    if !files.is_empty() {
        // Make the outputs' directory entries durable before the manifest names them.
        inner.fs.sync_dir(&inner.dir)?;
    }
    Stats::add(&inner.stats.compaction_bytes_read, c.input_bytes());
    Stats::add(&inner.stats.compaction_bytes_written, written);
    Stats::add(&inner.stats.compactions, 1);
    inner
        .level_stats
        .record(c.output_level, c.input_bytes(), written);
    for f in files {
        edit.added.push((c.output_level, f));
    }
    Ok(edit)
}

impl Db {
    /// Switches every non-empty memtable to immutable and waits until all
    /// are flushed to level 0.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush_all()
    }

    /// Waits until no flush or compaction is due or running (with
    /// `Options::disable_auto_compactions` no compaction is ever due).
    pub fn wait_for_compactions(&self) -> Result<()> {
        let mut st = self.inner.lock();
        loop {
            if let Some(e) = &st.bg_error {
                return Err(e.clone());
            }
            let oldest = st.snapshots.keys().next().copied().unwrap_or(SeqNo::MAX);
            let due = st.cfs.iter().any(|(id, cf)| {
                !cf.imms.is_empty()
                    || self.inner.auto_compactions
                        && st.versions.cfs.get(id).is_some_and(|v| {
                            compaction::pick(&v.current, &cf.opts, oldest).is_some()
                        })
            });
            if !due && st.running_jobs == 0 {
                return Ok(());
            }
            self.inner.bg_cv.notify_all();
            st = self.inner.wait_bg(st, Duration::from_millis(50));
        }
    }
}
