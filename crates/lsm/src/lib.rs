//! # strata-lsm: Strata's storage engine
//!
//! An embeddable, crash-safe log-structured merge tree of ordered
//! `bytes -> bytes`. It knows nothing about rows, SQL or locks; the
//! relational layer above encodes tables and indexes as keys.
//!
//! **Write path.** A [`WriteBatch`] is appended to the write-ahead log as
//! one checksummed record (many concurrent writers share one write and one
//! fsync: group commit), then applied to the column family's memtable, a
//! concurrent skiplist. A full memtable becomes immutable and a background
//! thread flushes it to a level-0 table. Compactions merge tables down the
//! levels L0..L6 (leveled, dynamically sized), dropping overwritten and
//! deleted data no snapshot can see.
//!
//! **Read path.** A lookup checks the memtables, then level-0 tables newest
//! first, then one table per level, skipping tables whose bloom filter
//! rules the key out; data blocks come through a sharded LRU block cache.
//! Iterators merge every source under a snapshot sequence number.
//!
//! **Files.** `NNNNNN.log` (WAL), `NNNNNN.sst` (tables), `MANIFEST-NNNNNN`
//! (version edits), `CURRENT`, `LOCK`. Byte formats: docs/formats/.
//!
//! This crate must not depend on any other workspace crate.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod batch;
pub mod cache;
pub mod coding;
pub mod compaction;
pub mod db;
pub mod error;
pub mod filename;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod options;
pub mod optstr;
pub mod range_del;
pub mod rate_limit;
pub mod seal;
pub mod sstable;
pub mod stats;
pub mod table_cache;
pub mod version;
pub mod vfs;
pub mod wal;

pub use batch::WriteBatch;
pub use compaction::{
    CompactionFilter, CompactionFilterFactory, Decision, FilterContext, FilterFactoryRef,
};
pub use db::{
    BulkWriter, CfInfo, CheckpointInfo, ColumnFamily, Db, DbIterator, LevelInfo, Snapshot, SstInfo,
    DEFAULT_CF,
};
pub use error::{Error, Result};
pub use key::{Comparator, SeqNo};
pub use options::{CfOptions, Options, PrepopulateBlockCache, ReadOptions, WriteOptions};
pub use optstr::CfConfig;
pub use sstable::Compression;
pub use stats::StatsSnapshot;
