//! strata_bulk_load failures reach the client (the real binary): two
//! INSERTs answered OK whose rows repeat a UNIQUE secondary key make the
//! end of the load fail with 1062, and whatever ends it gets that error,
//! saying none of the load's rows were kept — SET strata_bulk_load = 0, the
//! next other statement (which does not run), an INSERT into another table,
//! COM_RESET_CONNECTION — while the end of a session can only log it.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    exec, login, packet, q1, raw_exec, raw_query, read_packet, server_err, try_exec, Server,
};
use std::io::Write;

/// Opens a load of `t` with two acknowledged INSERTs whose rows repeat
/// the unique key `u`.
fn doomed_load(c: &mut mysql::Conn) {
    exec(c, "DROP TABLE IF EXISTS t");
    exec(
        c,
        "CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
    );
    exec(c, "SET strata_bulk_load = 1");
    exec(c, "INSERT INTO t VALUES (1, 7), (2, 8)");
    exec(c, "INSERT INTO t VALUES (3, 7)");
}

/// The error of the statement that ended the load.
fn lost(r: mysql::Result<()>, what: &str) {
    let e = server_err(r);
    let (code, msg) = (e.code, e.message.clone());
    assert_eq!(code, 1062, "{what}: {e}");
    assert!(msg.contains("Duplicate entry"), "{what}: {msg}");
    assert!(
        msg.contains("strata_bulk_load of `b`.`t` failed: none of its 3 rows were loaded"),
        "{what}: {msg}"
    );
}

#[test]
fn failed_bulk_load_ends_reach_the_client() {
    let srv = Server::start("bulk-report");
    let mut c = srv.fresh_db("b");

    // SET strata_bulk_load = 0.
    doomed_load(&mut c);
    lost(try_exec(&mut c, "SET strata_bulk_load = 0"), "SET");
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "0");

    // The next other statement: it fails with the load's error and does
    // not run; the one after runs.
    exec(&mut c, "CREATE TABLE other (id INT PRIMARY KEY)");
    doomed_load(&mut c);
    lost(
        try_exec(&mut c, "INSERT INTO other VALUES (1)"),
        "INSERT other",
    );
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM other"), "0");
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "0");
    doomed_load(&mut c);
    lost(try_exec(&mut c, "SELECT 1"), "SELECT");
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "0");

    // COM_RESET_CONNECTION answers the error (the session is reset); a
    // raw connection, as the mysql crate falls back to COM_CHANGE_USER on
    // an error.
    {
        let mut r = login(srv.port, Some("b")).unwrap();
        for sql in [
            "DROP TABLE t",
            "CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
            "SET strata_bulk_load = 1",
            "INSERT INTO t VALUES (1, 7), (2, 8)",
            "INSERT INTO t VALUES (3, 7)",
        ] {
            raw_exec(&mut r, sql.as_bytes()).unwrap();
        }
        r.write_all(&packet(0, &[0x1f])).unwrap();
        let (p, _) = read_packet(&mut r).unwrap();
        assert_eq!(p[0], 0xFF, "{p:?}");
        assert_eq!(u16::from_le_bytes([p[1], p[2]]), 1062);
        let msg = String::from_utf8_lossy(&p[9..]).into_owned();
        assert!(msg.contains("none of its 3 rows were loaded"), "{msg}");
        let v = raw_query(&mut r, b"SELECT @@strata_bulk_load");
        assert_eq!(v, vec![Some(b"0".to_vec())]);
    }
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM b.t"), "0");

    // A load that succeeds is kept, and its end answers OK.
    exec(&mut c, "USE b");
    exec(&mut c, "SET strata_bulk_load = 1");
    exec(&mut c, "INSERT INTO t VALUES (1, 1), (2, 2)");
    exec(&mut c, "INSERT INTO t VALUES (3, 3)");
    exec(&mut c, "SET strata_bulk_load = 0");
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "3");

    // The end of the session: nobody to tell but the log.
    let mut d = srv.conn_db("b");
    doomed_load(&mut d);
    drop(d);
    let start = std::time::Instant::now();
    loop {
        let log = std::fs::read_to_string(&srv.log).unwrap();
        if log.contains("failed at its end") {
            assert!(log.contains("none of its 3 rows were loaded"), "{log}");
            break;
        }
        assert!(start.elapsed().as_secs() < 10, "{log}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "0");
}
