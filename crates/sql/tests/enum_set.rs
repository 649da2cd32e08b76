//! ENUM, SET and JSON columns with MariaDB 10.11's semantics (each expected
//! answer below was checked against MariaDB): member numbers in storage and
//! ORDER BY, text in string context and numbers in numeric context,
//! comparisons, strict-mode 1265, INSERT IGNORE's '', member validation at
//! CREATE (1291, 1367, 1097, 1067), SHOW CREATE TABLE, information_schema,
//! ALTER TABLE, restarts, and JSON as MariaDB's alias with its CHECK.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::Session;

mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn fails(s: &mut Session, sql: &str) -> (u16, String) {
    let mut c = Collect::default();
    let e = s.query(sql, &mut c).expect_err(sql);
    (e.code, e.msg)
}

fn show_create(s: &mut Session, t: &str) -> String {
    rows(s, &format!("SHOW CREATE TABLE {t}"))[0]
        .split_once('|')
        .unwrap()
        .1
        .to_string()
}

const T: &str = "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('b','a ','C','it''s') NOT NULL, \
                 s SET('x','y','z') DEFAULT 'y,x')";

#[test]
fn enum_storage_contexts_and_order() {
    let db = TestDb::open("sql-enum-basics");
    let mut s = session_in_d(&db);
    q(&mut s, T);
    assert_eq!(
        show_create(&mut s, "t"),
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `e` enum('b','a','C','it''s') NOT NULL,\n  \
         `s` set('x','y','z') DEFAULT 'x,y',\n  PRIMARY KEY (`id`)\n) ENGINE=STRATA DEFAULT \
         CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    q(
        &mut s,
        "INSERT INTO t(id,e) VALUES (1,'a'),(2,'B'),(3,3),(4,'c')",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, e, e+0, s, s+0, HEX(e), CONCAT(e,'!'), LENGTH(e) FROM t ORDER BY e, id"
        ),
        [
            "2|b|1|x,y|3|62|b!|1",
            "1|a|2|x,y|3|61|a!|1",
            "3|C|3|x,y|3|43|C!|1",
            "4|C|3|x,y|3|43|C!|1"
        ]
    );
    // MAX/MIN compare the text (under the column's collation).
    assert_eq!(
        rows(&mut s, "SELECT MAX(e), MIN(e), MAX(s) FROM t"),
        ["C|a|x,y"]
    );
    assert_eq!(
        rows(&mut s, "SELECT e, COUNT(*) FROM t GROUP BY e ORDER BY e"),
        ["b|1", "a|1", "C|2"]
    );
    // A number compares with the member number, a string with the text.
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE e = 2"), ["1"]);
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE e = 'A'"), ["1"]);
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE e < 'c' ORDER BY id"),
        ["1", "2"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE e > 1 ORDER BY id"),
        ["1", "3", "4"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE e IN (1, 2) ORDER BY id"),
        ["1", "2"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT SUM(e), AVG(e), CAST(e AS SIGNED) FROM t WHERE id IN (1,3) GROUP BY id ORDER BY id"
        ),
        ["2|2.0000|2", "3|3.0000|3"]
    );
    assert_eq!(
        rows(&mut s, "SELECT e + 0 AS n FROM t ORDER BY n DESC LIMIT 2"),
        ["3", "3"]
    );
}

#[test]
fn enum_insert_errors_and_ignore() {
    let db = TestDb::open("sql-enum-insert");
    let mut s = session_in_d(&db);
    q(&mut s, T);
    for v in ["'zz'", "0", "5", "' a'", "''"] {
        assert_eq!(
            fails(&mut s, &format!("INSERT INTO t(id,e) VALUES (5,{v})")),
            (1265, "Data truncated for column 'e' at row 1".into()),
            "{v}"
        );
    }
    assert_eq!(
        fails(&mut s, "INSERT INTO t(id,e) VALUES (5,'a'),(6,'q')"),
        (1265, "Data truncated for column 'e' at row 2".into())
    );
    q(&mut s, "INSERT IGNORE INTO t(id,e) VALUES (5,'zz'),(6,9)");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [
            "Warning|1265|Data truncated for column 'e' at row 1",
            "Warning|1265|Data truncated for column 'e' at row 2"
        ]
    );
    // Trailing spaces are ignored (PAD SPACE); '2' names member 2; 2.4 rounds.
    q(
        &mut s,
        "INSERT INTO t(id,e) VALUES (7,'a  '),(8,'2'),(9,2.4),(10,'IT''S')",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, CONCAT('[',e,']'), e+0 FROM t ORDER BY id"
        ),
        [
            "5|[]|0",
            "6|[]|0",
            "7|[a]|2",
            "8|[a]|2",
            "9|[a]|2",
            "10|[it's]|4"
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE e = '' ORDER BY id"),
        ["5", "6"]
    );
    // NOT NULL ENUM without DEFAULT: the first member; SET: 1364 (strict).
    q(&mut s, "CREATE TABLE t5 (e ENUM('p','q') NOT NULL, n INT)");
    q(&mut s, "INSERT INTO t5 (n) VALUES (1)");
    assert_eq!(rows(&mut s, "SELECT e FROM t5"), ["p"]);
    q(&mut s, "CREATE TABLE t6 (s SET('p','q') NOT NULL, n INT)");
    assert_eq!(err(&mut s, "INSERT INTO t6 (n) VALUES (1)"), 1364);
    // UPDATE converts the same way.
    q(&mut s, "UPDATE t SET e = 'c' WHERE id = 7");
    assert_eq!(rows(&mut s, "SELECT e FROM t WHERE id = 7"), ["C"]);
    assert_eq!(err(&mut s, "UPDATE t SET e = 'nope' WHERE id = 7"), 1265);
}

#[test]
fn set_values() {
    let db = TestDb::open("sql-set-values");
    let mut s = session_in_d(&db);
    q(&mut s, T);
    q(
        &mut s,
        "INSERT INTO t(id,e,s) VALUES (7,1,'z,x,x'),(8,1,5),(9,1,''),(10,1,'Y'),(11,1,NULL)",
    );
    for v in ["'q'", "8", "'a,,b'", "',x'"] {
        assert_eq!(
            fails(&mut s, &format!("INSERT INTO t(id,e,s) VALUES (20,1,{v})")),
            (1265, "Data truncated for column 's' at row 1".into()),
            "{v}"
        );
    }
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, s, s+0, FIND_IN_SET('x', s), FIND_IN_SET('z', s) FROM t ORDER BY s, id"
        ),
        [
            "11|NULL|NULL|NULL|NULL",
            "9||0|0|0",
            "10|y|2|0|0",
            "7|x,z|5|1|3",
            "8|x,z|5|1|3"
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE s = 'x,z' ORDER BY id"),
        ["7", "8"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE s = 5 ORDER BY id"),
        ["7", "8"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE s & 4 ORDER BY id"),
        ["7", "8"]
    );
    q(&mut s, "INSERT IGNORE INTO t(id,e,s) VALUES (12,1,'x,q')");
    assert_eq!(
        rows(&mut s, "SELECT CONCAT('[',s,']') FROM t WHERE id = 12"),
        ["[x]"]
    );
    assert_eq!(
        rows(&mut s, "SELECT FIND_IN_SET('b', 'a,b,c'), FIND_IN_SET('B', 'a,b'), FIND_IN_SET('a,b', 'a,b'), FIND_IN_SET('q', NULL)"),
        ["2|2|0|NULL"]
    );
}

#[test]
fn create_errors_and_defaults() {
    let db = TestDb::open("sql-enum-create");
    let mut s = session_in_d(&db);
    assert_eq!(
        fails(&mut s, "CREATE TABLE x (e ENUM('a','A'))"),
        (1291, "Column 'e' has duplicated value 'a' in ENUM".into())
    );
    assert_eq!(
        fails(&mut s, "CREATE TABLE x (e ENUM('A','a  '))"),
        (1291, "Column 'e' has duplicated value 'A' in ENUM".into())
    );
    assert_eq!(
        fails(&mut s, "CREATE TABLE x (s SET('a','a'))"),
        (1291, "Column 's' has duplicated value 'a' in SET".into())
    );
    assert_eq!(
        fails(&mut s, "CREATE TABLE x (s SET('a,b','c'))"),
        (1367, "Illegal set 'a,b' value found during parsing".into())
    );
    let many: Vec<String> = (0..65).map(|i| format!("'m{i}'")).collect();
    assert_eq!(
        fails(
            &mut s,
            &format!("CREATE TABLE x (s SET({}))", many.join(","))
        ),
        (1097, "Too many strings for column s and SET".into())
    );
    for d in ["'c'", "2", "''"] {
        assert_eq!(
            fails(
                &mut s,
                &format!("CREATE TABLE x (e ENUM('a','b') DEFAULT {d})")
            ),
            (1067, "Invalid default value for 'e'".into()),
            "{d}"
        );
    }
    assert_eq!(
        err(&mut s, "CREATE TABLE x (s SET('a','b') DEFAULT 3)"),
        1067
    );
    q(
        &mut s,
        "CREATE TABLE x4 (e ENUM('a ','b') DEFAULT 'B', s SET('a','b') DEFAULT 'b,a,a')",
    );
    assert_eq!(
        show_create(&mut s, "x4"),
        "CREATE TABLE `x4` (\n  `e` enum('a','b') DEFAULT 'b',\n  `s` set('a','b') DEFAULT 'a,b'\n) \
         ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    q(
        &mut s,
        "CREATE TABLE x8 (e ENUM('x','y') CHARACTER SET latin1 COLLATE latin1_bin, \
         f ENUM('é') COLLATE utf8mb4_bin, g ENUM('') , h ENUM('a','b') NOT NULL DEFAULT 'b')",
    );
    assert_eq!(
        show_create(&mut s, "x8"),
        "CREATE TABLE `x8` (\n  `e` enum('x','y') CHARACTER SET latin1 COLLATE latin1_bin DEFAULT NULL,\n  \
         `f` enum('é') CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `g` enum('') DEFAULT NULL,\n  `h` enum('a','b') NOT NULL DEFAULT 'b'\n) \
         ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    // A _bin column's members are case-sensitive.
    q(&mut s, "INSERT INTO x8 (e) VALUES ('x')");
    assert_eq!(err(&mut s, "INSERT INTO x8 (e) VALUES ('X')"), 1265);
}

#[test]
fn information_schema_columns() {
    let db = TestDb::open("sql-enum-infoschema");
    let mut s = session_in_d(&db);
    q(&mut s, T);
    q(&mut s, "CREATE TABLE j (j JSON)");
    assert_eq!(
        rows(
            &mut s,
            "SELECT column_name, column_type, data_type, character_maximum_length, \
             character_octet_length, column_default FROM information_schema.columns \
             WHERE table_schema = 'd' ORDER BY table_name, ordinal_position"
        ),
        [
            "j|longtext|longtext|4294967295|4294967295|NULL",
            "id|int|int|NULL|NULL|NULL",
            "e|enum('b','a','C','it''s')|enum|4|16|NULL",
            "s|set('x','y','z')|set|5|20|'x,y'"
        ]
    );
}

#[test]
fn indexes_and_restart() {
    let dir = testkit::TempDir::new("sql-enum-restart");
    let open = || {
        sql::Instance::open(
            &dir.0,
            &sql::InstanceOptions {
                sync_on_commit: false,
                ..Default::default()
            },
        )
        .unwrap()
    };
    {
        let inst = open();
        let mut s = Session::new(inst.clone(), 1, "root", None);
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        q(
            &mut s,
            "CREATE TABLE u (id INT PRIMARY KEY, e ENUM('c','a','b'), s SET('p','q'), KEY(e), KEY(s))",
        );
        q(
            &mut s,
            "INSERT INTO u VALUES (1,'a','q'),(2,'b','p,q'),(3,'c',''),(4,NULL,NULL),(5,'a','p')",
        );
    }
    let inst = open();
    let mut s = Session::new(inst, 1, "root", None);
    q(&mut s, "USE d");
    // The index holds member numbers: its order is the member order.
    assert_eq!(
        rows(&mut s, "SELECT e FROM u FORCE INDEX (e) ORDER BY e"),
        ["NULL", "c", "a", "a", "b"]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM u WHERE e = 'a' ORDER BY id"),
        ["1", "5"]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM u WHERE e = 3"), ["2"]);
    assert_eq!(
        rows(&mut s, "SELECT id FROM u WHERE e >= 'b' ORDER BY id"),
        ["2", "3"]
    );
    // A string compares with the text: 'q,p' is not 'p,q'.
    assert!(rows(&mut s, "SELECT id FROM u WHERE s = 'q,p'").is_empty());
    assert_eq!(rows(&mut s, "SELECT id FROM u WHERE s = 'p,q'"), ["2"]);
    assert_eq!(
        rows(&mut s, "SELECT id, s FROM u ORDER BY s DESC, id"),
        ["2|p,q", "1|q", "5|p", "3|", "4|NULL"]
    );
    assert_eq!(
        rows(&mut s, "CHECK TABLE u")[0].rsplit('|').next().unwrap(),
        "OK"
    );
}

#[test]
fn alter_members_and_varchar() {
    let db = TestDb::open("sql-enum-alter");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, e ENUM('a','b','c'), KEY(e))",
    );
    q(
        &mut s,
        "INSERT INTO u VALUES (1,'c'),(2,'a'),(3,'b'),(4,NULL)",
    );
    q(&mut s, "ALTER TABLE u MODIFY e ENUM('a','b','c','d')");
    assert_eq!(
        rows(&mut s, "SELECT id, e, e+0 FROM u ORDER BY id"),
        ["1|c|3", "2|a|1", "3|b|2", "4|NULL|NULL"]
    );
    // Reordering maps the values by their text.
    q(&mut s, "ALTER TABLE u MODIFY e ENUM('c','a','b')");
    assert_eq!(
        rows(&mut s, "SELECT id, e, e+0 FROM u ORDER BY id"),
        ["1|c|1", "2|a|2", "3|b|3", "4|NULL|NULL"]
    );
    assert_eq!(err(&mut s, "ALTER TABLE u MODIFY e ENUM('a','b')"), 1265);
    q(&mut s, "ALTER TABLE u MODIFY e VARCHAR(10)");
    assert_eq!(
        rows(&mut s, "SELECT e FROM u ORDER BY e"),
        ["NULL", "a", "b", "c"]
    );
    q(
        &mut s,
        "ALTER TABLE u MODIFY e ENUM('b','c','a') DEFAULT 'a'",
    );
    assert_eq!(
        rows(&mut s, "SELECT id, e, e+0 FROM u ORDER BY e, id"),
        ["4|NULL|NULL", "3|b|1", "1|c|2", "2|a|3"]
    );
}

#[test]
fn json_is_longtext_with_a_check() {
    let db = TestDb::open("sql-json-alias");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE jj (j JSON NOT NULL, k JSON DEFAULT '{}')",
    );
    assert_eq!(
        show_create(&mut s, "jj"),
        "CREATE TABLE `jj` (\n  `j` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL \
         CHECK (json_valid(`j`)),\n  `k` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin \
         DEFAULT '{}' CHECK (json_valid(`k`))\n) ENGINE=STRATA DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
    q(&mut s, "INSERT INTO jj (j) VALUES ('[1,2]')");
    assert_eq!(
        fails(&mut s, "INSERT INTO jj (j) VALUES ('x')"),
        (4025, "CONSTRAINT `jj.j` failed for `d`.`jj`".into())
    );
    assert_eq!(
        rows(&mut s, "SELECT j, k, JSON_LENGTH(j) FROM jj"),
        ["[1,2]|{}|2"]
    );
    q(&mut s, "ALTER TABLE jj ADD COLUMN m JSON");
    assert_eq!(err(&mut s, "INSERT INTO jj (j, m) VALUES ('1', '{')"), 4025);
    q(&mut s, "INSERT INTO jj (j, m) VALUES ('1', '{\"a\": 1}')");
    assert_eq!(
        rows(&mut s, "SELECT check_clause FROM information_schema.check_constraints ORDER BY constraint_name"),
        ["json_valid(`j`)", "json_valid(`k`)", "json_valid(`m`)"]
    );
}

#[test]
fn long_mixed_in_lists_answer_without_deep_nesting() {
    // A mixed IN list becomes an OR of equalities; 50,000 items must not
    // nest 50,000 deep (a stack overflow before the balanced tree).
    let db = TestDb::open("sql-enum-long-in");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE m (id INT PRIMARY KEY, e ENUM('a','b','c'))",
    );
    q(&mut s, "INSERT INTO m VALUES (1,'a'),(2,'b'),(3,'c')");
    let items: Vec<&str> = (0..50_000)
        .map(|i| if i % 2 == 0 { "'zz'" } else { "9" })
        .collect();
    let list = items.join(",");
    assert_eq!(
        rows(
            &mut s,
            &format!("SELECT id FROM m WHERE e IN ({list}, 1, 'c') ORDER BY id")
        ),
        vec!["1", "3"]
    );
    assert_eq!(
        rows(
            &mut s,
            &format!("SELECT id FROM m WHERE e NOT IN ({list}, 1) ORDER BY id")
        ),
        vec!["2", "3"]
    );
}
