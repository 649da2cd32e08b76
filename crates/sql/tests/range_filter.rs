//! A WHERE that is only `k BETWEEN lo AND hi` on the scanned index's first
//! column is not evaluated per row when the range says it all
//! (`access::range_is_filter`): integer bounds the key holds exactly. Every
//! other bound (a string, decimal or double, NULL, a value clamped to the
//! column's range) must still be decided by the WHERE: the results equal
//! those of the same rows in a table without indexes.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Session, Value};

mod common;
use common::{q, session_in_d, texts, TestDb};

fn run(s: &mut Session, id: u32, params: &[Value]) -> Vec<String> {
    let mut c = Collect::default();
    s.execute_prepared(id, params, &mut c)
        .unwrap_or_else(|e| panic!("{params:?}: {e}"));
    texts(c.rows)
}

#[test]
fn between_on_the_key_agrees_with_a_scan() {
    let db = TestDb::open("range-filter");
    let mut s = session_in_d(&db);
    let cols = "id INT, u BIGINT UNSIGNED, t TINYINT, c VARCHAR(10)";
    q(
        &mut s,
        &format!("CREATE TABLE k ({cols}, PRIMARY KEY (id), KEY (t), KEY (u))"),
    );
    q(&mut s, &format!("CREATE TABLE n ({cols})"));
    // Rows at the ends of each type's range, where clamped bounds land.
    let mut rows = vec![
        "(2147483647, 18446744073709551615, 127, 'max')".to_string(),
        "(-2147483648, 0, -128, 'min')".to_string(),
    ];
    for i in -20i64..40 {
        rows.push(format!(
            "({i}, {}, {}, 'r{i}')",
            (i * 7).rem_euclid(50),
            i % 9
        ));
    }
    for t in ["k", "n"] {
        q(
            &mut s,
            &format!("INSERT INTO {t} VALUES {}", rows.join(",")),
        );
    }
    let bounds = [
        Value::Int(3),
        Value::Int(-5),
        Value::Int(30),
        Value::UInt(12),
        Value::Int(1 << 40),
        Value::Int(-(1 << 40)),
        Value::Int(200),
        Value::Int(-200),
        Value::UInt(u64::MAX),
        Value::Null,
        Value::Bytes(b"7".to_vec()),
        Value::Bytes(b"7.5".to_vec()),
        Value::Bytes(b" 12abc".to_vec()),
        Value::Decimal(75, 1),
        Value::Double(12.5),
        Value::Double(1e30),
    ];
    let mut checked = 0;
    for col in ["id", "u", "t"] {
        let sql =
            |t: &str| format!("SELECT id, c FROM {t} WHERE {col} BETWEEN ? AND ? ORDER BY id");
        let (keyed, _, _) = s.prepare(&sql("k")).unwrap();
        let (plain, _, _) = s.prepare(&sql("n")).unwrap();
        for lo in &bounds {
            for hi in &bounds {
                let params = [lo.clone(), hi.clone()];
                let want = run(&mut s, plain, &params);
                let got = run(&mut s, keyed, &params);
                assert_eq!(got, want, "{col} BETWEEN {lo:?} AND {hi:?}");
                checked += !want.is_empty() as usize;
            }
        }
    }
    assert!(checked > 100, "{checked}");
    // Literal bounds, and the clamped ends.
    for w in [
        "id BETWEEN 5 AND 9",
        "id BETWEEN 2147483000 AND 5000000000",
        "t BETWEEN 100 AND 300",
        "t BETWEEN -300 AND -100",
        "u BETWEEN 18446744073709551000 AND 18446744073709551615",
    ] {
        let get = |s: &mut Session, t: &str| {
            texts(q(s, &format!("SELECT id FROM {t} WHERE {w} ORDER BY id")))
        };
        let want = get(&mut s, "n");
        assert!(!want.is_empty(), "{w}");
        assert_eq!(get(&mut s, "k"), want, "{w}");
    }
}

/// A locking read through a secondary index re-reads each row after its lock:
/// when the row left the range while the read waited, the WHERE (not the range
/// the index entry was found in) must reject it, so it is neither returned nor
/// updated.
#[test]
fn locking_range_read_rechecks_rows_changed_while_waiting() {
    let db = TestDb::open("range-filter-lock");
    let mut a = session_in_d(&db);
    q(
        &mut a,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, KEY k (k))",
    );
    q(
        &mut a,
        "INSERT INTO t VALUES (1, 5, 0), (2, 6, 0), (3, 50, 0)",
    );
    for stmt in [
        "SELECT id, k FROM t FORCE INDEX (k) WHERE k BETWEEN 1 AND 10 FOR UPDATE",
        "UPDATE t FORCE INDEX (k) SET v = v + 1 WHERE k BETWEEN 1 AND 10",
    ] {
        q(&mut a, "UPDATE t SET k = 5, v = 0 WHERE id = 1");
        q(&mut a, "UPDATE t SET v = 0");
        q(&mut a, "BEGIN");
        q(&mut a, "UPDATE t SET k = 100 WHERE id = 1");
        let inst = db.inst.clone();
        let stmt2 = stmt.to_string();
        let b = std::thread::spawn(move || {
            let mut b = sql::Session::new(inst, 2, "root", None);
            q(&mut b, "USE d");
            q(&mut b, "BEGIN");
            let got = texts(q(&mut b, &stmt2));
            q(&mut b, "COMMIT");
            got
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        q(&mut a, "COMMIT");
        let got = b.join().unwrap();
        if stmt.starts_with("SELECT") {
            assert_eq!(got, vec!["2|6"], "{stmt}");
        }
        assert_eq!(
            texts(q(&mut a, "SELECT id, k, v FROM t ORDER BY id")),
            if stmt.starts_with("SELECT") {
                vec!["1|100|0", "2|6|0", "3|50|0"]
            } else {
                vec!["1|100|0", "2|6|1", "3|50|0"]
            },
            "{stmt}"
        );
    }
}
