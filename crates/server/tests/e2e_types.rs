//! Every column type through both protocols (prepared-statement parameters
//! in, text and binary rows out; SQL literals in, both out), NULL handling,
//! and values larger than one protocol packet.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, hex, q, qp, Server};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};

/// One value: (parameter, SQL literal, text the server must return; None = NULL).
type Cell = (Value, String, Option<String>);
type Rows = Vec<Vec<Option<String>>>;

/// One column: name, SQL type, and three values (a fourth row is NULL).
struct Col {
    name: &'static str,
    ty: &'static str,
    vals: [Cell; 3],
}

fn col(name: &'static str, ty: &'static str, vals: [Cell; 3]) -> Col {
    Col { name, ty, vals }
}

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A signed integer parameter.
fn i(n: i64) -> Cell {
    (Value::Int(n), n.to_string(), Some(n.to_string()))
}

/// An unsigned integer parameter.
fn u(n: u64) -> Cell {
    (Value::UInt(n), n.to_string(), Some(n.to_string()))
}

/// A string parameter read back unchanged.
fn s(v: &str) -> Cell {
    sx(v, v)
}

/// A string parameter read back as `want`.
fn sx(v: &str, want: &str) -> Cell {
    (
        Value::Bytes(v.as_bytes().to_vec()),
        lit(v),
        Some(want.to_string()),
    )
}

/// Any other parameter with its SQL literal and the text read back.
fn v(p: Value, sql: &str, want: &str) -> Cell {
    (p, sql.to_string(), Some(want.to_string()))
}

/// A DATE/DATETIME/TIME parameter whose quoted text is also what comes back.
fn t(p: Value, want: &str) -> Cell {
    (p, lit(want), Some(want.to_string()))
}

fn blob(bytes: &[u8]) -> Cell {
    let h = hex(bytes);
    (
        Value::Bytes(bytes.to_vec()),
        format!("X'{h}'"),
        Some(format!("0x{h}")),
    )
}

fn columns() -> Vec<Col> {
    use Value::{Date as D, Double, Float, Time};
    let long: String = (0..5000).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let x300 = "x".repeat(300);
    let all_bytes: Vec<u8> = (0..=255u8).collect();
    vec![
        col("ti", "TINYINT", [i(-128), i(127), s("-5")]),
        col("tu", "TINYINT UNSIGNED", [u(0), u(255), s("200")]),
        col("si", "SMALLINT", [i(-32768), i(32767), i(0)]),
        col("su", "SMALLINT UNSIGNED", [i(0), i(65535), s("4000")]),
        col("mi", "MEDIUMINT", [i(-8388608), i(8388607), i(-1)]),
        col("mu", "MEDIUMINT UNSIGNED", [u(0), u(16777215), i(77)]),
        col(
            "i",
            "INT",
            [i(i32::MIN.into()), i(i32::MAX.into()), s("42")],
        ),
        col("iu", "INT UNSIGNED", [u(0), u(4294967295), i(3000000000)]),
        col("bi", "BIGINT", [i(i64::MIN), i(i64::MAX), s("-9000000000")]),
        col(
            "bu",
            "BIGINT UNSIGNED",
            [u(0), u(u64::MAX), s("18446744073709551614")],
        ),
        col(
            "de",
            "DECIMAL(20,6)",
            [
                s("-99999999999999.999999"),
                v(Double(12.5), "12.5", "12.500000"),
                v(Value::Int(7), "7", "7.000000"),
            ],
        ),
        col(
            "f",
            "FLOAT",
            [
                v(Float(1.5), "1.5", "1.5"),
                v(Float(-0.25), "-0.25", "-0.25"),
                s("2.75"),
            ],
        ),
        col(
            "d",
            "DOUBLE",
            [
                v(Double(-2.5), "-2.5", "-2.5"),
                v(Double(1234567.125), "1234567.125", "1234567.125"),
                s("0.001"),
            ],
        ),
        col("c", "CHAR(10)", [s("abc"), s(""), sx("pad  ", "pad")]),
        col("v", "VARCHAR(300)", [s("héllo ✓ 😀"), s(""), s(&x300)]),
        col(
            "tx",
            "TEXT",
            [s("l1\nl2\t'q' \"dq\" \\bs"), s(&long), s("")],
        ),
        col("bl", "BLOB", [blob(&all_bytes), blob(&[0, 1, 0xfe]), s("")]),
        col(
            "dt",
            "DATE",
            [
                t(D(2024, 2, 29, 0, 0, 0, 0), "2024-02-29"),
                t(D(9999, 12, 31, 0, 0, 0, 0), "9999-12-31"),
                s("1000-01-01"),
            ],
        ),
        col(
            "dtt",
            "DATETIME",
            [
                t(D(2024, 2, 29, 13, 14, 15, 0), "2024-02-29 13:14:15"),
                t(D(9999, 12, 31, 23, 59, 59, 0), "9999-12-31 23:59:59"),
                s("1000-01-01 00:00:00"),
            ],
        ),
        col(
            "dt6",
            "DATETIME(6)",
            [
                t(D(2024, 1, 2, 3, 4, 5, 123456), "2024-01-02 03:04:05.123456"),
                sx("2000-01-01 00:00:00.5", "2000-01-01 00:00:00.500000"),
                t(
                    D(1999, 12, 31, 23, 59, 59, 999999),
                    "1999-12-31 23:59:59.999999",
                ),
            ],
        ),
        col(
            "tm",
            "TIME",
            [
                t(Time(false, 0, 12, 34, 56, 0), "12:34:56"),
                t(Time(true, 1, 2, 3, 4, 0), "-26:03:04"),
                s("838:59:59"),
            ],
        ),
        col("yr", "YEAR", [i(2024), s("1999"), i(2155)]),
        // An integer parameter or literal is the member number (SET: the bit mask).
        col(
            "en",
            "ENUM('a','b c','')",
            [s("a"), v(Value::Int(2), "2", "b c"), s("")],
        ),
        col(
            "st",
            "SET('x','y','z')",
            [s("x,z"), v(Value::Int(6), "6", "y,z"), s("")],
        ),
        col(
            "ts",
            "TIMESTAMP NULL",
            [
                t(D(2001, 2, 3, 4, 5, 6, 0), "2001-02-03 04:05:06"),
                s("2038-01-19 03:14:07"),
                t(D(1970, 1, 2, 0, 0, 0, 0), "1970-01-02 00:00:00"),
            ],
        ),
    ]
}

fn create(c: &mut Conn, table: &str, cols: &[Col]) {
    let defs: Vec<String> = cols
        .iter()
        .map(|c| format!("{} {}", c.name, c.ty))
        .collect();
    exec(
        c,
        &format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, {})",
            defs.join(", ")
        ),
    );
}

fn expected(cols: &[Col]) -> Rows {
    (0..4)
        .map(|r| {
            let mut row = vec![Some(r.to_string())];
            row.extend(cols.iter().map(|c| c.vals.get(r).and_then(|v| v.2.clone())));
            row
        })
        .collect()
}

fn read_both(c: &mut Conn, table: &str) -> (Rows, Rows) {
    let sql = format!("SELECT * FROM {table} ORDER BY id");
    let text: Vec<mysql::Row> = c.query(&sql).unwrap();
    let bin: Vec<mysql::Row> = c.exec(&sql, ()).unwrap();
    (
        text.iter().map(common::row_strings).collect(),
        bin.iter().map(common::row_strings).collect(),
    )
}

fn assert_rows(got: &[Vec<Option<String>>], want: &Rows, cols: &[Col], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: row count");
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
            let name = if i == 0 { "id" } else { cols[i - 1].name };
            assert_eq!(gv, wv, "{what}: row {r} column {name}");
        }
    }
}

#[test]
fn every_type_round_trips_through_both_protocols() {
    let srv = Server::start("types");
    let mut c = srv.fresh_db("d");
    let cols = columns();
    create(&mut c, "viaparams", &cols);
    create(&mut c, "viatext", &cols);
    let want = expected(&cols);

    // In through prepared-statement parameters (row 3 all NULL).
    let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
    let marks = vec!["?"; cols.len() + 1].join(", ");
    let ins = c
        .prep(format!(
            "INSERT INTO viaparams (id, {}) VALUES ({marks})",
            names.join(", ")
        ))
        .unwrap();
    for r in 0..4 {
        let mut params = vec![Value::Int(r as i64)];
        params.extend(
            cols.iter()
                .map(|c| c.vals.get(r).map(|v| v.0.clone()).unwrap_or(Value::NULL)),
        );
        c.exec_drop(&ins, params)
            .unwrap_or_else(|e| panic!("row {r}: {e}"));
    }
    // In through SQL literals.
    for r in 0..4 {
        let vals: Vec<String> = cols
            .iter()
            .map(|c| {
                c.vals
                    .get(r)
                    .map(|v| v.1.clone())
                    .unwrap_or_else(|| "NULL".into())
            })
            .collect();
        exec(
            &mut c,
            &format!("INSERT INTO viatext VALUES ({r}, {})", vals.join(", ")),
        );
    }
    for table in ["viaparams", "viatext"] {
        let (text, bin) = read_both(&mut c, table);
        assert_rows(&text, &want, &cols, &format!("{table}, text rows"));
        assert_rows(&bin, &want, &cols, &format!("{table}, binary rows"));
    }
    // Each value found again through a parameterized WHERE on its column.
    for (ci, col) in cols.iter().enumerate() {
        for (r, v) in col.vals.iter().enumerate() {
            if col.ty == "FLOAT" || v.2.as_deref() == Some("") && col.ty.starts_with("CHAR") {
                continue;
            }
            let got = qp(
                &mut c,
                &format!(
                    "SELECT id FROM viaparams WHERE {} = ? ORDER BY id",
                    col.name
                ),
                (v.0.clone(),),
            );
            assert!(
                got.contains(&r.to_string()),
                "column {} (#{ci}) = {:?}: {got:?}",
                col.name,
                v.0
            );
        }
        let nulls = q(
            &mut c,
            &format!("SELECT id FROM viaparams WHERE {} IS NULL", col.name),
        );
        assert_eq!(nulls, vec!["3"], "column {}", col.name);
    }
    // Column metadata: unsigned flags and types reach the client.
    let rows: Vec<mysql::Row> = c
        .query("SELECT tu, bu, de, dt, dtt, bl FROM viaparams WHERE id = 0")
        .unwrap();
    let meta: Vec<String> = rows[0]
        .columns_ref()
        .iter()
        .map(|c| {
            format!(
                "{:?}{}",
                c.column_type(),
                if c.flags()
                    .contains(mysql::consts::ColumnFlags::UNSIGNED_FLAG)
                {
                    "+u"
                } else {
                    ""
                }
            )
        })
        .collect();
    assert_eq!(
        meta,
        vec![
            "MYSQL_TYPE_TINY+u",
            "MYSQL_TYPE_LONGLONG+u",
            "MYSQL_TYPE_NEWDECIMAL",
            "MYSQL_TYPE_DATE",
            "MYSQL_TYPE_DATETIME",
            "MYSQL_TYPE_BLOB"
        ]
    );
}

#[test]
fn enum_and_set_columns_carry_their_flags() {
    let srv = Server::start("enumflags");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE m (id INT PRIMARY KEY, e ENUM('a','b'), s SET('x','y'))",
    );
    exec(&mut c, "INSERT INTO m VALUES (1, 'b', 'x,y')");
    let sql = "SELECT e, s FROM m";
    let text: Vec<mysql::Row> = c.query(sql).unwrap();
    let bin: Vec<mysql::Row> = c.exec(sql, ()).unwrap();
    for rows in [text, bin] {
        let meta: Vec<String> = rows[0]
            .columns_ref()
            .iter()
            .map(|col| {
                let f = col.flags();
                format!(
                    "{:?}{}{}",
                    col.column_type(),
                    if f.contains(mysql::consts::ColumnFlags::ENUM_FLAG) {
                        "+enum"
                    } else {
                        ""
                    },
                    if f.contains(mysql::consts::ColumnFlags::SET_FLAG) {
                        "+set"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        // What MariaDB sends for ENUM and SET columns.
        assert_eq!(
            meta,
            vec!["MYSQL_TYPE_STRING+enum", "MYSQL_TYPE_STRING+set"]
        );
        assert_eq!(
            common::row_strings(&rows[0]),
            vec![Some("b".to_string()), Some("x,y".to_string())]
        );
    }
}

#[test]
fn null_handling() {
    let srv = Server::start("nulls");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE n (id INT PRIMARY KEY, a INT, s VARCHAR(5) NOT NULL DEFAULT 'd', KEY ka (a))",
    );
    exec(
        &mut c,
        "INSERT INTO n (id, a) VALUES (1, NULL), (2, 5), (3, NULL)",
    );
    c.exec_drop(
        "INSERT INTO n (id, a, s) VALUES (?, ?, ?)",
        (4, None::<i64>, "x"),
    )
    .unwrap();
    assert_eq!(
        q(&mut c, "SELECT id, a, s FROM n ORDER BY id"),
        vec!["1|NULL|d", "2|5|d", "3|NULL|d", "4|NULL|x"]
    );
    // NULL never equals anything, sorts first, is skipped by aggregates.
    assert_eq!(
        q(&mut c, "SELECT id FROM n WHERE a = NULL OR a <> 5"),
        Vec::<String>::new()
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM n WHERE a IS NULL ORDER BY id"),
        vec!["1", "3", "4"]
    );
    assert_eq!(
        qp(&mut c, "SELECT id FROM n WHERE a = ?", (None::<i64>,)),
        Vec::<String>::new()
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM n WHERE a IN (5, NULL)"),
        vec!["2"]
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM n ORDER BY a, id"),
        vec!["1", "3", "4", "2"]
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM n ORDER BY a DESC, id"),
        vec!["2", "1", "3", "4"]
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*), COUNT(a), SUM(a), AVG(a), MIN(a), MAX(a) FROM n"
        ),
        vec!["4|1|5|5.0000|5|5"]
    );
    assert_eq!(
        q(&mut c, "SELECT a, COUNT(*) FROM n GROUP BY a ORDER BY a"),
        vec!["NULL|3", "5|1"]
    );
    assert_eq!(
        q(&mut c, "SELECT DISTINCT a FROM n ORDER BY a"),
        vec!["NULL", "5"]
    );
    // Updating to and from NULL keeps the index right.
    exec(&mut c, "UPDATE n SET a = 7 WHERE id = 1");
    exec(&mut c, "UPDATE n SET a = NULL WHERE id = 2");
    assert_eq!(
        q(&mut c, "SELECT id FROM n WHERE a IS NULL ORDER BY id"),
        vec!["2", "3", "4"]
    );
    assert_eq!(q(&mut c, "SELECT id FROM n WHERE a = 7"), vec!["1"]);
    assert_eq!(
        q(&mut c, "SELECT id FROM n WHERE a = 5"),
        Vec::<String>::new()
    );
    assert_eq!(q(&mut c, "CHECK TABLE n"), vec!["d.n|check|status|OK"]);
}

#[test]
fn large_values_cross_packet_boundaries() {
    // 17 MiB: more than one 16 MiB packet each way; as a parameter the
    // client sends it with COM_STMT_SEND_LONG_DATA.
    let srv = Server::start("large");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB, t LONGTEXT)",
    );
    let blob: Vec<u8> = (0..17u32 << 20).map(|i| (i % 251) as u8).collect();
    c.exec_drop("INSERT INTO big (id, b) VALUES (?, ?)", (1, &blob))
        .unwrap();
    let text = "0123456789abcdef".repeat(17 << 16);
    exec(
        &mut c,
        &format!("INSERT INTO big (id, t) VALUES (2, '{text}')"),
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT id, LENGTH(b), LENGTH(t) FROM big ORDER BY id"
        ),
        vec!["1|17825792|NULL", "2|NULL|17825792"]
    );
    let b1: Vec<u8> = c
        .query_first("SELECT b FROM big WHERE id = 1")
        .unwrap()
        .unwrap();
    let b2: Vec<u8> = c
        .exec_first("SELECT b FROM big WHERE id = ?", (1,))
        .unwrap()
        .unwrap();
    assert!(b1 == blob && b2 == blob, "blob changed on the way");
    let t1: String = c
        .query_first("SELECT t FROM big WHERE id = 2")
        .unwrap()
        .unwrap();
    let t2: String = c
        .exec_first("SELECT t FROM big WHERE id = ?", (2,))
        .unwrap()
        .unwrap();
    assert!(t1 == text && t2 == text, "text changed on the way");
}
