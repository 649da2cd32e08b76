//! SHOW ENGINE STRATA STATUS: the engine's state as (Type, Name, Status)
//! rows, as MyRocks' SHOW ENGINE ROCKSDB STATUS: `DBSTATS` (writes, WAL,
//! flushes and compactions, write amplification, stalls, block cache,
//! snapshots), one `CF_COMPACTION` row per column family (RocksDB's
//! "Compaction Stats" table: files, size, score, bytes read and written per
//! level, memtables), one `CF_OPTIONS` row per column family (its options,
//! `name=value;...` in RocksDB's names) and `MEMORY_STATS`. Other engine names are 1286, as
//! MariaDB answers for an engine it does not have.
use crate::error::{Result, SqlError};
use crate::result::{rows, text, Outcome, ResultSink};
use crate::session::Session;

/// RocksDB's size spelling: `1.23 MB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.2} {}", UNITS[u])
    }
}

fn gb(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

/// The per-level table of one column family.
pub fn compaction_table(c: &lsm::CfInfo) -> String {
    let mut s = format!("\n** Compaction Stats [{}] **\n", c.name);
    s.push_str(
        "Level    Files   Size        Score Read(GB)  Write(GB) W-Amp  Comp(cnt)\n\
         ----------------------------------------------------------------------\n",
    );
    let flushed = c.levels[0].written_bytes;
    let amp = |w: u64| {
        if flushed == 0 {
            0.0
        } else {
            w as f64 / flushed as f64
        }
    };
    let (mut files, mut busy, mut bytes, mut rd, mut wr, mut jobs) = (0, 0, 0, 0, 0, 0);
    for l in &c.levels {
        files += l.files;
        busy += l.compacting;
        bytes += l.bytes;
        rd += l.read_bytes;
        wr += l.written_bytes;
        jobs += l.jobs;
        if l.files == 0 && l.written_bytes == 0 {
            continue;
        }
        s.push_str(&format!(
            "  L{} {:>8} {:>11} {:>6.2} {:>8.3} {:>10.3} {:>5.1} {:>10}\n",
            l.level,
            format!("{}/{}", l.files, l.compacting),
            human_bytes(l.bytes),
            l.score,
            gb(l.read_bytes),
            gb(l.written_bytes),
            amp(l.written_bytes),
            l.jobs
        ));
    }
    s.push_str(&format!(
        " Sum {:>8} {:>11} {:>6.2} {:>8.3} {:>10.3} {:>5.1} {:>10}\n",
        format!("{files}/{busy}"),
        human_bytes(bytes),
        0.0,
        gb(rd),
        gb(wr),
        amp(wr),
        jobs
    ));
    s.push_str(&format!(
        "Memtables: active {} ({} entries), {} immutable ({}); \
         pending compaction bytes: {}; base level: L{}\n",
        human_bytes(c.mem_bytes),
        c.mem_entries,
        c.imm_count,
        human_bytes(c.imm_bytes),
        human_bytes(c.pending_compaction_bytes),
        c.base_level
    ));
    s
}

fn db_stats(s: &Session) -> String {
    let db = s.inst.txdb.db();
    let e = db.stats();
    let secs = s.inst.started.elapsed().as_secs_f64();
    let stall = e.stall_micros as f64 / 1e6;
    let pct = if secs > 0.0 {
        stall * 100.0 / secs
    } else {
        0.0
    };
    let lookups = e.block_cache_hits + e.block_cache_misses;
    let hit = if lookups == 0 {
        0.0
    } else {
        e.block_cache_hits as f64 * 100.0 / lookups as f64
    };
    format!(
        "\n** DB Stats **\n\
         Uptime(secs): {secs:.1} total\n\
         Cumulative writes: {} updates, {} write groups, ingest: {:.3} GB\n\
         Cumulative WAL: {:.3} GB written, {} syncs\n\
         Flush: {} flushes, {:.3} GB written\n\
         Compaction: {} compactions, {} trivial moves, {:.3} GB read, {:.3} GB written\n\
         Manifest: {} written\n\
         Write amplification (disk bytes / user bytes): {:.2}\n\
         Cumulative stall: {stall:.3} secs, {pct:.1} percent; {} slowdowns, {} stops, longest {:.3} secs\n\
         Stalls by cause: level-0 files {} slowdowns / {} stops, pending compaction bytes {} / {}, memtables {} / {}\n\
         Delayed write rate: {} bytes/s; compaction rate limit: {} bytes/s\n\
         Block cache: {} used, {} hits, {} misses, hit ratio {hit:.1}%\n\
         Bloom filter: {} checked, {} useful\n\
         Table bytes read: {:.3} GB; point lookups: {}\n\
         Live table bytes: {}; snapshots: {}; dropped ranges waiting to be reclaimed: {}\n\
         Background errors: {}\n",
        e.user_writes,
        e.write_groups,
        gb(e.user_bytes_written),
        gb(e.wal_bytes),
        e.wal_syncs,
        e.flushes,
        gb(e.flush_bytes),
        e.compactions,
        e.trivial_moves,
        gb(e.compaction_bytes_read),
        gb(e.compaction_bytes_written),
        human_bytes(e.manifest_bytes),
        e.write_amplification(),
        e.slowdowns,
        e.stops,
        e.stall_longest_micros as f64 / 1e6,
        e.stall_l0_slowdowns,
        e.stall_l0_stops,
        e.stall_pending_slowdowns,
        e.stall_pending_stops,
        e.stall_memtable_slowdowns,
        e.stall_memtable_stops,
        e.delayed_write_rate,
        e.compaction_rate_limit,
        human_bytes(db.block_cache_usage()),
        e.block_cache_hits,
        e.block_cache_misses,
        e.bloom_checked,
        e.bloom_useful,
        gb(e.bytes_read),
        e.gets,
        human_bytes(db.live_table_bytes()),
        db.snapshot_count(),
        db.pending_reclaims(),
        e.background_errors,
    )
}

/// SHOW ENGINE `engine` STATUS.
pub fn status(s: &Session, engine: &str, sink: &mut dyn ResultSink) -> Result<Outcome> {
    if !engine.eq_ignore_ascii_case("STRATA") {
        return Err(SqlError::unknown_engine(engine));
    }
    let db = s.inst.txdb.db();
    let cfs = db.cf_infos();
    let mut out = vec![vec![text("DBSTATS"), text("strata"), text(db_stats(s))]];
    for c in &cfs {
        out.push(vec![
            text("CF_COMPACTION"),
            text(&c.name),
            text(compaction_table(c)),
        ]);
        let opts: Vec<String> = c.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push(vec![
            text("CF_OPTIONS"),
            text(&c.name),
            text(opts.join(";")),
        ]);
    }
    let mem: u64 = cfs.iter().map(|c| c.mem_bytes + c.imm_bytes).sum();
    let unflushed: u64 = cfs.iter().map(|c| c.imm_bytes).sum();
    out.push(vec![
        text("MEMORY_STATS"),
        text("strata"),
        text(format!(
            "\nMemTable Total: {mem}\nMemTable Unflushed: {unflushed}\nBlock Cache Usage: {}\n",
            db.block_cache_usage()
        )),
    ]);
    rows(sink, &["Type", "Name", "Status"], out)
}
