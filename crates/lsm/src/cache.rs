//! A sharded LRU cache with a byte capacity. The block cache maps
//! (table cache id, block offset) to decoded blocks; the table cache maps
//! file numbers to open tables with a capacity in open files.
//!
//! Each shard is a mutex around a hash map plus an intrusive doubly linked
//! list kept in a slab (indices, no pointers). Values are `Clone` (an `Arc`
//! in practice), so a lookup hands out a reference that outlives eviction.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Mutex;

const NIL: usize = usize::MAX;
const SHARDS: usize = 16;

struct Slot<K, V> {
    key: K,
    value: Option<V>,
    charge: usize,
    prev: usize,
    next: usize,
}

struct Shard<K, V> {
    map: HashMap<K, usize, FastState>,
    slots: Vec<Slot<K, V>>,
    free: Vec<usize>,
    head: usize, // most recently used
    tail: usize, // least recently used
    usage: usize,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Shard<K, V> {
    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.slots[i].prev, self.slots[i].next);
        if p != NIL {
            self.slots[p].next = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.slots[n].prev = p;
        } else {
            self.tail = p;
        }
    }
    fn push_front(&mut self, i: usize) {
        self.slots[i].prev = NIL;
        self.slots[i].next = self.head;
        if self.head != NIL {
            self.slots[self.head].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }
    fn remove_slot(&mut self, i: usize) -> Option<V> {
        self.unlink(i);
        let key = self.slots[i].key.clone();
        self.map.remove(&key);
        self.usage -= self.slots[i].charge;
        self.free.push(i);
        self.slots[i].value.take()
    }
    fn get(&mut self, k: &K) -> Option<V> {
        let i = *self.map.get(k)?;
        self.unlink(i);
        self.push_front(i);
        self.slots[i].value.clone()
    }
    fn insert(&mut self, k: K, v: V, charge: usize) {
        if let Some(&i) = self.map.get(&k) {
            self.remove_slot(i);
        }
        let slot = Slot {
            key: k.clone(),
            value: Some(v),
            charge,
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.map.insert(k, i);
        self.usage += charge;
        self.push_front(i);
        while self.usage > self.capacity && self.tail != NIL && self.tail != i {
            let t = self.tail;
            self.remove_slot(t);
        }
    }
}

/// A thread-safe sharded LRU cache.
pub struct LruCache<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    hasher: FastState,
}

/// A cheap multiplicative hasher: keys are small integers (file numbers,
/// offsets), so SipHash's flooding resistance buys nothing here.
#[derive(Default, Clone, Copy)]
pub struct FastState;

/// See [`FastState`].
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(29) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

impl<K: Hash + Eq + Clone, V: Clone> LruCache<K, V> {
    /// A cache holding up to `capacity` units of charge in total.
    pub fn new(capacity: usize) -> Self {
        let per = capacity.div_ceil(SHARDS).max(1);
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    map: HashMap::with_hasher(FastState),
                    slots: Vec::new(),
                    free: Vec::new(),
                    head: NIL,
                    tail: NIL,
                    usage: 0,
                    capacity: per,
                })
            })
            .collect();
        LruCache {
            shards,
            hasher: FastState,
        }
    }

    fn shard(&self, k: &K) -> std::sync::MutexGuard<'_, Shard<K, V>> {
        let mut h = self.hasher.build_hasher();
        k.hash(&mut h);
        let i = (h.finish() >> 32) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Looks up `k`, marking it recently used.
    pub fn get(&self, k: &K) -> Option<V> {
        self.shard(k).get(k)
    }
    /// Inserts `k`, evicting least recently used entries beyond capacity.
    pub fn insert(&self, k: K, v: V, charge: usize) {
        self.shard(&k).insert(k, v, charge)
    }
    /// Removes `k`.
    pub fn remove(&self, k: &K) -> Option<V> {
        let mut s = self.shard(k);
        let i = *s.map.get(k)?;
        s.remove_slot(i)
    }
    /// Total charge held.
    pub fn usage(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).usage)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let c: LruCache<u32, u32> = LruCache::new(16 * 3);
        // All keys land in some shard; check per-shard behaviour via totals.
        for i in 0..1000 {
            c.insert(i, i * 10, 1);
        }
        assert!(c.usage() <= 48);
        assert_eq!(c.get(&999), Some(9990));
        assert_eq!(c.get(&0), None);
        c.insert(5000, 1, 1);
        assert_eq!(c.remove(&5000), Some(1));
        assert_eq!(c.get(&5000), None);
    }
}
