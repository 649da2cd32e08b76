//! Differential SQL test: the same data and statements on Strata and on MariaDB InnoDB
//! (started by the test), results compared (issue 14). Statements come from a corpus
//! (`diff_corpus.sql`) and from a seeded generator over a small schema: expressions
//! with NULLs, point and range reads through the primary key and secondary indexes,
//! joins, GROUP BY with aggregates, DISTINCT, ORDER BY and LIMIT.
//!
//! Every statement ends in one of these classes:
//! - same: equal results (numbers compared as numbers; rows as multisets unless the
//!   statement orders them totally), or both failed;
//! - unsupported: Strata refused it with 1235 (a documented deviation; see
//!   docs/TESTING.md) while MariaDB ran it;
//! - different: anything else. The test fails on any.
//!
//! Knobs: `SEED=`, `DIFF_QUERIES=` (random statements, default 500), `DIFF_VERBOSE=1`.
//! Without MariaDB (`/usr/sbin/mariadbd`) the test is skipped, unless
//! `STRATA_DIFF_REQUIRE=1` (CI) makes that a failure.
#![allow(clippy::unwrap_used)]

mod common;

use common::maria::{MariaDb, MARIADBD};
use common::{Rng, Server};
use mysql::prelude::Queryable;
use mysql::{Conn, Row, Value};

/// A statement's outcome: rows of text values, or an error code.
type Outcome = Result<Vec<Vec<Option<String>>>, (u16, String)>;

fn run(c: &mut Conn, sql: &str) -> Outcome {
    match c.query::<Row, _>(sql) {
        Ok(rows) => Ok(rows
            .into_iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| match r.as_ref(i) {
                        Some(Value::NULL) | None => None,
                        Some(Value::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
                        Some(v) => Some(v.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect()),
        Err(mysql::Error::MySqlError(e)) => Err((e.code, e.message)),
        Err(e) => Err((0, e.to_string())),
    }
}

/// Equal as values: the same text, or the same number.
fn same_value(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            // PAD SPACE: 'a' and 'a ' are the same value (a group may show either).
            if x.trim_end_matches(' ') == y.trim_end_matches(' ') {
                return true;
            }
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(p), Ok(q)) => p == q || (p - q).abs() <= 1e-9 * p.abs().max(q.abs()).max(1.0),
                _ => false,
            }
        }
        _ => false,
    }
}

fn same_rows(a: &[Vec<Option<String>>], b: &[Vec<Option<String>>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q)))
}

/// Rows in a canonical order (for statements without a total ORDER BY).
fn sorted(mut rows: Vec<Vec<Option<String>>>) -> Vec<Vec<Option<String>>> {
    let key = |r: &Vec<Option<String>>| -> Vec<(u8, f64, String)> {
        r.iter()
            .map(|v| match v {
                None => (0, 0.0, String::new()),
                Some(s) => match s.parse::<f64>() {
                    Ok(f) => (1, f, String::new()),
                    Err(_) => (2, 0.0, s.clone()),
                },
            })
            .collect()
    };
    rows.sort_by(|x, y| {
        key(x)
            .partial_cmp(&key(y))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows
}

#[derive(Default)]
struct Tally {
    same: u64,
    both_failed: u64,
    unsupported: Vec<String>,
    different: Vec<String>,
}

fn compare(s: &mut Conn, m: &mut Conn, sql: &str, ordered: bool, t: &mut Tally, verbose: bool) {
    let (a, b) = (run(s, sql), run(m, sql));
    match (&a, &b) {
        (Ok(x), Ok(y)) => {
            let ok = if ordered {
                same_rows(x, y)
            } else {
                same_rows(&sorted(x.clone()), &sorted(y.clone()))
            };
            if ok {
                t.same += 1;
            } else {
                let show = |r: &Vec<Vec<Option<String>>>| {
                    format!("{} rows {:?}", r.len(), &r[..r.len().min(4)])
                };
                t.different.push(format!(
                    "{sql}\n    strata:  {}\n    mariadb: {}",
                    show(x),
                    show(y)
                ));
            }
        }
        (Err((x, _)), Err((y, _))) if x == y => t.both_failed += 1,
        (Err((1235, msg)), Ok(_)) => t.unsupported.push(format!("{sql}\n    {msg}")),
        _ => t
            .different
            .push(format!("{sql}\n    strata:  {a:?}\n    mariadb: {b:?}")),
    }
    if verbose {
        eprintln!("{sql}\n  -> strata {a:?}\n  -> mariadb {b:?}");
    }
}

const SCHEMA: &[&str] = &[
    "CREATE TABLE t1 (id INT PRIMARY KEY, a INT, b VARCHAR(12), c DECIMAL(10,2), d DATE, \
     KEY k_a (a), KEY k_ba (b, a))",
    "CREATE TABLE t2 (id INT PRIMARY KEY, t1id INT, v INT NOT NULL, w VARCHAR(8), KEY k_t1 (t1id))",
];

fn lit_str(r: &mut Rng) -> String {
    const WORDS: &[&str] = &[
        "", "a", "ab", "abc", "b", "ba", "bcd", "x", "xy", "zz", "a b", "q1",
        // Case and accents: letters no other word has in any case or accent
        // (under utf8mb4_general_ci a group of 'b' and 'B', even of their
        // substrings, could show either spelling), ordered unlike their bytes.
        "Gh", "M_", "Éf", "Ñ",
    ];
    format!("'{}'", WORDS[r.below(WORDS.len() as u64) as usize])
}

fn maybe_null(r: &mut Rng, v: String) -> String {
    if r.below(6) == 0 {
        "NULL".into()
    } else {
        v
    }
}

fn data(r: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    for id in 1..=120 {
        let a = format!("{}", r.below(40) as i64 - 10);
        let a = maybe_null(r, a);
        let b = lit_str(r);
        let b = maybe_null(r, b);
        let c = format!("{}.{:02}", r.below(2000) as i64 - 500, r.below(100));
        let c = maybe_null(r, c);
        let d = format!(
            "'20{:02}-{:02}-{:02}'",
            r.below(30),
            1 + r.below(12),
            1 + r.below(28)
        );
        let d = maybe_null(r, d);
        out.push(format!("INSERT INTO t1 VALUES ({id}, {a}, {b}, {c}, {d})"));
    }
    for id in 1..=200 {
        let t1id = format!("{}", 1 + r.below(140));
        let t1id = maybe_null(r, t1id);
        let v = r.below(50) as i64 - 5;
        let w = lit_str(r);
        let w = maybe_null(r, w);
        out.push(format!("INSERT INTO t2 VALUES ({id}, {t1id}, {v}, {w})"));
    }
    out
}

/// Random expressions over t1 (and t2 when `join`).
struct Gen<'a> {
    r: &'a mut Rng,
    join: bool,
}

impl Gen<'_> {
    fn pick<'s>(&mut self, xs: &[&'s str]) -> &'s str {
        xs[self.r.below(xs.len() as u64) as usize]
    }

    fn int_col(&mut self) -> String {
        if self.join && self.r.below(2) == 0 {
            self.pick(&["t2.v", "t2.t1id", "t2.id"]).into()
        } else {
            self.pick(&["t1.id", "t1.a", "t1.a"]).into()
        }
    }

    fn int(&mut self, depth: u32) -> String {
        if depth == 0 || self.r.below(3) == 0 {
            return match self.r.below(4) {
                0 => format!("{}", self.r.below(30) as i64 - 8),
                // A typed NULL: an untyped NULL literal makes MariaDB type IF/COALESCE
                // results as strings (a documented deviation, docs/TESTING.md).
                1 => "CAST(NULL AS SIGNED)".into(),
                _ => self.int_col(),
            };
        }
        let d = depth - 1;
        match self.r.below(12) {
            0..=2 => {
                let op = self.pick(&["+", "-", "*"]);
                format!("({} {op} {})", self.int(d), self.int(d))
            }
            3 => format!("({} DIV {})", self.int(d), self.int(d)),
            4 => format!("({} % {})", self.int(d), self.int(d)),
            5 => format!("ABS({})", self.int(d)),
            6 => format!("COALESCE({}, {})", self.int(d), self.int(d)),
            7 => format!("IFNULL({}, {})", self.int(d), self.int(d)),
            8 => format!(
                "CASE WHEN {} THEN {} ELSE {} END",
                self.cond(d),
                self.int(d),
                self.int(d)
            ),
            9 => format!("IF({}, {}, {})", self.cond(d), self.int(d), self.int(d)),
            10 => format!("LENGTH({})", self.string(d)),
            _ => format!("-{}", self.int(d)),
        }
    }

    fn num(&mut self, depth: u32) -> String {
        match self.r.below(6) {
            0 => "t1.c".into(),
            1 => format!("ROUND(t1.c, {})", self.r.below(3)),
            2 => format!("({} / {})", self.int(depth), self.int(depth)),
            3 => format!("(t1.c * {})", self.int(depth)),
            4 => format!("(t1.c + {})", self.int(depth)),
            _ => format!("FLOOR(t1.c)"),
        }
    }

    fn string(&mut self, depth: u32) -> String {
        if depth == 0 || self.r.below(3) == 0 {
            return match self.r.below(4) {
                0 => lit_str(self.r),
                1 if self.join => "t2.w".into(),
                _ => "t1.b".into(),
            };
        }
        let d = depth - 1;
        match self.r.below(6) {
            0 => format!("CONCAT({}, {})", self.string(d), self.string(d)),
            1 => format!("REVERSE({})", self.string(d)),
            2 => format!(
                "SUBSTRING({}, {}, {})",
                self.string(d),
                1 + self.r.below(3),
                self.r.below(3)
            ),
            3 => format!("COALESCE({}, {})", self.string(d), self.string(d)),
            4 => format!("CONCAT({}, {})", self.string(d), self.int(d)),
            _ => format!("TRIM({})", self.string(d)),
        }
    }

    fn cond(&mut self, depth: u32) -> String {
        let d = depth.saturating_sub(1);
        match self.r.below(11) {
            0 | 1 => {
                let op = self.pick(&["=", "<>", "<", "<=", ">", ">=", "<=>"]);
                format!("{} {op} {}", self.int(d), self.int(d))
            }
            2 => {
                let op = self.pick(&["=", "<>", "<", ">="]);
                format!("{} {op} {}", self.string(d), self.string(d))
            }
            3 => format!("{} IS NULL", self.int(d)),
            4 => format!("{} IS NOT NULL", self.string(d)),
            5 => format!(
                "{} IN ({}, {}, {})",
                self.int(d),
                self.int(0),
                self.int(0),
                self.int(0)
            ),
            6 => format!(
                "{} BETWEEN {} AND {}",
                self.int(d),
                self.int(0),
                self.int(0)
            ),
            7 => format!(
                "{} LIKE '{}%'",
                self.string(d),
                self.pick(&["a", "b", "", "x"])
            ),
            8 if depth > 0 => {
                let op = self.pick(&["AND", "OR", "XOR"]);
                format!("({} {op} {})", self.cond(d), self.cond(d))
            }
            9 if depth > 0 => format!("NOT ({})", self.cond(d)),
            _ => format!("t1.c > {}", self.r.below(1000) as i64 - 500),
        }
    }

    /// An index-friendly predicate (point, IN, range on the key or a secondary index).
    fn keyed(&mut self) -> String {
        match self.r.below(7) {
            0 => format!("t1.id = {}", self.r.below(130)),
            1 => format!(
                "t1.id IN ({}, {}, {})",
                self.r.below(130),
                self.r.below(130),
                self.r.below(130)
            ),
            2 => format!(
                "t1.id BETWEEN {} AND {}",
                self.r.below(60),
                60 + self.r.below(70)
            ),
            3 => format!("t1.a = {}", self.r.below(40) as i64 - 10),
            4 => format!(
                "t1.a > {} AND t1.a < {}",
                self.r.below(20) as i64 - 10,
                self.r.below(30)
            ),
            5 => format!("t1.b = {}", lit_str(self.r)),
            _ => format!(
                "t1.b = {} AND t1.a >= {}",
                lit_str(self.r),
                self.r.below(20) as i64 - 10
            ),
        }
    }
}

/// One random statement and whether its ORDER BY orders the rows totally.
fn statement(r: &mut Rng) -> (String, bool) {
    let join = r.below(4) == 0;
    let mut g = Gen { r, join };
    let from = if join {
        if g.r.below(2) == 0 {
            "t1 JOIN t2 ON t1.id = t2.t1id"
        } else {
            "t1 LEFT JOIN t2 ON t1.id = t2.t1id"
        }
    } else {
        "t1"
    };
    let mut wh = if g.r.below(2) == 0 {
        g.keyed()
    } else {
        g.cond(2)
    };
    if g.r.below(3) == 0 {
        wh = format!("{wh} AND {}", g.cond(1));
    }
    match g.r.below(6) {
        0 | 1 => {
            // Plain rows, ordered by every output column plus the keys: a total order.
            let e1 = g.int(2);
            let e2 = if g.r.below(2) == 0 {
                g.string(2)
            } else {
                g.num(1)
            };
            let keys = if join { "t1.id, t2.id" } else { "t1.id" };
            let limit = if g.r.below(2) == 0 {
                format!(" LIMIT {}", g.r.below(15))
            } else {
                String::new()
            };
            (
                format!("SELECT {e1}, {e2}, {keys} FROM {from} WHERE {wh} ORDER BY {keys}{limit}"),
                true,
            )
        }
        2 => {
            let grp = if g.r.below(2) == 0 {
                g.int(1)
            } else {
                g.string(1)
            };
            let agg = g.int(1);
            (
                format!(
                    "SELECT {grp} AS g, COUNT(*), COUNT({agg}), SUM({agg}), MIN({agg}), MAX({agg}) FROM {from} WHERE {wh} GROUP BY g"
                ),
                false,
            )
        }
        3 => {
            let e = g.int(2);
            let limit = g.r.below(10);
            (
                format!("SELECT DISTINCT {e} AS x FROM {from} WHERE {wh} ORDER BY x LIMIT {limit}"),
                true,
            )
        }
        4 => {
            let e = g.int(1);
            (
                format!(
                    "SELECT COUNT(*), SUM({e}), AVG(t1.c), MIN(t1.b), MAX(t1.d) FROM {from} WHERE {wh}"
                ),
                true,
            )
        }
        _ => {
            let e = g.int(2);
            (
                format!("SELECT {e}, t1.b, t1.d FROM {from} WHERE {wh}"),
                false,
            )
        }
    }
}

#[test]
fn strata_answers_as_mariadb_does() {
    let Some(maria) = MariaDb::start() else {
        assert!(
            std::env::var("STRATA_DIFF_REQUIRE").is_err(),
            "MariaDB ({MARIADBD}) is required (STRATA_DIFF_REQUIRE is set)"
        );
        eprintln!("diff_mariadb: {MARIADBD} not found: skipped");
        return;
    };
    let seed = testkit::seed("diff_mariadb");
    let mut r = Rng::new(seed);
    let n: u64 = std::env::var("DIFF_QUERIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let verbose = std::env::var("DIFF_VERBOSE").is_ok();
    let srv = Server::start("diff");
    let mut s = srv.conn();
    let mut m = maria.conn().unwrap();
    for c in [&mut s, &mut m] {
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        c.query_drop("SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'")
            .unwrap();
    }
    m.query_drop("SET default_storage_engine = InnoDB").unwrap();
    for sql in SCHEMA.iter().map(|x| x.to_string()).chain(data(&mut r)) {
        s.query_drop(&sql)
            .unwrap_or_else(|e| panic!("strata: {sql}: {e}"));
        m.query_drop(&sql)
            .unwrap_or_else(|e| panic!("mariadb: {sql}: {e}"));
    }
    let mut t = Tally::default();
    let corpus = include_str!("diff_corpus.sql");
    let mut from_corpus = 0;
    for line in corpus.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("--") {
            continue;
        }
        // "-- unordered" marks statements whose row order is not total.
        let (sql, ordered) = match line.strip_suffix("-- unordered") {
            Some(x) => (x.trim(), false),
            None => (line, true),
        };
        compare(&mut s, &mut m, sql, ordered, &mut t, verbose);
        from_corpus += 1;
    }
    for _ in 0..n {
        let (sql, ordered) = statement(&mut r);
        compare(&mut s, &mut m, &sql, ordered, &mut t, verbose);
    }
    let total = from_corpus + n;
    eprintln!(
        "diff_mariadb SEED={seed}: {total} statements ({from_corpus} from the corpus, {n} generated): \
         {} same, {} failed on both, {} unsupported by Strata (1235), {} different",
        t.same,
        t.both_failed,
        t.unsupported.len(),
        t.different.len()
    );
    for u in &t.unsupported {
        eprintln!("UNSUPPORTED {u}");
    }
    for d in &t.different {
        eprintln!("DIFFERENT {d}");
    }
    assert!(
        t.different.is_empty(),
        "{} statements answered differently (listed above; SEED={seed})",
        t.different.len()
    );
}
