//! The memo of hot variables (`varmemo`): a statement after a SET, SESSION or
//! GLOBAL, in this or another session, sees the new value, never the one the
//! memo held (sql_mode parsed, sql_select_limit, transaction_read_only,
//! global reads), also through prepared statements.
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, rows, session_in_d, TestDb};
use sql::Session;

fn cell(s: &mut Session, sql: &str) -> String {
    rows(s, sql).join("\n")
}

#[test]
fn sql_mode_changes_take_effect_at_once() {
    let db = TestDb::open("varmemo-sqlmode");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE t (a INT)");
    for round in 0..3 {
        q(
            &mut s,
            "SET sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO'",
        );
        assert_eq!(
            err(&mut s, "INSERT INTO t VALUES (1/0)"),
            1365,
            "round {round}"
        );
        q(&mut s, "SET @@session.sql_mode = ''");
        q(&mut s, "INSERT INTO t VALUES (1/0)");
        assert_eq!(cell(&mut s, "SELECT @@sql_mode"), "");
    }
    assert_eq!(cell(&mut s, "SELECT COUNT(*) FROM t WHERE a IS NULL"), "3");
}

#[test]
fn session_settings_change_the_next_statement() {
    let db = TestDb::open("varmemo-session");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut s, "INSERT INTO t VALUES (1), (2), (3)");
    let count = |s: &mut Session| rows(s, "SELECT a FROM t").len();
    assert_eq!(count(&mut s), 3);
    q(&mut s, "SET sql_select_limit = 1");
    assert_eq!(count(&mut s), 1);
    q(&mut s, "SET sql_select_limit = DEFAULT");
    assert_eq!(count(&mut s), 3);

    // A prepared statement reads the variables when it runs.
    let mut c = sql::result::Collect::default();
    let id = s.prepare("SELECT a FROM t WHERE a > ?").unwrap().0;
    let mut run = |s: &mut Session| {
        c.rows.clear();
        s.execute_prepared(id, &[sql::Value::Int(0)], &mut c)
            .unwrap();
        c.rows.len()
    };
    assert_eq!(run(&mut s), 3);
    q(&mut s, "SET sql_select_limit = 2");
    assert_eq!(run(&mut s), 2);
    q(&mut s, "SET sql_select_limit = DEFAULT");
    assert_eq!(run(&mut s), 3);

    q(&mut s, "SET SESSION transaction_read_only = 1");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (4)"), 1792);
    q(&mut s, "SET SESSION transaction_read_only = 0");
    q(&mut s, "INSERT INTO t VALUES (4)");

    // max_statement_time (kept as seconds, parsed once per change).
    for _ in 0..2 {
        q(&mut s, "SELECT SLEEP(0.01)");
        q(&mut s, "SET max_statement_time = 0.05");
        assert_eq!(err(&mut s, "SELECT SLEEP(2)"), 1969);
        q(&mut s, "SET max_statement_time = 0");
    }
}

#[test]
fn global_changes_are_seen_by_every_session() {
    let db = TestDb::open("varmemo-global");
    let mut a = session_in_d(&db);
    let mut b = session_in_d(&db);
    assert_eq!(cell(&mut a, "SELECT @@global.long_query_time"), "10.000000");
    q(&mut b, "SET GLOBAL long_query_time = 2.5");
    assert_eq!(cell(&mut a, "SELECT @@global.long_query_time"), "2.500000");
    assert_eq!(cell(&mut b, "SELECT @@global.long_query_time"), "2.500000");
    // The session value is kept apart from the global one.
    q(&mut a, "SET long_query_time = 1");
    assert_eq!(cell(&mut a, "SELECT @@long_query_time"), "1.000000");
    assert_eq!(cell(&mut a, "SELECT @@global.long_query_time"), "2.500000");
    q(&mut b, "SET GLOBAL long_query_time = 3");
    assert_eq!(cell(&mut a, "SELECT @@global.long_query_time"), "3.000000");
    assert_eq!(cell(&mut a, "SELECT @@long_query_time"), "1.000000");
}
