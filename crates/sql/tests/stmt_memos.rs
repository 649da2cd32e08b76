//! What a statement no longer looks up on every execution stays right:
//! the session's account, remembered per catalog version
//! (`account::check::AccountMemo`), so a GRANT, REVOKE or DROP USER from
//! another session takes effect on the next statement, prepared ones
//! included; and the Com_* counter a statement counts in, found at compile
//! time (`com!`), also for the statements whose name the search missed.
#![allow(clippy::unwrap_used)]

mod common;
use common::{fails, q, rows, session_in_d, status, TestDb};
use sql::result::Collect;
use sql::{Session, Value};

/// A session of account u@% in database d.
fn user_session(db: &TestDb) -> Session {
    let mut u = Session::new(db.inst.clone(), 2, "u", Some("d".into()));
    u.account = Some(("u".into(), "%".into()));
    u
}

/// Runs prepared statement `id` with `params`; the error code, if any.
fn exec(s: &mut Session, id: u32, params: &[Value]) -> Option<u16> {
    let mut c = Collect::default();
    s.execute_prepared(id, params, &mut c).err().map(|e| e.code)
}

#[test]
fn revoke_and_grant_take_effect_on_the_next_statement() {
    let db = TestDb::open("memos-revoke");
    let mut root = session_in_d(&db);
    q(&mut root, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut root, "INSERT INTO t VALUES (1), (2)");
    q(&mut root, "CREATE USER u");
    q(&mut root, "GRANT SELECT ON d.* TO u");
    let mut u = user_session(&db);
    let id = u.prepare("SELECT a FROM t WHERE a > ?").unwrap().0;
    let one = [Value::Int(0)];
    // Database, table and global level grants, each given and taken.
    for (round, on) in ["d.*", "d.t", "*.*"].into_iter().enumerate() {
        if round > 0 {
            q(&mut root, &format!("GRANT SELECT ON {on} TO u"));
        }
        // Twice each: the second run is answered by the memo.
        for _ in 0..2 {
            assert_eq!(rows(&mut u, "SELECT a FROM t").len(), 2, "{on}");
            assert_eq!(exec(&mut u, id, &one), None, "{on}");
        }
        q(&mut root, &format!("REVOKE SELECT ON {on} FROM u"));
        for _ in 0..2 {
            assert_eq!(fails(&mut u, "SELECT a FROM t").0, 1142, "{on}");
            assert_eq!(exec(&mut u, id, &one), Some(1142), "{on}");
        }
    }
}

#[test]
fn losing_all_privileges_or_the_account_is_seen_at_once() {
    let db = TestDb::open("memos-all");
    let mut root = session_in_d(&db);
    q(&mut root, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut root, "CREATE USER u");
    // Every privilege with GRANT OPTION and no view: the check passes at once.
    q(&mut root, "GRANT ALL ON *.* TO u WITH GRANT OPTION");
    let mut u = user_session(&db);
    let id = u.prepare("INSERT INTO t VALUES (?)").unwrap().0;
    assert_eq!(exec(&mut u, id, &[Value::Int(1)]), None);
    q(&mut u, "INSERT INTO t VALUES (2)");
    q(&mut root, "REVOKE INSERT ON *.* FROM u");
    assert_eq!(exec(&mut u, id, &[Value::Int(3)]), Some(1142));
    assert_eq!(fails(&mut u, "INSERT INTO t VALUES (4)").0, 1142);
    assert_eq!(rows(&mut u, "SELECT a FROM t").len(), 2);
    // A view in the catalog: an account holding everything is checked again.
    q(&mut root, "GRANT ALL ON *.* TO u WITH GRANT OPTION");
    q(&mut u, "INSERT INTO t VALUES (5)");
    q(&mut root, "CREATE USER nobody");
    q(
        &mut root,
        "CREATE DEFINER=`nobody`@`%` SQL SECURITY DEFINER VIEW v AS SELECT a FROM t",
    );
    assert_eq!(fails(&mut u, "SELECT a FROM v").0, 1356);
    q(&mut root, "DROP VIEW v");
    q(&mut u, "INSERT INTO t VALUES (6)");
    q(&mut root, "DROP USER u");
    assert_eq!(exec(&mut u, id, &[Value::Int(7)]), Some(1142));
    assert_eq!(fails(&mut u, "SELECT a FROM t").0, 1142);
}

#[test]
fn another_account_on_the_same_session_is_looked_up() {
    let db = TestDb::open("memos-change-user");
    let mut root = session_in_d(&db);
    q(&mut root, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut root, "CREATE USER u, w");
    q(&mut root, "GRANT SELECT ON d.* TO u");
    let mut s = user_session(&db);
    assert_eq!(rows(&mut s, "SELECT a FROM t").len(), 0);
    // COM_CHANGE_USER: the session's account changes, the catalog does not.
    s.account = Some(("w".into(), "%".into()));
    assert_eq!(fails(&mut s, "SELECT a FROM t").0, 1142);
    s.account = Some(("u".into(), "%".into()));
    assert_eq!(rows(&mut s, "SELECT a FROM t").len(), 0);
}

#[test]
fn statements_count_in_their_com_counters() {
    let db = TestDb::open("memos-com");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    let (sel, exe, admin) = (
        status(&mut s, "Com_select"),
        status(&mut s, "Com_stmt_execute"),
        status(&mut s, "Com_admin_commands"),
    );
    q(&mut s, "SELECT a FROM t");
    let id = s.prepare("SELECT a FROM t WHERE a = ?").unwrap().0;
    for _ in 0..3 {
        assert_eq!(exec(&mut s, id, &[Value::Int(1)]), None);
    }
    assert_eq!(status(&mut s, "Com_select"), sel + 4);
    assert_eq!(status(&mut s, "Com_stmt_execute"), exe + 3);
    // Counted in admin_commands before: the name was not in the list.
    let hosts = status(&mut s, "Com_show_slave_hosts");
    q(&mut s, "SHOW SLAVE HOSTS");
    assert_eq!(status(&mut s, "Com_show_slave_hosts"), hosts + 1);
    assert_eq!(status(&mut s, "Com_admin_commands"), admin);
    // MariaDB's names for the replica's statements.
    for name in [
        "change_master",
        "reset",
        "show_slave_status",
        "start_slave",
        "stop_slave",
    ] {
        status(&mut s, &format!("Com_{name}"));
    }
}
