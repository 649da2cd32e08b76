//! Byte-level tests against the mini server with the hand-written client in `raw/`:
//! the greeting's fields, client-chosen auth plugins and AuthSwitchRequest, SSL and
//! pre-4.1 refusals, text result sets with CLIENT_DEPRECATE_EOF and with classic EOF
//! packets, COM_FIELD_LIST, COM_STATISTICS, COM_SET_OPTION, OK packet bytes, COM_QUIT.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;
mod raw;

use std::io::Read;

use raw::*;

#[test]
fn greeting_fields() {
    let mut c = Raw::connect();
    let g = c.greeting();
    assert_eq!(g.version, "8.0.36-strata-test");
    for flag in [
        LONG_PASSWORD,
        CONNECT_WITH_DB,
        PROTOCOL_41,
        TRANSACTIONS,
        SECURE,
        PLUGIN_AUTH,
        CONNECT_ATTRS,
        LENENC_DATA,
        DEPRECATE_EOF,
        MULTI_RESULTS,
    ] {
        assert!(g.caps & flag != 0, "flag {flag:#x} missing");
    }
    assert_eq!(g.caps & SSL, 0);
    assert_eq!(g.charset, 45);
    assert_eq!(g.status, 2);
    assert_eq!(g.plugin, "mysql_native_password");
    assert_eq!(g.scramble.len(), 20);
    assert!(g
        .scramble
        .iter()
        .all(|&b| (33..=126).contains(&b) && b != b'$'));
}

#[test]
fn login_variants() {
    // Client picks caching_sha2_password itself (as MySQL 8 clients do): fast auth.
    let mut c = Raw::connect();
    let g = c.greeting();
    let auth = caching_sha2(&g.scramble, b"secret");
    c.write(&response(
        BASE | CONNECT_ATTRS | CONNECT_WITH_DB,
        "u",
        &auth,
        Some("db1"),
        Some("caching_sha2_password"),
    ));
    assert_eq!(c.read(), [0x01, 0x03]);
    assert_ok(&c.read());

    // MySQL 8 libmysqlclient on a server announcing mysql_native_password: its
    // caching_sha2_password plugin sends an empty first response and waits for a
    // challenge. It gets one for its own plugin (or native for a native-only account).
    for (user, pw, plugin) in [
        ("u", &b"secret"[..], "caching_sha2_password"),
        ("nat", b"natpw", "mysql_native_password"),
    ] {
        let mut c = Raw::connect();
        let g = c.greeting();
        c.write(&response(
            BASE,
            user,
            b"",
            None,
            Some("caching_sha2_password"),
        ));
        let sw = c.read();
        let mut expect = vec![0xFE];
        expect.extend_from_slice(plugin.as_bytes());
        expect.push(0);
        expect.extend_from_slice(&g.scramble);
        expect.push(0);
        assert_eq!(sw, expect, "{user}");
        if plugin == "caching_sha2_password" {
            c.write(&caching_sha2(&g.scramble, pw));
            assert_eq!(c.read(), [0x01, 0x03]);
        } else {
            c.write(&native(&g.scramble, pw));
        }
        assert_ok(&c.read());
    }
    // Same for an unknown user whose stand-in is a caching_sha2 account
    // (indistinguishable from one), then denied.
    let ghost = (0..)
        .map(|i| format!("ghost{i}"))
        .find(|n| wire::auth::decoy_plugin(n) == wire::AuthPlugin::CachingSha2Password)
        .unwrap();
    let mut c = Raw::connect();
    let g = c.greeting();
    c.write(&response(
        BASE,
        &ghost,
        b"",
        None,
        Some("caching_sha2_password"),
    ));
    assert_eq!(c.read()[0], 0xFE);
    c.write(&caching_sha2(&g.scramble, b"pw"));
    // A mismatch asks for full authentication (as MySQL); without TLS or an RSA
    // key pair the request for the key is denied.
    assert_eq!(c.read(), [0x01, 0x04]);
    c.write(&[0x02]);
    let msg = assert_err(&c.read(), 1045, "28000");
    assert_eq!(
        msg,
        format!("Access denied for user '{ghost}'@'localhost' (using password: YES)")
    );
    // An account without a password needs no challenge.
    let mut c = Raw::connect();
    c.greeting();
    c.write(&response(
        BASE,
        "root",
        b"",
        None,
        Some("caching_sha2_password"),
    ));
    assert_ok(&c.read());
    // An empty answer to the announced plugin is an empty password.
    let mut c = Raw::connect();
    c.greeting();
    c.write(&response(
        BASE,
        "u",
        b"",
        None,
        Some("mysql_native_password"),
    ));
    let msg = assert_err(&c.read(), 1045, "28000");
    assert!(msg.ends_with("(using password: NO)"), "{msg}");

    // Unknown plugin: switched to mysql_native_password with the same scramble.
    let mut c = Raw::connect();
    let g = c.greeting();
    c.write(&response(
        BASE,
        "u",
        b"whatever",
        None,
        Some("client_ed25519"),
    ));
    let sw = c.read();
    let mut expect = vec![0xFE];
    expect.extend_from_slice(b"mysql_native_password\0");
    expect.extend_from_slice(&g.scramble);
    expect.push(0);
    assert_eq!(sw, expect);
    c.write(&native(&g.scramble, b"secret"));
    assert_ok(&c.read());

    // Switched, then the wrong password.
    let mut c = Raw::connect();
    let g = c.greeting();
    c.write(&response(BASE, "u", b"x", None, Some("dialog")));
    assert_eq!(c.read()[0], 0xFE);
    c.write(&native(&g.scramble, b"wrong"));
    let msg = assert_err(&c.read(), 1045, "28000");
    assert_eq!(
        msg,
        "Access denied for user 'u'@'localhost' (using password: YES)"
    );

    // Old-style client: no PLUGIN_AUTH, 1-byte auth length.
    let mut c = Raw::connect();
    let g = c.greeting();
    c.write(&response(
        LONG_PASSWORD | PROTOCOL_41 | SECURE,
        "u",
        &native(&g.scramble, b"secret"),
        None,
        None,
    ));
    assert_ok(&c.read());

    // SSL request: refused.
    let mut c = Raw::connect();
    c.greeting();
    let mut p = (BASE | SSL).to_le_bytes().to_vec();
    p.extend_from_slice(&(1u32 << 24).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    c.write(&p);
    assert_err(&c.read(), 1043, "08S01");

    // Pre-4.1 client: refused without SQLSTATE (the client can't parse one).
    let mut c = Raw::connect();
    c.greeting();
    c.write(&[1, 0, 0, 0, 0, 0, 0, b'u', 0]);
    let p = c.read();
    assert_eq!(p[0], 0xFF);
    assert_eq!(u16::from_le_bytes([p[1], p[2]]), 1043);
}

fn check_select1(c: &mut Raw, deprecate: bool) {
    c.command(b"\x03select 1");
    let p = c.read();
    assert_eq!(p, [10]);
    let names: Vec<String> = (0..10).map(|_| coldef(&c.read()).0).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
    if !deprecate {
        assert_eq!(c.read(), [0xFE, 0, 0, 2, 0], "EOF after columns");
    }
    let row = c.read();
    assert_eq!(&row[..9], b"\x011\x05hello\xFB");
    let end = c.read();
    assert!(is_terminator(&end, deprecate), "{end:?}");
    if deprecate {
        assert_eq!(end, [0xFE, 0, 0, 2, 0, 0, 0]);
    }
}

/// One binary-protocol value as the test understands it.

#[test]
fn command_flows_deprecate_eof() {
    let mut c = login(BASE | DEPRECATE_EOF);
    check_select1(&mut c, true);
    misc_commands(&mut c, true);
}

#[test]
fn command_flows_classic_eof() {
    let mut c = login(BASE);
    check_select1(&mut c, false);
    misc_commands(&mut c, false);
}

fn misc_commands(c: &mut Raw, deprecate: bool) {
    // COM_FIELD_LIST: definitions with a NULL default, then the terminator.
    c.command(b"\x04t\0");
    for name in ["id", "name"] {
        let p = c.read();
        assert_eq!(coldef(&p).0, name);
        assert_eq!(*p.last().unwrap(), 0xFB);
    }
    assert!(is_terminator(&c.read(), deprecate));
    c.command(&[0x09]);
    assert!(c.read().starts_with(b"Uptime: "));
    c.command(&[0x1B, 1, 0]);
    assert_eq!(c.read(), [0xFE, 0, 0, 2, 0]);
    c.command(&[0x05, b'd']);
    assert_err(&c.read(), 1047, "08S01");
    c.command(b"\x03insert x");
    let info = b"Records: 3  Duplicates: 0  Warnings: 1";
    let mut ok = vec![0x00, 3, 42, 2, 0, 1, 0, info.len() as u8];
    ok.extend_from_slice(info);
    assert_eq!(c.read(), ok);
    c.command(&[0x0E]);
    assert_eq!(c.read(), [0, 0, 0, 2, 0, 0, 0]);
    c.command(&[0x01]);
    let mut b = [0u8; 1];
    assert_eq!(
        c.s.read(&mut b).unwrap(),
        0,
        "connection closed after COM_QUIT"
    );
}
