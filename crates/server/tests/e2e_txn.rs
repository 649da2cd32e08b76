//! Transactions seen from several client connections: isolation (dirty
//! reads, non-repeatable reads, phantoms per level), locking reads against
//! lost updates, lock wait timeouts, deadlock detection, rollback, and a
//! bank-transfer stress test whose total must never change.
#![allow(clippy::unwrap_used)]

mod common;

use common::{err_code, exec, q, q1, q_i64, try_exec, Rng, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LEVELS: [&str; 2] = ["READ COMMITTED", "REPEATABLE READ"];

fn setup(srv: &Server) -> Conn {
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, KEY kv (v))",
    );
    exec(&mut c, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    c
}

fn reader(srv: &Server, level: &str) -> Conn {
    let mut c = srv.conn_db("d");
    exec(
        &mut c,
        &format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"),
    );
    c
}

#[test]
fn no_dirty_reads() {
    let srv = Server::start("dirty");
    let mut w = setup(&srv);
    for level in LEVELS {
        let mut r = reader(&srv, level);
        exec(&mut w, "BEGIN");
        exec(&mut w, "UPDATE t SET v = 11 WHERE id = 1");
        exec(&mut w, "INSERT INTO t VALUES (4, 40)");
        exec(&mut w, "DELETE FROM t WHERE id = 3");
        // The writer sees its own changes.
        assert_eq!(
            q(&mut w, "SELECT id, v FROM t ORDER BY id"),
            vec!["1|11", "2|20", "4|40"]
        );
        // Autocommit reads and reads inside a transaction do not.
        for sql in [
            "SELECT id, v FROM t ORDER BY id",
            "SELECT id, v FROM t WHERE v >= 10 ORDER BY id",
        ] {
            assert_eq!(
                q(&mut r, sql),
                vec!["1|10", "2|20", "3|30"],
                "{level}: {sql}"
            );
        }
        exec(&mut r, "BEGIN");
        assert_eq!(q_i64(&mut r, "SELECT v FROM t WHERE id = 1"), 10, "{level}");
        assert_eq!(
            q_i64(&mut r, "SELECT COUNT(*) FROM t WHERE id = 4"),
            0,
            "{level}"
        );
        assert_eq!(q_i64(&mut r, "SELECT SUM(v) FROM t"), 60, "{level}");
        exec(&mut w, "ROLLBACK");
        assert_eq!(q_i64(&mut r, "SELECT SUM(v) FROM t"), 60, "{level}");
        exec(&mut r, "COMMIT");
        assert_eq!(
            q(&mut w, "SELECT id, v FROM t ORDER BY id"),
            vec!["1|10", "2|20", "3|30"]
        );
    }
}

#[test]
fn non_repeatable_read_only_in_read_committed() {
    let srv = Server::start("nonrepeat");
    let mut w = setup(&srv);
    for (level, second) in [("READ COMMITTED", 111), ("REPEATABLE READ", 10)] {
        exec(&mut w, "UPDATE t SET v = 10 WHERE id = 1");
        let mut r = reader(&srv, level);
        exec(&mut r, "BEGIN");
        assert_eq!(q_i64(&mut r, "SELECT v FROM t WHERE id = 1"), 10);
        exec(&mut w, "UPDATE t SET v = 111 WHERE id = 1");
        // Point read, index read and scan agree with the level.
        assert_eq!(
            q_i64(&mut r, "SELECT v FROM t WHERE id = 1"),
            second,
            "{level}"
        );
        assert_eq!(
            q_i64(&mut r, "SELECT COUNT(*) FROM t WHERE v = 111"),
            (second == 111) as i64,
            "{level}"
        );
        assert_eq!(
            q_i64(&mut r, "SELECT SUM(v) FROM t"),
            50 + second,
            "{level}"
        );
        exec(&mut r, "COMMIT");
        assert_eq!(
            q_i64(&mut r, "SELECT v FROM t WHERE id = 1"),
            111,
            "{level}"
        );
    }
}

#[test]
fn phantoms_per_isolation_level() {
    let srv = Server::start("phantom");
    let mut w = setup(&srv);
    let count = "SELECT COUNT(*) FROM t WHERE v BETWEEN 15 AND 100";
    for (i, level) in LEVELS.iter().enumerate() {
        let mut r = reader(&srv, level);
        exec(&mut r, "BEGIN");
        let before = q_i64(&mut r, count);
        let id = 100 + i as i64 * 10;
        exec(&mut w, &format!("INSERT INTO t VALUES ({id}, 50)"));
        exec(&mut w, &format!("INSERT INTO t VALUES ({}, 60)", id + 1));
        exec(&mut w, "DELETE FROM t WHERE id = 2");
        let after = q_i64(&mut r, count);
        let ids = q(
            &mut r,
            "SELECT id FROM t WHERE id >= 2 AND id < 1000 ORDER BY id",
        );
        if *level == "READ COMMITTED" {
            assert_eq!(
                after,
                before + 1,
                "{level}: new rows are visible, the deleted one gone"
            );
            assert!(
                ids.contains(&id.to_string()) && !ids.contains(&"2".to_string()),
                "{ids:?}"
            );
        } else {
            assert_eq!(
                after, before,
                "{level}: the consistent read does not change"
            );
            assert!(
                !ids.contains(&id.to_string()) && ids.contains(&"2".to_string()),
                "{ids:?}"
            );
        }
        exec(&mut r, "COMMIT");
        assert_eq!(q_i64(&mut r, count), before + 1);
        exec(&mut w, "INSERT INTO t VALUES (2, 20)");
    }
    // REPEATABLE READ takes its snapshot at the first read, not at BEGIN.
    let mut r = reader(&srv, "REPEATABLE READ");
    exec(&mut r, "BEGIN");
    exec(&mut w, "INSERT INTO t VALUES (200, 1)");
    assert_eq!(q_i64(&mut r, "SELECT COUNT(*) FROM t WHERE id = 200"), 1);
    exec(&mut r, "COMMIT");
}

#[test]
fn start_transaction_with_consistent_snapshot() {
    let srv = Server::start("snapshot");
    let mut w = setup(&srv);
    let mut r = reader(&srv, "REPEATABLE READ");
    exec(&mut r, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    exec(&mut w, "INSERT INTO t VALUES (201, 1)");
    assert_eq!(q_i64(&mut r, "SELECT COUNT(*) FROM t WHERE id = 201"), 0);
    exec(&mut r, "COMMIT");
    assert_eq!(q_i64(&mut r, "SELECT COUNT(*) FROM t WHERE id = 201"), 1);
}

#[test]
fn select_for_update_prevents_lost_updates() {
    let srv = Server::start("lostupdate");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL)",
    );
    exec(&mut c, "INSERT INTO counter VALUES (1, 0)");
    let retries = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let mut conn = srv.conn_db("d");
            let retries = retries.clone();
            std::thread::spawn(move || {
                let mut done = 0;
                while done < 200 {
                    let r: mysql::Result<()> = (|| {
                        conn.query_drop("BEGIN")?;
                        // One thread uses the text protocol, the other prepared statements.
                        let n: i64 = if t == 0 {
                            conn.query_first("SELECT n FROM counter WHERE id = 1 FOR UPDATE")?
                                .unwrap()
                        } else {
                            conn.exec_first("SELECT n FROM counter WHERE id = ? FOR UPDATE", (1,))?
                                .unwrap()
                        };
                        if t == 0 {
                            conn.query_drop(format!(
                                "UPDATE counter SET n = {} WHERE id = 1",
                                n + 1
                            ))?;
                        } else {
                            conn.exec_drop("UPDATE counter SET n = ? WHERE id = ?", (n + 1, 1))?;
                        }
                        conn.query_drop("COMMIT")
                    })();
                    match r {
                        Ok(()) => done += 1,
                        Err(e) if matches!(err_code(&e), Some((1213 | 1205, _))) => {
                            retries.fetch_add(1, Ordering::Relaxed);
                            conn.query_drop("ROLLBACK").unwrap();
                        }
                        Err(e) => panic!("thread {t}: {e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(q_i64(&mut c, "SELECT n FROM counter WHERE id = 1"), 400);
    eprintln!(
        "lost update test: {} retries",
        retries.load(Ordering::Relaxed)
    );
}

#[test]
fn lock_wait_timeout_keeps_the_transaction() {
    let srv = Server::start("lockwait");
    let mut a = setup(&srv);
    let mut b = srv.conn_db("d");
    exec(&mut b, "SET innodb_lock_wait_timeout = 1");
    assert_eq!(q1(&mut b, "SELECT @@innodb_lock_wait_timeout"), "1");
    exec(&mut a, "BEGIN");
    exec(&mut a, "UPDATE t SET v = v + 1 WHERE id = 1");
    exec(&mut b, "BEGIN");
    exec(&mut b, "UPDATE t SET v = 222 WHERE id = 2");
    for sql in [
        "UPDATE t SET v = 0 WHERE id = 1",
        "SELECT v FROM t WHERE id = 1 FOR UPDATE",
        "DELETE FROM t WHERE id = 1",
    ] {
        let start = Instant::now();
        let e = try_exec(&mut b, sql).unwrap_err();
        let took = start.elapsed();
        assert_eq!(
            err_code(&e),
            Some((1205, "HY000".to_string())),
            "{sql}: {e}"
        );
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(20),
            "{sql}: waited {took:?}"
        );
    }
    // A shared lock blocks writers too.
    exec(&mut a, "COMMIT");
    exec(&mut a, "BEGIN");
    assert_eq!(
        q(&mut a, "SELECT v FROM t WHERE id = 3 LOCK IN SHARE MODE"),
        vec!["30"]
    );
    let e = b.query_drop("UPDATE t SET v = 0 WHERE id = 3").unwrap_err();
    assert_eq!(err_code(&e).map(|x| x.0), Some(1205), "{e}");
    exec(&mut a, "COMMIT");
    // Only the timed-out statements failed: b's transaction is still open
    // with its earlier change, and it can continue and commit.
    assert_eq!(q_i64(&mut b, "SELECT v FROM t WHERE id = 2"), 222);
    assert_eq!(q_i64(&mut a, "SELECT v FROM t WHERE id = 2"), 20);
    exec(&mut b, "UPDATE t SET v = 0 WHERE id = 1");
    exec(&mut b, "COMMIT");
    assert_eq!(
        q(&mut a, "SELECT id, v FROM t ORDER BY id"),
        vec!["1|0", "2|222", "3|30"]
    );
}

#[test]
fn deadlock_is_detected_and_one_transaction_wins() {
    let srv = Server::start("deadlock");
    let mut c = setup(&srv);
    for round in 0..3 {
        exec(&mut c, "UPDATE t SET v = id * 10");
        let mut a = srv.conn_db("d");
        let mut b = srv.conn_db("d");
        // A long timeout: only deadlock detection can end the wait quickly.
        exec(&mut a, "SET innodb_lock_wait_timeout = 60");
        exec(&mut b, "SET innodb_lock_wait_timeout = 60");
        exec(&mut a, "BEGIN");
        exec(&mut b, "BEGIN");
        exec(&mut a, "UPDATE t SET v = v + 1 WHERE id = 1");
        exec(&mut b, "UPDATE t SET v = v + 2 WHERE id = 2");
        let start = Instant::now();
        let ta = std::thread::spawn(move || {
            let r = try_exec(
                &mut a,
                if round == 2 {
                    "SELECT v FROM t WHERE id = 2 FOR UPDATE"
                } else {
                    "UPDATE t SET v = v + 1 WHERE id = 2"
                },
            );
            let r = r.and_then(|_| a.query_drop("COMMIT"));
            (r.err().and_then(|e| err_code(&e)), a)
        });
        std::thread::sleep(Duration::from_millis(200));
        let rb = b
            .query_drop("UPDATE t SET v = v + 2 WHERE id = 1")
            .and_then(|_| b.query_drop("COMMIT"));
        let rb = rb.err().and_then(|e| err_code(&e));
        let (ra, mut a) = ta.join().unwrap();
        let took = start.elapsed();
        assert!(
            took < Duration::from_secs(30),
            "deadlock took {took:?} to resolve"
        );
        let rows = q(&mut c, "SELECT id, v FROM t ORDER BY id");
        match (ra, rb) {
            (None, Some((1213, s))) => {
                assert_eq!(s, "40001");
                let v2 = if round == 2 { "2|20" } else { "2|21" };
                assert_eq!(rows, vec!["1|11", v2, "3|30"], "a won");
            }
            (Some((1213, s)), None) => {
                assert_eq!(s, "40001");
                assert_eq!(rows, vec!["1|12", "2|22", "3|30"], "b won");
            }
            other => panic!("round {round}: expected exactly one 1213, got {other:?}"),
        }
        // Both connections stay usable.
        assert_eq!(q_i64(&mut a, "SELECT COUNT(*) FROM t"), 3);
        assert_eq!(q_i64(&mut b, "SELECT COUNT(*) FROM t"), 3);
    }
}

#[test]
fn rollback_and_autocommit_off() {
    let srv = Server::start("rollback");
    let mut c = setup(&srv);
    let orig = q(&mut c, "SELECT id, v FROM t ORDER BY id");
    exec(&mut c, "START TRANSACTION");
    exec(&mut c, "INSERT INTO t VALUES (4, 40), (5, 50)");
    exec(&mut c, "UPDATE t SET v = v * 2 WHERE v >= 20");
    exec(&mut c, "DELETE FROM t WHERE id = 1");
    assert_eq!(
        q(&mut c, "SELECT id, v FROM t ORDER BY id"),
        vec!["2|40", "3|60", "4|80", "5|100"]
    );
    exec(&mut c, "ROLLBACK");
    assert_eq!(q(&mut c, "SELECT id, v FROM t ORDER BY id"), orig);

    // A failed statement inside a transaction undoes only itself.
    exec(&mut c, "BEGIN");
    exec(&mut c, "INSERT INTO t VALUES (6, 60)");
    assert!(c
        .query_drop("INSERT INTO t VALUES (7, 70), (1, 1)")
        .is_err());
    exec(&mut c, "COMMIT");
    assert_eq!(
        q(&mut c, "SELECT id FROM t WHERE id > 3 ORDER BY id"),
        vec!["6"]
    );

    // autocommit=0: work is invisible to others until COMMIT, undone by ROLLBACK.
    let mut other = srv.conn_db("d");
    exec(&mut c, "SET autocommit = 0");
    exec(&mut c, "DELETE FROM t WHERE id = 6");
    exec(&mut c, "ROLLBACK");
    assert_eq!(q_i64(&mut other, "SELECT COUNT(*) FROM t WHERE id = 6"), 1);
    exec(&mut c, "UPDATE t SET v = 99 WHERE id = 6");
    assert_eq!(q_i64(&mut other, "SELECT v FROM t WHERE id = 6"), 60);
    exec(&mut c, "COMMIT");
    assert_eq!(q_i64(&mut other, "SELECT v FROM t WHERE id = 6"), 99);
    exec(&mut c, "UPDATE t SET v = 98 WHERE id = 6");
    // SET autocommit = 1 commits the open transaction.
    exec(&mut c, "SET autocommit = 1");
    assert_eq!(q_i64(&mut other, "SELECT v FROM t WHERE id = 6"), 98);
    // DDL commits implicitly.
    exec(&mut c, "BEGIN");
    exec(&mut c, "UPDATE t SET v = 97 WHERE id = 6");
    exec(&mut c, "CREATE TABLE t2 (a INT)");
    exec(&mut c, "ROLLBACK");
    assert_eq!(q_i64(&mut other, "SELECT v FROM t WHERE id = 6"), 97);
    // A connection closed with an open transaction rolls it back (and its locks go).
    exec(&mut c, "BEGIN");
    exec(&mut c, "UPDATE t SET v = 0 WHERE id = 6");
    drop(c);
    exec(&mut other, "SET innodb_lock_wait_timeout = 5");
    exec(&mut other, "UPDATE t SET v = v + 1 WHERE id = 6");
    assert_eq!(q_i64(&mut other, "SELECT v FROM t WHERE id = 6"), 98);
}

#[test]
fn bank_transfers_keep_the_total() {
    const ACCOUNTS: i64 = 20;
    const TOTAL: i64 = ACCOUNTS * 1000;
    let secs: u64 = std::env::var("BANK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let mut rng = Rng::from_env("bank_transfers_keep_the_total");
    let srv = Server::start("bank");
    let mut c = srv.fresh_db("d");
    exec(&mut c, "CREATE TABLE acct (id INT PRIMARY KEY, balance BIGINT NOT NULL, moves INT NOT NULL DEFAULT 0, KEY kb (balance))");
    let vals: Vec<String> = (1..=ACCOUNTS).map(|i| format!("({i}, 1000, 0)")).collect();
    exec(
        &mut c,
        &format!(
            "INSERT INTO acct (id, balance, moves) VALUES {}",
            vals.join(",")
        ),
    );

    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for t in 0..8u64 {
        let mut conn = srv.conn_db("d");
        exec(
            &mut conn,
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        );
        exec(&mut conn, "SET innodb_lock_wait_timeout = 2");
        let (stop, commits, retries) = (stop.clone(), commits.clone(), retries.clone());
        let mut rng = Rng::new(rng.next_u64());
        workers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let from = rng.range(1, ACCOUNTS);
                let to = (from + rng.range(0, ACCOUNTS - 2)) % ACCOUNTS + 1;
                let amount = rng.range(1, 300);
                let prepared = t % 2 == 1;
                let r: mysql::Result<()> = (|| {
                    conn.query_drop("BEGIN")?;
                    // Lock both rows (in this order; other threads use other orders).
                    let mut bal = [0i64; 2];
                    for (i, id) in [from, to].into_iter().enumerate() {
                        bal[i] = if prepared {
                            conn.exec_first("SELECT balance FROM acct WHERE id = ? FOR UPDATE", (id,))?
                        } else {
                            conn.query_first(format!("SELECT balance FROM acct WHERE id = {id} FOR UPDATE"))?
                        }
                        .unwrap();
                    }
                    if bal[0] >= amount {
                        for (id, nb) in [(from, bal[0] - amount), (to, bal[1] + amount)] {
                            if prepared {
                                conn.exec_drop("UPDATE acct SET balance = ?, moves = moves + 1 WHERE id = ?", (nb, id))?;
                            } else {
                                conn.query_drop(format!("UPDATE acct SET balance = {nb}, moves = moves + 1 WHERE id = {id}"))?;
                            }
                        }
                    }
                    conn.query_drop("COMMIT")
                })();
                match r {
                    Ok(()) => {
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) if matches!(err_code(&e), Some((1213 | 1205, _))) => {
                        retries.fetch_add(1, Ordering::Relaxed);
                        conn.query_drop("ROLLBACK").unwrap();
                    }
                    Err(e) => panic!("worker {t}: {e}"),
                }
            }
        }));
    }
    // The checker: every consistent read sees the same total.
    let checker = {
        let mut conn = srv.conn_db("d");
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut checks = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let (sum, n): (i64, i64) = conn
                    .query_first("SELECT SUM(balance), COUNT(*) FROM acct")
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    (sum, n),
                    (TOTAL, ACCOUNTS),
                    "autocommit SELECT SUM after {checks} checks"
                );
                // Several statements in one REPEATABLE READ transaction share one snapshot.
                conn.query_drop("BEGIN").unwrap();
                let rows: Vec<(i64, i64)> = conn.query("SELECT id, balance FROM acct").unwrap();
                let idx: i64 = conn
                    .query_first("SELECT SUM(balance) FROM acct WHERE balance >= 0")
                    .unwrap()
                    .unwrap();
                let mut each = 0;
                for id in [1, ACCOUNTS / 2, ACCOUNTS] {
                    each += conn
                        .exec_first::<i64, _, _>("SELECT balance FROM acct WHERE id = ?", (id,))
                        .unwrap()
                        .unwrap();
                }
                conn.query_drop("COMMIT").unwrap();
                let listed: i64 = rows.iter().map(|r| r.1).sum();
                let want_each: i64 = rows
                    .iter()
                    .filter(|r| [1, ACCOUNTS / 2, ACCOUNTS].contains(&r.0))
                    .map(|r| r.1)
                    .sum();
                assert_eq!(
                    (listed, idx, each),
                    (TOTAL, TOTAL, want_each),
                    "snapshot after {checks} checks"
                );
                checks += 1;
            }
            checks
        })
    };
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let checks = checker.join().unwrap();
    let (commits, retries) = (
        commits.load(Ordering::Relaxed),
        retries.load(Ordering::Relaxed),
    );
    eprintln!("bank: {commits} commits, {retries} retries, {checks} checks");
    assert!(
        commits >= 50 && checks >= 5,
        "too little work: {commits} commits, {checks} checks"
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT SUM(balance), COUNT(*), MIN(balance) >= 0 FROM acct"
        ),
        vec![format!("{TOTAL}|{ACCOUNTS}|1")]
    );
    let moves = q_i64(&mut c, "SELECT SUM(moves) FROM acct");
    assert!(
        moves > 0 && moves % 2 == 0 && moves as u64 <= 2 * commits,
        "moves {moves}"
    );
    assert_eq!(
        q(&mut c, "CHECK TABLE acct"),
        vec!["d.acct|check|status|OK"]
    );
}
