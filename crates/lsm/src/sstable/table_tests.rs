//! Tests of the table reader (table.rs).
use super::*;
use crate::key::{internal_key, ValueKind};
use crate::sstable::{Compression, TableBuilder, TableOptions};
use crate::vfs::{Fs, MemFs};
use std::path::Path;
use std::sync::atomic::AtomicUsize;

/// Counts positional reads.
struct Counting(Arc<dyn RandomAccessFile>, Arc<AtomicUsize>);
impl RandomAccessFile for Counting {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.read_at(offset, len)
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
}

/// Writes `key{i:08}` => `value-{i}` for i in 0..n, 1 KiB blocks, a filter.
fn write_table(fs: &MemFs, p: &Path, n: u64) {
    let opts = TableOptions {
        cmp: Comparator::Bytewise,
        block_size: 1024,
        restart_interval: 16,
        bloom_bits: 10,
        prefix_len: None,
        compression: Compression::None,
    };
    let mut b = TableBuilder::new(fs.create(p).unwrap(), opts);
    for i in 0..n {
        let k = internal_key(format!("key{i:08}").as_bytes(), 1, ValueKind::Value);
        b.add(&k, format!("value-{i}").as_bytes()).unwrap();
    }
    b.finish().unwrap();
}

#[test]
fn cached_scans_read_ahead_after_two_sequential_misses() {
    let (fs, p) = (MemFs::new(), Path::new("/t.sst"));
    let n = 20_000u64;
    write_table(&fs, p, n);
    let reads = Arc::new(AtomicUsize::new(0));
    let file = Arc::new(Counting(fs.open(p).unwrap(), reads.clone()));
    let cache = Arc::new(BlockCache::new(64 << 20));
    let t = Arc::new(
        Table::open(
            file,
            "t.sst",
            Comparator::Bytewise,
            Some(cache),
            Arc::default(),
            None,
            true,
        )
        .unwrap(),
    );
    let blocks = (t.file.size() / 1024) as usize;
    for fill in [true, false] {
        for reverse in [false, true] {
            let before = reads.load(Ordering::SeqCst);
            let mut it = t.iter(fill);
            let mut seen = 0u64;
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            while it.valid() {
                let i = if reverse { n - 1 - seen } else { seen };
                assert_eq!(
                    it.key(),
                    internal_key(format!("key{i:08}").as_bytes(), 1, ValueKind::Value)
                );
                assert_eq!(it.value(), format!("value-{i}").as_bytes());
                seen += 1;
                if reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            it.status().unwrap();
            assert_eq!(seen, n);
            let r = reads.load(Ordering::SeqCst) - before;
            if fill && !reverse {
                // The first scan misses every block: 2 single reads, then
                // windows of 64 KiB and more.
                assert!(r < blocks / 10, "{r} reads for {blocks} blocks");
            } else if fill {
                assert_eq!(r, 0, "all blocks are cached now");
            }
        }
    }
}

#[test]
fn properties_hold_the_key_range_and_format_1_tables_still_open() {
    let fs = MemFs::new();
    let p = Path::new("/k.sst");
    let opts = TableOptions {
        cmp: Comparator::Bytewise,
        block_size: 256,
        restart_interval: 4,
        bloom_bits: 10,
        prefix_len: None,
        compression: Compression::Lz4,
    };
    let mut b = TableBuilder::new(fs.create(p).unwrap(), opts);
    for i in 10..500u64 {
        let k = internal_key(format!("k{i:05}").as_bytes(), i, ValueKind::Value);
        b.add(&k, b"v").unwrap();
    }
    b.add_range_tombstone(RangeTombstone {
        start: b"k00002".to_vec(),
        end: b"k00005".to_vec(),
        seq: 7,
    });
    let info = b.finish().unwrap();
    let open = || {
        Table::open(
            fs.open(p).unwrap(),
            "k.sst",
            Comparator::Bytewise,
            None,
            Arc::default(),
            None,
            true,
        )
    };
    let t = open().unwrap();
    let props = t.properties();
    assert_eq!(props.smallest_key, info.smallest);
    assert_eq!(props.largest_key, info.largest);
    // The range tombstone starts below the first point key.
    assert_eq!(key::user_key(&props.smallest_key), b"k00002");
    assert_eq!(key::user_key(&props.largest_key), b"k00499");
    let mut enc = props.encode();
    assert_eq!(&TableProperties::decode(&enc).unwrap(), props);
    // Truncated inside the key range entry: corruption, not a short key.
    enc.truncate(enc.len() - 3);
    assert!(TableProperties::decode(&enc).is_err());
    // A format-1 properties block (numbers only) decodes with an empty range.
    let mut old = props.clone();
    old.smallest_key.clear();
    old.largest_key.clear();
    old.compression = None;
    let mut v1 = Vec::new();
    for (n, x) in old.pairs() {
        crate::coding::put_length_prefixed(&mut v1, n.as_bytes());
        crate::coding::put_varint64(&mut v1, x);
    }
    assert_eq!(TableProperties::decode(&v1).unwrap(), old);
}

/// Records the offset of each positional read and takes 30 ms over it, so
/// that readers missing together overlap.
struct Slow(Arc<dyn RandomAccessFile>, Arc<std::sync::Mutex<Vec<u64>>>);
impl RandomAccessFile for Slow {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.1.lock().unwrap().push(offset);
        std::thread::sleep(std::time::Duration::from_millis(30));
        self.0.read_at(offset, len)
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
}

#[test]
fn readers_missing_an_evicted_index_or_filter_read_it_once() {
    let (fs, p) = (MemFs::new(), Path::new("/t.sst"));
    write_table(&fs, p, 20_000);
    let reads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let file = Arc::new(Slow(fs.open(p).unwrap(), reads.clone()));
    let cache = Arc::new(BlockCache::new(64 << 20));
    // Not pinned: the index and filter live in the cache.
    let t = Arc::new(
        Table::open_cached(
            file,
            "t.sst",
            Comparator::Bytewise,
            Some((cache.clone(), 7)),
            Arc::default(),
            None,
            false,
        )
        .unwrap(),
    );
    let (ih, fh) = (t.index_handle, t.filter_handle.unwrap());
    // Evicted (as a full cache would): the next readers read them again.
    assert!(cache.remove(&(7, ih.offset)).is_some());
    assert!(cache.remove(&(7, fh.offset)).is_some());
    reads.lock().unwrap().clear();
    let n = 12;
    let start = Arc::new(std::sync::Barrier::new(n));
    let threads: Vec<_> = (0..n as u64)
        .map(|i| {
            let (t, start) = (t.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let user = format!("key{:08}", i * 1000);
                let k = internal_key(user.as_bytes(), crate::key::MAX_SEQ, ValueKind::Value);
                let h = filter::key_hash(user.as_bytes());
                let got = t.get(&k, user.as_bytes(), h).unwrap();
                let want = format!("value-{}", i * 1000).into_bytes();
                assert_eq!(got.map(|(_, v)| v), Some(want), "{user}");
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let reads = reads.lock().unwrap().clone();
    for (what, off) in [("index", ih.offset), ("filter", fh.offset)] {
        let times = reads.iter().filter(|&&o| o == off).count();
        assert_eq!(times, 1, "the {what} was read {times} times: {reads:?}");
    }
}
