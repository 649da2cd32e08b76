//! Checkpoints: a consistent copy of the whole database (every column
//! family) in another directory, taken while writes, flushes and
//! compactions go on; the basis of the server's online backup.
//!
//! The cut is taken under the state lock with no write group in flight:
//! every memtable is switched to a new WAL, so the writes up to that moment
//! are exactly the tables of the current versions plus the WALs before the
//! new one (each closed and synced by the switch), and nothing after it is
//! in either. The versions are pinned (their tables are deleted only when
//! the last reference drops) and the oldest WAL copied is pinned in
//! `State::wal_pins`, so the files are linked, or copied where a hard link
//! is impossible (another file system), after the lock is released; the
//! manifest written last describes exactly the state at the cut.
use super::{Db, Inner};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::SeqNo;
use crate::version::{VersionEdit, VersionSet};
use crate::vfs::Fs;
use std::path::Path;

/// What a checkpoint holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Every write with a sequence number up to this one is in the copy,
    /// none after it.
    pub sequence: SeqNo,
    /// Files written (tables, WALs, manifest, CURRENT).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// How many of the files are hard links to the database's own.
    pub linked: u64,
}

/// The state at the cut, taken under the lock.
struct Cut {
    sequence: SeqNo,
    tables: Vec<u64>,
    wals: Vec<u64>,
    manifest: u64,
    edits: Vec<VersionEdit>,
    /// Keeps the tables alive until they are linked.
    _versions: Vec<std::sync::Arc<crate::version::Version>>,
}

/// Unpins the WALs of a checkpoint when dropped.
struct WalPin<'a> {
    inner: &'a Inner,
    floor: Option<u64>,
}

impl Drop for WalPin<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.floor {
            let mut st = self.inner.lock();
            if let Some(i) = st.wal_pins.iter().position(|p| *p == f) {
                st.wal_pins.swap_remove(i);
            }
            // WALs kept only for this pin (e.g. by `resume`) go now, not
            // at the next flush.
            if st.bg_error.is_none() && !st.closing {
                super::bg::delete_obsolete_wals(self.inner, &mut st);
            }
        }
    }
}

impl Db {
    /// Writes a consistent copy of the database into `target`, which must
    /// not exist or be an empty directory: table files are hard-linked (or
    /// copied), the WALs before a WAL switch copied, and a manifest of
    /// that state written last (a copy without CURRENT is unfinished).
    /// The copy opens as a normal database holding every write up to
    /// [`CheckpointInfo::sequence`].
    pub fn checkpoint(&self, target: impl AsRef<Path>) -> Result<CheckpointInfo> {
        // One checkpoint at a time in the process: two into one target
        // would otherwise both pass the emptiness check below.
        static CHECKPOINTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = CHECKPOINTS.lock().unwrap_or_else(|p| p.into_inner());
        let target = target.as_ref();
        let fs = self.inner.fs.clone();
        if fs.exists(target) && !fs.list(target)?.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "checkpoint target {} already exists and is not empty",
                target.display()
            )));
        }
        fs.create_dir_all(target)?;
        let cut = self.cut()?;
        let _pin = WalPin {
            inner: &self.inner,
            floor: cut.wals.iter().min().copied(),
        };
        let mut info = CheckpointInfo {
            sequence: cut.sequence,
            ..Default::default()
        };
        let dir = &self.inner.dir;
        for n in &cut.tables {
            let (src, dst) = (filename::table(dir, *n), filename::table(target, *n));
            place(fs.as_ref(), &src, &dst, true, &mut info)?;
        }
        for w in &cut.wals {
            let (src, dst) = (filename::wal(dir, *w), filename::wal(target, *w));
            // WALs are copied: a link would share the file with the
            // database, which may recycle or truncate it.
            place(fs.as_ref(), &src, &dst, false, &mut info)?;
        }
        VersionSet::write_manifest_into(fs.as_ref(), target, cut.manifest, &cut.edits)?;
        for p in [
            filename::manifest(target, cut.manifest),
            filename::current(target),
        ] {
            info.files += 1;
            info.bytes += fs.file_size(&p)?;
        }
        Ok(info)
    }

    /// Switches every memtable to a new WAL with no write in flight and
    /// takes the files and manifest edits of that state.
    /// Writes made with `disable_wal` are in no WAL: while a memtable holds
    /// one, its memtables are flushed first (a few times at most: writes
    /// without a WAL arriving without pause refuse the checkpoint).
    fn cut(&self) -> Result<Cut> {
        let inner = &self.inner;
        let mut flushes = 0;
        let mut st = inner.lock();
        loop {
            if let Some(e) = &st.bg_error {
                return Err(e.clone());
            }
            if st.closing {
                return Err(Error::Closed);
            }
            if st.wal.is_none() {
                st = inner.wait_writers(st);
                continue;
            }
            let unlogged = st
                .cfs
                .values()
                .any(|c| c.mem.has_unlogged() || c.imms.iter().any(|m| m.has_unlogged()));
            if !unlogged {
                break;
            }
            drop(st);
            flushes += 1;
            if flushes > 8 {
                return Err(Error::Busy(
                    "checkpoint: writes without a WAL keep arriving; retry".into(),
                ));
            }
            self.flush()?;
            st = inner.lock();
        }
        // A failed WAL create fails the checkpoint only (the database stays
        // writable); a failed sync of the old WAL is fatal, and
        // `switch_memtables` has then put the database in its error state.
        inner.switch_memtables(&mut st, true)?;
        // The switched memtables are flushed as usual.
        inner.bg_cv.notify_all();
        let versions: Vec<_> = st
            .versions
            .cfs
            .values()
            .map(|c| c.current.clone())
            .collect();
        let tables = versions
            .iter()
            .flat_map(|v| v.levels.iter().flatten().map(|f| f.number()))
            .collect();
        let current = st.wal_number;
        let wals: Vec<u64> = st
            .live_wals
            .iter()
            .copied()
            .filter(|w| *w != current)
            .collect();
        if let Some(f) = wals.iter().min() {
            st.wal_pins.push(*f);
        }
        // A number of its own: the copy's next files never reuse it.
        let manifest = st.versions.new_file_number();
        Ok(Cut {
            // Not `last_sequence`: numbers taken for a write or ingestion
            // not yet published are not in the copy.
            sequence: st.visible_seq,
            tables,
            wals,
            manifest,
            edits: st.versions.snapshot_edits(),
            _versions: versions,
        })
    }
}

/// Puts `src` at `dst`: a hard link if `link` and the file system allows
/// it, else a synced copy.
fn place(fs: &dyn Fs, src: &Path, dst: &Path, link: bool, info: &mut CheckpointInfo) -> Result<()> {
    // Never write over a file that is there: it may be a link to a live
    // table (a copy would truncate it first).
    if fs.exists(dst) {
        return Err(Error::InvalidArgument(format!(
            "checkpoint: {} already exists",
            dst.display()
        )));
    }
    if link && fs.link(src, dst).is_ok() {
        info.linked += 1;
    } else {
        copy_file(fs, src, dst)?;
    }
    info.files += 1;
    info.bytes += fs.file_size(dst)?;
    Ok(())
}

/// Copies a file in 1 MiB pieces and syncs the copy.
fn copy_file(fs: &dyn Fs, src: &Path, dst: &Path) -> Result<()> {
    let f = fs.open(src)?;
    let size = f.size();
    let mut w = fs.create(dst)?;
    let mut off = 0u64;
    while off < size {
        let n = (size - off).min(1 << 20) as usize;
        let b = f.read_at(off, n)?;
        if b.is_empty() {
            break;
        }
        w.append(&b)?;
        off += b.len() as u64;
    }
    w.sync()
}

impl Db {
    /// Reads every block of every live table of every column family,
    /// checking its checksum (RocksDB's `VerifyChecksum`); the manifest and
    /// WALs were checked when the database opened. Returns the number of
    /// tables read.
    pub fn verify_checksums(&self) -> Result<u64> {
        use crate::iter::InternalIterator;
        let families: Vec<_> = {
            let st = self.inner.lock();
            st.versions
                .cfs
                .iter()
                .filter_map(|(id, v)| {
                    let o = &st.cfs.get(id)?.opts;
                    Some((v.current.clone(), o.comparator, o.prefix_len))
                })
                .collect()
        };
        let mut n = 0;
        for (v, cmp, prefix) in families {
            for (level, files) in v.levels.iter().enumerate() {
                for f in files {
                    let t = self.inner.tables.get(f, level, cmp, prefix)?;
                    let mut it = t.iter(false);
                    it.seek_to_first();
                    while it.valid() {
                        it.next();
                    }
                    it.status()?;
                    n += 1;
                }
            }
        }
        Ok(n)
    }
}
