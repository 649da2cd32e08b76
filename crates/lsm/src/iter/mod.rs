//! Cursor iterators over internal keys, and the k-way merge of many of them.
//! Every source (memtable, table, level) implements [`InternalIterator`];
//! the database iterator (db/iter.rs) turns a merged stream of internal
//! entries into the user's view at a snapshot.
mod merge;

pub use merge::MergingIterator;

use crate::error::Result;

/// A cursor over internal entries in comparator order.
pub trait InternalIterator: Send {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Positions at the first entry.
    fn seek_to_first(&mut self);
    /// Positions at the last entry.
    fn seek_to_last(&mut self);
    /// Positions at the first entry `>= target` (an internal key).
    fn seek(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous entry. Requires `valid()`.
    fn prev(&mut self);
    /// The current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any (an invalid iterator may have one).
    fn status(&self) -> Result<()>;
}

/// An iterator over a sorted in-memory vector (tests and small sources).
pub struct VecIter {
    cmp: crate::key::Comparator,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: usize,
}

impl VecIter {
    /// Wraps entries already sorted by internal key.
    pub fn new(cmp: crate::key::Comparator, entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        let pos = entries.len();
        VecIter { cmp, entries, pos }
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.pos = 0;
    }
    fn seek_to_last(&mut self) {
        self.pos = if self.entries.is_empty() {
            0
        } else {
            self.entries.len() - 1
        };
    }
    fn seek(&mut self, target: &[u8]) {
        self.pos = self.entries.partition_point(|(k, _)| {
            self.cmp.compare_internal(k, target) == std::cmp::Ordering::Less
        });
    }
    fn next(&mut self) {
        self.pos += 1;
    }
    fn prev(&mut self) {
        self.pos = if self.pos == 0 {
            self.entries.len()
        } else {
            self.pos - 1
        };
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}
