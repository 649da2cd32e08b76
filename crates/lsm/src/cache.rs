//! A sharded LRU cache with a byte capacity. The block cache maps
//! (table cache id, block offset) to decoded blocks; the table cache maps
//! file numbers to open tables with a capacity in open files.
//!
//! Each shard is a mutex around a hash map plus an intrusive doubly linked
//! list kept in a slab (indices, no pointers). Values are `Clone` (an `Arc`
//! in practice), so a lookup hands out a reference that outlives eviction.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const NIL: usize = usize::MAX;
const SHARDS: usize = 16;
/// Share of the capacity that high-priority entries (index and
/// filter blocks) may fill before they too are evicted first
/// (RocksDB's `high_pri_pool_ratio`).
const HIGH_POOL_RATIO: f64 = 0.5;
const LOW: usize = 0;
const HIGH: usize = 1;

struct Slot<K, V> {
    key: K,
    value: Option<V>,
    charge: usize,
    pri: usize,
    prev: usize,
    next: usize,
}

/// One shard: two LRU lists, low and high priority. Eviction takes the
/// least recently used low-priority entry, and a high-priority one only
/// when no low-priority entry is left or the high pool is over its share,
/// so a stream of data blocks cannot push out the index and filter blocks
/// that every read of a table needs first.
struct Shard<K, V> {
    map: HashMap<K, usize, FastState>,
    slots: Vec<Slot<K, V>>,
    free: Vec<usize>,
    head: [usize; 2], // most recently used
    tail: [usize; 2], // least recently used
    usage: usize,
    capacity: usize,
    /// High-priority charge held by all shards together, and its cap: the
    /// pool is shared so that large filters crowding one shard are fine as
    /// long as the cache as a whole has room for them.
    high_usage: Arc<AtomicUsize>,
    high_capacity: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Shard<K, V> {
    fn unlink(&mut self, i: usize) {
        let (p, n, l) = (self.slots[i].prev, self.slots[i].next, self.slots[i].pri);
        if p != NIL {
            self.slots[p].next = n;
        } else {
            self.head[l] = n;
        }
        if n != NIL {
            self.slots[n].prev = p;
        } else {
            self.tail[l] = p;
        }
    }
    fn push_front(&mut self, i: usize) {
        let l = self.slots[i].pri;
        self.slots[i].prev = NIL;
        self.slots[i].next = self.head[l];
        if self.head[l] != NIL {
            self.slots[self.head[l]].prev = i;
        }
        self.head[l] = i;
        if self.tail[l] == NIL {
            self.tail[l] = i;
        }
    }
    fn remove_slot(&mut self, i: usize) -> Option<V> {
        self.unlink(i);
        let key = self.slots[i].key.clone();
        self.map.remove(&key);
        self.usage -= self.slots[i].charge;
        if self.slots[i].pri == HIGH {
            self.high_usage
                .fetch_sub(self.slots[i].charge, Ordering::Relaxed);
        }
        self.free.push(i);
        self.slots[i].value.take()
    }
    fn get(&mut self, k: &K) -> Option<V> {
        let i = *self.map.get(k)?;
        self.unlink(i);
        self.push_front(i);
        self.slots[i].value.clone()
    }
    /// The next entry to evict, never `keep`.
    fn victim(&self, keep: usize) -> Option<usize> {
        let high = self.high_usage.load(Ordering::Relaxed);
        let first = if high > self.high_capacity || self.tail[LOW] == NIL {
            HIGH
        } else {
            LOW
        };
        for l in [first, 1 - first] {
            let mut t = self.tail[l];
            if t == keep && t != NIL {
                t = self.slots[t].prev;
            }
            if t != NIL {
                return Some(t);
            }
        }
        None
    }
    fn insert(&mut self, k: K, v: V, charge: usize, pri: usize) {
        if let Some(&i) = self.map.get(&k) {
            self.remove_slot(i);
        }
        let slot = Slot {
            key: k.clone(),
            value: Some(v),
            charge,
            pri,
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
        if pri == HIGH {
            self.high_usage.fetch_add(charge, Ordering::Relaxed);
        }
        self.push_front(i);
        while self.usage > self.capacity {
            match self.victim(i) {
                Some(t) => {
                    self.remove_slot(t);
                }
                None => break,
            }
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
    /// A cache holding up to `capacity` units of charge in total, in 16
    /// shards (for small entries such as open tables).
    pub fn new(capacity: usize) -> Self {
        Self::with_shards(capacity, SHARDS)
    }

    /// A byte-capacity cache for blocks: one shard per 16 MiB, 1 to 16.
    /// A shard must hold several of the largest entries, a table's full
    /// filter (about 1.6 MB for a 64 MB table of 1.3 M keys) and its index:
    /// with 16 shards of a 62 MB cache (3.9 MB each) two filters landing in
    /// one shard pushed each other out, and every point read re-read 1.6 MB.
    pub fn for_bytes(capacity: usize) -> Self {
        Self::with_shards(capacity, (capacity >> 24).clamp(1, SHARDS))
    }

    /// A cache of `capacity` split over `n` shards.
    pub fn with_shards(capacity: usize, n: usize) -> Self {
        let n = n.max(1);
        let per = capacity.div_ceil(n).max(1);
        let high_usage = Arc::new(AtomicUsize::new(0));
        let shards = (0..n)
            .map(|_| {
                Mutex::new(Shard {
                    map: HashMap::with_hasher(FastState),
                    slots: Vec::new(),
                    free: Vec::new(),
                    head: [NIL; 2],
                    tail: [NIL; 2],
                    usage: 0,
                    capacity: per,
                    high_usage: high_usage.clone(),
                    high_capacity: (capacity as f64 * HIGH_POOL_RATIO) as usize,
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
        let i = (h.finish() >> 32) as usize % self.shards.len();
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Looks up `k`, marking it recently used.
    pub fn get(&self, k: &K) -> Option<V> {
        self.shard(k).get(k)
    }
    /// Inserts `k`, evicting least recently used entries beyond capacity.
    pub fn insert(&self, k: K, v: V, charge: usize) {
        self.shard(&k).insert(k, v, charge, LOW)
    }
    /// Inserts `k` with high priority: evicted only after every
    /// low-priority entry, or when high-priority entries exceed half the
    /// capacity (index and filter blocks).
    pub fn insert_high(&self, k: K, v: V, charge: usize) {
        self.shard(&k).insert(k, v, charge, HIGH)
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

    #[test]
    fn high_priority_entries_outlive_a_stream_of_low_priority_ones() {
        // One shard's worth of keys: use a capacity of 16 per shard.
        let c: LruCache<u32, u32> = LruCache::new(16 * 16);
        for i in 0..32 {
            c.insert_high(i, i, 1);
        }
        // At most half of each shard stays high priority.
        assert!(c.usage() <= 16 * 16);
        let kept: Vec<u32> = (0..32).filter(|i| c.get(i).is_some()).collect();
        assert!(!kept.is_empty());
        for i in 1000..100_000 {
            c.insert(i, i, 1);
        }
        for i in &kept {
            assert_eq!(
                c.get(i),
                Some(*i),
                "high-priority {i} evicted by low-priority inserts"
            );
        }
        assert!(c.usage() <= 16 * 16);
        // Low-priority entries still cycle: an old one is gone.
        assert_eq!(c.get(&1000), None);
    }

    #[test]
    fn high_pool_over_its_share_evicts_high_first() {
        let c: LruCache<u32, u32> = LruCache::new(16 * 8);
        for i in 0..10_000 {
            c.insert_high(i, i, 1);
        }
        assert!(c.usage() <= 16 * 8);
        c.insert(50_000, 1, 1);
        // The high pool is over its half; a new low entry survives the
        // next high insertions into its shard.
        for i in 10_000..20_000 {
            c.insert_high(i, i, 1);
        }
        assert_eq!(c.get(&50_000), Some(1));
    }

    #[test]
    fn a_block_cache_keeps_a_dozen_full_filters_under_a_stream_of_data_blocks() {
        // The sysbench case at a 250 MB memory limit: 62 MB of cache, 11
        // tables with 1.6 MB filters and 240 KB indexes, 16 KB data blocks.
        let c: LruCache<(u64, u64), u32> = LruCache::for_bytes(62 << 20);
        for t in 1..=11u64 {
            c.insert_high((t, 67_000_000), 0, 1_600_000);
            c.insert_high((t, 68_600_000), 1, 240_000);
        }
        for i in 0..100_000u64 {
            c.insert((1 + i % 11, i * 16384), 2, 16384);
        }
        for t in 1..=11u64 {
            assert!(
                c.get(&(t, 67_000_000)).is_some(),
                "filter of table {t} evicted"
            );
            assert!(
                c.get(&(t, 68_600_000)).is_some(),
                "index of table {t} evicted"
            );
        }
        assert!(c.usage() <= 62 << 20);
    }
}
