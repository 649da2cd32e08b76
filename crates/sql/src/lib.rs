//! # strata-sql: statements to rows
//!
//! Everything between SQL text and the relational layer. A statement is
//! parsed (`parse`: sqlparser's MySQL dialect plus MySQL's executable
//! comments), bound (`bind`: names to row positions, `?` to parameters),
//! planned (`select`, `dml`, `access`: one table, index choice from the
//! WHERE clause), and executed inside the session's transaction
//! (`session`), streaming rows to a [`result::ResultSink`]. DDL, SET and
//! SHOW live in `admin`, `ddl`, `show` and `vars`.
//!
//! Prepared statements keep their plan and re-plan only when the catalog
//! version or the current database changes (`stmt_cache` shares one parse
//! tree and plan among all sessions preparing the same text), so an
//! execution costs the parameter binding, the engine reads and the row
//! encoding.
//!
//! This crate knows nothing of the wire protocol: the server maps
//! [`result::ColumnInfo`] and [`rel::Value`] onto packets.

pub mod accept;
pub mod access;
pub mod account;
pub mod agg;
mod alter_rename;
pub mod autoparam;
pub mod backup;
pub mod bind;
pub mod binlogsql;
pub mod bulk;
pub mod check;
mod checkprint;
pub mod collate;
pub mod com;
pub mod convert;
pub mod ddl;
pub mod depth;
pub mod dialect;
pub mod dispatch;
pub mod dml;
pub mod env;
pub mod equality;
pub mod error;
pub mod exec;
pub mod explain;
pub mod expr;
#[cfg(test)]
mod fastpath_tests;
mod fastvalues;
pub mod func;
pub mod hashjoin;
pub mod infoschema;
pub mod join;
pub mod joinorder;
pub mod keysort;
pub mod load;
pub mod maint;
pub mod members;
pub mod multidml;
pub mod parse;
pub mod procs;
pub mod replica;
pub mod replsrc;
pub mod result;
pub mod runmerge;
pub mod select;
pub mod session;
pub mod set;
pub mod show;
pub mod slowlog;
pub mod sort;
pub mod sqlmode;
pub mod sqlprep;
pub mod stmt;
pub mod stmt_cache;
pub mod store;
pub mod subquery;
pub mod tail;
pub mod text;
pub mod txnctl;
pub mod types;
mod varmemo;
pub mod vars;
pub mod viewdml;
pub mod window;

pub use error::{Result, SqlError};
pub use rel::Value;
pub use session::Session;

use rel::catalog::Catalog;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;
use txn::{TxnDb, TxnOptions};

/// Stack size for threads that run sessions' statements (server connection
/// threads): the recursive passes over an expression chain of
/// `depth::MAX_CHAIN` links fit in it with room to spare, also in debug
/// builds. Only the pages a thread touches are committed.
pub const SESSION_STACK_SIZE: usize = 16 << 20;

/// Settings of a database instance.
#[derive(Debug, Clone)]
pub struct InstanceOptions {
    /// fsync the WAL at every commit.
    pub sync_on_commit: bool,
    /// Block cache bytes.
    pub block_cache_size: usize,
    /// Memtable bytes.
    pub write_buffer_size: usize,
    /// Background flush/compaction threads.
    pub background_jobs: usize,
    /// Compaction write rate limit in bytes/s (0: none) and whether it is auto-tuned.
    pub rate_limit: u64,
    pub rate_limit_auto_tune: bool,
    /// Write rate (bytes/s) at which a write slowdown starts.
    pub delayed_write_rate: u64,
    /// Index and filter blocks live in the block cache (charged to it).
    pub cache_index_and_filter_blocks: bool,
    /// Open table files kept.
    pub max_open_files: usize,
    /// Uncompressed data block size of tables (16 KiB; 4 KiB cuts the
    /// decompression per point read but read_only at 600 MB was 5-10% slower
    /// in wall clock: bench/results/block-size-2026-11-27.md).
    pub block_size: usize,
    /// Block compression of every level but the bottommost.
    pub compression: lsm::Compression,
    /// Block compression of the bottommost level (most of the data).
    pub bottommost_compression: lsm::Compression,
    /// Table files read with O_DIRECT: the block cache is the only cache of table data.
    pub use_direct_reads: bool,
    /// Options of every column family in RocksDB's option-string syntax, applied over
    /// the ones above (`--default-cf-options`, MyRocks' rocksdb_default_cf_options).
    pub default_cf_options: String,
    /// `cf1={...};cf2={...}`: options of named column families, applied over the
    /// defaults (`--override-cf-options`, MyRocks' rocksdb_override_cf_options).
    pub override_cf_options: String,
    /// Extra (name, value) settings for system variables.
    pub variables: Vec<(String, String)>,
    /// `--log-bin[=basename]`: the binary log's file basename (None: off).
    pub log_bin: Option<String>,
    /// @@server_id.
    pub server_id: u32,
    /// @@max_binlog_size.
    pub max_binlog_size: u64,
}

impl Default for InstanceOptions {
    fn default() -> Self {
        InstanceOptions {
            sync_on_commit: true,
            block_cache_size: 64 << 20,
            write_buffer_size: 64 << 20,
            background_jobs: 2,
            rate_limit: 0,
            rate_limit_auto_tune: true,
            delayed_write_rate: 16 << 20,
            cache_index_and_filter_blocks: true,
            max_open_files: 4096,
            block_size: 16 << 10,
            compression: lsm::Compression::Lz4,
            bottommost_compression: lsm::Compression::Zstd,
            use_direct_reads: false,
            default_cf_options: String::new(),
            override_cf_options: String::new(),
            variables: Vec::new(),
            log_bin: None,
            server_id: 1,
            max_binlog_size: 1 << 30,
        }
    }
}

/// One open database: engine, transactions, catalog, global variables and
/// counters, shared by every session.
pub struct Instance {
    pub txdb: TxnDb,
    pub catalog: Catalog,
    globals: RwLock<BTreeMap<String, Value>>,
    /// Bumped after every change of `globals` (sessions' memos of hot
    /// variables check it: `varmemo`).
    globals_gen: AtomicU64,
    pub started: Instant,
    questions: AtomicU64,
    connections: AtomicU64,
    threads: AtomicU64,
    /// Statements or connections ended by a panic (caught; SHOW STATUS Strata_panics).
    panics: AtomicU64,
    /// Each session's catalog-version slot (see `Session`).
    slots: std::sync::Mutex<Vec<std::sync::Weak<AtomicU64>>>,
    /// Compiled prepared statements shared across sessions.
    pub stmt_cache: stmt_cache::StmtCache,
    /// caching_sha2_password's fast-authentication cache.
    pub sha2_cache: account::Sha2Cache,
    /// Prepared statements open in all sessions (max_prepared_stmt_count).
    pub prepared: AtomicU64,
    /// Every session (SHOW PROCESSLIST, KILL).
    pub procs: procs::Registry,
    /// The Com_* counters of all sessions.
    pub com: com::Global,
    /// Other status counters (SHOW GLOBAL STATUS).
    pub counters: Counters,
    /// The slow query log's open file.
    pub slow_log: slowlog::SlowLog,
    /// Tables held by a bulk load or a DDL (`bulk::lock`).
    pub bulk_locks: Arc<bulk::lock::TableLocks>,
    /// The binary log (`--log-bin`), if on.
    pub binlog: Option<Arc<binlog::Binlog>>,
    /// Strata as a replica (CHANGE MASTER TO, START SLAVE).
    pub replica: replica::Replica,
    /// Files of the datadir outside the engine that BACKUP DATABASE copies
    /// too (the server's key files: `backup::set_extra_files`).
    pub backup_extra: std::sync::Mutex<Vec<std::path::PathBuf>>,
}

/// Status counters kept by the instance.
#[derive(Default)]
pub struct Counters {
    /// Connections that ended without COM_QUIT (Aborted_clients).
    pub aborted_clients: AtomicU64,
    /// Connection attempts that failed before a session began (Aborted_connects).
    pub aborted_connects: AtomicU64,
    /// Statements over long_query_time (Slow_queries).
    pub slow_queries: AtomicU64,
    /// The most sessions at once (Max_used_connections).
    pub max_used: AtomicU64,
    /// Statements stopped by max_statement_time (Max_statement_time_exceeded).
    pub statement_timeouts: AtomicU64,
}

/// The server's level size ratio (RocksDB's `max_bytes_for_level_multiplier`,
/// 10 by default there and in the engine; `--default-cf-options` overrides it).
/// The last level is Zstd and every byte entering it is rewritten about once
/// per unit of this ratio, which made Zstd compression the largest CPU cost of
/// writes: 6 rewrites the last level ~40% less often for ~7% more bytes on
/// disk (the level above, in LZ4, holds 1/6 of the last instead of 1/10;
/// bench/results/write-cpu-2026-11-27b.md).
pub const LEVEL_MULTIPLIER: u64 = 6;

/// The column-family options the server opens its database with, before
/// `--default-cf-options` / `--override-cf-options` and the TTL filter: also
/// what `strata-backup restore` verifies a restored copy with, so that opening
/// it finds the levels at the server's targets and does not compact (with the
/// engine's defaults, ratio 10 and an LZ4 last level, it would).
pub fn cf_options(opts: &InstanceOptions) -> lsm::CfOptions {
    lsm::CfOptions {
        write_buffer_size: opts.write_buffer_size,
        block_size: opts.block_size.max(1024),
        compression_per_level: vec![opts.compression],
        bottommost_compression: Some(opts.bottommost_compression),
        max_bytes_for_level_multiplier: LEVEL_MULTIPLIER,
        ..Default::default()
    }
}

impl Instance {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: &Path, opts: &InstanceOptions) -> Result<Arc<Instance>> {
        let mut o = lsm::Options {
            block_cache_size: opts.block_cache_size,
            max_background_jobs: opts.background_jobs.max(1),
            rate_limit_bytes_per_sec: opts.rate_limit,
            rate_limit_auto_tune: opts.rate_limit_auto_tune,
            delayed_write_rate: opts.delayed_write_rate.max(1),
            cache_index_and_filter_blocks: opts.cache_index_and_filter_blocks,
            max_open_files: opts.max_open_files.max(16),
            use_direct_reads: opts.use_direct_reads,
            ..Default::default()
        };
        o.default_cf = cf_options(opts);
        // Every column family removes expired rows of TTL tables in compactions.
        let ttl = Arc::new(rel::ttl::Registry::default());
        o.default_cf.compaction_filter = Some(lsm::FilterFactoryRef(Arc::new(
            rel::ttl::FilterFactory(ttl.clone()),
        )));
        let cfc = lsm::CfConfig::parse(
            &o.default_cf,
            &opts.default_cf_options,
            &opts.override_cf_options,
        )?;
        o.default_cf = cfc.options_for("default");
        o.cf_config = Some(Arc::new(cfc));
        let db = lsm::Db::open(dir, o)?;
        let catalog = Catalog::open_with_ttl(db.clone(), ttl)?;
        let binlog = match &opts.log_bin {
            Some(base) => Some(binlog::Binlog::open(
                &db,
                binlog::Config {
                    dir: dir.to_path_buf(),
                    basename: base.clone(),
                    server_id: opts.server_id,
                    max_size: opts.max_binlog_size,
                },
            )?),
            None => None,
        };
        let replica = replica::Replica::open(&db)?;
        let txdb = TxnDb::new(
            db,
            TxnOptions {
                sync: opts.sync_on_commit,
                ..Default::default()
            },
        );
        let mut vars = opts.variables.clone();
        vars.push((
            "strata_sync_on_commit".into(),
            (opts.sync_on_commit as i32).to_string(),
        ));
        vars.push((
            "strata_block_cache_size".into(),
            opts.block_cache_size.to_string(),
        ));
        vars.push((
            "strata_write_buffer_size".into(),
            opts.write_buffer_size.to_string(),
        ));
        vars.push(("server_id".into(), opts.server_id.to_string()));
        vars.push(("max_binlog_size".into(), opts.max_binlog_size.to_string()));
        if let Some(base) = &opts.log_bin {
            vars.push(("log_bin".into(), "1".into()));
            vars.push((
                "log_bin_basename".into(),
                dir.join(base).display().to_string(),
            ));
            vars.push((
                "log_bin_index".into(),
                dir.join(format!("{base}.index")).display().to_string(),
            ));
        }
        let mut globals = vars::defaults(&vars);
        for (k, _) in &opts.variables {
            if let Some(v) = globals.get(k.as_str()) {
                vars::apply_global(k, v);
            }
        }
        // A configured sql_mode is read as SET would read it (1231, 1235).
        if let Some(m) = globals.get_mut("sql_mode") {
            *m = sqlmode::normalize(m)?;
        }
        Ok(Arc::new(Instance {
            txdb,
            catalog,
            globals: RwLock::new(globals),
            globals_gen: AtomicU64::new(0),
            started: Instant::now(),
            questions: AtomicU64::new(0),
            prepared: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            threads: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            slots: std::sync::Mutex::new(Vec::new()),
            stmt_cache: Default::default(),
            sha2_cache: Default::default(),
            procs: Default::default(),
            com: Default::default(),
            counters: Default::default(),
            slow_log: Default::default(),
            bulk_locks: Default::default(),
            binlog,
            replica,
            backup_extra: std::sync::Mutex::new(Vec::new()),
        }))
    }

    /// A global variable.
    pub fn global_var(&self, name: &str) -> Option<Value> {
        self.globals
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// Sets a global variable.
    pub fn set_global(&self, name: &str, v: Value) {
        vars::apply_global(name, &v);
        if let (Some(b), Some(n)) = (&self.binlog, v.to_i128()) {
            match name {
                "server_id" => b.set_server_id(n.clamp(0, u32::MAX as i128) as u32),
                "max_binlog_size" => {
                    if let Err(e) = b.set_max_size(n.max(0) as u64) {
                        eprintln!("strata: SET GLOBAL max_binlog_size: {e}");
                    }
                }
                _ => {}
            }
        }
        self.globals
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), v);
        self.globals_gen.fetch_add(1, Ordering::Release);
    }

    /// The globals' generation: changes whenever a global variable does.
    pub fn globals_generation(&self) -> u64 {
        self.globals_gen.load(Ordering::Acquire)
    }

    /// All variables (name, global value), sorted.
    pub fn all_vars(&self) -> Vec<(String, Value)> {
        self.globals
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Counts a statement (SHOW STATUS Questions).
    pub fn count_question(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }

    /// Statements run so far.
    pub fn questions(&self) -> u64 {
        self.questions.load(Ordering::Relaxed)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// Open connections.
    pub fn threads_connected(&self) -> u64 {
        self.threads.load(Ordering::Relaxed)
    }

    /// Counts a new connection (SHOW STATUS Connections); returns its id.
    pub fn connect(&self) -> u64 {
        self.connections.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers an authenticated session (Threads_connected, which
    /// max_connections bounds); returns how many there are now.
    pub fn attach(&self) -> u64 {
        let n = self.threads.fetch_add(1, Ordering::Relaxed) + 1;
        self.counters.max_used.fetch_max(n, Ordering::Relaxed);
        n
    }

    /// Unregisters a session registered by `attach`.
    pub fn disconnect(&self) {
        self.threads.fetch_sub(1, Ordering::Relaxed);
    }

    /// Counts a panic caught in a connection (a bug: the statement failed
    /// and its connection was closed, the server went on).
    pub fn count_panic(&self) {
        self.panics.fetch_add(1, Ordering::Relaxed);
    }

    /// Panics caught so far.
    pub fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }

    /// A slot through which a session announces the catalog version its
    /// open work started under.
    pub fn register_session_slot(&self) -> Arc<AtomicU64> {
        let slot = Arc::new(AtomicU64::new(u64::MAX));
        let mut v = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(&slot));
        slot
    }

    /// Waits until no session is still working under a catalog version
    /// older than `version` (like MySQL's metadata lock wait). False on
    /// timeout or as soon as `stop` says so (KILL).
    pub fn wait_for_sessions(
        &self,
        version: u64,
        timeout: std::time::Duration,
        stop: &dyn Fn() -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let busy = self
                .slots
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .filter_map(|w| w.upgrade())
                .any(|s| s.load(Ordering::Acquire) < version);
            if !busy {
                return true;
            }
            if Instant::now() >= deadline || stop() {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// A new session.
    pub fn session(self: &Arc<Self>, conn_id: u64, user: &str, db: Option<String>) -> Session {
        Session::new(self.clone(), conn_id, user, db)
    }

    /// Flushes and closes the engine (clean shutdown).
    pub fn shutdown(&self) -> Result<()> {
        self.replica.shutdown();
        if let Some(b) = &self.binlog {
            b.close_readers();
            b.catch_up()?;
        }
        self.txdb.db().flush()?;
        Ok(())
    }
}
