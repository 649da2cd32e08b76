//! The binary log as the SQL layer feeds it (--log-bin): every way rows or
//! DDL reach the engine must reach the log, and the statements that steer
//! the log check their privileges. Row contents are checked by finding each
//! row's distinctive bytes in the log files (the e2e test has mariadb-binlog
//! decode them).
mod common;
use common::{fails, q, with_files, TestDb};
use sql::{Session, Value};

/// An instance with the binary log on (basename `binlog`) and a
/// secure_file_priv directory; returns them with a session in database d.
fn setup(name: &str) -> (TestDb, testkit::TempDir, Session) {
    let db = TestDb::open_with(
        name,
        sql::InstanceOptions {
            sync_on_commit: false,
            log_bin: Some("binlog".into()),
            ..Default::default()
        },
    );
    with_files(db, name)
}

/// Every binary log file's bytes, concatenated (after the writer caught up).
fn log_bytes(inst: &sql::Instance) -> Vec<u8> {
    let b = inst.binlog.as_ref().expect("log-bin on");
    b.events(None, 0).expect("events");
    let mut out = Vec::new();
    for (name, _) in b.list().expect("list") {
        out.extend(std::fs::read(b.dir().join(&name)).expect("read log file"));
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn load_data_into_an_empty_table_is_logged_row_by_row() {
    let (db, files, mut s) = setup("binlog-load");
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20))");
    let mut body = String::new();
    for i in 0..50 {
        body.push_str(&format!("{i}\tloaded-row-{i:04}\n"));
    }
    let f = files.0.join("t.txt");
    std::fs::write(&f, body).unwrap();
    q(
        &mut s,
        &format!("LOAD DATA INFILE '{}' INTO TABLE t", f.display()),
    );
    assert_eq!(q(&mut s, "SELECT COUNT(*) FROM t")[0][0], Value::Int(50));
    let log = log_bytes(&db);
    for i in 0..50 {
        let v = format!("loaded-row-{i:04}");
        assert!(
            contains(&log, v.as_bytes()),
            "row {i} ({v}) not in the binary log"
        );
    }
}

#[test]
fn sql_log_bin_needs_super_and_no_open_transaction() {
    let (db, _files, mut s) = setup("binlog-sqllogbin");
    q(&mut s, "BEGIN");
    assert_eq!(
        fails(&mut s, "SET sql_log_bin = 0"),
        (
            1694,
            "Cannot modify @@session.sql_log_bin inside a transaction".into()
        )
    );
    q(&mut s, "COMMIT");
    q(&mut s, "SET sql_log_bin = 0");
    q(&mut s, "SET sql_log_bin = 1");
    q(&mut s, "CREATE USER u");
    q(&mut s, "GRANT ALL ON d.* TO u");
    let mut u = Session::new(db.inst.clone(), 2, "u", None);
    u.account = Some(("u".into(), "%".into()));
    assert_eq!(
        fails(&mut u, "SET sql_log_bin = 0"),
        (
            1227,
            "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
                .into()
        )
    );
    assert_eq!(fails(&mut u, "SET @@session.sql_log_bin = 0").0, 1227);
}
