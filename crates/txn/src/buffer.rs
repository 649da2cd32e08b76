//! A transaction's write buffer: every buffered write, in order, already
//! encoded as the engine `WriteBatch` that commit will write, plus an
//! ordered index of the latest state of each written key for
//! read-your-own-writes, plus an undo log for savepoints.
//!
//! Values are stored once, in the batch: the index refers to a put's value
//! by its byte position in the batch. The undo log refers to a write by the
//! batch offset of its op (the key is decoded from there on undo) and keeps
//! the key's previous index state. Rolling back to a savepoint restores the
//! index from the undo log and re-encodes the batch's first ops (byte for
//! byte the same prefix, so index positions stay valid).
use crate::annex::Annex;
use crate::error::{Error, Result};
use lsm::key::ValueKind;
use lsm::WriteBatch;
use std::collections::BTreeMap;
use std::ops::Bound;

/// The latest buffered state of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Buffered {
    /// Put: the value is `batch[end - len .. end]`.
    Put {
        end: usize,
        len: usize,
    },
    Delete,
    SingleDelete,
}

#[derive(Debug)]
struct Undo {
    /// Serial number of the write (never reused), to validate savepoints.
    serial: u64,
    /// Byte offset of the write's op in the batch.
    off: usize,
    /// The key's index state before the write.
    prev: Option<Buffered>,
}

/// A position in the write buffer to roll back to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Savepoint {
    /// The buffer generation (see `WriteBuffer::generation`).
    generation: u64,
    undo: usize,
    serial: u64,
    bytes: usize,
    ops: u32,
    /// Length of the annex.
    annex: usize,
}

/// What a scan copies out of the buffer: keys with their value (None = deleted).
pub(crate) type Overlay = Vec<(Vec<u8>, Option<Vec<u8>>)>;

#[derive(Debug, Default)]
pub(crate) struct WriteBuffer {
    /// Created at the first write.
    batch: Option<WriteBatch>,
    /// Per column family: key -> latest state. Few column families per
    /// transaction, so a vector.
    index: Vec<(u32, BTreeMap<Vec<u8>, Buffered>)>,
    undo: Vec<Undo>,
    next_serial: u64,
    /// Bumped when the buffer is emptied by a commit that keeps the
    /// transaction going: savepoints of earlier generations are invalid.
    generation: u64,
    /// The annex (binary log record), if the owner set one.
    pub(crate) annex: Option<Annex>,
}

impl WriteBuffer {
    /// Number of buffered writes.
    pub fn count(&self) -> u32 {
        self.batch.as_ref().map_or(0, |b| b.count())
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Bytes of the encoded batch.
    pub fn bytes(&self) -> usize {
        self.data().len()
    }

    fn data(&self) -> &[u8] {
        self.batch.as_ref().map_or(&[], |b| b.data())
    }

    fn cf_index(&self, cf: u32) -> Option<&BTreeMap<Vec<u8>, Buffered>> {
        self.index.iter().find(|(c, _)| *c == cf).map(|(_, m)| m)
    }

    fn cf_index_mut(&mut self, cf: u32) -> &mut BTreeMap<Vec<u8>, Buffered> {
        let i = match self.index.iter().position(|(c, _)| *c == cf) {
            Some(i) => i,
            None => {
                self.index.push((cf, BTreeMap::new()));
                self.index.len() - 1
            }
        };
        &mut self.index[i].1
    }

    fn value_of(&self, b: Buffered) -> Option<&[u8]> {
        match b {
            Buffered::Put { end, len } => Some(&self.data()[end - len..end]),
            Buffered::Delete | Buffered::SingleDelete => None,
        }
    }

    /// The buffered state of a key: None when not written, Some(None) when
    /// deleted, Some(Some(value)) when put.
    pub fn get(&self, cf: u32, key: &[u8]) -> Option<Option<&[u8]>> {
        if self.index.is_empty() {
            return None;
        }
        let b = *self.cf_index(cf)?.get(key)?;
        Some(self.value_of(b))
    }

    fn record(&mut self, cf: u32, key: &[u8], off: usize, new: Buffered) {
        let idx = self.cf_index_mut(cf);
        let prev = match idx.get_mut(key) {
            Some(slot) => Some(std::mem::replace(slot, new)),
            None => {
                idx.insert(key.to_vec(), new);
                None
            }
        };
        let serial = self.next_serial;
        self.next_serial += 1;
        self.undo.push(Undo { serial, off, prev });
    }

    fn batch_mut(&mut self) -> &mut WriteBatch {
        self.batch.get_or_insert_with(WriteBatch::new)
    }

    pub fn put(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        let b = self.batch_mut();
        let off = b.size();
        b.put_cf(cf, key, value);
        let end = b.size();
        self.record(
            cf,
            key,
            off,
            Buffered::Put {
                end,
                len: value.len(),
            },
        );
    }

    pub fn delete(&mut self, cf: u32, key: &[u8]) {
        let b = self.batch_mut();
        let off = b.size();
        b.delete_cf(cf, key);
        self.record(cf, key, off, Buffered::Delete);
    }

    pub fn single_delete(&mut self, cf: u32, key: &[u8]) {
        let b = self.batch_mut();
        let off = b.size();
        b.single_delete_cf(cf, key);
        self.record(cf, key, off, Buffered::SingleDelete);
    }

    /// The current position.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            generation: self.generation,
            undo: self.undo.len(),
            serial: self.undo.last().map_or(0, |u| u.serial + 1),
            bytes: self.batch.as_ref().map_or(0, |b| b.size()),
            ops: self.count(),
            annex: self.annex.as_ref().map_or(0, |a| a.len()),
        }
    }

    /// True when `sp` marks a position of the current write history (not
    /// one discarded by an earlier rollback).
    pub fn is_valid(&self, sp: &Savepoint) -> bool {
        sp.generation == self.generation
            && sp.undo <= self.undo.len()
            && match sp.undo.checked_sub(1) {
                None => true,
                Some(i) => self.undo[i].serial + 1 == sp.serial,
            }
    }

    /// Undoes every write made after `sp`. Returns false (and does
    /// nothing) when `sp` is no longer valid.
    pub fn rollback_to(&mut self, sp: &Savepoint) -> Result<bool> {
        if !self.is_valid(sp) {
            return Ok(false);
        }
        if let Some(a) = &mut self.annex {
            a.truncate(sp.annex);
        }
        if sp.undo == self.undo.len() {
            return Ok(true);
        }
        while self.undo.len() > sp.undo {
            let Some(u) = self.undo.pop() else { break };
            let Some((cf, key)) = decode_op_key(self.data(), u.off) else {
                return Err(bad_buffer("undo offset does not decode"));
            };
            let key = key.to_vec();
            let idx = self.cf_index_mut(cf);
            match u.prev {
                Some(p) => {
                    if let Some(slot) = idx.get_mut(&key) {
                        *slot = p;
                    } else {
                        idx.insert(key, p);
                    }
                }
                None => {
                    idx.remove(&key);
                }
            }
        }
        self.index.retain(|(_, m)| !m.is_empty());
        if sp.ops == 0 {
            self.batch = None;
            return Ok(true);
        }
        let Some(old) = self.batch.take() else {
            return Err(bad_buffer("savepoint past an empty batch"));
        };
        let mut b = WriteBatch::new();
        for op in old.ops()?.into_iter().take(sp.ops as usize) {
            match op.kind {
                ValueKind::Value => b.put_cf(op.cf, op.key, op.value),
                ValueKind::Delete => b.delete_cf(op.cf, op.key),
                ValueKind::SingleDelete => b.single_delete_cf(op.cf, op.key),
                ValueKind::RangeDelete => b.delete_range_cf(op.cf, op.key, op.value),
            }
        }
        if b.size() != sp.bytes {
            return Err(bad_buffer("re-encoded batch prefix differs"));
        }
        self.batch = Some(b);
        Ok(true)
    }

    /// An empty buffer of the next generation: every savepoint of this one
    /// becomes invalid (a commit in the middle of a transaction).
    pub fn next_generation(&self) -> WriteBuffer {
        WriteBuffer {
            generation: self.generation + 1,
            annex: self.annex.clone(),
            ..WriteBuffer::default()
        }
    }

    /// Takes the batch to commit, leaving the buffer empty.
    /// A non-empty annex goes into it as one sequence-keyed put (and is
    /// emptied down to its header).
    pub fn take_batch(&mut self) -> Option<WriteBatch> {
        self.index.clear();
        self.undo.clear();
        if let Some(a) = self.annex.as_mut().filter(|a| !a.is_empty()) {
            let b = self.batch.get_or_insert_with(WriteBatch::new);
            b.put_cf_seq_keyed(a.cf, &a.prefix, a.bytes());
            a.clear();
        }
        self.batch.take()
    }

    /// Copies the buffered keys of `cf` in `[lower, upper)` in byte order
    /// (`descending`: the reverse), with their values.
    pub fn range(
        &self,
        cf: u32,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        descending: bool,
    ) -> Overlay {
        let Some(idx) = self.cf_index(cf) else {
            return Vec::new();
        };
        if range_is_empty(lower, upper) {
            return Vec::new();
        }
        let conv =
            |(k, b): (&Vec<u8>, &Buffered)| (k.clone(), self.value_of(*b).map(<[u8]>::to_vec));
        let r = idx.range::<[u8], _>((lower, upper));
        if descending {
            r.rev().map(conv).collect()
        } else {
            r.map(conv).collect()
        }
    }
}

/// True when the bounds admit no key (BTreeMap::range would panic on some).
fn range_is_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(l), Bound::Included(u)) => l > u,
        (Bound::Included(l), Bound::Excluded(u))
        | (Bound::Excluded(l), Bound::Included(u))
        | (Bound::Excluded(l), Bound::Excluded(u)) => l >= u,
        _ => false,
    }
}

fn bad_buffer(what: &str) -> Error {
    Error::Engine(lsm::Error::corruption(
        "",
        0,
        format!("transaction write buffer: {what}"),
    ))
}

/// Decodes the column family and key of the op at byte `off` of an encoded
/// batch (`kind: u8 | cf: varint32 | key: length-prefixed | ...`).
fn decode_op_key(data: &[u8], off: usize) -> Option<(u32, &[u8])> {
    let mut d = lsm::coding::Decoder::new(data.get(off..)?);
    d.u8()?;
    let cf = d.varint32()?;
    let key = d.length_prefixed()?;
    Some((cf, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(b: &WriteBuffer, cf: u32, k: &[u8]) -> Option<Option<Vec<u8>>> {
        b.get(cf, k).map(|v| v.map(<[u8]>::to_vec))
    }

    #[test]
    fn read_own_writes_and_batch_order() {
        let mut b = WriteBuffer::default();
        assert!(b.is_empty());
        assert_eq!(b.get(0, b"a"), None);
        b.put(0, b"a", b"1");
        b.put(1, b"a", b"x");
        b.delete(0, b"b");
        b.put(0, b"a", b"2");
        b.single_delete(0, b"c");
        assert_eq!(b.count(), 5);
        assert_eq!(state(&b, 0, b"a"), Some(Some(b"2".to_vec())));
        assert_eq!(state(&b, 1, b"a"), Some(Some(b"x".to_vec())));
        assert_eq!(state(&b, 0, b"b"), Some(None));
        assert_eq!(state(&b, 0, b"c"), Some(None));
        assert_eq!(state(&b, 0, b"d"), None);
        let batch = b.take_batch().unwrap();
        let ops = batch.ops().unwrap();
        assert_eq!(ops.len(), 5);
        assert_eq!(ops[3].value, b"2");
        assert_eq!(ops[4].kind, ValueKind::SingleDelete);
        assert!(b.is_empty());
        assert_eq!(b.get(0, b"a"), None);
    }

    #[test]
    fn savepoints_nest_and_invalidate() {
        let mut b = WriteBuffer::default();
        let sp0 = b.savepoint();
        b.put(0, b"a", b"1");
        let sp1 = b.savepoint();
        b.put(0, b"a", b"2");
        b.delete(0, b"z");
        let sp2 = b.savepoint();
        b.put(0, b"q", b"3");
        assert!(b.rollback_to(&sp2).unwrap());
        assert_eq!(b.get(0, b"q"), None);
        assert!(b.rollback_to(&sp1).unwrap());
        assert_eq!(state(&b, 0, b"a"), Some(Some(b"1".to_vec())));
        assert_eq!(b.get(0, b"z"), None);
        assert_eq!(b.count(), 1);
        // sp2 was discarded by rolling back past it, even after new writes.
        b.put(0, b"m", b"4");
        b.put(0, b"n", b"5");
        assert!(!b.is_valid(&sp2));
        assert!(!b.rollback_to(&sp2).unwrap());
        assert!(b.is_valid(&sp1));
        assert!(b.rollback_to(&sp0).unwrap());
        assert!(b.is_empty());
        assert_eq!(b.get(0, b"a"), None);
        assert!(b.take_batch().is_none());
    }

    #[test]
    fn a_new_generation_invalidates_savepoints() {
        let mut b = WriteBuffer::default();
        let sp0 = b.savepoint();
        b.put(0, b"a", b"1");
        let sp1 = b.savepoint();
        let mut b = b.next_generation();
        // The same undo positions exist again, but belong to other writes.
        b.put(0, b"x", b"1");
        b.put(0, b"y", b"2");
        assert!(!b.is_valid(&sp0));
        assert!(!b.is_valid(&sp1));
        assert!(!b.rollback_to(&sp1).unwrap());
        assert_eq!(b.count(), 2);
        assert!(b.is_valid(&b.savepoint()));
    }

    #[test]
    fn range_copies_in_order() {
        let mut b = WriteBuffer::default();
        for k in [b"c", b"a", b"e", b"b"] {
            b.put(0, k, k);
        }
        b.delete(0, b"d");
        let r = b.range(0, Bound::Included(b"b"), Bound::Excluded(b"e"), false);
        let keys: Vec<_> = r.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
        assert_eq!(r[2].1, None);
        let r = b.range(0, Bound::Unbounded, Bound::Unbounded, true);
        assert_eq!(r.first().unwrap().0, b"e");
        assert!(b
            .range(0, Bound::Included(b"x"), Bound::Excluded(b"a"), false)
            .is_empty());
        assert!(b
            .range(9, Bound::Unbounded, Bound::Unbounded, false)
            .is_empty());
    }
}
