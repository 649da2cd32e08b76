//! Reading and removing an index's keys by byte range whatever the order of
//! the column family holding them. Every range in rel and sql is a range of
//! bytes `[lo, hi)` read in byte order (or backwards); in a reverse-ordered
//! family (`rev:`, RocksDB's ReverseBytewiseComparator) the engine's bounds
//! and directions are in the opposite order, so a forward read in key order
//! is a backward iteration of the engine and vice versa. This module owns
//! that translation: [`KeyIter`] over the engine (snapshot reads: CHECK TABLE,
//! index builds, statistics, the last key), [`TxnKeys`] over a transaction
//! (row reads, locking reads, unique checks, foreign keys), and [`span`] for
//! whole-range operations (delete-range, reclaim, compaction, size estimates).
//!
//! The engine's bounds are an inclusive lower and an exclusive upper one in
//! its order. In a reverse family `[lo, hi)` is `(pred(lo), hi]` in that
//! order, and `pred(lo)` has no finite form: the engine is given `hi` as its
//! lower bound and a key just below `lo` as its upper one ([`below`]), and the
//! few keys those let through outside `[lo, hi)` (`hi` itself, keys between
//! the two) are skipped here.
use crate::Result;
use lsm::{ColumnFamily, Comparator, Db, DbIterator, ReadOptions};
use txn::{Txn, TxnIter};

/// Whether `cf` keeps its keys in reverse byte order.
pub fn reversed(db: &Db, cf: ColumnFamily) -> bool {
    db.cf_comparator(cf) == Some(Comparator::ReverseBytewise)
}

/// A key below `lo` in byte order with few keys between them (exactly its
/// predecessor when `lo` ends in 0x00); None for the empty key.
fn below(lo: &[u8]) -> Option<Vec<u8>> {
    let (&last, head) = lo.split_last()?;
    let mut b = head.to_vec();
    if last > 0 {
        b.push(last - 1);
        b.extend_from_slice(&[0xff; 32]);
    }
    Some(b)
}

/// The engine's (lower, upper) bounds, in the family's order, of the byte
/// range `[lo, hi)`.
fn bounds(rev: bool, lo: &[u8], hi: Option<&[u8]>) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    if rev {
        (hi.map(<[u8]>::to_vec), below(lo))
    } else {
        (Some(lo.to_vec()), hi.map(<[u8]>::to_vec))
    }
}

fn inside(k: &[u8], lo: &[u8], hi: Option<&[u8]>) -> bool {
    k >= lo && hi.is_none_or(|h| k < h)
}

/// The engine range `(start, end)` in the family's order that stands for
/// the byte range `[lo, hi)` of index id prefixes (`keycodec::index_prefix`,
/// 4 bytes) in `delete_range`, `reclaim_range`, `compact_range` and
/// `approximate_entries_cf`. In a reverse family it is `(hi, lo)`, which
/// holds the keys in `(lo, hi]`: the same keys, because no key is a bare
/// index prefix. Proof: every key of an index is its prefix followed by the
/// key image of at least one column (`table::pk_key`, `table::sk_key`: a
/// primary key has a column or the 8-byte hidden id, a secondary index a
/// column), and every column's image has at least one byte (a NULL marker,
/// a fixed width of 1 to 16 bytes, or a string's terminator / chunk:
/// `keycodec::encode`); both key builders assert it in debug builds.
pub fn span<'a>(rev: bool, lo: &'a [u8], hi: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    debug_assert!(
        lo.len() == 4 && hi.len() == 4,
        "keyrange::span takes index id prefixes"
    );
    if rev {
        (hi, lo)
    } else {
        (lo, hi)
    }
}

/// An engine iterator over the byte range `[lo, hi)` of a column family,
/// moving in byte order whatever the family's order.
pub struct KeyIter {
    it: DbIterator,
    rev: bool,
    lo: Vec<u8>,
    hi: Option<Vec<u8>>,
}

impl KeyIter {
    /// An iterator over `[lo, hi)` of `cf` with `opts` (its bounds are
    /// set here). Unpositioned: call a seek first.
    pub fn new(
        db: &Db,
        cf: ColumnFamily,
        mut opts: ReadOptions,
        lo: &[u8],
        hi: Option<&[u8]>,
    ) -> Result<KeyIter> {
        let rev = reversed(db, cf);
        (opts.lower_bound, opts.upper_bound) = bounds(rev, lo, hi);
        Ok(KeyIter {
            it: db.iter_cf(opts, cf)?,
            rev,
            lo: lo.to_vec(),
            hi: hi.map(<[u8]>::to_vec),
        })
    }

    fn out_below(&self) -> bool {
        self.it.valid() && self.it.key() < &self.lo[..]
    }

    fn out_above(&self) -> bool {
        self.it.valid() && self.hi.as_deref().is_some_and(|h| self.it.key() >= h)
    }

    /// To the smallest key of the range.
    pub fn seek_to_first(&mut self) {
        if self.rev {
            self.it.seek_to_last();
            while self.out_below() {
                self.it.prev();
            }
        } else {
            self.it.seek_to_first();
        }
    }

    /// To the largest key of the range.
    pub fn seek_to_last(&mut self) {
        if self.rev {
            self.it.seek_to_first();
            while self.out_above() {
                self.it.next();
            }
        } else {
            self.it.seek_to_last();
        }
    }

    /// To the next larger key.
    pub fn next(&mut self) {
        if self.rev {
            self.it.prev();
        } else {
            self.it.next();
        }
    }

    /// To the next smaller key.
    pub fn prev(&mut self) {
        if self.rev {
            self.it.next();
        } else {
            self.it.prev();
        }
    }

    /// Positioned on a key of the range.
    pub fn valid(&self) -> bool {
        self.it.valid() && (!self.rev || inside(self.it.key(), &self.lo, self.hi.as_deref()))
    }

    /// The current key.
    pub fn key(&self) -> &[u8] {
        self.it.key()
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        self.it.value()
    }

    /// The first error met.
    pub fn status(&self) -> Result<()> {
        Ok(self.it.status()?)
    }
}

/// A transaction's cursor over the byte range `[lo, hi)` of a column
/// family, ascending or (`back`) descending in byte order whatever the
/// family's order, own writes merged in.
pub struct TxnKeys {
    it: TxnIter,
    rev: bool,
    back: bool,
    lo: Vec<u8>,
    hi: Option<Vec<u8>>,
}

/// Opens a [`TxnKeys`]: at the transaction's read view (`Txn::scan`), or
/// with `latest` over the latest committed data (`Txn::scan_latest`, for
/// locking reads).
pub fn scan(
    txn: &mut Txn,
    cf: ColumnFamily,
    lo: &[u8],
    hi: Option<&[u8]>,
    back: bool,
    latest: bool,
) -> txn::Result<TxnKeys> {
    let rev = reversed(txn.db(), cf);
    let (l, u) = bounds(rev, lo, hi);
    let (l, u) = (l.as_deref(), u.as_deref());
    let it = if latest {
        txn.scan_latest(cf, l, u, back != rev)?
    } else {
        txn.scan(cf, l, u, back != rev)?
    };
    Ok(TxnKeys {
        it,
        rev,
        back,
        lo: lo.to_vec(),
        hi: hi.map(<[u8]>::to_vec),
    })
}

impl TxnKeys {
    /// The next entry in the range; `Ok(None)` at its end.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> txn::Result<Option<(&[u8], &[u8])>> {
        if !self.rev {
            return self.it.next();
        }
        loop {
            match self.it.next()? {
                None => return Ok(None),
                Some((k, _)) if inside(k, &self.lo, self.hi.as_deref()) => break,
                // Past the range: stop rather than step over every key the
                // bounds let through (below `lo`: up to all the keys that
                // start with `below(lo)`, e.g. 32 0xff bytes after `lo`'s
                // head; at or above `hi`: `hi` itself).
                Some((k, _)) if (k < &self.lo[..]) == self.back => return Ok(None),
                Some(_) => {}
            }
        }
        Ok(self.it.current())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_below_and_close() {
        assert_eq!(below(b""), None);
        assert_eq!(below(b"ab\0").as_deref(), Some(&b"ab"[..]));
        let b = below(b"ab").unwrap_or_default();
        assert!(b.as_slice() < &b"ab"[..] && b.as_slice() > &b"aa\xff"[..]);
        assert_eq!(
            span(true, b"\0\0\0a", b"\0\0\0b"),
            (&b"\0\0\0b"[..], &b"\0\0\0a"[..])
        );
        assert_eq!(
            span(false, b"\0\0\0a", b"\0\0\0b"),
            (&b"\0\0\0a"[..], &b"\0\0\0b"[..])
        );
    }
}
