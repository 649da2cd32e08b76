//! The engine's information_schema views (MyRocks' ROCKSDB_* tables under
//! Strata's names): STRATA_CF (column families: memtables, files, bytes),
//! STRATA_CF_OPTIONS (each family's options, MyRocks' ROCKSDB_CF_OPTIONS
//! shape), STRATA_SST_FILES (live table files, as
//! ROCKSDB_LIVE_FILES_METADATA) and STRATA_COMPACTION_STATS (one row per
//! family and level: files, bytes, score, bytes compacted) and STRATA_DDL
//! (each index's number and column family, as MyRocks' ROCKSDB_DDL).
use super::View;
use crate::result::OutType;
use rel::value::Value;

const S: OutType = OutType::Text { len: 64 };
const L: OutType = OutType::Text { len: 2048 };
const N: OutType = OutType::Int { unsigned: true };
const D: OutType = OutType::Double;

/// Columns of an engine view (None for the others).
pub(super) fn columns(v: View) -> Option<&'static [(&'static str, OutType)]> {
    Some(match v {
        View::StrataCf => &[
            ("CF_ID", N),
            ("CF_NAME", S),
            ("MEMTABLE_BYTES", N),
            ("MEMTABLE_ENTRIES", N),
            ("IMMUTABLE_MEMTABLES", N),
            ("IMMUTABLE_MEMTABLE_BYTES", N),
            ("NUM_FILES", N),
            ("TOTAL_SST_BYTES", N),
            ("BASE_LEVEL", N),
            ("PENDING_COMPACTION_BYTES", N),
        ],
        View::StrataCfOptions => &[("CF_NAME", S), ("OPTION_TYPE", S), ("VALUE", L)],
        View::StrataDdl => &[
            ("TABLE_SCHEMA", S),
            ("TABLE_NAME", S),
            ("INDEX_NAME", S),
            ("COLUMN_FAMILY", N),
            ("INDEX_NUMBER", N),
            ("INDEX_TYPE", N),
            ("CF", S),
            ("TTL_DURATION", N),
            ("TTL_COLUMN", S),
        ],
        View::StrataSstFiles => &[
            ("CF_NAME", S),
            ("LEVEL", N),
            ("FILE_NUMBER", N),
            ("SST_NAME", S),
            ("FILE_SIZE", N),
            ("SMALLEST_KEY", L),
            ("LARGEST_KEY", L),
            ("SMALLEST_SEQNO", N),
            ("LARGEST_SEQNO", N),
            ("NUM_ENTRIES", N),
            ("NUM_DELETIONS", N),
            ("NUM_RANGE_DELETIONS", N),
            ("BEING_COMPACTED", N),
            ("COMPRESSION", S),
        ],
        View::StrataCompactionStats => &[
            ("CF_NAME", S),
            ("LEVEL", S),
            ("NUM_FILES", N),
            ("FILES_COMPACTING", N),
            ("SIZE_BYTES", N),
            ("SCORE", D),
            ("TARGET_BYTES", N),
            ("READ_BYTES", N),
            ("WRITE_BYTES", N),
            ("COMPACTIONS", N),
        ],
        _ => return None,
    })
}

fn t(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn u(n: u64) -> Value {
    Value::UInt(n)
}

fn hex(b: &[u8]) -> Value {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    Value::Bytes(s.into_bytes())
}

/// RocksDB's name of a compression (as ROCKSDB_SST_PROPS.COMPRESSION_ALGO shows it).
pub fn compression_name(c: lsm::Compression) -> &'static str {
    match c {
        lsm::Compression::None => "NoCompression",
        lsm::Compression::Lz4 => "LZ4",
        lsm::Compression::Zstd => "ZSTD",
    }
}

/// STRATA_DDL: one row per index of every table (MyRocks' ROCKSDB_DDL columns:
/// INDEX_TYPE 1 primary key, 2 secondary, 3 hidden primary key; COLUMN_FAMILY
/// the family's id, CF its name, TTL_DURATION the table's `ttl_duration` or 0)
/// and TTL_COLUMN, the table's `ttl_col` (NULL without one). An index whose
/// family does not exist yet shows no id (NULL).
pub(super) fn ddl_rows(st: &rel::catalog::CatalogState, db: &lsm::Db) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for tb in super::rows::st_tables(st) {
        let def = &tb.def;
        for ix in def.indexes() {
            let name = if ix.cf.is_empty() { "default" } else { &ix.cf };
            let kind = match (ix.primary, def.hidden_pk) {
                (true, true) => 3,
                (true, false) => 1,
                _ => 2,
            };
            out.push(vec![
                t(&def.db),
                t(&def.name),
                t(if ix.primary && def.hidden_pk {
                    "HIDDEN_PK_ID"
                } else {
                    &ix.name
                }),
                db.cf(name).map_or(Value::Null, |c| u(c.0 as u64)),
                u(ix.id as u64),
                u(kind),
                t(name),
                u(def.ttl.map_or(0, |x| x.duration)),
                def.ttl
                    .and_then(|x| x.col)
                    .and_then(|c| def.columns.get(c))
                    .map_or(Value::Null, |c| t(&c.name)),
            ]);
        }
    }
    out
}

/// Rows of an engine view (None for the others).
pub(super) fn rows(v: View, db: &lsm::Db) -> Option<Vec<Vec<Value>>> {
    Some(match v {
        View::StrataCf => db
            .cf_infos()
            .into_iter()
            .map(|c| {
                vec![
                    u(c.id as u64),
                    t(&c.name),
                    u(c.mem_bytes),
                    u(c.mem_entries),
                    u(c.imm_count as u64),
                    u(c.imm_bytes),
                    u(c.levels.iter().map(|l| l.files as u64).sum()),
                    u(c.levels.iter().map(|l| l.bytes).sum()),
                    u(c.base_level as u64),
                    u(c.pending_compaction_bytes),
                ]
            })
            .collect(),
        View::StrataCfOptions => db
            .cf_infos()
            .into_iter()
            .flat_map(|c| {
                let name = c.name.clone();
                c.options
                    .into_iter()
                    .map(move |(k, v)| vec![t(&name), t(&k.to_ascii_uppercase()), t(&v)])
            })
            .collect(),
        View::StrataSstFiles => db
            .sst_files()
            .into_iter()
            .map(|f| {
                vec![
                    t(&f.cf),
                    u(f.level as u64),
                    u(f.number),
                    t(&format!("{:06}.sst", f.number)),
                    u(f.size),
                    hex(&f.smallest),
                    hex(&f.largest),
                    u(f.smallest_seq),
                    u(f.largest_seq),
                    u(f.entries),
                    u(f.deletions),
                    u(f.range_deletions),
                    u(f.being_compacted as u64),
                    f.compression
                        .map_or(Value::Null, |c| t(compression_name(c))),
                ]
            })
            .collect(),
        View::StrataCompactionStats => db
            .cf_infos()
            .into_iter()
            .flat_map(|c| {
                let name = c.name.clone();
                c.levels.into_iter().map(move |l| {
                    vec![
                        t(&name),
                        t(&format!("L{}", l.level)),
                        u(l.files as u64),
                        u(l.compacting as u64),
                        u(l.bytes),
                        Value::Double(l.score),
                        u(l.target),
                        u(l.read_bytes),
                        u(l.written_bytes),
                        u(l.jobs),
                    ]
                })
            })
            .collect(),
        _ => return None,
    })
}
