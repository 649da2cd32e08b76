//! A concurrent skiplist in an arena (LevelDB's design): one writer at a
//! time (inserts are serialized by an internal mutex), any number of
//! lock-free readers. Nodes are never removed or freed while the list lives,
//! so a reader may hold a node pointer for as long as it holds the list.
//!
//! Each node is one arena allocation, 8-byte aligned:
//! ```text
//! key_len_and_height: u32 (key length in the low 28 bits, height in the
//!                     top 4) | value_len: u32
//! next: AtomicPtr * height | internal key | value
//! ```
//! so an entry costs 8 + 8 x height (1.33 on average) bytes over its key
//! and value, and memtable memory is the arena's size. Keys are limited to
//! 2^28 - 1 bytes (the write path refuses longer ones).
//!
//! This file is the only `unsafe` code in the workspace.
#![allow(unsafe_code)]

use crate::key::Comparator;
use std::cmp::Ordering as CmpOrdering;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

const MAX_HEIGHT: usize = 12;
const HEADER: usize = 8;
/// Longest internal key a node can hold.
pub(crate) const MAX_KEY_LEN: usize = (1 << 28) - 1;
const CHUNK: usize = 1 << 20;

/// Bump allocator over 8-byte aligned chunks that never move or shrink.
struct Arena {
    chunks: Vec<Box<[u64]>>,
    ptr: *mut u8,
    left: usize,
}

impl Arena {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let size = (size + 7) & !7;
        if size > self.left {
            let words = size.max(CHUNK) / 8;
            let mut chunk = vec![0u64; words].into_boxed_slice();
            self.ptr = chunk.as_mut_ptr() as *mut u8;
            self.left = words * 8;
            self.chunks.push(chunk);
        }
        let p = self.ptr;
        // SAFETY: `size <= self.left`, so the result stays inside the chunk.
        self.ptr = unsafe { self.ptr.add(size) };
        self.left -= size;
        p
    }
}

/// A node: a pointer to its arena bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Node(*mut u8);

impl Node {
    fn is_null(self) -> bool {
        self.0.is_null()
    }
    #[inline]
    fn u32_at(self, off: usize) -> u32 {
        // SAFETY: the node header was fully written before the node was
        // published; the pointer is 8-aligned and inside its chunk.
        unsafe { (self.0.add(off) as *const u32).read() }
    }
    #[inline]
    fn height(self) -> usize {
        (self.u32_at(0) >> 28) as usize
    }
    #[inline]
    fn key_len(self) -> usize {
        (self.u32_at(0) & MAX_KEY_LEN as u32) as usize
    }
    #[inline]
    fn next_slot(self, level: usize) -> &'static AtomicPtr<u8> {
        debug_assert!(level < self.height());
        // SAFETY: slot `level` < height lies inside the node, is 8-aligned and
        // was initialized; the arena outlives every use (see module comment),
        // so the 'static lifetime never outlives the list in practice.
        unsafe { &*(self.0.add(HEADER + 8 * level) as *const AtomicPtr<u8>) }
    }
    #[inline]
    fn next(self, level: usize) -> Node {
        Node(self.next_slot(level).load(Ordering::Acquire))
    }
    #[inline]
    pub(crate) fn key<'a>(self) -> &'a [u8] {
        let off = HEADER + 8 * self.height();
        // SAFETY: key bytes were written before publication and never change.
        unsafe { std::slice::from_raw_parts(self.0.add(off), self.key_len()) }
    }
    #[inline]
    pub(crate) fn value<'a>(self) -> &'a [u8] {
        let off = HEADER + 8 * self.height() + self.key_len();
        // SAFETY: as for `key`.
        unsafe { std::slice::from_raw_parts(self.0.add(off), self.u32_at(4) as usize) }
    }
}

/// The skiplist of internal-key entries.
pub(crate) struct SkipList {
    head: Node,
    max_height: AtomicUsize,
    cmp: Comparator,
    rng: AtomicU64,
    arena: Mutex<Arena>,
    memory: AtomicUsize,
}

// SAFETY: nodes are only mutated through atomics before/at publication;
// inserts are serialized by the arena mutex; the arena lives until the list
// is dropped, which requires exclusive ownership.
unsafe impl Send for SkipList {}
// SAFETY: see above.
unsafe impl Sync for SkipList {}

fn new_node(arena: &mut Arena, height: usize, key: &[u8], value: &[u8]) -> Node {
    let size = HEADER + 8 * height + key.len() + value.len();
    let p = arena.alloc(size);
    // SAFETY: `p` points to `size` fresh, 8-aligned, zeroed bytes owned by the
    // arena; nothing else references them until the node is published.
    unsafe {
        (p as *mut u32).write((key.len() & MAX_KEY_LEN) as u32 | (height as u32) << 28);
        (p.add(4) as *mut u32).write(value.len() as u32);
        for l in 0..height {
            (p.add(HEADER + 8 * l) as *mut *mut u8).write(ptr::null_mut());
        }
        let kp = p.add(HEADER + 8 * height);
        ptr::copy_nonoverlapping(key.as_ptr(), kp, key.len());
        ptr::copy_nonoverlapping(value.as_ptr(), kp.add(key.len()), value.len());
    }
    Node(p)
}

impl SkipList {
    pub(crate) fn new(cmp: Comparator) -> SkipList {
        let mut arena = Arena {
            chunks: Vec::new(),
            ptr: ptr::null_mut(),
            left: 0,
        };
        let head = new_node(&mut arena, MAX_HEIGHT, &[], &[]);
        SkipList {
            head,
            max_height: AtomicUsize::new(1),
            cmp,
            rng: AtomicU64::new(0x2545_f491_4f6c_dd1d),
            arena: Mutex::new(arena),
            memory: AtomicUsize::new(0),
        }
    }

    /// Bytes allocated for entries.
    pub(crate) fn memory(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }

    fn random_height(&self) -> usize {
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
    fn less(&self, n: Node, key: &[u8]) -> bool {
        !n.is_null() && self.cmp.compare_internal(n.key(), key) == CmpOrdering::Less
    }

    /// First node with key >= `key`; fills `prev` with the predecessors.
    fn find_ge(&self, key: &[u8], mut prev: Option<&mut [Node; MAX_HEIGHT]>) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = x.next(level);
            if self.less(next, key) {
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
    fn find_lt(&self, key: &[u8]) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = x.next(level);
            if self.less(next, key) {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    fn find_last(&self) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Acquire) - 1;
        loop {
            let next = x.next(level);
            if !next.is_null() {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    /// Inserts an entry (a unique internal key and its value).
    pub(crate) fn insert(&self, key: &[u8], value: &[u8]) {
        let mut arena = self.arena.lock().unwrap_or_else(|p| p.into_inner());
        let mut prev = [self.head; MAX_HEIGHT];
        self.find_ge(key, Some(&mut prev));
        let height = self.random_height();
        let max = self.max_height.load(Ordering::Relaxed);
        if height > max {
            for p in prev.iter_mut().take(height).skip(max) {
                *p = self.head;
            }
            self.max_height.store(height, Ordering::Release);
        }
        let x = new_node(&mut arena, height, key, value);
        self.memory.fetch_add(
            HEADER + 8 * height + key.len() + value.len(),
            Ordering::Relaxed,
        );
        for (level, p) in prev.iter().enumerate().take(height) {
            x.next_slot(level).store(p.next(level).0, Ordering::Relaxed);
            p.next_slot(level).store(x.0, Ordering::Release);
        }
    }
}

/// A cursor over a skiplist. The caller keeps the list alive (the memtable
/// iterator holds an `Arc` of the memtable that owns it).
pub(crate) struct ListCursor {
    node: Node,
}

// SAFETY: the cursor only reads immutable node bytes and atomics.
unsafe impl Send for ListCursor {}

impl ListCursor {
    pub(crate) fn new() -> ListCursor {
        ListCursor {
            node: Node(ptr::null_mut()),
        }
    }
    pub(crate) fn valid(&self) -> bool {
        !self.node.is_null()
    }
    pub(crate) fn node<'a>(&self, _list: &'a SkipList) -> Node {
        self.node
    }
    pub(crate) fn seek(&mut self, list: &SkipList, key: &[u8]) {
        self.node = list.find_ge(key, None);
    }
    pub(crate) fn seek_to_first(&mut self, list: &SkipList) {
        self.node = list.head.next(0);
    }
    pub(crate) fn seek_to_last(&mut self, list: &SkipList) {
        let n = list.find_last();
        self.node = if n == list.head {
            Node(ptr::null_mut())
        } else {
            n
        };
    }
    pub(crate) fn next(&mut self, _list: &SkipList) {
        self.node = self.node.next(0);
    }
    pub(crate) fn prev(&mut self, list: &SkipList) {
        let n = list.find_lt(self.node.key());
        self.node = if n == list.head {
            Node(ptr::null_mut())
        } else {
            n
        };
    }
}
