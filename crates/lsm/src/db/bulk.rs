//! Writing tables to ingest (`BulkWriter`, the engine side of bulk loads and
//! sorted index builds): entries in increasing key order are cut into files
//! of about the column family's target size, built on a thread of the
//! writer's own, so that block building, compression and file writes run
//! beside the caller's work (sorting, merging, decoding rows) instead of
//! after it. `ops.rs` ingests the files.
use super::ops::SstFileWriter;
use super::{ColumnFamily, Db};
use crate::error::{Error, Result};
use crate::options::CfOptions;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What `BulkWriter::read_back` calls with each entry.
pub type EntryFn<'a, E> = dyn FnMut(&[u8], &[u8]) -> std::result::Result<(), E> + 'a;

/// Bytes of entries handed to the file thread at a time.
const BATCH: usize = 1 << 20;
/// Batches queued for the file thread before `put` waits for it.
const QUEUED: usize = 2;

/// Tables being written in the database directory for one ingestion
/// (`Db::bulk_writer`): keys in increasing order, cut into files of about
/// the column family's target file size. The files are temporary (`*.tmp`:
/// removed at the next open if a crash leaves them) until `ingest`, which
/// links them in and removes the temporary names; dropped unfinished, they
/// are removed. Entries go to the files in batches, written by a thread of
/// the writer's own: an error there (a write that failed, keys out of
/// order) is returned by a later `put` or by the ingestion.
pub struct BulkWriter {
    pub(super) db: Db,
    pub(super) cf: ColumnFamily,
    entries: u64,
    /// The last key put (checked here, so that a key out of order is
    /// refused by its `put`, as `SstFileWriter::put` does).
    cmp: crate::key::Comparator,
    last: Option<Vec<u8>>,
    sink: Sink,
}

/// Where entries go.
enum Sink {
    /// Into the files on the caller's thread (after the file thread ended,
    /// or when it could not be started).
    Here(Box<Files>),
    /// In batches to the file thread.
    Thread(Pipe),
}

/// The file thread: the batch being filled (per entry the key's and the
/// value's length, u32 little-endian, then both; allocated when the first
/// entry comes), the queue to the thread, and the thread, which gives back
/// its files when the queue closes.
struct Pipe {
    batch: Vec<u8>,
    tx: Option<SyncSender<Vec<u8>>>,
    handle: Option<JoinHandle<Result<Files>>>,
    flags: Arc<Flags>,
}

/// What the caller and the file thread tell each other between batches.
#[derive(Default)]
struct Flags {
    /// The writer was dropped unfinished: the thread stops at its next batch
    /// instead of writing what is queued (its files are removed).
    stop: AtomicBool,
    /// The thread ended with an error: the next `put` returns it.
    failed: AtomicBool,
}

/// The files of one writer.
struct Files {
    db: Db,
    opts: Arc<CfOptions>,
    cur: Option<(PathBuf, SstFileWriter)>,
    done: Vec<PathBuf>,
    /// The last key of the files finished so far.
    prev_last: Option<Vec<u8>>,
}

impl Files {
    fn put(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
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
        if w.full(self.opts.target_file_size) {
            self.close_file()?;
        }
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some((p, mut w)) = self.cur.take() {
            self.done.push(p);
            self.prev_last = Some(std::mem::take(&mut w.last));
            w.finish()?;
        }
        Ok(())
    }

    /// Writes the entries of one batch.
    fn put_batch(&mut self, mut b: &[u8]) -> Result<()> {
        let bad = || Error::InvalidArgument("bulk writer: bad batch".into());
        while !b.is_empty() {
            let (lens, rest) = b.split_first_chunk::<8>().ok_or_else(bad)?;
            let kl = u32::from_le_bytes([lens[0], lens[1], lens[2], lens[3]]) as usize;
            let vl = u32::from_le_bytes([lens[4], lens[5], lens[6], lens[7]]) as usize;
            if rest.len() < kl + vl {
                return Err(bad());
            }
            let (k, rest) = rest.split_at(kl);
            let (v, rest) = rest.split_at(vl);
            self.put(k, v)?;
            b = rest;
        }
        Ok(())
    }

    /// The file thread: writes the batches it is sent until the queue
    /// closes, then gives back the files (on an error they are removed).
    fn run(mut self, rx: Receiver<Vec<u8>>, flags: &Flags) -> Result<Files> {
        let r = (|| {
            while let Ok(b) = rx.recv() {
                if flags.stop.load(Ordering::Relaxed) {
                    return Err(Error::Closed);
                }
                self.put_batch(&b)?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            flags.failed.store(true, Ordering::Relaxed);
            return Err(e);
        }
        Ok(self)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        if let Some((p, _)) = self.cur.take() {
            let _ = self.db.inner.fs.remove(&p);
        }
        for p in &self.done {
            let _ = self.db.inner.fs.remove(p);
        }
    }
}

impl Pipe {
    /// Closes the queue and waits for the thread: its files, or its error.
    fn join(&mut self) -> Result<Files> {
        self.tx = None;
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Io {
                context: "bulk writer".into(),
                kind: std::io::ErrorKind::Other,
                message: "the file thread panicked".into(),
            }),
            None => Err(Error::Closed),
        }
    }

    /// Sends the batch being filled; the thread's error if it ended.
    fn send(&mut self) -> Result<()> {
        let b = std::mem::take(&mut self.batch);
        let sent = match &self.tx {
            Some(tx) => tx.send(b).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The thread ended early: only an error ends it.
        self.join().and(Err(Error::Closed))
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // Unfinished (a failed or killed load): the thread drops what is
        // queued and removes its files.
        if self.handle.is_some() {
            self.flags.stop.store(true, Ordering::Relaxed);
        }
        let _ = self.join();
    }
}

impl BulkWriter {
    /// Adds an entry; keys must be strictly increasing across all files.
    pub fn put(&mut self, k: &[u8], v: &[u8]) -> Result<()> {
        match &mut self.last {
            Some(l) if self.cmp.compare(l, k) != std::cmp::Ordering::Less => {
                return Err(Error::InvalidArgument(
                    "SstFileWriter: keys must be added in increasing order".into(),
                ));
            }
            Some(l) => {
                l.clear();
                l.extend_from_slice(k);
            }
            None => self.last = Some(k.to_vec()),
        }
        match &mut self.sink {
            Sink::Here(f) => f.put(k, v)?,
            Sink::Thread(p) => {
                if p.flags.failed.load(Ordering::Relaxed) {
                    // The thread's error, now rather than a batch later.
                    return p.join().and(Err(Error::Closed));
                }
                if p.batch.capacity() == 0 {
                    p.batch.reserve_exact(BATCH + 1024);
                }
                let (Ok(kl), Ok(vl)) = (u32::try_from(k.len()), u32::try_from(v.len())) else {
                    return Err(Error::InvalidArgument(
                        "bulk writer: entry too large".into(),
                    ));
                };
                p.batch.extend_from_slice(&kl.to_le_bytes());
                p.batch.extend_from_slice(&vl.to_le_bytes());
                p.batch.extend_from_slice(k);
                p.batch.extend_from_slice(v);
                if p.batch.len() >= BATCH {
                    p.send()?;
                }
            }
        }
        self.entries += 1;
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The files, once every entry is written (the file thread has ended).
    fn files(&mut self) -> Result<&mut Files> {
        if let Sink::Thread(p) = &mut self.sink {
            if !p.batch.is_empty() {
                p.send()?;
            }
            self.sink = Sink::Here(Box::new(p.join()?));
        }
        match &mut self.sink {
            Sink::Here(f) => Ok(f),
            Sink::Thread(_) => Err(Error::Closed),
        }
    }

    /// Writes out every entry put so far and ends the file thread, freeing its
    /// buffers: a writer done with its entries but kept for a later ingestion
    /// (`ingest_all`) then holds no thread and no batch.
    pub fn seal(&mut self) -> Result<()> {
        self.close().map(|_| ())
    }

    /// Finishes the last file; the paths of all of them.
    pub(super) fn close(&mut self) -> Result<Vec<PathBuf>> {
        let f = self.files()?;
        f.close_file()?;
        Ok(f.done.clone())
    }

    /// Gives back every entry written, in order, and removes the files
    /// (a load whose input turned out not to be in key order sorts them
    /// with the rest).
    pub fn read_back<E: From<Error>>(
        mut self,
        f: &mut EntryFn<'_, E>,
    ) -> std::result::Result<(), E> {
        use crate::iter::InternalIterator;
        let paths = self.close()?;
        let files = self.files()?;
        let (fs, opts) = (files.db.inner.fs.clone(), files.opts.clone());
        for p in &paths {
            let name = p.display().to_string();
            let t = Arc::new(crate::sstable::Table::open(
                fs.open(p)?,
                &name,
                opts.comparator,
                None,
                files.db.inner.stats.clone(),
                opts.prefix_len,
                false,
            )?);
            let mut it = t.iter(false);
            it.seek_to_first();
            while it.valid() {
                f(crate::key::user_key(it.key()), it.value())?;
                it.next();
            }
            it.status()?;
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
        let mut paths = Vec::new();
        for w in writers.iter_mut() {
            if w.cf != cf || !Arc::ptr_eq(&w.db.inner, &db.inner) {
                return Err(Error::InvalidArgument(
                    "bulk writers of different column families".into(),
                ));
            }
            paths.extend(w.close()?);
            entries += w.entries;
        }
        let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
        db.ingest_inner(cf, &paths, after_snapshots, true)?;
        Ok(entries)
    }
}

impl Db {
    /// Starts writing tables to ingest into `cf` (see [`BulkWriter`]).
    pub fn bulk_writer(&self, cf: ColumnFamily) -> Result<BulkWriter> {
        let opts = self.cf_options(cf)?;
        let files = || Files {
            db: self.clone(),
            opts: opts.clone(),
            cur: None,
            done: Vec::new(),
            prev_last: None,
        };
        let (tx, rx) = sync_channel(QUEUED);
        let f = files();
        let flags = Arc::new(Flags::default());
        let theirs = flags.clone();
        let sink = match std::thread::Builder::new()
            .name("strata-bulk".into())
            .spawn(move || f.run(rx, &theirs))
        {
            Ok(h) => Sink::Thread(Pipe {
                batch: Vec::new(),
                tx: Some(tx),
                handle: Some(h),
                flags,
            }),
            // No thread: the files are written here.
            Err(_) => Sink::Here(Box::new(files())),
        };
        Ok(BulkWriter {
            db: self.clone(),
            cf,
            entries: 0,
            cmp: opts.comparator,
            last: None,
            sink,
        })
    }
}
