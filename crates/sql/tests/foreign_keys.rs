//! FOREIGN KEY constraints with InnoDB's semantics, through Sessions: the
//! errors and messages MariaDB gives (1452, 1451, 1005 errno 150/121, 1553,
//! 1701, 1091), CASCADE / SET NULL / RESTRICT on delete and update, nested
//! and self-referencing cascades and their depth limit, foreign_key_checks,
//! ALTER TABLE ADD/DROP FOREIGN KEY, SHOW CREATE TABLE, keys surviving a
//! restart, the locks between a child write and a parent delete, and a
//! seeded concurrent run that must leave no orphan.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session};
use std::sync::Arc;

mod common;
use common::{err, q, texts};

fn open(dir: &std::path::Path) -> Arc<Instance> {
    let o = InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    Instance::open(dir, &o).unwrap()
}

fn t(s: &mut Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

/// (code, message) of a failing statement.
fn fails(s: &mut Session, sql: &str) -> (u16, String) {
    let mut c = Collect::default();
    let e = s.query(sql, &mut c).expect_err(sql);
    (e.code, e.msg)
}

fn run(s: &mut Session, stmts: &[&str]) {
    for st in stmts {
        q(s, st);
    }
}

#[test]
fn restrict_messages_show_create_and_ddl_errors() {
    let dir = testkit::TempDir::new("sql-fk-basic");
    let inst = open(&dir.0);
    let mut s = inst.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY, k INT, KEY (k))",
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id))",
        ],
    );
    let show = t(&mut s, "SHOW CREATE TABLE c");
    assert!(
        show[0].contains("  KEY `pid` (`pid`),\n  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`)\n)"),
        "{show:?}"
    );
    let fk = "(`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))";
    assert_eq!(
        fails(&mut s, "INSERT INTO c VALUES (1, 5)"),
        (
            1452,
            format!("Cannot add or update a child row: a foreign key constraint fails {fk}")
        )
    );
    run(
        &mut s,
        &[
            "INSERT INTO p VALUES (5, 1)",
            "INSERT INTO c VALUES (1, 5), (2, NULL)",
        ],
    );
    assert_eq!(
        fails(&mut s, "DELETE FROM p WHERE id = 5"),
        (
            1451,
            format!("Cannot delete or update a parent row: a foreign key constraint fails {fk}")
        )
    );
    assert_eq!(err(&mut s, "UPDATE p SET id = 6 WHERE id = 5"), 1451);
    assert_eq!(err(&mut s, "UPDATE c SET pid = 7 WHERE id = 1"), 1452);
    // A change that keeps the key, or of other columns, is allowed.
    run(
        &mut s,
        &[
            "UPDATE p SET k = 9 WHERE id = 5",
            "UPDATE c SET pid = 5 WHERE id = 2",
        ],
    );
    // A failed statement leaves nothing behind (statement rollback).
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (3, 5), (4, 77)"), 1452);
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM c"), vec!["2"]);
    assert_eq!(err(&mut s, "DROP TABLE p"), 1451);
    let (code, msg) = fails(&mut s, "TRUNCATE p");
    assert_eq!(code, 1701);
    assert!(msg.contains("REFERENCES `d`.`p` (`id`)"), "{msg}");
    assert_eq!(err(&mut s, "DROP INDEX pid ON c"), 1553);
    assert_eq!(err(&mut s, "ALTER TABLE c DROP INDEX pid"), 1553);
    // Incorrectly formed keys: errno 150.
    for bad in [
        "CREATE TABLE c3 (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL)",
        "CREATE TABLE c4 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES nosuch(id))",
        "CREATE TABLE c5 (id INT PRIMARY KEY, pid BIGINT, FOREIGN KEY (pid) REFERENCES p(id))",
        "CREATE TABLE c7 (id INT PRIMARY KEY, a INT, b INT, FOREIGN KEY (a, b) REFERENCES p(id, k))",
        "CREATE TABLE c8 (id INT PRIMARY KEY, a INT, FOREIGN KEY (a) REFERENCES p(nope))",
    ] {
        let (code, msg) = fails(&mut s, bad);
        assert_eq!(code, 1005, "{bad}");
        assert!(msg.contains("errno: 150"), "{bad}: {msg}");
    }
    assert_eq!(
        err(&mut s, "CREATE TABLE c9 (id INT PRIMARY KEY, a INT, FOREIGN KEY (a) REFERENCES p(id) ON DELETE SET DEFAULT)"),
        1235
    );
    // A non-unique parent index serves; a taken constraint name is errno 121.
    run(
        &mut s,
        &["CREATE TABLE c6 (id INT PRIMARY KEY, pk INT, CONSTRAINT fkx FOREIGN KEY (pk) REFERENCES p(k) ON DELETE CASCADE ON UPDATE SET NULL)"],
    );
    let show = t(&mut s, "SHOW CREATE TABLE c6");
    assert!(show[0].contains("KEY `fkx` (`pk`)"), "{show:?}");
    assert!(
        show[0].contains("CONSTRAINT `fkx` FOREIGN KEY (`pk`) REFERENCES `p` (`k`) ON DELETE CASCADE ON UPDATE SET NULL"),
        "{show:?}"
    );
    let (code, msg) = fails(
        &mut s,
        "CREATE TABLE c10 (id INT PRIMARY KEY, a INT, CONSTRAINT fkx FOREIGN KEY (a) REFERENCES p(id))",
    );
    assert_eq!((code, msg.contains("errno: 121")), (1005, true), "{msg}");
    // ALTER TABLE DROP / ADD FOREIGN KEY.
    run(
        &mut s,
        &[
            "ALTER TABLE c DROP FOREIGN KEY c_ibfk_1",
            "INSERT INTO c VALUES (3, 77)",
        ],
    );
    assert_eq!(err(&mut s, "ALTER TABLE c DROP FOREIGN KEY c_ibfk_1"), 1091);
    // The orphan (3, 77) fails the new key: neither it nor its index stays.
    assert_eq!(
        err(
            &mut s,
            "ALTER TABLE c ADD CONSTRAINT zz FOREIGN KEY (id) REFERENCES p(id)"
        ),
        1452
    );
    let show = t(&mut s, "SHOW CREATE TABLE c");
    assert!(!show[0].contains("zz"), "{show:?}");
    run(
        &mut s,
        &[
            "DELETE FROM c WHERE id = 3",
            "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)",
        ],
    );
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (3, 77)"), 1452);
    // Dropped together with its children, a parent may go.
    run(&mut s, &["DROP TABLE c, c6, p"]);
}

#[test]
fn cascades_set_null_self_reference_and_depth() {
    let dir = testkit::TempDir::new("sql-fk-cascade");
    let inst = open(&dir.0);
    let mut s = inst.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY)",
            "CREATE TABLE c1 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE)",
            "CREATE TABLE c2 (id INT PRIMARY KEY, pid INT REFERENCES c1(id) ON DELETE SET NULL ON UPDATE CASCADE)",
            "INSERT INTO p VALUES (1), (2), (3)",
            "INSERT INTO c1 VALUES (10, 1), (11, 1), (12, 2)",
            "INSERT INTO c2 VALUES (100, 10), (101, 11), (102, 12)",
            "UPDATE p SET id = id + 100 WHERE id = 1",
        ],
    );
    assert_eq!(
        t(&mut s, "SELECT * FROM c1 ORDER BY id"),
        vec!["10|101", "11|101", "12|2"]
    );
    q(&mut s, "DELETE FROM p WHERE id = 101");
    assert_eq!(t(&mut s, "SELECT * FROM c1"), vec!["12|2"]);
    assert_eq!(
        t(&mut s, "SELECT * FROM c2 ORDER BY id"),
        vec!["100|NULL", "101|NULL", "102|12"]
    );
    // ON UPDATE CASCADE two levels down.
    q(&mut s, "UPDATE c1 SET id = 13 WHERE id = 12");
    assert_eq!(t(&mut s, "SELECT pid FROM c2 WHERE id = 102"), vec!["13"]);
    // A self-referencing chain: cascades nest at most 15 deep.
    q(&mut s, "CREATE TABLE s (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES s(id) ON DELETE CASCADE)");
    q(&mut s, "INSERT INTO s VALUES (1, NULL)");
    let chain: Vec<String> = (2..=18).map(|i| format!("({i}, {})", i - 1)).collect();
    q(
        &mut s,
        &format!("INSERT INTO s VALUES {}", chain.join(", ")),
    );
    assert_eq!(err(&mut s, "DELETE FROM s WHERE id = 1"), 3008);
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM s"), vec!["18"]);
    q(&mut s, "DELETE FROM s WHERE id = 5");
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM s"), vec!["4"]);
    // A row referencing itself: RESTRICT refuses, CASCADE takes it.
    q(
        &mut s,
        "CREATE TABLE r (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES r(id))",
    );
    q(&mut s, "INSERT INTO r VALUES (1, 1)");
    assert_eq!(err(&mut s, "DELETE FROM r WHERE id = 1"), 1451);
    q(&mut s, "INSERT INTO s VALUES (50, 50)");
    q(&mut s, "DELETE FROM s WHERE id = 50");
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM s WHERE id = 50"), vec!["0"]);
    // A composite key; a NULL part references nothing (MATCH SIMPLE).
    run(
        &mut s,
        &[
            "CREATE TABLE x (a INT, b INT, PRIMARY KEY (a, b))",
            "CREATE TABLE y (id INT PRIMARY KEY, a INT, b INT, FOREIGN KEY (a, b) REFERENCES x(a, b))",
            "INSERT INTO y VALUES (1, 1, NULL)",
        ],
    );
    assert_eq!(err(&mut s, "INSERT INTO y VALUES (2, 1, 2)"), 1452);
    // A key on a prefix of the parent's primary key; deleting one of two
    // parents with the value is refused (InnoDB's rule).
    q(
        &mut s,
        "CREATE TABLE z (id INT PRIMARY KEY, a INT, FOREIGN KEY (a) REFERENCES x(a))",
    );
    assert_eq!(err(&mut s, "INSERT INTO z VALUES (1, 1)"), 1452);
    run(
        &mut s,
        &[
            "INSERT INTO x VALUES (1, 1), (1, 2)",
            "INSERT INTO z VALUES (1, 1)",
        ],
    );
    assert_eq!(err(&mut s, "DELETE FROM x WHERE a = 1 AND b = 1"), 1451);
    // REPLACE and ON DUPLICATE KEY UPDATE go through the same checks.
    assert_eq!(err(&mut s, "REPLACE INTO z VALUES (1, 9)"), 1452);
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO z VALUES (1, 1) ON DUPLICATE KEY UPDATE a = 9"
        ),
        1452
    );
}

#[test]
fn foreign_key_checks_off_and_keys_after_restart() {
    let dir = testkit::TempDir::new("sql-fk-restart");
    {
        let inst = open(&dir.0);
        let mut s = inst.session(1, "root", None);
        run(
            &mut s,
            &[
                "CREATE DATABASE d",
                "USE d",
                "SET foreign_key_checks = 0",
                // The parent may not exist yet, rows need no parent, parents may go.
                "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE)",
                "INSERT INTO c VALUES (1, 99)",
                "CREATE TABLE p (id INT PRIMARY KEY)",
                "INSERT INTO p VALUES (1), (2)",
                "INSERT INTO c VALUES (2, 1), (3, 2)",
                // No cascade with checks off.
                "DELETE FROM p WHERE id = 2",
                "SET foreign_key_checks = 1",
            ],
        );
        assert_eq!(t(&mut s, "SELECT COUNT(*) FROM c"), vec!["3"]);
        assert_eq!(err(&mut s, "INSERT INTO c VALUES (4, 2)"), 1452);
    }
    let inst = open(&dir.0);
    let mut s = inst.session(1, "root", Some("d".into()));
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (4, 2)"), 1452);
    q(&mut s, "DELETE FROM p WHERE id = 1");
    assert_eq!(t(&mut s, "SELECT id FROM c ORDER BY id"), vec!["1", "3"]);
    let show = t(&mut s, "SHOW CREATE TABLE c");
    assert!(
        show[0].contains("REFERENCES `p` (`id`) ON DELETE CASCADE"),
        "{show:?}"
    );
    // A child whose parent table is gone fails (checks on).
    run(
        &mut s,
        &[
            "SET foreign_key_checks = 0",
            "DROP TABLE p",
            "SET foreign_key_checks = 1",
        ],
    );
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (5, 1)"), 1452);
    q(&mut s, "INSERT INTO c VALUES (5, NULL)");
}

#[test]
fn child_writes_and_parent_deletes_lock_each_other() {
    let dir = testkit::TempDir::new("sql-fk-locks");
    let inst = open(&dir.0);
    let mut a = inst.session(1, "root", None);
    run(
        &mut a,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY, u INT, UNIQUE KEY (u))",
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, pu INT, FOREIGN KEY (pid) REFERENCES p(id), FOREIGN KEY (pu) REFERENCES p(u))",
            "INSERT INTO p VALUES (1, 10), (2, 20)",
        ],
    );
    let mut b = inst.session(2, "root", Some("d".into()));
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    // A child insert holds its parent: the delete waits, then times out.
    run(&mut a, &["BEGIN", "INSERT INTO c VALUES (1, 1, NULL)"]);
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1"), 1205);
    q(&mut a, "COMMIT");
    // Through a secondary parent index too.
    run(&mut a, &["BEGIN", "INSERT INTO c VALUES (2, NULL, 20)"]);
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 2"), 1205);
    q(&mut a, "ROLLBACK");
    q(&mut b, "DELETE FROM p WHERE id = 2");
    // A parent delete holds its value: the child insert waits.
    run(
        &mut a,
        &[
            "INSERT INTO p VALUES (3, 30)",
            "BEGIN",
            "DELETE FROM p WHERE id = 3",
        ],
    );
    assert_eq!(err(&mut b, "INSERT INTO c VALUES (3, 3, NULL)"), 1205);
    assert_eq!(err(&mut b, "INSERT INTO c VALUES (4, NULL, 30)"), 1205);
    q(&mut a, "COMMIT");
    assert_eq!(err(&mut b, "INSERT INTO c VALUES (3, 3, NULL)"), 1452);
}

/// Writers insert children and delete or re-key parents concurrently
/// (RESTRICT and CASCADE keys); afterwards no child may lack its parent.
#[test]
fn concurrent_writers_leave_no_orphans() {
    let seed = testkit::seed("concurrent_writers_leave_no_orphans");
    let dir = testkit::TempDir::new("sql-fk-race");
    let inst = open(&dir.0);
    let mut s = inst.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY, v INT)",
            "CREATE TABLE cr (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id))",
            "CREATE TABLE cc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE)",
        ],
    );
    let vals: Vec<String> = (1..=40).map(|i| format!("({i}, 0)")).collect();
    q(&mut s, &format!("INSERT INTO p VALUES {}", vals.join(",")));
    let threads: Vec<_> = (0..4u64)
        .map(|w| {
            let inst = inst.clone();
            std::thread::spawn(move || {
                let mut rng = testkit::Rng::new(seed ^ ((w + 1) * 0x9E37_79B9));
                let mut s = inst.session(10 + w, "root", Some("d".into()));
                q(&mut s, "SET innodb_lock_wait_timeout = 2");
                for i in 0..300u64 {
                    let id = w * 100_000 + i;
                    let p = rng.below(60) + 1;
                    let sql = match rng.below(6) {
                        0 => format!("INSERT INTO cr VALUES ({id}, {p})"),
                        1 => format!("INSERT INTO cc VALUES ({id}, {p})"),
                        2 => format!("DELETE FROM p WHERE id = {p}"),
                        3 => format!("INSERT INTO p VALUES ({p}, {i})"),
                        4 => format!("UPDATE p SET id = {} WHERE id = {p}", rng.below(60) + 1),
                        _ => format!(
                            "BEGIN; INSERT INTO cc VALUES ({id}, {p}); DELETE FROM p WHERE id = {}; COMMIT",
                            rng.below(60) + 1
                        ),
                    };
                    for one in sql.split("; ") {
                        let mut c = Collect::default();
                        if let Err(e) = s.query(one, &mut c) {
                            assert!(
                                [1451, 1452, 1062, 1205, 1213].contains(&e.code),
                                "{one}: {e}"
                            );
                            if one.starts_with("INSERT INTO cc") || one.starts_with("DELETE") {
                                let _ = s.query("ROLLBACK", &mut Collect::default());
                                break;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for h in threads {
        h.join().unwrap();
    }
    for c in ["cr", "cc"] {
        let orphans = t(
            &mut s,
            &format!("SELECT COUNT(*) FROM {c} LEFT JOIN p ON {c}.pid = p.id WHERE {c}.pid IS NOT NULL AND p.id IS NULL"),
        );
        assert_eq!(orphans, vec!["0"], "orphans in {c} (SEED={seed})");
    }
    let n = t(&mut s, "SELECT COUNT(*) FROM cr");
    assert_ne!(n, vec!["0"], "some children were written (SEED={seed})");
}

/// How `sql` ended (panics if it fails).
fn outcome(s: &mut Session, sql: &str) -> sql::result::Outcome {
    let mut c = Collect::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// DELETE IGNORE and UPDATE IGNORE skip a row a foreign key refuses and go
/// on, as MariaDB 10.11 with InnoDB (checked there): DELETE IGNORE warns
/// 1451 per row kept (a RESTRICT child, also a grandchild its cascade
/// reaches, whose cascaded deletes are undone); UPDATE IGNORE leaves the row
/// silently (no warning, as for a duplicate key): matched, not changed.
#[test]
fn update_and_delete_ignore_skip_rows_a_foreign_key_refuses() {
    let dir = testkit::TempDir::new("sql-fk-ignore");
    let inst = open(&dir.0);
    let mut s = inst.session(1, "root", None);
    run(
        &mut s,
        &[
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE p (id INT PRIMARY KEY, k INT, UNIQUE KEY uk (k))",
            "CREATE TABLE c (id INT PRIMARY KEY, pk INT, KEY kp (pk), FOREIGN KEY (pk) REFERENCES p (k) ON DELETE CASCADE ON UPDATE CASCADE)",
            "CREATE TABLE g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id))",
            "CREATE TABLE r (id INT PRIMARY KEY, pk INT, KEY kp (pk), FOREIGN KEY (pk) REFERENCES p (k))",
            "INSERT INTO p VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)",
            "INSERT INTO c VALUES (1, 10), (2, 20), (3, 30)",
            "INSERT INTO g VALUES (1, 2)",
            "INSERT INTO r VALUES (4, 40)",
        ],
    );
    // Without IGNORE the first refused row fails the statement.
    assert_eq!(err(&mut s, "DELETE FROM p WHERE id < 5"), 1451);
    let o = outcome(&mut s, "DELETE IGNORE FROM p WHERE id < 5");
    assert_eq!(o.affected_rows, 2);
    let w = t(&mut s, "SHOW WARNINGS");
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with("Warning|1451|Cannot delete or update a parent row: a foreign key constraint fails (`d`.`g`"), "{w:?}");
    assert!(w[1].starts_with("Warning|1451|Cannot delete or update a parent row: a foreign key constraint fails (`d`.`r`"), "{w:?}");
    assert_eq!(
        t(&mut s, "SELECT * FROM p ORDER BY id"),
        ["2|20", "4|40", "5|50"]
    );
    assert_eq!(t(&mut s, "SELECT * FROM c"), ["2|20"]);
    // p 4 is held by r (RESTRICT); p 2's change cascades to c.
    let o = outcome(&mut s, "UPDATE IGNORE p SET k = k + 1");
    assert_eq!(o.affected_rows, 2);
    assert_eq!(o.info, "Rows matched: 3  Changed: 2  Warnings: 0");
    assert_eq!(t(&mut s, "SHOW WARNINGS"), Vec::<String>::new());
    assert_eq!(
        t(&mut s, "SELECT * FROM p ORDER BY id"),
        ["2|21", "4|40", "5|51"]
    );
    assert_eq!(t(&mut s, "SELECT * FROM c"), ["2|21"]);
    // No parent 99 (1452); c 2 is held by g.
    assert_eq!(err(&mut s, "UPDATE r SET pk = 99"), 1452);
    let o = outcome(&mut s, "UPDATE IGNORE r SET pk = 99");
    assert_eq!(o.info, "Rows matched: 1  Changed: 0  Warnings: 0");
    let o = outcome(&mut s, "UPDATE IGNORE c SET id = id + 10");
    assert_eq!(o.info, "Rows matched: 1  Changed: 0  Warnings: 0");
    assert_eq!(t(&mut s, "SELECT * FROM r"), ["4|40"]);
    assert_eq!(t(&mut s, "SELECT * FROM c"), ["2|21"]);
    // In a transaction the skipped rows leave nothing behind either.
    run(&mut s, &["BEGIN", "DELETE IGNORE FROM p", "COMMIT"]);
    assert_eq!(t(&mut s, "SELECT * FROM p ORDER BY id"), ["2|21", "4|40"]);
    assert_eq!(t(&mut s, "SELECT * FROM c"), ["2|21"]);
    // LIMIT n counts the rows deleted, not the rows a foreign key kept
    // (MariaDB: "1 row affected, 2 warnings", sorted or in scan order).
    run(&mut s, &["INSERT INTO p VALUES (6, 60), (7, 70), (8, 80)"]);
    let o = outcome(&mut s, "DELETE IGNORE FROM p ORDER BY id LIMIT 1");
    assert_eq!(o.affected_rows, 1);
    assert_eq!(t(&mut s, "SHOW WARNINGS").len(), 2);
    assert_eq!(
        t(&mut s, "SELECT id FROM p ORDER BY id"),
        ["2", "4", "7", "8"]
    );
    let o = outcome(
        &mut s,
        "DELETE IGNORE FROM p WHERE id IN (2, 4, 7, 8) LIMIT 1",
    );
    assert_eq!(o.affected_rows, 1);
    assert_eq!(t(&mut s, "SELECT id FROM p ORDER BY id"), ["2", "4", "8"]);
}
