//! # strata-txn: transactions on the storage engine
//!
//! This crate turns the engine's atomic write batches and snapshots
//! ([`lsm::Db`]) into InnoDB-like transactions for the relational layer. It
//! owns three things: each transaction's **read view** (an engine snapshot),
//! its **write buffer** (the writes it will commit, readable by itself
//! first), and the **row lock table** shared by all transactions, with lock
//! waits, timeouts and deadlock detection. It knows nothing about rows,
//! tables or SQL: a "row" is a `(column family, key)` pair.
//!
//! ## Reads
//!
//! Every read sees the transaction's own uncommitted writes first.
//!
//! - **Consistent reads** ([`Txn::get`], [`Txn::scan`]) read a snapshot and
//!   take no locks. Under `REPEATABLE READ` the snapshot is taken at the
//!   transaction's first consistent read and kept to the end: later commits
//!   by others are invisible (no non-repeatable reads, no phantoms in
//!   scans). Under `READ COMMITTED` each statement gets a fresh view:
//!   [`Txn::begin_statement`] drops the previous one; point reads without a
//!   view read the latest committed data, and the statement's first scan
//!   pins a snapshot that its later reads share. Nobody ever sees another
//!   transaction's uncommitted writes: they live only in its buffer.
//! - **Locking ("current") reads** ([`Txn::get_locked`]) take the row lock
//!   first and then read the latest committed value, not the snapshot, as
//!   InnoDB does for `SELECT ... FOR UPDATE`, `UPDATE` and `DELETE`. This
//!   is what prevents lost updates: read-modify-write must use it.
//!   [`Txn::scan_latest`] lists the latest committed keys of a range for a
//!   locking range read; lock each row and re-read it with `get_locked`.
//!
//! ## Writes and locks: what callers must do
//!
//! [`Txn::put`], [`Txn::delete`] and [`Txn::single_delete`] only buffer.
//! **They take no lock: the caller must first take the exclusive lock on
//! every key it writes** with [`Txn::lock`] (or use [`Txn::put_locked`] /
//! [`Txn::delete_locked`]), including keys that do not exist yet (an
//! insert locks the new primary key and each unique index key it claims).
//! Writing without the X lock lets two transactions write the same key and
//! the later commit silently wins. Locks are shared (S, compatible with S)
//! or exclusive (X, conflicts with everything), re-entrant, upgradable from
//! S to X, and held until commit or rollback. There are no gap or
//! next-key locks: a locking range read does not stop another transaction
//! from inserting into the range.
//!
//! A lock request that must wait blocks until granted (FIFO), or fails
//! with [`Error::LockWaitTimeout`] after the transaction's lock wait
//! timeout (only the statement fails; the transaction stays open with its
//! locks, like InnoDB with `innodb_rollback_on_timeout=OFF`), or fails at
//! once with [`Error::Deadlock`] if waiting would close a cycle of waiting
//! transactions; then the caller must roll back the whole transaction
//! (MySQL error 1213), which lets the others proceed.
//!
//! ## Statements, commit, rollback
//!
//! [`Txn::begin_statement`] marks the write buffer and
//! [`Txn::rollback_statement`] undoes the statement's writes (locks stay),
//! for statement atomicity; [`Txn::savepoint`] and
//! [`Txn::rollback_to_savepoint`] do the same for SQL savepoints.
//! [`Txn::commit`] writes the buffer as one engine batch (fsynced when
//! [`TxnOptions::sync`]; the engine's group commit lets concurrent commits
//! share an fsync) and only then releases the locks; a transaction that
//! wrote nothing writes nothing. [`Txn::rollback`], or dropping the `Txn`,
//! discards the buffer and releases the locks.
//!
//! ## Cost
//!
//! Beginning a transaction allocates nothing. A point read is one engine
//! lookup, plus one snapshot for the first read of a `REPEATABLE READ`
//! transaction; a single-read autocommit statement should use
//! [`TxnDb::get_latest`] (or `READ COMMITTED`), which takes none. Plain
//! reads never touch the lock table. An uncontended lock is one shard
//! mutex round trip.
//!
//! Scans of a column family with a non-bytewise comparator (reverse
//! order) take their bounds and direction in that order, and merge own
//! writes in it (the engine iterator says which order it has).
mod annex;
mod buffer;
mod error;
mod iter;
mod lock;
mod txn;

pub use annex::Annex;
pub use buffer::Savepoint;
pub use error::{Error, Result};
pub use iter::TxnIter;
pub use lock::LockMode;
pub use txn::Txn;

use lock::LockManager;
use lsm::{ColumnFamily, Db, ReadOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Transaction isolation levels. `READ UNCOMMITTED` and `SERIALIZABLE`
/// are for the SQL layer to map (InnoDB runs them as RC and as RR with
/// locking reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// A fresh read view per statement.
    ReadCommitted,
    /// One read view per transaction, from its first consistent read.
    RepeatableRead,
}

/// Options of a [`TxnDb`].
#[derive(Debug, Clone)]
pub struct TxnOptions {
    /// Default lock wait timeout of new transactions
    /// (`innodb_lock_wait_timeout`, 50 s).
    pub lock_wait_timeout: Duration,
    /// Detect deadlocks when a lock request waits
    /// (`innodb_deadlock_detect`, on). Off: only timeouts end them.
    pub deadlock_detect: bool,
    /// fsync each commit's batch (`innodb_flush_log_at_trx_commit=1`, on).
    pub sync: bool,
}

impl Default for TxnOptions {
    fn default() -> Self {
        TxnOptions {
            lock_wait_timeout: Duration::from_secs(50),
            deadlock_detect: true,
            sync: true,
        }
    }
}

/// Counters for `SHOW STATUS`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnStats {
    /// Lock requests that had to wait (`Innodb_row_lock_waits`).
    pub row_lock_waits: u64,
    /// Lock requests waiting now (`Innodb_row_lock_current_waits`).
    pub row_lock_current_waits: u64,
    /// Total time spent waiting, microseconds (`Innodb_row_lock_time`).
    pub row_lock_time_micros: u64,
    /// Longest single wait, microseconds (`Innodb_row_lock_time_max`).
    pub row_lock_time_max_micros: u64,
    /// Lock requests that timed out.
    pub lock_wait_timeouts: u64,
    /// Lock requests refused as deadlock victims.
    pub deadlocks: u64,
    /// Transactions committed (read-only ones included).
    pub commits: u64,
    /// Transactions rolled back (explicitly, by drop, or by a failed commit).
    pub rollbacks: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub commits: AtomicU64,
    pub rollbacks: AtomicU64,
}

/// State shared by a `TxnDb` and its transactions.
pub(crate) struct Shared {
    pub db: Db,
    pub opts: TxnOptions,
    pub locks: LockManager,
    pub stats: Counters,
    next_id: AtomicU64,
}

/// The transactional database: an engine handle plus the lock table.
/// Cheap to clone; share it between connection threads.
#[derive(Clone)]
pub struct TxnDb {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TxnDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnDb")
            .field("opts", &self.shared.opts)
            .finish_non_exhaustive()
    }
}

impl TxnDb {
    /// Wraps an open engine.
    pub fn new(db: Db, opts: TxnOptions) -> TxnDb {
        let detect = opts.deadlock_detect;
        TxnDb {
            shared: Arc::new(Shared {
                db,
                opts,
                locks: LockManager::new(detect),
                stats: Counters::default(),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// Begins a transaction. Takes no snapshot and no lock.
    pub fn begin(&self, iso: Isolation) -> Txn {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        Txn::new(self.shared.clone(), id, iso)
    }

    /// The engine.
    pub fn db(&self) -> &Db {
        &self.shared.db
    }

    /// The options.
    pub fn options(&self) -> &TxnOptions {
        &self.shared.opts
    }

    /// Reads the latest committed value of a key, outside any transaction:
    /// exactly one engine lookup. For an autocommit statement that reads
    /// one row (equivalent to a transaction whose only read it is).
    pub fn get_latest(&self, cf: ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.shared.db.get_cf(&ReadOptions::default(), cf, key)?)
    }

    /// Number of rows currently locked or waited for (diagnostics).
    pub fn locked_rows(&self) -> usize {
        self.shared.locks.locked_keys()
    }

    /// Counters for `SHOW STATUS`.
    pub fn stats(&self) -> TxnStats {
        let l = &self.shared.locks.stats;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TxnStats {
            row_lock_waits: r(&l.waits),
            row_lock_current_waits: r(&l.current_waits),
            row_lock_time_micros: r(&l.wait_micros),
            row_lock_time_max_micros: r(&l.max_wait_micros),
            lock_wait_timeouts: r(&l.timeouts),
            deadlocks: r(&l.deadlocks),
            commits: r(&self.shared.stats.commits),
            rollbacks: r(&self.shared.stats.rollbacks),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn thread_safety() {
        assert_send_sync::<TxnDb>();
        assert_send::<Txn>();
        assert_send::<TxnIter>();
    }
}
