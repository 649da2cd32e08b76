//! A token-bucket rate limiter for background writes, like RocksDB's
//! `GenericRateLimiter`: compactions ask for bytes and sleep until the
//! bucket, refilled continuously, can pay for them; flushes (high priority)
//! are charged without waiting, so they take their share first and never
//! queue behind a compaction.
//!
//! Auto-tuned (RocksDB's `auto_tuned`): the rate moves within
//! [max / 20, max], starting at max / 2. Every [`TUNE_PERIOD`] it looks at
//! the fraction of [`WINDOW`]s in which a request had to wait: above 90% the
//! rate rises 5%, below 50% it falls 5%. Compaction then writes at about the
//! rate its demand needs, in a steady stream instead of bursts at the disk's
//! full bandwidth, which would queue the WAL's fsyncs behind them.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One accounting window of the auto-tuner.
pub const WINDOW: Duration = Duration::from_millis(100);
/// How often the auto-tuner adjusts the rate.
pub const TUNE_PERIOD: Duration = Duration::from_secs(1);

struct Bucket {
    tokens: f64,
    last: Instant,
    rate: f64,
    /// Start of the current window and whether a request waited in it.
    window: Instant,
    drained: bool,
    /// Windows (and drained ones) since the last tuning.
    windows: u32,
    drains: u32,
    tuned: Instant,
}

/// Limits bytes per second across all callers.
pub struct RateLimiter {
    max_rate: f64,
    auto_tune: bool,
    state: Mutex<Bucket>,
}

impl RateLimiter {
    /// A limiter allowing `bytes_per_sec`.
    pub fn new(bytes_per_sec: u64) -> RateLimiter {
        RateLimiter::with_tuning(bytes_per_sec, false)
    }

    /// A limiter at most at `max_bytes_per_sec`, auto-tuned if `auto_tune`.
    pub fn with_tuning(max_bytes_per_sec: u64, auto_tune: bool) -> RateLimiter {
        let max_rate = max_bytes_per_sec.max(1) as f64;
        let now = Instant::now();
        RateLimiter {
            max_rate,
            auto_tune,
            state: Mutex::new(Bucket {
                tokens: 0.0,
                last: now,
                rate: if auto_tune { max_rate / 2.0 } else { max_rate },
                window: now,
                drained: false,
                windows: 0,
                drains: 0,
                tuned: now,
            }),
        }
    }

    /// The current rate in bytes per second.
    pub fn rate(&self) -> u64 {
        self.lock().rate as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bucket> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refills the bucket and closes finished windows (tuning the rate).
    fn refill(&self, s: &mut Bucket, now: Instant) {
        let burst = s.rate / 10.0; // at most 100 ms of credit
        s.tokens = (s.tokens + now.duration_since(s.last).as_secs_f64() * s.rate).min(burst);
        s.last = now;
        while now.duration_since(s.window) >= WINDOW {
            s.windows += 1;
            s.drains += s.drained as u32;
            s.drained = false;
            s.window += WINDOW;
            if now.duration_since(s.window) > TUNE_PERIOD {
                // Idle for long: skip the empty windows in one step.
                let skipped =
                    (now.duration_since(s.window).as_millis() / WINDOW.as_millis().max(1)) as u32;
                s.windows += skipped;
                s.window = now;
            }
        }
        if self.auto_tune && now.duration_since(s.tuned) >= TUNE_PERIOD && s.windows > 0 {
            let pct = s.drains as f64 * 100.0 / s.windows as f64;
            if pct > 90.0 {
                s.rate = (s.rate * 1.05).min(self.max_rate);
            } else if pct < 50.0 {
                s.rate = (s.rate / 1.05).max(self.max_rate / 20.0);
            }
            s.windows = 0;
            s.drains = 0;
            s.tuned = now;
        }
    }

    /// Blocks until `bytes` may be written (low priority: compactions).
    /// Returns the time slept.
    pub fn request(&self, bytes: u64) -> Duration {
        let wait = {
            let mut s = self.lock();
            let now = Instant::now();
            self.refill(&mut s, now);
            s.tokens -= bytes as f64;
            if s.tokens < 0.0 {
                s.drained = true;
                Duration::from_secs_f64(-s.tokens / s.rate)
            } else {
                Duration::ZERO
            }
        };
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        wait
    }

    /// Charges `bytes` without waiting (high priority: flushes). Later
    /// low-priority requests pay the debt.
    pub fn charge(&self, bytes: u64) {
        let mut s = self.lock();
        self.refill(&mut s, Instant::now());
        // The debt is capped at one second of the current rate: a burst of flushes
        // after an idle spell (the auto-tuned rate at its floor) must not put the
        // next compaction to sleep for minutes while level 0 fills up.
        s.tokens = (s.tokens - bytes as f64).max(-s.rate);
    }
}

/// How one job pays a [`RateLimiter`].
#[derive(Clone, Copy)]
pub struct Pacer<'a> {
    /// The shared limiter.
    pub limiter: &'a RateLimiter,
    /// Flushes: charged, never wait.
    pub high_priority: bool,
    /// While set (writers wait on compaction debt), compactions do not wait either.
    pub urgent: Option<&'a AtomicBool>,
    /// Microseconds slept are added here.
    pub slept_micros: Option<&'a AtomicU64>,
}

impl Pacer<'_> {
    /// Pays for `bytes` written.
    pub fn pay(&self, bytes: u64) {
        if self.high_priority || self.urgent.is_some_and(|u| u.load(Ordering::Relaxed)) {
            self.limiter.charge(bytes);
            return;
        }
        let slept = self.limiter.request(bytes);
        if let Some(c) = self.slept_micros {
            c.fetch_add(slept.as_micros() as u64, Ordering::Relaxed);
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

    #[test]
    fn flush_charges_never_wait_but_slow_compactions() {
        let r = RateLimiter::new(1_000_000);
        let t = Instant::now();
        r.charge(200_000); // a flush: no wait
        assert!(t.elapsed() < Duration::from_millis(50));
        let slept = r.request(1); // a compaction pays the flush's 200 ms
        assert!(slept >= Duration::from_millis(150), "{slept:?}");
    }

    #[test]
    fn flush_debt_is_capped_at_one_second_of_rate() {
        let r = RateLimiter::new(1_000_000);
        for _ in 0..50 {
            r.charge(1_000_000); // 50 s of flushes at 1 MB/s
        }
        let slept = r.request(1);
        assert!(slept <= Duration::from_millis(1100), "{slept:?}");
        assert!(slept >= Duration::from_millis(500), "{slept:?}");
    }

    #[test]
    fn auto_tune_lowers_an_idle_rate_and_raises_a_busy_one() {
        let r = RateLimiter::with_tuning(10_000_000, true);
        assert_eq!(r.rate(), 5_000_000);
        std::thread::sleep(TUNE_PERIOD + WINDOW);
        r.request(1);
        assert!(r.rate() < 5_000_000, "idle: {}", r.rate());
        let low = r.rate();
        // Saturate: every window has a request that waits.
        let t = Instant::now();
        while t.elapsed() < TUNE_PERIOD * 2 + WINDOW {
            r.request(low / 20);
        }
        assert!(r.rate() > low, "busy: {} <= {low}", r.rate());
    }
}
