//! End-to-end SQL through a Session (no network): DDL, DML, queries,
//! transactions, errors.
use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session, Value};
use std::sync::Arc;

fn tmpdir(name: &str) -> std::path::PathBuf {
    testkit::unique_temp_path(&format!("sql-{name}"))
}

mod common;
use common::{err, q, texts};

fn open(name: &str) -> (Arc<Instance>, std::path::PathBuf) {
    let d = tmpdir(name);
    (
        Instance::open(&d, &InstanceOptions::default()).expect("open"),
        d,
    )
}

#[test]
fn sysbench_shapes() {
    let (inst, dir) = open("sb");
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE sbtest");
    q(&mut s, "USE sbtest");
    q(&mut s, "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = rocksdb */");
    let mut vals = Vec::new();
    for i in 1..=100 {
        vals.push(format!("({}, 'c{:03}', 'pad')", i % 10, i));
    }
    q(
        &mut s,
        &format!("INSERT INTO sbtest1(k, c, pad) VALUES {}", vals.join(",")),
    );
    q(&mut s, "CREATE INDEX k_1 ON sbtest1(k)");
    assert_eq!(
        texts(q(&mut s, "SELECT c FROM sbtest1 WHERE id=5")),
        vec!["c005"]
    );
    assert_eq!(
        texts(q(&mut s, "SELECT c FROM sbtest1 WHERE id BETWEEN 3 AND 5")),
        vec!["c003", "c004", "c005"]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 10"
        )),
        vec!["45"]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 3 ORDER BY c DESC"
        )),
        vec!["c003", "c002", "c001"]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT DISTINCT k FROM sbtest1 WHERE id BETWEEN 1 AND 20 ORDER BY k LIMIT 3"
        )),
        vec!["0", "1", "2"]
    );
    q(&mut s, "UPDATE sbtest1 SET k=k+1 WHERE id=5");
    assert_eq!(
        texts(q(&mut s, "SELECT k FROM sbtest1 WHERE id=5")),
        vec!["6"]
    );
    q(&mut s, "UPDATE sbtest1 SET c='new' WHERE id=6");
    q(&mut s, "DELETE FROM sbtest1 WHERE id=7");
    q(
        &mut s,
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (7, 3, 'again', 'p')",
    );
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (7, 3, 'again', 'p')"
        ),
        1062
    );
    let via_index = texts(q(
        &mut s,
        "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (3, 6) ORDER BY id",
    ));
    let via_scan = texts(q(
        &mut s,
        "SELECT id, k, c, pad FROM sbtest1 WHERE k + 0 IN (3, 6) ORDER BY id",
    ));
    assert_eq!(via_index.len(), 22);
    assert_eq!(via_index, via_scan);
    assert!(via_index.contains(&"7|3|again|p".to_string()));
    let n = texts(q(
        &mut s,
        "SELECT count(k) FROM sbtest1 WHERE k BETWEEN 1 AND 2 OR k BETWEEN 2 AND 3",
    ));
    let m = texts(q(
        &mut s,
        "SELECT count(*) FROM sbtest1 WHERE k >= 1 AND k <= 3",
    ));
    assert_eq!(n, m);
    // insert with id 0 gets the next auto-increment
    q(
        &mut s,
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 1, 'x', 'y')",
    );
    assert_eq!(texts(q(&mut s, "SELECT LAST_INSERT_ID()")), vec!["101"]);
    assert_eq!(
        texts(q(&mut s, "CHECK TABLE sbtest1"))[0],
        "sbtest.sbtest1|check|status|OK"
    );
    q(&mut s, "DROP TABLE IF EXISTS sbtest1");
    assert_eq!(err(&mut s, "SELECT * FROM sbtest1"), 1146);
    drop(s);
    drop(inst);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn transactions_and_restart() {
    let (inst, dir) = open("tx");
    let mut a = inst.session(1, "root", Some("test".into()));
    let mut b = inst.session(2, "root", Some("test".into()));
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), n BIGINT, d DECIMAL(10,2), ts DATETIME, KEY(n))");
    q(&mut a, "INSERT INTO t VALUES (1, 'a', 10, 1.50, '2024-01-02 03:04:05'), (2, NULL, 20, -2.25, NULL)");
    q(&mut a, "BEGIN");
    q(&mut a, "UPDATE t SET n = n + 1 WHERE id = 1");
    assert_eq!(texts(q(&mut b, "SELECT n FROM t WHERE id = 1")), vec!["10"]); // no dirty read
    q(&mut a, "ROLLBACK");
    assert_eq!(
        texts(q(&mut a, "SELECT n, d, ts FROM t WHERE id = 1")),
        vec!["10|1.50|2024-01-02 03:04:05"]
    );
    q(&mut b, "START TRANSACTION");
    assert_eq!(texts(q(&mut b, "SELECT count(*) FROM t")), vec!["2"]);
    q(&mut a, "INSERT INTO t VALUES (3, 'c', 30, 0, NOW())");
    assert_eq!(texts(q(&mut b, "SELECT count(*) FROM t")), vec!["2"]); // repeatable read
    q(&mut b, "COMMIT");
    assert_eq!(texts(q(&mut b, "SELECT count(*) FROM t")), vec!["3"]);
    assert_eq!(
        texts(q(&mut a, "SELECT v FROM t WHERE v IS NULL")),
        vec!["NULL"]
    );
    assert_eq!(
        texts(q(&mut a, "SELECT id FROM t WHERE n > 15 ORDER BY n DESC")),
        vec!["3", "2"]
    );
    q(
        &mut a,
        "INSERT INTO t VALUES (1, 'z', 0, 0, NULL) ON DUPLICATE KEY UPDATE n = n + VALUES(n) + 100",
    );
    assert_eq!(
        texts(q(&mut a, "SELECT n FROM t WHERE id = 1")),
        vec!["110"]
    );
    q(&mut a, "REPLACE INTO t VALUES (2, 'r', 5, 0, NULL)");
    assert_eq!(
        texts(q(&mut a, "SELECT v, n FROM t WHERE id = 2")),
        vec!["r|5"]
    );
    assert_eq!(texts(q(&mut a, "SELECT id FROM t WHERE n = 5")), vec!["2"]);
    drop(a);
    drop(b);
    drop(inst);
    let inst = Instance::open(&dir, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(3, "root", Some("test".into()));
    assert_eq!(
        texts(q(&mut s, "SELECT id, v FROM t ORDER BY id")),
        vec!["1|a", "2|r", "3|c"]
    );
    assert_eq!(
        texts(q(&mut s, "CHECK TABLE t"))[0],
        "test.t|check|status|OK"
    );
    drop(s);
    drop(inst);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn create_index_waits_for_open_writers() {
    let (inst, dir) = open("mdl");
    let mut a = inst.session(1, "root", Some("test".into()));
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, k INT)");
    q(&mut a, "INSERT INTO t VALUES (1, 10), (2, 20)");
    q(&mut a, "BEGIN");
    q(&mut a, "INSERT INTO t VALUES (3, 30)"); // planned without the new index
    let inst2 = inst.clone();
    let ddl = std::thread::spawn(move || {
        let mut b = inst2.session(2, "root", Some("test".into()));
        let start = std::time::Instant::now();
        q(&mut b, "CREATE INDEX k_1 ON t (k)");
        start.elapsed()
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    q(&mut a, "COMMIT");
    let waited = ddl.join().unwrap();
    assert!(
        waited >= std::time::Duration::from_millis(250),
        "CREATE INDEX did not wait: {waited:?}"
    );
    assert_eq!(texts(q(&mut a, "SELECT id FROM t WHERE k = 30")), vec!["3"]);
    assert_eq!(
        texts(q(&mut a, "CHECK TABLE t"))[0],
        "test.t|check|status|OK"
    );
    drop(a);
    drop(inst);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn joins() {
    let (inst, dir) = open("join");
    let mut s = inst.session(1, "root", Some("test".into()));
    q(
        &mut s,
        "CREATE TABLE w (w_id INT PRIMARY KEY, w_tax DECIMAL(4,2))",
    );
    q(&mut s, "CREATE TABLE c (c_w_id INT, c_id INT, c_last VARCHAR(10), PRIMARY KEY (c_w_id, c_id), KEY (c_last))");
    q(
        &mut s,
        "CREATE TABLE o (o_id INT PRIMARY KEY, o_c_id INT, amount INT, KEY (o_c_id))",
    );
    q(&mut s, "INSERT INTO w VALUES (1, 0.10), (2, 0.20)");
    q(
        &mut s,
        "INSERT INTO c VALUES (1, 1, 'smith'), (1, 2, 'jones'), (2, 1, 'brown')",
    );
    q(
        &mut s,
        "INSERT INTO o VALUES (10, 1, 5), (11, 1, 7), (12, 2, 1)",
    );
    // tpcc new_order shape: comma join with equality predicates
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT c_last, w_tax FROM c, w WHERE w_id = 1 AND c_w_id = w_id AND c_id = 2"
        )),
        vec!["jones|0.10"]
    );
    assert_eq!(
        texts(q(&mut s, "SELECT c.c_id, SUM(o.amount) FROM c JOIN o ON o.o_c_id = c.c_id WHERE c.c_w_id = 1 GROUP BY c.c_id ORDER BY c.c_id")),
        vec!["1|12", "2|1"]
    );
    assert_eq!(
        texts(q(&mut s, "SELECT w.w_id, c.c_id FROM w LEFT JOIN c ON c.c_w_id = w.w_id AND c.c_last = 'brown' ORDER BY w.w_id")),
        vec!["1|NULL", "2|1"]
    );
    assert_eq!(texts(q(&mut s, "SELECT COUNT(*) FROM w, c")), vec!["6"]);
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT o.* FROM o JOIN c ON c.c_id = o.o_c_id WHERE c.c_last = 'jones'"
        )),
        vec!["12|2|1"]
    );
    let mut c = Collect::default();
    assert_eq!(
        s.query(
            "SELECT c_id FROM c, o WHERE o_c_id = c_id AND c_id = 1 AND o_id = 10",
            &mut c
        )
        .map(|_| c.rows.len())
        .unwrap(),
        2
    );
    assert_eq!(err(&mut s, "SELECT x FROM w, c"), 1054);
    drop(s);
    drop(inst);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn prepared_statements_share_one_compiled_form_across_sessions() {
    let (inst, dir) = open("stmtcache");
    let mut a = inst.session(1, "root", None);
    q(&mut a, "CREATE DATABASE d");
    q(&mut a, "USE d");
    q(&mut a, "CREATE TABLE t(id INT PRIMARY KEY, v INT)");
    q(&mut a, "INSERT INTO t VALUES (1, 10), (2, 20)");
    let mut b = inst.session(2, "root", Some("d".into()));
    let before = inst.stmt_cache.len();
    let sel = "SELECT v FROM t WHERE id = ?";
    let (ia, na, _) = a.prepare(sel).unwrap();
    let (ib, nb, cols) = b.prepare(sel).unwrap();
    assert_eq!((na, nb, cols.len()), (1, 1, 1));
    assert_eq!(
        inst.stmt_cache.len(),
        before + 1,
        "both sessions share one entry"
    );
    let run = |s: &mut Session, id: u32, p: i64| {
        let mut c = Collect::default();
        s.execute_prepared(id, &[Value::Int(p)], &mut c).unwrap();
        texts(c.rows)
    };
    assert_eq!(run(&mut a, ia, 1), vec!["10"]);
    assert_eq!(run(&mut b, ib, 2), vec!["20"]);
    // DDL makes the shared plan stale: each session recompiles and sees
    // the new shape; the cached entry follows the catalog version.
    q(&mut a, "DROP TABLE t");
    q(&mut a, "CREATE TABLE t(id INT PRIMARY KEY, v VARCHAR(10))");
    q(&mut a, "INSERT INTO t VALUES (1, 'x')");
    assert_eq!(run(&mut b, ib, 1), vec!["x"]);
    assert_eq!(run(&mut a, ia, 1), vec!["x"]);
    // A different database is a different entry: same text, other table.
    q(&mut a, "CREATE DATABASE e");
    q(&mut a, "CREATE TABLE e.t(id INT PRIMARY KEY, v INT)");
    q(&mut a, "INSERT INTO e.t VALUES (1, 99)");
    q(&mut b, "USE e");
    assert_eq!(run(&mut b, ib, 1), vec!["99"]);
    assert_eq!(run(&mut a, ia, 1), vec!["x"]);
    drop((a, b, inst));
    let _ = std::fs::remove_dir_all(dir);
}
