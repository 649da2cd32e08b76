//! RocksDB option strings for column families (`lsm::optstr`): what is honoured,
//! what is refused, overrides per name; and that a family's compression really
//! reaches the table files it writes (flush and compaction, per level).
#![allow(clippy::unwrap_used)]

use lsm::optstr::{apply, split_overrides, CfConfig};
use lsm::{CfOptions, Compression, Db, Options, PrepopulateBlockCache, WriteOptions};

fn base() -> CfOptions {
    CfOptions::default()
}

#[test]
fn parses_the_supported_subset() {
    let o = apply(
        &base(),
        " write_buffer_size=64m; target_file_size_base=32M;compression=kLZ4Compression;\
         bottommost_compression=kZSTD;level0_file_num_compaction_trigger=8;\
         level0_slowdown_writes_trigger=20;level0_stop_writes_trigger=30;\
         max_bytes_for_level_base=512m;max_bytes_for_level_multiplier=8;\
         max_write_buffer_number=4;level_compaction_dynamic_level_bytes=false;\
         soft_pending_compaction_bytes_limit=1g;hard_pending_compaction_bytes_limit=2g;\
         prefix_extractor=fixed:4;\
         block_based_table_factory={block_size=16k;block_restart_interval=8;\
         filter_policy=bloomfilter:12:false;whole_key_filtering=1;\
         prepopulate_block_cache=kFlushOnly};",
    )
    .unwrap();
    assert_eq!(o.write_buffer_size, 64 << 20);
    assert_eq!(o.target_file_size, 32 << 20);
    assert_eq!(o.compression_per_level, vec![Compression::Lz4]);
    assert_eq!(o.bottommost_compression, Some(Compression::Zstd));
    assert_eq!(o.level0_compaction_trigger, 8);
    assert_eq!(o.level0_slowdown_trigger, 20);
    assert_eq!(o.level0_stop_trigger, 30);
    assert_eq!(o.max_bytes_for_level_base, 512 << 20);
    assert_eq!(o.max_bytes_for_level_multiplier, 8);
    assert_eq!(o.max_write_buffer_number, 4);
    assert!(!o.dynamic_level_bytes);
    assert_eq!(o.soft_pending_compaction_bytes, 1 << 30);
    assert_eq!(o.hard_pending_compaction_bytes, 2 << 30);
    assert_eq!(o.prefix_len, Some(4));
    assert_eq!(o.block_size, 16 << 10);
    assert_eq!(o.block_restart_interval, 8);
    assert_eq!(o.bloom_bits_per_key, 12);
    assert_eq!(o.prepopulate_block_cache, PrepopulateBlockCache::FlushOnly);
    assert_eq!(
        apply(
            &o,
            "block_based_table_factory={prepopulate_block_cache=kDisable}"
        )
        .unwrap()
        .prepopulate_block_cache,
        PrepopulateBlockCache::Disable
    );
    // Untouched options keep the base's values; an empty string is the base.
    assert_eq!(
        o.tombstone_compaction_ratio,
        base().tombstone_compaction_ratio
    );
    assert_eq!(
        apply(&base(), "").unwrap().write_buffer_size,
        base().write_buffer_size
    );
    assert_eq!(
        apply(&base(), "block_based_table_factory={filter_policy=nullptr}")
            .unwrap()
            .bloom_bits_per_key,
        0
    );
    assert_eq!(
        apply(&base(), "bottommost_compression=kDisableCompressionOption")
            .unwrap()
            .bottommost_compression,
        None
    );
}

#[test]
fn compression_per_level_wins_over_compression() {
    let o = apply(
        &base(),
        "compression_per_level=kNoCompression:kNoCompression:kLZ4Compression:kZSTD;compression=kNoCompression",
    )
    .unwrap();
    assert_eq!(
        o.compression_per_level,
        vec![
            Compression::None,
            Compression::None,
            Compression::Lz4,
            Compression::Zstd
        ]
    );
    // Levels past the list repeat its last entry.
    assert_eq!(o.compression_for(1, false), Compression::None);
    assert_eq!(o.compression_for(2, false), Compression::Lz4);
    assert_eq!(o.compression_for(5, false), Compression::Zstd);
}

#[test]
fn refuses_unknown_unsupported_and_malformed_options() {
    for bad in [
        "no_such_option=1",
        "write_buffer_size",
        "=5",
        "write_buffer_size=abc",
        "write_buffer_size=0",
        "write_buffer_size=99999999999999999999",
        "compression=kSnappyCompression",
        "compression=kZlibCompression",
        "compression=lz5",
        "bottommost_compression=kBZip2Compression",
        "compression_per_level=kNoCompression:kFoo",
        "compression_per_level=kNoCompression:kNoCompression:kNoCompression:kNoCompression:kNoCompression:kNoCompression:kNoCompression:kNoCompression",
        "max_bytes_for_level_multiplier=1.5",
        "level_compaction_dynamic_level_bytes=maybe",
        "prefix_extractor=capped:4",
        "block_based_table_factory={block_size=512}",
        "block_based_table_factory={filter_policy=bloomfilter:10:true}",
        "block_based_table_factory={filter_policy=ribbonfilter:10}",
        "block_based_table_factory={cache_index_and_filter_blocks=1}",
        "block_based_table_factory={whole_key_filtering=0}",
        "block_based_table_factory={prepopulate_block_cache=kFlushAndCompaction}",
        "block_based_table_factory={block_size=4k",
        "block_based_table_factory=block_size=4k}",
        "level0_file_num_compaction_trigger=30;level0_slowdown_writes_trigger=20",
    ] {
        let e = apply(&base(), bad).expect_err(bad);
        assert!(matches!(e, lsm::Error::InvalidArgument(_)), "{bad}: {e}");
    }
    // The message names the option.
    let e = apply(&base(), "compaction_style=kCompactionStyleUniversal").unwrap_err();
    assert!(e.to_string().contains("compaction_style"), "{e}");
}

#[test]
fn overrides_per_column_family() {
    let v = split_overrides("cf1={write_buffer_size=8m;compression=kZSTD}; rev:cf2={};").unwrap();
    assert_eq!(
        v,
        vec![
            (
                "cf1".to_string(),
                "write_buffer_size=8m;compression=kZSTD".to_string()
            ),
            ("rev:cf2".to_string(), String::new())
        ]
    );
    // Names as long as an index COMMENT may give (`rel::cf::valid_name`):
    // 64 bytes, after `rev:` too.
    let long = "n".repeat(64);
    for name in [long.clone(), format!("rev:{long}")] {
        let v = split_overrides(&format!("{name}={{}}")).unwrap();
        assert_eq!(v[0].0, name);
    }
    for name in [format!("{long}x"), format!("rev:{long}x")] {
        let e = split_overrides(&format!("{name}={{}}")).unwrap_err();
        assert!(e.to_string().contains("bad column family name"), "{e}");
    }
    let c = CfConfig::parse(
        &base(),
        "write_buffer_size=16m;compression=kNoCompression",
        "cf1={compression=kZSTD};default={write_buffer_size=4m}",
    )
    .unwrap();
    // An override starts from the defaults string, not from the engine's defaults.
    let cf1 = c.options_for("cf1");
    assert_eq!(cf1.write_buffer_size, 16 << 20);
    assert_eq!(cf1.compression_per_level, vec![Compression::Zstd]);
    assert_eq!(c.options_for("default").write_buffer_size, 4 << 20);
    assert_eq!(
        c.options_for("other").compression_per_level,
        vec![Compression::None]
    );
    for bad in [
        "cf1={write_buffer_size=x}",
        "cf1={a=1}",
        "cf1={};cf1={}",
        "cf1",
        "cf1={",
    ] {
        assert!(CfConfig::parse(&base(), "", bad).is_err(), "{bad}");
    }
}

/// Compression of every table file of `cf`, by level.
fn compressions(db: &Db, cf: &str) -> Vec<(usize, Option<Compression>)> {
    db.sst_files()
        .into_iter()
        .filter(|f| f.cf == cf)
        .map(|f| (f.level, f.compression))
        .collect()
}

#[test]
fn a_family_writes_its_tables_with_its_compression() {
    let dir = testkit::TempDir::new("optstr-compression");
    let cfg = CfConfig::parse(
        &base(),
        "compression=kLZ4Compression",
        "plain={compression=kNoCompression;bottommost_compression=kZSTD}",
    )
    .unwrap();
    let opts = Options {
        cf_config: Some(std::sync::Arc::new(cfg)),
        default_cf: apply(&base(), "compression=kLZ4Compression").unwrap(),
        ..Default::default()
    };
    let db = Db::open(&dir.0, opts.clone()).unwrap();
    let plain = db.ensure_cf("plain").unwrap();
    assert_eq!(db.ensure_cf("plain").unwrap(), plain);
    let other = db.ensure_cf("other").unwrap();
    let w = WriteOptions {
        sync: false,
        ..Default::default()
    };
    let mut b = lsm::WriteBatch::new();
    for i in 0..2000u32 {
        let k = format!("key{i:06}");
        let v = format!("value-{i}-").repeat(10);
        b.put_cf(plain.0, k.as_bytes(), v.as_bytes());
        b.put_cf(other.0, k.as_bytes(), v.as_bytes());
        b.put(k.as_bytes(), v.as_bytes());
    }
    db.write(w, b).unwrap();
    db.flush().unwrap();
    // Flushes write level 0 above the bottommost level: the level's compression.
    assert_eq!(
        compressions(&db, "plain"),
        vec![(0, Some(Compression::None))]
    );
    assert_eq!(
        compressions(&db, "other"),
        vec![(0, Some(Compression::Lz4))]
    );
    assert_eq!(
        compressions(&db, "default"),
        vec![(0, Some(Compression::Lz4))]
    );
    // A full compaction writes the bottommost level: its compression.
    db.compact_range(plain, None, None).unwrap();
    let c = compressions(&db, "plain");
    assert!(!c.is_empty());
    assert!(
        c.iter().all(|x| *x == (6, Some(Compression::Zstd))),
        "{c:?}"
    );
    let info = db.cf_infos();
    let p = info.iter().find(|c| c.name == "plain").unwrap();
    let get = |k: &str| p.options.iter().find(|o| o.0 == k).unwrap().1.clone();
    assert_eq!(get("compression_per_level"), "kNoCompression");
    assert_eq!(get("bottommost_compression"), "kZSTD");
    db.close().unwrap();
    // Reopened, a family not named by the caller gets its configured options.
    let db = Db::open(&dir.0, opts).unwrap();
    let info = db.cf_infos();
    let p = info.iter().find(|c| c.name == "plain").unwrap();
    assert!(p
        .options
        .iter()
        .any(|o| o.0 == "compression_per_level" && o.1 == "kNoCompression"));
    db.close().unwrap();
}
