//! Table statistics for the planner: an estimated row count per table and,
//! per index, the number of distinct values of each key prefix (MySQL's
//! index cardinality). ANALYZE TABLE computes them by reading the indexes
//! (`analyze`) and stores them as a catalog `S` record
//! (docs/formats/catalog.md); without one, the row count starts from the
//! engine's approximate entry count of the primary key range and follows
//! inserts and deletes (`Estimate`). Estimates only guide plans: a bad or
//! missing record never fails a statement.
use crate::catalog::Table;
use crate::keycodec;
use crate::schema::{Index, TableDef};
use crate::{Error, Result};
use lsm::{Db, ReadOptions};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

/// Version byte of the stored statistics record.
pub const STATS_VERSION: u8 = 1;
/// ANALYZE reads at most this many keys per index; past it, counts are
/// scaled to the engine's estimate of the index's entries.
pub const SAMPLE_KEYS: u64 = 1 << 21;

/// What ANALYZE TABLE found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableStats {
    /// Rows (primary key entries) at the time.
    pub rows: u64,
    /// Per index (by id): distinct values of its first 1, 2, ... columns.
    pub indexes: Vec<(u32, Vec<u64>)>,
}

impl TableStats {
    /// Distinct values of the first `k` (>= 1) columns of index `id`.
    pub fn distinct(&self, id: u32, k: usize) -> Option<u64> {
        let (_, d) = self.indexes.iter().find(|(i, _)| *i == id)?;
        d.get(k.checked_sub(1)?).copied()
    }

    /// The stored form (docs/formats/catalog.md, "Statistics").
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![STATS_VERSION];
        out.extend_from_slice(&self.rows.to_le_bytes());
        out.extend_from_slice(&(self.indexes.len() as u16).to_le_bytes());
        for (id, d) in &self.indexes {
            out.extend_from_slice(&id.to_le_bytes());
            out.push(d.len() as u8);
            for n in d {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        out
    }

    /// Reads the stored form; any malformed record is an error (callers
    /// ignore the record then).
    pub fn decode(b: &[u8]) -> Result<TableStats> {
        let bad = || Error::Corruption("statistics record".into());
        let mut r = b;
        let mut take = |n: usize| -> Result<&[u8]> {
            if r.len() < n {
                return Err(bad());
            }
            let (a, rest) = r.split_at(n);
            r = rest;
            Ok(a)
        };
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
        if take(1)?[0] != STATS_VERSION {
            return Err(bad());
        }
        let rows = u64_of(take(8)?);
        let n = u16::from_le_bytes([take(1)?[0], take(1)?[0]]) as usize;
        let mut indexes = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let id = take(4)?;
            let id = u32::from_le_bytes([id[0], id[1], id[2], id[3]]);
            let k = take(1)?[0] as usize;
            let mut d = Vec::with_capacity(k);
            for _ in 0..k {
                d.push(u64_of(take(8)?));
            }
            indexes.push((id, d));
        }
        if !r.is_empty() {
            return Err(bad());
        }
        Ok(TableStats { rows, indexes })
    }
}

/// A table's live estimates, shared by the successive `Table`s of one
/// table (ALTER keeps them; TRUNCATE starts new ones).
#[derive(Debug, Default)]
pub struct Estimate {
    /// Estimated rows: set at open and by ANALYZE, moved by every insert
    /// and delete (rolled-back ones included: an estimate).
    pub rows: AtomicI64,
    /// The last ANALYZE's statistics, if any.
    pub stats: RwLock<Option<Arc<TableStats>>>,
}

impl Estimate {
    /// Estimates starting at `rows` with `stats`.
    pub fn new(rows: u64, stats: Option<TableStats>) -> Estimate {
        Estimate {
            rows: AtomicI64::new(rows.min(i64::MAX as u64) as i64),
            stats: RwLock::new(stats.map(Arc::new)),
        }
    }

    /// Estimated rows (never negative).
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed).max(0) as u64
    }

    /// Counts `n` rows in (positive) or out (negative).
    pub fn add(&self, n: i64) {
        self.rows.fetch_add(n, Ordering::Relaxed);
    }

    /// The last ANALYZE's statistics.
    pub fn stats(&self) -> Option<Arc<TableStats>> {
        self.stats.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Installs ANALYZE's statistics (and its row count).
    pub fn set(&self, s: TableStats) {
        self.rows
            .store(s.rows.min(i64::MAX as u64) as i64, Ordering::Relaxed);
        *self.stats.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(s));
    }

    /// Estimated rows per distinct value of the first `k` columns of
    /// `ix`: from ANALYZE's counts when there are any, else a guess (a
    /// unique index fully given: 1; otherwise a tenth of a table's rows
    /// per leading column, at least 1).
    pub fn rows_per_key(&self, ix: &Index, k: usize) -> f64 {
        let rows = self.rows().max(1) as f64;
        if k == 0 {
            return rows;
        }
        if ix.unique && k >= ix.columns.len() {
            return 1.0;
        }
        if let Some(s) = self.stats() {
            if let Some(d) = s.distinct(ix.id, k.min(ix.columns.len())) {
                return (s.rows.max(1) as f64 / d.max(1) as f64).max(1.0);
            }
        }
        (rows / 10f64.powi(k as i32)).max(1.0)
    }

    /// MySQL's cardinality of the first `k` columns of `ix`: the distinct
    /// values ANALYZE found, else estimated rows over rows per key.
    pub fn cardinality(&self, ix: &Index, k: usize) -> u64 {
        if let Some(d) = self.stats().and_then(|s| s.distinct(ix.id, k)) {
            return d;
        }
        (self.rows() as f64 / self.rows_per_key(ix, k)).round() as u64
    }
}

/// The engine's rough row count of a table (entries of its primary key
/// range, memtables counted up to a bound): the starting estimate of a
/// table that has no statistics.
pub fn engine_rows(db: &Db, def: &TableDef) -> u64 {
    let lo = keycodec::index_prefix(def.pk.id);
    let hi = keycodec::index_prefix(def.pk.id.wrapping_add(1));
    crate::cf::of(db, &def.pk)
        .and_then(|cf| {
            let (a, b) = crate::keyrange::span(crate::keyrange::reversed(db, cf), &lo, &hi);
            db.approximate_entries_cf(cf, a, b, 1 << 20)
        })
        .unwrap_or(0)
}

/// Reads every index of `t` at the engine's latest state, counting rows
/// and the distinct values of each index key prefix (keys hold collation
/// weights, so distinct means distinct under the column's collation).
/// `stop` is polled between keys (KILL).
pub fn analyze(db: &Db, t: &Table, stop: &dyn Fn() -> bool) -> Result<TableStats> {
    analyze_with(db, t, stop, SAMPLE_KEYS)
}

/// `analyze` reading at most `cap` keys per index: an index with more is
/// sampled from its start, its row count taken from the engine's estimate
/// and each prefix's distinct count scaled by the unread share when the
/// sample kept finding new values (a prefix with few values keeps its
/// count).
pub fn analyze_with(db: &Db, t: &Table, stop: &dyn Fn() -> bool, cap: u64) -> Result<TableStats> {
    let def = &t.def;
    let mut out = TableStats::default();
    for ix in def.indexes() {
        let (mut n, mut d) = scan_index(db, def, ix, stop, cap)?;
        if n >= cap {
            let lo = keycodec::index_prefix(ix.id);
            let hi = keycodec::index_prefix(ix.id.wrapping_add(1));
            let cf = crate::cf::of(db, ix)?;
            let (a, b) = crate::keyrange::span(crate::keyrange::reversed(db, cf), &lo, &hi);
            let total = db.approximate_entries_cf(cf, a, b, 1 << 22)?.max(n);
            let scale = total as f64 / n as f64;
            for x in d.iter_mut() {
                if *x > n / 10 {
                    *x = ((*x as f64) * scale).min(total as f64) as u64;
                }
            }
            n = total;
        }
        if ix.primary {
            out.rows = n;
        }
        if !(ix.primary && def.hidden_pk) {
            out.indexes.push((ix.id, d));
        }
    }
    Ok(out)
}

/// Keys under index `ix` and the distinct counts of their column prefixes.
fn scan_index(
    db: &Db,
    def: &TableDef,
    ix: &Index,
    stop: &dyn Fn() -> bool,
    cap: u64,
) -> Result<(u64, Vec<u64>)> {
    let lo = keycodec::index_prefix(ix.id).to_vec();
    let hi = keycodec::index_prefix(ix.id.wrapping_add(1)).to_vec();
    let mut it = crate::keyrange::KeyIter::new(
        db,
        crate::cf::of(db, ix)?,
        ReadOptions::default(),
        &lo,
        Some(&hi),
    )?;
    it.seek_to_first();
    let cols = if ix.primary && def.hidden_pk {
        0
    } else {
        ix.columns.len()
    };
    let mut distinct = vec![0u64; cols];
    let mut prev: Vec<u8> = Vec::new();
    let mut prev_ends: Vec<usize> = Vec::new();
    let mut n = 0u64;
    while it.valid() && n < cap {
        if n.is_multiple_of(1024) && stop() {
            return Err(Error::Internal("interrupted".into()));
        }
        let k = it.key();
        // Byte offset after each key column.
        let mut ends = Vec::with_capacity(cols);
        let mut s = &k[4..];
        for &c in ix.columns.iter().take(cols) {
            let col = &def.columns[c];
            keycodec::skip(&mut s, def.key_format, &col.ty, col.nullable)?;
            ends.push(k.len() - s.len());
        }
        // The first prefix that differs from the previous key's, and all
        // longer ones, are new values.
        let first_new = (0..cols)
            .find(|&j| {
                n == 0 || prev_ends.get(j) != Some(&ends[j]) || prev[..ends[j]] != k[..ends[j]]
            })
            .unwrap_or(cols);
        for d in distinct.iter_mut().skip(first_new) {
            *d += 1;
        }
        prev.clear();
        prev.extend_from_slice(k);
        prev_ends = ends;
        n += 1;
        it.next();
    }
    it.status()?;
    Ok((n, distinct))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_form_round_trips_and_bad_records_fail() {
        let s = TableStats {
            rows: 12345,
            indexes: vec![(256, vec![12345]), (257, vec![20, 400])],
        };
        let b = s.encode();
        assert_eq!(TableStats::decode(&b).unwrap(), s);
        assert_eq!(s.distinct(257, 2), Some(400));
        assert_eq!(s.distinct(257, 3), None);
        assert_eq!(s.distinct(257, 0), None);
        // Every truncation, trailing bytes and another version are errors.
        for n in 0..b.len() {
            assert!(TableStats::decode(&b[..n]).is_err(), "{n}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(TableStats::decode(&long).is_err());
        let mut v2 = b;
        v2[0] = 2;
        assert!(TableStats::decode(&v2).is_err());
    }
}
