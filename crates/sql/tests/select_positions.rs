//! Positions, parentheses and select items in GROUP BY, ORDER BY and
//! window clauses (select/alias.rs, select/plan.rs): a GROUP BY position
//! counts the columns `*` lists, one out of the list is 1054, parentheses
//! around a position or name change nothing, an ORDER BY key that is a
//! computed select item sorts by the value the row shows (not evaluated
//! again), a window's PARTITION BY / ORDER BY may name select aliases.
//! Also a hex literal against a parameter and a number under COLLATE.
//! Every expected row was checked on MariaDB 10.11.
#![allow(clippy::unwrap_used)]
mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn setup(s: &mut sql::Session) {
    q(
        s,
        "CREATE TABLE p (k INT PRIMARY KEY, v INT, w VARCHAR(10))",
    );
    q(
        s,
        "INSERT INTO p VALUES (1, 10, 'a'), (2, 10, 'b'), (3, 20, 'c'), (4, 20, 'd')",
    );
    q(s, "CREATE TABLE q (k INT PRIMARY KEY, z INT)");
    q(s, "INSERT INTO q VALUES (1, 5), (2, 6), (3, 7)");
}

fn check(s: &mut sql::Session, cases: &[(&str, &[&str])]) {
    for (sql, want) in cases {
        assert_eq!(rows(s, sql), *want, "{sql}");
    }
}

#[test]
fn group_by_positions_count_the_columns_of_star() {
    // review s36 HIGH-0: `GROUP BY 2` with `*` grouped by the constant 2
    // (one row) and positions past the list were accepted.
    let db = TestDb::open("positions-star");
    let mut s = session_in_d(&db);
    setup(&mut s);
    check(
        &mut s,
        &[
            (
                "SELECT * FROM p GROUP BY 2 ORDER BY k",
                &["1|10|a", "3|20|c"],
            ),
            (
                "SELECT p.*, q.z FROM p JOIN q ON p.k = q.k GROUP BY 2 ORDER BY 1",
                &["1|10|a|5", "3|20|c|7"],
            ),
            (
                "SELECT q.z, p.* FROM p JOIN q ON p.k = q.k GROUP BY 3 ORDER BY 1",
                &["5|1|10|a", "7|3|20|c"],
            ),
            ("SELECT k FROM p GROUP BY 1.5", &["1"]),
        ],
    );
    for sql in [
        "SELECT * FROM p GROUP BY 0",
        "SELECT * FROM p GROUP BY 4",
        "SELECT k FROM p GROUP BY (2)",
        "SELECT k, v FROM p ORDER BY 0",
        "SELECT k, v FROM p ORDER BY 3",
    ] {
        assert_eq!(err(&mut s, sql), 1054, "{sql}");
    }
}

#[test]
fn parentheses_around_a_position_or_name_change_nothing() {
    let db = TestDb::open("positions-parens");
    let mut s = session_in_d(&db);
    setup(&mut s);
    check(
        &mut s,
        &[
            (
                "SELECT k FROM p GROUP BY (1) ORDER BY (1) DESC",
                &["4", "3", "2", "1"],
            ),
            (
                "SELECT k, v FROM p ORDER BY (2) DESC, (1)",
                &["3|20", "4|20", "1|10", "2|10"],
            ),
            (
                "SELECT k, v FROM p GROUP BY ((2)) ORDER BY k",
                &["1|10", "3|20"],
            ),
            (
                "SELECT v AS k FROM p GROUP BY (k) HAVING k > 1 ORDER BY 1",
                &["10", "20", "20"],
            ),
            (
                "SELECT v AS k2, k FROM p ORDER BY (k2) DESC, k",
                &["20|3", "20|4", "10|1", "10|2"],
            ),
            (
                "SELECT v, COUNT(*) c FROM p GROUP BY (v) HAVING (v) > 10",
                &["20|2"],
            ),
            // A number that is no integer is a constant, not a position.
            (
                "SELECT k, v FROM p ORDER BY 1.5, k DESC",
                &["4|20", "3|20", "2|10", "1|10"],
            ),
            // GROUP BY p.k makes a lone k in HAVING that column, not an
            // ambiguous name of the join.
            (
                "SELECT p.k FROM p JOIN q ON p.k = q.k GROUP BY p.k HAVING k > 1 ORDER BY 1",
                &["2", "3"],
            ),
        ],
    );
}

#[test]
fn order_by_a_computed_item_sorts_by_the_value_shown() {
    let db = TestDb::open("positions-order-value");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "SET @r = 0");
    check(
        &mut s,
        &[
            (
                "SELECT @r := @r + 1 AS c, k FROM p ORDER BY c DESC",
                &["4|4", "3|3", "2|2", "1|1"],
            ),
            ("SELECT @r", &["4"]),
        ],
    );
    // By alias, by position, grouped, with DISTINCT: each sorted by the
    // values it shows.
    for sql in [
        "SELECT k, RAND() AS r FROM p ORDER BY r",
        "SELECT k, RAND() AS r FROM p ORDER BY 2",
        "SELECT v, SUM(k) * RAND() AS r FROM p GROUP BY v ORDER BY r",
        "SELECT DISTINCT k, RAND() AS r FROM p ORDER BY r",
    ] {
        for _ in 0..8 {
            let got = q(&mut s, sql);
            let r: Vec<f64> = got
                .iter()
                .map(|row| match &row[1] {
                    rel::value::Value::Double(d) => *d,
                    other => panic!("{sql}: {other:?}"),
                })
                .collect();
            assert!(r.windows(2).all(|w| w[0] <= w[1]), "{sql}: {r:?}");
        }
    }
}

#[test]
fn window_clauses_name_select_aliases() {
    let db = TestDb::open("positions-window");
    let mut s = session_in_d(&db);
    setup(&mut s);
    check(
        &mut s,
        &[
            (
                "SELECT k, v AS x, SUM(k) OVER (ORDER BY x) s FROM p ORDER BY k",
                &["1|10|3", "2|10|3", "3|20|10", "4|20|10"],
            ),
            (
                "SELECT k, v AS x, RANK() OVER (PARTITION BY x ORDER BY k DESC) r FROM p ORDER BY k",
                &["1|10|2", "2|10|1", "3|20|2", "4|20|1"],
            ),
            // A name alone is the alias first (not the column k).
            (
                "SELECT -k AS k, k AS kk, ROW_NUMBER() OVER (ORDER BY k) rn FROM p ORDER BY kk",
                &["-1|1|4", "-2|2|3", "-3|3|2", "-4|4|1"],
            ),
            (
                "SELECT k, v + 1 AS x, ROW_NUMBER() OVER (ORDER BY x * 2 DESC, k) rn FROM p ORDER BY k",
                &["1|11|3", "2|11|4", "3|21|1", "4|21|2"],
            ),
            (
                "SELECT SUM(k) AS s, RANK() OVER (ORDER BY s DESC) r FROM p GROUP BY v ORDER BY s",
                &["3|2", "7|1"],
            ),
            (
                "SELECT k, v AS x, SUM(k) OVER w s FROM p WINDOW w AS (ORDER BY x) ORDER BY k",
                &["1|10|3", "2|10|3", "3|20|10", "4|20|10"],
            ),
        ],
    );
}

#[test]
fn hex_literal_against_a_parameter_and_numbers_under_collate() {
    let db = TestDb::open("positions-hex-param");
    let mut s = session_in_d(&db);
    q(&mut s, "SET NAMES utf8mb4");
    q(
        &mut s,
        "PREPARE h FROM 'SELECT 0x1F >= ?, 0x1F = ?, 0x41 = ?, ? < 0x1F'",
    );
    q(&mut s, "SET @a = 5, @b = 31, @c = 'A'");
    check(
        &mut s,
        &[
            ("EXECUTE h USING @a, @b, @c, @a", &["1|1|1|1"]),
            ("EXECUTE h USING @b, @b, @b, @b", &["1|1|0|0"]),
            (
                "SELECT (-5) COLLATE utf8mb4_bin = '-5.0', -5 = '-5.0', \
                 (-5) COLLATE utf8mb4_bin = '-5'",
                &["0|1|1"],
            ),
        ],
    );
}

#[test]
fn having_reads_only_grouped_or_shown_columns() {
    // MariaDB: outside aggregates and subqueries HAVING reads a column GROUP
    // BY names or the select list shows on its own; any other is 1054.
    let db = TestDb::open("positions-having-columns");
    let mut s = session_in_d(&db);
    setup(&mut s);
    check(
        &mut s,
        &[
            ("SELECT k AS x FROM p HAVING k > 2", &["3", "4"]),
            ("SELECT k AS x FROM p GROUP BY x HAVING k > 2", &["3", "4"]),
            ("SELECT v FROM p GROUP BY v HAVING MAX(k) > 2", &["20"]),
            ("SELECT p.v FROM p HAVING p.v > 10", &["20", "20"]),
            ("SELECT * FROM p HAVING k > 3", &["4|20|d"]),
            (
                "SELECT v FROM p HAVING (SELECT COUNT(*) FROM q WHERE q.k = p.k) > 0",
                &["10", "10", "20"],
            ),
            ("SELECT v, k FROM p GROUP BY v HAVING k > 2", &["20|3"]),
            (
                "SELECT k AS day FROM p HAVING TIMESTAMPDIFF(DAY, '2020-01-01', '2020-01-03') = 2 \
                 AND day > 3",
                &["4"],
            ),
        ],
    );
    for sql in [
        "SELECT v + 1 FROM p HAVING v > 10",
        "SELECT v, w FROM p HAVING p.k > 2",
        "SELECT v FROM p GROUP BY v HAVING k + 0 > 2",
        "SELECT v, COUNT(*) FROM p GROUP BY v HAVING w > 'a'",
        "SELECT v FROM p HAVING k > 2",
    ] {
        assert_eq!(err(&mut s, sql), 1054, "{sql}");
    }
}

#[test]
fn review_s37_partition_using_ambiguity_and_plus() {
    let db = TestDb::open("positions-review37");
    let mut s = session_in_d(&db);
    setup(&mut s);
    check(
        &mut s,
        &[
            // PARTITION BY takes the FROM column first (as GROUP BY).
            (
                "SELECT k, -k AS v, COUNT(*) OVER (PARTITION BY v) s FROM p ORDER BY k",
                &["1|-1|2", "2|-2|2", "3|-3|2", "4|-4|2"],
            ),
            // The right-hand copy of a USING column, shown or grouped.
            (
                "SELECT q.* FROM p JOIN q USING (k) HAVING k > 1 ORDER BY 1",
                &["2|6", "3|7"],
            ),
            (
                "SELECT q.k FROM p JOIN q USING (k) HAVING k > 1 ORDER BY 1",
                &["2", "3"],
            ),
            (
                "SELECT COUNT(*) FROM p JOIN q USING (k) GROUP BY q.k HAVING k > 1",
                &["1", "1"],
            ),
            (
                "SELECT p.k FROM p JOIN q ON p.k = q.k GROUP BY p.k HAVING SUM(p.k) > 2",
                &["3"],
            ),
            // A unary plus changes nothing: still a position.
            (
                "SELECT v, COUNT(*) FROM p GROUP BY +1 ORDER BY 1",
                &["10|2", "20|2"],
            ),
            ("SELECT k FROM p ORDER BY +1 DESC", &["4", "3", "2", "1"]),
        ],
    );
    for (sql, code) in [
        (
            "SELECT p.k FROM p JOIN q ON p.k = q.k GROUP BY p.k HAVING SUM(k) > 0",
            1052,
        ),
        (
            "SELECT p.k, q.k FROM p JOIN q ON p.k = q.k GROUP BY p.k HAVING k > 1",
            1052,
        ),
        (
            "SELECT COUNT(*) FROM p a JOIN q b ON a.k = b.k GROUP BY a.k, b.k HAVING k > 1",
            1052,
        ),
        ("SELECT x.* FROM p GROUP BY 1", 1051),
        ("SELECT x.* FROM p", 1051),
        ("SELECT k, x.* FROM p ORDER BY 1", 1051),
        // MariaDB reads the outer k here; Strata says it cannot yet.
        (
            "SELECT k, (SELECT COUNT(*) FROM q HAVING k > 2) x FROM p",
            1235,
        ),
    ] {
        assert_eq!(err(&mut s, sql), code, "{sql}");
    }
}
