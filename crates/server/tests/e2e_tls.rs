//! TLS against the real binary with the stock `mariadb` client: a CA and a
//! server certificate made at test time with the `openssl` CLI, `--ssl`
//! connections over TCP and the unix socket (the server's certificate
//! verified against the CA), Ssl_cipher / Ssl_version and the client's
//! `status` line, REQUIRE SSL accounts (1045 without TLS, as MariaDB),
//! require_secure_transport (3159 for plain TCP, unix sockets allowed),
//! hostile clients sending garbage after the SSLRequest (only their
//! connection ends, no thread is left behind), and bad certificate or key
//! files stopping the server at startup with a clear message.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, expect_err, packet, q, q1, read_packet, server_err, Rng, Server, TempDir};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// PEM files made by the `openssl` CLI: a CA, a server certificate it
/// signed (for localhost and 127.0.0.1), the server's key, a key of
/// nothing, and a second CA that signed nothing.
struct Certs {
    _dir: TempDir,
    ca: String,
    cert: String,
    key: String,
    other_key: String,
    other_ca: String,
    not_pem: String,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run the openssl CLI (Debian's openssl package)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn certs(name: &str) -> Certs {
    let dir = TempDir::new(&format!("e2e-tls-certs-{name}"));
    let d = dir.0.clone();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    for (key, crt, cn) in [
        ("ca-key.pem", "ca.pem", "Strata Test CA"),
        ("ca2-key.pem", "ca2.pem", "Another CA"),
    ] {
        let subj = format!("/CN={cn}");
        let mut a = vec!["req", "-x509", "-nodes", "-days", "3650"];
        a.extend(ec);
        a.extend(["-keyout", key, "-out", crt, "-subj", &subj]);
        openssl(&d, &a);
    }
    let mut a = vec!["req", "-nodes"];
    a.extend(ec);
    a.extend([
        "-keyout",
        "server-key.pem",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(&d, &a);
    std::fs::write(
        d.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        &d,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-days",
            "3650",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ],
    );
    std::fs::write(d.join("not.pem"), "this is not a certificate\n").unwrap();
    let p = |f: &str| d.join(f).display().to_string();
    Certs {
        ca: p("ca.pem"),
        cert: p("server.pem"),
        key: p("server-key.pem"),
        other_key: p("ca2-key.pem"),
        other_ca: p("ca2.pem"),
        not_pem: p("not.pem"),
        _dir: dir,
    }
}

/// `--ssl-cert=.. --ssl-key=.. --ssl-ca=..`.
fn tls_args(c: &Certs) -> Vec<String> {
    vec![
        format!("--ssl-cert={}", c.cert),
        format!("--ssl-key={}", c.key),
        format!("--ssl-ca={}", c.ca),
    ]
}

/// How the stock client reaches the server.
enum Via<'a> {
    Tcp,
    Socket(&'a Path),
}

/// Runs `mariadb -B -N` with `sql`; (success, stdout, stderr).
fn client(srv: &Server, via: Via, user: &str, extra: &[&str], sql: &str) -> (bool, String, String) {
    let mut cmd = Command::new("mariadb");
    match via {
        Via::Tcp => cmd.args([
            "--protocol=TCP".to_string(),
            "-h127.0.0.1".into(),
            format!("-P{}", srv.port),
        ]),
        Via::Socket(p) => cmd.args([
            "--protocol=SOCKET".to_string(),
            format!("-S{}", p.display()),
        ]),
    };
    common::run_client(
        cmd.arg(format!("-u{user}"))
            .args(["-B", "-N", "--connect-timeout=20"])
            .args(extra)
            .args(["-e", sql]),
    )
}

/// The value of `name` in `SHOW STATUS`-like output (`Name\tvalue` lines).
fn status_value(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}\t")))
        .unwrap_or_else(|| panic!("{name} missing in {out:?}"))
        .to_string()
}

/// The REQUIRE SSL account `sec` logs in with the stock client over TLS.
fn sec_logs_in_over_tls(srv: &Server) {
    let (ok, out, err) = client(srv, Via::Tcp, "sec", &["--ssl", "-ppw"], "SELECT USER()");
    assert!(ok, "{err}");
    assert!(out.trim().starts_with("sec@"), "{out}");
}

fn as_user(srv: &Server, user: &str, pw: &str) -> mysql::Result<Conn> {
    Conn::new(srv.opts().user(Some(user)).pass(Some(pw)))
}

#[test]
fn tls_connections_accounts_and_secure_transport() {
    let c = certs("main");
    let root_dir = TempDir::new("e2e-tls-sock");
    let sock = root_dir.0.join("s.sock");
    let mut args = tls_args(&c);
    args.push(format!("--socket={}", sock.display()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut srv = Server::start_with("tls", &argv);
    let mut root = srv.conn();
    let ca = format!("--ssl-ca={}", c.ca);
    let verify = ["--ssl", "--ssl-verify-server-cert", ca.as_str()];

    // The stock client over TLS, the server's certificate verified against the CA.
    let (ok, out, err) = client(
        &srv,
        Via::Tcp,
        "root",
        &verify,
        "SHOW SESSION STATUS LIKE 'Ssl_cipher'; SHOW STATUS LIKE 'Ssl_version'; \
         SHOW VARIABLES LIKE 'have_ssl'",
    );
    assert!(ok, "{err}\n{}", srv.log_tail(20));
    let cipher = status_value(&out, "Ssl_cipher");
    assert!(cipher.starts_with("TLS_"), "{out}");
    assert_eq!(status_value(&out, "Ssl_version"), "TLSv1.3");
    assert_eq!(status_value(&out, "have_ssl"), "YES");
    // The client's `status` (\s) names the cipher.
    let (ok, out, err) = client(&srv, Via::Tcp, "root", &["--ssl"], "status");
    assert!(ok, "{err}");
    assert!(out.contains(&format!("Cipher in use is {cipher}")), "{out}");
    // A CA that did not sign the server's certificate: the client refuses.
    let other = format!("--ssl-ca={}", c.other_ca);
    let (ok, _, err) = client(
        &srv,
        Via::Tcp,
        "root",
        &["--ssl", "--ssl-verify-server-cert", &other],
        "SELECT 1",
    );
    assert!(!ok, "verified against the wrong CA");
    assert!(err.contains("2026"), "{err}");
    // TLS over the unix socket too.
    let (ok, out, err) = client(
        &srv,
        Via::Socket(&sock),
        "root",
        &["--ssl"],
        "SHOW STATUS LIKE 'Ssl_cipher'",
    );
    assert!(ok, "{err}");
    assert_eq!(status_value(&out, "Ssl_cipher"), cipher);
    // Plain connections still work while TLS is not required.
    let (ok, out, err) = client(
        &srv,
        Via::Tcp,
        "root",
        &["--skip-ssl"],
        "SHOW STATUS LIKE 'Ssl_cipher'",
    );
    assert!(ok, "{err}");
    assert_eq!(status_value(&out, "Ssl_cipher"), "");
    assert_eq!(
        q1(&mut root, "SHOW STATUS LIKE 'Ssl_version'"),
        "Ssl_version|"
    );
    assert_eq!(
        q(
            &mut root,
            "SELECT @@have_ssl, @@ssl_cert = @@ssl_cert, @@require_secure_transport"
        ),
        vec!["YES|1|0"]
    );
    assert_eq!(q1(&mut root, "SELECT @@ssl_key"), c.key);
    expect_err(&mut root, "SET GLOBAL ssl_cert = '/x'", 1238, "HY000");

    // REQUIRE SSL: stored, shown, enforced at login (1045, as MariaDB).
    exec(&mut root, "CREATE USER sec IDENTIFIED BY 'pw' REQUIRE SSL");
    exec(
        &mut root,
        "CREATE USER plain@'%' IDENTIFIED BY 'pw', nopw@'%' REQUIRE NONE",
    );
    let hash = "*D821809F681A40A6E379B50D0463EFAE20BDD122"; // 'pw'
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR sec"),
        vec![format!(
            "GRANT USAGE ON *.* TO `sec`@`%` IDENTIFIED BY PASSWORD '{hash}' REQUIRE SSL"
        )]
    );
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR nopw"),
        vec!["GRANT USAGE ON *.* TO `nopw`@`%`"]
    );
    let e = server_err(as_user(&srv, "sec", "pw"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1045,
            "Access denied for user 'sec'@'localhost' (using password: YES)"
        )
    );
    let (ok, _, err) = client(&srv, Via::Tcp, "sec", &["--skip-ssl", "-ppw"], "SELECT 1");
    assert!(!ok);
    assert!(err.contains("ERROR 1045 (28000)"), "{err}");
    // A unix socket is not TLS: still refused (MariaDB's rule).
    let (ok, _, err) = client(
        &srv,
        Via::Socket(&sock),
        "sec",
        &["--skip-ssl", "-ppw"],
        "SELECT 1",
    );
    assert!(!ok);
    assert!(err.contains("ERROR 1045 (28000)"), "{err}");
    // COM_CHANGE_USER to it over plain TCP is refused the same way (1045)
    // and ends the connection: the transport checks hold for a change of
    // user as for a login.
    let mut p = as_user(&srv, "plain", "pw").unwrap();
    let e = p
        .change_user(
            mysql::ChangeUserOpts::default()
                .with_user(Some("sec".into()))
                .with_pass(Some("pw".into())),
        )
        .unwrap_err();
    assert_eq!(common::err_code(&e).map(|c| c.0), Some(1045), "{e}");
    assert!(
        p.query_drop("SELECT 1").is_err(),
        "closed after a refused change"
    );
    sec_logs_in_over_tls(&srv);
    // A wrong password is still a wrong password.
    let (ok, _, err) = client(&srv, Via::Tcp, "sec", &["--ssl", "-pbad"], "SELECT 1");
    assert!(!ok && err.contains("ERROR 1045"), "{err}");
    // REQUIRE NONE lifts it; GRANT ... REQUIRE SSL sets it again.
    exec(&mut root, "ALTER USER sec REQUIRE NONE");
    as_user(&srv, "sec", "pw").unwrap();
    exec(&mut root, "GRANT SELECT ON *.* TO sec REQUIRE SSL");
    assert_eq!(
        q(&mut root, "SHOW GRANTS FOR sec"),
        vec![format!(
            "GRANT SELECT ON *.* TO `sec`@`%` IDENTIFIED BY PASSWORD '{hash}' REQUIRE SSL"
        )]
    );
    assert_eq!(server_err(as_user(&srv, "sec", "pw")).code, 1045);
    // ALTER USER without REQUIRE keeps the requirement.
    exec(&mut root, "ALTER USER sec IDENTIFIED BY 'pw'");
    assert_eq!(server_err(as_user(&srv, "sec", "pw")).code, 1045);
    // Client certificates are not checked per account yet: refused, not ignored.
    expect_err(&mut root, "ALTER USER sec REQUIRE X509", 1235, "42000");

    // require_secure_transport: SUPER only, global only.
    let mut p = as_user(&srv, "plain", "pw").unwrap();
    expect_err(
        &mut p,
        "SET GLOBAL require_secure_transport = ON",
        1227,
        "42000",
    );
    expect_err(
        &mut root,
        "SET SESSION require_secure_transport = ON",
        1229,
        "HY000",
    );
    exec(&mut root, "SET GLOBAL require_secure_transport = ON");
    let e = server_err(as_user(&srv, "plain", "pw"));
    assert_eq!(
        (e.code, e.state.as_str(), e.message.as_str()),
        (
            3159,
            "HY000",
            "Connections using insecure transport are prohibited while --require_secure_transport=ON."
        )
    );
    // The password is checked first: a wrong one is 1045.
    assert_eq!(server_err(as_user(&srv, "plain", "bad")).code, 1045);
    let (ok, _, err) = client(&srv, Via::Tcp, "plain", &["--skip-ssl", "-ppw"], "SELECT 1");
    assert!(!ok);
    assert!(err.contains("ERROR 3159 (HY000)"), "{err}");
    let (ok, _, err) = client(&srv, Via::Tcp, "plain", &["--ssl", "-ppw"], "SELECT 1");
    assert!(ok, "{err}");
    let (ok, _, err) = client(
        &srv,
        Via::Socket(&sock),
        "plain",
        &["--skip-ssl", "-ppw"],
        "SELECT 1",
    );
    assert!(ok, "a unix socket is a secure transport: {err}");
    // Sessions already connected go on.
    assert_eq!(q1(&mut p, "SELECT 1"), "1");
    exec(&mut root, "SET GLOBAL require_secure_transport = OFF");
    as_user(&srv, "plain", "pw").unwrap();

    // The requirement survives a restart (the account record).
    drop((root, p));
    srv.restart();
    assert_eq!(server_err(as_user(&srv, "sec", "pw")).code, 1045);
    sec_logs_in_over_tls(&srv);
}

/// The server's pid (the one listening on the test's port), from /proc.
fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

const SSL: u32 = 1 << 11;

/// The 32-byte SSLRequest (a handshake response cut after the filler).
fn ssl_request() -> Vec<u8> {
    let caps: u32 = 1 | (1 << 9) | SSL | (1 << 15) | (1 << 19);
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p
}

/// Connects, checks the greeting offers SSL, sends an SSLRequest.
fn start_ssl(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let (g, _) = read_packet(&mut s).expect("greeting");
    let nul = g[1..].iter().position(|&b| b == 0).unwrap();
    let caps_lo = u16::from_le_bytes([g[1 + nul + 1 + 4 + 9], g[1 + nul + 1 + 4 + 10]]);
    assert!(u32::from(caps_lo) & SSL != 0, "CLIENT_SSL not offered");
    s.write_all(&packet(1, &ssl_request())).unwrap();
    s
}

/// True when the server closed the connection (EOF or reset) within the read timeout.
fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let t = Instant::now();
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            // A TLS alert before closing.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return t.elapsed() < Duration::from_secs(14),
        }
    }
}

#[test]
fn garbage_after_the_ssl_request_ends_only_that_connection() {
    let c = certs("hostile");
    let mut args = tls_args(&c);
    args.push("--connect-timeout=2".into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let srv = Server::start_with("tls-hostile", &argv);
    let pid = srv.pid().expect("server pid");
    let mut root = srv.conn();
    let before = threads_of(pid);
    let mut rng = Rng::from_env("tls_garbage");
    for i in 0..60 {
        let mut s = start_ssl(srv.port);
        match i % 5 {
            // Random bytes.
            0 => {
                let n = 1 + rng.below(3000) as usize;
                let _ = s.write_all(&rng.bytes(n));
            }
            // A TLS handshake record header with a garbage body.
            1 => {
                let n = rng.below(600) as usize;
                let mut b = vec![0x16, 0x03, 0x01, (n >> 8) as u8, n as u8];
                b.extend(rng.bytes(n));
                let _ = s.write_all(&b);
            }
            // A record claiming 16 KiB, cut short, then the client goes away.
            2 => {
                let _ = s.write_all(&[0x16, 0x03, 0x03, 0x40, 0x00, 0x01, 0x00]);
                drop(s);
                continue;
            }
            // The client closes right after the SSLRequest.
            3 => {
                drop(s);
                continue;
            }
            // A plain handshake response instead of TLS.
            _ => {
                let _ = s.write_all(&packet(2, &ssl_request()));
            }
        }
        assert!(
            closed_by_server(&mut s),
            "case {i}: the server kept the connection"
        );
    }
    // Silent after the SSLRequest: dropped at connect_timeout.
    let mut s = start_ssl(srv.port);
    let t = Instant::now();
    assert!(closed_by_server(&mut s));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The server serves on: TLS and plain clients, nothing left behind.
    let (ok, out, err) = client(
        &srv,
        Via::Tcp,
        "root",
        &["--ssl"],
        "SHOW STATUS LIKE 'Ssl_cipher'",
    );
    assert!(ok, "{err}");
    assert!(status_value(&out, "Ssl_cipher").starts_with("TLS_"));
    // (The client's session ends a moment after the client exits.)
    let deadline = Instant::now() + Duration::from_secs(10);
    let connected = |root: &mut Conn| q1(root, "SHOW STATUS LIKE 'Threads_connected'");
    while (threads_of(pid) > before || connected(&mut root) != "Threads_connected|1")
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(connected(&mut root), "Threads_connected|1");
    assert!(
        threads_of(pid) <= before,
        "threads: {} before, {} after",
        before,
        threads_of(pid)
    );
}

/// Runs the binary with `args` and a fresh datadir; it must exit with an
/// error at once: its stderr.
fn refuses_to_start(name: &str, args: &[String]) -> String {
    let dir = TempDir::new(&format!("e2e-tls-bad-{name}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg(format!("--datadir={}", dir.0.join("data").display()))
        .args(["--port=0", "--socket="])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{name}: the server started with {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{name}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_tls_files_stop_the_server_and_the_option_alone() {
    let c = certs("bad");
    let missing = "/nonexistent/strata-cert.pem".to_string();
    let e = refuses_to_start(
        "missing",
        &[
            format!("--ssl-cert={missing}"),
            format!("--ssl-key={}", c.key),
        ],
    );
    assert!(
        e.contains("cannot read --ssl-cert /nonexistent/strata-cert.pem"),
        "{e}"
    );
    let e = refuses_to_start(
        "not-pem",
        &[
            format!("--ssl-cert={}", c.not_pem),
            format!("--ssl-key={}", c.key),
        ],
    );
    assert!(e.contains("holds no PEM certificate"), "{e}");
    let e = refuses_to_start(
        "key-not-pem",
        &[
            format!("--ssl-cert={}", c.cert),
            format!("--ssl-key={}", c.not_pem),
        ],
    );
    assert!(e.contains("cannot read a PEM private key"), "{e}");
    let e = refuses_to_start(
        "wrong-key",
        &[
            format!("--ssl-cert={}", c.cert),
            format!("--ssl-key={}", c.other_key),
        ],
    );
    assert!(e.contains("does not fit"), "{e}");
    let e = refuses_to_start("no-key", &[format!("--ssl-cert={}", c.cert)]);
    assert!(e.contains("needs both --ssl-cert and --ssl-key"), "{e}");
    let e = refuses_to_start(
        "bad-ca",
        &[
            format!("--ssl-cert={}", c.cert),
            format!("--ssl-key={}", c.key),
            format!("--ssl-ca={}", c.not_pem),
        ],
    );
    assert!(e.contains("--ssl-ca"), "{e}");

    // --require-secure-transport as a server option, without TLS: only the
    // unix socket can connect; SSLRequests are refused (1043) as before.
    let dir = TempDir::new("e2e-tls-rst-sock");
    let sock = dir.0.join("s.sock");
    let srv = Server::start_with(
        "tls-rst",
        &[
            "--require-secure-transport=ON",
            &format!("--socket={}", sock.display()),
        ],
    );
    let e = server_err(Conn::new(srv.opts()));
    assert_eq!(e.code, 3159);
    let (ok, out, err) = client(
        &srv,
        Via::Socket(&sock),
        "root",
        &[],
        "SELECT @@require_secure_transport, @@have_ssl",
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "1\tDISABLED");
    // The 10.11 client goes on without TLS when the server offers none.
    let (ok, _, err) = client(&srv, Via::Tcp, "root", &["--ssl"], "SELECT 1");
    assert!(!ok, "TLS without certificates");
    assert!(err.contains("ERROR 3159") || err.contains("SSL"), "{err}");
}
