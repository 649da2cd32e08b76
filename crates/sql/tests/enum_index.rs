//! Index lookups on ENUM and SET columns (whose keys hold member numbers
//! and bitmasks): a string probe is mapped to its member under the
//! column's collation (a string that is no member finds nothing), a number
//! probes the member number, string ranges (text order, as MariaDB
//! compares them) span the index. Every answer equals the same query on an
//! unindexed copy; EXPLAIN shows the narrowed reads.
#![allow(clippy::unwrap_used)]
use sql::Session;

mod common;
use common::{q, rows, session_in_d, TestDb};

const MEMBERS_E: [&str; 5] = ["b", "a", "c", "10", "2"];

fn setup(s: &mut Session) {
    for (t, keys) in [("t", ", KEY ke (e), KEY ks (s)"), ("u", "")] {
        q(
            s,
            &format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, e ENUM('b','a','c','10','2'), \
                 s SET('x','y','z'), v INT{keys})"
            ),
        );
    }
    let mut rng = testkit::Rng::from_env("enum_index");
    let mut vals = Vec::new();
    for id in 1..=300 {
        let e = match rng.below(8) {
            0 => "NULL".to_string(),
            1 => "''".to_string(),
            _ => format!("'{}'", MEMBERS_E[rng.below(5) as usize]),
        };
        let s = match rng.below(6) {
            0 => "NULL".to_string(),
            _ => format!("{}", rng.below(8)),
        };
        vals.push(format!("({id}, {e}, {s}, 0)"));
    }
    let vals = vals.join(",");
    for t in ["t", "u"] {
        q(s, &format!("INSERT IGNORE INTO {t} VALUES {vals}"));
    }
}

const WHERES: [&str; 34] = [
    "e = 'a'",
    "e = 'A'",
    "e = 'a '",
    "e = 'zz'",
    "e = ''",
    "e = '4'",
    "e = 2",
    "e = '2'",
    "e = 10",
    "e = '10'",
    "e = 0",
    "e = 2.5",
    "e = 2.0",
    "e IN ('a', 'c')",
    "e IN ('zz', 'A')",
    "e IN (2, 3)",
    "e < 'b'",
    "e > 2",
    "e >= 1 AND e < 3",
    "e BETWEEN 2 AND 4",
    "e BETWEEN 'a' AND 'c'",
    "e > 2.5",
    "e <= -1",
    "e = 'a' OR e = 'c'",
    "s = 'x,y'",
    "s = 'y,x'",
    "s = 'X,Y'",
    "s = 3",
    "s = ''",
    "s = 'q'",
    "s IN ('x', 'z', 'y,z')",
    "s >= 2 AND s < 5",
    "s = 9",
    "e = 'b' AND s = 'x'",
];

#[test]
fn probes_equal_unindexed_answers() {
    let db = TestDb::open("sql-enum-index");
    let mut s = session_in_d(&db);
    setup(&mut s);
    for w in WHERES {
        let got = rows(
            &mut s,
            &format!("SELECT id, e, s FROM t WHERE {w} ORDER BY id"),
        );
        let want = rows(
            &mut s,
            &format!("SELECT id, e, s FROM u WHERE {w} ORDER BY id"),
        );
        assert_eq!(got, want, "WHERE {w}");
        let forced = rows(
            &mut s,
            &format!("SELECT id, e, s FROM t FORCE INDEX (ke) WHERE {w} ORDER BY id"),
        );
        assert_eq!(forced, want, "FORCE INDEX (ke) WHERE {w}");
    }
    // The answers MariaDB gives on its own data (checked): text compares
    // under the collation, numbers compare the member number.
    q(
        &mut s,
        "CREATE TABLE m (id INT PRIMARY KEY, e ENUM('b','a','c','10','2'), KEY(e))",
    );
    q(
        &mut s,
        "INSERT IGNORE INTO m VALUES (1,'a'),(2,'b'),(3,'c'),(4,''),(5,NULL),(6,'10'),(7,'2'),(8,3),(9,'A')",
    );
    for (w, ids) in [
        ("e = 'a'", "1,9"),
        ("e = 'A'", "1,9"),
        ("e = 'zz'", ""),
        ("e = 2", "1,9"),
        ("e = '2'", "7"),
        ("e = 10", ""),
        ("e = '10'", "6"),
        ("e = ''", "4"),
        ("e = '4'", ""),
        ("e = 2.5", ""),
        ("e = 2.0", "1,9"),
        ("e = 0", "4"),
        ("e < 'b'", "1,4,6,7,9"),
        ("e IN ('a','c')", "1,3,8,9"),
        ("e IN ('zz','a')", "1,9"),
        ("e > 2", "3,6,7,8"),
        ("e BETWEEN 'a' AND 'c'", "1,2,3,8,9"),
        ("e = 'a '", "1,9"),
        ("e BETWEEN 2 AND 4", "1,3,6,8,9"),
    ] {
        let got = rows(&mut s, &format!("SELECT id FROM m WHERE {w} ORDER BY id"));
        assert_eq!(got.join(","), ids, "WHERE {w}");
    }
}

/// (type, key) of the single EXPLAIN row.
fn plan(s: &mut Session, sql: &str) -> (String, String) {
    let r = q(s, &format!("EXPLAIN {sql}"));
    let t = |i: usize| String::from_utf8_lossy(&r[0][i].text()).into_owned();
    (t(3), t(5))
}

#[test]
fn explain_shows_narrowed_reads() {
    let db = TestDb::open("sql-enum-index-explain");
    let mut s = session_in_d(&db);
    setup(&mut s);
    for (w, kind) in [
        ("e = 'a'", "ref"),
        ("e IN ('a', 'c')", "ref"),
        ("e = 2", "ref"),
        ("e IN (2, 3)", "ref"),
        ("e > 2", "range"),
        ("s = 'x,y'", "ref"),
        ("s >= 2 AND s < 5", "range"),
    ] {
        let key = if w.starts_with('s') { "ks" } else { "ke" };
        assert_eq!(
            plan(&mut s, &format!("SELECT id FROM t WHERE {w}")),
            (kind.to_string(), key.to_string()),
            "WHERE {w}"
        );
    }
}

#[test]
fn prepared_probes_follow_the_parameter_type() {
    let db = TestDb::open("sql-enum-index-params");
    let mut s = session_in_d(&db);
    setup(&mut s);
    for t in ["t", "u"] {
        q(
            &mut s,
            &format!("PREPARE p{t} FROM 'SELECT id FROM {t} WHERE e = ? ORDER BY id'"),
        );
    }
    for v in ["'a'", "'A'", "2", "'2'", "'zz'", "0", "''", "2.5"] {
        q(&mut s, &format!("SET @v = {v}"));
        assert_eq!(
            rows(&mut s, "EXECUTE pt USING @v"),
            rows(&mut s, "EXECUTE pu USING @v"),
            "@v = {v}"
        );
    }
}

/// A second session's `UPDATE ... WHERE id = {id}`: its error code, or
/// None when it got the row's lock.
fn updater(db: &TestDb, id: i32) -> Option<u16> {
    let mut b = session_in_d(db);
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    q(&mut b, "BEGIN");
    let mut c = sql::result::Collect::default();
    let r = b.query(&format!("UPDATE m SET v = v + 1 WHERE id = {id}"), &mut c);
    q(&mut b, "ROLLBACK");
    r.err().map(|e| e.code)
}

/// Table m: five rows, members 'a' (1, 4), 'b' (2), 'c' (3, 5).
fn setup_m(s: &mut Session) {
    q(
        s,
        "CREATE TABLE m (id INT PRIMARY KEY, e ENUM('b','a','c'), v INT, KEY(e))",
    );
    q(
        s,
        "INSERT INTO m VALUES (1,'a',0),(2,'b',0),(3,'c',0),(4,'a',0),(5,'c',0)",
    );
}

/// Asserts that of m's rows exactly `locked` are locked by `s` now.
fn assert_locked(db: &TestDb, locked: &[i32], what: &str) {
    for id in 1..=5 {
        let blocked = updater(db, id) == Some(1205);
        assert_eq!(blocked, locked.contains(&id), "{what}: row {id}");
    }
}

/// A locking read in READ COMMITTED keeps locked only the rows matching its
/// WHERE (InnoDB gives back the locks of the rows it read and rejected),
/// whether the ENUM condition narrows the index read or spans it; in
/// REPEATABLE READ every row read stays locked (InnoDB's next-key locks
/// cover them too), so a narrowed read locks only its members.
#[test]
fn locking_reads_lock_only_matching_rows() {
    let db = TestDb::open("sql-enum-index-locks");
    let mut s = session_in_d(&db);
    setup_m(&mut s);
    // (WHERE, ids locked)
    let cases = [
        ("e = 'a'", vec![1, 4]),
        ("e = 2", vec![1, 4]),
        ("e IN ('a', 'b')", vec![1, 2, 4]),
        ("e < 'b'", vec![1, 4]),
        ("e > 2", vec![3, 5]),
        ("e = 'a' OR e = 'c'", vec![1, 3, 4, 5]),
        ("v = 0 AND id > 3", vec![4, 5]),
    ];
    q(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    for (w, locked) in &cases {
        for lock in ["FOR UPDATE", "LOCK IN SHARE MODE"] {
            q(&mut s, "BEGIN");
            let got = rows(
                &mut s,
                &format!("SELECT id FROM m WHERE {w} ORDER BY id {lock}"),
            );
            let want: Vec<String> = locked.iter().map(|i| i.to_string()).collect();
            assert_eq!(got, want, "WHERE {w} {lock}");
            assert_locked(&db, locked, &format!("WHERE {w} {lock}"));
            q(&mut s, "COMMIT");
        }
        // UPDATE and DELETE keep only the rows they change locked too.
        q(&mut s, "BEGIN");
        q(&mut s, &format!("UPDATE m SET v = v WHERE {w}"));
        assert_locked(&db, locked, &format!("UPDATE WHERE {w}"));
        q(&mut s, "ROLLBACK");
    }
    // A row this transaction locked earlier stays locked when a later read
    // rejects it.
    q(&mut s, "BEGIN");
    q(&mut s, "SELECT id FROM m WHERE id = 2 FOR UPDATE");
    q(&mut s, "SELECT id FROM m WHERE e = 'a' FOR UPDATE");
    assert_eq!(updater(&db, 2), Some(1205));
    assert_eq!(updater(&db, 3), None);
    q(&mut s, "COMMIT");
    // REPEATABLE READ: a narrowed read locks its members only.
    q(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );
    q(&mut s, "BEGIN");
    q(&mut s, "SELECT id FROM m WHERE e = 'a' FOR UPDATE");
    assert_eq!(updater(&db, 1), Some(1205));
    assert_eq!(updater(&db, 2), None);
    q(&mut s, "COMMIT");
}

#[test]
fn explain_shows_whole_index_reads_as_scans() {
    let db = TestDb::open("sql-enum-index-explain-scan");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(
        &mut s,
        "CREATE TABLE w (id INT PRIMARY KEY, e ENUM('','a','b'), KEY ke (e))",
    );
    for (t, w, kind) in [
        ("t", "e < 'b'", "ALL"),
        ("t", "e BETWEEN 'a' AND 'c'", "ALL"),
        ("t", "e >= 'a' AND e < 'c'", "ALL"),
        ("t", "e = 'a' OR e = 'c'", "ref"),
        ("t", "e = 'a' OR e BETWEEN 'b' AND 'c'", "ALL"),
        ("t", "s > 'x'", "ALL"),
        ("w", "e = ''", "ALL"),
        ("w", "e IN ('a', '')", "ALL"),
        ("w", "e = 'a'", "ref"),
    ] {
        let (got, _) = plan(&mut s, &format!("SELECT id FROM {t} WHERE {w}"));
        assert_eq!(got, kind, "{t} WHERE {w}");
    }
}

#[test]
fn in_lists_of_parameters_probe_members() {
    let db = TestDb::open("sql-enum-index-param-lists");
    let mut s = session_in_d(&db);
    setup(&mut s);
    for t in ["t", "u"] {
        q(
            &mut s,
            &format!("PREPARE p{t} FROM 'SELECT id FROM {t} WHERE e IN (?, ?) ORDER BY id'"),
        );
    }
    for (a, b) in [
        ("'a'", "'c'"),
        ("'A'", "2"),
        ("2", "3"),
        ("'zz'", "'2'"),
        ("''", "0"),
        ("2.5", "'10'"),
        ("NULL", "'a'"),
    ] {
        q(&mut s, &format!("SET @a = {a}, @b = {b}"));
        assert_eq!(
            rows(&mut s, "EXECUTE pt USING @a, @b"),
            rows(&mut s, "EXECUTE pu USING @a, @b"),
            "({a}, {b})"
        );
    }
    // Text statements: their literals become parameters (autoparam.rs).
    for w in ["e IN ('a', 'c')", "e IN ('b', 'zz', '10')", "e IN (1, 'c')"] {
        let sql = |t: &str| format!("SELECT id FROM {t} WHERE {w} ORDER BY id");
        for _ in 0..2 {
            assert_eq!(rows(&mut s, &sql("t")), rows(&mut s, &sql("u")), "{w}");
        }
    }
}

/// IN lists of parameters (prepared, or text statements whose literals
/// became parameters) probe the members their values name: in REPEATABLE
/// READ a locking read keeps exactly the rows it read locked, so the
/// other rows stay free only when the read was narrowed.
#[test]
fn in_lists_of_parameters_narrow_at_execution() {
    let db = TestDb::open("sql-enum-index-param-locks");
    let mut s = session_in_d(&db);
    setup_m(&mut s);
    q(
        &mut s,
        "PREPARE p FROM 'SELECT id FROM m WHERE e IN (?, ?) ORDER BY id FOR UPDATE'",
    );
    let check = |s: &mut Session, sql: &str, locked: &[i32]| {
        q(s, "BEGIN");
        let want: Vec<String> = locked.iter().map(|i| i.to_string()).collect();
        assert_eq!(rows(s, sql), want, "{sql}");
        assert_locked(&db, locked, sql);
        q(s, "COMMIT");
    };
    for (a, b, locked) in [
        ("'a'", "'c'", vec![1, 3, 4, 5]),
        ("2", "'b'", vec![1, 2, 4]),
        ("'A'", "'zz'", vec![1, 4]),
        ("3", "3", vec![3, 5]),
    ] {
        q(&mut s, &format!("SET @a = {a}, @b = {b}"));
        check(&mut s, "EXECUTE p USING @a, @b", &locked);
    }
    for _ in 0..2 {
        check(
            &mut s,
            "SELECT id FROM m WHERE e IN ('a', 'c') ORDER BY id FOR UPDATE",
            &[1, 3, 4, 5],
        );
        check(
            &mut s,
            "SELECT id FROM m WHERE e IN ('b', 2) ORDER BY id FOR UPDATE",
            &[1, 2, 4],
        );
    }
}
