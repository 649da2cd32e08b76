//! A range read that replaces the WHERE (`id BETWEEN a AND b` on the primary
//! key, `access::range_is_filter`) decodes only the columns the rest of the
//! statement reads (`SelectPlan::want_ranged`): every other reader of the
//! range's column (outputs, ORDER BY, GROUP BY, aggregates, windows,
//! correlated subqueries, a WHERE the range does not replace) still sees
//! its value, also as a prepared statement with the bounds as parameters.
#![allow(clippy::unwrap_used)]
use sql::Value;

mod common;
use common::{q, rows, session_in_d, texts, TestDb};

#[test]
fn readers_of_the_range_column_see_its_value() {
    let db = TestDb::open("ranged-want");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), pad CHAR(10))",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 10, 'a', 'x'), (2, 20, 'b', 'y'), (3, 30, 'c', NULL), \
         (4, 40, NULL, 'z'), (5, 50, 'e', 'w')",
    );
    q(&mut s, "CREATE TABLE u (n INT, m INT)");
    q(&mut s, "INSERT INTO u VALUES (2, 7), (3, 8), (3, 9)");
    // Two key columns, the range on the first.
    q(
        &mut s,
        "CREATE TABLE p (a INT, b INT, v INT, PRIMARY KEY (a, b))",
    );
    q(
        &mut s,
        "INSERT INTO p VALUES (1, 5, 100), (2, 6, 200), (2, 7, 300), (3, 8, 400)",
    );
    let cases: &[(&str, &[&str])] = &[
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4", &["b", "c", "NULL"]),
        ("SELECT id, c FROM t WHERE id BETWEEN 2 AND 4", &["2|b", "3|c", "4|NULL"]),
        ("SELECT pad FROM t WHERE id BETWEEN 2 AND 4", &["y", "NULL", "z"]),
        ("SELECT SUM(k) FROM t WHERE id BETWEEN 2 AND 4", &["90"]),
        ("SELECT SUM(id), COUNT(*) FROM t WHERE id BETWEEN 2 AND 4", &["9|3"]),
        ("SELECT k + id FROM t WHERE id BETWEEN 2 AND 3", &["22", "33"]),
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4 ORDER BY id DESC", &["NULL", "c", "b"]),
        ("SELECT c FROM t WHERE id BETWEEN 1 AND 5 ORDER BY c", &["NULL", "a", "b", "c", "e"]),
        ("SELECT DISTINCT c FROM t WHERE id BETWEEN 2 AND 5 ORDER BY c", &["NULL", "b", "c", "e"]),
        ("SELECT id % 2, COUNT(*) FROM t WHERE id BETWEEN 1 AND 5 GROUP BY id % 2 ORDER BY 1", &["0|2", "1|3"]),
        (
            "SELECT k, ROW_NUMBER() OVER (ORDER BY id DESC) FROM t WHERE id BETWEEN 2 AND 3",
            &["30|1", "20|2"],
        ),
        (
            "SELECT c, (SELECT COUNT(*) FROM u WHERE u.n = t.id) FROM t WHERE id BETWEEN 2 AND 4",
            &["b|1", "c|2", "NULL|0"],
        ),
        (
            "SELECT c FROM t WHERE id BETWEEN 1 AND 5 AND EXISTS (SELECT 1 FROM u WHERE u.n = t.id)",
            &["b", "c"],
        ),
        // No range: key columns only other parts of the statement read.
        (
            "SELECT c, (SELECT COUNT(*) FROM u WHERE u.n = t.id) FROM t WHERE k > 15 AND k < 45",
            &["b|1", "c|2", "NULL|0"],
        ),
        ("SELECT k FROM t WHERE c > 'a' ORDER BY id DESC", &["50", "30", "20"]),
        ("SELECT SUM(id) FROM t WHERE k >= 20", &["14"]),
        // Not the range alone: the WHERE decides, on the column's value.
        ("SELECT c FROM t WHERE id BETWEEN 2 AND 4 AND id <> 3", &["b", "NULL"]),
        ("SELECT c FROM t WHERE id BETWEEN 2.5 AND 4", &["c", "NULL"]),
        ("SELECT c FROM t WHERE id BETWEEN '2' AND 3", &["b", "c"]),
        ("SELECT v FROM p WHERE a BETWEEN 2 AND 3", &["200", "300", "400"]),
        ("SELECT b, v FROM p WHERE a BETWEEN 2 AND 2", &["6|200", "7|300"]),
        ("SELECT a, b FROM p WHERE a BETWEEN 1 AND 2", &["1|5", "2|6", "2|7"]),
    ];
    for (sql, want) in cases {
        for _ in 0..2 {
            assert_eq!(rows(&mut s, sql), *want, "{sql}");
        }
    }
    // Prepared, the bounds as parameters (sysbench's form).
    for (sql, want) in [
        ("SELECT c FROM t WHERE id BETWEEN ? AND ?", "b c NULL"),
        (
            "SELECT id, c FROM t WHERE id BETWEEN ? AND ?",
            "2|b 3|c 4|NULL",
        ),
        ("SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", "90"),
        ("SELECT SUM(id) FROM t WHERE id BETWEEN ? AND ?", "9"),
        (
            "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY id DESC",
            "NULL c b",
        ),
    ] {
        let (id, n, _) = s.prepare(sql).unwrap();
        assert_eq!(n, 2);
        for (lo, hi) in [
            (Value::Int(2), Value::Int(4)),
            (Value::Bytes(b"2".to_vec()), Value::Int(4)),
        ] {
            let mut out = sql::result::Collect::default();
            s.execute_prepared(id, &[lo, hi], &mut out).unwrap();
            assert_eq!(texts(out.rows).join(" "), want, "{sql}");
        }
    }
}

/// `sql` with the range made impossible: each `x BETWEEN` becomes
/// `(x + 0) BETWEEN`, which no index serves, so the WHERE decides on every
/// row with all its columns decoded.
fn unranged(sql: &str) -> String {
    let re = regex::Regex::new(r"([A-Za-z_][A-Za-z_0-9.]*) BETWEEN").unwrap();
    let out = re.replace_all(sql, "($1 + 0) BETWEEN").into_owned();
    assert_ne!(out, sql, "no BETWEEN in {sql}");
    out
}

/// Rows of `sql`, sorted unless it orders them itself.
fn rows_as_set(s: &mut sql::Session, sql: &str) -> Vec<String> {
    let mut r = rows(s, sql);
    if !sql.contains("ORDER BY") {
        r.sort();
    }
    r
}

/// EXPLAIN's access type of `sql`'s first table.
fn access_type(s: &mut sql::Session, sql: &str) -> String {
    let r = q(s, &format!("EXPLAIN {sql}"));
    String::from_utf8_lossy(&r[0][3].text()).into_owned()
}

/// Asserts `sql` reads a range, and gives `want` and what the same
/// statement without the range gives.
fn check(s: &mut sql::Session, sql: &str, want: &[&str]) {
    let got = rows_as_set(s, sql);
    let plain = rows_as_set(s, &unranged(sql));
    assert_eq!(got, plain, "{sql} vs without the range");
    if !want.is_empty() || got.is_empty() {
        let mut w: Vec<String> = want.iter().map(|x| x.to_string()).collect();
        if !sql.contains("ORDER BY") {
            w.sort();
        }
        assert_eq!(got, w, "{sql}");
    }
}

#[test]
fn ranges_over_other_indexes_keys_and_layouts() {
    let db = TestDb::open("ranged-want-more");
    let mut s = session_in_d(&db);
    for t in [
        // A secondary index (not covering c), NULLs and duplicates in it.
        "CREATE TABLE s (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k))",
        // The same in descending and in reverse-family indexes.
        "CREATE TABLE sd (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k DESC))",
        "CREATE TABLE sr (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k) COMMENT 'rev:cfr')",
        // No primary key: rows under a hidden one.
        "CREATE TABLE h (k INT, c VARCHAR(20), KEY kk (k))",
    ] {
        q(&mut s, t);
        let name = t.split(' ').nth(2).unwrap();
        let ins = if name == "h" {
            "INSERT INTO h VALUES (10, 'a'), (20, 'b'), (30, 'c'), (30, 'c2'), (40, NULL), \
             (NULL, 'n'), (50, 'e')"
                .to_string()
        } else {
            format!(
                "INSERT INTO {name} VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), \
                 (4, 30, 'c2'), (5, 40, NULL), (6, NULL, 'n'), (7, 50, 'e')"
            )
        };
        q(&mut s, &ins);
        for (sql, want) in [
            ("SELECT c FROM T WHERE k BETWEEN 20 AND 40", &["b", "c", "c2", "NULL"][..]),
            ("SELECT k, c FROM T WHERE k BETWEEN 20 AND 30", &["20|b", "30|c", "30|c2"]),
            ("SELECT c FROM T WHERE k BETWEEN 20 AND 40 ORDER BY k DESC, c", &["NULL", "c", "c2", "b"]),
            ("SELECT COUNT(*), COUNT(c) FROM T WHERE k BETWEEN 20 AND 40", &["4|3"]),
            ("SELECT SUM(k) FROM T WHERE k BETWEEN 20 AND 40", &["120"]),
            ("SELECT k FROM T WHERE k BETWEEN 20 AND 40", &["20", "30", "30", "40"]),
            ("SELECT c FROM T FORCE INDEX (kk) WHERE k BETWEEN 25 AND 100", &["c", "c2", "NULL", "e"]),
            ("SELECT c FROM T WHERE k BETWEEN 41 AND 49", &[]),
            // HAVING reads a column no GROUP BY names.
            ("SELECT c, k FROM T WHERE k BETWEEN 20 AND 40 HAVING k > 20", &["c|30", "c2|30", "NULL|40"]),
            ("SELECT COUNT(*) FROM T WHERE k BETWEEN 20 AND 40 HAVING MAX(k) = 40", &["4"]),
            ("SELECT c, COUNT(*) FROM T WHERE k BETWEEN 10 AND 40 GROUP BY c HAVING MIN(k) >= 30 ORDER BY c", &["NULL|1", "c|1", "c2|1"]),
        ] {
            let sql = sql.replace(" T ", &format!(" {name} "));
            assert_eq!(access_type(&mut s, &sql), "range", "{sql}");
            check(&mut s, &sql, want);
        }
    }

    // The primary-key range in a locking read, in and out of a
    // transaction, and a secondary-index one (which keeps its WHERE).
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k))",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 40, NULL), (5, 50, 'e')",
    );
    for tail in ["FOR UPDATE", "LOCK IN SHARE MODE", "FOR SHARE"] {
        for begin in [false, true] {
            if begin {
                q(&mut s, "BEGIN");
            }
            check(
                &mut s,
                &format!("SELECT c FROM t WHERE id BETWEEN 2 AND 4 {tail}"),
                &["b", "c", "NULL"],
            );
            check(
                &mut s,
                &format!("SELECT k, c FROM t WHERE id BETWEEN 2 AND 4 ORDER BY id DESC {tail}"),
                &["40|NULL", "30|c", "20|b"],
            );
            check(
                &mut s,
                &format!("SELECT id, c FROM t WHERE k BETWEEN 20 AND 40 {tail}"),
                &["2|b", "3|c", "4|NULL"],
            );
            if begin {
                // Own uncommitted writes seen by the ranged read.
                q(&mut s, "UPDATE t SET c = 'x' WHERE id = 3");
                check(
                    &mut s,
                    &format!("SELECT c FROM t WHERE id BETWEEN 3 AND 3 {tail}"),
                    &["x"],
                );
                q(&mut s, "ROLLBACK");
            }
        }
    }

    // HAVING on the range's column, not grouped (ANY_VALUE of it when
    // grouping by another).
    check(
        &mut s,
        "SELECT id, k FROM t WHERE id BETWEEN 2 AND 4 HAVING id >= 3",
        &["3|30", "4|40"],
    );
    check(
        &mut s,
        "SELECT c, id FROM t WHERE id BETWEEN 1 AND 5 HAVING id % 2 = 0",
        &["b|2", "NULL|4"],
    );
    check(
        &mut s,
        "SELECT c, id FROM t WHERE id BETWEEN 1 AND 5 GROUP BY c HAVING id > 2 ORDER BY c",
        &["NULL|4", "c|3", "e|5"],
    );

    // INSERT ... SELECT, a derived table, views over the ranged read.
    q(&mut s, "CREATE TABLE dst (c VARCHAR(20))");
    q(
        &mut s,
        "INSERT INTO dst SELECT c FROM t WHERE id BETWEEN 2 AND 4",
    );
    q(
        &mut s,
        "INSERT INTO dst SELECT c FROM t WHERE k BETWEEN 40 AND 50",
    );
    assert_eq!(
        rows(&mut s, "SELECT c FROM dst ORDER BY c"),
        ["NULL", "NULL", "b", "c", "e"]
    );
    q(&mut s, "CREATE TABLE dst2 (id INT, c VARCHAR(20))");
    q(
        &mut s,
        "INSERT INTO dst2 (c, id) SELECT c, id FROM t WHERE id BETWEEN 4 AND 5",
    );
    assert_eq!(
        rows(&mut s, "SELECT id, c FROM dst2 ORDER BY id"),
        ["4|NULL", "5|e"]
    );
    q(&mut s, "CREATE VIEW v AS SELECT id, k, c FROM t");
    q(
        &mut s,
        "CREATE VIEW vr AS SELECT c FROM t WHERE id BETWEEN 2 AND 4",
    );
    q(
        &mut s,
        "CREATE VIEW vt AS SELECT c, id FROM t WHERE id BETWEEN 2 AND 4",
    );
    for (sql, want) in [
        (
            "SELECT x.c FROM (SELECT c FROM t WHERE id BETWEEN 2 AND 4) x",
            &["b", "c", "NULL"][..],
        ),
        (
            "SELECT x.id, x.c FROM (SELECT id, c FROM t WHERE id BETWEEN 2 AND 4) x WHERE x.id > 2",
            &["3|c", "4|NULL"],
        ),
        (
            "SELECT COUNT(*) FROM (SELECT k FROM t WHERE k BETWEEN 20 AND 40) x",
            &["3"],
        ),
        (
            "SELECT c FROM v WHERE id BETWEEN 2 AND 4",
            &["b", "c", "NULL"],
        ),
        (
            "SELECT k FROM v WHERE id BETWEEN 2 AND 4 ORDER BY id DESC",
            &["40", "30", "20"],
        ),
        (
            "SELECT c FROM v WHERE k BETWEEN 20 AND 40",
            &["b", "c", "NULL"],
        ),
    ] {
        check(&mut s, sql, want);
    }
    assert_eq!(rows_as_set(&mut s, "SELECT c FROM vr"), ["NULL", "b", "c"]);
    assert_eq!(rows_as_set(&mut s, "SELECT id FROM vt"), ["2", "3", "4"]);
    assert_eq!(
        rows_as_set(&mut s, "SELECT * FROM vt WHERE id > 3"),
        ["NULL|4"]
    );
}

#[test]
fn ranges_over_lossy_keys_instant_columns_ttl_and_unsigned_bounds() {
    let db = TestDb::open("ranged-want-layouts");
    let mut s = session_in_d(&db);
    // A _ci VARCHAR in the key: the key holds its sort weight, the value
    // its text (a lossy key column is read from the value).
    q(
        &mut s,
        "CREATE TABLE n (id INT, name VARCHAR(10) COLLATE utf8mb4_general_ci, v INT, \
         PRIMARY KEY (id, name))",
    );
    q(
        &mut s,
        "INSERT INTO n VALUES (1, 'Ab', 10), (2, 'bC', 20), (2, 'Cd', 30), (3, 'éF', 40), (4, 'g', 50)",
    );
    for (sql, want) in [
        (
            "SELECT name FROM n WHERE id BETWEEN 2 AND 3",
            &["bC", "Cd", "éF"][..],
        ),
        (
            "SELECT v FROM n WHERE id BETWEEN 2 AND 3",
            &["20", "30", "40"],
        ),
        (
            "SELECT name, v FROM n WHERE id BETWEEN 2 AND 3",
            &["bC|20", "Cd|30", "éF|40"],
        ),
        (
            "SELECT v, name FROM n WHERE id BETWEEN 1 AND 2 ORDER BY name DESC",
            &["30|Cd", "20|bC", "10|Ab"],
        ),
        (
            "SELECT HEX(name) FROM n WHERE id BETWEEN 3 AND 3",
            &["C3A946"],
        ),
        ("SELECT COUNT(*) FROM n WHERE id BETWEEN 2 AND 4", &["4"]),
    ] {
        check(&mut s, sql, want);
    }

    // Rows stored before an instant ADD COLUMN read its default, whichever
    // columns a statement wants (also only a later one).
    q(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k))",
    );
    q(
        &mut s,
        "INSERT INTO a VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
    );
    q(
        &mut s,
        "ALTER TABLE a ADD z INT DEFAULT 7, ALGORITHM=INSTANT",
    );
    q(&mut s, "INSERT INTO a VALUES (4, 40, 'd', 8)");
    q(
        &mut s,
        "ALTER TABLE a ADD w VARCHAR(5) DEFAULT 'q', ALGORITHM=INSTANT",
    );
    q(&mut s, "INSERT INTO a VALUES (5, 50, NULL, NULL, 'r')");
    q(&mut s, "UPDATE a SET c = 'bb' WHERE id = 2");
    for (sql, want) in [
        (
            "SELECT z FROM a WHERE id BETWEEN 2 AND 5",
            &["7", "7", "8", "NULL"][..],
        ),
        (
            "SELECT w FROM a WHERE id BETWEEN 2 AND 5",
            &["q", "q", "q", "r"],
        ),
        (
            "SELECT c, w FROM a WHERE id BETWEEN 1 AND 5",
            &["a|q", "bb|q", "c|q", "d|q", "NULL|r"],
        ),
        (
            "SELECT z, w FROM a WHERE id BETWEEN 1 AND 4",
            &["7|q", "7|q", "7|q", "8|q"],
        ),
        (
            "SELECT id, z FROM a WHERE k BETWEEN 20 AND 40",
            &["2|7", "3|7", "4|8"],
        ),
        (
            "SELECT w FROM a WHERE k BETWEEN 30 AND 50",
            &["q", "q", "r"],
        ),
        ("SELECT SUM(z) FROM a WHERE id BETWEEN 1 AND 5", &["29"]),
    ] {
        check(&mut s, sql, want);
    }

    // TTL tables: the row time in front of the value, or a column of it
    // that a statement need not read; expired rows stay hidden.
    q(
        &mut s,
        "CREATE TABLE tt (id INT PRIMARY KEY, c VARCHAR(10)) COMMENT='ttl_duration=100000;'",
    );
    q(
        &mut s,
        "INSERT INTO tt VALUES (1, 'a'), (2, 'b'), (3, NULL)",
    );
    check(
        &mut s,
        "SELECT c FROM tt WHERE id BETWEEN 2 AND 3",
        &["b", "NULL"],
    );
    check(
        &mut s,
        "SELECT COUNT(*) FROM tt WHERE id BETWEEN 1 AND 3",
        &["3"],
    );
    q(
        &mut s,
        "CREATE TABLE tc (id INT PRIMARY KEY, c VARCHAR(10), ts BIGINT UNSIGNED NOT NULL, \
         KEY kc (c)) COMMENT='ttl_duration=100;ttl_col=ts;'",
    );
    // 1 is long expired, 4102444800 (2100) is not.
    q(
        &mut s,
        "INSERT INTO tc VALUES (1, 'a', 4102444800), (2, 'b', 1), (3, 'c', 4102444800), \
         (4, 'd', 1), (5, NULL, 4102444800)",
    );
    check(
        &mut s,
        "SELECT c FROM tc WHERE id BETWEEN 1 AND 5",
        &["a", "c", "NULL"],
    );
    check(&mut s, "SELECT id FROM tc WHERE id BETWEEN 2 AND 4", &["3"]);
    check(
        &mut s,
        "SELECT COUNT(*) FROM tc WHERE id BETWEEN 1 AND 4",
        &["2"],
    );

    // BIGINT UNSIGNED: bounds across 2^63 and at 2^64 - 1, exact or not.
    q(
        &mut s,
        "CREATE TABLE ub (id BIGINT UNSIGNED PRIMARY KEY, k BIGINT UNSIGNED, c CHAR(3), KEY kk (k))",
    );
    q(
        &mut s,
        "INSERT INTO ub VALUES (0, 18446744073709551615, 'a'), (1, 9223372036854775808, 'b'), \
         (9223372036854775807, 9223372036854775807, 'c'), (9223372036854775808, 1, 'd'), \
         (18446744073709551614, 0, 'e'), (18446744073709551615, 5, 'f')",
    );
    for (sql, want) in [
        (
            "SELECT c FROM ub WHERE id BETWEEN 9223372036854775807 AND 18446744073709551615",
            &["c", "d", "e", "f"][..],
        ),
        (
            "SELECT c FROM ub WHERE id BETWEEN 18446744073709551615 AND 18446744073709551615",
            &["f"],
        ),
        ("SELECT c FROM ub WHERE id BETWEEN 0 AND 1", &["a", "b"]),
        ("SELECT c FROM ub WHERE id BETWEEN -5 AND 1", &["a", "b"]),
        (
            "SELECT c FROM ub WHERE id BETWEEN 9223372036854775808 AND 99999999999999999999",
            &["d", "e", "f"],
        ),
        (
            "SELECT c FROM ub WHERE k BETWEEN 9223372036854775807 AND 18446744073709551615",
            &["a", "b", "c"],
        ),
        ("SELECT c FROM ub WHERE k BETWEEN 0 AND 5", &["d", "e", "f"]),
        (
            "SELECT id FROM ub WHERE k BETWEEN 9223372036854775808 AND 18446744073709551615",
            &["0", "1"],
        ),
        (
            "SELECT SUM(k) FROM ub WHERE id BETWEEN 9223372036854775808 AND 18446744073709551615",
            &["6"],
        ),
    ] {
        check(&mut s, sql, want);
    }
    // Small integer keys with bounds outside their type.
    q(
        &mut s,
        "CREATE TABLE ti (id TINYINT PRIMARY KEY, c CHAR(3))",
    );
    q(
        &mut s,
        "INSERT INTO ti VALUES (-128, 'a'), (0, 'b'), (127, 'c')",
    );
    for (sql, want) in [
        (
            "SELECT c FROM ti WHERE id BETWEEN -300 AND 300",
            &["a", "b", "c"][..],
        ),
        ("SELECT c FROM ti WHERE id BETWEEN -128 AND 0", &["a", "b"]),
        ("SELECT c FROM ti WHERE id BETWEEN 127 AND 1000", &["c"]),
        ("SELECT c FROM ti WHERE id BETWEEN 200 AND 1000", &[]),
    ] {
        check(&mut s, sql, want);
    }
}

/// Rows of a prepared statement run with `params`, sorted.
fn prepared_rows(s: &mut sql::Session, sql: &str, params: &[Value]) -> Vec<String> {
    let (id, _, _) = s.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = sql::result::Collect::default();
    s.execute_prepared(id, params, &mut out)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut r = texts(out.rows);
    r.sort();
    r
}

#[test]
fn random_ranged_reads_match_unranged_ones() {
    let mut rng = testkit::Rng::from_env("random_ranged_reads_match_unranged_ones");
    let db = TestDb::open("ranged-want-random");
    let mut s = session_in_d(&db);
    let pick =
        |rng: &mut testkit::Rng, xs: &[&'static str]| xs[rng.below(xs.len() as u64) as usize];
    for round in 0..8 {
        let t = format!("r{round}");
        let id_ty = pick(&mut rng, &["INT", "BIGINT", "BIGINT UNSIGNED", "SMALLINT"]);
        let key = pick(
            &mut rng,
            &[
                "PRIMARY KEY (id)",
                "PRIMARY KEY (id, name)",
                "PRIMARY KEY (name, id)",
                "",
            ],
        );
        let kx = pick(
            &mut rng,
            &[
                "KEY kk (k)",
                "KEY kk (k DESC)",
                "KEY kk (k) COMMENT 'rev:rr'",
                "KEY kk (k, c)",
                "KEY kk (k, id)",
            ],
        );
        let ttl = if key.is_empty() || !rng.chance(25) {
            ""
        } else {
            " COMMENT='ttl_duration=100000;'"
        };
        let not_null = if key.is_empty() { "" } else { " NOT NULL" };
        let ddl = format!(
            "CREATE TABLE {t} (id {id_ty}{not_null}, k INT, c VARCHAR(8), \
             name VARCHAR(8) COLLATE utf8mb4_general_ci{not_null}, pad CHAR(4), {}{kx}){ttl}",
            if key.is_empty() {
                String::new()
            } else {
                format!("{key}, ")
            }
        );
        eprintln!("round {round}: {ddl}");
        q(&mut s, &ddl);
        let val = |rng: &mut testkit::Rng, v: &str| {
            if rng.chance(15) {
                "NULL".to_string()
            } else {
                v.to_string()
            }
        };
        let insert = |s: &mut sql::Session, rng: &mut testkit::Rng, n: usize, extra: bool| {
            for _ in 0..n {
                let id = rng.range(0, 60);
                let k = rng.range(-20, 40).to_string();
                let k = val(rng, &k);
                let c = format!("'c{}'", rng.below(10));
                let c = val(rng, &c);
                let name = ["a", "A", "b", "Bb", "é", "É"][rng.below(6) as usize];
                let pad = format!("'{}'", rng.below(100));
                let pad = val(rng, &pad);
                let z = rng.range(0, 9).to_string();
                let z = if extra {
                    format!(", {}", val(rng, &z))
                } else {
                    String::new()
                };
                q(
                    s,
                    &format!("INSERT IGNORE INTO {t} VALUES ({id}, {k}, {c}, '{name}', {pad}{z})"),
                );
            }
        };
        insert(&mut s, &mut rng, 40, false);
        let added = rng.chance(50);
        if added {
            q(
                &mut s,
                &format!("ALTER TABLE {t} ADD z INT DEFAULT 3, ALGORITHM=INSTANT"),
            );
            insert(&mut s, &mut rng, 20, true);
        }
        q(&mut s, &format!("UPDATE {t} SET c = 'u' WHERE id % 7 = 0"));
        q(&mut s, &format!("DELETE FROM {t} WHERE id % 11 = 5"));
        let mut cols = vec!["id", "k", "c", "name", "pad", "k + 1", "HEX(name)"];
        if added {
            cols.push("z");
        }
        for _ in 0..40 {
            let col = if key.is_empty() || rng.chance(50) {
                "k"
            } else {
                "id"
            };
            let bound = |rng: &mut testkit::Rng| match rng.below(10) {
                0 => "-1".to_string(),
                1 => "99999".to_string(),
                _ => rng.range(-22, 62).to_string(),
            };
            let (lo, hi) = (bound(&mut rng), bound(&mut rng));
            let mut list: Vec<&str> = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let c = pick(&mut rng, &cols);
                if !list.contains(&c) {
                    list.push(c);
                }
            }
            let list = list.join(", ");
            let range = format!("{col} BETWEEN {lo} AND {hi}");
            let sql = match rng.below(8) {
                // (MIN of name's bytes: 'a' and 'A' are equal under its collation,
                // and which one MIN or DISTINCT keeps depends on the read order.)
                0 => format!(
                    "SELECT COUNT(*), SUM(k), MAX(c), MIN(HEX(name)) FROM {t} WHERE {range}"
                ),
                1 => format!("SELECT c, COUNT(*), MIN(id) FROM {t} WHERE {range} GROUP BY c"),
                2 => format!(
                    "SELECT {list}, {col} FROM {t} WHERE {range} HAVING {col} > {}",
                    rng.range(-5, 40)
                ),
                3 => format!("SELECT {list} FROM {t} WHERE {range} FOR UPDATE"),
                4 => format!(
                    "SELECT DISTINCT {} FROM {t} WHERE {range}",
                    list.replace("name", "HEX(name)")
                ),
                5 => format!("SELECT x.* FROM (SELECT {list} FROM {t} WHERE {range}) x"),
                _ => format!("SELECT {list} FROM {t} WHERE {range}"),
            };
            let mut got = rows(&mut s, &sql);
            let mut plain = rows(&mut s, &unranged(&sql));
            got.sort();
            plain.sort();
            assert_eq!(got, plain, "round {round}: {sql}");
            // The same with the bounds as parameters.
            let psql = sql.replace(&format!("{lo} AND {hi}"), "? AND ?");
            let params = [
                Value::Int(lo.parse().unwrap()),
                Value::Int(hi.parse().unwrap()),
            ];
            assert_eq!(
                prepared_rows(&mut s, &psql, &params),
                prepared_rows(&mut s, &unranged(&psql), &params),
                "round {round}: {psql} with {lo}, {hi}"
            );
        }
    }
}
