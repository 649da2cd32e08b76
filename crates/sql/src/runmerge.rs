//! Sorted runs on disk and their merge, shared by the two external sorts:
//! `sort::Sorter` (ORDER BY, rows of values) and `keysort::KeySorter` (bulk
//! loads and index builds, encoded keys). A sort spills its sorted memory as a
//! run (a temporary file, unlinked at once, so it vanishes with the statement
//! or the process); each sort says how its entries are written, read back and
//! ordered (`RunFormat`).
//!
//! Merging: a binary heap of run heads ordered by (entry, run number), so equal
//! entries come from the earlier run (whose entries were pushed first): a
//! stable sort. Each run holds a descriptor until merged. A sort of fewer than
//! `MAX_RUNS` runs writes each entry once and merges every run at the end; at
//! `MAX_RUNS` runs, `FAN_IN` neighbouring runs of the lowest level that has
//! that many are merged into one run of the next level (in place: the runs
//! stay in push order), so at most `MAX_RUNS` run files are open, whatever the
//! input size, and each entry is written O(log_FAN_IN(runs)) times.
//!
//! Memory beyond the sort's budget: merging, a 64 KiB read buffer per run
//! (`MAX_RUNS` of them at most: 8 MiB) and a 256 KiB write buffer for the
//! merged run; spilling, the 256 KiB write buffer.
//!
//! A merge polls the sort's `Interrupt` (KILL, max_statement_time). A merge
//! during a spill that fails (an I/O error, an interruption) has consumed its
//! runs: the sort is then broken and fails every later spill and merge.
use crate::error::{Result, SqlError};
use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};

/// Sorts that wrote runs to disk and merged them (MySQL's `Sort_merge_passes`, roughly).
pub static MERGE_PASSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Runs merged at once into one of the next level.
pub const FAN_IN: usize = 32;

/// Most runs a sort holds (open files): reaching it merges `FAN_IN` of them.
pub const MAX_RUNS: usize = 128;

/// Fails once the statement must stop (KILL): polled by long merges.
pub type Interrupt = std::sync::Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// Entries between two polls of an `Interrupt`.
pub(crate) const POLL_EVERY: u64 = 4096;

/// How a sort's entries are stored in a run and ordered.
pub(crate) trait RunFormat {
    type Entry: Default;
    /// Appends `e` to a run.
    fn write(&self, w: &mut RunWriter<'_>, e: &Self::Entry) -> Result<()>;
    /// Reads the next entry of a run into `e` (the caller knows one is left).
    fn read(&self, r: &mut BufReader<File>, e: &mut Self::Entry) -> Result<()>;
    /// The sort's order of two entries (ties: the run order decides).
    fn cmp(&self, a: &Self::Entry, b: &Self::Entry) -> Ordering;
}

/// Where a run's entries are written.
pub(crate) type RunWriter<'a> = BufWriter<&'a mut File>;

/// A sorted run on disk: its file (already unlinked), entry count, and level
/// (0: spilled from memory; n + 1: merged from `FAN_IN` runs of level n at most).
struct Run {
    file: File,
    n: u64,
    level: u32,
}

/// The runs of one sort, in push order.
#[derive(Default)]
pub(crate) struct Runs {
    runs: Vec<Run>,
    /// Only this many first entries can be wanted (a top-N sort): merged runs
    /// keep no more.
    keep: Option<u64>,
    /// Runs spilled from memory so far.
    spilled: usize,
    /// The most run files open at once so far.
    peak_open: usize,
    /// Polled while merging.
    interrupt: Option<Interrupt>,
    /// Merges done before the final one (while spilling).
    early_merges: usize,
    /// A merge while spilling failed, its runs lost: the sort is unusable.
    broken: bool,
}

impl Runs {
    pub fn new(keep: Option<u64>) -> Runs {
        Runs {
            keep,
            ..Runs::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Runs spilled from memory so far.
    pub fn spilled(&self) -> usize {
        self.spilled
    }

    /// The most run files that were open at once so far.
    pub fn peak_open(&self) -> usize {
        self.peak_open
    }

    /// Polls `check` while merging (every `POLL_EVERY` entries).
    pub fn set_interrupt(&mut self, check: Interrupt) {
        self.interrupt = Some(check);
    }

    /// The check to poll, if any.
    pub fn interrupt(&self) -> Option<&Interrupt> {
        self.interrupt.as_ref()
    }

    /// Merges done while spilling (before the final merge).
    pub fn early_merges(&self) -> usize {
        self.early_merges
    }

    /// Drops every run.
    pub fn clear(&mut self) {
        self.runs.clear();
        self.broken = false;
    }

    fn check_broken(&self) -> Result<()> {
        if self.broken {
            return Err(SqlError::internal(
                "sort abandoned after a failed merge of its runs",
            ));
        }
        Ok(())
    }

    /// Adds a run spilled from memory: `fill` writes its entries, in order, and
    /// says how many it wrote. Merges runs once there are `MAX_RUNS`.
    pub fn spill<F: RunFormat>(
        &mut self,
        fmt: &F,
        fill: impl FnOnce(&mut RunWriter<'_>) -> Result<u64>,
    ) -> Result<()> {
        self.check_broken()?;
        self.peak_open = self.peak_open.max(self.runs.len() + 1);
        let run = write_run(0, fill)?;
        self.runs.push(run);
        self.spilled += 1;
        let r = self.merge_some(fmt);
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    /// While there are `MAX_RUNS` runs: merges `FAN_IN` neighbouring ones
    /// into one, in their place (see [`Runs::group`]).
    fn merge_some<F: RunFormat>(&mut self, fmt: &F) -> Result<()> {
        while self.runs.len() >= MAX_RUNS {
            let start = self.group();
            self.peak_open = self.peak_open.max(self.runs.len() + 1);
            let group: Vec<Run> = self.runs.drain(start..start + FAN_IN).collect();
            let level = group.iter().map(|r| r.level).max().unwrap_or(0) + 1;
            let keep = self.keep.unwrap_or(u64::MAX);
            let run = write_run(level, |w| {
                let mut n = 0u64;
                merge(group, fmt, self.interrupt.as_ref(), &mut |e| {
                    fmt.write(w, e)?;
                    n += 1;
                    Ok(n < keep)
                })?;
                Ok(n)
            })?;
            self.runs.insert(start, run);
            self.early_merges += 1;
        }
        Ok(())
    }

    /// Where the `FAN_IN` runs to merge start: the first `FAN_IN` of the
    /// lowest level that has that many in a row (the levels only fall along
    /// the list, so these are the smallest runs: each entry is rewritten once
    /// per level, as in a tiered merge), else the last `FAN_IN`.
    fn group(&self) -> usize {
        let mut found = None;
        let mut i = 0;
        while i < self.runs.len() {
            let level = self.runs[i].level;
            let j = i + self.runs[i..]
                .iter()
                .take_while(|r| r.level == level)
                .count();
            if j - i >= FAN_IN && found.is_none_or(|(l, _)| level < l) {
                found = Some((level, i));
            }
            i = j;
        }
        found.map_or(self.runs.len().saturating_sub(FAN_IN), |(_, i)| i)
    }

    /// Calls `f` with every entry of the runs in order, equal entries in run
    /// order, until it returns false (`f` may take the entry).
    pub fn merge<F: RunFormat>(
        &mut self,
        fmt: &F,
        f: &mut dyn FnMut(&mut F::Entry) -> Result<bool>,
    ) -> Result<()> {
        self.check_broken()?;
        MERGE_PASSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        merge(
            std::mem::take(&mut self.runs),
            fmt,
            self.interrupt.as_ref(),
            f,
        )
    }
}

/// Writes a run of level `level`: `fill` writes its entries and says how many.
fn write_run(level: u32, fill: impl FnOnce(&mut RunWriter<'_>) -> Result<u64>) -> Result<Run> {
    let mut file = temp_file()?;
    let n = {
        let mut w = BufWriter::with_capacity(256 << 10, &mut file);
        let n = fill(&mut w)?;
        w.flush().map_err(io_err)?;
        n
    };
    rewind_run(&mut file)?;
    Ok(Run { file, n, level })
}

/// A run's next entry in the merge heap.
struct Head<'a, F: RunFormat> {
    fmt: &'a F,
    /// The run's place in push order: breaks ties between equal entries.
    run: usize,
    r: BufReader<File>,
    /// Entries of the run not read yet.
    left: u64,
    entry: F::Entry,
}

impl<F: RunFormat> Head<'_, F> {
    /// Reads the run's next entry; false at its end.
    fn next(&mut self) -> Result<bool> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        self.fmt.read(&mut self.r, &mut self.entry)?;
        Ok(true)
    }
}

impl<F: RunFormat> Ord for Head<'_, F> {
    fn cmp(&self, o: &Self) -> Ordering {
        // `BinaryHeap` pops its greatest: the least (entry, run) must be it.
        self.fmt
            .cmp(&self.entry, &o.entry)
            .then(self.run.cmp(&o.run))
            .reverse()
    }
}

impl<F: RunFormat> PartialOrd for Head<'_, F> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl<F: RunFormat> PartialEq for Head<'_, F> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}

impl<F: RunFormat> Eq for Head<'_, F> {}

/// Calls `f` with the entries of `runs` (in push order) in order, equal
/// entries in run order, until it returns false; polls `check`.
fn merge<F: RunFormat>(
    runs: Vec<Run>,
    fmt: &F,
    check: Option<&Interrupt>,
    f: &mut dyn FnMut(&mut F::Entry) -> Result<bool>,
) -> Result<()> {
    let mut n = 0u64;
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (run, r) in runs.into_iter().enumerate() {
        let mut h = Head {
            fmt,
            run,
            r: BufReader::with_capacity(64 << 10, r.file),
            left: r.n,
            entry: F::Entry::default(),
        };
        if h.next()? {
            heap.push(h);
        }
    }
    while let Some(mut top) = heap.peek_mut() {
        n += 1;
        if let Some(c) = check.filter(|_| n.is_multiple_of(POLL_EVERY)) {
            c()?;
        }
        if !f(&mut top.entry)? {
            break;
        }
        if !top.next()? {
            PeekMut::pop(top);
        }
    }
    Ok(())
}

pub(crate) fn io_err(e: std::io::Error) -> SqlError {
    // ER_ERROR_ON_WRITE-like: the sort could not use its temporary file.
    SqlError::engine(format!(
        "error {} (sort run file: {e})",
        e.raw_os_error().unwrap_or(0)
    ))
}

/// A run just written, ready to be read back from its start, and out of the
/// page cache meanwhile: a memory limit (a cgroup) counts dirty page cache, so
/// hundreds of megabytes of spilled rows would count as the server's memory.
/// Reading the run back brings in clean pages, which are reclaimable.
fn rewind_run(file: &mut File) -> Result<()> {
    file.sync_data().map_err(io_err)?;
    lsm::vfs::drop_page_cache(file);
    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
    Ok(())
}

/// A new temporary file, already unlinked.
fn temp_file() -> Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    for _ in 0..16 {
        let path = dir.join(format!(
            "strata-sort-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(e)),
        }
    }
    Err(SqlError::internal("cannot create a sort run file"))
}
