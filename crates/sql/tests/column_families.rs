//! Column families per index (MyRocks' `COMMENT 'cfname=name'`): an index's
//! entries live in the family its comment names, created on first use with the
//! configured options (`--default-cf-options`, `--override-cf-options`); reads,
//! writes, OPTIMIZE, DROP/TRUNCATE reclamation, ALTER rebuilds, CREATE INDEX,
//! bulk loads and CHECK TABLE use it; the mapping survives a restart and a crash;
//! what Strata does not honour (per-partition families, TTL) is 1235 (reverse
//! families, `rev:`, are in column_families_rev.rs).
#![allow(clippy::unwrap_used)]

mod common;
use common::{check_ok, fails, has_entries, orphan_index_ids, q, rows, show_create};
use sql::{Instance, InstanceOptions, Session};
use std::sync::Arc;
use std::time::Duration;

fn open(dir: &std::path::Path, sync: bool) -> Arc<Instance> {
    let o = InstanceOptions {
        sync_on_commit: sync,
        default_cf_options: "compression=kLZ4Compression;bottommost_compression=kLZ4Compression"
            .into(),
        override_cf_options: "zcf={compression=kNoCompression;bottommost_compression=kZSTD}".into(),
        ..Default::default()
    };
    Instance::open(dir, &o).unwrap_or_else(|e| panic!("open: {e}"))
}

fn session(inst: &Arc<Instance>) -> Session {
    let mut s = Session::new(inst.clone(), 1, "root", None);
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0].clone()
}

/// Whether column family `cf` holds a key of index `id` (at the latest state).
fn cf_holds(inst: &Instance, cf: &str, id: u32) -> bool {
    let db = inst.catalog.db();
    let Some(h) = db.cf(cf) else {
        return false;
    };
    let (lo, hi) = (id.to_be_bytes(), (id + 1).to_be_bytes());
    let mut it =
        rel::keyrange::KeyIter::new(db, h, lsm::ReadOptions::default(), &lo, Some(&hi)).unwrap();
    it.seek_to_first();
    it.valid()
}

fn ids(inst: &Instance, table: &str) -> Vec<(String, u32, String)> {
    let st = inst.catalog.state();
    let t = st.table("d", table).unwrap();
    t.def
        .indexes()
        .map(|i| (i.name.clone(), i.id, i.cf.clone()))
        .collect()
}

fn fill(s: &mut Session, n: usize) {
    for chunk in 0..n / 250 {
        let vals: Vec<String> = (0..250)
            .map(|i| {
                let id = chunk * 250 + i;
                format!("({id}, {}, {}, REPEAT('x', 100))", id % 97, id % 13)
            })
            .collect();
        q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
}

const CREATE: &str = "CREATE TABLE t (id INT, b INT, c INT, pad VARCHAR(200), \
     PRIMARY KEY (id) COMMENT 'cfname=zcf', KEY kb (b) COMMENT 'cf_b', \
     UNIQUE KEY kc (c, id) COMMENT 'cfname=cf_c;', KEY kp (pad(10)) COMMENT 'just a note')";

#[test]
fn index_entries_live_in_their_column_family() {
    let dir = testkit::TempDir::new("cf-basic");
    let inst = open(&dir.0, false);
    let mut s = session(&inst);
    // kp's prefix length is not what this test is about: a plain KEY.
    q(&mut s, &CREATE.replace("pad(10)", "pad"));
    let m = ids(&inst, "t");
    assert_eq!(m[0].2, "zcf");
    assert_eq!(m[1].2, "cf_b");
    assert_eq!(m[2].2, "cf_c");
    assert_eq!(m[3].2, "", "a comment that is not a name is only a comment");
    fill(&mut s, 2000);
    for (name, id, cf) in &m {
        let cf = if cf.is_empty() {
            "default"
        } else {
            cf.as_str()
        };
        assert!(cf_holds(&inst, cf, *id), "{name} not in {cf}");
        for other in ["default", "zcf", "cf_b", "cf_c"]
            .into_iter()
            .filter(|o| *o != cf)
        {
            assert!(
                !cf_holds(&inst, other, *id),
                "{name} has entries in {other}"
            );
        }
    }
    // Every access path reads the right family.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "2000");
    assert_eq!(one(&mut s, "SELECT b, c FROM t WHERE id = 1234"), "70|12");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t WHERE b = 5"), "21");
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*), MAX(id) FROM t FORCE INDEX (kc) WHERE c = 3"
        ),
        "154|1992"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t FORCE INDEX (kb) WHERE b = 96 ORDER BY b DESC, id DESC LIMIT 3"
        ),
        vec!["1939", "1842", "1745"]
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t VALUES (1, 0, 1, 'dup')").0,
        1062
    );
    q(
        &mut s,
        "UPDATE t SET b = b + 1000, c = c + 100 WHERE id < 100",
    );
    q(&mut s, "DELETE FROM t WHERE id >= 1900");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t WHERE b >= 1000"), "100");
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kc) WHERE c >= 100"
        ),
        "100"
    );
    check_ok(&mut s, "t");
    // SHOW CREATE TABLE keeps the comments as given.
    let sc = show_create(&mut s, "t");
    assert!(
        sc.contains("PRIMARY KEY (`id`) COMMENT 'cfname=zcf'"),
        "{sc}"
    );
    assert!(sc.contains("KEY `kb` (`b`) COMMENT 'cf_b'"), "{sc}");
    assert!(
        sc.contains("UNIQUE KEY `kc` (`c`,`id`) COMMENT 'cfname=cf_c;'"),
        "{sc}"
    );
    assert!(sc.contains("COMMENT 'just a note'"), "{sc}");
    // STRATA_DDL maps each index to its family.
    assert_eq!(
        rows(
            &mut s,
            "SELECT INDEX_NAME, INDEX_TYPE, CF FROM information_schema.STRATA_DDL \
             WHERE TABLE_NAME = 't' ORDER BY INDEX_NUMBER"
        ),
        vec!["PRIMARY|1|zcf", "kb|2|cf_b", "kc|2|cf_c", "kp|2|default"]
    );
    // OPTIMIZE compacts each index in its own family; the override's
    // compression (ZSTD at the bottom) is what zcf's files are written with,
    // the default options' (LZ4) elsewhere.
    q(&mut s, "OPTIMIZE TABLE t");
    let files = rows(
        &mut s,
        "SELECT CF_NAME, LEVEL, COMPRESSION FROM information_schema.STRATA_SST_FILES \
         WHERE CF_NAME IN ('zcf', 'cf_b') GROUP BY CF_NAME, LEVEL, COMPRESSION ORDER BY CF_NAME",
    );
    assert_eq!(files, vec!["cf_b|6|LZ4", "zcf|6|ZSTD"]);
    assert_eq!(
        one(
            &mut s,
            "SELECT VALUE FROM information_schema.STRATA_CF_OPTIONS \
             WHERE CF_NAME = 'zcf' AND OPTION_TYPE = 'COMPRESSION_PER_LEVEL'"
        ),
        "kNoCompression"
    );
    let status = rows(&mut s, "SHOW ENGINE STRATA STATUS");
    assert!(
        status
            .iter()
            .any(|r| r.starts_with("CF_OPTIONS|zcf|") && r.contains("bottommost_compression=kZSTD")),
        "{status:?}"
    );
    assert!(status.iter().any(|r| r.starts_with("CF_COMPACTION|cf_c|")));
    // A flush writes level 0 with the level's compression (none, in zcf).
    q(&mut s, "INSERT INTO t VALUES (5000, 1, 1, 'new')");
    inst.catalog.db().flush().unwrap();
    let l0 = rows(
        &mut s,
        "SELECT COMPRESSION FROM information_schema.STRATA_SST_FILES WHERE CF_NAME = 'zcf' AND LEVEL = 0",
    );
    assert_eq!(l0, vec!["NoCompression"]);
    // DROP TABLE reclaims every family's entries.
    q(&mut s, "DROP TABLE t");
    for (name, id, _) in &m {
        assert!(!has_entries(&inst, *id, id + 1), "{name} left entries");
    }
    assert!(inst.catalog.db().wait_for_reclaims(Duration::from_secs(30)));
    let left = one(
        &mut s,
        "SELECT COUNT(*) FROM information_schema.STRATA_SST_FILES WHERE CF_NAME IN ('zcf', 'cf_b', 'cf_c')",
    );
    assert_eq!(left, "0", "the dropped table's files stay");
}

#[test]
fn ddl_keeps_and_moves_families() {
    let dir = testkit::TempDir::new("cf-ddl");
    let inst = open(&dir.0, false);
    let mut s = session(&inst);
    q(&mut s, &CREATE.replace("pad(10)", "pad"));
    fill(&mut s, 1000);
    // CREATE INDEX (the sorted, ingested fill) and ALTER ... ADD INDEX.
    q(
        &mut s,
        "CREATE INDEX kbc ON t (b, c) COMMENT 'cfname=cf_new'",
    );
    q(
        &mut s,
        "ALTER TABLE t ADD UNIQUE KEY kcb (c, b, id) COMMENT 'cf_new2'",
    );
    let m = ids(&inst, "t");
    let kbc = m.iter().find(|x| x.0 == "kbc").unwrap();
    assert_eq!(kbc.2, "cf_new");
    assert!(cf_holds(&inst, "cf_new", kbc.1));
    assert!(!cf_holds(&inst, "default", kbc.1));
    let kcb = m.iter().find(|x| x.0 == "kcb").unwrap();
    assert!(cf_holds(&inst, "cf_new2", kcb.1));
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kbc) WHERE b = 3 AND c < 5"
        ),
        rows(
            &mut s,
            "SELECT COUNT(*) FROM t IGNORE INDEX (kbc) WHERE b = 3 AND c < 5"
        )[0]
    );
    check_ok(&mut s, "t");
    // A rebuild copies every index into its family under new ids.
    q(&mut s, "ALTER TABLE t FORCE");
    q(
        &mut s,
        "ALTER TABLE t ADD COLUMN e INT NOT NULL DEFAULT 7, MODIFY pad VARCHAR(300)",
    );
    let m2 = ids(&inst, "t");
    for (name, id, cf) in &m2 {
        let cf = if cf.is_empty() {
            "default"
        } else {
            cf.as_str()
        };
        assert!(
            cf_holds(&inst, cf, *id),
            "{name} not in {cf} after the rebuild"
        );
    }
    assert_eq!(
        m2[0].2, "zcf",
        "the primary key keeps its family through ALTER"
    );
    check_ok(&mut s, "t");
    assert_eq!(one(&mut s, "SELECT COUNT(*), SUM(e) FROM t"), "1000|7000");
    // DROP INDEX and TRUNCATE reclaim in the family.
    q(&mut s, "DROP INDEX kbc ON t");
    let kbc2 = m2.iter().find(|x| x.0 == "kbc").unwrap().1;
    assert!(!has_entries(&inst, kbc2, kbc2 + 1));
    q(&mut s, "TRUNCATE TABLE t");
    for (_, id, _) in &m2 {
        assert!(!has_entries(&inst, *id, id + 1));
    }
    fill_e(&mut s);
    check_ok(&mut s, "t");
    assert!(orphan_index_ids(&inst).is_empty());
    // A bulk load of a table whose indexes span families goes row by row,
    // still into each index's family.
    q(&mut s, "TRUNCATE TABLE t");
    let bulk0 = bulk_rows(&mut s);
    q(&mut s, "SET strata_bulk_load = 1");
    q(
        &mut s,
        "INSERT INTO t (id, b, c, pad) VALUES (1, 1, 1, 'a'), (2, 2, 2, 'b')",
    );
    q(&mut s, "SET strata_bulk_load = 0");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t FORCE INDEX (kb)"), "2");
    assert_eq!(bulk_rows(&mut s), bulk0, "not through table files");
    check_ok(&mut s, "t");
    // A table whose indexes share one family loads by ingestion into it.
    q(
        &mut s,
        "CREATE TABLE one_cf (a INT, b INT, PRIMARY KEY (a) COMMENT 'cf_one', KEY (b) COMMENT 'cf_one')",
    );
    q(&mut s, "SET strata_bulk_load = 1");
    q(
        &mut s,
        "INSERT INTO one_cf VALUES (1, 10), (2, 20), (3, 30)",
    );
    q(&mut s, "SET strata_bulk_load = 0");
    let m3 = ids(&inst, "one_cf");
    for (name, id, _) in &m3 {
        assert!(cf_holds(&inst, "cf_one", *id), "{name}");
        assert!(!cf_holds(&inst, "default", *id), "{name}");
    }
    assert_eq!(one(&mut s, "SELECT a FROM one_cf WHERE b = 20"), "2");
    check_ok(&mut s, "one_cf");
}

/// Rows loaded through table files so far (Strata_bulk_load_rows).
fn bulk_rows(s: &mut Session) -> u64 {
    let r = rows(s, "SHOW GLOBAL STATUS LIKE 'Strata_bulk_load_rows'");
    r[0].split('|').nth(1).unwrap().parse().unwrap()
}

fn fill_e(s: &mut Session) {
    q(
        s,
        "INSERT INTO t (id, b, c, pad) VALUES (1, 1, 1, 'a'), (2, 2, 2, 'b'), (3, 3, 3, 'c')",
    );
}

#[test]
fn refused_and_plain_comments() {
    let dir = testkit::TempDir::new("cf-refuse");
    let inst = open(&dir.0, false);
    let mut s = session(&inst);
    for bad in [
        "CREATE TABLE r (a INT, PRIMARY KEY (a) COMMENT 'rev:')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'cfname=rev:__system__')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'cfname=rev:bad name')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'p0_cfname=foo;p1_cfname=bar')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'custom_p0_cfname=foo')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'cfname=bad name')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'cfname=__system__')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'cfname=a;cfname=b')",
        "CREATE TABLE r (a INT, KEY (a) COMMENT 'ttl_duration=3600;')",
    ] {
        let (code, msg) = fails(&mut s, bad);
        assert_eq!(code, 1235, "{bad}: {msg}");
    }
    q(&mut s, "CREATE TABLE r (a INT PRIMARY KEY, b INT)");
    assert_eq!(
        fails(&mut s, "CREATE INDEX kb ON r (b) COMMENT 'rev:x y'").0,
        1235
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE r ADD KEY kb (b) COMMENT 'p1_cfname=x'").0,
        1235
    );
    // `default` names the default family; a plain comment is kept as text.
    q(
        &mut s,
        "ALTER TABLE r ADD KEY kb (b) COMMENT 'cfname=default'",
    );
    q(
        &mut s,
        "CREATE INDEX kb2 ON r (b, a) COMMENT 'it''s for reports'",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT INDEX_NAME, CF FROM information_schema.STRATA_DDL WHERE TABLE_NAME = 'r' ORDER BY INDEX_NUMBER"
        ),
        vec!["PRIMARY|default", "kb|default", "kb2|default"]
    );
    let sc = show_create(&mut s, "r");
    assert!(sc.contains("COMMENT 'it''s for reports'"), "{sc}");
    // A table comment naming a family is still refused (MyRocks reads only index comments).
    assert_eq!(
        fails(
            &mut s,
            "CREATE TABLE r2 (a INT PRIMARY KEY) COMMENT 'cfname=x'"
        )
        .0,
        1235
    );
}

#[test]
fn mapping_and_atomicity_survive_a_crash() {
    let dir = testkit::TempDir::new("cf-crash");
    let (pk_id, kb_id);
    {
        let inst = open(&dir.0, true);
        let mut s = session(&inst);
        q(&mut s, &CREATE.replace("pad(10)", "pad"));
        let m = ids(&inst, "t");
        (pk_id, kb_id) = (m[0].1, m[1].1);
        q(&mut s, "BEGIN");
        fill(&mut s, 1000);
        q(&mut s, "UPDATE t SET b = 500 WHERE id % 10 = 0");
        q(&mut s, "COMMIT");
        // A transaction that never commits writes nothing in any family.
        q(&mut s, "BEGIN");
        q(&mut s, "INSERT INTO t VALUES (100000, 1, 1, 'lost')");
        q(&mut s, "DELETE FROM t WHERE id < 500");
        // Dropped without close (the open transaction's writes were only in its
        // buffer): nothing is flushed, recovery replays the WAL.
        drop(s);
        drop(inst);
    }
    let inst = open(&dir.0, true);
    let mut s = session(&inst);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1000");
    assert_eq!(
        one(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kb) WHERE b = 500"
        ),
        "100"
    );
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t WHERE id = 100000"), "0");
    check_ok(&mut s, "t");
    let m = ids(&inst, "t");
    assert_eq!(m[0], ("PRIMARY".to_string(), pk_id, "zcf".to_string()));
    assert_eq!(m[1], ("kb".to_string(), kb_id, "cf_b".to_string()));
    assert!(cf_holds(&inst, "zcf", pk_id));
    assert!(cf_holds(&inst, "cf_b", kb_id));
    assert!(show_create(&mut s, "t").contains("COMMENT 'cf_b'"));
}

/// Each family's level ratio as the engine holds it (STRATA_CF_OPTIONS and
/// SHOW ENGINE STRATA STATUS read the engine's options), by family name.
fn level_ratios(s: &mut Session) -> Vec<String> {
    let status = rows(s, "SHOW ENGINE STRATA STATUS");
    let shown: Vec<String> = rows(
        s,
        "SELECT CF_NAME, VALUE FROM information_schema.STRATA_CF_OPTIONS \
         WHERE OPTION_TYPE = 'MAX_BYTES_FOR_LEVEL_MULTIPLIER' ORDER BY CF_NAME",
    );
    for r in &shown {
        let (cf, v) = r.split_once('|').unwrap();
        assert!(
            status
                .iter()
                .any(|l| l.starts_with(&format!("CF_OPTIONS|{cf}|"))
                    && l.contains(&format!("max_bytes_for_level_multiplier={v}"))),
            "SHOW ENGINE STRATA STATUS disagrees with STRATA_CF_OPTIONS on {cf}: {status:?}"
        );
    }
    shown
}

/// The server's level ratio (sql::LEVEL_MULTIPLIER, 6) is only a default:
/// `--default-cf-options` / `--override-cf-options` giving
/// max_bytes_for_level_multiplier win, for the default family and for the
/// families made later; without them every family has 6.
#[test]
fn cf_options_override_the_level_ratio() {
    let make =
        "CREATE TABLE t (id INT PRIMARY KEY, b INT, c INT, KEY kb (b) COMMENT 'cfname=cf_b', \
                KEY kc (c) COMMENT 'cfname=cf_c')";
    let dir = testkit::TempDir::new("cf-ratio-default");
    let inst = Instance::open(&dir.0, &InstanceOptions::default()).unwrap();
    let mut s = session(&inst);
    q(&mut s, make);
    assert_eq!(
        level_ratios(&mut s),
        vec!["cf_b|6", "cf_c|6", "default|6"],
        "without options: sql::LEVEL_MULTIPLIER"
    );
    assert_eq!(sql::LEVEL_MULTIPLIER, 6);
    drop(s);
    drop(inst);
    let dir = testkit::TempDir::new("cf-ratio-override");
    let o = InstanceOptions {
        default_cf_options: "max_bytes_for_level_multiplier=10".into(),
        override_cf_options: "cf_c={max_bytes_for_level_multiplier=8}".into(),
        ..Default::default()
    };
    let inst = Instance::open(&dir.0, &o).unwrap();
    let mut s = session(&inst);
    q(&mut s, make);
    assert_eq!(
        level_ratios(&mut s),
        vec!["cf_b|10", "cf_c|8", "default|10"],
        "--default-cf-options / --override-cf-options"
    );
    // The engine's own options, not only what the views print.
    let mut engine: Vec<String> = inst
        .catalog
        .db()
        .cf_infos()
        .into_iter()
        .filter(|c| !c.name.starts_with("__"))
        .map(|c| {
            let (_, v) = c
                .options
                .iter()
                .find(|(k, _)| *k == "max_bytes_for_level_multiplier")
                .unwrap();
            format!("{}|{v}", c.name)
        })
        .collect();
    engine.sort();
    assert_eq!(engine, vec!["cf_b|10", "cf_c|8", "default|10"]);
}
