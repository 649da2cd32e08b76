//! End-to-end tests: the `mysql` crate (a real client) against the mini server in
//! `common/`, over both auth plugins. The `mysql` crate does not really support
//! CLIENT_DEPRECATE_EOF (it always skips a packet after column definitions), so it
//! never negotiates it here; `raw_client.rs` checks the DEPRECATE_EOF packet flow.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use std::sync::OnceLock;

use common::{start, ServerConfig};
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Value};
use wire::AuthPlugin;

fn native_port() -> u16 {
    static P: OnceLock<u16> = OnceLock::new();
    *P.get_or_init(|| start(ServerConfig::default()))
}

fn sha2_port() -> u16 {
    static P: OnceLock<u16> = OnceLock::new();
    *P.get_or_init(|| {
        start(ServerConfig {
            default_plugin: AuthPlugin::CachingSha2Password,
            ..Default::default()
        })
    })
}

fn old_eof_port() -> u16 {
    static P: OnceLock<u16> = OnceLock::new();
    *P.get_or_init(|| {
        start(ServerConfig {
            deprecate_eof: false,
            ..Default::default()
        })
    })
}

fn opts(port: u16, user: &str, pass: Option<&str>, deprecate_eof: bool) -> OptsBuilder {
    let mut o = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some(user))
        .pass(pass)
        .prefer_socket(false);
    if deprecate_eof {
        o = o.additional_capabilities(CapabilityFlags::CLIENT_DEPRECATE_EOF);
    }
    o
}

fn connect(port: u16, user: &str, pass: Option<&str>) -> mysql::Result<Conn> {
    Conn::new(opts(port, user, pass, false))
}

fn server_error(r: mysql::Result<Conn>) -> mysql::MySqlError {
    match r {
        Err(mysql::Error::MySqlError(e)) => e,
        Err(e) => panic!("expected a server error, got {e:?}"),
        Ok(_) => panic!("expected a server error, connected"),
    }
}

fn bytes(v: &Value) -> &[u8] {
    match v {
        Value::Bytes(b) => b,
        other => panic!("expected bytes, got {other:?}"),
    }
}

fn check_select1(conn: &mut Conn) {
    let rows: Vec<mysql::Row> = conn.query("SELECT 1").unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let cols: Vec<String> = row
        .columns_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    assert_eq!(cols, ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
    let v: Vec<Value> = row.clone().unwrap();
    assert_eq!(bytes(&v[0]), b"1");
    assert_eq!(bytes(&v[1]), b"hello");
    assert_eq!(v[2], Value::NULL);
    assert_eq!(bytes(&v[3]), b"1.5");
    assert_eq!(bytes(&v[4]), b"2024-01-02 03:04:05");
    assert_eq!(bytes(&v[5]), b"18446744073709551615");
    assert_eq!(bytes(&v[6]), b"-12.345");
    assert_eq!(bytes(&v[7]), &[0xFF, 0x00, 0xFE]);
    assert_eq!(bytes(&v[8]), b"-5");
    assert_eq!(bytes(&v[9]), b"0.25");
    let row: mysql::Row = conn.query_first("select 1").unwrap().unwrap();
    assert_eq!(row.get::<i64, _>(0), Some(1));
    assert_eq!(row.get::<String, _>(1).as_deref(), Some("hello"));
    assert_eq!(row.get::<Option<i64>, _>(2), Some(None));
    assert_eq!(row.get::<f64, _>(3), Some(1.5));
    assert_eq!(row.get::<u64, _>(5), Some(u64::MAX));
}

#[test]
fn text_queries_both_eof_modes() {
    // The server without DEPRECATE_EOF must not negotiate it even when asked.
    for (port, deprecate) in [(native_port(), false), (old_eof_port(), true)] {
        let mut conn = Conn::new(opts(port, "root", None, deprecate)).unwrap();
        check_select1(&mut conn);
        let rows: Vec<(u64, String)> = conn.query("select rows 2000").unwrap();
        assert_eq!(rows.len(), 2000);
        assert_eq!(rows[1999], (1999, "row 1999".to_string()));
        let empty: Vec<i64> = conn.query("select empty").unwrap();
        assert!(empty.is_empty());
        // Two result sets in one response.
        let mut res = conn.query_iter("multi").unwrap();
        let mut sets = Vec::new();
        while let Some(set) = res.iter() {
            let vals: Vec<i64> = set.map(|r| mysql::from_row::<i64>(r.unwrap())).collect();
            sets.push(vals);
        }
        drop(res);
        assert_eq!(sets, vec![vec![1], vec![2]]);
        // OK packet fields.
        conn.query_drop("INSERT INTO t VALUES (1),(2),(3)").unwrap();
        assert_eq!(conn.affected_rows(), 3);
        assert_eq!(conn.last_insert_id(), 42);
        assert_eq!(conn.warnings(), 1);
        assert_eq!(conn.info_str(), "Records: 3  Duplicates: 0  Warnings: 1");
    }
}

#[test]
fn passwords_native_server() {
    let port = native_port();
    check_select1(&mut connect(port, "root", None).unwrap());
    check_select1(&mut connect(port, "u", Some("secret")).unwrap());
    check_select1(&mut connect(port, "nat", Some("natpw")).unwrap());
    // sha2-only account: the server switches the client to caching_sha2_password.
    check_select1(&mut connect(port, "sha", Some("shapw")).unwrap());

    assert!(common::plugins_used(port, "u")
        .iter()
        .all(|p| p == "mysql_native_password"));
    assert_eq!(common::plugins_used(port, "sha"), ["caching_sha2_password"]);
    let e = server_error(connect(port, "u", Some("wrong")));
    assert_eq!((e.code, e.state.as_str()), (1045, "28000"));
    assert_eq!(
        e.message,
        "Access denied for user 'u'@'localhost' (using password: YES)"
    );
    let e = server_error(connect(port, "u", None));
    assert_eq!(e.code, 1045);
    assert_eq!(
        e.message,
        "Access denied for user 'u'@'localhost' (using password: NO)"
    );
    let e = server_error(connect(port, "root", Some("x")));
    assert_eq!(e.code, 1045);
    let e = server_error(connect(port, "nobody", Some("x")));
    assert_eq!(e.code, 1045);
    let e = server_error(connect(port, "sha", Some("bad")));
    assert_eq!(e.code, 1045);
}

#[test]
fn passwords_caching_sha2_server() {
    let port = sha2_port();
    check_select1(&mut connect(port, "root", None).unwrap());
    check_select1(&mut connect(port, "u", Some("secret")).unwrap());
    check_select1(&mut connect(port, "sha", Some("shapw")).unwrap());
    // Native-only account: switched to mysql_native_password.
    check_select1(&mut connect(port, "nat", Some("natpw")).unwrap());
    assert!(common::plugins_used(port, "u")
        .iter()
        .all(|p| p == "caching_sha2_password"));
    assert_eq!(common::plugins_used(port, "sha"), ["caching_sha2_password"]);
    assert_eq!(common::plugins_used(port, "nat"), ["mysql_native_password"]);
    let e = server_error(connect(port, "u", Some("nope")));
    assert_eq!((e.code, e.state.as_str()), (1045, "28000"));
    let e = server_error(connect(port, "nat", Some("nope")));
    assert_eq!(e.code, 1045);
    let e = server_error(connect(port, "u", None));
    assert_eq!(e.code, 1045);
}

#[test]
fn initial_database_is_checked() {
    let port = native_port();
    let mut conn = Conn::new(opts(port, "root", None, false).db_name(Some("good"))).unwrap();
    conn.ping().unwrap();
    let e = server_error(Conn::new(
        opts(port, "root", None, false).db_name(Some("bad")),
    ));
    assert_eq!((e.code, e.state.as_str()), (1049, "42000"));
}

#[test]
fn errors_reach_the_client() {
    let mut conn = connect(native_port(), "root", None).unwrap();
    match conn.query_drop("BOGUS STATEMENT") {
        Err(mysql::Error::MySqlError(e)) => {
            assert_eq!((e.code, e.state.as_str()), (1064, "42000"));
            assert!(
                e.message.contains("near 'BOGUS STATEMENT'"),
                "{}",
                e.message
            );
        }
        other => panic!("expected ERR 1064, got {other:?}"),
    }
    // The connection is still usable afterwards.
    check_select1(&mut conn);
    conn.ping().unwrap();
    conn.select_db("somewhere").unwrap();
    match conn.select_db("bad") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1049),
        other => panic!("expected ERR 1049, got {other:?}"),
    }
    conn.reset().unwrap();
    check_select1(&mut conn);
}

#[test]
fn change_user() {
    let mut conn = connect(native_port(), "root", None).unwrap();
    let o = mysql::ChangeUserOpts::default()
        .with_user(Some("u".into()))
        .with_pass(Some("secret".into()));
    conn.change_user(o).unwrap();
    check_select1(&mut conn);
    let o = mysql::ChangeUserOpts::default()
        .with_user(Some("u".into()))
        .with_pass(Some("bad".into()));
    assert!(conn.change_user(o).is_err());
}

fn echo(conn: &mut Conn, params: Vec<Value>) -> Vec<Value> {
    let marks = vec!["?"; params.len()].join(",");
    let stmt = conn.prep(format!("SELECT {marks}")).unwrap();
    assert_eq!(stmt.num_params() as usize, params.len());
    let row: mysql::Row = conn.exec_first(&stmt, params).unwrap().unwrap();
    row.unwrap()
}

fn prepared_suite(conn: &mut Conn) {
    let blob: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let params = vec![
        Value::Int(i8::MIN as i64),
        Value::Int(i16::MAX as i64),
        Value::Int(i32::MIN as i64),
        Value::Int(i64::MIN),
        Value::Int(i64::MAX),
        Value::UInt(u64::MAX),
        Value::Float(3.5),
        Value::Double(-2.000000000000001e-300),
        Value::Bytes(b"".to_vec()),
        Value::Bytes("héllo wörld".as_bytes().to_vec()),
        Value::Bytes(vec![0xFF, 0xFE, 0x00, 0x80]),
        Value::Bytes(blob),
        Value::Date(2024, 2, 29, 0, 0, 0, 0),
        Value::Date(1999, 12, 31, 23, 59, 58, 0),
        Value::Date(2000, 1, 1, 0, 0, 1, 999_999),
        Value::Date(0, 0, 0, 0, 0, 0, 0),
        Value::Time(true, 3, 4, 5, 6, 7),
        Value::Time(false, 0, 23, 0, 0, 0),
        Value::Time(false, 0, 0, 0, 0, 0),
        Value::NULL,
    ];
    let got = echo(conn, params.clone());
    assert_eq!(got, params);
    // Statement re-use: the client sends types every time; values change.
    for i in 0..20i64 {
        let got = echo(
            conn,
            vec![
                Value::Int(i),
                Value::NULL,
                Value::Bytes(vec![b'x'; i as usize]),
            ],
        );
        assert_eq!(
            got,
            vec![
                Value::Int(i),
                Value::NULL,
                Value::Bytes(vec![b'x'; i as usize])
            ]
        );
    }
    // Every integer width the server can send in a binary row.
    let row: mysql::Row = conn.exec_first("select typed", ()).unwrap().unwrap();
    let v: Vec<Value> = row.unwrap();
    assert_eq!(
        v,
        vec![
            Value::Int(-128),
            Value::Int(255), // the client reports unsigned TINY as Int
            Value::Int(-32768),
            Value::Int(i32::MIN as i64),
            Value::Int(8_388_607),
            Value::Int(i64::MIN),
            Value::Int(2024),
            Value::Float(-1.25),
            Value::Double(std::f64::consts::PI),
            Value::Bytes(b"-123.4500".to_vec()),
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
            Value::Date(1999, 12, 31, 23, 59, 58, 123_456),
            Value::Time(true, 34, 22, 59, 59, 0),
            Value::NULL,
            Value::Bytes("héllo".as_bytes().to_vec()),
        ]
    );
    // A statement without a result set.
    conn.exec_drop("insert noresult ?, ?", (1, 2)).unwrap();
    assert_eq!(conn.affected_rows(), 2);
    assert_eq!(conn.last_insert_id(), 7);
}

#[test]
fn prepared_statements_round_trip() {
    // The server without DEPRECATE_EOF must not negotiate it even when asked.
    for (port, deprecate) in [(native_port(), false), (old_eof_port(), true)] {
        let mut conn = Conn::new(opts(port, "u", Some("secret"), deprecate)).unwrap();
        prepared_suite(&mut conn);
    }
}

#[test]
fn long_data_and_split_packets() {
    // > 16 MiB of parameters: the client sends them with COM_STMT_SEND_LONG_DATA
    // (chunks that fill a whole 0xFFFFFF packet), and the echoed row is a split packet.
    let mut conn = connect(native_port(), "root", None).unwrap();
    let big: Vec<u8> = (0..(17u32 << 20)).map(|i| (i % 253) as u8).collect();
    let params = vec![
        Value::Bytes(big.clone()),
        Value::Int(5),
        Value::Bytes(Vec::new()),
        Value::NULL,
    ];
    let before = common::LONG_DATA_PACKETS.load(std::sync::atomic::Ordering::Relaxed);
    let got = echo(&mut conn, params.clone());
    assert!(got == params, "17 MiB echo differs");
    // Two chunks for the big value, one (empty) for the empty one.
    assert!(common::LONG_DATA_PACKETS.load(std::sync::atomic::Ordering::Relaxed) >= before + 3);
    // A > 16 MiB text query result and query packet.
    let q = format!("SELECT 1 /* {} */", "x".repeat(17 << 20));
    let rows: Vec<mysql::Row> = conn.query(q).unwrap();
    assert_eq!(rows.len(), 1);
    check_select1(&mut conn);
}

#[test]
fn concurrent_clients() {
    let port = native_port();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let mut conn = if t % 2 == 0 {
                    connect(port, "root", None).unwrap()
                } else {
                    connect(port, "u", Some("secret")).unwrap()
                };
                for i in 0..50i64 {
                    check_select1(&mut conn);
                    let got = echo(
                        &mut conn,
                        vec![
                            Value::Int(i * t),
                            Value::Bytes(format!("t{t}").into_bytes()),
                        ],
                    );
                    assert_eq!(
                        got,
                        vec![
                            Value::Int(i * t),
                            Value::Bytes(format!("t{t}").into_bytes())
                        ]
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
