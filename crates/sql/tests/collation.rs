//! Collations through a Session: case- and accent-insensitive comparison
//! under utf8mb4_general_ci (the default), `_bin` and binary columns,
//! collation-aware UNIQUE keys, index probes, ranges, ORDER BY, GROUP BY,
//! DISTINCT, MIN/MAX, LIKE, COLLATE, and the errors. Results on the same
//! data are also compared with MariaDB's in the server's diff_mariadb corpus.
mod common;
use common::{err, q, texts, TestDb};

fn setup(db: &TestDb) -> sql::Session {
    let mut s = db.session(1, "root", None);
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), b VARCHAR(20) COLLATE utf8mb4_bin, \
         bin VARBINARY(20), KEY kn (name))",
        "INSERT INTO t VALUES (1, 'alice', 'alice', 'alice'), (2, 'Bob', 'Bob', 'Bob'), \
         (3, 'ALICE', 'ALICE', 'ALICE'), (4, 'émile', 'émile', 'émile'), (5, 'Zoé', 'Zoé', 'Zoé'), \
         (6, 'bob ', 'bob ', 'bob '), (7, '_x', '_x', '_x'), (8, NULL, NULL, NULL)",
    ] {
        q(&mut s, st);
    }
    s
}

#[test]
fn comparisons_follow_the_column_collation() {
    let db = TestDb::open("sql-coll-cmp");
    let mut s = setup(&db);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(
            &mut s,
            "SELECT 'a' = 'A', 'abc' LIKE 'A%', 'b' > 'A', 'é' = 'E', 'a ' = 'a'"
        ),
        vec!["1|1|1|1|1"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE name = 'ALICE' ORDER BY id"),
        vec!["1", "3"]
    );
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE b = 'ALICE'"), vec!["3"]);
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE bin = 'ALICE'"), vec!["3"]);
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE name = 'EMILE'"),
        vec!["4"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE name = 'bob' ORDER BY id"),
        vec!["2", "6"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE name IN ('BOB', 'zoe') ORDER BY id"
        ),
        vec!["2", "5", "6"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE name BETWEEN 'B' AND 'C' ORDER BY id"
        ),
        vec!["2", "6"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE name LIKE 'É%'"),
        vec!["4"]
    );
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE b LIKE 'a%'"), vec!["1"]);
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t WHERE name COLLATE utf8mb4_bin = 'alice'"
        ),
        vec!["1"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT CASE name WHEN 'BOB' THEN 'y' ELSE 'n' END FROM t WHERE id = 2"
        ),
        vec!["y"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT STRCMP(name, 'ALICE'), NULLIF(name, 'ALICE'), FIELD('ALICE', 'x', name), \
                   LOCATE('LI', name), INSTR(name, 'CE') FROM t WHERE id = 1"
        ),
        vec!["0|NULL|2|2|4"]
    );
    // A column beats a literal; of two columns of one character set, the
    // `_bin` one wins; two explicit collations cannot be mixed (1267).
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t WHERE name = b"),
        vec!["7"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE name = UPPER(b)"),
        vec!["3"]
    );
    assert_eq!(
        err(
            &mut s,
            "SELECT 'a' COLLATE utf8mb4_general_ci = 'A' COLLATE utf8mb4_bin"
        ),
        1267
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE name = b COLLATE utf8mb4_general_ci"
        ),
        vec!["7"]
    );
}

#[test]
fn index_probes_and_ranges_use_weights() {
    let db = TestDb::open("sql-coll-index");
    let mut s = setup(&db);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    // The probe goes through index kn (EXPLAIN) and finds both spellings.
    let plan = t(&mut s, "EXPLAIN SELECT id FROM t WHERE name = 'ALICE'");
    assert!(plan[0].contains("kn"), "{plan:?}");
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t FORCE INDEX (kn) WHERE name = 'alice' ORDER BY id"
        ),
        vec!["1", "3"]
    );
    assert_eq!(
        t(&mut s, "SELECT name FROM t FORCE INDEX (kn) WHERE name >= 'b' AND name < 'E' ORDER BY name, id"),
        vec!["Bob", "bob "]
    );
    // Index order is collation order.
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t FORCE INDEX (kn) WHERE name > '' ORDER BY name, id"
        ),
        vec!["1", "3", "2", "6", "4", "5", "7"]
    );
}

#[test]
fn unique_keys_and_primary_keys_follow_the_collation() {
    let db = TestDb::open("sql-coll-unique");
    let mut s = db.session(1, "root", None);
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(10), UNIQUE KEY un (name))",
        "INSERT INTO u VALUES (1, 'abc')",
        "CREATE TABLE p (k VARCHAR(10) PRIMARY KEY, v INT)",
        "INSERT INTO p VALUES ('Key', 1)",
        "CREATE TABLE ub (id INT PRIMARY KEY, name VARCHAR(10) COLLATE utf8mb4_bin UNIQUE)",
        "INSERT INTO ub VALUES (1, 'abc'), (2, 'ABC')",
    ] {
        q(&mut s, st);
    }
    assert_eq!(err(&mut s, "INSERT INTO u VALUES (2, 'ABC')"), 1062);
    assert_eq!(err(&mut s, "INSERT INTO u VALUES (2, 'abc  ')"), 1062);
    assert_eq!(err(&mut s, "INSERT INTO p VALUES ('KEY', 2)"), 1062);
    // The stored value keeps its spelling; a ci primary key is found by
    // any spelling, through point gets and secondary lookups.
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(&mut s, "SELECT k, v FROM p WHERE k = 'kEy'"),
        vec!["Key|1"]
    );
    q(&mut s, "CREATE INDEX kv ON p (v)");
    assert_eq!(
        t(&mut s, "SELECT k FROM p FORCE INDEX (kv) WHERE v = 1"),
        vec!["Key"]
    );
    q(&mut s, "UPDATE p SET v = 5 WHERE k = 'KEY'");
    assert_eq!(t(&mut s, "SELECT k, v FROM p"), vec!["Key|5"]);
    assert_eq!(
        t(&mut s, "SELECT name FROM u WHERE name = 'ABC'"),
        vec!["abc"]
    );
    q(
        &mut s,
        "INSERT INTO u VALUES (3, 'Abd') ON DUPLICATE KEY UPDATE id = id",
    );
    q(&mut s, "REPLACE INTO u VALUES (4, 'ABD')");
    assert_eq!(
        t(&mut s, "SELECT id, name FROM u ORDER BY id"),
        vec!["1|abc", "4|ABD"]
    );
    assert_eq!(t(&mut s, "CHECK TABLE u"), vec!["db.u|check|status|OK"]);
    assert_eq!(t(&mut s, "CHECK TABLE p"), vec!["db.p|check|status|OK"]);
    q(&mut s, "DELETE FROM p WHERE k = 'key'");
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM p"), vec!["0"]);
}

#[test]
fn order_group_distinct_and_aggregates_follow_the_collation() {
    let db = TestDb::open("sql-coll-group");
    let mut s = setup(&db);
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE id < 8 ORDER BY name, id"),
        vec!["1", "3", "2", "6", "4", "5", "7"]
    );
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE id < 8 ORDER BY b, id"),
        vec!["3", "2", "5", "7", "1", "6", "4"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE id < 8 GROUP BY name ORDER BY name"
        ),
        vec!["2", "2", "1", "1", "1"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(DISTINCT name), COUNT(DISTINCT b) FROM t"
        ),
        vec!["5|7"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT DISTINCT name FROM t) d"
        ),
        vec!["6"]
    );
    assert_eq!(
        t(&mut s, "SELECT MIN(name), MAX(name), MIN(b), MAX(b) FROM t"),
        vec!["alice|_x|ALICE|émile"]
    );
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM (SELECT name FROM t WHERE id < 3 UNION SELECT 'ALICE' UNION SELECT 'bob') u"),
        vec!["2"]
    );
}

#[test]
fn declared_collations_and_their_errors() {
    let db = TestDb::open("sql-coll-ddl");
    let mut s = db.session(1, "root", None);
    q(&mut s, "CREATE DATABASE db");
    q(&mut s, "USE db");
    q(
        &mut s,
        "CREATE TABLE c (a VARCHAR(5), b VARCHAR(5) CHARACTER SET latin1, c TEXT COLLATE utf8mb4_bin) \
         DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
    );
    let show = texts(q(&mut s, "SHOW CREATE TABLE c"));
    assert!(
        show[0].contains("CHARACTER SET latin1 COLLATE latin1_swedish_ci"),
        "{show:?}"
    );
    assert!(show[0].contains("COLLATE utf8mb4_bin"), "{show:?}");
    assert!(
        show[0].contains("DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"),
        "{show:?}"
    );
    assert_eq!(
        texts(q(&mut s, "SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'c' ORDER BY ORDINAL_POSITION")),
        vec!["a|utf8mb4_general_ci", "b|latin1_swedish_ci", "c|utf8mb4_bin"]
    );
    assert_eq!(
        err(&mut s, "CREATE TABLE e1 (a VARCHAR(5) COLLATE nope_ci)"),
        1273
    );
    assert_eq!(
        err(&mut s, "CREATE TABLE e2 (a VARCHAR(5) CHARACTER SET nope)"),
        1115
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE e3 (a VARCHAR(5) CHARACTER SET latin1 COLLATE utf8mb4_bin)"
        ),
        1253
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE e4 (a VARCHAR(5) COLLATE utf8mb4_0900_as_cs)"
        ),
        1235
    );
    assert_eq!(err(&mut s, "SELECT 'a' COLLATE nope"), 1273);
}

#[test]
fn alter_table_changes_collations_by_rebuilding_keys() {
    let db = TestDb::open("sql-coll-alter");
    let mut s = db.session(1, "root", None);
    for st in [
        "CREATE DATABASE db",
        "USE db",
        "CREATE TABLE a (id INT PRIMARY KEY, name VARCHAR(10) COLLATE utf8mb4_bin, UNIQUE KEY un (name))",
        "INSERT INTO a VALUES (1, 'abc'), (2, 'ABD')",
    ] {
        q(&mut s, st);
    }
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(&mut s, "SELECT id FROM a WHERE name = 'ABC'"),
        Vec::<String>::new()
    );
    q(
        &mut s,
        "ALTER TABLE a MODIFY name VARCHAR(10) COLLATE utf8mb4_general_ci",
    );
    assert_eq!(t(&mut s, "SELECT id FROM a WHERE name = 'ABC'"), vec!["1"]);
    assert_eq!(err(&mut s, "INSERT INTO a VALUES (3, 'ABC')"), 1062);
    // A column added without a collation takes the table's.
    q(&mut s, "ALTER TABLE a ADD COLUMN extra VARCHAR(5)");
    q(&mut s, "UPDATE a SET extra = 'x' WHERE id = 1");
    assert_eq!(t(&mut s, "SELECT id FROM a WHERE extra = 'X'"), vec!["1"]);
    assert_eq!(t(&mut s, "CHECK TABLE a"), vec!["db.a|check|status|OK"]);
}

/// CREATE/ALTER DATABASE CHARACTER SET / COLLATE: the database's default
/// collation is stored, reported, given to tables created in it without their
/// own, and survives a restart.
#[test]
fn database_default_collation() {
    let dir = testkit::TempDir::new("sql-coll-db");
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        q(&mut s, "CREATE DATABASE l CHARACTER SET latin1");
        q(&mut s, "CREATE DATABASE b DEFAULT COLLATE = utf8mb4_bin");
        q(&mut s, "CREATE DATABASE d");
        assert_eq!(
            t(&mut s, "SHOW CREATE DATABASE l"),
            vec!["l|CREATE DATABASE `l` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE latin1_swedish_ci */"]
        );
        assert_eq!(
            t(&mut s, "SHOW CREATE DATABASE d"),
            vec!["d|CREATE DATABASE `d` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"]
        );
        assert_eq!(
            t(
                &mut s,
                "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
                 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('l', 'b', 'd') ORDER BY 1"
            ),
            vec![
                "b|utf8mb4|utf8mb4_bin",
                "d|utf8mb4|utf8mb4_general_ci",
                "l|latin1|latin1_swedish_ci"
            ]
        );
        q(&mut s, "USE b");
        assert_eq!(
            t(
                &mut s,
                "SELECT @@character_set_database, @@collation_database"
            ),
            vec!["utf8mb4|utf8mb4_bin"]
        );
        // A table without its own collation takes the database's: bytewise here.
        q(&mut s, "CREATE TABLE u (a VARCHAR(5) UNIQUE)");
        q(&mut s, "INSERT INTO u VALUES ('a'), ('A')");
        // Its own DEFAULT CHARSET wins over the database's.
        q(
            &mut s,
            "CREATE TABLE w (a VARCHAR(5) UNIQUE) DEFAULT CHARSET = utf8mb4",
        );
        q(&mut s, "INSERT INTO w VALUES ('a')");
        assert_eq!(err(&mut s, "INSERT INTO w VALUES ('A')"), 1062);
        // ALTER DATABASE changes the default for tables created later only.
        q(&mut s, "ALTER DATABASE b CHARACTER SET utf8mb4");
        q(&mut s, "CREATE TABLE v (a VARCHAR(5) UNIQUE)");
        q(&mut s, "INSERT INTO v VALUES ('a')");
        assert_eq!(err(&mut s, "INSERT INTO v VALUES ('A')"), 1062);
        q(&mut s, "INSERT INTO u VALUES ('B'), ('b')");
        // Without a name: the current database.
        q(&mut s, "ALTER DATABASE DEFAULT COLLATE latin1_bin");
        assert_eq!(t(&mut s, "SELECT @@collation_database"), vec!["latin1_bin"]);
        q(&mut s, "USE l");
        q(&mut s, "CREATE TABLE t (a VARCHAR(5))");
        let ddl = t(&mut s, "SHOW CREATE TABLE t").join("\n");
        assert!(ddl.contains("CHARSET=latin1"), "{ddl}");
        // Errors: none is accepted and ignored.
        assert_eq!(
            err(
                &mut s,
                "CREATE DATABASE x CHARACTER SET latin1 COLLATE utf8mb4_bin"
            ),
            1253
        );
        assert_eq!(err(&mut s, "CREATE DATABASE x CHARACTER SET nosuch"), 1115);
        assert_eq!(err(&mut s, "CREATE DATABASE x COLLATE nosuch"), 1273);
        assert_eq!(
            err(&mut s, "ALTER DATABASE nosuch CHARACTER SET latin1"),
            1049
        );
        assert_eq!(err(&mut s, "ALTER DATABASE l COMMENT = 'x'"), 1235);
        assert_eq!(t(&mut s, "SHOW DATABASES LIKE 'x'"), Vec::<String>::new());
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", None);
    assert_eq!(
        t(&mut s, "SHOW CREATE DATABASE b"),
        vec!["b|CREATE DATABASE `b` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE latin1_bin */"]
    );
    assert_eq!(
        t(&mut s, "SHOW CREATE DATABASE l"),
        vec!["l|CREATE DATABASE `l` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE latin1_swedish_ci */"]
    );
}
