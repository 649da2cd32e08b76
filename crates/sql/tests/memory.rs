//! One client cannot make the server hold unbounded memory (issue 14 item 7): prepared
//! statements are counted (max_prepared_stmt_count) and freed with their session;
//! string functions stop at max_allowed_packet (NULL, warning 1301); a transaction's
//! size is limited (rocksdb_max_row_locks, rocksdb_write_batch_max_bytes, error 1206)
//! unless it commits in the middle; INSERT ... SELECT, UPDATE and DELETE spool their
//! rows to disk past tmp_table_size instead of holding them all.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::Session;
use std::sync::atomic::Ordering;

mod common;
use common::TestDb;

fn open(name: &str) -> TestDb {
    TestDb::open(name)
}

fn q(s: &mut Session, sql: &str) -> Vec<Vec<sql::Value>> {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn cell(s: &mut Session, sql: &str) -> String {
    let rows = q(s, sql);
    String::from_utf8_lossy(&rows[0][0].text()).into_owned()
}

fn err(s: &mut Session, sql: &str) -> u16 {
    let mut c = Collect::default();
    match s.query(sql, &mut c) {
        Ok(_) => panic!("accepted: {sql}"),
        Err(e) => e.code,
    }
}

fn warnings(s: &mut Session) -> Vec<String> {
    q(s, "SHOW WARNINGS")
        .iter()
        .map(|r| String::from_utf8_lossy(&r[1].text()).into_owned())
        .collect()
}

fn setup(name: &str, rows: usize) -> (TestDb, Session) {
    let inst = open(name);
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, pad VARCHAR(200), KEY k_k (k))",
    );
    let vals: Vec<String> = (1..=rows)
        .map(|i| format!("({i}, {}, REPEAT('p', 150))", i % 7))
        .collect();
    for chunk in vals.chunks(500) {
        q(&mut s, &format!("INSERT INTO t VALUES {}", chunk.join(",")));
    }
    (inst, s)
}

#[test]
fn prepared_statements_are_counted_and_freed_with_their_session() {
    let (inst, mut s) = setup("mem-prepared", 1);
    q(&mut s, "SET GLOBAL max_prepared_stmt_count = 5");
    let mut a = inst.session(2, "root", Some("d".into()));
    let ids: Vec<u32> = (0..5)
        .map(|i| a.prepare(&format!("SELECT {i} FROM t")).unwrap().0)
        .collect();
    assert_eq!(a.prepare("SELECT 9").unwrap_err().code, 1461);
    let mut b = inst.session(3, "root", Some("d".into()));
    assert_eq!(b.prepare("SELECT 9").unwrap_err().code, 1461);
    a.close_prepared(ids[0]);
    b.prepare("SELECT 9").unwrap();
    assert_eq!(a.prepare("SELECT 10").unwrap_err().code, 1461);
    drop(a);
    for i in 0..4 {
        b.prepare(&format!("SELECT {i} + 100")).unwrap();
    }
    assert_eq!(inst.prepared.load(Ordering::Relaxed), 5);
    drop(b);
    assert_eq!(inst.prepared.load(Ordering::Relaxed), 0);
}

#[test]
fn string_functions_stop_at_max_allowed_packet() {
    let (_i, mut s) = setup("mem-strings", 1);
    q(&mut s, "SET max_allowed_packet = 1048576");
    assert_eq!(
        cell(&mut s, "SELECT LENGTH(REPEAT('x', 1000000))"),
        "1000000"
    );
    assert_eq!(cell(&mut s, "SELECT REPEAT('x', 2000000) IS NULL"), "1");
    assert_eq!(warnings(&mut s), vec!["1301"]);
    assert_eq!(
        cell(
            &mut s,
            "SELECT CONCAT(REPEAT('x', 600000), REPEAT('y', 600000)) IS NULL"
        ),
        "1"
    );
    assert_eq!(warnings(&mut s), vec!["1301"]);
    assert_eq!(
        cell(
            &mut s,
            "SELECT REPLACE(REPEAT('ab', 400000), 'a', 'xyz') IS NULL"
        ),
        "1"
    );
    assert_eq!(
        cell(
            &mut s,
            "SELECT CONCAT_WS(',', REPEAT('x', 700000), REPEAT('y', 700000)) IS NULL"
        ),
        "1"
    );
}

#[test]
fn transaction_size_is_limited_unless_it_commits_in_the_middle() {
    let (_i, mut s) = setup("mem-txn", 300);
    q(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, k INT, pad VARCHAR(200), KEY k_k (k))",
    );
    q(&mut s, "SET rocksdb_max_row_locks = 100");
    assert_eq!(err(&mut s, "INSERT INTO u SELECT * FROM t"), 1206);
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "0");
    assert_eq!(err(&mut s, "UPDATE t SET k = k + 1"), 1206);
    assert_eq!(err(&mut s, "DELETE FROM t"), 1206);
    assert_eq!(cell(&mut s, "SELECT SUM(k) FROM t"), "903");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM t"), "300");
    q(&mut s, "UPDATE t SET k = k + 1 WHERE id <= 50");
    q(&mut s, "SET rocksdb_max_row_locks = DEFAULT");
    q(&mut s, "SET rocksdb_write_batch_max_bytes = 20000");
    assert_eq!(err(&mut s, "INSERT INTO u SELECT * FROM t"), 1206);
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "0");
    q(&mut s, "SET rocksdb_write_batch_max_bytes = 0");
    q(&mut s, "SET strata_max_txn_memory = 50000");
    assert_eq!(err(&mut s, "INSERT INTO u SELECT * FROM t"), 1206);
    assert_eq!(err(&mut s, "UPDATE t SET k = k + 1"), 1206);
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "0");
    q(&mut s, "SET strata_max_txn_memory = DEFAULT");

    // Commit in the middle: an autocommit statement commits every bulk_load_size rows,
    // so the lock limit is never reached.
    q(&mut s, "SET rocksdb_max_row_locks = 100");
    q(
        &mut s,
        "SET rocksdb_commit_in_the_middle = ON, rocksdb_bulk_load_size = 40",
    );
    q(&mut s, "INSERT INTO u SELECT * FROM t");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "300");
    q(&mut s, "UPDATE u SET k = 0");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u WHERE k = 0"), "300");
    // Inside BEGIN it does not apply: the transaction stays whole, and too big.
    q(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "UPDATE u SET k = 1"), 1206);
    q(&mut s, "ROLLBACK");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u WHERE k = 1"), "0");
    q(&mut s, "DELETE FROM u");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "0");
}

#[test]
fn big_dml_spools_its_rows_to_disk() {
    let (_i, mut s) = setup("mem-spool", 3000);
    q(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, k INT, pad VARCHAR(200), KEY k_k (k))",
    );
    // 3,000 rows of ~170 bytes are well past a 64 KiB budget.
    q(&mut s, "SET tmp_table_size = 65536");
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    q(&mut s, "INSERT INTO u SELECT * FROM t");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "3000");
    assert_eq!(
        cell(
            &mut s,
            "SELECT COUNT(*) FROM u, t WHERE u.id = t.id AND u.pad = t.pad AND u.k = t.k"
        ),
        "3000"
    );
    q(&mut s, "UPDATE u SET k = k + 10, pad = CONCAT(pad, 'x')");
    assert_eq!(cell(&mut s, "SELECT MIN(k) FROM u"), "10");
    assert_eq!(
        cell(&mut s, "SELECT COUNT(*) FROM u WHERE pad LIKE '%px'"),
        "3000"
    );
    // An index update that moves rows forward does not meet them again.
    q(
        &mut s,
        "UPDATE u FORCE INDEX (k_k) SET k = k + 100 WHERE k >= 10",
    );
    assert_eq!(cell(&mut s, "SELECT MIN(k) FROM u"), "110");
    // ORDER BY ... LIMIT keeps only the rows it changes.
    q(&mut s, "UPDATE u SET k = -1 ORDER BY id DESC LIMIT 3");
    assert_eq!(
        q(&mut s, "SELECT id FROM u WHERE k = -1 ORDER BY id")
            .iter()
            .map(|r| String::from_utf8_lossy(&r[0].text()).into_owned())
            .collect::<Vec<_>>(),
        vec!["2998", "2999", "3000"]
    );
    q(&mut s, "DELETE FROM u WHERE id > 100");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM u"), "100");
    assert!(sql::sort::MERGE_PASSES.load(Ordering::Relaxed) >= before + 3);
}

#[test]
fn group_by_and_distinct_spill_and_agree_with_memory() {
    let (_i, mut s) = setup("mem-groups", 4000);
    let queries = [
        "SELECT id % 1500 AS g, COUNT(*), SUM(k), MIN(pad), GROUP_CONCAT(id ORDER BY id SEPARATOR '/') FROM t GROUP BY g ORDER BY g",
        "SELECT k, COUNT(DISTINCT id % 100) FROM t GROUP BY k ORDER BY k",
        "SELECT DISTINCT id % 1700, k FROM t ORDER BY 1, 2",
        "SELECT DISTINCT CONCAT(id % 2100, pad) FROM t ORDER BY 1 LIMIT 5 OFFSET 7",
        "SELECT id % 1500 AS g, COUNT(*) AS n FROM t GROUP BY g HAVING n > 2 ORDER BY g DESC LIMIT 10",
        "SELECT COUNT(*) FROM t WHERE id < 0",
    ];
    let mut in_memory = Vec::new();
    for sql in queries {
        in_memory.push(q(&mut s, sql));
    }
    // The same queries with a 64 KiB budget: groups and DISTINCT rows spill to disk.
    q(&mut s, "SET tmp_table_size = 65536");
    let before = sql::sort::MERGE_PASSES.load(Ordering::Relaxed);
    for (sql, want) in queries.iter().zip(&in_memory) {
        let got = q(&mut s, sql);
        assert_eq!(got.len(), want.len(), "{sql}");
        assert!(got == *want, "{sql}: results differ after spilling");
    }
    assert!(sql::sort::MERGE_PASSES.load(Ordering::Relaxed) >= before + 3);
    // Without ORDER BY the groups are the same set.
    let mut a = q(&mut s, "SELECT id % 1500, COUNT(*) FROM t GROUP BY 1");
    q(&mut s, "SET tmp_table_size = DEFAULT");
    let mut b = q(&mut s, "SELECT id % 1500, COUNT(*) FROM t GROUP BY 1");
    let key = |r: &Vec<sql::Value>| r[0].to_i128();
    a.sort_by_key(key);
    b.sort_by_key(key);
    assert!(a == b);
    assert_eq!(a.len(), 1500);
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM t WHERE id < 0"), "0");
}
