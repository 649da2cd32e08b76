//! Operations on whole files: checkpoints (a consistent copy of the
//! database made of hard links plus the WAL files, usable as an online
//! backup) and ingestion of externally built tables (the basis of bulk load).
use super::{ColumnFamily, Db};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::{self, Comparator, ValueKind};
use crate::options::{CfOptions, WriteOptions, NUM_LEVELS};
use crate::sstable::{Table, TableBuilder, TableOptions};
use crate::version::{NewFile, VersionEdit};
use std::path::Path;
use std::sync::Arc;

/// Builds a table to ingest: keys must be added in increasing order
/// (RocksDB's `SstFileWriter`). Entries carry sequence number 0.
pub struct SstFileWriter {
    builder: Option<TableBuilder>,
    cmp: Comparator,
    last: Option<Vec<u8>>,
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
            last: None,
            scratch: Vec::new(),
        })
    }

    /// Adds a key; keys must be strictly increasing.
    pub fn put(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        if let Some(l) = &self.last {
            if self.cmp.compare(l, k) != std::cmp::Ordering::Less {
                return Err(Error::InvalidArgument(
                    "SstFileWriter: keys must be added in increasing order".into(),
                ));
            }
        }
        self.last = Some(k.to_vec());
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
    /// Writes a consistent copy of the database into `target` (which must not
    /// exist): table files are hard-linked, WAL files linked after a WAL
    /// switch, and a manifest describing that state is written. The copy
    /// opens as a normal database.
    pub fn checkpoint(&self, target: impl AsRef<Path>) -> Result<()> {
        let target = target.as_ref();
        let fs = &self.inner.fs;
        if fs.exists(target) {
            return Err(Error::InvalidArgument(format!(
                "checkpoint target {} already exists",
                target.display()
            )));
        }
        // Close the current WAL so every WAL to copy is immutable.
        self.inner.write(WriteOptions::default(), None, true)?;
        fs.create_dir_all(target)?;
        let st = self.inner.lock();
        for cf in st.versions.cfs.values() {
            for files in &cf.current.levels {
                for f in files {
                    fs.link(
                        &filename::table(&self.inner.dir, f.number()),
                        &filename::table(target, f.number()),
                    )?;
                }
            }
        }
        for w in st.live_wals.iter().filter(|w| **w != st.wal_number) {
            let src = filename::wal(&self.inner.dir, *w);
            if fs.exists(&src) {
                fs.link(&src, &filename::wal(target, *w))?;
            }
        }
        st.versions
            .write_manifest_into(fs.as_ref(), target, st.versions.next_file_number)?;
        Ok(())
    }

    /// Ingests tables written by [`SstFileWriter`] into a column family.
    /// A file whose key range overlaps nothing in the column family (no
    /// table at any level, no memtable) is added as is, with sequence
    /// number 0, at the lowest level no compaction is busy on; any other
    /// file is rewritten with a new sequence number into level 0 so that it
    /// wins over what it overwrites. Files are hard-linked (copied across
    /// file systems) and left in place.
    pub fn ingest(&self, cf: ColumnFamily, paths: &[&Path]) -> Result<()> {
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
            use crate::iter::InternalIterator;
            it.seek_to_first();
            if !it.valid() {
                it.status()?;
                continue;
            }
            let smallest = it.key().to_vec();
            it.seek_to_last();
            let largest = it.key().to_vec();
            it.status()?;
            let (lo, hi) = (
                key::user_key(&smallest).to_vec(),
                key::user_key(&largest).to_vec(),
            );
            let mut st = self.inner.lock();
            // Wait until no write group is in flight, so that sequence numbers
            // taken here are published in order.
            while st.wal.is_none() {
                st = self
                    .inner
                    .write_cv
                    .wait(st)
                    .unwrap_or_else(|p| p.into_inner());
            }
            let v = st
                .versions
                .cfs
                .get(&cf.0)
                .map(|c| c.current.clone())
                .ok_or(Error::Closed)?;
            // Entries keep sequence number 0 only if nothing else holds a key
            // in their range: no table at any level (a table below with a
            // higher sequence number would win in iterators and compactions)
            // and no memtable. They then go to the lowest level above every
            // level a compaction is busy on (its outputs may span the range).
            let cmp = v.cmp;
            let c = st.cfs.get(&cf.0).ok_or(Error::Closed)?;
            let in_mems = std::iter::once(&c.mem)
                .chain(c.imms.iter())
                .any(|m| mem_overlaps(m, cmp, &lo, &hi));
            let in_tables = (0..NUM_LEVELS).any(|l| !v.overlapping(l, &lo, &hi).is_empty());
            let mut level = None;
            if !in_mems && !in_tables {
                for l in 0..NUM_LEVELS {
                    if v.levels[l].iter().any(|f| f.is_compacting()) {
                        break;
                    }
                    level = Some(l);
                }
            }
            let number = st.versions.new_file_number();
            let dst = filename::table(&self.inner.dir, number);
            let seq;
            let info = match level {
                Some(_) => {
                    if fs.link(p, &dst).is_err() {
                        let data = fs.read_all(p)?;
                        crate::vfs::write_file_synced(fs.as_ref(), &dst, &data)?;
                    }
                    seq = 0;
                    NewFile {
                        number,
                        size: fs.file_size(&dst)?,
                        smallest,
                        largest,
                        smallest_seq: 0,
                        largest_seq: 0,
                        num_entries: t.properties().num_entries,
                        num_deletions: t.properties().num_deletions,
                        num_range_deletions: t.properties().num_range_deletions,
                    }
                }
                None => {
                    // Rewrite with a fresh sequence number, into level 0.
                    st.versions.last_sequence += 1;
                    seq = st.versions.last_sequence;
                    let topts = TableOptions {
                        cmp: opts.comparator,
                        block_size: opts.block_size,
                        restart_interval: opts.block_restart_interval,
                        bloom_bits: opts.bloom_bits_per_key,
                        prefix_len: opts.prefix_len,
                        compression: opts.compression_for(0, false),
                    };
                    let mut b = TableBuilder::new(fs.create(&dst)?, topts);
                    let mut k = Vec::new();
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
                        number,
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
            // The new file's directory entry must be durable before the
            // manifest names it.
            fs.sync_dir(&self.inner.dir)?;
            let edit = VersionEdit {
                cf: cf.0,
                added: vec![(level.unwrap_or(0), info)],
                ..Default::default()
            };
            self.inner.log_and_apply(&mut st, edit)?;
            st.visible_seq = st.visible_seq.max(seq);
            self.inner.bg_cv.notify_all();
        }
        Ok(())
    }
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
