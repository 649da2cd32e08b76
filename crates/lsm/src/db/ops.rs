//! Operations on whole files: ingestion of externally built tables (the
//! basis of bulk load). Checkpoints are in `checkpoint.rs`.
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
    last: Vec<u8>,
    any: bool,
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

/// Tables being written in the database directory for one ingestion
/// (`Db::bulk_writer`): keys in increasing order, cut into files of about
/// the column family's target file size. The files are temporary (`*.tmp`:
/// removed at the next open if a crash leaves them) until `ingest`, which
/// links them in and removes the temporary names; dropped unfinished, they
/// are removed.
pub struct BulkWriter {
    db: Db,
    cf: ColumnFamily,
    opts: Arc<CfOptions>,
    cur: Option<(std::path::PathBuf, SstFileWriter)>,
    done: Vec<std::path::PathBuf>,
    entries: u64,
    /// The last key of the files finished so far.
    prev_last: Option<Vec<u8>>,
}

impl BulkWriter {
    /// Adds an entry; keys must be strictly increasing across all files.
    pub fn put(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        if self.cur.is_none() {
            let number = self.db.inner.lock().versions.new_file_number();
            let p = self.db.inner.dir.join(format!("bulk-{number:06}.sst.tmp"));
            let mut w = SstFileWriter::create(self.db.inner.fs.as_ref(), &p, &self.opts)?;
            // Keys stay increasing across files.
            if let Some(l) = self.prev_last.take() {
                w.last = l;
                w.any = true;
            }
            self.cur = Some((p, w));
        }
        let Some((_, w)) = self.cur.as_mut() else {
            return Err(Error::Closed);
        };
        w.put(k, v)?;
        self.entries += 1;
        if w.file_size() >= self.opts.target_file_size {
            self.close_file()?;
        }
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some((p, mut w)) = self.cur.take() {
            self.done.push(p);
            self.prev_last = Some(std::mem::take(&mut w.last));
            w.finish()?;
        }
        Ok(())
    }

    /// Finishes the last file and ingests them all (`Db::ingest`): into
    /// the last level as they are when their key range holds nothing yet.
    pub fn ingest(self) -> Result<u64> {
        BulkWriter::ingest_all(vec![self])
    }

    /// Finishes and ingests the files of several writers of one database
    /// and column family in one manifest record: after a crash all of them
    /// are in or none. Returns the entries ingested.
    pub fn ingest_all(writers: Vec<BulkWriter>) -> Result<u64> {
        BulkWriter::ingest_all_inner(writers, false)
    }

    /// As [`BulkWriter::ingest_all`], but snapshots taken before the ingestion
    /// do not see its entries (see [`Db::ingest_after_snapshots`]): for loads
    /// that must look like a committed transaction to REPEATABLE READ readers.
    pub fn ingest_all_after_snapshots(writers: Vec<BulkWriter>) -> Result<u64> {
        BulkWriter::ingest_all_inner(writers, true)
    }

    fn ingest_all_inner(mut writers: Vec<BulkWriter>, after_snapshots: bool) -> Result<u64> {
        let Some(first) = writers.first() else {
            return Ok(0);
        };
        let (db, cf) = (first.db.clone(), first.cf);
        let mut entries = 0;
        for w in writers.iter_mut() {
            if w.cf != cf || !Arc::ptr_eq(&w.db.inner, &db.inner) {
                return Err(Error::InvalidArgument(
                    "bulk writers of different column families".into(),
                ));
            }
            w.close_file()?;
            entries += w.entries;
        }
        let paths: Vec<&Path> = writers
            .iter()
            .flat_map(|w| w.done.iter().map(|p| p.as_path()))
            .collect();
        db.ingest_inner(cf, &paths, after_snapshots)?;
        Ok(entries)
    }
}

impl Drop for BulkWriter {
    fn drop(&mut self) {
        if let Some((p, _)) = self.cur.take() {
            let _ = self.db.inner.fs.remove(&p);
        }
        for p in &self.done {
            let _ = self.db.inner.fs.remove(p);
        }
    }
}

impl Db {
    /// Starts writing tables to ingest into `cf` (see [`BulkWriter`]).
    pub fn bulk_writer(&self, cf: ColumnFamily) -> Result<BulkWriter> {
        let opts = {
            let st = self.inner.lock();
            st.cfs
                .get(&cf.0)
                .map(|c| c.opts.clone())
                .ok_or_else(|| Error::InvalidArgument(format!("no column family {}", cf.0)))?
        };
        Ok(BulkWriter {
            db: self.clone(),
            cf,
            opts,
            cur: None,
            done: Vec::new(),
            entries: 0,
            prev_last: None,
        })
    }

    /// Ingests tables written by [`SstFileWriter`] into a column family, all
    /// of them in one manifest record (after a crash either every file is
    /// in or none is). A file whose key range overlaps nothing in the column
    /// family (no table at any level, no memtable, no other file of the
    /// call) is added as is, with sequence number 0, at the lowest level no
    /// compaction is busy on; any other file is rewritten with a new
    /// sequence number into level 0 so that it wins over what it
    /// overwrites (files of one call overlapping each other: the later one
    /// wins). Files are hard-linked (copied across file systems) and left
    /// in place.
    pub fn ingest(&self, cf: ColumnFamily, paths: &[&Path]) -> Result<()> {
        self.ingest_inner(cf, paths, false)
    }

    /// As [`Db::ingest`], but entries are never visible to a snapshot that is
    /// live when the files are added: with any snapshot live, every file is
    /// rewritten with a fresh sequence number (into level 0) as an
    /// overlapping one is, since entries with sequence number 0 would show
    /// through every snapshot. Without snapshots it costs nothing more.
    pub fn ingest_after_snapshots(&self, cf: ColumnFamily, paths: &[&Path]) -> Result<()> {
        self.ingest_inner(cf, paths, true)
    }

    fn ingest_inner(&self, cf: ColumnFamily, paths: &[&Path], after_snapshots: bool) -> Result<()> {
        use crate::iter::InternalIterator;
        let fs = self.inner.fs.clone();
        let opts = {
            let st = self.inner.lock();
            st.cfs
                .get(&cf.0)
                .map(|c| c.opts.clone())
                .ok_or_else(|| Error::InvalidArgument(format!("no column family {}", cf.0)))?
        };
        // Make memtable contents visible to the overlap check.
        self.flush()?;
        // (path, table, smallest internal key, largest internal key)
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            let name = p.display().to_string();
            let t = Table::open(
                fs.open(p)?,
                &name,
                opts.comparator,
                None,
                self.inner.stats.clone(),
                opts.prefix_len,
                true,
            )?;
            let t = Arc::new(t);
            let mut it = t.iter(false);
            it.seek_to_first();
            if !it.valid() {
                it.status()?;
                continue;
            }
            let smallest = it.key().to_vec();
            it.seek_to_last();
            let largest = it.key().to_vec();
            it.status()?;
            files.push((p.to_path_buf(), t, smallest, largest));
        }
        if files.is_empty() {
            return Ok(());
        }
        let cmp = opts.comparator;
        // Whether each file overlaps another file of the call.
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
        // Sequence numbers and file numbers are taken under the state lock,
        // but files are rewritten outside it (writers go on meanwhile), then
        // added under it if nothing they were placed against changed; else
        // again, and the third time with the lock held throughout.
        let mut flushes = 0;
        for attempt in 0.. {
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
            let plan = plan_ingest(&mut st, cf, &files, &among, after_snapshots)?;
            if plan.iter().any(|p| p.level.is_none()) && attempt < 2 {
                drop(st);
                let added = self.place_files(&opts, &files, &plan);
                let st = self.inner.lock();
                let added = added?;
                if !still_valid(&st, cf, &files, &among, after_snapshots, &plan)? {
                    drop(st);
                    for (_, f) in &added {
                        let _ = fs.remove(&filename::table(&self.inner.dir, f.number));
                    }
                    continue;
                }
                return self.publish_ingested(st, cf, added, &plan);
            }
            let added = self.place_files(&opts, &files, &plan)?;
            return self.publish_ingested(st, cf, added, &plan);
        }
        Ok(())
    }

    /// Links or rewrites each file as `plan` says (see `ingest`).
    fn place_files(
        &self,
        opts: &CfOptions,
        files: &[Ingested],
        plan: &[Placed],
    ) -> Result<Vec<(usize, NewFile)>> {
        use crate::iter::InternalIterator;
        let fs = self.inner.fs.clone();
        let mut added = Vec::with_capacity(files.len());
        for ((p, t, smallest, largest), pl) in files.iter().zip(plan) {
            let dst = filename::table(&self.inner.dir, pl.number);
            let info = match pl.level {
                Some(_) => {
                    if fs.link(p, &dst).is_err() {
                        let data = fs.read_all(p)?;
                        crate::vfs::write_file_synced(fs.as_ref(), &dst, &data)?;
                    }
                    NewFile {
                        number: pl.number,
                        size: fs.file_size(&dst)?,
                        smallest: smallest.clone(),
                        largest: largest.clone(),
                        smallest_seq: 0,
                        largest_seq: 0,
                        num_entries: t.properties().num_entries,
                        num_deletions: t.properties().num_deletions,
                        num_range_deletions: t.properties().num_range_deletions,
                    }
                }
                None => {
                    // Rewritten with its sequence number, into level 0.
                    let seq = pl.seq;
                    let topts = TableOptions {
                        cmp: opts.comparator,
                        block_size: opts.block_size,
                        restart_interval: opts.block_restart_interval,
                        bloom_bits: opts.bloom_bits_per_key,
                        prefix_len: opts.prefix_len,
                        compression: opts.compression_for(0, false),
                    };
                    let hook = self
                        .inner
                        .ingest_hook
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    if let Some(h) = hook {
                        h();
                    }
                    let mut b = TableBuilder::new(fs.create(&dst)?, topts);
                    let mut k = Vec::new();
                    let mut it = t.iter(false);
                    it.seek_to_first();
                    while it.valid() {
                        key::make_internal_key(
                            &mut k,
                            key::user_key(it.key()),
                            seq,
                            ValueKind::Value,
                        );
                        b.add(&k, it.value())?;
                        it.next();
                    }
                    it.status()?;
                    let ti = b.finish()?;
                    NewFile {
                        number: pl.number,
                        size: ti.file_size,
                        smallest: ti.smallest,
                        largest: ti.largest,
                        smallest_seq: seq,
                        largest_seq: seq,
                        num_entries: ti.props.num_entries,
                        num_deletions: 0,
                        num_range_deletions: 0,
                    }
                }
            };
            added.push((pl.level.unwrap_or(0), info));
        }
        Ok(added)
    }

    /// Adds the placed files in one manifest record.
    fn publish_ingested(
        &self,
        mut st: std::sync::MutexGuard<'_, super::State>,
        cf: ColumnFamily,
        added: Vec<(usize, NewFile)>,
        plan: &[Placed],
    ) -> Result<()> {
        // The new files' directory entries must be durable before the
        // manifest names them.
        self.inner.fs.sync_dir(&self.inner.dir)?;
        let max_seq = plan.iter().map(|p| p.seq).max().unwrap_or(0);
        let edit = VersionEdit {
            cf: cf.0,
            added,
            ..Default::default()
        };
        self.inner.log_and_apply(&mut st, edit)?;
        st.visible_seq = st.visible_seq.max(max_seq);
        self.inner.bg_cv.notify_all();
        Ok(())
    }

    /// Sets (or clears) a function called while an ingestion rewrites a
    /// file with a fresh sequence number, outside the state lock: tests
    /// use it to check that writers are not held up by an ingestion.
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

/// Where an ingested file goes: `level` with sequence number 0, or
/// (None) rewritten with `seq` into level 0; as table `number`. `seen`:
/// the numbers of the tables overlapping it when it was placed.
struct Placed {
    level: Option<usize>,
    number: u64,
    seq: u64,
    seen: Vec<u64>,
}

/// The file numbers of the tables of `v` whose user-key range meets `[lo, hi]`.
fn overlapping_tables(v: &crate::version::Version, lo: &[u8], hi: &[u8]) -> Vec<u64> {
    let cmp = v.cmp;
    let mut out: Vec<u64> = v
        .levels
        .iter()
        .flatten()
        .filter(|f| {
            cmp.compare(f.smallest_user(), hi) != std::cmp::Ordering::Greater
                && cmp.compare(f.largest_user(), lo) != std::cmp::Ordering::Less
        })
        .map(|f| f.number())
        .collect();
    out.sort_unstable();
    out
}

/// The level each file could take with sequence number 0 (None: it must
/// be rewritten), as the state is now. Entries keep sequence number 0 only
/// if nothing else holds a key in their range: no table at any level (a
/// table below with a higher sequence number would win in iterators and
/// compactions) and no memtable. They then go to the lowest level above
/// every level a compaction is busy on (its outputs may span the range).
fn free_levels(
    st: &super::State,
    cf: ColumnFamily,
    files: &[Ingested],
    among: &[bool],
    after_snapshots: bool,
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
    // Checked under the lock that also orders new snapshots after this.
    let snapshots_live = after_snapshots && !st.snapshots.is_empty();
    let cmp = v.cmp;
    let levels = files
        .iter()
        .enumerate()
        .map(|(i, (_, _, smallest, largest))| {
            let (lo, hi) = (key::user_key(smallest), key::user_key(largest));
            let in_mems = mems.iter().any(|m| mem_overlaps(m, cmp, lo, hi));
            let in_tables = (0..NUM_LEVELS).any(|l| !v.overlapping(l, lo, hi).is_empty());
            if in_mems || in_tables || among[i] || snapshots_live {
                None
            } else {
                free_level
            }
        })
        .collect();
    Ok((levels, v))
}

/// Places every file (`free_levels`), taking a table number for each and
/// a fresh sequence number for each one rewritten (in call order: a later
/// file wins over an earlier one it overlaps).
fn plan_ingest(
    st: &mut super::State,
    cf: ColumnFamily,
    files: &[Ingested],
    among: &[bool],
    after_snapshots: bool,
) -> Result<Vec<Placed>> {
    let (levels, v) = free_levels(st, cf, files, among, after_snapshots)?;
    let mut plan = Vec::with_capacity(files.len());
    for ((_, _, smallest, largest), level) in files.iter().zip(levels) {
        let number = st.versions.new_file_number();
        let seq = match level {
            Some(_) => 0,
            None => {
                st.versions.last_sequence += 1;
                st.versions.last_sequence
            }
        };
        let seen = overlapping_tables(&v, key::user_key(smallest), key::user_key(largest));
        plan.push(Placed {
            level,
            number,
            seq,
            seen,
        });
    }
    Ok(plan)
}

/// Whether files placed by `plan` (before the state lock was let go) may
/// still be added as placed: no snapshot taken since their sequence
/// numbers were (it would not see entries it should), no table meeting a
/// rewritten file's range written since (a flush or compaction meanwhile
/// could hold older entries of its keys above it, or newer ones below),
/// and every file kept at sequence number 0 still free at its level.
fn still_valid(
    st: &super::State,
    cf: ColumnFamily,
    files: &[Ingested],
    among: &[bool],
    after_snapshots: bool,
    plan: &[Placed],
) -> Result<bool> {
    let first = plan
        .iter()
        .filter(|p| p.level.is_none())
        .map(|p| p.seq)
        .min()
        .unwrap_or(u64::MAX);
    if st.snapshots.range(first..).next().is_some() {
        return Ok(false);
    }
    let (levels, v) = free_levels(st, cf, files, among, after_snapshots)?;
    for (((_, _, smallest, largest), pl), now) in files.iter().zip(plan).zip(levels) {
        match pl.level {
            Some(l) if now.is_none_or(|n| n < l) => return Ok(false),
            Some(_) => {}
            None => {
                let seen = overlapping_tables(&v, key::user_key(smallest), key::user_key(largest));
                if seen.iter().any(|n| !pl.seen.contains(n)) {
                    return Ok(false);
                }
            }
        }
    }
    Ok(true)
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
