//! Multi-table UPDATE and DELETE with MySQL's semantics (checked against MariaDB; the
//! diff corpus runs the same statements on both): each target row changed once, at
//! the first joined row reaching it; "Rows matched" counts distinct target rows; SET
//! assignments in order; LEFT JOIN's missing side untouched; DELETE of several
//! targets, through aliases (1109 for a name not in FROM), and the USING form;
//! ORDER BY / LIMIT are 1221; joins with derived tables (not changeable: 1288);
//! secondary indexes follow (CHECK TABLE). Rows of the
//! target tables are locked exclusively, rows of the tables only read shared.
#![allow(clippy::unwrap_used)]

mod common;
use common::{err, q, rows, session_in_d, TestDb};
use sql::result::Collect;
use sql::{Session, Value};

fn setup(s: &mut Session) {
    q(
        s,
        "CREATE TABLE ma (id INT PRIMARY KEY, x INT, y INT, KEY ky (y))",
    );
    q(
        s,
        "CREATE TABLE mb (id INT PRIMARY KEY, aid INT, y INT, KEY ka (aid))",
    );
    q(s, "INSERT INTO ma VALUES (1, 1, 0), (2, 2, 0), (3, 3, 0)");
    q(
        s,
        "INSERT INTO mb VALUES (10, 1, 100), (11, 1, 101), (12, 2, 102), (13, NULL, 103)",
    );
}

fn info(s: &mut Session, sql: &str) -> (u64, String) {
    let mut c = Collect::default();
    let o = s
        .query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    (o.affected_rows, o.info)
}

#[test]
fn update_join_changes_each_row_once() {
    let db = TestDb::open("multi-update");
    let mut s = session_in_d(&db);
    setup(&mut s);
    let (n, i) = info(
        &mut s,
        "UPDATE ma JOIN mb ON mb.aid = ma.id SET ma.y = mb.y, mb.y = ma.x + 1000",
    );
    assert_eq!(
        (n, i.as_str()),
        (5, "Rows matched: 5  Changed: 5  Warnings: 0")
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM ma ORDER BY id"),
        ["1|1|100", "2|2|102", "3|3|0"]
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM mb ORDER BY id"),
        ["10|1|1001", "11|1|1001", "12|2|1002", "13|NULL|103"]
    );
    // The secondary index follows.
    assert_eq!(rows(&mut s, "SELECT id FROM ma WHERE y = 100"), ["1"]);
    assert_eq!(rows(&mut s, "CHECK TABLE ma")[0], "d.ma|check|status|OK");
    assert_eq!(rows(&mut s, "CHECK TABLE mb")[0], "d.mb|check|status|OK");
    // Comma join with the condition in WHERE: ma.1 is reached twice, changed once.
    let (n, i) = info(
        &mut s,
        "UPDATE ma, mb SET ma.x = ma.x + 1 WHERE mb.aid = ma.id",
    );
    assert_eq!(
        (n, i.as_str()),
        (2, "Rows matched: 2  Changed: 2  Warnings: 0")
    );
    assert_eq!(
        rows(&mut s, "SELECT x FROM ma ORDER BY id"),
        ["2", "3", "3"]
    );
    // Unqualified columns resolve when unambiguous; ambiguous ones are 1052.
    q(&mut s, "UPDATE ma JOIN mb ON mb.aid = ma.id SET x = 5");
    assert_eq!(
        rows(&mut s, "SELECT x FROM ma ORDER BY id"),
        ["5", "5", "3"]
    );
    assert_eq!(
        err(&mut s, "UPDATE ma JOIN mb ON mb.aid = ma.id SET id = 5"),
        1052
    );
    // LEFT JOIN: rows without a match see NULLs; the missing side is not touched.
    let (_, i) = info(
        &mut s,
        "UPDATE ma a LEFT JOIN mb b ON b.aid = a.id SET a.y = b.id, b.y = 7",
    );
    assert_eq!(i, "Rows matched: 6  Changed: 6  Warnings: 0");
    assert_eq!(
        rows(&mut s, "SELECT * FROM ma ORDER BY id"),
        ["1|5|10", "2|5|12", "3|3|NULL"]
    );
    assert_eq!(
        rows(&mut s, "SELECT y FROM mb ORDER BY id"),
        ["7", "7", "7", "103"]
    );
    // Unchanged rows are matched, not changed; parameters bind in text order.
    let (id, _, _) = s
        .prepare("UPDATE ma JOIN mb ON mb.aid = ma.id AND mb.id = ? SET ma.x = ? WHERE ma.y >= ?")
        .unwrap();
    let mut c = Collect::default();
    let o = s
        .execute_prepared(id, &[Value::Int(11), Value::Int(9), Value::Int(10)], &mut c)
        .unwrap();
    assert_eq!(o.info, "Rows matched: 1  Changed: 1  Warnings: 0");
    let o = s
        .execute_prepared(id, &[Value::Int(11), Value::Int(9), Value::Int(10)], &mut c)
        .unwrap();
    assert_eq!(o.info, "Rows matched: 1  Changed: 0  Warnings: 0");
    assert_eq!(
        rows(&mut s, "SELECT x FROM ma ORDER BY id"),
        ["9", "5", "3"]
    );
    assert_eq!(
        err(
            &mut s,
            "UPDATE ma JOIN mb ON mb.aid = ma.id SET ma.x = 0 ORDER BY ma.id"
        ),
        1221
    );
    assert_eq!(
        err(
            &mut s,
            "UPDATE ma JOIN mb ON mb.aid = ma.id SET ma.x = 0 LIMIT 1"
        ),
        1221
    );
    assert_eq!(
        err(
            &mut s,
            "UPDATE ma JOIN mb ON mb.aid = ma.id SET ma.x = (SELECT COUNT(*) FROM ma)"
        ),
        1093
    );
    assert_eq!(
        err(
            &mut s,
            "UPDATE ma JOIN mb ON mb.aid = ma.id SET ma.nosuch = 1"
        ),
        1054
    );
}

#[test]
fn delete_join_forms() {
    let db = TestDb::open("multi-delete");
    let mut s = session_in_d(&db);
    setup(&mut s);
    let (n, _) = info(
        &mut s,
        "DELETE ma FROM ma JOIN mb ON mb.aid = ma.id WHERE mb.y > 101",
    );
    assert_eq!(n, 1);
    assert_eq!(rows(&mut s, "SELECT id FROM ma ORDER BY id"), ["1", "3"]);
    // Two targets: every row reached once.
    let (n, _) = info(&mut s, "DELETE ma, mb FROM ma JOIN mb ON mb.aid = ma.id");
    assert_eq!(n, 3);
    assert_eq!(rows(&mut s, "SELECT id FROM ma ORDER BY id"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT id FROM mb ORDER BY id"), ["12", "13"]);
    q(&mut s, "INSERT INTO ma VALUES (2, 2, 0)");
    q(&mut s, "INSERT INTO mb VALUES (20, 2, 0), (21, 3, 0)");
    let (n, _) = info(
        &mut s,
        "DELETE FROM ma USING ma, mb WHERE mb.aid = ma.id AND mb.id = 20",
    );
    assert_eq!(n, 1);
    assert_eq!(rows(&mut s, "SELECT id FROM ma ORDER BY id"), ["3"]);
    // An alias must be used as the target name.
    assert_eq!(
        err(&mut s, "DELETE ma FROM ma a JOIN mb b ON b.aid = a.id"),
        1109
    );
    let (n, _) = info(&mut s, "DELETE b FROM ma a JOIN mb b ON b.aid = a.id");
    assert_eq!(n, 1);
    assert_eq!(
        rows(&mut s, "SELECT id FROM mb ORDER BY id"),
        ["12", "13", "20"]
    );
    assert_eq!(
        err(
            &mut s,
            "DELETE ma FROM ma JOIN mb ON mb.aid = ma.id LIMIT 1"
        ),
        1221
    );
    // A self-join deleting through one alias.
    q(&mut s, "INSERT INTO ma VALUES (4, 3, 0), (5, 9, 0)");
    let (n, _) = info(
        &mut s,
        "DELETE p FROM ma p JOIN ma q ON q.x = p.x AND q.id < p.id",
    );
    assert_eq!(n, 1);
    assert_eq!(rows(&mut s, "SELECT id FROM ma ORDER BY id"), ["3", "5"]);
    assert_eq!(rows(&mut s, "CHECK TABLE ma")[0], "d.ma|check|status|OK");
    // Inside a transaction a failed multi-table statement undoes only itself.
    q(&mut s, "CREATE TABLE mc (id INT PRIMARY KEY, v INT UNIQUE)");
    q(&mut s, "INSERT INTO mc VALUES (1, 1), (2, 2)");
    q(&mut s, "BEGIN");
    q(&mut s, "DELETE FROM mb WHERE id = 12");
    assert_eq!(
        err(&mut s, "UPDATE mc, ma SET mc.v = 7 WHERE ma.id = 3"),
        1062
    );
    q(&mut s, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT v FROM mc ORDER BY id"), ["1", "2"]);
    assert_eq!(rows(&mut s, "SELECT id FROM mb ORDER BY id"), ["13", "20"]);
}

#[test]
fn joins_with_derived_tables() {
    let db = TestDb::open("multi-derived");
    let mut s = session_in_d(&db);
    setup(&mut s);
    let (_, i) = info(
        &mut s,
        "UPDATE ma JOIN (SELECT aid, COUNT(*) n, SUM(y) s FROM mb GROUP BY aid) x \
         ON x.aid = ma.id SET ma.x = x.n, ma.y = x.s",
    );
    assert_eq!(i, "Rows matched: 2  Changed: 2  Warnings: 0");
    assert_eq!(
        rows(&mut s, "SELECT * FROM ma ORDER BY id"),
        ["1|2|201", "2|1|102", "3|3|0"]
    );
    // The derived table may read the table changed (it is materialized first).
    q(
        &mut s,
        "UPDATE ma JOIN (SELECT id FROM ma WHERE x = 3) z ON z.id = ma.id SET ma.y = 9",
    );
    assert_eq!(rows(&mut s, "SELECT y FROM ma WHERE id = 3"), ["9"]);
    assert_eq!(
        err(
            &mut s,
            "UPDATE ma JOIN (SELECT 1 k) x ON x.k = ma.id SET x.k = 5"
        ),
        1288
    );
    assert_eq!(
        err(
            &mut s,
            "DELETE x FROM ma JOIN (SELECT 1 k) x ON x.k = ma.id"
        ),
        1288
    );
    assert_eq!(
        err(&mut s, "DELETE ma FROM ma JOIN (SELECT 1 k) ON 1 = ma.id"),
        1248
    );
    let (n, _) = info(
        &mut s,
        "DELETE ma FROM ma JOIN (SELECT aid FROM mb WHERE y > 101) x ON x.aid = ma.id",
    );
    assert_eq!(n, 1);
    assert_eq!(rows(&mut s, "SELECT id FROM ma ORDER BY id"), ["1", "3"]);
}

#[test]
fn locks_targets_exclusively_and_sources_shared() {
    let db = TestDb::open("multi-locks");
    let mut a = session_in_d(&db);
    let mut b = session_in_d(&db);
    setup(&mut a);
    q(&mut a, "BEGIN");
    // Joined in FROM order: mb by its primary key, then ma by its primary key.
    q(
        &mut a,
        "UPDATE mb JOIN ma ON ma.id = mb.aid SET ma.x = 50 WHERE mb.id = 12",
    );
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    // The target row is locked exclusively: no reader with a lock, no writer.
    assert_eq!(
        err(&mut b, "SELECT * FROM ma WHERE id = 2 LOCK IN SHARE MODE"),
        1205
    );
    assert_eq!(err(&mut b, "UPDATE ma SET y = 1 WHERE id = 2"), 1205);
    // The source row is locked shared: readers with a share lock pass, writers wait.
    assert_eq!(
        rows(&mut b, "SELECT id FROM mb WHERE id = 12 LOCK IN SHARE MODE"),
        ["12"]
    );
    q(&mut b, "COMMIT");
    assert_eq!(err(&mut b, "UPDATE mb SET y = 1 WHERE id = 12"), 1205);
    // Rows the join never reached are free.
    q(&mut b, "UPDATE ma SET y = 1 WHERE id = 3");
    q(&mut b, "UPDATE mb SET y = 1 WHERE id = 11");
    q(&mut a, "COMMIT");
    q(&mut b, "UPDATE mb SET y = 1 WHERE id = 12");
    assert_eq!(rows(&mut b, "SELECT x FROM ma WHERE id = 2"), ["50"]);
}
