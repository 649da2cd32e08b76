//! KILL QUERY and max_statement_time reach the sorts of GROUP BY and window
//! functions that spill (tmp_table_size) while they merge their runs, as
//! ORDER BY's do: the killer waits until a merge has begun (`MERGE_PASSES`),
//! so the statement is past its scan, which polls them anyway. Alone in its
//! test binary: nothing else merges meanwhile.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

/// Rows in `t`: enough that merging them takes seconds in a debug build.
const ROWS: usize = 200_000;

fn q(s: &mut Session, sql: &str) -> Vec<String> {
    common::texts(common::q(s, sql))
}

/// Runs `sql` in session 1 while session 2 sends KILL QUERY 1 once a merge
/// has begun; the error and how long after the KILL it came.
fn killed(inst: &Arc<Instance>, s: &mut Session, sql: &str) -> (u16, Duration) {
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    let inst2 = inst.clone();
    let killer = std::thread::spawn(move || {
        let start = Instant::now();
        while sql::sort::MERGE_PASSES.load(Ordering::Relaxed) == before {
            assert!(start.elapsed() < Duration::from_secs(120), "no merge began");
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut k = inst2.session(2, "root", None);
        q(&mut k, "KILL QUERY 1");
        Instant::now()
    });
    let mut c = Collect::default();
    let r = s.query(sql, &mut c);
    let end = Instant::now();
    let at = killer.join().unwrap();
    let e = r.expect_err(sql);
    (e.code, end.saturating_duration_since(at))
}

#[test]
fn kill_and_max_statement_time_stop_spilled_group_by_and_window_sorts() {
    let dir = testkit::unique_temp_path("sql-sort-kill-agg");
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
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, c INT, p VARCHAR(20))",
    );
    for chunk in 0..ROWS / 5000 {
        let vals: Vec<String> = (0..5000)
            .map(|i| {
                let id = chunk * 5000 + i;
                format!("({id}, {}, 'p{}')", (id * 7919) % ROWS, id % 97)
            })
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    q(&mut s, "SET SESSION tmp_table_size = 65536");
    // Every group is new: past the budget they spill, and the HAVING keeps
    // none, so nothing but the groups' merge follows.
    let group_by = "SELECT c, COUNT(*) FROM t GROUP BY c HAVING COUNT(*) > 1";
    // One partition: the window's sort merges every row before the first
    // partition ends.
    let window = "SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER (ORDER BY c) AS r FROM t) x \
                  WHERE r < 0";
    let window_direct = "SELECT id, ROW_NUMBER() OVER (ORDER BY c DESC) FROM t LIMIT 1";
    for sql in [group_by, window, window_direct] {
        let (code, after) = killed(&inst, &mut s, sql);
        eprintln!("{sql}: 1317 {after:?} after the KILL");
        assert_eq!(code, 1317, "{sql}");
        assert!(
            after < Duration::from_secs(1),
            "{sql}: {after:?} after the KILL"
        );
        // The session goes on.
        assert_eq!(q(&mut s, "SELECT COUNT(*) FROM t"), [ROWS.to_string()]);
    }
    // max_statement_time (MariaDB's, 1969): the deadline passes while the
    // sort merges; the statement stops soon after it.
    for sql in [group_by, window_direct] {
        // Half of the faster of two whole runs: past the scan, inside the
        // merge.
        let took = (0..2)
            .map(|_| {
                let start = Instant::now();
                q(&mut s, sql);
                start.elapsed()
            })
            .min()
            .unwrap();
        let timeout = 0.05_f64.max(took.as_secs_f64() * 0.5);
        q(
            &mut s,
            &format!("SET SESSION max_statement_time = {timeout:.3}"),
        );
        let start = Instant::now();
        let mut c = Collect::default();
        let e = s.query(sql, &mut c).expect_err(sql);
        let took2 = start.elapsed();
        q(&mut s, "SET SESSION max_statement_time = 0");
        eprintln!("{sql}: {took2:?} with max_statement_time {timeout:.3} (whole run {took:?})");
        assert_eq!(e.code, 1969, "{sql}: {e:?}");
        assert!(
            took2.as_secs_f64() < timeout + 1.0,
            "{sql}: {took2:?} with max_statement_time {timeout:.3} (whole run {took:?})"
        );
    }
    drop(s);
    let _ = inst.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
