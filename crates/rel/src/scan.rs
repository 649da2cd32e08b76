//! Reading one index (or the table's rows: the primary index) of a table
//! in key order at a snapshot, bypassing the block cache: the full scans
//! that CHECK TABLE and index builds make; and the online fills' walk
//! (`for_each_row_locked`: CREATE INDEX, online ALTER TABLE) over the rows
//! of a snapshot, each locked and read as it is now.
use crate::keycodec;
use crate::schema::Index;
use crate::{Error, Result};
use lsm::{ColumnFamily, Db, ReadOptions, Snapshot};
use std::time::Duration;
use txn::{Isolation, LockMode, Txn, TxnDb};

/// Rows one transaction of an online fill handles (their shared locks are
/// held until it commits).
const BATCH_ROWS: usize = 256;

/// How many times a batch of an online fill is retried after a deadlock.
const DEADLOCK_RETRIES: usize = 20;

/// What an online fill does with one row: `(txn, number, key, value)`, the
/// row locked shared in `txn` and read at its latest version, `number`
/// counting the rows found from 1.
pub(crate) type RowVisit<'a> = dyn FnMut(&mut Txn, u64, &[u8], &[u8]) -> Result<()> + 'a;

/// Lists the primary keys of index `pk` from a snapshot and calls `each`
/// for every row still there, in batches of `BATCH_ROWS`: each batch is one
/// READ COMMITTED transaction (not fsynced: the catalog write that installs
/// the result is) where every row is locked shared (waiting `lock_wait` at
/// most) and read at its latest committed version, so a row deleted since
/// the snapshot is skipped and an updated one seen as it is now; the batch
/// commits what `each` wrote. A batch that deadlocks is run again from its
/// start in a new transaction (up to `DEADLOCK_RETRIES` times). Returns the
/// rows found.
pub(crate) fn for_each_row_locked(
    txdb: &TxnDb,
    pk: &Index,
    lock_wait: Duration,
    each: &mut RowVisit<'_>,
) -> Result<u64> {
    let cf = crate::cf::of(txdb.db(), pk)?;
    let mut run = |keys: &[Vec<u8>], before: u64| -> Result<u64> {
        let mut tries = 0;
        loop {
            match batch(txdb, cf, keys, before, lock_wait, each) {
                Err(Error::Txn(txn::Error::Deadlock)) if tries < DEADLOCK_RETRIES => tries += 1,
                r => return r,
            }
        }
    };
    let db = txdb.db();
    let snap = db.snapshot();
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(BATCH_ROWS);
    let mut rows = 0u64;
    scan(db, &snap, pk, &mut |k, _| {
        keys.push(k.to_vec());
        if keys.len() >= BATCH_ROWS {
            rows += run(&keys, rows)?;
            keys.clear();
        }
        Ok(())
    })?;
    rows += run(&keys, rows)?;
    Ok(rows)
}

/// One batch of `for_each_row_locked` in one transaction.
fn batch(
    txdb: &TxnDb,
    cf: ColumnFamily,
    keys: &[Vec<u8>],
    before: u64,
    lock_wait: Duration,
    each: &mut RowVisit<'_>,
) -> Result<u64> {
    if keys.is_empty() {
        return Ok(0);
    }
    let mut txn = txdb.begin(Isolation::ReadCommitted);
    txn.set_lock_wait_timeout(lock_wait);
    txn.set_no_sync();
    let mut n = 0u64;
    for k in keys {
        let Some(v) = txn
            .get_locked(cf, k, LockMode::Shared)
            .map_err(Error::Txn)?
        else {
            continue;
        };
        n += 1;
        each(&mut txn, before + n, k, &v)?;
    }
    txn.commit().map_err(Error::Txn)?;
    Ok(n)
}

/// An iterator over the keys of index id `id` in family `cf` at `snap` (in
/// byte order, bypassing the block cache), on its first key (not valid when
/// there is none): full scans, and the "is anything there" checks of CHECK
/// TABLE and index builds.
pub(crate) fn index_iter(
    db: &Db,
    cf: ColumnFamily,
    snap: &Snapshot,
    id: u32,
) -> Result<crate::keyrange::KeyIter> {
    let mut it = crate::keyrange::KeyIter::new(
        db,
        cf,
        ReadOptions {
            snapshot: Some(snap.clone()),
            no_fill_cache: true,
            ..Default::default()
        },
        &keycodec::index_prefix(id),
        Some(&keycodec::index_prefix(id + 1)),
    )?;
    it.seek_to_first();
    Ok(it)
}

/// A visitor of (key, value) entries.
pub(crate) type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Calls `f(key, value)` for every entry of index `ix` at `snap`.
pub(crate) fn scan(db: &Db, snap: &Snapshot, ix: &Index, f: &mut Visit<'_>) -> Result<()> {
    let mut it = index_iter(db, crate::cf::of(db, ix)?, snap, ix.id)?;
    while it.valid() {
        f(it.key(), it.value())?;
        it.next();
    }
    it.status()?;
    Ok(())
}
