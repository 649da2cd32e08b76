//! Compaction filters (RocksDB's `CompactionFilter` / `CompactionFilterFactory`):
//! a column family's hook that compactions consult for each value they are
//! about to keep, which may answer "remove" (a TTL that expired, data of a
//! dropped index, ...).
//!
//! Guarantees (see `job.rs`, which applies the answer):
//! - Only compactions consult the filter, never flushes.
//! - Only the newest version of a key in the compaction's input is offered,
//!   and only when it is newer than every snapshot live when the compaction
//!   started: a version such a snapshot can read is never offered, so none of
//!   them sees a filtered entry go away (RocksDB's old
//!   `IgnoreSnapshots() == false` rule). Entries older than a long-lived
//!   snapshot wait until it is released. A snapshot taken while the
//!   compaction runs is not protected (as in RocksDB): it reads the newest
//!   versions, which the compaction may remove when it installs; a filter
//!   must make such removals harmless itself (the TTL filter removes only
//!   what later reads hide anyway while read filtering is on).
//! - A removed value becomes a Delete tombstone at the value's own sequence
//!   number (RocksDB does the same), so an older version of the key below it,
//!   in this compaction's input or in a deeper level, never resurfaces. The
//!   tombstone then follows the usual rule and vanishes at the bottommost
//!   level when nothing older can remain.
//! - A manual compaction (`Db::compact_range`) of a family whose factory
//!   gives a filter for the last level rewrites even already-compacted files
//!   there, so the filter sees every entry (RocksDB's `kIfHaveCompactionFilter`
//!   default); a factory with nothing to filter returns None and those files
//!   are left alone.
use std::fmt;
use std::sync::Arc;

/// What to do with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep the entry as it is.
    Keep,
    /// Remove it (written out as a Delete at its sequence number).
    Remove,
}

/// What a compaction tells the factory when it starts.
#[derive(Debug, Clone, Copy)]
pub struct FilterContext {
    /// The column family's id.
    pub cf: u32,
    /// The level the compaction writes to.
    pub output_level: usize,
    /// The output is the bottommost data of its key range.
    pub bottommost: bool,
    /// The wall clock (Unix seconds) when the compaction's snapshot list was
    /// taken, read under the same lock: every snapshot the compaction does
    /// not protect was taken at this time or later (`Snapshot::unix_time`),
    /// so a time-based filter (TTL) judges by this clock, never a later one.
    pub unix_time: u64,
}

/// Decides about the entries of one compaction.
pub trait CompactionFilter {
    /// `level` is the output level; `key` the user key and `value` its value.
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> Decision;
}

/// Makes a [`CompactionFilter`] for each compaction of a column family
/// (RocksDB's `CompactionFilterFactory`): state fixed for one compaction,
/// such as "now", lives in the filter it returns.
pub trait CompactionFilterFactory: Send + Sync {
    /// A name for diagnostics (RocksDB's `Name()`).
    fn name(&self) -> &str;
    /// The filter of the compaction described by `ctx`; None: no filtering.
    fn create(&self, ctx: &FilterContext) -> Option<Box<dyn CompactionFilter>>;
}

/// A column family's filter factory, as held in `CfOptions`.
#[derive(Clone)]
pub struct FilterFactoryRef(pub Arc<dyn CompactionFilterFactory>);

impl fmt::Debug for FilterFactoryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CompactionFilterFactory({})", self.0.name())
    }
}
