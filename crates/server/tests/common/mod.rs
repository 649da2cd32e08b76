//! Shared helpers of the end-to-end tests: start the real `strata` binary on
//! a free port with a fresh data directory (killed and removed by a Drop
//! guard, even when a test panics), connect with the `mysql` crate, compare
//! results as strings, check error codes, and a seeded random generator.
#![allow(dead_code, unused_imports)] // each test file uses a different subset

use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Row, Value};
use std::io::{BufRead, BufReader};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
pub use testkit::{Rng, TempDir};

pub mod maria;
pub mod replsrc;

/// `openssl` with `args` in `dir`.
pub fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run the openssl CLI");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed certificate and key for TLS.
pub fn tls_files(dir: &std::path::Path) -> Vec<String> {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-nodes",
            "-days",
            "2",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
            "-subj",
            "/CN=localhost",
        ],
    );
    vec![
        format!("--ssl-cert={}", dir.join("cert.pem").display()),
        format!("--ssl-key={}", dir.join("key.pem").display()),
    ]
}

/// A running `strata` server owned by one test.
pub struct Server {
    child: Option<Child>,
    pub port: u16,
    /// Temporary directory holding `data/` and `server.log`.
    pub root: PathBuf,
    pub datadir: PathBuf,
    pub log: PathBuf,
    args: Vec<String>,
    pub password: Option<String>,
}

fn unique_root(name: &str) -> PathBuf {
    testkit::unique_temp_path(&format!("e2e-{name}"))
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port()
}

impl Server {
    /// Starts a server with default options.
    pub fn start(name: &str) -> Server {
        Server::start_with(name, &[])
    }

    /// Starts a server with extra command-line options (`--x=y`).
    pub fn start_with(name: &str, extra: &[&str]) -> Server {
        let root = unique_root(name);
        Server::start_in(root.clone(), root.join("data"), extra)
    }

    /// Starts a server on an existing data directory (a restored backup);
    /// the directory is not removed with the server.
    pub fn start_on(name: &str, datadir: &std::path::Path, extra: &[&str]) -> Server {
        Server::start_in(unique_root(name), datadir.to_path_buf(), extra)
    }

    fn start_in(root: PathBuf, datadir: PathBuf, extra: &[&str]) -> Server {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create the test directory");
        let password = extra
            .iter()
            .find_map(|a| a.strip_prefix("--root-password="))
            .map(|s| s.to_string());
        let mut s = Server {
            child: None,
            port: 0,
            datadir,
            log: root.join("server.log"),
            root,
            args: extra.iter().map(|s| s.to_string()).collect(),
            password,
        };
        s.launch();
        s
    }

    /// Spawns the binary on a fresh port and waits until it accepts
    /// connections (retrying with another port if that one was taken).
    fn launch(&mut self) {
        self.launch_on(None)
    }

    /// `launch`, on port `fixed` when given (a replica reconnects to it).
    fn launch_on(&mut self, fixed: Option<u16>) {
        let mut last = String::new();
        for _attempt in 0..5 {
            let port = fixed.unwrap_or_else(free_port);
            let log_start = std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0);
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .expect("open the server log");
            let log2 = log.try_clone().expect("clone log handle");
            // STRATA_BIN runs another build (e.g. a release binary for long runs).
            let bin = std::env::var("STRATA_BIN")
                .unwrap_or_else(|_| env!("CARGO_BIN_EXE_strata").to_string());
            let child = Command::new(bin)
                .arg(format!("--datadir={}", self.datadir.display()))
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1")
                .arg("--socket=")
                .args(&self.args)
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(log2)
                .spawn()
                .expect("spawn the strata binary");
            self.child = Some(child);
            self.port = port;
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                // The log line, not a successful connect, tells readiness:
                // a connect to a free local port can succeed by connecting
                // the socket to itself.
                let new_log = std::fs::read(&self.log)
                    .map(|b| {
                        String::from_utf8_lossy(&b[(log_start as usize).min(b.len())..])
                            .into_owned()
                    })
                    .unwrap_or_default();
                if new_log.contains("ready for connections") {
                    return;
                }
                if let Some(c) = self.child.as_mut() {
                    if let Ok(Some(st)) = c.try_wait() {
                        last = format!("server exited with {st}");
                        self.child = None;
                        break;
                    }
                }
                if Instant::now() > deadline {
                    last = "server not ready within 60 s".into();
                    self.kill9();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        panic!("cannot start strata: {last}\n{}", self.log_tail(40));
    }

    /// The last `n` lines of the server log.
    pub fn log_tail(&self, n: usize) -> String {
        let Ok(f) = std::fs::File::open(&self.log) else {
            return String::new();
        };
        let lines: Vec<String> = BufReader::new(f).lines().map_while(Result::ok).collect();
        let from = lines.len().saturating_sub(n);
        format!(
            "--- server log ({}) ---\n{}",
            self.log.display(),
            lines[from..].join("\n")
        )
    }

    /// Kills the server with SIGKILL and waits for it.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the binary again on the same data directory (new port).
    pub fn restart(&mut self) {
        self.kill9();
        self.launch();
    }

    /// Starts the binary again on the same data directory and the same
    /// port (clients configured with the port find it again).
    pub fn restart_same_port(&mut self) {
        self.kill9();
        let port = self.port;
        self.launch_on(Some(port));
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Replaces the extra command-line options of the next (re)start.
    pub fn set_args(&mut self, extra: &[&str]) {
        self.args = extra.iter().map(|s| s.to_string()).collect();
    }

    /// True while the child process is alive.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Connection options (root, TCP, the server's password).
    pub fn opts(&self) -> OptsBuilder {
        OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some("root"))
            .pass(self.password.clone())
            .prefer_socket(false)
            .read_timeout(Some(Duration::from_secs(120)))
    }

    /// A new connection without a default database.
    pub fn conn(&self) -> Conn {
        Conn::new(self.opts()).unwrap_or_else(|e| panic!("connect: {e}\n{}", self.log_tail(20)))
    }

    /// A new connection with `db` as the default database.
    pub fn conn_db(&self, db: &str) -> Conn {
        Conn::new(self.opts().db_name(Some(db)))
            .unwrap_or_else(|e| panic!("connect to {db}: {e}\n{}", self.log_tail(20)))
    }

    /// Creates database `db` (dropping any old one) and connects to it.
    pub fn fresh_db(&self, db: &str) -> Conn {
        let mut c = self.conn();
        exec(&mut c, &format!("DROP DATABASE IF EXISTS {db}"));
        exec(&mut c, &format!("CREATE DATABASE {db}"));
        exec(&mut c, &format!("USE {db}"));
        c
    }
}

/// A connection as `user` with password `pw` (and `db` as its database).
pub fn as_user(srv: &Server, user: &str, pw: &str, db: Option<&str>) -> mysql::Result<Conn> {
    Conn::new(
        srv.opts()
            .user(Some(user))
            .pass(Some(pw))
            .db_name(db.map(str::to_string)),
    )
}

impl Drop for Server {
    /// Kills the server and removes its directory; fails the test if the
    /// server panicked (a connection thread can die without the client
    /// noticing much).
    fn drop(&mut self) {
        self.kill9();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        // Panics a test injected on purpose (STRATA_TEST_PANIC_ON) do not count.
        let panicked = log.matches("panicked at").count()
            > log.matches("injected by STRATA_TEST_PANIC_ON").count();
        if std::thread::panicking() || panicked {
            eprintln!("{}", self.log_tail(60));
        }
        let _ = std::fs::remove_dir_all(&self.root);
        if panicked && !std::thread::panicking() {
            panic!("the server panicked (log above)");
        }
    }
}

/// Runs a query through the text protocol and as a prepared statement
/// (binary rows); both must give the same rows, which are returned.
pub fn both(c: &mut Conn, sql: &str) -> Vec<String> {
    let text = q(c, sql);
    let bin = qp(c, sql, ());
    assert_eq!(text, bin, "text vs binary protocol differ for: {sql}");
    text
}

/// Runs a statement through the text protocol and reads any rows. Unlike
/// `query_drop`, this reports an error that arrives after the column
/// definitions (a lock wait timeout in a locking SELECT), which the `mysql`
/// crate drops silently when it discards a result set.
pub fn try_exec(c: &mut Conn, sql: &str) -> mysql::Result<()> {
    c.query::<Row, _>(sql).map(|_| ())
}

/// Runs a statement through the text protocol, panicking with the SQL on error.
pub fn exec(c: &mut Conn, sql: &str) {
    try_exec(c, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Formats a value as the text protocol would send it (`None` for NULL,
/// bytes that are not UTF-8 as `0x` + hex), using the column type to print
/// binary-protocol dates and numbers.
pub fn fmt_value(v: &Value, ty: ColumnType, decimals: u8) -> Option<String> {
    Some(match v {
        Value::NULL => return None,
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_string(),
            Err(_) => format!("0x{}", hex(b)),
        },
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Date(y, mo, d, h, mi, s, us) => {
            if ty == ColumnType::MYSQL_TYPE_DATE {
                format!("{y:04}-{mo:02}-{d:02}")
            } else if decimals > 0 && decimals <= 6 {
                let frac = format!("{us:06}");
                format!(
                    "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{}",
                    &frac[..decimals as usize]
                )
            } else {
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
            }
        }
        Value::Time(neg, days, h, mi, s, us) => {
            let hours = *days * 24 + u32::from(*h);
            let sign = if *neg { "-" } else { "" };
            if *us != 0 {
                format!("{sign}{hours:02}:{mi:02}:{s:02}.{us:06}")
            } else {
                format!("{sign}{hours:02}:{mi:02}:{s:02}")
            }
        }
    })
}

/// Lower-case hex of bytes.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A row as strings (`None` = NULL).
pub fn row_strings(r: &Row) -> Vec<Option<String>> {
    let cols = r.columns_ref();
    (0..r.len())
        .map(|i| {
            let v = r.as_ref(i).expect("value present");
            fmt_value(v, cols[i].column_type(), cols[i].decimals())
        })
        .collect()
}

/// Joins a row into "a|b|NULL".
pub fn join_row(r: &[Option<String>]) -> String {
    r.iter()
        .map(|v| v.clone().unwrap_or_else(|| "NULL".into()))
        .collect::<Vec<_>>()
        .join("|")
}

/// Text-protocol query; rows joined as "a|b|NULL".
pub fn q(c: &mut Conn, sql: &str) -> Vec<String> {
    let rows: Vec<Row> = c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.iter().map(|r| join_row(&row_strings(r))).collect()
}

/// Prepared-statement (binary protocol) query; rows joined as "a|b|NULL".
pub fn qp<P: Into<mysql::Params>>(c: &mut Conn, sql: &str, params: P) -> Vec<String> {
    let rows: Vec<Row> = c.exec(sql, params).unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.iter().map(|r| join_row(&row_strings(r))).collect()
}

/// The single value of a one-row, one-column text query.
/// SHOW GLOBAL STATUS Threads_connected.
pub fn threads_connected(c: &mut mysql::Conn) -> i64 {
    let rows: Vec<(String, String)> =
        mysql::prelude::Queryable::query(c, "SHOW GLOBAL STATUS LIKE 'Threads_connected'").unwrap();
    rows[0].1.parse().unwrap()
}

pub fn q1(c: &mut Conn, sql: &str) -> String {
    let rows = q(c, sql);
    assert_eq!(rows.len(), 1, "{sql}: expected one row, got {rows:?}");
    rows[0].clone()
}

/// The single integer of a one-row, one-column text query.
pub fn q_i64(c: &mut Conn, sql: &str) -> i64 {
    let v = q1(c, sql);
    v.parse()
        .unwrap_or_else(|_| panic!("{sql}: expected an integer, got {v}"))
}

/// The server error of a failed call (panics on success or client errors).
pub fn server_err<T: std::fmt::Debug>(r: mysql::Result<T>) -> mysql::MySqlError {
    match r {
        Err(mysql::Error::MySqlError(e)) => e,
        Err(e) => panic!("expected a server error, got {e:?}"),
        Ok(v) => panic!("expected a server error, got success: {v:?}"),
    }
}

/// The (code, SQLSTATE) of an error, or None when it is not a server error.
pub fn err_code(e: &mysql::Error) -> Option<(u16, String)> {
    match e {
        mysql::Error::MySqlError(m) => Some((m.code, m.state.clone())),
        _ => None,
    }
}

/// Asserts that a text-protocol statement fails with `code` / `state`.
pub fn expect_err(c: &mut Conn, sql: &str, code: u16, state: &str) -> String {
    let e = server_err(try_exec(c, sql));
    assert_eq!(
        (e.code, e.state.as_str()),
        (code, state),
        "{sql}: wrong error: {e}"
    );
    e.message
}

// Raw protocol: for tests that must send exact bytes (hostile clients, packet limits).

/// One packet: 3-byte length, sequence number, payload.
pub fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut b = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    b.push(seq);
    b.extend_from_slice(payload);
    b
}

/// Reads one packet (payload, seq); None on EOF, error or timeout.
pub fn read_packet(s: &mut TcpStream) -> Option<(Vec<u8>, u8)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let n = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    let mut p = vec![0u8; n];
    s.read_exact(&mut p).ok()?;
    Some((p, h[3]))
}

const CLIENT_LONG_PASSWORD: u32 = 1;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 512;
const CLIENT_TRANSACTIONS: u32 = 8192;
const CLIENT_SECURE_CONNECTION: u32 = 32768;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;

/// Logs in as root (empty password) with a raw handshake; None if the server refused.
pub fn login(port: u16, db: Option<&str>) -> Option<TcpStream> {
    login_with(port, db, 45)
}

/// `login` with the handshake's collation id (45 utf8mb4_general_ci, 8 latin1_swedish_ci).
pub fn login_with(port: u16, db: Option<&str>, collation: u8) -> Option<TcpStream> {
    login_user(port, "root", db, collation)
}

/// A protocol 4.1 handshake response (plugin auth, mysql_native_password)
/// for `user` with auth response `auth` (at most 255 bytes).
pub fn handshake_response(user: &str, auth: &[u8], db: Option<&str>, collation: u8) -> Vec<u8> {
    let mut caps = CLIENT_LONG_PASSWORD
        | CLIENT_PROTOCOL_41
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_MULTI_RESULTS
        | CLIENT_PLUGIN_AUTH;
    if db.is_some() {
        caps |= CLIENT_CONNECT_WITH_DB;
    }
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(collation);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    p.push(auth.len() as u8);
    p.extend_from_slice(auth);
    if let Some(d) = db {
        p.extend_from_slice(d.as_bytes());
        p.push(0);
    }
    p.extend_from_slice(b"mysql_native_password\0");
    p
}

/// Logs in as `user` (an account without a password) with a raw handshake.
pub fn login_user(port: u16, user: &str, db: Option<&str>, collation: u8) -> Option<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let (greeting, _) = read_packet(&mut s)?;
    if greeting.first() == Some(&0xFF) {
        return None;
    }
    // An empty auth response.
    let p = handshake_response(user, &[], db, collation);
    s.write_all(&packet(1, &p)).ok()?;
    loop {
        let (r, seq) = read_packet(&mut s)?;
        match r.first() {
            Some(0x00) => return Some(s),
            Some(0xFE) => s.write_all(&packet(seq.wrapping_add(1), b"")).ok()?,
            Some(0x01) => continue, // caching_sha2 fast-auth result; OK follows
            _ => return None,
        }
    }
}

/// Sends one COM_QUERY of raw bytes; Ok(()) on an OK packet, Err(code) on an error.
pub fn raw_exec(s: &mut TcpStream, sql: &[u8]) -> Result<(), u16> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql);
    s.write_all(&packet(0, &p)).map_err(|_| 0u16)?;
    let (r, _) = read_packet(s).ok_or(0u16)?;
    match r.first() {
        Some(0x00) => Ok(()),
        Some(0xFF) => Err(u16::from_le_bytes([r[1], r[2]])),
        _ => Err(1),
    }
}

/// Runs a one-column text query; the raw bytes of each row's value (None for NULL).
pub fn raw_query(s: &mut TcpStream, sql: &[u8]) -> Vec<Option<Vec<u8>>> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql);
    s.write_all(&packet(0, &p)).unwrap();
    let (count, _) = read_packet(s).unwrap();
    assert_ne!(
        count[0],
        0xFF,
        "error {:?}",
        String::from_utf8_lossy(&count)
    );
    assert_eq!(count[0], 1, "one column expected");
    read_packet(s).unwrap(); // column definition
    let (eof, _) = read_packet(s).unwrap();
    assert_eq!(eof[0], 0xFE);
    let mut rows = Vec::new();
    loop {
        let (r, _) = read_packet(s).unwrap();
        if r[0] == 0xFE && r.len() < 9 {
            return rows;
        }
        rows.push(match r[0] {
            0xFB => None,
            0xFC => Some(r[3..3 + u16::from_le_bytes([r[1], r[2]]) as usize].to_vec()),
            n if n < 0xFB => Some(r[1..1 + n as usize].to_vec()),
            _ => panic!("long value in raw_query"),
        });
    }
}

/// Runs client program `cmd` with stdin closed: whether it succeeded, its
/// stdout and its stderr.
pub fn run_client(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {:?}: {e}", cmd.get_program()));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts the stock `mariadb` client over TCP (no TLS) as root on `db`,
/// running `sql` with `extra` options, its output piped.
pub fn spawn_mariadb(port: u16, db: &str, extra: &[&str], sql: &str) -> std::process::Child {
    Command::new("mariadb")
        .args([
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{port}"),
            "-uroot",
            "--skip-ssl",
        ])
        .args(extra)
        .args([db, "-e", sql])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the mariadb client")
}
