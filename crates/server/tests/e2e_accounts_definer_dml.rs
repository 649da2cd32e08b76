//! Writes through a SQL SECURITY DEFINER view against the real `strata`
//! binary: CURRENT_USER() in the view's own text is its definer for
//! UPDATE, DELETE and INSERT ... WITH CHECK OPTION as for reads (MariaDB
//! 10.11), while the statement's own CURRENT_USER() stays the session's;
//! an unaliased CURRENT_USER() column keeps its name.
#![allow(clippy::unwrap_used)]

mod common;

use common::{as_user, exec, q, server_err, Server};
use mysql::prelude::Queryable;

#[test]
fn definer_view_writes_see_the_definer_as_current_user() {
    let srv = Server::start("definer_dml");
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE dd",
        "CREATE TABLE dd.t (a INT PRIMARY KEY, owner VARCHAR(64))",
        "INSERT INTO dd.t VALUES (1, 'admin@%'), (2, 'bob@%'), (3, 'carol@%')",
        "CREATE USER admin, bob IDENTIFIED BY 'pw'",
        "GRANT ALL ON dd.* TO admin",
        "CREATE DEFINER = admin VIEW dd.pub AS \
         SELECT * FROM dd.t WHERE owner <> CURRENT_USER() WITH CHECK OPTION",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON dd.pub TO bob",
    ] {
        exec(&mut root, sql);
    }
    let mut bob = as_user(&srv, "bob", "pw", Some("dd")).unwrap();
    assert_eq!(q(&mut bob, "SELECT a FROM pub ORDER BY a"), ["2", "3"]);
    // The view's admin row is hidden from writes as from reads.
    exec(&mut bob, "UPDATE pub SET owner = CONCAT(owner, '!')");
    assert_eq!(
        q(&mut root, "SELECT a, owner FROM dd.t ORDER BY a"),
        ["1|admin@%", "2|bob@%!", "3|carol@%!"]
    );
    // The statement's own CURRENT_USER() is bob's account.
    exec(
        &mut bob,
        "UPDATE pub SET owner = CURRENT_USER() WHERE a = 2",
    );
    assert_eq!(
        q(&mut root, "SELECT owner FROM dd.t WHERE a = 2"),
        ["bob@%"]
    );
    // A row the view would not show is refused (1369).
    let e = server_err(bob.query_drop("INSERT INTO pub VALUES (4, 'admin@%')"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1369, "CHECK OPTION failed `dd`.`pub`")
    );
    exec(&mut bob, "INSERT INTO pub VALUES (4, 'bob@%')");
    exec(&mut bob, "DELETE FROM pub");
    assert_eq!(q(&mut root, "SELECT a, owner FROM dd.t"), ["1|admin@%"]);
}

#[test]
fn an_unaliased_current_user_column_keeps_its_name() {
    let srv = Server::start("definer_col");
    let mut root = srv.conn();
    for sql in [
        "CREATE DATABASE dd",
        "CREATE TABLE dd.t (a INT PRIMARY KEY)",
        "INSERT INTO dd.t VALUES (1)",
        "CREATE USER admin, bob IDENTIFIED BY 'pw'",
        "GRANT ALL ON dd.* TO admin",
        "CREATE DEFINER = admin VIEW dd.cu AS SELECT CURRENT_USER(), a FROM dd.t",
        "GRANT SELECT ON dd.cu TO bob",
    ] {
        exec(&mut root, sql);
    }
    let mut bob = as_user(&srv, "bob", "pw", Some("dd")).unwrap();
    // An unaliased CURRENT_USER() column keeps its name.
    assert_eq!(q(&mut bob, "SELECT `CURRENT_USER()` FROM cu"), ["admin@%"]);
    let r = bob.query_iter("SELECT * FROM cu").unwrap();
    let names: Vec<String> = r
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().to_string())
        .collect();
    assert_eq!(names, ["CURRENT_USER()", "a"]);
}
