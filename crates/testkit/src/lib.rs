//! Helpers shared by the crates' tests, and nothing else (every crate takes it as a
//! dev-dependency): a seeded pseudo-random generator whose seed comes from `SEED=...` or the
//! clock and is always printed, so that a failing randomized test can be replayed; and
//! temporary directories with names that do not collide between tests, processes or runs.
#![allow(clippy::unwrap_used)] // a test helper that cannot create its directory should fail the test

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The test seed: `SEED` from the environment, else derived from the clock. Printed (to
/// stderr, which the test harness shows for a failed test) so that a failure can be replayed.
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

/// splitmix64: tiny, fast, and good enough for test workloads.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Seeded by [`seed`] (from `SEED` or the clock, printed).
    pub fn from_env(test: &str) -> Rng {
        Rng(seed(test))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n) (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in [lo, hi].
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True in `pct` percent of calls.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// True with probability `p` (0.0 ..= 1.0).
    pub fn prob(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// True once in `n` calls on average.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A path under the system temp dir that no other test, process or run uses
/// (`strata-test-<name>-<pid>-<counter>-<nanos>`); nothing is created.
pub fn unique_temp_path(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "strata-test-{name}-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// A fresh, empty directory that stays after the test (for inspection after a failure).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = unique_temp_path(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fresh, empty directory, removed with everything in it when dropped (also when the
/// test panics).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        TempDir(temp_dir(name))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_bounds_hold() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs[0], xs[1]);
        let mut r = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.range(3, 7);
            assert!((3..=7).contains(&v), "{v}");
            seen[(v - 3) as usize] = true;
            assert_eq!(r.below(0), 0);
        }
        assert!(
            seen.iter().all(|s| *s),
            "every value of a small range shows up"
        );
        let hits = (0..10_000).filter(|_| r.chance(30)).count();
        assert!(
            (2_500..3_500).contains(&hits),
            "chance(30) hit {hits} of 10000"
        );
        let hits = (0..10_000).filter(|_| r.prob(0.1)).count();
        assert!(
            (700..1_300).contains(&hits),
            "prob(0.1) hit {hits} of 10000"
        );
        assert!((0..1000).all(|_| !r.chance(0) && r.one_in(1)));
        assert_eq!(r.bytes(17).len(), 17);
    }

    #[test]
    fn temp_dirs_are_fresh_distinct_and_removed_on_drop() {
        let kept = temp_dir("kit");
        let p = {
            let d = TempDir::new("kit");
            assert!(d.path().is_dir());
            assert_ne!(d.path(), kept.as_path());
            std::fs::write(d.path().join("f"), b"x").unwrap();
            d.0.clone()
        };
        assert!(!p.exists(), "TempDir removed on drop");
        assert!(kept.is_dir(), "temp_dir stays");
        std::fs::remove_dir_all(&kept).unwrap();
    }
}
