//! Reverse-ordered column families (MyRocks' `COMMENT 'rev:name'` /
//! `'cfname=rev:name'`): an index in one keeps its entries in reverse byte
//! order, and every access path (point, ranges both ways, ORDER BY ... LIMIT,
//! covering scans, unique checks, locking reads, own uncommitted writes) gives
//! what the same table without comments gives, under a seeded random workload
//! (`SEED=` reruns it); entries really are in the family and in reverse order,
//! `rev:x` and `x` are two families, the mapping survives a restart, and
//! STRATA_DDL, STRATA_CF_OPTIONS and SHOW ENGINE STATUS show the family as
//! reverse. Also CREATE INDEX (sorted ingestion), bulk loads and DROP reclaim.
#![allow(clippy::unwrap_used)]

mod common;
use common::{check_ok, fails, has_entries, q, rows};
use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session};
use std::sync::Arc;
use std::time::Duration;
use testkit::Rng;

fn open(dir: &std::path::Path) -> Arc<Instance> {
    let o = InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    Instance::open(dir, &o).unwrap_or_else(|e| panic!("open: {e}"))
}

fn session(inst: &Arc<Instance>, id: u64) -> Session {
    let mut s = Session::new(inst.clone(), id, "root", None);
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

/// The rows of a statement, or its error code.
fn run(s: &mut Session, sql: &str) -> Result<Vec<String>, u16> {
    let mut c = Collect::default();
    match s.query(sql, &mut c) {
        Ok(_) => Ok(common::texts(c.rows)),
        Err(e) => Err(e.code),
    }
}

/// The table `r` with every index in a reverse family, and `p`, the same
/// without comments. `kb` is in the plain family `fa`, `ka` in `rev:fa`.
const TABLE: &str = "CREATE TABLE T (
    id INT NOT NULL,
    a INT,
    b VARCHAR(20),
    c INT,
    PRIMARY KEY (id) COMMENT 'rev:fpk',
    KEY ka (a, b) COMMENT 'cfname=rev:fa',
    KEY kb (b) COMMENT 'fa',
    UNIQUE KEY uc (c) COMMENT 'REV:fa'
)";

fn create(s: &mut Session) {
    q(s, &TABLE.replace("CREATE TABLE T", "CREATE TABLE r"));
    let plain: String = TABLE
        .lines()
        .map(|l| match l.find(" COMMENT") {
            Some(i) => format!("{}{}", &l[..i], if l.ends_with(',') { "," } else { "" }),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    q(s, &plain.replace("CREATE TABLE T", "CREATE TABLE p"));
}

fn val(r: &mut Rng, n: i64) -> String {
    if r.chance(5) {
        "NULL".into()
    } else {
        r.range(-n, n).to_string()
    }
}

fn text(r: &mut Rng) -> String {
    if r.chance(5) {
        return "NULL".into();
    }
    let len = r.below(6) as usize;
    let s: String = (0..len)
        .map(|_| (b'a' + r.below(4) as u8) as char)
        .collect();
    format!("'{s}'")
}

/// A random statement over table `TBL` (the same for both tables).
fn statement(r: &mut Rng) -> String {
    let id = r.range(0, 300);
    let id2 = id + r.range(0, 60);
    let lim = r.range(1, 15);
    let dir = if r.chance(50) { "DESC" } else { "ASC" };
    match r.below(20) {
        0..=3 => format!(
            "INSERT INTO TBL VALUES ({id}, {}, {}, {})",
            val(r, 50),
            text(r),
            val(r, 400)
        ),
        4 => format!(
            "INSERT INTO TBL VALUES ({id}, {}, {}, {}), ({id2}, {}, {}, {})",
            val(r, 50),
            text(r),
            val(r, 400),
            val(r, 50),
            text(r),
            val(r, 400)
        ),
        5 => format!("UPDATE TBL SET a = {}, b = {} WHERE id = {id}", val(r, 50), text(r)),
        6 => format!("UPDATE TBL SET c = {} WHERE id BETWEEN {id} AND {id2}", val(r, 400)),
        7 => format!("UPDATE TBL SET id = id + {} WHERE id = {id}", r.range(-5, 5)),
        8 => format!("DELETE FROM TBL WHERE id BETWEEN {id} AND {id2}"),
        9 => format!("DELETE FROM TBL WHERE a < {} ORDER BY a {dir}, id LIMIT 2", val(r, 50)),
        10 => format!("SELECT * FROM TBL WHERE id = {id}"),
        11 => format!(
            "SELECT * FROM TBL WHERE id >= {id} AND id < {id2} ORDER BY id {dir} LIMIT {lim}"
        ),
        12 => format!("SELECT id, c FROM TBL WHERE id > {id} ORDER BY id {dir} LIMIT {lim}"),
        13 => format!(
            "SELECT a, b, id FROM TBL FORCE INDEX (ka) WHERE a BETWEEN {} AND {} \
             ORDER BY a {dir}, b {dir}, id {dir} LIMIT {lim}",
            r.range(-50, 0),
            r.range(0, 50)
        ),
        14 => format!(
            "SELECT a, b, id FROM TBL FORCE INDEX (ka) WHERE a = {} ORDER BY b {dir}, id {dir}",
            r.range(-50, 50)
        ),
        15 => format!(
            "SELECT id, b FROM TBL FORCE INDEX (kb) WHERE b > {} ORDER BY b {dir}, id {dir} LIMIT {lim}",
            text(r)
        ),
        16 => format!(
            "SELECT c, id FROM TBL FORCE INDEX (uc) WHERE c < {} ORDER BY c {dir} LIMIT {lim}",
            r.range(-400, 400)
        ),
        17 => format!("SELECT id, a FROM TBL WHERE c = {}", r.range(-400, 400)),
        18 => "SELECT COUNT(*), SUM(id), MIN(a), MAX(b), MIN(c) FROM TBL".to_string(),
        _ => format!(
            "SELECT id FROM TBL WHERE id IN ({id}, {id2}, {}) OR a > {} ORDER BY id {dir}",
            r.range(0, 300),
            r.range(30, 50)
        ),
    }
}

fn both(s: &mut Session, sql: &str) -> Result<Vec<String>, u16> {
    let want = run(s, &sql.replace("TBL", "p"));
    let got = run(s, &sql.replace("TBL", "r"));
    assert_eq!(got, want, "{sql}");
    got
}

#[test]
fn reverse_families_answer_as_plain_tables() {
    let mut r = Rng::from_env("reverse_families_answer_as_plain_tables");
    let dir = testkit::TempDir::new("cf-rev-random");
    let inst = open(&dir.0);
    let mut s = session(&inst, 1);
    let mut other = session(&inst, 2);
    create(&mut s);
    for step in 0..1500 {
        let in_txn = r.chance(15);
        if in_txn {
            // Own uncommitted writes merged into the reads.
            q(&mut s, "BEGIN");
            for _ in 0..r.range(1, 6) {
                let sql = statement(&mut r);
                let _ = both(&mut s, &sql);
            }
            q(&mut s, if r.chance(50) { "COMMIT" } else { "ROLLBACK" });
        } else {
            let sql = statement(&mut r);
            let _ = both(&mut s, &sql);
        }
        match step % 250 {
            100 => {
                q(&mut s, "OPTIMIZE TABLE r");
            }
            200 => inst.catalog.db().flush().unwrap(),
            _ => {}
        }
        if step % 50 == 25 {
            // A locking range read locks the rows it returns (checked from
            // another session with NOWAIT), in either direction.
            let lo = r.range(0, 300);
            let hi = lo + r.range(0, 40);
            let dir = if r.chance(50) { "DESC" } else { "ASC" };
            for t in ["p", "r"] {
                q(&mut s, "BEGIN");
                let got = rows(
                    &mut s,
                    &format!(
                        "SELECT id FROM {t} WHERE id BETWEEN {lo} AND {hi} ORDER BY id {dir} FOR UPDATE"
                    ),
                );
                let probe = r.range(lo, hi);
                let locked = run(
                    &mut other,
                    &format!("SELECT id FROM {t} WHERE id = {probe} FOR UPDATE NOWAIT"),
                );
                let held = got.contains(&probe.to_string());
                assert_eq!(
                    locked.is_err(),
                    held,
                    "{t}: id {probe} in {got:?}: {locked:?}"
                );
                q(&mut s, "COMMIT");
            }
        }
    }
    check_ok(&mut s, "r");
    let all = "SELECT * FROM TBL ORDER BY id";
    assert!(!both(&mut s, all).unwrap().is_empty());
}

/// The keys of index `id` in family `cf`, in the family's (engine) order.
fn engine_keys(inst: &Instance, cf: &str, id: u32) -> Vec<Vec<u8>> {
    let db = inst.catalog.db();
    let Some(h) = db.cf(cf) else {
        return Vec::new();
    };
    let mut it = db.iter_cf(lsm::ReadOptions::default(), h).unwrap();
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        if it.key().starts_with(&id.to_be_bytes()) {
            out.push(it.key().to_vec());
        }
        it.next();
    }
    out
}

fn index_ids(inst: &Instance, table: &str) -> Vec<(String, u32, String)> {
    let st = inst.catalog.state();
    let t = st.table("d", table).unwrap();
    t.def
        .indexes()
        .map(|i| (i.name.clone(), i.id, i.cf.clone()))
        .collect()
}

fn assert_reverse_layout(inst: &Instance, table: &str, n: usize) {
    for (name, id, cf) in index_ids(inst, table) {
        let keys = engine_keys(inst, &cf, id);
        assert_eq!(keys.len(), n, "{name} in {cf}");
        let rev = cf.starts_with("rev:");
        for w in keys.windows(2) {
            assert_eq!(w[0] > w[1], rev, "{name} in {cf}: order");
        }
        for other in ["default", "fa", "rev:fa", "rev:fpk"] {
            if other != cf {
                assert!(
                    engine_keys(inst, other, id).is_empty(),
                    "{name} also in {other}"
                );
            }
        }
    }
}

#[test]
fn entries_are_reversed_and_survive_a_restart() {
    let dir = testkit::TempDir::new("cf-rev-layout");
    let id_pk;
    {
        let inst = open(&dir.0);
        let mut s = session(&inst, 1);
        create(&mut s);
        for i in 0..200 {
            q(
                &mut s,
                &format!("INSERT INTO r VALUES ({i}, {}, 'v{}', {i})", i % 17, i % 23),
            );
        }
        let m = index_ids(&inst, "r");
        assert_eq!(
            m.iter().map(|x| x.2.as_str()).collect::<Vec<_>>(),
            vec!["rev:fpk", "rev:fa", "fa", "rev:fa"]
        );
        id_pk = m[0].1;
        assert_reverse_layout(&inst, "r", 200);
        inst.catalog.db().flush().unwrap();
        q(&mut s, "OPTIMIZE TABLE r");
        assert_reverse_layout(&inst, "r", 200);
        assert_eq!(
            rows(
                &mut s,
                "SELECT INDEX_NAME, CF FROM information_schema.STRATA_DDL \
                 WHERE TABLE_NAME = 'r' ORDER BY INDEX_NUMBER"
            ),
            vec!["PRIMARY|rev:fpk", "ka|rev:fa", "kb|fa", "uc|rev:fa"]
        );
        assert!(show_create_has(
            &mut s,
            "PRIMARY KEY (`id`) COMMENT 'rev:fpk'"
        ));
        assert!(show_create_has(
            &mut s,
            "UNIQUE KEY `uc` (`c`) COMMENT 'REV:fa'"
        ));
    }
    let inst = open(&dir.0);
    let mut s = session(&inst, 1);
    assert_reverse_layout(&inst, "r", 200);
    assert_eq!(
        rows(
            &mut s,
            "SELECT CF_NAME, VALUE FROM information_schema.STRATA_CF_OPTIONS \
             WHERE OPTION_TYPE = 'COMPARATOR' AND CF_NAME IN ('fa', 'rev:fa', 'rev:fpk') ORDER BY CF_NAME"
        ),
        vec![
            "fa|strata.Bytewise",
            "rev:fa|strata.ReverseBytewise",
            "rev:fpk|strata.ReverseBytewise"
        ]
    );
    let status = rows(&mut s, "SHOW ENGINE STRATA STATUS");
    assert!(
        status.iter().any(|r| r.starts_with("CF_OPTIONS|rev:fa|")
            && r.contains("comparator=strata.ReverseBytewise")),
        "{status:?}"
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM r ORDER BY id DESC LIMIT 3"),
        vec!["199", "198", "197"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM r WHERE id < 3 ORDER BY id"),
        vec!["0", "1", "2"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT c FROM r FORCE INDEX (uc) WHERE c > 195 ORDER BY c"
        ),
        vec!["196", "197", "198", "199"]
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO r VALUES (500, 1, 'x', 7)").0,
        1062
    );
    check_ok(&mut s, "r");
    // CREATE INDEX into a reverse family (sorted runs, ingested) and a bulk
    // load of a table in one.
    q(&mut s, "CREATE INDEX kd ON r (b, a) COMMENT 'rev:fd'");
    assert_reverse_layout_of(&inst, "r", "kd", 200);
    assert_eq!(
        rows(
            &mut s,
            "SELECT b, a FROM r FORCE INDEX (kd) WHERE b = 'v3' ORDER BY a DESC LIMIT 2"
        ),
        vec!["v3|16", "v3|15"]
    );
    check_ok(&mut s, "r");
    q(
        &mut s,
        "CREATE TABLE e (id INT, v INT, PRIMARY KEY (id) COMMENT 'rev:fe', KEY kv (v) COMMENT 'rev:fe')",
    );
    q(&mut s, "SET strata_bulk_load = 1");
    // Ordered input of a reverse family comes in its order (descending).
    q(&mut s, "INSERT INTO e VALUES (9, 1), (8, 2), (5, 3)");
    assert_eq!(fails(&mut s, "INSERT INTO e VALUES (6, 4)").0, 4054);
    q(&mut s, "INSERT INTO e VALUES (3, 4)");
    q(&mut s, "SET strata_bulk_load = 0");
    let loaded = rows(&mut s, "SHOW GLOBAL STATUS LIKE 'Strata_bulk_load_rows'");
    assert_eq!(
        loaded,
        vec!["Strata_bulk_load_rows|4"],
        "loaded through table files"
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM e ORDER BY id"),
        vec!["3", "5", "8", "9"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT v FROM e FORCE INDEX (kv) ORDER BY v DESC LIMIT 1"
        ),
        vec!["4"]
    );
    assert_reverse_layout_of(&inst, "e", "PRIMARY", 4);
    check_ok(&mut s, "e");
    // DROP TABLE reclaims the reverse families' entries.
    let ids: Vec<u32> = index_ids(&inst, "r").iter().map(|x| x.1).collect();
    q(&mut s, "DROP TABLE r");
    for id in ids {
        assert!(!has_entries(&inst, id, id + 1), "index {id} left entries");
    }
    assert!(!has_entries(&inst, id_pk, id_pk + 1));
    assert!(inst.catalog.db().wait_for_reclaims(Duration::from_secs(30)));
}

fn assert_reverse_layout_of(inst: &Instance, table: &str, index: &str, n: usize) {
    let (_, id, cf) = index_ids(inst, table)
        .into_iter()
        .find(|x| x.0 == index)
        .unwrap();
    let keys = engine_keys(inst, &cf, id);
    assert_eq!(keys.len(), n, "{index} in {cf}");
    assert!(
        keys.windows(2).all(|w| w[0] > w[1]),
        "{index} in {cf}: order"
    );
}

fn show_create_has(s: &mut Session, what: &str) -> bool {
    let sc = common::show_create(s, "r");
    assert!(sc.contains(what), "{sc}");
    true
}

/// Keys just below a range's low end in a reverse family: the engine's bound
/// there is `lo` with its last byte decremented and 32 0xff bytes appended
/// (`keyrange::below`), so the keys that start with those bytes (four BIGINT
/// UNSIGNED maximums after a column one below the range's) pass the bound and
/// must be left out by `keyrange`; ranges both ways give what a plain table
/// gives. Also the shortest keys (a TINYINT primary key: one byte after the
/// index prefix) in a reverse family, which `keyrange::span` needs to be
/// longer than the prefix, are all gone after TRUNCATE and DROP.
#[test]
fn keys_of_32_ff_bytes_below_a_reverse_range_stay_out() {
    let dir = testkit::TempDir::new("cf-rev-ff");
    let inst = open(&dir.0);
    let mut s = session(&inst, 1);
    let m = u64::MAX;
    for (t, c) in [("r", " COMMENT 'rev:ff'"), ("p", "")] {
        q(
            &mut s,
            &format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, a BIGINT UNSIGNED NOT NULL, \
                 b BIGINT UNSIGNED NOT NULL, c BIGINT UNSIGNED NOT NULL, \
                 d BIGINT UNSIGNED NOT NULL, e BIGINT UNSIGNED NOT NULL, KEY k (a, b, c, d, e){c})"
            ),
        );
        for (a, first) in [(6, 0), (7, 100), (8, 200), (6, 300)] {
            let (b, ids) = if first == 300 {
                (5, 300..310)
            } else {
                (m, first..first + 40)
            };
            let vals: Vec<String> = ids
                .map(|id| format!("({id}, {a}, {b}, {m}, {m}, {m})"))
                .collect();
            q(
                &mut s,
                &format!("INSERT INTO {t} VALUES {}", vals.join(", ")),
            );
        }
    }
    for sql in [
        "SELECT id, a FROM TBL FORCE INDEX (k) WHERE a >= 7 ORDER BY a, b, c, d, e, id",
        "SELECT id, a FROM TBL FORCE INDEX (k) WHERE a >= 7 ORDER BY a DESC, b DESC, c DESC, d DESC, e DESC, id DESC",
        "SELECT id FROM TBL FORCE INDEX (k) WHERE a = 7 ORDER BY a DESC, b DESC, c DESC, d DESC, e DESC, id DESC LIMIT 5",
        "SELECT id FROM TBL FORCE INDEX (k) WHERE a BETWEEN 7 AND 7 ORDER BY a, b, c, d, e, id LIMIT 5",
        "SELECT COUNT(*) FROM TBL FORCE INDEX (k) WHERE a >= 7",
        "SELECT COUNT(*) FROM TBL FORCE INDEX (k) WHERE a < 7",
        "SELECT id FROM TBL FORCE INDEX (k) WHERE a = 6 AND b = 5 ORDER BY a DESC, b DESC, c DESC, d DESC, e DESC, id DESC",
    ] {
        let got = both(&mut s, sql).unwrap();
        assert!(!got.is_empty(), "{sql}");
    }
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM r FORCE INDEX (k) WHERE a >= 7"
        ),
        ["80"]
    );
    check_ok(&mut s, "r");
    q(
        &mut s,
        "CREATE TABLE t1 (id TINYINT NOT NULL, PRIMARY KEY (id) COMMENT 'rev:ff')",
    );
    q(&mut s, "INSERT INTO t1 VALUES (-128), (0), (127)");
    let id = index_ids(&inst, "t1")[0].1;
    q(&mut s, "OPTIMIZE TABLE t1");
    assert_eq!(
        rows(&mut s, "SELECT id FROM t1 ORDER BY id DESC"),
        ["127", "0", "-128"]
    );
    q(&mut s, "TRUNCATE TABLE t1");
    assert!(!has_entries(&inst, id, id + 1));
    q(&mut s, "INSERT INTO t1 VALUES (-128), (127)");
    let id = index_ids(&inst, "t1")[0].1;
    q(&mut s, "DROP TABLE t1");
    assert!(!has_entries(&inst, id, id + 1));
}
