//! SAVEPOINT, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT and COMMIT/ROLLBACK AND
//! CHAIN with MySQL's semantics (checked against MariaDB; the diff corpus runs the
//! same sequences on both): a rollback to a savepoint undoes the writes made after
//! it (rows and secondary indexes) and forgets later savepoints, keeping itself;
//! names are case-insensitive and a name set again moves; an unknown name is 1305;
//! COMMIT, ROLLBACK, DDL and a deadlock forget every savepoint; with autocommit
//! and no transaction a SAVEPOINT is accepted and forgotten at once. Row locks
//! taken after the savepoint stay held after rolling back to it, as in InnoDB.
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, rows, session_in_d, TestDb};
use sql::Session;

fn setup(s: &mut Session) {
    q(s, "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))");
}

#[test]
fn rollback_to_undoes_later_writes_only() {
    let db = TestDb::open("sp-basic");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (1, 10)");
    q(&mut s, "SAVEPOINT a");
    q(&mut s, "INSERT INTO t VALUES (2, 20)");
    q(&mut s, "UPDATE t SET v = 11 WHERE id = 1");
    q(&mut s, "SAVEPOINT b");
    q(&mut s, "DELETE FROM t WHERE id = 1");
    q(&mut s, "INSERT INTO t VALUES (3, 30)");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["2|20", "3|30"]
    );
    q(&mut s, "ROLLBACK TO SAVEPOINT b");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|11", "2|20"]
    );
    // The secondary index was rolled back with the rows.
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE v = 11"), ["1"]);
    assert!(rows(&mut s, "SELECT id FROM t WHERE v = 30").is_empty());
    // A savepoint survives a rollback to it: again, after more writes.
    q(&mut s, "INSERT INTO t VALUES (4, 40)");
    q(&mut s, "ROLLBACK WORK TO b");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|11", "2|20"]
    );
    q(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT * FROM t ORDER BY id"), ["1|10"]);
    assert!(rows(&mut s, "SELECT id FROM t WHERE v = 11").is_empty());
    // b was set after a: gone.
    assert_eq!(err(&mut s, "ROLLBACK TO b"), 1305);
    q(&mut s, "INSERT INTO t VALUES (5, 50)");
    q(&mut s, "COMMIT");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|10", "5|50"]
    );
    assert_eq!(rows(&mut s, "CHECK TABLE t")[0], "d.t|check|status|OK");
}

#[test]
fn names_release_and_errors() {
    let db = TestDb::open("sp-names");
    let mut s = session_in_d(&db);
    setup(&mut s);
    // Autocommit, no transaction: accepted and forgotten.
    q(&mut s, "SAVEPOINT a");
    assert_eq!(err(&mut s, "ROLLBACK TO a"), 1305);
    assert_eq!(err(&mut s, "RELEASE SAVEPOINT a"), 1305);

    q(&mut s, "START TRANSACTION");
    q(&mut s, "SAVEPOINT a");
    q(&mut s, "INSERT INTO t VALUES (1, 1)");
    q(&mut s, "SAVEPOINT b");
    q(&mut s, "INSERT INTO t VALUES (2, 2)");
    // Case-insensitive: A replaces a and now comes after b.
    q(&mut s, "SAVEPOINT A");
    q(&mut s, "INSERT INTO t VALUES (3, 3)");
    q(&mut s, "ROLLBACK TO SAVEPOINT B");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1"]);
    assert_eq!(err(&mut s, "ROLLBACK TO a"), 1305);
    // RELEASE forgets the savepoint and the later ones, and undoes nothing.
    q(&mut s, "SAVEPOINT c");
    q(&mut s, "INSERT INTO t VALUES (4, 4)");
    q(&mut s, "RELEASE SAVEPOINT b");
    assert_eq!(err(&mut s, "ROLLBACK TO c"), 1305);
    assert_eq!(err(&mut s, "RELEASE SAVEPOINT b"), 1305);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "4"]);
    q(&mut s, "SAVEPOINT d");
    q(&mut s, "COMMIT");
    assert_eq!(err(&mut s, "ROLLBACK TO d"), 1305);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "4"]);

    // ROLLBACK forgets them too; DDL commits and forgets them.
    q(&mut s, "BEGIN");
    q(&mut s, "SAVEPOINT e");
    q(&mut s, "ROLLBACK");
    assert_eq!(err(&mut s, "ROLLBACK TO e"), 1305);
    q(&mut s, "BEGIN");
    q(&mut s, "SAVEPOINT f");
    q(&mut s, "INSERT INTO t VALUES (6, 6)");
    q(&mut s, "CREATE TABLE u (a INT)");
    assert_eq!(err(&mut s, "ROLLBACK TO f"), 1305);
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE id = 6"), ["6"]);
    // BEGIN commits the open transaction and its savepoints go.
    q(&mut s, "BEGIN");
    q(&mut s, "SAVEPOINT g");
    q(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "ROLLBACK TO g"), 1305);
    q(&mut s, "COMMIT");
}

#[test]
fn failed_statement_keeps_savepoints() {
    let db = TestDb::open("sp-failed");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "INSERT INTO t VALUES (1, 1)");
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (2, 2)");
    q(&mut s, "SAVEPOINT a");
    q(&mut s, "INSERT INTO t VALUES (3, 3)");
    // A failing statement undoes only itself.
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (4, 4), (1, 1)"), 1062);
    q(&mut s, "SAVEPOINT b");
    q(&mut s, "INSERT INTO t VALUES (5, 5)");
    q(&mut s, "ROLLBACK TO b");
    assert_eq!(
        rows(&mut s, "SELECT id FROM t ORDER BY id"),
        ["1", "2", "3"]
    );
    q(&mut s, "ROLLBACK TO a");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
    q(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1", "2"]);
}

#[test]
fn autocommit_off_opens_the_transaction() {
    let db = TestDb::open("sp-autocommit");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "SET autocommit = 0");
    // Before any statement of the transaction.
    q(&mut s, "SAVEPOINT x");
    q(&mut s, "INSERT INTO t VALUES (8, 8)");
    q(&mut s, "SAVEPOINT y");
    q(&mut s, "INSERT INTO t VALUES (9, 9)");
    q(&mut s, "ROLLBACK TO y");
    q(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["8"]);
    q(&mut s, "SAVEPOINT x");
    q(&mut s, "DELETE FROM t");
    q(&mut s, "ROLLBACK TO x");
    q(&mut s, "COMMIT");
    q(&mut s, "SET autocommit = 1");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["8"]);
}

#[test]
fn locks_stay_held_after_rollback_to_savepoint() {
    let db = TestDb::open("sp-locks");
    let mut a = session_in_d(&db);
    let mut b = session_in_d(&db);
    setup(&mut a);
    q(&mut a, "INSERT INTO t VALUES (1, 1), (2, 2)");
    q(&mut a, "BEGIN");
    q(&mut a, "SAVEPOINT s");
    q(&mut a, "UPDATE t SET v = 100 WHERE id = 1");
    q(&mut a, "ROLLBACK TO s");
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    // The row lock taken after the savepoint is still held (InnoDB keeps it).
    assert_eq!(err(&mut b, "UPDATE t SET v = 5 WHERE id = 1"), 1205);
    q(&mut b, "UPDATE t SET v = 6 WHERE id = 2");
    q(&mut a, "COMMIT");
    q(&mut b, "UPDATE t SET v = 5 WHERE id = 1");
    assert_eq!(rows(&mut a, "SELECT * FROM t ORDER BY id"), ["1|5", "2|6"]);
}

#[test]
fn commit_and_rollback_and_chain() {
    let db = TestDb::open("sp-chain");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "START TRANSACTION READ ONLY");
    q(&mut s, "COMMIT AND CHAIN");
    // The chained transaction keeps the access mode.
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (1, 1)"), 1792);
    q(&mut s, "ROLLBACK AND NO CHAIN");
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (1, 1)");
    q(&mut s, "SAVEPOINT a");
    q(&mut s, "COMMIT WORK AND CHAIN");
    assert_eq!(err(&mut s, "ROLLBACK TO a"), 1305);
    q(&mut s, "INSERT INTO t VALUES (2, 2)");
    // Still in a transaction: this rollback undoes the second insert.
    q(&mut s, "ROLLBACK AND CHAIN");
    q(&mut s, "INSERT INTO t VALUES (3, 3)");
    q(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id"), ["1"]);
    // The isolation level carries over: READ COMMITTED sees another session's
    // commit within the chained transaction; REPEATABLE READ does not.
    let mut b = session_in_d(&db);
    q(&mut s, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    q(&mut s, "BEGIN");
    q(&mut s, "COMMIT AND CHAIN");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["1"]);
    q(&mut b, "INSERT INTO t VALUES (4, 4)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["2"]);
    q(&mut s, "COMMIT");
    q(&mut s, "BEGIN");
    q(&mut s, "ROLLBACK AND CHAIN");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["2"]);
    q(&mut b, "INSERT INTO t VALUES (5, 5)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["2"]);
    q(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["3"]);
}
