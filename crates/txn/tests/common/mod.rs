//! Shared test helpers: a seeded PRNG (seed from `SEED=...` or the clock,
//! always printed), self-removing temporary directories, database opening.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::time::Duration;
use txn::{TxnDb, TxnOptions};

/// splitmix64: tiny, fast, good enough for test workloads.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// The test seed: `SEED` from the environment, else derived from the clock.
/// Printed so that a failure can be replayed.
pub fn seed(test: &str) -> u64 {
    let s = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("{test}: SEED={s} (rerun with SEED={s})");
    s
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let d = std::env::temp_dir().join(format!(
            "strata-txn-test-{name}-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
