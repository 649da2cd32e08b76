//! The GTID state of the log at the start of each file, for GTID-mode
//! dumps (`@slave_connect_state`): the highest sequence number per
//! (domain, server id) before each file, and after the last event
//! published. Kept in memory: built on the first GTID connect (reading the
//! GTID events of every file once), then brought up to date at each
//! connect by reading only what was published since, so that a connect
//! reads only the new bytes; it says which file holds each GTID of the
//! replica's state (MariaDB's GTID_LIST events play this part there).
//! Nothing on disk: a restart rebuilds it at the first connect.
use crate::dumpgtid;
use crate::event::{kind, Gtid};
use crate::log::Binlog;
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;

/// The highest sequence number per (domain, server id).
pub(crate) type GtidState = HashMap<(u32, u32), u64>;

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct GtidIndex {
    /// The state before each indexed file, by file number.
    pub(crate) starts: BTreeMap<u32, GtidState>,
    /// How far the files were read: file number and offset.
    at: Option<(u32, u64)>,
    /// The state at `at`.
    pub(crate) state: GtidState,
}

impl GtidIndex {
    /// An index of a log given as its first file's start state and its
    /// GTIDs (file number, GTID) in log order (tests).
    #[cfg(test)]
    pub(crate) fn from_log(first: u32, before: &[Gtid], log: &[(u32, Gtid)]) -> GtidIndex {
        let mut ix = GtidIndex::default();
        for g in before {
            ix.state.insert((g.domain, g.server_id), g.seq_no);
        }
        ix.starts.insert(first, ix.state.clone());
        for (n, g) in log {
            if !ix.starts.contains_key(n) {
                ix.starts.insert(*n, ix.state.clone());
            }
            ix.add(g);
        }
        ix
    }

    fn add(&mut self, g: &Gtid) {
        let h = self.state.entry((g.domain, g.server_id)).or_insert(0);
        *h = (*h).max(g.seq_no);
    }

    /// The highest sequence number of domain `d` (None: the log never had
    /// it).
    pub(crate) fn domain_high(&self, d: u32) -> Option<u64> {
        self.state
            .iter()
            .filter(|((dom, _), _)| *dom == d)
            .map(|(_, &s)| s)
            .max()
    }
}

impl Binlog {
    /// Brings the GTID index up to date with what is published (dropping
    /// purged files) and runs `f` on it.
    ///
    /// The files and the published position are read under the index's
    /// lock (order gtid_index -> st -> progress; nothing takes gtid_index
    /// under the others): a connect holding an older view must not move
    /// the index back or read a newer file up to an offset of an older one.
    pub(crate) fn with_gtid_index<T>(&self, f: impl FnOnce(&GtidIndex) -> T) -> Result<T> {
        let mut ix = self.gtid_index.lock().unwrap_or_else(|p| p.into_inner());
        let files = self.file_starts();
        let seen = *self.progress.lock().unwrap_or_else(|p| p.into_inner());
        self.advance_index(&mut ix, &files, seen)?;
        Ok(f(&ix))
    }

    /// Reads what was published since `ix.at` into `ix`, given the files
    /// and the published position `seen`. Never reads past `seen` (a file
    /// after `seen.active` is left for a later connect).
    pub(crate) fn advance_index(
        &self,
        ix: &mut GtidIndex,
        files: &[(u32, Option<Gtid>)],
        seen: crate::log::Progress,
    ) -> Result<()> {
        let Some(&(first, before)) = files.first() else {
            *ix = GtidIndex::default();
            return Ok(());
        };
        ix.starts.retain(|&n, _| n >= first);
        if ix.at.is_none_or(|(n, _)| n < first) {
            // From the first file: its start is what its `F` record kept.
            let mut fresh = GtidIndex::default();
            if let Some(g) = before {
                fresh.add(&g);
            }
            fresh.starts.insert(first, fresh.state.clone());
            fresh.at = Some((first, 4));
            *ix = fresh;
        }
        while let Some((num, mut pos)) = ix.at {
            if num > seen.active {
                break;
            }
            let mut file = self.open_file(num)?;
            let closed = num < seen.active;
            let limit = if closed {
                file.metadata().map_err(|e| Error::Io(e.to_string()))?.len()
            } else {
                seen.pos
            };
            while pos < limit {
                for ev in self.read_events(&mut file, pos, limit)? {
                    pos += ev.len() as u64;
                    self.gtid_scanned
                        .fetch_add(ev.len() as u64, Ordering::Relaxed);
                    if ev[4] == kind::GTID {
                        let g = dumpgtid::event_gtid(&ev)
                            .ok_or_else(|| Error::Corrupt("GTID event".into()))?;
                        ix.add(&g);
                    }
                }
            }
            if !closed || !files.iter().any(|f| f.0 == num + 1) {
                ix.at = Some((num, pos));
                break;
            }
            let st = ix.state.clone();
            ix.starts.insert(num + 1, st);
            ix.at = Some((num + 1, 4));
        }
        Ok(())
    }
}
