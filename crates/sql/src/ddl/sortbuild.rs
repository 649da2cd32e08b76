//! CREATE INDEX / ALTER TABLE ADD INDEX on a populated table by sorted runs:
//! with writers held out of the table (`install::hold_writers`; reads go
//! on), the entries of every row are computed from one snapshot, sorted in
//! memory-bounded runs (`keysort::KeySorter`, spilling to temporary files past
//! `strata_merge_buf_size`), written in key order straight to table files
//! (`lsm::BulkWriter`) and ingested: the new index's key range holds
//! nothing, so the files go to the last level as they are, never through
//! the memtable, the WAL or a compaction. A UNIQUE index finds duplicates
//! as neighbours in the sorted order (1062, as a row-by-row build).
//!
//! The sorted fill is taken only when the index is still empty once the
//! writers are held out; if a writer that maintained the published index
//! has already put entries (a transaction that began between publication
//! and the hold), the online row-by-row fill (`rel::build::build_index`)
//! runs instead, as it does not collide with writers' entries.
use super::install::hold_writers;
use crate::error::Result;
use crate::keysort::KeySorter;
use crate::session::Session;
use rel::catalog::Table;
use rel::schema::Index;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Indexes filled by sorted runs and ingestion (`Strata_sorted_index_builds`).
pub static SORTED_BUILDS: AtomicU64 = AtomicU64::new(0);
/// Sorted runs those builds spilled to disk (`Strata_sorted_index_runs`).
pub static SORTED_RUNS: AtomicU64 = AtomicU64::new(0);

/// Default memory for the sort of one index build before it spills.
pub const DEFAULT_MERGE_BUF: i64 = 64 << 20;

/// Fills index `ix` of `t` (published to writers, older writers drained):
/// by sorted runs and ingestion when possible (see the module comment),
/// else online row by row. When the sorted fill ran, writers stay held
/// out until the caller publishes the result (`Catalog::finish_index`, or
/// `abort_index` on failure: both replace the frozen table).
pub(super) fn fill(s: &Session, t: &Arc<Table>, ix: &Index) -> Result<()> {
    let db = s.inst.txdb.db();
    // A TTL table's entries hold their row's time: filled row by row.
    if t.def.ttl.is_none() && rel::build::index_empty(db, &db.snapshot(), ix)? {
        let tables = [t.clone()];
        let (thaw, _held) = hold_writers(s, &tables)?;
        let snap = db.snapshot();
        match rel::build::index_empty(db, &snap, ix) {
            Ok(true) => {
                let r = sorted_fill(s, t, ix, &snap);
                if r.is_err() {
                    thaw();
                }
                return r;
            }
            Ok(false) => thaw(),
            Err(e) => {
                thaw();
                return Err(e.into());
            }
        }
    }
    Ok(rel::build::build_index(
        &s.inst.txdb,
        t,
        ix,
        s.lock_timeout(),
    )?)
}

/// The memory an index build's sort may hold (`strata_merge_buf_size`).
pub(crate) fn budget(s: &Session) -> usize {
    s.get_var("strata_merge_buf_size", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(DEFAULT_MERGE_BUF as i128)
        .clamp(1, i64::MAX as i128) as usize
}

/// The entries of every row at `snap`, sorted and ingested.
fn sorted_fill(s: &Session, t: &Table, ix: &Index, snap: &lsm::Snapshot) -> Result<()> {
    let db = s.inst.txdb.db();
    let cf = rel::cf::of(db, ix)?;
    // Sorted in the family's order (descending bytes in a reverse one); the
    // payload is the length of the key's unique prefix (u32 little-endian).
    let mut sorter = KeySorter::new(rel::keyrange::reversed(db, cf), budget(s));
    rel::build::index_entries(db, snap, t, ix, &mut |key, unique_len| {
        sorter
            .push(&key, &(unique_len as u32).to_le_bytes())
            .map_err(|e| rel::Error::Internal(e.msg.clone()))
    })?;
    SORTED_RUNS.fetch_add(sorter.spilled_runs() as u64, Ordering::Relaxed);
    let mut w = db.bulk_writer(cf)?;
    let mut prev: Vec<u8> = Vec::new();
    let mut prev_len = 0usize;
    sorter.finish(&mut |key, payload| {
        let Ok(len) = <[u8; 4]>::try_from(payload) else {
            return Err(crate::error::SqlError::internal(
                "index build: bad sort entry",
            ));
        };
        let len = u32::from_le_bytes(len) as usize;
        if len > 0 && len == prev_len && prev.get(..len) == key.get(..len) {
            return Err(rel::build::dup_error(db, snap, t, ix, key).into());
        }
        w.put(key, &[])?;
        prev.clear();
        prev.extend_from_slice(key);
        prev_len = len;
        Ok(true)
    })?;
    w.ingest()?;
    SORTED_BUILDS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}
