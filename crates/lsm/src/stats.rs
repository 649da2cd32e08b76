//! Engine statistics: counters updated with relaxed atomics on the hot
//! paths, read as a [`StatsSnapshot`] struct and printable as a table in
//! the style of RocksDB's compaction stats.
use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($name:ident: $doc:literal,)*) => {
        /// Live counters.
        #[derive(Default, Debug)]
        pub struct Stats { $(#[doc = $doc] pub $name: AtomicU64,)* }
        /// A copy of the counters at one moment.
        #[derive(Default, Debug, Clone, PartialEq, Eq)]
        pub struct StatsSnapshot { $(#[doc = $doc] pub $name: u64,)* }
        impl Stats {
            /// Copies every counter.
            pub fn snapshot(&self) -> StatsSnapshot {
                StatsSnapshot { $($name: self.$name.load(Ordering::Relaxed),)* }
            }
        }
        impl StatsSnapshot {
            /// (name, value) pairs, for printing.
            pub fn pairs(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

counters! {
    user_bytes_written: "Key + value bytes of user writes.",
    user_writes: "Updates applied (puts and deletes).",
    write_groups: "WAL writes (a group commits many batches at once).",
    wal_bytes: "Bytes appended to WAL files.",
    wal_syncs: "WAL fsyncs.",
    flush_bytes: "Bytes written by memtable flushes.",
    flushes: "Memtable flushes.",
    compaction_bytes_written: "Bytes written by compactions.",
    compaction_bytes_read: "Bytes read by compactions.",
    compactions: "Compactions run (excluding trivial moves).",
    trivial_moves: "Files moved to the next level without rewriting.",
    manifest_bytes: "Bytes appended to the manifest.",
    bytes_read: "Bytes read from table files (block reads).",
    block_cache_hits: "Block cache hits.",
    block_cache_misses: "Block cache misses.",
    bloom_checked: "Bloom filter checks on point lookups.",
    bloom_useful: "Bloom filter checks that ruled a table out.",
    gets: "Point lookups.",
    stall_micros: "Time writers spent delayed or stopped.",
    slowdowns: "Writes delayed by a slowdown trigger.",
    stops: "Writes stopped until background work caught up.",
    background_errors: "Background write, flush or compaction errors.",
}

impl Stats {
    /// Adds `n` to a counter.
    #[inline]
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

impl StatsSnapshot {
    /// Bytes written to disk by the engine (WAL + flush + compaction + manifest).
    pub fn disk_bytes_written(&self) -> u64 {
        self.wal_bytes + self.flush_bytes + self.compaction_bytes_written + self.manifest_bytes
    }
    /// Write amplification: disk bytes written / user bytes written.
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes_written == 0 {
            return 0.0;
        }
        self.disk_bytes_written() as f64 / self.user_bytes_written as f64
    }
}
