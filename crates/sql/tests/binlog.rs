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
    with_files(TestDb::open_logged(name), name)
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

/// A character the column's character set lacks (latin1 beyond cp1252,
/// utf8mb3 beyond 3 bytes) is refused in strict mode (1366) and stored as
/// '?' with that warning otherwise, as MariaDB does: the same with and
/// without the binary log, so the log (which holds the column's own
/// encoding) and the table never differ.
#[test]
fn values_outside_the_column_charset_are_refused_at_store() {
    for logged in [false, true] {
        let db = if logged {
            TestDb::open_logged("binlog-charset-on")
        } else {
            TestDb::open("binlog-charset-off")
        };
        let mut s = common::session_in_d(&db);
        q(
            &mut s,
            "CREATE TABLE cs (id INT PRIMARY KEY, l VARCHAR(10) CHARACTER SET latin1, \
             u VARCHAR(10) CHARACTER SET utf8mb3)",
        );
        assert_eq!(
            fails(&mut s, "INSERT INTO cs VALUES (1, 'a\u{101}b', 'x')").0,
            1366
        );
        assert_eq!(
            fails(&mut s, "INSERT INTO cs VALUES (2, 'x', 'a\u{1F600}b')").0,
            1366
        );
        q(
            &mut s,
            "INSERT INTO cs VALUES (3, 'a\u{20AC}?', 'a\u{E9}b')",
        );
        q(&mut s, "SET sql_mode = ''");
        q(
            &mut s,
            "INSERT INTO cs VALUES (4, 'a\u{101}b', 'a\u{1F600}b')",
        );
        let w = q(&mut s, "SHOW WARNINGS");
        assert_eq!(w.len(), 2, "log-bin {logged}: {w:?}");
        assert_eq!(w[0][1], Value::Int(1366));
        assert_eq!(
            q(&mut s, "SELECT l, u FROM cs ORDER BY id"),
            [
                vec![
                    Value::Bytes("a\u{20AC}?".into()),
                    Value::Bytes("a\u{E9}b".into())
                ],
                vec![Value::Bytes(b"a?b".to_vec()), Value::Bytes(b"a?b".to_vec())],
            ],
            "log-bin {logged}"
        );
    }
}

/// RESET MASTER [TO n], as MariaDB's: every file goes, the log starts
/// again at file 1 (n) with an empty @@gtid_binlog_pos, an open
/// transaction is committed first; without a binary log it is 1186.
#[test]
fn reset_master_starts_the_log_again() {
    let plain = TestDb::open("binlog-reset-off");
    let mut s = common::session_in_d(&plain);
    assert_eq!(fails(&mut s, "RESET MASTER").0, 1186);
    let (db, _files, mut s) = setup("binlog-reset");
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut s, "INSERT INTO t VALUES (1)");
    q(&mut s, "FLUSH BINARY LOGS");
    q(&mut s, "INSERT INTO t VALUES (2)");
    let pos = |s: &mut Session| q(s, "SELECT @@gtid_binlog_pos")[0][0].clone();
    assert_ne!(pos(&mut s), Value::Bytes(Vec::new()));
    let dir = db.binlog.as_ref().expect("log-bin").dir().to_path_buf();
    assert!(dir.join("binlog.000002").exists());
    q(&mut s, "RESET MASTER");
    let logs = q(&mut s, "SHOW BINARY LOGS");
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0][0], Value::Bytes(b"binlog.000001".to_vec()));
    assert_eq!(pos(&mut s), Value::Bytes(Vec::new()));
    assert!(!dir.join("binlog.000002").exists());
    q(&mut s, "INSERT INTO t VALUES (3)");
    let p = String::from_utf8(pos(&mut s).text()).expect("utf8");
    assert!(p.starts_with("0-") && p.ends_with("-1"), "{p}");
    // The old transactions are gone from the file, the new one is there.
    let ev = q(&mut s, "SHOW BINLOG EVENTS");
    let xids = ev
        .iter()
        .filter(|r| r[2] == Value::Bytes(b"Xid".to_vec()))
        .count();
    assert_eq!(xids, 1, "{ev:?}");
    q(&mut s, "RESET MASTER TO 7");
    let logs = q(&mut s, "SHOW BINARY LOGS");
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0][0], Value::Bytes(b"binlog.000007".to_vec()));
    assert!(!dir.join("binlog.000001").exists());
    // The bounds as MariaDB 10.11's (review s33 L1): 0 is file 1, 2^31-1 is
    // allowed, past it is a syntax error.
    for (to, file) in [("0", "binlog.000001"), ("2147483647", "binlog.2147483647")] {
        q(&mut s, &format!("RESET MASTER TO {to}"));
        let logs = q(&mut s, "SHOW BINARY LOGS");
        assert_eq!(
            logs[0][0],
            Value::Bytes(file.as_bytes().to_vec()),
            "TO {to}"
        );
    }
    assert_eq!(fails(&mut s, "RESET MASTER TO 2147483648").0, 1064);
    q(&mut s, "RESET MASTER TO 7");
    // Inside a transaction it commits it first (review s33 M3, as MariaDB):
    // the ROLLBACK after it undoes nothing, and the new log lacks the row.
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO t VALUES (8)");
    q(&mut s, "RESET MASTER");
    q(&mut s, "ROLLBACK");
    assert_eq!(q(&mut s, "SELECT a FROM t WHERE a = 8").len(), 1);
    let ev = q(&mut s, "SHOW BINLOG EVENTS");
    assert!(
        !ev.iter().any(|r| r[2] == Value::Bytes(b"Xid".to_vec())),
        "{ev:?}"
    );
}
