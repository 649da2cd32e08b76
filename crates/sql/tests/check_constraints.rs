//! CHECK constraints with MariaDB's semantics, through Sessions: names
//! (column-level after the column, table-level CONSTRAINT_n), error 4025
//! with MariaDB's message on every write path (INSERT VALUES/SELECT/SET,
//! REPLACE, ON DUPLICATE KEY UPDATE, UPDATE, multi-table UPDATE; INSERT
//! IGNORE skips with a warning), NULL passing, the expressions refused at
//! CREATE (1901, 1970, 1054, 1826), SHOW CREATE TABLE and
//! information_schema, ALTER TABLE ADD (validating rows) / DROP CONSTRAINT,
//! column renames and drops, CREATE TABLE LIKE, check_constraint_checks and
//! the checks surviving a restart.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::Session;

mod common;
use common::{err, q, rows, session_in_d, TestDb};

/// (code, message) of a failing statement.
fn fails(s: &mut Session, sql: &str) -> (u16, String) {
    let mut c = Collect::default();
    let e = s.query(sql, &mut c).expect_err(sql);
    (e.code, e.msg)
}

fn failed(name: &str, table: &str) -> (u16, String) {
    (
        4025,
        format!("CONSTRAINT `{name}` failed for `d`.`{table}`"),
    )
}

const T1: &str = "CREATE TABLE t1 (a INT CHECK (a >= 0), b INT, c INT, \
     CONSTRAINT CHECK (b > a), CHECK (b < 100), CONSTRAINT named CHECK (a + b < 50), \
     CONSTRAINT cc CHECK (c < 10))";

#[test]
fn names_messages_and_null() {
    let db = TestDb::open("sql-check-names");
    let mut s = session_in_d(&db);
    q(&mut s, T1);
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (-1, 0, 0)"),
        failed("t1.a", "t1")
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (1, 0, 0)"),
        failed("CONSTRAINT_1", "t1")
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (1, 200, 1)"),
        failed("CONSTRAINT_2", "t1")
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (20, 40, 1)"),
        failed("named", "t1")
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (1, 2, 11)"),
        failed("cc", "t1")
    );
    let (_, _) = (
        q(&mut s, "INSERT INTO t1 VALUES (NULL, NULL, NULL)"),
        q(&mut s, "INSERT INTO t1 VALUES (1, 2, 3)"),
    );
    assert_eq!(
        rows(&mut s, "SELECT a, b, c FROM t1 ORDER BY a"),
        vec!["NULL|NULL|NULL", "1|2|3"]
    );
    let (_, state) = {
        let mut c = Collect::default();
        let e = s
            .query("INSERT INTO t1 VALUES (-5, 0, 0)", &mut c)
            .unwrap_err();
        (e.code, e.state)
    };
    assert_eq!(state, "23000");
    let show = rows(&mut s, "SHOW CREATE TABLE t1");
    assert!(
        show[0].contains("`a` int DEFAULT NULL CHECK (`a` >= 0),"),
        "{show:?}"
    );
    for line in [
        "CONSTRAINT `CONSTRAINT_1` CHECK (`b` > `a`)",
        "CONSTRAINT `CONSTRAINT_2` CHECK (`b` < 100)",
        "CONSTRAINT `named` CHECK (`a` + `b` < 50)",
        "CONSTRAINT `cc` CHECK (`c` < 10)",
    ] {
        assert!(show[0].contains(line), "{line} in {show:?}");
    }
    assert_eq!(
        rows(
            &mut s,
            "SELECT TABLE_NAME, CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE \
             FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'd'"
        ),
        vec![
            "t1|a|Column|`a` >= 0",
            "t1|CONSTRAINT_1|Table|`b` > `a`",
            "t1|CONSTRAINT_2|Table|`b` < 100",
            "t1|named|Table|`a` + `b` < 50",
            "t1|cc|Table|`c` < 10",
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT CONSTRAINT_NAME FROM information_schema.TABLE_CONSTRAINTS \
             WHERE TABLE_SCHEMA = 'd' AND CONSTRAINT_TYPE = 'CHECK'"
        ),
        vec!["a", "CONSTRAINT_1", "CONSTRAINT_2", "named", "cc"]
    );
}

#[test]
fn every_write_path_is_checked() {
    let db = TestDb::open("sql-check-paths");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE ig (a INT PRIMARY KEY, b INT CHECK (b > 0))",
    );
    q(&mut s, "INSERT IGNORE INTO ig VALUES (1, -1), (2, 2)");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec!["Warning|4025|CONSTRAINT `ig.b` failed for `d`.`ig`"]
    );
    assert_eq!(rows(&mut s, "SELECT * FROM ig"), vec!["2|2"]);
    let f = failed("ig.b", "ig");
    for bad in [
        "INSERT INTO ig VALUES (2, 5) ON DUPLICATE KEY UPDATE b = -3",
        "INSERT INTO ig VALUES (3, -3) ON DUPLICATE KEY UPDATE b = 4",
        "REPLACE INTO ig VALUES (2, -4)",
        "INSERT INTO ig SELECT 3, -1",
        "INSERT INTO ig SET a = 4, b = 0",
        "UPDATE ig SET b = b - 10",
    ] {
        assert_eq!(fails(&mut s, bad), f, "{bad}");
    }
    q(&mut s, "CREATE TABLE ig2 (a INT, b INT)");
    q(&mut s, "INSERT INTO ig2 VALUES (2, -9)");
    assert_eq!(
        fails(
            &mut s,
            "UPDATE ig JOIN ig2 ON ig.a = ig2.a SET ig.b = ig2.b"
        ),
        f
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM ig"),
        vec!["2|2"],
        "nothing changed"
    );
    // The ones that pass.
    q(
        &mut s,
        "INSERT INTO ig VALUES (2, 5) ON DUPLICATE KEY UPDATE b = 7",
    );
    q(&mut s, "REPLACE INTO ig VALUES (3, 3)");
    q(
        &mut s,
        "UPDATE ig JOIN ig2 ON ig.a = ig2.a SET ig.b = -ig2.b",
    );
    q(&mut s, "UPDATE ig SET b = NULL WHERE a = 3");
    assert_eq!(
        rows(&mut s, "SELECT * FROM ig ORDER BY a"),
        vec!["2|9", "3|NULL"]
    );
    // A failing row in a transaction undoes only its statement.
    q(&mut s, "BEGIN");
    q(&mut s, "INSERT INTO ig VALUES (5, 5)");
    assert_eq!(fails(&mut s, "INSERT INTO ig VALUES (6, 6), (7, -7)"), f);
    q(&mut s, "COMMIT");
    assert_eq!(
        rows(&mut s, "SELECT a FROM ig ORDER BY a"),
        vec!["2", "3", "5"]
    );
    // check_constraint_checks=0 writes anyway (MariaDB).
    q(&mut s, "SET check_constraint_checks = 0");
    q(&mut s, "INSERT INTO ig VALUES (8, -8)");
    q(&mut s, "SET check_constraint_checks = 1");
    assert_eq!(fails(&mut s, "INSERT INTO ig VALUES (9, -9)"), f);
    assert_eq!(rows(&mut s, "SELECT b FROM ig WHERE a = 8"), vec!["-8"]);
}

#[test]
fn expressions_refused_at_create() {
    let db = TestDb::open("sql-check-refused");
    let mut s = session_in_d(&db);
    let cases = [
        (
            "CREATE TABLE t2 (a INT CHECK (a > RAND()))",
            (1901, "Function or expression 'rand()' cannot be used in the CHECK clause of `a`"),
        ),
        (
            "CREATE TABLE t2 (a INT, CHECK (NOW() > 0))",
            (
                1901,
                "Function or expression 'current_timestamp()' cannot be used in the CHECK clause of `CONSTRAINT_1`",
            ),
        ),
        (
            "CREATE TABLE t2 (a INT, CHECK (@x > 0))",
            (1901, "Function or expression '@x' cannot be used in the CHECK clause of `CONSTRAINT_1`"),
        ),
        (
            "CREATE TABLE t2 (a INT, CHECK (SUM(a) > 0))",
            (1901, "Function or expression 'sum()' cannot be used in the CHECK clause of `CONSTRAINT_1`"),
        ),
        (
            "CREATE TABLE t2 (a INT CHECK (a > (SELECT 1)))",
            (1970, "CHECK does not support subqueries or stored functions"),
        ),
        (
            "CREATE TABLE t2 (a INT, CHECK (EXISTS (SELECT 1)))",
            (1970, "CHECK does not support subqueries or stored functions"),
        ),
        (
            "CREATE TABLE t2 (a INT, CHECK (b > 0))",
            (1054, "Unknown column 'b' in 'CHECK'"),
        ),
        (
            "CREATE TABLE t2 (a INT, CONSTRAINT x CHECK (a > 0), CONSTRAINT x CHECK (a < 10))",
            (1826, "Duplicate CHECK constraint name 'x'"),
        ),
        (
            "CREATE TABLE t2 (a INT CHECK (a > 0), CONSTRAINT a CHECK (a < 10))",
            (1826, "Duplicate CHECK constraint name 'a'"),
        ),
    ];
    for (sql, (code, msg)) in cases {
        assert_eq!(fails(&mut s, sql), (code, msg.to_string()), "{sql}");
    }
    assert_eq!(
        err(
            &mut s,
            "CREATE TABLE t2 (a INT, CHECK (a > 0) NOT ENFORCED)"
        ),
        1235
    );
    assert_eq!(
        err(&mut s, "SELECT * FROM t2"),
        1146,
        "no table left behind"
    );
    // A column-level check may name another column (MariaDB).
    q(&mut s, "CREATE TABLE t2 (a INT CHECK (b > 0), b INT)");
    assert_eq!(
        fails(&mut s, "INSERT INTO t2 VALUES (1, 0)"),
        failed("t2.a", "t2")
    );
}

#[test]
fn alter_table_add_drop_rename_and_like() {
    let db = TestDb::open("sql-check-alter");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t3 (a INT, b INT CHECK (b > 0), c INT, CONSTRAINT cab CHECK (a < c))",
    );
    q(&mut s, "INSERT INTO t3 VALUES (1, 1, 2), (5, 5, 6)");
    assert_eq!(
        fails(&mut s, "ALTER TABLE t3 ADD CONSTRAINT big CHECK (a > 2)"),
        failed("big", "t3"),
        "existing rows are validated"
    );
    assert_eq!(
        fails(
            &mut s,
            "ALTER TABLE t3 ADD COLUMN d INT DEFAULT 0, ADD CHECK (d > 0)"
        ),
        failed("CONSTRAINT_1", "t3"),
        "added columns are validated with their values"
    );
    q(&mut s, "ALTER TABLE t3 ADD CHECK (a > 0)");
    assert_eq!(
        fails(&mut s, "INSERT INTO t3 VALUES (0, 1, 2)"),
        failed("CONSTRAINT_1", "t3")
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t3 ADD CONSTRAINT cab CHECK (a > 0)"),
        (1826, "Duplicate CHECK constraint name 'cab'".into())
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t3 DROP CONSTRAINT nope"),
        (
            1091,
            "Can't DROP CONSTRAINT `nope`; check that it exists".into()
        )
    );
    q(&mut s, "ALTER TABLE t3 DROP CONSTRAINT CONSTRAINT_1");
    q(&mut s, "INSERT INTO t3 VALUES (0, 1, 2)");
    assert_eq!(
        fails(&mut s, "ALTER TABLE t3 DROP COLUMN a"),
        (1054, "Unknown column 'a' in 'CHECK'".into())
    );
    // A column takes its own check with it.
    q(&mut s, "ALTER TABLE t3 DROP COLUMN b");
    q(&mut s, "INSERT INTO t3 VALUES (1, 3)");
    // Renames follow into the checks.
    q(&mut s, "ALTER TABLE t3 CHANGE a a2 INT");
    q(&mut s, "ALTER TABLE t3 RENAME COLUMN c TO c2");
    let show = rows(&mut s, "SHOW CREATE TABLE t3");
    assert!(
        show[0].contains("CONSTRAINT `cab` CHECK (`a2` < `c2`)"),
        "{show:?}"
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t3 VALUES (5, 1)"),
        failed("cab", "t3")
    );
    // MODIFY with a CHECK gives the column its check; without, takes it away.
    q(
        &mut s,
        "ALTER TABLE t3 MODIFY a2 INT DEFAULT 5 CHECK (a2 > -10)",
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t3 VALUES (-20, 1)"),
        failed("t3.a2", "t3")
    );
    let show = rows(&mut s, "SHOW CREATE TABLE t3");
    assert!(
        show[0].contains("`a2` int DEFAULT '5' CHECK (`a2` > -10)"),
        "{show:?}"
    );
    q(&mut s, "ALTER TABLE t3 MODIFY a2 BIGINT");
    q(&mut s, "INSERT INTO t3 VALUES (-20, 1)");
    // A rebuild validates every row.
    q(&mut s, "SET check_constraint_checks = 0");
    q(&mut s, "INSERT INTO t3 VALUES (9, 1)");
    q(&mut s, "SET check_constraint_checks = 1");
    assert_eq!(
        fails(&mut s, "ALTER TABLE t3 MODIFY a2 INT"),
        failed("cab", "t3")
    );
    q(&mut s, "DELETE FROM t3 WHERE a2 = 9");
    // CREATE TABLE LIKE copies the checks.
    q(&mut s, "CREATE TABLE t4 LIKE t3");
    assert_eq!(
        fails(&mut s, "INSERT INTO t4 VALUES (5, 1)"),
        failed("cab", "t4")
    );
    assert_eq!(
        rows(&mut s, "SELECT CONSTRAINT_NAME FROM information_schema.CHECK_CONSTRAINTS WHERE TABLE_NAME = 't4'"),
        vec!["cab"]
    );
}

#[test]
fn checks_survive_a_restart() {
    let dir = testkit::TempDir::new("sql-check-restart");
    let o = sql::InstanceOptions {
        sync_on_commit: false,
        ..Default::default()
    };
    let show = {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = Session::new(inst.clone(), 1, "root", None);
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        q(&mut s, T1);
        q(&mut s, "CREATE TABLE plain (a INT)");
        rows(&mut s, "SHOW CREATE TABLE t1")
    };
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = Session::new(inst.clone(), 1, "root", None);
    q(&mut s, "USE d");
    assert_eq!(rows(&mut s, "SHOW CREATE TABLE t1"), show);
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (-1, 0, 0)"),
        failed("t1.a", "t1")
    );
    assert_eq!(
        fails(&mut s, "INSERT INTO t1 VALUES (1, 2, 11)"),
        failed("cc", "t1")
    );
    q(&mut s, "INSERT INTO t1 VALUES (1, 2, 3)");
    q(&mut s, "INSERT INTO plain VALUES (-1)");
}

/// Each expression and the CHECK_CLAUSE MariaDB 10.11 gives it.
#[test]
fn clauses_print_as_mariadb_prints_them() {
    let db = TestDb::open("sql-check-print");
    let mut s = session_in_d(&db);
    let cases = [
        ("a >= 0", "`a` >= 0"),
        ("not (a > 1 or b > 2)", "`a` <= 1 and `b` <= 2"),
        ("not (a + 1)", "!(`a` + 1)"),
        ("not a", "`a` = 0"),
        ("not a between 1 and 2", "`a` not between 1 and 2"),
        ("a not regexp 'x'", "!(`a` regexp 'x')"),
        ("s like 'x' escape '!'", "`s` like 'x' escape '!'"),
        ("cast(a as signed) > 0", "cast(`a` as signed) > 0"),
        ("a is not true", "`a` is not true"),
        ("-a < 5", "-`a` < 5"),
        ("a - (b - 1) > 0", "`a` - (`b` - 1) > 0"),
        ("a - b - 1 > 0", "`a` - `b` - 1 > 0"),
        ("(a > 1) = (b > 1)", "`a` > 1 = (`b` > 1)"),
        ("s not like 'x%'", "`s`  not like 'x%'"),
        ("a in (1,2) is not null", "`a` in (1,2) is not null"),
        ("true", "1"),
        ("a <=> b", "`a` <=> `b`"),
        ("~a", "~`a`"),
        ("a & 3 | 1 = 1", "`a` & 3 | 1 = 1"),
        ("concat(s,'x') != 'y'", "concat(`s`,'x') <> 'y'"),
        (
            "a != 1 and b = 2 or a = 3",
            "`a` <> 1 and `b` = 2 or `a` = 3",
        ),
        ("1.50 < a", "1.50 < `a`"),
        ("a > -1e3", "`a` > -1e3"),
        ("case a when 1 then 2 end", "case `a` when 1 then 2 end"),
        ("if(a, b, 0)", "if(`a`,`b`,0)"),
        ("abs(a) > 0", "abs(`a`) > 0"),
        (
            "s collate utf8mb4_bin = 'a'",
            "`s` collate utf8mb4_bin = 'a'",
        ),
        ("a xor b", "`a` xor `b`"),
        (
            "a % 2 = 0 and a div 2 = 1",
            "`a` MOD 2 = 0 and `a` DIV 2 = 1",
        ),
        (
            "upper(s) = 'X' and length(s) > 1",
            "ucase(`s`) = 'X' and octet_length(`s`) > 1",
        ),
        ("'it''s' = s", "'it\\'s' = `s`"),
        (
            "a between 1 and 10 and s in ('x','y') or s like 'a%'",
            "`a` between 1 and 10 and `s` in ('x','y') or `s` like 'a%'",
        ),
        (
            "case when a then 1 else 0 end",
            "case when `a` then 1 else 0 end",
        ),
        ("(a + 1) * 2 <> -3", "(`a` + 1) * 2 <> -3"),
    ];
    let mut ddl = String::from("CREATE TABLE p (a INT, b INT, s VARCHAR(5)");
    for (e, _) in &cases {
        ddl.push_str(&format!(", CHECK ({e})"));
    }
    ddl.push(')');
    q(&mut s, &ddl);
    let got = rows(
        &mut s,
        "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE TABLE_NAME = 'p'",
    );
    let want: Vec<&str> = cases.iter().map(|c| c.1).collect();
    for (g, (e, w)) in got.iter().zip(cases.iter()) {
        assert_eq!(g, w, "CHECK ({e})");
    }
    assert_eq!(got.len(), want.len());
    // The printed forms parse back: the table still evaluates them.
    q(&mut s, "SET check_constraint_checks = 0");
    q(&mut s, "INSERT INTO p VALUES (1, 2, 'x')");
    // MariaDB's printed forms as a dump gives them load.
    let mut ddl = String::from("CREATE TABLE p2 (a INT, b INT, s VARCHAR(5)");
    for (_, w) in &cases {
        ddl.push_str(&format!(", CHECK ({w})"));
    }
    ddl.push(')');
    q(&mut s, &ddl);
    let again = rows(
        &mut s,
        "SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE TABLE_NAME = 'p2'",
    );
    assert_eq!(again, got, "printing is a fixed point");
}

#[test]
fn columns_changed_by_foreign_key_actions_are_refused() {
    let db = TestDb::open("sql-check-fk");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE fp (id INT PRIMARY KEY)");
    let msg = |name: &str| {
        (
            1901,
            format!("Function or expression 'pid' cannot be used in the CHECK clause of `{name}`"),
        )
    };
    for action in [
        "ON DELETE SET NULL",
        "ON UPDATE CASCADE",
        "ON UPDATE SET NULL",
    ] {
        let sql = format!(
            "CREATE TABLE fc (id INT PRIMARY KEY, pid INT, CHECK (pid < 10), \
             FOREIGN KEY (pid) REFERENCES fp(id) {action})"
        );
        assert_eq!(fails(&mut s, &sql), msg("CONSTRAINT_1"), "{sql}");
    }
    assert_eq!(
        fails(
            &mut s,
            "CREATE TABLE fc (id INT PRIMARY KEY, pid INT CHECK (pid < 10), \
             FOREIGN KEY (pid) REFERENCES fp(id) ON UPDATE CASCADE)"
        ),
        msg("pid")
    );
    q(
        &mut s,
        "CREATE TABLE fc (id INT PRIMARY KEY, pid INT, CHECK (pid < 10), \
         FOREIGN KEY (pid) REFERENCES fp(id) ON DELETE CASCADE)",
    );
    q(&mut s, "CREATE TABLE fc6 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fp(id) ON UPDATE CASCADE)");
    assert_eq!(
        fails(&mut s, "ALTER TABLE fc6 ADD CHECK (pid < 10)"),
        msg("CONSTRAINT_1")
    );
    q(
        &mut s,
        "CREATE TABLE fc7 (id INT PRIMARY KEY, pid INT, CHECK (pid < 10))",
    );
    assert_eq!(
        fails(
            &mut s,
            "ALTER TABLE fc7 ADD FOREIGN KEY (pid) REFERENCES fp(id) ON UPDATE CASCADE"
        ),
        msg("CONSTRAINT_1")
    );
}
