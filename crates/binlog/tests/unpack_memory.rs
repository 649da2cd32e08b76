//! Unpacking a rows event takes memory for one row change at a time,
//! whatever the event holds: a hostile or corrupt source sending a TABLE_MAP
//! of 4096 columns and a rows event of many 2-byte images (one column
//! present) must not make the replica allocate 4096 datums per input byte.
use binlog::parse::{MapCol, Rows, RowsKind, TableMap};
use binlog::unpack;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting this thread's live bytes and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let v = l.get() + delta;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        note(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn a_wide_table_map_and_a_small_rows_event_take_little_memory() {
    const COLS: usize = 4096;
    const ROWS: usize = 2000;
    let map = TableMap {
        table_id: 1,
        db: "d".into(),
        table: "t".into(),
        columns: vec![
            MapCol {
                ty: 1,
                meta: 0,
                nullable: true,
                local_fsp: None,
            };
            COLS
        ],
        unsupported: None,
    };
    let mut present = vec![false; COLS];
    present[0] = true;
    // Each image: a null bitmap byte, a TINYINT.
    let images: Vec<u8> = (0..ROWS).flat_map(|i| [0u8, i as u8]).collect();
    let ev = Rows {
        kind: RowsKind::Write,
        table_id: 1,
        flags: 1,
        ncols: COLS,
        present,
        present_after: Vec::new(),
        images: &images,
    };
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let mut n = 0;
    for c in unpack::each(&ev, &map).expect("each") {
        let (_, after) = c.expect("change");
        assert!(after.is_some());
        n += 1;
    }
    let peak = PEAK.with(Cell::get) - base;
    assert_eq!(n, ROWS);
    // One image of 4096 datums is about 160 KiB; all of them at once would
    // be 300 MiB.
    assert!(peak < 1 << 20, "unpacking took {peak} bytes at its peak");
}
