//! The db_bench driver shared by strata-dbbench (Strata only) and
//! bench/rocksdb-driver (Strata and RocksDB): db_bench's flags, benchmarks,
//! key/value generators (`keygen`), seeds, counting and result lines, over an
//! [`Engine`] trait, so that both engines run exactly the same operations.
//!
//! Semantics follow RocksDB tools/db_bench_tool.cc: fillseq, fillrandom and
//! fillsync start from a fresh (destroyed) database unless
//! --use_existing_db=1, where they are skipped; every thread of fillseq,
//! fillrandom and overwrite does --num writes (fillsync: --num synced writes
//! over the first num/1000 keys); readrandom and seekrandom draw keys in
//! [0, num) with their own seeds and count a key "found" when it exists
//! (seekrandom: when the iterator lands on the key itself); a new iterator per
//! seek; readseq reads up to --reads entries from the first.
pub mod keygen;
pub mod strata;

use keygen::{make_key, KeyGen, KeyOrder, Values};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A storage engine under test.
pub trait Engine: Sync {
    type Iter<'a>: EngineIter
    where
        Self: 'a;
    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> Result<(), String>;
    /// The value's length, if the key exists.
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String>;
    fn iter(&self) -> Result<Self::Iter<'_>, String>;
    fn flush(&self) -> Result<(), String>;
    fn wait_for_compaction(&self) -> Result<(), String>;
    fn compact(&self) -> Result<(), String>;
    /// Engine statistics, printed by `stats`.
    fn stats(&self) -> String;
    /// A closing `STATS` line: bytes flushed, compacted, WAL, for write amp.
    fn close(self) -> Result<(), String>;
}

pub trait EngineIter {
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn seek(&mut self, key: &[u8]);
    fn valid(&self) -> bool;
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    fn next(&mut self);
    fn prev(&mut self);
    fn status(&self) -> Result<(), String>;
}

/// db_bench-style `--name=value` flags.
pub struct Flags(HashMap<String, String>);

pub fn die(msg: &str) -> ! {
    eprintln!("dbbench: {msg}");
    std::process::exit(2)
}

impl Flags {
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Flags, String> {
        let mut m = HashMap::new();
        for a in args {
            let a = a.trim_start_matches('-');
            if a == "help" || a == "h" {
                return Err(
                    "usage: --benchmarks=fillseq,fillrandom,readrandom --num=N [db_bench flags]"
                        .into(),
                );
            }
            let (k, v) = a.split_once('=').unwrap_or((a, "1"));
            m.insert(k.to_string(), v.to_string());
        }
        Ok(Flags(m))
    }
    pub fn str(&self, k: &str, d: &str) -> String {
        self.0.get(k).cloned().unwrap_or_else(|| d.to_string())
    }
    pub fn i64(&self, k: &str, d: i64) -> i64 {
        self.0
            .get(k)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| die(&format!("--{k}={v}: not a number")))
            })
            .unwrap_or(d)
    }
    pub fn f64(&self, k: &str, d: f64) -> f64 {
        self.0
            .get(k)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| die(&format!("--{k}={v}: not a number")))
            })
            .unwrap_or(d)
    }
    pub fn bool(&self, k: &str, d: bool) -> bool {
        match self.0.get(k).map(|s| s.as_str()) {
            None => d,
            Some("1" | "true" | "yes") => true,
            Some("0" | "false" | "no") => false,
            Some(v) => die(&format!("--{k}={v}: expected 0/1/true/false")),
        }
    }
}

/// Options both engines are opened with (db_bench's flags and defaults).
#[derive(Clone, Debug)]
pub struct DbConfig {
    pub dir: String,
    pub cache_size: usize,
    pub write_buffer_size: usize,
    pub max_write_buffer_number: usize,
    pub block_size: usize,
    pub bloom_bits: i64,
    pub compression: String,
    pub target_file_size_base: u64,
    pub max_bytes_for_level_base: u64,
    pub dynamic_level_bytes: bool,
    pub level0_file_num_compaction_trigger: usize,
    pub max_background_jobs: usize,
    /// db_bench's --open_files; -1: unlimited.
    pub open_files: i64,
    pub use_direct_reads: bool,
}

impl DbConfig {
    pub fn from_flags(f: &Flags) -> DbConfig {
        DbConfig {
            dir: f.str("db", "./strata-data/dbbench"),
            cache_size: f.i64("cache_size", 8 << 20).max(0) as usize,
            write_buffer_size: f.i64("write_buffer_size", 64 << 20).max(4096) as usize,
            max_write_buffer_number: f.i64("max_write_buffer_number", 2).max(2) as usize,
            block_size: f.i64("block_size", 4096).max(256) as usize,
            bloom_bits: f.i64("bloom_bits", -1),
            // db_bench's default is snappy, which Strata lacks; the scripts pass lz4.
            compression: f.str("compression_type", "lz4"),
            target_file_size_base: f.i64("target_file_size_base", 64 << 20).max(1 << 16) as u64,
            max_bytes_for_level_base: f.i64("max_bytes_for_level_base", 256 << 20).max(1 << 16)
                as u64,
            dynamic_level_bytes: f.bool("level_compaction_dynamic_level_bytes", false),
            level0_file_num_compaction_trigger: f
                .i64("level0_file_num_compaction_trigger", 4)
                .max(1) as usize,
            max_background_jobs: f.i64("max_background_jobs", 2).max(1) as usize,
            open_files: f.i64("open_files", -1),
            use_direct_reads: f.bool("use_direct_reads", false),
        }
    }
}

/// What every benchmark reads from the flags.
pub struct Cfg {
    pub num: u64,
    pub reads: u64,
    pub key_size: usize,
    pub value_size: usize,
    pub threads: usize,
    pub seed_base: u64,
    pub sync: bool,
    pub seek_nexts: u64,
    pub duration: Option<Duration>,
    pub ratio: f64,
    pub use_existing_db: bool,
    pub histogram: bool,
}

impl Cfg {
    pub fn from_flags(f: &Flags) -> Cfg {
        let num = f.i64("num", 1_000_000).max(1) as u64;
        let seed_base = match f.i64("seed", 0) {
            0 => {
                let s = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_micros() as u64)
                    .unwrap_or(1);
                println!("Set seed to {s} because --seed was 0");
                s
            }
            s => s as u64,
        };
        Cfg {
            num,
            reads: match f.i64("reads", -1) {
                x if x < 0 => num,
                x => x as u64,
            },
            key_size: f.i64("key_size", 16).clamp(1, 1 << 20) as usize,
            value_size: f.i64("value_size", 100).clamp(0, 1 << 24) as usize,
            threads: f.i64("threads", 1).clamp(1, 1024) as usize,
            seed_base,
            sync: f.bool("sync", false),
            seek_nexts: f.i64("seek_nexts", 0).max(0) as u64,
            duration: match f.i64("duration", 0) {
                s if s <= 0 => None,
                s => Some(Duration::from_secs(s as u64)),
            },
            ratio: f.f64("compression_ratio", 0.5),
            use_existing_db: f.bool("use_existing_db", false),
            histogram: f.bool("histogram", true),
        }
    }
}

/// Latencies in log-spaced buckets (about 2% wide), in nanoseconds.
pub struct Hist {
    buckets: Vec<u64>,
    count: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            buckets: vec![0; 1600],
            count: 0,
        }
    }
}

impl Hist {
    fn bucket(nanos: u64) -> usize {
        (((nanos.max(1) as f64).ln() * 50.0) as usize).min(1599)
    }
    pub fn add(&mut self, nanos: u64) {
        self.buckets[Self::bucket(nanos)] += 1;
        self.count += 1;
    }
    pub fn merge(&mut self, o: &Hist) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
    }
    /// The p-th percentile in microseconds (upper edge of its bucket).
    pub fn percentile(&self, p: f64) -> f64 {
        let want = ((self.count as f64) * p / 100.0).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= want {
                return ((i + 1) as f64 / 50.0).exp() / 1000.0;
            }
        }
        0.0
    }
}

/// One benchmark's totals over its threads.
#[derive(Default)]
pub struct Outcome {
    pub ops: u64,
    pub bytes: u64,
    pub found: u64,
    pub elapsed: Duration,
    pub hist: Hist,
}

/// What one thread returns: ops, bytes, found, latencies.
type ThreadOut = (u64, u64, u64, Hist);

/// Runs benchmarks in order on one engine, as db_bench's `Benchmark::Run`.
pub struct Runner<'o, E: Engine> {
    pub cfg: Cfg,
    pub db: DbConfig,
    open: &'o dyn Fn(&DbConfig, bool) -> Result<E, String>,
    engine: Option<E>,
    /// Threads started so far (db_bench's total_thread_count_): seeds.
    threads_started: u64,
}

impl<'o, E: Engine> Runner<'o, E> {
    /// `open(config, destroy_first)` opens the engine.
    pub fn new(
        cfg: Cfg,
        db: DbConfig,
        open: &'o dyn Fn(&DbConfig, bool) -> Result<E, String>,
    ) -> Result<Self, String> {
        let engine = open(&db, !cfg.use_existing_db)?;
        Ok(Runner {
            cfg,
            db,
            open,
            engine: Some(engine),
            threads_started: 0,
        })
    }

    fn engine(&self) -> &E {
        match &self.engine {
            Some(e) => e,
            None => die("internal: engine not open"),
        }
    }

    fn fresh_db(&mut self) -> Result<(), String> {
        if let Some(e) = self.engine.take() {
            e.close()?;
        }
        self.engine = Some((self.open)(&self.db, true)?);
        Ok(())
    }

    pub fn close(mut self) -> Result<(), String> {
        match self.engine.take() {
            Some(e) => e.close(),
            None => Ok(()),
        }
    }

    /// Runs one benchmark by name; prints its result line.
    pub fn run(&mut self, name: &str) -> Result<(), String> {
        let fresh = matches!(name, "fillseq" | "fillrandom" | "fillsync");
        if fresh {
            if self.cfg.use_existing_db {
                println!("{name:<12} : skipped (--use_existing_db is true)");
                return Ok(());
            }
            self.fresh_db()?;
        }
        let num = self.cfg.num;
        let out = match name {
            "fillseq" => self.write(KeyOrder::Sequential, num, num, self.cfg.sync, false),
            "fillrandom" | "overwrite" => {
                self.write(KeyOrder::RandomPair, num, num, self.cfg.sync, true)
            }
            "fillsync" => self.write(KeyOrder::RandomPair, (num / 1000).max(1), num, true, true),
            "readrandom" => self.read_random(),
            "seekrandom" => self.seek_random(),
            "readseq" | "readreverse" => self.read_seq(name == "readseq"),
            "waitforcompaction" => return self.engine().wait_for_compaction(),
            "flush" => return self.engine().flush(),
            "compact" => {
                self.threads_started += self.cfg.threads as u64;
                return self.engine().compact();
            }
            "stats" | "levelstats" => {
                print!("{}", self.engine().stats());
                return Ok(());
            }
            other => return Err(format!("unknown benchmark '{other}'")),
        }?;
        let extra = match name {
            "readrandom" | "seekrandom" => format!(" ({} of {} found)", out.found, out.ops),
            "fillsync" => format!(" ({} ops)", (num / 1000).max(1)),
            _ => String::new(),
        };
        report(name, &out, &extra, self.cfg.histogram);
        Ok(())
    }

    /// Runs `f(thread seed, clock-expired)` in cfg.threads threads.
    fn threads(
        &mut self,
        timed: bool,
        f: impl Fn(&E, u64, &dyn Fn() -> bool) -> Result<ThreadOut, String> + Sync,
    ) -> Result<Outcome, String> {
        let first_seed = self.cfg.seed_base.wrapping_add(self.threads_started + 1);
        self.threads_started += self.cfg.threads as u64;
        let engine = self.engine();
        let duration = if timed { self.cfg.duration } else { None };
        let total = Mutex::new(Outcome::default());
        let errors = Mutex::new(Vec::new());
        let done_ops = AtomicU64::new(0);
        let start = Instant::now();
        let deadline = duration.map(|d| start + d);
        std::thread::scope(|s| {
            for t in 0..self.cfg.threads {
                let (f, total, errors, done_ops) = (&f, &total, &errors, &done_ops);
                s.spawn(move || {
                    let expired = || deadline.is_some_and(|d| Instant::now() >= d);
                    match f(engine, first_seed.wrapping_add(t as u64), &expired) {
                        Ok((ops, bytes, found, hist)) => {
                            done_ops.fetch_add(ops, Ordering::Relaxed);
                            if let Ok(mut tot) = total.lock() {
                                tot.ops += ops;
                                tot.bytes += bytes;
                                tot.found += found;
                                tot.hist.merge(&hist);
                            }
                        }
                        Err(e) => {
                            if let Ok(mut v) = errors.lock() {
                                v.push(e)
                            }
                        }
                    }
                });
            }
        });
        let elapsed = start.elapsed();
        if let Some(e) = errors
            .into_inner()
            .map_err(|_| "poisoned")?
            .into_iter()
            .next()
        {
            return Err(e);
        }
        let mut out = total.into_inner().map_err(|_| "poisoned")?;
        out.elapsed = elapsed;
        Ok(out)
    }

    /// db_bench's `DoWrite`: `ops` writes per thread (unbounded with
    /// --duration when `timed`) of keys drawn from [0, key_space).
    fn write(
        &mut self,
        order: KeyOrder,
        key_space: u64,
        ops: u64,
        sync: bool,
        timed: bool,
    ) -> Result<Outcome, String> {
        let (ks, vs, ratio) = (self.cfg.key_size, self.cfg.value_size, self.cfg.ratio);
        let limit = if timed && self.cfg.duration.is_some() {
            u64::MAX
        } else {
            ops
        };
        self.threads(timed, |e, seed, expired| {
            let mut gen = KeyGen::new(seed, order, key_space);
            let mut vals = Values::new(ratio, vs);
            let (mut key, mut hist, mut n) = (Vec::with_capacity(ks), Hist::default(), 0);
            while n < limit && !(n % 1000 == 0 && expired()) {
                make_key(gen.next_key(), ks, &mut key);
                let t = Instant::now();
                e.put(&key, vals.generate(vs), sync)?;
                hist.add(t.elapsed().as_nanos() as u64);
                n += 1;
            }
            Ok((n, n * (ks + vs) as u64, 0, hist))
        })
    }

    fn read_random(&mut self) -> Result<Outcome, String> {
        let (num, ks, reads) = (self.cfg.num, self.cfg.key_size, self.read_limit());
        self.threads(true, |e, seed, expired| {
            let mut gen = KeyGen::new(seed, KeyOrder::RandomPair, num);
            let (mut key, mut hist) = (Vec::with_capacity(ks), Hist::default());
            let (mut n, mut bytes, mut found) = (0, 0, 0);
            while n < reads && !(n % 1000 == 0 && expired()) {
                make_key(gen.next_key(), ks, &mut key);
                let t = Instant::now();
                let got = e.get(&key)?;
                hist.add(t.elapsed().as_nanos() as u64);
                if let Some(len) = got {
                    found += 1;
                    bytes += (ks + len) as u64;
                }
                n += 1;
            }
            Ok((n, bytes, found, hist))
        })
    }

    fn seek_random(&mut self) -> Result<Outcome, String> {
        let (num, ks, reads, nexts) = (
            self.cfg.num,
            self.cfg.key_size,
            self.read_limit(),
            self.cfg.seek_nexts,
        );
        self.threads(true, |e, seed, expired| {
            let mut gen = KeyGen::new(seed, KeyOrder::Random, num);
            let (mut key, mut hist) = (Vec::with_capacity(ks), Hist::default());
            let (mut n, mut bytes, mut found) = (0, 0, 0);
            let mut copy = [0u8; 256];
            while n < reads && !(n % 1000 == 0 && expired()) {
                make_key(gen.next_key(), ks, &mut key);
                let t = Instant::now();
                let mut it = e.iter()?;
                it.seek(&key);
                if it.valid() && it.key() == key.as_slice() {
                    found += 1;
                }
                for _ in 0..nexts {
                    if !it.valid() {
                        break;
                    }
                    let v = it.value();
                    let c = v.len().min(copy.len());
                    copy[..c].copy_from_slice(&v[..c]);
                    bytes += (it.key().len() + v.len()) as u64;
                    it.next();
                }
                it.status()?;
                hist.add(t.elapsed().as_nanos() as u64);
                n += 1;
            }
            std::hint::black_box(copy);
            Ok((n, bytes, found, hist))
        })
    }

    fn read_seq(&mut self, forward: bool) -> Result<Outcome, String> {
        let reads = self.cfg.reads;
        self.threads(false, |e, _, _| {
            let mut it = e.iter()?;
            let (mut n, mut bytes, mut hist) = (0, 0, Hist::default());
            let mut t = Instant::now();
            if forward {
                it.seek_to_first()
            } else {
                it.seek_to_last()
            }
            while n < reads && it.valid() {
                bytes += (it.key().len() + it.value().len()) as u64;
                if forward {
                    it.next()
                } else {
                    it.prev()
                }
                let now = Instant::now();
                hist.add((now - t).as_nanos() as u64);
                t = now;
                n += 1;
            }
            it.status()?;
            Ok((n, bytes, 0, hist))
        })
    }

    fn read_limit(&self) -> u64 {
        if self.cfg.duration.is_some() {
            u64::MAX
        } else {
            self.cfg.reads
        }
    }
}

/// db_bench's result line, then (with --histogram) its percentile line.
pub fn report(name: &str, r: &Outcome, extra: &str, histogram: bool) {
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    let ops = r.ops.max(1) as f64;
    let mbs = if r.bytes > 0 {
        format!(" {:>6.1} MB/s", r.bytes as f64 / 1048576.0 / secs)
    } else {
        String::new()
    };
    println!(
        "{name:<12} : {:>10.3} micros/op {:.0} ops/sec {secs:.3} seconds {} operations;{mbs}{extra}",
        secs * 1e6 / ops,
        ops / secs,
        r.ops,
    );
    if histogram {
        println!(
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            r.hist.percentile(50.0),
            r.hist.percentile(75.0),
            r.hist.percentile(99.0),
            r.hist.percentile(99.9),
            r.hist.percentile(99.99)
        );
    }
}

/// Parses `--benchmarks` and runs each in turn; closes the engine at the end.
pub fn run_all<E: Engine>(flags: &Flags, mut runner: Runner<'_, E>) -> Result<(), String> {
    let benches = flags.str("benchmarks", "fillseq,fillrandom,readrandom,stats");
    for name in benches.split(',').filter(|s| !s.is_empty()) {
        runner.run(name)?;
    }
    runner.close()
}

#[cfg(test)]
mod tests {
    use super::Hist;

    #[test]
    fn histogram_percentiles_are_within_a_bucket() {
        let mut h = Hist::default();
        for us in 1..=1000u64 {
            h.add(us * 1000);
        }
        let p99 = h.percentile(99.0);
        assert!((990.0..=1011.0).contains(&p99), "p99 {p99}");
        let p50 = h.percentile(50.0);
        assert!((500.0..=511.0).contains(&p50), "p50 {p50}");
    }
}
