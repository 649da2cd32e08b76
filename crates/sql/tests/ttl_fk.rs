//! Foreign keys over TTL tables (review of e1939e4): an UPDATE or INSERT
//! ... ON DUPLICATE KEY UPDATE that moves a row onto an expired row's
//! primary key replaces it as a delete would (its values' children get
//! their ON DELETE action), and an expired child removed by a cascade is
//! removed as compaction removes it, doing nothing to its own children.
#![allow(clippy::unwrap_used)]

mod common;
use common::ttl::{insert_at, ttl_parent_with_children};
use common::{check_ok, fails, q, rows, session_in_d, TestDb};
use sql::Session;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// How `sql` ended (panics if it fails).
fn outcome(s: &mut Session, stmt: &str) -> sql::result::Outcome {
    let mut c = sql::result::Collect::default();
    s.query(stmt, &mut c)
        .unwrap_or_else(|e| panic!("{stmt}: {e}"))
}

#[test]
fn moving_a_key_onto_an_expired_parent_acts_on_its_children() {
    let _g = serial();
    let db = TestDb::open("ttlfk-move");
    let mut s = session_in_d(&db);
    ttl_parent_with_children(&mut s, "INT", &["k"]);
    insert_at(
        &mut s,
        -300,
        "INSERT INTO p VALUES (1, 10), (2, 20), (3, 30)",
    );
    q(&mut s, "INSERT INTO p VALUES (5, 50), (6, 60), (7, 70)");
    q(&mut s, "INSERT INTO c VALUES (1, 10), (3, 30)");
    q(&mut s, "INSERT INTO r VALUES (2, 20)");
    q(&mut s, "UPDATE p SET id = 1, k = 51 WHERE id = 5");
    assert_eq!(rows(&mut s, "SELECT id, pk FROM c"), ["3|30"]);
    // RESTRICT: the value another table needs stays.
    assert_eq!(
        fails(&mut s, "UPDATE p SET id = 2, k = 61 WHERE id = 6").0,
        1451
    );
    q(
        &mut s,
        "INSERT INTO p VALUES (7, 0) ON DUPLICATE KEY UPDATE id = 3, k = 71",
    );
    assert_eq!(rows(&mut s, "SELECT id, pk FROM c"), Vec::<String>::new());
    assert_eq!(
        rows(&mut s, "SELECT id, k FROM p ORDER BY id"),
        ["1|51", "3|71", "6|60"]
    );
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(rows(&mut s, "SELECT id, pk FROM c"), Vec::<String>::new());
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
    check_ok(&mut s, "c");
}

#[test]
fn an_expired_child_cascaded_away_leaves_its_children() {
    let _g = serial();
    let db = TestDb::open("ttlfk-grand");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut s,
        "CREATE TABLE g (id INT PRIMARY KEY, pid INT, KEY kp (pid), \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE) \
         COMMENT='ttl_duration=100;'",
    );
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, gid INT, KEY kg (gid), \
         FOREIGN KEY (gid) REFERENCES g (id) ON DELETE CASCADE)",
    );
    q(&mut s, "INSERT INTO p VALUES (1), (2)");
    insert_at(&mut s, -300, "INSERT INTO g VALUES (1, 1), (2, 2)");
    q(&mut s, "INSERT INTO c VALUES (1, 1), (2, 2)");
    // Compaction would remove the expired g rows and leave c alone.
    q(&mut s, "DELETE FROM p WHERE id = 1");
    q(&mut s, "UPDATE p SET id = 3 WHERE id = 2");
    assert_eq!(
        rows(&mut s, "SELECT id, gid FROM c ORDER BY id"),
        ["1|1", "2|2"]
    );
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(rows(&mut s, "SELECT id FROM g"), Vec::<String>::new());
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
}

/// Review of e1939e4, MED6: INSERT IGNORE turns the foreign key errors of a
/// row into warnings and skips it (MariaDB's IGNORE: 1452 for a missing
/// parent, here also 1451 for an expired parent row whose RESTRICT children
/// keep it), counted as a duplicate; the rest of the statement goes on and
/// nothing the skipped row did (its cascades) stays.
#[test]
fn insert_ignore_skips_rows_a_foreign_key_refuses() {
    let _g = serial();
    let db = TestDb::open("ttlfk-ignore");
    let mut s = session_in_d(&db);
    ttl_parent_with_children(&mut s, "INT", &["k"]);
    insert_at(&mut s, -300, "INSERT INTO p VALUES (1, 10), (2, 20)");
    q(&mut s, "INSERT INTO c VALUES (1, 10)");
    q(&mut s, "INSERT INTO r VALUES (2, 20)");
    // Row 2 would drop the value 20 r needs; row 1 cascades its old
    // value's child away; r's 99 has no parent.
    let r = outcome(
        &mut s,
        "INSERT IGNORE INTO p VALUES (2, 21), (1, 11), (3, 30)",
    );
    assert_eq!(r.affected_rows, 2);
    let warnings = rows(&mut s, "SHOW WARNINGS");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("Warning|1451|"), "{warnings:?}");
    let r = outcome(
        &mut s,
        "INSERT IGNORE INTO r VALUES (5, 99), (6, 30), (7, 98)",
    );
    assert_eq!(r.affected_rows, 1);
    assert_eq!(r.info, "Records: 3  Duplicates: 2  Warnings: 2");
    let warnings = rows(&mut s, "SHOW WARNINGS");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with("Warning|1452|"), "{warnings:?}");
    assert_eq!(
        rows(&mut s, "SELECT id, k FROM p ORDER BY id"),
        ["1|11", "3|30"]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM c"), Vec::<String>::new());
    assert_eq!(
        rows(&mut s, "SELECT id, pk FROM r ORDER BY id"),
        ["2|20", "6|30"]
    );
    // The skipped row's writes are gone, the expired row it would have
    // replaced is still stored.
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(
        rows(&mut s, "SELECT id, k FROM p ORDER BY id"),
        ["1|11", "2|20", "3|30"]
    );
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
    // Without IGNORE the statement fails and keeps nothing.
    assert_eq!(
        fails(&mut s, "INSERT INTO r VALUES (8, 30), (9, 97)").0,
        1452
    );
    assert_eq!(rows(&mut s, "SELECT id FROM r ORDER BY id"), ["2", "6"]);
    check_ok(&mut s, "r");
}

/// Review of e1939e4, LOW1: a row replacing an expired parent keeps the
/// children of the values it matches by collation ('A' is the parent of
/// 'a' under a _ci collation), while an UPDATE of a key changes it unless
/// the bytes are equal (InnoDB: 'a' -> 'A' fails RESTRICT, cascades).
#[test]
fn a_replacing_row_keeps_children_its_values_match_by_collation() {
    let _g = serial();
    let db = TestDb::open("ttlfk-collation");
    let mut s = session_in_d(&db);
    ttl_parent_with_children(&mut s, "VARCHAR(10) COLLATE utf8mb4_general_ci", &["k"]);
    insert_at(&mut s, -300, "INSERT INTO p VALUES (1, 'a'), (2, 'b')");
    q(&mut s, "INSERT INTO r VALUES (1, 'a')");
    q(&mut s, "INSERT INTO c VALUES (2, 'b')");
    q(&mut s, "INSERT INTO p VALUES (1, 'A'), (2, 'B')");
    assert_eq!(rows(&mut s, "SELECT id, pk FROM c"), ["2|b"]);
    assert_eq!(
        rows(&mut s, "SELECT id, k FROM p ORDER BY id"),
        ["1|A", "2|B"]
    );
    assert_eq!(fails(&mut s, "UPDATE p SET k = 'a' WHERE id = 1").0, 1451);
    check_ok(&mut s, "r");
    check_ok(&mut s, "c");
}
