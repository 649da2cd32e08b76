//! Range tombstones: `delete_range(start, end)` written at sequence `seq`
//! hides every entry of a key in `[start, end)` with a smaller sequence.
//! They are kept beside the point entries (a list in each memtable, a
//! range-del block in each table) and consulted by reads and compactions.
use crate::key::{Comparator, SeqNo};
use std::cmp::Ordering;

/// One range tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// Inclusive start key.
    pub start: Vec<u8>,
    /// Exclusive end key.
    pub end: Vec<u8>,
    /// Sequence number of the delete.
    pub seq: SeqNo,
}

impl RangeTombstone {
    /// True if `key` lies in `[start, end)`.
    pub fn covers(&self, cmp: Comparator, key: &[u8]) -> bool {
        cmp.compare(&self.start, key) != Ordering::Greater
            && cmp.compare(key, &self.end) == Ordering::Less
    }
}

/// A set of range tombstones from many sources, for reads and compaction.
#[derive(Debug, Clone)]
pub struct Tombstones {
    cmp: Comparator,
    /// Sorted by start key.
    list: Vec<RangeTombstone>,
}

impl Tombstones {
    /// Builds a set; tombstones newer than `snapshot` are left out.
    pub fn new(cmp: Comparator, mut list: Vec<RangeTombstone>, snapshot: SeqNo) -> Tombstones {
        list.retain(|t| t.seq <= snapshot && cmp.compare(&t.start, &t.end) == Ordering::Less);
        list.sort_by(|a, b| cmp.compare(&a.start, &b.start));
        Tombstones { cmp, list }
    }
    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// All tombstones, sorted by start.
    pub fn list(&self) -> &[RangeTombstone] {
        &self.list
    }
    /// Highest sequence of a tombstone covering `key` (0 if none).
    pub fn max_covering(&self, key: &[u8]) -> SeqNo {
        let mut best = 0;
        for t in &self.list {
            if self.cmp.compare(&t.start, key) == Ordering::Greater {
                break;
            }
            if self.cmp.compare(key, &t.end) == Ordering::Less {
                best = best.max(t.seq);
            }
        }
        best
    }
    /// Highest sequence of a tombstone covering `key` that is `<= below`
    /// and `> above` (used by compaction with snapshot stripes).
    pub fn max_covering_between(&self, key: &[u8], above: SeqNo, below: SeqNo) -> SeqNo {
        let mut best = 0;
        for t in &self.list {
            if self.cmp.compare(&t.start, key) == Ordering::Greater {
                break;
            }
            if t.seq > above && t.seq <= below && self.cmp.compare(key, &t.end) == Ordering::Less {
                best = best.max(t.seq);
            }
        }
        best
    }
    /// Like [`Tombstones::max_covering`] over an unsorted slice.
    pub fn max_covering_in(
        list: &[RangeTombstone],
        cmp: Comparator,
        key: &[u8],
        snapshot: SeqNo,
    ) -> SeqNo {
        list.iter()
            .filter(|t| t.seq <= snapshot && t.covers(cmp, key))
            .map(|t| t.seq)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covering() {
        let c = Comparator::Bytewise;
        let t = Tombstones::new(
            c,
            vec![
                RangeTombstone {
                    start: b"b".to_vec(),
                    end: b"d".to_vec(),
                    seq: 5,
                },
                RangeTombstone {
                    start: b"a".to_vec(),
                    end: b"c".to_vec(),
                    seq: 7,
                },
                RangeTombstone {
                    start: b"a".to_vec(),
                    end: b"z".to_vec(),
                    seq: 50,
                },
            ],
            10,
        );
        assert_eq!(t.max_covering(b"a"), 7);
        assert_eq!(t.max_covering(b"b"), 7);
        assert_eq!(t.max_covering(b"c"), 5);
        assert_eq!(t.max_covering(b"d"), 0);
        assert_eq!(t.max_covering_between(b"b", 6, 10), 7);
        assert_eq!(t.max_covering_between(b"b", 0, 6), 5);
    }
}
