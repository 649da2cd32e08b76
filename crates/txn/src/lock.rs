//! The row lock manager: shared/exclusive locks on `(column family, key)`,
//! FIFO waiting with a timeout, and deadlock detection on a wait-for graph.
//!
//! **Table.** 64 shards, each a `Mutex<HashMap<cf, HashMap<key, LockEntry>>>`
//! with one `Condvar`. An entry lists its holders (transaction id + mode)
//! and its waiters in FIFO order; it disappears when both are empty. An
//! uncontended lock is one shard-mutex round trip and one insert.
//!
//! **Granting.** A request is granted at once when the transaction already
//! holds a covering mode (re-entrant), or when it is compatible with every
//! other holder and nobody waits (so a stream of S requests cannot starve an
//! X waiter). An S->X upgrade is granted at once when the requester is the
//! only holder; otherwise it waits ahead of every non-upgrade waiter (they
//! wait for the upgrader's S lock anyway). When holders leave, waiters are
//! granted from the front while compatible.
//!
//! **Deadlocks.** With detection on, the manager keeps the wait-for graph
//! `waiter -> blockers` exactly: a waiter's blockers are the incompatible
//! holders and the incompatible waiters ahead of it, and they are recomputed
//! under the shard mutex every time that key's holders or waiters change
//! (lock order: shard mutex, then graph mutex; shards never nest). A new
//! cycle can only appear when a transaction starts waiting, and it must pass
//! through that transaction, so a depth-first search from the requester
//! finds every deadlock; the requester is the victim and gets
//! `Error::Deadlock` without waiting.
use crate::error::{Error, Result};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A transaction's id.
pub type TxnId = u64;

/// How a row is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockMode {
    /// Shared (S): `SELECT ... LOCK IN SHARE MODE`; compatible with S.
    Shared,
    /// Exclusive (X): writes and `SELECT ... FOR UPDATE`; conflicts with all.
    Exclusive,
}

impl LockMode {
    /// True when holding `self` satisfies a request for `want`.
    fn covers(self, want: LockMode) -> bool {
        self == LockMode::Exclusive || want == LockMode::Shared
    }
    fn compatible(self, other: LockMode) -> bool {
        self == LockMode::Shared && other == LockMode::Shared
    }
}

const SHARDS: usize = 64;

#[derive(Debug, Clone, Copy)]
struct Holder {
    txn: TxnId,
    mode: LockMode,
}

#[derive(Debug, Clone, Copy)]
struct Waiter {
    txn: TxnId,
    mode: LockMode,
}

#[derive(Debug, Default)]
struct LockEntry {
    holders: Vec<Holder>,
    waiters: VecDeque<Waiter>,
}

impl LockEntry {
    fn held_mode(&self, txn: TxnId) -> Option<LockMode> {
        self.holders.iter().find(|h| h.txn == txn).map(|h| h.mode)
    }

    fn compatible_with_holders(&self, txn: TxnId, mode: LockMode) -> bool {
        self.holders
            .iter()
            .all(|h| h.txn == txn || h.mode.compatible(mode))
    }

    fn grant(&mut self, txn: TxnId, mode: LockMode) {
        match self.holders.iter_mut().find(|h| h.txn == txn) {
            Some(h) => {
                if !h.mode.covers(mode) {
                    h.mode = mode;
                }
            }
            None => self.holders.push(Holder { txn, mode }),
        }
    }

    /// Grants waiters from the front while they are compatible.
    fn grant_waiters(&mut self, granted: &mut Vec<TxnId>) {
        while let Some(w) = self.waiters.front().copied() {
            if !self.compatible_with_holders(w.txn, w.mode) {
                break;
            }
            self.waiters.pop_front();
            self.grant(w.txn, w.mode);
            granted.push(w.txn);
        }
    }

    /// The transactions the waiter at `idx` waits for.
    fn blockers(&self, idx: usize) -> Vec<TxnId> {
        let Some(w) = self.waiters.get(idx) else {
            return Vec::new();
        };
        let holders = self
            .holders
            .iter()
            .filter(|h| h.txn != w.txn && !h.mode.compatible(w.mode))
            .map(|h| h.txn);
        let ahead = self
            .waiters
            .iter()
            .take(idx)
            .filter(|a| a.txn != w.txn && !a.mode.compatible(w.mode))
            .map(|a| a.txn);
        holders.chain(ahead).collect()
    }

    fn remove_waiter(&mut self, txn: TxnId) {
        self.waiters.retain(|w| w.txn != txn);
    }

    fn is_waiting(&self, txn: TxnId) -> bool {
        self.waiters.iter().any(|w| w.txn == txn)
    }
}

type ShardMap = HashMap<u32, HashMap<Vec<u8>, LockEntry>>;

struct Shard {
    map: Mutex<ShardMap>,
    cv: Condvar,
}

/// Lock counters (`Innodb_row_lock_*`, deadlocks).
#[derive(Default)]
pub(crate) struct LockStats {
    pub waits: AtomicU64,
    pub current_waits: AtomicU64,
    pub wait_micros: AtomicU64,
    pub max_wait_micros: AtomicU64,
    pub timeouts: AtomicU64,
    pub deadlocks: AtomicU64,
}

/// The lock table.
pub(crate) struct LockManager {
    shards: Vec<Shard>,
    /// waiter -> the transactions it waits for (only with detection on).
    graph: Mutex<HashMap<TxnId, Vec<TxnId>>>,
    detect: bool,
    pub stats: LockStats,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fast, well-mixed hash of (cf, key) to pick a shard.
fn shard_of(cf: u32, key: &[u8]) -> usize {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (cf as u64).wrapping_add(K).wrapping_mul(K);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let mut w = [0u8; 8];
    let rest = chunks.remainder();
    w[..rest.len()].copy_from_slice(rest);
    h = (h.rotate_left(23) ^ u64::from_le_bytes(w) ^ key.len() as u64).wrapping_mul(K);
    h ^= h >> 29;
    (h.wrapping_mul(K) >> 58) as usize % SHARDS
}

/// True when `start` reaches itself in the wait-for graph.
fn has_cycle(graph: &HashMap<TxnId, Vec<TxnId>>, start: TxnId) -> bool {
    let mut stack: Vec<TxnId> = match graph.get(&start) {
        Some(b) => b.clone(),
        None => return false,
    };
    let mut seen = HashSet::new();
    while let Some(t) = stack.pop() {
        if t == start {
            return true;
        }
        if seen.insert(t) {
            if let Some(next) = graph.get(&t) {
                stack.extend_from_slice(next);
            }
        }
    }
    false
}

impl LockManager {
    pub fn new(detect: bool) -> LockManager {
        LockManager {
            shards: (0..SHARDS)
                .map(|_| Shard {
                    map: Mutex::new(HashMap::new()),
                    cv: Condvar::new(),
                })
                .collect(),
            graph: Mutex::new(HashMap::new()),
            detect,
            stats: LockStats::default(),
        }
    }

    fn shard(&self, cf: u32, key: &[u8]) -> &Shard {
        &self.shards[shard_of(cf, key)]
    }

    /// After `entry`'s holders or waiters changed: grant what can be
    /// granted, refresh the waiters' edges, wake the granted.
    fn after_change(&self, shard: &Shard, entry: &mut LockEntry) {
        let mut granted = Vec::new();
        entry.grant_waiters(&mut granted);
        if self.detect && (!granted.is_empty() || !entry.waiters.is_empty()) {
            let mut graph = lock(&self.graph);
            for t in &granted {
                graph.remove(t);
            }
            for i in 0..entry.waiters.len() {
                graph.insert(entry.waiters[i].txn, entry.blockers(i));
            }
        }
        if !granted.is_empty() {
            shard.cv.notify_all();
        }
    }

    /// Acquires `mode` on `(cf, key)` for `txn`, waiting up to `timeout`.
    /// Returns true when `txn` became a holder of the key (the caller
    /// records it for release), false when it already held it (re-entrant
    /// or upgraded).
    #[cfg(test)]
    pub fn acquire(
        &self,
        txn: TxnId,
        cf: u32,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
    ) -> Result<bool> {
        self.acquire_or_stop(txn, cf, key, mode, timeout, None)
    }

    /// `acquire`, whose wait also ends (`Error::Interrupted`) once `stop`
    /// turns non-zero (checked at least every 50 ms).
    pub fn acquire_or_stop(
        &self,
        txn: TxnId,
        cf: u32,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
        stop: Option<&AtomicU8>,
    ) -> Result<bool> {
        let shard = self.shard(cf, key);
        let mut g = lock(&shard.map);
        let keys = g.entry(cf).or_default();
        let entry = match keys.get_mut(key) {
            Some(e) => e,
            None => {
                keys.insert(
                    key.to_vec(),
                    LockEntry {
                        holders: vec![Holder { txn, mode }],
                        waiters: VecDeque::new(),
                    },
                );
                return Ok(true);
            }
        };
        let held = entry.held_mode(txn);
        if held.is_some_and(|h| h.covers(mode)) {
            return Ok(false);
        }
        let upgrade = held.is_some();
        if entry.compatible_with_holders(txn, mode) && (upgrade || entry.waiters.is_empty()) {
            entry.grant(txn, mode);
            if upgrade && !entry.waiters.is_empty() {
                // Waiters that were compatible with our S lock now wait
                // for our X lock too: refresh their edges.
                self.after_change(shard, entry);
            }
            return Ok(!upgrade);
        }
        if timeout.is_zero() {
            self.stats.timeouts.fetch_add(1, Ordering::Relaxed);
            return Err(Error::LockWaitTimeout);
        }
        // Queue up: upgrades ahead of every waiter that holds nothing.
        let pos = if upgrade {
            entry
                .waiters
                .iter()
                .position(|w| entry.held_mode(w.txn).is_none())
                .unwrap_or(entry.waiters.len())
        } else {
            entry.waiters.len()
        };
        entry.waiters.insert(pos, Waiter { txn, mode });
        if self.detect {
            let mut graph = lock(&self.graph);
            for i in pos..entry.waiters.len() {
                graph.insert(entry.waiters[i].txn, entry.blockers(i));
            }
            if has_cycle(&graph, txn) {
                graph.remove(&txn);
                drop(graph);
                entry.remove_waiter(txn);
                self.after_change(shard, entry);
                self.stats.deadlocks.fetch_add(1, Ordering::Relaxed);
                return Err(Error::Deadlock);
            }
        }
        // Wait.
        self.stats.waits.fetch_add(1, Ordering::Relaxed);
        self.stats.current_waits.fetch_add(1, Ordering::Relaxed);
        let start = Instant::now();
        let deadline = start.checked_add(timeout);
        let outcome = loop {
            let Some(entry) = g.get_mut(&cf).and_then(|m| m.get_mut(key)) else {
                // Cannot happen (a waiter keeps its entry alive); take the
                // lock afresh rather than wait for nothing.
                if self.detect {
                    lock(&self.graph).remove(&txn);
                }
                g.entry(cf).or_default().insert(
                    key.to_vec(),
                    LockEntry {
                        holders: vec![Holder { txn, mode }],
                        waiters: VecDeque::new(),
                    },
                );
                break Ok(());
            };
            if entry.held_mode(txn).is_some_and(|h| h.covers(mode)) && !entry.is_waiting(txn) {
                break Ok(());
            }
            let now = Instant::now();
            let stopped = stop.is_some_and(|f| f.load(Ordering::Relaxed) != 0);
            if stopped || deadline.is_some_and(|d| now >= d) {
                entry.remove_waiter(txn);
                if self.detect {
                    lock(&self.graph).remove(&txn);
                }
                self.after_change(shard, entry);
                if stopped {
                    break Err(Error::Interrupted);
                }
                self.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                break Err(Error::LockWaitTimeout);
            }
            let left = deadline.map_or(Duration::from_secs(3600), |d| d - now);
            let left = if stop.is_some() {
                left.min(Duration::from_millis(50))
            } else {
                left
            };
            g = shard
                .cv
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        drop(g);
        let waited = start.elapsed().as_micros() as u64;
        self.stats.current_waits.fetch_sub(1, Ordering::Relaxed);
        self.stats.wait_micros.fetch_add(waited, Ordering::Relaxed);
        self.stats
            .max_wait_micros
            .fetch_max(waited, Ordering::Relaxed);
        outcome.map(|()| !upgrade)
    }

    /// Releases `txn`'s lock on `(cf, key)`, granting waiters behind it.
    pub fn release(&self, txn: TxnId, cf: u32, key: &[u8]) {
        let shard = self.shard(cf, key);
        let mut g = lock(&shard.map);
        let Some(keys) = g.get_mut(&cf) else {
            return;
        };
        let Some(entry) = keys.get_mut(key) else {
            return;
        };
        entry.holders.retain(|h| h.txn != txn);
        if entry.holders.is_empty() && entry.waiters.is_empty() {
            keys.remove(key);
            return;
        }
        self.after_change(shard, entry);
    }

    /// Number of keys with a holder or a waiter (diagnostics).
    pub fn locked_keys(&self) -> usize {
        self.shards
            .iter()
            .map(|s| lock(&s.map).values().map(|m| m.len()).sum::<usize>())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn shared_compatible_exclusive_conflicts() {
        let m = LockManager::new(true);
        assert!(m.acquire(1, 0, b"k", LockMode::Shared, LONG).unwrap());
        assert!(m.acquire(2, 0, b"k", LockMode::Shared, LONG).unwrap());
        assert!(!m.acquire(1, 0, b"k", LockMode::Shared, LONG).unwrap());
        let e = m
            .acquire(3, 0, b"k", LockMode::Exclusive, Duration::from_millis(20))
            .unwrap_err();
        assert!(matches!(e, Error::LockWaitTimeout));
        assert!(matches!(
            m.acquire(3, 0, b"k", LockMode::Exclusive, Duration::ZERO),
            Err(Error::LockWaitTimeout)
        ));
        m.release(1, 0, b"k");
        m.release(2, 0, b"k");
        assert_eq!(m.locked_keys(), 0);
        assert!(m.acquire(3, 0, b"k", LockMode::Exclusive, LONG).unwrap());
        assert!(!m.acquire(3, 0, b"k", LockMode::Shared, LONG).unwrap());
        // Different column family, same key bytes: independent.
        assert!(m.acquire(4, 1, b"k", LockMode::Exclusive, LONG).unwrap());
        assert_eq!(m.stats.timeouts.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn upgrade_when_sole_holder() {
        let m = LockManager::new(true);
        assert!(m.acquire(1, 0, b"k", LockMode::Shared, LONG).unwrap());
        assert!(!m.acquire(1, 0, b"k", LockMode::Exclusive, LONG).unwrap());
        assert!(matches!(
            m.acquire(2, 0, b"k", LockMode::Shared, Duration::ZERO),
            Err(Error::LockWaitTimeout)
        ));
    }

    #[test]
    fn fifo_waiters_granted_in_order() {
        let m = Arc::new(LockManager::new(true));
        m.acquire(1, 0, b"k", LockMode::Exclusive, LONG).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut hs = Vec::new();
        for t in 2..6u64 {
            let (m2, order2) = (m.clone(), order.clone());
            hs.push(std::thread::spawn(move || {
                m2.acquire(t, 0, b"k", LockMode::Exclusive, LONG).unwrap();
                order2.lock().unwrap().push(t);
                m2.release(t, 0, b"k");
            }));
            // Let each one queue before the next.
            while m.stats.current_waits.load(Ordering::Relaxed) < t - 1 {
                std::thread::yield_now();
            }
        }
        m.release(1, 0, b"k");
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![2, 3, 4, 5]);
        assert_eq!(m.locked_keys(), 0);
    }

    #[test]
    fn shared_request_waits_behind_exclusive_waiter() {
        let m = Arc::new(LockManager::new(true));
        m.acquire(1, 0, b"k", LockMode::Shared, LONG).unwrap();
        let m2 = m.clone();
        let h = std::thread::spawn(move || m2.acquire(2, 0, b"k", LockMode::Exclusive, LONG));
        while m.stats.current_waits.load(Ordering::Relaxed) < 1 {
            std::thread::yield_now();
        }
        // S is compatible with the holder but must not overtake the X waiter.
        assert!(matches!(
            m.acquire(3, 0, b"k", LockMode::Shared, Duration::from_millis(20)),
            Err(Error::LockWaitTimeout)
        ));
        m.release(1, 0, b"k");
        assert!(h.join().unwrap().unwrap());
    }

    #[test]
    fn cycle_detection() {
        let mut g = HashMap::new();
        g.insert(1, vec![2]);
        g.insert(2, vec![3, 4]);
        g.insert(4, vec![5]);
        assert!(!has_cycle(&g, 1));
        g.insert(5, vec![1]);
        assert!(has_cycle(&g, 1));
        assert!(has_cycle(&g, 4));
        assert!(!has_cycle(&g, 3));
    }

    #[test]
    fn shards_spread() {
        let mut seen = HashSet::new();
        for i in 0u32..1000 {
            seen.insert(shard_of(7, &i.to_be_bytes()));
        }
        assert!(seen.len() > SHARDS / 2, "{} shards used", seen.len());
    }
}
