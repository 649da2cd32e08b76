//! Prepared statements at the byte level (hand-written client in `raw/`): the
//! COM_STMT_PREPARE response layout, every binary parameter type echoed back through
//! a binary row, re-execution with previously bound types, COM_STMT_SEND_LONG_DATA
//! replacing an inline value, and COM_STMT_CLOSE — with and without DEPRECATE_EOF.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;
mod raw;

use raw::*;

#[derive(Debug, PartialEq)]
enum V {
    Null,
    I(i64),
    U(u64),
    F(f32),
    D(f64),
    B(Vec<u8>),
    Dt(Vec<u8>),
}

fn binary_row(p: &[u8], cols: &[(String, u8, u16)]) -> Vec<V> {
    assert_eq!(p[0], 0);
    let n = cols.len();
    let bm = &p[1..1 + (n + 9) / 8];
    let mut i = 1 + (n + 9) / 8;
    let mut out = Vec::new();
    for (k, (_, t, flags)) in cols.iter().enumerate() {
        if bm[(k + 2) / 8] & (1 << ((k + 2) % 8)) != 0 {
            out.push(V::Null);
            continue;
        }
        let v = match t {
            8 => {
                let b: [u8; 8] = p[i..i + 8].try_into().unwrap();
                i += 8;
                if flags & 32 != 0 {
                    V::U(u64::from_le_bytes(b))
                } else {
                    V::I(i64::from_le_bytes(b))
                }
            }
            4 => {
                i += 4;
                V::F(f32::from_le_bytes(p[i - 4..i].try_into().unwrap()))
            }
            5 => {
                i += 8;
                V::D(f64::from_le_bytes(p[i - 8..i].try_into().unwrap()))
            }
            7 | 10 | 11 | 12 => {
                let len = p[i] as usize;
                i += 1 + len;
                V::Dt(p[i - len - 1..i].to_vec())
            }
            _ => {
                let len = p[i] as usize;
                assert!(len < 251);
                i += 1 + len;
                V::B(p[i - len..i].to_vec())
            }
        };
        out.push(v);
    }
    assert_eq!(i, p.len(), "trailing bytes in row");
    out
}

fn prepared_flow(c: &mut Raw, deprecate: bool) {
    c.command(b"\x16select ?,?,?,?,?,?,?,?,?,?,?,?,?,?,?");
    let p = c.read();
    assert_eq!(p[0], 0);
    let stmt_id = u32::from_le_bytes(p[1..5].try_into().unwrap());
    assert_eq!(u16::from_le_bytes([p[5], p[6]]), 15, "columns");
    assert_eq!(u16::from_le_bytes([p[7], p[8]]), 15, "params");
    assert_eq!(p[9], 0);
    assert_eq!(p.len(), 12);
    for _ in 0..2 {
        for _ in 0..15 {
            coldef(&c.read());
        }
        if !deprecate {
            assert!(is_terminator(&c.read(), false));
        }
    }
    // Every parameter type: (type, unsigned, value bytes, expected echo).
    let params: Vec<(u8, bool, Vec<u8>, V)> = vec![
        (1, false, vec![0xFF], V::I(-1)),
        (1, true, vec![0xFF], V::U(255)),
        (2, true, vec![0xFF, 0xFF], V::U(65535)),
        (13, false, 2024u16.to_le_bytes().to_vec(), V::I(2024)),
        (3, false, (-7i32).to_le_bytes().to_vec(), V::I(-7)),
        (
            9,
            false,
            8_388_607i32.to_le_bytes().to_vec(),
            V::I(8_388_607),
        ),
        (8, true, u64::MAX.to_le_bytes().to_vec(), V::U(u64::MAX)),
        (4, false, 0.5f32.to_le_bytes().to_vec(), V::F(0.5)),
        (5, false, (-1e300f64).to_le_bytes().to_vec(), V::D(-1e300)),
        (253, false, b"\x03abc".to_vec(), V::B(b"abc".to_vec())),
        (246, false, b"\x04-1.5".to_vec(), V::B(b"-1.5".to_vec())),
        (
            10,
            false,
            vec![4, 0xE8, 0x07, 2, 29],
            V::Dt(vec![4, 0xE8, 0x07, 2, 29]),
        ),
        (
            7,
            false,
            vec![11, 0xCF, 0x07, 12, 31, 23, 59, 58, 1, 0, 0, 0],
            V::Dt(vec![11, 0xCF, 0x07, 12, 31, 23, 59, 58, 1, 0, 0, 0]),
        ),
        (
            11,
            false,
            vec![12, 1, 2, 0, 0, 0, 3, 4, 5, 6, 0, 0, 0],
            V::Dt(vec![12, 1, 2, 0, 0, 0, 3, 4, 5, 6, 0, 0, 0]),
        ),
        (6, false, vec![], V::Null),
    ];
    for round in 0..2 {
        let mut p = vec![0x17];
        p.extend_from_slice(&stmt_id.to_le_bytes());
        p.push(0);
        p.extend_from_slice(&1u32.to_le_bytes());
        p.extend_from_slice(&[0, 0x40]); // null bitmap: param 14 is NULL
        p.push(if round == 0 { 1 } else { 0 }); // second round reuses bound types
        if round == 0 {
            for (t, u, _, _) in &params {
                p.extend_from_slice(&[*t, if *u { 0x80 } else { 0 }]);
            }
        }
        for (_, _, v, _) in &params {
            p.extend_from_slice(v);
        }
        c.command(&p);
        assert_eq!(c.read(), [15]);
        let cols: Vec<_> = (0..15).map(|_| coldef(&c.read())).collect();
        if !deprecate {
            assert!(is_terminator(&c.read(), false));
        }
        let row = binary_row(&c.read(), &cols);
        let expect: Vec<&V> = params.iter().map(|p| &p.3).collect();
        assert_eq!(row.iter().collect::<Vec<_>>(), expect);
        assert!(is_terminator(&c.read(), deprecate));
    }
    // Long data for parameter 9 replaces the inline value (which is then absent).
    let mut ld = vec![0x18];
    ld.extend_from_slice(&stmt_id.to_le_bytes());
    ld.extend_from_slice(&9u16.to_le_bytes());
    ld.extend_from_slice(b"long");
    c.command(&ld);
    c.command(&ld);
    let mut p = vec![0x17];
    p.extend_from_slice(&stmt_id.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(&[0, 0x40, 0]);
    for (i, (_, _, v, _)) in params.iter().enumerate() {
        if i != 9 {
            p.extend_from_slice(v);
        }
    }
    c.command(&p);
    assert_eq!(c.read(), [15]);
    let cols: Vec<_> = (0..15).map(|_| coldef(&c.read())).collect();
    if !deprecate {
        c.read();
    }
    let row = binary_row(&c.read(), &cols);
    assert_eq!(row[9], V::B(b"longlong".to_vec()));
    assert_eq!(row[10], V::B(b"-1.5".to_vec()));
    c.read();
    // Close (no reply), then execute the closed statement: ERR.
    let mut close = vec![0x19];
    close.extend_from_slice(&stmt_id.to_le_bytes());
    c.command(&close);
    c.command(&p);
    assert_err(&c.read(), 1243, "HY000");
}

#[test]
fn prepared_deprecate_eof() {
    prepared_flow(&mut login(BASE | DEPRECATE_EOF), true);
}

#[test]
fn prepared_classic_eof() {
    prepared_flow(&mut login(BASE), false);
}
