//! A table file ends at `MAX_FILTER_HASHES` keys as well as at its target
//! size (`TableBuilder::full`). A 64 MB file of small keys held some 9
//! million: its builder's key hashes grew to 128 MiB (with the 64 MiB they
//! were copied from), and two compactions doing so together took a TPC-C
//! server past its 600 MB memory limit; its 11 MB filter was read whole on
//! every cache miss.
#![allow(clippy::unwrap_used)]

use lsm::sstable::MAX_FILTER_HASHES;
use lsm::vfs::MemFs;
use lsm::{CfOptions, Db, Options, WriteBatch, WriteOptions, DEFAULT_CF};
use std::path::Path;
use std::sync::Arc;

fn k(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

#[test]
fn compactions_and_bulk_loads_cut_files_at_the_filter_key_cap() {
    let n = (MAX_FILTER_HASHES + MAX_FILTER_HASHES / 4) as u32;
    let db = Db::open(
        Path::new("/db"),
        Options {
            fs: Some(Arc::new(MemFs::new())),
            auto_resume_interval: None,
            default_cf: CfOptions {
                write_buffer_size: 256 << 20,
                ..CfOptions::default()
            },
            ..Options::default()
        },
    )
    .unwrap();
    // Every key once, in one memtable: the flush writes one level-0 file
    // (flushes are not cut), far under the 64 MiB target file size.
    for start in (0..n).step_by(50_000) {
        let mut b = WriteBatch::default();
        for i in start..(start + 50_000).min(n) {
            b.put(&k(i), b"");
        }
        db.write(WriteOptions::default(), b).unwrap();
    }
    db.flush().unwrap();
    let files = |db: &Db| -> (usize, u64) {
        db.level_summary(DEFAULT_CF)
            .iter()
            .fold((0, 0), |(f, b), &(lf, lb)| (f + lf, b + lb))
    };
    let (f, bytes) = files(&db);
    assert_eq!(f, 1, "one flushed file");
    assert!(bytes < 64 << 20, "{bytes} bytes: under the target size");
    db.compact_range(DEFAULT_CF, None, None).unwrap();
    let summary = db.level_summary(DEFAULT_CF);
    let last = summary.last().unwrap();
    assert_eq!(
        last.0, 2,
        "{n} keys compacted to the last level: cut once at {MAX_FILTER_HASHES} ({summary:?})"
    );
    assert_eq!(files(&db).0, 2, "{summary:?}");
    // Every key reads back, across the cut.
    for i in [
        0,
        MAX_FILTER_HASHES as u32 - 1,
        MAX_FILTER_HASHES as u32,
        n - 1,
    ] {
        assert_eq!(db.get(&k(i)).unwrap().as_deref(), Some(&b""[..]), "key {i}");
    }
    assert_eq!(db.get(&k(n)).unwrap(), None);

    // A bulk load of as many keys writes two files as well.
    let mut w = db.bulk_writer(DEFAULT_CF).unwrap();
    for i in n..2 * n {
        w.put(&k(i), b"").unwrap();
    }
    w.ingest().unwrap();
    assert_eq!(files(&db).0, 4, "{:?}", db.level_summary(DEFAULT_CF));
    assert_eq!(db.get(&k(2 * n - 1)).unwrap().as_deref(), Some(&b""[..]));
}
