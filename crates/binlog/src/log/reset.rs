//! RESET MASTER [TO n], as MariaDB's: every file goes with its records, the
//! log starts again at file n (1 by default) with an empty GTID state
//! (@@gtid_binlog_pos ''; the next transaction is GTID 0-<server_id>-1),
//! and the dumps reading the old files end (their replicas reconnect and
//! are told where the log now is). Crash-safe: the records and `F`
//! records change in one synced batch (what was committed before the reset
//! is gone from the log, what commits after is in the new file); the files
//! follow from the records at the next open if a crash comes between.
use super::{name_of, now, synced, Binlog};
use crate::filestart::{FileStart, FILE_PREFIX};
use crate::log::TXN_PREFIX;
use crate::Result;
use lsm::WriteBatch;
use std::sync::atomic::Ordering;

impl Binlog {
    /// RESET MASTER [TO `first`]; returns the new active file's name.
    pub fn reset(&self, first: u32) -> Result<String> {
        // Lock order gtid_index -> st -> progress (`with_gtid_index`): the
        // GTID state per file is emptied below, and a GTID connect waits
        // until the reset is done.
        let mut ix = self.gtid_index.lock().unwrap_or_else(|p| p.into_inner());
        let mut st = self.lock();
        // Whatever fails to catch up is dropped anyway: the records up to
        // the last one committed now go.
        let _ = self.catch_up_locked(&mut st);
        let upto = self.db.latest_sequence();
        let f = FileStart {
            num: first.max(1),
            max_size: self.max_size(),
            base: self.base.clone(),
            after_seq: upto,
            timestamp: now(),
            server_id: self.server_id.load(Ordering::Relaxed),
            gtid: None,
        };
        let mut b = WriteBatch::new();
        let (f_lo, f_hi) = ([FILE_PREFIX], [FILE_PREFIX + 1]);
        b.delete_range_cf(self.cf.0, &f_lo, &f_hi);
        let mut end = TXN_PREFIX.to_vec();
        end.extend_from_slice(&(upto + 1).to_be_bytes());
        b.delete_range_cf(self.cf.0, TXN_PREFIX, &end);
        b.put_cf(self.cf.0, &FileStart::key(f.num), &f.encode());
        self.db.write(synced(), b)?;
        self.db.reclaim_range(self.cf, &f_lo, &f_hi);
        self.db.reclaim_range(self.cf, TXN_PREFIX, &end);
        let old = std::mem::take(&mut st.files);
        st.out = None;
        st.stuck_after = None;
        for o in &old {
            match std::fs::remove_file(self.path_of(o)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(super::io(e)),
                _ => {}
            }
        }
        // The GTID state per file (GTID connects) starts again too.
        *ix = Default::default();
        {
            let mut g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
            g.resets += 1;
            self.grown.notify_all();
        }
        self.recover_locked(&mut st)?;
        Ok(name_of(&f))
    }
}
