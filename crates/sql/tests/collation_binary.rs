//! Binary strings compare every byte (NO PAD: 'a ' <> 'a', 'a\0' > 'a'),
//! CHARACTER SET binary columns are binary types, and an index serves a
//! comparison only under its column's collation (`s > BINARY 'a'` on a
//! `_ci` column scans and filters). Expected answers are MariaDB 10.11's.
mod common;
use common::{q, rows, session_in_d, TestDb};

fn ids(s: &mut sql::Session, sql: &str) -> String {
    rows(s, sql).join(",")
}

#[test]
fn binary_strings_count_trailing_spaces_and_zero_bytes() {
    let db = TestDb::open("collation_binary_bytes");
    let mut s = session_in_d(&db);
    assert_eq!(
        rows(
            &mut s,
            "SELECT BINARY 'a ' = 'a', 'a ' = 'a', BINARY 'a' < 'a ', BINARY 'a\\0' > 'a'"
        ),
        ["0|1|1|1"]
    );
    q(
        &mut s,
        "CREATE TABLE vb (id INT PRIMARY KEY, v VARBINARY(10), b BINARY(3), bl BLOB, \
         c CHAR(5) CHARACTER SET binary, k VARBINARY(10), KEY (k))",
    );
    q(
        &mut s,
        "INSERT INTO vb VALUES (1,'a','a','a','a','a'),(2,'a ','a ','a ','a ','a '),\
         (3,'a\\0','a\\0','a\\0','a\\0','a\\0'),(4,'a  ','b','a  ','b','a  ')",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, HEX(v), HEX(b), HEX(bl), HEX(c) FROM vb ORDER BY id"
        ),
        [
            "1|61|610000|61|6100000000",
            "2|6120|612000|6120|6120000000",
            "3|6100|610000|6100|6100000000",
            "4|612020|620000|612020|6200000000"
        ]
    );
    for col in ["v", "bl", "k"] {
        assert_eq!(
            ids(&mut s, &format!("SELECT id FROM vb WHERE {col} = 'a'")),
            "1"
        );
        assert_eq!(
            ids(
                &mut s,
                &format!("SELECT id FROM vb WHERE {col} < 'a ' ORDER BY id")
            ),
            "1,3"
        );
        assert_eq!(
            ids(
                &mut s,
                &format!("SELECT HEX({col}) FROM vb ORDER BY {col}, id")
            ),
            "61,6100,6120,612020"
        );
        assert_eq!(
            ids(&mut s, &format!("SELECT COUNT(DISTINCT {col}) FROM vb")),
            "4"
        );
        assert_eq!(
            ids(&mut s, &format!("SELECT COUNT(*) FROM vb GROUP BY {col}")),
            "1,1,1,1"
        );
        assert_eq!(
            ids(
                &mut s,
                &format!("SELECT HEX(MIN({col})), HEX(MAX({col})) FROM vb")
            ),
            "61|612020"
        );
        assert_eq!(
            ids(
                &mut s,
                &format!("SELECT id FROM vb WHERE {col} LIKE 'a %' ORDER BY id")
            ),
            "2,4"
        );
    }
    assert_eq!(
        ids(
            &mut s,
            "SELECT id FROM vb FORCE INDEX (k) WHERE k < 'a ' ORDER BY id"
        ),
        "1,3"
    );
    assert_eq!(ids(&mut s, "SELECT id FROM vb WHERE b = 'a'"), "");
    assert_eq!(ids(&mut s, "SELECT id FROM vb WHERE c = 'a'"), "");
    assert_eq!(
        ids(
            &mut s,
            "SELECT id FROM vb WHERE c = 'a\\0\\0\\0\\0' ORDER BY id"
        ),
        "1,3"
    );
    // A self-join on the binary column matches each row only with itself
    // (hash join images keep every byte).
    assert_eq!(
        ids(&mut s, "SELECT COUNT(*) FROM vb x JOIN vb y ON x.v = y.v"),
        "4"
    );
    q(&mut s, "CREATE TABLE ub (v VARBINARY(10) UNIQUE)");
    q(&mut s, "INSERT INTO ub VALUES ('a'), ('a ')");
    assert_eq!(ids(&mut s, "SELECT COUNT(*) FROM ub"), "2");
    assert_eq!(
        rows(
            &mut s,
            "SELECT STRCMP(BINARY 'a ', 'a'), NULLIF(BINARY 'a ', 'a'), \
             GREATEST(BINARY 'a', 'a '), FIELD(BINARY 'a ', 'a', 'a '), \
             BINARY 'a ' IN ('a'), BINARY 'a ' BETWEEN 'a' AND 'a', \
             CASE BINARY 'a ' WHEN 'a' THEN 1 ELSE 0 END"
        ),
        ["1|a |a |2|0|0|0"]
    );
}

#[test]
fn indexes_serve_only_comparisons_under_their_collation() {
    let db = TestDb::open("collation_binary_index");
    let mut s = session_in_d(&db);
    // s is indexed, u is not: both must answer alike (and as MariaDB).
    q(
        &mut s,
        "CREATE TABLE ci (id INT PRIMARY KEY, s VARCHAR(10), u VARCHAR(10), KEY (s))",
    );
    q(
        &mut s,
        "INSERT INTO ci VALUES (1,'a','a'),(2,'A','A'),(3,'b','b'),(4,'B','B'),\
         (5,'a ','a '),(6,'_','_'),(7,'Z','Z')",
    );
    q(
        &mut s,
        "CREATE TABLE bn (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_bin, \
         u VARCHAR(10) COLLATE utf8mb4_bin, KEY (s))",
    );
    q(&mut s, "INSERT INTO bn SELECT * FROM ci");
    let cases: &[(&str, &str, &str)] = &[
        ("ci", "{c} > BINARY 'a'", "3,5"),
        ("ci", "{c} < BINARY 'B'", "2"),
        ("ci", "{c} = BINARY 'A'", "2"),
        ("ci", "{c} = BINARY 'a'", "1"),
        ("ci", "{c} IN (BINARY 'a', BINARY 'B')", "1,4"),
        ("ci", "{c} BETWEEN BINARY 'A' AND BINARY 'Z'", "2,4,7"),
        ("ci", "{c} COLLATE utf8mb4_bin < 'B'", "2"),
        ("ci", "{c} COLLATE utf8mb4_bin = 'a'", "1,5"),
        ("ci", "{c} = BINARY 'A' OR {c} = BINARY 'b'", "2,3"),
        ("bn", "{c} > 'a' COLLATE utf8mb4_general_ci", "3,4,6,7"),
        ("bn", "{c} = 'a' COLLATE utf8mb4_general_ci", "1,2,5"),
        ("bn", "{c} < BINARY 'a '", "1,2,4,6,7"),
        ("bn", "{c} = BINARY 'a'", "1"),
    ];
    for (t, cond, want) in cases {
        for (col, hint) in [("s", "FORCE INDEX (s)"), ("s", ""), ("u", "")] {
            let sql = format!(
                "SELECT id FROM {t} {hint} WHERE {} ORDER BY id",
                cond.replace("{c}", col)
            );
            assert_eq!(ids(&mut s, &sql), *want, "{sql}");
        }
    }
    // A join probing the _ci index with a binary comparison.
    assert_eq!(
        rows(
            &mut s,
            "SELECT a.id, b.id FROM bn b JOIN ci a FORCE INDEX (s) ON a.s = BINARY b.s \
             ORDER BY a.id"
        ),
        ["1|1", "2|2", "3|3", "4|4", "5|5", "6|6", "7|7"]
    );
}
