//! Decoder tests against a binlog MariaDB 10.11.19 wrote
//! (`fixtures/mariadb-10.11-rows.bin`; how it was made:
//! `fixtures/README.md`), against the encoders' own output, and against
//! random bytes and truncations (seeded: rerun with SEED=...).
#![allow(clippy::unwrap_used)]
use crate::event::{self, kind, Gtid, Header};
use crate::parse::{self, Body, RowsKind, TableMap};
use crate::row::{put_row, Cell, ColType};
use crate::unpack::{self, Datum};

const FIXTURE: &[u8] = include_bytes!("../fixtures/mariadb-10.11-rows.bin");

/// The fixture's events, split by their headers' sizes.
fn events() -> Vec<&'static [u8]> {
    let mut out = Vec::new();
    let mut p = 4;
    while p < FIXTURE.len() {
        let size = u32::from_le_bytes(FIXTURE[p + 9..p + 13].try_into().unwrap()) as usize;
        out.push(&FIXTURE[p..p + size]);
        p += size;
    }
    out
}

fn decoded() -> Vec<(parse::Header, Body<'static>)> {
    events()
        .into_iter()
        .map(|e| {
            let (h, b) = parse::split(e, true).unwrap();
            (h, parse::body(&h, b).unwrap())
        })
        .collect()
}

fn int(raw: i64, width: u8) -> Datum {
    let mask = if width == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    Datum::Int {
        raw: raw as u64 & mask,
        width,
    }
}

#[test]
fn mariadb_file_decodes_event_by_event() {
    let evs = decoded();
    let kinds: Vec<u8> = evs.iter().map(|(h, _)| h.kind).collect();
    assert_eq!(&kinds[..5], &[15, 163, 161, 162, 2]);
    assert_eq!(evs.len(), 43);
    let (h, fde) = &evs[0];
    assert_eq!(parse::fde_checksum_alg(events()[0]).unwrap(), 1);
    assert_eq!(h.log_pos, 256);
    assert!(
        matches!(fde, Body::FormatDescription { binlog_version: 4, checksum_alg: 1, server_version, .. }
        if server_version == "10.11.19-MariaDB-0+deb12u1-log")
    );
    assert_eq!(evs[1].1, Body::GtidList(vec![]));
    assert_eq!(evs[2].1, Body::BinlogCheckpoint("mysql-bin.000001".into()));
    assert_eq!(
        evs[3].1,
        Body::Gtid {
            gtid: Gtid {
                domain: 0,
                server_id: 1,
                seq_no: 1
            },
            // STANDALONE | ALLOW_PARALLEL | DDL
            flags2: 0x29
        }
    );
    let Body::Query(q) = &evs[10].1 else {
        panic!("{:?}", evs[10])
    };
    assert_eq!(q.db, "d1");
    assert!(q.query.starts_with("CREATE TABLE t (id INT PRIMARY KEY"));
    assert!(q.sql_mode.is_some());
    assert_eq!(evs[12].1, Body::Annotate);
    assert_eq!(evs[15].1, Body::Xid(11));
    let last = evs.last().unwrap();
    assert_eq!((last.0.kind, last.0.log_pos), (kind::XID, 4253));
}

fn map_of(evs: &[(parse::Header, Body<'static>)], i: usize) -> TableMap {
    match &evs[i].1 {
        Body::TableMap(m) => m.clone(),
        b => panic!("{b:?}"),
    }
}

fn changes(
    evs: &[(parse::Header, Body<'static>)],
    i: usize,
    map: &TableMap,
) -> Vec<unpack::Change> {
    match &evs[i].1 {
        Body::Rows(r) => {
            assert_eq!(r.table_id, map.table_id);
            unpack::rows(r, map).unwrap()
        }
        b => panic!("{b:?}"),
    }
}

#[test]
fn mariadb_row_images_unpack_to_their_values() {
    let evs = decoded();
    let map = map_of(&evs, 13);
    assert_eq!(
        (map.db.as_str(), map.table.as_str(), map.columns.len()),
        ("d1", "t", 22)
    );
    assert!(!map.columns[0].nullable && map.columns[1].nullable);
    let rows = changes(&evs, 14, &map);
    assert_eq!(rows.len(), 1);
    let after = rows[0].1.as_ref().unwrap();
    let want = vec![
        int(1, 4),
        int(-5, 1),
        int(65000, 2),
        int(-8_000_000, 3),
        int(-9_000_000_000_000, 8),
        // The server's default character set was latin1 (--no-defaults).
        Datum::Bytes(b"h\xe9llo".to_vec()),
        Datum::Bytes(b"ab".to_vec()),
        Datum::Decimal(-1_234_567, 3),
        Datum::DateTime {
            y: 2024,
            mo: 2,
            d: 29,
            h: 13,
            mi: 14,
            s: 15,
            us: 0,
        },
        Datum::DateTime {
            y: 2024,
            mo: 2,
            d: 29,
            h: 13,
            mi: 14,
            s: 15,
            us: 123_456,
        },
        Datum::Timestamp {
            secs: 1_577_836_801,
            us: 0,
        },
        Datum::Date {
            y: 2024,
            m: 12,
            d: 31,
        },
        Datum::Time(-(12 * 3600 + 34 * 60 + 56) * 1_000_000),
        Datum::Year(2024),
        Datum::Float(1.5),
        Datum::Double(-2.25),
        Datum::Bytes(vec![0, 0xff, 0x10]),
        Datum::Bytes(b"text here".to_vec()),
        Datum::Enum(2),
        Datum::Set(3),
        Datum::Bytes(vec![b'z'; 280]),
        Datum::Bit(5),
    ];
    assert_eq!(after, &want);
    assert_eq!(Datum::int_signed(65000, 2), -536);
    // INSERT (id) VALUES (2): everything else NULL.
    let rows = changes(&evs, 19, &map);
    let after = rows[0].1.as_ref().unwrap();
    assert_eq!(after[0], int(2, 4));
    assert!(after[1..].iter().all(|d| *d == Datum::Null));
    // UPDATE: before and after images.
    let rows = changes(&evs, 24, &map);
    let (b, a) = (rows[0].0.as_ref().unwrap(), rows[0].1.as_ref().unwrap());
    assert_eq!(b, &want);
    assert_eq!(a[5], Datum::Bytes(b"upd".to_vec()));
    assert_eq!(a[7], Datum::Decimal(1, 3));
    // DELETE of row 2.
    let rows = changes(&evs, 27, &map);
    assert!(matches!(&rows[0], (Some(b), None) if b[0] == int(2, 4)));
    // Table k (after ALTER TABLE t): three rows in one event, then a delete.
    let k = map_of(&evs, 35);
    let rows = changes(&evs, 36, &k);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2].1, Some(vec![Datum::Null, Datum::Null]));
    let Body::Rows(r) = &evs[41].1 else { panic!() };
    assert_eq!(r.kind, RowsKind::Delete);
}

#[test]
fn encoder_output_unpacks_to_what_was_packed() {
    let cols = [
        ColType::Decimal {
            precision: 30,
            scale: 10,
        },
        ColType::Decimal {
            precision: 5,
            scale: 0,
        },
        ColType::Time2 { fsp: 1 },
        ColType::Time2 { fsp: 4 },
        ColType::Time2 { fsp: 6 },
        ColType::DateTime2 { fsp: 3 },
        ColType::String { max_bytes: 600 },
        ColType::Enum { pack: 2 },
        ColType::Set { pack: 3 },
    ];
    let cells = [
        Cell::Decimal(-12_345_678_901_234_567_890_123_456, 10),
        Cell::Decimal(99_999, 0),
        Cell::Time(-3_600_500_000),
        Cell::Time(-1_234_500),
        Cell::Time(838 * 3_600_000_000 + 59 * 60_000_000 + 59_999_999),
        Cell::DateTime {
            y: 9999,
            mo: 12,
            d: 31,
            h: 23,
            mi: 59,
            s: 59,
            us: 999_000,
        },
        Cell::Bytes(&[7u8; 300]),
        Cell::UInt(300),
        Cell::UInt(0x1_0001),
    ];
    let mut img = Vec::new();
    put_row(&mut img, &cols, &cells).unwrap();
    let map = TableMap {
        table_id: 1,
        db: "d".into(),
        table: "t".into(),
        columns: cols
            .iter()
            .map(|c| {
                let m = c.map_column(true);
                let meta = match m.meta.len() {
                    0 => 0,
                    1 => m.meta[0] as u16,
                    _ if m.ty == crate::row::ty::VARCHAR => {
                        u16::from_le_bytes([m.meta[0], m.meta[1]])
                    }
                    _ => (m.meta[0] as u16) << 8 | m.meta[1] as u16,
                };
                parse::MapCol {
                    ty: m.ty,
                    meta,
                    nullable: true,
                    local_fsp: None,
                }
            })
            .collect(),
        unsupported: None,
    };
    let ev = parse::Rows {
        kind: RowsKind::Write,
        table_id: 1,
        flags: 1,
        ncols: cols.len(),
        present: vec![true; cols.len()],
        present_after: vec![],
        images: &img,
    };
    let got = unpack::rows(&ev, &map).unwrap();
    let a = got[0].1.as_ref().unwrap();
    assert_eq!(
        a[0],
        Datum::Decimal(-12_345_678_901_234_567_890_123_456, 10)
    );
    assert_eq!(a[1], Datum::Decimal(99_999, 0));
    assert_eq!(a[2], Datum::Time(-3_600_500_000));
    assert_eq!(a[3], Datum::Time(-1_234_500));
    assert_eq!(
        a[4],
        Datum::Time(838 * 3_600_000_000 + 59 * 60_000_000 + 59_999_999)
    );
    assert_eq!(
        a[5],
        Datum::DateTime {
            y: 9999,
            mo: 12,
            d: 31,
            h: 23,
            mi: 59,
            s: 59,
            us: 999_000
        }
    );
    assert_eq!(a[6], Datum::Bytes(vec![7u8; 300]));
    assert_eq!(a[7], Datum::Enum(300));
    assert_eq!(a[8], Datum::Set(0x1_0001));
}

#[test]
fn heartbeat_rotate_and_unsupported_kinds() {
    let mut ev = Vec::new();
    let h = |k: u8, flags: u16| Header {
        timestamp: 0,
        kind: k,
        server_id: 1,
        flags,
    };
    event::write_event(&mut ev, 4000, h(27, 0), b"mysql-bin.000002");
    let (hd, b) = parse::split(&ev, true).unwrap();
    assert_eq!(
        parse::body(&hd, b).unwrap(),
        Body::Heartbeat("mysql-bin.000002".into())
    );
    ev.clear();
    event::write_event(
        &mut ev,
        0,
        h(kind::ROTATE, 0),
        &event::rotate(4, "mysql-bin.000007"),
    );
    let (hd, b) = parse::split(&ev, true).unwrap();
    assert_eq!(
        parse::body(&hd, b).unwrap(),
        Body::Rotate {
            pos: 4,
            file: "mysql-bin.000007".into()
        }
    );
    for (k, flags, ok) in [
        (166u8, 0u16, false),
        (5, 0, false),
        (33, 0, false),
        (99, 0, false),
        (99, 0x80, true),
    ] {
        ev.clear();
        event::write_event(&mut ev, 0, h(k, flags), &[0u8; 12]);
        let (hd, b) = parse::split(&ev, true).unwrap();
        assert_eq!(parse::body(&hd, b).is_ok(), ok, "type {k}");
    }
    // A flipped bit fails the checksum.
    ev[20] ^= 1;
    assert!(parse::split(&ev, true).is_err());
}

/// Decodes an event as a replica would: never panics, whatever the bytes.
fn decode_all(e: &[u8], maps: &[TableMap]) {
    let _ = parse::fde_checksum_alg(e);
    for checksum in [true, false] {
        let Ok((h, b)) = parse::split(e, checksum) else {
            continue;
        };
        if let Ok(Body::Rows(r)) = parse::body(&h, b) {
            for m in maps {
                let _ = unpack::rows(&r, m);
            }
        }
    }
}

#[test]
fn random_bytes_and_truncations_never_panic() {
    let mut rng = testkit::Rng::from_env("random_bytes_and_truncations_never_panic");
    let evs = events();
    let all = decoded();
    let maps: Vec<TableMap> = all
        .iter()
        .filter_map(|(_, b)| match b {
            Body::TableMap(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    for e in &evs {
        for n in 0..e.len() {
            decode_all(&e[..n], &maps);
            // A truncated body with its header's size fixed and a valid
            // checksum reaches the body decoders.
            if n >= 19 {
                let mut t = e[..n].to_vec();
                t.truncate(n.saturating_sub(4).max(19));
                let body = t[19..].to_vec();
                let hd = parse::header(e).unwrap();
                let mut w = Vec::new();
                event::write_event(
                    &mut w,
                    0,
                    Header {
                        timestamp: hd.timestamp,
                        kind: hd.kind,
                        server_id: hd.server_id,
                        flags: hd.flags,
                    },
                    &body,
                );
                decode_all(&w, &maps);
            }
        }
    }
    for _ in 0..20_000 {
        let e = evs[rng.below(evs.len() as u64) as usize];
        let mut body = e[19..e.len() - 4].to_vec();
        for _ in 0..1 + rng.below(4) {
            if body.is_empty() {
                break;
            }
            let i = rng.below(body.len() as u64) as usize;
            body[i] = rng.next_u64() as u8;
        }
        if rng.one_in(4) {
            let n = rng.below(16) as usize;
            body.extend(rng.bytes(n));
        }
        let hd = parse::header(e).unwrap();
        let mut w = Vec::new();
        event::write_event(
            &mut w,
            0,
            Header {
                timestamp: 0,
                kind: if rng.one_in(8) {
                    rng.next_u64() as u8
                } else {
                    hd.kind
                },
                server_id: 1,
                flags: 0,
            },
            &body,
        );
        decode_all(&w, &maps);
        let n = rng.below(64) as usize;
        let junk = rng.bytes(n);
        decode_all(&junk, &maps);
    }
}
