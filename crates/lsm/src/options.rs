//! Options for a database and for each column family. Each field names its
//! RocksDB equivalent; defaults follow RocksDB's where they make sense.
use crate::key::Comparator;
use crate::sstable::Compression;
use crate::vfs::Fs;
use crate::wal::TailPolicy;
use std::sync::Arc;

/// Number of levels (L0..L6).
pub const NUM_LEVELS: usize = 7;

/// Database-wide options.
#[derive(Clone)]
pub struct Options {
    /// Create the database if it does not exist (`create_if_missing`).
    pub create_if_missing: bool,
    /// Fail if it already exists (`error_if_exists`).
    pub error_if_exists: bool,
    /// Background jobs (`max_background_jobs`): a quarter (at least one) are
    /// flush-only threads, the rest (at least one) compaction threads.
    pub max_background_jobs: usize,
    /// Block cache capacity in bytes (`block_cache` size). 0 disables it.
    pub block_cache_size: usize,
    /// Keep index and filter blocks of tables below level 0 in the block
    /// cache, charged to its capacity (`cache_index_and_filter_blocks`);
    /// level-0 ones stay pinned (`pin_l0_filter_and_index_blocks_in_cache`).
    /// Off: every open table pins its index and filter (RocksDB's default).
    pub cache_index_and_filter_blocks: bool,
    /// Open table files kept (`max_open_files`).
    pub max_open_files: usize,
    /// Background write rate limit in bytes/s (`rate_limiter`); 0 = none.
    /// Compactions wait for it; flushes are charged without waiting, and
    /// compactions stop waiting while writers are throttled by compaction debt.
    pub rate_limit_bytes_per_sec: u64,
    /// Tune the rate within [limit / 20, limit] to the demand (`auto_tuned`).
    pub rate_limit_auto_tune: bool,
    /// Write rate (bytes/s) at which a slowdown starts; it then falls while
    /// debt grows and recovers as it shrinks (`delayed_write_rate`).
    pub delayed_write_rate: u64,
    /// How to treat a bad record in the last WAL (`wal_recovery_mode`).
    pub wal_recovery: TailPolicy,
    /// Read table files with O_DIRECT, bypassing the page cache
    /// (`use_direct_reads`); ignored when `fs` is set.
    pub use_direct_reads: bool,
    /// The file system; `None` means the operating system's.
    pub fs: Option<Arc<dyn Fs>>,
    /// Options of the default column family.
    pub default_cf: CfOptions,
    /// Options of the other column families by name: used for those found at open
    /// that `open_cf` did not list, and by `Db::ensure_cf` (None: `CfOptions::default()`).
    pub cf_config: Option<Arc<crate::optstr::CfConfig>>,
    /// After a full disk (ENOSPC) made the database read-only, try to resume writing
    /// this often (RocksDB's auto-recovery); None: only `Db::resume` does.
    pub auto_resume_interval: Option<std::time::Duration>,
    /// Pick no compactions in the background (RocksDB's per-family
    /// `disable_auto_compactions`, here for every family): flushes still run,
    /// and `compact_range` and the reclamation of dropped ranges still
    /// compact. For opening a database only to read it without rewriting its
    /// files (`strata-backup restore` verifies a restored copy so). Writes
    /// stall once level 0 reaches its stop trigger.
    pub disable_auto_compactions: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            max_background_jobs: 2,
            block_cache_size: 64 << 20,
            cache_index_and_filter_blocks: false,
            max_open_files: 4096,
            rate_limit_bytes_per_sec: 0,
            rate_limit_auto_tune: false,
            delayed_write_rate: 16 << 20,
            wal_recovery: TailPolicy::TolerateTornTail,
            use_direct_reads: false,
            fs: None,
            default_cf: CfOptions::default(),
            cf_config: None,
            auto_resume_interval: Some(std::time::Duration::from_secs(2)),
            disable_auto_compactions: false,
        }
    }
}

/// Options of one column family.
#[derive(Debug, Clone)]
pub struct CfOptions {
    /// User key order (`comparator`).
    pub comparator: Comparator,
    /// Memtable size before it is switched (`write_buffer_size`).
    pub write_buffer_size: usize,
    /// Memtables (mutable + immutable) before writes stop (`max_write_buffer_number`).
    pub max_write_buffer_number: usize,
    /// Uncompressed data block size (`block_size`).
    pub block_size: usize,
    /// Entries between restart points (`block_restart_interval`).
    pub block_restart_interval: usize,
    /// Bloom filter bits per key, 0 = none (`filter_policy`).
    pub bloom_bits_per_key: u32,
    /// Fixed prefix length for prefix blooms and prefix iteration (`prefix_extractor`).
    pub prefix_len: Option<usize>,
    /// Compression per level; the last entry repeats (`compression_per_level`).
    pub compression_per_level: Vec<Compression>,
    /// Compression of the bottommost level, if different (`bottommost_compression`).
    pub bottommost_compression: Option<Compression>,
    /// L0 files that trigger a compaction (`level0_file_num_compaction_trigger`).
    pub level0_compaction_trigger: usize,
    /// L0 files at which writes slow down (`level0_slowdown_writes_trigger`).
    pub level0_slowdown_trigger: usize,
    /// L0 files at which writes stop (`level0_stop_writes_trigger`).
    pub level0_stop_trigger: usize,
    /// Target size of the base level (`max_bytes_for_level_base`).
    pub max_bytes_for_level_base: u64,
    /// Size ratio between levels (`max_bytes_for_level_multiplier`).
    pub max_bytes_for_level_multiplier: u64,
    /// Target size of compaction output files (`target_file_size_base`).
    pub target_file_size: u64,
    /// Size levels from the bottom up (`level_compaction_dynamic_level_bytes`).
    pub dynamic_level_bytes: bool,
    /// Pending compaction bytes at which writes slow down
    /// (`soft_pending_compaction_bytes_limit`).
    pub soft_pending_compaction_bytes: u64,
    /// ... and stop (`hard_pending_compaction_bytes_limit`).
    pub hard_pending_compaction_bytes: u64,
    /// Tombstone share of a file's entries that marks it for compaction
    /// (like `CompactOnDeletionCollector`); 0 disables.
    pub tombstone_compaction_ratio: f64,
    /// Consulted by compactions about the values they keep
    /// (`compaction_filter_factory`); see `compaction::filter`.
    pub compaction_filter: Option<crate::compaction::FilterFactoryRef>,
    /// Put the data blocks a flush writes into the block cache
    /// (`block_based_table_factory={prepopulate_block_cache=...}`).
    pub prepopulate_block_cache: PrepopulateBlockCache,
}

/// Which table writes fill the block cache with the blocks they write
/// (RocksDB's `PrepopulateBlockCache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepopulateBlockCache {
    /// None (`kDisable`): a block enters the cache when it is first read,
    /// from the file, and decompressed.
    #[default]
    Disable,
    /// Flushes (`kFlushOnly`): each data block of a level-0 table, as the
    /// cache holds it (uncompressed), at low priority, so reads of recently
    /// written keys find it without reading and decompressing it again.
    /// Compaction outputs are not inserted (they are larger, older data,
    /// and would push out the blocks readers use).
    FlushOnly,
}

impl PrepopulateBlockCache {
    /// The RocksDB name of the value.
    pub fn rocksdb_name(self) -> &'static str {
        match self {
            PrepopulateBlockCache::Disable => "kDisable",
            PrepopulateBlockCache::FlushOnly => "kFlushOnly",
        }
    }
}

impl Default for CfOptions {
    fn default() -> Self {
        CfOptions {
            comparator: Comparator::Bytewise,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: 10,
            prefix_len: None,
            compression_per_level: vec![Compression::Lz4],
            bottommost_compression: None,
            level0_compaction_trigger: 4,
            level0_slowdown_trigger: 20,
            level0_stop_trigger: 36,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10,
            target_file_size: 64 << 20,
            dynamic_level_bytes: true,
            soft_pending_compaction_bytes: 64 << 30,
            hard_pending_compaction_bytes: 256 << 30,
            tombstone_compaction_ratio: 0.5,
            compaction_filter: None,
            prepopulate_block_cache: PrepopulateBlockCache::Disable,
        }
    }
}

impl CfOptions {
    /// Compression for output at `level` (bottommost if `bottom`).
    pub fn compression_for(&self, level: usize, bottom: bool) -> Compression {
        if bottom {
            if let Some(c) = self.bottommost_compression {
                return c;
            }
        }
        let v = &self.compression_per_level;
        v.get(level)
            .or(v.last())
            .copied()
            .unwrap_or(Compression::None)
    }
}

/// Per-write options.
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    /// fsync the WAL before acknowledging (`sync`); default on.
    pub sync: bool,
    /// Skip the WAL entirely (`disableWAL`): lost on crash until flushed.
    pub disable_wal: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            sync: true,
            disable_wal: false,
        }
    }
}

/// Per-read options.
#[derive(Clone, Default)]
pub struct ReadOptions {
    /// Read at this snapshot instead of the latest state.
    pub snapshot: Option<crate::db::Snapshot>,
    /// Inclusive lower bound for iterators (`iterate_lower_bound`).
    pub lower_bound: Option<Vec<u8>>,
    /// Exclusive upper bound for iterators (`iterate_upper_bound`).
    pub upper_bound: Option<Vec<u8>>,
    /// Only keys sharing the seek key's prefix (`prefix_same_as_start`).
    pub prefix_same_as_start: bool,
    /// Do not insert blocks read into the cache (`fill_cache = false`).
    pub no_fill_cache: bool,
}
