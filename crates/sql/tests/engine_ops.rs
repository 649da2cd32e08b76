//! Engine operations through SQL (issue 12 item 6): OPTIMIZE TABLE compacts
//! a table's key ranges (primary and secondary) to the last level;
//! DROP / TRUNCATE / DROP INDEX / DROP DATABASE give the space back in the
//! background; SHOW ENGINE STRATA STATUS and the information_schema
//! STRATA_* views report real per-level and per-file state.
#![allow(clippy::unwrap_used)]

mod common;
use common::{fails, q, rows, session_in_d, TestDb};
use sql::Session;
use std::time::Duration;

const LAST: usize = 6;

fn fill(s: &mut Session, table: &str, n: usize) {
    for chunk in 0..n / 500 {
        let vals: Vec<String> = (0..500)
            .map(|i| {
                let id = chunk * 500 + i;
                format!("({id}, 'name-{id}', CONCAT(SHA2({id}, 512), MD5({id}), MD5({id} * 7)))")
            })
            .collect();
        q(s, &format!("INSERT INTO {table} VALUES {}", vals.join(",")));
    }
}

fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0].clone()
}

/// (level, number) of the table files that may hold keys of index `id`
/// (their key range overlaps the index's).
fn files_of(db: &lsm::Db, id: u32) -> Vec<(usize, u64)> {
    let (lo, hi) = (id.to_be_bytes().to_vec(), (id + 1).to_be_bytes().to_vec());
    db.sst_files()
        .into_iter()
        .filter(|f| f.largest >= lo && f.smallest < hi)
        .map(|f| (f.level, f.number))
        .collect()
}

#[test]
fn optimize_table_compacts_every_index_to_the_last_level() {
    let db = TestDb::open("optimize");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), pad TEXT, KEY k_name (name))",
    );
    fill(&mut s, "t", 3000);
    q(&mut s, "DELETE FROM t WHERE id % 2 = 0");
    let r = rows(&mut s, "OPTIMIZE TABLE t, d.missing");
    assert_eq!(
        r,
        vec![
            "d.t|optimize|status|OK",
            "d.missing|optimize|Error|Table 'd.missing' doesn't exist",
            "d.missing|optimize|status|Operation failed",
        ]
    );
    let st = db.catalog.state();
    let t = st.table("d", "t").unwrap().clone();
    drop(st);
    let eng = db.txdb.db();
    for ix in t.def.indexes() {
        let files = files_of(eng, ix.id);
        assert!(!files.is_empty(), "index {} has no file", ix.id);
        assert!(
            files.iter().all(|(l, _)| *l == LAST),
            "index {} not at the last level: {files:?}",
            ix.id
        );
    }
    // Deleted rows' tombstones are gone from the compacted files.
    for f in eng.sst_files() {
        if files_of(eng, t.def.pk.id).contains(&(f.level, f.number)) {
            assert_eq!(f.deletions, 0, "file {} keeps tombstones", f.number);
        }
    }
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1500");
    assert_eq!(
        one(&mut s, "SELECT COUNT(*) FROM t FORCE INDEX (k_name)"),
        "1500"
    );
    q(&mut s, "OPTIMIZE NO_WRITE_TO_BINLOG TABLE t");
    q(&mut s, "OPTIMIZE LOCAL TABLE d.t");
    assert_eq!(
        one(&mut s, "SHOW GLOBAL STATUS LIKE 'Com_optimize'"),
        "Com_optimize|3"
    );
    assert_eq!(fails(&mut s, "OPTIMIZE TABLE").0, 1064);
}

/// Bytes of the engine's live table files.
fn live(db: &TestDb) -> u64 {
    db.txdb.db().live_table_bytes()
}

/// Waits for the reclaim thread, then for compactions.
fn settle(db: &TestDb) {
    assert!(
        db.txdb.db().wait_for_reclaims(Duration::from_secs(60)),
        "reclaim did not finish"
    );
    db.txdb.db().wait_for_compactions().unwrap();
}

#[test]
fn drop_truncate_and_drop_index_give_space_back() {
    let db = TestDb::open("reclaim-sql");
    let mut s = session_in_d(&db);
    for t in ["keep", "big", "trunc"] {
        q(
            &mut s,
            &format!("CREATE TABLE {t} (id INT PRIMARY KEY, name VARCHAR(40), pad TEXT, KEY k_name (name))"),
        );
    }
    fill(&mut s, "keep", 2000);
    fill(&mut s, "big", 6000);
    fill(&mut s, "trunc", 6000);
    db.txdb.db().flush().unwrap();
    settle(&db);
    let full = live(&db);
    q(&mut s, "DROP TABLE big");
    settle(&db);
    let after_drop = live(&db);
    assert!(
        after_drop * 10 < full * 7,
        "DROP TABLE left its data: {full} -> {after_drop}"
    );
    q(&mut s, "TRUNCATE TABLE trunc");
    settle(&db);
    let after_truncate = live(&db);
    assert!(
        after_truncate * 2 < after_drop,
        "TRUNCATE left its data: {after_drop} -> {after_truncate}"
    );
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM trunc"), "0");
    // DROP INDEX: the index's own files go.
    let st = db.catalog.state();
    let k = st.table("d", "keep").unwrap().def.secondary[0].id;
    drop(st);
    assert!(common::has_entries(&db.inst, k, k + 1));
    q(&mut s, "DROP INDEX k_name ON keep");
    settle(&db);
    assert!(!common::has_entries(&db.inst, k, k + 1));
    // No table file holds an entry of the index, tombstones included.
    let eng = db.txdb.db();
    for (level, number) in files_of(eng, k) {
        let f = eng
            .sst_files()
            .into_iter()
            .find(|f| f.number == number)
            .unwrap();
        assert_eq!(
            f.range_deletions, 0,
            "L{level} file {number} keeps the index's tombstone"
        );
    }
    // DROP DATABASE.
    q(&mut s, "CREATE DATABASE other");
    q(
        &mut s,
        "CREATE TABLE other.o (id INT PRIMARY KEY, name VARCHAR(40), pad TEXT)",
    );
    fill(&mut s, "other.o", 6000);
    db.txdb.db().flush().unwrap();
    settle(&db);
    let with_other = live(&db);
    q(&mut s, "DROP DATABASE other");
    settle(&db);
    assert!(
        live(&db) * 2 < with_other,
        "DROP DATABASE left its data: {with_other} -> {}",
        live(&db)
    );
    // The other table is intact.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM keep"), "2000");
    assert_eq!(
        one(&mut s, "SELECT name, LENGTH(pad) FROM keep WHERE id = 1999"),
        "name-1999|192"
    );
    common::check_ok(&mut s, "keep");
    assert!(common::orphan_index_ids(&db.inst).is_empty());
}

#[test]
fn show_engine_status_reports_levels_and_counters() {
    let db = TestDb::open("engine-status");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), pad TEXT)",
    );
    fill(&mut s, "t", 2000);
    q(&mut s, "OPTIMIZE TABLE t");
    let r = q(&mut s, "SHOW ENGINE STRATA STATUS");
    let text: Vec<(String, String, String)> = r
        .iter()
        .map(|row| {
            let t = |i: usize| String::from_utf8_lossy(&row[i].text()).into_owned();
            (t(0), t(1), t(2))
        })
        .collect();
    assert_eq!(text[0].0, "DBSTATS");
    assert!(text[0].2.contains("Cumulative writes:"), "{}", text[0].2);
    assert!(text[0].2.contains("Cumulative stall:"), "{}", text[0].2);
    assert!(text[0].2.contains("Block cache:"), "{}", text[0].2);
    let cf = text
        .iter()
        .find(|r| r.0 == "CF_COMPACTION" && r.1 == "default")
        .expect("CF_COMPACTION row of default");
    assert!(
        cf.2.contains("** Compaction Stats [default] **"),
        "{}",
        cf.2
    );
    // The last level holds files after OPTIMIZE: its row shows "n/0" with n > 0.
    let l6 =
        cf.2.lines()
            .find(|l| l.trim_start().starts_with("L6"))
            .unwrap_or_else(|| panic!("no L6 row: {}", cf.2));
    let files: u64 = l6
        .split_whitespace()
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(files > 0, "{l6}");
    assert!(text.iter().any(|r| r.0 == "MEMORY_STATS"));
    assert_eq!(fails(&mut s, "SHOW ENGINE INNODB STATUS").0, 1286);
    assert_eq!(fails(&mut s, "SHOW ENGINE nosuch STATUS").0, 1286);
    // Lower case works too.
    assert!(!q(&mut s, "show engine strata status").is_empty());
}

#[test]
fn information_schema_engine_views_hold_real_values() {
    let db = TestDb::open("engine-is");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), pad TEXT)",
    );
    fill(&mut s, "t", 2000);
    q(&mut s, "OPTIMIZE TABLE t");
    let r = one(
        &mut s,
        "SELECT CF_NAME, NUM_FILES > 0, TOTAL_SST_BYTES > 100000 FROM information_schema.STRATA_CF",
    );
    // The only family: the replica's (`__replica__`) is made at the first
    // CHANGE MASTER TO, not in every datadir.
    assert_eq!(r, "default|1|1");
    q(
        &mut s,
        "CHANGE MASTER TO MASTER_HOST='10.0.0.9', MASTER_PORT=3307",
    );
    // The server's own families are listed too, as MyRocks lists `__system__`.
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.STRATA_CF WHERE CF_NAME = '__replica__'"
        ),
        "1"
    );
    // The server's level ratio is sql::LEVEL_MULTIPLIER, not the engine's 10;
    // its data blocks are 16 KiB (bench/results/block-size-2026-11-27.md).
    for (option, value) in [
        ("LEVEL_COMPACTION_DYNAMIC_LEVEL_BYTES", "true"),
        ("MAX_BYTES_FOR_LEVEL_MULTIPLIER", "6"),
        ("BLOCK_SIZE", "16384"),
    ] {
        let sql = format!(
            "SELECT VALUE FROM information_schema.STRATA_CF_OPTIONS \
             WHERE CF_NAME = 'default' AND OPTION_TYPE = '{option}'"
        );
        assert_eq!(one(&mut s, &sql), value, "{option}");
    }
    // The files of t: at the last level, keys starting with its index id.
    let id = db.catalog.state().table("d", "t").unwrap().def.pk.id;
    let (lo, hi) = (format!("{:08X}", id), format!("{:08X}", id + 1));
    let r = one(
        &mut s,
        &format!(
            "SELECT COUNT(*) > 0, MIN(LEVEL), SUM(NUM_ENTRIES) >= 2000, SUM(FILE_SIZE) > 0, \
             MIN(SST_NAME LIKE '%.sst') \
             FROM information_schema.STRATA_SST_FILES \
             WHERE LARGEST_KEY >= '{lo}' AND SMALLEST_KEY < '{hi}'"
        ),
    );
    assert_eq!(r, format!("1|{LAST}|1|1|1"));
    let r = one(
        &mut s,
        "SELECT NUM_FILES > 0, SIZE_BYTES > 0, WRITE_BYTES > 0 FROM information_schema.STRATA_COMPACTION_STATS \
         WHERE CF_NAME = 'default' AND LEVEL = 'L6'",
    );
    assert_eq!(r, "1|1|1");
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.STRATA_COMPACTION_STATS \
             WHERE CF_NAME = 'default'"
        ),
        "7"
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME LIKE 'STRATA%'"
        ),
        "5"
    );
}
