//! SQL-level prepared statements (PREPARE / EXECUTE ... USING / DEALLOCATE and DROP
//! PREPARE) and user variables assigned with `:=` inside expressions and SET, with
//! MySQL's errors (1243 unknown statement, 1210 wrong argument count, 1295 PREPARE of
//! PREPARE) as MariaDB answers them (the diff corpus runs the same statements on
//! both).
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, rows, session_in_d, TestDb};
use sql::Session;

fn session(db: &TestDb) -> Session {
    let mut s = session_in_d(db);
    q(
        &mut s,
        "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY, v INT)",
    );
    s
}

#[test]
fn prepare_execute_deallocate() {
    let db = TestDb::open("prep-sql");
    let mut s = session(&db);
    q(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    q(&mut s, "PREPARE s FROM 'SELECT ? + ?, ?'");
    q(&mut s, "SET @a = 1, @b = 2");
    assert_eq!(rows(&mut s, "EXECUTE s USING @a, @b, 3"), ["3|3"]);
    assert_eq!(err(&mut s, "EXECUTE s USING @a, @b"), 1210);
    assert_eq!(err(&mut s, "EXECUTE s"), 1210);
    assert_eq!(err(&mut s, "EXECUTE nosuch"), 1243);
    assert_eq!(err(&mut s, "DEALLOCATE PREPARE nosuch"), 1243);
    // From a user variable; a name prepared again replaces the statement.
    q(&mut s, "SET @q = 'SELECT v FROM t WHERE id = ?'");
    q(&mut s, "PREPARE s2 FROM @q");
    assert_eq!(rows(&mut s, "EXECUTE s2 USING @b"), ["20"]);
    q(&mut s, "PREPARE S2 FROM 'SELECT 2'");
    assert_eq!(rows(&mut s, "EXECUTE s2"), ["2"]);
    q(&mut s, "DROP PREPARE s2");
    assert_eq!(err(&mut s, "EXECUTE s2"), 1243);
    // A failed PREPARE leaves no statement of that name.
    q(&mut s, "PREPARE s3 FROM 'SELECT 3'");
    assert_eq!(
        err(&mut s, "PREPARE s3 FROM 'SELECT nosuchcol FROM t'"),
        1054
    );
    assert_eq!(err(&mut s, "EXECUTE s3"), 1243);
    assert_eq!(
        err(&mut s, "PREPARE s3 FROM 'PREPARE s4 FROM ''SELECT 1'''"),
        1295
    );
    assert_eq!(err(&mut s, "PREPARE s3 FROM 'SELECT 1; SELECT 2'"), 1064);
    q(&mut s, "SET @nn = NULL");
    assert_eq!(err(&mut s, "PREPARE s3 FROM @nn"), 1064);
    assert_eq!(err(&mut s, "PREPARE s3 FROM 12"), 1064);
    // Writes, SET and transaction control can be prepared.
    q(&mut s, "PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'");
    q(&mut s, "EXECUTE ins USING 4, 40");
    assert_eq!(err(&mut s, "EXECUTE ins USING 4, 41"), 1062);
    q(&mut s, "PREPARE setv FROM 'SET @zz = ? * 2'");
    q(&mut s, "EXECUTE setv USING 21");
    assert_eq!(rows(&mut s, "SELECT @zz"), ["42"]);
    q(&mut s, "PREPARE sp FROM 'SAVEPOINT p'");
    q(&mut s, "BEGIN");
    q(&mut s, "EXECUTE sp");
    q(&mut s, "DELETE FROM t");
    q(&mut s, "ROLLBACK TO p");
    q(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["4"]);
    // Re-planned after DDL.
    q(
        &mut s,
        "PREPARE cnt FROM 'SELECT COUNT(*) FROM t WHERE v > ?'",
    );
    assert_eq!(rows(&mut s, "EXECUTE cnt USING 15"), ["3"]);
    q(&mut s, "ALTER TABLE t ADD INDEX kv (v)");
    assert_eq!(rows(&mut s, "EXECUTE cnt USING 25"), ["2"]);
    // Expressions as arguments (MariaDB accepts them; MySQL only variables).
    assert_eq!(rows(&mut s, "EXECUTE cnt USING 10 + 5"), ["3"]);
    q(&mut s, "DEALLOCATE PREPARE cnt");
    assert_eq!(err(&mut s, "EXECUTE cnt USING 1"), 1243);
}

#[test]
fn named_statements_count_and_close_with_the_session() {
    let db = TestDb::open("prep-count");
    let mut s = session(&db);
    let before = db.inst.prepared.load(std::sync::atomic::Ordering::Acquire);
    q(&mut s, "PREPARE a FROM 'SELECT 1'");
    q(&mut s, "PREPARE b FROM 'SELECT 2'");
    q(&mut s, "PREPARE a FROM 'SELECT 3'");
    let now = db.inst.prepared.load(std::sync::atomic::Ordering::Acquire);
    assert_eq!(now, before + 2);
    q(&mut s, "DEALLOCATE PREPARE b");
    let now = db.inst.prepared.load(std::sync::atomic::Ordering::Acquire);
    assert_eq!(now, before + 1);
    drop(s);
    let now = db.inst.prepared.load(std::sync::atomic::Ordering::Acquire);
    assert_eq!(now, before);
}

#[test]
fn user_variable_assignment_in_expressions() {
    let db = TestDb::open("uservar-assign");
    let mut s = session(&db);
    q(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
    q(&mut s, "SET @v := 5");
    assert_eq!(rows(&mut s, "SELECT @v"), ["5"]);
    q(&mut s, "SET @n := 0, @m = 7");
    assert_eq!(rows(&mut s, "SELECT @n, @m"), ["0|7"]);
    assert_eq!(
        rows(&mut s, "SELECT @n := @n + 1 AS rn, id FROM t ORDER BY id"),
        ["1|1", "2|2", "3|3"]
    );
    assert_eq!(rows(&mut s, "SELECT @n"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT @x := 3, @x + 1"), ["3|4"]);
    assert_eq!(rows(&mut s, "SELECT (@y := 2) + @y"), ["4"]);
    assert_eq!(rows(&mut s, "SELECT @u1 := @u2 := 4, @u1, @u2"), ["4|4|4"]);
    // Lowest precedence: the whole comparison is assigned.
    assert_eq!(rows(&mut s, "SELECT @c := 1 = 1, @c"), ["1|1"]);
    assert_eq!(rows(&mut s, "SELECT @r := NULL, @r IS NULL"), ["NULL|1"]);
    // The row-number idiom with a derived table initializing the variable.
    assert_eq!(
        rows(
            &mut s,
            "SELECT @rownum := @rownum + 1 AS rn, x.id FROM t x, (SELECT @rownum := 0) r ORDER BY x.id"
        ),
        ["1|1", "2|2", "3|3"]
    );
    // Running total through UPDATE.
    q(&mut s, "SET @q = 100");
    q(&mut s, "UPDATE t SET v = (@q := @q + v)");
    assert_eq!(
        rows(&mut s, "SELECT v FROM t ORDER BY id"),
        ["110", "130", "160"]
    );
    assert_eq!(rows(&mut s, "SELECT @q"), ["160"]);
    // In WHERE: evaluated per row, never used as an index probe.
    q(&mut s, "SET @k = 0");
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t WHERE id = (@k := @k + 1) ORDER BY id"
        ),
        ["1", "2", "3"]
    );
    // A failing statement keeps the assignments made before the error.
    q(&mut s, "SET @e = 0");
    assert_eq!(
        err(&mut s, "INSERT INTO t VALUES (4, @e := 5), (1, 1)"),
        1062
    );
    assert_eq!(rows(&mut s, "SELECT @e"), ["5"]);
    assert_eq!(err(&mut s, "SELECT 1 := 1"), 1064);
    assert_eq!(err(&mut s, "SELECT @@autocommit := 1"), 1064);
    // SET with := and a SET value that assigns.
    q(&mut s, "SET @s1 := (@s2 := 6) + 1");
    assert_eq!(rows(&mut s, "SELECT @s1, @s2"), ["7|6"]);
    q(&mut s, "SET SESSION sql_select_limit := 2, @w := 'a:=b'");
    assert_eq!(rows(&mut s, "SELECT @w"), ["a:=b"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t ORDER BY id").len(), 2);
    q(&mut s, "SET sql_select_limit = DEFAULT");
}
