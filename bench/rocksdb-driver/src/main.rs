//! engine-vs-rocksdb: db_bench's workloads on Strata's engine or on RocksDB
//! (crates.io `rocksdb`, bundled RocksDB built in release here), through the
//! one driver in `strata_tool::bench` (same keys, values, seeds, operations,
//! counting and result lines as db_bench). `--engine=strata|rocksdb`, then
//! db_bench's flags. RocksDB is configured from the same `DbConfig` as
//! db_bench configures it (block-based table, LRU block cache, bloom filter,
//! static or dynamic level sizing as given). bench/engine-vs-rocksdb runs it.
use rocksdb::{
    BlockBasedOptions, Cache, DBCompressionType, DBRawIteratorWithThreadMode, Options,
    WaitForCompactOptions, WriteOptions, DB,
};
use strata_tool::bench::{die, run_all, strata, Cfg, DbConfig, Engine, EngineIter, Flags, Runner};

struct Rocks {
    db: DB,
    sync: WriteOptions,
    nosync: WriteOptions,
}

fn rocks_options(c: &DbConfig) -> Result<Options, String> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(c.write_buffer_size);
    o.set_max_write_buffer_number(c.max_write_buffer_number as i32);
    o.set_target_file_size_base(c.target_file_size_base);
    o.set_max_bytes_for_level_base(c.max_bytes_for_level_base);
    o.set_level_compaction_dynamic_level_bytes(c.dynamic_level_bytes);
    o.set_level_zero_file_num_compaction_trigger(c.level0_file_num_compaction_trigger as i32);
    o.set_max_background_jobs(c.max_background_jobs as i32);
    o.set_max_open_files(c.open_files.clamp(-1, i32::MAX as i64) as i32);
    o.set_use_direct_reads(c.use_direct_reads);
    o.set_compression_type(match c.compression.to_ascii_lowercase().as_str() {
        "none" => DBCompressionType::None,
        "lz4" => DBCompressionType::Lz4,
        other => {
            return Err(format!(
                "--compression_type={other}: this driver builds RocksDB with lz4 only"
            ))
        }
    });
    let mut t = BlockBasedOptions::default();
    t.set_block_size(c.block_size);
    t.set_block_cache(&Cache::new_lru_cache(c.cache_size));
    if c.bloom_bits > 0 {
        t.set_bloom_filter(c.bloom_bits as f64, false);
    }
    o.set_block_based_table_factory(&t);
    Ok(o)
}

fn open_rocks(c: &DbConfig, destroy: bool) -> Result<Rocks, String> {
    let o = rocks_options(c)?;
    if destroy {
        let _ = DB::destroy(&o, &c.dir);
        match std::fs::remove_dir_all(&c.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("remove {}: {e}", c.dir))
            }
            _ => {}
        }
    }
    let db = DB::open(&o, &c.dir).map_err(|e| format!("open {}: {e}", c.dir))?;
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    Ok(Rocks {
        db,
        sync,
        nosync: WriteOptions::default(),
    })
}

impl Engine for Rocks {
    type Iter<'a> = RocksIter<'a>;

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> Result<(), String> {
        let w = if sync { &self.sync } else { &self.nosync };
        self.db
            .put_opt(key, value, w)
            .map_err(|e| format!("put: {e}"))
    }
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.db
            .get_pinned(key)
            .map(|v| v.map(|v| v.len()))
            .map_err(|e| format!("get: {e}"))
    }
    fn iter(&self) -> Result<Self::Iter<'_>, String> {
        Ok(RocksIter(self.db.raw_iterator()))
    }
    fn flush(&self) -> Result<(), String> {
        self.db.flush().map_err(|e| e.to_string())
    }
    fn wait_for_compaction(&self) -> Result<(), String> {
        let mut w = WaitForCompactOptions::default();
        w.set_flush(true);
        self.db.wait_for_compact(&w).map_err(|e| e.to_string())
    }
    fn compact(&self) -> Result<(), String> {
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }
    fn stats(&self) -> String {
        let s = self
            .db
            .property_value("rocksdb.stats")
            .ok()
            .flatten()
            .unwrap_or_default();
        let l = self
            .db
            .property_value("rocksdb.levelstats")
            .ok()
            .flatten()
            .unwrap_or_default();
        format!("{s}\n{l}\n")
    }
    fn close(self) -> Result<(), String> {
        drop(self.db);
        Ok(())
    }
}

/// RocksDB's raw iterator (no per-step copies, as db_bench's `Iterator`).
pub struct RocksIter<'a>(DBRawIteratorWithThreadMode<'a, DB>);

impl EngineIter for RocksIter<'_> {
    fn seek_to_first(&mut self) {
        self.0.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.0.seek_to_last()
    }
    fn seek(&mut self, key: &[u8]) {
        self.0.seek(key)
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key().unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        self.0.value().unwrap_or_default()
    }
    fn next(&mut self) {
        self.0.next()
    }
    fn prev(&mut self) {
        self.0.prev()
    }
    fn status(&self) -> Result<(), String> {
        self.0.status().map_err(|e| e.to_string())
    }
}

fn main() {
    let flags = Flags::parse(std::env::args().skip(1)).unwrap_or_else(|e| die(&e));
    let engine = flags.str("engine", "strata");
    let cfg = Cfg::from_flags(&flags);
    let db = DbConfig::from_flags(&flags);
    println!("Engine:     {engine}");
    println!("Keys:       {} bytes each", cfg.key_size);
    println!("Values:     {} bytes each", cfg.value_size);
    println!("Entries:    {}", cfg.num);
    println!("------------------------------------------------");
    let r = match engine.as_str() {
        "strata" => Runner::new(cfg, db, &strata::open).and_then(|r| run_all(&flags, r)),
        "rocksdb" => Runner::new(cfg, db, &open_rocks).and_then(|r| run_all(&flags, r)),
        other => die(&format!("--engine={other}: strata or rocksdb")),
    };
    r.unwrap_or_else(|e| die(&e));
}
