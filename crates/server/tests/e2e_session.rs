//! Session state and server introspection against the real `strata`
//! binary: SET (session variables, NAMES, autocommit, isolation), SELECT
//! @@var / DATABASE() / VERSION(), SHOW VARIABLES / STATUS / WARNINGS,
//! EXPLAIN and CHECK TABLE.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q, q1, q_i64, Server};

#[test]
fn session_variables_show_explain_check() {
    let srv = Server::start("session");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY kk (k))",
    );
    exec(&mut c, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");

    assert!(q1(&mut c, "SELECT VERSION()").starts_with("10.11."));
    assert_eq!(q1(&mut c, "SELECT DATABASE()"), "d");
    assert_eq!(q1(&mut c, "SELECT @@autocommit"), "1");
    assert_eq!(
        q1(&mut c, "SELECT @@transaction_isolation"),
        "REPEATABLE-READ"
    );
    assert_eq!(q1(&mut c, "SELECT @@port"), srv.port.to_string());

    // Session variables of several kinds.
    exec(&mut c, "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'");
    assert_eq!(q1(&mut c, "SELECT @@sql_mode"), "STRICT_TRANS_TABLES");
    assert_eq!(
        q1(&mut c, "SELECT @@global.sql_mode"),
        "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"
    );
    exec(
        &mut c,
        "SET @@session.wait_timeout = 100, @x = 5, @y = 'str'",
    );
    assert_eq!(
        q(&mut c, "SELECT @@wait_timeout, @x, @y, @nope"),
        vec!["100|5|str|NULL"]
    );
    assert_eq!(
        q(&mut c, "SHOW VARIABLES LIKE 'wait_timeout'"),
        vec!["wait_timeout|100"]
    );
    assert_eq!(
        q(&mut c, "SHOW GLOBAL VARIABLES LIKE 'wait_timeout'"),
        vec!["wait_timeout|28800"]
    );
    exec(&mut c, "SET NAMES utf8mb4");
    assert_eq!(q1(&mut c, "SELECT @@character_set_client"), "utf8mb4");
    exec(&mut c, "SET autocommit = 0");
    assert_eq!(q1(&mut c, "SELECT @@autocommit"), "0");
    exec(&mut c, "SET autocommit = 1");
    exec(
        &mut c,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    assert_eq!(
        q1(&mut c, "SELECT @@transaction_isolation"),
        "READ-COMMITTED"
    );
    exec(&mut c, "SET transaction_isolation = 'REPEATABLE-READ'");
    assert_eq!(
        q(&mut c, "SELECT @@transaction_isolation, @@tx_isolation"),
        vec!["REPEATABLE-READ|REPEATABLE-READ"]
    );
    exec(&mut c, "SET innodb_lock_wait_timeout = 3");
    assert_eq!(q1(&mut c, "SELECT @@innodb_lock_wait_timeout"), "3");
    // Another connection still sees the global values.
    let mut c2 = srv.conn();
    assert_eq!(q1(&mut c2, "SELECT @@innodb_lock_wait_timeout"), "50");
    assert_eq!(q1(&mut c2, "SELECT DATABASE()"), "NULL");
    exec(&mut c2, "USE d");
    assert_eq!(q_i64(&mut c2, "SELECT COUNT(*) FROM t"), 3);

    // SHOW STATUS counts this server's work.
    let qs: i64 = q(&mut c, "SHOW STATUS LIKE 'Questions'")[0]
        .split('|')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(qs > 10, "Questions = {qs}");
    let threads = q(&mut c, "SHOW STATUS LIKE 'Threads_connected'");
    assert_eq!(threads, vec!["Threads_connected|2"]);
    // Write stalls are counted per cause (docs/WRITE-STALLS.md).
    let stalls: Vec<String> = q(&mut c, "SHOW GLOBAL STATUS LIKE 'Strata_stall%'")
        .iter()
        .map(|r| r.split('|').next().unwrap_or("").to_string())
        .collect();
    for cause in ["l0", "pending", "memtable"] {
        for what in ["slowdowns", "stops", "micros"] {
            let name = format!("Strata_stall_{cause}_{what}");
            assert!(stalls.contains(&name), "{name} missing from {stalls:?}");
        }
    }

    // SHOW WARNINGS after a statement that warns, and cleared after one that does not.
    exec(&mut c, "DROP TABLE IF EXISTS missing");
    assert_eq!(c.warnings(), 1);
    assert_eq!(
        q(&mut c, "SHOW WARNINGS"),
        vec!["Note|1051|Unknown table 'd.missing'"]
    );
    exec(&mut c, "SELECT 1");
    assert!(q(&mut c, "SHOW WARNINGS").is_empty());

    // EXPLAIN: the secondary index for k = const, a full scan for an expression.
    let cols = |rows: Vec<String>| -> (String, String) {
        let f: Vec<String> = rows[0].split('|').map(str::to_string).collect();
        (f[3].clone(), f[5].clone()) // type, key
    };
    assert_eq!(
        cols(q(&mut c, "EXPLAIN SELECT * FROM t WHERE k = 20")),
        ("ref".to_string(), "kk".to_string())
    );
    assert_eq!(
        cols(q(&mut c, "EXPLAIN SELECT * FROM t WHERE id = 2")).1,
        "PRIMARY"
    );
    assert_eq!(
        cols(q(&mut c, "EXPLAIN SELECT * FROM t WHERE k + 0 = 20")),
        ("ALL".to_string(), "NULL".to_string())
    );

    // CHECK TABLE.
    assert_eq!(q(&mut c, "CHECK TABLE t"), vec!["d.t|check|status|OK"]);
    let missing = q(&mut c, "CHECK TABLE nosuch");
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(
        missing[1].ends_with("|status|Operation failed"),
        "{missing:?}"
    );
}

/// (HEX(s), eq) of each row of d.t, and the RELAXED_UNIQUE_CHECKS
/// flag of each of the binary log's Write_rows events, in order.
fn rows_and_flags(srv: &Server, c: &mut mysql::Conn) -> (Vec<String>, Vec<u16>) {
    let rows = q(c, "SELECT HEX(s), eq FROM d.t ORDER BY id");
    let mut flags = Vec::new();
    for f in q(c, "SHOW BINARY LOGS") {
        let name = f.split('|').next().unwrap().to_string();
        let bytes = std::fs::read(srv.datadir.join(name)).unwrap();
        for e in binlog::decode::events(&bytes).unwrap() {
            if e.kind == binlog::event::kind::WRITE_ROWS_V1 {
                let f = u16::from_le_bytes([e.body[6], e.body[7]]);
                flags.push(f & binlog::record::rows_flag::RELAXED_UNIQUE_CHECKS);
            }
        }
    }
    (rows, flags)
}

#[test]
fn the_next_insert_sees_charset_collation_and_unique_checks_changes() {
    // Each INSERT after a change of character_set_client (how its text is
    // read), collation_connection (how its literals compare) or
    // unique_checks (the rows event's RELAXED_UNIQUE_CHECKS flag) sees the
    // new value, also after COM_CHANGE_USER and COM_RESET_CONNECTION start
    // a new session on the same connection.
    let srv = Server::start_with("session-varmemo", &["--log-bin", "--server-id=3"]);
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10), eq INT)",
    );
    // 'é' is sent as UTF-8 (C3 A9): read as latin1 it is two characters.
    const UTF8: &str = "C3A9";
    const LATIN1: &str = "C383C2A9";
    let mut want_rows = Vec::new();
    let mut want_flags = Vec::new();
    let steps: &[(&str, &str, &str, u16)] = &[
        ("", UTF8, "1", 0),
        ("SET NAMES latin1", LATIN1, "1", 0),
        ("SET collation_connection = utf8mb4_bin", LATIN1, "0", 0),
        ("SET CHARACTER SET utf8mb4", UTF8, "1", 0),
        ("SET NAMES utf8mb4 COLLATE utf8mb4_bin", UTF8, "0", 0),
        ("SET unique_checks = 0", UTF8, "0", 4),
        ("SET CHARACTER SET latin1", LATIN1, "1", 4),
        ("SET SESSION unique_checks = 1", LATIN1, "1", 0),
        ("SET @@session.unique_checks = 0", LATIN1, "1", 4),
        ("CHANGE_USER", UTF8, "1", 0),
        ("SET NAMES latin1 COLLATE latin1_bin", LATIN1, "0", 0),
        ("SET unique_checks = OFF", LATIN1, "0", 4),
        ("RESET", UTF8, "1", 0),
        ("SET NAMES latin1", LATIN1, "1", 0),
        ("SET unique_checks = 0", LATIN1, "1", 4),
        ("CHANGE_USER", UTF8, "1", 0),
    ];
    for (i, (set, hex, eq, flag)) in steps.iter().enumerate() {
        match *set {
            "" => {}
            "CHANGE_USER" => c
                .change_user(
                    mysql::ChangeUserOpts::default()
                        .with_user(Some("root".into()))
                        .with_db_name(Some("d".into())),
                )
                .unwrap(),
            "RESET" => c.reset().unwrap(),
            _ => exec(&mut c, set),
        }
        // Twice: the second INSERT runs with whatever the first memoized.
        for _ in 0..2 {
            exec(&mut c, "INSERT INTO t (s, eq) VALUES ('é', 'a' = 'A')");
            want_rows.push(format!("{hex}|{eq}"));
            want_flags.push(*flag);
        }
        let (rows, flags) = rows_and_flags(&srv, &mut c);
        assert_eq!(rows, want_rows, "after step {i}: {set}");
        assert_eq!(flags, want_flags, "after step {i}: {set}");
    }
}

#[test]
fn reset_connection_gives_back_the_handshakes_character_set() {
    // A latin1 client (handshake collation 8) that switched to utf8mb4 and
    // turned unique_checks off: after COM_RESET_CONNECTION its statements
    // are read as latin1 again (as MariaDB 10.11 does), with
    // unique_checks back on, also by the INSERT that follows.
    use std::io::Write;
    let srv = Server::start("session-reset-charset");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))",
    );
    let mut r = common::login_with(srv.port, Some("d"), 8).unwrap();
    let cell = |r: &mut std::net::TcpStream, sql: &str| {
        let v = common::raw_query(r, sql.as_bytes());
        String::from_utf8(v[0].clone().unwrap()).unwrap()
    };
    let vars = "SELECT CONCAT_WS(',', @@character_set_client, @@collation_connection, \
                @@character_set_results, @@unique_checks)";
    assert_eq!(cell(&mut r, vars), "latin1,latin1_swedish_ci,latin1,1");
    // 'é' in latin1 is E9.
    common::raw_exec(&mut r, b"INSERT INTO t (s) VALUES ('\xe9')").unwrap();
    common::raw_exec(&mut r, b"SET NAMES utf8mb4 COLLATE utf8mb4_bin").unwrap();
    common::raw_exec(&mut r, b"SET unique_checks = 0").unwrap();
    common::raw_exec(&mut r, "INSERT INTO t (s) VALUES ('é')".as_bytes()).unwrap();
    assert_eq!(cell(&mut r, vars), "utf8mb4,utf8mb4_bin,utf8mb4,0");
    r.write_all(&common::packet(0, &[0x1f])).unwrap();
    let (ok, _) = common::read_packet(&mut r).unwrap();
    assert_eq!(ok[0], 0, "COM_RESET_CONNECTION: {ok:?}");
    common::raw_exec(&mut r, b"INSERT INTO t (s) VALUES ('\xe9')").unwrap();
    assert_eq!(cell(&mut r, vars), "latin1,latin1_swedish_ci,latin1,1");
    assert_eq!(
        q(&mut c, "SELECT HEX(s) FROM t ORDER BY id"),
        ["C3A9", "C3A9", "C3A9"]
    );
}

#[test]
fn change_user_collation_ids_past_255_and_reset() {
    // COM_CHANGE_USER carries a two-byte collation id; MariaDB's go past 255
    // (utf8mb4_uca1400_ai_ci is 2304 = 0x900). Each step's character sets and
    // collation, and those COM_RESET_CONNECTION gives back, are what MariaDB
    // 10.11.19 answers, except that an id of no character set gives Strata's
    // defaults where MariaDB gives its globals (there latin1).
    use std::io::Write;
    let srv = Server::start("session-change-user-collation");
    let _c = srv.fresh_db("d");
    let mut r = common::login_with(srv.port, Some("d"), 8).unwrap();
    let vars = |r: &mut std::net::TcpStream| {
        let sql = "SELECT CONCAT_WS(',', @@character_set_client, @@character_set_connection, \
                   @@character_set_results, @@collation_connection)";
        let v = common::raw_query(r, sql.as_bytes());
        String::from_utf8(v[0].clone().unwrap()).unwrap()
    };
    let change_user = |r: &mut std::net::TcpStream, id: u16| {
        let mut p = vec![0x11];
        p.extend_from_slice(b"root\0\0d\0");
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(b"mysql_native_password\0");
        r.write_all(&common::packet(0, &p)).unwrap();
        loop {
            let (a, seq) = common::read_packet(r).unwrap();
            match a[0] {
                0x00 => break,
                // AuthSwitchRequest: the empty password.
                0xFE => r.write_all(&common::packet(seq + 1, b"")).unwrap(),
                _ => panic!("COM_CHANGE_USER {id:#x}: {a:?}"),
            }
        }
    };
    let reset = |r: &mut std::net::TcpStream| {
        r.write_all(&common::packet(0, &[0x1f])).unwrap();
        let (ok, _) = common::read_packet(r).unwrap();
        assert_eq!(ok[0], 0, "COM_RESET_CONNECTION: {ok:?}");
    };
    assert_eq!(vars(&mut r), "latin1,latin1,latin1,latin1_swedish_ci");
    let uca = "utf8mb4,utf8mb4,utf8mb4,utf8mb4_uca1400_ai_ci";
    change_user(&mut r, 0x900);
    assert_eq!(vars(&mut r), uca);
    reset(&mut r);
    assert_eq!(vars(&mut r), uca, "after RESET");
    // A known id under 256 that differs from the handshake's: RESET gives
    // back the last COM_CHANGE_USER's, not the handshake's latin1.
    let mb3 = "utf8mb3,utf8mb3,utf8mb3,utf8mb3_general_ci";
    change_user(&mut r, 33);
    assert_eq!(vars(&mut r), mb3);
    reset(&mut r);
    assert_eq!(vars(&mut r), mb3, "after RESET");
    // An id of no character set (0x7ff; 0x121 would be 0x21 cut to a byte):
    // the server's defaults, and RESET gives back the last known id's.
    for id in [0x7ff, 0x121] {
        change_user(&mut r, id);
        assert_eq!(
            vars(&mut r),
            "utf8mb4,utf8mb4,utf8mb4,utf8mb4_general_ci",
            "{id:#x}"
        );
        reset(&mut r);
        assert_eq!(vars(&mut r), mb3, "after {id:#x} and RESET");
    }
    // utf8mb4_uca1400_slovenian_ai_cs (0x921), a tailoring Strata lacks:
    // utf8mb4 with its default collation (MariaDB: that collation).
    change_user(&mut r, 0x921);
    let mb4 = "utf8mb4,utf8mb4,utf8mb4,utf8mb4_general_ci";
    assert_eq!(vars(&mut r), mb4);
    reset(&mut r);
    assert_eq!(vars(&mut r), mb4, "after RESET");
}
