//! Hex and bit literals, character set introducers and COLLATION() /
//! CHARSET() / COERCIBILITY(), with the answers MariaDB 10.11 gives (each
//! observed there, utf8mb4_general_ci connection unless SET NAMES says
//! otherwise): `X'41'`, `0x41`, `b'1'` and `0b1` are binary strings (a
//! comparison with a text literal is bytewise, CONCAT with them is binary,
//! WEIGHT_STRING is their bytes) and numbers in numeric context (MySQL's
//! BIGINT UNSIGNED: arithmetic, a comparison with a number, CAST to a
//! number, a numeric column); a column's collation still wins over them.
//! `_utf8mb4'x'`, `_utf8mb3'x'`, `_latin1'x'`, `_binary'x'`, `_cs X'..'`
//! and `N'x'` are literals of that character set's default collation, in
//! text and prepared statements, as mysqldump writes them; CREATE TABLE ...
//! SELECT gives literal columns the connection's collation.
mod common;
use common::{err, q, show_create, texts, TestDb};
use sql::result::Collect;

fn t(s: &mut sql::Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

#[test]
fn hex_and_bit_literals_are_binary_strings() {
    let db = TestDb::open("sql-literals-hex");
    let mut s = common::session_in_d(&db);
    assert_eq!(
        t(
            &mut s,
            "SELECT X'41'='a', 0x41='a', b'01000001'='a', X'41'='A', 0x41+0, b'01000001'+0, \
             0b01000001+0, HEX(WEIGHT_STRING(X'4100')), HEX(WEIGHT_STRING('a')), CHARSET(X'41'), \
             COLLATION(0x41), COERCIBILITY(0x41), CHARSET(b'1'), LENGTH(X'C3A9'), \
             CONCAT('a', X'41'), CHARSET(CONCAT('a', x'41')), 0x41 = 65, X'41' < 'b', \
             X'61' < 'B', HEX(b'1'), HEX(b'100000001'), HEX(0b1)"
        ),
        vec!["0|0|0|1|65|65|65|4100|0041|binary|binary|4|binary|2|aA|binary|1|1|0|01|0101|01"]
    );
    // Numeric context: the BIGINT UNSIGNED of the (last 8) bytes.
    assert_eq!(
        t(
            &mut s,
            "SELECT -0x41, ~0x41, 0x41 | 0, 0x41 & 0xff, 0x41 * 1, 0x41 / 1, 0x41 > 64, \
             0x41 IN (65), CAST(0x41 AS SIGNED), CAST(0x41 AS CHAR), 0x41 BETWEEN 60 AND 70, \
             0x4142434445464748494a + 0, 0x41 + '1', CONCAT(0x41, 1), 0x41 = '65'"
        ),
        vec!["-65|18446744073709551550|65|65|65|65.0000|1|1|65|A|1|4847075267103443274|66|A1|0"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT ABS(0x41), ROUND(0x41), FLOOR(0x41), CEIL(0x41), SIGN(0x41), POW(0x41, 1), \
             MOD(0x41, 10), TRUNCATE(0x41, 0), EXP(0x0), LN(0x01), GREATEST(0x41, 1), \
             LEAST(0x41, 100), SUM(0x41), AVG(0x41), GREATEST(0x41, 'B')"
        ),
        vec!["65|65|65|65|1|65|5|65|1|0|65|65|65|65.0000|B"]
    );
    q(
        &mut s,
        "CREATE TABLE n (i INT, d DOUBLE, c VARCHAR(10), b VARBINARY(10), bn BINARY(3))",
    );
    q(
        &mut s,
        "INSERT INTO n VALUES (0x41, 0x41, 0x41, 0x41, 0x41)",
    );
    q(&mut s, "INSERT INTO n (i) VALUES (b'1000001')");
    q(&mut s, "INSERT INTO n SET i = 0x42, c = 0x42");
    q(&mut s, "UPDATE n SET d = 0x43 WHERE i = 66");
    assert_eq!(
        t(&mut s, "SELECT i, d, c, b, HEX(bn) FROM n ORDER BY i, c"),
        vec![
            "65|NULL|NULL|NULL|NULL",
            "65|65|A|A|410000",
            "66|67|B|NULL|NULL"
        ]
    );
    // A column's collation wins over a hex literal (COERCIBLE), through an
    // index too; against a text literal the binary one wins.
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), k VARCHAR(10), b VARBINARY(10), KEY(k))",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, 'a', 'a', 'a'), (2, 'A', 'A', 'A'), (3, 'b', 'b', 'b')",
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE s = 0x41 ORDER BY id"),
        vec!["1", "2"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE k = X'61' ORDER BY id"),
        vec!["1", "2"]
    );
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE b = 0x61"), vec!["1"]);
    assert_eq!(
        t(
            &mut s,
            "SELECT COLLATION(CONCAT(s, 0x41)), COERCIBILITY(CONCAT(s, 0x41)), \
             COLLATION(CONCAT(b, 'x')), CONCAT(s, 0x41) = 'AA' FROM t WHERE id = 1"
        ),
        vec!["utf8mb4_general_ci|2|binary|1"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t ORDER BY CONCAT(0x61, s), id"),
        vec!["1", "2", "3"]
    );
    // Prepared and through the statement cache: the same answers.
    let (id, ..) = s.prepare("SELECT X'41' = ?, 0x41 + ?").unwrap();
    let mut c = Collect::default();
    s.execute_prepared(
        id,
        &[sql::Value::Bytes(b"a".to_vec()), sql::Value::Int(1)],
        &mut c,
    )
    .unwrap();
    assert_eq!(texts(c.rows), vec!["0|66"]);
    for _ in 0..2 {
        assert_eq!(
            t(&mut s, "SELECT id FROM t WHERE id = 1 AND X'41' = 'a'"),
            Vec::<String>::new()
        );
    }
    // Errors as MariaDB's.
    assert_eq!(err(&mut s, "SELECT X'41' COLLATE utf8mb4_bin"), 1253);
}

#[test]
fn introducers_name_a_character_set() {
    let db = TestDb::open("sql-literals-intro");
    let mut s = common::session_in_d(&db);
    assert_eq!(
        t(
            &mut s,
            "SELECT 0x61 = 'A', 'A' = 0x61, _utf8mb4'a' = 0x41, _binary'a' = 'A', \
             _latin1'a' = 'A', _utf8mb4'a' COLLATE utf8mb4_bin = 'A', _latin1'a' COLLATE \
             latin1_general_ci = 'A', HEX(_utf8mb4 0xC3A9), _utf8mb4 0xC3A9 = 'É', \
             _utf8mb3'a' = 'A', _binary'a' = 'a', _latin1 0xE9 = 'é', CHAR_LENGTH(N'é'), \
             _binary 'x' = 'x', HEX(_binary X'00FF')"
        ),
        vec!["0|0|0|0|1|0|1|C3A9|1|1|1|1|1|1|00FF"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT CHARSET(_latin1'a'), COLLATION(_latin1'a'), COERCIBILITY(_latin1'a'), \
             COLLATION(_utf8mb4'a'), COERCIBILITY(_utf8mb4 'a'), COLLATION(N'a'), \
             COERCIBILITY(N'a'), COLLATION(_binary'a'), COERCIBILITY(_binary 0x41), \
             COLLATION(_utf8mb4 0x41), COLLATION(_utf8mb4'a' COLLATE utf8mb4_bin)"
        ),
        vec![
            "latin1|latin1_swedish_ci|4|utf8mb4_general_ci|4|utf8mb3_general_ci|4|binary|4|\
             utf8mb4_general_ci|utf8mb4_bin"
        ]
    );
    assert_eq!(err(&mut s, "SELECT _utf8mb4 0xFF"), 1300);
    assert_eq!(err(&mut s, "SELECT _foo'a'"), 1054);
    assert_eq!(
        err(&mut s, "SELECT _utf8mb4'a' COLLATE latin1_swedish_ci"),
        1253
    );
    assert_eq!(err(&mut s, "SELECT _ucs2'a'"), 1235);
    // What MySQL 8's mysqldump writes for binary and text columns loads.
    q(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, v VARBINARY(10), x VARCHAR(10))",
    );
    q(
        &mut s,
        "INSERT INTO b VALUES (1, _binary 'ab\\0c', _utf8mb4 'é'), (2, _binary 0x00FF, 'z')",
    );
    let mut c = Collect::default();
    s.query_bytes(
        b"INSERT INTO b VALUES (3, _binary '\xff\xfe', _latin1 '\xe9')",
        &mut c,
    )
    .unwrap();
    assert_eq!(
        t(&mut s, "SELECT id, HEX(v), x FROM b ORDER BY id"),
        vec!["1|61620063|é", "2|00FF|z", "3|FFFE|é"]
    );
    // Prepared statements read them alike.
    let (id, ..) = s
        .prepare_bytes(b"SELECT HEX(_binary '\xff'), _latin1 '\xe9' = ?, COERCIBILITY(_utf8mb4'a')")
        .unwrap();
    let mut c = Collect::default();
    s.execute_prepared(id, &[sql::Value::Bytes("É".as_bytes().to_vec())], &mut c)
        .unwrap();
    assert_eq!(texts(c.rows), vec!["FF|1|4"]);
}

#[test]
fn collation_charset_coercibility() {
    let db = TestDb::open("sql-literals-coll");
    let mut s = common::session_in_d(&db);
    q(&mut s, "CREATE TABLE t (s VARCHAR(10))");
    q(&mut s, "INSERT INTO t VALUES ('a')");
    assert_eq!(
        t(
            &mut s,
            "SELECT COERCIBILITY('a'), COERCIBILITY(s), COERCIBILITY('a' COLLATE utf8mb4_bin), \
             COERCIBILITY(USER()), COERCIBILITY(NULL), COERCIBILITY(1), COLLATION(1), \
             CHARSET(1), COLLATION(NULL), CHARSET(NULL), COLLATION(USER()), \
             COERCIBILITY(CAST('a' AS CHAR)), COLLATION(CAST(1 AS CHAR)), \
             COLLATION(CAST('a' AS BINARY)), COERCIBILITY(CAST('a' AS BINARY)), \
             COLLATION(CONCAT('a', 1)), COERCIBILITY(CONCAT('a', 1)), \
             COERCIBILITY(CONCAT(s, 'a')), COLLATION(s), CHARSET(s) FROM t"
        ),
        vec![
            "4|2|0|3|6|5|binary|binary|binary|binary|utf8mb3_general_ci|2|utf8mb4_general_ci|\
             binary|2|utf8mb4_general_ci|4|2|utf8mb4_general_ci|utf8mb4"
        ]
    );
    q(&mut s, "SET @u = 'x', @n = 1");
    assert_eq!(
        t(
            &mut s,
            "SELECT COLLATION(@u), COERCIBILITY(@u), COLLATION(@n), COERCIBILITY(@n), \
             COLLATION(@nosuch), COERCIBILITY(@nosuch)"
        ),
        vec!["utf8mb4_general_ci|2|binary|5|binary|2"]
    );
    // Under another connection collation: literals follow it, introducers
    // keep their character set's default, system values are SYSCONST.
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        t(
            &mut s,
            "SELECT COLLATION(_utf8mb4'a'), COLLATION('a'), COLLATION(X'41'), \
             COLLATION(CONCAT(_latin1'a', 'b')), DATABASE() = 'D', COLLATION(DATABASE()), \
             COERCIBILITY(DATABASE()), CONCAT(DATABASE(), 'x') = 'dX'"
        ),
        vec!["utf8mb4_general_ci|utf8mb4_unicode_ci|binary|utf8mb4_unicode_ci|1|utf8mb3_general_ci|3|1"]
    );
    // Two literals of one character set and different collations (MariaDB: 1267).
    assert_eq!(err(&mut s, "SELECT _utf8mb4'a' = 'A'"), 1267);
}

#[test]
fn create_table_select_gives_literals_the_connection_collation() {
    let db = TestDb::open("sql-literals-ctas");
    let mut s = common::session_in_d(&db);
    q(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    q(
        &mut s,
        "CREATE TABLE c1 AS SELECT 'a' AS a, X'41' AS h, _latin1'z' AS l, N'n' AS n",
    );
    let sc = show_create(&mut s, "c1");
    for want in [
        "`a` varchar(1) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL",
        "`h` varbinary(1) NOT NULL",
        "`l` varchar(1) CHARACTER SET latin1 COLLATE latin1_swedish_ci NOT NULL",
        "`n` varchar(1) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL",
    ] {
        assert!(sc.contains(want), "{want} not in {sc}");
    }
    assert_eq!(
        t(&mut s, "SELECT a = 'A', HEX(h), l, n FROM c1"),
        vec!["1|41|z|n"]
    );
}

/// Negative numbers in value positions become parameters of the shared
/// compiled form (`sql::autoparam`); the answers are those of the statement
/// read with its literals (auto-parameterization off).
#[test]
fn negative_literals_read_alike_with_and_without_auto_parameters() {
    let db = TestDb::open("sql-literals-neg");
    let mut s = common::session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE n (id INT PRIMARY KEY, d DECIMAL(12,6), i BIGINT, f DOUBLE)",
    );
    let mut answers = vec![];
    for on in [0, 1] {
        q(&mut s, &format!("SET strata_auto_parameterize = {on}"));
        q(&mut s, "DELETE FROM n");
        q(
            &mut s,
            "INSERT INTO n VALUES (1, -2010.500000, -9223372036854775808, -2e1), (2, 0, 0, 0)",
        );
        q(&mut s, "UPDATE n SET d=-3.25, i=-7 WHERE id=2");
        q(&mut s, "UPDATE n SET d = d + -1.5, f = f*-1 WHERE id = 1");
        answers.push(t(
            &mut s,
            "SELECT id, d, i, f FROM n WHERE i = -7 OR i=-9223372036854775808 ORDER BY id",
        ));
        answers.push(t(
            &mut s,
            "SELECT id FROM n WHERE d IN (-3.25, -2012) AND f > -30",
        ));
    }
    assert_eq!(
        answers[0],
        vec!["1|-2012.000000|-9223372036854775808|20", "2|-3.250000|-7|0"]
    );
    assert_eq!(answers[1], vec!["1", "2"]);
    assert_eq!(answers[0..2], answers[2..4]);
}

/// Where auto-parameterization must leave a `-N` as text, and where it must
/// see a name rather than a keyword (review s35 LOW-1, LOW-2).
#[test]
fn signs_before_collate_and_reserved_names_under_auto_parameters() {
    let db = TestDb::open("sql-literals-autoparam-edges");
    let mut s = common::session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE e (id INT PRIMARY KEY, c VARCHAR(10), `values` INT, `in` INT, `when` INT)",
    );
    q(
        &mut s,
        "INSERT INTO e VALUES (1, '-5.0', 5, 1, 1), (2, '-5', 6, 2, 0)",
    );
    // `-5 COLLATE utf8mb4_bin` is -(5 COLLATE utf8mb4_bin), a number: '-5.0'
    // equals it (MariaDB 10.11.19 answers both rows). `-5 ->> '$'` is
    // -('5' ->> '$'), -5 too; made `? ->> '$'` with -5 it was the text '-5'
    // and matched row 2 only (`->` alike; MariaDB has neither operator).
    for on in [0, 1] {
        q(&mut s, &format!("SET strata_auto_parameterize = {on}"));
        for w in [
            "c = -5 COLLATE utf8mb4_bin",
            "c = -5 ->> '$'",
            "c = -5 -> '$'",
            "c = -5->>'$' AND id IN (1, 2)",
        ] {
            for _ in 0..2 {
                assert_eq!(
                    t(&mut s, &format!("SELECT id FROM e WHERE {w} ORDER BY id")),
                    ["1", "2"],
                    "{w}, strata_auto_parameterize = {on}"
                );
            }
        }
    }
    // A reserved word after `.` is a column: `e.values -5 = 0` takes its 0
    // out, parses and is planned once for every such statement.
    let coll = rel::collation::Collation::from_name("utf8mb4_general_ci").unwrap();
    for (sql, want) in [
        ("SELECT id FROM e WHERE e.values -5 = 0", "1"),
        ("SELECT id FROM e WHERE e.in -1 = 1 AND e.when -1 = -1", "2"),
    ] {
        assert_eq!(t(&mut s, sql), [want], "{sql}");
        let n = sql::autoparam::normalize(sql).unwrap();
        let c = db.inst.stmt_cache.get(
            &format!("\u{1}{}", n.text),
            &Some("d".into()),
            coll,
            db.inst.catalog.version(),
        );
        assert!(
            c.is_some_and(|c| c.plan.is_some()),
            "{sql}: {} has no plan",
            n.text
        );
    }
}
