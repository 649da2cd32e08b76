//! The binary log of one engine: transaction records in the `__binlog__`
//! column family are the truth (each committed in its transaction's own
//! WAL batch, keyed by `T` + its engine sequence number), and the files
//! `<base>.000001`, ... and `<base>.index` are materialized from them in
//! commit order. Which records each file holds is fixed by `F` records
//! (one per file: the sequence number its records start after, the GTID
//! state before it), written durably before a file is started, so after
//! any crash every file is re-derived byte for byte: the active file is
//! always rewritten at open, a closed file whose content does not check
//! (torn before its ROTATE was fsynced) is rewritten from its records.
//! docs/formats/binlog.md has the layouts, docs/REPLICATION.md the design.
use crate::decode;
use crate::event::{self, Gtid, Header};
use crate::record::{self, Cursor};
use crate::{Error, Result};
use lsm::{ColumnFamily, Db, ReadOptions, WriteBatch, WriteOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime};

/// The column family holding the log's records.
pub const CF_NAME: &str = "__binlog__";
/// Key prefix of transaction records.
pub const TXN_PREFIX: &[u8] = b"T";
const FILE_PREFIX: u8 = b'F';
const FILE_RECORD_VERSION: u8 = 1;
/// How often the background thread brings the files up to date.
const CATCH_UP_EVERY: Duration = Duration::from_millis(100);

/// Where and how the log is kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// Directory of the files (the datadir).
    pub dir: PathBuf,
    /// File basename (`mysql-bin` gives `mysql-bin.000001`).
    pub basename: String,
    pub server_id: u32,
    /// max_binlog_size: a file is rotated once it reaches this many bytes.
    pub max_size: u64,
}

/// One file's start, as its `F` record keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStart {
    num: u32,
    /// The file holds the records with sequence numbers above this (up to
    /// the next file's `after_seq`).
    after_seq: u64,
    timestamp: u32,
    server_id: u32,
    /// The last GTID before the file.
    gtid: Option<Gtid>,
}

impl FileStart {
    fn key(num: u32) -> Vec<u8> {
        let mut k = vec![FILE_PREFIX];
        k.extend_from_slice(&num.to_be_bytes());
        k
    }

    fn encode(&self) -> Vec<u8> {
        let mut v = vec![FILE_RECORD_VERSION];
        v.extend_from_slice(&self.after_seq.to_le_bytes());
        v.extend_from_slice(&self.timestamp.to_le_bytes());
        v.extend_from_slice(&self.server_id.to_le_bytes());
        match self.gtid {
            None => v.push(0),
            Some(g) => {
                v.push(1);
                v.extend_from_slice(&g.domain.to_le_bytes());
                v.extend_from_slice(&g.server_id.to_le_bytes());
                v.extend_from_slice(&g.seq_no.to_le_bytes());
            }
        }
        v
    }

    fn decode(key: &[u8], v: &[u8]) -> Result<FileStart> {
        let bad = || Error::Corrupt("binlog file record does not decode".into());
        let num = u32::from_be_bytes(
            key.get(1..5)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        if v.first() != Some(&FILE_RECORD_VERSION) {
            return Err(bad());
        }
        let u32_at = |o: usize| -> Result<u32> {
            Ok(u32::from_le_bytes(
                v.get(o..o + 4)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            ))
        };
        let u64_at = |o: usize| -> Result<u64> {
            Ok(u64::from_le_bytes(
                v.get(o..o + 8)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            ))
        };
        let gtid = match v.get(17) {
            Some(0) => None,
            Some(1) => Some(Gtid {
                domain: u32_at(18)?,
                server_id: u32_at(22)?,
                seq_no: u64_at(26)?,
            }),
            _ => return Err(bad()),
        };
        Ok(FileStart {
            num,
            after_seq: u64_at(1)?,
            timestamp: u32_at(9)?,
            server_id: u32_at(13)?,
            gtid,
        })
    }
}

/// A row of SHOW BINLOG EVENTS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub log_name: String,
    pub pos: u64,
    pub event_type: String,
    pub server_id: u32,
    pub end_log_pos: u64,
    pub info: String,
}

struct State {
    /// Every file, oldest first; the last is the active one.
    files: Vec<FileStart>,
    /// The active file, open for appending.
    out: Option<std::fs::File>,
    cur: Cursor,
    /// The last record written to the files.
    last_seq: u64,
    buf: Vec<u8>,
}

/// How far the files are written, for readers of the files (replicas'
/// dumps, `crate::dump`): published after each write, under its own lock
/// so readers never wait for a catch-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// The active file's number.
    pub(crate) active: u32,
    /// The active file's length: it holds whole transactions up to here.
    pub(crate) pos: u64,
    /// The last GTID written.
    pub(crate) gtid: Option<Gtid>,
    /// The oldest file's number (PURGE raises it).
    pub(crate) first: u32,
    /// Set when the log closes: readers end.
    pub(crate) closed: bool,
}

/// The binary log (see the module docs).
pub struct Binlog {
    db: Db,
    cf: ColumnFamily,
    dir: PathBuf,
    base: String,
    server_id: AtomicU32,
    max_size: AtomicU64,
    st: Mutex<State>,
    pub(crate) progress: Mutex<Progress>,
    /// Notified whenever `progress` changes.
    pub(crate) grown: Condvar,
    /// Replicas registered by COM_REGISTER_SLAVE, by connection id.
    pub(crate) replicas: Mutex<std::collections::BTreeMap<u64, crate::dump::Replica>>,
    /// The running dumps by replica server id: a new dump for the same
    /// replica stops the old one (a replica that reconnected).
    pub(crate) dumps: Mutex<std::collections::HashMap<u32, crate::dump::DumpSlot>>,
    pub(crate) next_dump: AtomicU64,
    /// Set (and notified) by `kick`: records were committed, the
    /// background thread writes them at once.
    kicked: Mutex<bool>,
    kick_cv: Condvar,
}

fn now() -> u32 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

fn io(e: std::io::Error) -> Error {
    Error::Io(e.to_string())
}

impl Binlog {
    /// Opens (or starts) the log of `db`: re-derives the active file (and
    /// a closed file that does not check), rewrites the index, and starts
    /// the background thread that keeps the files current.
    pub fn open(db: &Db, cfg: Config) -> Result<Arc<Binlog>> {
        let cf = db.ensure_cf(CF_NAME)?;
        let b = Arc::new(Binlog {
            db: db.clone(),
            cf,
            dir: cfg.dir,
            base: cfg.basename,
            server_id: AtomicU32::new(cfg.server_id),
            max_size: AtomicU64::new(cfg.max_size.max(4096)),
            st: Mutex::new(State {
                files: Vec::new(),
                out: None,
                cur: Cursor { pos: 0, gtid: None },
                last_seq: 0,
                buf: Vec::new(),
            }),
            progress: Mutex::new(Progress {
                active: 0,
                pos: 0,
                gtid: None,
                first: 0,
                closed: false,
            }),
            grown: Condvar::new(),
            replicas: Mutex::new(Default::default()),
            dumps: Mutex::new(Default::default()),
            next_dump: AtomicU64::new(0),
            kicked: Mutex::new(false),
            kick_cv: Condvar::new(),
        });
        b.recover()?;
        let weak = Arc::downgrade(&b);
        std::thread::Builder::new()
            .name("binlog".into())
            .spawn(move || background(weak))
            .map_err(io)?;
        Ok(b)
    }

    /// The column family transactions put their records in.
    pub fn cf(&self) -> ColumnFamily {
        self.cf
    }

    /// A record header for a transaction starting now.
    pub fn record_header(&self) -> Vec<u8> {
        record::header(self.server_id.load(Ordering::Relaxed), now())
    }

    pub fn set_server_id(&self, id: u32) {
        self.server_id.store(id, Ordering::Relaxed);
    }

    pub fn max_size(&self) -> u64 {
        self.max_size.load(Ordering::Relaxed)
    }

    /// Sets max_binlog_size (at least 4096, as MariaDB).
    pub fn set_max_size(&self, n: u64) {
        self.max_size.store(n.max(4096), Ordering::Relaxed);
    }

    /// The file name of file `num`.
    pub fn file_name(&self, num: u32) -> String {
        format!("{}.{:06}", self.base, num)
    }

    fn path(&self, num: u32) -> PathBuf {
        self.dir.join(self.file_name(num))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn load_files(&self) -> Result<Vec<FileStart>> {
        let mut it = self.db.iter_cf(ReadOptions::default(), self.cf)?;
        let lo = [FILE_PREFIX];
        it.seek(&lo);
        let mut files = Vec::new();
        while it.valid() && it.key().first() == Some(&FILE_PREFIX) {
            files.push(FileStart::decode(it.key(), it.value())?);
            it.next();
        }
        it.status()?;
        Ok(files)
    }

    fn put_file_start(&self, f: &FileStart) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_cf(self.cf.0, &FileStart::key(f.num), &f.encode());
        self.db.write(WriteOptions::default(), b)?;
        Ok(())
    }

    fn recover(&self) -> Result<()> {
        let mut files = self.load_files()?;
        if files.is_empty() {
            let f = FileStart {
                num: 1,
                after_seq: 0,
                timestamp: now(),
                server_id: self.server_id.load(Ordering::Relaxed),
                gtid: None,
            };
            self.put_file_start(&f)?;
            files.push(f);
        }
        let (first, last) = (files[0].num, files[files.len() - 1].num);
        self.remove_strays(first, last)?;
        if files.len() >= 2 {
            let (closed, next) = (files[files.len() - 2], files[files.len() - 1]);
            let ok = std::fs::read(self.path(closed.num)).is_ok_and(|b| {
                decode::events(&b)
                    .is_ok_and(|e| e.last().is_some_and(|x| x.kind == event::kind::ROTATE))
            });
            if !ok {
                self.rewrite_closed(closed, next)?;
            }
        }
        let mut st = self.lock();
        let active = files[files.len() - 1];
        st.files = files;
        self.start_file(&mut st, active)?;
        self.publish(&st);
        self.write_index(&st)?;
        self.catch_up_locked(&mut st)
    }

    /// Removes files of this basename outside `first..=last` (left by a
    /// crash in the middle of a purge).
    fn remove_strays(&self, first: u32, last: u32) -> Result<()> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Ok(());
        };
        let prefix = format!("{}.", self.base);
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(n) = name.strip_prefix(&prefix) else {
                continue;
            };
            if n.len() == 6 && n.bytes().all(|c| c.is_ascii_digit()) {
                let n: u32 = n.parse().unwrap_or(0);
                if n < first || n > last {
                    std::fs::remove_file(e.path()).map_err(io)?;
                }
            }
        }
        Ok(())
    }

    /// The header events of file `f`: magic, FORMAT_DESCRIPTION,
    /// GTID_LIST, BINLOG_CHECKPOINT.
    fn file_header(&self, f: &FileStart) -> (Vec<u8>, u64) {
        let mut out = event::MAGIC.to_vec();
        let h = |kind| Header {
            timestamp: f.timestamp,
            kind,
            server_id: f.server_id,
            flags: 0,
        };
        let mut pos = 4;
        pos = event::write_event(
            &mut out,
            pos,
            h(event::kind::FORMAT_DESCRIPTION),
            &event::format_description(0),
        );
        let list: Vec<Gtid> = f.gtid.into_iter().collect();
        pos = event::write_event(
            &mut out,
            pos,
            h(event::kind::GTID_LIST),
            &event::gtid_list(&list),
        );
        pos = event::write_event(
            &mut out,
            pos,
            h(event::kind::BINLOG_CHECKPOINT),
            &event::binlog_checkpoint(&self.file_name(f.num)),
        );
        (out, pos)
    }

    /// Renders the records with sequence numbers in `(after, upto]` at `cur`
    /// into `out`, calling `sink` whenever `out` grows past 1 MiB and after
    /// each record with the cursor (`sink` returns true to stop).
    fn render_records(
        &self,
        after: u64,
        upto: Option<u64>,
        cur: &mut Cursor,
        out: &mut Vec<u8>,
        mut after_record: impl FnMut(&mut Vec<u8>, &Cursor, u64) -> Result<bool>,
    ) -> Result<()> {
        let mut it = self.db.iter_cf(ReadOptions::default(), self.cf)?;
        let mut start = TXN_PREFIX.to_vec();
        start.extend_from_slice(&(after + 1).to_be_bytes());
        it.seek(&start);
        while it.valid() && it.key().starts_with(TXN_PREFIX) {
            let k = it.key();
            let seq = u64::from_be_bytes(
                k.get(1..9)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| Error::Corrupt("binlog record key".into()))?,
            );
            if upto.is_some_and(|u| seq > u) {
                break;
            }
            let rec = record::decode(it.value())?;
            record::render(out, cur, &rec, seq)?;
            if after_record(out, cur, seq)? {
                break;
            }
            it.next();
        }
        it.status()?;
        Ok(())
    }

    /// Rewrites closed file `f` (followed by `next`) from its records.
    fn rewrite_closed(&self, f: FileStart, next: FileStart) -> Result<()> {
        let (mut out, pos) = self.file_header(&f);
        let mut cur = Cursor { pos, gtid: f.gtid };
        self.render_records(
            f.after_seq,
            Some(next.after_seq),
            &mut cur,
            &mut out,
            |_, _, _| Ok(false),
        )?;
        self.append_rotate(&mut out, &mut cur, &next);
        let tmp = self.dir.join(format!("{}.tmp", self.file_name(f.num)));
        let mut fh = std::fs::File::create(&tmp).map_err(io)?;
        fh.write_all(&out).map_err(io)?;
        fh.sync_all().map_err(io)?;
        std::fs::rename(&tmp, self.path(f.num)).map_err(io)?;
        Ok(())
    }

    fn append_rotate(&self, out: &mut Vec<u8>, cur: &mut Cursor, next: &FileStart) {
        let h = Header {
            timestamp: next.timestamp,
            kind: event::kind::ROTATE,
            server_id: next.server_id,
            flags: 0,
        };
        cur.pos = event::write_event(
            out,
            cur.pos,
            h,
            &event::rotate(4, &self.file_name(next.num)),
        );
    }

    /// Creates (truncating) file `f` with its header and makes it active.
    fn start_file(&self, st: &mut State, f: FileStart) -> Result<()> {
        let (head, pos) = self.file_header(&f);
        let mut fh = std::fs::File::create(self.path(f.num)).map_err(io)?;
        fh.write_all(&head).map_err(io)?;
        st.out = Some(fh);
        st.cur = Cursor { pos, gtid: f.gtid };
        st.last_seq = f.after_seq;
        Ok(())
    }

    fn write_index(&self, st: &State) -> Result<()> {
        let mut s = String::new();
        for f in &st.files {
            s.push_str(&format!("./{}\n", self.file_name(f.num)));
        }
        let path = self.dir.join(format!("{}.index", self.base));
        let tmp = self.dir.join(format!("{}.index.tmp", self.base));
        std::fs::write(&tmp, s).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    fn write_buf(st: &mut State) -> Result<()> {
        if st.buf.is_empty() {
            return Ok(());
        }
        let out = st
            .out
            .as_mut()
            .ok_or_else(|| Error::Io("no active binlog file".into()))?;
        out.write_all(&st.buf).map_err(io)?;
        st.buf.clear();
        Ok(())
    }

    /// Records were committed: the background thread writes them to the
    /// files now (replicas waiting in a dump get them without delay).
    pub fn kick(&self) {
        let mut g = self.kicked.lock().unwrap_or_else(|p| p.into_inner());
        if !*g {
            *g = true;
            self.kick_cv.notify_one();
        }
    }

    /// Writes every committed record not yet in the files.
    pub fn catch_up(&self) -> Result<()> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)
    }

    fn catch_up_locked(&self, st: &mut State) -> Result<()> {
        loop {
            let mut cur = st.cur;
            let mut buf = std::mem::take(&mut st.buf);
            let mut last = st.last_seq;
            let max = self.max_size();
            let mut full = false;
            self.render_records(st.last_seq, None, &mut cur, &mut buf, |_, c, seq| {
                last = seq;
                full = c.pos >= max;
                Ok(full)
            })?;
            st.cur = cur;
            st.buf = buf;
            st.last_seq = last;
            Self::write_buf(st)?;
            self.publish(st);
            if !full {
                return Ok(());
            }
            self.rotate_locked(st)?;
        }
    }

    /// Closes the active file after what it holds and starts the next.
    fn rotate_locked(&self, st: &mut State) -> Result<()> {
        let active = st
            .files
            .last()
            .copied()
            .ok_or_else(|| Error::Io("no binlog file".into()))?;
        let next = FileStart {
            num: active.num + 1,
            after_seq: st.last_seq,
            timestamp: now(),
            server_id: self.server_id.load(Ordering::Relaxed),
            gtid: st.cur.gtid,
        };
        self.put_file_start(&next)?;
        let mut cur = st.cur;
        let mut buf = std::mem::take(&mut st.buf);
        self.append_rotate(&mut buf, &mut cur, &next);
        st.buf = buf;
        Self::write_buf(st)?;
        if let Some(f) = st.out.take() {
            f.sync_all().map_err(io)?;
        }
        st.files.push(next);
        self.start_file(st, next)?;
        self.publish(st);
        self.write_index(st)
    }

    /// Tells readers how far the files are written.
    fn publish(&self, st: &State) {
        let p = Progress {
            active: st.files.last().map_or(0, |f| f.num),
            pos: st.cur.pos,
            gtid: st.cur.gtid,
            first: st.files.first().map_or(0, |f| f.num),
            closed: false,
        };
        let mut g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        if *g != p && !g.closed {
            *g = p;
            self.grown.notify_all();
        }
    }

    /// Ends every reader of the files (server shutdown).
    pub fn close_readers(&self) {
        let mut g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        g.closed = true;
        self.grown.notify_all();
    }

    /// Every file's number and the last GTID before it (its GTID_LIST),
    /// oldest first.
    pub(crate) fn file_starts(&self) -> Vec<(u32, Option<Gtid>)> {
        self.lock().files.iter().map(|f| (f.num, f.gtid)).collect()
    }

    /// The number of file `name`, if it is in the log.
    pub(crate) fn file_num(&self, name: &str) -> Option<u32> {
        self.lock()
            .files
            .iter()
            .find(|f| self.file_name(f.num) == name)
            .map(|f| f.num)
    }

    /// The path of file `num`.
    pub(crate) fn file_path(&self, num: u32) -> PathBuf {
        self.path(num)
    }

    /// The server id the log is written with.
    pub fn server_id(&self) -> u32 {
        self.server_id.load(Ordering::Relaxed)
    }

    /// FLUSH BINARY LOGS: catch up, then start a new file.
    pub fn flush_logs(&self) -> Result<()> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        self.rotate_locked(&mut st)
    }

    /// SHOW MASTER STATUS: the active file and its size.
    pub fn status(&self) -> Result<(String, u64)> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let f = st.files.last().map_or(0, |f| f.num);
        Ok((self.file_name(f), st.cur.pos))
    }

    /// @@gtid_binlog_pos: the last GTID written ("" when none).
    pub fn gtid_pos(&self) -> Result<String> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        Ok(st.cur.gtid.map(|g| g.to_string()).unwrap_or_default())
    }

    /// SHOW BINARY LOGS: every file and its size.
    pub fn list(&self) -> Result<Vec<(String, u64)>> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let n = st.files.len();
        let mut v = Vec::with_capacity(n);
        for (i, f) in st.files.iter().enumerate() {
            let size = if i + 1 == n {
                st.cur.pos
            } else {
                std::fs::metadata(self.path(f.num)).map_or(0, |m| m.len())
            };
            v.push((self.file_name(f.num), size));
        }
        Ok(v)
    }

    /// The active file's name.
    pub fn active_name(&self) -> String {
        let st = self.lock();
        self.file_name(st.files.last().map_or(0, |f| f.num))
    }

    /// SHOW BINLOG EVENTS [IN name] [FROM pos]: the events of a file (the
    /// first file when `name` is None) starting at `from`. `Ok(None)` when
    /// the file is not in the log.
    pub fn events(&self, name: Option<&str>, from: u64) -> Result<Option<Vec<EventRow>>> {
        let num = {
            let mut st = self.lock();
            self.catch_up_locked(&mut st)?;
            match name {
                None => st.files.first().map(|f| f.num),
                Some(n) => st
                    .files
                    .iter()
                    .find(|f| self.file_name(f.num) == n)
                    .map(|f| f.num),
            }
        };
        let Some(num) = num else { return Ok(None) };
        let bytes = std::fs::read(self.path(num)).map_err(io)?;
        let evs = decode::events(&bytes)?;
        let log_name = self.file_name(num);
        Ok(Some(
            evs.iter()
                .filter(|e| e.pos >= from)
                .map(|e| EventRow {
                    log_name: log_name.clone(),
                    pos: e.pos,
                    event_type: decode::type_name(e.kind),
                    server_id: e.server_id,
                    end_log_pos: e.end_pos,
                    info: decode::info(e),
                })
                .collect(),
        ))
    }

    /// PURGE BINARY LOGS TO name: removes the files before `name` (which
    /// stays), with their records. False when `name` is not in the log.
    pub fn purge_to(&self, name: &str) -> Result<bool> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let Some(k) = st.files.iter().position(|f| self.file_name(f.num) == name) else {
            return Ok(false);
        };
        self.purge_locked(&mut st, k)?;
        Ok(true)
    }

    /// PURGE BINARY LOGS BEFORE t: removes the closed files last modified
    /// before `t`, oldest first, stopping at the first newer one.
    pub fn purge_before(&self, t: SystemTime) -> Result<()> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let n = st.files.len();
        let mut k = 0;
        while k + 1 < n {
            let m = std::fs::metadata(self.path(st.files[k].num)).and_then(|m| m.modified());
            match m {
                Ok(m) if m < t => k += 1,
                _ => break,
            }
        }
        self.purge_locked(&mut st, k)
    }

    /// Drops files `0..k`: their `F` records and transaction records first
    /// (one synced batch), then the files, then the index.
    fn purge_locked(&self, st: &mut State, k: usize) -> Result<()> {
        if k == 0 {
            return Ok(());
        }
        let keep = st.files[k];
        let mut b = WriteBatch::new();
        b.delete_range_cf(self.cf.0, &FileStart::key(0), &FileStart::key(keep.num));
        let mut end = TXN_PREFIX.to_vec();
        end.extend_from_slice(&(keep.after_seq + 1).to_be_bytes());
        b.delete_range_cf(self.cf.0, TXN_PREFIX, &end);
        self.db.write(WriteOptions::default(), b)?;
        for f in st.files.drain(..k) {
            match std::fs::remove_file(self.path(f.num)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
        }
        self.publish(st);
        self.write_index(st)
    }

    /// The directory the files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Keeps the files current while the log is open: at each `kick` (a
/// commit), and every `CATCH_UP_EVERY` in any case.
fn background(weak: Weak<Binlog>) {
    loop {
        let Some(b) = weak.upgrade() else { return };
        {
            let g = b.kicked.lock().unwrap_or_else(|p| p.into_inner());
            let mut g = if *g {
                g
            } else {
                b.kick_cv
                    .wait_timeout(g, CATCH_UP_EVERY)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            };
            *g = false;
        }
        // Errors are retried; the records stay the truth meanwhile.
        let _ = b.catch_up();
    }
}
