//! The applier's DDL against synthetic event streams: ROW-format CREATE
//! [OR REPLACE] TABLE ... SELECT groups, CREATE OR REPLACE TABLE,
//! executable comments, REPAIR TABLE, and a DDL waiting for a local
//! transaction (STOP, 1205 retried).
use super::apply::Fault;
use super::apply_tests::{run, sql_err, with_table, Src};
use crate::result::Collect;
use crate::Session;
use std::time::{Duration, Instant};

/// MariaDB's group for `CREATE [OR REPLACE] TABLE c SELECT a, b FROM t`
/// in ROW format: BEGIN GTID, the generated CREATE, the rows, XID.
fn ctas(s: &mut Src, create: &str, rows: &[&[i64]]) -> Result<(), Fault> {
    s.gtid(false)?;
    s.query("d", create)?;
    if !rows.is_empty() {
        s.insert("d", "c", rows)?;
    }
    s.xid()
}

const CREATE_C: &str = "CREATE TABLE `c` (\n  `a` int(11) NOT NULL,\n  `b` int(11) DEFAULT NULL\n)";

#[test]
fn row_format_create_select_replicates() {
    let mut s = with_table("ddl-ctas");
    ctas(&mut s, CREATE_C, &[&[1, 10], &[2, 20]]).unwrap();
    assert_eq!(s.rows("SELECT * FROM d.c ORDER BY a"), ["1|10", "2|20"]);
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // Selecting no rows: the group has no rows event.
    ctas(
        &mut s,
        "CREATE TABLE `e` (\n  `a` int(11) DEFAULT NULL\n)",
        &[],
    )
    .unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'e'"), ["e"]);
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
    // CREATE OR REPLACE TABLE c SELECT a FROM t: the old c goes.
    ctas(
        &mut s,
        "CREATE OR REPLACE TABLE `c` (\n  `a` int(11) NOT NULL\n)",
        &[&[7]],
    )
    .unwrap();
    assert_eq!(s.rows("SELECT * FROM d.c"), ["7"]);
    assert_eq!(s.applied(), ("0-7-5".into(), s.pos));
}

#[test]
fn create_select_group_is_safe_to_apply_again_after_a_crash() {
    let mut s = with_table("ddl-ctas-crash");
    let (pos, seq) = (s.pos, s.seq);
    // The "server dies" right after the CREATE: the table is there, its
    // rows and the group's position are not.
    super::apply::tests::CRASH_AFTER_DDL.with(|c| c.set(true));
    s.gtid(false).unwrap();
    let r = s.query("d", CREATE_C);
    super::apply::tests::CRASH_AFTER_DDL.with(|c| c.set(false));
    assert!(matches!(r, Err(Fault::Io(..))), "{r:?}");
    s.app.abort();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'c'"), ["c"]);
    assert_eq!(s.applied().0, "0-7-2");
    // The restarted applier gets the group again: the table is made anew.
    (s.pos, s.seq) = (pos, seq);
    ctas(&mut s, CREATE_C, &[&[1, 10]]).unwrap();
    assert_eq!(s.rows("SELECT * FROM d.c"), ["1|10"]);
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // A group that fails in its rows leaves the table but not the
    // position; applied again, it ends as once.
    let (pos, seq) = (s.pos, s.seq);
    s.gtid(false).unwrap();
    s.query("d", "CREATE TABLE `f` (`a` int(11) NOT NULL PRIMARY KEY)")
        .unwrap();
    s.insert("d", "f", &[&[3]]).unwrap();
    s.send(binlog::event::kind::XID, &[0; 3]).unwrap_err();
    s.app.abort();
    assert_eq!(s.applied().0, "0-7-3");
    (s.pos, s.seq) = (pos, seq);
    s.gtid(false).unwrap();
    s.query("d", "CREATE TABLE `f` (`a` int(11) NOT NULL PRIMARY KEY)")
        .unwrap();
    s.insert("d", "f", &[&[3]]).unwrap();
    s.xid().unwrap();
    assert_eq!(s.rows("SELECT * FROM d.f"), ["3"]);
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
}

#[test]
fn create_or_replace_table_replaces() {
    let mut s = with_table("ddl-create-or-replace");
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 1]]).unwrap();
    s.xid().unwrap();
    s.ddl("d", "create or replace table t (x int)").unwrap();
    assert_eq!(s.rows("SELECT COUNT(*) FROM d.t"), ["0"]);
    assert_eq!(s.rows("SHOW COLUMNS FROM d.t").len(), 1);
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
    // And when there is no table yet.
    s.ddl("d", "CREATE OR REPLACE TABLE n (x int)").unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'n'"), ["n"]);
    // Comments between the words: refused, never guessed.
    s.gtid(true).unwrap();
    let (code, msg) = sql_err(s.query("d", "CREATE /* x */ OR REPLACE TABLE n (y int)"));
    assert_eq!(code, 1235, "{msg}");
    assert_eq!(s.rows("SHOW COLUMNS FROM d.n"), ["x|int|YES||NULL|"]);
}

#[test]
fn executable_comments_are_read_as_the_mariadb_source_does() {
    let mut s = with_table("ddl-versioned");
    // The source's FORMAT_DESCRIPTION: MariaDB 10.11.9.
    let fde = binlog::event::format_description(super::apply_tests::TS);
    s.send(binlog::event::kind::FORMAT_DESCRIPTION, &fde)
        .unwrap();
    s.gtid(false).unwrap();
    s.insert("d", "t", &[&[1, 1]]).unwrap();
    s.xid().unwrap();
    // MariaDB runs /*M!...*/ and six-digit /*!...*/ up to its version.
    s.ddl("d", "/*!100100 CREATE TABLE m (a int) */").unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'm'"), ["m"]);
    s.ddl("d", "/*M!100100 CREATE TABLE m2 (a int) */").unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'm2'"), ["m2"]);
    // ... and ignores MySQL 5.7+'s and later versions': position only.
    s.ddl("d", "/*!50700 CREATE TABLE m3 (a int) */").unwrap();
    s.ddl("d", "/*M!110000 CREATE TABLE m4 (a int) */").unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'm%'"), ["m", "m2"]);
    assert_eq!(s.applied(), ("0-7-7".into(), s.pos));
    // Hidden statement-format DML is refused, never skipped.
    s.gtid(true).unwrap();
    let (code, msg) = sql_err(s.query("d", "/*M!100100 DELETE FROM t */"));
    assert_eq!(code, 1235, "{msg}");
    assert!(msg.contains("statement-format DELETE"), "{msg}");
    assert_eq!(s.rows("SELECT * FROM d.t"), ["1|1"]);
    assert_eq!(s.applied().0, "0-7-7");
}

#[test]
fn repair_table_is_a_no_op_with_a_note() {
    let mut s = with_table("ddl-repair");
    // MariaDB logs REPAIR TABLE (even for engines that cannot repair).
    s.ddl("d", "REPAIR TABLE t").unwrap();
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
    // A client gets MariaDB's rows.
    assert_eq!(
        s.rows("REPAIR LOCAL TABLE d.t, d.nope EXTENDED"),
        [
            "d.t|repair|note|The storage engine for the table doesn't support repair",
            "d.nope|repair|Error|Table 'd.nope' doesn't exist",
            "d.nope|repair|status|Operation failed",
        ]
    );
}

/// A local session's open transaction on d.t (it holds back DDL of t).
fn local_txn(s: &Src) -> Session {
    let mut l = Session::new(s.inst.clone(), 97, "root", None);
    let mut c = Collect::default();
    l.query("BEGIN", &mut c).unwrap();
    l.query("INSERT INTO d.t VALUES (100, 100)", &mut c)
        .unwrap();
    l
}

#[test]
fn stop_ends_a_replicated_ddl_waiting_for_a_local_transaction() {
    let s = with_table("ddl-stop-waits");
    let mut l = local_txn(&s);
    let shared = s.inst.replica.shared.clone();
    let mut s = s;
    let t = std::thread::spawn(move || {
        let r = s.ddl("d", "ALTER TABLE t ADD c INT");
        (r, s)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !t.is_finished(),
        "the ALTER did not wait for the local transaction"
    );
    // STOP SLAVE (Replica::stop) asks the applier to stop this way.
    let at = Instant::now();
    shared.interrupt_apply();
    while !t.is_finished() {
        assert!(
            at.elapsed() < Duration::from_secs(5),
            "STOP did not end the DDL's wait"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (r, s) = t.join().unwrap();
    assert!(matches!(r, Err(Fault::Sql(1317, _))), "{r:?}");
    l.query("COMMIT", &mut Collect::default()).unwrap();
    // Nothing of it applied: the event comes again after START SLAVE.
    assert_eq!(s.applied().0, "0-7-2");
    assert_eq!(s.rows("SHOW COLUMNS FROM d.t").len(), 2);
}

#[test]
fn a_replicated_ddl_timing_out_on_a_local_transaction_is_retried() {
    let mut s = with_table("ddl-retry-1205");
    run(&s.inst, "SET GLOBAL lock_wait_timeout = 1");
    let mut l = local_txn(&s);
    let local = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        l.query("COMMIT", &mut Collect::default()).unwrap();
    });
    // The first attempt times out after 1 s (1205); a retry succeeds once
    // the local transaction committed.
    let at = Instant::now();
    s.ddl("d", "ALTER TABLE t ADD c INT").unwrap();
    assert!(at.elapsed() >= Duration::from_millis(1000));
    local.join().unwrap();
    assert_eq!(s.rows("SHOW COLUMNS FROM d.t").len(), 3);
    assert_eq!(s.applied(), ("0-7-3".into(), s.pos));
}

#[test]
fn a_drop_of_several_tables_that_would_fail_partway_drops_nothing() {
    let mut s = with_table("ddl-drop-several");
    s.ddl("d", "CREATE TABLE a (x INT)").unwrap();
    let (pos, seq) = (s.pos, s.seq);
    let drop = "DROP TABLE `a`,`b` /* generated by server */";
    let (code, msg) = sql_err(s.ddl("d", drop));
    assert_eq!(code, 1051, "{msg}");
    assert!(msg.contains("Unknown table 'd.b'"), "{msg}");
    // Nothing dropped and the position not moved: once the cause is
    // fixed, the whole statement applies.
    s.app.abort();
    assert_eq!(s.rows("SHOW TABLES FROM d LIKE 'a'"), ["a"]);
    assert_eq!(s.applied().0, "0-7-3");
    run(&s.inst, "CREATE TABLE d.b (x INT)");
    (s.pos, s.seq) = (pos, seq);
    s.ddl("d", drop).unwrap();
    assert_eq!(s.rows("SHOW TABLES FROM d"), ["t"]);
    assert_eq!(s.applied(), ("0-7-4".into(), s.pos));
}

#[test]
fn a_long_statement_is_cut_in_the_error() {
    let mut s = with_table("ddl-long-error");
    let big = format!("INSERT INTO t VALUES {}", vec!["(1, 1)"; 20_000].join(", "));
    s.gtid(true).unwrap();
    let (code, msg) = sql_err(s.query("d", &big));
    assert_eq!(code, 1235);
    assert!(msg.len() < 1000 && msg.ends_with("...'"), "{}", msg.len());
}
