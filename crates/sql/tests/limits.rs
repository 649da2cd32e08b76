//! A definition the server accepts can always be read back (issue 14 item 4): every limit
//! the catalog decoder enforces is checked at DDL time with MySQL's error, lengths never wrap
//! or get clamped, and one unreadable table definition, database record or pending-rebuild
//! record does not keep the others from opening (nor is it ever rewritten).
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session};
use std::path::Path;
use std::sync::Arc;

fn open(dir: &Path) -> Arc<Instance> {
    let o = InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    Instance::open(dir, &o).unwrap()
}

fn ok(s: &mut Session, sql: &str) -> Vec<Vec<sql::Value>> {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{}: {e}", &sql[..sql.len().min(200)]));
    c.rows
}

fn err(s: &mut Session, sql: &str) -> u16 {
    let mut c = Collect::default();
    match s.query(sql, &mut c) {
        Ok(_) => panic!("accepted: {}", &sql[..sql.len().min(200)]),
        Err(e) => e.code,
    }
}

#[test]
fn definitions_over_the_limits_are_refused_with_mysql_errors() {
    let dir = testkit::unique_temp_path("sql-limits");
    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    let cols = |n: usize| {
        (0..n)
            .map(|i| format!("c{i} INT"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        err(&mut s, &format!("CREATE TABLE t ({})", cols(4097))),
        1117
    );
    ok(&mut s, &format!("CREATE TABLE wide ({})", cols(4096)));
    let keys = |n: usize| {
        (0..n)
            .map(|i| format!("KEY k{i} (c{i})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        err(
            &mut s,
            &format!("CREATE TABLE t ({}, {})", cols(70), keys(65))
        ),
        1069
    );
    ok(
        &mut s,
        &format!("CREATE TABLE t64 ({}, {})", cols(70), keys(64)),
    );
    assert_eq!(err(&mut s, "CREATE INDEX k64 ON t64 (c64)"), 1069);
    let parts = (0..17)
        .map(|i| format!("c{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        err(
            &mut s,
            &format!("CREATE TABLE t ({}, KEY kp ({parts}))", cols(20))
        ),
        1070
    );
    ok(&mut s, &format!("CREATE TABLE t20 ({})", cols(20)));
    assert_eq!(
        err(&mut s, &format!("CREATE INDEX kp ON t20 ({parts})")),
        1070
    );
    let long = "x".repeat(65);
    // A table name over 64 characters is 1103 in MariaDB 10.11 (names.rs).
    assert_eq!(err(&mut s, &format!("CREATE TABLE {long} (a INT)")), 1103);
    assert_eq!(err(&mut s, &format!("CREATE TABLE t (`{long}` INT)")), 1059);
    assert_eq!(
        err(&mut s, &format!("CREATE TABLE t (a INT, KEY `{long}` (a))")),
        1059
    );
    assert_eq!(err(&mut s, "CREATE TABLE t (a VARCHAR(4294967297))"), 1074);
    assert_eq!(err(&mut s, "CREATE TABLE t (a VARCHAR(16384))"), 1074);
    assert_eq!(err(&mut s, "CREATE TABLE t (a CHAR(256))"), 1074);
    assert_eq!(err(&mut s, "CREATE TABLE t (a INT(256))"), 1439);
    assert_eq!(err(&mut s, "CREATE TABLE t (a DECIMAL(65,2))"), 1426);
    assert_eq!(err(&mut s, "CREATE TABLE t (a DECIMAL(10,31))"), 1425);
    assert_eq!(err(&mut s, "CREATE TABLE t (a DATETIME(7))"), 1426);
    ok(
        &mut s,
        "CREATE TABLE fine (a VARCHAR(16383), b CHAR(255), c DECIMAL(38,30), d DATETIME(6))",
    );
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    // Everything accepted opens again.
    let inst = open(&dir);
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM wide").len(), 1);
    assert_eq!(ok(&mut s, "SHOW TABLES").len(), 4);
    drop(s);
    inst.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreadable_table_definition_does_not_stop_the_others() {
    let dir = testkit::unique_temp_path("sql-unreadable");
    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(&mut s, "CREATE TABLE good (a INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO good VALUES (1), (2)");
    ok(&mut s, "CREATE TABLE bad (a INT PRIMARY KEY)");
    drop(s);
    // Damage bad's stored definition (catalog key: index 1, 'T', db, 0, name).
    let mut k = rel::keycodec::index_prefix(rel::catalog::CATALOG_INDEX_ID).to_vec();
    k.extend_from_slice(b"Td\0bad");
    inst.txdb.db().put(&k, b"\x01\xff\xffgarbage").unwrap();
    inst.shutdown().unwrap();
    drop(inst);
    let inst = open(&dir);
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM good")[0][0].text(), b"2");
    assert_eq!(err(&mut s, "SELECT * FROM bad"), 1030);
    assert_eq!(err(&mut s, "CREATE TABLE bad (a INT)"), 1050);
    // DROP TABLE removes it (its rows' index ids are unknown: a warning says
    // they stay), and the name is free again.
    ok(&mut s, "DROP TABLE bad");
    let w = ok(&mut s, "SHOW WARNINGS");
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0][1].text(), b"1030");
    assert!(String::from_utf8_lossy(&w[0][2].text()).contains("`d`.`bad`"));
    assert_eq!(err(&mut s, "SELECT * FROM bad"), 1146);
    ok(&mut s, "CREATE TABLE bad (a INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO bad VALUES (7)");
    assert_eq!(ok(&mut s, "SELECT a FROM bad")[0][0].text(), b"7");
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    // And it stays gone after a restart.
    let inst = open(&dir);
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(ok(&mut s, "SELECT a FROM bad")[0][0].text(), b"7");
    drop(s);
    inst.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Catalog key of a table or view record (index 1, tag, db, 0, name).
fn named_record_key(tag: u8, db: &str, name: &str) -> Vec<u8> {
    let mut k = rel::keycodec::index_prefix(rel::catalog::CATALOG_INDEX_ID).to_vec();
    k.push(tag);
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

#[test]
fn unreadable_views_and_tables_go_with_drop_view_and_drop_database() {
    let dir = testkit::unique_temp_path("sql-unreadable-drop");
    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    for st in [
        "CREATE DATABASE d",
        "CREATE TABLE d.t (a INT PRIMARY KEY)",
        "INSERT INTO d.t VALUES (1)",
        "CREATE VIEW d.v AS SELECT a FROM d.t",
        "CREATE VIEW d.w AS SELECT a FROM d.t",
        "CREATE DATABASE e",
        "CREATE TABLE e.bad (a INT PRIMARY KEY)",
        "CREATE VIEW e.badv AS SELECT 1 AS x",
    ] {
        ok(&mut s, st);
    }
    drop(s);
    let db = inst.txdb.db();
    for (tag, d, n) in [(b'V', "d", "v"), (b'T', "e", "bad"), (b'V', "e", "badv")] {
        db.put(&named_record_key(tag, d, n), b"\xee\xff garbage")
            .unwrap();
    }
    inst.shutdown().unwrap();
    drop(inst);

    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    assert_eq!(err(&mut s, "SELECT * FROM d.v"), 1030);
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM d.w")[0][0].text(), b"1");
    // DROP TABLE names no view, readable or not.
    assert_eq!(err(&mut s, "DROP TABLE d.v"), 1965);
    ok(&mut s, "DROP VIEW d.v");
    assert_eq!(err(&mut s, "SELECT * FROM d.v"), 1146);
    ok(&mut s, "CREATE VIEW d.v AS SELECT a + 1 AS b FROM d.t");
    assert_eq!(ok(&mut s, "SELECT b FROM d.v")[0][0].text(), b"2");
    // DROP DATABASE takes the unreadable table and view with it.
    assert_eq!(err(&mut s, "SELECT * FROM e.bad"), 1030);
    ok(&mut s, "DROP DATABASE e");
    let db = inst.txdb.db();
    assert_eq!(db.get(&named_record_key(b'T', "e", "bad")).unwrap(), None);
    assert_eq!(db.get(&named_record_key(b'V', "e", "badv")).unwrap(), None);
    assert!(db.get(&named_record_key(b'V', "d", "v")).unwrap().is_some());
    ok(&mut s, "CREATE DATABASE e");
    assert_eq!(err(&mut s, "SELECT * FROM e.bad"), 1146);
    ok(&mut s, "CREATE TABLE e.bad (a INT)");
    ok(&mut s, "CREATE VIEW e.badv AS SELECT 2 AS x");
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = open(&dir);
    let db = inst.txdb.db();
    assert!(db
        .get(&named_record_key(b'V', "e", "badv"))
        .unwrap()
        .is_some());
    let mut s = inst.session(1, "root", None);
    assert_eq!(ok(&mut s, "SELECT x FROM e.badv")[0][0].text(), b"2");
    assert_eq!(ok(&mut s, "SELECT b FROM d.v")[0][0].text(), b"2");
    drop(s);
    inst.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Catalog key of a database record (index 1, 'D', name).
fn db_record_key(name: &str) -> Vec<u8> {
    let mut k = rel::keycodec::index_prefix(rel::catalog::CATALOG_INDEX_ID).to_vec();
    k.push(b'D');
    k.extend_from_slice(name.as_bytes());
    k
}

#[test]
fn an_unreadable_database_record_does_not_stop_the_others() {
    let dir = testkit::unique_temp_path("sql-unreadable-db");
    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    for st in [
        "CREATE DATABASE good",
        "CREATE TABLE good.t (a INT PRIMARY KEY)",
        "INSERT INTO good.t VALUES (1)",
        "CREATE DATABASE bad",
        "CREATE TABLE bad.t (a INT PRIMARY KEY, b VARCHAR(10))",
        "INSERT INTO bad.t VALUES (1, 'x'), (2, 'y')",
        "CREATE DATABASE bad2",
    ] {
        ok(&mut s, st);
    }
    drop(s);
    // bad: a collation id no release has; bad2: a format from the future;
    // and a pending-rebuild record that does not decode.
    let db = inst.txdb.db();
    db.put(&db_record_key("bad"), &[2, 0xff, 0xff]).unwrap();
    db.put(&db_record_key("bad2"), &[9, 1, 2, 3]).unwrap();
    let mut p = rel::keycodec::index_prefix(rel::catalog::CATALOG_INDEX_ID).to_vec();
    p.extend_from_slice(b"P\x00\x01");
    db.put(&p, b"\x07").unwrap();
    inst.shutdown().unwrap();
    drop(inst);

    let inst = open(&dir);
    let mut s = inst.session(1, "root", None);
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM good.t")[0][0].text(), b"1");
    ok(&mut s, "CREATE TABLE good.u (a INT)");
    // The database exists and its tables open.
    let dbs: Vec<Vec<u8>> = ok(&mut s, "SHOW DATABASES")
        .into_iter()
        .map(|r| r[0].text())
        .collect();
    assert!(dbs.contains(&b"bad".to_vec()) && dbs.contains(&b"bad2".to_vec()));
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM bad.t")[0][0].text(), b"2");
    ok(&mut s, "USE bad");
    assert!(ok(&mut s, "SELECT @@collation_database")[0][0].is_null());
    let r = ok(
        &mut s,
        "SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA \
         WHERE SCHEMA_NAME IN ('bad', 'good') ORDER BY SCHEMA_NAME",
    );
    assert!(r[0][0].is_null());
    assert_eq!(r[1][0].text(), b"utf8mb4_general_ci");
    // What needs its default collation fails, naming the problem.
    let mut c = Collect::default();
    let e = s.query("CREATE TABLE bad.u (a INT)", &mut c).unwrap_err();
    assert_eq!(e.code, 1030);
    assert!(
        e.msg.contains("database 'bad'") && e.msg.contains("unknown collation id 65535"),
        "{e:?}"
    );
    let e = s.query("SHOW CREATE DATABASE bad2", &mut c).unwrap_err();
    assert!(e.msg.contains("unknown record format"), "{e:?}");
    // Never overwritten behind the user's back.
    assert_eq!(err(&mut s, "CREATE DATABASE bad"), 1007);
    ok(&mut s, "CREATE DATABASE IF NOT EXISTS bad");
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);

    let inst = open(&dir);
    let db = inst.txdb.db();
    assert_eq!(
        db.get(&db_record_key("bad")).unwrap(),
        Some(vec![2, 0xff, 0xff])
    );
    assert_eq!(db.get(&p).unwrap(), Some(b"\x07".to_vec()));
    // ALTER DATABASE with a new default repairs it.
    let mut s = inst.session(1, "root", None);
    ok(&mut s, "ALTER DATABASE bad COLLATE utf8mb4_bin");
    ok(&mut s, "CREATE TABLE bad.u (a VARCHAR(5))");
    let r = ok(&mut s, "SHOW CREATE DATABASE bad");
    assert!(String::from_utf8_lossy(&r[0][1].text()).contains("utf8mb4_bin"));
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM bad.t")[0][0].text(), b"2");
    ok(&mut s, "DROP DATABASE bad2");
    drop(s);
    inst.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
