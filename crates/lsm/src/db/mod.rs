//! The database: ties the write path (WAL + memtables, write.rs), the read
//! path (read.rs, iter.rs), background flush and compaction (bg.rs) and the
//! version set together.
//!
//! Locking: one mutex guards [`State`] (memtable lists, versions, the write
//! queue, snapshots). It is never held during WAL writes, fsyncs of the WAL,
//! table building or block reads; it is held while a version edit is
//! appended to the manifest.
mod bg;
mod bulk;
mod checkpoint;
mod iter;
mod manual;
mod open;
mod ops;
mod props;
mod read;
mod resume;
mod stall;
mod write;

pub use bulk::BulkWriter;
pub use checkpoint::CheckpointInfo;
pub use iter::DbIterator;
pub use ops::SstFileWriter;
pub use props::{option_pairs, CfInfo, LevelInfo, SstInfo};

use crate::error::{Error, Result};
use crate::key::{Comparator, SeqNo};
use crate::memtable::MemTable;
use crate::options::CfOptions;
use crate::stats::{Stats, StatsSnapshot};
use crate::table_cache::TableCache;
use crate::version::VersionSet;
use crate::vfs::{FileLock, Fs};
use crate::wal::LogWriter;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// A column family handle (its id); the default family is id 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnFamily(pub u32);

/// The default column family.
pub const DEFAULT_CF: ColumnFamily = ColumnFamily(0);

pub(crate) struct Cf {
    pub name: String,
    pub opts: Arc<CfOptions>,
    pub mem: Arc<MemTable>,
    /// Immutable memtables, oldest first.
    pub imms: Vec<Arc<MemTable>>,
    pub flushing: bool,
}

pub(crate) struct Writer {
    pub batch: Mutex<Option<crate::WriteBatch>>,
    pub sync: bool,
    pub disable_wal: bool,
    pub force_switch: bool,
    pub done: Mutex<Option<Result<()>>>,
}

pub(crate) struct State {
    pub cfs: BTreeMap<u32, Cf>,
    pub versions: VersionSet,
    pub wal: Option<LogWriter>,
    pub wal_number: u64,
    pub live_wals: Vec<u64>,
    /// The oldest WAL each running checkpoint still copies: kept on disk.
    pub wal_pins: Vec<u64>,
    pub writers: VecDeque<Arc<Writer>>,
    /// Threads waiting on `queue_cv` (always changed under this lock): a
    /// notification with nobody waiting is skipped, since std's condvar
    /// makes a futex system call for every notify.
    pub write_waiters: usize,
    /// Sequence numbers of live snapshots, with counts.
    pub snapshots: BTreeMap<SeqNo, usize>,
    /// Highest sequence number whose writes are fully applied.
    pub visible_seq: SeqNo,
    pub bg_error: Option<Error>,
    /// The background error came from a full disk: `resume` may clear it.
    pub bg_retry: bool,
    /// A resume is running (one at a time).
    pub resuming: bool,
    pub running_jobs: usize,
    pub closing: bool,
    /// Bumped whenever the stall debt may change (a version edit or a
    /// memtable switch): the delayed write rate is recomputed (stall.rs).
    pub stall_epoch: u64,
    /// The delayed write rate (stall.rs).
    pub delay: stall::Delay,
}

pub(crate) struct Inner {
    pub dir: PathBuf,
    pub fs: Arc<dyn Fs>,
    pub state: Mutex<State>,
    /// Signals writers waiting in the queue. Wait on it only through
    /// `wait_writers` (notifications skip a condvar nobody is counted on).
    pub queue_cv: Condvar,
    /// Signals background threads (work available) and waiters (work done).
    pub bg_cv: Condvar,
    pub tables: Arc<TableCache>,
    pub stats: Arc<Stats>,
    pub level_stats: crate::stats::LevelStats,
    pub rate_limiter: Option<crate::rate_limit::RateLimiter>,
    /// See `Options::delayed_write_rate` (bytes/s).
    pub delayed_write_rate: f64,
    /// Writers are throttled by compaction debt (L0 files or pending bytes):
    /// compactions skip the rate limiter until it is paid.
    pub compaction_urgent: std::sync::atomic::AtomicBool,
    /// See `Options::auto_resume_interval`.
    pub auto_resume: Option<std::time::Duration>,
    /// Range-deleted key ranges for the reclaim thread (manual.rs).
    pub(crate) reclaims: manual::Reclaims,
    /// Called once an ingestion has linked its files in, before it takes
    /// the state lock to publish them (`Db::set_ingest_hook`, for tests).
    pub ingest_hook: Mutex<Option<IngestHook>>,
    /// See `Options::cf_config`.
    pub cf_config: Option<Arc<crate::optstr::CfConfig>>,
    /// Background threads pick compactions (`!Options::disable_auto_compactions`).
    pub auto_compactions: bool,
    /// The order of the families with ids below `ORDER_SLOTS`, learned on
    /// first ask (`Db::cf_comparator`; 0 unknown): a family's order never
    /// changes and ids are never reused, so scans learn it without the
    /// state lock.
    pub(crate) cf_orders: [std::sync::atomic::AtomicU8; ORDER_SLOTS],
    pub(crate) _lock: Box<dyn FileLock>,
}

/// Families whose order `Inner::cf_orders` remembers.
pub(crate) const ORDER_SLOTS: usize = 256;

/// See `Db::set_ingest_hook`.
pub type IngestHook = Arc<dyn Fn() + Send + Sync>;

/// True when `e` says the disk is full (directly or as the cause of a read-only state).
pub(crate) fn is_no_space(e: &Error) -> bool {
    match e {
        Error::NoSpace(_) => true,
        Error::ReadOnly(m) => m.contains("No space") || m.contains("no space"),
        _ => false,
    }
}

impl Inner {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts the database in the read-only error state (the first error
    /// wins): every later write is refused until it is reopened.
    pub(crate) fn set_bg_error(&self, st: &mut State, what: &str, e: &Error) {
        if st.bg_error.is_none() && !matches!(e, Error::Closed) {
            eprintln!("strata-lsm: {what}: {e}");
            st.bg_error = Some(Error::ReadOnly(format!("{what}: {e}")));
            st.bg_retry = is_no_space(e);
            crate::stats::Stats::add(&self.stats.background_errors, 1);
        }
        self.notify_writers(st);
        self.bg_cv.notify_all();
    }

    /// Waits on `bg_cv` for at most `d`: until background work signals
    /// progress (a job done, an error) or the time passes.
    pub(crate) fn wait_bg<'a>(
        &self,
        st: MutexGuard<'a, State>,
        d: std::time::Duration,
    ) -> MutexGuard<'a, State> {
        self.bg_cv
            .wait_timeout(st, d)
            .unwrap_or_else(|p| p.into_inner())
            .0
    }

    /// Waits on `queue_cv`, counted in `write_waiters`.
    pub(crate) fn wait_writers<'a>(&self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        st.write_waiters += 1;
        let mut st = self.queue_cv.wait(st).unwrap_or_else(|p| p.into_inner());
        st.write_waiters -= 1;
        st
    }

    /// Wakes every thread waiting on `queue_cv`, if any (call with the
    /// state lock held, as every waiter counts itself under it).
    pub(crate) fn notify_writers(&self, st: &State) {
        if st.write_waiters > 0 {
            self.queue_cv.notify_all();
        }
    }

    /// Appends `edit` to the manifest and installs it. A failed manifest
    /// write leaves the on-disk state unknown: the database goes read-only.
    pub(crate) fn log_and_apply(
        &self,
        st: &mut State,
        edit: crate::version::VersionEdit,
    ) -> Result<()> {
        st.stall_epoch += 1;
        let r = st.versions.log_and_apply(edit);
        if let Err(e) = &r {
            if !matches!(e, Error::InvalidArgument(_)) {
                self.set_bg_error(st, "manifest write failed", e);
            }
        }
        r
    }
}

/// An open database. Cheap to clone; safe to use from many threads.
#[derive(Clone)]
pub struct Db {
    pub(crate) inner: Arc<Inner>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

/// A consistent point-in-time view; released on drop.
#[derive(Clone)]
pub struct Snapshot {
    inner: Arc<SnapshotInner>,
}

struct SnapshotInner {
    seq: SeqNo,
    db: std::sync::Weak<Inner>,
    /// Unix time (seconds) when it was taken.
    time: u64,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn seq(&self) -> SeqNo {
        self.inner.seq
    }

    /// When it was taken, in Unix seconds (RocksDB's `GetUnixTime`).
    pub fn unix_time(&self) -> u64 {
        self.inner.time
    }
}

impl Drop for SnapshotInner {
    fn drop(&mut self) {
        if let Some(db) = self.db.upgrade() {
            let mut st = db.lock();
            if let Some(c) = st.snapshots.get_mut(&self.seq) {
                *c -= 1;
                if *c == 0 {
                    st.snapshots.remove(&self.seq);
                }
            }
        }
    }
}

/// The wall clock in Unix seconds (0 before 1970): the time of a snapshot
/// and of a compaction's snapshot list, each read under the state lock.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Db {
    /// Takes a snapshot of the current state.
    pub fn snapshot(&self) -> Snapshot {
        let mut st = self.inner.lock();
        let seq = st.visible_seq;
        *st.snapshots.entry(seq).or_insert(0) += 1;
        Snapshot {
            inner: Arc::new(SnapshotInner {
                seq,
                db: Arc::downgrade(&self.inner),
                time: unix_now(),
            }),
        }
    }

    /// The latest visible sequence number.
    pub fn latest_sequence(&self) -> SeqNo {
        self.inner.lock().visible_seq
    }

    /// Statistics counters.
    pub fn stats(&self) -> StatsSnapshot {
        let mut s = self.inner.stats.snapshot();
        s.manifest_bytes = self.inner.lock().versions.manifest_bytes;
        s
    }

    /// Looks up a column family by name.
    pub fn cf(&self, name: &str) -> Option<ColumnFamily> {
        self.inner
            .lock()
            .cfs
            .iter()
            .find(|(_, c)| c.name == name)
            .map(|(id, _)| ColumnFamily(*id))
    }

    /// Names of all column families.
    pub fn cf_names(&self) -> Vec<String> {
        self.inner
            .lock()
            .cfs
            .values()
            .map(|c| c.name.clone())
            .collect()
    }

    /// Creates a column family.
    pub fn create_cf(&self, name: &str, opts: CfOptions) -> Result<ColumnFamily> {
        let mut st = self.inner.lock();
        self.create_cf_locked(&mut st, name, opts)
    }

    /// The column family `name`, created with the options `Options::cf_config`
    /// gives that name if it does not exist yet (atomically: two callers get one).
    pub fn ensure_cf(&self, name: &str) -> Result<ColumnFamily> {
        self.ensure_cf_inner(name, None)
    }

    /// As [`Db::ensure_cf`], with user keys ordered by `cmp` whatever the
    /// configured options say; an existing family of that name ordered
    /// otherwise is an error (`InvalidArgument`).
    pub fn ensure_cf_ordered(&self, name: &str, cmp: Comparator) -> Result<ColumnFamily> {
        self.ensure_cf_inner(name, Some(cmp))
    }

    fn ensure_cf_inner(&self, name: &str, cmp: Option<Comparator>) -> Result<ColumnFamily> {
        let mut st = self.inner.lock();
        if let Some((id, c)) = st.cfs.iter().find(|(_, c)| c.name == name) {
            if let Some(want) = cmp.filter(|&w| w != c.opts.comparator) {
                return Err(Error::InvalidArgument(format!(
                    "column family {name} orders keys by {}, not {}",
                    c.opts.comparator.name(),
                    want.name()
                )));
            }
            return Ok(ColumnFamily(*id));
        }
        let mut opts = self
            .inner
            .cf_config
            .as_ref()
            .map_or_else(CfOptions::default, |c| c.options_for(name));
        if let Some(c) = cmp {
            opts.comparator = c;
        }
        self.create_cf_locked(&mut st, name, opts)
    }

    /// The order of a column family's user keys (None: no such family).
    ///
    /// Without the state lock after the first ask (per family, for the first
    /// `ORDER_SLOTS` ids): every range read asks. A family dropped after it
    /// was asked about still answers its order.
    pub fn cf_comparator(&self, cf: ColumnFamily) -> Option<Comparator> {
        use std::sync::atomic::Ordering::Relaxed;
        let slot = self.inner.cf_orders.get(cf.0 as usize);
        match slot.map(|s| s.load(Relaxed)) {
            Some(1) => return Some(Comparator::Bytewise),
            Some(2) => return Some(Comparator::ReverseBytewise),
            _ => {}
        }
        let c = self.inner.lock().cfs.get(&cf.0).map(|c| c.opts.comparator);
        if let (Some(s), Some(c)) = (slot, c) {
            s.store(
                match c {
                    Comparator::Bytewise => 1,
                    Comparator::ReverseBytewise => 2,
                },
                Relaxed,
            );
        }
        c
    }

    fn create_cf_locked(
        &self,
        st: &mut MutexGuard<'_, State>,
        name: &str,
        opts: CfOptions,
    ) -> Result<ColumnFamily> {
        if name.is_empty() {
            return Err(Error::InvalidArgument("empty column family name".into()));
        }
        if let Some(e) = &st.bg_error {
            return Err(e.clone());
        }
        if st.cfs.values().any(|c| c.name == name) {
            return Err(Error::InvalidArgument(format!(
                "column family {name} already exists"
            )));
        }
        let id = st.versions.max_cf + 1;
        let edit = crate::version::VersionEdit {
            cf: id,
            add_cf: Some(name.to_string()),
            comparator: Some(opts.comparator.name().to_string()),
            max_cf: Some(id),
            log_number: Some(st.wal_number),
            ..Default::default()
        };
        self.inner.log_and_apply(st, edit)?;
        let mem = Arc::new(MemTable::new(opts.comparator, st.wal_number));
        st.cfs.insert(
            id,
            Cf {
                name: name.to_string(),
                opts: Arc::new(opts),
                mem,
                imms: Vec::new(),
                flushing: false,
            },
        );
        Ok(ColumnFamily(id))
    }

    /// Drops a column family and deletes its files.
    pub fn drop_cf(&self, cf: ColumnFamily) -> Result<()> {
        if cf.0 == 0 {
            return Err(Error::InvalidArgument(
                "cannot drop the default column family".into(),
            ));
        }
        let mut st = self.inner.lock();
        if let Some(e) = &st.bg_error {
            return Err(e.clone());
        }
        if !st.cfs.contains_key(&cf.0) {
            return Err(Error::InvalidArgument(format!("no column family {}", cf.0)));
        }
        let edit = crate::version::VersionEdit {
            cf: cf.0,
            drop_cf: true,
            ..Default::default()
        };
        self.inner.log_and_apply(&mut st, edit)?;
        st.cfs.remove(&cf.0);
        Ok(())
    }

    /// A multi-line description of every column family's levels.
    pub fn describe_levels(&self) -> String {
        let st = self.inner.lock();
        let mut s = String::new();
        for (id, cf) in &st.versions.cfs {
            s.push_str(&format!("column family {} ({id}):\n", cf.name));
            s.push_str(&cf.current.describe());
        }
        s
    }

    /// Files and bytes per level of a column family.
    pub fn level_summary(&self, cf: ColumnFamily) -> Vec<(usize, u64)> {
        let st = self.inner.lock();
        match st.versions.cfs.get(&cf.0) {
            Some(v) => (0..crate::options::NUM_LEVELS)
                .map(|l| (v.current.levels[l].len(), v.current.level_size(l)))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Estimated bytes compaction must rewrite to bring every level of a
    /// column family under its target (RocksDB's
    /// `estimate-pending-compaction-bytes`).
    pub fn pending_compaction_bytes(&self, cf: ColumnFamily) -> u64 {
        let st = self.inner.lock();
        match (st.versions.cfs.get(&cf.0), st.cfs.get(&cf.0)) {
            (Some(v), Some(c)) => super::db::bg::pending_compaction_bytes(&v.current, &c.opts),
            _ => 0,
        }
    }

    /// RocksDB-style compaction stats of a column family, as a table.
    pub fn compaction_stats(&self, cf: ColumnFamily) -> String {
        let st = self.inner.lock();
        let (Some(v), Some(c)) = (st.versions.cfs.get(&cf.0), st.cfs.get(&cf.0)) else {
            return String::new();
        };
        let (scores, _) = props::level_scores(&v.current, &c.opts);
        let levels: Vec<(usize, u64, f64)> = (0..crate::options::NUM_LEVELS)
            .map(|l| {
                (
                    v.current.levels[l].len(),
                    v.current.level_size(l),
                    scores[l],
                )
            })
            .collect();
        crate::stats::format_table(&c.name, &levels, &self.inner.level_stats)
    }

    /// Total bytes of live table files.
    pub fn live_table_bytes(&self) -> u64 {
        let st = self.inner.lock();
        st.versions
            .cfs
            .values()
            .map(|c| (0..7).map(|l| c.current.level_size(l)).sum::<u64>())
            .sum()
    }

    /// Stops background work, syncs the WAL and releases the directory.
    /// Dropping the last handle without closing is also safe (a crash-like stop).
    pub fn close(self) -> Result<()> {
        // A clean shutdown flushes memtables so the next open replays nothing.
        let has_data = self
            .inner
            .lock()
            .cfs
            .values()
            .any(|c| !c.mem.is_empty() || !c.imms.is_empty());
        if has_data && self.inner.lock().bg_error.is_none() {
            self.flush()?;
        }
        {
            let mut st = self.inner.lock();
            st.closing = true;
            self.inner.bg_cv.notify_all();
            self.inner.reclaims.wake();
            while st.running_jobs > 0 {
                st = self.inner.bg_cv.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if let Some(w) = st.wal.as_mut() {
                w.sync()?;
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        Ok(())
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // The background threads hold their own Arc<Inner>; when only they and
        // this handle remain, ask them to stop so the database can be reopened.
        if Arc::strong_count(&self.threads) == 1 {
            let mut st = self.inner.lock();
            st.closing = true;
            self.inner.bg_cv.notify_all();
            drop(st);
            self.inner.reclaims.wake();
            let threads =
                std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
            for t in threads {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;
    use crate::Options;

    /// A family's order is answered without the state lock once known: the
    /// lock is held here while another thread asks.
    #[test]
    fn cf_comparator_skips_the_state_lock_once_known() {
        let dir = testkit::temp_dir("cf-order");
        let db = Db::open(&dir, Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let rev = db
            .ensure_cf_ordered("rev:x", Comparator::ReverseBytewise)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(db.cf_comparator(rev), Some(Comparator::ReverseBytewise));
        assert_eq!(db.cf_comparator(DEFAULT_CF), Some(Comparator::Bytewise));
        let (tx, rx) = std::sync::mpsc::channel();
        let _held = db.inner.lock();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = tx.send((db.cf_comparator(rev), db.cf_comparator(DEFAULT_CF)));
            });
            let got = rx.recv_timeout(std::time::Duration::from_secs(5));
            drop(_held);
            assert_eq!(
                got.ok(),
                Some((
                    Some(Comparator::ReverseBytewise),
                    Some(Comparator::Bytewise)
                ))
            );
        });
    }
}

#[cfg(test)]
mod auto_compaction_tests {
    use super::*;
    use crate::options::NUM_LEVELS;
    use crate::Options;

    /// With `disable_auto_compactions` level 0 stays at its trigger (no
    /// background compaction, and `wait_for_compactions` does not wait for
    /// one); flushes and `compact_range` still run. Without it the same
    /// writes are compacted.
    #[test]
    fn disabled_auto_compactions_leave_level_0_alone() {
        for disabled in [true, false] {
            let dir = testkit::temp_dir("no-auto-compaction");
            let mut o = Options {
                disable_auto_compactions: disabled,
                ..Default::default()
            };
            o.default_cf.level0_compaction_trigger = 3;
            let db = Db::open(&dir, o).unwrap_or_else(|e| panic!("{e}"));
            // Overlapping files: a compaction merges them into one.
            for i in 0..3u8 {
                db.put(b"a", &[i]).unwrap_or_else(|e| panic!("{e}"));
                db.put(b"z", &[i]).unwrap_or_else(|e| panic!("{e}"));
                db.flush().unwrap_or_else(|e| panic!("{e}"));
            }
            db.wait_for_compactions().unwrap_or_else(|e| panic!("{e}"));
            let levels = |db: &Db| db.sst_files().iter().map(|f| f.level).collect::<Vec<_>>();
            if disabled {
                assert_eq!(levels(&db), vec![0, 0, 0]);
                db.compact_range(DEFAULT_CF, None, None)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(levels(&db), vec![NUM_LEVELS - 1], "disabled: {disabled}");
            db.close().unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
