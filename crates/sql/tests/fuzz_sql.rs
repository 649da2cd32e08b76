//! Seeded fuzzing of the SQL path (parse -> bind -> plan -> execute) through a `Session` over
//! a small schema: statements are generated from a grammar of expressions and statement
//! shapes, then mutated at the token level (deleted, repeated, swapped, replaced by edge
//! literals and keywords, spliced, nested deeply, chained flatly). Every statement must end
//! in a result or an error: a panic fails the test (the statement is printed), and a stack
//! overflow aborts it. Statements run on a thread with the stack a server connection thread
//! has (`sql::SESSION_STACK_SIZE`), so a statement that would kill the server kills this test.
//!
//! Knobs: `SEED=` replays a run; `FUZZ_STMTS=` (default 20,000) or `FUZZ_SECS=` (run by the
//! clock instead) size it; `FUZZ_TRACE=<file>` writes each statement to the file before it
//! runs (to find the one that aborted the process); `FUZZ_SHALLOW=1` leaves out the long
//! chains and deep nesting. docs/TESTING.md has the long runs.
#![allow(clippy::unwrap_used)]

use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testkit::Rng;

/// The schema (shared with the coverage-guided target fuzz/fuzz_targets/sql.rs).
const SCHEMA: &str = include_str!("fuzz_schema.sql");

const COLS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "t1.a", "t1.b", "x", "y", "z", "w", "v", "t2.y",
];

const FUNCS: &[(&str, usize)] = &[
    ("CONCAT", 2),
    ("CONCAT_WS", 3),
    ("LENGTH", 1),
    ("CHAR_LENGTH", 1),
    ("UPPER", 1),
    ("LOWER", 1),
    ("SUBSTRING", 3),
    ("LEFT", 2),
    ("RIGHT", 2),
    ("TRIM", 1),
    ("REPLACE", 3),
    ("REPEAT", 2),
    ("REVERSE", 1),
    ("LOCATE", 2),
    ("HEX", 1),
    ("ABS", 1),
    ("ROUND", 2),
    ("TRUNCATE", 2),
    ("FLOOR", 1),
    ("CEIL", 1),
    ("SIGN", 1),
    ("SQRT", 1),
    ("POW", 2),
    ("MOD", 2),
    ("GREATEST", 3),
    ("LEAST", 2),
    ("IF", 3),
    ("IFNULL", 2),
    ("NULLIF", 2),
    ("COALESCE", 3),
    ("UNIX_TIMESTAMP", 1),
    ("FROM_UNIXTIME", 1),
    ("DATE", 1),
    ("YEAR", 1),
    ("MONTH", 1),
    ("DAY", 1),
    ("LAST_INSERT_ID", 0),
    ("ROW_COUNT", 0),
    ("FOUND_ROWS", 0),
    ("NOW", 0),
    ("DATABASE", 0),
    ("CONNECTION_ID", 0),
];

const AGGS: &[&str] = &["COUNT", "SUM", "MIN", "MAX", "AVG"];

/// Literals at the edges of every type.
const EDGE: &[&str] = &[
    "0",
    "1",
    "-1",
    "NULL",
    "''",
    "' '",
    "'abc'",
    "'ABC'",
    "'12abc'",
    "'%'",
    "'_'",
    "'\\\\'",
    "'it''s'",
    "\"dq\"",
    "'é'",
    "'\\0'",
    "X'00ff'",
    "0x41",
    "X''",
    "b'101'",
    "_binary'bin'",
    "_utf8mb4'u'",
    "127",
    "128",
    "255",
    "256",
    "32767",
    "65535",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999999",
    "0.1",
    "-0.0",
    "1.5",
    "123456789.987654321",
    "0.000000000000000000000000000001",
    "1e308",
    "-1e308",
    "1e-308",
    "2.5e-3",
    "'2024-02-29'",
    "'2023-02-29'",
    "'0000-00-00'",
    "'9999-12-31 23:59:59'",
    "'1970-01-01 00:00:00'",
    "DATE '2020-01-01'",
    "TRUE",
    "FALSE",
    "@v",
    "@@autocommit",
    "@@max_allowed_packet",
];

const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "XOR",
    "IN",
    "IS",
    "NULL",
    "LIKE",
    "BETWEEN",
    "GROUP",
    "BY",
    "ORDER",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "DESC",
    "ASC",
    "DISTINCT",
    "JOIN",
    "LEFT",
    "ON",
    "AS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "UNION",
    "ALL",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "FOR",
    "SHARE",
    "LOCK",
    "IGNORE",
    "DUPLICATE",
    "KEY",
    "INTERVAL",
    "CAST",
    "SIGNED",
    "UNSIGNED",
    "CHAR",
    "BINARY",
    "COLLATE",
    "EXISTS",
    "ANY",
    "WITH",
    "OVER",
    "PARTITION",
    "ROLLUP",
    "DIV",
    "MOD",
    "REGEXP",
    "ESCAPE",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "<=>",
    "<>",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "!",
    "~",
    "^",
    "&",
    "|",
    "<<",
    ">>",
    ";",
    ".",
    "*",
    "`",
    "'",
    "\"",
    "/*",
    "*/",
    "/*!",
    "--",
    "#",
    "\\",
];

const BINOPS: &[&str] = &[
    "+", "-", "*", "/", "DIV", "%", "MOD", "=", "<=>", "<>", "<", ">", "<=", ">=", "AND", "OR",
    "XOR", "&", "|", "^", "<<", ">>", "LIKE", "NOT LIKE", "REGEXP",
];

const T1_COLS: &[&str] = &["a", "b", "c", "d", "e", "f", "g", "t1.a", "t1.b"];
const T2_COLS: &[&str] = &["x", "y", "z", "w", "v", "t2.y", "t2.x"];

thread_local! {
    /// The columns the statement being generated can name.
    static SCOPE: std::cell::Cell<&'static [&'static str]> = const { std::cell::Cell::new(COLS) };
}

fn col(rng: &mut Rng) -> &'static str {
    let cols = SCOPE.with(|c| c.get());
    if cols.is_empty() {
        return pick(rng, EDGE);
    }
    pick(rng, cols)
}

fn pick<'a>(rng: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[rng.below(xs.len() as u64) as usize]
}

fn expr(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.chance(25) {
        return if rng.chance(50) {
            col(rng).to_string()
        } else {
            pick(rng, EDGE).to_string()
        };
    }
    let d = depth - 1;
    match rng.below(14) {
        13 => match rng.below(4) {
            0 => format!("({} IN (SELECT y FROM t2))", expr(rng, d)),
            1 => format!("EXISTS (SELECT 1 FROM t2 WHERE y = {})", expr(rng, d)),
            2 => "(SELECT MAX(y) FROM t2)".to_string(),
            _ => format!("(SELECT COUNT(*) FROM t2 WHERE t2.y = {})", expr(rng, d)),
        },
        0..=3 => format!("({} {} {})", expr(rng, d), pick(rng, BINOPS), expr(rng, d)),
        4 => format!("(NOT {})", expr(rng, d)),
        5 => format!("(-{})", expr(rng, d)),
        6 => format!(
            "({} IS {}NULL)",
            expr(rng, d),
            if rng.chance(50) { "NOT " } else { "" }
        ),
        7 => format!(
            "({} BETWEEN {} AND {})",
            expr(rng, d),
            expr(rng, d),
            expr(rng, d)
        ),
        8 => {
            let n = 1 + rng.below(4);
            let items: Vec<String> = (0..n).map(|_| expr(rng, d)).collect();
            format!("({} IN ({}))", expr(rng, d), items.join(", "))
        }
        9 => format!(
            "CASE WHEN {} THEN {} ELSE {} END",
            expr(rng, d),
            expr(rng, d),
            expr(rng, d)
        ),
        10 => format!(
            "CAST({} AS {})",
            expr(rng, d),
            pick(
                rng,
                &[
                    "SIGNED",
                    "UNSIGNED",
                    "CHAR",
                    "DECIMAL(10,2)",
                    "DATE",
                    "DATETIME",
                    "BINARY"
                ]
            )
        ),
        _ => {
            let (f, n) = FUNCS[rng.below(FUNCS.len() as u64) as usize];
            let args: Vec<String> = (0..n).map(|_| expr(rng, d)).collect();
            format!("{f}({})", args.join(", "))
        }
    }
}

/// A FROM clause; sets the columns in scope.
fn table(rng: &mut Rng) -> &'static str {
    let (t, cols) = [
        ("t1", T1_COLS),
        ("t2", T2_COLS),
        ("t1, t2", COLS),
        ("t1 JOIN t2 ON t1.a = t2.y", COLS),
        ("t1 LEFT JOIN t2 ON t1.a = t2.x", COLS),
        ("t1 AS t1", T1_COLS),
        ("(SELECT * FROM t1 WHERE a > 0) AS t1", T1_COLS),
        ("(SELECT * FROM t2 UNION ALL SELECT * FROM t2) AS t2", T2_COLS),
        (
            "t1, (SELECT y, COUNT(*) AS x, MAX(z) AS z, MIN(w) AS w, SUM(v) AS v FROM t2 GROUP BY y) AS t2",
            COLS,
        ),
    ][rng.below(9) as usize];
    SCOPE.with(|c| c.set(cols));
    t
}

fn one_table(rng: &mut Rng) -> &'static str {
    let (t, cols) = [("t1", T1_COLS), ("t2", T2_COLS)][rng.below(2) as usize];
    SCOPE.with(|c| c.set(cols));
    t
}

/// A statement from the grammar.
fn statement(rng: &mut Rng) -> String {
    let depth = 1 + rng.below(4) as u32;
    SCOPE.with(|c| c.set(COLS));
    match rng.below(12) {
        0..=4 => {
            let from = table(rng);
            let n = 1 + rng.below(3);
            let mut cols: Vec<String> = (0..n).map(|_| expr(rng, depth)).collect();
            let grouped = rng.chance(25);
            if grouped {
                cols.push(format!("{}({})", pick(rng, AGGS), expr(rng, depth)));
            }
            let mut s = format!(
                "SELECT {}{} FROM {}",
                if rng.chance(15) { "DISTINCT " } else { "" },
                cols.join(", "),
                from
            );
            if rng.chance(70) {
                s += &format!(" WHERE {}", expr(rng, depth));
            }
            if grouped && rng.chance(60) {
                s += &format!(" GROUP BY {}", col(rng));
                if rng.chance(30) {
                    s += &format!(" HAVING {}", expr(rng, depth));
                }
            }
            if rng.chance(40) {
                s += &format!(
                    " ORDER BY {}{}",
                    expr(rng, 1),
                    if rng.chance(50) { " DESC" } else { "" }
                );
            }
            if rng.chance(40) {
                s += &format!(
                    " LIMIT {}",
                    pick(rng, &["0", "1", "3", "10", "1, 2", "5 OFFSET 1"])
                );
            }
            if rng.chance(10) {
                s += pick(rng, &[" FOR UPDATE", " LOCK IN SHARE MODE", " FOR SHARE"]);
            }
            s
        }
        5 => {
            SCOPE.with(|c| c.set(&[]));
            format!("SELECT {}", expr(rng, depth + 1))
        }
        6 => format!(
            "INSERT {}INTO t1 (a, b, c, d, e, f, g) VALUES ({}, {}, {}, {}, {}, {}, {}){}",
            if rng.chance(20) { "IGNORE " } else { "" },
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            if rng.chance(30) {
                format!(" ON DUPLICATE KEY UPDATE b = {}", expr(rng, 1))
            } else {
                String::new()
            }
        ),
        7 => format!(
            "{} INTO t2 (y, z, w, v) VALUES ({}, {}, {}, {})",
            pick(rng, &["INSERT", "REPLACE"]),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1)
        ),
        8 => format!(
            "UPDATE {} SET {} = {} WHERE {}{}",
            one_table(rng),
            col(rng),
            expr(rng, depth),
            expr(rng, depth),
            if rng.chance(30) { " LIMIT 2" } else { "" }
        ),
        9 => format!("DELETE FROM {} WHERE {}", one_table(rng), expr(rng, depth)),
        10 => pick(
            rng,
            &[
                "BEGIN",
                "COMMIT",
                "ROLLBACK",
                "START TRANSACTION READ ONLY",
                "SET autocommit = 0",
                "SET autocommit = 1",
                "SET @v = 5",
                "SET sql_mode = ''",
                "SET NAMES latin1",
                "SET NAMES utf8mb4",
                "SHOW TABLES",
                "SHOW CREATE TABLE t1",
                "SHOW INDEX FROM t2",
                "SHOW WARNINGS",
                "SHOW STATUS LIKE 'Com%'",
                "EXPLAIN SELECT * FROM t1 WHERE b = 'x'",
                "CHECK TABLE t1, t2",
                "CREATE INDEX ke ON t1 (e)",
                "DROP INDEX ke ON t1",
                "ANALYZE TABLE t1",
                "TRUNCATE TABLE t2",
                "SELECT * FROM information_schema.tables",
            ],
        )
        .to_string(),
        _ => format!(
            "CREATE TABLE IF NOT EXISTS t{} (p INT PRIMARY KEY, q {} {})",
            3 + rng.below(3),
            pick(
                rng,
                &[
                    "INT",
                    "VARCHAR(10)",
                    "DECIMAL(65,30)",
                    "DOUBLE",
                    "DATETIME(6)",
                    "TIME",
                    "ENUM('a','b')",
                    "BIT(3)",
                    "VARCHAR(4294967297)",
                    "CHAR(300)",
                ]
            ),
            pick(
                rng,
                &["", "NOT NULL", "DEFAULT 1", "DEFAULT NULL", "UNIQUE"]
            )
        ),
    }
}

/// Splits into crude tokens (words, quoted strings, single punctuation).
fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for ch in s.chars() {
        if let Some(q) = quote {
            cur.push(ch);
            if ch == q {
                quote = None;
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        match ch {
            '\'' | '"' | '`' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                cur.push(ch);
                quote = Some(ch);
            }
            c if c.is_alphanumeric() || c == '_' || c == '.' || c == '@' => cur.push(c),
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One random mutation of a statement.
fn mutate(rng: &mut Rng, s: &str, other: &str) -> String {
    let mut t = tokens(s);
    if t.is_empty() {
        return s.to_string();
    }
    let i = rng.below(t.len() as u64) as usize;
    let shallow = std::env::var("FUZZ_SHALLOW").is_ok();
    match rng.below(11) {
        7 | 8 if shallow => t[i] = expr(rng, 2),
        0 => {
            t.remove(i);
        }
        1 => {
            let x = t[i].clone();
            t.insert(i, x);
        }
        2 => {
            let j = rng.below(t.len() as u64) as usize;
            t.swap(i, j);
        }
        3 => t[i] = pick(rng, EDGE).to_string(),
        4 => t[i] = pick(rng, KEYWORDS).to_string(),
        5 => t[i] = col(rng).to_string(),
        6 => {
            // Splice: the head of this one and the tail of another.
            let o = tokens(other);
            let j = rng.below(o.len() as u64 + 1) as usize;
            t.truncate(i);
            t.extend(o.into_iter().skip(j));
        }
        7 => {
            // A long flat chain of one operator.
            let n = [10, 100, 1000, 5000][rng.below(4) as usize];
            let op = pick(rng, &["+", "AND", "OR", "*", "||", ","]);
            let term = pick(rng, &["1", "a", "b = 'x'", "NULL", "a = 1"]);
            let chain = vec![term; n].join(&format!(" {op} "));
            t[i] = format!("({chain})");
        }
        8 => {
            // Deep nesting of one form.
            let n = [10, 100, 1000, 10_000][rng.below(4) as usize];
            let (open, close) = pick2(
                rng,
                &[
                    ("(", ")"),
                    ("-(", ")"),
                    ("NOT (", ")"),
                    ("ABS(", ")"),
                    ("CONCAT('a', ", ")"),
                    ("CASE WHEN 1 THEN ", " END"),
                ],
            );
            t[i] = format!("{}{}{}", open.repeat(n), t[i], close.repeat(n));
        }
        9 => {
            // Truncate at a random point.
            t.truncate(i);
        }
        _ => {
            let e = expr(rng, 3);
            t.insert(i, e);
        }
    }
    t.join(" ")
}

fn pick2(rng: &mut Rng, xs: &[(&'static str, &'static str)]) -> (&'static str, &'static str) {
    xs[rng.below(xs.len() as u64) as usize]
}

/// Ok(None) for a result, Ok(Some(code)) for an error, Err(message) for a panic.
fn run(s: &mut Session, sql: &str) -> Result<Option<u16>, String> {
    let mut c = Collect::default();
    match catch_unwind(AssertUnwindSafe(|| s.query(sql, &mut c))) {
        Ok(Ok(_)) => Ok(None),
        Ok(Err(e)) => Ok(Some(e.code)),
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "non-string panic".into())),
    }
}

fn setup(inst: &Arc<Instance>, id: u64) -> Session {
    let mut s = inst.session(id, "root", None);
    for st in SCHEMA.split(";\n").filter(|s| !s.trim().is_empty()) {
        assert_eq!(run(&mut s, st), Ok(None), "{st}");
    }
    s
}

fn fuzz(seed: u64) -> (u64, Vec<(String, String)>) {
    let mut rng = Rng::new(seed);
    let dir = testkit::unique_temp_path("fuzz-sql");
    let opts = InstanceOptions {
        sync_on_commit: false,
        block_cache_size: 4 << 20,
        write_buffer_size: 1 << 20,
        ..Default::default()
    };
    let inst = Instance::open(&dir, &opts).unwrap();
    let mut sess = setup(&inst, 1);
    let stmts: u64 = std::env::var("FUZZ_STMTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let until = std::env::var("FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(|s| Instant::now() + Duration::from_secs(s));
    let mut trace = std::env::var("FUZZ_TRACE")
        .ok()
        .map(|p| std::fs::File::create(p).unwrap());
    let mut panics: Vec<(String, String)> = Vec::new();
    let mut prev = statement(&mut rng);
    let mut n = 0u64;
    let mut next_id = 2;
    let mut outcomes = std::collections::BTreeMap::new();
    let verbose = std::env::var("FUZZ_VERBOSE").is_ok();
    loop {
        match until {
            Some(t) if Instant::now() >= t => break,
            None if n >= stmts => break,
            _ => {}
        }
        let base = statement(&mut rng);
        let mut sql = base.clone();
        let mutations = [0, 0, 0, 1, 1, 2, 3][rng.below(7) as usize];
        for _ in 0..mutations {
            sql = mutate(&mut rng, &sql, &prev);
        }
        prev = base;
        if let Some(f) = trace.as_mut() {
            writeln!(f, "{sql}").unwrap();
            f.flush().unwrap();
        }
        n += 1;
        let r = run(&mut sess, &sql);
        if let Ok(code) = r {
            *outcomes.entry(code).or_insert(0u64) += 1;
            if verbose && code.is_some() && mutations == 0 {
                eprintln!("fuzz_sql: {code:?} {}", short(&sql));
            }
        }
        if let Err(msg) = r {
            eprintln!("PANIC on statement {n}: {msg}\n  {}", short(&sql));
            panics.push((sql, msg));
            // The session may be in any state after a panic: start a new one.
            sess = setup(&inst, next_id);
            next_id += 1;
        }
        if n % 500 == 0 {
            // Bring the schema back if the statements dropped it.
            sess = setup(&inst, next_id);
            next_id += 1;
        }
    }
    let mut top: Vec<_> = outcomes.into_iter().collect();
    top.sort_by_key(|(_, k)| std::cmp::Reverse(*k));
    let top: Vec<String> = top
        .iter()
        .take(8)
        .map(|(c, k)| match c {
            None => format!("ok {k}"),
            Some(c) => format!("{c}: {k}"),
        })
        .collect();
    eprintln!("fuzz_sql: outcomes {}", top.join(", "));
    drop(sess);
    let _ = inst.shutdown();
    drop(inst);
    let _ = std::fs::remove_dir_all(&dir);
    (n, panics)
}

fn short(s: &str) -> String {
    if s.len() <= 400 {
        s.to_string()
    } else {
        let mut cut = 400;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... ({} bytes)", &s[..cut], s.len())
    }
}

#[test]
fn random_statements_never_panic_or_overflow() {
    let seed = testkit::seed("random_statements_never_panic_or_overflow");
    // The stack a server connection thread has.
    let h = std::thread::Builder::new()
        .stack_size(sql::SESSION_STACK_SIZE)
        .spawn(move || fuzz(seed))
        .unwrap();
    let (n, panics) = h.join().unwrap();
    eprintln!(
        "fuzz_sql: {n} statements, {} panics (SEED={seed})",
        panics.len()
    );
    assert!(
        panics.is_empty(),
        "{} of {n} statements panicked (SEED={seed}); first: {} => {}",
        panics.len(),
        short(&panics[0].0),
        panics[0].1
    );
}

#[test]
fn mutation_keeps_tokens_apart() {
    // The tokenizer the mutator relies on keeps quoted strings whole.
    assert_eq!(
        tokens("SELECT 'a b', `c d` FROM t1 WHERE x>=1"),
        vec!["SELECT", "'a b'", ",", "`c d`", "FROM", "t1", "WHERE", "x", ">", "=", "1"]
    );
    let mut rng = Rng::new(7);
    let s = statement(&mut rng);
    assert!(!s.is_empty());
    assert_ne!(mutate(&mut rng, &s, "SELECT 1"), "");
}
