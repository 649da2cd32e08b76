//! caching_sha2_password accounts against the real binary: CREATE/ALTER USER
//! ... IDENTIFIED WITH caching_sha2_password, SET PASSWORD keeping the plugin,
//! SHOW GRANTS; logins with the stock `mariadb` client (libmariadb's
//! caching_sha2_password plugin) over TLS (full authentication, clear text),
//! over the unix socket, and over plain TCP with the server's RSA key (full
//! authentication, RSA-OAEP), then fast authentication from the cache; the
//! cache emptied by password changes, DROP USER and FLUSH PRIVILEGES (a
//! server without RSA keys lets plain TCP in only through the cache, which
//! shows its state); plugin switches both ways (the Rust `mysql` crate starts
//! with mysql_native_password); wrong passwords 1045 in every path; the key
//! files generated in the datadir, given by option, or bad (startup refused);
//! the accounts surviving a restart.
#![allow(clippy::unwrap_used)]

mod common;

use common::{as_user, exec, openssl, q1, tls_files, Server, TempDir};
use std::process::{Command, Output, Stdio};

/// The `mariadb` client as `user`/`pw` running `SELECT CURRENT_USER()`; `how`
/// picks the transport options.
fn mariadb(srv: &Server, user: &str, pw: &str, how: &[&str]) -> Output {
    let mut c = Command::new("mariadb");
    if !how.iter().any(|a| a.starts_with("--socket")) {
        c.args(["--protocol=TCP", "-h127.0.0.1", &format!("-P{}", srv.port)]);
    }
    c.args(how)
        .arg(format!("-u{user}"))
        .arg(format!("-p{pw}"))
        .args(["-N", "-B", "-e", "SELECT CURRENT_USER()"])
        .stdin(Stdio::null())
        .output()
        .expect("run the mariadb client")
}

/// The user name of CURRENT_USER() of a login that worked.
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "mariadb failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    out.trim().split('@').next().unwrap_or("").to_string()
}

/// A plain TCP login on a server without RSA keys: libmariadb asks for the key
/// and reports the ERR it gets instead as 2061.
fn refused(o: &Output, user: &str) {
    let e = String::from_utf8_lossy(&o.stderr);
    if e.contains("ERROR 2061") {
        assert!(!o.status.success());
        return;
    }
    denied(o, user);
}

fn denied(o: &Output, user: &str) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "logged in");
    assert!(
        e.contains("ERROR 1045") && e.contains(&format!("Access denied for user '{user}'")),
        "{e}"
    );
}

const TLS: &[&str] = &["--ssl"];
const PLAIN: &[&str] = &["--skip-ssl"];

/// The `mysql` crate (no TLS) as `user`: whether it logs in, else the error code.
fn crate_login(srv: &Server, user: &str, pw: &str) -> Result<(), u16> {
    match as_user(srv, user, pw, None) {
        Ok(_) => Ok(()),
        Err(mysql::Error::MySqlError(e)) => Err(e.code),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn tls_full_then_fast_and_cache_invalidation() {
    let dir = TempDir::new("e2e-sha2-tls");
    let mut args = tls_files(&dir.0);
    // No RSA keys: plain TCP gets in only through the fast-authentication cache.
    args.push("--caching-sha2-password-auto-generate-rsa-keys=0".into());
    let sock = dir.0.join("s.sock");
    args.push(format!("--socket={}", sock.display()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let srv = Server::start_with("sha2-tls", &a);
    assert!(!srv.datadir.join("private_key.pem").exists());
    let mut root = srv.conn();
    exec(
        &mut root,
        "CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'pw1'",
    );
    exec(&mut root, "GRANT SELECT ON *.* TO sha");
    let g = q1(&mut root, "SHOW GRANTS FOR sha");
    assert!(
        g.starts_with(
            "GRANT SELECT ON *.* TO `sha`@`%` IDENTIFIED VIA caching_sha2_password USING '$A$005$"
        ),
        "{g}"
    );
    // Not cached yet: plain TCP without keys cannot authenticate in full.
    refused(&mariadb(&srv, "sha", "pw1", PLAIN), "sha");
    assert_eq!(crate_login(&srv, "sha", "pw1"), Err(1045));
    // TLS: wrong password, then full authentication.
    denied(&mariadb(&srv, "sha", "nope", TLS), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw1", TLS)), "sha");
    // Cached: fast authentication, with TLS and without, and the `mysql` crate
    // (switched from mysql_native_password to caching_sha2_password).
    assert_eq!(ok(&mariadb(&srv, "sha", "pw1", TLS)), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw1", PLAIN)), "sha");
    assert_eq!(crate_login(&srv, "sha", "pw1"), Ok(()));
    refused(&mariadb(&srv, "sha", "pw2", PLAIN), "sha");
    // FLUSH PRIVILEGES empties the cache.
    exec(&mut root, "FLUSH PRIVILEGES");
    refused(&mariadb(&srv, "sha", "pw1", PLAIN), "sha");
    // The unix socket is a secure transport: clear text, and the cache is filled.
    let s = format!("--socket={}", sock.display());
    denied(&mariadb(&srv, "sha", "pwX", &[&s, "--skip-ssl"]), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw1", &[&s, "--skip-ssl"])), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw1", PLAIN)), "sha");
    // ALTER USER ... IDENTIFIED BY keeps the plugin; the old entry is gone.
    exec(&mut root, "ALTER USER sha IDENTIFIED BY 'pw2'");
    let g2 = q1(&mut root, "SHOW GRANTS FOR sha");
    assert!(g2.contains("IDENTIFIED VIA caching_sha2_password USING '$A$005$"));
    assert_ne!(g, g2, "a new salt and digest");
    let c = q1(&mut root, "SHOW CREATE USER sha");
    assert!(
        c.starts_with("CREATE USER `sha`@`%` IDENTIFIED VIA caching_sha2_password USING '$A$005$"),
        "{c}"
    );
    assert_eq!(
        c.len(),
        "CREATE USER `sha`@`%` IDENTIFIED VIA caching_sha2_password USING ''".len() + 70
    );
    refused(&mariadb(&srv, "sha", "pw1", PLAIN), "sha");
    refused(&mariadb(&srv, "sha", "pw2", PLAIN), "sha");
    denied(&mariadb(&srv, "sha", "pw1", TLS), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw2", TLS)), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw2", PLAIN)), "sha");
    // SET PASSWORD keeps the plugin too.
    exec(&mut root, "SET PASSWORD FOR sha = PASSWORD('pw3')");
    assert!(q1(&mut root, "SHOW GRANTS FOR sha").contains("caching_sha2_password"));
    refused(&mariadb(&srv, "sha", "pw3", PLAIN), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw3", TLS)), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw3", PLAIN)), "sha");
    // DROP USER and the same password again: nothing cached.
    exec(&mut root, "DROP USER sha");
    exec(
        &mut root,
        "CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'pw3'",
    );
    refused(&mariadb(&srv, "sha", "pw3", PLAIN), "sha");
    // The stored string moves between servers: AS takes it back.
    exec(
        &mut root,
        "CREATE USER copy IDENTIFIED WITH mysql_native_password BY 'x'",
    );
    let line = q1(&mut root, "SHOW GRANTS FOR sha");
    // The line ends with the quoted string; no quote or backslash in our salts.
    let using = line.split("USING '").nth(1).unwrap().trim_end_matches('\'');
    assert_eq!(using.len(), 70, "{line}");
    exec(
        &mut root,
        &format!("ALTER USER copy IDENTIFIED WITH caching_sha2_password AS '{using}'"),
    );
    assert_eq!(ok(&mariadb(&srv, "copy", "pw3", TLS)), "copy");
    // Native accounts: a client starting with caching_sha2_password is switched.
    exec(&mut root, "CREATE USER nat IDENTIFIED BY 'npw'");
    exec(&mut root, "ALTER USER nat REQUIRE NONE");
    assert!(q1(&mut root, "SHOW CREATE USER nat")
        .starts_with("CREATE USER `nat`@`%` IDENTIFIED BY PASSWORD '*"));
    common::expect_err(&mut root, "SHOW CREATE USER nobody", 1133, "28000");
    assert_eq!(
        ok(&mariadb(
            &srv,
            "nat",
            "npw",
            &["--skip-ssl", "--default-auth=caching_sha2_password"]
        )),
        "nat"
    );
    denied(
        &mariadb(
            &srv,
            "nat",
            "bad",
            &["--skip-ssl", "--default-auth=caching_sha2_password"],
        ),
        "nat",
    );
    // Statements: errors as MySQL's.
    for (sql, code) in [
        (
            "ALTER USER nat IDENTIFIED WITH caching_sha2_password AS '*0123'",
            1827,
        ),
        (
            "ALTER USER nat IDENTIFIED WITH caching_sha2_password AS '$A$005$short'",
            1827,
        ),
        (
            "ALTER USER nat IDENTIFIED WITH mysql_native_password AS '$A$005$x'",
            1372,
        ),
        (
            "ALTER USER nat IDENTIFIED WITH sha256_password BY 'x'",
            1235,
        ),
    ] {
        common::expect_err(
            &mut root,
            sql,
            code,
            if code == 1235 { "42000" } else { "HY000" },
        );
    }
    let long = "x".repeat(257);
    common::expect_err(
        &mut root,
        &format!("ALTER USER sha IDENTIFIED BY '{long}'"),
        1819,
        "HY000",
    );
    // Restart: the accounts are read back (record version 4); full again.
    drop(root);
    let mut srv = srv;
    srv.restart();
    refused(&mariadb(&srv, "sha", "pw3", PLAIN), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw3", TLS)), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "pw3", PLAIN)), "sha");
    assert_eq!(ok(&mariadb(&srv, "nat", "npw", PLAIN)), "nat");
}

#[test]
fn rsa_key_exchange_without_tls() {
    let srv = Server::start("sha2-rsa");
    // The pair generated in the datadir, the private key readable by its owner only.
    let private = srv.datadir.join("private_key.pem");
    let public = srv.datadir.join("public_key.pem");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&private).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let pem = std::fs::read_to_string(&public).unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"), "{pem}");
    let mut root = srv.conn();
    exec(
        &mut root,
        "CREATE USER sha@'%' IDENTIFIED WITH caching_sha2_password BY 'secret'",
    );
    // libmariadb asks for the key and sends the password encrypted.
    denied(&mariadb(&srv, "sha", "wrong", PLAIN), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "secret", PLAIN)), "sha");
    assert_eq!(ok(&mariadb(&srv, "sha", "secret", PLAIN)), "sha");
    // The `mysql` crate (its own RSA): full, then fast; wrong passwords both ways.
    exec(&mut root, "FLUSH PRIVILEGES");
    assert_eq!(crate_login(&srv, "sha", "wrong"), Err(1045));
    assert_eq!(crate_login(&srv, "sha", "secret"), Ok(()));
    assert_eq!(crate_login(&srv, "sha", "secret"), Ok(()));
    assert_eq!(crate_login(&srv, "sha", "wrong"), Err(1045));
    assert_eq!(crate_login(&srv, "nobody", "secret"), Err(1045));
}

#[test]
fn key_files_by_option_and_bad_ones() {
    let dir = TempDir::new("e2e-sha2-keys");
    openssl(&dir.0, &["genrsa", "-out", "priv.pem", "2048"]);
    openssl(
        &dir.0,
        &["rsa", "-in", "priv.pem", "-pubout", "-out", "pub.pem"],
    );
    openssl(&dir.0, &["genrsa", "-out", "other.pem", "2048"]);
    std::fs::write(dir.0.join("junk.pem"), "not a key\n").unwrap();
    let p = |f: &str| dir.0.join(f).display().to_string();
    let priv_opt = format!("--caching-sha2-password-private-key-path={}", p("priv.pem"));
    let pub_opt = format!("--caching-sha2-password-public-key-path={}", p("pub.pem"));
    let srv = Server::start_with("sha2-keys", &[&priv_opt, &pub_opt]);
    assert!(
        !srv.datadir.join("private_key.pem").exists(),
        "nothing generated"
    );
    let mut root = srv.conn();
    exec(
        &mut root,
        "CREATE USER k IDENTIFIED WITH caching_sha2_password BY 'kpw'",
    );
    assert_eq!(ok(&mariadb(&srv, "k", "kpw", PLAIN)), "k");
    denied(&mariadb(&srv, "k", "kpX", PLAIN), "k");
    drop(root);
    drop(srv);
    // Bad files stop the server with a message naming the option.
    for (args, says) in [
        (
            vec![format!(
                "--caching-sha2-password-private-key-path={}",
                p("missing.pem")
            )],
            "--caching-sha2-password-private-key-path",
        ),
        (
            vec![format!(
                "--caching-sha2-password-private-key-path={}",
                p("junk.pem")
            )],
            "not an RSA private key",
        ),
        (
            vec![
                format!(
                    "--caching-sha2-password-private-key-path={}",
                    p("other.pem")
                ),
                pub_opt.clone(),
            ],
            "is not the public key of",
        ),
    ] {
        let root = testkit::unique_temp_path("e2e-sha2-bad");
        let out = Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg(format!("--datadir={}", root.join("data").display()))
            .args(["--port=0", "--socket="])
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&root);
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "started with {args:?}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

/// MySQL's own SHOW CREATE USER output (the MySQL 8.0 manual's example of
/// print_identified_with_as_hex: u1, password 'secret', a salt with control
/// characters): taken as a hex literal, logged in with, and written back as hex by
/// SHOW GRANTS / SHOW CREATE USER, so the line runs again.
const MYSQL_U1_SECRET: &str = "0x244124303035240C7745603626313D613C4C10633E0A104B1E14135A544A7871567245614F4872344643546336546F624F6C7861326932752F45622F4F473273597557627139";

#[test]
fn mysql_made_string_as_hex_literal() {
    let srv = Server::start("sha2-hex");
    let mut root = srv.conn();
    exec(
        &mut root,
        &format!("CREATE USER u1 IDENTIFIED WITH caching_sha2_password AS {MYSQL_U1_SECRET}"),
    );
    assert_eq!(ok(&mariadb(&srv, "u1", "secret", PLAIN)), "u1");
    denied(&mariadb(&srv, "u1", "Secret", PLAIN), "u1");
    let shown = q1(&mut root, "SHOW CREATE USER u1");
    assert_eq!(
        shown,
        format!(
            "CREATE USER `u1`@`%` IDENTIFIED VIA caching_sha2_password USING {MYSQL_U1_SECRET}"
        )
    );
    let grants = q1(&mut root, "SHOW GRANTS FOR u1");
    assert!(
        grants.ends_with(&format!("USING {MYSQL_U1_SECRET}")),
        "{grants}"
    );
    // The line runs again; X'...' is taken too.
    exec(&mut root, "DROP USER u1");
    exec(&mut root, &shown);
    assert_eq!(ok(&mariadb(&srv, "u1", "secret", PLAIN)), "u1");
    let x = format!("X'{}'", &MYSQL_U1_SECRET[2..]);
    exec(
        &mut root,
        &format!("ALTER USER u1 IDENTIFIED WITH caching_sha2_password AS {x}"),
    );
    assert_eq!(q1(&mut root, "SHOW CREATE USER u1"), shown);
    // Printable strings stay quoted; odd digits are a syntax error.
    exec(
        &mut root,
        "CREATE USER u2 IDENTIFIED WITH caching_sha2_password BY 'pw'",
    );
    let s2 = q1(&mut root, "SHOW CREATE USER u2");
    assert!(
        s2.contains("USING '$A$005$") || s2.contains("USING 0x2441"),
        "{s2}"
    );
    let e = common::try_exec(
        &mut root,
        "ALTER USER u1 IDENTIFIED WITH caching_sha2_password AS 0x244",
    )
    .unwrap_err();
    assert_eq!(common::err_code(&e).map(|c| c.0), Some(1064), "{e}");
}

#[test]
fn change_user_to_caching_sha2_accounts() {
    // The `mysql` crate without TLS: COM_CHANGE_USER gets a new scramble in an
    // AuthSwitchRequest; full authentication with the RSA key, then fast.
    let srv = Server::start("sha2-change");
    let mut root = srv.conn();
    exec(
        &mut root,
        "CREATE USER sha IDENTIFIED WITH caching_sha2_password BY 'secret'",
    );
    exec(&mut root, "CREATE USER nat IDENTIFIED BY 'natpw'");
    let to = |c: &mut mysql::Conn, u: &str, p: &str| {
        c.change_user(
            mysql::ChangeUserOpts::default()
                .with_user(Some(u.into()))
                .with_pass(Some(p.into())),
        )
    };
    let mut c = as_user(&srv, "nat", "natpw", None).unwrap();
    to(&mut c, "sha", "secret").unwrap();
    assert_eq!(q1(&mut c, "SELECT USER()"), "sha@localhost");
    to(&mut c, "nat", "natpw").unwrap();
    assert_eq!(q1(&mut c, "SELECT USER()"), "nat@localhost");
    to(&mut c, "sha", "secret").unwrap();
    assert_eq!(q1(&mut c, "SELECT USER()"), "sha@localhost");
    let e = to(&mut c, "sha", "wrong").unwrap_err();
    assert_eq!(common::err_code(&e).map(|c| c.0), Some(1045), "{e}");
    let mut c = as_user(&srv, "nat", "natpw", None).unwrap();
    let e = to(&mut c, "ghost", "secret").unwrap_err();
    assert_eq!(common::err_code(&e).map(|c| c.0), Some(1045), "{e}");
}

#[test]
fn private_key_readable_by_others_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("e2e-sha2-keymode");
    openssl(&dir.0, &["genrsa", "-out", "priv.pem", "2048"]);
    let key = dir.0.join("priv.pem");
    let opt = format!("--caching-sha2-password-private-key-path={}", key.display());
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let srv = Server::start_with("sha2-keymode", &[&opt]);
    assert!(
        !srv.log_tail(50).contains("readable by"),
        "{}",
        srv.log_tail(50)
    );
    drop(srv);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let srv = Server::start_with("sha2-keymode", &[&opt]);
    let log = srv.log_tail(50);
    assert!(
        log.contains("warning: --caching-sha2-password-private-key-path")
            && log.contains("readable by its group or by others (mode 644)"),
        "{log}"
    );
    drop(srv);
    // Writable by others (anyone could put in a key of theirs), or another
    // user's file (review of the sha2 work).
    for (mode, says) in [
        (0o620, "is writable by its group or by others (mode 620)"),
        (0o602, "is writable by its group or by others (mode 602)"),
        (
            0o666,
            "is readable and writable by its group or by others (mode 666)",
        ),
    ] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let srv = Server::start_with("sha2-keymode", &[&opt]);
        let log = srv.log_tail(50);
        assert!(log.contains(says), "{mode:o}: {log}");
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Another owner: only a superuser can give the file away.
    if std::os::unix::fs::chown(&key, Some(1), None).is_ok() {
        let srv = Server::start_with("sha2-keymode", &[&opt]);
        let log = srv.log_tail(50);
        assert!(
            log.contains("belongs to another user (uid 1) than the server's"),
            "{log}"
        );
    }
}
