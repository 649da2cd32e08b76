//! Where a GTID-mode dump (`@slave_connect_state`) starts and which
//! transactions it skips, as MariaDB's `check_slave_start_position` and
//! its dump thread's GTID skipping do: each GTID of the replica's state
//! must be in the log (its domain and server id, with a sequence number
//! the log has reached; a hole, a sequence number that server skipped, is
//! accepted as MariaDB does without gtid_strict_mode: the dump starts after
//! it); a domain the log never had is ignored
//! (START_ON_EMPTY_DOMAIN); in each remaining domain, transactions are
//! skipped up to and including the state's GTID (same server id, sequence
//! number at least the state's). Pure logic over the GTIDs of the log.
use crate::event::{Gtid, HEADER_LEN};
use crate::gtidindex::GtidIndex;
use crate::{Error, Result};

/// A GTID event's GTID (server id from the header; sequence number and
/// domain from the body), or None if the event is too short for one.
pub(crate) fn event_gtid(ev: &[u8]) -> Option<Gtid> {
    let sid = ev.get(5..9)?;
    let body = ev.get(HEADER_LEN..HEADER_LEN + 12)?;
    Some(Gtid {
        domain: u32::from_le_bytes([body[8], body[9], body[10], body[11]]),
        server_id: u32::from_le_bytes([sid[0], sid[1], sid[2], sid[3]]),
        seq_no: u64::from_le_bytes([
            body[0], body[1], body[2], body[3], body[4], body[5], body[6], body[7],
        ]),
    })
}

fn not_found(g: &Gtid, higher: bool) -> Error {
    let mut m = format!(
        "Connecting slave requested to start from GTID {g}, which is not in the master's binlog"
    );
    if higher {
        m.push_str(
            ". Since the master's binlog contains GTIDs with higher sequence numbers, it \
             probably means that the slave has diverged due to executing extra erroneous \
             transactions",
        );
    }
    Error::Dump(m)
}

fn purged() -> Error {
    Error::Dump(
        "Could not find GTID state requested by slave in any binlog files. Probably the \
         slave state is too old and required binlog files have been purged."
            .into(),
    )
}

/// Checks the replica's `state` against the log's GTID index `ix` and
/// returns the file to start from (None: the first file) and the state to
/// skip up to (the domains the log has). Reads no file: the index says
/// which file holds (or would hold, for a hole) each GTID.
pub(crate) fn check_start(state: &[Gtid], ix: &GtidIndex) -> Result<(Option<u32>, Vec<Gtid>)> {
    let mut keep: Vec<Gtid> = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    let mut file: Option<u32> = None;
    for g in state {
        if seen.contains(&g.domain) {
            return Err(Error::Dump(format!(
                "Duplicate domain {} in the slave's GTID state",
                g.domain
            )));
        }
        seen.push(g.domain);
        let Some(dh) = ix.domain_high(g.domain) else {
            // START_ON_EMPTY_DOMAIN: a domain the log never had.
            continue;
        };
        let key = (g.domain, g.server_id);
        match ix.state.get(&key) {
            Some(&h) if h >= g.seq_no => {}
            // At or below where the domain was before the first file: in
            // the purged files or never there, which the index cannot
            // tell once they are gone (after a restart it knows only the
            // last GTID before the first file); "purged" either way, so
            // that the text does not depend on the index's history.
            _ if first_high(ix, g.domain).is_some_and(|f| g.seq_no <= f) => return Err(purged()),
            _ => return Err(not_found(g, dh > g.seq_no)),
        }
        // The file holding it: the last that starts below it.
        let holder = ix
            .starts
            .iter()
            .rev()
            .find(|(_, st)| st.get(&key).is_none_or(|&v| v < g.seq_no));
        let at = match holder {
            Some((&n, _)) => {
                keep.push(*g);
                n
            }
            None => {
                // Before every file: only the last GTID of its domain
                // before the first file (the replica is at its start).
                let (&n, st) = ix.starts.iter().next().ok_or_else(purged)?;
                let last = st
                    .iter()
                    .filter(|((d, _), _)| *d == g.domain)
                    .map(|(_, &s)| s)
                    .max();
                if st.get(&key) != Some(&g.seq_no) || last != Some(g.seq_no) {
                    return Err(purged());
                }
                n
            }
        };
        file = Some(file.map_or(at, |f| f.min(at)));
    }
    Ok((file, keep))
}

/// The highest sequence number of domain `d` before the first file.
fn first_high(ix: &GtidIndex, d: u32) -> Option<u64> {
    let (_, st) = ix.starts.iter().next()?;
    st.iter()
        .filter(|((dom, _), _)| *dom == d)
        .map(|(_, &s)| s)
        .max()
}

/// The skipping of a GTID-mode dump: the state left to reach.
#[derive(Debug, Default)]
pub(crate) struct Skip {
    pub(crate) left: Vec<Gtid>,
    /// `@slave_gtid_strict_mode`: reaching a state GTID past it (a hole)
    /// is an error.
    pub(crate) strict: bool,
}

impl Skip {
    /// At a GTID event: whether its transaction is skipped. The state's
    /// GTID of a domain is reached at the first of that domain with the
    /// same server id and a sequence number at least the state's (that
    /// transaction is skipped too, as MariaDB does). Strict: reached past
    /// the state's GTID (a hole), MariaDB's ER_GTID_START_FROM_BINLOG_HOLE.
    pub(crate) fn at_gtid(&mut self, g: &Gtid) -> Result<bool> {
        let Some(i) = self.left.iter().position(|s| s.domain == g.domain) else {
            return Ok(false);
        };
        let s = self.left[i];
        if s.server_id == g.server_id && g.seq_no >= s.seq_no {
            if self.strict && g.seq_no > s.seq_no {
                return Err(Error::Dump(format!(
                    "The binlog on the master is missing the GTID {s} requested by the \
                     slave (even though a subsequent sequence number does exist), and GTID \
                     strict mode is enabled"
                )));
            }
            self.left.remove(i);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Start = (Option<u32>, Vec<Gtid>);

    /// `check_start` over a log given as its GTIDs (file, GTID), first file
    /// starting with no GTID before it.
    fn check(state: &[Gtid], log: &[(u32, Gtid)]) -> Result<Start> {
        let first = log.first().map_or(1, |l| l.0);
        check_from(state, first, &[], log)
    }

    fn check_from(
        state: &[Gtid],
        first: u32,
        before: &[Gtid],
        log: &[(u32, Gtid)],
    ) -> Result<Start> {
        let ix = GtidIndex::from_log(first, before, log);
        check_start(state, &ix)
    }

    #[test]
    fn state_at_the_start_of_the_first_file() {
        // Files 3.. after a purge: 0-1-100 was the last GTID before them.
        let before = [g(0, 1, 100)];
        let log: Vec<(u32, Gtid)> = (101..=110).map(|s| (3, g(0, 1, s))).collect();
        // At the purged edge exactly: from file 3, nothing to skip.
        assert_eq!(
            check_from(&[g(0, 1, 100)], 3, &before, &log).unwrap(),
            (Some(3), vec![])
        );
        // Older: purged.
        let Err(Error::Dump(m)) = check_from(&[g(0, 1, 50)], 3, &before, &log) else {
            panic!()
        };
        assert!(m.contains("purged"), "{m}");
        // Another server's GTID after it before the file: not at the edge.
        let before2 = [g(0, 1, 100), g(0, 2, 101)];
        let log2: Vec<(u32, Gtid)> = (102..=110).map(|s| (3, g(0, 1, s))).collect();
        assert!(check_from(&[g(0, 1, 100)], 3, &before2, &log2).is_err());
        assert_eq!(
            check_from(&[g(0, 2, 101)], 3, &before2, &log2).unwrap(),
            (Some(3), vec![])
        );
    }

    #[test]
    fn a_gtid_that_is_not_there_between_others() {
        // 0-1-5, 0-2-6, 0-1-7: 0-1-6 never existed. A hole: accepted as
        // MariaDB does without gtid_strict_mode (the dump skips up to and
        // including 0-1-7, the first of server 1 at or past it), not
        // "purged" (its file is there).
        let log = vec![(1, g(0, 1, 5)), (2, g(0, 2, 6)), (2, g(0, 1, 7))];
        assert_eq!(
            check(&[g(0, 1, 6)], &log).unwrap(),
            (Some(2), vec![g(0, 1, 6)])
        );
        assert_eq!(
            check(&[g(0, 2, 6)], &log).unwrap(),
            (Some(2), vec![g(0, 2, 6)])
        );
        assert_eq!(
            check(&[g(0, 1, 5)], &log).unwrap(),
            (Some(1), vec![g(0, 1, 5)])
        );
    }

    fn g(domain: u32, server_id: u32, seq_no: u64) -> Gtid {
        Gtid {
            domain,
            server_id,
            seq_no,
        }
    }

    #[test]
    fn start_needs_the_exact_server_id() {
        // The log: 0-1-1..500 in files 1 (1..=250) and 2.
        let log: Vec<(u32, Gtid)> = (1..=500)
            .map(|s| (1 + (s > 250) as u32, g(0, 1, s)))
            .collect();
        // Foreign server id with a lower seq: diverged, never a silent skip.
        let e = check(&[g(0, 2, 100)], &log).unwrap_err();
        let Error::Dump(m) = e else { panic!("{e:?}") };
        assert!(m.starts_with(
            "Connecting slave requested to start from GTID 0-2-100, which is not in the master's binlog. Since the master's binlog contains GTIDs with higher sequence numbers"
        ), "{m}");
        // Ahead of the log: the short text.
        let Err(Error::Dump(m)) = check(&[g(0, 1, 501)], &log) else {
            panic!()
        };
        assert!(m.ends_with("which is not in the master's binlog"), "{m}");
        // Exact: the file holding it.
        assert_eq!(
            check(&[g(0, 1, 300)], &log).unwrap(),
            (Some(2), vec![g(0, 1, 300)])
        );
        assert_eq!(
            check(&[g(0, 1, 3)], &log).unwrap(),
            (Some(1), vec![g(0, 1, 3)])
        );
    }

    #[test]
    fn domains_not_in_the_log_are_ignored() {
        let log = vec![(1, g(0, 1, 1)), (1, g(0, 1, 2))];
        assert_eq!(
            check(&[g(5, 9, 7), g(0, 1, 1)], &log).unwrap(),
            (Some(1), vec![g(0, 1, 1)])
        );
        // An empty log: every domain ignored, from the start.
        assert_eq!(check(&[g(0, 1, 5)], &[]).unwrap(), (None, vec![]));
        assert!(check(&[g(0, 1, 1), g(0, 1, 2)], &log).is_err());
    }

    #[test]
    fn purged_start_is_an_error() {
        // Files 3.. after a purge: 0-1-9 was the last GTID before them.
        let log = vec![(3, g(0, 1, 10))];
        let Err(Error::Dump(m)) = check_from(&[g(0, 1, 4)], 3, &[g(0, 1, 9)], &log) else {
            panic!()
        };
        assert!(m.contains("purged"), "{m}");
    }

    #[test]
    fn a_foreign_gtid_before_the_first_file_is_purged_after_a_restart_too() {
        // 0-2-50, then 0-1-51..=100 were purged; file 3 holds 0-1-101...
        // The index built before the purge knew 0-2-50; after a restart
        // it knows only the first file's last GTID before it (0-1-100).
        let log: Vec<(u32, Gtid)> = (101..=110).map(|s| (3, g(0, 1, s))).collect();
        for before in [vec![g(0, 2, 50), g(0, 1, 100)], vec![g(0, 1, 100)]] {
            let Err(Error::Dump(m)) = check_from(&[g(0, 2, 50)], 3, &before, &log) else {
                panic!()
            };
            assert!(m.contains("purged"), "{before:?}: {m}");
        }
        // Above the first file's start, a GTID the log never had: diverged.
        let Err(Error::Dump(m)) = check_from(&[g(0, 2, 105)], 3, &[g(0, 1, 100)], &log) else {
            panic!()
        };
        assert!(m.contains("diverged"), "{m}");
    }

    #[test]
    fn skip_stops_at_the_exact_gtid() {
        let mut s = Skip {
            left: vec![g(0, 1, 3)],
            strict: true,
        };
        // Another server's GTIDs in the domain with higher seq are skipped
        // (not the state's GTID yet); other domains pass.
        assert!(s.at_gtid(&g(0, 2, 5)).unwrap());
        assert!(!s.at_gtid(&g(1, 1, 1)).unwrap());
        assert!(s.at_gtid(&g(0, 1, 2)).unwrap());
        assert!(s.at_gtid(&g(0, 1, 3)).unwrap());
        assert!(s.left.is_empty());
        assert!(!s.at_gtid(&g(0, 1, 4)).unwrap());
    }

    #[test]
    fn a_hole_is_skipped_past_unless_strict() {
        // The log has 0-1-5 then 0-1-7; the state is 0-1-6.
        let mut s = Skip {
            left: vec![g(0, 1, 6)],
            strict: false,
        };
        assert!(s.at_gtid(&g(0, 1, 5)).unwrap());
        assert!(s.at_gtid(&g(0, 1, 7)).unwrap());
        assert!(!s.at_gtid(&g(0, 1, 8)).unwrap());
        let mut s = Skip {
            left: vec![g(0, 1, 6)],
            strict: true,
        };
        assert!(s.at_gtid(&g(0, 1, 5)).unwrap());
        let Err(Error::Dump(m)) = s.at_gtid(&g(0, 1, 7)) else {
            panic!()
        };
        assert_eq!(
            m,
            "The binlog on the master is missing the GTID 0-1-6 requested by the slave \
             (even though a subsequent sequence number does exist), and GTID strict mode is \
             enabled"
        );
    }

    #[test]
    fn short_gtid_event_is_none() {
        assert_eq!(event_gtid(&[0u8; 25]), None);
        let mut ev = vec![0u8; HEADER_LEN + 19 + 4];
        ev[5..9].copy_from_slice(&7u32.to_le_bytes());
        ev[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&9u64.to_le_bytes());
        ev[HEADER_LEN + 8..HEADER_LEN + 12].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(event_gtid(&ev), Some(g(2, 7, 9)));
    }
}
