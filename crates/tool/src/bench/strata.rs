//! [`Engine`] over Strata's engine (crates/lsm), opened from db_bench's flags.
use super::{DbConfig, Engine, EngineIter};
use lsm::{CfOptions, Compression, Db, DbIterator, Options, ReadOptions, WriteBatch, WriteOptions};

pub struct Strata(pub Db);

/// Opens (after deleting it when `destroy`) a Strata database configured as db_bench would
/// configure RocksDB.
pub fn open(c: &DbConfig, destroy: bool) -> Result<Strata, String> {
    if destroy {
        match std::fs::remove_dir_all(&c.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("remove {}: {e}", c.dir))
            }
            _ => {}
        }
    }
    let compression = Compression::from_name(&c.compression).ok_or_else(|| {
        format!(
            "--compression_type={}: Strata has none, lz4 and zstd",
            c.compression
        )
    })?;
    let cf = CfOptions {
        write_buffer_size: c.write_buffer_size,
        max_write_buffer_number: c.max_write_buffer_number,
        block_size: c.block_size,
        bloom_bits_per_key: if c.bloom_bits > 0 {
            c.bloom_bits as u32
        } else {
            0
        },
        compression_per_level: vec![compression],
        target_file_size: c.target_file_size_base,
        max_bytes_for_level_base: c.max_bytes_for_level_base,
        dynamic_level_bytes: c.dynamic_level_bytes,
        level0_compaction_trigger: c.level0_file_num_compaction_trigger,
        ..CfOptions::default()
    };
    let opts = Options {
        block_cache_size: c.cache_size,
        max_background_jobs: c.max_background_jobs,
        max_open_files: if c.open_files < 0 {
            1 << 20
        } else {
            c.open_files.max(16) as usize
        },
        use_direct_reads: c.use_direct_reads,
        default_cf: cf,
        ..Options::default()
    };
    Db::open(&c.dir, opts)
        .map(Strata)
        .map_err(|e| format!("open {}: {e}", c.dir))
}

impl Engine for Strata {
    type Iter<'a> = DbIterator;

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> Result<(), String> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.0
            .write(
                WriteOptions {
                    sync,
                    disable_wal: false,
                },
                b,
            )
            .map_err(|e| format!("write: {e}"))
    }
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.0
            .get(key)
            .map(|v| v.map(|v| v.len()))
            .map_err(|e| format!("get: {e}"))
    }
    fn iter(&self) -> Result<DbIterator, String> {
        self.0
            .iter(ReadOptions::default())
            .map_err(|e| format!("iter: {e}"))
    }
    fn flush(&self) -> Result<(), String> {
        self.0.flush().map_err(|e| e.to_string())
    }
    fn wait_for_compaction(&self) -> Result<(), String> {
        self.0.wait_for_compactions().map_err(|e| e.to_string())
    }
    fn compact(&self) -> Result<(), String> {
        self.0
            .compact_range(lsm::DEFAULT_CF, None, None)
            .map_err(|e| e.to_string())
    }
    fn stats(&self) -> String {
        let s = self.0.stats();
        let mb = |x: u64| x as f64 / 1048576.0;
        let mut out = self.0.compaction_stats(lsm::DEFAULT_CF);
        out += &format!(
            "Write(MB): user {:.1}, wal {:.1}, flush {:.1}, compaction {:.1}; W-Amp (flush+compaction)/user {:.2}, incl. WAL {:.2}\n",
            mb(s.user_bytes_written),
            mb(s.wal_bytes),
            mb(s.flush_bytes),
            mb(s.compaction_bytes_written),
            (s.flush_bytes + s.compaction_bytes_written) as f64 / s.user_bytes_written.max(1) as f64,
            s.write_amplification()
        );
        for (k, v) in s.pairs() {
            out += &format!("STATISTICS {k} COUNT : {v}\n");
        }
        out
    }
    fn close(self) -> Result<(), String> {
        self.0.close().map_err(|e| e.to_string())
    }
}

impl EngineIter for DbIterator {
    fn seek_to_first(&mut self) {
        DbIterator::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        DbIterator::seek_to_last(self)
    }
    fn seek(&mut self, key: &[u8]) {
        DbIterator::seek(self, key)
    }
    fn valid(&self) -> bool {
        DbIterator::valid(self)
    }
    fn key(&self) -> &[u8] {
        DbIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        DbIterator::value(self)
    }
    fn next(&mut self) {
        DbIterator::next(self)
    }
    fn prev(&mut self) {
        DbIterator::prev(self)
    }
    fn status(&self) -> Result<(), String> {
        DbIterator::status(self).map_err(|e| e.to_string())
    }
}
