//! Blocks of sorted entries with prefix-compressed keys and restart points
//! (LevelDB's block format). Used for data, index and range-del blocks.
//!
//! ```text
//! block   := entry* | restarts: fixed32 * n | n: fixed32
//! entry   := shared: varint32 | unshared: varint32 | value_len: varint32
//!            key_delta: [unshared] | value: [value_len]
//! ```
//! `shared` is 0 at every restart point (every `restart_interval` entries),
//! so a reader can binary-search the restart array.
use crate::coding::{get_fixed32, put_fixed32, put_varint32, Decoder};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::Comparator;
use std::cmp::Ordering;
use std::sync::Arc;

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    interval: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder with a restart point every `interval` entries.
    pub fn new(interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            interval: interval.max(1),
            last_key: Vec::new(),
            entries: 0,
        }
    }
    /// Adds an entry; keys must arrive in order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let mut shared = 0;
        if self.counter < self.interval {
            shared = self
                .last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
        self.entries += 1;
    }
    /// Bytes the finished block would take.
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + self.restarts.len() * 4 + 4
    }
    /// True if nothing was added.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }
    /// Makes room for `n` bytes of entries and restarts before the next
    /// growth (a data block's size is known after the first one).
    pub fn reserve(&mut self, n: usize) {
        self.buf.reserve(n);
    }
    /// Finishes the block, returns its bytes and resets the builder.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            put_fixed32(&mut out, *r);
        }
        put_fixed32(&mut out, self.restarts.len() as u32);
        self.restarts = vec![0];
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
        out
    }
}

/// A decoded, verified block.
pub struct Block {
    data: Vec<u8>,
    restarts: usize,
    num_restarts: usize,
}

impl Block {
    /// Validates the restart array of `data`.
    pub fn new(data: Vec<u8>) -> Result<Block> {
        let bad = || Error::corruption("", 0, "block restart array out of range");
        let n = data
            .len()
            .checked_sub(4)
            .and_then(|p| get_fixed32(&data[p..]))
            .ok_or_else(bad)? as usize;
        let restarts = n
            .checked_mul(4)
            .and_then(|x| x.checked_add(4))
            .and_then(|x| data.len().checked_sub(x))
            .ok_or_else(bad)?;
        if n == 0 && restarts > 0 {
            return Err(bad());
        }
        Ok(Block {
            data,
            restarts,
            num_restarts: n,
        })
    }
    /// A block with no entries.
    pub fn empty() -> Block {
        Block {
            data: vec![0; 4],
            restarts: 0,
            num_restarts: 0,
        }
    }
    /// Bytes held (for cache charging).
    pub fn size(&self) -> usize {
        self.data.len()
    }
    fn restart_point(&self, i: usize) -> usize {
        get_fixed32(&self.data[self.restarts + 4 * i..]).unwrap_or(0) as usize
    }
}

/// A cursor over a block.
pub struct BlockIter {
    block: Arc<Block>,
    cmp: Comparator,
    /// Offset of the current entry (== restarts when invalid).
    current: usize,
    /// Offset just past the current entry.
    next_offset: usize,
    key: Vec<u8>,
    value: (usize, usize),
    err: Option<Error>,
}

impl BlockIter {
    /// A cursor over `block`, ordered by the internal comparator `cmp`.
    pub fn new(block: Arc<Block>, cmp: Comparator) -> BlockIter {
        let r = block.restarts;
        BlockIter {
            block,
            cmp,
            current: r,
            next_offset: r,
            key: Vec::new(),
            value: (0, 0),
            err: None,
        }
    }

    fn corrupt(&mut self, what: &str) {
        self.current = self.block.restarts;
        self.err = Some(Error::corruption("", 0, format!("block entry: {what}")));
    }

    /// Decodes the entry at `next_offset` into the cursor; false at the end.
    fn parse_next(&mut self) -> bool {
        let start = self.next_offset;
        if start >= self.block.restarts {
            self.current = self.block.restarts;
            return false;
        }
        let data = &self.block.data[..self.block.restarts];
        let mut d = Decoder::new(&data[start..]);
        let parsed = (|| {
            let shared = d.varint32()? as usize;
            let unshared = d.varint32()? as usize;
            let vlen = d.varint32()? as usize;
            let delta = d.bytes(unshared)?;
            let _ = d.bytes(vlen)?;
            Some((shared, delta.len(), vlen))
        })();
        let Some((shared, unshared, vlen)) = parsed else {
            self.corrupt("truncated entry");
            return false;
        };
        if shared > self.key.len() {
            self.corrupt("shared prefix longer than previous key");
            return false;
        }
        let end = start + d.pos();
        let key_start = end - vlen - unshared;
        self.key.truncate(shared);
        self.key
            .extend_from_slice(&data[key_start..key_start + unshared]);
        self.value = (end - vlen, end);
        self.current = start;
        self.next_offset = end;
        true
    }

    fn seek_to_restart(&mut self, i: usize) {
        self.key.clear();
        self.next_offset = self.block.restart_point(i);
    }

    /// Key at restart point `i` (shared is 0 there), or None if malformed.
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let off = self.block.restart_point(i);
        let data = self.block.data.get(off..self.block.restarts)?;
        let mut d = Decoder::new(data);
        let shared = d.varint32()?;
        let unshared = d.varint32()? as usize;
        let _vlen = d.varint32()?;
        if shared != 0 {
            return None;
        }
        d.bytes(unshared)
    }
}

impl InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.current < self.block.restarts
    }
    fn seek_to_first(&mut self) {
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        self.seek_to_restart(0);
        self.parse_next();
    }
    fn seek_to_last(&mut self) {
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        self.seek_to_restart(self.block.num_restarts - 1);
        let mut last = None;
        while self.parse_next() {
            last = Some(self.current);
            if self.next_offset >= self.block.restarts {
                break;
            }
        }
        if last.is_none() && self.err.is_none() {
            self.current = self.block.restarts;
        }
    }
    fn seek(&mut self, target: &[u8]) {
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        // Last restart point with key < target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        while lo < hi {
            let mid = (lo + hi + 1) / 2;
            match self.restart_key(mid) {
                Some(k) if self.cmp.compare_internal(k, target) == Ordering::Less => lo = mid,
                Some(_) => hi = mid - 1,
                None => return self.corrupt("bad restart point"),
            }
        }
        self.seek_to_restart(lo);
        while self.parse_next() {
            if self.cmp.compare_internal(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }
    fn next(&mut self) {
        self.parse_next();
    }
    fn prev(&mut self) {
        let original = self.current;
        // Find the last restart point before the current entry.
        let mut i = self.block.num_restarts;
        while i > 0 && self.block.restart_point(i - 1) >= original {
            i -= 1;
        }
        if i == 0 {
            self.current = self.block.restarts;
            return;
        }
        self.seek_to_restart(i - 1);
        loop {
            if !self.parse_next() {
                return;
            }
            if self.next_offset >= original {
                return;
            }
        }
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
    fn value(&self) -> &[u8] {
        &self.block.data[self.value.0..self.value.1]
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn build(n: u32, interval: usize) -> (Arc<Block>, Vec<Vec<u8>>) {
        let mut b = BlockBuilder::new(interval);
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|i| internal_key(format!("key{:06}", i * 2).as_bytes(), 1, ValueKind::Value))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            b.add(k, format!("v{i}").as_bytes());
        }
        (Arc::new(Block::new(b.finish()).unwrap()), keys)
    }

    #[test]
    fn iterate_seek_and_prev() {
        for interval in [1, 3, 16] {
            let (blk, keys) = build(100, interval);
            let mut it = BlockIter::new(blk.clone(), Comparator::Bytewise);
            it.seek_to_first();
            for k in &keys {
                assert_eq!(it.key(), k.as_slice());
                it.next();
            }
            assert!(!it.valid());
            it.seek_to_last();
            for k in keys.iter().rev() {
                assert_eq!(it.key(), k.as_slice());
                it.prev();
            }
            assert!(!it.valid());
            it.seek(&internal_key(b"key000051", 1, ValueKind::Value));
            assert_eq!(it.key(), keys[26].as_slice());
            assert_eq!(it.value(), b"v26");
            it.seek(&internal_key(b"zzz", 1, ValueKind::Value));
            assert!(!it.valid());
            it.status().unwrap();
        }
    }

    #[test]
    fn garbage_never_panics() {
        let (blk, _) = build(50, 4);
        let good = blk.data.clone();
        for i in 0..good.len() {
            for bit in [0u8, 3, 7] {
                let mut d = good.clone();
                d[i] ^= 1 << bit;
                if let Ok(b) = Block::new(d) {
                    let mut it = BlockIter::new(Arc::new(b), Comparator::Bytewise);
                    it.seek_to_first();
                    let mut n = 0;
                    while it.valid() && n < 1000 {
                        it.next();
                        n += 1;
                    }
                    it.seek(b"key000020\0\0\0\0\0\0\0\0");
                    it.seek_to_last();
                    if it.valid() {
                        it.prev();
                    }
                }
            }
        }
    }
}
