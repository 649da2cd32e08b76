//! The replica's statements at the SQL layer (the streaming itself is
//! tested end to end against MariaDB in crates/server/tests/e2e_replica.rs):
//! CHANGE MASTER TO and its MySQL 8.4 spelling, what is refused with 1235,
//! SHOW SLAVE STATUS, RESET SLAVE [ALL], privileges, and the configuration
//! and position surviving a reopen.
mod common;
use common::{fails, q, rows, session_in_d, TestDb};
use sql::{Session, Value};

fn status(s: &mut Session) -> std::collections::BTreeMap<String, Value> {
    let mut sink = sql::result::Collect::default();
    s.query("SHOW SLAVE STATUS", &mut sink).unwrap();
    let names: Vec<String> = sink.cols.iter().map(|c| c.name.clone()).collect();
    match sink.rows.first() {
        Some(r) => names.into_iter().zip(r.iter().cloned()).collect(),
        None => Default::default(),
    }
}

fn text(v: &Value) -> String {
    String::from_utf8_lossy(&v.text()).into_owned()
}

#[test]
fn change_master_show_reset_and_refusals() {
    let dir = testkit::TempDir::new("replica-stmts");
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = Session::new(inst.clone(), 1, "root", None);
    assert!(status(&mut s).is_empty());
    assert_eq!(fails(&mut s, "START SLAVE").0, 1200);
    q(
        &mut s,
        "CHANGE MASTER TO MASTER_HOST='10.0.0.9', MASTER_PORT=3307, MASTER_USER='repl', \
         MASTER_PASSWORD='it''s', MASTER_USE_GTID=slave_pos",
    );
    let st = status(&mut s);
    assert_eq!(st.len(), 54);
    assert_eq!(text(&st["Master_Host"]), "10.0.0.9");
    assert_eq!(text(&st["Master_Port"]), "3307");
    assert_eq!(text(&st["Master_User"]), "repl");
    assert_eq!(text(&st["Using_Gtid"]), "Slave_Pos");
    assert_eq!(text(&st["Slave_IO_Running"]), "No");
    assert_eq!(text(&st["Slave_SQL_Running"]), "No");
    assert_eq!(st["Seconds_Behind_Master"], Value::Null);
    // An explicit file and position mean file/position replication.
    q(
        &mut s,
        "CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='mysql-bin.000007', SOURCE_LOG_POS=1234",
    );
    let st = status(&mut s);
    assert_eq!(text(&st["Using_Gtid"]), "No");
    assert_eq!(text(&st["Relay_Master_Log_File"]), "mysql-bin.000007");
    assert_eq!(text(&st["Exec_Master_Log_Pos"]), "1234");
    assert_eq!(text(&st["Master_Host"]), "10.0.0.9");
    // Refused: what Strata does not honour.
    for bad in [
        "CHANGE MASTER TO MASTER_SSL=1",
        "CHANGE MASTER TO MASTER_USE_GTID=current_pos",
        "CHANGE MASTER TO MASTER_DELAY=10",
        "CHANGE MASTER 'other' TO MASTER_HOST='h'",
        "START SLAVE IO_THREAD",
        "START SLAVE UNTIL MASTER_LOG_FILE='x', MASTER_LOG_POS=4",
        "STOP ALL SLAVES",
        "RESET SLAVE 'other'",
        "CHANGE MASTER TO MASTER_LOG_POS=4, MASTER_USE_GTID=slave_pos",
    ] {
        assert_eq!(fails(&mut s, bad).0, 1235, "{bad}");
    }
    assert_eq!(fails(&mut s, "CHANGE MASTER TO MASTER_PORT='x'").0, 1064);
    // STOP SLAVE when stopped: a note, as MariaDB.
    q(&mut s, "STOP SLAVE");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec!["Note|1255|Slave already has been stopped"]
    );
    assert_eq!(
        q(&mut s, "SELECT @@gtid_slave_pos")[0][0],
        Value::Bytes(vec![])
    );
    // The configuration survives a reopen.
    drop(s);
    drop(inst);
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = Session::new(inst.clone(), 1, "root", None);
    let st = status(&mut s);
    assert_eq!(text(&st["Master_Host"]), "10.0.0.9");
    assert_eq!(text(&st["Exec_Master_Log_Pos"]), "1234");
    // RESET SLAVE forgets the position, RESET SLAVE ALL everything.
    q(&mut s, "RESET SLAVE");
    let st = status(&mut s);
    assert_eq!(text(&st["Relay_Master_Log_File"]), "");
    assert_eq!(text(&st["Master_Host"]), "10.0.0.9");
    q(&mut s, "RESET REPLICA ALL");
    assert!(status(&mut s).is_empty());
}

#[test]
fn replica_statements_need_their_privileges() {
    let db = TestDb::open("replica-privs");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE USER u");
    q(&mut s, "GRANT ALL ON d.* TO u");
    let mut u = Session::new(db.inst.clone(), 2, "u", None);
    u.account = Some(("u".into(), "%".into()));
    for sql in [
        "CHANGE MASTER TO MASTER_HOST='h'",
        "START SLAVE",
        "STOP REPLICA",
        "RESET SLAVE ALL",
    ] {
        assert_eq!(
            fails(&mut u, sql),
            (
                1227,
                "Access denied; you need (at least one of) the SUPER, REPLICATION SLAVE ADMIN privilege(s) for this operation".into()
            ),
            "{sql}"
        );
    }
    assert_eq!(fails(&mut u, "SHOW SLAVE STATUS").0, 1227);
}
