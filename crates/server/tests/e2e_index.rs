//! Index selection sanity: on seeded random data, each query answered
//! through an index (primary, secondary, unique, composite, string) returns
//! exactly what the same query forced to a full scan returns (`k+0`,
//! `CONCAT(s, '')` defeat index use), through both protocols, while random
//! inserts, updates, deletes and rolled-back transactions change the data.
//! `SEED=n` replays a run.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q, qp, Rng, Server};
use mysql::prelude::Queryable;
use mysql::Conn;

const ROWS: i64 = 400;

fn rand_s(rng: &mut Rng) -> String {
    if rng.prob(0.08) {
        return "NULL".into();
    }
    let n = rng.range(1, 4);
    let s: String = (0..n)
        .map(|_| (b'a' + rng.below(6) as u8) as char)
        .collect();
    format!("'{s}'")
}

fn rand_k(rng: &mut Rng) -> String {
    if rng.prob(0.1) {
        "NULL".into()
    } else {
        rng.range(0, 39).to_string()
    }
}

fn row_values(rng: &mut Rng, id: i64) -> String {
    let u = if rng.prob(0.1) {
        "NULL".to_string()
    } else {
        (id * 7919 % 10007).to_string()
    };
    format!(
        "({id}, {}, {u}, {}, {}, {}, 'p{id}')",
        rand_k(rng),
        rng.range(0, 9),
        rng.range(0, 29),
        rand_s(rng)
    )
}

/// Random changes: inserts, updates of indexed columns, deletes, some in
/// transactions that roll back.
fn mutate(c: &mut Conn, rng: &mut Rng, next_id: &mut i64) {
    let rollback = rng.prob(0.3);
    exec(c, "BEGIN");
    for _ in 0..rng.range(5, 25) {
        let id = rng.range(1, *next_id);
        let sql = match rng.below(7) {
            0 => {
                *next_id += 1;
                format!("INSERT INTO r VALUES {}", row_values(rng, *next_id))
            }
            1 => format!("DELETE FROM r WHERE id = {id}"),
            2 => format!("UPDATE r SET k = {} WHERE id = {id}", rand_k(rng)),
            3 => format!(
                "UPDATE r SET a = {}, b = {} WHERE id = {id}",
                rng.range(0, 9),
                rng.range(0, 29)
            ),
            4 => format!("UPDATE r SET s = {} WHERE id = {id}", rand_s(rng)),
            5 => format!("UPDATE r SET u = {} WHERE id = {id}", rng.range(0, 12000)),
            _ => format!(
                "UPDATE r SET k = k + 1 WHERE k BETWEEN {} AND {}",
                rng.range(0, 39),
                rng.range(0, 39)
            ),
        };
        match c.query_drop(&sql) {
            Ok(()) => {}
            Err(e) if common::err_code(&e).map(|x| x.0) == Some(1062) => {}
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    exec(c, if rollback { "ROLLBACK" } else { "COMMIT" });
}

/// (indexed predicate, the same predicate that cannot use an index).
fn predicates(rng: &mut Rng) -> Vec<(String, String)> {
    let k = rng.range(0, 39);
    let k2 = rng.range(0, 39);
    let (klo, khi) = (k.min(k2), k.max(k2));
    let id = rng.range(1, ROWS);
    let u = rng.range(0, 10006);
    let a = rng.range(0, 9);
    let bv = rng.range(0, 29);
    let s1 = (b'a' + rng.below(6) as u8) as char;
    let s2: String = (0..2)
        .map(|_| (b'a' + rng.below(6) as u8) as char)
        .collect();
    let ks: Vec<String> = (0..rng.range(1, 5))
        .map(|_| rng.range(0, 39).to_string())
        .collect();
    let ks = ks.join(", ");
    let pairs = [
        (format!("k = {k}"), format!("k+0 = {k}")),
        (
            format!("k BETWEEN {klo} AND {khi}"),
            format!("k+0 BETWEEN {klo} AND {khi}"),
        ),
        (format!("k > {k}"), format!("k+0 > {k}")),
        (
            format!("k >= {k} AND k < {khi}"),
            format!("k+0 >= {k} AND k+0 < {khi}"),
        ),
        (format!("k <= {k}"), format!("k+0 <= {k}")),
        (format!("k IN ({ks})"), format!("k+0 IN ({ks})")),
        (
            format!("k = {k} OR k = {k2}"),
            format!("k+0 = {k} OR k+0 = {k2}"),
        ),
        ("k IS NULL".into(), "k+0 IS NULL".into()),
        (
            format!("k = {k} AND a = {a}"),
            format!("k+0 = {k} AND a+0 = {a}"),
        ),
        (format!("id = {id}"), format!("id+0 = {id}")),
        (
            format!("id BETWEEN {id} AND {}", id + 40),
            format!("id+0 BETWEEN {id} AND {}", id + 40),
        ),
        (format!("id > {id}"), format!("id+0 > {id}")),
        (
            format!("id < {id} AND k > {k}"),
            format!("id+0 < {id} AND k+0 > {k}"),
        ),
        (format!("u = {u}"), format!("u+0 = {u}")),
        (format!("u >= {u}"), format!("u+0 >= {u}")),
        (
            format!("u BETWEEN {u} AND {}", u + 500),
            format!("u+0 BETWEEN {u} AND {}", u + 500),
        ),
        (format!("a = {a}"), format!("a+0 = {a}")),
        (
            format!("a = {a} AND b = {bv}"),
            format!("a+0 = {a} AND b+0 = {bv}"),
        ),
        (
            format!("a = {a} AND b > {bv}"),
            format!("a+0 = {a} AND b+0 > {bv}"),
        ),
        (
            format!("a = {a} AND b BETWEEN {bv} AND {}", bv + 5),
            format!("a+0 = {a} AND b+0 BETWEEN {bv} AND {}", bv + 5),
        ),
        (
            format!("a > {a} AND b < {bv}"),
            format!("a+0 > {a} AND b+0 < {bv}"),
        ),
        (format!("s = '{s2}'"), format!("CONCAT(s, '') = '{s2}'")),
        (
            format!("s LIKE '{s1}%'"),
            format!("CONCAT(s, '') LIKE '{s1}%'"),
        ),
        (
            format!("s LIKE '{s2}%'"),
            format!("CONCAT(s, '') LIKE '{s2}%'"),
        ),
        (format!("s > '{s2}'"), format!("CONCAT(s, '') > '{s2}'")),
        (
            format!("s BETWEEN '{s1}' AND '{s2}'"),
            format!("CONCAT(s, '') BETWEEN '{s1}' AND '{s2}'"),
        ),
        ("s IS NULL".into(), "CONCAT(s, '') IS NULL".into()),
    ];
    pairs.into_iter().collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn compare(c: &mut Conn, rng: &mut Rng, round: usize) -> usize {
    let cols = "id, k, u, a, b, s";
    let mut nonempty = 0;
    for (ix, scan) in predicates(rng) {
        let ctx = |what: &str| format!("round {round}, {what}: WHERE {ix}  vs  WHERE {scan}");
        let want = q(c, &format!("SELECT {cols} FROM r WHERE {scan} ORDER BY id"));
        if !want.is_empty() {
            nonempty += 1;
        }
        let got = q(c, &format!("SELECT {cols} FROM r WHERE {ix} ORDER BY id"));
        assert_eq!(got, want, "{}", ctx("ORDER BY id"));
        // Without ORDER BY rows come in index order: compare as sets.
        let got = q(c, &format!("SELECT {cols} FROM r WHERE {ix}"));
        assert_eq!(sorted(got), sorted(want.clone()), "{}", ctx("no ORDER BY"));
        let got = qp(
            c,
            &format!("SELECT {cols} FROM r WHERE {ix} ORDER BY id"),
            (),
        );
        assert_eq!(got, want, "{}", ctx("prepared"));
        // Index order with a limit, both directions.
        let n = rng.range(1, 8);
        for dir in ["ASC", "DESC"] {
            let order = format!("ORDER BY k {dir}, id {dir} LIMIT {n}");
            let w = q(c, &format!("SELECT {cols} FROM r WHERE {scan} {order}"));
            let g = q(c, &format!("SELECT {cols} FROM r WHERE {ix} {order}"));
            assert_eq!(g, w, "{}", ctx(&order));
        }
        let agg = "COUNT(*), SUM(id), MIN(k), MAX(s)";
        let w = q(c, &format!("SELECT {agg} FROM r WHERE {scan}"));
        let g = q(c, &format!("SELECT {agg} FROM r WHERE {ix}"));
        assert_eq!(g, w, "{}", ctx("aggregates"));
    }
    // Index lookups with bound parameters (plans cached by the server).
    let (k, k2, a, b) = (
        rng.range(0, 39),
        rng.range(0, 39),
        rng.range(0, 9),
        rng.range(0, 29),
    );
    let s: String = (0..2)
        .map(|_| (b'a' + rng.below(6) as u8) as char)
        .collect();
    let param_cases: Vec<(&str, &str, Vec<mysql::Value>)> = vec![
        ("k = ?", "k+0 = ?", vec![k.into()]),
        (
            "k BETWEEN ? AND ?",
            "k+0 BETWEEN ? AND ?",
            vec![k.min(k2).into(), k.max(k2).into()],
        ),
        (
            "a = ? AND b > ?",
            "a+0 = ? AND b+0 > ?",
            vec![a.into(), b.into()],
        ),
        ("s = ?", "CONCAT(s, '') = ?", vec![s.clone().into()]),
        ("s >= ?", "CONCAT(s, '') >= ?", vec![s.into()]),
        ("u < ?", "u+0 < ?", vec![(k * 250).into()]),
        (
            "id >= ? AND id < ?",
            "id+0 >= ? AND id+0 < ?",
            vec![k.into(), (k + 30).into()],
        ),
    ];
    for (ix, scan, params) in param_cases {
        let w = qp(
            c,
            &format!("SELECT id, k FROM r WHERE {scan} ORDER BY id"),
            params.clone(),
        );
        let g = qp(
            c,
            &format!("SELECT id, k FROM r WHERE {ix} ORDER BY id"),
            params.clone(),
        );
        assert_eq!(g, w, "round {round}: WHERE {ix} with {params:?}");
    }
    nonempty
}

#[test]
fn index_results_equal_full_scan_results() {
    let mut rng = Rng::from_env("index_results_equal_full_scan_results");
    let srv = Server::start("index");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE r (id INT PRIMARY KEY, k INT, u INT, a INT NOT NULL, b INT NOT NULL,
            s VARCHAR(10), pad VARCHAR(20), KEY kk (k), UNIQUE KEY uu (u), KEY kab (a, b), KEY ks (s))",
    );
    let vals: Vec<String> = (1..=ROWS).map(|id| row_values(&mut rng, id)).collect();
    exec(&mut c, &format!("INSERT INTO r VALUES {}", vals.join(", ")));
    let mut next_id = ROWS;

    // The indexed forms really use an index and the scan forms do not.
    let explain_key = |c: &mut Conn, w: &str| -> String {
        q(c, &format!("EXPLAIN SELECT * FROM r WHERE {w}"))[0]
            .split('|')
            .nth(5)
            .unwrap()
            .to_string()
    };
    for (w, key) in [
        ("k = 3", "kk"),
        ("k BETWEEN 1 AND 5", "kk"),
        ("u = 5", "uu"),
        ("a = 1 AND b > 2", "kab"),
        ("s = 'ab'", "ks"),
        ("s > 'ab'", "ks"),
        ("id > 5", "PRIMARY"),
    ] {
        assert_eq!(explain_key(&mut c, w), key, "EXPLAIN ... WHERE {w}");
    }
    for w in ["k+0 = 3", "CONCAT(s, '') = 'a'", "id+0 > 5"] {
        assert_eq!(explain_key(&mut c, w), "NULL", "EXPLAIN ... WHERE {w}");
    }

    let mut nonempty = 0;
    for round in 0..12 {
        nonempty += compare(&mut c, &mut rng, round);
        mutate(&mut c, &mut rng, &mut next_id);
    }
    // The comparisons were not vacuous.
    assert!(nonempty > 100, "only {nonempty} predicates matched rows");

    // Writes through an index touch exactly the rows a scan finds.
    for _ in 0..10 {
        let k = rng.range(0, 39);
        let n: u64 = q(&mut c, &format!("SELECT COUNT(*) FROM r WHERE k+0 = {k}"))[0]
            .parse()
            .unwrap();
        c.query_drop(format!("UPDATE r SET pad = CONCAT('x', pad) WHERE k = {k}"))
            .unwrap();
        assert_eq!(c.affected_rows(), n, "UPDATE ... WHERE k = {k}");
        let a = rng.range(0, 9);
        let n: u64 = q(
            &mut c,
            &format!("SELECT COUNT(*) FROM r WHERE a+0 = {a} AND b+0 < 3"),
        )[0]
        .parse()
        .unwrap();
        c.query_drop(format!("DELETE FROM r WHERE a = {a} AND b < 3"))
            .unwrap();
        assert_eq!(c.affected_rows(), n, "DELETE ... WHERE a = {a} AND b < 3");
        compare(&mut c, &mut rng, 100);
    }
    assert_eq!(q(&mut c, "CHECK TABLE r"), vec!["d.r|check|status|OK"]);
}
