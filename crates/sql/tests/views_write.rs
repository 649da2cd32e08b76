//! Writes through views (MariaDB's updatable views): INSERT, UPDATE and
//! DELETE through a single-table view change exactly the rows the view
//! shows, view columns that are expressions cannot be assigned (1348) or
//! inserted (1471), non-updatable views are 1288, `WITH [CASCADED | LOCAL]
//! CHECK OPTION` refuses rows the view would not show (1369, also under
//! IGNORE; 1368 on a non-updatable view); `SELECT *` is expanded at CREATE
//! VIEW; views in information_schema.COLUMNS and VIEWS. Every answer and
//! error code checked against MariaDB 10.11.
mod common;
use common::{err, q, rows, session_in_d, TestDb};

fn setup(s: &mut sql::Session) {
    for st in [
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10) NOT NULL DEFAULT 'q', c INT)",
        "INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2), (3, 'z', 3)",
        "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1",
        "CREATE VIEW ve AS SELECT a + 1 AS a1, b FROM t",
        "CREATE VIEW vg AS SELECT b, COUNT(*) AS n FROM t GROUP BY b",
        "CREATE VIEW vc AS SELECT a, b FROM t WHERE a > 1 WITH CHECK OPTION",
    ] {
        q(s, st);
    }
}

fn table(s: &mut sql::Session) -> Vec<String> {
    rows(s, "SELECT a, b, c FROM t ORDER BY a")
}

#[test]
fn writes_through_updatable_views() {
    let db = TestDb::open("sql-views-write");
    let mut s = session_in_d(&db);
    setup(&mut s);
    assert_eq!(err(&mut s, "UPDATE ve SET a1 = 3"), 1348);
    q(&mut s, "UPDATE ve SET b = 'k' WHERE a1 = 3");
    assert_eq!(err(&mut s, "INSERT INTO ve VALUES (1, 'r')"), 1471);
    assert_eq!(err(&mut s, "UPDATE vg SET b = 'u'"), 1288);
    assert_eq!(err(&mut s, "DELETE FROM vg"), 1288);
    assert_eq!(err(&mut s, "INSERT INTO vg (b) VALUES ('u')"), 1471);
    assert_eq!(table(&mut s), ["1|x|1", "2|k|2", "3|z|3"]);
    // The view's WHERE bounds what changes; its columns are all a
    // statement may name.
    q(&mut s, "INSERT INTO v VALUES (9, 'n')");
    assert_eq!(err(&mut s, "UPDATE v SET b = 'k' WHERE c = 1"), 1054);
    assert_eq!(err(&mut s, "UPDATE v SET c = 1"), 1054);
    // A qualifier in SET must name the view (or its alias; `d.v` its database).
    for bad in [
        "UPDATE v SET x.b = 'k'",
        "UPDATE v SET t.b = 'k'",
        "UPDATE v AS w SET v.b = 'k'",
        "UPDATE v SET e.v.b = 'k'",
        "INSERT INTO v (x.a) VALUES (8)",
        "INSERT INTO v SET x.a = 8",
    ] {
        assert_eq!(err(&mut s, bad), 1054, "{bad}");
    }
    q(&mut s, "UPDATE v SET v.b = 'y' WHERE a = 2");
    q(&mut s, "UPDATE v AS w SET w.b = 'z' WHERE a = 3");
    q(&mut s, "UPDATE v SET d.v.b = 'z' WHERE a = 3");
    q(&mut s, "DELETE FROM v WHERE a = 1");
    q(&mut s, "UPDATE v SET b = 'w' WHERE a < 5");
    assert_eq!(table(&mut s), ["1|x|1", "2|w|2", "3|w|3", "9|n|NULL"]);
    q(
        &mut s,
        "UPDATE v SET a = a + 10 WHERE a = 9 ORDER BY a LIMIT 1",
    );
    q(&mut s, "DELETE FROM v WHERE b = 'n'");
    assert_eq!(table(&mut s), ["1|x|1", "2|w|2", "3|w|3"]);
    // CHECK OPTION: rows the view would not show are refused.
    assert_eq!(err(&mut s, "INSERT INTO vc VALUES (1, 'w')"), 1369);
    assert_eq!(err(&mut s, "INSERT IGNORE INTO vc VALUES (0, 'w')"), 1369);
    assert_eq!(err(&mut s, "UPDATE vc SET a = 0 WHERE a = 2"), 1369);
    assert_eq!(err(&mut s, "REPLACE INTO vc VALUES (0, 'k')"), 1369);
    q(&mut s, "INSERT INTO vc VALUES (50, 'j')");
    q(&mut s, "UPDATE vc SET a = a + 10 WHERE a = 3");
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO vc VALUES (50, 'r') ON DUPLICATE KEY UPDATE a = 0"
        ),
        1369
    );
    q(
        &mut s,
        "INSERT INTO vc VALUES (50, 'r') ON DUPLICATE KEY UPDATE b = 'u'",
    );
    assert_eq!(table(&mut s), ["1|x|1", "2|w|2", "13|w|3", "50|u|NULL"]);
    // A NULL condition fails the check as FALSE does.
    q(
        &mut s,
        "CREATE VIEW vn AS SELECT a, b FROM t WHERE c > 0 WITH CHECK OPTION",
    );
    assert_eq!(err(&mut s, "INSERT INTO vn (a, b) VALUES (20, 'z')"), 1369);
    // LOCAL checks the named view's WHERE only, CASCADED the views beneath
    // too; a view without the option checks nothing (as MariaDB).
    q(
        &mut s,
        "CREATE VIEW vl AS SELECT * FROM vc WHERE a < 5 WITH LOCAL CHECK OPTION",
    );
    q(
        &mut s,
        "CREATE VIEW vk AS SELECT * FROM vc WHERE a < 5 WITH CASCADED CHECK OPTION",
    );
    q(&mut s, "CREATE VIEW vo AS SELECT * FROM vc WHERE a < 5");
    q(&mut s, "INSERT INTO vl VALUES (0, 'l')");
    assert_eq!(err(&mut s, "INSERT INTO vl VALUES (7, 'l')"), 1369);
    assert_eq!(err(&mut s, "INSERT INTO vk VALUES (-1, 'k')"), 1369);
    q(&mut s, "INSERT INTO vo VALUES (-2, 'o')");
    q(&mut s, "UPDATE vk SET b = 'K' WHERE a >= 0");
    assert_eq!(
        table(&mut s),
        [
            "-2|o|NULL",
            "0|l|NULL",
            "1|x|1",
            "2|K|2",
            "13|w|3",
            "50|u|NULL"
        ]
    );
    assert_eq!(
        err(
            &mut s,
            "CREATE VIEW vgc AS SELECT b, COUNT(*) FROM t GROUP BY b WITH CHECK OPTION"
        ),
        1368
    );
    assert!(
        rows(&mut s, "SHOW CREATE VIEW vl")[0]
            .ends_with(" WITH LOCAL CHECK OPTION|utf8mb4|utf8mb4_general_ci")
            || rows(&mut s, "SHOW CREATE VIEW vl")[0].contains(" WITH LOCAL CHECK OPTION")
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, CHECK_OPTION, IS_UPDATABLE FROM information_schema.VIEWS \
             WHERE TABLE_SCHEMA = 'd' ORDER BY TABLE_NAME"
        ),
        [
            "v|NONE|YES",
            "vc|CASCADED|YES",
            "ve|NONE|YES",
            "vg|NONE|NO",
            "vk|CASCADED|YES",
            "vl|LOCAL|YES",
            "vn|CASCADED|YES",
            "vo|NONE|YES"
        ]
    );
    // Multi-table writes through views stay refused.
    assert_eq!(
        err(&mut s, "UPDATE v JOIN t ON t.a = v.a SET t.c = 0"),
        1235
    );
}

#[test]
fn select_star_is_expanded_at_create() {
    let db = TestDb::open("sql-views-star");
    let mut s = session_in_d(&db);
    setup(&mut s);
    q(&mut s, "CREATE VIEW vs AS SELECT * FROM t");
    q(&mut s, "CREATE VIEW vq AS SELECT x.*, 1 AS one FROM t AS x");
    q(&mut s, "ALTER TABLE t ADD COLUMN d INT");
    assert_eq!(rows(&mut s, "SELECT * FROM vs WHERE a = 1"), ["1|x|1"]);
    assert_eq!(rows(&mut s, "SELECT * FROM vq WHERE a = 1"), ["1|x|1|1"]);
    q(&mut s, "ALTER TABLE t DROP COLUMN c");
    assert_eq!(err(&mut s, "SELECT * FROM vs"), 1356);
    assert_eq!(err(&mut s, "SELECT * FROM vq"), 1356);
}

#[test]
fn views_in_information_schema_columns() {
    let db = TestDb::open("sql-views-columns");
    let mut s = session_in_d(&db);
    setup(&mut s);
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_KEY \
             FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' \
             AND TABLE_NAME IN ('v', 'vg') ORDER BY TABLE_NAME, ORDINAL_POSITION"
        ),
        [
            "v|a|1|int|",
            "v|b|2|varchar|",
            "vg|b|1|varchar|",
            "vg|n|2|bigint|"
        ]
    );
    let cols = rows(&mut s, "DESCRIBE ve");
    assert_eq!(cols.len(), 2);
    assert!(cols[0].starts_with("a1|"), "{cols:?}");
}
