//! Files written by mariadb-dump load: the `/*!NNNNN ... */` and `/*M!... */` statements
//! they open and close with (saving variables in user variables and restoring them),
//! LOCK TABLES, ALTER TABLE ... DISABLE/ENABLE KEYS, MariaDB's CREATE TABLE text.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
mod common;
use common::{q, texts, TestDb};

/// Splits a dump into statements (`;` at the end of a line, as mariadb-dump writes them).
fn statements(dump: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in dump.lines() {
        if line.starts_with("--") || line.trim().is_empty() {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if line.ends_with(';') {
            out.push(
                std::mem::take(&mut cur)
                    .trim_end()
                    .trim_end_matches(';')
                    .to_string(),
            );
        }
    }
    out
}

#[test]
fn a_mariadb_dump_file_loads_and_restores_the_session() {
    let db = TestDb::open("sql-dump-load");
    let mut s = db.session(1, "root", None);
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    let before = texts(q(
        &mut s,
        "SELECT @@foreign_key_checks, @@unique_checks, @@sql_mode, @@time_zone, @@sql_notes",
    ));
    for st in statements(include_str!("data/mariadb_dump_sample.sql")) {
        let mut c = Collect::default();
        if let Err(e) = s.query(&st, &mut c) {
            panic!("{st}\n  -> {e}");
        }
    }
    assert_eq!(
        texts(q(&mut s, "SELECT * FROM t ORDER BY id")),
        vec!["1|a", "2|NULL"]
    );
    let after = texts(q(
        &mut s,
        "SELECT @@foreign_key_checks, @@unique_checks, @@sql_mode, @@time_zone, @@sql_notes",
    ));
    assert_eq!(after, before, "the dump's epilogue restores the session");
}
