//! What the database reports about itself for operators: per column family
//! its options, memtables and levels (files, bytes, compaction score, bytes
//! compacted), every live table file, and the block cache (the sources of
//! SHOW ENGINE STRATA STATUS and the information_schema STRATA_* tables).
use super::Db;
use crate::compaction::picker;
use crate::key;
use crate::options::{CfOptions, NUM_LEVELS};
use crate::version::Version;
use std::sync::atomic::Ordering;

/// One level of a column family.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelInfo {
    /// Level number (0..=6).
    pub level: usize,
    /// Table files.
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// Compaction score (L0: files / trigger; others: bytes / target; >= 1
    /// means a compaction is due). 0 for the last level.
    pub score: f64,
    /// Target size of the level (0: L0, or a level below the base level).
    pub target: u64,
    /// Bytes read by compactions writing into this level, since open (all
    /// column families).
    pub read_bytes: u64,
    /// Bytes written into this level (flushes into L0, compactions into
    /// their output level), since open (all column families).
    pub written_bytes: u64,
    /// Flushes and compactions that wrote into this level, since open.
    pub jobs: u64,
    /// Files a compaction is reading now.
    pub compacting: usize,
}

/// A column family's state.
#[derive(Debug, Clone)]
pub struct CfInfo {
    /// Column family id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Options as (name, value) in RocksDB's spelling.
    pub options: Vec<(&'static str, String)>,
    /// Bytes in the active memtable.
    pub mem_bytes: u64,
    /// Entries in the active memtable.
    pub mem_entries: u64,
    /// Immutable memtables waiting for a flush.
    pub imm_count: usize,
    /// Bytes in them.
    pub imm_bytes: u64,
    /// Estimated bytes compaction must rewrite (RocksDB's
    /// estimate-pending-compaction-bytes).
    pub pending_compaction_bytes: u64,
    /// The level level 0 compacts into.
    pub base_level: usize,
    /// Every level, L0 to L6.
    pub levels: Vec<LevelInfo>,
}

/// A live table file.
#[derive(Debug, Clone)]
pub struct SstInfo {
    /// Column family name.
    pub cf: String,
    /// Level.
    pub level: usize,
    /// File number (`NNNNNN.sst`).
    pub number: u64,
    /// Size in bytes.
    pub size: u64,
    /// Smallest user key.
    pub smallest: Vec<u8>,
    /// Largest user key.
    pub largest: Vec<u8>,
    /// Sequence numbers of its oldest and newest entries.
    pub smallest_seq: u64,
    /// See `smallest_seq`.
    pub largest_seq: u64,
    /// Entries (point entries, tombstones included).
    pub entries: u64,
    /// Point deletions among them.
    pub deletions: u64,
    /// Range deletions.
    pub range_deletions: u64,
    /// A compaction is reading it now.
    pub being_compacted: bool,
    /// The compression its data blocks were written with (from its properties;
    /// None for a table that does not record it or could not be opened).
    pub compression: Option<crate::sstable::Compression>,
}

/// A column family's options as (name, value), RocksDB's names.
pub fn option_pairs(o: &CfOptions) -> Vec<(&'static str, String)> {
    let comp: Vec<String> = o
        .compression_per_level
        .iter()
        .map(|c| c.rocksdb_name().to_string())
        .collect();
    vec![
        ("comparator", o.comparator.name().to_string()),
        ("write_buffer_size", o.write_buffer_size.to_string()),
        (
            "max_write_buffer_number",
            o.max_write_buffer_number.to_string(),
        ),
        ("block_size", o.block_size.to_string()),
        (
            "block_restart_interval",
            o.block_restart_interval.to_string(),
        ),
        ("bloom_bits_per_key", o.bloom_bits_per_key.to_string()),
        (
            "prepopulate_block_cache",
            o.prepopulate_block_cache.rocksdb_name().to_string(),
        ),
        (
            "prefix_extractor",
            o.prefix_len
                .map_or("nullptr".into(), |n| format!("fixed:{n}")),
        ),
        ("compression_per_level", comp.join(":")),
        (
            "bottommost_compression",
            o.bottommost_compression
                .map_or("kDisableCompressionOption".into(), |c| {
                    c.rocksdb_name().into()
                }),
        ),
        (
            "level0_file_num_compaction_trigger",
            o.level0_compaction_trigger.to_string(),
        ),
        (
            "level0_slowdown_writes_trigger",
            o.level0_slowdown_trigger.to_string(),
        ),
        (
            "level0_stop_writes_trigger",
            o.level0_stop_trigger.to_string(),
        ),
        (
            "max_bytes_for_level_base",
            o.max_bytes_for_level_base.to_string(),
        ),
        (
            "max_bytes_for_level_multiplier",
            o.max_bytes_for_level_multiplier.to_string(),
        ),
        ("target_file_size_base", o.target_file_size.to_string()),
        (
            "level_compaction_dynamic_level_bytes",
            o.dynamic_level_bytes.to_string(),
        ),
        (
            "soft_pending_compaction_bytes_limit",
            o.soft_pending_compaction_bytes.to_string(),
        ),
        (
            "hard_pending_compaction_bytes_limit",
            o.hard_pending_compaction_bytes.to_string(),
        ),
        (
            "tombstone_compaction_ratio",
            o.tombstone_compaction_ratio.to_string(),
        ),
        (
            "compaction_filter_factory",
            o.compaction_filter
                .as_ref()
                .map_or("nullptr".into(), |f| f.0.name().to_string()),
        ),
    ]
}

/// The score of each level of `v` (see `LevelInfo::score`).
pub(crate) fn level_scores(
    v: &Version,
    o: &CfOptions,
) -> ([f64; NUM_LEVELS], picker::LevelTargets) {
    let t = picker::targets(v, o);
    let mut s = [0.0; NUM_LEVELS];
    for (l, score) in s.iter_mut().enumerate() {
        *score = if l == 0 {
            v.levels[0].len() as f64 / o.level0_compaction_trigger.max(1) as f64
        } else if t.target[l] > 0 && l + 1 < NUM_LEVELS {
            v.level_size(l) as f64 / t.target[l] as f64
        } else {
            0.0
        };
    }
    (s, t)
}

impl Db {
    /// Every column family's options, memtables and levels.
    pub fn cf_infos(&self) -> Vec<CfInfo> {
        let st = self.inner.lock();
        let per = &self.inner.level_stats;
        let mut out = Vec::new();
        for (id, cf) in &st.cfs {
            let Some(v) = st.versions.cfs.get(id) else {
                continue;
            };
            let v = &v.current;
            let (scores, t) = level_scores(v, &cf.opts);
            let levels = (0..NUM_LEVELS)
                .map(|l| LevelInfo {
                    level: l,
                    files: v.levels[l].len(),
                    bytes: v.level_size(l),
                    score: scores[l],
                    target: t.target[l],
                    read_bytes: per.read[l].load(Ordering::Relaxed),
                    written_bytes: per.written[l].load(Ordering::Relaxed),
                    jobs: per.jobs[l].load(Ordering::Relaxed),
                    compacting: v.levels[l].iter().filter(|f| f.is_compacting()).count(),
                })
                .collect();
            out.push(CfInfo {
                id: *id,
                name: cf.name.clone(),
                options: option_pairs(&cf.opts),
                mem_bytes: cf.mem.approximate_size() as u64,
                mem_entries: cf.mem.len(),
                imm_count: cf.imms.len(),
                imm_bytes: cf.imms.iter().map(|m| m.approximate_size() as u64).sum(),
                pending_compaction_bytes: picker::pending_compaction_bytes(v, &cf.opts),
                base_level: t.base_level,
                levels,
            });
        }
        out
    }

    /// Every live table file, by column family, level and key order.
    pub fn sst_files(&self) -> Vec<SstInfo> {
        let mut out = Vec::new();
        let mut open = Vec::new();
        let st = self.inner.lock();
        for (id, c) in &st.versions.cfs {
            let (cmp, prefix) = st.cfs.get(id).map_or((c.current.cmp, None), |x| {
                (x.opts.comparator, x.opts.prefix_len)
            });
            for (level, files) in c.current.levels.iter().enumerate() {
                for f in files {
                    out.push(SstInfo {
                        cf: c.name.clone(),
                        level,
                        number: f.number(),
                        size: f.size(),
                        smallest: key::user_key(&f.info.smallest).to_vec(),
                        largest: key::user_key(&f.info.largest).to_vec(),
                        smallest_seq: f.info.smallest_seq,
                        largest_seq: f.info.largest_seq,
                        entries: f.info.num_entries,
                        deletions: f.info.num_deletions,
                        range_deletions: f.info.num_range_deletions,
                        being_compacted: f.is_compacting(),
                        compression: None,
                    });
                    open.push((f.clone(), level, cmp, prefix));
                }
            }
        }
        drop(st);
        // Properties come from the open table (through the table cache), outside the lock.
        for (info, (f, level, cmp, prefix)) in out.iter_mut().zip(open) {
            if let Ok(t) = self.inner.tables.get(&f, level, cmp, prefix) {
                info.compression = t.properties().compression;
            }
        }
        out
    }

    /// Bytes the block cache holds (0 without a cache).
    pub fn block_cache_usage(&self) -> u64 {
        self.inner
            .tables
            .block_cache()
            .map_or(0, |c| c.usage() as u64)
    }

    /// Live snapshots.
    pub fn snapshot_count(&self) -> usize {
        self.inner.lock().snapshots.values().sum()
    }
}
