//! caching_sha2_password's packet exchange, byte by byte with the hand-written
//! client in `raw/`: fast authentication from the cache (`01 03`), full
//! authentication (`01 04`) with the clear-text password on a secure transport and
//! with RSA-OAEP otherwise (with and without asking for the public key, `02`),
//! plugin switches both ways, and hostile input at each step (wrong lengths,
//! garbage ciphertexts, a vanished client): always ERR 1045 or a closed connection,
//! never a panic, and never a login for an unknown user.
#![allow(clippy::unwrap_used)]

mod common;
mod raw;

use std::net::TcpListener;
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use raw::*;
use wire::sha2crypt::sha2_auth_string;
use wire::{AuthPlugin, Conn, Credentials, RsaKeys};

const CS: &str = "caching_sha2_password";

fn keys() -> Arc<RsaKeys> {
    static K: OnceLock<Arc<RsaKeys>> = OnceLock::new();
    K.get_or_init(|| Arc::new(RsaKeys::generate(1024).unwrap().0))
        .clone()
}

/// A one-connection-at-a-time server: `cs`/`cspw` (caching_sha2, stored string),
/// `nat`/`natpw` (native). A successful full authentication fills the cache.
struct Srv {
    port: u16,
    /// Each connection's outcome: the plugin that logged in, or the error.
    out: Receiver<Result<String, String>>,
    cache: Arc<Mutex<Option<[u8; 32]>>>,
}

fn server(plugin: AuthPlugin, unix: bool, rsa: bool) -> Srv {
    spawn(plugin, unix, rsa, false)
}

/// With `change`, each connection logs in as `root` (no password) and the outcome
/// is that of the COM_CHANGE_USER that follows.
fn spawn(plugin: AuthPlugin, unix: bool, rsa: bool, change: bool) -> Srv {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, out) = channel();
    let cache = Arc::new(Mutex::new(None));
    let c2 = cache.clone();
    let stored = sha2_auth_string(b"cspw", b"0123456789abcdefghij");
    thread::spawn(move || {
        for s in l.incoming() {
            let mut conn = Conn::new(s.unwrap(), 1, "8.0.36-test");
            conn.set_default_auth_plugin(plugin);
            conn.set_unix_socket(unix);
            if rsa {
                conn.set_rsa_keys(keys());
            }
            let cached = *c2.lock().unwrap();
            let lookup = |u: &str| match u {
                "cs" => Some(Credentials {
                    sha2_auth: Some(stored.clone()),
                    sha2_hash: cached,
                    ..Credentials::empty()
                }),
                "nat" => Some(Credentials {
                    native_hash: Some(wire::native_password_hash(b"natpw")),
                    ..Credentials::empty()
                }),
                "root" => Some(Credentials::empty()),
                _ => None,
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let info = conn.handshake(&lookup)?;
                if !change {
                    return Ok(info);
                }
                match conn.read_command()? {
                    wire::Command::ChangeUser(cu) => conn.change_user(&cu, &lookup),
                    other => panic!("{other:?}"),
                }
            }));
            let r = match r {
                Ok(Ok(info)) => {
                    if let Some((h, s)) = info.sha2_verified {
                        assert_eq!(s, stored);
                        *c2.lock().unwrap() = Some(h);
                    }
                    Ok(info.auth_plugin)
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err("PANIC".to_string()),
            };
            tx.send(r).unwrap();
        }
    });
    Srv { port, out, cache }
}

impl Srv {
    fn connect(&self) -> (Raw, Greeting) {
        let s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let mut c = Raw { s, seq: 0 };
        let g = c.greeting();
        (c, g)
    }
    fn outcome(&self) -> Result<String, String> {
        let r = self
            .out
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        assert!(
            r.as_ref().err().map(String::as_str) != Some("PANIC"),
            "the server panicked"
        );
        r
    }
    /// Logs in `user` with caching_sha2's scramble of `pw`; returns the client after
    /// the server's first answer (checked to be `first`).
    fn start(&self, user: &str, pw: &[u8], first: &[u8]) -> (Raw, Greeting) {
        let (mut c, g) = self.connect();
        c.write(&response(
            BASE,
            user,
            &caching_sha2(&g.scramble, pw),
            None,
            Some(CS),
        ));
        assert_eq!(c.read(), first);
        (c, g)
    }
}

fn cleartext(pw: &[u8]) -> Vec<u8> {
    let mut v = pw.to_vec();
    v.push(0);
    v
}

fn denied(c: &mut Raw, user: &str) {
    denied_packet(&c.read(), user);
}

fn denied_packet(p: &[u8], user: &str) {
    let m = assert_err(p, 1045, "28000");
    assert!(
        m.starts_with(&format!("Access denied for user '{user}'@")),
        "{m}"
    );
}

#[test]
fn secure_transport_full_then_fast() {
    let srv = server(AuthPlugin::CachingSha2Password, true, false);
    // Nothing cached yet: a wrong password gets full authentication, then 1045.
    let (mut c, _) = srv.start("cs", b"nope", &[1, 4]);
    c.write(&cleartext(b"nope"));
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    assert!(srv.cache.lock().unwrap().is_none());
    // The right one, in clear text: OK, and the cache is filled.
    let (mut c, _) = srv.start("cs", b"cspw", &[1, 4]);
    c.write(&cleartext(b"cspw"));
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    assert_eq!(
        *srv.cache.lock().unwrap(),
        Some(wire::sha2_password_hash(b"cspw"))
    );
    // Second time: fast authentication.
    let (mut c, _) = srv.start("cs", b"cspw", &[1, 3]);
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    // A wrong scramble with a cache entry: full authentication again, 1045.
    let (mut c, _) = srv.start("cs", b"cspX", &[1, 4]);
    c.write(&cleartext(b"cspX"));
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    // A password without its NUL counts too.
    let (mut c, _) = srv.start("cs", b"x", &[1, 4]);
    c.write(b"cspw");
    assert_ok(&c.read());
    srv.outcome().unwrap();
}

#[test]
fn rsa_key_exchange() {
    let srv = server(AuthPlugin::CachingSha2Password, false, true);
    let pem = keys().public_pem().to_string();
    // Asking for the key (02), then the encrypted password.
    let (mut c, g) = srv.start("cs", b"cspw", &[1, 4]);
    c.write(&[2]);
    let k = c.read();
    assert_eq!(k[0], 1);
    assert_eq!(&k[1..], pem.as_bytes());
    c.write(&wire::rsa_keys::encrypt_password(&pem, b"cspw", &g.scramble).unwrap());
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    // A client that has the key already sends the ciphertext at once; the wrong
    // password gets 1045.
    let (mut c, g) = srv.start("cs", b"bad", &[1, 4]);
    c.write(&wire::rsa_keys::encrypt_password(&pem, b"bad", &g.scramble).unwrap());
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    // Encrypted without the scramble XOR: wrong.
    let (mut c, _) = srv.start("cs", b"bad", &[1, 4]);
    c.write(&wire::rsa_keys::encrypt_password(&pem, b"cspw", &[]).unwrap());
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    // Clear text without TLS is not taken.
    let (mut c, _) = srv.start("cs", b"bad", &[1, 4]);
    c.write(&cleartext(b"cspw"));
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
}

#[test]
fn hostile_full_authentication() {
    let srv = server(AuthPlugin::CachingSha2Password, false, true);
    let mut seed = 0x5eed_u64;
    if let Ok(s) = std::env::var("SEED") {
        seed = s.parse().unwrap();
    }
    println!("SEED={seed}");
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Garbage of every interesting length, after asking for the key or not.
    for len in [0usize, 1, 2, 127, 128, 129, 255, 256, 1000] {
        for ask in [false, true] {
            let (mut c, _) = srv.start("cs", b"x", &[1, 4]);
            if ask {
                c.write(&[2]);
                assert_eq!(c.read()[0], 1);
            }
            let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            c.write(&junk);
            denied(&mut c, "cs");
            assert!(srv.outcome().is_err());
        }
    }
    // Asking for the key twice: the second 02 is a (bad) ciphertext.
    let (mut c, _) = srv.start("cs", b"x", &[1, 4]);
    c.write(&[2]);
    c.read();
    c.write(&[2]);
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    // A client that goes away at each step: the connection just ends.
    let (c, _) = srv.start("cs", b"x", &[1, 4]);
    drop(c);
    assert!(srv.outcome().is_err());
    let (mut c, _) = srv.start("cs", b"x", &[1, 4]);
    c.write(&[2]);
    drop(c);
    assert!(srv.outcome().is_err());
    // A truncated packet header.
    let (mut c, _) = srv.start("cs", b"x", &[1, 4]);
    std::io::Write::write_all(&mut c.s, &[5, 0]).unwrap();
    drop(c);
    assert!(srv.outcome().is_err());
    // Wrong fast-auth lengths go to full authentication too.
    for len in [1usize, 31, 33, 200] {
        let (mut c, _) = srv.connect();
        c.write(&response(BASE, "cs", &vec![7u8; len], None, Some(CS)));
        assert_eq!(c.read(), [1, 4]);
        c.write(&[0xFF; 3]);
        denied(&mut c, "cs");
        assert!(srv.outcome().is_err());
    }
    // No key pair and no secure transport: 1045 whatever is sent.
    let srv = server(AuthPlugin::CachingSha2Password, false, false);
    let (mut c, _) = srv.start("cs", b"cspw", &[1, 4]);
    c.write(&[2]);
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
}

/// A user name whose stand-in (no such account) is of `plugin`.
fn ghost_of(plugin: AuthPlugin) -> String {
    (0..)
        .map(|i| format!("ghost{i}"))
        .find(|n| wire::auth::decoy_plugin(n) == plugin)
        .unwrap()
}

#[test]
fn unknown_users_never_log_in() {
    // The stand-in of an unknown user is random: sending the scramble (which the
    // client knows) as the password must not let it in.
    let srv = server(AuthPlugin::CachingSha2Password, true, false);
    let ghost = ghost_of(AuthPlugin::CachingSha2Password);
    let (mut c, g) = srv.start(&ghost, b"x", &[1, 4]);
    c.write(&cleartext(&g.scramble));
    denied(&mut c, &ghost);
    assert!(srv.outcome().is_err());
    let (mut c, g) = srv.connect();
    let resp = caching_sha2(&g.scramble, &g.scramble);
    c.write(&response(BASE, &ghost, &resp, None, Some(CS)));
    let p = c.read();
    if p == [1, 3] {
        panic!("fast authentication for an unknown user");
    }
    assert_eq!(p, [1, 4]);
    c.write(&cleartext(&g.scramble));
    denied(&mut c, &ghost);
    assert!(srv.outcome().is_err());
    // A native stand-in: the client is switched to native, then denied.
    let ghost = ghost_of(AuthPlugin::NativePassword);
    let (mut c, g) = srv.connect();
    c.write(&response(BASE, &ghost, &resp, None, Some(CS)));
    let sw = c.read();
    assert!(sw.starts_with(b"\xFEmysql_native_password\0"), "{sw:?}");
    c.write(&native(&g.scramble, &g.scramble));
    denied(&mut c, &ghost);
    assert!(srv.outcome().is_err());
}

#[test]
fn plugin_switches_both_ways() {
    // A native greeting, a caching_sha2 account: switched to caching_sha2.
    let srv = server(AuthPlugin::NativePassword, true, false);
    let (mut c, g) = srv.connect();
    c.write(&response(
        BASE,
        "cs",
        &native(&g.scramble, b"cspw"),
        None,
        Some("mysql_native_password"),
    ));
    let sw = c.read();
    let mut want = vec![0xFE];
    want.extend_from_slice(b"caching_sha2_password\0");
    want.extend_from_slice(&g.scramble);
    want.push(0);
    assert_eq!(sw, want);
    c.write(&caching_sha2(&g.scramble, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&cleartext(b"cspw"));
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    // A caching_sha2 greeting, a native account: switched to native.
    let srv = server(AuthPlugin::CachingSha2Password, false, true);
    let (mut c, g) = srv.connect();
    c.write(&response(
        BASE,
        "nat",
        &caching_sha2(&g.scramble, b"natpw"),
        None,
        Some(CS),
    ));
    let sw = c.read();
    assert_eq!(sw[0], 0xFE);
    assert!(sw.starts_with(b"\xFEmysql_native_password\0"));
    c.write(&native(&g.scramble, b"natpw"));
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), "mysql_native_password");
    // ... with a wrong password: 1045.
    let (mut c, g) = srv.connect();
    c.write(&response(
        BASE,
        "nat",
        &caching_sha2(&g.scramble, b"x"),
        None,
        Some(CS),
    ));
    assert_eq!(c.read()[0], 0xFE);
    c.write(&native(&g.scramble, b"x"));
    denied(&mut c, "nat");
    assert!(srv.outcome().is_err());
}

/// The server's side of a login of `user` with the wrong password, the client
/// being of `flavour`: 0 starts with mysql_native_password, 1 with
/// caching_sha2_password, 2 sends an empty first response for
/// mysql_native_password, 3 for caching_sha2_password. Each server packet, the
/// user name in an ERR replaced by `U` and scrambles left out; the client answers
/// every switch and full-authentication request (clear text: a secure transport).
fn trace(srv: &Srv, user: &str, flavour: u8) -> Vec<String> {
    let pw = b"wrong";
    let (mut c, g) = srv.connect();
    let (resp, plugin) = match flavour {
        0 => (native(&g.scramble, pw), "mysql_native_password"),
        1 => (caching_sha2(&g.scramble, pw), CS),
        2 => (Vec::new(), "mysql_native_password"),
        _ => (Vec::new(), CS),
    };
    c.write(&response(BASE, user, &resp, None, Some(plugin)));
    let mut t = Vec::new();
    loop {
        let p = c.read();
        match p[0] {
            0xFE => {
                let name_len = p[1..].iter().position(|&b| b == 0).unwrap();
                let name = String::from_utf8_lossy(&p[1..1 + name_len]).into_owned();
                let scramble = &p[2 + name_len..p.len() - 1];
                t.push(format!("switch {name} {}", scramble.len()));
                c.write(&if name == CS {
                    caching_sha2(scramble, pw)
                } else {
                    native(scramble, pw)
                });
            }
            0xFF => {
                let m = String::from_utf8_lossy(&p[9..]).replace(&format!("'{user}'"), "'U'");
                t.push(format!("err {} {m}", u16::from_le_bytes([p[1], p[2]])));
                break;
            }
            _ if p == [1, 4] => {
                t.push("full".into());
                c.write(&cleartext(pw));
            }
            _ => {
                t.push(format!("{p:?}"));
                break;
            }
        }
    }
    assert!(srv.outcome().is_err(), "{user} logged in");
    t
}

#[test]
fn unknown_users_look_like_accounts() {
    // For each greeting plugin and client flavour, an unknown user's exchange is the
    // exchange of an account of one of the two plugins with a wrong password: the
    // same plugin for a name in every flavour and every attempt, and names get both.
    let mut plugins_seen = [false; 2];
    let servers = [
        server(AuthPlugin::NativePassword, true, false),
        server(AuthPlugin::CachingSha2Password, true, false),
    ];
    let traces = |user: &str| -> Vec<Vec<String>> {
        let mut v = Vec::new();
        for srv in &servers {
            for f in 0..4 {
                v.push(trace(srv, user, f));
            }
        }
        v
    };
    let nat = traces("nat");
    let cs = traces("cs");
    assert_ne!(nat, cs, "the two plugins' exchanges differ");
    for i in 0..24 {
        let ghost = format!("ghost{i}");
        let t = traces(&ghost);
        let which = if t == nat {
            0
        } else if t == cs {
            1
        } else {
            panic!("{ghost}: {t:?}\nnative: {nat:?}\ncaching_sha2: {cs:?}");
        };
        plugins_seen[which] = true;
        assert_eq!(traces(&ghost), t, "{ghost} again");
    }
    assert_eq!(plugins_seen, [true, true], "stand-ins of both plugins");
}

/// A COM_CHANGE_USER packet (protocol 4.1, with plugin auth if `plugin`).
fn change_user_packet(user: &str, auth: &[u8], plugin: Option<&str>) -> Vec<u8> {
    let mut p = vec![0x11];
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    p.push(auth.len() as u8);
    p.extend_from_slice(auth);
    p.push(0); // no database
    p.extend_from_slice(&45u16.to_le_bytes());
    if let Some(plugin) = plugin {
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
    }
    p
}

/// Logs in as root, then sends COM_CHANGE_USER for `user` with `plugin`'s
/// response made from the handshake's scramble; returns the client, the
/// handshake's scramble and the AuthSwitchRequest's (checked to name `want`).
fn change_to(
    srv: &Srv,
    user: &str,
    pw: &[u8],
    plugin: &str,
    want: &str,
) -> (Raw, Vec<u8>, Vec<u8>) {
    let (mut c, g) = srv.connect();
    c.write(&response(BASE, "root", b"", None, Some(plugin)));
    assert_ok(&c.read());
    let resp = if plugin == CS {
        caching_sha2(&g.scramble, pw)
    } else {
        native(&g.scramble, pw)
    };
    c.seq = 0;
    c.write(&change_user_packet(user, &resp, Some(plugin)));
    let sw = c.read();
    let mut head = vec![0xFE];
    head.extend_from_slice(want.as_bytes());
    head.push(0);
    assert!(sw.starts_with(&head), "{sw:?}");
    assert_eq!(sw.len(), head.len() + 21);
    assert_eq!(sw.last(), Some(&0));
    let s = sw[head.len()..head.len() + 20].to_vec();
    assert_ne!(s, g.scramble, "a new scramble");
    (c, g.scramble, s)
}

#[test]
fn change_user_gets_a_new_scramble() {
    // Secure transport: fast authentication after a full one, clear text.
    let srv = spawn(AuthPlugin::CachingSha2Password, true, false, true);
    let (mut c, old, s) = change_to(&srv, "cs", b"cspw", CS, CS);
    // An answer made with the handshake's scramble is not taken.
    c.write(&caching_sha2(&old, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&cleartext(b"cspX"));
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    let (mut c, _, s2) = change_to(&srv, "cs", b"cspw", CS, CS);
    assert_ne!(s, s2);
    c.write(&caching_sha2(&s2, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&cleartext(b"cspw"));
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    let (mut c, _, s) = change_to(&srv, "cs", b"cspw", CS, CS);
    c.write(&caching_sha2(&s, b"cspw"));
    assert_eq!(c.read(), [1, 3], "fast authentication");
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    // A replayed fast-auth answer (the old scramble's) is full authentication.
    let (mut c, old, _) = change_to(&srv, "cs", b"cspw", CS, CS);
    c.write(&caching_sha2(&old, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&cleartext(b"nope"));
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    // A native client changing to a caching_sha2 account is switched to the account's
    // plugin; to a native account it stays native, with the new scramble.
    let (mut c, _, s) = change_to(&srv, "cs", b"cspw", "mysql_native_password", CS);
    c.write(&caching_sha2(&s, b"cspw"));
    assert_eq!(c.read(), [1, 3]);
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
    let (mut c, old, s) = change_to(&srv, "nat", b"natpw", CS, "mysql_native_password");
    c.write(&native(&old, b"natpw"));
    denied(&mut c, "nat");
    assert!(srv.outcome().is_err());
    let _ = s;
    let (mut c, _, s) = change_to(&srv, "nat", b"natpw", CS, "mysql_native_password");
    c.write(&native(&s, b"natpw"));
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), "mysql_native_password");
    // RSA over plain TCP: the password is XORed with the new scramble.
    let srv = spawn(AuthPlugin::CachingSha2Password, false, true, true);
    let pem = keys().public_pem().to_string();
    let (mut c, old, s) = change_to(&srv, "cs", b"cspw", CS, CS);
    c.write(&caching_sha2(&s, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&[2]);
    assert_eq!(c.read()[0], 1);
    c.write(&wire::rsa_keys::encrypt_password(&pem, b"cspw", &old).unwrap());
    denied(&mut c, "cs");
    assert!(srv.outcome().is_err());
    let (mut c, _, s) = change_to(&srv, "cs", b"cspw", CS, CS);
    c.write(&caching_sha2(&s, b"cspw"));
    assert_eq!(c.read(), [1, 4]);
    c.write(&wire::rsa_keys::encrypt_password(&pem, b"cspw", &s).unwrap());
    assert_ok(&c.read());
    assert_eq!(srv.outcome().unwrap(), CS);
}

#[test]
fn full_authentication_keeps_inner_nul_bytes() {
    // A password with a NUL inside: only the terminating NUL is dropped.
    let stored = sha2_auth_string(b"a\0b", b"0123456789abcdefghij");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, out) = channel();
    thread::spawn(move || {
        for s in l.incoming() {
            let mut conn = Conn::new(s.unwrap(), 1, "8.0.36-test");
            conn.set_default_auth_plugin(AuthPlugin::CachingSha2Password);
            conn.set_unix_socket(true);
            let lookup = |_: &str| {
                Some(Credentials {
                    sha2_auth: Some(stored.clone()),
                    ..Credentials::empty()
                })
            };
            tx.send(
                conn.handshake(&lookup)
                    .map(|i| i.auth_plugin)
                    .map_err(|e| e.to_string()),
            )
            .unwrap();
        }
    });
    let srv = Srv {
        port,
        out,
        cache: Arc::new(Mutex::new(None)),
    };
    for (sent, good) in [(&b"a\0b"[..], true), (b"a", false), (b"a\0c", false)] {
        let (mut c, _) = srv.start("u", b"x", &[1, 4]);
        c.write(&cleartext(sent));
        if good {
            assert_ok(&c.read());
        } else {
            denied(&mut c, "u");
        }
        assert_eq!(srv.outcome().is_ok(), good, "{sent:?}");
    }
}

/// A client without CLIENT_PLUGIN_AUTH (a protocol 4.1 client that only knows
/// native auth) cannot take an AuthSwitchRequest: its COM_CHANGE_USER
/// response, made with the scramble it was sent, is checked as it is, and an
/// account it cannot log in to (caching_sha2 only, unknown) is refused (review
/// of the sha2 work).
#[test]
fn change_user_without_plugin_auth_checks_its_own_response() {
    for plugin in [AuthPlugin::NativePassword, AuthPlugin::CachingSha2Password] {
        let srv = spawn(plugin, false, true, true);
        let caps = BASE & !(PLUGIN_AUTH | LENENC_DATA);
        for (user, pw, ok) in [
            ("nat", &b"natpw"[..], true),
            ("nat", b"natpX", false),
            ("ghost", b"natpw", false),
            ("cs", b"cspw", false),
            ("root", b"", true),
        ] {
            let (mut c, g) = srv.connect();
            c.write(&response(caps, "root", b"", None, None));
            assert_ok(&c.read());
            c.seq = 0;
            let auth = if pw.is_empty() {
                Vec::new()
            } else {
                native(&g.scramble, pw)
            };
            c.write(&change_user_packet(user, &auth, None));
            let r = c.read();
            if ok {
                assert_ok(&r);
                assert_eq!(srv.outcome().unwrap(), "mysql_native_password");
            } else {
                assert_eq!(r.first(), Some(&0xFF), "{user}: {r:?}");
                denied_packet(&r, user);
                assert!(srv.outcome().is_err());
            }
        }
    }
}
