//! The contract of bulk loads under concurrency and failure (docs/LOAD.md):
//! a table's bulk load is exclusive (another session's load, LOAD DATA or
//! DDL of the table waits, 1205 after lock_wait_timeout), each INSERT of a
//! `strata_bulk_load` load is all or nothing (a failed or killed statement
//! leaves none of its rows), the mode never applies inside a transaction
//! (ROLLBACK undoes what it should), LOAD DATA loads into the table as it
//! is once it holds it, and an unterminated enclosed field is bounded.
//! Concurrency is made deterministic by waiting for the other session to
//! show "Waiting for table metadata lock" in SHOW PROCESSLIST.
mod common;
use common::{check_ok, fails, q, rows, wait_state, TestDb};
use sql::{Session, Value};
use std::time::Duration;

/// A root session with connection id `id` in database `d`.
fn session(db: &TestDb, id: u64) -> Session {
    let mut s = Session::new(db.inst.clone(), id, "root", None);
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

#[test]
fn a_second_load_of_the_same_table_waits_for_the_first() {
    let db = TestDb::open("bulk-excl");
    let mut a = session(&db, 1);
    let mut b = session(&db, 2);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "SET strata_bulk_load = 1");
    q(&mut a, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 1)");
    // The other session's load cannot start while this one is open (idle).
    q(&mut b, "SET lock_wait_timeout = 1");
    q(&mut b, "SET strata_bulk_load = 1");
    let (code, _) = fails(&mut b, "INSERT INTO t VALUES (2, 2), (5, 2)");
    assert_eq!(code, 1205);
    // Once it ends, the table is not empty: the ordinary path, duplicates found.
    q(&mut a, "SET strata_bulk_load = 0");
    let (code, _) = fails(&mut b, "INSERT INTO t VALUES (2, 2), (5, 2)");
    assert_eq!(code, 1062);
    q(&mut b, "INSERT INTO t VALUES (5, 2)");
    assert_eq!(
        rows(&mut a, "SELECT id, v FROM t ORDER BY id"),
        ["1|1", "2|1", "3|1", "5|2"]
    );
    check_ok(&mut a, "t");
}

#[test]
fn a_waiting_second_load_goes_on_after_the_first_ends() {
    let db = TestDb::open("bulk-excl-wait");
    let mut a = session(&db, 1);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "SET strata_bulk_load = 1");
    q(&mut a, "INSERT INTO t VALUES (1, 1), (2, 1)");
    let inst = db.inst.clone();
    let h = std::thread::spawn(move || {
        let mut b = Session::new(inst, 2, "root", Some("d".into()));
        q(&mut b, "SET strata_bulk_load = 1");
        let mut c = sql::result::Collect::default();
        let r = b.query("INSERT INTO t VALUES (2, 2), (3, 2)", &mut c);
        r.map(|_| ()).map_err(|e| e.code)
    });
    let mut watch = session(&db, 9);
    wait_state(&mut watch, 2, "Waiting for table metadata lock");
    q(&mut a, "SET strata_bulk_load = 0");
    // The second runs once the first's rows are in: row by row, so its
    // repeated key is found (never two loads ingesting over each other).
    assert_eq!(h.join().unwrap(), Err(1062));
    assert_eq!(
        rows(&mut a, "SELECT id, v FROM t ORDER BY id"),
        ["1|1", "2|1"]
    );
}

#[test]
fn ddl_waits_for_an_open_load_and_sees_its_rows() {
    let db = TestDb::open("bulk-ddl");
    let mut a = session(&db, 1);
    let mut b = session(&db, 2);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "SET strata_bulk_load = 1");
    q(&mut a, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 10)");
    q(&mut b, "SET lock_wait_timeout = 1");
    for ddl in [
        "CREATE INDEX iv ON t (v)",
        "ALTER TABLE t ADD COLUMN c INT",
        "TRUNCATE TABLE t",
        "DROP TABLE t",
    ] {
        assert_eq!(fails(&mut b, ddl).0, 1205, "{ddl}");
    }
    // CREATE INDEX waiting in another thread builds over the loaded rows.
    let inst = db.inst.clone();
    let h = std::thread::spawn(move || {
        let mut b = Session::new(inst, 3, "root", Some("d".into()));
        q(&mut b, "CREATE INDEX iv ON t (v)");
    });
    wait_state(&mut b, 3, "Waiting for table metadata lock");
    q(&mut a, "SET strata_bulk_load = 0");
    h.join().unwrap();
    assert_eq!(
        rows(
            &mut a,
            "SELECT id FROM t FORCE INDEX (iv) WHERE v = 10 ORDER BY id"
        ),
        ["1", "3"]
    );
    check_ok(&mut a, "t");
}

#[test]
fn each_bulk_insert_is_all_or_nothing() {
    let db = TestDb::open("bulk-atomic");
    let mut s = session(&db, 1);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, UNIQUE KEY uv (v))",
    );
    q(&mut s, "SET strata_bulk_load = 1");
    q(&mut s, "INSERT INTO t VALUES (1, 1), (2, 2)");
    // Out of order at its third row: none of the statement's rows stay.
    let (code, _) = fails(&mut s, "INSERT INTO t VALUES (3, 3), (4, 4), (2, 5)");
    assert_eq!(code, 4054);
    // A bad value (strict mode) at its second row: none stay either.
    let (code, _) = fails(&mut s, "INSERT INTO t VALUES (5, 5), (6, 'x')");
    assert_eq!(code, 1366);
    // The load goes on after the last key that was loaded.
    q(&mut s, "INSERT INTO t VALUES (3, 30)");
    q(&mut s, "SET strata_bulk_load = 0");
    assert_eq!(
        rows(&mut s, "SELECT id, v FROM t ORDER BY id"),
        ["1|1", "2|2", "3|30"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t FORCE INDEX (uv) ORDER BY v"),
        ["1", "2", "3"]
    );
    check_ok(&mut s, "t");
}

#[test]
fn kill_query_stops_a_bulk_insert_and_leaves_none_of_its_rows() {
    let db = TestDb::open("bulk-kill");
    let mut a = session(&db, 1);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "SET strata_bulk_load = 1");
    q(&mut a, "INSERT INTO t VALUES (1, 0)");
    // Many cheap rows (nothing in them checks for KILL itself, as SLEEP
    // would): the statement runs for a while, KILL lands in the middle.
    let values: Vec<String> = (2..300_000).map(|i| format!("({i}, {i})")).collect();
    let sql = format!("INSERT INTO t VALUES {}", values.join(", "));
    let inst = db.inst.clone();
    let h = std::thread::spawn(move || {
        let mut k = Session::new(inst, 2, "root", Some("d".into()));
        wait_state(&mut k, 1, "INSERT INTO t VALUES (2, 2)");
        q(&mut k, "KILL QUERY 1");
    });
    let mut c = sql::result::Collect::default();
    let r = a.query(&sql, &mut c).map(|o| o.affected_rows);
    h.join().unwrap();
    // (Not the statement in the message: it is megabytes long.)
    assert_eq!(
        r.map_err(|e| e.code),
        Err(1317),
        "KILL QUERY ends the statement"
    );
    q(&mut a, "SET strata_bulk_load = 0");
    assert_eq!(rows(&mut a, "SELECT id FROM t"), ["1"]);
}

#[test]
fn no_bulk_load_inside_a_transaction_rollback_undoes() {
    let db = TestDb::open("bulk-txn");
    let mut s = session(&db, 1);
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    q(&mut s, "SET strata_bulk_load = 1");
    q(&mut s, "INSERT INTO t VALUES (1), (2)");
    // autocommit off: the open load ends (its rows are committed, as every
    // statement before was), the INSERT is transactional.
    q(&mut s, "SET autocommit = 0");
    q(&mut s, "INSERT INTO t VALUES (3)");
    q(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    q(&mut s, "SET autocommit = 1");
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (4)");
    q(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    // Into an empty table with autocommit off: no load either.
    q(&mut s, "CREATE TABLE e (id INT PRIMARY KEY)");
    q(&mut s, "SET autocommit = 0");
    q(&mut s, "INSERT INTO e VALUES (1), (2)");
    q(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM e"), ["0"]);
}

/// Files under a temporary secure_file_priv.
fn files(db: &TestDb, name: &str) -> testkit::TempDir {
    let files = testkit::TempDir::new(name);
    db.inst.set_global(
        "secure_file_priv",
        Value::Bytes(files.0.display().to_string().into_bytes()),
    );
    files
}

#[test]
fn load_data_waits_for_an_open_load_of_the_table() {
    let db = TestDb::open("bulk-ld-excl");
    let dir = files(&db, "bulk-ld-excl-files");
    let path = dir.0.join("rows.txt");
    std::fs::write(&path, "2\t2\n7\t7\n").unwrap();
    let mut a = session(&db, 1);
    let mut b = session(&db, 2);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "SET strata_bulk_load = 1");
    q(&mut a, "INSERT INTO t VALUES (1, 1), (2, 1)");
    q(&mut b, "SET lock_wait_timeout = 1");
    let load = format!("LOAD DATA INFILE '{}' INTO TABLE t", path.display());
    assert_eq!(fails(&mut b, &load).0, 1205);
    q(&mut a, "SET strata_bulk_load = 0");
    assert_eq!(fails(&mut b, &load).0, 1062);
    assert_eq!(rows(&mut a, "SELECT COUNT(*) FROM t"), ["2"]);
}

/// LOAD DATA resolved the table, then waited for it while an ALTER TABLE
/// rebuilt it (new index ids): it must load into the new table, not the
/// one it resolved first (whose ids are gone: the rows would be lost).
#[test]
fn load_data_loads_into_the_table_as_it_is_once_held() {
    let db = TestDb::open("bulk-ld-stale");
    let dir = files(&db, "bulk-ld-stale-files");
    let path = dir.0.join("rows.txt");
    std::fs::write(&path, "1\t10\n2\t20\n3\t30\n").unwrap();
    let mut a = session(&db, 1);
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    // Hold the table as session 1 would with an open load.
    let held = db
        .inst
        .bulk_locks
        .acquire(
            vec![("d".into(), "t".into())],
            1,
            Duration::from_secs(5),
            &|| None,
        )
        .unwrap();
    let inst = db.inst.clone();
    let load = format!("LOAD DATA INFILE '{}' INTO TABLE t (id, v)", path.display());
    let h = std::thread::spawn(move || {
        let mut b = Session::new(inst, 2, "root", Some("d".into()));
        q(&mut b, &load);
    });
    wait_state(&mut a, 2, "Waiting for table metadata lock");
    // A column added first: the rows are rewritten into new index ids.
    q(&mut a, "ALTER TABLE t ADD COLUMN c INT DEFAULT 7 FIRST");
    drop(held);
    h.join().unwrap();
    assert_eq!(
        rows(&mut a, "SELECT c, id, v FROM t ORDER BY id"),
        ["7|1|10", "7|2|20", "7|3|30"]
    );
    check_ok(&mut a, "t");
}

#[test]
fn load_data_unterminated_enclosed_field_is_bounded() {
    let db = TestDb::open("bulk-ld-unterminated");
    let dir = files(&db, "bulk-ld-unterminated-files");
    let path = dir.0.join("open.csv");
    // An enclosed field never closed: the rest of the input is one field.
    let mut body = b"1,\"never closed\n".to_vec();
    body.extend(std::iter::repeat_n(b'x', 300 << 10));
    std::fs::write(&path, body).unwrap();
    let mut s = session(&db, 1);
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v LONGTEXT)");
    q(&mut s, "SET GLOBAL max_allowed_packet = 65536");
    let mut s = session(&db, 3);
    let load = format!(
        "LOAD DATA INFILE '{}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'",
        path.display()
    );
    let (code, msg) = fails(&mut s, &load);
    assert_eq!(code, 1153, "{msg}");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    // Under the limit the same field is read to the end, as MySQL does.
    q(&mut s, "SET GLOBAL max_allowed_packet = 1048576");
    let mut s = session(&db, 4);
    q(&mut s, &load);
    assert_eq!(
        rows(&mut s, "SELECT id, LENGTH(v) > 300000 FROM t"),
        ["1|1"]
    );
}
