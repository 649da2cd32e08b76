//! A hand-written MySQL client for byte-level tests (independent of `wire`'s own
//! codecs): packet I/O with sequence checks, greeting parsing, HandshakeResponse41
//! building, both password scrambles, and small packet parsers.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;

use crate::common::{start, ServerConfig};
use sha1::Sha1;
use sha2::{Digest, Sha256};

pub const LONG_PASSWORD: u32 = 1;
pub const CONNECT_WITH_DB: u32 = 8;
pub const PROTOCOL_41: u32 = 1 << 9;
pub const SSL: u32 = 1 << 11;
pub const TRANSACTIONS: u32 = 1 << 13;
pub const SECURE: u32 = 1 << 15;
pub const MULTI_RESULTS: u32 = 1 << 17;
pub const PLUGIN_AUTH: u32 = 1 << 19;
pub const CONNECT_ATTRS: u32 = 1 << 20;
pub const LENENC_DATA: u32 = 1 << 21;
pub const DEPRECATE_EOF: u32 = 1 << 24;
pub const BASE: u32 =
    LONG_PASSWORD | PROTOCOL_41 | TRANSACTIONS | SECURE | MULTI_RESULTS | PLUGIN_AUTH | LENENC_DATA;

pub fn port() -> u16 {
    static P: OnceLock<u16> = OnceLock::new();
    *P.get_or_init(|| start(ServerConfig::default()))
}

pub struct Raw {
    pub s: TcpStream,
    pub seq: u8,
}

pub struct Greeting {
    pub caps: u32,
    pub charset: u8,
    pub status: u16,
    pub scramble: Vec<u8>,
    pub plugin: String,
    pub version: String,
}

impl Raw {
    pub fn connect() -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port())).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        Raw { s, seq: 0 }
    }

    /// Reads one logical packet, checking the sequence id.
    pub fn read(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.s.read_exact(&mut h).unwrap();
            assert_eq!(h[3], self.seq, "sequence id");
            self.seq = self.seq.wrapping_add(1);
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            let start = out.len();
            out.resize(start + len, 0);
            self.s.read_exact(&mut out[start..]).unwrap();
            if len < 0xFF_FFFF {
                return out;
            }
        }
    }

    pub fn write(&mut self, payload: &[u8]) {
        let mut b = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        b.push(self.seq);
        self.seq = self.seq.wrapping_add(1);
        b.extend_from_slice(payload);
        self.s.write_all(&b).unwrap();
    }

    pub fn command(&mut self, payload: &[u8]) {
        self.seq = 0;
        self.write(payload);
    }

    pub fn greeting(&mut self) -> Greeting {
        let p = self.read();
        assert_eq!(p[0], 10, "protocol version");
        let nul = p.iter().position(|&b| b == 0).unwrap();
        let version = String::from_utf8(p[1..nul].to_vec()).unwrap();
        let mut i = nul + 1 + 4;
        let mut scramble = p[i..i + 8].to_vec();
        i += 8;
        assert_eq!(p[i], 0, "filler");
        i += 1;
        let lo = u16::from_le_bytes([p[i], p[i + 1]]) as u32;
        let charset = p[i + 2];
        let status = u16::from_le_bytes([p[i + 3], p[i + 4]]);
        let hi = u16::from_le_bytes([p[i + 5], p[i + 6]]) as u32;
        let auth_len = p[i + 7] as usize;
        assert_eq!(auth_len, 21);
        i += 8;
        assert_eq!(&p[i..i + 10], &[0u8; 10], "reserved");
        i += 10;
        scramble.extend_from_slice(&p[i..i + 12]);
        assert_eq!(p[i + 12], 0, "scramble terminator");
        i += 13;
        let end = p[i..].iter().position(|&b| b == 0).unwrap();
        let plugin = String::from_utf8(p[i..i + end].to_vec()).unwrap();
        assert_eq!(i + end + 1, p.len());
        Greeting {
            caps: lo | hi << 16,
            charset,
            status,
            scramble,
            plugin,
            version,
        }
    }
}

pub fn sha1(parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha1::new();
    parts.iter().for_each(|p| h.update(p));
    h.finalize().to_vec()
}

pub fn sha256(parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha256::new();
    parts.iter().for_each(|p| h.update(p));
    h.finalize().to_vec()
}

pub fn native(scramble: &[u8], pw: &[u8]) -> Vec<u8> {
    let h1 = sha1(&[pw]);
    let t = sha1(&[scramble, &sha1(&[&h1])]);
    h1.iter().zip(t).map(|(a, b)| a ^ b).collect()
}

pub fn caching_sha2(scramble: &[u8], pw: &[u8]) -> Vec<u8> {
    let h1 = sha256(&[pw]);
    let t = sha256(&[&sha256(&[&h1]), scramble]);
    h1.iter().zip(t).map(|(a, b)| a ^ b).collect()
}

pub fn lenenc(out: &mut Vec<u8>, b: &[u8]) {
    assert!(b.len() < 251);
    out.push(b.len() as u8);
    out.extend_from_slice(b);
}

pub fn response(
    caps: u32,
    user: &str,
    auth: &[u8],
    db: Option<&str>,
    plugin: Option<&str>,
) -> Vec<u8> {
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    if caps & LENENC_DATA != 0 {
        lenenc(&mut p, auth);
    } else {
        p.push(auth.len() as u8);
        p.extend_from_slice(auth);
    }
    if let Some(db) = db {
        p.extend_from_slice(db.as_bytes());
        p.push(0);
    }
    if let Some(pl) = plugin {
        p.extend_from_slice(pl.as_bytes());
        p.push(0);
    }
    if caps & CONNECT_ATTRS != 0 {
        let mut a = Vec::new();
        lenenc(&mut a, b"_client_name");
        lenenc(&mut a, b"raw");
        lenenc(&mut a, b"k");
        lenenc(&mut a, b"");
        lenenc(&mut p, &a);
    }
    p
}

pub fn assert_ok(p: &[u8]) {
    assert_eq!(p[0], 0x00, "expected OK, got {p:?}");
}

pub fn assert_err(p: &[u8], code: u16, state: &str) -> String {
    assert_eq!(p[0], 0xFF, "expected ERR, got {p:?}");
    assert_eq!(u16::from_le_bytes([p[1], p[2]]), code);
    assert_eq!(p[3], b'#');
    assert_eq!(&p[4..9], state.as_bytes());
    String::from_utf8_lossy(&p[9..]).into_owned()
}

/// Logs in as root with `caps`.
pub fn login(caps: u32) -> Raw {
    let mut c = Raw::connect();
    c.greeting();
    c.write(&response(
        caps,
        "root",
        b"",
        None,
        Some("mysql_native_password"),
    ));
    assert_ok(&c.read());
    c
}

/// A column definition's (name, type, flags).
pub fn coldef(p: &[u8]) -> (String, u8, u16) {
    let mut i = 0;
    let mut fields = Vec::new();
    for _ in 0..6 {
        let n = p[i] as usize;
        fields.push(p[i + 1..i + 1 + n].to_vec());
        i += 1 + n;
    }
    assert_eq!(fields[0], b"def");
    assert_eq!(p[i], 0x0C);
    let t = p[i + 7];
    let flags = u16::from_le_bytes([p[i + 8], p[i + 9]]);
    (String::from_utf8(fields[4].clone()).unwrap(), t, flags)
}

pub fn is_terminator(p: &[u8], deprecate: bool) -> bool {
    if deprecate {
        p[0] == 0xFE && p.len() < 9 && p.len() >= 7
    } else {
        p == [0xFE, 0, 0, 2, 0]
    }
}
