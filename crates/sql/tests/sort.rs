//! ORDER BY past the memory budget: with a small tmp_table_size the sort spills runs to
//! disk and merges them, and the result equals the in-memory sort's (both directions, with
//! LIMIT/OFFSET, mixed key kinds that once made the sort panic).
#![allow(clippy::unwrap_used)]

use sql::{Instance, InstanceOptions, Session};
use std::sync::atomic::Ordering;

mod common;

fn q(s: &mut Session, sql: &str) -> Vec<String> {
    common::texts(common::q(s, sql))
}

/// A new instance in a temporary directory and a root session in its
/// database `d`.
fn open(name: &str) -> (std::path::PathBuf, std::sync::Arc<Instance>, Session) {
    let dir = testkit::unique_temp_path(name);
    let inst = Instance::open(
        &dir,
        &InstanceOptions {
            sync_on_commit: false,
            ..Default::default()
        },
    )
    .unwrap();
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    (dir, inst, s)
}

#[test]
fn order_by_spills_to_disk_and_agrees_with_memory() {
    let (dir, inst, mut s) = open("sql-sort");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(40))",
    );
    let mut rng = testkit::Rng::from_env("order_by_spills_to_disk_and_agrees_with_memory");
    for chunk in 0..30 {
        let vals: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {}, 'c{}')", rng.range(-500, 500), rng.below(10_000))
            })
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    let queries = [
        "SELECT id, k, c FROM t ORDER BY k, id",
        "SELECT id, k FROM t ORDER BY c DESC, id",
        "SELECT id FROM t ORDER BY k DESC, id LIMIT 100 OFFSET 2000",
        "SELECT id, IF(k > 0, k, c) AS m FROM t ORDER BY m, id",
    ];
    let in_memory: Vec<Vec<String>> = queries.iter().map(|x| q(&mut s, x)).collect();
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    q(&mut s, "SET SESSION tmp_table_size = 65536");
    for (x, want) in queries.iter().zip(&in_memory) {
        let got = q(&mut s, x);
        assert_eq!(got.len(), want.len(), "{x}");
        assert!(got == *want, "{x}: spilled sort differs");
    }
    let passes = sql::sort::MERGE_PASSES.load(Ordering::Relaxed) - before;
    assert!(passes >= 3, "only {passes} sorts spilled to disk");
    // The ordering itself, checked independently of the sort code.
    let ks: Vec<i64> = in_memory[0]
        .iter()
        .map(|r| r.split('|').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(ks.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(in_memory[2].len(), 100);
    drop(s);
    let _ = inst.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// DISTINCT whose ORDER BY keys are its columns is done on the sorted rows
/// (`tail.rs`, `by_keys`), and ORDER BY compares collated strings in place
/// (`Sorter::collated`). Both must give what the hash-set DISTINCT (forced by a
/// LIMIT) and the sort keys give: one row per value equal under the collation
/// (case, trailing spaces, accents), the first one read, in the collation's
/// order, in memory and spilled, with OFFSET and SQL_CALC_FOUND_ROWS.
#[test]
fn distinct_on_sorted_keys_agrees_with_the_hash_set() {
    let (dir, inst, mut s) = open("sql-sort-distinct");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(40), b VARCHAR(40) COLLATE utf8mb4_bin, u VARCHAR(40) COLLATE utf8mb4_unicode_ci)",
    );
    let mut rng = testkit::Rng::from_env("distinct_on_sorted_keys_agrees_with_the_hash_set");
    let parts = ["a", "A", "b", "B", " ", "\\t", "é", "E", "_"];
    let word = |rng: &mut testkit::Rng| -> String {
        if rng.below(15) == 0 {
            return "NULL".into();
        }
        let n = 1 + rng.below(3) as usize;
        let w: String = (0..n)
            .map(|_| parts[rng.below(parts.len() as u64) as usize])
            .collect();
        format!("'{w}'")
    };
    for chunk in 0..6 {
        let vals: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                let (c, b, u) = (word(&mut rng), word(&mut rng), word(&mut rng));
                format!("({id}, {}, {c}, {b}, {u})", rng.below(4))
            })
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    // Each query with its hash-set form: a LIMIT keeps DISTINCT off the sort.
    let queries = [
        "SELECT DISTINCT c FROM t ORDER BY c",
        "SELECT DISTINCT c FROM t WHERE id BETWEEN 100 AND 2500 ORDER BY c DESC",
        "SELECT DISTINCT k, c FROM t ORDER BY c, k DESC",
        "SELECT DISTINCT c, k, c FROM t ORDER BY k, c",
        "SELECT DISTINCT b FROM t ORDER BY b",
        "SELECT DISTINCT u FROM t ORDER BY u",
        "SELECT DISTINCT c, u FROM t ORDER BY u, c",
        "SELECT DISTINCT c FROM t ORDER BY c LIMIT 5 OFFSET 3",
    ];
    let run = |s: &mut Session| -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for x in queries {
            let got = q(s, x);
            let want = q(
                s,
                &format!(
                    "{x}{}",
                    if x.contains("LIMIT") {
                        ""
                    } else {
                        " LIMIT 100000"
                    }
                ),
            );
            assert!(got == want, "{x}: {got:?}\nvs the hash set: {want:?}");
            out.push(got);
        }
        let calc = q(
            s,
            "SELECT SQL_CALC_FOUND_ROWS DISTINCT c FROM t ORDER BY c LIMIT 2, 3",
        );
        let found = q(s, "SELECT FOUND_ROWS()");
        out.push(calc);
        out.push(found);
        out
    };
    let in_memory = run(&mut s);
    // Equal spellings collapse: far fewer values than rows; the first read is kept.
    assert!(in_memory[0].len() < 600, "{}", in_memory[0].len());
    let first_a = q(&mut s, "SELECT c FROM t WHERE c = 'a' ORDER BY id LIMIT 1");
    assert!(in_memory[0].contains(&first_a[0]), "{first_a:?}");
    assert_eq!(in_memory[8].len(), 3);
    assert_eq!(in_memory[9], vec![in_memory[0].len().to_string()]);
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    q(&mut s, "SET SESSION tmp_table_size = 65536");
    let spilled = run(&mut s);
    assert!(sql::sort::MERGE_PASSES.load(Ordering::Relaxed) > before);
    assert!(spilled == in_memory, "spilled DISTINCT differs");
    drop(s);
    let _ = inst.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// DISTINCT done on sorted rows must not keep values it takes as equal but the
/// sort orders apart: an exact number and a DOUBLE of the same value (rows of a
/// UNION or derived table keep their own kinds), -0.0 and 0.0 in a DOUBLE column.
#[test]
fn distinct_with_order_by_merges_equal_numbers_of_different_kinds() {
    let db = common::TestDb::open("sql-sort-distinct-kinds");
    let mut s = common::session_in_d(&db);
    for (sql, want) in [
        ("SELECT DISTINCT x FROM (SELECT 1 AS x UNION ALL SELECT 1e0) d ORDER BY x", 1),
        ("SELECT DISTINCT x FROM (SELECT 1.0 AS x UNION ALL SELECT 1e0) d ORDER BY x", 1),
        (
            "WITH c AS (SELECT 2 AS x, 'a' AS y UNION ALL SELECT 2e0, 'b' UNION ALL SELECT 2, 'b') \
             SELECT DISTINCT x, y FROM c ORDER BY x, y",
            2,
        ),
    ] {
        let got = q(&mut s, sql);
        assert_eq!(got.len(), want, "{sql}: {got:?}");
    }
    q(&mut s, "CREATE TABLE f (d DOUBLE)");
    q(&mut s, "INSERT INTO f VALUES (0e0), (-0e0), (1e0), (-0e0)");
    let sorted = q(&mut s, "SELECT DISTINCT d FROM f ORDER BY d");
    let hashed = q(&mut s, "SELECT DISTINCT d FROM f");
    assert_eq!(sorted.len(), hashed.len(), "{sorted:?} vs {hashed:?}");
}

/// Review of the bulk fixes (s31, MED): a spilled ORDER BY polls KILL and the
/// statement's deadline while it merges its runs. The client here is slow: a
/// KILL QUERY sent after its tenth row stops the merge within `POLL_EVERY`
/// rows with 1317 (before, every row was sent and the statement succeeded).
#[test]
fn kill_query_stops_the_merge_of_a_spilled_sort() {
    use sql::result::{ColumnInfo, ResultSink};
    use sql::Value;
    struct KillAfter {
        killer: Session,
        rows: usize,
    }
    impl ResultSink for KillAfter {
        fn columns(&mut self, _: &[ColumnInfo]) -> sql::Result<()> {
            Ok(())
        }
        fn row(&mut self, _: &[Value]) -> sql::Result<()> {
            self.rows += 1;
            if self.rows == 10 {
                q(&mut self.killer, "KILL QUERY 1");
            }
            Ok(())
        }
    }
    let (dir, inst, mut s) = open("sql-sort-kill");
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(40))");
    for chunk in 0..20 {
        let vals: Vec<String> = (0..1000)
            .map(|i| format!("({}, 'c{}')", chunk * 1000 + i, (i * 7919) % 1000))
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    q(&mut s, "SET SESSION tmp_table_size = 65536");
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    let mut sink = KillAfter {
        killer: inst.session(2, "root", None),
        rows: 0,
    };
    let e = s
        .query("SELECT id, c FROM t ORDER BY c, id", &mut sink)
        .expect_err("killed");
    assert_eq!(e.code, 1317, "{e:?}");
    assert!(sink.rows < 20_000, "{} rows sent", sink.rows);
    assert!(sql::sort::MERGE_PASSES.load(Ordering::Relaxed) > before);
    // The session goes on.
    assert_eq!(q(&mut s, "SELECT COUNT(*) FROM t"), ["20000"]);
    drop(s);
    let _ = inst.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
