//! One transaction: its read view (snapshot), its write buffer, its
//! statement savepoint and the row locks it holds; commit, rollback and
//! release of locks on drop.
use crate::buffer::{Savepoint, WriteBuffer};
use crate::error::{Error, Result};
use crate::iter::TxnIter;
use crate::lock::{LockMode, TxnId};
use crate::{Isolation, Shared};
use lsm::{ColumnFamily, ReadOptions, WriteOptions};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// A transaction. Owned by one connection thread (it is `Send`); holds
/// the shared state by `Arc`, so it can live in a session struct.
/// Dropping it without [`Txn::commit`] rolls it back.
pub struct Txn {
    shared: Arc<Shared>,
    id: TxnId,
    iso: Isolation,
    lock_wait_timeout: Duration,
    /// Consistent-read options; `snapshot` is the read view (RR: the
    /// transaction's, RC: the statement's), taken lazily.
    read: ReadOptions,
    buf: WriteBuffer,
    stmt: Savepoint,
    /// Keys this transaction holds a lock on, to release at the end.
    locks: Vec<(u32, Vec<u8>)>,
    finished: bool,
    /// An opaque number the layer above attaches (see [`Txn::set_tag`]).
    tag: u64,
    /// Whether the commit fsyncs (default: the `TxnDb`'s `sync` option).
    sync: bool,
    /// Non-zero while the owner wants its lock waits to stop (KILL): a lock
    /// wait then fails with `Error::Interrupted`.
    interrupt: Option<Arc<std::sync::atomic::AtomicU8>>,
}

impl std::fmt::Debug for Txn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Txn")
            .field("id", &self.id)
            .field("isolation", &self.iso)
            .field("writes", &self.buf.count())
            .field("locks", &self.locks.len())
            .field("has_snapshot", &self.read.snapshot.is_some())
            .finish()
    }
}

impl Txn {
    pub(crate) fn new(shared: Arc<Shared>, id: TxnId, iso: Isolation) -> Txn {
        let lock_wait_timeout = shared.opts.lock_wait_timeout;
        let sync = shared.opts.sync;
        Txn {
            shared,
            id,
            iso,
            lock_wait_timeout,
            read: ReadOptions::default(),
            buf: WriteBuffer::default(),
            stmt: Savepoint::default(),
            locks: Vec::new(),
            finished: false,
            tag: u64::MAX - 1,
            sync,
            interrupt: None,
        }
    }

    /// Commits without an fsync, whatever the `TxnDb`'s option: for writes
    /// a later synced write makes durable anyway (an index build's entries,
    /// made durable by the synced catalog write that installs the index).
    pub fn set_no_sync(&mut self) {
        self.sync = false;
    }

    /// Attaches a number for the layer above (the SQL layer: the catalog
    /// version the transaction began under, which ALTER TABLE compares with
    /// the version it froze a table at). `u64::MAX - 1` until set.
    pub fn set_tag(&mut self, tag: u64) {
        self.tag = tag;
    }

    /// The number attached with [`Txn::set_tag`].
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// The transaction's id (unique within this `TxnDb`, increasing).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The isolation level.
    pub fn isolation(&self) -> Isolation {
        self.iso
    }

    /// A flag the owner sets (non-zero) to stop this transaction's lock
    /// waits (KILL QUERY): the waiting `lock` fails with `Error::Interrupted`.
    pub fn set_interrupt(&mut self, flag: Arc<std::sync::atomic::AtomicU8>) {
        self.interrupt = Some(flag);
    }

    /// Sets how long a lock request waits (`innodb_lock_wait_timeout` for
    /// this session). Zero fails at once when the lock is taken (NOWAIT).
    pub fn set_lock_wait_timeout(&mut self, timeout: Duration) {
        self.lock_wait_timeout = timeout;
    }

    /// The lock wait timeout in force.
    pub fn lock_wait_timeout(&self) -> Duration {
        self.lock_wait_timeout
    }

    /// True when nothing is buffered for commit.
    pub fn is_read_only(&self) -> bool {
        self.buf.is_empty()
    }

    /// Number of buffered writes (puts and deletes, counting rewrites).
    pub fn write_count(&self) -> u32 {
        self.buf.count()
    }

    /// Bytes of buffered writes (the batch commit will write).
    pub fn buffered_bytes(&self) -> usize {
        self.buf.bytes()
    }

    /// Number of distinct rows this transaction holds a lock on.
    pub fn lock_count(&self) -> usize {
        self.locks.len()
    }

    /// True when a read view is currently pinned.
    pub fn has_snapshot(&self) -> bool {
        self.read.snapshot.is_some()
    }

    /// The engine sequence the pinned read view reads at, if one is pinned
    /// (the next consistent read pins one at the latest sequence).
    pub fn snapshot_seq(&self) -> Option<u64> {
        self.read.snapshot.as_ref().map(|s| s.seq())
    }

    /// When the pinned read view was taken (Unix seconds), if one is pinned:
    /// the time TTL read filtering compares rows with.
    pub fn snapshot_time(&self) -> Option<u64> {
        self.read.snapshot.as_ref().map(|s| s.unix_time())
    }

    // ---- statements and savepoints ----

    /// Starts a statement: marks the write buffer for
    /// [`Txn::rollback_statement`]; under READ COMMITTED also drops the
    /// previous statement's read view, so the statement sees every commit
    /// made before its first read.
    pub fn begin_statement(&mut self) {
        self.stmt = self.buf.savepoint();
        if self.iso == Isolation::ReadCommitted {
            self.read.snapshot = None;
        }
    }

    /// Undoes the writes buffered since [`Txn::begin_statement`] (or since
    /// the transaction began, if no statement was marked). Locks taken by
    /// the statement stay held (as in InnoDB).
    pub fn rollback_statement(&mut self) -> Result<()> {
        let sp = self.stmt;
        self.buf.rollback_to(&sp)?;
        Ok(())
    }

    /// Marks the current position of the write buffer (`SAVEPOINT`).
    pub fn savepoint(&self) -> Savepoint {
        self.buf.savepoint()
    }

    /// Undoes the writes buffered after `sp` (`ROLLBACK TO SAVEPOINT`);
    /// locks stay held. Returns false, changing nothing, when `sp` was
    /// discarded by rolling back to an earlier position or by
    /// [`Txn::commit_and_continue`].
    pub fn rollback_to_savepoint(&mut self, sp: &Savepoint) -> Result<bool> {
        let ok = self.buf.rollback_to(sp)?;
        if ok && !self.buf.is_valid(&self.stmt) {
            self.stmt = *sp;
        }
        Ok(ok)
    }

    /// Pins the read view now if none is pinned (`START TRANSACTION WITH
    /// CONSISTENT SNAPSHOT` under REPEATABLE READ).
    pub fn take_snapshot(&mut self) {
        if self.read.snapshot.is_none() {
            self.read.snapshot = Some(self.shared.db.snapshot());
        }
    }

    // ---- reads ----

    /// Consistent read of one key: own writes first, then the engine at
    /// the read view (REPEATABLE READ: the transaction's snapshot, taken
    /// at its first consistent read; READ COMMITTED: the statement's
    /// snapshot if a scan took one, else the latest committed data).
    pub fn get(&mut self, cf: ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(b) = self.buf.get(cf.0, key) {
            return Ok(b.map(<[u8]>::to_vec));
        }
        if self.iso == Isolation::RepeatableRead {
            self.take_snapshot();
        }
        Ok(self.shared.db.get_cf(&self.read, cf, key)?)
    }

    /// Locking ("current") read: takes the row lock, then reads the latest
    /// committed value (not the snapshot), own writes first.
    /// `SELECT ... FOR UPDATE` / `LOCK IN SHARE MODE`, and the read of an
    /// `UPDATE` / `DELETE`.
    pub fn get_locked(
        &mut self,
        cf: ColumnFamily,
        key: &[u8],
        mode: LockMode,
    ) -> Result<Option<Vec<u8>>> {
        self.lock(cf, key, mode)?;
        self.get_latest(cf, key)
    }

    /// The engine this transaction runs on.
    pub fn db(&self) -> &lsm::Db {
        &self.shared.db
    }

    /// Reads the latest committed value, own writes first, without locking
    /// (the caller is expected to hold the row lock).
    pub fn get_latest(&self, cf: ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(b) = self.buf.get(cf.0, key) {
            return Ok(b.map(<[u8]>::to_vec));
        }
        Ok(self.shared.db.get_cf(&ReadOptions::default(), cf, key)?)
    }

    /// Consistent range read over `[lower, upper)` in the column family's
    /// order (`reverse`: descending), own writes merged in. Takes the read
    /// view if none is pinned (READ COMMITTED: one per statement).
    pub fn scan(
        &mut self,
        cf: ColumnFamily,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        reverse: bool,
    ) -> Result<TxnIter> {
        self.take_snapshot();
        let snap = self.read.snapshot.clone();
        self.make_iter(cf, lower, upper, reverse, snap)
    }

    /// Like [`Txn::scan`] but over the latest committed data, for locking
    /// range reads: lock each returned row and re-read it with
    /// [`Txn::get_locked`] (it may have changed in between).
    pub fn scan_latest(
        &self,
        cf: ColumnFamily,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        reverse: bool,
    ) -> Result<TxnIter> {
        self.make_iter(cf, lower, upper, reverse, None)
    }

    fn make_iter(
        &self,
        cf: ColumnFamily,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        reverse: bool,
        snapshot: Option<lsm::Snapshot>,
    ) -> Result<TxnIter> {
        let opts = ReadOptions {
            snapshot,
            lower_bound: lower.map(<[u8]>::to_vec),
            upper_bound: upper.map(<[u8]>::to_vec),
            ..ReadOptions::default()
        };
        let engine = self.shared.db.iter_cf(opts, cf)?;
        let cmp = engine.comparator();
        let lo = lower.map_or(Bound::Unbounded, Bound::Included);
        let hi = upper.map_or(Bound::Unbounded, Bound::Excluded);
        let overlay = match cmp {
            lsm::Comparator::Bytewise => self.buf.range(cf.0, lo, hi, reverse),
            // Comparator order is descending bytes: [lower, upper) in that
            // order is (upper, lower] in bytes.
            lsm::Comparator::ReverseBytewise => {
                let lo_b = upper.map_or(Bound::Unbounded, Bound::Excluded);
                let hi_b = lower.map_or(Bound::Unbounded, Bound::Included);
                self.buf.range(cf.0, lo_b, hi_b, !reverse)
            }
        };
        Ok(TxnIter::new(engine, overlay, cmp, reverse))
    }

    // ---- locks ----

    /// Takes a row lock on `(cf, key)` (the key need not exist), held until
    /// commit or rollback. Re-entrant; S->X upgrade supported. Waits up to
    /// the lock wait timeout: `Error::LockWaitTimeout` (the transaction
    /// stays usable), or `Error::Deadlock` at once if waiting would close a
    /// cycle (the caller must roll back).
    pub fn lock(&mut self, cf: ColumnFamily, key: &[u8], mode: LockMode) -> Result<()> {
        if self.shared.locks.acquire_or_stop(
            self.id,
            cf.0,
            key,
            mode,
            self.lock_wait_timeout,
            self.interrupt.as_deref(),
        )? {
            self.locks.push((cf.0, key.to_vec()));
        }
        Ok(())
    }

    /// Takes a row lock as [`Txn::lock`] does; true when this call made the
    /// transaction a holder of the key (it held no lock on it before).
    pub fn lock_new(&mut self, cf: ColumnFamily, key: &[u8], mode: LockMode) -> Result<bool> {
        let before = self.locks.len();
        self.lock(cf, key, mode)?;
        Ok(self.locks.len() > before)
    }

    /// Gives back the lock on `key` when it is the last one this transaction
    /// took (a [`Txn::lock_new`] that returned true) and nothing is written
    /// under it: READ COMMITTED's release of a row a locking read found not
    /// matching its WHERE, as InnoDB's. True when released.
    pub fn unlock_last(&mut self, cf: ColumnFamily, key: &[u8]) -> bool {
        let last = self
            .locks
            .last()
            .is_some_and(|(c, k)| *c == cf.0 && k.as_slice() == key);
        if !last || self.buf.get(cf.0, key).is_some() {
            return false;
        }
        self.locks.pop();
        self.shared.locks.release(self.id, cf.0, key);
        true
    }

    // ---- writes (buffered until commit) ----

    /// Buffers `key = value`. The caller must hold the X lock on the key
    /// (see [`Txn::put_locked`]).
    pub fn put(&mut self, cf: ColumnFamily, key: &[u8], value: &[u8]) {
        self.buf.put(cf.0, key, value);
    }

    /// Buffers a delete of `key`. The caller must hold the X lock.
    pub fn delete(&mut self, cf: ColumnFamily, key: &[u8]) {
        self.buf.delete(cf.0, key);
    }

    /// Buffers a single-delete (for keys put exactly once since their last
    /// delete, e.g. secondary index entries). Written as `SingleDelete`.
    pub fn single_delete(&mut self, cf: ColumnFamily, key: &[u8]) {
        self.buf.single_delete(cf.0, key);
    }

    /// Takes the X lock on `key`, then buffers `key = value`.
    pub fn put_locked(&mut self, cf: ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        self.lock(cf, key, LockMode::Exclusive)?;
        self.put(cf, key, value);
        Ok(())
    }

    /// Takes the X lock on `key`, then buffers its delete.
    pub fn delete_locked(&mut self, cf: ColumnFamily, key: &[u8]) -> Result<()> {
        self.lock(cf, key, LockMode::Exclusive)?;
        self.delete(cf, key);
        Ok(())
    }

    // ---- end ----

    fn release_locks(&mut self) {
        for (cf, key) in std::mem::take(&mut self.locks) {
            self.shared.locks.release(self.id, cf, &key);
        }
    }

    /// Gives the transaction an annex (see [`crate::Annex`]): bytes starting
    /// with `header`, committed in the same batch as the writes under
    /// `prefix` + the engine sequence number in `cf`. Replaces any annex
    /// set before.
    pub fn set_annex(&mut self, cf: ColumnFamily, prefix: &[u8], header: Vec<u8>) {
        self.buf.annex = Some(crate::Annex::new(cf.0, prefix, header));
    }

    /// The annex, if one was set.
    pub fn annex(&mut self) -> Option<&mut crate::Annex> {
        self.buf.annex.as_mut()
    }

    /// Commits: writes the buffered batch atomically (fsynced when the
    /// `TxnDb`'s `sync` option is on; concurrent commits share an fsync),
    /// then releases the locks. A read-only transaction writes nothing.
    /// On an engine error nothing is written, the transaction is rolled
    /// back and the error returned.
    pub fn commit(mut self) -> Result<()> {
        self.finished = true;
        self.read.snapshot = None;
        let res = self.write_buffered();
        self.release_locks();
        let c = match res {
            Ok(()) => &self.shared.stats.commits,
            Err(_) => &self.shared.stats.rollbacks,
        };
        c.fetch_add(1, Ordering::Relaxed);
        res
    }

    /// Commits what is buffered so far and goes on as a new transaction with the same
    /// read view and settings (MyRocks' `rocksdb_commit_in_the_middle` for huge
    /// statements): the locks are released, and a later statement rollback undoes only
    /// what was buffered after this point.
    pub fn commit_and_continue(&mut self) -> Result<()> {
        let res = self.write_buffered();
        self.buf = self.buf.next_generation();
        self.stmt = self.buf.savepoint();
        self.release_locks();
        match res {
            Ok(()) => {
                self.shared.stats.commits.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the buffered batch as one engine write (synced when the `TxnDb` syncs).
    fn write_buffered(&mut self) -> Result<()> {
        match self.buf.take_batch() {
            Some(batch) if !batch.is_empty() => {
                let wo = WriteOptions {
                    sync: self.sync,
                    disable_wal: false,
                };
                self.shared.db.write(wo, batch).map_err(Error::from)
            }
            _ => Ok(()),
        }
    }

    /// Rolls back: drops the buffered writes and releases the locks.
    pub fn rollback(mut self) {
        self.end_rollback();
    }

    fn end_rollback(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.read.snapshot = None;
        self.buf = WriteBuffer::default();
        self.release_locks();
        self.shared.stats.rollbacks.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        self.end_rollback();
    }
}
