//! Opening a database: lock the directory, recover the version set from the
//! manifest, replay the WAL files written since the last flush of each
//! column family into memtables, flush them to level 0, start a fresh WAL
//! and manifest, remove files no version references, start background threads.
use super::{Cf, Db, Inner, State};
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::key::Comparator;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::stats::Stats;
use crate::table_cache::TableCache;
use crate::version::{Deleter, VersionEdit, VersionSet};
use crate::vfs::{Fs, OsFs};
use crate::wal::{LogReader, LogWriter, TailPolicy};
use crate::WriteBatch;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

impl Db {
    /// Opens (or creates) the database in `path` with its default column
    /// family and any column families created earlier (with default options).
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Db::open_cf(path, opts, &[])
    }

    /// Opens the database, giving options for named column families (they
    /// are created if missing).
    pub fn open_cf(path: impl AsRef<Path>, opts: Options, cfs: &[(&str, CfOptions)]) -> Result<Db> {
        match Db::open_impl(path.as_ref(), opts.clone(), cfs, false) {
            // A full disk: open read-only from what is on disk (the WALs replayed into
            // memory, nothing written); writes resume once space is free (resume.rs).
            Err(e) if super::is_no_space(&e) && opts.auto_resume_interval.is_some() => {
                eprintln!(
                    "strata-lsm: cannot write while opening ({e}): opening read-only until space is freed"
                );
                Db::open_impl(path.as_ref(), opts, cfs, true)
            }
            r => r,
        }
    }

    /// `read_only`: the disk is full; write nothing (see `open_cf`).
    fn open_impl(
        path: &Path,
        opts: Options,
        cfs: &[(&str, CfOptions)],
        read_only: bool,
    ) -> Result<Db> {
        let dir = path.to_path_buf();
        let fs: Arc<dyn Fs> = match (&opts.fs, opts.use_direct_reads) {
            (Some(fs), _) => fs.clone(),
            (None, true) => Arc::new(crate::vfs::DirectFs),
            (None, false) => Arc::new(OsFs),
        };
        fs.create_dir_all(&dir)?;
        let lock = fs.lock(&filename::lock(&dir))?;
        let stats = Arc::new(Stats::default());
        let blocks = (opts.block_cache_size > 0)
            .then(|| Arc::new(crate::cache::LruCache::for_bytes(opts.block_cache_size)));
        let tables = Arc::new(TableCache::new(
            fs.clone(),
            dir.clone(),
            opts.max_open_files,
            blocks,
            stats.clone(),
            opts.cache_index_and_filter_blocks,
        ));
        let deleter: Deleter = {
            let (fs, dir, tables) = (fs.clone(), dir.clone(), tables.clone());
            Arc::new(move |n| {
                tables.evict(n);
                let _ = fs.remove(&filename::table(&dir, n));
            })
        };
        let mut versions = VersionSet::new(&dir, fs.clone(), deleter, opts.default_cf.comparator);
        let exists = fs.exists(&filename::current(&dir));
        if exists {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "{} already exists",
                    dir.display()
                )));
            }
            let named: BTreeMap<String, Comparator> = cfs
                .iter()
                .map(|(n, o)| (n.to_string(), o.comparator))
                .collect();
            let default_cmp = opts.default_cf.comparator;
            versions.recover(&|name: &str| {
                if name == "default" {
                    Some(default_cmp)
                } else {
                    named.get(name).copied()
                }
            })?;
            // Every table the manifest names must be there: opening without
            // one would answer queries with its data missing.
            for n in versions.live_files() {
                let t = filename::table(&dir, n);
                if !fs.exists(&t) {
                    return Err(Error::corruption(
                        format!("{n:06}.sst"),
                        0,
                        "table file named by the manifest is missing; refusing to open (restore it from a backup)",
                    ));
                }
            }
        } else if !opts.create_if_missing {
            return Err(Error::InvalidArgument(format!(
                "{} does not exist (create_if_missing is off)",
                dir.display()
            )));
        } else {
            refuse_orphaned_files(&*fs, &dir)?;
        }
        // Never hand out a number already used by a file in the directory.
        let names = fs.list(&dir)?;
        for n in &names {
            if let Some(FileKind::Wal(x) | FileKind::Table(x) | FileKind::Manifest(x)) =
                filename::parse(n)
            {
                versions.next_file_number = versions.next_file_number.max(x + 1);
            }
        }
        if read_only {
            versions.refuse_edits(Error::NoSpace("the disk was full at open".into()));
        } else {
            versions.write_new_manifest()?;
        }

        // Column family runtime state.
        let mut cf_states = BTreeMap::new();
        for (id, v) in &versions.cfs {
            let o = if *id == 0 {
                opts.default_cf.clone()
            } else {
                cfs.iter()
                    .find(|(n, _)| *n == v.name)
                    .map(|(_, o)| o.clone())
                    .unwrap_or_else(|| CfOptions {
                        comparator: v.current.cmp,
                        ..opts
                            .cf_config
                            .as_ref()
                            .map_or_else(CfOptions::default, |c| c.options_for(&v.name))
                    })
            };
            cf_states.insert(
                *id,
                Cf {
                    name: v.name.clone(),
                    mem: Arc::new(MemTable::new(o.comparator, 0)),
                    opts: Arc::new(o),
                    imms: Vec::new(),
                    flushing: false,
                },
            );
        }

        // Replay WAL files.
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| match filename::parse(n) {
                Some(FileKind::Wal(x)) => Some(x),
                _ => None,
            })
            .collect();
        wals.sort_unstable();
        let min_log = versions
            .cfs
            .values()
            .map(|c| c.log_number)
            .min()
            .unwrap_or(0);
        let mut max_seq = versions.last_sequence;
        let to_replay: Vec<u64> = wals.iter().copied().filter(|w| *w >= min_log).collect();
        let mut edits: Vec<VersionEdit> = Vec::new();
        for (i, &w) in to_replay.iter().enumerate() {
            let path = filename::wal(&dir, w);
            let name = format!("{w:06}.log");
            // Only the WAL written last may end in a torn record: a closed
            // WAL was synced whole before the next one was used. WAL files
            // that are still empty do not count (an older version created the
            // next WAL before recording that the older ones were replayed).
            let last_written = to_replay[i + 1..]
                .iter()
                .all(|x| fs.file_size(&filename::wal(&dir, *x)).is_ok_and(|n| n == 0));
            let policy = if last_written {
                opts.wal_recovery
            } else {
                TailPolicy::Strict
            };
            let mut r = LogReader::new(fs.read_all(&path)?, &name, policy);
            while let Some(rec) = r.next_record()? {
                let at = r.last_record_offset;
                let batch = WriteBatch::from_data(rec)
                    .map_err(|_| Error::corruption(&name, at, "short write batch"))?;
                let mut seq = batch.seq();
                let ops = batch.ops().map_err(|e| match e {
                    Error::Corruption { what, .. } => Error::corruption(&name, at, what),
                    o => o,
                })?;
                for op in ops {
                    if let (Some(cf), Some(v)) = (cf_states.get(&op.cf), versions.cfs.get(&op.cf)) {
                        if w >= v.log_number {
                            cf.mem.add(seq, op.kind, op.key, op.value);
                        }
                    }
                    max_seq = max_seq.max(seq);
                    seq += 1;
                }
                // Flush memtables that grew past their size while replaying.
                for (id, cf) in cf_states.iter_mut() {
                    if !read_only && cf.mem.approximate_size() > cf.opts.write_buffer_size {
                        let mem = std::mem::replace(
                            &mut cf.mem,
                            Arc::new(MemTable::new(cf.opts.comparator, 0)),
                        );
                        let n = versions.new_file_number();
                        if let Some(f) =
                            super::bg::write_level0_table(&fs, &dir, &cf.opts, n, &[mem], &stats)?
                        {
                            edits.push(VersionEdit {
                                cf: *id,
                                added: vec![(0, f)],
                                ..Default::default()
                            });
                        }
                    }
                }
            }
            if let Some(off) = r.dropped_tail_at {
                eprintln!("strata-lsm: {name}: dropped a torn tail at offset {off} (unsynced writes lost in a crash)");
            }
        }
        versions.last_sequence = max_seq;
        if read_only {
            return Db::start(
                dir, fs, versions, cf_states, None, 0, to_replay, tables, stats, lock, &opts,
            );
        }
        for (id, cf) in cf_states.iter_mut() {
            if !cf.mem.is_empty() {
                let mem =
                    std::mem::replace(&mut cf.mem, Arc::new(MemTable::new(cf.opts.comparator, 0)));
                let n = versions.new_file_number();
                if let Some(f) =
                    super::bg::write_level0_table(&fs, &dir, &cf.opts, n, &[mem], &stats)?
                {
                    edits.push(VersionEdit {
                        cf: *id,
                        added: vec![(0, f)],
                        ..Default::default()
                    });
                }
            }
        }
        // The tables written from the WALs are synced; their directory
        // entries must be durable too before the manifest names them.
        if !edits.is_empty() {
            fs.sync_dir(&dir)?;
        }
        for e in edits {
            versions.log_and_apply(e)?;
        }
        // A fresh WAL; everything older is now in tables. Its number is
        // logged before the file is created: after a crash in between, the
        // old WAL files (the last one may end in a torn record) are never
        // read again, rather than being followed by a newer, empty WAL.
        let wal_number = versions.new_file_number();
        let ids: Vec<u32> = versions.cfs.keys().copied().collect();
        for id in ids {
            versions.log_and_apply(VersionEdit {
                cf: id,
                log_number: Some(wal_number),
                ..Default::default()
            })?;
        }
        let wal = LogWriter::new(fs.create(&filename::wal(&dir, wal_number))?);
        fs.sync_dir(&dir)?;
        for cf in cf_states.values_mut() {
            cf.mem = Arc::new(MemTable::new(cf.opts.comparator, wal_number));
        }
        for w in wals {
            let _ = fs.remove(&filename::wal(&dir, w));
        }
        // Remove tables no version references (left by a crash mid-flush or
        // mid-compaction) and temporary files.
        // Only a clean manifest proves them obsolete: after an unfinished
        // last record was dropped they are moved to lost/ instead.
        let live: std::collections::HashSet<u64> = versions.live_files().into_iter().collect();
        let keep_aside = versions.dropped_manifest_tail.is_some();
        for n in &names {
            match filename::parse(n) {
                Some(FileKind::Table(x)) if !live.contains(&x) && keep_aside => {
                    let lost = dir.join("lost");
                    fs.create_dir_all(&lost)?;
                    fs.rename(&dir.join(n), &lost.join(n))?;
                    eprintln!(
                        "strata-lsm: {n} is named by no version after the manifest's dropped last record: moved to {}",
                        lost.display()
                    );
                }
                Some(FileKind::Table(x)) if !live.contains(&x) => {
                    let _ = fs.remove(&dir.join(n));
                }
                Some(FileKind::Manifest(x)) if x != versions.manifest_number => {
                    let _ = fs.remove(&dir.join(n));
                }
                Some(FileKind::Temp) => {
                    let _ = fs.remove(&dir.join(n));
                }
                _ => {}
            }
        }
        let db = Db::start(
            dir,
            fs,
            versions,
            cf_states,
            Some(wal),
            wal_number,
            vec![wal_number],
            tables,
            stats,
            lock,
            &opts,
        )?;
        // Create named column families that do not exist yet.
        for (name, o) in cfs {
            if db.cf(name).is_none() {
                db.create_cf(name, o.clone())?;
            }
        }
        db.inner.bg_cv.notify_all();
        Ok(db)
    }

    /// Builds the open database and starts its background threads. Without a WAL
    /// (`wal` None: the disk was full at open) it starts read-only, resumable.
    #[allow(clippy::too_many_arguments)]
    fn start(
        dir: std::path::PathBuf,
        fs: Arc<dyn Fs>,
        versions: VersionSet,
        cf_states: BTreeMap<u32, Cf>,
        wal: Option<LogWriter>,
        wal_number: u64,
        live_wals: Vec<u64>,
        tables: Arc<TableCache>,
        stats: Arc<Stats>,
        lock: Box<dyn crate::vfs::FileLock>,
        opts: &Options,
    ) -> Result<Db> {
        let read_only = wal.is_none();
        let visible = versions.last_sequence;
        let rate_limiter = (opts.rate_limit_bytes_per_sec > 0).then(|| {
            crate::rate_limit::RateLimiter::with_tuning(
                opts.rate_limit_bytes_per_sec,
                opts.rate_limit_auto_tune,
            )
        });
        let (flush_threads, compaction_threads) =
            super::bg::pool_sizes(opts.max_background_jobs.max(1));
        let inner = Arc::new(Inner {
            dir,
            fs,
            state: Mutex::new(State {
                cfs: cf_states,
                versions,
                wal,
                wal_number,
                live_wals,
                wal_pins: Vec::new(),
                writers: VecDeque::new(),
                write_waiters: 0,
                snapshots: BTreeMap::new(),
                visible_seq: visible,
                bg_error: read_only.then(|| {
                    Error::ReadOnly(
                        "the disk was full when the database opened: read-only until space is freed (No space left on device)".into(),
                    )
                }),
                bg_retry: read_only,
                resuming: false,
                running_jobs: 0,
                closing: false,
                stall_epoch: 0,
                delay: super::stall::Delay::new(),
            }),
            queue_cv: Condvar::new(),
            bg_cv: Condvar::new(),
            tables,
            stats,
            level_stats: Default::default(),
            rate_limiter,
            delayed_write_rate: opts.delayed_write_rate as f64,
            compaction_urgent: Default::default(),
            auto_resume: opts.auto_resume_interval,
            reclaims: Default::default(),
            ingest_hook: Mutex::new(None),
            cf_config: opts.cf_config.clone(),
            auto_compactions: !opts.disable_auto_compactions,
            cf_orders: std::array::from_fn(|_| std::sync::atomic::AtomicU8::new(0)),
            _lock: lock,
        });
        let mut threads = Vec::new();
        let pools = std::iter::repeat_n(super::bg::Pool::Flush, flush_threads).chain(
            std::iter::repeat_n(super::bg::Pool::Compaction, compaction_threads),
        );
        for (i, pool) in pools.enumerate() {
            let inner = inner.clone();
            let name = match pool {
                super::bg::Pool::Flush => format!("strata-flush-{i}"),
                super::bg::Pool::Compaction => format!("strata-bg-{i}"),
            };
            let t = std::thread::Builder::new()
                .name(name)
                .spawn(move || super::bg::background_loop(inner, pool))
                .map_err(|e| Error::io("spawn background thread", e))?;
            threads.push(t);
        }
        let r = inner.clone();
        let t = std::thread::Builder::new()
            .name("strata-reclaim".into())
            .spawn(move || super::manual::reclaim_loop(r))
            .map_err(|e| Error::io("spawn reclaim thread", e))?;
        threads.push(t);
        Ok(Db {
            inner,
            threads: Arc::new(Mutex::new(threads)),
        })
    }
}
/// A directory without CURRENT is a new database only if it holds no data:
/// table files or a non-empty WAL without CURRENT mean CURRENT was lost, and
/// creating a new database there would delete them as unreferenced.
fn refuse_orphaned_files(fs: &dyn Fs, dir: &Path) -> Result<()> {
    let (mut tables, mut wals, mut manifests) = (0, 0, 0);
    for n in fs.list(dir)? {
        match filename::parse(&n) {
            Some(FileKind::Table(_)) => tables += 1,
            Some(FileKind::Wal(x)) if fs.file_size(&filename::wal(dir, x)).is_ok_and(|s| s > 0) => {
                wals += 1
            }
            Some(FileKind::Manifest(_)) => manifests += 1,
            _ => {}
        }
    }
    if tables + wals > 0 {
        return Err(Error::corruption(
            "CURRENT",
            0,
            format!(
                "missing, but {} holds {tables} table file(s), {wals} WAL file(s) with data and {manifests} manifest(s): refusing to create a new database over them (restore CURRENT: a line naming the newest MANIFEST-nnnnnn)",
                dir.display()
            ),
        ));
    }
    Ok(())
}
