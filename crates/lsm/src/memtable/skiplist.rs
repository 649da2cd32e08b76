//! A concurrent skiplist (LevelDB's design): one writer at a time (inserts
//! are serialized by an internal mutex), any number of lock-free readers.
//! Nodes are never removed or freed while the list lives, so a reader may
//! hold a node pointer for as long as it holds the list.
//!
//! This file and its sibling are the only `unsafe` code in the workspace.
#![allow(unsafe_code)]

use crate::key::Comparator;
use std::cmp::Ordering as CmpOrdering;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

const MAX_HEIGHT: usize = 12;

pub(crate) struct Node {
    key_len: u32,
    /// Internal key followed by the value.
    data: Box<[u8]>,
    next: [AtomicPtr<Node>; MAX_HEIGHT],
}

impl Node {
    fn new(data: Box<[u8]>, key_len: u32) -> *mut Node {
        Box::into_raw(Box::new(Node {
            key_len,
            data,
            next: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
        }))
    }
    #[inline]
    pub(crate) fn key(&self) -> &[u8] {
        &self.data[..self.key_len as usize]
    }
    #[inline]
    pub(crate) fn value(&self) -> &[u8] {
        &self.data[self.key_len as usize..]
    }
    #[inline]
    fn next(&self, level: usize) -> *mut Node {
        self.next[level].load(Ordering::Acquire)
    }
}

/// The skiplist of internal-key entries.
pub(crate) struct SkipList {
    head: *mut Node,
    max_height: AtomicUsize,
    cmp: Comparator,
    rng: AtomicU64,
    write_lock: Mutex<()>,
}

// SAFETY: nodes are only mutated through atomics; inserts are serialized by
// `write_lock`; nodes live until the list is dropped, which requires
// exclusive ownership. So sharing `&SkipList` between threads is sound.
unsafe impl Send for SkipList {}
// SAFETY: see above.
unsafe impl Sync for SkipList {}

impl SkipList {
    pub(crate) fn new(cmp: Comparator) -> SkipList {
        SkipList {
            head: Node::new(Box::new([]), 0),
            max_height: AtomicUsize::new(1),
            cmp,
            rng: AtomicU64::new(0x2545_f491_4f6c_dd1d),
            write_lock: Mutex::new(()),
        }
    }

    fn random_height(&self) -> usize {
        // xorshift64; only the (serialized) writer calls this.
        let mut x = self.rng.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.store(x, Ordering::Relaxed);
        let mut h = 1;
        let mut bits = x;
        while h < MAX_HEIGHT && bits & 3 == 0 {
            h += 1;
            bits >>= 2;
        }
        h
    }

    #[inline]
    fn node<'a>(&'a self, p: *mut Node) -> &'a Node {
        // SAFETY: every non-null pointer reachable from head points to a node
        // allocated by `Node::new` that lives until `self` is dropped.
        unsafe { &*p }
    }

    /// First node with key >= `key`; fills `prev` with the predecessors.
    fn find_ge(&self, key: &[u8], mut prev: Option<&mut [*mut Node; MAX_HEIGHT]>) -> *mut Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = self.node(x).next(level);
            if !next.is_null()
                && self.cmp.compare_internal(self.node(next).key(), key) == CmpOrdering::Less
            {
                x = next;
            } else {
                if let Some(p) = prev.as_deref_mut() {
                    p[level] = x;
                }
                if level == 0 {
                    return next;
                }
                level -= 1;
            }
        }
    }

    /// Last node with key < `key`, or head.
    fn find_lt(&self, key: &[u8]) -> *mut Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = self.node(x).next(level);
            if !next.is_null()
                && self.cmp.compare_internal(self.node(next).key(), key) == CmpOrdering::Less
            {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    fn find_last(&self) -> *mut Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = self.node(x).next(level);
            if !next.is_null() {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    /// Inserts an entry whose first `key_len` bytes are a unique internal key.
    pub(crate) fn insert(&self, data: Box<[u8]>, key_len: u32) {
        let _w = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut prev = [ptr::null_mut(); MAX_HEIGHT];
        let key = &data[..key_len as usize];
        self.find_ge(key, Some(&mut prev));
        let height = self.random_height();
        let max = self.max_height.load(Ordering::Relaxed);
        if height > max {
            for p in prev.iter_mut().take(height).skip(max) {
                *p = self.head;
            }
            self.max_height.store(height, Ordering::Release);
        }
        let x = Node::new(data, key_len);
        let xn = self.node(x);
        for (level, p) in prev.iter().enumerate().take(height) {
            let pn = self.node(*p);
            xn.next[level].store(pn.next(level), Ordering::Relaxed);
            pn.next[level].store(x, Ordering::Release);
        }
    }

    pub(crate) fn head(&self) -> *mut Node {
        self.head
    }
}

impl Drop for SkipList {
    fn drop(&mut self) {
        let mut p = self.head;
        while !p.is_null() {
            // SAFETY: we own the list exclusively; each node was created by
            // Box::into_raw and is freed exactly once, following level 0.
            let b = unsafe { Box::from_raw(p) };
            p = b.next[0].load(Ordering::Relaxed);
        }
    }
}

/// A cursor over a skiplist. The caller keeps the list alive (the memtable
/// iterator holds an `Arc` of the memtable that owns it).
pub(crate) struct ListCursor {
    node: *mut Node,
}

// SAFETY: the cursor only reads immutable node data and atomics.
unsafe impl Send for ListCursor {}

impl ListCursor {
    pub(crate) fn new() -> ListCursor {
        ListCursor {
            node: ptr::null_mut(),
        }
    }
    pub(crate) fn valid(&self) -> bool {
        !self.node.is_null()
    }
    pub(crate) fn node<'a>(&self, list: &'a SkipList) -> &'a Node {
        list.node(self.node)
    }
    pub(crate) fn seek(&mut self, list: &SkipList, key: &[u8]) {
        self.node = list.find_ge(key, None);
    }
    pub(crate) fn seek_to_first(&mut self, list: &SkipList) {
        self.node = list.node(list.head()).next(0);
    }
    pub(crate) fn seek_to_last(&mut self, list: &SkipList) {
        let n = list.find_last();
        self.node = if n == list.head() { ptr::null_mut() } else { n };
    }
    pub(crate) fn next(&mut self, list: &SkipList) {
        self.node = list.node(self.node).next(0);
    }
    pub(crate) fn prev(&mut self, list: &SkipList) {
        let key = list.node(self.node).key();
        let n = list.find_lt(key);
        self.node = if n == list.head() { ptr::null_mut() } else { n };
    }
}
