//! The connection's collation (`@@collation_connection`) as MariaDB 10.11
//! applies it (every expected answer observed there): string literals and
//! `?` parameters take it with COERCIBLE coercibility, so after
//! `SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci` 'ß' = 'ss' is true, while
//! a column's collation still wins over a literal; a view's literals keep
//! the collation it was created under; a prepared statement keeps the one
//! it was prepared under, and the shared statement cache never hands a plan
//! made under one collation to a session under another. SET of
//! collation_connection / character_set_connection keeps the two in step;
//! SET CHARACTER SET and SET NAMES DEFAULT. `x COLLATE c` must name a
//! collation of x's character set (1253), in expressions, ORDER BY, GROUP
//! BY and column definitions; CONVERT(x USING cs) gives x that set.
mod common;
use common::{err, q, texts, TestDb};
use sql::result::Collect;
use sql::Value;

fn t(s: &mut sql::Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

/// Prepares `sql` and runs it with `params`: its rows as text.
fn prepared(s: &mut sql::Session, sql: &str, params: &[Value]) -> (u32, Vec<String>) {
    let (id, ..) = s.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    (id, run_prepared(s, id, params))
}

fn run_prepared(s: &mut sql::Session, id: u32, params: &[Value]) -> Vec<String> {
    let mut c = Collect::default();
    s.execute_prepared(id, params, &mut c)
        .expect("execute_prepared");
    texts(c.rows)
}

#[test]
fn literals_take_the_connection_collation() {
    let db = TestDb::open("sql-coll-conn");
    let mut s = common::session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10) COLLATE utf8mb4_general_ci, \
         u VARCHAR(10) COLLATE utf8mb4_unicode_ci)",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 'ß', 'ß'), (2, 'ss', 'ss')",
    );
    assert_eq!(t(&mut s, "SELECT 'ß' = 'ss', 'a' = 'A'"), vec!["0|1"]);
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        t(
            &mut s,
            "SELECT 'ß' = 'ss', 'ß' IN ('x', 'ss'), @@character_set_connection, \
             @@collation_connection"
        ),
        vec!["1|1|utf8mb4|utf8mb4_unicode_ci"]
    );
    // A column's collation wins over a literal's; an explicit COLLATE over both.
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE c = 'ss' ORDER BY id"),
        vec!["2"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE c = 'ss' COLLATE utf8mb4_unicode_ci ORDER BY id"
        ),
        vec!["1", "2"]
    );
    // Functions of literals, and literals in ORDER BY / GROUP BY.
    assert_eq!(
        t(
            &mut s,
            "SELECT CONCAT('ß', '') = 'ss', UPPER('ß') = 'SS', STRCMP('ß', 'ss')"
        ),
        vec!["1|1|0"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT 'ß' AS k UNION ALL SELECT 'ss') x GROUP BY k"
        ),
        vec!["2"]
    );
    // latin1 connection: literals are latin1_swedish_ci.
    q(&mut s, "SET NAMES latin1");
    assert_eq!(t(&mut s, "SELECT 'ä' = 'A', 'ß' = 'ss'"), vec!["0|0"]);
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
    assert_eq!(t(&mut s, "SELECT 'a' = 'A', 'a' < 'B'"), vec!["0|0"]);
    // User variables holding strings, as literals.
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    q(&mut s, "SET @v = 'ß'");
    assert_eq!(t(&mut s, "SELECT @v = 'ss'"), vec!["1"]);
}

#[test]
fn plans_follow_the_collation_they_were_made_under() {
    let db = TestDb::open("sql-coll-conn-plans");
    let mut s = common::session_in_d(&db);
    let mut s2 = common::session_in_d(&db);
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10))");
    q(&mut s, "INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    // Text statements whose literals become parameters share a cached plan
    // per collation: the same text answers under each session's own.
    let sql = "SELECT id FROM t WHERE id > 0 AND 'ß' = 'ss' ORDER BY id";
    assert_eq!(t(&mut s, sql), Vec::<String>::new());
    q(&mut s2, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(t(&mut s2, sql), vec!["1", "2"]);
    assert_eq!(t(&mut s, sql), Vec::<String>::new());
    // Prepared statements: shared by text, not across collations.
    let p = "SELECT ? = 'ss', 'ß' = 'ss'";
    let ss = Value::Bytes("ß".as_bytes().to_vec());
    let (_, r2) = prepared(&mut s2, p, std::slice::from_ref(&ss));
    assert_eq!(r2, vec!["1|1"]);
    let (id, r1) = prepared(&mut s, p, std::slice::from_ref(&ss));
    assert_eq!(r1, vec!["0|0"]);
    // A prepared statement keeps the collation it was prepared under
    // (MariaDB), also when the catalog changes under it.
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        run_prepared(&mut s, id, std::slice::from_ref(&ss)),
        vec!["0|0"]
    );
    q(&mut s, "CREATE TABLE other (a INT)");
    assert_eq!(run_prepared(&mut s, id, &[ss]), vec!["0|0"]);
    q(&mut s, "SET NAMES utf8mb4");
    // A view's literals keep the collation_connection of its creation.
    q(&mut s2, "CREATE VIEW v AS SELECT 'ß' = 'ss' AS x");
    q(
        &mut s2,
        "CREATE VIEW w AS SELECT id FROM t WHERE 'ß' = 'ss' AND id = 1",
    );
    assert_eq!(t(&mut s, "SELECT x FROM v"), vec!["1"]);
    assert_eq!(t(&mut s, "SELECT id FROM w"), vec!["1"]);
    assert_eq!(
        t(
            &mut s,
            "SELECT COLLATION_CONNECTION FROM information_schema.VIEWS WHERE TABLE_NAME = 'v'"
        ),
        vec!["utf8mb4_unicode_ci"]
    );
}

#[test]
fn connection_variables_move_together() {
    let db = TestDb::open("sql-coll-conn-vars");
    let mut s = common::session_in_d(&db);
    let conn = |s: &mut sql::Session| {
        t(
            s,
            "SELECT @@character_set_connection, @@collation_connection, \
             @@character_set_client, @@character_set_results",
        )
        .remove(0)
    };
    q(&mut s, "SET collation_connection = utf8mb3_unicode_ci");
    assert_eq!(conn(&mut s), "utf8mb3|utf8mb3_unicode_ci|utf8mb4|utf8mb4");
    q(&mut s, "SET character_set_connection = latin1");
    assert_eq!(conn(&mut s), "latin1|latin1_swedish_ci|utf8mb4|utf8mb4");
    q(&mut s, "SET character_set_connection = utf8mb4");
    assert_eq!(conn(&mut s), "utf8mb4|utf8mb4_general_ci|utf8mb4|utf8mb4");
    q(&mut s, "SET @@session.collation_connection = 8");
    assert_eq!(conn(&mut s), "latin1|latin1_swedish_ci|utf8mb4|utf8mb4");
    q(&mut s, "SET character_set_connection = 33");
    assert_eq!(conn(&mut s), "utf8mb3|utf8mb3_general_ci|utf8mb4|utf8mb4");
    q(&mut s, "SET NAMES latin1");
    assert_eq!(conn(&mut s), "latin1|latin1_swedish_ci|latin1|latin1");
    q(&mut s, "SET NAMES DEFAULT");
    assert_eq!(conn(&mut s), "utf8mb4|utf8mb4_general_ci|utf8mb4|utf8mb4");
    // SET CHARACTER SET: client and results; the connection's follow the
    // database's (utf8mb4_general_ci here).
    q(&mut s, "SET CHARACTER SET latin1");
    assert_eq!(conn(&mut s), "utf8mb4|utf8mb4_general_ci|latin1|latin1");
    q(&mut s, "SET NAMES utf8mb4");
    q(&mut s, "SET collation_connection = latin1_bin");
    q(&mut s, "SET collation_connection = DEFAULT");
    assert_eq!(conn(&mut s), "utf8mb4|utf8mb4_general_ci|utf8mb4|utf8mb4");
    assert_eq!(err(&mut s, "SET character_set_connection = 'nope'"), 1115);
    assert_eq!(err(&mut s, "SET collation_connection = 'nope'"), 1273);
    assert_eq!(err(&mut s, "SET collation_connection = 9999"), 1273);
    assert_eq!(conn(&mut s), "utf8mb4|utf8mb4_general_ci|utf8mb4|utf8mb4");
}

#[test]
fn collate_must_match_the_character_set() {
    let db = TestDb::open("sql-coll-conn-1253");
    let mut s = common::session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE tl (a VARCHAR(5) CHARACTER SET latin1, b VARCHAR(5) CHARACTER SET utf8mb3, \
         c VARCHAR(5))",
    );
    q(&mut s, "INSERT INTO tl VALUES ('a', 'b', 'c')");
    for bad in [
        "SELECT 'a' COLLATE latin1_general_ci",
        "SELECT 'a' COLLATE utf8mb3_bin",
        "SELECT 1 COLLATE latin1_bin",
        "SELECT CAST('a' AS BINARY) COLLATE utf8mb4_bin",
        "SELECT a COLLATE utf8mb4_bin FROM tl",
        "SELECT b COLLATE utf8mb4_bin FROM tl",
        "SELECT c FROM tl WHERE c = 'x' COLLATE latin1_bin",
        "SELECT * FROM tl ORDER BY a COLLATE utf8mb4_bin",
        "SELECT a FROM tl GROUP BY a COLLATE utf8mb4_bin",
        "UPDATE tl SET a = 'x' ORDER BY a COLLATE utf8mb4_bin LIMIT 1",
        "CREATE TABLE c1 (a VARCHAR(5) CHARACTER SET latin1 COLLATE utf8mb4_bin)",
        "CREATE TABLE c3 (a VARCHAR(5)) CHARSET utf8mb4 COLLATE latin1_bin",
        "CREATE DATABASE dd CHARACTER SET utf8mb4 COLLATE latin1_bin",
    ] {
        assert_eq!(err(&mut s, bad), 1253, "{bad}");
    }
    assert_eq!(
        t(
            &mut s,
            "SELECT 1 COLLATE utf8mb4_bin, NULL COLLATE latin1_bin, a COLLATE latin1_bin, \
             b COLLATE utf8mb3_bin, CONCAT(a, 'x') COLLATE latin1_bin, \
             CONVERT('a' USING latin1) COLLATE latin1_bin, \
             CONVERT(a USING utf8mb4) COLLATE utf8mb4_bin, CONVERT('☃' USING latin1) FROM tl"
        ),
        vec!["1|NULL|a|b|ax|a|a|?"]
    );
    assert_eq!(
        t(&mut s, "SELECT a FROM tl ORDER BY a COLLATE latin1_bin"),
        vec!["a"]
    );
    // A latin1 connection: literals are latin1.
    q(&mut s, "SET NAMES latin1");
    assert_eq!(t(&mut s, "SELECT 'a' COLLATE latin1_bin"), vec!["a"]);
    assert_eq!(err(&mut s, "SELECT 'a' COLLATE utf8mb4_bin"), 1253);
    q(&mut s, "SET NAMES utf8mb4");
    // A collation alone decides a column's character set.
    q(
        &mut s,
        "CREATE TABLE c2 (a VARCHAR(5) COLLATE latin1_bin) CHARSET utf8mb4",
    );
    assert!(common::show_create(&mut s, "c2")
        .contains("`a` varchar(5) CHARACTER SET latin1 COLLATE latin1_bin"));
}

#[test]
fn weight_string_as_mariadb() {
    let db = TestDb::open("sql-coll-ws");
    let mut s = common::session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE w (c CHAR(5), v VARCHAR(5), b BINARY(4), vb VARBINARY(4), i INT, \
         e ENUM('x','y'), d DATE, u VARCHAR(5) COLLATE utf8mb4_unicode_ci, \
         l VARCHAR(5) CHARACTER SET latin1)",
    );
    q(
        &mut s,
        "INSERT INTO w VALUES ('ab', 'ab', 'ab', 'ab', 5, 'y', '2020-01-02', 'ßa', 'aé ')",
    );
    // Each answer observed on MariaDB 10.11.
    assert_eq!(
        t(
            &mut s,
            "SELECT HEX(WEIGHT_STRING(c)), HEX(WEIGHT_STRING(v)), HEX(WEIGHT_STRING(b)), \
             HEX(WEIGHT_STRING(vb)), WEIGHT_STRING(i) IS NULL, HEX(WEIGHT_STRING(e)), \
             HEX(WEIGHT_STRING(d)), HEX(WEIGHT_STRING(u)), HEX(WEIGHT_STRING(l)) FROM w"
        ),
        vec!["00410042|00410042|61620000|6162|1|0059|323032302D30312D3032|0FEA0FEA0E33|414520"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT HEX(WEIGHT_STRING('aB ')), HEX(WEIGHT_STRING('aB ' COLLATE utf8mb4_bin)), \
             HEX(WEIGHT_STRING('ab' AS CHAR(4))), HEX(WEIGHT_STRING('ab' AS CHAR(1))), \
             HEX(WEIGHT_STRING('ab' AS BINARY(4))), HEX(WEIGHT_STRING('é' AS BINARY(1))), \
             HEX(WEIGHT_STRING('ßab' COLLATE utf8mb4_unicode_ci AS CHAR(5))), \
             HEX(WEIGHT_STRING('ab' COLLATE utf8mb4_unicode_nopad_ci AS CHAR(4))), \
             HEX(WEIGHT_STRING(u AS CHAR(1))) FROM w"
        ),
        vec![
            "004100420020|000061000042000020|0041004200200020|0041|61620000|C3|\
             0FEA0FEA0E330E4A0209|0E330E4A02000200|0FEA"
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT WEIGHT_STRING(NULL), HEX(WEIGHT_STRING('')), HEX(WEIGHT_STRING('' AS CHAR(2))), \
             WEIGHT_STRING(1) IS NULL, WEIGHT_STRING(1.5) IS NULL, \
             HEX(WEIGHT_STRING(CAST(1 AS CHAR))), \
             HEX(WEIGHT_STRING(CAST('aB' AS BINARY))), HEX(WEIGHT_STRING('😀' COLLATE utf8mb4_bin))"
        ),
        vec!["NULL||00200020|1|1|0031|6142|01F600"]
    );
    // Nested calls, a parameter, a prepared AS CHAR(n); binary results.
    assert_eq!(
        t(
            &mut s,
            "SELECT HEX(WEIGHT_STRING(HEX(WEIGHT_STRING('a' AS CHAR(2))) AS CHAR(1))), \
             WEIGHT_STRING('a') = WEIGHT_STRING('A'), WEIGHT_STRING('a') < WEIGHT_STRING('b')"
        ),
        vec!["0030|1|1"]
    );
    let (_, r) = prepared(
        &mut s,
        "SELECT HEX(WEIGHT_STRING(? AS CHAR(3)))",
        &[Value::Bytes(b"x".to_vec())],
    );
    assert_eq!(r, vec!["005800200020"]);
    // The connection's collation reaches literals.
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        t(&mut s, "SELECT HEX(WEIGHT_STRING('ß'))"),
        vec!["0FEA0FEA"]
    );
    q(&mut s, "SET NAMES utf8mb4");
    for bad in [
        "SELECT WEIGHT_STRING()",
        "SELECT WEIGHT_STRING('a', 'b')",
        "SELECT WEIGHT_STRING('a', 'CHAR', 0)",
        "SELECT WEIGHT_STRING('a' AS CHAR(2) LEVEL 1)",
        "SELECT WEIGHT_STRING('a' AS CHAR(0))",
    ] {
        assert_eq!(err(&mut s, bad), 1064, "{bad}");
    }
}
