//! Streaming the log to a replica (COM_BINLOG_DUMP), as MariaDB's dump
//! thread does: a fake ROTATE naming the start file and position (and one
//! at the start of each next file), the
//! file's FORMAT_DESCRIPTION (with log_pos 0 when starting past it), then
//! the events in file order across rotations, then waiting for the files
//! to grow (the writer's `Binlog::publish` notifies), with heartbeats when
//! idle. A start is a file and position, or a MariaDB GTID state
//! (`@slave_connect_state`): the newest file whose GTID_LIST is not past
//! the state, skipping the transactions the replica has.
//!
//! Only what the writer has published is read: whole transactions that are
//! committed, hence durable (a record is visible in the engine only after
//! its WAL write is synced). Knows nothing of the network: the caller's
//! [`Target`] sends and says when to stop. Also keeps the registry of
//! replicas (COM_REGISTER_SLAVE, SHOW SLAVE HOSTS).
use crate::decode;
use crate::dumpgtid;
use crate::event::{self, kind, Gtid, Header, CHECKSUM_LEN, HEADER_LEN};
use crate::log::Binlog;
use crate::{Error, Result};
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// HEARTBEAT_LOG_EVENT's type code.
pub const HEARTBEAT: u8 = 27;
/// LOG_EVENT_ARTIFICIAL_F: an event not in any file (the fake ROTATE).
pub const ARTIFICIAL_F: u16 = 0x20;
/// How long a wait for new events lasts at most before `Target::stopped`
/// is asked again.
const STOP_CHECK: Duration = Duration::from_millis(250);
/// Bytes read from a file at once (an event larger than this is read
/// whole).
const READ_CHUNK: u64 = 1 << 20;

/// A replica, as COM_REGISTER_SLAVE announced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    pub server_id: u32,
    pub host: String,
    pub port: u16,
    pub master_id: u32,
}

/// Where a dump starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A file ("" for the first) and a position in it.
    File { name: String, pos: u64 },
    /// A MariaDB GTID state (`@slave_connect_state`): one GTID per domain.
    Gtid(Vec<Gtid>),
}

/// How a dump sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `@master_binlog_checksum` is CRC32: the first fake ROTATE carries a
    /// checksum too (later made events follow the log's FORMAT_DESCRIPTION:
    /// CRC32). The file's events are sent as they are either way.
    pub checksum: bool,
    /// `@master_heartbeat_period`: a HEARTBEAT after this long idle.
    pub heartbeat: Option<Duration>,
    /// BINLOG_DUMP_NON_BLOCK: end at the end of the log.
    pub non_block: bool,
    /// `@slave_gtid_strict_mode` (a MariaDB replica with gtid_strict_mode
    /// sets it): a GTID start in a hole of the log (a sequence number its
    /// server skipped) is an error rather than a start after the hole.
    pub gtid_strict: bool,
}

/// Where the stream goes.
pub trait Target {
    /// Sends one event (header, body, checksum as negotiated).
    fn event(&mut self, ev: &[u8]) -> std::io::Result<()>;
    /// Writes out what was sent (before waiting for new events).
    fn flush(&mut self) -> std::io::Result<()>;
    /// The dump should end (connection killed, server stopping).
    fn stopped(&self) -> bool;
    /// Ends the dump's connection from another thread (a newer dump for
    /// the same replica: the old one may be blocked writing to a replica
    /// that is gone). None: the stop flag only.
    fn closer(&self) -> Option<Closer> {
        None
    }
}

/// Closes a dump's connection (`Target::closer`).
pub type Closer = Arc<dyn Fn() + Send + Sync>;

/// Why a dump ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The end of the log was reached with `non_block`.
    EndOfLog,
    /// `Target::stopped`, or the log was closed.
    Stopped,
}

/// Parses a MariaDB GTID list ("0-1-5,1-2-3"; "" is empty).
pub fn parse_gtid_list(s: &str) -> Option<Vec<Gtid>> {
    let s = s.trim();
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(',')
        .map(|g| {
            let mut it = g.trim().split('-');
            let gtid = Gtid {
                domain: it.next()?.parse().ok()?,
                server_id: it.next()?.parse().ok()?,
                seq_no: it.next()?.parse().ok()?,
            };
            it.next().is_none().then_some(gtid)
        })
        .collect()
}

fn io(e: std::io::Error) -> Error {
    Error::Io(e.to_string())
}

/// `ev` with its checksum recomputed (`checksum`) or removed, and with
/// log_pos 0 when `zero_pos` (a FORMAT_DESCRIPTION sent before a later
/// position, so the replica does not take its position).
fn prepare(ev: &[u8], checksum: bool, zero_pos: bool) -> Vec<u8> {
    let mut v = ev[..ev.len() - CHECKSUM_LEN].to_vec();
    if zero_pos {
        v[13..17].copy_from_slice(&0u32.to_le_bytes());
    }
    if checksum {
        let crc = event::crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
    } else {
        let n = v.len() as u32;
        v[9..13].copy_from_slice(&n.to_le_bytes());
    }
    v
}

/// An event made here (fake ROTATE, HEARTBEAT): not in any file.
fn artificial(
    kind: u8,
    server_id: u32,
    log_pos: u64,
    flags: u16,
    body: &[u8],
    crc: bool,
) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER_LEN + body.len() + CHECKSUM_LEN);
    let h = Header {
        timestamp: 0,
        kind,
        server_id,
        flags,
    };
    event::write_event(&mut v, 0, h, body);
    // write_event sets log_pos to the event's end; these carry their own.
    v[13..17].copy_from_slice(&(log_pos as u32).to_le_bytes());
    prepare(&v, crc, false)
}

/// A running dump's place in `Binlog::dumps` (by its token).
pub(crate) struct DumpSlot {
    /// The replica's server id (0: a client such as mariadb-binlog,
    /// which never stops another dump).
    server_id: u32,
    stop: Arc<AtomicBool>,
    /// The number of the file the dump reads or is about to read (0 until
    /// it knows its start: every file is in use). PURGE never removes it
    /// or a later one (`Binlog::lowest_in_use`).
    pub(crate) file: Arc<AtomicU32>,
    close: Option<Closer>,
}

/// A target that also stops when a newer dump for its replica started.
struct Stopping<'a> {
    t: &'a mut dyn Target,
    stop: &'a AtomicBool,
}

impl Target for Stopping<'_> {
    fn event(&mut self, ev: &[u8]) -> std::io::Result<()> {
        self.t.event(ev)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.t.flush()
    }
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.t.stopped()
    }
    fn closer(&self) -> Option<Closer> {
        self.t.closer()
    }
}

/// One file being sent.
struct Reader {
    num: u32,
    file: std::fs::File,
    /// The next offset to send from.
    pos: u64,
}

impl Binlog {
    /// Registers a replica (COM_REGISTER_SLAVE) for connection `conn`.
    pub fn register_replica(&self, conn: u64, r: Replica) {
        self.replicas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(conn, r);
    }

    /// Forgets connection `conn`'s replica (it disconnected).
    pub fn unregister_replica(&self, conn: u64) {
        self.replicas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&conn);
    }

    /// SHOW SLAVE HOSTS: the registered replicas.
    pub fn replicas(&self) -> Vec<Replica> {
        self.replicas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub(crate) fn open_file(&self, num: u32) -> Result<std::fs::File> {
        std::fs::File::open(self.file_path(num)).map_err(|e| {
            Error::Dump(format!(
                "Could not open log file '{}': {e}",
                self.file_name(num)
            ))
        })
    }

    /// The file to start from and the state to skip up to for a replica
    /// at GTID state `state`.
    fn gtid_start(&self, state: &[Gtid]) -> Result<(u32, Vec<Gtid>)> {
        let (file, keep) = self.with_gtid_index(|ix| dumpgtid::check_start(state, ix))??;
        let num = match file {
            Some(n) => Some(n),
            None => self.file_starts().first().map(|f| f.0),
        };
        let num = num.ok_or_else(|| {
            Error::Dump("Could not find first log file name in binary log index file".into())
        })?;
        Ok((num, keep))
    }

    /// Streams the log to `t` from `start` until the replica goes, the
    /// target stops, or (`non_block`) the end of the log. `Err(Dump)`: a
    /// fatal error to tell the replica (1236); other errors end the dump.
    pub fn dump(
        &self,
        server_id: u32,
        start: &Start,
        opts: Options,
        t: &mut dyn Target,
    ) -> Result<End> {
        let stop = Arc::new(AtomicBool::new(false));
        let file = Arc::new(AtomicU32::new(0));
        let token = self.next_dump.fetch_add(1, Ordering::Relaxed);
        {
            let mut d = self.dumps.lock().unwrap_or_else(|p| p.into_inner());
            if server_id != 0 {
                // The replica reconnected: its old dump ends, its connection
                // closed (as MariaDB kills the "zombie" dump thread).
                for o in d.values().filter(|o| o.server_id == server_id) {
                    o.stop.store(true, Ordering::Relaxed);
                    if let Some(close) = &o.close {
                        close();
                    }
                    self.grown.notify_all();
                }
            }
            d.insert(
                token,
                DumpSlot {
                    server_id,
                    stop: stop.clone(),
                    file: file.clone(),
                    close: t.closer(),
                },
            );
        }
        let mut t = Stopping { t, stop: &stop };
        let r = self.dump_inner(start, opts, &file, &mut t);
        self.dumps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&token);
        r
    }

    /// The lowest file number a running dump reads or is about to read
    /// (0: one that does not know its start yet), None with no dump.
    pub(crate) fn lowest_in_use(&self) -> Option<u32> {
        self.dumps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|d| d.file.load(Ordering::Acquire))
            .min()
    }

    fn dump_inner(
        &self,
        start: &Start,
        opts: Options,
        in_use: &AtomicU32,
        t: &mut dyn Target,
    ) -> Result<End> {
        // The events made here carry a checksum as the replica asked until
        // a FORMAT_DESCRIPTION was sent, then as the log's (CRC32), as
        // MariaDB's dump thread does.
        let mut crc = opts.checksum;
        let sid = self.server_id();
        // A RESET MASTER ends the dump: the files it reads are gone.
        let epoch = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .resets;
        let (num, pos, mut skip) = match start {
            Start::File { name, pos } => {
                let num = if name.is_empty() {
                    self.file_starts().first().map(|f| f.0)
                } else {
                    self.file_num(name)
                };
                let num = num.ok_or_else(|| {
                    Error::Dump(
                        "Could not find first log file name in binary log index file".into(),
                    )
                })?;
                if *pos < 4 {
                    // MariaDB 10.11's text.
                    let f = self.file_name(num);
                    return Err(Error::Dump(format!(
                        "Client requested master to start replication from impossible \
                         position; the first event '{f}' at {pos}, the last event read from \
                         '{f}' at 4, the last byte read from '{f}' at 4."
                    )));
                }
                (num, *pos, dumpgtid::Skip::default())
            }
            Start::Gtid(state) => {
                let (num, left) = self.gtid_start(state)?;
                let strict = opts.gtid_strict;
                (num, 4, dumpgtid::Skip { left, strict })
            }
        };
        // Announced before the file is opened: from here PURGE keeps it.
        in_use.store(num, Ordering::Release);
        let mut rd = Reader {
            num,
            file: self.open_file(num)?,
            pos,
        };
        let rotate_body = event::rotate(pos, &self.file_name(num));
        let fake = artificial(kind::ROTATE, sid, 0, ARTIFICIAL_F, &rotate_body, crc);
        t.event(&fake).map_err(io)?;
        // The replica's position: the end of the last event it got.
        let mut sent_pos = pos;
        if pos > 4 {
            // The FORMAT_DESCRIPTION first, then the requested position,
            // which must be an event's start within what is written.
            let len = rd.file.metadata().map_err(io)?.len();
            let fde = self.read_events(&mut rd.file, 4, len)?;
            let first = fde
                .first()
                .ok_or_else(|| Error::Dump("bogus data in log event".into()))?;
            t.event(&prepare(first, true, true)).map_err(io)?;
            crc = true;
            self.check_position(&mut rd)?;
        }
        let mut skipping = false;
        // The state skipped up to, for the fake GTID_LIST sent once the
        // skipping ends (so the replica's position moves: MASTER_POS_WAIT).
        let mut fake_list = (!skip.left.is_empty()).then(|| skip.left.clone());
        let mut last_sent = Instant::now();
        // A non-blocking dump ends at the end of the log as of its end:
        // the files are brought up to date once when it gets there.
        let mut caught_up = false;
        loop {
            if t.stopped() {
                return Ok(End::Stopped);
            }
            let seen = *self.progress.lock().unwrap_or_else(|p| p.into_inner());
            let limit = if rd.num < seen.active {
                rd.file.metadata().map_err(io)?.len()
            } else {
                seen.pos
            };
            let mut rotated = false;
            while rd.pos < limit && !rotated {
                for ev in self.read_events(&mut rd.file, rd.pos, limit)? {
                    rd.pos += ev.len() as u64;
                    let k = ev[4];
                    if k == kind::GTID {
                        let g = dumpgtid::event_gtid(&ev)
                            .ok_or_else(|| Error::Corrupt("GTID event".into()))?;
                        skipping = skip.at_gtid(&g)?;
                        if !skipping && skip.left.is_empty() {
                            if let Some(list) = fake_list.take() {
                                let at = rd.pos - ev.len() as u64;
                                let body = event::gtid_list(&list);
                                let fake =
                                    artificial(kind::GTID_LIST, sid, at, ARTIFICIAL_F, &body, crc);
                                t.event(&fake).map_err(io)?;
                                sent_pos = at;
                            }
                        }
                    }
                    rotated |= k == kind::ROTATE;
                    // A skipped transaction: its GTID up to its XID/QUERY.
                    let in_txn = matches!(
                        k,
                        kind::GTID
                            | kind::TABLE_MAP
                            | kind::WRITE_ROWS_V1
                            | kind::UPDATE_ROWS_V1
                            | kind::DELETE_ROWS_V1
                            | kind::XID
                            | kind::QUERY
                    );
                    if skipping && in_txn {
                        continue;
                    }
                    t.event(&ev).map_err(io)?;
                    crc |= k == kind::FORMAT_DESCRIPTION;
                    sent_pos = rd.pos;
                    last_sent = Instant::now();
                }
            }
            if !rotated && rd.num < seen.active && rd.num == num && rd.pos == pos && pos > 4 {
                // Started at the exact end of a closed file (past its
                // ROTATE): on with the next file, as MariaDB does.
                rotated = true;
            }
            if rotated {
                // The next file, announced by a fake ROTATE as MariaDB does.
                let next = rd.num + 1;
                in_use.store(next, Ordering::Release);
                rd = Reader {
                    num: next,
                    file: self.open_file(next)?,
                    pos: 4,
                };
                let body = event::rotate(4, &self.file_name(next));
                let fake = artificial(kind::ROTATE, sid, 0, ARTIFICIAL_F, &body, crc);
                t.event(&fake).map_err(io)?;
                sent_pos = 4;
                continue;
            }
            if rd.num < seen.active {
                // A closed file without its ROTATE: it is being rewritten
                // (open after a crash) or was purged.
                return Err(Error::Dump(format!(
                    "binlog file '{}' ends without a ROTATE event",
                    self.file_name(rd.num)
                )));
            }
            if opts.non_block {
                if !caught_up {
                    caught_up = true;
                    self.catch_up()?;
                    continue;
                }
                t.flush().map_err(io)?;
                return Ok(End::EndOfLog);
            }
            if skip.left.is_empty() {
                if let Some(list) = fake_list.take() {
                    let body = event::gtid_list(&list);
                    let fake = artificial(kind::GTID_LIST, sid, rd.pos, ARTIFICIAL_F, &body, crc);
                    t.event(&fake).map_err(io)?;
                    sent_pos = rd.pos;
                }
            }
            t.flush().map_err(io)?;
            // Wait for the files to grow; heartbeats meanwhile.
            let mut g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if g.closed || t.stopped() || g.resets != epoch {
                    return Ok(End::Stopped);
                }
                if g.active != rd.num || g.pos > rd.pos {
                    break;
                }
                let mut wait = STOP_CHECK;
                if let Some(hb) = opts.heartbeat {
                    let due = last_sent + hb;
                    let now = Instant::now();
                    if now >= due {
                        drop(g);
                        let name = self.file_name(rd.num);
                        let ev = artificial(HEARTBEAT, sid, sent_pos, 0, name.as_bytes(), crc);
                        t.event(&ev).map_err(io)?;
                        t.flush().map_err(io)?;
                        last_sent = Instant::now();
                        g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
                        continue;
                    }
                    wait = wait.min(due - now);
                }
                g = self
                    .grown
                    .wait_timeout(g, wait)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
    }

    /// Checks that `rd.pos` is an event's start in its file (walking the
    /// event headers from the first event).
    fn check_position(&self, rd: &mut Reader) -> Result<()> {
        let len = rd.file.metadata().map_err(io)?.len();
        if rd.pos > len {
            return Err(Error::Dump(
                "Client requested master to start replication from position > file size".into(),
            ));
        }
        let mut p = 4u64;
        let mut head = [0u8; HEADER_LEN];
        while p < rd.pos {
            rd.file.seek(SeekFrom::Start(p)).map_err(io)?;
            rd.file.read_exact(&mut head).map_err(io)?;
            let size = u32::from_le_bytes([head[9], head[10], head[11], head[12]]) as u64;
            if size < (HEADER_LEN + CHECKSUM_LEN) as u64 {
                return Err(Error::Corrupt(format!(
                    "event at {p}: size below the header"
                )));
            }
            p += size;
        }
        if p != rd.pos {
            return Err(Error::Dump(format!(
                "Client requested master to start replication from impossible position {} \
                 in '{}' (not the start of an event)",
                rd.pos,
                self.file_name(rd.num)
            )));
        }
        Ok(())
    }

    /// Reads the whole events from `pos` (an event's start) up to `limit`
    /// (at most about `READ_CHUNK` bytes of them, at least one event),
    /// checking their checksums.
    pub(crate) fn read_events(
        &self,
        f: &mut std::fs::File,
        pos: u64,
        limit: u64,
    ) -> Result<Vec<Vec<u8>>> {
        let want = (limit - pos).min(READ_CHUNK);
        let mut buf = vec![0u8; want as usize];
        loop {
            f.seek(SeekFrom::Start(pos)).map_err(io)?;
            f.read_exact(&mut buf).map_err(io)?;
            // The whole events in buf.
            let mut end = 0usize;
            while end + HEADER_LEN <= buf.len() {
                let size =
                    u32::from_le_bytes([buf[end + 9], buf[end + 10], buf[end + 11], buf[end + 12]])
                        as usize;
                if size < HEADER_LEN + CHECKSUM_LEN {
                    return Err(Error::Corrupt(format!(
                        "event at {}: size below the header",
                        pos + end as u64
                    )));
                }
                if end + size > buf.len() {
                    break;
                }
                end += size;
            }
            if end == 0 {
                // One event larger than the chunk.
                let size = buf
                    .get(9..13)
                    .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64)
                    .ok_or_else(|| Error::Corrupt(format!("event at {pos}: torn header")))?;
                if pos + size > limit || size as usize <= buf.len() {
                    return Err(Error::Corrupt(format!("event at {pos}: torn event")));
                }
                buf = vec![0u8; size as usize];
                continue;
            }
            let evs = decode::events_at(&buf[..end], pos)?;
            let mut out = Vec::with_capacity(evs.len());
            let mut at = 0usize;
            for e in &evs {
                let n = HEADER_LEN + e.body.len() + CHECKSUM_LEN;
                out.push(buf[at..at + n].to_vec());
                at += n;
            }
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_lists_parse() {
        assert_eq!(parse_gtid_list(""), Some(vec![]));
        assert_eq!(
            parse_gtid_list("0-1-5, 2-3-4"),
            Some(vec![
                Gtid {
                    domain: 0,
                    server_id: 1,
                    seq_no: 5
                },
                Gtid {
                    domain: 2,
                    server_id: 3,
                    seq_no: 4
                }
            ])
        );
        for bad in ["0-1", "0-1-2-3", "a-1-2", "0-1-2,"] {
            assert_eq!(parse_gtid_list(bad), None, "{bad}");
        }
    }

    #[test]
    fn made_events_and_position_zero() {
        let fde = {
            let mut v = Vec::new();
            let h = Header {
                timestamp: 1,
                kind: kind::FORMAT_DESCRIPTION,
                server_id: 1,
                flags: 0,
            };
            event::write_event(&mut v, 4, h, &event::format_description(0));
            v
        };
        let same = prepare(&fde, true, false);
        assert_eq!(same, fde);
        let bare = prepare(&fde, false, false);
        assert_eq!(bare.len(), fde.len() - 4);
        assert_eq!(
            u32::from_le_bytes(bare[9..13].try_into().unwrap()) as usize,
            bare.len()
        );
        let zero = prepare(&fde, true, true);
        assert_eq!(&zero[13..17], &[0, 0, 0, 0]);
        assert!(
            decode::events_at(&zero, 4).is_err(),
            "log_pos 0 is not a file event"
        );
        let crc = event::crc32(&zero[..zero.len() - 4]);
        assert_eq!(zero[zero.len() - 4..], crc.to_le_bytes());
    }
}
