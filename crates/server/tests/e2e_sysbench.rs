//! sysbench `oltp_read_write` against the real server: prepare (2 tables x
//! 1000 rows), run 5 s at 4 threads, check the tables, cleanup; once with
//! prepared statements (`--db-ps-mode=auto`) and once with text queries
//! (`--db-ps-mode=disable`). Only deadlocks (1213) and lock wait timeouts
//! (1205) may be ignored; any other error makes sysbench print FATAL and
//! exit non-zero, which fails the test.
//!
//! sysbench must be on PATH (`apt-get install -y sysbench`); without it the
//! test fails, unless STRATA_SKIP_SYSBENCH=1.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q, q_i64, Server};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sysbench_available() -> bool {
    match Command::new("sysbench").arg("--version").output() {
        Ok(o) => o.status.success(),
        Err(_) => false,
    }
}

/// Runs sysbench with a deadline; returns (success, combined output).
fn sysbench(srv: &Server, args: &[&str]) -> (bool, String) {
    sysbench_workload(srv, "oltp_read_write", 2, 1000, args)
}

/// Runs one sysbench workload with a deadline.
fn sysbench_workload(
    srv: &Server,
    workload: &str,
    tables: u32,
    size: u32,
    args: &[&str],
) -> (bool, String) {
    let mut cmd = Command::new("sysbench");
    cmd.arg(workload)
        .arg("--db-driver=mysql")
        .arg("--mysql-host=127.0.0.1")
        .arg(format!("--mysql-port={}", srv.port))
        .arg("--mysql-user=root")
        .arg("--mysql-password=")
        .arg("--mysql-db=sbtest")
        .arg(format!("--tables={tables}"))
        .arg(format!("--table-size={size}"))
        .arg("--mysql-ignore-errors=1213,1205")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn sysbench");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = format!("{}{}", t_out.join().unwrap(), t_err.join().unwrap());
    match status {
        Some(st) => (st.success(), text),
        None => (false, format!("{text}\n(sysbench killed after 180 s)")),
    }
}

/// The first number after `label` on a line of sysbench's report.
fn stat(out: &str, label: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

fn check_ok(what: &str, ok: bool, out: &str, srv: &Server) {
    let fatal: Vec<&str> = out.lines().filter(|l| l.contains("FATAL")).collect();
    assert!(
        ok && fatal.is_empty(),
        "sysbench {what} failed (exit ok = {ok}); FATAL lines: {fatal:?}\n--- sysbench output ---\n{out}\n{}",
        srv.log_tail(30)
    );
}

fn run_mode(srv: &Server, mode: &str) {
    let mut c = srv.conn();
    exec(&mut c, "DROP DATABASE IF EXISTS sbtest");
    exec(&mut c, "CREATE DATABASE sbtest");
    let (ok, out) = sysbench(srv, &["prepare"]);
    check_ok(&format!("prepare ({mode})"), ok, &out, srv);
    exec(&mut c, "USE sbtest");
    assert_eq!(q(&mut c, "SHOW TABLES"), vec!["sbtest1", "sbtest2"]);
    for t in ["sbtest1", "sbtest2"] {
        assert_eq!(q_i64(&mut c, &format!("SELECT COUNT(*) FROM {t}")), 1000);
    }

    let ps = format!("--db-ps-mode={mode}");
    let (ok, out) = sysbench(
        srv,
        &["--threads=4", "--time=5", "--report-interval=0", &ps, "run"],
    );
    check_ok(&format!("run ({mode})"), ok, &out, srv);
    let txns = stat(&out, "transactions:").unwrap_or(0);
    let reads = stat(&out, "read:").unwrap_or(0);
    let writes = stat(&out, "write:").unwrap_or(0);
    let ignored = stat(&out, "ignored errors:");
    eprintln!("sysbench {mode}: {txns} transactions, {reads} reads, {writes} writes, {ignored:?} ignored errors (1213/1205 retries)");
    assert!(
        txns > 0 && reads > 0 && writes > 0,
        "sysbench did no work:\n{out}"
    );
    assert!(
        ignored.is_some(),
        "no 'ignored errors' line in the report:\n{out}"
    );

    // Each transaction deletes and re-inserts one row: the counts stay, and
    // the tables and their indexes are consistent.
    for t in ["sbtest1", "sbtest2"] {
        assert_eq!(
            q_i64(&mut c, &format!("SELECT COUNT(*) FROM {t}")),
            1000,
            "{t} after run ({mode})"
        );
        assert_eq!(
            q(&mut c, &format!("CHECK TABLE {t}")),
            vec![format!("sbtest.{t}|check|status|OK")]
        );
        let ix = q_i64(&mut c, &format!("SELECT COUNT(*) FROM {t} WHERE k >= 0"));
        let scan = q_i64(
            &mut c,
            &format!("SELECT COUNT(*) FROM {t} WHERE k + 0 >= 0"),
        );
        assert_eq!(ix, scan, "{t}: index k vs full scan");
    }

    let (ok, out) = sysbench(srv, &["cleanup"]);
    check_ok(&format!("cleanup ({mode})"), ok, &out, srv);
    assert!(q(&mut c, "SHOW TABLES").is_empty());
}

#[test]
fn sysbench_oltp_read_write() {
    if !sysbench_available() {
        if std::env::var("STRATA_SKIP_SYSBENCH").as_deref() == Ok("1") {
            eprintln!("sysbench not found; skipped because STRATA_SKIP_SYSBENCH=1");
            return;
        }
        panic!(
            "sysbench is not on PATH: install it (apt-get install -y sysbench) \
             or set STRATA_SKIP_SYSBENCH=1 to skip this test"
        );
    }
    let srv = Server::start("sysbench");
    run_mode(&srv, "auto");
    run_mode(&srv, "disable");
}

/// Regression: oltp_write_only (UPDATE k, UPDATE c, DELETE + INSERT in one
/// transaction, on hot rows) with tiny memtables so flushes and
/// compactions run underneath. With SingleDelete for secondary entries
/// this left stale `k` index entries (CHECK TABLE: Corrupt).
#[test]
fn sysbench_write_only_with_flushes_keeps_indexes_consistent() {
    if !sysbench_available() {
        if std::env::var("STRATA_SKIP_SYSBENCH").as_deref() == Ok("1") {
            return;
        }
        panic!("sysbench is not on PATH (apt-get install -y sysbench, or STRATA_SKIP_SYSBENCH=1)");
    }
    let srv = Server::start_with("sysbench-wo", &["--write-buffer-size=256K"]);
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE sbtest");
    let (ok, out) = sysbench_workload(&srv, "oltp_write_only", 1, 3000, &["prepare"]);
    check_ok("prepare (write_only)", ok, &out, &srv);
    let (ok, out) = sysbench_workload(
        &srv,
        "oltp_write_only",
        1,
        3000,
        &["--threads=1", "--time=8", "--report-interval=0", "run"],
    );
    check_ok("run (write_only)", ok, &out, &srv);
    exec(&mut c, "USE sbtest");
    let flushes: i64 = q(&mut c, "SHOW STATUS LIKE 'Strata_flushes'")[0]
        .rsplit('|')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("Strata_flushes");
    eprintln!(
        "write_only: {:?} transactions, {flushes} flushes",
        stat(&out, "transactions:")
    );
    assert!(
        flushes > 0,
        "the run did not flush a memtable; the test needs flushes"
    );
    assert_eq!(
        q(&mut c, "CHECK TABLE sbtest1"),
        vec!["sbtest.sbtest1|check|status|OK".to_string()]
    );
    let ix = q_i64(&mut c, "SELECT COUNT(*) FROM sbtest1 WHERE k >= 0");
    let scan = q_i64(&mut c, "SELECT COUNT(*) FROM sbtest1 WHERE k + 0 >= 0");
    assert_eq!(ix, scan, "index k vs full scan");
}
