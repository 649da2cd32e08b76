//! Manual compaction and the reclamation of range-deleted key ranges.
//!
//! `Db::compact_range` (RocksDB's CompactRange) runs in the calling thread:
//! it flushes the memtables, then compacts every file overlapping the range
//! level by level down to the last level. It picks its inputs under the state
//! lock and marks them `being_compacted`, as the background threads do, so it
//! never works on a file a background compaction holds (it waits for it).
//!
//! `Db::reclaim_range` queues a key range whose data a range deletion made
//! garbage (a dropped table's indexes) for the reclaim thread, one per open
//! database: it flushes the memtables (the tombstone goes to a level-0
//! table, durable before any file goes), drops every table file whose whole
//! key range the tombstone covers (RocksDB's DeleteFilesInRange, at every
//! level), then compacts the range so the partly covered files at its edges
//! are rewritten without the deleted data. While a snapshot older than the
//! deletion is live the data must stay readable: the range waits and is
//! retried every second. The queue is not persisted: after a crash the
//! tombstones stay and ordinary compactions drop the data.
use super::bg::{run_job, snapshots, Job};
use super::{ColumnFamily, Db, Inner};
use crate::compaction;
use crate::error::{Error, Result};
use crate::key::SeqNo;
use crate::options::{WriteOptions, NUM_LEVELS};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a range blocked by a snapshot waits before the next try.
const RETRY: Duration = Duration::from_secs(1);

/// A range-deleted key range waiting to be reclaimed.
struct Reclaim {
    cf: u32,
    start: Vec<u8>,
    end: Vec<u8>,
    /// At or after the range tombstone's sequence number: files holding
    /// only older entries are garbage.
    seq: SeqNo,
    not_before: Instant,
}

#[derive(Default)]
struct Queue {
    ranges: VecDeque<Reclaim>,
    /// Ranges being worked on (0 or 1).
    running: usize,
}

/// The reclaim thread's work queue.
#[derive(Default)]
pub(crate) struct Reclaims {
    q: Mutex<Queue>,
    cv: Condvar,
}

impl Reclaims {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.q.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the reclaim thread (the database is closing).
    pub(crate) fn wake(&self) {
        let _q = self.lock();
        self.cv.notify_all();
    }
}

/// The reclaim thread: runs queued ranges until the database closes.
pub(crate) fn reclaim_loop(inner: Arc<Inner>) {
    loop {
        if inner.lock().closing {
            return;
        }
        let job = {
            let mut q = inner.reclaims.lock();
            let now = Instant::now();
            match q.ranges.iter().position(|r| r.not_before <= now) {
                Some(i) => {
                    q.running += 1;
                    q.ranges.remove(i)
                }
                None => {
                    let _ = inner
                        .reclaims
                        .cv
                        .wait_timeout(q, Duration::from_millis(200))
                        .unwrap_or_else(|p| p.into_inner());
                    None
                }
            }
        };
        let Some(mut r) = job else {
            continue;
        };
        let res = inner.reclaim(&r);
        let mut q = inner.reclaims.lock();
        q.running -= 1;
        match res {
            Ok(true) => {}
            Ok(false) => {
                r.not_before = Instant::now() + RETRY;
                q.ranges.push_back(r);
            }
            // Closing, a dropped column family or a failed job (the
            // database is read-only then): the tombstone stays and ordinary
            // compactions drop the data later.
            Err(_) => {}
        }
        inner.reclaims.cv.notify_all();
    }
}

impl Db {
    /// Compacts every file overlapping `[start, end]` (None = unbounded)
    /// down to the last level, dropping deleted and overwritten data that no
    /// snapshot needs (RocksDB's CompactRange). Runs in the calling thread,
    /// alongside the background compactions (never on the same files).
    pub fn compact_range(
        &self,
        cf: ColumnFamily,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.inner.compact_range(cf, start, end)
    }

    /// Queues `[start, end)` of a column family, just range-deleted
    /// (`delete_range`), for the reclaim thread: its files are removed from
    /// disk in the background (see the module comment). For ranges nobody
    /// writes to any more (a dropped table's): an entry written into the
    /// range after the deletion may be dropped with it.
    pub fn reclaim_range(&self, cf: ColumnFamily, start: &[u8], end: &[u8]) {
        let seq = self.inner.lock().visible_seq;
        let mut q = self.inner.reclaims.lock();
        q.ranges.push_back(Reclaim {
            cf: cf.0,
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
            not_before: Instant::now(),
        });
        self.inner.reclaims.cv.notify_all();
    }

    /// Ranges queued by `reclaim_range` and not reclaimed yet (also those
    /// waiting for a snapshot).
    pub fn pending_reclaims(&self) -> usize {
        let q = self.inner.reclaims.lock();
        q.ranges.len() + q.running
    }

    /// Waits until every range queued by `reclaim_range` is reclaimed, or
    /// `timeout` passes (false then).
    pub fn wait_for_reclaims(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        let mut q = self.inner.reclaims.lock();
        loop {
            if q.ranges.is_empty() && q.running == 0 {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            q = self
                .inner
                .reclaims
                .cv
                .wait_timeout(q, (until - now).min(Duration::from_millis(100)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Inner {
    /// Reclaims one range: Ok(false) while a snapshot still needs its data.
    fn reclaim(&self, r: &Reclaim) -> Result<bool> {
        let buffered = {
            let st = self.lock();
            if st.closing {
                return Err(Error::Closed);
            }
            let Some(c) = st.cfs.get(&r.cf) else {
                return Err(Error::InvalidArgument(format!("no column family {}", r.cf)));
            };
            if st.snapshots.range(..r.seq).next().is_some() {
                return Ok(false);
            }
            !c.mem.is_empty() || !c.imms.is_empty()
        };
        if buffered {
            // The tombstone (and data of the range) into level 0 first.
            self.flush_all()?;
        }
        if !self.drop_files_in_range(r)? {
            return Ok(false);
        }
        self.compact_range(ColumnFamily(r.cf), Some(&r.start), Some(&r.end))?;
        Ok(true)
    }

    /// Drops the files (any level) inside `[start, end)` holding only
    /// entries older than the range's deletion. False if some could not go
    /// yet (a snapshot reads them, or a compaction does).
    fn drop_files_in_range(&self, r: &Reclaim) -> Result<bool> {
        let mut st = self.lock();
        let Some(v) = st.versions.cfs.get(&r.cf).map(|c| c.current.clone()) else {
            return Ok(true);
        };
        let cmp = v.cmp;
        let mut edit = crate::version::VersionEdit {
            cf: r.cf,
            ..Default::default()
        };
        let mut all = true;
        for (level, files) in v.levels.iter().enumerate() {
            for f in files {
                let inside = cmp.compare(&r.start, f.smallest_user())
                    != std::cmp::Ordering::Greater
                    && cmp.compare(f.largest_user(), &r.end) == std::cmp::Ordering::Less;
                if !inside || f.info.largest_seq >= r.seq {
                    continue;
                }
                let seen = st
                    .snapshots
                    .range(f.info.smallest_seq..r.seq)
                    .next()
                    .is_some();
                if seen || f.is_compacting() {
                    all = false;
                } else {
                    edit.deleted.push((level, f.number()));
                }
            }
        }
        if !edit.deleted.is_empty() {
            self.log_and_apply(&mut st, edit)?;
        }
        Ok(all)
    }

    /// Switches every non-empty memtable to immutable and waits until all
    /// are flushed to level 0 (`Db::flush`), giving up when the database
    /// closes.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.write(WriteOptions::default(), None, true)?;
        let mut st = self.lock();
        loop {
            if let Some(e) = &st.bg_error {
                return Err(e.clone());
            }
            if st.closing {
                return Err(Error::Closed);
            }
            if st.cfs.values().all(|c| c.imms.is_empty()) {
                return Ok(());
            }
            self.bg_cv.notify_all();
            st = self.wait_bg(st, Duration::from_millis(100));
        }
    }

    /// The manual compaction behind [`Db::compact_range`].
    pub(crate) fn compact_range(
        &self,
        cf: ColumnFamily,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.flush_all()?;
        let last = NUM_LEVELS - 1;
        for level in 0..NUM_LEVELS {
            loop {
                let mut st = self.lock();
                if let Some(e) = &st.bg_error {
                    return Err(e.clone());
                }
                if st.closing {
                    return Err(Error::Closed);
                }
                let Some(cfs) = st.cfs.get(&cf.0) else {
                    return Err(Error::InvalidArgument(format!("no column family {}", cf.0)));
                };
                let opts = (*cfs.opts).clone();
                let Some(v) = st.versions.cfs.get(&cf.0).map(|v| v.current.clone()) else {
                    return Ok(());
                };
                let cmp = v.cmp;
                let files: Vec<_> = v.levels[level]
                    .iter()
                    .filter(|f| {
                        start.is_none_or(|s| {
                            cmp.compare(f.largest_user(), s) != std::cmp::Ordering::Less
                        }) && end.is_none_or(|e| {
                            cmp.compare(f.smallest_user(), e) != std::cmp::Ordering::Greater
                        })
                    })
                    .cloned()
                    .collect();
                if files.is_empty() {
                    break;
                }
                let deeper = (level + 1..NUM_LEVELS).any(|l| !v.levels[l].is_empty());
                let output = if level == last || !deeper && level > 0 {
                    // With a compaction filter that wants this compaction every
                    // file is rewritten so the filter sees it (RocksDB's
                    // kIfHaveCompactionFilter).
                    let filtered = opts.compaction_filter.as_ref().is_some_and(|f| {
                        f.0.create(&compaction::FilterContext {
                            cf: cf.0,
                            output_level: level,
                            bottommost: true,
                            unix_time: super::unix_now(),
                        })
                        .is_some()
                    });
                    if !filtered
                        && !files.iter().any(|f| {
                            f.info.num_deletions + f.info.num_range_deletions > 0
                                || f.info.largest_seq > 0
                        })
                    {
                        break;
                    }
                    level
                } else if level == 0 {
                    compaction::picker::targets(&v, &opts).base_level
                } else {
                    level + 1
                };
                if files.iter().any(|f| f.is_compacting()) {
                    st = self.wait_bg(st, Duration::from_millis(20));
                    drop(st);
                    continue;
                }
                let inputs = if level == 0 {
                    v.levels[0].clone()
                } else {
                    files
                };
                let Some(mut c) = compaction::picker::build(&v, level, output, inputs, "manual")
                else {
                    st = self.wait_bg(st, Duration::from_millis(20));
                    drop(st);
                    continue;
                };
                if output == level {
                    c.trivial_move = false;
                }
                for f in c.all_files() {
                    f.being_compacted.store(true, Ordering::Release);
                }
                let snaps = snapshots(&st);
                // Under the lock the snapshot list was read with.
                let unix_time = super::unix_now();
                st.running_jobs += 1;
                drop(st);
                let r = run_job(
                    self,
                    Job::Compact {
                        cf: cf.0,
                        c: c.clone(),
                        version: v.clone(),
                        opts,
                        snapshots: snaps,
                        unix_time,
                    },
                );
                let mut st = self.lock();
                st.running_jobs -= 1;
                self.bg_cv.notify_all();
                if let Err(e) = r {
                    if !matches!(e, Error::InvalidArgument(_)) {
                        self.set_bg_error(&mut st, "manual compaction failed", &e);
                    }
                    return Err(e);
                }
                if output == level {
                    break; // rewritten in place: done with this level
                }
            }
        }
        Ok(())
    }
}
