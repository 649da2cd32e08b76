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
use crate::filestart::{hex, FileStart, FILE_PREFIX};
use crate::record::{self, Cursor};
use crate::{Error, Result};
use lsm::{ColumnFamily, Db, ReadOptions, WriteBatch, WriteOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

mod reset;
use std::time::{Duration, SystemTime};

/// The column family holding the log's records.
pub const CF_NAME: &str = "__binlog__";
/// Key prefix of transaction records.
pub const TXN_PREFIX: &[u8] = b"T";
/// How often the background thread brings the files up to date.
const CATCH_UP_EVERY: Duration = Duration::from_millis(100);
/// Rendered events are written out whenever this much is buffered: a file
/// re-derived at open (up to max_binlog_size, 1 GiB by default) or a long
/// backlog never sits in memory whole (a server under a 600 MB limit was
/// killed at start re-deriving a 1 GiB active file).
const WRITE_CHUNK: usize = 1 << 20;

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
    /// The active file, open for appending; None after a failed write or
    /// rotation: the next call re-derives the files from the records
    /// (`recover_locked`) before going on.
    out: Option<std::fs::File>,
    cur: Cursor,
    /// The last record written to the files.
    last_seq: u64,
    buf: Vec<u8>,
    /// The last error the background writer met (printed once).
    last_error: Option<String>,
    /// The files were written through the last record before one that
    /// does not decode (this record's sequence number): the active file is
    /// good and stays open, never re-derived (truncated) on every retry.
    stuck_after: Option<u64>,
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
    /// RESET MASTERs so far: a reader that started before one ends.
    pub(crate) resets: u64,
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
    /// The running dumps by token: a new dump for the same replica server
    /// id stops the old one (a replica that reconnected); PURGE keeps the
    /// files they read.
    pub(crate) dumps: Mutex<std::collections::HashMap<u64, crate::dump::DumpSlot>>,
    pub(crate) next_dump: AtomicU64,
    /// The GTID state at each file's start, for GTID connects.
    pub(crate) gtid_index: Mutex<crate::gtidindex::GtidIndex>,
    /// Bytes of the files read for GTID connects (tests: a connect reads
    /// what is new and the file holding the state's GTID, not the log).
    pub(crate) gtid_scanned: AtomicU64,
    /// Set (and notified) by `kick`: records were committed, the
    /// background thread writes them at once.
    /// Shared with the background thread, which waits on it without
    /// holding the log (a dropped log is gone at once: its `Db` handle
    /// with it, so the datadir can be opened again).
    kick: Arc<Kick>,
    /// Every file's (number, name), oldest first, as `publish` last saw
    /// them: names are looked up without the writer's lock (a leaf lock,
    /// never held while taking another).
    names: Mutex<Vec<(u32, String)>>,
}

fn now() -> u32 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

fn io(e: std::io::Error) -> Error {
    Error::Io(e.to_string())
}

/// A file's name: `<base>.<6 digits>`.
fn name_of(f: &FileStart) -> String {
    format!("{}.{:06}", f.base, f.num)
}

impl Binlog {
    /// Opens (or starts) the log of `db`: re-derives the active file and
    /// every closed file that is missing or does not end in its ROTATE,
    /// rewrites the index, and starts the background thread that keeps the
    /// files current.
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
                last_error: None,
                stuck_after: None,
            }),
            progress: Mutex::new(Progress {
                active: 0,
                pos: 0,
                gtid: None,
                first: 0,
                closed: false,
                resets: 0,
            }),
            grown: Condvar::new(),
            replicas: Mutex::new(Default::default()),
            dumps: Mutex::new(Default::default()),
            next_dump: AtomicU64::new(0),
            gtid_index: Mutex::new(Default::default()),
            gtid_scanned: AtomicU64::new(0),
            kick: Arc::new(Kick::default()),
            names: Mutex::new(Vec::new()),
        });
        {
            let mut st = b.lock();
            match b.recover_locked(&mut st) {
                // A record that does not render must not keep the server
                // from starting: the log stays stopped before it, every
                // statement reading positions gets the error naming it
                // (docs/REPLICATION.md: what a DBA can do).
                Err(Error::Corrupt(m)) => {
                    eprintln!("strata: binary log: {m}");
                    if st.stuck_after.is_none() {
                        st.out = None;
                    }
                    st.last_error = Some(format!("binlog corrupt: {m}"));
                }
                Err(e) => return Err(e),
                Ok(()) => {
                    // A new basename: files from now on are named after it.
                    if st.files.last().is_some_and(|f| f.base != b.base) {
                        b.rotate_locked(&mut st)?;
                    }
                }
            }
        }
        let weak = Arc::downgrade(&b);
        let kick = b.kick.clone();
        std::thread::Builder::new()
            .name("binlog".into())
            .spawn(move || background(weak, &kick))
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

    /// SET GLOBAL max_binlog_size (at least 4096, as MariaDB). The active
    /// file keeps the size it was started with (its `F` record), so that
    /// its positions never move: if it holds records it is rotated first
    /// and the new size applies from the next file; if it holds none its
    /// `F` record takes the new size.
    pub fn set_max_size(&self, n: u64) -> Result<()> {
        let n = n.max(4096);
        self.max_size.store(n, Ordering::Relaxed);
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let Some(active) = st.files.last().cloned() else {
            return Ok(());
        };
        if active.max_size == n {
            return Ok(());
        }
        if st.last_seq == active.after_seq {
            let f = FileStart {
                max_size: n,
                ..active
            };
            self.put_file_start(&f)?;
            if let Some(last) = st.files.last_mut() {
                *last = f;
            }
            return Ok(());
        }
        self.rotate_locked(&mut st)
    }

    /// The file name of file `num` (under the basename it was started
    /// with; the configured one for a file not in the log).
    pub fn file_name(&self, num: u32) -> String {
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        match names.iter().find(|f| f.0 == num) {
            Some(f) => f.1.clone(),
            None => format!("{}.{:06}", self.base, num),
        }
    }

    fn path_of(&self, f: &FileStart) -> PathBuf {
        self.dir.join(name_of(f))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` holding the background thread's wake-up lock (tests: the
    /// thread cannot start a catch-up meanwhile, so it cannot take a handle
    /// on the log).
    #[cfg(test)]
    pub(crate) fn with_writer_thread_parked<T>(&self, f: impl FnOnce() -> T) -> T {
        let _k = self.kick.kicked.lock().unwrap_or_else(|p| p.into_inner());
        f()
    }

    /// Runs `f` holding the writer's lock (tests: as a PURGE would).
    #[cfg(test)]
    pub(crate) fn with_writer_held<T>(&self, f: impl FnOnce() -> T) -> T {
        let _st = self.lock();
        f()
    }

    fn load_files(&self) -> Result<Vec<FileStart>> {
        let mut it = self.db.iter_cf(ReadOptions::default(), self.cf)?;
        let lo = [FILE_PREFIX];
        it.seek(&lo);
        let mut files = Vec::new();
        let max = self.max_size();
        // Version 1 records (no max size or basename) are rewritten as
        // version 2 with this open's settings, so that later settings
        // never move their files' names or positions.
        let mut upgrade = WriteBatch::new();
        while it.valid() && it.key().first() == Some(&FILE_PREFIX) {
            let f = FileStart::decode(it.key(), it.value(), max, &self.base)?;
            if it.value().first() == Some(&1) {
                upgrade.put_cf(self.cf.0, &FileStart::key(f.num), &f.encode());
            }
            files.push(f);
            it.next();
        }
        it.status()?;
        if !upgrade.is_empty() {
            self.db.write(synced(), upgrade)?;
        }
        Ok(files)
    }

    fn put_file_start(&self, f: &FileStart) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_cf(self.cf.0, &FileStart::key(f.num), &f.encode());
        self.db.write(synced(), b)?;
        Ok(())
    }

    /// Brings the files in line with the records: every closed file that
    /// is missing or does not end in the ROTATE its `F` records give it is
    /// rewritten (a crash before its ROTATE was fsynced, files not carried
    /// by a restore, a directory entry lost with the power), the active
    /// file is rewritten and caught up, files outside the `F` range are
    /// removed and the index rewritten.
    fn recover_locked(&self, st: &mut State) -> Result<()> {
        st.out = None;
        let mut files = self.load_files()?;
        if files.is_empty() {
            let f = FileStart {
                num: 1,
                max_size: self.max_size(),
                base: self.base.clone(),
                after_seq: 0,
                timestamp: now(),
                server_id: self.server_id.load(Ordering::Relaxed),
                gtid: None,
            };
            self.put_file_start(&f)?;
            files.push(f);
        }
        self.remove_strays(&files)?;
        for w in files.windows(2) {
            if !self.closed_file_ok(&w[0], &w[1]) {
                self.rewrite_closed(&w[0], &w[1], &mut st.buf)?;
            }
        }
        let active = files[files.len() - 1].clone();
        st.files = files;
        self.start_file(st, &active)?;
        self.publish(st);
        self.write_index(st)?;
        sync_dir(&self.dir)?;
        self.catch_up_inner(st)
    }

    /// Removes files named after the log's basenames that are outside the
    /// `F` range (left by a crash in the middle of a purge).
    fn remove_strays(&self, files: &[FileStart]) -> Result<()> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Ok(());
        };
        let (Some(first), Some(last)) = (files.first(), files.last()) else {
            return Ok(());
        };
        let mut bases: Vec<&str> = files.iter().map(|f| f.base.as_str()).collect();
        bases.push(&self.base);
        bases.sort_unstable();
        bases.dedup();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            for base in &bases {
                let Some(n) = name.strip_prefix(&format!("{base}.")) else {
                    continue;
                };
                if n.len() == 6 && n.bytes().all(|c| c.is_ascii_digit()) {
                    let n: u32 = n.parse().unwrap_or(0);
                    let ours = files.iter().any(|f| f.num == n && f.base == *base);
                    if !ours && (n < first.num || n > last.num) {
                        std::fs::remove_file(e.path()).map_err(io)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether closed file `f` is there, starts with the magic and ends in
    /// the ROTATE to `next` (read from its tail: no whole-file read at
    /// open). A file torn before its ROTATE, or lost, fails this.
    fn closed_file_ok(&self, f: &FileStart, next: &FileStart) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut fh) = std::fs::File::open(self.path_of(f)) else {
            return false;
        };
        let Ok(len) = fh.metadata().map(|m| m.len()) else {
            return false;
        };
        let mut magic = [0u8; 4];
        if fh.read_exact(&mut magic).is_err() || magic != event::MAGIC {
            return false;
        }
        let mut want = Vec::new();
        let size = (event::HEADER_LEN + 8 + name_of(next).len() + event::CHECKSUM_LEN) as u64;
        let Some(at) = len.checked_sub(size).filter(|&a| a >= 4) else {
            return false;
        };
        let mut cur = Cursor {
            pos: at,
            gtid: None,
        };
        self.append_rotate(&mut want, &mut cur, next);
        let mut tail = vec![0u8; want.len()];
        fh.seek(SeekFrom::Start(at)).is_ok() && fh.read_exact(&mut tail).is_ok() && tail == want
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
            &event::binlog_checkpoint(&name_of(f)),
        );
        (out, pos)
    }

    /// Renders the records with sequence numbers in `(after, upto]` at `cur`
    /// into `out`, calling `after_record` after each record with the
    /// cursor (it returns true to stop). A record that does not decode is
    /// an error naming its key.
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
                    .ok_or_else(|| Error::Corrupt(format!("binlog record key {}", hex(k))))?,
            );
            if upto.is_some_and(|u| seq > u) {
                break;
            }
            let named = |e: Error| match e {
                Error::Corrupt(m) => Error::Corrupt(format!(
                    "{m} (record T{seq} in column family {CF_NAME}: the files stop before it; \
                     the transactions committed after it are kept in the records, not in the files)"
                )),
                other => other,
            };
            let rec = record::decode(it.value()).map_err(named)?;
            record::render(out, cur, &rec, seq).map_err(named)?;
            if after_record(out, cur, seq)? {
                break;
            }
            it.next();
        }
        it.status()?;
        Ok(())
    }

    /// Rewrites closed file `f` (followed by `next`) from its records,
    /// through `buf` in chunks of WRITE_CHUNK.
    fn rewrite_closed(&self, f: &FileStart, next: &FileStart, buf: &mut Vec<u8>) -> Result<()> {
        let (head, pos) = self.file_header(f);
        buf.clear();
        buf.extend_from_slice(&head);
        let mut cur = Cursor { pos, gtid: f.gtid };
        let tmp = self.dir.join(format!("{}.tmp", name_of(f)));
        let mut fh = std::fs::File::create(&tmp).map_err(io)?;
        self.render_records(
            f.after_seq,
            Some(next.after_seq),
            &mut cur,
            buf,
            |o, _, _| {
                if o.len() >= WRITE_CHUNK {
                    fh.write_all(o).map_err(io)?;
                    o.clear();
                }
                Ok(false)
            },
        )?;
        self.append_rotate(buf, &mut cur, next);
        fh.write_all(buf).map_err(io)?;
        buf.clear();
        fh.sync_all().map_err(io)?;
        std::fs::rename(&tmp, self.path_of(f)).map_err(io)?;
        Ok(())
    }

    /// The capacity of the writer's buffer: the most it ever held (tests).
    #[cfg(test)]
    pub(crate) fn buf_capacity(&self) -> usize {
        self.lock().buf.capacity()
    }

    fn append_rotate(&self, out: &mut Vec<u8>, cur: &mut Cursor, next: &FileStart) {
        let h = Header {
            timestamp: next.timestamp,
            kind: event::kind::ROTATE,
            server_id: next.server_id,
            flags: 0,
        };
        cur.pos = event::write_event(out, cur.pos, h, &event::rotate(4, &name_of(next)));
    }

    /// Creates (truncating) file `f` with its header and makes it active.
    fn start_file(&self, st: &mut State, f: &FileStart) -> Result<()> {
        let (head, pos) = self.file_header(f);
        let mut fh = std::fs::File::create(self.path_of(f)).map_err(io)?;
        fh.write_all(&head).map_err(io)?;
        st.out = Some(fh);
        st.cur = Cursor { pos, gtid: f.gtid };
        st.last_seq = f.after_seq;
        st.buf.clear();
        Ok(())
    }

    fn write_index(&self, st: &State) -> Result<()> {
        let mut s = String::new();
        for f in &st.files {
            s.push_str(&format!("./{}\n", name_of(f)));
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
        let mut g = self.kick.kicked.lock().unwrap_or_else(|p| p.into_inner());
        if !*g {
            *g = true;
            self.kick.cv.notify_one();
        }
    }

    /// Writes every committed record not yet in the files.
    pub fn catch_up(&self) -> Result<()> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)
    }

    /// `catch_up_inner` after re-deriving the files if an earlier write
    /// failed; a failure leaves the state to be re-derived by the next call
    /// (the records stay the truth, the files are a pure function of them).
    fn catch_up_locked(&self, st: &mut State) -> Result<()> {
        let r = if st.out.is_none() {
            self.recover_locked(st)
        } else {
            self.catch_up_inner(st)
        };
        if r.is_err() && st.stuck_after.is_none() {
            st.out = None;
        }
        r
    }

    fn catch_up_inner(&self, st: &mut State) -> Result<()> {
        st.stuck_after = None;
        loop {
            let max = st.files.last().map_or(self.max_size(), |f| f.max_size);
            let mut cur = st.cur;
            let mut buf = std::mem::take(&mut st.buf);
            let mut last = st.last_seq;
            let mut full = false;
            let mut chunk = false;
            let mut good = (buf.len(), cur);
            let rendered =
                self.render_records(st.last_seq, None, &mut cur, &mut buf, |o, c, seq| {
                    last = seq;
                    good = (o.len(), *c);
                    full = c.pos >= max;
                    chunk = o.len() >= WRITE_CHUNK;
                    Ok(full || chunk)
                });
            let bad_record = match rendered {
                Err(Error::Corrupt(m)) => {
                    // Written through the last record that decoded.
                    buf.truncate(good.0);
                    cur = good.1;
                    full = false;
                    Some(m)
                }
                Err(e) => return Err(e),
                Ok(()) => None,
            };
            st.buf = buf;
            // The cursor moves only once its bytes are in the file.
            Self::write_buf(st)?;
            st.cur = cur;
            st.last_seq = last;
            self.publish(st);
            if let Some(m) = bad_record {
                st.stuck_after = Some(last);
                return Err(Error::Corrupt(m));
            }
            if full {
                self.rotate_inner(st)?;
            } else if !chunk {
                return Ok(());
            }
        }
    }

    /// Closes the active file after what it holds and starts the next
    /// (re-deriving the files first, and again at the next call, on error).
    fn rotate_locked(&self, st: &mut State) -> Result<()> {
        if st.out.is_none() {
            self.catch_up_locked(st)?;
        }
        let r = self.rotate_inner(st);
        if r.is_err() {
            st.out = None;
        }
        r
    }

    fn rotate_inner(&self, st: &mut State) -> Result<()> {
        let active = st
            .files
            .last()
            .cloned()
            .ok_or_else(|| Error::Io("no binlog file".into()))?;
        let next = FileStart {
            num: active.num + 1,
            max_size: self.max_size(),
            base: self.base.clone(),
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
        if let Some(f) = &st.out {
            f.sync_all().map_err(io)?;
        }
        st.files.push(next.clone());
        self.start_file(st, &next)?;
        self.publish(st);
        self.write_index(st)?;
        sync_dir(&self.dir)
    }

    /// Tells readers how far the files are written.
    fn publish(&self, st: &State) {
        {
            let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
            if names.len() != st.files.len()
                || names.first().map(|f| f.0) != st.files.first().map(|f| f.num)
                || names.last().map(|f| f.0) != st.files.last().map(|f| f.num)
            {
                *names = st.files.iter().map(|f| (f.num, name_of(f))).collect();
            }
        }
        let mut g = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let p = Progress {
            active: st.files.last().map_or(0, |f| f.num),
            pos: st.cur.pos,
            gtid: st.cur.gtid,
            first: st.files.first().map_or(0, |f| f.num),
            closed: false,
            resets: g.resets,
        };
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

    /// The number of file `name`, if it is in the log. Read under the
    /// writer's lock, as PURGE runs: a dump (registered first, its slot at
    /// 0 keeping every file) resolves its file after a PURGE that started
    /// before it finished, so never to a file that PURGE is removing.
    pub(crate) fn file_num(&self, name: &str) -> Option<u32> {
        self.lock()
            .files
            .iter()
            .find(|f| name_of(f) == name)
            .map(|f| f.num)
    }

    /// The path of file `num`.
    pub(crate) fn file_path(&self, num: u32) -> PathBuf {
        self.dir.join(self.file_name(num))
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
        let f = st.files.last().map(name_of).unwrap_or_default();
        Ok((f, st.cur.pos))
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
                std::fs::metadata(self.path_of(f)).map_or(0, |m| m.len())
            };
            v.push((name_of(f), size));
        }
        Ok(v)
    }

    /// The active file's name.
    pub fn active_name(&self) -> String {
        let st = self.lock();
        st.files.last().map(name_of).unwrap_or_default()
    }

    /// SHOW BINLOG EVENTS [IN name] [FROM pos]: the events of a file (the
    /// first file when `name` is None) starting at `from`. `Ok(None)` when
    /// the file is not in the log.
    pub fn events(&self, name: Option<&str>, from: u64) -> Result<Option<Vec<EventRow>>> {
        self.events_limit(name, from, 0, u64::MAX)
    }

    /// SHOW BINLOG EVENTS ... LIMIT skip, n: as `events`, reading the
    /// file under the writer's lock (no torn last event, no PURGE between
    /// finding the file and reading it) and only as far as the rows
    /// asked for.
    pub fn events_limit(
        &self,
        name: Option<&str>,
        from: u64,
        skip: u64,
        n: u64,
    ) -> Result<Option<Vec<EventRow>>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let k = match name {
            None => Some(0).filter(|_| !st.files.is_empty()),
            Some(n) => st.files.iter().position(|f| name_of(f) == n),
        };
        let Some(k) = k else { return Ok(None) };
        let f = &st.files[k];
        let log_name = name_of(f);
        let mut fh = match std::fs::File::open(self.path_of(f)) {
            Ok(fh) => fh,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let end = if k + 1 == st.files.len() {
            st.cur.pos
        } else {
            fh.metadata().map_err(io)?.len()
        };
        let mut rd = std::io::BufReader::new(&mut fh);
        let mut magic = [0u8; 4];
        rd.read_exact(&mut magic).map_err(io)?;
        if magic != event::MAGIC {
            return Err(Error::Corrupt(format!("{log_name}: bad magic")));
        }
        let mut out = Vec::new();
        let (mut pos, mut skipped) = (4u64, 0u64);
        while pos < end && (out.len() as u64) < n {
            let mut h = [0u8; event::HEADER_LEN];
            rd.read_exact(&mut h).map_err(io)?;
            let size = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as u64;
            if size < (event::HEADER_LEN + event::CHECKSUM_LEN) as u64 || pos + size > end {
                return Err(Error::Corrupt(format!(
                    "{log_name}: event at {pos} has a bad size"
                )));
            }
            let rest = size - event::HEADER_LEN as u64;
            if pos < from || skipped < skip {
                if pos >= from {
                    skipped += 1;
                }
                rd.seek(SeekFrom::Current(rest as i64)).map_err(io)?;
                pos += size;
                continue;
            }
            let mut ev = h.to_vec();
            ev.resize(size as usize, 0);
            rd.read_exact(&mut ev[event::HEADER_LEN..]).map_err(io)?;
            let e = decode::event_at(&ev, pos)?;
            out.push(EventRow {
                log_name: log_name.clone(),
                pos,
                event_type: decode::type_name(e.kind),
                server_id: e.server_id,
                end_log_pos: e.end_pos,
                info: decode::info(&e),
            });
            pos += size;
        }
        Ok(Some(out))
    }

    /// PURGE BINARY LOGS TO name: removes the files before `name` (which
    /// stays), with their records. False when `name` is not in the log.
    pub fn purge_to(&self, name: &str) -> Result<bool> {
        let mut st = self.lock();
        self.catch_up_locked(&mut st)?;
        let Some(k) = st.files.iter().position(|f| name_of(f) == name) else {
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
            let m = std::fs::metadata(self.path_of(&st.files[k])).and_then(|m| m.modified());
            match m {
                Ok(m) if m < t => k += 1,
                _ => break,
            }
        }
        self.purge_locked(&mut st, k)
    }

    /// Drops files `0..k`: their `F` records and transaction records first
    /// (one synced batch), then the files, then the index; the records'
    /// space is reclaimed in the background, as DROP TABLE's
    /// (`lsm::Db::reclaim_range`: nothing is written under purged keys
    /// again).
    ///
    /// A file a running dump reads or will read is kept, with every later
    /// one (as MariaDB 10.11: the purge silently stops before it).
    fn purge_locked(&self, st: &mut State, k: usize) -> Result<()> {
        let k = match self.lowest_in_use() {
            Some(low) => st.files[..k].iter().take_while(|f| f.num < low).count(),
            None => k,
        };
        if k == 0 {
            return Ok(());
        }
        let keep = st.files[k].clone();
        let mut b = WriteBatch::new();
        let (f_lo, f_hi) = (FileStart::key(0), FileStart::key(keep.num));
        b.delete_range_cf(self.cf.0, &f_lo, &f_hi);
        let mut end = TXN_PREFIX.to_vec();
        end.extend_from_slice(&(keep.after_seq + 1).to_be_bytes());
        b.delete_range_cf(self.cf.0, TXN_PREFIX, &end);
        self.db.write(synced(), b)?;
        self.db.reclaim_range(self.cf, &f_lo, &f_hi);
        self.db.reclaim_range(self.cf, TXN_PREFIX, &end);
        for f in st.files.drain(..k) {
            match std::fs::remove_file(self.path_of(&f)) {
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

pub(crate) fn synced() -> WriteOptions {
    WriteOptions {
        sync: true,
        disable_wal: false,
    }
}

/// Makes new and renamed directory entries durable.
fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}

impl Drop for Binlog {
    fn drop(&mut self) {
        // The background thread ends now rather than at its next timer.
        self.kick.cv.notify_one();
    }
}

/// The background writer's wake-up: set by `Binlog::kick`.
#[derive(Default)]
struct Kick {
    kicked: Mutex<bool>,
    cv: Condvar,
}

/// Keeps the files current while the log is open: at each `kick` (a
/// commit), and every `CATCH_UP_EVERY` in any case. An error is printed
/// (once until it changes or clears) and retried every 5 s; the writer
/// re-derives the files at its next call (the records stay the truth).
fn background(weak: Weak<Binlog>, kick: &Kick) {
    let mut failing = 0u32;
    loop {
        {
            let g = kick.kicked.lock().unwrap_or_else(|p| p.into_inner());
            let mut g = if *g && failing == 0 {
                g
            } else {
                kick.cv
                    .wait_timeout(g, CATCH_UP_EVERY)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            };
            *g = false;
        }
        // The log only while catching up.
        let Some(b) = weak.upgrade() else { return };
        if failing > 0 && failing % 50 != 0 {
            failing += 1;
            continue;
        }
        let r = b.catch_up();
        failing = if r.is_ok() { 0 } else { failing + 1 };
        let mut st = b.lock();
        match r {
            Ok(()) => st.last_error = None,
            Err(e) => {
                let m = e.to_string();
                if st.last_error.as_deref() != Some(m.as_str()) {
                    eprintln!("strata: binary log writer: {m} (retrying)");
                    st.last_error = Some(m);
                }
            }
        }
    }
}
