//! Foreign keys over TTL tables (review of e1939e4): an UPDATE or INSERT
//! ... ON DUPLICATE KEY UPDATE that moves a row onto an expired row's
//! primary key replaces it as a delete would (its values' children get
//! their ON DELETE action), and an expired child removed by a cascade is
//! removed as compaction removes it, doing nothing to its own children.
#![allow(clippy::unwrap_used)]

mod common;
use common::{check_ok, fails, q, rows, session_in_d, TestDb};
use sql::Session;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Inserts with row times `secs` seconds from now.
fn insert_at(s: &mut Session, secs: i64, sql: &str) {
    q(s, &format!("SET GLOBAL strata_debug_ttl_rec_ts = {secs}"));
    q(s, sql);
    q(s, "SET GLOBAL strata_debug_ttl_rec_ts = 0");
}

#[test]
fn moving_a_key_onto_an_expired_parent_acts_on_its_children() {
    let _g = serial();
    let db = TestDb::open("ttlfk-move");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, k INT, UNIQUE KEY uk (k)) COMMENT='ttl_duration=100;'",
    );
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pk INT, KEY kp (pk), \
         FOREIGN KEY (pk) REFERENCES p (k) ON DELETE CASCADE)",
    );
    q(
        &mut s,
        "CREATE TABLE r (id INT PRIMARY KEY, pk INT, KEY kp (pk), \
         FOREIGN KEY (pk) REFERENCES p (k))",
    );
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
