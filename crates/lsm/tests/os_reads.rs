//! Reads of table files through the operating system's file system (`OsFs`):
//! exact bytes at any offset, errors past the end, and no zero-filled buffer
//! per read (a counting global allocator in this test binary sees each
//! read's allocation: `alloc`, not `alloc_zeroed`).
mod common;

use common::temp_dir;
use lsm::vfs::{Fs, OsFs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Bytes this thread allocated zeroed (`alloc_zeroed`) since the test began.
    static ZEROED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let _ = ZEROED.try_with(|z| z.set(z.get() + l.size()));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn reads_exact_bytes_without_zero_filling() {
    let dir = temp_dir("os_reads");
    let path = dir.join("f");
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    {
        let mut w = OsFs.create(&path).unwrap();
        w.append(&data).unwrap();
        w.sync().unwrap();
    }
    let f = OsFs.open(&path).unwrap();
    assert_eq!(f.size(), data.len() as u64);
    let before = ZEROED.with(|z| z.get());
    for (off, len) in [
        (0usize, 16_384usize),
        (12_345, 262_144),
        (299_000, 1_000),
        (7, 0),
    ] {
        let got = f.read_at(off as u64, len).unwrap();
        assert_eq!(got, data[off..off + len], "read at {off}+{len}");
    }
    let zeroed = ZEROED.with(|z| z.get()) - before;
    assert_eq!(zeroed, 0, "reads allocated {zeroed} zero-filled bytes");
    // Past the end: an error, not a short or padded buffer.
    assert!(f.read_at(299_999, 2).is_err());
    assert!(f.read_at(400_000, 1).is_err());
    assert!(f.read_at(u64::MAX - 1, 1).is_err());
}
