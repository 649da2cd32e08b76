//! Reading one index (or the table's rows: the primary index) of a table
//! in key order at a snapshot, bypassing the block cache: the full scans
//! that CHECK TABLE and index builds make.
use crate::keycodec;
use crate::Result;
use lsm::{Db, ReadOptions, Snapshot};

/// A visitor of (key, value) entries.
pub(crate) type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Calls `f(key, value)` for every entry of index `id` at `snap`.
pub(crate) fn scan(db: &Db, snap: &Snapshot, id: u32, f: &mut Visit<'_>) -> Result<()> {
    let lo = keycodec::index_prefix(id).to_vec();
    let hi = keycodec::index_prefix(id + 1).to_vec();
    let mut it = db.iter(ReadOptions {
        snapshot: Some(snap.clone()),
        lower_bound: Some(lo.clone()),
        upper_bound: Some(hi),
        no_fill_cache: true,
        ..Default::default()
    })?;
    it.seek(&lo);
    while it.valid() {
        f(it.key(), it.value())?;
        it.next();
    }
    it.status()?;
    Ok(())
}
