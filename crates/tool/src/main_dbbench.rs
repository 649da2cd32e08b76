//! strata-dbbench: RocksDB db_bench's flags, workloads, keys, values, seeds and
//! result lines on Strata's engine (the driver is `strata_tool::bench`), so
//! that db_bench and strata-dbbench run with identical flags do the same
//! operations. Benchmarks: fillseq, fillrandom, overwrite, fillsync,
//! readrandom, seekrandom, readseq, readreverse, stats, levelstats, flush,
//! waitforcompaction, compact.
use strata_tool::bench::{die, run_all, strata, Cfg, DbConfig, Flags, Runner};

fn main() {
    let flags = Flags::parse(std::env::args().skip(1)).unwrap_or_else(|e| die(&e));
    let cfg = Cfg::from_flags(&flags);
    let db = DbConfig::from_flags(&flags);
    println!("Strata-LSM:    version {}", env!("CARGO_PKG_VERSION"));
    println!("Keys:       {} bytes each", cfg.key_size);
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        cfg.value_size,
        (cfg.value_size as f64 * cfg.ratio) as u64
    );
    println!("Entries:    {}", cfg.num);
    println!("Compression: {}", db.compression);
    println!("------------------------------------------------");
    let runner = Runner::new(cfg, db, &strata::open).unwrap_or_else(|e| die(&e));
    run_all(&flags, runner).unwrap_or_else(|e| die(&e));
}
