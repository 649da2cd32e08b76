//! The memtable: recent writes in a sorted in-memory skiplist, plus the
//! range tombstones written since it was created. A memtable is mutable
//! until the write path switches it to immutable, then flushed to an L0
//! table and dropped.
//!
//! Concurrency: one writer at a time (the write group leader), many readers.
mod skiplist;

use crate::iter::InternalIterator;
use crate::key::{self, Comparator, SeqNo, ValueKind};
use crate::range_del::{RangeTombstone, Tombstones};
use skiplist::{ListCursor, SkipList};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// Longest user key accepted (the skiplist node stores 28 bits of length).
pub const MAX_KEY_SIZE: usize = skiplist::MAX_KEY_LEN - 8;

/// Result of a point lookup in one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The newest visible entry is a value.
    Value(Vec<u8>, SeqNo),
    /// The newest visible entry is a deletion.
    Deleted(SeqNo),
}

/// A sorted in-memory write buffer.
pub struct MemTable {
    list: SkipList,
    cmp: Comparator,
    bytes: AtomicUsize,
    entries: AtomicU64,
    deletes: AtomicU64,
    range_dels: RwLock<Vec<RangeTombstone>>,
    /// Holds writes made with `disable_wal` (in no WAL: a checkpoint must
    /// flush them to copy them).
    unlogged: std::sync::atomic::AtomicBool,
    /// The WAL file that holds this memtable's writes (and any later ones).
    pub wal_number: u64,
}

impl MemTable {
    /// A new empty memtable whose writes go to WAL `wal_number`.
    pub fn new(cmp: Comparator, wal_number: u64) -> MemTable {
        MemTable {
            list: SkipList::new(cmp),
            cmp,
            bytes: AtomicUsize::new(0),
            entries: AtomicU64::new(0),
            deletes: AtomicU64::new(0),
            range_dels: RwLock::new(Vec::new()),
            unlogged: std::sync::atomic::AtomicBool::new(false),
            wal_number,
        }
    }

    /// Notes that a write in no WAL went into this memtable.
    pub fn mark_unlogged(&self) {
        self.unlogged
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// True if a write made with `disable_wal` is in this memtable (an
    /// empty memtable holds none, whatever its mark).
    pub fn has_unlogged(&self) -> bool {
        self.unlogged.load(std::sync::atomic::Ordering::Acquire) && !self.is_empty()
    }

    /// Adds an entry. Callers serialize writes (see the module comment).
    pub fn add(&self, seq: SeqNo, kind: ValueKind, key: &[u8], value: &[u8]) {
        if kind == ValueKind::RangeDelete {
            let t = RangeTombstone {
                start: key.to_vec(),
                end: value.to_vec(),
                seq,
            };
            self.bytes
                .fetch_add(key.len() + value.len() + 48, Ordering::Relaxed);
            self.range_dels
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .push(t);
            self.entries.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut ikey = [0u8; 64];
        let klen = key.len() + 8;
        let trailer = ((seq << 8) | kind as u64).to_le_bytes();
        self.entries.fetch_add(1, Ordering::Relaxed);
        if kind != ValueKind::Value {
            self.deletes.fetch_add(1, Ordering::Relaxed);
        }
        if klen <= ikey.len() {
            ikey[..key.len()].copy_from_slice(key);
            ikey[key.len()..klen].copy_from_slice(&trailer);
            self.list.insert(&ikey[..klen], value);
        } else {
            let mut v = Vec::with_capacity(klen);
            key::make_internal_key(&mut v, key, seq, kind);
            self.list.insert(&v, value);
        }
    }

    /// Approximate memory used, in bytes.
    pub fn approximate_size(&self) -> usize {
        self.bytes.load(Ordering::Relaxed) + self.list.memory()
    }
    /// Number of entries (including tombstones).
    pub fn len(&self) -> u64 {
        self.entries.load(Ordering::Relaxed)
    }
    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The newest entry for `user_key` visible at `snapshot`.
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Option<Lookup> {
        let target = key::internal_key(user_key, snapshot, key::KIND_FOR_SEEK);
        let mut c = ListCursor::new();
        c.seek(&self.list, &target);
        if !c.valid() {
            return None;
        }
        let n = c.node(&self.list);
        let p = key::parse_internal_key(n.key())?;
        if self.cmp.compare(p.user_key, user_key) != std::cmp::Ordering::Equal {
            return None;
        }
        Some(match p.kind {
            ValueKind::Value => Lookup::Value(n.value().to_vec(), p.seq),
            _ => Lookup::Deleted(p.seq),
        })
    }

    /// The range tombstones written to this memtable.
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        self.range_dels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Highest sequence number of a tombstone covering `user_key` visible at `snapshot`.
    pub fn max_covering_tombstone(&self, user_key: &[u8], snapshot: SeqNo) -> SeqNo {
        let r = self.range_dels.read().unwrap_or_else(|p| p.into_inner());
        if r.is_empty() {
            return 0;
        }
        Tombstones::max_covering_in(&r, self.cmp, user_key, snapshot)
    }

    /// A cursor over the point entries.
    pub fn iter(self: &Arc<Self>) -> MemIter {
        MemIter {
            mem: self.clone(),
            cursor: ListCursor::new(),
        }
    }
}

/// An iterator over a memtable's point entries (internal keys).
pub struct MemIter {
    mem: Arc<MemTable>,
    cursor: ListCursor,
}

impl InternalIterator for MemIter {
    fn valid(&self) -> bool {
        self.cursor.valid()
    }
    fn seek_to_first(&mut self) {
        self.cursor.seek_to_first(&self.mem.list)
    }
    fn seek_to_last(&mut self) {
        self.cursor.seek_to_last(&self.mem.list)
    }
    fn seek(&mut self, target: &[u8]) {
        self.cursor.seek(&self.mem.list, target)
    }
    fn next(&mut self) {
        self.cursor.next(&self.mem.list)
    }
    fn prev(&mut self) {
        self.cursor.prev(&self.mem.list)
    }
    fn key(&self) -> &[u8] {
        self.cursor.node(&self.mem.list).key()
    }
    fn value(&self) -> &[u8] {
        self.cursor.node(&self.mem.list).value()
    }
    fn status(&self) -> crate::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_sees_newest_visible_version() {
        let m = Arc::new(MemTable::new(Comparator::Bytewise, 1));
        m.add(1, ValueKind::Value, b"a", b"1");
        m.add(2, ValueKind::Value, b"a", b"2");
        m.add(3, ValueKind::Delete, b"a", b"");
        m.add(4, ValueKind::Value, b"b", b"x");
        assert_eq!(m.get(b"a", 1), Some(Lookup::Value(b"1".to_vec(), 1)));
        assert_eq!(m.get(b"a", 2), Some(Lookup::Value(b"2".to_vec(), 2)));
        assert_eq!(m.get(b"a", 9), Some(Lookup::Deleted(3)));
        assert_eq!(m.get(b"c", 9), None);
        assert_eq!(m.get(b"b", 3), None);
        let mut it = m.iter();
        it.seek_to_first();
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(key::parse_internal_key(it.key()).unwrap().seq);
            it.next();
        }
        assert_eq!(keys, vec![3, 2, 1, 4]);
        it.seek_to_last();
        it.prev();
        assert_eq!(key::parse_internal_key(it.key()).unwrap().seq, 1);
    }

    #[test]
    fn concurrent_readers_during_writes() {
        let m = Arc::new(MemTable::new(Comparator::Bytewise, 1));
        let w = {
            let m = m.clone();
            std::thread::spawn(move || {
                for i in 0..20_000u32 {
                    m.add(i as u64 + 1, ValueKind::Value, &i.to_be_bytes(), b"v");
                }
            })
        };
        for _ in 0..50 {
            let mut it = m.iter();
            it.seek_to_first();
            let mut prev: Option<Vec<u8>> = None;
            while it.valid() {
                if let Some(p) = &prev {
                    assert!(p.as_slice() < key::user_key(it.key()));
                }
                prev = Some(key::user_key(it.key()).to_vec());
                it.next();
            }
        }
        w.join().unwrap();
        assert_eq!(m.len(), 20_000);
    }
}
