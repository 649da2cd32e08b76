//! Names MariaDB refuses and names it gives. A database, table, view,
//! column or index name may not be empty or end with a space (1102, 1103,
//! 1166, 1280), a database or table name not be over 64 characters (1102,
//! 1103); Strata created all of these. An unaliased select item that is a
//! string literal is named by its text (`'abc'` names its column abc, not
//! 'abc'), TRUE, FALSE and NULL in capitals. Every expected answer was
//! checked on MariaDB 10.11.
#![allow(clippy::unwrap_used)]
mod common;
use common::{err, q, rows, session_in_d, TestDb};

#[test]
fn empty_and_space_ended_names_are_refused() {
    let db = TestDb::open("names-bad");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY, b INT)");
    q(&mut s, "CREATE TABLE p (a INT PRIMARY KEY)");
    let long = "x".repeat(65);
    for (sql, code) in [
        ("CREATE DATABASE `d1 `".to_string(), 1102),
        ("CREATE DATABASE ``".to_string(), 1102),
        (format!("CREATE DATABASE {long}"), 1102),
        ("DROP DATABASE `d1 `".to_string(), 1102),
        ("CREATE TABLE `t1 ` (a INT)".to_string(), 1103),
        ("CREATE TABLE `` (a INT)".to_string(), 1103),
        (format!("CREATE TABLE {long} (a INT)"), 1103),
        ("CREATE VIEW `v1 ` AS SELECT 1".to_string(), 1103),
        (format!("CREATE VIEW {long} AS SELECT 1"), 1103),
        ("RENAME TABLE t TO `t2 `".to_string(), 1103),
        ("ALTER TABLE t RENAME TO ``".to_string(), 1103),
        ("CREATE TABLE e1 (`` INT)".to_string(), 1166),
        ("CREATE TABLE e2 (`a ` INT)".to_string(), 1166),
        ("ALTER TABLE t ADD COLUMN `c ` INT".to_string(), 1166),
        ("ALTER TABLE t CHANGE b `` INT".to_string(), 1166),
        ("ALTER TABLE t RENAME COLUMN b TO `c `".to_string(), 1166),
        ("CREATE TABLE e3 AS SELECT ''".to_string(), 1166),
        ("CREATE TABLE e4 (a INT, KEY `` (a))".to_string(), 1280),
        ("CREATE TABLE e5 (a INT, KEY `k ` (a))".to_string(), 1280),
        ("CREATE INDEX `k ` ON t (b)".to_string(), 1280),
        ("ALTER TABLE t ADD INDEX `k ` (b)".to_string(), 1280),
        (
            "CREATE TABLE e6 (a INT, CONSTRAINT `f ` FOREIGN KEY (a) REFERENCES p (a))".to_string(),
            1280,
        ),
    ] {
        assert_eq!(err(&mut s, &sql), code, "{sql}");
    }
    // Nothing was created or renamed.
    assert_eq!(rows(&mut s, "SHOW TABLES"), ["p", "t"]);
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE '%d1%' OR schema_name = ''"),
        ["0"]
    );
    assert_eq!(
        rows(&mut s, "SELECT column_name FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position"),
        ["a", "b"]
    );
    // A name with a space inside, or starting with one, is fine.
    q(&mut s, "CREATE TABLE `x y` (` a` INT, KEY `k k` (` a`))");
}

#[test]
fn a_literal_select_item_is_named_by_its_value() {
    let db = TestDb::open("names-literal");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE c AS SELECT 'abc', 'it''s', _latin1'z', N'q', true, False, null, 1 + 1",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'c' \
             ORDER BY ordinal_position"
        ),
        ["abc", "it's", "z", "q", "TRUE", "FALSE", "NULL", "1 + 1"]
    );
    assert_eq!(rows(&mut s, "SELECT abc, `it's` FROM c"), ["abc|it's"]);
    assert_eq!(rows(&mut s, "SELECT x FROM (SELECT 'x') d"), ["x"]);
    assert_eq!(err(&mut s, "SELECT * FROM (SELECT 'a', 'a') d"), 1060);
}
