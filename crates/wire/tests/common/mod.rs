//! A miniature MySQL server built on `wire::Conn`, shared by the integration tests and
//! `examples/mini_server.rs`. It knows a handful of fixed queries, echoes prepared
//! statement parameters back in a binary row, and authenticates four accounts.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

use wire::{
    cap, colflag, status, AuthPlugin, ColumnDef, ColumnType, Command, Conn, Credentials, ErrPacket,
    OkPacket, Param, ParamType,
};

pub const ST: u16 = status::SERVER_STATUS_AUTOCOMMIT;

/// COM_STMT_SEND_LONG_DATA packets received (all servers in the process).
pub static LONG_DATA_PACKETS: AtomicUsize = AtomicUsize::new(0);
/// (port, user, plugin) of every successful authentication.
pub static AUTH_LOG: Mutex<Vec<(u16, String, String)>> = Mutex::new(Vec::new());

/// The plugins that authenticated `user` on `port`.
pub fn plugins_used(port: u16, user: &str) -> Vec<String> {
    let log = AUTH_LOG.lock().unwrap_or_else(|e| e.into_inner());
    log.iter()
        .filter(|(p, u, _)| *p == port && u == user)
        .map(|(_, _, pl)| pl.clone())
        .collect()
}

#[derive(Clone, Copy, Debug)]
pub struct ServerConfig {
    pub default_plugin: AuthPlugin,
    /// Advertise CLIENT_DEPRECATE_EOF.
    pub deprecate_eof: bool,
    pub max_packet: Option<usize>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            default_plugin: AuthPlugin::NativePassword,
            deprecate_eof: true,
            max_packet: None,
        }
    }
}

/// Accounts: root (no password), u/secret (both hashes), nat/natpw (native hash
/// only), sha/shapw (sha2 hash only).
pub fn lookup(user: &str) -> Option<Credentials> {
    match user {
        "root" => Some(Credentials::empty()),
        "u" => Some(Credentials::from_password(b"secret")),
        "nat" => Some(Credentials {
            native_hash: Some(wire::native_password_hash(b"natpw")),
            sha2_hash: None,
            sha2_auth: None,
            any_password: false,
        }),
        "sha" => Some(Credentials {
            native_hash: None,
            sha2_hash: Some(wire::sha2_password_hash(b"shapw")),
            sha2_auth: None,
            any_password: false,
        }),
        _ => None,
    }
}

/// Starts a server on 127.0.0.1:0 and returns its port. The accept loop runs until the
/// process exits.
pub fn start(cfg: ServerConfig) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    thread::spawn(move || serve(listener, cfg));
    port
}

pub fn serve(listener: TcpListener, cfg: ServerConfig) {
    static IDS: AtomicU32 = AtomicU32::new(1);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let id = IDS.fetch_add(1, Ordering::Relaxed);
        thread::spawn(move || {
            let _ = handle(stream, id, cfg);
        });
    }
}

struct Stmt {
    nparams: usize,
    ncols: usize,
    kind: StmtKind,
    types: Vec<ParamType>,
    long_data: Vec<Option<Vec<u8>>>,
}

#[derive(PartialEq)]
enum StmtKind {
    Echo,
    Typed,
    NoResult,
}

fn ok(conn: &mut Conn<TcpStream>) -> wire::Result<()> {
    conn.send_ok(&OkPacket {
        status: ST,
        ..Default::default()
    })
}

pub fn handle(stream: TcpStream, id: u32, cfg: ServerConfig) -> wire::Result<()> {
    stream.set_nodelay(true)?;
    let port = stream.local_addr()?.port();
    let mut conn = Conn::new(stream, id, "8.0.36-strata-test");
    conn.set_default_auth_plugin(cfg.default_plugin);
    conn.set_capability(cap::CLIENT_DEPRECATE_EOF, cfg.deprecate_eof);
    conn.set_capability(cap::CLIENT_MULTI_STATEMENTS, true);
    if let Some(m) = cfg.max_packet {
        conn.set_max_packet(m);
    }
    let info = conn.handshake_with(&lookup, &|info| match info.database.as_deref() {
        Some("bad") => Err(ErrPacket::new(1049, "42000", "Unknown database 'bad'")),
        _ => Ok(()),
    })?;
    if std::env::var_os("MINI_SERVER_VERBOSE").is_some() {
        eprintln!(
            "conn {id}: user={} db={:?} plugin={} caps={:#010x} deprecate_eof={} attrs={:?}",
            info.user,
            info.database,
            info.auth_plugin,
            info.capabilities,
            conn.deprecate_eof(),
            info.attrs
        );
    }
    AUTH_LOG
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((port, info.user, info.auth_plugin));
    let mut stmts: HashMap<u32, Stmt> = HashMap::new();
    let mut next_stmt = 1u32;
    loop {
        let cmd = conn.read_command()?;
        match cmd {
            Command::Quit => return Ok(()),
            Command::Ping | Command::ResetConnection => ok(&mut conn)?,
            Command::InitDb(db) => {
                if db == b"bad" {
                    conn.send_err(1049, "42000", "Unknown database 'bad'")?
                } else {
                    ok(&mut conn)?
                }
            }
            Command::Query(sql) => query(&mut conn, &String::from_utf8_lossy(&sql))?,
            Command::FieldList { .. } => {
                let cols = [
                    ColumnDef::new("id", ColumnType::Long).with_table("db", "t"),
                    ColumnDef::new("name", ColumnType::VarString).with_table("db", "t"),
                ];
                conn.send_field_list(&cols, ST)?
            }
            Command::StmtPrepare(sql) => {
                let sql = String::from_utf8_lossy(&sql).to_lowercase();
                let nparams = sql.matches('?').count();
                let (kind, ncols) = if sql.contains("typed") {
                    (StmtKind::Typed, typed_cols().len())
                } else if sql.contains("noresult") {
                    (StmtKind::NoResult, 0)
                } else {
                    (StmtKind::Echo, nparams)
                };
                let params: Vec<ColumnDef> = (0..nparams)
                    .map(|_| ColumnDef::new("?", ColumnType::VarString))
                    .collect();
                let cols: Vec<ColumnDef> = if kind == StmtKind::Typed {
                    typed_cols()
                } else {
                    (0..ncols)
                        .map(|i| ColumnDef::new(&format!("p{i}"), ColumnType::VarString))
                        .collect()
                };
                let sid = next_stmt;
                next_stmt += 1;
                stmts.insert(
                    sid,
                    Stmt {
                        nparams,
                        ncols,
                        kind,
                        types: Vec::new(),
                        long_data: vec![None; nparams],
                    },
                );
                conn.send_prepare_ok(sid, &params, &cols, 0)?;
            }
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                LONG_DATA_PACKETS.fetch_add(1, Ordering::Relaxed);
                if let Some(slot) = stmts
                    .get_mut(&stmt_id)
                    .and_then(|s| s.long_data.get_mut(usize::from(param)))
                {
                    slot.get_or_insert_with(Vec::new).extend_from_slice(&data);
                }
                continue; // no reply
            }
            Command::StmtClose(id) => {
                stmts.remove(&id);
                continue; // no reply
            }
            Command::StmtReset(id) => match stmts.get_mut(&id) {
                Some(s) => {
                    s.long_data.iter_mut().for_each(|d| *d = None);
                    ok(&mut conn)?
                }
                None => conn.send_err(1243, "HY000", "Unknown prepared statement handler")?,
            },
            Command::StmtExecute(pkt) => match stmts.get_mut(&pkt.stmt_id) {
                None => conn.send_err(1243, "HY000", "Unknown prepared statement handler")?,
                Some(s) => {
                    match wire::decode_params(&pkt, s.nparams, &mut s.types, &mut s.long_data) {
                        Err(e) => {
                            conn.send_err(1210, "HY000", &format!("Incorrect arguments: {e}"))?
                        }
                        Ok(params) => {
                            if std::env::var_os("MINI_SERVER_VERBOSE").is_some() {
                                eprintln!(
                                    "conn {id}: execute {:?} types {:?} params {params:?}",
                                    pkt.params, s.types
                                );
                            }
                            execute(&mut conn, s, &params)?
                        }
                    }
                    s.long_data.iter_mut().for_each(|d| *d = None);
                }
            },
            Command::ChangeUser(cu) => {
                conn.change_user(&cu, &lookup)?;
                stmts.clear();
                continue; // already flushed
            }
            Command::Statistics => conn.send_packet(b"Uptime: 1  Threads: 1  Questions: 1")?,
            Command::SetOption(_) | Command::Debug => conn.send_eof(ST, 0)?,
            _ => conn.send_err(1047, "08S01", "Unknown command")?,
        }
        conn.flush()?;
    }
}

fn typed_cols() -> Vec<ColumnDef> {
    use ColumnType::*;
    vec![
        ColumnDef::new("tiny", Tiny),
        ColumnDef::new("utiny", Tiny).with_flags(colflag::UNSIGNED_FLAG),
        ColumnDef::new("short", Short),
        ColumnDef::new("long", Long),
        ColumnDef::new("int24", Int24),
        ColumnDef::new("longlong", LongLong),
        ColumnDef::new("year", Year),
        ColumnDef::new("float", Float),
        ColumnDef::new("double", Double),
        ColumnDef::new("decimal", NewDecimal),
        ColumnDef::new("date", Date),
        ColumnDef::new("datetime", DateTime),
        ColumnDef::new("time", Time),
        ColumnDef::new("null", Null),
        ColumnDef::new("text", VarString),
    ]
}

fn execute(conn: &mut Conn<TcpStream>, s: &Stmt, params: &[Param]) -> wire::Result<()> {
    match s.kind {
        StmtKind::NoResult => conn.send_ok(&OkPacket {
            affected_rows: params.len() as u64,
            last_insert_id: 7,
            status: ST,
            ..Default::default()
        }),
        StmtKind::Typed => {
            use ColumnType::*;
            conn.send_columns(&typed_cols())?;
            let mut r = conn.binary_row(typed_cols().len());
            r.push_i64(Tiny, -128)
                .push_u64(Tiny, 255)
                .push_i64(Short, -32768)
                .push_i64(Long, i64::from(i32::MIN))
                .push_i64(Int24, 8_388_607)
                .push_i64(LongLong, i64::MIN)
                .push_u64(Year, 2024)
                .push_f32(-1.25)
                .push_f64(std::f64::consts::PI)
                .push_display(&"-123.4500")
                .push_date(2024, 2, 29)
                .push_datetime(1999, 12, 31, 23, 59, 58, 123_456)
                .push_time(true, 34, 22, 59, 59, 0)
                .push_null()
                .push_str("héllo");
            r.finish()?;
            conn.finish_result_set(ST, 0)
        }
        StmtKind::Echo => {
            let cols: Vec<ColumnDef> = params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let name = format!("p{i}");
                    match p {
                        Param::Null => ColumnDef::new(&name, ColumnType::Null),
                        Param::Int(_) => ColumnDef::new(&name, ColumnType::LongLong),
                        Param::UInt(_) => ColumnDef::new(&name, ColumnType::LongLong)
                            .with_flags(colflag::UNSIGNED_FLAG),
                        Param::Float(_) => ColumnDef::new(&name, ColumnType::Float),
                        Param::Double(_) => ColumnDef::new(&name, ColumnType::Double),
                        Param::Bytes(_) => ColumnDef::new(&name, ColumnType::Blob),
                        Param::Date { .. } => ColumnDef::new(&name, ColumnType::Date),
                        Param::DateTime { .. } => ColumnDef::new(&name, ColumnType::DateTime),
                        Param::Time { .. } => ColumnDef::new(&name, ColumnType::Time),
                    }
                })
                .collect();
            conn.send_columns(&cols)?;
            let mut r = conn.binary_row(params.len());
            for p in params {
                match p {
                    Param::Null => r.push_null(),
                    Param::Int(v) => r.push_i64(ColumnType::LongLong, *v),
                    Param::UInt(v) => r.push_u64(ColumnType::LongLong, *v),
                    Param::Float(v) => r.push_f32(*v),
                    Param::Double(v) => r.push_f64(*v),
                    Param::Bytes(b) => r.push_bytes(b),
                    Param::Date { year, month, day } => r.push_date(*year, *month, *day),
                    Param::DateTime {
                        year,
                        month,
                        day,
                        hour,
                        minute,
                        second,
                        micro,
                    } => r.push_datetime(*year, *month, *day, *hour, *minute, *second, *micro),
                    Param::Time {
                        neg,
                        days,
                        hours,
                        minutes,
                        seconds,
                        micro,
                    } => r.push_time(*neg, *days, *hours, *minutes, *seconds, *micro),
                };
            }
            r.finish()?;
            conn.finish_result_set(ST, 0)
        }
    }
}

/// The fixed text result set of `SELECT 1`.
pub fn select1_cols() -> Vec<ColumnDef> {
    use ColumnType::*;
    vec![
        ColumnDef::new("a", LongLong),
        ColumnDef::new("b", VarString),
        ColumnDef::new("c", Null),
        ColumnDef::new("d", Double),
        ColumnDef::new("e", DateTime),
        ColumnDef::new("f", LongLong).with_flags(colflag::UNSIGNED_FLAG),
        ColumnDef::new("g", NewDecimal),
        ColumnDef::new("h", Blob),
        ColumnDef::new("i", Tiny),
        ColumnDef::new("j", Float),
    ]
}

fn query(conn: &mut Conn<TcpStream>, sql: &str) -> wire::Result<()> {
    let q = sql.trim().trim_end_matches(';').to_lowercase();
    if q == "select @@max_allowed_packet" {
        conn.send_columns(&[ColumnDef::new("@@max_allowed_packet", ColumnType::LongLong)])?;
        let mut r = conn.text_row();
        r.push_u64(64 << 20);
        r.finish()?;
        conn.finish_result_set(ST, 0)
    } else if q.starts_with("select @@version_comment") {
        conn.send_columns(&[ColumnDef::new("@@version_comment", ColumnType::VarString)])?;
        let mut r = conn.text_row();
        r.push_str("strata wire test server");
        r.finish()?;
        conn.finish_result_set(ST, 0)
    } else if q.starts_with("select 1") {
        conn.send_columns(&select1_cols())?;
        let mut r = conn.text_row();
        r.push_i64(1)
            .push_str("hello")
            .push_null()
            .push_f64(1.5)
            .push_str("2024-01-02 03:04:05")
            .push_u64(u64::MAX)
            .push_display(&"-12.345")
            .push_bytes(&[0xFF, 0x00, 0xFE])
            .push_i64(-5)
            .push_f32(0.25);
        r.finish()?;
        conn.finish_result_set(ST, 0)
    } else if let Some(n) = q.strip_prefix("select rows ") {
        let n: u64 = n.trim().parse().unwrap_or(0);
        conn.send_columns(&[
            ColumnDef::new("i", ColumnType::LongLong),
            ColumnDef::new("s", ColumnType::VarString),
        ])?;
        for i in 0..n {
            let mut r = conn.text_row();
            r.push_u64(i).push_display(&format_args!("row {i}"));
            r.finish()?;
        }
        conn.finish_result_set(ST, 0)
    } else if q == "select empty" {
        conn.send_columns(&[ColumnDef::new("x", ColumnType::Long)])?;
        conn.finish_result_set(ST, 0)
    } else if q == "multi" {
        conn.send_columns(&[ColumnDef::new("x", ColumnType::Long)])?;
        conn.send_text_row(&[Some(b"1")])?;
        conn.finish_result_set(ST | status::SERVER_MORE_RESULTS_EXISTS, 0)?;
        conn.send_columns(&[ColumnDef::new("y", ColumnType::Long)])?;
        conn.send_text_row(&[Some(b"2")])?;
        conn.finish_result_set(ST, 0)
    } else if q.starts_with("insert") {
        conn.send_ok(&OkPacket {
            affected_rows: 3,
            last_insert_id: 42,
            status: ST,
            warnings: 1,
            info: "Records: 3  Duplicates: 0  Warnings: 1".into(),
        })
    } else if q.starts_with("set ") || q.starts_with("do ") {
        ok(conn)
    } else {
        let near: String = sql.chars().take(80).collect();
        conn.send_err(
            1064,
            "42000",
            &format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line 1"
            ),
        )
    }
}
