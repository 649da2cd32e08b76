//! Packet framing over an in-memory stream: payloads around 0xFFFFFF bytes split and
//! reassemble exactly, the max packet cap answers ERR 1153, sequence ids, buffered
//! output, and row-builder misuse.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use std::io::{Cursor, Read, Write};

use wire::{errcode, ColumnDef, ColumnType, Command, Conn, Error};

/// Reads from a fixed input, records everything written.
struct Mem {
    input: Cursor<Vec<u8>>,
    output: Vec<u8>,
    writes: usize,
}

impl Mem {
    fn new(input: Vec<u8>) -> Mem {
        Mem {
            input: Cursor::new(input),
            output: Vec::new(),
            writes: 0,
        }
    }
}

impl Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Mem {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writes += 1;
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Independent parser: physical packets as (len, seq, payload).
fn physical(mut b: &[u8]) -> Vec<(usize, u8, Vec<u8>)> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let len = u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize;
        out.push((len, b[3], b[4..4 + len].to_vec()));
        b = &b[4 + len..];
    }
    out
}

fn payload(n: usize, seed: u8) -> Vec<u8> {
    let mut p: Vec<u8> = (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    if n > 0 {
        p[0] = 0x03; // COM_QUERY, so read_command returns the rest
    }
    p
}

#[test]
fn split_and_reassemble_around_max_payload() {
    const M: usize = 0xFF_FFFF;
    for (n, expect_sizes) in [
        (M - 1, vec![M - 1]),
        (M, vec![M, 0]),
        (M + 1, vec![M, 1]),
        (2 * M, vec![M, M, 0]),
        (2 * M + 5, vec![M, M, 5]),
    ] {
        let p = payload(n, n as u8);
        let mut w = Conn::new(Mem::new(Vec::new()), 1, "v");
        w.send_packet(&p).unwrap();
        w.send_packet(b"\x03after").unwrap();
        w.flush().unwrap();
        let bytes = std::mem::take(&mut w.get_mut().output);
        let phys = physical(&bytes);
        let sizes: Vec<usize> = phys.iter().map(|x| x.0).collect();
        assert_eq!(&sizes[..sizes.len() - 1], &expect_sizes[..], "n={n}");
        // Sequence ids run on across the split packets and into the next packet.
        for (i, x) in phys.iter().enumerate() {
            assert_eq!(x.1 as usize, i, "seq of packet {i}, n={n}");
        }
        let joined: Vec<u8> = phys[..phys.len() - 1]
            .iter()
            .flat_map(|x| x.2.clone())
            .collect();
        assert!(joined == p, "payload differs, n={n}");

        // The reading side reassembles the same bytes.
        let mut r = Conn::new(Mem::new(bytes), 2, "v");
        match r.read_command().unwrap() {
            Command::Query(q) => assert!(q[..] == p[1..], "query differs, n={n}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.read_command().unwrap(), Command::Query(b"after".to_vec()));
        match r.read_command() {
            Err(e) => assert!(e.is_disconnect(), "{e}"),
            Ok(c) => panic!("expected EOF, got {c:?}"),
        }
    }
}

#[test]
fn big_rows_split_too() {
    // A text row whose payload is exactly 0xFFFFFF bytes: 4-byte lenenc prefix + data.
    let data = vec![b'z'; 0xFF_FFFF - 4];
    let mut w = Conn::new(Mem::new(Vec::new()), 1, "v");
    let mut r = w.text_row();
    r.push_bytes(&data);
    r.finish().unwrap();
    w.flush().unwrap();
    let phys = physical(&w.get_ref().output);
    assert_eq!(
        phys.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![0xFF_FFFF, 0]
    );
    assert_eq!(&phys[0].2[..4], &[0xFD, 0xFB, 0xFF, 0xFF]);
}

#[test]
fn oversized_command_gets_err_1153() {
    let p = payload(3 << 20, 9);
    let mut w = Conn::new(Mem::new(Vec::new()), 1, "v");
    w.send_packet(&p).unwrap();
    w.flush().unwrap();
    let bytes = std::mem::take(&mut w.get_mut().output);
    let mut r = Conn::new(Mem::new(bytes), 2, "v");
    r.set_max_packet(1 << 20);
    match r.read_command() {
        Err(Error::PacketTooLarge(n)) => assert!(n > 1 << 20),
        other => panic!("expected PacketTooLarge, got {other:?}"),
    }
    let out = physical(&r.get_ref().output);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].2[0], 0xFF);
    assert_eq!(
        u16::from_le_bytes([out[0].2[1], out[0].2[2]]),
        errcode::ER_NET_PACKET_TOO_LARGE
    );

    // Split packets count in full: 2 x 0xFFFFFF + 1 > 16 MiB cap.
    let p = payload(2 * 0xFF_FFFF + 1, 3);
    let mut w = Conn::new(Mem::new(Vec::new()), 1, "v");
    w.send_packet(&p).unwrap();
    w.flush().unwrap();
    let bytes = std::mem::take(&mut w.get_mut().output);
    let mut r = Conn::new(Mem::new(bytes), 2, "v");
    r.set_max_packet(16 << 20);
    assert!(matches!(r.read_command(), Err(Error::PacketTooLarge(_))));
}

#[test]
fn truncated_streams_are_errors() {
    let mut w = Conn::new(Mem::new(Vec::new()), 1, "v");
    w.send_packet(b"\x03select 1").unwrap();
    w.flush().unwrap();
    let bytes = w.get_ref().output.clone();
    for cut in 0..bytes.len() {
        let mut r = Conn::new(Mem::new(bytes[..cut].to_vec()), 2, "v");
        assert!(r.read_command().is_err(), "cut {cut}");
    }
    // An empty command packet is malformed, not a panic.
    let mut r = Conn::new(Mem::new(vec![0, 0, 0, 0]), 2, "v");
    assert!(matches!(r.read_command(), Err(Error::Malformed(_))));
}

#[test]
fn responses_are_buffered_until_flush() {
    let mut c = Conn::new(Mem::new(Vec::new()), 1, "v");
    c.send_columns(&[
        ColumnDef::new("a", ColumnType::Long),
        ColumnDef::new("b", ColumnType::VarString),
    ])
    .unwrap();
    for i in 0..100 {
        let mut r = c.text_row();
        r.push_i64(i).push_str("x");
        r.finish().unwrap();
    }
    c.finish_result_set(2, 0).unwrap();
    assert_eq!(c.get_ref().writes, 0);
    assert!(c.pending_output() > 0);
    c.flush().unwrap();
    assert_eq!(c.get_ref().writes, 1, "one write per response");
    let phys = physical(&c.get_ref().output);
    // Before a handshake the server's own flags (with DEPRECATE_EOF) apply:
    // count + 2 definitions + 100 rows + terminator, no EOF after the definitions.
    assert_eq!(phys.len(), 1 + 2 + 100 + 1);
    assert_eq!(phys[3].2, b"\x010\x01x");
    assert_eq!(phys[102].2, b"\x0299\x01x");
}

#[test]
fn row_builder_misuse() {
    let mut c = Conn::new(Mem::new(Vec::new()), 1, "v");
    // Too few values.
    let mut r = c.binary_row(2);
    r.push_i64(ColumnType::Long, 1);
    assert!(matches!(r.finish(), Err(Error::Misuse(_))));
    // Too many values.
    let mut r = c.binary_row(1);
    r.push_null().push_null();
    assert!(matches!(r.finish(), Err(Error::Misuse(_))));
    // An integer for a non-integer column.
    let mut r = c.binary_row(1);
    r.push_i64(ColumnType::VarString, 1);
    assert!(matches!(r.finish(), Err(Error::Misuse(_))));
    // Dropped unfinished.
    let mut r = c.text_row();
    r.push_str("lost");
    drop(r);
    assert_eq!(
        c.pending_output(),
        0,
        "failed and dropped rows leave nothing behind"
    );
    // A correct binary row: header, bitmap (offset 2), values by width.
    let mut r = c.binary_row(9);
    r.push_i64(ColumnType::Tiny, -1)
        .push_u64(ColumnType::Short, 0xBEEF)
        .push_i64(ColumnType::Int24, -2)
        .push_i64(ColumnType::LongLong, 3)
        .push_null()
        .push_f32(1.0)
        .push_date(2024, 1, 2)
        .push_datetime(0, 0, 0, 0, 0, 0, 0)
        .push_time(false, 0, 1, 2, 3, 4);
    r.finish().unwrap();
    c.flush().unwrap();
    let phys = physical(&c.get_ref().output);
    assert_eq!(phys.len(), 1);
    let mut expect = vec![0x00, 0x40, 0x00];
    expect.push(0xFF);
    expect.extend_from_slice(&[0xEF, 0xBE]);
    expect.extend_from_slice(&(-2i32).to_le_bytes());
    expect.extend_from_slice(&3i64.to_le_bytes());
    expect.extend_from_slice(&1.0f32.to_le_bytes());
    expect.extend_from_slice(&[4, 0xE8, 0x07, 1, 2]);
    expect.push(0);
    expect.extend_from_slice(&[12, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0]);
    assert_eq!(phys[0].2, expect);
}

#[test]
fn text_number_formatting() {
    let mut c = Conn::new(Mem::new(Vec::new()), 1, "v");
    let mut r = c.text_row();
    r.push_i64(i64::MIN)
        .push_u64(u64::MAX)
        .push_i64(0)
        .push_f64(1e20)
        .push_f64(0.1)
        .push_f64(-2.5e-7)
        .push_f64(123456.0)
        .push_f32(1.1);
    r.finish().unwrap();
    c.flush().unwrap();
    let p = &physical(&c.get_ref().output)[0].2;
    let mut i = 0;
    let mut vals = Vec::new();
    while i < p.len() {
        let n = p[i] as usize;
        vals.push(String::from_utf8(p[i + 1..i + 1 + n].to_vec()).unwrap());
        i += 1 + n;
    }
    assert_eq!(
        vals,
        [
            "-9223372036854775808",
            "18446744073709551615",
            "0",
            "1e20",
            "0.1",
            "-2.5e-7",
            "123456",
            "1.1"
        ]
    );
}
