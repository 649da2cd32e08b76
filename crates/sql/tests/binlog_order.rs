//! The binary log's DDL records and event details as the SQL layer writes
//! them (--log-bin): DDL is logged on every path (text, COM_STMT_EXECUTE,
//! SQL EXECUTE) in the batch of the catalog write that makes it visible, so
//! no transaction that saw the change is logged before it; DROP TABLE logs
//! what it dropped; QUERY status fields, rows event flags and TABLE_MAP
//! metadata are what MariaDB 10.11 writes (reference bytes from a MariaDB
//! 10.11.19 binlog of the same statements).
mod common;
use common::{fails, q, session_in_d, TestDb};
use sql::result::Collect;
use sql::Session;

fn setup(name: &str) -> (TestDb, Session) {
    let db = TestDb::open_logged(name);
    let s = session_in_d(&db);
    (db, s)
}

/// One event of the log: type, header flags, body (without checksum).
struct Ev {
    kind: u8,
    flags: u16,
    body: Vec<u8>,
}

/// Every event of every file, in order (after the writer caught up).
fn events(inst: &sql::Instance) -> Vec<Ev> {
    let b = inst.binlog.as_ref().expect("log-bin on");
    let mut out = Vec::new();
    for (name, _) in b.list().expect("list") {
        let bytes = std::fs::read(b.dir().join(&name)).expect("read log file");
        for e in binlog::decode::events(&bytes).expect("decode") {
            out.push(Ev {
                kind: e.kind,
                flags: e.flags,
                body: e.body.to_vec(),
            });
        }
    }
    out
}

/// (db, statement text, status variables, header flags) of each QUERY event.
fn queries(inst: &sql::Instance) -> Vec<(String, String, Vec<u8>, u16)> {
    events(inst)
        .into_iter()
        .filter(|e| e.kind == binlog::event::kind::QUERY)
        .map(|e| {
            let b = &e.body;
            let db_len = b[8] as usize;
            let status_len = u16::from_le_bytes([b[11], b[12]]) as usize;
            let status = b[13..13 + status_len].to_vec();
            let db_at = 13 + status_len;
            let db = String::from_utf8_lossy(&b[db_at..db_at + db_len]).into_owned();
            let text = String::from_utf8_lossy(&b[db_at + db_len + 1..]).into_owned();
            (db, text, status, e.flags)
        })
        .collect()
}

fn texts(inst: &sql::Instance) -> Vec<String> {
    queries(inst).into_iter().map(|q| q.1).collect()
}

#[test]
fn prepared_ddl_is_logged() {
    let (db, mut s) = setup("binlog-prepared-ddl");
    let (id, _, _) = s
        .prepare("CREATE TABLE p1 (a INT PRIMARY KEY)")
        .expect("prepare");
    s.execute_prepared(id, &[], &mut Collect::default())
        .expect("execute");
    q(
        &mut s,
        "PREPARE st FROM 'CREATE TABLE p2 (a INT PRIMARY KEY)'",
    );
    q(&mut s, "EXECUTE st");
    q(&mut s, "PREPARE st2 FROM 'ALTER TABLE p2 ADD COLUMN b INT'");
    q(&mut s, "EXECUTE st2");
    let t = texts(&db);
    for want in [
        "CREATE TABLE p1 (a INT PRIMARY KEY)",
        "CREATE TABLE p2 (a INT PRIMARY KEY)",
        "ALTER TABLE p2 ADD COLUMN b INT",
    ] {
        assert!(t.iter().any(|x| x == want), "{want} not logged: {t:?}");
    }
}

/// Sessions create tables while others insert into each as soon as it
/// exists: in the log, every table's rows come after its CREATE TABLE.
#[test]
fn ddl_orders_before_the_rows_that_saw_it() {
    let (db, mut s) = setup("binlog-ddl-race");
    const TABLES: usize = 60;
    let inst = db.inst.clone();
    let inserter = std::thread::spawn(move || {
        let mut s = Session::new(inst, 2, "root", Some("d".into()));
        for i in 0..TABLES {
            let sql = format!("INSERT INTO r{i} VALUES (1)");
            let start = std::time::Instant::now();
            loop {
                match s.query(&sql, &mut Collect::default()) {
                    Ok(_) => break,
                    Err(e) if e.code == 1146 => {
                        assert!(start.elapsed().as_secs() < 60, "r{i} never appeared");
                        std::hint::spin_loop();
                    }
                    Err(e) => panic!("{sql}: {e}"),
                }
            }
        }
    });
    for i in 0..TABLES {
        q(&mut s, &format!("CREATE TABLE r{i} (a INT PRIMARY KEY)"));
    }
    inserter.join().expect("inserter");
    let mut created = std::collections::HashSet::new();
    let mut rows = 0;
    for e in events(&db) {
        match e.kind {
            binlog::event::kind::QUERY => {
                let text = String::from_utf8_lossy(&e.body).into_owned();
                if let Some(at) = text.find("CREATE TABLE r") {
                    let name: String = text[at + 13..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .collect();
                    created.insert(name);
                }
            }
            binlog::event::kind::TABLE_MAP => {
                let b = &e.body;
                let dl = b[8] as usize;
                let tl = b[10 + dl] as usize;
                let t = String::from_utf8_lossy(&b[11 + dl..11 + dl + tl]).into_owned();
                assert!(
                    created.contains(&t),
                    "rows of {t} logged before its CREATE TABLE"
                );
                rows += 1;
            }
            _ => {}
        }
    }
    assert_eq!(rows, TABLES);
}

#[test]
fn drop_table_logs_what_it_dropped() {
    let (db, mut s) = setup("binlog-drop");
    q(&mut s, "CREATE TABLE a (x INT PRIMARY KEY)");
    q(&mut s, "CREATE DATABASE e");
    q(&mut s, "CREATE TABLE e.b (x INT PRIMARY KEY)");
    assert_eq!(fails(&mut s, "DROP TABLE a, missing").0, 1051);
    assert_eq!(fails(&mut s, "DROP TABLE missing").0, 1051);
    q(&mut s, "DROP TABLE IF EXISTS e.b, missing2");
    let t = texts(&db);
    assert_eq!(
        &t[t.len() - 2..],
        &[
            "DROP TABLE `a` /* generated by server */".to_string(),
            "DROP TABLE IF EXISTS `e`.`b`,`missing2` /* generated by server */".to_string(),
        ],
        "{t:?}"
    );
}

/// Q_FLAGS2, Q_SQL_MODE, Q_CATALOG, Q_CHARSET as MariaDB writes them.
fn status(flags2: u32, sql_mode: u64, charset: [u16; 3]) -> Vec<u8> {
    let mut v = vec![0];
    v.extend_from_slice(&flags2.to_le_bytes());
    v.push(1);
    v.extend_from_slice(&sql_mode.to_le_bytes());
    v.extend_from_slice(&[6, 3, b's', b't', b'd', 4]);
    for c in charset {
        v.extend_from_slice(&c.to_le_bytes());
    }
    v
}

#[test]
fn query_status_follows_the_session() {
    let (db, mut s) = setup("binlog-query-status");
    q(&mut s, "SET NAMES utf8mb4");
    q(
        &mut s,
        "SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
    );
    q(&mut s, "CREATE TABLE t1 (a INT PRIMARY KEY)");
    q(
        &mut s,
        "SET sql_mode = '', foreign_key_checks = 0, unique_checks = 0",
    );
    q(&mut s, "CREATE TABLE t2 (a INT PRIMARY KEY)");
    q(&mut s, "SET foreign_key_checks = 1, unique_checks = 1");
    q(&mut s, "CREATE DATABASE e2");
    q(&mut s, "DROP DATABASE IF EXISTS nod");
    let qs = queries(&db);
    let n = qs.len();
    let id = |s: &mut Session, v: &str| {
        let sql =
            format!("SELECT ID FROM information_schema.COLLATIONS WHERE COLLATION_NAME = @@{v}");
        q(s, &sql)[0][0].to_i128().expect("collation id") as u16
    };
    let (conn, server) = (
        id(&mut s, "collation_connection"),
        id(&mut s, "collation_server"),
    );
    // character_set_client utf8mb4 (45: the statement text is UTF-8).
    let want = |mode, flags2| status(flags2, mode, [45, conn, server]);
    assert_eq!(qs[n - 4].2, want(0x4020_0000, 0), "{:?}", qs[n - 4].1);
    assert_eq!(qs[n - 4].3, 0);
    assert_eq!(qs[n - 3].2, want(0, (1 << 26) | (1 << 27)));
    // CREATE/DROP DATABASE: the database itself as db, LOG_EVENT_SUPPRESS_USE_F.
    assert_eq!((qs[n - 2].0.as_str(), qs[n - 2].3), ("e2", 0x0008));
    assert_eq!(
        (qs[n - 1].0.as_str(), qs[n - 1].1.as_str(), qs[n - 1].3),
        ("nod", "DROP DATABASE IF EXISTS nod", 0x0008)
    );
    assert_eq!(qs[n - 5].0, "d");
}

#[test]
fn rows_events_carry_the_check_flags() {
    let (db, mut s) = setup("binlog-rows-flags");
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut s, "SET foreign_key_checks = 0");
    q(&mut s, "INSERT INTO t VALUES (1)");
    q(&mut s, "SET foreign_key_checks = 1, unique_checks = 0");
    q(&mut s, "INSERT INTO t VALUES (2)");
    q(&mut s, "SET unique_checks = 1");
    q(&mut s, "INSERT INTO t VALUES (3)");
    let flags: Vec<u16> = events(&db)
        .iter()
        .filter(|e| e.kind == binlog::event::kind::WRITE_ROWS_V1)
        .map(|e| u16::from_le_bytes([e.body[6], e.body[7]]))
        .collect();
    // MariaDB: 0x0003, 0x0005, 0x0001.
    assert_eq!(flags, vec![0x0003, 0x0005, 0x0001]);
}

#[test]
fn table_map_lengths_follow_the_charset() {
    let (db, mut s) = setup("binlog-charset-lengths");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, l VARCHAR(100) CHARACTER SET latin1, \
         u3 VARCHAR(100) CHARACTER SET utf8mb3, u4 VARCHAR(100) CHARACTER SET utf8mb4, \
         cl CHAR(10) CHARACTER SET latin1, c3 CHAR(10) CHARACTER SET utf8mb3, \
         c4 CHAR(10) CHARACTER SET utf8mb4, c4b CHAR(100) CHARACTER SET utf8mb4)",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1,'é','b','c','d','e','f','g')",
    );
    let evs = events(&db);
    let tm = evs
        .iter()
        .find(|e| e.kind == binlog::event::kind::TABLE_MAP)
        .expect("table map");
    // MariaDB 10.11.19's TABLE_MAP of the same table, after the table id.
    let want = hex("010001640001740008030f0f0ffefefefe0e64002c019001fe0afe1efe28ee90fe");
    assert_eq!(hex_of(&tm.body[6..]), hex_of(&want));
    // The latin1 column holds latin1 bytes: 'é' is one byte 0xe9.
    let w = evs
        .iter()
        .find(|e| e.kind == binlog::event::kind::WRITE_ROWS_V1)
        .expect("rows");
    let img = &w.body[w.body.len() - 25..];
    assert!(
        w.body.windows(2).any(|x| x == [1, 0xe9]),
        "latin1 value not in latin1: {}",
        hex_of(img)
    );
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The engine sequence numbers of the log's records whose bytes hold `text`.
fn record_seqs(inst: &sql::Instance, text: &str) -> Vec<u64> {
    let b = inst.binlog.as_ref().expect("log-bin on");
    let db = inst.catalog.db();
    let mut it = db
        .iter_cf(lsm::ReadOptions::default(), b.cf())
        .expect("iter");
    it.seek(binlog::log::TXN_PREFIX);
    let mut out = Vec::new();
    while it.valid() && it.key().starts_with(binlog::log::TXN_PREFIX) {
        if it.value().windows(text.len()).any(|w| w == text.as_bytes()) {
            out.push(u64::from_be_bytes(it.key()[1..9].try_into().expect("key")));
        }
        it.next();
    }
    out
}

/// A DDL's QUERY record is in the batch of the catalog write that makes the
/// DDL visible (no crash can fall between them, no transaction that saw
/// the change commits before it): its sequence number is not above the
/// write's.
#[test]
fn ddl_record_commits_with_the_catalog_write() {
    let (db, mut s) = setup("binlog-ddl-batch");
    q(&mut s, "CREATE TABLE w (a INT PRIMARY KEY)");
    let t = db.catalog.state().table("d", "w").cloned().expect("w");
    let written = t.readable_since(t.def.pk.id);
    let rec = record_seqs(&db, "CREATE TABLE w (");
    assert_eq!(rec.len(), 1);
    assert!(
        rec[0] <= written,
        "QUERY record at {} after the catalog write at {written}",
        rec[0]
    );
}

/// An online ALTER logs its QUERY record with its final catalog write only:
/// ADD FOREIGN KEY failing on an orphan (1452) and a multi-operation ALTER
/// whose later part fails (1062) log nothing and leave the table as it was;
/// one that succeeds is logged once, in the batch that stores it.
#[test]
fn failed_online_alter_logs_nothing() {
    let (db, mut s) = setup("binlog-online-alter");
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, x INT, y INT)",
    );
    q(&mut s, "INSERT INTO p VALUES (1)");
    q(&mut s, "INSERT INTO c VALUES (1, 1, 5, 7), (2, 99, 6, 7)");
    let before = db.catalog.state().table("d", "c").cloned().expect("c");
    assert_eq!(
        fails(
            &mut s,
            "ALTER TABLE c ADD FOREIGN KEY fk1 (pid) REFERENCES p (id)"
        )
        .0,
        1452
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE c ADD INDEX ix (x), ADD UNIQUE uy (y)").0,
        1062
    );
    assert_eq!(
        fails(
            &mut s,
            "ALTER TABLE c ADD INDEX ix2 (x), ADD FOREIGN KEY (pid) REFERENCES p (id)"
        )
        .0,
        1452
    );
    let after = db.catalog.state().table("d", "c").cloned().expect("c");
    assert_eq!(
        after.def.encode(),
        before.def.encode(),
        "a failed ALTER left a change"
    );
    assert!(after.building.is_empty());
    let t = texts(&db);
    assert!(
        !t.iter().any(|x| x.contains("ALTER")),
        "a failed ALTER was logged: {t:?}"
    );
    q(&mut s, "DELETE FROM c WHERE id = 2");
    q(
        &mut s,
        "ALTER TABLE c ADD INDEX ix (x), ADD FOREIGN KEY fk1 (pid) REFERENCES p (id)",
    );
    let t = texts(&db);
    assert_eq!(t.iter().filter(|x| x.contains("ALTER")).count(), 1, "{t:?}");
    let c = db.catalog.state().table("d", "c").cloned().expect("c");
    assert_eq!(c.def.foreign_keys.len(), 1);
    let ix = c.def.secondary.iter().find(|i| i.name == "ix").expect("ix");
    let rec = record_seqs(&db, "ADD INDEX ix (x), ADD FOREIGN KEY");
    assert_eq!(rec.len(), 1);
    assert!(
        rec[0] <= c.readable_since(ix.id),
        "record before the final write"
    );
}

/// DROP TABLE a, b drops both in one catalog write carrying the record, so
/// no transaction on b can commit between the drops, and a crash keeps both
/// or neither: it takes one synced catalog write fewer than two DROP
/// TABLEs of one table each (the reclaiming of each table's entries syncs
/// the same either way; commits are not synced here).
#[test]
fn drop_tables_is_one_write() {
    let (db, mut s) = setup("binlog-drop-one-write");
    for t in ["a", "b", "c"] {
        q(&mut s, &format!("CREATE TABLE {t} (x INT PRIMARY KEY)"));
        q(&mut s, &format!("INSERT INTO {t} VALUES (1)"));
    }
    let syncs = || db.catalog.db().stats().wal_syncs;
    let before = syncs();
    q(&mut s, "DROP TABLE c");
    let one = syncs() - before;
    let before = syncs();
    q(&mut s, "DROP TABLE a, b");
    assert_eq!(
        syncs() - before,
        2 * one - 1,
        "DROP TABLE a, b took several catalog writes"
    );
    let t = texts(&db);
    assert_eq!(
        t.last().map(String::as_str),
        Some("DROP TABLE `a`,`b` /* generated by server */")
    );
    assert!(db.catalog.state().table("d", "b").is_none());
}

/// DROP VIEW v1, missing, v2 drops v1 and v2 and fails with 4092: the log
/// has the views dropped (a replica runs that without error), not the
/// statement, which would fail there.
#[test]
fn partial_drop_view_logs_what_it_dropped() {
    let (db, mut s) = setup("binlog-drop-view");
    q(&mut s, "CREATE VIEW v1 AS SELECT 1");
    q(&mut s, "CREATE VIEW v2 AS SELECT 2");
    assert_eq!(fails(&mut s, "DROP VIEW v1, missing, v2").0, 4092);
    assert_eq!(fails(&mut s, "DROP VIEW missing").0, 4092);
    q(&mut s, "DROP VIEW IF EXISTS missing, v3");
    let t = texts(&db);
    assert_eq!(
        &t[t.len() - 2..],
        &[
            "DROP VIEW `v1`,`v2` /* generated by server */".to_string(),
            "DROP VIEW IF EXISTS missing, v3".to_string(),
        ],
        "{t:?}"
    );
}
