//! Leaving the read-only state after a full disk (RocksDB's auto-recovery from
//! no-space errors). When a write, flush, compaction or manifest append fails with
//! ENOSPC, the database refuses writes (`ReadOnly`) but keeps serving reads; once space
//! is free again, `resume` makes it writable without a restart:
//!
//! 1. waits for running background jobs;
//! 2. writes a new manifest from the in-memory state (a failed append may have left a
//!    torn record in the old one) and points CURRENT at it;
//! 3. flushes every memtable, mutable and immutable, to level-0 tables, so no WAL is
//!    needed any more (the current WAL may end in a torn, unacknowledged record);
//! 4. starts a fresh WAL, logs its number, and deletes the old WALs (but not those a
//!    running checkpoint pinned: it is still copying them).
//!
//! Any failure leaves the database read-only as it was; the next attempt starts over.
//! A database opened on a full disk (`open` could not write) is in the same state, with
//! the replayed WALs still in its memtables.
use super::{Db, Inner, State};
use crate::error::Result;
use crate::filename;
use crate::memtable::MemTable;
use crate::version::VersionEdit;
use crate::wal::LogWriter;
use std::sync::Arc;
use std::time::Duration;

impl Db {
    /// Tries to leave the read-only state caused by a full disk. Ok when the database
    /// is writable (also when it already was); an error when the state came from
    /// something else (EIO, corruption) or writing still fails.
    pub fn resume(&self) -> Result<()> {
        self.inner.resume()
    }
}

impl Inner {
    pub(crate) fn resume(&self) -> Result<()> {
        let mut st = self.lock();
        loop {
            match &st.bg_error {
                None => return Ok(()),
                Some(e) if !st.bg_retry => return Err(e.clone()),
                Some(_) => {}
            }
            if !st.resuming && st.running_jobs == 0 {
                break;
            }
            st = self.wait_bg(st, Duration::from_millis(50));
        }
        st.resuming = true;
        let r = self.resume_locked(&mut st);
        st.resuming = false;
        match &r {
            Ok(()) => {
                st.bg_error = None;
                st.bg_retry = false;
                eprintln!("strata-lsm: space is available again: writes resumed");
            }
            Err(e) => {
                // Still full (or worse): stay read-only; a non-space error is final.
                if !super::is_no_space(e) {
                    st.bg_retry = false;
                }
            }
        }
        self.queue_cv.notify_all();
        self.bg_cv.notify_all();
        r
    }

    fn resume_locked(&self, st: &mut State) -> Result<()> {
        st.versions.recover_manifest()?;
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in &ids {
            let Some(cf) = st.cfs.get(id) else { continue };
            let mut mems = cf.imms.clone();
            if !cf.mem.is_empty() {
                mems.push(cf.mem.clone());
            }
            if mems.is_empty() {
                continue;
            }
            let opts = (*cf.opts).clone();
            let n = st.versions.new_file_number();
            if let Some(f) =
                super::bg::write_level0_table(&self.fs, &self.dir, &opts, n, &mems, &self.stats)?
            {
                self.fs.sync_dir(&self.dir)?;
                st.versions.log_and_apply(VersionEdit {
                    cf: *id,
                    added: vec![(0, f)],
                    ..Default::default()
                })?;
            }
            if let Some(cf) = st.cfs.get_mut(id) {
                cf.imms.clear();
                cf.flushing = false;
                cf.mem = Arc::new(MemTable::new(cf.opts.comparator, 0));
            }
        }
        let n = st.versions.new_file_number();
        for id in &ids {
            st.versions.log_and_apply(VersionEdit {
                cf: *id,
                log_number: Some(n),
                ..Default::default()
            })?;
        }
        let wal = LogWriter::new(self.fs.create(&filename::wal(&self.dir, n))?);
        self.fs.sync_dir(&self.dir)?;
        for cf in st.cfs.values_mut() {
            cf.mem = Arc::new(MemTable::new(cf.opts.comparator, n));
        }
        // The memtables are flushed, so no old WAL is needed for recovery,
        // but one a running checkpoint still copies (pinned) stays on disk
        // and listed, for the usual clean-up once the pin is gone.
        let pin = st.wal_pins.iter().min().copied().unwrap_or(u64::MAX);
        let mut kept = Vec::new();
        for old in std::mem::take(&mut st.live_wals) {
            if old >= pin && old != n {
                kept.push(old);
            } else if old != n {
                let _ = self.fs.remove(&filename::wal(&self.dir, old));
            }
        }
        kept.push(n);
        st.wal = Some(wal);
        st.wal_number = n;
        st.live_wals = kept;
        Ok(())
    }
}

/// Whether the background thread should try `resume` now.
pub(crate) fn due(st: &State, inner: &Inner, last: &mut std::time::Instant) -> bool {
    let Some(every) = inner.auto_resume else {
        return false;
    };
    if st.bg_error.is_none() || !st.bg_retry || st.resuming || st.closing {
        return false;
    }
    if last.elapsed() < every {
        return false;
    }
    *last = std::time::Instant::now();
    true
}
