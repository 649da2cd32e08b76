//! information_schema through a Session: the views tools and ORMs read
//! (SCHEMATA, TABLES, COLUMNS, STATISTICS, TABLE_CONSTRAINTS,
//! KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, variables, status) answer
//! from the catalog as it is now, filter, join and group like tables, and
//! an unknown view is 1109. (Values shared with MariaDB are compared in the
//! server's diff_mariadb corpus.)
#![allow(clippy::unwrap_used)]
mod common;
use common::{err, q, texts, TestDb};

#[test]
fn views_describe_the_catalog() {
    let db = TestDb::open("sql-infoschema");
    let mut s = db.session(1, "root", None);
    for st in [
        "CREATE DATABASE shop",
        "USE shop",
        "CREATE TABLE customer (id INT PRIMARY KEY AUTO_INCREMENT, email VARCHAR(80) NOT NULL, \
         balance DECIMAL(10,2) DEFAULT '0.00', born DATE, UNIQUE KEY u_email (email))",
        "CREATE TABLE orders (id BIGINT UNSIGNED PRIMARY KEY, cust INT, placed DATETIME(3), \
         note TEXT, KEY k_cust_placed (cust, placed), \
         CONSTRAINT fk_cust FOREIGN KEY (cust) REFERENCES customer(id) ON DELETE CASCADE)",
        "INSERT INTO customer (email) VALUES ('a@x'), ('b@x')",
    ] {
        q(&mut s, st);
    }
    let t = |s: &mut sql::Session, sql: &str| texts(q(s, sql));
    assert_eq!(
        t(
            &mut s,
            "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, AUTO_INCREMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME"
        ),
        vec![
            "customer|BASE TABLE|STRATA|3",
            "orders|BASE TABLE|STRATA|NULL"
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT column_name, ordinal_position, column_default, is_nullable, data_type, \
             character_maximum_length, numeric_precision, numeric_scale, datetime_precision, \
             column_type, column_key, extra FROM information_schema.columns \
             WHERE table_schema = 'shop' ORDER BY table_name, ordinal_position"
        ),
        vec![
            "id|1|NULL|NO|int|NULL|10|0|NULL|int|PRI|auto_increment",
            "email|2|NULL|NO|varchar|80|NULL|NULL|NULL|varchar(80)|UNI|",
            "balance|3|'0.00'|YES|decimal|NULL|10|2|NULL|decimal(10,2)||",
            "born|4|NULL|YES|date|NULL|NULL|NULL|NULL|date||",
            "id|1|NULL|NO|bigint|NULL|20|0|NULL|bigint unsigned|PRI|",
            "cust|2|NULL|YES|int|NULL|10|0|NULL|int|MUL|",
            "placed|3|NULL|YES|datetime|NULL|NULL|NULL|3|datetime(3)||",
            "note|4|NULL|YES|text|65535|NULL|NULL|NULL|text||",
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE \
             FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'shop' \
             ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX"
        ),
        vec![
            "customer|PRIMARY|1|id|0",
            "customer|u_email|1|email|0",
            // Names compare case-insensitively (utf8mb4_general_ci), as in MariaDB.
            "orders|k_cust_placed|1|cust|1",
            "orders|k_cust_placed|2|placed|1",
            "orders|PRIMARY|1|id|0",
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT tc.TABLE_NAME, tc.CONSTRAINT_NAME, tc.CONSTRAINT_TYPE, k.COLUMN_NAME, \
             k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME \
             FROM information_schema.TABLE_CONSTRAINTS tc \
             JOIN information_schema.KEY_COLUMN_USAGE k \
               ON k.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND k.TABLE_NAME = tc.TABLE_NAME \
              AND k.CONSTRAINT_NAME = tc.CONSTRAINT_NAME \
             WHERE tc.TABLE_SCHEMA = 'shop' ORDER BY 1, 2"
        ),
        vec![
            "customer|PRIMARY|PRIMARY KEY|id|NULL|NULL",
            "customer|u_email|UNIQUE|email|NULL|NULL",
            "orders|fk_cust|FOREIGN KEY|cust|customer|id",
            "orders|PRIMARY|PRIMARY KEY|id|NULL|NULL",
        ]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT CONSTRAINT_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE, \
             REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS"
        ),
        vec!["fk_cust|PRIMARY|RESTRICT|CASCADE|customer"]
    );
    // The views follow DDL at once.
    q(&mut s, "CREATE INDEX k_born ON customer (born)");
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE INDEX_NAME = 'k_born'"
        ),
        vec!["1"]
    );
    // Schemata, variables, status, a grouped query, and USE/SHOW TABLES.
    assert_eq!(
        t(
            &mut s,
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"
        ),
        vec!["information_schema", "shop", "test"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES \
             WHERE VARIABLE_NAME = 'AUTOCOMMIT'"
        ),
        vec!["1"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) > 10 FROM information_schema.GLOBAL_STATUS"
        ),
        vec!["1"]
    );
    assert_eq!(
        t(
            &mut s,
            "SELECT TABLE_NAME, COUNT(*) FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'shop' GROUP BY TABLE_NAME ORDER BY 1"
        ),
        vec!["customer|4", "orders|4"]
    );
    q(&mut s, "USE information_schema");
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM tables WHERE table_schema = 'shop'"
        ),
        vec!["2"]
    );
    let views = t(&mut s, "SHOW TABLES");
    assert!(views.contains(&"KEY_COLUMN_USAGE".to_string()), "{views:?}");
    assert_eq!(err(&mut s, "SELECT * FROM information_schema.nope"), 1109);
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM information_schema.VIEWS"),
        vec!["0"]
    );
    // A prepared statement sees the catalog at its execution, not its preparation.
    q(&mut s, "USE shop");
    let n = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop'";
    assert_eq!(t(&mut s, n), vec!["2"]);
    q(&mut s, "CREATE TABLE extra (id INT PRIMARY KEY)");
    assert_eq!(t(&mut s, n), vec!["3"]);
}
