//! Operations on whole files: ingestion of externally built tables (the
//! basis of bulk load; `bulk.rs` writes them). Checkpoints are in `checkpoint.rs`.
use super::{ColumnFamily, Db};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::{self, Comparator, ValueKind};
use crate::options::{CfOptions, NUM_LEVELS};
use crate::sstable::{Table, TableBuilder, TableOptions};
use crate::version::{NewFile, VersionEdit};
use std::path::Path;
use std::sync::Arc;

/// Builds a table to ingest: keys must be added in increasing order
/// (RocksDB's `SstFileWriter`). Entries carry sequence number 0.
pub struct SstFileWriter {
    builder: Option<TableBuilder>,
    cmp: Comparator,
    pub(super) last: Vec<u8>,
    pub(super) any: bool,
    scratch: Vec<u8>,
}

impl SstFileWriter {
    /// Starts a table at `path` with a column family's table options.
    pub fn create(fs: &dyn crate::vfs::Fs, path: &Path, opts: &CfOptions) -> Result<SstFileWriter> {
        let topts = TableOptions {
            cmp: opts.comparator,
            block_size: opts.block_size,
            restart_interval: opts.block_restart_interval,
            bloom_bits: opts.bloom_bits_per_key,
            prefix_len: opts.prefix_len,
            compression: opts.compression_for(NUM_LEVELS - 1, true),
        };
        Ok(SstFileWriter {
            builder: Some(TableBuilder::new(fs.create(path)?, topts)),
            cmp: opts.comparator,
            last: Vec::new(),
            any: false,
            scratch: Vec::new(),
        })
    }

    /// Bytes written so far (an estimate of the finished file's size).
    pub fn file_size(&self) -> u64 {
        self.builder.as_ref().map_or(0, |b| b.file_size())
    }

    /// Whether a writer splitting its keys into files should start the next
    /// one (`TableBuilder::full`: `target_size` bytes or the filter's key cap).
    pub fn full(&self, target_size: u64) -> bool {
        self.builder.as_ref().is_some_and(|b| b.full(target_size))
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.builder.as_ref().map_or(0, |b| b.num_entries())
    }

    /// Adds a key; keys must be strictly increasing.
    pub fn put(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        if self.any && self.cmp.compare(&self.last, k) != std::cmp::Ordering::Less {
            return Err(Error::InvalidArgument(
                "SstFileWriter: keys must be added in increasing order".into(),
            ));
        }
        self.any = true;
        self.last.clear();
        self.last.extend_from_slice(k);
        key::make_internal_key(&mut self.scratch, k, 0, ValueKind::Value);
        self.builder
            .as_mut()
            .ok_or(Error::Closed)?
            .add(&self.scratch, v)
    }

    /// Finishes and syncs the file.
    pub fn finish(mut self) -> Result<()> {
        self.builder
            .take()
            .ok_or(Error::Closed)?
            .finish()
            .map(|_| ())
    }
}

impl Db {
    /// Ingests tables written by [`SstFileWriter`] into a column family, all
    /// of them in one manifest record (after a crash either every file is
    /// in or none is). No file is ever rewritten: each is hard-linked (or
    /// copied across file systems) into the database directory outside the
    /// state lock, then published under it in O(1). A file whose key range
    /// overlaps nothing in the column family (no table at any level, no
    /// memtable, no other file of the call) is added with sequence number
    /// 0 at the lowest level no compaction is busy on; any other file goes
    /// into level 0 with a fresh global sequence number (RocksDB's): the
    /// manifest records it and every entry of the file reads with it, so
    /// the file wins over what it overwrites (files of one call
    /// overlapping each other: the later one wins). Source files are left
    /// in place, but a hard-linked one shares its data with the table: the
    /// caller must not write into a source path after the call (replacing
    /// it, by a rename or a remove and create, is safe). Files holding
    /// range deletions, or a user key twice, are refused.
    pub fn ingest(&self, cf: ColumnFamily, paths: &[&Path]) -> Result<()> {
        self.ingest_inner(cf, paths, false, false)
    }

    /// As [`Db::ingest`], but entries are never visible to a snapshot that is
    /// live when the files are added: with any snapshot live, every file
    /// takes a global sequence number newer than every snapshot, as an
    /// overlapping one does, since entries with sequence number 0 would
    /// show through every snapshot. A file that overlaps nothing still goes
    /// to its free level (no other version of its keys exists, so no level
    /// order is at stake), not into level 0, from where compactions would
    /// rewrite it down to the last level. It costs no rewrite either way.
    pub fn ingest_after_snapshots(&self, cf: ColumnFamily, paths: &[&Path]) -> Result<()> {
        self.ingest_inner(cf, paths, true, false)
    }

    /// The options of column family `cf`.
    pub(super) fn cf_options(&self, cf: ColumnFamily) -> Result<Arc<CfOptions>> {
        let st = self.inner.lock();
        st.cfs
            .get(&cf.0)
            .map(|c| c.opts.clone())
            .ok_or_else(|| Error::InvalidArgument(format!("no column family {}", cf.0)))
    }

    /// `own`: files this process just wrote with a `BulkWriter`, which
    /// checked their keys' order as it wrote them: their bounds are read
    /// from their first and last entries (RocksDB's ingestion, without
    /// `verify_checksums_before_ingest`), not by reading every entry.
    pub(super) fn ingest_inner(
        &self,
        cf: ColumnFamily,
        paths: &[&Path],
        after_snapshots: bool,
        own: bool,
    ) -> Result<()> {
        let opts = self.cf_options(cf)?;
        // Make memtable contents visible to the overlap check.
        self.flush()?;
        let files = open_ingested(self.inner.fs.as_ref(), &opts, &self.inner.stats, paths, own)?;
        if files.is_empty() {
            return Ok(());
        }
        let among = overlapping_among(opts.comparator, &files);
        // Into the database directory under numbers of their own, outside
        // the state lock (a copy across file systems takes its time).
        let linked = Linked::new(self, &files)?;
        let hook = self
            .inner
            .ingest_hook
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(h) = hook {
            h();
        }
        let mut flushes = 0;
        loop {
            let mut st = self.inner.lock();
            // Wait until no write group is in flight, so that sequence
            // numbers taken here are published in order.
            while st.wal.is_none() {
                st = self.inner.wait_writers(st);
            }
            // A write into the files' range since the flush above sits in a
            // memtable with an older sequence number than the one the files
            // are about to get, and reads trust a memtable over every table:
            // flush it first, as RocksDB does (bounded: a range written
            // without pause is refused).
            if mems_overlap(&st, cf, &files)? {
                drop(st);
                flushes += 1;
                if flushes > 8 {
                    return Err(Error::Busy(
                        "ingestion: the files' key range is being written; retry".into(),
                    ));
                }
                self.flush()?;
                continue;
            }
            let (levels, _) = free_levels(&st, cf, &files, &among)?;
            // Checked under the lock that also orders new snapshots after this.
            let snapshots_live = after_snapshots && !st.snapshots.is_empty();
            // Every file is checked before any sequence number is taken.
            for ((_, t, _, _), level) in files.iter().zip(&levels) {
                if level.is_none() && t.properties().largest_seq != 0 {
                    return Err(Error::InvalidArgument(format!(
                        "ingested file {} holds sequence numbers: it cannot be placed over existing data",
                        t.name()
                    )));
                }
            }
            let mut added = Vec::with_capacity(files.len());
            let mut max_seq = 0;
            for (((_, t, smallest, largest), level), (number, size)) in
                files.iter().zip(levels).zip(&linked.files)
            {
                let p = t.properties();
                let mut f = NewFile {
                    number: *number,
                    size: *size,
                    smallest: smallest.clone(),
                    largest: largest.clone(),
                    num_entries: p.num_entries,
                    num_deletions: p.num_deletions,
                    num_range_deletions: p.num_range_deletions,
                    ..Default::default()
                };
                let level = match level {
                    Some(l) if !snapshots_live => l,
                    // A file over older data goes into level 0 (it must be
                    // read before what it overwrites); one that overlaps
                    // nothing keeps its free level even with a number of
                    // its own (it only hides from older snapshots), so that
                    // it is not rewritten by a compaction.
                    level => {
                        // In call order: a later file wins over an earlier
                        // one it overlaps.
                        st.versions.last_sequence += 1;
                        let g = st.versions.last_sequence;
                        f.global_seq = g;
                        f.smallest_seq = g;
                        f.largest_seq = g;
                        f.smallest = key::with_seq(smallest, g);
                        f.largest = key::with_seq(largest, g);
                        max_seq = g;
                        crate::stats::Stats::add(&self.inner.stats.ingested_global_seqno_files, 1);
                        level.unwrap_or(0)
                    }
                };
                added.push((level, f));
            }
            let edit = VersionEdit {
                cf: cf.0,
                added,
                ..Default::default()
            };
            let r = self.inner.log_and_apply(&mut st, edit);
            if let Err(e @ Error::InvalidArgument(_)) = r {
                // Refused before anything was logged (the column family
                // was dropped): the linked files are removed.
                return Err(e);
            }
            // Whatever else log_and_apply returns, the record may be on
            // disk (a failed sync after the append) or applied and synced
            // (a failed manifest roll): the files stay (open's orphan sweep
            // removes them if no manifest names them), and the database is
            // in its error state already (`Inner::log_and_apply`).
            linked.keep();
            // The files read with sequence numbers up to `max_seq` if the
            // version holds them; none else has those numbers.
            st.visible_seq = st.visible_seq.max(max_seq);
            r?;
            crate::stats::Stats::add(&self.inner.stats.ingested_files, files.len() as u64);
            self.inner.bg_cv.notify_all();
            return Ok(());
        }
    }

    /// Sets (or clears) a function called once an ingestion has linked its
    /// files in, before it takes the state lock to publish them: tests use
    /// it to act in the middle of an ingestion (writers must not be held
    /// up by it).
    #[doc(hidden)]
    pub fn set_ingest_hook(&self, hook: Option<super::IngestHook>) {
        *self
            .inner
            .ingest_hook
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = hook;
    }
}

/// A file to ingest: (path, table, smallest internal key, largest internal key).
type Ingested = (std::path::PathBuf, Arc<Table>, Vec<u8>, Vec<u8>);

/// Opens the files to ingest and reads their key ranges (empty files are
/// left out).
fn open_ingested(
    fs: &dyn crate::vfs::Fs,
    opts: &CfOptions,
    stats: &Arc<crate::stats::Stats>,
    paths: &[&Path],
    own: bool,
) -> Result<Vec<Ingested>> {
    use crate::iter::InternalIterator;
    let mut files = Vec::with_capacity(paths.len());
    for p in paths {
        let name = p.display().to_string();
        let t = Table::open(
            fs.open(p)?,
            &name,
            opts.comparator,
            None,
            stats.clone(),
            opts.prefix_len,
            true,
        )?;
        let t = Arc::new(t);
        let props = t.properties();
        // A file's bounds come from its point keys: a range tombstone
        // could reach past them (or be all the file holds), and a get
        // consults only files whose bounds hold the key.
        if props.num_range_deletions > 0 || !t.range_tombstones().is_empty() {
            return Err(Error::InvalidArgument(format!(
                "ingested file {name} holds range deletions: not supported"
            )));
        }
        // Every entry of a file without sequence numbers reads with one
        // number (0 or its global one): a user key twice would be two
        // identical internal keys. Checked entry by entry (outside the
        // state lock), which also reads every block's checksum.
        let distinct_seqs = props.largest_seq != 0;
        let mut it = t.iter(false);
        it.seek_to_first();
        if !it.valid() {
            it.status()?;
            continue;
        }
        let smallest = it.key().to_vec();
        if own {
            it.seek_to_last();
            if !it.valid() {
                it.status()?;
                return Err(Error::InvalidArgument(format!(
                    "ingested file {name}: no last entry"
                )));
            }
            let largest = it.key().to_vec();
            files.push((p.to_path_buf(), t, smallest, largest));
            continue;
        }
        let mut largest = smallest.clone();
        it.next();
        while it.valid() {
            let k = it.key();
            match opts
                .comparator
                .compare(key::user_key(&largest), key::user_key(k))
            {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal if distinct_seqs => {}
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "ingested file {name}: user keys are not strictly increasing"
                    )))
                }
            }
            largest.clear();
            largest.extend_from_slice(k);
            it.next();
        }
        it.status()?;
        files.push((p.to_path_buf(), t, smallest, largest));
    }
    Ok(files)
}

/// Whether each file overlaps another file of the call.
fn overlapping_among(cmp: Comparator, files: &[Ingested]) -> Vec<bool> {
    let mut among = vec![false; files.len()];
    for i in 0..files.len() {
        for j in 0..i {
            let (a, b) = (&files[i], &files[j]);
            let apart = cmp.compare(key::user_key(&a.3), key::user_key(&b.2))
                == std::cmp::Ordering::Less
                || cmp.compare(key::user_key(&b.3), key::user_key(&a.2))
                    == std::cmp::Ordering::Less;
            if !apart {
                among[i] = true;
                among[j] = true;
            }
        }
    }
    among
}

/// The files of an ingestion linked (or copied) into the database
/// directory as tables: (number, size) each. Removed again when dropped,
/// unless published (`keep`).
struct Linked<'a> {
    db: &'a Db,
    files: Vec<(u64, u64)>,
    kept: bool,
}

impl<'a> Linked<'a> {
    fn new(db: &'a Db, files: &[Ingested]) -> Result<Linked<'a>> {
        let fs = db.inner.fs.clone();
        let mut l = Linked {
            db,
            files: Vec::with_capacity(files.len()),
            kept: false,
        };
        for (p, _, _, _) in files {
            let number = db.inner.lock().versions.new_file_number();
            let dst = filename::table(&db.inner.dir, number);
            // Listed first: a failed copy is removed too.
            l.files.push((number, 0));
            if fs.link(p, &dst).is_ok() {
                // The link shares the caller's inode, whose data its
                // writer may not have synced: durable before the manifest
                // names it (cheap if `SstFileWriter::finish` synced it).
                fs.sync_file(&dst)?;
            } else {
                let data = fs.read_all(p)?;
                crate::vfs::write_file_synced(fs.as_ref(), &dst, &data)?;
            }
            let size = fs.file_size(&dst)?;
            if let Some(last) = l.files.last_mut() {
                last.1 = size;
            }
        }
        // The new files' directory entries must be durable before the
        // manifest names them.
        fs.sync_dir(&db.inner.dir)?;
        Ok(l)
    }

    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Linked<'_> {
    fn drop(&mut self) {
        if !self.kept {
            for (n, _) in &self.files {
                let _ = self
                    .db
                    .inner
                    .fs
                    .remove(&filename::table(&self.db.inner.dir, *n));
            }
        }
    }
}

/// The level each file could take with sequence number 0 (None: it must
/// go into level 0 with a global one), as the state is now. Entries keep
/// sequence number 0 only if nothing else holds a key in their range: no
/// table at any level (a table below with a higher sequence number would
/// win in iterators and compactions) and no memtable. They then go to the
/// lowest level above every level a compaction is busy on (its outputs may
/// span the range); so does such a file given a global sequence number
/// because snapshots are live (`ingest_after_snapshots`).
fn free_levels(
    st: &super::State,
    cf: ColumnFamily,
    files: &[Ingested],
    among: &[bool],
) -> Result<(Vec<Option<usize>>, Arc<crate::version::Version>)> {
    let v = st
        .versions
        .cfs
        .get(&cf.0)
        .map(|c| c.current.clone())
        .ok_or(Error::Closed)?;
    let mut free_level = None;
    for l in 0..NUM_LEVELS {
        if v.levels[l].iter().any(|f| f.is_compacting()) {
            break;
        }
        free_level = Some(l);
    }
    let c = st.cfs.get(&cf.0).ok_or(Error::Closed)?;
    let mems: Vec<_> = std::iter::once(c.mem.clone())
        .chain(c.imms.iter().cloned())
        .collect();
    let cmp = v.cmp;
    let levels = files
        .iter()
        .enumerate()
        .map(|(i, (_, _, smallest, largest))| {
            let (lo, hi) = (key::user_key(smallest), key::user_key(largest));
            let in_mems = mems.iter().any(|m| mem_overlaps(m, cmp, lo, hi));
            let in_tables = (0..NUM_LEVELS).any(|l| !v.overlapping(l, lo, hi).is_empty());
            if in_mems || in_tables || among[i] {
                None
            } else {
                free_level
            }
        })
        .collect();
    Ok((levels, v))
}

/// True if a memtable of `cf` holds an entry in the range of any of `files`.
fn mems_overlap(st: &super::State, cf: ColumnFamily, files: &[Ingested]) -> Result<bool> {
    let c = st.cfs.get(&cf.0).ok_or(Error::Closed)?;
    let cmp = c.opts.comparator;
    Ok(std::iter::once(&c.mem).chain(c.imms.iter()).any(|m| {
        files.iter().any(|(_, _, smallest, largest)| {
            mem_overlaps(m, cmp, key::user_key(smallest), key::user_key(largest))
        })
    }))
}

/// True if a memtable holds a point entry or a range tombstone in the
/// user-key range `[lo, hi]`.
fn mem_overlaps(m: &Arc<crate::memtable::MemTable>, cmp: Comparator, lo: &[u8], hi: &[u8]) -> bool {
    use crate::iter::InternalIterator;
    use std::cmp::Ordering;
    let mut it = m.iter();
    it.seek(&key::internal_key(lo, key::MAX_SEQ, key::KIND_FOR_SEEK));
    if it.valid() && cmp.compare(key::user_key(it.key()), hi) != Ordering::Greater {
        return true;
    }
    m.range_tombstones().iter().any(|t| {
        cmp.compare(&t.start, hi) != Ordering::Greater
            && cmp.compare(&t.end, lo) == Ordering::Greater
    })
}
