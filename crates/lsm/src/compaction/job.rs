//! Runs a compaction (or a flush): merges input iterators and writes output
//! tables, dropping entries no reader can see.
//!
//! Visibility uses snapshot "stripes": live snapshots s1 < s2 < ... cut the
//! sequence space; an entry is visible to the first snapshot at or above its
//! sequence. Of the versions of a key within one stripe only the newest is
//! kept. A point tombstone that is the newest version in the oldest stripe
//! is dropped when no deeper level can hold the key. An entry covered by a
//! range tombstone of the same stripe is dropped; range tombstones are
//! dropped at the bottom once every snapshot sees them. A value that every
//! snapshot sees, with nothing older below it, is written with sequence 0
//! at the bottom (its sequence can no longer matter; zeros compress).
//!
//! A SingleDelete followed, in its stripe, by the Put it deletes: the Put
//! is dropped. The SingleDelete goes too only when nothing older for the key
//! follows in the input and no deeper level can hold the key; otherwise it
//! stays and acts as a Delete (older deletions of the key may already have
//! been dropped as shadowed by that Put, so it is what hides older data).
//!
//! A compaction filter (`filter.rs`) is offered each value kept that is the
//! newest version of its key and newer than every live snapshot; a value it
//! removes becomes a Delete at the same sequence number and is then treated
//! as any other point tombstone.
use crate::compaction::filter::{CompactionFilter, Decision};
use crate::error::{Error, Result};
use crate::filename;
use crate::iter::InternalIterator;
use crate::key::{self, Comparator, SeqNo, ValueKind};
use crate::options::CfOptions;
use crate::range_del::{RangeTombstone, Tombstones};
use crate::rate_limit::Pacer;
use crate::sstable::table::BlockCache;
use crate::sstable::{TableBuilder, TableOptions};
use crate::version::{NewFile, Version};
use crate::vfs::Fs;
use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

/// Where and how to write outputs.
pub struct OutputSpec<'a> {
    /// File system.
    pub fs: &'a Arc<dyn Fs>,
    /// Database directory.
    pub dir: &'a Path,
    /// Column family options.
    pub opts: &'a CfOptions,
    /// Output level (chooses compression).
    pub level: usize,
    /// Output is the bottommost data for its range.
    pub bottommost: bool,
    /// Live snapshots, ascending.
    pub snapshots: &'a [SeqNo],
    /// Split outputs at this size (u64::MAX = one file).
    pub target_file_size: u64,
    /// Version used to decide if a key exists below the output level.
    pub version: Option<&'a Version>,
    /// Throttle for background writes.
    pub rate_limiter: Option<Pacer<'a>>,
    /// The compaction filter of this job (None for flushes).
    pub filter: Option<&'a dyn CompactionFilter>,
    /// Put each output's data blocks into this block cache as they are
    /// written, under the output's file number (`prepopulate_block_cache`).
    pub block_cache: Option<&'a Arc<BlockCache>>,
}

/// Creates output table `n`.
fn new_builder(spec: &OutputSpec<'_>, topts: &TableOptions, n: u64) -> Result<TableBuilder> {
    let f = spec.fs.create(&filename::table(spec.dir, n))?;
    let b = TableBuilder::new(f, topts.clone());
    Ok(match spec.block_cache {
        Some(c) => b.with_block_cache(c.clone(), n),
        None => b,
    })
}

fn stripe(snapshots: &[SeqNo], seq: SeqNo) -> usize {
    snapshots.partition_point(|s| *s < seq)
}

fn clip(
    cmp: Comparator,
    ts: &[RangeTombstone],
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Vec<RangeTombstone> {
    let mut out = Vec::new();
    for t in ts {
        let start = match lo {
            Some(l) if cmp.compare(&t.start, l) == Ordering::Less => l.to_vec(),
            _ => t.start.clone(),
        };
        let end = match hi {
            Some(h) if cmp.compare(&t.end, h) == Ordering::Greater => h.to_vec(),
            _ => t.end.clone(),
        };
        if cmp.compare(&start, &end) == Ordering::Less {
            out.push(RangeTombstone {
                start,
                end,
                seq: t.seq,
            });
        }
    }
    out
}

/// True if some level below `level` may hold `user_key`.
fn exists_below(v: &Version, level: usize, user_key: &[u8]) -> bool {
    (level + 1..v.levels.len()).any(|l| {
        // Levels below 0 are sorted and disjoint: binary search.
        let files = &v.levels[l];
        let i =
            files.partition_point(|f| v.cmp.compare(f.largest_user(), user_key) == Ordering::Less);
        files
            .get(i)
            .is_some_and(|f| v.cmp.compare(user_key, f.smallest_user()) != Ordering::Less)
    })
}

/// Appends one entry to the current output, opening a new table if needed,
/// and pays the rate limiter for every MiB written.
fn add_entry(
    builder: &mut Option<(u64, TableBuilder)>,
    spec: &OutputSpec<'_>,
    topts: &TableOptions,
    new_number: &mut dyn FnMut() -> u64,
    ikey: &[u8],
    value: &[u8],
    limited: &mut u64,
) -> Result<()> {
    if builder.is_none() {
        let n = new_number();
        *builder = Some((n, new_builder(spec, topts, n)?));
        *limited = 0;
    }
    if let Some((_, b)) = builder.as_mut() {
        b.add(ikey, value)?;
        if let Some(r) = &spec.rate_limiter {
            let sz = b.file_size();
            if sz > *limited + (1 << 20) {
                r.pay(sz - *limited);
                *limited = sz;
            }
        }
    }
    Ok(())
}

/// Merges `input` (positioned anywhere) into new tables. `new_number`
/// allocates file numbers. Returns the files written; `filtered` counts the
/// values the compaction filter removed.
pub fn write_table_from_iter(
    input: &mut dyn InternalIterator,
    tombstones: Vec<RangeTombstone>,
    spec: &OutputSpec<'_>,
    new_number: &mut dyn FnMut() -> u64,
    bytes_written: &mut u64,
    filtered: &mut u64,
) -> Result<Vec<NewFile>> {
    let cmp = spec.opts.comparator;
    let tombs = Tombstones::new(cmp, tombstones, crate::key::MAX_SEQ);
    let oldest = spec.snapshots.first().copied().unwrap_or(SeqNo::MAX);
    let mut zeroed = Vec::new();
    // Range tombstones kept in the output.
    let kept: Vec<RangeTombstone> = tombs
        .list()
        .iter()
        .filter(|t| !(spec.bottommost && t.seq <= oldest))
        .cloned()
        .collect();
    let topts = TableOptions {
        cmp,
        block_size: spec.opts.block_size,
        restart_interval: spec.opts.block_restart_interval,
        bloom_bits: spec.opts.bloom_bits_per_key,
        prefix_len: spec.opts.prefix_len,
        compression: spec.opts.compression_for(spec.level, spec.bottommost),
    };
    let mut outputs = Vec::new();
    let mut builder: Option<(u64, TableBuilder)> = None;
    let mut lower: Option<Vec<u8>> = None; // first user key of the current output
    let mut cur_key: Vec<u8> = Vec::new();
    let mut have_key = false;
    let mut prev_stripe = usize::MAX;
    let mut limited = 0u64;
    let mut pending_sd: Option<(Vec<u8>, usize)> = None;
    // A SingleDelete whose Put was dropped, kept unless nothing older for
    // the key follows (in the input or below the output level).
    let mut pending_cancel: Option<Vec<u8>> = None;
    let older_below = |sd: &[u8]| {
        spec.version
            .is_none_or(|v| exists_below(v, spec.level, key::user_key(sd)))
    };

    let finish = |b: (u64, TableBuilder),
                  lo: Option<&[u8]>,
                  hi: Option<&[u8]>,
                  out: &mut Vec<NewFile>,
                  written: &mut u64|
     -> Result<()> {
        let (n, mut tb) = b;
        for t in clip(cmp, &kept, lo, hi) {
            tb.add_range_tombstone(t);
        }
        if tb.num_entries() == 0 {
            let _ = spec.fs.remove(&filename::table(spec.dir, n));
            return Ok(());
        }
        let info = tb.finish()?;
        *written += info.file_size;
        out.push(NewFile {
            number: n,
            size: info.file_size,
            smallest: info.smallest,
            largest: info.largest,
            smallest_seq: info.props.smallest_seq,
            largest_seq: info.props.largest_seq,
            num_entries: info.props.num_entries,
            num_deletions: info.props.num_deletions,
            num_range_deletions: info.props.num_range_deletions,
            // Outputs hold their entries' effective numbers.
            global_seq: 0,
        });
        Ok(())
    };

    input.seek_to_first();
    while input.valid() {
        let ikey = input.key();
        let Some(p) = key::parse_internal_key(ikey) else {
            return Err(Error::corruption(
                "",
                0,
                "compaction input: malformed internal key",
            ));
        };
        let new_key = !have_key || cmp.compare(p.user_key, &cur_key) != Ordering::Equal;
        let s = stripe(spec.snapshots, p.seq);
        // A SingleDelete waiting to see the entry below it: when that entry is
        // the Put it deletes (same key, same stripe), both vanish.
        if let Some(sd) = pending_cancel.take() {
            if !new_key || older_below(&sd) {
                add_entry(
                    &mut builder,
                    spec,
                    &topts,
                    new_number,
                    &sd,
                    &[],
                    &mut limited,
                )?;
            }
        }
        if let Some((sd, sd_stripe)) = pending_sd.take() {
            if !new_key && p.kind == ValueKind::Value && s == sd_stripe {
                pending_cancel = Some(sd);
                prev_stripe = s;
                input.next();
                continue;
            }
            add_entry(
                &mut builder,
                spec,
                &topts,
                new_number,
                &sd,
                &[],
                &mut limited,
            )?;
        }
        if new_key {
            // Cut the output only between user keys; a flush (no target
            // size) writes one file.
            if let Some((_, b)) = &builder {
                if spec.target_file_size != u64::MAX && b.full(spec.target_file_size) {
                    let b = builder.take().ok_or(Error::Closed)?;
                    finish(
                        b,
                        lower.as_deref(),
                        Some(p.user_key),
                        &mut outputs,
                        bytes_written,
                    )?;
                    lower = Some(p.user_key.to_vec());
                }
            }
            cur_key.clear();
            cur_key.extend_from_slice(p.user_key);
            have_key = true;
            prev_stripe = usize::MAX;
        }
        let mut drop = s == prev_stripe; // shadowed by a newer version in its stripe
        if !drop && p.kind == ValueKind::RangeDelete {
            drop = true;
        }
        if !drop && !tombs.is_empty() {
            let upper = spec.snapshots.get(s).copied().unwrap_or(SeqNo::MAX);
            if tombs.max_covering_between(p.user_key, p.seq, upper) > p.seq {
                drop = true;
            }
        }
        // The filter sees only the newest version of the key, and only when
        // no snapshot can read it (the newest stripe).
        let mut kind = p.kind;
        if !drop
            && kind == ValueKind::Value
            && s == spec.snapshots.len()
            && spec.filter.is_some_and(|f| {
                f.filter(spec.level, p.user_key, input.value()) == Decision::Remove
            })
        {
            kind = ValueKind::Delete;
            *filtered += 1;
        }
        if !drop
            && matches!(kind, ValueKind::Delete | ValueKind::SingleDelete)
            && p.seq <= oldest
            && spec.bottommost
            && !spec
                .version
                .is_some_and(|v| exists_below(v, spec.level, p.user_key))
        {
            drop = true;
        }
        prev_stripe = s;
        if !drop && kind != p.kind {
            // Filtered: a tombstone hides what may lie below.
            key::make_internal_key(&mut zeroed, p.user_key, p.seq, ValueKind::Delete);
            add_entry(
                &mut builder,
                spec,
                &topts,
                new_number,
                &zeroed,
                &[],
                &mut limited,
            )?;
        } else if !drop {
            if p.kind == ValueKind::SingleDelete {
                pending_sd = Some((ikey.to_vec(), s));
            } else {
                // A value that is the only version any reader can see, with
                // nothing older below it, no longer needs its sequence
                // number: zero trailers compress to almost nothing (RocksDB
                // does the same at the bottommost level), 5-6 bytes per
                // entry with LZ4.
                let zero = p.kind == ValueKind::Value
                    && p.seq != 0
                    && p.seq <= oldest
                    && spec.bottommost
                    && !spec
                        .version
                        .is_some_and(|v| exists_below(v, spec.level, p.user_key));
                let out_key = if zero {
                    key::make_internal_key(&mut zeroed, p.user_key, 0, ValueKind::Value);
                    &zeroed[..]
                } else {
                    ikey
                };
                add_entry(
                    &mut builder,
                    spec,
                    &topts,
                    new_number,
                    out_key,
                    input.value(),
                    &mut limited,
                )?;
            }
        }
        input.next();
    }
    input.status()?;
    if let Some(sd) = pending_cancel.take() {
        if older_below(&sd) {
            add_entry(
                &mut builder,
                spec,
                &topts,
                new_number,
                &sd,
                &[],
                &mut limited,
            )?;
        }
    }
    if let Some((sd, _)) = pending_sd.take() {
        add_entry(
            &mut builder,
            spec,
            &topts,
            new_number,
            &sd,
            &[],
            &mut limited,
        )?;
    }
    if builder.is_none() && !kept.is_empty() {
        let n = new_number();
        builder = Some((n, new_builder(spec, &topts, n)?));
    }
    if let Some(b) = builder.take() {
        finish(b, lower.as_deref(), None, &mut outputs, bytes_written)?;
    }
    Ok(outputs)
}

/// Runs a compaction's merge; see [`write_table_from_iter`].
pub fn run_compaction(
    input: &mut dyn InternalIterator,
    tombstones: Vec<RangeTombstone>,
    spec: &OutputSpec<'_>,
    new_number: &mut dyn FnMut() -> u64,
    bytes_written: &mut u64,
    filtered: &mut u64,
) -> Result<Vec<NewFile>> {
    write_table_from_iter(input, tombstones, spec, new_number, bytes_written, filtered)
}
