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
