//! Long and deep expressions never abort the process (issue 14 item 2): flat chains of
//! thousands of terms (`1+1+...`, `a=0 OR a=1 OR ...`, `x AND y AND ...`) give the right
//! answer, and expressions nested past the supported depth get a clean error. Statements
//! run on a thread with a server connection thread's stack.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session, Value};

fn run(s: &mut Session, sql: &str) -> Result<Vec<Vec<Value>>, u16> {
    let mut c = Collect::default();
    s.query(sql, &mut c).map(|_| c.rows).map_err(|e| e.code)
}

fn text(rows: &[Vec<Value>]) -> String {
    String::from_utf8_lossy(&rows[0][0].text()).into_owned()
}

fn check(s: &mut Session, n: usize) {
    let plus = vec!["1"; n].join("+");
    match run(s, &format!("SELECT {plus}")) {
        Ok(r) => assert_eq!(text(&r), n.to_string(), "{n} +"),
        Err(code) => {
            assert!(n > sql::depth::MAX_CHAIN, "{n} + refused");
            assert_eq!(code, 1436);
        }
    }
    let ors: Vec<String> = (0..n).map(|i| format!("a={i}")).collect();
    let r = run(
        s,
        &format!("SELECT COUNT(*) FROM t WHERE {}", ors.join(" OR ")),
    )
    .unwrap();
    assert_eq!(text(&r), 10.min(n).to_string(), "{n} OR");
    let ands = vec!["a >= 0"; n].join(" AND ");
    let r = run(s, &format!("SELECT COUNT(*) FROM t WHERE {ands}")).unwrap();
    assert_eq!(text(&r), "10", "{n} AND");
    let r = run(
        s,
        &format!("SELECT LENGTH(CONCAT({}))", vec!["'x'"; n].join(", ")),
    )
    .unwrap();
    assert_eq!(text(&r), n.to_string(), "{n} CONCAT args");
    let r = run(
        s,
        &format!(
            "SELECT 1 IN ({})",
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        ),
    )
    .unwrap();
    assert_eq!(text(&r), "1");
}

#[test]
fn long_flat_expressions_work_and_deep_ones_fail_cleanly() {
    on_session_thread("sql-deep", |s| {
        let s = &mut *s;
        let vals: Vec<String> = (0..10).map(|i| format!("({i})")).collect();
        run(s, &format!("INSERT INTO t VALUES {}", vals.join(","))).unwrap();
        for n in [10, 1000, sql::depth::MAX_CHAIN, 5000, 20_000] {
            check(s, n);
        }
        // Deep nesting: an error, never an abort; the session still works.
        for (open, close) in [
            ("(", ")"),
            ("-(", ")"),
            ("ABS(", ")"),
            ("NOT (", ")"),
            ("CASE WHEN 1 THEN ", " END"),
        ] {
            for n in [100, 10_000, 100_000] {
                let sql = format!("SELECT {}1{}", open.repeat(n), close.repeat(n));
                match run(s, &sql) {
                    Ok(r) => assert!(!r.is_empty()),
                    Err(code) => assert!([1064, 1436].contains(&code), "{open} x{n}: {code}"),
                }
            }
        }
    });
}

/// Views nesting subqueries inside views: planning depth counts across view
/// expansion, so a deep stack of them is a clean 1436, never a stack overflow.
#[test]
fn subqueries_nested_through_views_fail_cleanly() {
    on_session_thread("sql-deep-views", |s| {
        let s = &mut *s;
        run(s, "INSERT INTO t VALUES (1)").unwrap();
        // v{i}: 15 nested IN subqueries around v{i-1}; built from the top
        // down over base tables standing in for the views below.
        let body = |inner: &str| {
            let mut q = format!("SELECT a FROM {inner}");
            for _ in 0..15 {
                q = format!("SELECT a FROM t WHERE a IN ({q})");
            }
            q
        };
        let n = 60;
        for i in 0..n {
            run(s, &format!("CREATE TABLE v{i} (a INT)")).unwrap();
        }
        for i in (1..=n).rev() {
            if i < n {
                run(s, &format!("DROP TABLE v{i}")).unwrap();
            }
            let sql = format!("CREATE VIEW v{i} AS {}", body(&format!("v{}", i - 1)));
            run(s, &sql).unwrap();
        }
        run(s, "DROP TABLE v0").unwrap();
        run(s, "CREATE VIEW v0 AS SELECT a FROM t").unwrap();
        assert_eq!(text(&run(s, "SELECT COUNT(*) FROM v2").unwrap()), "1");
        for i in [20, n] {
            assert_eq!(run(s, &format!("SELECT * FROM v{i}")).unwrap_err(), 1436);
        }
    });
}

/// Runs `f` on a session in database `d` holding `t (a INT PRIMARY KEY)`, on a
/// thread with a server connection thread's stack; the session still works after.
fn on_session_thread(name: &'static str, f: impl FnOnce(&mut Session) + Send + 'static) {
    let h = std::thread::Builder::new()
        .stack_size(sql::SESSION_STACK_SIZE)
        .spawn(move || {
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
            for q in [
                "CREATE DATABASE d",
                "USE d",
                "CREATE TABLE t (a INT PRIMARY KEY)",
            ] {
                run(&mut s, q).unwrap();
            }
            f(&mut s);
            assert_eq!(text(&run(&mut s, "SELECT 2").unwrap()), "2");
            drop(s);
            let _ = inst.shutdown();
            let _ = std::fs::remove_dir_all(&dir);
        })
        .unwrap();
    h.join().unwrap();
}
