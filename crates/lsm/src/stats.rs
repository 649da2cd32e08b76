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
    compaction_filtered: "Values a compaction filter removed.",
    manifest_bytes: "Bytes appended to the manifest.",
    bytes_read: "Bytes read from table files (block reads).",
    block_cache_hits: "Block cache hits.",
    block_cache_misses: "Block cache misses.",
    bloom_checked: "Bloom filter checks on point lookups.",
    bloom_useful: "Bloom filter checks that ruled a table out.",
    gets: "Point lookups.",
    stall_micros: "Time writers spent delayed or stopped.",
    slowdowns: "Write groups delayed by a slowdown trigger.",
    stops: "Write groups stopped until background work caught up.",
    stall_l0_slowdowns: "Write groups delayed because level 0 had too many files.",
    stall_l0_stops: "Write groups stopped at the level-0 stop trigger.",
    stall_l0_micros: "Time writers waited because of level-0 files.",
    stall_pending_slowdowns: "Write groups delayed by the soft pending-compaction-bytes limit.",
    stall_pending_stops: "Write groups stopped at the hard pending-compaction-bytes limit.",
    stall_pending_micros: "Time writers waited because of pending compaction bytes.",
    stall_memtable_slowdowns: "Write groups delayed because memtables wait for a flush.",
    stall_memtable_stops: "Write groups stopped because every memtable was full.",
    stall_memtable_micros: "Time writers waited for memtables to be flushed.",
    stall_longest_micros: "Longest single wait of a write group (gauge, since open).",
    delayed_write_rate: "Current delayed write rate in bytes/s; 0 when writes are not delayed (gauge).",
    compaction_rate_limit: "Current compaction rate limit in bytes/s; 0 when unlimited (gauge).",
    compaction_rate_limited_micros: "Time compactions slept in the rate limiter.",
    background_errors: "Background write, flush or compaction errors.",
    ingested_files: "Table files ingested (linked or copied in, never rewritten).",
    ingested_global_seqno_files: "Ingested files given a global sequence number (over older data, or after live snapshots).",
}

impl Stats {
    /// Adds `n` to a counter.
    #[inline]
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
    /// Sets a gauge.
    #[inline]
    pub fn set(c: &AtomicU64, n: u64) {
        c.store(n, Ordering::Relaxed);
    }
    /// Raises a gauge to at least `n`.
    #[inline]
    pub fn max(c: &AtomicU64, n: u64) {
        c.fetch_max(n, Ordering::Relaxed);
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

/// Bytes read and written by flushes and compactions, per output level.
#[derive(Default, Debug)]
pub struct LevelStats {
    /// Bytes written into each level (flush into L0, compactions into their output).
    pub written: [AtomicU64; crate::options::NUM_LEVELS],
    /// Bytes read by compactions whose output is each level.
    pub read: [AtomicU64; crate::options::NUM_LEVELS],
    /// Jobs that wrote into each level.
    pub jobs: [AtomicU64; crate::options::NUM_LEVELS],
}

impl LevelStats {
    /// Records one job.
    pub fn record(&self, level: usize, read: u64, written: u64) {
        if level < self.written.len() {
            self.read[level].fetch_add(read, Ordering::Relaxed);
            self.written[level].fetch_add(written, Ordering::Relaxed);
            self.jobs[level].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Formats RocksDB-style compaction stats: one row per level.
pub fn format_table(cf: &str, levels: &[(usize, u64, f64)], per: &LevelStats) -> String {
    let mb = |x: u64| x as f64 / 1048576.0;
    let mut s = format!("\n** Compaction Stats [{cf}] **\n");
    s.push_str("Level    Files   Size(MB)  Score  Read(MB)  Write(MB)  Jobs\n");
    s.push_str("---------------------------------------------------------\n");
    let (mut files, mut size, mut rd, mut wr, mut jobs) = (0usize, 0u64, 0u64, 0u64, 0u64);
    for (l, (n, bytes, score)) in levels.iter().enumerate() {
        let (r, w, j) = (
            per.read[l].load(Ordering::Relaxed),
            per.written[l].load(Ordering::Relaxed),
            per.jobs[l].load(Ordering::Relaxed),
        );
        if *n == 0 && w == 0 {
            continue;
        }
        s.push_str(&format!(
            "  L{l} {n:>9} {:>10.1} {score:>6.2} {:>9.1} {:>10.1} {j:>5}\n",
            mb(*bytes),
            mb(r),
            mb(w)
        ));
        files += n;
        size += bytes;
        rd += r;
        wr += w;
        jobs += j;
    }
    let flush = per.written[0].load(Ordering::Relaxed).max(1);
    s.push_str(&format!(
        " Sum {files:>9} {:>10.1}        {:>9.1} {:>10.1} {jobs:>5}\n",
        mb(size),
        mb(rd),
        mb(wr)
    ));
    s.push_str(&format!(
        "Sum W-Amp (bytes written by flush + compaction / bytes flushed): {:.2}\n",
        wr as f64 / flush as f64
    ));
    s
}
