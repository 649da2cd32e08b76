//! Binary data survives the text protocol byte-exact (issue 14 item 1): statement text stays
//! bytes until the connection's character set says how to read it, so every byte of a string
//! literal reaches a BLOB as sent (with and without `_binary`, as PyMySQL and mysqldump send
//! them), a latin1 client's text is read and answered as latin1, and bytes that are not UTF-8
//! are refused by text columns (1366) instead of being stored.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, login, login_with, raw_exec, raw_query, Server};
use mysql::prelude::Queryable;

/// Escapes bytes as PyMySQL's escape_string does.
fn escape(b: &[u8]) -> Vec<u8> {
    let mut o = Vec::new();
    for &c in b {
        match c {
            0 => o.extend_from_slice(b"\\0"),
            b'\n' => o.extend_from_slice(b"\\n"),
            b'\r' => o.extend_from_slice(b"\\r"),
            26 => o.extend_from_slice(b"\\Z"),
            b'\'' => o.extend_from_slice(b"\\'"),
            b'"' => o.extend_from_slice(b"\\\""),
            b'\\' => o.extend_from_slice(b"\\\\"),
            c => o.push(c),
        }
    }
    o
}

#[test]
fn every_byte_reaches_a_blob_through_the_text_protocol() {
    let srv = Server::start("bytes-blob");
    let mut c = srv.fresh_db("b");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, v BLOB, s VARCHAR(10))",
    );
    let all: Vec<u8> = (0..=255).collect();
    let mut raw = login(srv.port, Some("b")).unwrap();
    for (id, intro) in [(1, &b"_binary"[..]), (2, b""), (3, b"_binary ")] {
        let mut q = format!("INSERT INTO t (id, v) VALUES ({id}, ").into_bytes();
        q.extend_from_slice(intro);
        q.push(b'\'');
        q.extend(escape(&all));
        q.extend_from_slice(b"')");
        raw_exec(&mut raw, &q).unwrap_or_else(|e| panic!("insert {id}: error {e}"));
    }
    c.exec_drop("INSERT INTO t (id, v) VALUES (?, ?)", (4, all.clone()))
        .unwrap();
    for id in 1..=4 {
        let v: Vec<u8> = c
            .query_first(format!("SELECT v FROM t WHERE id = {id}"))
            .unwrap()
            .unwrap();
        assert_eq!(v.len(), 256, "row {id}");
        assert_eq!(v, all, "row {id}");
        // Both protocols give the bytes back.
        let p: Vec<u8> = c
            .exec_first("SELECT v FROM t WHERE id = ?", (id,))
            .unwrap()
            .unwrap();
        assert_eq!(p, all, "row {id} (binary protocol)");
    }
    // Comparisons see the same bytes.
    let mut q = b"SELECT id FROM t WHERE v = _binary'".to_vec();
    q.extend(escape(&all));
    q.extend_from_slice(b"' ORDER BY id");
    let ids: Vec<Option<Vec<u8>>> = raw_query(&mut raw, &q);
    assert_eq!(ids.len(), 4);
    // Not UTF-8 into a utf8mb4 column: refused, not stored.
    assert_eq!(
        raw_exec(&mut raw, b"UPDATE t SET s = '\xe9t\xe9' WHERE id = 1"),
        Err(1366)
    );
    assert_eq!(
        raw_exec(&mut raw, b"UPDATE t SET s = X'FF' WHERE id = 1"),
        Err(1366)
    );
    // Bytes that are not UTF-8 outside a literal: an error.
    assert_eq!(raw_exec(&mut raw, b"SELECT 1 FROM t\xff"), Err(1300));
}

#[test]
fn a_latin1_client_is_read_and_answered_in_latin1() {
    let srv = Server::start("bytes-latin1");
    let mut c = srv.fresh_db("l");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))");
    // Handshake collation 8 (latin1_swedish_ci).
    let mut l = login_with(srv.port, Some("l"), 8).unwrap();
    raw_exec(&mut l, b"INSERT INTO t VALUES (1, '\xe9\x80')").unwrap();
    let s: String = c
        .query_first("SELECT s FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(s, "é€");
    assert_eq!(
        raw_query(&mut l, b"SELECT s FROM t"),
        vec![Some(b"\xe9\x80".to_vec())]
    );
    // SET NAMES switches a connection both ways.
    let mut u = login(srv.port, Some("l")).unwrap();
    raw_exec(&mut u, b"SET NAMES latin1").unwrap();
    raw_exec(&mut u, b"INSERT INTO t VALUES (2, '\xfc')").unwrap();
    assert_eq!(
        raw_query(&mut u, b"SELECT s FROM t WHERE id = 2"),
        vec![Some(b"\xfc".to_vec())]
    );
    raw_exec(&mut u, b"SET NAMES utf8mb4").unwrap();
    assert_eq!(
        raw_query(&mut u, b"SELECT s FROM t WHERE id = 2"),
        vec![Some("ü".as_bytes().to_vec())]
    );
    // The handshake's collation becomes @@collation_connection; MySQL 8's
    // utf8mb4_0900_ai_ci (255), which MySQL 8 clients send by default,
    // connects with the character set's default, as MariaDB 10.11 does.
    for (id, want) in [
        (255, "utf8mb4_general_ci"),
        (224, "utf8mb4_unicode_ci"),
        (8, "latin1_swedish_ci"),
    ] {
        let mut m = login_with(srv.port, Some("l"), id).unwrap();
        assert_eq!(
            raw_query(&mut m, b"SELECT @@collation_connection"),
            vec![Some(want.as_bytes().to_vec())],
            "handshake collation {id}"
        );
    }
}

/// Binary columns and binary expressions are declared as MariaDB declares them (collation 63
/// `binary` and the BINARY flag) and their bytes pass through untouched whatever
/// character_set_results says; text columns are declared in, and converted to, the results'
/// character set. Both protocols.
#[test]
fn binary_results_are_declared_binary_and_never_converted() {
    let srv = Server::start("bytes-binmeta");
    let mut c = srv.fresh_db("m");
    exec(
        &mut c,
        "CREATE TABLE t (b BINARY(4), vb VARBINARY(10), bl BLOB, c CHAR(4), v VARCHAR(10), \
         tx TEXT, i INT)",
    );
    exec(
        &mut c,
        "INSERT INTO t VALUES (x'00ff', x'00ff', x'00ff', 'é', 'é', 'é', 1)",
    );
    let sql = "SELECT b, vb, bl, c, v, tx, x'00ff', CAST('é' AS BINARY), UNHEX('00FF'), \
               _binary'ab', TO_BASE64(vb) FROM t";
    let bin = |b: &[u8]| (63u16, true, Some(b.to_vec()));
    for (results, cs, e_acute) in [
        ("utf8mb4", 45u16, "é".as_bytes()),
        ("latin1", 8, &b"\xe9"[..]),
    ] {
        exec(&mut c, &format!("SET character_set_results = {results}"));
        let text = |v: &[u8]| (cs, false, Some(v.to_vec()));
        // (collation id, BINARY flag, bytes) of each column, as MariaDB 10.11 sends them.
        let want = vec![
            bin(b"\x00\xff\x00\x00"),
            bin(b"\x00\xff"),
            bin(b"\x00\xff"),
            text(e_acute),
            text(e_acute),
            text(e_acute),
            bin(b"\x00\xff"),
            bin("é".as_bytes()),
            bin(b"\x00\xff"),
            bin(b"ab"),
            // Text whatever its argument (MariaDB: utf8, no BINARY flag).
            text(b"AP8="),
        ];
        let text_rows: Vec<mysql::Row> = c.query(sql).unwrap();
        let bin_rows: Vec<mysql::Row> = c.exec(sql, ()).unwrap();
        for (proto, rows) in [("text", text_rows), ("binary", bin_rows)] {
            let got: Vec<(u16, bool, Option<Vec<u8>>)> = rows[0]
                .columns_ref()
                .iter()
                .enumerate()
                .map(|(i, col)| {
                    let v = match &rows[0][i] {
                        mysql::Value::Bytes(b) => Some(b.clone()),
                        mysql::Value::NULL => None,
                        other => panic!("column {i}: {other:?}"),
                    };
                    (
                        col.character_set(),
                        col.flags()
                            .contains(mysql::consts::ColumnFlags::BINARY_FLAG),
                        v,
                    )
                })
                .collect();
            assert_eq!(
                got, want,
                "character_set_results={results}, {proto} protocol"
            );
        }
    }
}
