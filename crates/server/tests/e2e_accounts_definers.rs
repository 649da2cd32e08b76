//! Views' definers and sessions of dropped accounts against the real
//! `strata` binary, with MariaDB 10.11's codes and texts (checked against
//! Debian's mariadbd): a SQL SECURITY DEFINER view runs with its definer's
//! rights for every reader, root included (1356 naming the view the
//! statement names); writes through nested views need each definer's
//! rights on the view beneath; a definer that does not exist is 1449 (also
//! beneath an INVOKER view); DEFINER naming another account needs SUPER
//! (1227). A session whose account is dropped keeps its identity and holds
//! nothing; COM_RESET_CONNECTION keeps the account the login checked.
#![allow(clippy::unwrap_used)]

mod common;

use common::{as_user, exec, q, server_err, Server};
use mysql::prelude::Queryable;
use mysql::Conn;

fn denied(c: &mut Conn, sql: &str) -> (u16, String) {
    let e = server_err(c.query_drop(sql));
    (e.code, e.message)
}

fn invalid(v: &str) -> (u16, String) {
    (
        1356,
        format!(
            "View 'vd.{v}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them"
        ),
    )
}

fn no_definer(u: &str) -> (u16, String) {
    (
        1449,
        format!("The user specified as a definer ('{u}'@'%') does not exist"),
    )
}

#[test]
fn views_run_with_their_definers_rights() {
    let srv = Server::start("definers");
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE vd",
        "USE vd",
        "CREATE TABLE b (a INT PRIMARY KEY, x INT)",
        "INSERT INTO b VALUES (1, 1)",
        "CREATE USER dx, dy, dz, dw",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON vd.b TO dy",
        "GRANT SELECT ON vd.b TO dw",
        "CREATE DEFINER = 'dx'@'%' VIEW vnp AS SELECT * FROM b",
        "CREATE DEFINER = 'dy'@'%' VIEW vok AS SELECT * FROM b",
        "CREATE DEFINER = 'dz'@'%' VIEW vgone AS SELECT * FROM b",
        "CREATE DEFINER = 'dz'@'%' SQL SECURITY INVOKER VIEW vgone_inv AS SELECT * FROM b",
        "CREATE DEFINER = 'dw'@'%' VIEW vmid AS SELECT * FROM b",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON vd.vmid TO dy",
        "CREATE DEFINER = 'dy'@'%' VIEW vtop AS SELECT * FROM vmid",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON vd.vok TO dx",
        "CREATE DEFINER = 'dx'@'%' VIEW vout AS SELECT * FROM vok",
        "DROP USER dz",
    ] {
        exec(&mut root, sql);
    }
    // Root reads and writes with the definer's rights (none here).
    for sql in [
        "SELECT * FROM vnp",
        "INSERT INTO vnp VALUES (5, 5)",
        "UPDATE vnp SET x = 2",
        "DELETE FROM vnp WHERE a = 9",
        "CREATE VIEW vz AS SELECT * FROM vnp",
    ] {
        assert_eq!(denied(&mut root, sql), invalid("vnp"), "{sql}");
    }
    exec(&mut root, "INSERT INTO vok VALUES (6, 6)");
    // A definer that does not exist: 1449, for reads and writes; an
    // INVOKER view's definer is not used.
    for sql in [
        "SELECT * FROM vgone",
        "INSERT INTO vgone VALUES (7, 7)",
        "UPDATE vgone SET x = 3",
        "DELETE FROM vgone WHERE a = 9",
    ] {
        assert_eq!(denied(&mut root, sql), no_definer("dz"), "{sql}");
    }
    assert_eq!(q(&mut root, "SELECT COUNT(*) FROM vgone_inv"), vec!["2"]);
    // Nested: vtop's definer may write vmid, but vmid's definer may only
    // read b: reads pass, writes are 1356 naming the view named.
    assert_eq!(q(&mut root, "SELECT COUNT(*) FROM vtop"), vec!["2"]);
    for sql in [
        "INSERT INTO vtop VALUES (10, 10)",
        "UPDATE vtop SET x = 6",
        "DELETE FROM vtop WHERE a = 9",
    ] {
        assert_eq!(denied(&mut root, sql), invalid("vtop"), "{sql}");
    }
    // vout's definer holds rights on vok only (not on b): enough.
    exec(&mut root, "INSERT INTO vout VALUES (9, 9)");
    exec(&mut root, "UPDATE vout SET x = 5 WHERE a = 9");
    exec(&mut root, "DELETE FROM vout WHERE a = 9");
    // A definer dropped beneath an INVOKER view: 1449 all the same.
    exec(
        &mut root,
        "CREATE SQL SECURITY INVOKER VIEW vi AS SELECT * FROM vok",
    );
    exec(&mut root, "DROP USER dy");
    for sql in ["SELECT * FROM vi", "INSERT INTO vi VALUES (30, 30)"] {
        assert_eq!(denied(&mut root, sql), no_definer("dy"), "{sql}");
    }
    // An explicit definer that does not exist: created, with MariaDB's note.
    exec(
        &mut root,
        "CREATE DEFINER = 'nobody'@'%' VIEW vn AS SELECT * FROM b",
    );
    let w: Vec<(String, u32, String)> = root.query("SHOW WARNINGS").unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].1, w[0].2.clone()), (1449, no_definer("nobody").1));

    // DEFINER naming another account needs SUPER (1227); the default and
    // CURRENT_USER are the session's account.
    exec(&mut root, "CREATE USER cv IDENTIFIED BY 'p'");
    exec(&mut root, "GRANT SELECT, CREATE VIEW ON vd.* TO cv");
    let mut cv = as_user(&srv, "cv", "p", Some("vd")).unwrap();
    let need_super = (
        1227,
        "Access denied; you need (at least one of) the SUPER, SET USER privilege(s) for this operation"
            .to_string(),
    );
    for sql in [
        "CREATE DEFINER = 'root'@'%' VIEW vx1 AS SELECT * FROM b",
        "CREATE DEFINER = 'cv'@'localhost' VIEW vx1 AS SELECT * FROM b",
    ] {
        assert_eq!(denied(&mut cv, sql), need_super, "{sql}");
    }
    exec(&mut cv, "CREATE VIEW vx2 AS SELECT * FROM b");
    exec(
        &mut cv,
        "CREATE DEFINER = CURRENT_USER VIEW vx3 AS SELECT * FROM b",
    );
    exec(
        &mut cv,
        "CREATE DEFINER = 'cv'@'%' VIEW vx4 AS SELECT * FROM b",
    );
    assert_eq!(q(&mut cv, "SELECT COUNT(*) FROM vx2"), vec!["2"]);
    assert_eq!(
        q(
            &mut root,
            "SELECT DEFINER FROM information_schema.VIEWS WHERE TABLE_NAME LIKE 'vx%' ORDER BY TABLE_NAME"
        ),
        vec!["cv@%", "cv@%", "cv@%"]
    );
}

#[test]
fn a_dropped_accounts_session_holds_nothing_and_reset_keeps_the_account() {
    let srv = Server::start("definers-dropped");
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE d1",
        "CREATE TABLE d1.t (a INT PRIMARY KEY)",
        "INSERT INTO d1.t VALUES (1)",
        "CREATE USER u1 IDENTIFIED BY 'p'",
        "GRANT SELECT ON d1.* TO u1",
    ] {
        exec(&mut root, sql);
    }
    let mut u = as_user(&srv, "u1", "p", Some("d1")).unwrap();
    assert_eq!(q(&mut u, "SELECT a FROM t"), vec!["1"]);
    exec(&mut root, "DROP USER u1");
    assert_eq!(
        denied(&mut u, "SELECT a FROM t"),
        (
            1142,
            "SELECT command denied to user 'u1'@'localhost' for table `d1`.`t`".into()
        )
    );
    assert_eq!(
        denied(&mut u, "SHOW GRANTS"),
        (
            1141,
            "There is no such grant defined for user 'u1' on host '%'".into()
        )
    );
    assert_eq!(
        denied(&mut u, "USE d1"),
        (
            1044,
            "Access denied for user 'u1'@'%' to database 'd1'".into()
        )
    );
    // An account of the same name made again: the session is that account.
    exec(&mut root, "CREATE USER u1 IDENTIFIED BY 'other'");
    exec(&mut root, "GRANT SELECT ON d1.t TO u1");
    assert_eq!(q(&mut u, "SELECT a FROM t"), vec!["1"]);

    // COM_RESET_CONNECTION keeps the account the login checked: a more
    // specific account of the user made since (another password, every
    // privilege) is not taken up.
    exec(&mut root, "CREATE USER r IDENTIFIED BY 'a'");
    let mut r = as_user(&srv, "r", "a", None).unwrap();
    exec(&mut root, "CREATE USER r@localhost IDENTIFIED BY 'b'");
    exec(&mut root, "GRANT ALL ON *.* TO r@localhost");
    r.reset().unwrap();
    assert_eq!(
        denied(&mut r, "SELECT a FROM d1.t"),
        (
            1142,
            "SELECT command denied to user 'r'@'localhost' for table `d1`.`t`".into()
        )
    );
}

#[test]
fn definer_at_localhost_resolves_as_a_login_would() {
    // Views stored by earlier builds (and MariaDB/MySQL dumps) name their definer
    // `user`@`localhost`; the account a client `user` from localhost gets serves
    // it (here cv@'%'), with its rights; a definer no account matches is 1449.
    let srv = Server::start("definers-localhost");
    let mut root = srv.fresh_db("ld");
    exec(&mut root, "CREATE TABLE t (a INT)");
    exec(&mut root, "INSERT INTO t VALUES (1), (2)");
    exec(&mut root, "CREATE TABLE secret (a INT)");
    exec(&mut root, "CREATE USER cv IDENTIFIED BY 'p'");
    exec(&mut root, "GRANT SELECT ON ld.t TO cv");
    exec(&mut root, "CREATE USER rd IDENTIFIED BY 'p'");
    exec(
        &mut root,
        "CREATE DEFINER = 'cv'@'localhost' VIEW v1 AS SELECT a FROM t",
    );
    assert!(q(&mut root, "SHOW WARNINGS").is_empty(), "no 1449 note");
    exec(
        &mut root,
        "CREATE DEFINER = 'cv'@'localhost' VIEW v2 AS SELECT a FROM secret",
    );
    exec(
        &mut root,
        "CREATE DEFINER = 'cv'@'10.0.0.1' VIEW v3 AS SELECT a FROM t",
    );
    exec(&mut root, "CREATE USER far@'10.%'");
    exec(
        &mut root,
        "CREATE DEFINER = 'far'@'localhost' VIEW v4 AS SELECT a FROM t",
    );
    assert_eq!(q(&mut root, "SHOW WARNINGS").len(), 1, "1449 note");
    exec(&mut root, "GRANT SELECT ON ld.v1 TO rd");
    exec(&mut root, "GRANT SELECT ON ld.v2 TO rd");
    exec(&mut root, "GRANT SELECT ON ld.v4 TO rd");
    let mut rd = as_user(&srv, "rd", "p", Some("ld")).unwrap();
    assert_eq!(q(&mut rd, "SELECT COUNT(*) FROM v1"), vec!["2"]);
    // cv@% holds nothing on `secret`: the view runs with cv's rights.
    assert_eq!(denied(&mut rd, "SELECT * FROM v2").0, 1356);
    assert_eq!(denied(&mut rd, "SELECT * FROM v4").0, 1449);
    // Any host matches cv@'%' too.
    assert_eq!(q(&mut root, "SELECT COUNT(*) FROM v3"), vec!["2"]);
}
