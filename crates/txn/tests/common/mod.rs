//! Shared test helpers: database opening and committing; the seeded PRNG (seed from
//! `SEED=...` or the clock, always printed) and self-removing temporary directories come
//! from the workspace's testkit crate.
#![allow(dead_code, unused_imports)]
use std::time::Duration;
pub use testkit::{seed, Rng, TempDir};
use txn::{TxnDb, TxnOptions};

/// Small engine options so tests stay light.
pub fn engine_opts() -> lsm::Options {
    lsm::Options {
        block_cache_size: 4 << 20,
        ..lsm::Options::default()
    }
}

/// Opens a database in `dir` with `sync` off (fast) unless asked.
pub fn open(dir: &TempDir, sync: bool) -> TxnDb {
    let db = lsm::Db::open(dir.path(), engine_opts()).unwrap();
    TxnDb::new(
        db,
        TxnOptions {
            sync,
            lock_wait_timeout: Duration::from_secs(20),
            ..TxnOptions::default()
        },
    )
}

pub const CF: lsm::ColumnFamily = lsm::DEFAULT_CF;

/// Commits `key = value` in its own transaction.
pub fn put_committed(db: &TxnDb, key: &[u8], value: &[u8]) {
    let mut t = db.begin(txn::Isolation::ReadCommitted);
    t.put_locked(CF, key, value).unwrap();
    t.commit().unwrap();
}
