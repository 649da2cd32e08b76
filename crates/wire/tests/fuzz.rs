//! Seeded random tests of every decoder: random and truncated bytes never panic and
//! fail cleanly; randomly generated valid COM_STMT_EXECUTE parameter blocks (built by
//! an encoder written here) decode to exactly what was encoded, and every strict prefix
//! of one is an error. Set SEED=<n> to replay a run; the seed is printed.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::io::{Cursor, Read, Write};

use wire::{
    cap, decode_command, decode_params, parse_handshake_response, ColumnType, Conn, ExecutePacket,
    Param, ParamType,
};

use testkit::Rng;

/// Up to `max - 1` random bytes.
fn some_bytes(rng: &mut Rng, max: u64) -> Vec<u8> {
    let n = rng.below(max) as usize;
    rng.bytes(n)
}

struct Mem {
    input: Cursor<Vec<u8>>,
    output: Vec<u8>,
}

impl Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Mem {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn lenenc(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else {
        out.push(0xFD);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    }
    out.extend_from_slice(b);
}

/// A random parameter: (type byte, unsigned, encoded value, expected decode).
fn random_param(rng: &mut Rng) -> (u8, bool, Vec<u8>, Param) {
    let r = rng.next_u64();
    match rng.below(14) {
        0 => (1, false, vec![r as u8], Param::Int(r as u8 as i8 as i64)),
        1 => (1, true, vec![r as u8], Param::UInt(r as u8 as u64)),
        2 => (
            2,
            false,
            (r as u16).to_le_bytes().to_vec(),
            Param::Int(r as u16 as i16 as i64),
        ),
        3 => (
            13,
            true,
            (r as u16).to_le_bytes().to_vec(),
            Param::UInt(r as u16 as u64),
        ),
        4 => (
            3,
            false,
            (r as u32).to_le_bytes().to_vec(),
            Param::Int(r as u32 as i32 as i64),
        ),
        5 => (
            9,
            true,
            (r as u32).to_le_bytes().to_vec(),
            Param::UInt(r as u32 as u64),
        ),
        6 => (8, false, r.to_le_bytes().to_vec(), Param::Int(r as i64)),
        7 => (8, true, r.to_le_bytes().to_vec(), Param::UInt(r)),
        8 => {
            let f = (r as u32 as f32) / 7.0;
            (4, false, f.to_le_bytes().to_vec(), Param::Float(f))
        }
        9 => {
            let d = (r as i64 as f64) * 1e-5;
            (5, false, d.to_le_bytes().to_vec(), Param::Double(d))
        }
        10 => {
            let n = match rng.below(4) {
                0 => 0,
                1 => rng.below(300) as usize,
                2 => 251 + rng.below(70_000) as usize,
                _ => rng.below(10) as usize,
            };
            let data = rng.bytes(n);
            let types = [
                0u8, 15, 16, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
            ];
            let t = types[rng.below(types.len() as u64) as usize];
            let mut enc = Vec::new();
            lenenc(&mut enc, &data);
            (t, false, enc, Param::Bytes(data))
        }
        11 => {
            let (year, month, day) = (r as u16 % 10000, (r >> 16) as u8 % 13, (r >> 24) as u8 % 32);
            let (hour, minute, second, micro) = (
                (r >> 32) as u8 % 24,
                (r >> 40) as u8 % 60,
                (r >> 48) as u8 % 60,
                (r >> 8) as u32 % 1_000_000,
            );
            let len = [0u8, 4, 7, 11][rng.below(4) as usize];
            let mut enc = vec![len];
            if len >= 4 {
                enc.extend_from_slice(&year.to_le_bytes());
                enc.extend_from_slice(&[month, day]);
            }
            if len >= 7 {
                enc.extend_from_slice(&[hour, minute, second]);
            }
            if len == 11 {
                enc.extend_from_slice(&micro.to_le_bytes());
            }
            let z = |on: bool, v: u8| if on { v } else { 0 };
            let t = [7u8, 10, 12][rng.below(3) as usize];
            let p = if t == 10 {
                Param::Date {
                    year: if len >= 4 { year } else { 0 },
                    month: z(len >= 4, month),
                    day: z(len >= 4, day),
                }
            } else {
                Param::DateTime {
                    year: if len >= 4 { year } else { 0 },
                    month: z(len >= 4, month),
                    day: z(len >= 4, day),
                    hour: z(len >= 7, hour),
                    minute: z(len >= 7, minute),
                    second: z(len >= 7, second),
                    micro: if len == 11 { micro } else { 0 },
                }
            };
            (t, false, enc, p)
        }
        12 => {
            let len = [0u8, 8, 12][rng.below(3) as usize];
            let (neg, days, hours, minutes, seconds, micro) = (
                r & 1 == 1,
                (r >> 8) as u32 % 35,
                (r >> 16) as u8 % 24,
                (r >> 24) as u8 % 60,
                (r >> 32) as u8 % 60,
                (r >> 40) as u32 % 1_000_000,
            );
            let mut enc = vec![len];
            if len >= 8 {
                enc.push(u8::from(neg));
                enc.extend_from_slice(&days.to_le_bytes());
                enc.extend_from_slice(&[hours, minutes, seconds]);
            }
            if len == 12 {
                enc.extend_from_slice(&micro.to_le_bytes());
            }
            let p = if len == 0 {
                Param::Time {
                    neg: false,
                    days: 0,
                    hours: 0,
                    minutes: 0,
                    seconds: 0,
                    micro: 0,
                }
            } else {
                Param::Time {
                    neg,
                    days,
                    hours,
                    minutes,
                    seconds,
                    micro: if len == 12 { micro } else { 0 },
                }
            };
            (11, false, enc, p)
        }
        _ => (6, false, Vec::new(), Param::Null),
    }
}

#[test]
fn params_round_trip_and_truncation() {
    let mut rng = Rng::from_env("params_round_trip_and_truncation");
    for iter in 0..3000 {
        let n = 1 + rng.below(12) as usize;
        let mut params: Vec<(u8, bool, Vec<u8>, Param)> =
            (0..n).map(|_| random_param(&mut rng)).collect();
        let mut bitmap = vec![0u8; n.div_ceil(8)];
        let mut long: Vec<Option<Vec<u8>>> = vec![None; n];
        for (i, p) in params.iter_mut().enumerate() {
            if rng.one_in(6) {
                bitmap[i / 8] |= 1 << (i % 8);
                p.3 = Param::Null;
            } else if rng.one_in(8) {
                let data = some_bytes(&mut rng, 50);
                long[i] = Some(data.clone());
                p.3 = Param::Bytes(data);
            }
        }
        let mut body = bitmap.clone();
        body.push(1);
        for p in &params {
            body.extend_from_slice(&[p.0, if p.1 { 0x80 } else { 0 }]);
        }
        for (i, p) in params.iter().enumerate() {
            if bitmap[i / 8] & (1 << (i % 8)) == 0 && long[i].is_none() {
                body.extend_from_slice(&p.2);
            }
        }
        let pkt = ExecutePacket {
            stmt_id: 1,
            flags: 0,
            iteration_count: 1,
            params: body.clone(),
        };
        let mut types = Vec::new();
        let mut ld = long.clone();
        let got = decode_params(&pkt, n, &mut types, &mut ld).unwrap();
        let expect: Vec<Param> = params.iter().map(|p| p.3.clone()).collect();
        assert_eq!(got, expect, "iter {iter}");
        assert!(ld.iter().all(Option::is_none), "long data is consumed");
        assert_eq!(types.len(), n);
        for (t, p) in types.iter().zip(&params) {
            assert_eq!(
                *t,
                ParamType {
                    col_type: ColumnType::from_u8(p.0).unwrap(),
                    unsigned: p.1
                }
            );
        }

        // Every strict prefix fails (each parameter consumes at least one byte, unless
        // it is NULL or long data, so only prefixes that cut real data are checked).
        let consumed_all = body.len();
        let min_len = bitmap.len() + 1 + 2 * n;
        let has_inline = consumed_all > min_len;
        let cuts: Vec<usize> = if consumed_all <= 400 {
            (0..consumed_all).collect()
        } else {
            (0..400)
                .map(|_| rng.below(consumed_all as u64) as usize)
                .chain([consumed_all - 1])
                .collect()
        };
        for cut in cuts {
            let pkt = ExecutePacket {
                params: body[..cut].to_vec(),
                ..pkt.clone()
            };
            let mut t = Vec::new();
            let r = decode_params(&pkt, n, &mut t, &mut long.clone());
            if cut < min_len || has_inline {
                assert!(
                    r.is_err(),
                    "iter {iter}: prefix {cut}/{consumed_all} decoded"
                );
            }
        }

        // Re-execution without rebinding reuses the bound types.
        let mut body2 = bitmap.clone();
        body2.push(0);
        body2.extend_from_slice(&body[bitmap.len() + 1 + 2 * n..]);
        let pkt2 = ExecutePacket {
            params: body2,
            ..pkt.clone()
        };
        let got2 = decode_params(&pkt2, n, &mut types, &mut long.clone()).unwrap();
        assert_eq!(got2, expect, "iter {iter} (rebound)");
        // ... and fails when nothing was ever bound.
        assert!(decode_params(&pkt2, n, &mut Vec::new(), &mut long.clone()).is_err());

        // Random corruption: never a panic.
        for _ in 0..4 {
            let mut b = body.clone();
            let i = rng.below(b.len() as u64) as usize;
            b[i] = rng.next_u64() as u8;
            let pkt = ExecutePacket {
                params: b,
                ..pkt.clone()
            };
            let _ = decode_params(&pkt, n, &mut Vec::new(), &mut long.clone());
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::from_env("random_bytes_never_panic");
    let all_caps = u32::MAX;
    for _ in 0..20_000 {
        let n = rng.below(64) as usize;
        let mut b = rng.bytes(n);
        if !b.is_empty() && rng.one_in(2) {
            b[0] = rng.below(0x20) as u8;
        }
        let caps = if rng.one_in(2) {
            all_caps
        } else {
            rng.next_u64() as u32
        };
        let _ = decode_command(b.clone(), caps);
        let _ = parse_handshake_response(&b, caps);
        let nparams = rng.below(20) as usize;
        let mut types = Vec::new();
        let pkt = ExecutePacket {
            stmt_id: 0,
            flags: 0,
            iteration_count: 1,
            params: b.clone(),
        };
        let _ = decode_params(&pkt, nparams, &mut types, &mut []);
        let _ = wire::ExecutePacket::parse(&b);
    }
}

#[test]
fn truncated_commands_are_errors() {
    // Fixed-layout commands: any prefix shorter than the layout is Err.
    let cases: Vec<(Vec<u8>, usize)> = vec![
        (vec![0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0], 10),
        (vec![0x19, 1, 0, 0, 0], 5),
        (vec![0x1A, 1, 0, 0, 0], 5),
        (vec![0x0C, 1, 0, 0, 0], 5),
        (vec![0x1B, 1, 0], 3),
        (vec![0x1C, 1, 0, 0, 0, 5, 0, 0, 0], 9),
        (vec![0x18, 1, 0, 0, 0, 2, 0], 7),
        (b"\x11u\0".to_vec(), 4),
    ];
    for (full, needed) in cases {
        for cut in 1..needed.min(full.len()) {
            assert!(
                decode_command(full[..cut].to_vec(), cap::DEFAULT_SERVER).is_err(),
                "{full:?} cut {cut}"
            );
        }
        if full.len() >= needed {
            assert!(
                decode_command(full.clone(), cap::DEFAULT_SERVER).is_ok(),
                "{full:?}"
            );
        }
    }
}

fn valid_response() -> Vec<u8> {
    response_with_auth(&[7u8; 20])
}

fn response_with_auth(auth: &[u8]) -> Vec<u8> {
    let caps = cap::CLIENT_PROTOCOL_41
        | cap::CLIENT_SECURE_CONNECTION
        | cap::CLIENT_PLUGIN_AUTH
        | cap::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | cap::CLIENT_CONNECT_WITH_DB
        | cap::CLIENT_CONNECT_ATTRS;
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(1u32 << 24).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(b"user\0");
    lenenc(&mut p, auth);
    p.extend_from_slice(b"db\0mysql_native_password\0");
    let mut a = Vec::new();
    lenenc(&mut a, b"k1");
    lenenc(&mut a, b"v1");
    lenenc(&mut a, b"k2");
    lenenc(&mut a, b"");
    lenenc(&mut p, &a);
    p
}

#[test]
fn handshake_response_parse_and_truncation() {
    let p = valid_response();
    let r = parse_handshake_response(&p, cap::DEFAULT_SERVER).unwrap();
    assert_eq!(r.user, b"user");
    assert_eq!(r.auth_response, [7u8; 20]);
    assert_eq!(r.database.as_deref(), Some(&b"db"[..]));
    assert_eq!(r.auth_plugin.as_deref(), Some("mysql_native_password"));
    assert_eq!(
        r.attrs,
        [
            ("k1".to_string(), "v1".to_string()),
            ("k2".to_string(), String::new())
        ]
    );
    // Cuts inside the fixed header, user name, auth data or attributes are errors.
    let user_end = 32 + 5;
    for cut in 0..user_end + 21 {
        assert!(
            parse_handshake_response(&p[..cut], cap::DEFAULT_SERVER).is_err(),
            "cut {cut}"
        );
    }
    let attrs_at = p.len() - 11; // 1 length byte + 10 bytes of pairs
    for cut in attrs_at + 1..p.len() {
        assert!(
            parse_handshake_response(&p[..cut], cap::DEFAULT_SERVER).is_err(),
            "cut {cut}"
        );
    }
    let mut rng = Rng::from_env("handshake_response_parse_and_truncation");
    for _ in 0..20_000 {
        let mut b = p.clone();
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(b.len() as u64) as usize;
            b[i] = rng.next_u64() as u8;
        }
        b.truncate(rng.below(b.len() as u64 + 1) as usize);
        let _ = parse_handshake_response(&b, rng.next_u64() as u32);
    }
}

fn packetize(payload: &[u8], seq: u8) -> Vec<u8> {
    let mut b = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    b.push(seq);
    b.extend_from_slice(payload);
    b
}

#[test]
fn conn_on_garbage_streams() {
    let mut rng = Rng::from_env("conn_on_garbage_streams");
    let valid = valid_response();
    // "user" has a password that the 20 bytes of 7s never match.
    let lookup = |u: &str| (u == "user").then(|| wire::Credentials::from_password(b"pw"));
    for i in 0..3000 {
        let input = if i % 2 == 0 {
            some_bytes(&mut rng, 200)
        } else {
            let mut p = valid.clone();
            for _ in 0..1 + rng.below(2) {
                let j = rng.below(p.len() as u64) as usize;
                p[j] = rng.next_u64() as u8;
            }
            p.truncate(rng.below(p.len() as u64 + 1) as usize);
            packetize(&p, 1)
        };
        let mut c = Conn::new(
            Mem {
                input: Cursor::new(input),
                output: Vec::new(),
            },
            1,
            "v",
        );
        assert!(c.handshake(&lookup).is_err());
    }
    // A good login (empty password), then random command packets and trailing junk.
    let empty = |u: &str| (u == "user").then(wire::Credentials::empty);
    let mut logged_in = 0;
    for _ in 0..3000 {
        let mut b = packetize(&response_with_auth(b""), 1);
        for _ in 0..rng.below(6) {
            let mut p = some_bytes(&mut rng, 40);
            if !p.is_empty() {
                p[0] = rng.below(0x20) as u8;
            }
            b.extend_from_slice(&packetize(&p, 0));
        }
        b.extend_from_slice(&some_bytes(&mut rng, 6));
        let mut c = Conn::new(
            Mem {
                input: Cursor::new(b),
                output: Vec::new(),
            },
            1,
            "v",
        );
        if c.handshake(&empty).is_ok() {
            logged_in += 1;
        }
        for _ in 0..20 {
            if c.read_command().is_err() {
                break;
            }
        }
    }
    assert_eq!(logged_in, 3000);
}
