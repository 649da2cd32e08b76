//! Chooses the next compaction of a column family, RocksDB style:
//! - level targets are sized bottom-up (`dynamic_level_bytes`): the last
//!   level holds most data and each level above is 1/multiplier of the one
//!   below; level 0 compacts into the first level with a target (the base);
//! - each level gets a score (L0: files / trigger; others: bytes / target);
//!   the highest score >= 1 wins; within a level the file whose overlap
//!   with the next level is smallest relative to its size is picked;
//! - files already being compacted are skipped, so several compactions can
//!   run in parallel on disjoint key ranges;
//! - a single file with nothing under it in the next level is moved, not
//!   rewritten (trivial move);
//! - when no level is over its target, a file whose entries are mostly
//!   tombstones is compacted down so that scans stop wading through them.
use crate::key::SeqNo;
use crate::options::{CfOptions, NUM_LEVELS};
use crate::version::{FileMeta, Version};
use std::cmp::Ordering;
use std::sync::Arc;

/// A chosen compaction.
#[derive(Clone)]
pub struct Compaction {
    /// Input level.
    pub level: usize,
    /// Output level.
    pub output_level: usize,
    /// Files from `level`.
    pub inputs: Vec<Arc<FileMeta>>,
    /// Overlapping files from `output_level` (empty if same as `level`).
    pub next: Vec<Arc<FileMeta>>,
    /// No level below the output holds data in the key range.
    pub bottommost: bool,
    /// Move the single input file instead of rewriting it.
    pub trivial_move: bool,
    /// Why it was picked.
    pub reason: &'static str,
}

impl Compaction {
    /// Every input file.
    pub fn all_files(&self) -> impl Iterator<Item = &Arc<FileMeta>> {
        self.inputs.iter().chain(self.next.iter())
    }
    /// Input bytes.
    pub fn input_bytes(&self) -> u64 {
        self.all_files().map(|f| f.size()).sum()
    }
}

/// Level targets.
#[derive(Debug, Clone)]
pub struct LevelTargets {
    /// The level L0 compacts into.
    pub base_level: usize,
    /// Target bytes per level (0 for L0 and unused levels).
    pub target: [u64; NUM_LEVELS],
}

/// Computes level targets.
pub fn targets(v: &Version, o: &CfOptions) -> LevelTargets {
    let last = NUM_LEVELS - 1;
    let mult = o.max_bytes_for_level_multiplier.max(2);
    let base = o.max_bytes_for_level_base.max(1);
    let mut target = [0u64; NUM_LEVELS];
    if !o.dynamic_level_bytes {
        target[1] = base;
        for l in 2..NUM_LEVELS {
            target[l] = target[l - 1].saturating_mul(mult);
        }
        return LevelTargets {
            base_level: 1,
            target,
        };
    }
    let max_size = (1..NUM_LEVELS).map(|l| v.level_size(l)).max().unwrap_or(0);
    let mut base_level = last;
    let mut t = max_size.max(base);
    while base_level > 1 && t > base {
        t /= mult;
        base_level -= 1;
    }
    // Respect data already living above the computed base level.
    let first_non_empty = (1..NUM_LEVELS)
        .find(|l| !v.levels[*l].is_empty())
        .unwrap_or(last);
    let base_level = base_level.min(first_non_empty).max(1);
    let mut size = max_size.max(base);
    for l in (base_level..=last).rev() {
        target[l] = size.max(1);
        size /= mult;
    }
    LevelTargets { base_level, target }
}

fn range_of(v: &Version, files: &[Arc<FileMeta>]) -> (Vec<u8>, Vec<u8>) {
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for f in files {
        if lo.is_none_or(|l| v.cmp.compare(f.smallest_user(), l) == Ordering::Less) {
            lo = Some(f.smallest_user());
        }
        if hi.is_none_or(|h| v.cmp.compare(f.largest_user(), h) == Ordering::Greater) {
            hi = Some(f.largest_user());
        }
    }
    (
        lo.unwrap_or_default().to_vec(),
        hi.unwrap_or_default().to_vec(),
    )
}

/// True if no level below `output_level` overlaps `[lo, hi]`.
pub fn is_bottommost(v: &Version, output_level: usize, lo: &[u8], hi: &[u8]) -> bool {
    (output_level + 1..NUM_LEVELS).all(|l| v.overlapping(l, lo, hi).is_empty())
}

fn any_compacting(files: &[Arc<FileMeta>]) -> bool {
    files.iter().any(|f| f.is_compacting())
}

fn disjoint(v: &Version, files: &[Arc<FileMeta>]) -> bool {
    let mut sorted: Vec<&Arc<FileMeta>> = files.iter().collect();
    sorted.sort_by(|a, b| v.cmp.compare(a.smallest_user(), b.smallest_user()));
    sorted
        .windows(2)
        .all(|w| v.cmp.compare(w[0].largest_user(), w[1].smallest_user()) == Ordering::Less)
}

/// Builds a compaction of `inputs` at `level` into `output_level`, or None
/// if an overlapping file is busy.
pub fn build(
    v: &Version,
    level: usize,
    output_level: usize,
    inputs: Vec<Arc<FileMeta>>,
    reason: &'static str,
) -> Option<Compaction> {
    if inputs.is_empty() || any_compacting(&inputs) {
        return None;
    }
    let (lo, hi) = range_of(v, &inputs);
    let next = if output_level == level {
        Vec::new()
    } else {
        v.overlapping(output_level, &lo, &hi)
    };
    if any_compacting(&next) {
        return None;
    }
    let mut all = inputs.clone();
    all.extend(next.iter().cloned());
    let (lo, hi) = range_of(v, &all);
    let bottommost = is_bottommost(v, output_level, &lo, &hi);
    // Move instead of rewriting when nothing in the output level overlaps and
    // the inputs do not overlap each other (sequential loads: L0 files too).
    let trivial_move = output_level > level && next.is_empty() && disjoint(v, &inputs);
    Some(Compaction {
        level,
        output_level,
        inputs,
        next,
        bottommost,
        trivial_move,
        reason,
    })
}

/// The next compaction for `v`, if any is due. `oldest_snapshot` bounds
/// which tombstones a bottom-level rewrite could drop.
pub fn pick(v: &Version, o: &CfOptions, oldest_snapshot: SeqNo) -> Option<Compaction> {
    let t = targets(v, o);
    let last = NUM_LEVELS - 1;
    // Scores.
    let mut scores: Vec<(f64, usize)> = Vec::new();
    let l0 = v.levels[0].len();
    if l0 > 0 {
        scores.push((l0 as f64 / o.level0_compaction_trigger.max(1) as f64, 0));
    }
    for l in t.base_level..last {
        let size: u64 = v.levels[l]
            .iter()
            .filter(|f| !f.is_compacting())
            .map(|f| f.size())
            .sum();
        if t.target[l] > 0 {
            scores.push((size as f64 / t.target[l] as f64, l));
        }
    }
    scores.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(Ordering::Equal));
    for (score, level) in scores {
        if score < 1.0 {
            break;
        }
        if level == 0 {
            if any_compacting(&v.levels[0]) {
                continue;
            }
            if let Some(c) = build(v, 0, t.base_level, v.levels[0].clone(), "L0 file count") {
                return Some(c);
            }
            continue;
        }
        // Pick the file with the least overlap in the next level per byte.
        let mut best: Option<(f64, Compaction)> = None;
        for f in &v.levels[level] {
            if f.is_compacting() {
                continue;
            }
            if let Some(c) = build(v, level, level + 1, vec![f.clone()], "level size") {
                let overlap: u64 = c.next.iter().map(|x| x.size()).sum();
                let ratio = overlap as f64 / f.size().max(1) as f64;
                if best.as_ref().is_none_or(|(r, _)| ratio < *r) {
                    best = Some((ratio, c));
                }
            }
        }
        if let Some((_, c)) = best {
            return Some(c);
        }
    }
    // Tombstone-dense files.
    if o.tombstone_compaction_ratio > 0.0 {
        for level in 1..NUM_LEVELS {
            for f in &v.levels[level] {
                if f.is_compacting()
                    || f.tombstone_ratio() < o.tombstone_compaction_ratio
                    || f.info.num_entries < 64
                {
                    continue;
                }
                let out = if level == last { last } else { level + 1 };
                if out == level && f.info.largest_seq > oldest_snapshot {
                    continue; // a snapshot still needs its tombstones
                }
                if let Some(mut c) = build(v, level, out, vec![f.clone()], "tombstone density") {
                    c.trivial_move = false;
                    return Some(c);
                }
            }
        }
    }
    None
}

/// Estimated bytes compaction must rewrite to bring every level under its
/// target (RocksDB's `estimated-pending-compaction-bytes`).
pub fn pending_compaction_bytes(v: &Version, o: &CfOptions) -> u64 {
    let t = targets(v, o);
    let mut total = 0u64;
    if v.levels[0].len() >= o.level0_compaction_trigger {
        total += v.level_size(0) + v.level_size(t.base_level);
    }
    let mult = o.max_bytes_for_level_multiplier.max(2);
    for l in t.base_level..NUM_LEVELS - 1 {
        let s = v.level_size(l);
        if s > t.target[l] {
            total += (s - t.target[l]) * (mult + 1);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, Comparator, ValueKind};
    use crate::version::{NewFile, VersionEdit};

    fn file(n: u64, lo: &str, hi: &str, size: u64) -> NewFile {
        NewFile {
            number: n,
            size,
            smallest: internal_key(lo.as_bytes(), n, ValueKind::Value),
            largest: internal_key(hi.as_bytes(), n, ValueKind::Value),
            largest_seq: n,
            num_entries: 100,
            ..Default::default()
        }
    }

    fn version(files: Vec<(usize, NewFile)>) -> Version {
        let d: crate::version::Deleter = Arc::new(|_| {});
        Version::new(Comparator::Bytewise).apply(
            &VersionEdit {
                added: files,
                ..Default::default()
            },
            &d,
        )
    }

    #[test]
    fn l0_compacts_into_base_level() {
        let o = CfOptions::default();
        let v = version((1..=4).map(|i| (0, file(i, "a", "m", 1 << 20))).collect());
        let c = pick(&v, &o, u64::MAX).expect("L0 at trigger");
        assert_eq!((c.level, c.output_level), (0, 6));
        assert_eq!(c.inputs.len(), 4);
        assert!(c.bottommost);
        let v = version((1..=3).map(|i| (0, file(i, "a", "m", 1 << 20))).collect());
        assert!(pick(&v, &o, u64::MAX).is_none());
    }

    #[test]
    fn dynamic_targets_and_trivial_move() {
        let o = CfOptions::default();
        // 3 GB in L6: L5 targets ~300 MB, L4 ~30 MB and is the base level.
        let v = version(vec![
            (6, file(1, "a", "z", 3 << 30)),
            (5, file(2, "a", "b", 400 << 20)),
        ]);
        let t = targets(&v, &o);
        assert_eq!(t.base_level, 4);
        assert_eq!(t.target[5], (3u64 << 30) / 10);
        let c = pick(&v, &o, u64::MAX).expect("L5 over target");
        assert_eq!((c.level, c.output_level), (5, 6));
        assert!(!c.trivial_move);
        let v = version(vec![
            (6, file(1, "m", "z", 3 << 30)),
            (5, file(2, "a", "b", 400 << 20)),
        ]);
        let c = pick(&v, &o, u64::MAX).unwrap();
        assert!(c.trivial_move);
    }

    #[test]
    fn busy_files_are_skipped() {
        let o = CfOptions::default();
        let v = version((1..=4).map(|i| (0, file(i, "a", "m", 1 << 20))).collect());
        v.levels[0][0]
            .being_compacted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(pick(&v, &o, u64::MAX).is_none());
    }
}
