//! `prepopulate_block_cache = kFlushOnly`: a flush puts the data blocks it
//! writes into the block cache, so the first read of a flushed key is a
//! cache hit (no block read, no decompression); off, it is a miss. The
//! cache stays within its capacity, compaction outputs are not inserted,
//! and the values read from cached blocks are the ones written, also after
//! reopening (a fresh cache, blocks read from the files).
#![allow(clippy::unwrap_used)]
mod common;

use common::{seed, Rng};
use lsm::{CfOptions, Compression, Db, Options, PrepopulateBlockCache, DEFAULT_CF};
use testkit::TempDir;

fn opts(p: PrepopulateBlockCache, cache: usize) -> Options {
    Options {
        block_cache_size: cache,
        default_cf: CfOptions {
            compression_per_level: vec![Compression::Zstd],
            prepopulate_block_cache: p,
            ..CfOptions::default()
        },
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// A value of 100..300 bytes, half random (so blocks differ), half text.
fn value(rng: &mut Rng, i: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    let n = 50 + rng.below(100) as usize;
    v.extend((0..n).map(|_| b'a' + rng.below(26) as u8));
    v.extend(std::iter::repeat_n(b'x', n));
    v
}

/// Writes `n` keys, flushes, and returns the values written.
fn fill(db: &Db, n: u32, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    let vals: Vec<Vec<u8>> = (0..n).map(|i| value(&mut rng, i)).collect();
    for (i, v) in vals.iter().enumerate() {
        db.put(&key(i as u32), v).unwrap();
    }
    db.flush().unwrap();
    vals
}

/// (hits, misses) of the block cache while `f` runs.
fn hits_misses(db: &Db, f: impl FnOnce()) -> (u64, u64) {
    let a = db.stats();
    f();
    let b = db.stats();
    (
        b.block_cache_hits - a.block_cache_hits,
        b.block_cache_misses - a.block_cache_misses,
    )
}

#[test]
fn a_flushed_key_is_a_cache_hit_with_flush_only_and_a_miss_without() {
    let s = seed("prepopulate");
    for (p, want) in [
        (PrepopulateBlockCache::FlushOnly, (1, 0)),
        (PrepopulateBlockCache::Disable, (0, 1)),
    ] {
        let dir = TempDir::new("prepop-get");
        let db = Db::open(dir.path(), opts(p, 64 << 20)).unwrap();
        let vals = fill(&db, 2000, s);
        assert_eq!(db.level_summary(DEFAULT_CF)[0].0, 1, "one L0 table");
        let got = hits_misses(&db, || {
            assert_eq!(db.get(&key(1234)).unwrap().as_ref(), Some(&vals[1234]));
        });
        assert_eq!(got, want, "{p:?}: (hits, misses) of the first read");
        // Every value reads back right, from the cache (on) or the file.
        let (hits, misses) = hits_misses(&db, || {
            for (i, v) in vals.iter().enumerate() {
                assert_eq!(db.get(&key(i as u32)).unwrap().as_ref(), Some(v), "key {i}");
            }
        });
        if p == PrepopulateBlockCache::FlushOnly {
            assert_eq!(misses, 0, "every block of the flush is cached");
            assert!(hits >= 2000);
        } else {
            assert!(misses > 0);
        }
        drop(db);
        // Reopened: a fresh cache, the blocks come from the file.
        let db = Db::open(dir.path(), opts(p, 64 << 20)).unwrap();
        let (_, misses) = hits_misses(&db, || {
            for (i, v) in vals.iter().enumerate() {
                assert_eq!(db.get(&key(i as u32)).unwrap().as_ref(), Some(v), "key {i}");
            }
        });
        assert!(misses > 0, "{p:?}: a reopened database starts cold");
    }
}

#[test]
fn compaction_outputs_are_not_inserted() {
    let dir = TempDir::new("prepop-compact");
    let db = Db::open(dir.path(), opts(PrepopulateBlockCache::FlushOnly, 64 << 20)).unwrap();
    let vals = fill(&db, 2000, seed("prepopulate"));
    db.compact_range(DEFAULT_CF, None, None).unwrap();
    assert_eq!(db.level_summary(DEFAULT_CF)[0].0, 0, "L0 compacted away");
    let got = hits_misses(&db, || {
        assert_eq!(db.get(&key(7)).unwrap().as_ref(), Some(&vals[7]));
    });
    assert_eq!(got, (0, 1), "a compaction output's block is read on demand");
}

#[test]
fn flushes_larger_than_the_cache_stay_within_its_capacity() {
    // 256 KiB of cache, about 2 MB of blocks per flush.
    let cap = 256 << 10;
    let dir = TempDir::new("prepop-cap");
    let db = Db::open(dir.path(), opts(PrepopulateBlockCache::FlushOnly, cap)).unwrap();
    let s = seed("prepopulate");
    let vals = fill(&db, 10_000, s);
    assert!(
        db.block_cache_usage() <= cap as u64,
        "usage {} over capacity {cap}",
        db.block_cache_usage()
    );
    // The last blocks written are the ones kept.
    let got = hits_misses(&db, || {
        assert_eq!(db.get(&key(9_999)).unwrap().as_ref(), Some(&vals[9_999]));
    });
    assert_eq!(got, (1, 0));
    let got = hits_misses(&db, || {
        assert_eq!(db.get(&key(0)).unwrap().as_ref(), Some(&vals[0]));
    });
    assert_eq!(got, (0, 1), "the first blocks were evicted");
}
