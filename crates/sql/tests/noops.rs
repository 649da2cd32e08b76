//! Nothing is accepted and then silently ignored (issue 14 item 8): each statement either
//! works as in MySQL, fails with a clear error (1235 "not supported yet" and friends) or,
//! where MySQL itself only warns, leaves a warning in SHOW WARNINGS.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Session, Value};
use std::time::{Duration, Instant};

mod common;
use common::TestDb;

fn open(name: &str) -> TestDb {
    TestDb::open(name)
}

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn cell(s: &mut Session, sql: &str) -> String {
    let rows = q(s, sql);
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    String::from_utf8_lossy(&rows[0][0].text()).into_owned()
}

fn col(s: &mut Session, sql: &str) -> Vec<String> {
    q(s, sql)
        .into_iter()
        .map(|r| String::from_utf8_lossy(&r[0].text()).into_owned())
        .collect()
}

fn err(s: &mut Session, sql: &str) -> u16 {
    let mut c = Collect::default();
    match s.query(sql, &mut c) {
        Ok(_) => panic!("accepted: {sql}"),
        Err(e) => e.code,
    }
}

/// Codes of the warnings the last statement left.
fn warnings(s: &mut Session) -> Vec<u16> {
    q(s, "SHOW WARNINGS")
        .into_iter()
        .map(|r| r[1].to_i128().unwrap() as u16)
        .collect()
}

fn setup(name: &str) -> (TestDb, Session) {
    let inst = open(name);
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, g INT, v VARCHAR(20), KEY k_g (g))",
    );
    for i in 1..=20 {
        q(
            &mut s,
            &format!("INSERT INTO t VALUES ({i}, {}, 'v{i:02}')", i % 3),
        );
    }
    (inst, s)
}

#[test]
fn constraints_and_options_strata_does_not_enforce_are_refused() {
    let (_i, mut s) = setup("noops-ddl");
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id) MATCH FULL)"
        ),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY, CHECK (id > 0) NOT ENFORCED)"
        ),
        1235
    );
    // An ALTER with a CHECK constraint that rows violate changes nothing, not
    // even its other operations.
    assert_eq!(
        err(
            &mut s,
            "ALTER TABLE t ADD INDEX k_v (v), ADD CONSTRAINT f CHECK (g > 1000)"
        ),
        4025
    );
    let keys = col(&mut s, "SHOW INDEX FROM t");
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY, a INT, KEY (a) COMMENT 'p0_cfname=cf1')"
        ),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY) COMMENT='ttl_duration=3600;p0_ttl_duration=60;'"
        ),
        1235
    );
    assert_eq!(
        err(&mut s, "CREATE TABLE c (id INT PRIMARY KEY) ENCRYPTION='Y'"),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE INDEX k2 ON t (v) COMMENT 'custom_p0_cfname=cf2'"
        ),
        1235
    );
    // Advisory options are accepted; AUTO_INCREMENT=N is not honoured and says so.
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY AUTO_INCREMENT) ENGINE=InnoDB ROW_FORMAT=DYNAMIC AUTO_INCREMENT=100 DEFAULT CHARSET=utf8mb4",
    );
    assert_eq!(warnings(&mut s), vec![1235]);
    q(
        &mut s,
        "CREATE TABLE e (id INT PRIMARY KEY, a INT, KEY (a) COMMENT 'plain words')",
    );
}

#[test]
fn isolation_levels_and_read_only_transactions() {
    let (inst, mut s) = setup("noops-txn");
    assert_eq!(
        err(
            &mut s,
            "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE"
        ),
        1235
    );
    assert_eq!(
        err(&mut s, "SET transaction_isolation = 'SERIALIZABLE'"),
        1235
    );
    assert_eq!(
        err(&mut s, "START TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
        1235
    );
    q(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
    );
    assert_eq!(warnings(&mut s), vec![1235]);
    assert_eq!(
        cell(&mut s, "SELECT @@transaction_isolation"),
        "READ-UNCOMMITTED"
    );
    q(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );

    // START TRANSACTION READ ONLY refuses writes.
    q(&mut s, "START TRANSACTION READ ONLY");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (100, 1, 'x')"), 1792);
    assert_eq!(err(&mut s, "UPDATE t SET g = 9 WHERE id = 1"), 1792);
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM t"), "20");
    q(&mut s, "COMMIT");
    q(
        &mut s,
        "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
    );
    assert_eq!(err(&mut s, "DELETE FROM t WHERE id = 1"), 1792);
    q(&mut s, "ROLLBACK");
    // SET TRANSACTION without SESSION: the next transaction only.
    q(&mut s, "SET TRANSACTION READ ONLY");
    q(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (100, 1, 'x')"), 1792);
    q(&mut s, "COMMIT");
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (100, 1, 'x')");
    q(&mut s, "COMMIT");
    // The session default covers autocommit statements and DDL.
    q(&mut s, "SET SESSION transaction_read_only = 1");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (101, 1, 'x')"), 1792);
    assert_eq!(err(&mut s, "CREATE TABLE z (a INT PRIMARY KEY)"), 1792);
    q(&mut s, "SET SESSION transaction_read_only = 0");
    q(&mut s, "INSERT INTO t VALUES (101, 1, 'x')");

    // SET GLOBAL read_only: everyone but root is refused.
    let mut app = inst.session(2, "app", Some("d".into()));
    q(&mut s, "SET GLOBAL read_only = ON");
    assert_eq!(err(&mut app, "INSERT INTO t VALUES (102, 1, 'x')"), 1290);
    assert_eq!(err(&mut app, "DROP TABLE t"), 1290);
    assert_eq!(cell(&mut app, "SELECT COUNT(*) FROM t"), "22");
    q(&mut s, "INSERT INTO t VALUES (102, 1, 'x')");
    q(&mut s, "SET GLOBAL read_only = OFF");
    q(&mut app, "INSERT INTO t VALUES (103, 1, 'x')");

    assert_eq!(err(&mut s, "FLUSH TABLES WITH READ LOCK"), 1235);
    q(&mut s, "FLUSH TABLES");
    q(&mut s, "LOCK TABLES t WRITE");
    assert_eq!(warnings(&mut s), vec![1235]);
    q(&mut s, "UNLOCK TABLES");
    // Qualified names and several tables, as mysqldump and MySQL write them.
    q(&mut s, "LOCK TABLES d.t READ, `t` AS x WRITE");
    assert_eq!(warnings(&mut s), vec![1235]);
    q(&mut s, "UNLOCK TABLES");
    assert_eq!(err(&mut s, "LOCK TABLES"), 1064);
}

#[test]
fn nowait_and_skip_locked_do_not_wait() {
    let (inst, mut a) = setup("noops-nowait");
    let mut b = inst.session(2, "root", Some("d".into()));
    q(&mut b, "SET innodb_lock_wait_timeout = 20");
    q(&mut a, "BEGIN");
    q(&mut a, "SELECT * FROM t WHERE id IN (2, 4) FOR UPDATE");
    q(&mut b, "BEGIN");
    let t0 = Instant::now();
    assert_eq!(
        err(&mut b, "SELECT * FROM t WHERE id = 2 FOR UPDATE NOWAIT"),
        3572
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    let ids = col(
        &mut b,
        "SELECT id FROM t WHERE id <= 5 ORDER BY id FOR UPDATE SKIP LOCKED",
    );
    assert_eq!(ids, vec!["1", "3", "5"]);
    assert!(t0.elapsed() < Duration::from_secs(5));
    // The session's timeout is back for the next statement.
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    assert_eq!(err(&mut b, "SELECT * FROM t WHERE id = 4 FOR UPDATE"), 1205);
    q(&mut a, "COMMIT");
    q(&mut b, "COMMIT");
}

#[test]
fn session_settings_are_honoured_or_refused() {
    let (_i, mut s) = setup("noops-vars");
    q(&mut s, "SET time_zone = '+00:00'");
    q(&mut s, "SET time_zone = 'SYSTEM'");
    q(&mut s, "SET @@session.time_zone = 'UTC'");
    assert_eq!(err(&mut s, "SET time_zone = '+01:00'"), 1235);
    assert_eq!(err(&mut s, "SET time_zone = 'Europe/Paris'"), 1298);
    assert_eq!(err(&mut s, "SET time_zone = '+25:00'"), 1298);
    assert_eq!(err(&mut s, "SET sql_auto_is_null = 1"), 1235);

    // sql_select_limit caps a SELECT without LIMIT.
    q(&mut s, "SET sql_select_limit = 3");
    assert_eq!(q(&mut s, "SELECT id FROM t").len(), 3);
    assert_eq!(q(&mut s, "SELECT id FROM t LIMIT 5").len(), 5);
    q(&mut s, "SET sql_select_limit = DEFAULT");
    assert_eq!(q(&mut s, "SELECT id FROM t").len(), 20);

    // max_execution_time stops a long SELECT with 3024.
    q(&mut s, "CREATE TABLE big (id INT PRIMARY KEY)");
    let vals: Vec<String> = (0..2000).map(|i| format!("({i})")).collect();
    q(
        &mut s,
        &format!("INSERT INTO big VALUES {}", vals.join(",")),
    );
    q(&mut s, "SET max_execution_time = 50");
    let t0 = Instant::now();
    assert_eq!(
        err(
            &mut s,
            "SELECT COUNT(*) FROM big a, big b WHERE a.id + b.id = -1"
        ),
        3024
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
    q(&mut s, "SET max_execution_time = 0");
}

#[test]
fn group_concat_clauses() {
    let (_i, mut s) = setup("noops-gc");
    assert_eq!(
        cell(
            &mut s,
            "SELECT GROUP_CONCAT(id ORDER BY id DESC SEPARATOR ';') FROM t WHERE g = 1"
        ),
        "19;16;13;10;7;4;1"
    );
    assert_eq!(
        cell(&mut s, "SELECT GROUP_CONCAT(DISTINCT g ORDER BY g) FROM t"),
        "0,1,2"
    );
    assert_eq!(
        cell(
            &mut s,
            "SELECT GROUP_CONCAT(id, ':', v ORDER BY 1 SEPARATOR '') FROM t WHERE id < 3"
        ),
        "1:v012:v02"
    );
    assert_eq!(
        col(
            &mut s,
            "SELECT GROUP_CONCAT(v ORDER BY v DESC) FROM t WHERE id <= 6 GROUP BY g ORDER BY g"
        ),
        vec!["v06,v03", "v04,v01", "v05,v02"]
    );
    q(&mut s, "SET group_concat_max_len = 10");
    assert_eq!(cell(&mut s, "SELECT GROUP_CONCAT(v) FROM t"), "v01,v02,v0");
    assert_eq!(warnings(&mut s), vec![1260]);
    assert_eq!(err(&mut s, "SELECT SUM(id, g) FROM t"), 1064);
    assert_eq!(err(&mut s, "SELECT COUNT(DISTINCT id, g) FROM t"), 1235);
}

#[test]
fn select_modifiers_rollup_found_rows_into_over() {
    let (_i, mut s) = setup("noops-select");
    assert_eq!(
        err(&mut s, "SELECT g, COUNT(*) FROM t GROUP BY g WITH ROLLUP"),
        1235
    );
    // Window functions run (tests/window.rs); the frame forms they lack are refused.
    assert_eq!(
        err(
            &mut s,
            "SELECT id, SUM(g) OVER (ORDER BY id GROUPS 1 PRECEDING) FROM t"
        ),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "SELECT SUM(g) OVER (ORDER BY id RANGE INTERVAL 1 DAY PRECEDING) FROM t"
        ),
        1235
    );
    // FOUND_ROWS(): rows sent, or with SQL_CALC_FOUND_ROWS the rows without LIMIT.
    assert_eq!(q(&mut s, "SELECT id FROM t WHERE g = 1 LIMIT 2").len(), 2);
    assert_eq!(cell(&mut s, "SELECT FOUND_ROWS()"), "2");
    q(
        &mut s,
        "SELECT SQL_CALC_FOUND_ROWS id FROM t WHERE g = 1 ORDER BY id LIMIT 2",
    );
    assert_eq!(cell(&mut s, "SELECT FOUND_ROWS()"), "7");
    q(&mut s, "SELECT SQL_CALC_FOUND_ROWS id FROM t LIMIT 1, 3");
    assert_eq!(cell(&mut s, "SELECT FOUND_ROWS()"), "20");
    q(
        &mut s,
        "SELECT SQL_CALC_FOUND_ROWS g, COUNT(*) FROM t GROUP BY g LIMIT 1",
    );
    assert_eq!(cell(&mut s, "SELECT FOUND_ROWS()"), "3");
    // SELECT ... INTO user variables.
    let mut c = Collect::default();
    s.query("SELECT id, v INTO @a, @b FROM t WHERE id = 7", &mut c)
        .unwrap();
    assert!(c.rows.is_empty());
    assert_eq!(cell(&mut s, "SELECT CONCAT(@a, '/', @b)"), "7/v07");
    q(&mut s, "SELECT id INTO @a FROM t WHERE id = 99");
    assert_eq!(warnings(&mut s), vec![1329]);
    assert_eq!(cell(&mut s, "SELECT @a"), "7");
    assert_eq!(err(&mut s, "SELECT id INTO @a FROM t"), 1172);
    assert_eq!(
        err(&mut s, "SELECT id, v INTO @a FROM t WHERE id = 1"),
        1222
    );
}

#[test]
fn index_hints_are_obeyed() {
    let (_i, mut s) = setup("noops-hints");
    let key_of = |s: &mut Session, sql: &str| -> String {
        let mut c = Collect::default();
        s.query(&format!("EXPLAIN {sql}"), &mut c)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let k = c.cols.iter().position(|x| x.name == "key").unwrap();
        String::from_utf8_lossy(&c.rows[0][k].text()).into_owned()
    };
    let sql = "SELECT id FROM t WHERE g = 1";
    assert_eq!(key_of(&mut s, sql), "k_g");
    let ignored = "SELECT id FROM t IGNORE INDEX (k_g) WHERE g = 1";
    assert_ne!(key_of(&mut s, ignored), "k_g");
    assert_eq!(col(&mut s, ignored), col(&mut s, sql));
    let forced = "SELECT id FROM t FORCE INDEX (k_g) WHERE g = 1 AND id = 4";
    assert_eq!(key_of(&mut s, forced), "k_g");
    assert_eq!(col(&mut s, forced), vec!["4"]);
    assert_eq!(
        key_of(&mut s, "SELECT id FROM t WHERE g = 1 AND id = 4"),
        "PRIMARY"
    );
    let used = "SELECT id FROM t USE INDEX () WHERE g = 1";
    assert_ne!(key_of(&mut s, used), "k_g");
    assert_eq!(
        err(&mut s, "SELECT id FROM t USE INDEX (nope) WHERE g = 1"),
        1176
    );
    assert_eq!(err(&mut s, "UPDATE t IGNORE INDEX (nope) SET g = 1"), 1176);
    q(&mut s, "UPDATE t FORCE INDEX (k_g) SET v = 'w' WHERE g = 2");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM t WHERE v = 'w'"), "7");
}

/// Strata has no temporary tables, so DROP TEMPORARY TABLE names none: 1051 (a note with IF
/// EXISTS), and a permanent table of the same name is never dropped. MariaDB logs
/// `DROP TEMPORARY TABLE IF EXISTS t` for temporary tables (and replicas run it), and clients
/// use it as a clean-up guard: it used to drop the permanent table (review s32).
#[test]
fn drop_temporary_table_never_drops_a_permanent_table() {
    let (_db, mut s) = setup("drop-temporary");
    q(&mut s, "CREATE TABLE keep1 (id INT PRIMARY KEY)");
    q(&mut s, "INSERT INTO keep1 VALUES (1), (2)");
    assert_eq!(err(&mut s, "DROP TEMPORARY TABLE keep1"), 1051);
    q(&mut s, "DROP TEMPORARY TABLE IF EXISTS keep1, nothere");
    assert_eq!(warnings(&mut s), vec![1051, 1051]);
    q(&mut s, "DROP /*!40005 TEMPORARY */ TABLE IF EXISTS keep1");
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM keep1"), "2");
    q(&mut s, "DROP TABLE keep1");
    assert_eq!(err(&mut s, "SELECT COUNT(*) FROM keep1"), 1146);
}
