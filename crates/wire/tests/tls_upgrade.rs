//! `Conn::enable_tls` without a TLS library: the "TLS" is a byte-wise XOR the
//! upgrade switches the stream to, so the test sees exactly what the handshake
//! hands over. CLIENT_SSL is advertised only with `enable_tls`; the bytes the
//! client sent right behind its SSLRequest (read ahead by the packet reader)
//! reach the upgrade; the full response is read through the switched stream;
//! `HandshakeInfo::tls` and `is_tls` say so; a second SSLRequest is 1043; a
//! failed upgrade ends the handshake with its I/O error and sends nothing.
#![allow(clippy::unwrap_used)]

mod common;
mod raw;

use raw::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;
use wire::{Conn, Credentials, HandshakeInfo};

const KEY: u8 = 0x5A;

/// A socket that XORs every byte once switched.
struct Shim {
    inner: TcpStream,
    /// Bytes already received (from before the switch), read first.
    pending: Vec<u8>,
    on: bool,
}

impl Read for Shim {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = if !self.pending.is_empty() {
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            n
        } else {
            self.inner.read(buf)?
        };
        if self.on {
            buf[..n].iter_mut().for_each(|b| *b ^= KEY);
        }
        Ok(n)
    }
}

impl Write for Shim {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let b: Vec<u8> = buf
            .iter()
            .map(|x| if self.on { x ^ KEY } else { *x })
            .collect();
        self.inner.write_all(&b)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Serves one connection; `fail` makes the upgrade fail. Sends the
/// handshake's outcome and the bytes the upgrade was given.
fn server(
    fail: bool,
    offer: bool,
) -> (
    u16,
    mpsc::Receiver<(Result<HandshakeInfo, String>, Vec<u8>, bool)>,
) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let shim = Shim {
            inner: s,
            pending: Vec::new(),
            on: false,
        };
        let mut conn = Conn::new(shim, 7, "8.0.36-tls-test");
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if offer {
            let seen2 = seen.clone();
            conn.enable_tls(Box::new(move |s: &mut Shim, early: &[u8]| {
                seen2.lock().unwrap().extend_from_slice(early);
                if fail {
                    return Err(std::io::Error::other("bad ClientHello"));
                }
                s.pending = early.to_vec();
                s.on = true;
                Ok(())
            }));
        }
        let r = conn
            .handshake(&|u| (u == "root").then(Credentials::empty))
            .map_err(|e| e.to_string());
        let early = seen.lock().unwrap().clone();
        let _ = tx.send((r, early, conn.is_tls()));
    });
    (port, rx)
}

fn ssl_request() -> Vec<u8> {
    let mut p = (BASE | SSL).to_le_bytes().to_vec();
    p.extend_from_slice(&(1u32 << 24).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p
}

fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut b = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    b.push(seq);
    b.extend_from_slice(payload);
    b
}

fn xor(b: &[u8]) -> Vec<u8> {
    b.iter().map(|x| x ^ KEY).collect()
}

/// Connects and returns the stream and the greeting's capability flags.
fn connect(port: u16) -> (TcpStream, u32) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut h = [0u8; 4];
    s.read_exact(&mut h).unwrap();
    let mut g = vec![0u8; usize::from(h[0]) | usize::from(h[1]) << 8];
    s.read_exact(&mut g).unwrap();
    let nul = g[1..].iter().position(|&b| b == 0).unwrap();
    let at = 1 + nul + 1 + 4 + 8 + 1;
    let lo = u16::from_le_bytes([g[at], g[at + 1]]);
    let hi = u16::from_le_bytes([g[at + 5], g[at + 6]]);
    (s, u32::from(lo) | u32::from(hi) << 16)
}

#[test]
fn ssl_request_switches_the_stream_and_the_response_follows() {
    let (port, rx) = server(false, true);
    let (mut s, caps) = connect(port);
    assert!(caps & SSL != 0, "CLIENT_SSL not advertised");
    // The SSLRequest and the (switched) full response in one write: the
    // response is read ahead with the SSLRequest and must reach the upgrade.
    let full = response(BASE | SSL, "root", &[], None, Some("mysql_native_password"));
    let mut out = frame(1, &ssl_request());
    out.extend(xor(&frame(2, &full)));
    s.write_all(&out).unwrap();
    let mut ok = [0u8; 4];
    s.read_exact(&mut ok).unwrap();
    let ok = xor(&ok);
    assert_eq!(ok[3], 3, "OK's sequence id follows the full response");
    let mut body = vec![0u8; usize::from(ok[0])];
    s.read_exact(&mut body).unwrap();
    assert_eq!(xor(&body)[0], 0x00, "OK packet");
    let (r, early, is_tls) = rx.recv().unwrap();
    let info = r.unwrap();
    assert!(info.tls && is_tls);
    assert_eq!(info.user, "root");
    assert_eq!(early, xor(&frame(2, &full)));
}

#[test]
fn a_second_ssl_request_is_refused() {
    let (port, rx) = server(false, true);
    let (mut s, _) = connect(port);
    s.write_all(&frame(1, &ssl_request())).unwrap();
    s.write_all(&xor(&frame(2, &ssl_request()))).unwrap();
    let mut h = [0u8; 4];
    s.read_exact(&mut h).unwrap();
    let h = xor(&h);
    let mut body = vec![0u8; usize::from(h[0])];
    s.read_exact(&mut body).unwrap();
    assert_err(&xor(&body), 1043, "08S01");
    let (r, _, _) = rx.recv().unwrap();
    assert!(r.is_err());
}

#[test]
fn a_failed_upgrade_sends_nothing_and_ends_the_handshake() {
    let (port, rx) = server(true, true);
    let (mut s, _) = connect(port);
    s.write_all(&frame(1, &ssl_request())).unwrap();
    s.write_all(b"\x16\x03\x01garbage").unwrap();
    let (r, _, is_tls) = rx.recv().unwrap();
    assert!(r.unwrap_err().contains("bad ClientHello"));
    assert!(!is_tls);
    let mut b = [0u8; 16];
    assert_eq!(
        s.read(&mut b).unwrap_or(0),
        0,
        "nothing after a failed upgrade"
    );
}

#[test]
fn without_enable_tls_ssl_is_neither_offered_nor_accepted() {
    let (port, rx) = server(false, false);
    let (mut s, caps) = connect(port);
    assert_eq!(caps & SSL, 0);
    s.write_all(&frame(1, &ssl_request())).unwrap();
    let mut h = [0u8; 4];
    s.read_exact(&mut h).unwrap();
    let mut body = vec![0u8; usize::from(h[0])];
    s.read_exact(&mut body).unwrap();
    assert_err(&body, 1043, "08S01");
    assert!(rx.recv().unwrap().0.is_err());
}
