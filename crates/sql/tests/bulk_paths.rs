//! Which way LOAD DATA's bulk path went, proved by the session's counters
//! (`Strata_bulk_load_rows`, `_streamed`: written as they came, in key order;
//! `_read_back`: written, then read back into the sort when a key came out of
//! order), and its answers against the row path's on the same file: a repeated
//! key with IGNORE and REPLACE, a descending file into a `rev:` family,
//! collation duplicates, UNIQUE secondary keys with NULLs and repeats, many
//! spilled runs with a 64 KiB budget, and KILL QUERY during the end of the
//! load (it stops within a second and leaves the table empty).
mod common;
use common::{check_ok, q, rows, status, wait_state, with_files, write_file, TestDb};
use sql::Session;
use std::time::{Duration, Instant};

fn setup(name: &str) -> (TestDb, testkit::TempDir, Session) {
    with_files(TestDb::open(name), name)
}

/// This session's (rows, streamed, read back) bulk counters.
fn counts(s: &mut Session) -> (u64, u64, u64) {
    (
        status(s, "Strata_bulk_load_rows"),
        status(s, "Strata_bulk_load_streamed"),
        status(s, "Strata_bulk_load_read_back"),
    )
}

/// Runs `load` through the bulk path (an empty table, autocommit) and through
/// the row path (autocommit off) into copies of table `t` made by `create`
/// (`{t}` in it); both answers (Ok: the rows; Err: the error) and what the
/// bulk load's counters moved by.
fn both_paths(
    s: &mut Session,
    create: &str,
    load: &str,
    select: &str,
) -> (
    Result<Vec<String>, (u16, String)>,
    Result<Vec<String>, (u16, String)>,
    (u64, u64, u64),
) {
    let mut out = Vec::new();
    let mut moved = (0, 0, 0);
    for (t, bulk) in [("t_bulk_path", true), ("t_row_path", false)] {
        q(s, &create.replace("{t}", t));
        if !bulk {
            q(s, "SET autocommit = 0");
        }
        let before = counts(s);
        let mut c = sql::result::Collect::default();
        let r = s.query(&load.replace("{t}", t), &mut c);
        if !bulk {
            q(s, "COMMIT");
            q(s, "SET autocommit = 1");
        }
        let after = counts(s);
        if bulk {
            moved = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
        } else {
            assert_eq!(before, after, "the row path loaded through table files");
        }
        out.push(match r {
            Ok(_) => {
                check_ok(s, t);
                Ok(rows(s, &select.replace("{t}", t)))
            }
            Err(e) => Err((e.code, e.msg.replace(t, "{t}"))),
        });
        q(s, &format!("DROP TABLE {t}"));
    }
    let row = out.pop().expect("row path");
    let bulk = out.pop().expect("bulk path");
    (bulk, row, moved)
}

/// Keys 1, 2, 3, 2, 0: written as they come until the repeated 2, then the
/// three rows so far are read back into the sort; IGNORE keeps the first 2,
/// REPLACE the last, as the row path does, and the index agrees.
#[test]
fn a_repeated_key_after_ordered_lines_reads_them_back() {
    let (_db, dir, mut s) = setup("bulk-paths-12320");
    let f = write_file(&dir, "k.txt", b"1\ta\n2\tb\n3\tc\n2\td\n0\te\n");
    let create = "CREATE TABLE {t} (id INT PRIMARY KEY, v VARCHAR(10), KEY kv (v))";
    let select = "SELECT id, v FROM {t} FORCE INDEX (kv) WHERE v > '' ORDER BY id";
    for (how, want) in [
        ("IGNORE", ["0|e", "1|a", "2|b", "3|c"]),
        ("REPLACE", ["0|e", "1|a", "2|d", "3|c"]),
    ] {
        let load = format!("LOAD DATA INFILE '{f}' {how} INTO TABLE {{t}}");
        let (bulk, row, moved) = both_paths(&mut s, create, &load, select);
        assert_eq!(bulk, Ok(want.map(String::from).to_vec()), "{how}");
        assert_eq!(bulk, row, "{how}: bulk and row paths differ");
        assert_eq!(moved, (4, 0, 3), "{how}: (rows, streamed, read back)");
    }
    // Without IGNORE/REPLACE: 1062 on both paths, nothing loaded.
    let load = format!("LOAD DATA INFILE '{f}' INTO TABLE {{t}}");
    let (bulk, row, moved) = both_paths(&mut s, create, &load, select);
    assert_eq!(bulk.as_ref().map_err(|e| e.0), Err(1062));
    assert_eq!(bulk, row);
    assert_eq!(moved, (0, 0, 0));
}

/// A file in descending key order into a reverse (`rev:`) family is in the
/// family's order: written as it comes, never sorted; the same file into a
/// forward family is sorted (its second key is out of order).
#[test]
fn descending_input_streams_into_a_reverse_family() {
    let (_db, dir, mut s) = setup("bulk-paths-rev");
    let body: String = (0..2000).rev().map(|i| format!("{i}\tv{i}\n")).collect();
    let f = write_file(&dir, "desc.txt", body.as_bytes());
    let want: Vec<String> = (0..2000).map(|i| format!("{i}|v{i}")).collect();
    for (cf, moved) in [(" COMMENT 'rev:cf_r'", (2000, 2000, 0)), ("", (2000, 0, 1))] {
        let create = format!(
            "CREATE TABLE {{t}} (id INT, v VARCHAR(10), PRIMARY KEY (id){cf}, KEY kv (v){cf})"
        );
        let load = format!("LOAD DATA INFILE '{f}' INTO TABLE {{t}}");
        let (bulk, row, got) =
            both_paths(&mut s, &create, &load, "SELECT id, v FROM {t} ORDER BY id");
        assert_eq!(bulk.as_ref(), Ok(&want), "{cf}");
        assert_eq!(bulk, row, "{cf}");
        assert_eq!(got, moved, "{cf}: (rows, streamed, read back)");
    }
}

/// 'a', 'B', 'A' under utf8mb4_general_ci: 'A' repeats 'a'. IGNORE keeps
/// 'a', REPLACE 'A' (the last spelling), the plain statement is 1062 naming
/// the repeated value, on the bulk path as on the row path.
#[test]
fn collation_duplicates_agree_with_the_row_path() {
    let (_db, dir, mut s) = setup("bulk-paths-coll");
    let f = write_file(&dir, "c.txt", b"a\t1\nB\t2\nA\t3\n");
    for key in [
        "PRIMARY KEY (c)",
        "id INT AUTO_INCREMENT PRIMARY KEY, UNIQUE KEY uc (c)",
    ] {
        let create = format!(
            "CREATE TABLE {{t}} (c VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL, n INT, {key})"
        );
        let cols = if key.starts_with("id") { " (c, n)" } else { "" };
        for how in ["IGNORE", "REPLACE", ""] {
            let load = format!("LOAD DATA INFILE '{f}' {how} INTO TABLE {{t}}{cols}");
            let (bulk, row, moved) =
                both_paths(&mut s, &create, &load, "SELECT c, n FROM {t} ORDER BY c");
            assert_eq!(bulk, row, "{key} {how}: bulk and row paths differ");
            match (how, key.starts_with("id")) {
                ("IGNORE", false) => assert_eq!(bulk, Ok(vec!["a|1".into(), "B|2".into()])),
                ("REPLACE", false) => assert_eq!(bulk, Ok(vec!["A|3".into(), "B|2".into()])),
                ("", _) => assert_eq!(bulk.as_ref().map_err(|e| e.0), Err(1062), "{key}"),
                _ => {}
            }
            // REPLACE/IGNORE with a UNIQUE secondary index go row by row.
            let bulk_path = how.is_empty() || !key.starts_with("id");
            if bulk_path && bulk.is_ok() {
                assert_eq!(moved.0, 2, "{key} {how}: not the bulk path");
            }
        }
    }
}

/// A UNIQUE secondary index takes any number of NULLs; a repeated value
/// fails the load with 1062 (nothing loaded) also when the two lines are far
/// apart in a sort spilled with a 64 KiB budget, in a forward and a reverse
/// family, as the row path does.
#[test]
fn unique_secondary_nulls_and_repeats_across_spilled_runs() {
    let (_db, dir, mut s) = setup("bulk-paths-unique");
    q(&mut s, "SET strata_merge_buf_size = 65536");
    let n: u64 = 20_000;
    let mut nulls = String::new();
    let mut dup = String::new();
    for i in 0..n {
        // Every third u NULL; the others distinct.
        let u = if i % 3 == 0 {
            "\\N".to_string()
        } else {
            (i * 7).to_string()
        };
        nulls.push_str(&format!("{i}\t{u}\n"));
        // The value of line 1 again on the last line.
        let u = if i == n - 1 { 7 } else { i * 7 };
        dup.push_str(&format!("{i}\t{u}\n"));
    }
    let (fnull, fdup) = (
        write_file(&dir, "nulls.txt", nulls.as_bytes()),
        write_file(&dir, "dup.txt", dup.as_bytes()),
    );
    // Ascending lines: written as they come into a forward family; into a
    // reverse one the second line is out of order (the first is read back).
    for (cf, order) in [("", (n, 0)), (" COMMENT 'rev:cf_u'", (0, 1))] {
        let create = format!(
            "CREATE TABLE {{t}} (id INT, u INT, PRIMARY KEY (id){cf}, UNIQUE KEY uu (u){cf})"
        );
        let select = "SELECT COUNT(*), COUNT(u), SUM(u IS NULL) FROM {t} FORCE INDEX (uu) WHERE u IS NULL OR u >= 0";
        let load = format!("LOAD DATA INFILE '{fnull}' INTO TABLE {{t}}");
        let (bulk, row, moved) = both_paths(&mut s, &create, &load, select);
        assert_eq!(
            bulk,
            Ok(vec![format!("{n}|{}|{}", n - n.div_ceil(3), n.div_ceil(3))]),
            "{cf}"
        );
        assert_eq!(bulk, row, "{cf}");
        assert_eq!(moved, (n, order.0, order.1), "{cf}");
        let load = format!("LOAD DATA INFILE '{fdup}' INTO TABLE {{t}}");
        let (bulk, row, moved) = both_paths(&mut s, &create, &load, select);
        let e = bulk.as_ref().expect_err("a repeated unique value");
        assert_eq!(e.0, 1062, "{cf}: {e:?}");
        assert!(e.1.contains("'7'") && e.1.contains("uu"), "{cf}: {}", e.1);
        assert_eq!(bulk, row, "{cf}");
        assert_eq!(moved, (0, 0, 0), "{cf}");
    }
}

/// Shuffled lines with a 64 KiB budget: every sort of the load (primary key,
/// two secondary indexes) spills well over `FAN_IN` runs, merged in tiers;
/// the rows and both indexes are exact.
#[test]
fn many_spilled_runs_with_a_64k_budget() {
    let seed = testkit::seed("many_spilled_runs_with_a_64k_budget");
    let mut rng = testkit::Rng::new(seed);
    let (_db, dir, mut s) = setup("bulk-paths-runs");
    q(&mut s, "SET strata_merge_buf_size = 65536");
    let n = 60_000u64;
    let mut ids: Vec<u64> = (0..n).collect();
    for i in (1..ids.len()).rev() {
        ids.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let body: String = ids
        .iter()
        .map(|i| format!("{i}\t{}\tname-{:08}\n", i % 101, n - i))
        .collect();
    let f = write_file(&dir, "runs.txt", body.as_bytes());
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k), UNIQUE KEY uc (c))",
    );
    let before = counts(&mut s);
    q(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE t"));
    let after = counts(&mut s);
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (n, 0),
        "SEED={seed}: sorted through the bulk path"
    );
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*), SUM(id), MIN(id), MAX(id) FROM t"),
        [format!("{n}|{}|0|{}", n * (n - 1) / 2, n - 1)],
        "SEED={seed}"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*), SUM(id) FROM t FORCE INDEX (kk) WHERE k = 7"
        ),
        [format!(
            "{}|{}",
            (0..n).filter(|i| i % 101 == 7).count(),
            (0..n).filter(|i| i % 101 == 7).sum::<u64>()
        )],
        "SEED={seed}"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t FORCE INDEX (uc) WHERE c = 'name-00000001'"
        ),
        [format!("{}", n - 1)],
        "SEED={seed}"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (uc) WHERE c >= 'name'"
        ),
        [format!("{n}")],
        "SEED={seed}"
    );
    check_ok(&mut s, "t");
}

/// KILL QUERY while the load sorts and writes its files at the end ("End bulk
/// insert"): the statement stops within a second with 1317, the table stays
/// empty (nothing ingested, no entries left), and a second load goes through
/// the bulk path again.
#[test]
fn kill_query_stops_the_end_of_a_bulk_load_within_a_second() {
    let seed = testkit::seed("kill_query_stops_the_end_of_a_bulk_load_within_a_second");
    let mut rng = testkit::Rng::new(seed);
    let (db, dir, mut s) = setup("bulk-paths-kill");
    q(&mut s, "SET strata_merge_buf_size = 65536");
    let n = 250_000u64;
    let body: String = (0..n)
        .map(|_| {
            let i = rng.below(1 << 40);
            format!("{i}\t{}\t{}\t{}\n", i % 1000, i % 77, i ^ 0x5555)
        })
        .collect();
    let f = write_file(&dir, "kill.txt", body.as_bytes());
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, a INT, b INT, c BIGINT, KEY ka (a), KEY kb (b), KEY kc (c))",
    );
    let inst = db.inst.clone();
    let killer = std::thread::spawn(move || {
        let mut k = Session::new(inst, 2, "root", Some("d".into()));
        wait_state(&mut k, 1, "End bulk insert");
        q(&mut k, "KILL QUERY 1");
        Instant::now()
    });
    let mut c = sql::result::Collect::default();
    let r = s.query(
        &format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE t"),
        &mut c,
    );
    let stopped = Instant::now();
    let killed = killer.join().expect("killer");
    assert_eq!(r.map(|_| ()).map_err(|e| e.code), Err(1317), "SEED={seed}");
    let late = stopped.saturating_duration_since(killed);
    assert!(
        late < Duration::from_secs(1),
        "SEED={seed}: stopped {late:?} after KILL"
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    check_ok(&mut s, "t");
    // Nothing was left under the table's ids: the bulk path again.
    let before = counts(&mut s);
    q(&mut s, "SET strata_merge_buf_size = DEFAULT");
    q(
        &mut s,
        &format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE t"),
    );
    assert!(
        counts(&mut s).0 > before.0,
        "SEED={seed}: not the bulk path"
    );
    check_ok(&mut s, "t");
}

/// Review of the bulk fixes (s31, MED): the load's budget goes to the sorts
/// that hold entries, not evenly to the primary key's and each index's: the
/// secondary sorts share all of it while the keys come in order (the
/// primary key is not sorted then), and the primary key's sort has all of
/// it once a key comes out of order (the secondary entries are dropped).
#[test]
fn the_bulk_budget_goes_to_the_sorts_in_use() {
    use sql::bulk::BulkLoad;
    use sql::Value;
    let (db, _dir, mut s) = setup("bulk-paths-budget");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, KEY ka (a), KEY kb (b))",
    );
    let t = db.inst.catalog.state().table("d", "t").cloned().unwrap();
    let eng = db.inst.txdb.db();
    let budget = 4 << 20;
    let row = |i: i64| [Value::Int(i), Value::Int(i % 7), Value::Int(-i)];
    for ordered in [true, false] {
        let mut bl = BulkLoad::new(eng, t.clone(), ordered, budget).unwrap();
        assert_eq!(bl.sort_budgets(), [budget / 2, budget / 2], "{ordered}");
        if ordered {
            continue;
        }
        for i in [1, 2, 3] {
            bl.add(&row(i)).unwrap();
        }
        assert_eq!(bl.sort_budgets(), [budget / 2, budget / 2]);
        bl.add(&row(0)).unwrap();
        assert_eq!(bl.sort_budgets(), [budget]);
    }
}

/// Issue 12 leftovers: a TTL table without a TTL column loads through the
/// bulk path (it went row by row): each row's time is when it was loaded,
/// in its primary key entry and its secondary entries alike, so reads hide
/// the rows of an old load through either, and compaction removes them.
/// Both ways: keys in order (written as they come) and not (sorted).
#[test]
fn a_ttl_table_loads_in_bulk_with_its_row_times() {
    let (_db, dir, mut s) = setup("bulk-paths-ttl");
    let n = 3000u64;
    let line = |i: u64| format!("{i}\t{}\tname-{i}\n", i % 13);
    let up: String = (0..n).map(line).collect();
    let down: String = (0..n).rev().map(line).collect();
    let up = write_file(&dir, "up.txt", up.as_bytes());
    let down = write_file(&dir, "down.txt", down.as_bytes());
    let sevens = (0..n).filter(|i| i % 13 == 7).count();
    for (t, f) in [("t1", &up), ("t2", &down), ("old1", &up), ("old2", &down)] {
        q(
            &mut s,
            &format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k), \
                 UNIQUE KEY uc (c)) COMMENT='ttl_duration=100;'"
            ),
        );
        let old = t.starts_with("old");
        if old {
            q(&mut s, "SET GLOBAL strata_debug_ttl_rec_ts = -300");
        }
        let before = counts(&mut s);
        q(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE {t}"));
        let after = counts(&mut s);
        q(&mut s, "SET GLOBAL strata_debug_ttl_rec_ts = 0");
        assert_eq!(after.0 - before.0, n, "{t}: through the bulk path");
        let live = if old { 0 } else { n };
        assert_eq!(
            rows(&mut s, &format!("SELECT COUNT(*) FROM {t}")),
            [live.to_string()],
            "{t}"
        );
        // Covering index reads: the secondary entries' own times.
        assert_eq!(
            rows(
                &mut s,
                &format!("SELECT COUNT(k) FROM {t} FORCE INDEX (kk) WHERE k = 7")
            ),
            [(if old { 0 } else { sevens }).to_string()],
            "{t}"
        );
        assert_eq!(
            rows(
                &mut s,
                &format!("SELECT COUNT(c) FROM {t} FORCE INDEX (uc) WHERE c >= 'name'")
            ),
            [live.to_string()],
            "{t}"
        );
        check_ok(&mut s, t);
        if old {
            // Compaction removes them all; the table then loads again.
            q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
            assert_eq!(
                rows(&mut s, &format!("SELECT COUNT(*) FROM {t}")),
                [n.to_string()],
                "{t}"
            );
            q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
            q(&mut s, &format!("OPTIMIZE TABLE {t}"));
            q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
            assert_eq!(
                rows(&mut s, &format!("SELECT COUNT(*) FROM {t}")),
                ["0"],
                "{t}"
            );
            q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
        }
    }
}
