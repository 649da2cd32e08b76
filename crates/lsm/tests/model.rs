//! Randomized model test: random puts, deletes, delete-ranges, batches,
//! snapshots, iterators (with random lower/upper bounds), flushes,
//! compactions and reopens, checked against a BTreeMap, under several option
//! sets (small memtables and blocks force many tables and levels). Seeded:
//! rerun a failure with `SEED=...`.
mod common;

use common::{seed, Rng};
use lsm::vfs::MemFs;
use lsm::{
    CfOptions, Comparator, Compression, Db, Options, ReadOptions, WriteBatch, WriteOptions,
    DEFAULT_CF,
};
use std::collections::BTreeMap;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(r: &mut Rng) -> Vec<u8> {
    format!("k{:05}", r.below(5000)).into_bytes()
}

fn option_sets() -> Vec<(&'static str, CfOptions)> {
    let small = CfOptions {
        write_buffer_size: 8 << 10,
        block_size: 256,
        block_restart_interval: 4,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 32 << 10,
        max_bytes_for_level_multiplier: 4,
        level0_compaction_trigger: 2,
        ..CfOptions::default()
    };
    vec![
        ("small-lz4", small.clone()),
        (
            "small-zstd-nobloom-static",
            CfOptions {
                compression_per_level: vec![Compression::None, Compression::Zstd],
                bloom_bits_per_key: 0,
                dynamic_level_bytes: false,
                block_restart_interval: 1,
                ..small.clone()
            },
        ),
        (
            "reverse-comparator",
            CfOptions {
                comparator: Comparator::ReverseBytewise,
                ..small.clone()
            },
        ),
        (
            "default",
            CfOptions {
                write_buffer_size: 64 << 10,
                ..CfOptions::default()
            },
        ),
    ]
}

fn ordered(cmp: Comparator, m: &Model) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    if cmp == Comparator::ReverseBytewise {
        v.reverse();
    }
    v
}

/// Iterator bounds: inclusive lower, exclusive upper (comparator order).
type Bounds = (Option<Vec<u8>>, Option<Vec<u8>>);

/// No bounds half the time; otherwise a random lower and/or upper bound.
fn random_bounds(r: &mut Rng, cmp: Comparator) -> Bounds {
    if r.chance(50) {
        return (None, None);
    }
    let mut lo = r.chance(70).then(|| key(r));
    let mut hi = r.chance(70).then(|| key(r));
    if let (Some(a), Some(b)) = (&lo, &hi) {
        if cmp.compare(a, b) == std::cmp::Ordering::Greater {
            std::mem::swap(&mut lo, &mut hi);
        }
    }
    (lo, hi)
}

fn within(cmp: Comparator, k: &[u8], b: &Bounds) -> bool {
    b.0.as_ref()
        .is_none_or(|l| cmp.compare(k, l) != std::cmp::Ordering::Less)
        && b.1
            .as_ref()
            .is_none_or(|u| cmp.compare(k, u) == std::cmp::Ordering::Less)
}

fn bounded(cmp: Comparator, m: &Model, b: &Bounds) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v = ordered(cmp, m);
    v.retain(|(k, _)| within(cmp, k, b));
    v
}

fn scan(db: &Db, snap: Option<lsm::Snapshot>, reverse: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    scan_bounded(db, snap, reverse, &(None, None))
}

fn scan_bounded(
    db: &Db,
    snap: Option<lsm::Snapshot>,
    reverse: bool,
    b: &Bounds,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db
        .iter(ReadOptions {
            snapshot: snap,
            lower_bound: b.0.clone(),
            upper_bound: b.1.clone(),
            ..Default::default()
        })
        .unwrap();
    let mut out = Vec::new();
    if reverse {
        it.seek_to_last();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        out.reverse();
    } else {
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
    }
    it.status().unwrap();
    out
}

fn in_range(cmp: Comparator, k: &[u8], a: &[u8], b: &[u8]) -> bool {
    cmp.compare(a, k) != std::cmp::Ordering::Greater
        && cmp.compare(k, b) == std::cmp::Ordering::Less
}

fn run(name: &str, cf: CfOptions, seed: u64, steps: usize) {
    let cmp = cf.comparator;
    let fs = MemFs::new();
    let opts = Options {
        fs: Some(Arc::new(fs.clone())),
        default_cf: cf,
        block_cache_size: 64 << 10,
        ..Options::default()
    };
    let dir = std::path::PathBuf::from("/db");
    let mut db = Db::open(&dir, opts.clone()).unwrap();
    let mut r = Rng::new(seed);
    let mut model = Model::new();
    let mut snaps: Vec<(lsm::Snapshot, Model)> = Vec::new();
    let wo = WriteOptions {
        sync: r.chance(50),
        disable_wal: false,
    };
    let (mut flushes, mut compactions, mut deepest) = (0, 0, 0);
    // Puts since the key was last deleted: SingleDelete is only valid at 1.
    let mut puts: std::collections::HashMap<Vec<u8>, u32> = Default::default();
    for step in 0..steps {
        let ctx = format!("{name} seed={seed} step={step}");
        match r.below(100) {
            0..=39 => {
                let k = key(&mut r);
                let len = r.below(200) as usize;
                let v: Vec<u8> = format!("v{step}-")
                    .bytes()
                    .chain((0..len).map(|_| b'a' + r.below(26) as u8))
                    .collect();
                db.put(&k, &v).unwrap();
                *puts.entry(k.clone()).or_default() += 1;
                model.insert(k, v);
            }
            40..=46 => {
                let k = key(&mut r);
                db.delete(&k).unwrap();
                puts.remove(&k);
                model.remove(&k);
            }
            47..=49 => {
                // SingleDelete a key that was put exactly once.
                let k = key(&mut r);
                if puts.get(&k) == Some(&1) {
                    let mut b = WriteBatch::new();
                    b.single_delete_cf(0, &k);
                    db.write(wo, b).unwrap();
                    puts.remove(&k);
                    model.remove(&k);
                }
            }
            50..=52 => {
                let n = r.below(5000);
                let (mut a, mut b) = (
                    format!("k{n:05}").into_bytes(),
                    format!("k{:05}", n + 1 + r.below(30)).into_bytes(),
                );
                if cmp.compare(&a, &b) == std::cmp::Ordering::Greater {
                    std::mem::swap(&mut a, &mut b);
                }
                db.delete_range(DEFAULT_CF, &a, &b).unwrap();
                model.retain(|k, _| !in_range(cmp, k, &a, &b));
                puts.retain(|k, _| !in_range(cmp, k, &a, &b));
            }
            53..=62 => {
                let mut b = WriteBatch::new();
                for i in 0..r.below(10) {
                    let k = key(&mut r);
                    if r.chance(70) {
                        let v = format!("b{step}.{i}").into_bytes();
                        b.put(&k, &v);
                        *puts.entry(k.clone()).or_default() += 1;
                        model.insert(k, v);
                    } else {
                        b.delete(&k);
                        puts.remove(&k);
                        model.remove(&k);
                    }
                }
                db.write(wo, b).unwrap();
            }
            63..=77 => {
                let k = key(&mut r);
                assert_eq!(
                    db.get(&k).unwrap(),
                    model.get(&k).cloned(),
                    "{ctx}: get {:?}",
                    String::from_utf8_lossy(&k)
                );
            }
            78..=80 => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), model.clone()));
                } else {
                    let i = r.below(snaps.len() as u64) as usize;
                    snaps.remove(i);
                }
            }
            81..=83 => {
                if let Some((s, m)) = snaps.get(r.below(snaps.len().max(1) as u64) as usize) {
                    let b = random_bounds(&mut r, cmp);
                    assert_eq!(
                        scan_bounded(&db, Some(s.clone()), r.chance(50), &b),
                        bounded(cmp, m, &b),
                        "{ctx}: snapshot scan bounds={b:?}"
                    );
                    let k = key(&mut r);
                    let ro = ReadOptions {
                        snapshot: Some(s.clone()),
                        ..Default::default()
                    };
                    assert_eq!(
                        db.get_cf(&ro, DEFAULT_CF, &k).unwrap(),
                        m.get(&k).cloned(),
                        "{ctx}: snapshot get"
                    );
                }
            }
            84..=87 => {
                let reverse = r.chance(50);
                let b = random_bounds(&mut r, cmp);
                assert_eq!(
                    scan_bounded(&db, None, reverse, &b),
                    bounded(cmp, &model, &b),
                    "{ctx}: scan reverse={reverse} bounds={b:?}"
                );
            }
            88..=91 => {
                // Seek, then walk a few steps in a random direction mix,
                // within random bounds.
                let k = key(&mut r);
                let b = random_bounds(&mut r, cmp);
                let all = bounded(cmp, &model, &b);
                let mut it = db
                    .iter(ReadOptions {
                        lower_bound: b.0.clone(),
                        upper_bound: b.1.clone(),
                        ..Default::default()
                    })
                    .unwrap();
                let mut pos = all
                    .partition_point(|(x, _)| cmp.compare(x, &k) == std::cmp::Ordering::Less)
                    as i64;
                if r.chance(50) {
                    it.seek(&k);
                } else {
                    it.seek_for_prev(&k);
                    pos = all
                        .partition_point(|(x, _)| cmp.compare(x, &k) != std::cmp::Ordering::Greater)
                        as i64
                        - 1;
                }
                for _ in 0..6 {
                    let expect = usize::try_from(pos).ok().and_then(|p| all.get(p));
                    match expect {
                        Some((ek, ev)) => {
                            assert!(
                                it.valid(),
                                "{ctx}: iterator ended early at pos {pos} bounds={b:?}"
                            );
                            assert_eq!(
                                (it.key(), it.value()),
                                (ek.as_slice(), ev.as_slice()),
                                "{ctx}: walk bounds={b:?}"
                            );
                        }
                        None => {
                            assert!(
                                !it.valid(),
                                "{ctx}: iterator should be exhausted bounds={b:?}"
                            );
                            break;
                        }
                    }
                    if r.chance(60) {
                        it.next();
                        pos += 1;
                    } else {
                        it.prev();
                        pos -= 1;
                    }
                }
            }
            92..=94 => db.flush().unwrap(),
            95..=96 if r.chance(15) => {
                let (a, b) = (key(&mut r), key(&mut r));
                let (a, b) = if cmp.compare(&a, &b) == std::cmp::Ordering::Greater {
                    (b, a)
                } else {
                    (a, b)
                };
                db.compact_range(DEFAULT_CF, Some(&a), Some(&b)).unwrap();
            }
            95..=96 => {
                deepest = deepest.max(
                    db.level_summary(DEFAULT_CF)
                        .iter()
                        .filter(|(n, _)| *n > 0)
                        .count(),
                );
            }
            _ => {
                let st = db.stats();
                (flushes, compactions) = (
                    flushes + st.flushes,
                    compactions + st.compactions + st.trivial_moves,
                );
                deepest = deepest.max(
                    db.level_summary(DEFAULT_CF)
                        .iter()
                        .filter(|(n, _)| *n > 0)
                        .count(),
                );
                snaps.clear();
                db.close().unwrap();
                db = Db::open(&dir, opts.clone()).unwrap();
            }
        }
    }
    db.wait_for_compactions().unwrap();
    if std::env::var("MODEL_VERBOSE").is_ok() {
        eprintln!(
            "{name}: live {} keys\n{}",
            model.len(),
            db.describe_levels()
        );
    }
    assert_eq!(
        scan(&db, None, false),
        ordered(cmp, &model),
        "{name}: final scan"
    );
    db.compact_range(DEFAULT_CF, None, None).unwrap();
    assert_eq!(
        scan(&db, None, true),
        ordered(cmp, &model),
        "{name}: scan after full compaction"
    );
    let s = db.stats();
    deepest = deepest.max(
        db.level_summary(DEFAULT_CF)
            .iter()
            .filter(|(n, _)| *n > 0)
            .count(),
    );
    eprintln!(
        "{name}: {} flushes, {} compactions, up to {deepest} non-empty levels",
        flushes + s.flushes,
        compactions + s.compactions + s.trivial_moves
    );
    assert!(
        flushes + s.flushes > 0 && compactions + s.compactions > 0,
        "{name}: the workload never flushed or compacted"
    );
    db.close().unwrap();
}

#[test]
fn model_random_operations() {
    let base = seed("model_random_operations");
    let steps = std::env::var("MODEL_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    for (i, (name, cf)) in option_sets().into_iter().enumerate() {
        run(name, cf, base.wrapping_add(i as u64), steps);
    }
}
