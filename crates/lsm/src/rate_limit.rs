//! A token-bucket rate limiter for background (flush and compaction) writes,
//! like RocksDB's `GenericRateLimiter`: callers ask for bytes and sleep
//! until the bucket, refilled every 10 ms, can pay for them.
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Limits bytes per second across all callers.
pub struct RateLimiter {
    rate: u64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimiter {
    /// A limiter allowing `bytes_per_sec`.
    pub fn new(bytes_per_sec: u64) -> RateLimiter {
        RateLimiter {
            rate: bytes_per_sec.max(1),
            state: Mutex::new((0.0, Instant::now())),
        }
    }

    /// Blocks until `bytes` may be written.
    pub fn request(&self, bytes: u64) {
        let wait = {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let burst = self.rate as f64 / 100.0 * 10.0; // at most 100 ms of credit
            s.0 = (s.0 + now.duration_since(s.1).as_secs_f64() * self.rate as f64).min(burst);
            s.1 = now;
            s.0 -= bytes as f64;
            if s.0 < 0.0 {
                Duration::from_secs_f64(-s.0 / self.rate as f64)
            } else {
                Duration::ZERO
            }
        };
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debt_turns_into_sleep() {
        let r = RateLimiter::new(1_000_000);
        let t = Instant::now();
        for _ in 0..5 {
            r.request(20_000); // 100 KB at 1 MB/s: about 100 ms
        }
        assert!(
            t.elapsed() >= Duration::from_millis(50),
            "{:?}",
            t.elapsed()
        );
    }
}
