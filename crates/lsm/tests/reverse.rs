//! Column families ordered by the reverse bytewise comparator (MyRocks'
//! `rev:` families) on real files: the order is persisted in the manifest
//! and checked on reopen, and iterators with bounds, seek/seek_for_prev,
//! prefix mode, bloom filters, delete-range (with file reclaim),
//! compaction and ingestion all work in that order.
mod common;

use common::temp_dir;
use lsm::db::SstFileWriter;
use lsm::vfs::OsFs;
use lsm::{CfOptions, ColumnFamily, Comparator, Db, Options, ReadOptions};

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

fn rev_opts() -> CfOptions {
    CfOptions {
        comparator: Comparator::ReverseBytewise,
        write_buffer_size: 16 << 10,
        target_file_size: 8 << 10,
        ..CfOptions::default()
    }
}

/// Every key of `cf` through a bounded iterator, forward or backward.
fn keys(
    db: &Db,
    cf: ColumnFamily,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
    back: bool,
) -> Vec<Vec<u8>> {
    let mut it = db
        .iter_cf(
            ReadOptions {
                lower_bound: lo.map(<[u8]>::to_vec),
                upper_bound: hi.map(<[u8]>::to_vec),
                ..Default::default()
            },
            cf,
        )
        .unwrap();
    let mut out = Vec::new();
    if back {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        out.push(it.key().to_vec());
        if back {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    out
}

#[test]
fn order_is_persisted_and_checked_on_reopen() {
    let dir = temp_dir("rev-reopen");
    {
        let db = Db::open(&dir, Options::default()).unwrap();
        let cf = db
            .ensure_cf_ordered("rev:a", Comparator::ReverseBytewise)
            .unwrap();
        assert_eq!(db.cf_comparator(cf), Some(Comparator::ReverseBytewise));
        // The same name asked for in the other order is refused.
        let e = db
            .ensure_cf_ordered("rev:a", Comparator::Bytewise)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("orders keys by strata.ReverseBytewise"),
            "{e}"
        );
        // A plain family of another name is its own family.
        let plain = db.ensure_cf("a").unwrap();
        assert_ne!(plain, cf);
        assert_eq!(db.cf_comparator(plain), Some(Comparator::Bytewise));
        for i in 0..10 {
            db.put_cf(cf, &k(i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    // Reopened without naming it: the manifest's order is used.
    {
        let db = Db::open(&dir, Options::default()).unwrap();
        let cf = db.cf("rev:a").unwrap();
        assert_eq!(db.cf_comparator(cf), Some(Comparator::ReverseBytewise));
        assert_eq!(
            db.ensure_cf_ordered("rev:a", Comparator::ReverseBytewise)
                .unwrap(),
            cf
        );
        let got = keys(&db, cf, None, None, false);
        assert_eq!(got, (0..10).rev().map(k).collect::<Vec<_>>());
    }
    // Reopened naming it with the other comparator: a clear error.
    let Err(e) = Db::open_cf(&dir, Options::default(), &[("rev:a", CfOptions::default())]) else {
        panic!("opened a reverse family as a byte-wise one");
    };
    let msg = e.to_string();
    assert!(
        msg.contains("rev:a")
            && msg.contains("strata.ReverseBytewise")
            && msg.contains("strata.Bytewise"),
        "{msg}"
    );
}

#[test]
fn bounds_seeks_prefixes_and_blooms() {
    let dir = temp_dir("rev-iter");
    let prefixed = CfOptions {
        prefix_len: Some(5),
        bloom_bits_per_key: 10,
        ..rev_opts()
    };
    let db = Db::open_cf(&dir, Options::default(), &[("r", prefixed)]).unwrap();
    let cf = db.cf("r").unwrap();
    for i in 0..2000 {
        db.put_cf(cf, &k(i), format!("{i}").as_bytes()).unwrap();
        if i % 700 == 0 {
            db.flush().unwrap();
        }
    }
    db.compact_range(cf, None, None).unwrap();
    for i in (0..2000).step_by(3) {
        db.put_cf(cf, &k(i), b"new").unwrap();
    }
    // Bounds are in comparator order: lower is the byte-wise larger key.
    let (lo, hi) = (k(1500), k(1200));
    let fwd = keys(&db, cf, Some(&lo), Some(&hi), false);
    assert_eq!(fwd, (1201..=1500).rev().map(k).collect::<Vec<_>>());
    let back = keys(&db, cf, Some(&lo), Some(&hi), true);
    assert_eq!(back, (1201..=1500).map(k).collect::<Vec<_>>());
    // seek: the first key not before the target in comparator order, i.e.
    // the largest key <= target; seek_for_prev the smallest key >= target.
    let mut it = db.iter_cf(ReadOptions::default(), cf).unwrap();
    it.seek(b"k000500x");
    assert_eq!(it.key(), &k(500)[..]);
    it.next();
    assert_eq!(it.key(), &k(499)[..]);
    it.seek_for_prev(b"k000500x");
    assert_eq!(it.key(), &k(501)[..]);
    it.prev();
    assert_eq!(it.key(), &k(502)[..]);
    it.seek(b"k");
    assert!(!it.valid());
    it.seek_for_prev(b"k");
    assert_eq!(it.key(), &k(0)[..]);
    // Prefix mode stays inside the seek key's prefix ("k0001": 100 to 199,
    // from the largest down).
    let mut it = db
        .iter_cf(
            ReadOptions {
                prefix_same_as_start: true,
                ..Default::default()
            },
            cf,
        )
        .unwrap();
    it.seek(b"k0001\xff");
    let mut n = 0;
    let mut last = Vec::new();
    while it.valid() {
        assert!(it.key().starts_with(b"k0001"));
        last = it.key().to_vec();
        n += 1;
        it.next();
    }
    assert_eq!((n, last), (100, k(100)));
    // Point reads through the blooms: present and absent keys.
    let ro = ReadOptions::default();
    assert_eq!(
        db.get_cf(&ro, cf, &k(3)).unwrap().as_deref(),
        Some(&b"new"[..])
    );
    assert_eq!(
        db.get_cf(&ro, cf, &k(4)).unwrap().as_deref(),
        Some(&b"4"[..])
    );
    assert_eq!(db.get_cf(&ro, cf, b"k0001x").unwrap(), None);
    assert_eq!(db.get_cf(&ro, cf, &k(5000)).unwrap(), None);
}

#[test]
fn delete_range_compaction_and_reclaim() {
    let dir = temp_dir("rev-delrange");
    let db = Db::open_cf(&dir, Options::default(), &[("r", rev_opts())]).unwrap();
    let cf = db.cf("r").unwrap();
    for i in 0..3000 {
        db.put_cf(cf, &k(i), &[b'x'; 40]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(cf, None, None).unwrap();
    let files_before = db.live_table_bytes();
    // [start, end) in comparator order: start is the byte-wise larger key,
    // so this deletes the keys k(500) < key <= k(2500).
    db.delete_range(cf, &k(2500), &k(500)).unwrap();
    let left = keys(&db, cf, None, None, false);
    let want: Vec<_> = (2501..3000).rev().chain((0..=500).rev()).map(k).collect();
    assert_eq!(left, want);
    assert_eq!(
        keys(&db, cf, None, None, true),
        want.iter().rev().cloned().collect::<Vec<_>>()
    );
    // Compaction keeps the answer and drops the deleted data.
    db.compact_range(cf, Some(&k(2999)), Some(&k(0))).unwrap();
    assert_eq!(keys(&db, cf, None, None, false), want);
    assert!(
        db.live_table_bytes() < files_before,
        "compaction dropped the range"
    );
    // Reclaim of a whole range removes its files.
    db.delete_range(cf, &k(9999), b"k").unwrap();
    db.reclaim_range(cf, &k(9999), b"k");
    db.compact_range(cf, None, None).unwrap();
    assert!(keys(&db, cf, None, None, false).is_empty());
    // The default family (bytewise) was not touched by any of it.
    assert!(keys(&db, lsm::DEFAULT_CF, None, None, false).is_empty());
}

#[test]
fn ingestion_needs_the_families_order() {
    let dir = temp_dir("rev-ingest");
    let db = Db::open_cf(&dir, Options::default(), &[("r", rev_opts())]).unwrap();
    let cf = db.cf("r").unwrap();
    let fs = OsFs;
    // A writer for the reverse family refuses byte-wise increasing keys.
    let p = dir.join("bad.sst");
    let mut w = SstFileWriter::create(&fs, &p, &rev_opts()).unwrap();
    w.put(&k(1), b"v").unwrap();
    assert!(w.put(&k(2), b"v").is_err());
    // A file written in byte-wise order cannot go into the reverse family.
    let p = dir.join("bytewise.sst");
    let mut w = SstFileWriter::create(&fs, &p, &CfOptions::default()).unwrap();
    for i in 0..10 {
        w.put(&k(i), b"v").unwrap();
    }
    w.finish().unwrap();
    let e = db.ingest(cf, &[&p]).unwrap_err();
    assert!(e.to_string().contains("not strictly increasing"), "{e}");
    // Existing data in the middle; two files, one overlapping it.
    for i in 100..110 {
        db.put_cf(cf, &k(i), b"old").unwrap();
    }
    let write = |name: &str, range: std::ops::Range<u32>| {
        let p = dir.join(name);
        let mut w = SstFileWriter::create(&fs, &p, &rev_opts()).unwrap();
        for i in range.rev() {
            w.put(&k(i), b"ingested").unwrap();
        }
        w.finish().unwrap();
        p
    };
    let a = write("a.sst", 0..50);
    let b = write("b.sst", 105..200);
    db.ingest(cf, &[&a, &b]).unwrap();
    let got = keys(&db, cf, None, None, false);
    let want: Vec<_> = (105..200)
        .rev()
        .chain((100..105).rev())
        .chain((0..50).rev())
        .map(k)
        .collect();
    assert_eq!(got, want);
    let ro = ReadOptions::default();
    assert_eq!(
        db.get_cf(&ro, cf, &k(107)).unwrap().as_deref(),
        Some(&b"ingested"[..])
    );
    assert_eq!(
        db.get_cf(&ro, cf, &k(102)).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    db.compact_range(cf, None, None).unwrap();
    assert_eq!(keys(&db, cf, None, None, false), want);
    // A bulk writer into the family takes keys in its order.
    let mut bw = db.bulk_writer(cf).unwrap();
    for i in (300..400).rev() {
        bw.put(&k(i), b"bulk").unwrap();
    }
    assert!(bw.put(&k(400), b"bulk").is_err());
    bw.ingest().unwrap();
    assert_eq!(
        keys(&db, cf, None, Some(&k(299)), false),
        (300..400).rev().map(k).collect::<Vec<_>>()
    );
}
