//! strata-dbbench: RocksDB db_bench's flags and result lines, on Strata's
//! engine, so both tools can be run with identical flags and compared.
//!
//! Supported benchmarks: fillseq, fillrandom, overwrite, fillsync, readrandom,
//! seekrandom, readseq, readreverse, stats, levelstats, waitforcompaction,
//! compact. Keys are db_bench's (8-byte big-endian number, padded to
//! --key_size); values are db_bench's compressible strings (--compression_ratio).
use lsm::{CfOptions, Compression, Db, Options, ReadOptions, WriteBatch, WriteOptions};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Flags(HashMap<String, String>);

impl Flags {
    fn parse() -> Result<Flags, String> {
        let mut m = HashMap::new();
        for a in std::env::args().skip(1) {
            let a = a.trim_start_matches('-');
            if a == "help" || a == "h" {
                return Err("usage: strata-dbbench --benchmarks=fillseq,fillrandom,readrandom --num=N [db_bench flags]".into());
            }
            let (k, v) = a.split_once('=').unwrap_or((a, "1"));
            m.insert(k.to_string(), v.to_string());
        }
        Ok(Flags(m))
    }
    fn str(&self, k: &str, d: &str) -> String {
        self.0.get(k).cloned().unwrap_or_else(|| d.to_string())
    }
    fn i64(&self, k: &str, d: i64) -> i64 {
        self.0
            .get(k)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| die(&format!("--{k}={v}: not a number")))
            })
            .unwrap_or(d)
    }
    fn f64(&self, k: &str, d: f64) -> f64 {
        self.0
            .get(k)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| die(&format!("--{k}={v}: not a number")))
            })
            .unwrap_or(d)
    }
    fn bool(&self, k: &str, d: bool) -> bool {
        match self.0.get(k).map(|s| s.as_str()) {
            None => d,
            Some("1" | "true" | "yes") => true,
            Some("0" | "false" | "no") => false,
            Some(v) => die(&format!("--{k}={v}: expected 0/1/true/false")),
        }
    }
}

fn die(msg: &str) -> ! {
    eprintln!("strata-dbbench: {msg}");
    std::process::exit(2)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// db_bench's RandomGenerator: 1 MiB of compressible data, sliced.
struct Values {
    data: Vec<u8>,
    pos: usize,
}

impl Values {
    fn new(seed: u64, ratio: f64) -> Values {
        let mut r = Rng(seed ^ 0x5eed);
        let mut data = Vec::with_capacity(1 << 20);
        while data.len() < 1 << 20 {
            let raw_len = ((100.0 * ratio) as usize).max(1);
            let raw: Vec<u8> = (0..raw_len).map(|_| b' ' + (r.next() % 95) as u8).collect();
            let mut piece = Vec::with_capacity(100);
            while piece.len() < 100 {
                piece.extend_from_slice(&raw);
            }
            piece.truncate(100);
            data.extend_from_slice(&piece);
        }
        Values { data, pos: 0 }
    }
    fn get(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

fn make_key(n: u64, size: usize, buf: &mut Vec<u8>) {
    buf.clear();
    buf.extend_from_slice(&n.to_be_bytes());
    buf.resize(size.max(8), b'0');
    buf.truncate(size.max(1));
}

struct Cfg {
    num: u64,
    reads: u64,
    key_size: usize,
    value_size: usize,
    threads: usize,
    seed: u64,
    sync: bool,
    seek_nexts: u64,
    duration: Option<Duration>,
    ratio: f64,
}

struct Result1 {
    ops: u64,
    bytes: u64,
    found: u64,
    elapsed: Duration,
}

fn run_threads(
    cfg: &Cfg,
    f: impl Fn(usize, &mut Rng, &dyn Fn() -> bool) -> (u64, u64, u64) + Sync,
) -> Result1 {
    let start = Instant::now();
    let deadline = cfg.duration.map(|d| start + d);
    let totals = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for t in 0..cfg.threads {
            let (f, totals) = (&f, &totals);
            s.spawn(move || {
                let mut r = Rng(cfg.seed.wrapping_mul(1000).wrapping_add(t as u64 + 1));
                let expired = || deadline.is_some_and(|d| Instant::now() >= d);
                let (o, b, fd) = f(t, &mut r, &expired);
                totals.0.fetch_add(o, Ordering::Relaxed);
                totals.1.fetch_add(b, Ordering::Relaxed);
                totals.2.fetch_add(fd, Ordering::Relaxed);
            });
        }
    });
    Result1 {
        ops: totals.0.into_inner(),
        bytes: totals.1.into_inner(),
        found: totals.2.into_inner(),
        elapsed: start.elapsed(),
    }
}

fn report(name: &str, r: &Result1, extra: &str) {
    let secs = r.elapsed.as_secs_f64();
    let ops = r.ops.max(1) as f64;
    let micros = secs * 1e6 * 1.0 / ops;
    let mbs = r.bytes as f64 / 1048576.0 / secs.max(1e-9);
    println!(
        "{name:<12} : {micros:>10.3} micros/op {:.0} ops/sec {secs:.3} seconds {} operations;{}{extra}",
        ops / secs.max(1e-9),
        r.ops,
        if r.bytes > 0 { format!(" {mbs:>6.1} MB/s") } else { String::new() }
    );
}

/// Operations per thread: `n`, or unbounded with `--duration`, where (as in
/// db_bench's `Duration`) only the clock ends a benchmark.
fn ops_limit(cfg: &Cfg, n: u64) -> u64 {
    if cfg.duration.is_some() {
        u64::MAX
    } else {
        n
    }
}

fn write_bench(db: &Db, cfg: &Cfg, seq: bool, n_per_thread: u64, sync: bool) -> Result1 {
    run_threads(cfg, |t, r, expired| {
        let mut vals = Values::new(cfg.seed.wrapping_add(t as u64), cfg.ratio);
        let mut key = Vec::new();
        let (mut ops, mut bytes) = (0, 0);
        for i in 0..ops_limit(cfg, n_per_thread) {
            if expired() {
                break;
            }
            let k = if seq {
                i + t as u64 * n_per_thread
            } else {
                r.next() % cfg.num
            };
            make_key(k, cfg.key_size, &mut key);
            let mut b = WriteBatch::new();
            b.put(&key, vals.get(cfg.value_size));
            if let Err(e) = db.write(
                WriteOptions {
                    sync,
                    disable_wal: false,
                },
                b,
            ) {
                die(&format!("write failed: {e}"));
            }
            ops += 1;
            bytes += (cfg.key_size + cfg.value_size) as u64;
        }
        (ops, bytes, 0)
    })
}

fn main() {
    let flags = Flags::parse().unwrap_or_else(|e| die(&e));
    let num = flags.i64("num", 1_000_000).max(1) as u64;
    let seed = match flags.i64("seed", 0) {
        0 => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1),
        s => s as u64,
    };
    let cfg = Cfg {
        num,
        reads: match flags.i64("reads", -1) {
            x if x < 0 => num,
            x => x as u64,
        },
        key_size: flags.i64("key_size", 16).clamp(8, 1 << 20) as usize,
        value_size: flags.i64("value_size", 100).clamp(0, 1 << 24) as usize,
        threads: flags.i64("threads", 1).clamp(1, 1024) as usize,
        seed,
        sync: flags.bool("sync", false),
        seek_nexts: flags.i64("seek_nexts", 0).max(0) as u64,
        duration: match flags.i64("duration", 0) {
            0 => None,
            s => Some(Duration::from_secs(s as u64)),
        },
        ratio: flags.f64("compression_ratio", 0.5),
    };
    let compression = Compression::from_name(&flags.str("compression_type", "lz4"))
        .unwrap_or_else(|| die("--compression_type must be none, lz4 or zstd"));
    let bloom = flags.i64("bloom_bits", -1);
    let cf = CfOptions {
        write_buffer_size: flags.i64("write_buffer_size", 64 << 20) as usize,
        max_write_buffer_number: flags.i64("max_write_buffer_number", 2) as usize,
        block_size: flags.i64("block_size", 4096) as usize,
        bloom_bits_per_key: if bloom > 0 { bloom as u32 } else { 0 },
        compression_per_level: vec![compression],
        target_file_size: flags.i64("target_file_size_base", 64 << 20) as u64,
        max_bytes_for_level_base: flags.i64("max_bytes_for_level_base", 256 << 20) as u64,
        dynamic_level_bytes: flags.bool("level_compaction_dynamic_level_bytes", false),
        level0_compaction_trigger: flags.i64("level0_file_num_compaction_trigger", 4) as usize,
        ..CfOptions::default()
    };
    let dir = flags.str("db", "./strata-data/dbbench");
    let use_existing = flags.bool("use_existing_db", false);
    if !use_existing {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let opts = Options {
        block_cache_size: flags.i64("cache_size", 8 << 20).max(0) as usize,
        max_background_jobs: flags.i64("max_background_jobs", 2).max(1) as usize,
        max_open_files: flags.i64("open_files", 4096).max(16) as usize,
        use_direct_reads: flags.bool("use_direct_reads", false),
        default_cf: cf,
        ..Options::default()
    };
    let db = Db::open(&dir, opts).unwrap_or_else(|e| die(&format!("open {dir}: {e}")));
    println!("Strata-LSM:    version {}", env!("CARGO_PKG_VERSION"));
    println!("Keys:       {} bytes each", cfg.key_size);
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        cfg.value_size,
        (cfg.value_size as f64 * cfg.ratio) as u64
    );
    println!("Entries:    {}", cfg.num);
    println!("Compression: {compression:?}");
    println!("------------------------------------------------");
    let benches = flags.str("benchmarks", "fillseq,fillrandom,readrandom,stats");
    let db = Arc::new(db);
    for name in benches.split(',').filter(|s| !s.is_empty()) {
        match name {
            "fillseq" => report(
                name,
                &write_bench(&db, &cfg, true, cfg.num / cfg.threads as u64, cfg.sync),
                "",
            ),
            "fillrandom" | "overwrite" => {
                report(name, &write_bench(&db, &cfg, false, cfg.num, cfg.sync), "")
            }
            "fillsync" => report(
                name,
                &write_bench(&db, &cfg, false, (cfg.num / 1000).max(1), true),
                "",
            ),
            "readrandom" => {
                let r = run_threads(&cfg, |_, r, expired| {
                    let mut key = Vec::new();
                    let (mut ops, mut bytes, mut found) = (0, 0, 0);
                    for _ in 0..ops_limit(&cfg, cfg.reads) {
                        if expired() {
                            break;
                        }
                        make_key(r.next() % cfg.num, cfg.key_size, &mut key);
                        if let Some(v) = db.get(&key).unwrap_or_else(|e| die(&format!("get: {e}")))
                        {
                            found += 1;
                            bytes += (key.len() + v.len()) as u64;
                        }
                        ops += 1;
                    }
                    (ops, bytes, found)
                });
                report(name, &r, &format!(" ({} of {} found)", r.found, r.ops));
            }
            "seekrandom" => {
                let r = run_threads(&cfg, |_, r, expired| {
                    let mut key = Vec::new();
                    let (mut ops, mut bytes, mut found) = (0, 0, 0);
                    let mut it = db
                        .iter(ReadOptions::default())
                        .unwrap_or_else(|e| die(&e.to_string()));
                    for i in 0..ops_limit(&cfg, cfg.reads) {
                        if expired() {
                            break;
                        }
                        if i % 1000 == 0 {
                            it = db
                                .iter(ReadOptions::default())
                                .unwrap_or_else(|e| die(&e.to_string()));
                        }
                        make_key(r.next() % cfg.num, cfg.key_size, &mut key);
                        it.seek(&key);
                        if it.valid() && it.key() == key.as_slice() {
                            found += 1;
                        }
                        for _ in 0..cfg.seek_nexts {
                            if !it.valid() {
                                break;
                            }
                            bytes += (it.key().len() + it.value().len()) as u64;
                            it.next();
                        }
                        ops += 1;
                    }
                    (ops, bytes, found)
                });
                report(name, &r, &format!(" ({} of {} found)", r.found, r.ops));
            }
            "readseq" | "readreverse" => {
                let r = run_threads(&cfg, |_, _, _| {
                    let mut it = db
                        .iter(ReadOptions::default())
                        .unwrap_or_else(|e| die(&e.to_string()));
                    let (mut ops, mut bytes) = (0, 0);
                    if name == "readseq" {
                        it.seek_to_first();
                    } else {
                        it.seek_to_last();
                    }
                    while it.valid() && ops < cfg.reads {
                        bytes += (it.key().len() + it.value().len()) as u64;
                        ops += 1;
                        if name == "readseq" {
                            it.next();
                        } else {
                            it.prev();
                        }
                    }
                    it.status().unwrap_or_else(|e| die(&e.to_string()));
                    (ops, bytes, 0)
                });
                report(name, &r, "");
            }
            "waitforcompaction" => db
                .wait_for_compactions()
                .unwrap_or_else(|e| die(&e.to_string())),
            "compact" => db
                .compact_range(lsm::DEFAULT_CF, None, None)
                .unwrap_or_else(|e| die(&e.to_string())),
            "flush" => db.flush().unwrap_or_else(|e| die(&e.to_string())),
            "stats" | "levelstats" => print_stats(&db),
            other => die(&format!("unknown benchmark '{other}'")),
        }
    }
    match Arc::try_unwrap(db) {
        Ok(db) => db.close().unwrap_or_else(|e| die(&e.to_string())),
        Err(_) => die("internal: db still shared"),
    }
}

fn print_stats(db: &Db) {
    let s = db.stats();
    print!("{}", db.compaction_stats(lsm::DEFAULT_CF));
    let mb = |x: u64| x as f64 / 1048576.0;
    println!(
        "Write(MB): user {:.1}, wal {:.1}, flush {:.1}, compaction {:.1}; W-Amp (flush+compaction)/user {:.2}, incl. WAL {:.2}",
        mb(s.user_bytes_written),
        mb(s.wal_bytes),
        mb(s.flush_bytes),
        mb(s.compaction_bytes_written),
        (s.flush_bytes + s.compaction_bytes_written) as f64 / s.user_bytes_written.max(1) as f64,
        s.write_amplification()
    );
    for (k, v) in s.pairs() {
        println!("STATISTICS {k} COUNT : {v}");
    }
}
