//! ALTER TABLE column changes, RENAME TABLE and CREATE TABLE LIKE / AS
//! SELECT through Sessions: each form with its data preserved, SHOW CREATE
//! TABLE after each change, indexes usable after a rebuild, instant ADD
//! COLUMN (old rows read the value at ALTER time, also after later default
//! changes), MySQL's (MariaDB's) errors, foreign keys following renames,
//! restarts, and writers running against a rebuild.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::Session;

mod common;
use common::{err, has_entries, q, texts, TestDb};

fn t(s: &mut Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

fn run(s: &mut Session, stmts: &[&str]) {
    for st in stmts {
        q(s, st);
    }
}

/// (code, message) of a failing statement.
fn fails(s: &mut Session, sql: &str) -> (u16, String) {
    let mut c = Collect::default();
    let e = s.query(sql, &mut c).expect_err(sql);
    (e.code, e.msg)
}

fn show(s: &mut Session, table: &str) -> String {
    t(s, &format!("SHOW CREATE TABLE {table}"))[0]
        .split_once('|')
        .unwrap()
        .1
        .to_string()
}

fn affected(s: &mut Session, sql: &str) -> u64 {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .affected_rows
}

fn setup(db: &TestDb) -> Session {
    let mut s = db.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), KEY ka (a))",
            "INSERT INTO t VALUES (1, 10, 'one'), (2, 20, 'two'), (3, NULL, 'three')",
        ],
    );
    s
}

#[test]
fn add_column_instant_and_positioned() {
    let db = TestDb::open("sql-alter-add");
    let mut s = setup(&db);
    // At the end: instant, old rows read the default.
    assert_eq!(
        affected(&mut s, "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7"),
        0
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|10|one|7", "2|20|two|7", "3|NULL|three|7"]
    );
    // Django's pattern: add with a default, then drop the default. Old rows keep 7.
    q(&mut s, "ALTER TABLE t ALTER COLUMN c DROP DEFAULT");
    q(&mut s, "ALTER TABLE t ALTER COLUMN c SET DEFAULT 9");
    q(&mut s, "INSERT INTO t (id, a, b) VALUES (4, 40, 'four')");
    assert_eq!(
        t(&mut s, "SELECT id, c FROM t ORDER BY id"),
        ["1|7", "2|7", "3|7", "4|9"]
    );
    // NOT NULL without a default: the type's implicit default; nullable: NULL.
    q(
        &mut s,
        "ALTER TABLE t ADD d VARCHAR(5) NOT NULL, ADD e DATE",
    );
    assert_eq!(
        t(&mut s, "SELECT concat('[', d, ']'), e FROM t WHERE id = 1"),
        ["[]|NULL"]
    );
    // An update rewrites a short row in full.
    q(&mut s, "UPDATE t SET d = 'x' WHERE id = 2");
    assert_eq!(t(&mut s, "SELECT id, c, d FROM t WHERE id = 2"), ["2|7|x"]);
    // FIRST / AFTER rebuild the table; several at once.
    assert_eq!(
        affected(
            &mut s,
            "ALTER TABLE t ADD f INT DEFAULT 5 FIRST, ADD COLUMN g CHAR(2) DEFAULT 'g' AFTER a"
        ),
        4
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t WHERE id = 2"),
        ["5|2|20|g|two|7|x|NULL"]
    );
    assert_eq!(
        show(&mut s, "t"),
        "CREATE TABLE `t` (\n  `f` int DEFAULT '5',\n  `id` int NOT NULL,\n  `a` int DEFAULT NULL,\n  `g` char(2) DEFAULT 'g',\n  `b` varchar(20) DEFAULT NULL,\n  `c` int NOT NULL DEFAULT '9',\n  `d` varchar(5) NOT NULL,\n  `e` date DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `ka` (`a`)\n) ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    // The index still answers after the rebuild.
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE a = 20"), ["2"]);
    assert_eq!(
        t(&mut s, "CHECK TABLE t")[0].rsplit('|').next().unwrap(),
        "OK"
    );
    assert_eq!(fails(&mut s, "ALTER TABLE t ADD a INT").0, 1060);
    assert_eq!(fails(&mut s, "ALTER TABLE t ADD z INT AFTER nope").0, 1054);
}

#[test]
fn instant_columns_survive_a_restart() {
    let dir = testkit::TempDir::new("sql-alter-restart");
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        run(
            &mut s,
            &[
                "CREATE DATABASE d",
                "USE d",
                "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
                "INSERT INTO t VALUES (1, 1), (2, 2)",
                "ALTER TABLE t ADD c VARCHAR(10) NOT NULL DEFAULT 'old'",
                "ALTER TABLE t ALTER c SET DEFAULT 'new'",
                "INSERT INTO t (id, a) VALUES (3, 3)",
                "ALTER TABLE t RENAME COLUMN a TO aa",
            ],
        );
        inst.shutdown().unwrap();
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(
        t(&mut s, "SELECT id, aa, c FROM t ORDER BY id"),
        ["1|1|old", "2|2|old", "3|3|new"]
    );
}

#[test]
fn drop_modify_change_rename_column() {
    let db = TestDb::open("sql-alter-change");
    let mut s = setup(&db);
    // DROP COLUMN takes the column out of its index (the index goes).
    assert_eq!(affected(&mut s, "ALTER TABLE t DROP COLUMN a"), 3);
    assert_eq!(
        show(&mut s, "t"),
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `b` varchar(20) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|one", "2|two", "3|three"]
    );
    assert_eq!(fails(&mut s, "ALTER TABLE t DROP COLUMN a").0, 1091);
    q(&mut s, "ALTER TABLE t DROP COLUMN IF EXISTS a");
    // RENAME COLUMN and CHANGE with the same type: metadata only.
    assert_eq!(affected(&mut s, "ALTER TABLE t RENAME COLUMN b TO name"), 0);
    assert_eq!(
        affected(&mut s, "ALTER TABLE t CHANGE name title VARCHAR(30)"),
        0
    );
    assert_eq!(t(&mut s, "SELECT title FROM t WHERE id = 3"), ["three"]);
    // MODIFY to a narrower type: strict conversion errors, table unchanged.
    assert_eq!(
        fails(&mut s, "ALTER TABLE t MODIFY title VARCHAR(3)"),
        (1265, "Data truncated for column 'title' at row 3".into())
    );
    // MySQL's 1366 for a string that is no number (MariaDB says 1292).
    assert_eq!(fails(&mut s, "ALTER TABLE t MODIFY title INT").0, 1366);
    q(&mut s, "ALTER TABLE t ADD n INT");
    q(&mut s, "UPDATE t SET n = 300 WHERE id = 2");
    assert_eq!(
        fails(&mut s, "ALTER TABLE t MODIFY n TINYINT"),
        (1264, "Out of range value for column 'n' at row 2".into())
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t MODIFY n INT NOT NULL"),
        (1265, "Data truncated for column 'n' at row 1".into())
    );
    assert_eq!(
        t(&mut s, "SELECT id, title, n FROM t ORDER BY id"),
        ["1|one|NULL", "2|two|300", "3|three|NULL"]
    );
    // A real conversion: INT to VARCHAR and back, with an index on it.
    q(&mut s, "UPDATE t SET n = id * 100");
    assert_eq!(
        affected(
            &mut s,
            "ALTER TABLE t MODIFY n VARCHAR(10) NOT NULL, ADD INDEX kn (n)"
        ),
        3
    );
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE n = '200'"), ["2"]);
    q(
        &mut s,
        "ALTER TABLE t CHANGE COLUMN n num BIGINT UNSIGNED FIRST",
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM t ORDER BY num DESC"),
        ["300|3|three", "200|2|two", "100|1|one"]
    );
    assert_eq!(
        show(&mut s, "t"),
        "CREATE TABLE `t` (\n  `num` bigint unsigned DEFAULT NULL,\n  `id` int NOT NULL,\n  `title` varchar(30) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `kn` (`num`)\n) ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(t(&mut s, "SELECT id FROM t WHERE num = 300"), ["3"]);
    assert_eq!(fails(&mut s, "ALTER TABLE t MODIFY nope INT").0, 1054);
    assert_eq!(fails(&mut s, "ALTER TABLE t CHANGE id title INT").0, 1060);
    assert_eq!(
        fails(&mut s, "ALTER TABLE t DROP num, DROP id, DROP title").0,
        1090
    );
    assert_eq!(
        t(&mut s, "CHECK TABLE t")[0].rsplit('|').next().unwrap(),
        "OK"
    );
}

#[test]
fn unsupported_forms_are_refused() {
    let db = TestDb::open("sql-alter-refused");
    let mut s = setup(&db);
    assert_eq!(
        err(&mut s, "ALTER TABLE t ALTER COLUMN a SET NOT NULL"),
        1235
    );
    q(
        &mut s,
        "ALTER TABLE t ADD COLUMN x INT, ALGORITHM=INPLACE, LOCK=DEFAULT",
    );
    assert_eq!(
        fails(
            &mut s,
            "ALTER TABLE t MODIFY x BIGINT, ALGORITHM=COPY, LOCK=NONE"
        )
        .0,
        1846
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t ADD y INT FIRST, ALGORITHM=INSTANT").0,
        1846
    );
    q(&mut s, "ALTER TABLE t ADD y INT, ALGORITHM=INSTANT");
}

#[test]
fn writers_during_rebuilds_lose_nothing() {
    let db = TestDb::open("sql-alter-concurrent");
    let mut s = setup(&db);
    let seed = testkit::seed("writers_during_rebuilds_lose_nothing");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..2u64 {
        let inst = db.inst.clone();
        let stop = stop.clone();
        writers.push(std::thread::spawn(move || {
            let mut s = inst.session(10 + w, "root", Some("d".into()));
            let mut n = 0u64;
            let mut rng = testkit::Rng::new(seed ^ w);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || n < 50 {
                let id = 1000 + w * 1_000_000 + n;
                if rng.below(4) == 0 {
                    q(&mut s, "BEGIN");
                    q(
                        &mut s,
                        &format!("INSERT INTO t (id, a, b) VALUES ({id}, {n}, 'w')"),
                    );
                    q(&mut s, &format!("UPDATE t SET a = a + 1 WHERE id = {id}"));
                    q(&mut s, "COMMIT");
                } else {
                    q(
                        &mut s,
                        &format!("INSERT INTO t (id, a, b) VALUES ({id}, {}, 'w')", n + 1),
                    );
                }
                n += 1;
            }
            n
        }));
    }
    for sql in [
        "ALTER TABLE t ADD c INT DEFAULT 1 FIRST",
        "ALTER TABLE t MODIFY a BIGINT",
        "ALTER TABLE t ADD z INT NOT NULL DEFAULT 3",
        "ALTER TABLE t DROP COLUMN c, ADD INDEX kb (b)",
        "ALTER TABLE t MODIFY b VARCHAR(30), RENAME COLUMN z TO zz",
        "ALTER TABLE t MODIFY b VARCHAR(25)",
    ] {
        q(&mut s, sql);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let total: u64 = writers.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*), SUM(a = (id % 1000000) - 1000 + 1) FROM t WHERE id >= 1000"
        ),
        [format!("{total}|{total}")]
    );
    assert_eq!(
        t(&mut s, "CHECK TABLE t")[0].rsplit('|').next().unwrap(),
        "OK"
    );
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t WHERE b = 'w'"),
        [total.to_string()]
    );
}

/// A crash after a rebuild copied rows but before it committed: the copy's
/// `P` record makes the next open drop the copy, and the table is the old
/// one, rows and all.
#[test]
fn a_rebuild_cut_short_leaves_the_old_table() {
    let dir = testkit::TempDir::new("sql-alter-crash");
    let o = sql::InstanceOptions {
        sync_on_commit: true,
        ..Default::default()
    };
    let new_ids;
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        run(
            &mut s,
            &[
                "CREATE DATABASE d",
                "USE d",
                "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ka (a))",
                "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
            ],
        );
        let old = inst.catalog.state().table("d", "t").unwrap().clone();
        let mut def = old.def.clone();
        def.columns[1].name = "b".into();
        inst.catalog.reserve_ids(&mut def).unwrap();
        let copied =
            rel::rebuild::copy_rows::<rel::Error>(inst.catalog.db(), &old, &def, |r, _| {
                Ok(r.values.clone())
            })
            .unwrap();
        assert_eq!(copied.rows, 3);
        new_ids = (def.pk.id, def.secondary[0].id);
        // No commit: the instance goes away as in a crash.
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(
        t(&mut s, "SELECT id, a FROM t WHERE a >= 20 ORDER BY id"),
        ["2|20", "3|30"]
    );
    for id in [new_ids.0, new_ids.1] {
        assert!(
            !has_entries(&inst, id, id + 1),
            "entries of the abandoned copy under index {id}"
        );
    }
    // And a real ALTER after it works.
    q(&mut s, "ALTER TABLE t MODIFY a BIGINT NOT NULL");
    assert_eq!(t(&mut s, "SELECT SUM(a) FROM t WHERE a > 0"), ["60"]);
}

#[test]
fn rename_table_moves_and_foreign_keys_follow() {
    let db = TestDb::open("sql-alter-rename");
    let mut s = db.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "CREATE DATABASE e",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY)",
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk1 FOREIGN KEY (pid) REFERENCES p(id))",
            "CREATE TABLE x (id INT PRIMARY KEY)",
            "INSERT INTO p VALUES (1)",
            "INSERT INTO c VALUES (1, 1)",
        ],
    );
    // A swap through a temporary name, in one statement.
    q(&mut s, "RENAME TABLE p TO tmp, x TO p, tmp TO x");
    assert!(
        show(&mut s, "c").contains("REFERENCES `x` (`id`)"),
        "{}",
        show(&mut s, "c")
    );
    assert_eq!(fails(&mut s, "INSERT INTO c VALUES (2, 2)").0, 1452);
    assert_eq!(fails(&mut s, "DELETE FROM x").0, 1451);
    // Across databases; the key keeps naming its parent where it is.
    q(&mut s, "RENAME TABLE c TO e.c2, x TO e.px");
    assert_eq!(t(&mut s, "SELECT * FROM e.c2"), ["1|1"]);
    assert!(
        show(&mut s, "e.c2").contains("REFERENCES `px` (`id`)"),
        "{}",
        show(&mut s, "e.c2")
    );
    assert_eq!(fails(&mut s, "DELETE FROM e.px").0, 1451);
    assert_eq!(err(&mut s, "RENAME TABLE nosuch TO y"), 1146);
    assert_eq!(err(&mut s, "RENAME TABLE p TO e.c2"), 1050);
    assert_eq!(err(&mut s, "RENAME TABLE p TO nodb.p"), 1025);
    // Nothing of a failed list was applied.
    assert_eq!(err(&mut s, "RENAME TABLE p TO q, nosuch TO z"), 1146);
    assert_eq!(t(&mut s, "SHOW TABLES"), ["p"]);
    // ALTER TABLE ... RENAME TO, with other changes.
    q(
        &mut s,
        "ALTER TABLE e.px RENAME TO e.parent, ADD COLUMN v INT DEFAULT 4",
    );
    assert!(show(&mut s, "e.c2").contains("REFERENCES `parent` (`id`)"));
    assert_eq!(t(&mut s, "SELECT * FROM e.parent"), ["1|4"]);
    // Renaming a referenced column: the child's key follows.
    q(&mut s, "ALTER TABLE e.parent RENAME COLUMN id TO pk");
    assert!(show(&mut s, "e.c2").contains("REFERENCES `parent` (`pk`)"));
    assert_eq!(fails(&mut s, "INSERT INTO e.c2 VALUES (3, 3)").0, 1452);
    q(&mut s, "INSERT INTO e.parent VALUES (3, 0)");
    q(&mut s, "INSERT INTO e.c2 VALUES (3, 3)");
    // RENAME without TO or AS (MariaDB and MySQL take it), alone, quoted, with a
    // database, after other changes; RENAME a TO b stays a column rename.
    q(&mut s, "ALTER TABLE e.parent RENAME e.par2");
    q(&mut s, "USE e");
    q(&mut s, "ALTER TABLE par2 ADD COLUMN w INT, RENAME `par 3`");
    q(&mut s, "ALTER TABLE `par 3` RENAME AS par4");
    q(&mut s, "ALTER TABLE par4 RENAME w TO w2");
    assert_eq!(
        t(&mut s, "SELECT pk, v, w2 FROM par4 ORDER BY pk"),
        ["1|4|NULL", "3|0|NULL"]
    );
    assert!(show(&mut s, "c2").contains("REFERENCES `par4` (`pk`)"));
}

#[test]
fn create_table_like_and_as_select() {
    let db = TestDb::open("sql-alter-ctas");
    let mut s = setup(&db);
    run(
        &mut s,
        &[
            "CREATE TABLE p (id INT PRIMARY KEY)",
            "CREATE TABLE c (id INT PRIMARY KEY AUTO_INCREMENT, pid INT NOT NULL DEFAULT 0, u VARCHAR(5), UNIQUE KEY ku (u), FOREIGN KEY (pid) REFERENCES p(id))",
            "CREATE TABLE c2 LIKE c",
        ],
    );
    // Columns and keys, not the foreign key.
    assert_eq!(
        show(&mut s, "c2"),
        "CREATE TABLE `c2` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  `pid` int NOT NULL DEFAULT '0',\n  `u` varchar(5) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `ku` (`u`),\n  KEY `pid` (`pid`)\n) ENGINE=STRATA DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    q(&mut s, "INSERT INTO c2 (pid, u) VALUES (9, 'a')");
    assert_eq!(err(&mut s, "INSERT INTO c2 (pid, u) VALUES (9, 'a')"), 1062);
    assert_eq!(err(&mut s, "CREATE TABLE c2 LIKE c"), 1050);
    assert_eq!(err(&mut s, "CREATE TABLE c3 LIKE nosuch"), 1146);
    // AS SELECT: types from the select, rows copied.
    assert_eq!(
        affected(
            &mut s,
            "CREATE TABLE s1 AS SELECT id, b, a * 2 AS a2, 'x' AS lit FROM t WHERE id < 3"
        ),
        2
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM s1 ORDER BY id"),
        ["1|one|20|x", "2|two|40|x"]
    );
    assert!(
        show(&mut s, "s1").contains("  `b` varchar(20) DEFAULT NULL,\n"),
        "{}",
        show(&mut s, "s1")
    );
    // Columns named in the statement come first and keep their definition.
    q(&mut s, "CREATE TABLE s2 (k INT PRIMARY KEY AUTO_INCREMENT, b VARCHAR(50) NOT NULL) SELECT b FROM t");
    assert_eq!(
        t(&mut s, "SELECT * FROM s2 ORDER BY k"),
        ["1|one", "2|two", "3|three"]
    );
    assert!(show(&mut s, "s2").contains("`b` varchar(50) NOT NULL"));
    // A row the new table refuses: no table is left behind.
    assert_eq!(
        err(&mut s, "CREATE TABLE s3 (a INT NOT NULL) SELECT a FROM t"),
        1048
    );
    assert_eq!(err(&mut s, "SELECT * FROM s3"), 1146);
    assert_eq!(err(&mut s, "CREATE TABLE s1 SELECT 1 AS z"), 1050);
}

/// Dropping a key and adding one of the same name in one ALTER (review s33
/// C1) replaces it, as in MariaDB: the old key goes, the new one is kept,
/// enforced and shown, also for an index a foreign key needs and for the
/// primary key; a restart keeps the new keys. A foreign key cannot be
/// replaced so (1005, as in MariaDB).
#[test]
fn drop_and_add_of_the_same_name_replace_the_key() {
    let dir = testkit::TempDir::new("sql-alter-drop-add-same");
    let inst = common::open_at(&dir);
    let mut s = inst.session(1, "root", None);
    run(&mut s, &["CREATE DATABASE d", "USE d"]);
    run(
        &mut s,
        &[
            "CREATE TABLE u (a INT PRIMARY KEY, b INT, c INT, UNIQUE KEY u (b), KEY k (c))",
            "INSERT INTO u VALUES (1, 1, 1), (2, 2, 1)",
            "ALTER TABLE u DROP INDEX u, ADD UNIQUE u (b, c)",
            "ALTER TABLE u DROP INDEX k, ADD INDEX k (c, b)",
        ],
    );
    // An AUTO_INCREMENT column must keep leading a key (1075), on both paths
    // that drop an index.
    run(
        &mut s,
        &["CREATE TABLE ai (a INT PRIMARY KEY, n INT AUTO_INCREMENT, KEY kn (n))"],
    );
    assert_eq!(fails(&mut s, "ALTER TABLE ai DROP INDEX kn").0, 1075);
    assert_eq!(fails(&mut s, "DROP INDEX kn ON ai").0, 1075);
    assert_eq!(
        fails(&mut s, "ALTER TABLE ai DROP INDEX kn, ADD INDEX kn2 (a, n)").0,
        1075
    );
    run(
        &mut s,
        &["ALTER TABLE ai DROP INDEX kn, ADD INDEX kn (n, a)"],
    );
    let sc = show(&mut s, "u");
    assert!(sc.contains("UNIQUE KEY `u` (`b`,`c`)"), "{sc}");
    assert!(sc.contains("KEY `k` (`c`,`b`)"), "{sc}");
    assert_eq!(fails(&mut s, "INSERT INTO u VALUES (3, 1, 1)").0, 1062);
    q(&mut s, "INSERT INTO u VALUES (3, 1, 2)");
    assert_eq!(
        t(&mut s, "SELECT a FROM u WHERE b = 1 ORDER BY a"),
        ["1", "3"]
    );
    assert_eq!(
        t(&mut s, "SELECT a FROM u WHERE c = 1 ORDER BY a"),
        ["1", "2"]
    );
    check_table(&mut s, "u");
    // An index a foreign key needs, replaced by one that still serves it.
    run(
        &mut s,
        &[
            "CREATE TABLE p (id INT PRIMARY KEY)",
            "INSERT INTO p VALUES (1), (2)",
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, x INT, KEY kp (pid), CONSTRAINT f FOREIGN KEY (pid) REFERENCES p (id))",
            "INSERT INTO c VALUES (1, 1, 5)",
            "ALTER TABLE c DROP INDEX kp, ADD INDEX kp (pid, x)",
        ],
    );
    let sc = show(&mut s, "c");
    assert!(sc.contains("KEY `kp` (`pid`,`x`)"), "{sc}");
    // One that does not serve it is refused (1553), leaving the old one.
    assert_eq!(
        fails(&mut s, "ALTER TABLE c DROP INDEX kp, ADD INDEX kp (x)").0,
        1553
    );
    assert_eq!(show(&mut s, "c"), sc);
    // A foreign key dropped and added under the same name in one ALTER is
    // refused as MariaDB 10.11 refuses it (1005, errno 121), unchanged.
    let (code, msg) = fails(
        &mut s,
        "ALTER TABLE c DROP FOREIGN KEY f, ADD CONSTRAINT f FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE",
    );
    assert_eq!(code, 1005, "{msg}");
    assert!(msg.contains("errno: 121"), "{msg}");
    assert_eq!(show(&mut s, "c"), sc);
    // The primary key.
    q(
        &mut s,
        "ALTER TABLE u DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)",
    );
    let sc = show(&mut s, "u");
    assert!(sc.contains("PRIMARY KEY (`a`,`b`)"), "{sc}");
    q(&mut s, "INSERT INTO u VALUES (1, 5, 5)");
    assert_eq!(fails(&mut s, "INSERT INTO u VALUES (1, 5, 6)").0, 1062);
    check_table(&mut s, "u");
    drop(s);
    inst.shutdown().unwrap();
    drop(inst);
    let inst = common::open_at(&dir);
    let mut s = inst.session(2, "root", Some("d".into()));
    let sc = show(&mut s, "u");
    assert!(sc.contains("UNIQUE KEY `u` (`b`,`c`)"), "{sc}");
    assert_eq!(fails(&mut s, "INSERT INTO u VALUES (9, 1, 1)").0, 1062);
}

fn check_table(s: &mut Session, table: &str) {
    let r = t(s, &format!("CHECK TABLE {table}"));
    assert!(r.last().is_some_and(|l| l.ends_with("|OK")), "{r:?}");
}

/// Review s33 H1: CREATE INDEX and an online ALTER ADD INDEX that waited
/// for the table's lock while another DDL changed its columns use the
/// columns as they are once they hold it (here a column before the indexed
/// one went): the index is on the column named, never on a stale position.
#[test]
fn index_ddl_waiting_for_the_table_uses_its_new_columns() {
    let dir = testkit::TempDir::new("sql-alter-stale-columns");
    let inst = common::open_at(&dir);
    let mut s = inst.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT)",
        ],
    );
    for stmt in ["CREATE INDEX ic ON t (c)", "ALTER TABLE t ADD INDEX ic (c)"] {
        // Another DDL holds the table.
        let held = inst
            .bulk_locks
            .acquire(
                vec![("d".into(), "t".into())],
                999,
                std::time::Duration::from_secs(30),
                &|| None,
            )
            .unwrap();
        let inst2 = inst.clone();
        let waiter = std::thread::spawn(move || {
            let mut s = inst2.session(2, "root", Some("d".into()));
            let mut c = Collect::default();
            s.query(stmt, &mut c).map(|_| ()).map_err(|e| e.code)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        // ... and drops column a meanwhile (the table is empty).
        let cur = inst.catalog.state().table("d", "t").cloned().unwrap();
        let mut def = cur.def.clone();
        let a = def.column("a").unwrap();
        def.columns.remove(a);
        def.derive();
        inst.catalog.replace_table(&cur, def, false, false).unwrap();
        drop(held);
        assert_eq!(waiter.join().unwrap(), Ok(()), "{stmt}");
        let sc = show(&mut s, "t");
        assert!(sc.contains("KEY `ic` (`c`)"), "{stmt}: {sc}");
        q(&mut s, "INSERT INTO t VALUES (1, 2, 3)");
        assert_eq!(t(&mut s, "SELECT id FROM t WHERE c = 3"), ["1"]);
        check_table(&mut s, "t");
        // Again from (id, a, b, c).
        run(
            &mut s,
            &[
                "DROP TABLE t",
                "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT)",
            ],
        );
    }
}
