//! End-to-end statements against the real `strata` binary with the `mysql`
//! crate: DDL (with SHOW / DESCRIBE), DML, SELECT features, prepared
//! statements across DDL and parameter type changes. Queries run through both the text protocol
//! (COM_QUERY) and prepared statements (COM_STMT_PREPARE/EXECUTE, binary
//! rows) and must agree exactly.
#![allow(clippy::unwrap_used)]

mod common;

use common::{both, exec, expect_err, q, q1, q_i64, qp, Server};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};

fn affected(c: &mut Conn, sql: &str) -> u64 {
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.affected_rows()
}

fn info(c: &Conn) -> String {
    c.info_str().into_owned()
}

#[test]
fn databases_tables_and_indexes() {
    let srv = Server::start("ddl");
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE shop");
    expect_err(&mut c, "CREATE DATABASE shop", 1007, "HY000");
    exec(&mut c, "CREATE DATABASE IF NOT EXISTS shop");
    let dbs = q(&mut c, "SHOW DATABASES");
    assert!(dbs.contains(&"shop".to_string()), "{dbs:?}");
    // Without a default database, table names need a qualifier.
    expect_err(&mut c, "CREATE TABLE t (a INT)", 1046, "3D000");
    exec(&mut c, "USE shop");
    assert_eq!(q1(&mut c, "SELECT DATABASE()"), "shop");
    exec(
        &mut c,
        "CREATE TABLE item (
            id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
            sku CHAR(8) NOT NULL,
            name VARCHAR(40) NOT NULL DEFAULT 'unnamed',
            price DECIMAL(9,2) NOT NULL DEFAULT '0.00',
            qty INT NULL,
            note TEXT,
            PRIMARY KEY (id),
            UNIQUE KEY uk_sku (sku),
            KEY k_name (name),
            INDEX k_qty_price (qty, price)
        ) ENGINE=InnoDB",
    );
    expect_err(&mut c, "CREATE TABLE item (a INT)", 1050, "42S01");
    exec(&mut c, "CREATE TABLE IF NOT EXISTS item (a INT)");
    exec(
        &mut c,
        "CREATE TABLE shop.other (a INT PRIMARY KEY) ENGINE=rocksdb",
    );
    assert_eq!(q(&mut c, "SHOW TABLES"), vec!["item", "other"]);

    let create = q(&mut c, "SHOW CREATE TABLE item");
    assert_eq!(create.len(), 1);
    let ddl = create[0].clone();
    assert!(ddl.starts_with("item|CREATE TABLE `item` ("), "{ddl}");
    for part in [
        "`id` bigint unsigned NOT NULL AUTO_INCREMENT",
        "`sku` char(8) NOT NULL",
        "`name` varchar(40) NOT NULL DEFAULT 'unnamed'",
        "`price` decimal(9,2) NOT NULL DEFAULT '0.00'",
        "`qty` int DEFAULT NULL",
        "PRIMARY KEY (`id`)",
        "UNIQUE KEY `uk_sku` (`sku`)",
        "KEY `k_name` (`name`)",
        "KEY `k_qty_price` (`qty`,`price`)",
    ] {
        assert!(ddl.contains(part), "SHOW CREATE TABLE lacks {part}:\n{ddl}");
    }
    // What SHOW CREATE TABLE prints creates the same table again (mysqldump).
    let copy = ddl["item|".len()..].replacen("`item`", "`item2`", 1);
    exec(&mut c, &copy);
    assert_eq!(
        q(&mut c, "SHOW CREATE TABLE item2"),
        vec![format!("item2|{copy}")]
    );
    exec(&mut c, "DROP TABLE item2");
    assert_eq!(
        q(&mut c, "DESCRIBE item"),
        vec![
            "id|bigint unsigned|NO|PRI|NULL|auto_increment",
            "sku|char(8)|NO|UNI|NULL|",
            "name|varchar(40)|NO|MUL|unnamed|",
            "price|decimal(9,2)|NO||0.00|",
            "qty|int|YES|MUL|NULL|",
            "note|text|YES||NULL|",
        ]
    );
    let idx: Vec<String> = q(&mut c, "SHOW INDEX FROM item")
        .iter()
        .map(|r| {
            let f: Vec<&str> = r.split('|').collect();
            format!("{} {} {} {}", f[2], f[1], f[3], f[4])
        })
        .collect();
    assert_eq!(
        idx,
        vec![
            "PRIMARY 0 1 id",
            "uk_sku 0 1 sku",
            "k_name 1 1 name",
            "k_qty_price 1 1 qty",
            "k_qty_price 1 2 price",
        ]
    );

    // CREATE / DROP INDEX on a table with data; the new index is used and
    // the unique one is enforced.
    exec(
        &mut c,
        "INSERT INTO item (sku, name, qty) VALUES ('a1','x',1),('a2','y',2),('a3','y',3)",
    );
    exec(&mut c, "CREATE INDEX k_note ON item (note(10))");
    exec(&mut c, "CREATE UNIQUE INDEX uk_qty ON item (qty)");
    expect_err(
        &mut c,
        "INSERT INTO item (sku, qty) VALUES ('a4', 3)",
        1062,
        "23000",
    );
    expect_err(
        &mut c,
        "CREATE UNIQUE INDEX uk_name ON item (name)",
        1062,
        "23000",
    );
    let keys: Vec<String> = q(&mut c, "SHOW INDEX FROM item")
        .iter()
        .map(|r| r.split('|').nth(2).unwrap().to_string())
        .collect();
    assert!(keys.contains(&"uk_qty".into()) && !keys.contains(&"uk_name".into()));
    exec(&mut c, "DROP INDEX uk_qty ON item");
    exec(&mut c, "INSERT INTO item (sku, qty) VALUES ('a4', 3)");
    assert_eq!(
        both(&mut c, "SELECT sku FROM item WHERE qty = 3 ORDER BY sku"),
        vec!["a3", "a4"]
    );

    // TRUNCATE empties the table and resets AUTO_INCREMENT.
    exec(&mut c, "TRUNCATE TABLE item");
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM item"), 0);
    exec(&mut c, "INSERT INTO item (sku) VALUES ('b1')");
    assert_eq!(q(&mut c, "SELECT id, sku FROM item"), vec!["1|b1"]);

    // DROP TABLE [IF EXISTS].
    exec(&mut c, "DROP TABLE other");
    expect_err(&mut c, "DROP TABLE other", 1051, "42S02");
    exec(&mut c, "DROP TABLE IF EXISTS other");
    assert_eq!(
        q(&mut c, "SHOW WARNINGS"),
        vec!["Note|1051|Unknown table 'shop.other'"]
    );
    expect_err(&mut c, "SELECT * FROM other", 1146, "42S02");
    assert_eq!(q(&mut c, "SHOW TABLES"), vec!["item"]);

    // DROP DATABASE removes its tables.
    exec(&mut c, "DROP DATABASE shop");
    assert!(q(&mut c, "SELECT DATABASE()") == vec!["NULL"]);
    exec(&mut c, "DROP DATABASE IF EXISTS shop");
    expect_err(&mut c, "USE shop", 1049, "42000");
    exec(&mut c, "CREATE DATABASE shop");
    exec(&mut c, "USE shop");
    assert!(q(&mut c, "SHOW TABLES").is_empty());
}

#[test]
fn insert_replace_upsert_update_delete() {
    let srv = Server::start("dml");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
            u VARCHAR(10) UNIQUE, g INT NOT NULL DEFAULT 7, s VARCHAR(10) DEFAULT 'dflt')",
    );
    // Multi-row insert with a column list and defaults.
    assert_eq!(
        affected(&mut c, "INSERT INTO t (u) VALUES ('a'),('b'),('c')"),
        3
    );
    assert_eq!(info(&c), "Records: 3  Duplicates: 0  Warnings: 0");
    assert_eq!(c.last_insert_id(), 1);
    assert_eq!(q_i64(&mut c, "SELECT LAST_INSERT_ID()"), 1);
    assert_eq!(
        affected(&mut c, "INSERT INTO t (g, u, s) VALUES (1, 'd', NULL)"),
        1
    );
    assert_eq!(c.last_insert_id(), 4);
    // Explicit id, then AUTO_INCREMENT continues after it.
    exec(&mut c, "INSERT INTO t VALUES (10, 'e', 2, 'x')");
    exec(&mut c, "INSERT INTO t (u) VALUES ('f')");
    assert_eq!(c.last_insert_id(), 11);
    assert_eq!(
        both(&mut c, "SELECT * FROM t ORDER BY id"),
        vec![
            "1|a|7|dflt",
            "2|b|7|dflt",
            "3|c|7|dflt",
            "4|d|1|NULL",
            "10|e|2|x",
            "11|f|7|dflt"
        ]
    );
    // A failing multi-row insert leaves nothing behind (statement atomicity).
    expect_err(
        &mut c,
        "INSERT INTO t (u) VALUES ('g'), ('h'), ('a')",
        1062,
        "23000",
    );
    assert_eq!(
        q_i64(&mut c, "SELECT COUNT(*) FROM t WHERE u IN ('g','h')"),
        0
    );

    // ON DUPLICATE KEY UPDATE: 1 = inserted, 2 = updated, 0 = unchanged;
    // a conflict on the unique key updates that row.
    assert_eq!(
        affected(
            &mut c,
            "INSERT INTO t (u, g) VALUES ('a', 5) ON DUPLICATE KEY UPDATE g = g + 100"
        ),
        2
    );
    assert_eq!(
        affected(
            &mut c,
            "INSERT INTO t (u, g) VALUES ('a', 5) ON DUPLICATE KEY UPDATE g = 107"
        ),
        0
    );
    assert_eq!(
        affected(
            &mut c,
            "INSERT INTO t (id, u, g) VALUES (2, 'zz', 5) ON DUPLICATE KEY UPDATE s = VALUES(u), g = VALUES(g)"
        ),
        2
    );
    assert_eq!(
        affected(
            &mut c,
            "INSERT INTO t (id, u) VALUES (20, 'new') ON DUPLICATE KEY UPDATE g = 0"
        ),
        1
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT id, u, g, s FROM t WHERE id = 1 OR id = 2 OR id = 20 ORDER BY id"
        ),
        vec!["1|a|107|dflt", "2|b|5|zz", "20|new|7|dflt"]
    );

    // REPLACE: 1 = plain insert, 2 = one row replaced, 3 = two rows
    // (primary and unique key conflicts with different rows) replaced.
    assert_eq!(
        affected(&mut c, "REPLACE INTO t (id, u) VALUES (30, 'r')"),
        1
    );
    assert_eq!(
        affected(&mut c, "REPLACE INTO t (id, u, g) VALUES (30, 'r2', 1)"),
        2
    );
    assert_eq!(
        affected(&mut c, "REPLACE INTO t (id, u, g) VALUES (3, 'r2', 9)"),
        3
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT id, u, g, s FROM t WHERE id IN (3, 30) OR u LIKE 'r%'"
        ),
        vec!["3|r2|9|dflt"]
    );

    // UPDATE / DELETE with WHERE, ORDER BY and LIMIT.
    exec(&mut c, "TRUNCATE TABLE t");
    exec(
        &mut c,
        "INSERT INTO t (id, u, g) VALUES (1,'a',1),(2,'b',1),(3,'c',2),(4,'d',2),(5,'e',3),(6,'f',3)",
    );
    assert_eq!(affected(&mut c, "UPDATE t SET g = g * 10 WHERE g = 2"), 2);
    assert_eq!(info(&c), "Rows matched: 2  Changed: 2  Warnings: 0");
    assert_eq!(affected(&mut c, "UPDATE t SET g = 1 WHERE id <= 3"), 1);
    assert_eq!(info(&c), "Rows matched: 3  Changed: 1  Warnings: 0");
    assert_eq!(
        affected(&mut c, "UPDATE t SET s = 'top' ORDER BY g DESC, id LIMIT 2"),
        2
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM t WHERE s = 'top' ORDER BY id"),
        vec!["4", "5"]
    );
    assert_eq!(
        affected(
            &mut c,
            "DELETE FROM t WHERE g < 100 ORDER BY id DESC LIMIT 2"
        ),
        2
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM t ORDER BY id"),
        vec!["1", "2", "3", "4"]
    );
    assert_eq!(affected(&mut c, "DELETE FROM t WHERE id = 99"), 0);
    assert_eq!(
        affected(
            &mut c,
            "UPDATE t SET u = CONCAT(u, u), g = g + 1 WHERE id IN (1, 4)"
        ),
        2
    );
    assert_eq!(
        both(&mut c, "SELECT id, u, g FROM t ORDER BY id"),
        vec!["1|aa|2", "2|b|1", "3|c|1", "4|dd|21"]
    );
    // Updating a primary key moves the row.
    exec(&mut c, "UPDATE t SET id = 40 WHERE id = 4");
    assert_eq!(q(&mut c, "SELECT id FROM t WHERE u = 'dd'"), vec!["40"]);
    expect_err(&mut c, "UPDATE t SET id = 1 WHERE id = 2", 1062, "23000");
    assert_eq!(affected(&mut c, "DELETE FROM t"), 4);
    assert!(q(&mut c, "SELECT * FROM t").is_empty());

    // The same DML through prepared statements with parameters.
    let ins = c.prep("INSERT INTO t (id, u, g) VALUES (?, ?, ?)").unwrap();
    for i in 1..=5i64 {
        c.exec_drop(&ins, (i, format!("p{i}"), i * i)).unwrap();
        assert_eq!(c.affected_rows(), 1);
    }
    c.exec_drop(
        "INSERT INTO t (id, u, g) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE g = g + ?",
        (3, "p3", 0, 1000),
    )
    .unwrap();
    assert_eq!(c.affected_rows(), 2);
    c.exec_drop("UPDATE t SET g = g - ? WHERE id BETWEEN ? AND ?", (1, 2, 4))
        .unwrap();
    assert_eq!(c.affected_rows(), 3);
    c.exec_drop("DELETE FROM t WHERE u = ?", ("p5",)).unwrap();
    assert_eq!(c.affected_rows(), 1);
    assert_eq!(
        qp(&mut c, "SELECT id, g FROM t WHERE id > ? ORDER BY id", (0,)),
        vec!["1|1", "2|3", "3|1008", "4|15"]
    );
}

#[test]
fn select_features_agree_in_both_protocols() {
    let srv = Server::start("select");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE e (id INT PRIMARY KEY, name VARCHAR(20), dept CHAR(3),
            salary DECIMAL(8,2), bonus INT, hired DATE, KEY kd (dept))",
    );
    exec(
        &mut c,
        "INSERT INTO e VALUES
            (1,'alice','eng',100.50,10,'2020-01-15'),
            (2,'bob','eng',90.00,NULL,'2021-03-01'),
            (3,'carol','ops',70.25,5,'2019-07-30'),
            (4,'dave','ops',70.25,NULL,NULL),
            (5,'eve',NULL,120.00,20,'2022-12-31'),
            (6,'alan','eng',55.75,0,'2018-02-28')",
    );
    let cases: &[(&str, &[&str])] = &[
        ("SELECT id FROM e WHERE dept = 'ops' ORDER BY id", &["3", "4"]),
        ("SELECT id FROM e WHERE salary < 70.25", &["6"]),
        ("SELECT id FROM e WHERE id BETWEEN 2 AND 4", &["2", "3", "4"]),
        ("SELECT id FROM e WHERE id NOT BETWEEN 2 AND 5", &["1", "6"]),
        ("SELECT id FROM e WHERE id IN (5, 1, 9)", &["1", "5"]),
        ("SELECT id FROM e WHERE dept NOT IN ('eng')", &["3", "4"]),
        (
            "SELECT id FROM e WHERE dept = 'eng' AND (bonus > 5 OR bonus IS NULL)",
            &["1", "2"],
        ),
        ("SELECT id FROM e WHERE bonus IS NULL", &["2", "4"]),
        ("SELECT id FROM e WHERE dept IS NOT NULL AND bonus = 0", &["6"]),
        ("SELECT id FROM e WHERE name LIKE 'a%'", &["1", "6"]),
        ("SELECT id FROM e WHERE name LIKE '_a%'", &["3", "4"]),
        ("SELECT id FROM e WHERE name NOT LIKE '%e'", &["2", "3", "6"]),
        ("SELECT id FROM e WHERE hired < '2020-01-01'", &["3", "6"]),
        ("SELECT id FROM e WHERE bonus = NULL", &[]),
        (
            "SELECT id, salary * 2, bonus + 1, -id, id % 4, 7 / 2, 7 DIV 2 FROM e WHERE id = 2",
            &["2|180.00|NULL|-2|2|3.5000|3"],
        ),
        (
            "SELECT CONCAT(name, '@', dept), UPPER(name), LENGTH(name), COALESCE(bonus, -1), IFNULL(dept, 'none') FROM e WHERE id >= 4 AND id <= 5 ORDER BY id",
            &["dave@ops|DAVE|4|-1|ops", "NULL|EVE|3|20|none"],
        ),
        ("SELECT id FROM e ORDER BY salary DESC, id ASC", &["5", "1", "2", "3", "4", "6"]),
        ("SELECT id FROM e ORDER BY bonus, id", &["2", "4", "6", "3", "1", "5"]),
        ("SELECT id FROM e ORDER BY bonus DESC, id DESC", &["5", "1", "3", "6", "4", "2"]),
        ("SELECT id FROM e ORDER BY id LIMIT 2", &["1", "2"]),
        ("SELECT id FROM e ORDER BY id DESC LIMIT 2 OFFSET 1", &["5", "4"]),
        ("SELECT id FROM e ORDER BY id LIMIT 4, 10", &["5", "6"]),
        ("SELECT id FROM e ORDER BY id LIMIT 10 OFFSET 10", &[]),
        ("SELECT DISTINCT dept FROM e ORDER BY dept", &["NULL", "eng", "ops"]),
        ("SELECT DISTINCT salary FROM e WHERE dept = 'ops'", &["70.25"]),
        (
            "SELECT dept, COUNT(*), COUNT(bonus), SUM(salary), AVG(salary), MIN(name), MAX(hired) FROM e GROUP BY dept ORDER BY dept",
            &[
                "NULL|1|1|120.00|120.000000|eve|2022-12-31",
                "eng|3|2|246.25|82.083333|alan|2021-03-01",
                "ops|2|1|140.50|70.250000|carol|2019-07-30",
            ],
        ),
        (
            "SELECT COUNT(*), SUM(bonus), AVG(bonus), MIN(bonus), MAX(bonus) FROM e",
            &["6|35|8.7500|0|20"],
        ),
        (
            "SELECT COUNT(*), SUM(bonus), MAX(id) FROM e WHERE id > 100",
            &["0|NULL|NULL"],
        ),
        (
            "SELECT dept, COUNT(*) AS n FROM e GROUP BY dept HAVING n > 1 ORDER BY n DESC",
            &["eng|3", "ops|2"],
        ),
        ("SELECT COUNT(DISTINCT dept) FROM e", &["2"]),
        (
            "SELECT NULL, 1 + NULL, NULL = NULL, NULL IS NULL, NULL <=> NULL, COALESCE(bonus, 99) FROM e WHERE id = 2",
            &["NULL|NULL|NULL|1|1|99"],
        ),
        ("SELECT 1 = 1, 1 < 0, 'a' = 'a ', 2 BETWEEN 1 AND 3", &["1|0|1|1"]),
    ];
    for (sql, want) in cases {
        assert_eq!(both(&mut c, sql), *want, "{sql}");
    }
    // The same predicates with parameters (binary protocol).
    assert_eq!(
        qp(
            &mut c,
            "SELECT id FROM e WHERE dept = ? AND salary BETWEEN ? AND ? ORDER BY id",
            ("eng", 56, 100.5)
        ),
        vec!["1", "2"]
    );
    assert_eq!(
        qp(
            &mut c,
            "SELECT id FROM e WHERE name LIKE ? OR id IN (?, ?) ORDER BY id DESC LIMIT ?",
            ("%o%", 6, 1, 3)
        ),
        vec!["6", "3", "2"]
    );
    assert_eq!(
        qp(
            &mut c,
            "SELECT ? + 1, ?, ? IS NULL",
            (41, "txt", None::<i32>)
        ),
        vec!["42|txt|1"]
    );
}

#[test]
fn prepared_statements_across_ddl_and_param_types() {
    let srv = Server::start("prepared");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(10))",
    );
    exec(&mut c, "INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b')");
    let run = |c: &mut Conn, st: &mysql::Statement, p: Vec<Value>| -> mysql::Result<Vec<String>> {
        let rows: Vec<mysql::Row> = c.exec(st, p)?;
        Ok(rows
            .iter()
            .map(|r| common::join_row(&common::row_strings(r)))
            .collect())
    };
    // One statement executed with parameters whose types change.
    let st = c.prep("SELECT id FROM t WHERE v = ?").unwrap();
    for (p, want) in [
        (Value::Int(10), vec!["1"]),
        (Value::Bytes(b"20".to_vec()), vec!["2"]),
        (Value::Double(10.0), vec!["1"]),
        (Value::UInt(20), vec!["2"]),
        (Value::NULL, vec![]),
        (Value::Int(10), vec!["1"]),
    ] {
        assert_eq!(run(&mut c, &st, vec![p.clone()]).unwrap(), want, "{p:?}");
    }
    // DDL between executions: a new index, a dropped table, a recreated one.
    let sel = c.prep("SELECT v, s FROM t WHERE id = ?").unwrap();
    assert_eq!(run(&mut c, &sel, vec![2.into()]).unwrap(), vec!["20|b"]);
    exec(&mut c, "CREATE INDEX ks ON t (s)");
    assert_eq!(run(&mut c, &sel, vec![2.into()]).unwrap(), vec!["20|b"]);
    exec(&mut c, "DROP TABLE t");
    let e = common::server_err(run(&mut c, &sel, vec![2.into()]));
    assert_eq!((e.code, e.state.as_str()), (1146, "42S02"));
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), v VARCHAR(10))",
    );
    exec(&mut c, "INSERT INTO t VALUES (2, 'new', 'vee')");
    assert_eq!(run(&mut c, &sel, vec![2.into()]).unwrap(), vec!["vee|new"]);
    // Many statements: the client closes old ones (COM_STMT_CLOSE) as its
    // cache overflows; every one still answers correctly.
    for i in 0..100i64 {
        assert_eq!(
            qp(&mut c, &format!("SELECT ? + {i}"), (i,)),
            vec![(2 * i).to_string()]
        );
    }
    // Statements without a cached plan (SET, SHOW) also run prepared.
    c.exec_drop("SET @x = 5", ()).unwrap();
    assert_eq!(q1(&mut c, "SELECT @x"), "5");
    assert_eq!(qp(&mut c, "SHOW TABLES", ()), vec!["t"]);
}
