//! Write stalls (RocksDB's `WriteController`): which throttle applies to the
//! next write group, and the delayed write rate that paces writes while a
//! slowdown holds. See docs/WRITE-STALLS.md.
//!
//! Three causes, each with a slowdown and a stop threshold per column family:
//! - **L0**: level-0 files at `level0_slowdown_trigger` / `level0_stop_trigger`;
//! - **pending**: estimated pending compaction bytes at the soft / hard limit;
//! - **memtable**: immutable memtables waiting for a flush. Slowdown when the
//!   next memtable switch would have to stop (every other memtable is still
//!   unflushed) and the active one is half full, or, with more than three
//!   memtables, one memtable before the stop (RocksDB's rule); stop when the
//!   active memtable is full and none is free.
//!
//! A slowdown paces write groups at the delayed write rate: each group's
//! bytes push `next_at` forward by bytes / rate and the next leader sleeps
//! until then (at most [`MAX_DELAY`] per group, so a slowdown never looks
//! like a stop). The rate starts at `Options::delayed_write_rate` and is
//! recomputed whenever the debt may have changed (a flush, compaction or
//! memtable switch was installed, or every [`RECALC`] while delayed): times
//! 0.8 when the debt grew, 0.6 near a stop or after one, times 1.25 when the
//! debt shrank, within [`MIN_RATE`, max]. Stops (waiting for background work
//! with no write admitted) come only at the stop thresholds, and L0 and
//! pending-bytes stops apply only to a write that needs a memtable switch:
//! writes into the current memtable add no level-0 file.
use super::State;
use crate::stats::Stats;
use std::time::{Duration, Instant};

/// The lowest delayed write rate (RocksDB's `kMinWriteRate`).
pub(crate) const MIN_RATE: f64 = 16.0 * 1024.0;
/// The longest a slowdown delays one write group.
pub(crate) const MAX_DELAY: Duration = Duration::from_millis(200);
/// How often the rate is recomputed while delayed, even without a version change.
pub(crate) const RECALC: Duration = Duration::from_millis(100);

/// What made writers wait.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cause {
    L0,
    Pending,
    Memtable,
}

/// The throttles that apply right now, over every column family.
#[derive(Debug, Default)]
pub(crate) struct Pressure {
    /// A stop threshold reached by L0 files or pending bytes.
    pub stop: Option<Cause>,
    /// The slowdown cause with the highest pressure (0..=1).
    pub slowdown: Option<(Cause, f64)>,
    /// Some memtable is full (or `force`): the write must switch memtables.
    pub need_switch: bool,
    /// ... and no memtable is free: stop until a flush finishes.
    pub too_many_imms: bool,
    /// Work that compaction and flushes owe, in bytes (see `pressure`).
    pub debt: u64,
    /// Pressure of L0 or pending bytes at 0.8 or more of the way to the stop.
    pub near_stop: bool,
    /// A throttle is due to compaction debt (L0 or pending bytes).
    pub compaction_debt: bool,
}

impl Pressure {
    fn slow(&mut self, cause: Cause, p: f64) {
        let p = p.clamp(0.0, 1.0);
        if self.slowdown.is_none_or(|(_, q)| p > q) {
            self.slowdown = Some((cause, p));
        }
        if cause != Cause::Memtable {
            self.compaction_debt = true;
            self.near_stop |= p >= 0.8;
        }
    }
}

/// Evaluates every column family's throttles.
pub(crate) fn pressure(st: &State, force: bool) -> Pressure {
    let mut p = Pressure {
        need_switch: force,
        ..Default::default()
    };
    for (id, cf) in st.cfs.iter() {
        let Some(v) = st.versions.cfs.get(id) else {
            continue;
        };
        let o = &cf.opts;
        let l0 = v.current.levels[0].len();
        let pending = super::bg::pending_compaction_bytes(&v.current, o);
        let wbs = o.write_buffer_size as u64;
        p.debt += pending + l0 as u64 * wbs;
        if l0 >= o.level0_stop_trigger {
            // Writes into the current memtable go on, paced as hard as a
            // slowdown can; a memtable switch stops.
            p.stop = Some(Cause::L0);
            p.slow(Cause::L0, 1.0);
        } else if l0 >= o.level0_slowdown_trigger {
            let span = (o.level0_stop_trigger - o.level0_slowdown_trigger).max(1) as f64;
            p.slow(
                Cause::L0,
                (l0 - o.level0_slowdown_trigger + 1) as f64 / span,
            );
        }
        if pending >= o.hard_pending_compaction_bytes {
            p.stop = p.stop.or(Some(Cause::Pending));
            p.slow(Cause::Pending, 1.0);
        } else if pending >= o.soft_pending_compaction_bytes {
            let span =
                (o.hard_pending_compaction_bytes - o.soft_pending_compaction_bytes).max(1) as f64;
            p.slow(
                Cause::Pending,
                (pending - o.soft_pending_compaction_bytes) as f64 / span,
            );
        }
        let mwbn = o.max_write_buffer_number.max(2);
        let mem = cf.mem.approximate_size() as u64;
        let fill = mem as f64 / wbs.max(1) as f64;
        if mwbn > 3 && cf.imms.len() + 2 >= mwbn {
            // RocksDB's rule: slow down one memtable before the stop.
            p.slow(Cause::Memtable, 0.5 + fill / 2.0);
            p.debt += cf.imms.len() as u64 * wbs + mem;
        } else if cf.imms.len() + 1 >= mwbn && fill >= 0.5 {
            // The next switch would stop: slow down over the second half
            // of the active memtable, so a slow flush is felt gradually.
            p.slow(Cause::Memtable, (fill - 0.5) * 2.0);
            p.debt += cf.imms.len() as u64 * wbs + mem;
        }
        if mem >= wbs {
            p.need_switch = true;
            if cf.imms.len() + 1 >= mwbn {
                p.too_many_imms = true;
            }
        }
    }
    p
}

/// The delayed write rate's state (under the state lock).
#[derive(Debug)]
pub(crate) struct Delay {
    /// A slowdown or stop holds: write groups are paced.
    pub active: bool,
    /// Bytes per second while active.
    pub rate: f64,
    /// The next write group may start at this time.
    pub next_at: Instant,
    /// Debt at the last recomputation.
    pub prev_debt: u64,
    /// `State::stall_epoch` at the last recomputation.
    pub seen_epoch: u64,
    /// Recompute at this time even without a version change.
    pub recalc_at: Instant,
    /// A stop happened since the last recomputation.
    pub was_stopped: bool,
}

impl Delay {
    pub(crate) fn new() -> Delay {
        let now = Instant::now();
        Delay {
            active: false,
            rate: 0.0,
            next_at: now,
            prev_debt: 0,
            seen_epoch: 0,
            recalc_at: now,
            was_stopped: false,
        }
    }

    /// Starts, adjusts or ends the delay for the current pressure.
    pub(crate) fn update(&mut self, p: &Pressure, epoch: u64, max_rate: f64, stats: &Stats) {
        if p.slowdown.is_none() && p.stop.is_none() && !(p.need_switch && p.too_many_imms) {
            if self.active {
                self.active = false;
                Stats::set(&stats.delayed_write_rate, 0);
            }
            return;
        }
        let now = Instant::now();
        if self.active && self.seen_epoch == epoch && now < self.recalc_at {
            return;
        }
        let max_rate = max_rate.max(MIN_RATE);
        if !self.active {
            self.active = true;
            self.rate = max_rate;
            self.next_at = now;
        } else if p.near_stop || self.was_stopped {
            self.rate *= 0.6;
        } else if p.debt > self.prev_debt {
            self.rate *= 0.8;
        } else if p.debt < self.prev_debt {
            self.rate *= 1.25;
        }
        self.rate = self.rate.clamp(MIN_RATE, max_rate);
        self.prev_debt = p.debt;
        self.was_stopped = false;
        self.seen_epoch = epoch;
        self.recalc_at = now + RECALC;
        Stats::set(&stats.delayed_write_rate, self.rate as u64);
    }

    /// Charges a write group of `bytes` to the rate.
    pub(crate) fn charge(&mut self, bytes: usize) {
        if !self.active || self.rate <= 0.0 {
            return;
        }
        let now = Instant::now();
        let start = self.next_at.max(now);
        let next = start + Duration::from_secs_f64(bytes as f64 / self.rate);
        self.next_at = next.min(now + MAX_DELAY);
    }
}

/// Adds a wait of `micros` to the total and to its cause's counter.
pub(crate) fn record_wait(stats: &Stats, cause: Cause, micros: u64) {
    Stats::add(&stats.stall_micros, micros);
    let c = match cause {
        Cause::L0 => &stats.stall_l0_micros,
        Cause::Pending => &stats.stall_pending_micros,
        Cause::Memtable => &stats.stall_memtable_micros,
    };
    Stats::add(c, micros);
}

/// Counts a write group slowed (`stop` false) or stopped by `cause`.
pub(crate) fn record_event(stats: &Stats, cause: Cause, stop: bool) {
    let (total, c) = match (cause, stop) {
        (Cause::L0, false) => (&stats.slowdowns, &stats.stall_l0_slowdowns),
        (Cause::L0, true) => (&stats.stops, &stats.stall_l0_stops),
        (Cause::Pending, false) => (&stats.slowdowns, &stats.stall_pending_slowdowns),
        (Cause::Pending, true) => (&stats.stops, &stats.stall_pending_stops),
        (Cause::Memtable, false) => (&stats.slowdowns, &stats.stall_memtable_slowdowns),
        (Cause::Memtable, true) => (&stats.stops, &stats.stall_memtable_stops),
    };
    Stats::add(total, 1);
    Stats::add(c, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow(debt: u64) -> Pressure {
        Pressure {
            slowdown: Some((Cause::L0, 0.5)),
            debt,
            compaction_debt: true,
            ..Default::default()
        }
    }

    #[test]
    fn rate_falls_while_debt_grows_and_recovers_as_it_shrinks() {
        let stats = Stats::default();
        let mut d = Delay::new();
        let max = 1_000_000.0;
        d.update(&slow(100), 1, max, &stats);
        assert!(d.active);
        assert_eq!(d.rate, max);
        d.update(&slow(200), 2, max, &stats);
        assert_eq!(d.rate, max * 0.8);
        // No version change, no recalculation time yet: unchanged.
        d.update(&slow(300), 2, max, &stats);
        assert_eq!(d.rate, max * 0.8);
        d.update(&slow(300), 3, max, &stats);
        assert!((d.rate - max * 0.64).abs() < 1.0);
        let mut near = slow(300);
        near.near_stop = true;
        d.update(&near, 4, max, &stats);
        assert!((d.rate - max * 0.384).abs() < 1.0);
        d.update(&slow(100), 5, max, &stats);
        assert!((d.rate - max * 0.48).abs() < 1.0);
        assert_eq!(
            stats
                .delayed_write_rate
                .load(std::sync::atomic::Ordering::Relaxed),
            d.rate as u64
        );
        for e in 6..40 {
            d.update(&slow(100 - e), e, max, &stats);
        }
        assert_eq!(d.rate, max, "recovers up to the configured rate");
        for e in 40..200 {
            d.update(&slow(e * 1000), e, max, &stats);
        }
        assert_eq!(d.rate, MIN_RATE, "never below the minimum");
        d.update(&Pressure::default(), 200, max, &stats);
        assert!(!d.active);
        assert_eq!(
            stats
                .delayed_write_rate
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );
    }

    #[test]
    fn pacing_spaces_groups_by_their_bytes_and_caps_one_wait() {
        let stats = Stats::default();
        let mut d = Delay::new();
        d.update(&slow(1), 1, 1_000_000.0, &stats);
        let t = Instant::now();
        d.charge(100_000); // 100 ms at 1 MB/s
        let ahead = d.next_at.saturating_duration_since(t);
        assert!(ahead >= Duration::from_millis(90) && ahead <= Duration::from_millis(110));
        d.charge(10_000_000); // 10 s, capped
        assert!(d.next_at.saturating_duration_since(Instant::now()) <= MAX_DELAY);
    }
}
