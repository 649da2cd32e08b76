//! Decoder tests for what a source may send that the main fixture lacks:
//! MariaDB's old-format fractional TIMESTAMP/DATETIME/TIME (events a
//! MariaDB 10.11.19 wrote with `mysql56_temporal_format=OFF`: see
//! `fixtures/README.md`), a FORMAT_DESCRIPTION split either way, and
//! TABLE_MAPs with column types the decoder cannot read.
#![allow(clippy::unwrap_used)]
use crate::parse::{self, Body, TableMap};
use crate::unpack::{self, Datum};
use crate::Error;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL, dt
/// DATETIME(6) NULL, tm TIME(2) NULL, dt2 DATETIME(1) NULL, tm5 TIME(5)
/// NULL, ts6 TIMESTAMP(6) NULL) with time_zone '+00:00', then
/// INSERT INTO t VALUES
/// (1, '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.654321',
///  '-838:59:58.99', '1999-12-31 23:59:59.9', '12:34:56.12345',
///  '2038-01-01 00:00:01.000001'),
/// (2, '1970-01-02 00:00:00.5', '0001-01-01 00:00:00.000001',
///  '00:00:00.01', '2000-01-01 00:00:00.0', '-00:00:01.00001',
///  '2001-01-01 00:00:00.999999'): its TABLE_MAP and WRITE_ROWS events.
const OLD_TEMPORAL_MAP: &str = "53d0086b13010000002f0000007d040000000008000000000001000164000174000703070c0b0c0b07007e6a280cc2";
const OLD_TEMPORAL_ROWS: &str = "53d0086b170100000073000000f004000000000800000000000100077f800100000065e08327007b01027abe001d73b10000006500a75eadffff4760f90c397fe8178100000180020000000001518001f40000234856bf60011200c3c100a760610f004652fb1f5f3a4fc8800f423f149b26c9";

fn old_temporal_map() -> TableMap {
    let ev = unhex(OLD_TEMPORAL_MAP);
    let (h, b) = parse::split(&ev, true).unwrap();
    match parse::body(&h, b).unwrap() {
        Body::TableMap(m) => m,
        b => panic!("{b:?}"),
    }
}

fn dt(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> Datum {
    Datum::DateTime {
        y,
        mo,
        d,
        h,
        mi,
        s,
        us,
    }
}

#[test]
fn old_fractional_temporals_read_by_the_replica_columns_precision() {
    let mut map = old_temporal_map();
    let types: Vec<u8> = map.columns.iter().map(|c| c.ty).collect();
    assert_eq!(types, [3, 7, 12, 11, 12, 11, 7]);
    let ev = unhex(OLD_TEMPORAL_ROWS);
    let (h, b) = parse::split(&ev, true).unwrap();
    let Body::Rows(rows) = parse::body(&h, b).unwrap() else {
        panic!("not a rows event")
    };
    // Without the replica's precisions they are refused, never guessed.
    let refused = unpack::each(&rows, &map).unwrap().next().unwrap();
    assert!(matches!(refused, Err(Error::Invalid(_))), "{refused:?}");
    for (c, f) in map.columns.iter_mut().zip([0, 3, 6, 2, 1, 5, 6]) {
        if c.needs_local_fsp() {
            c.local_fsp = Some(f);
        }
    }
    let got: Vec<Vec<Datum>> = unpack::each(&rows, &map)
        .unwrap()
        .map(|c| c.unwrap().1.unwrap())
        .collect();
    let time = |neg: bool, h: i64, m: i64, s: i64, us: i64| {
        let v = ((h * 60 + m) * 60 + s) * 1_000_000 + us;
        Datum::Time(if neg { -v } else { v })
    };
    let int = |v: u64| Datum::Int { raw: v, width: 4 };
    assert_eq!(
        got,
        [
            vec![
                int(1),
                Datum::Timestamp {
                    secs: 1_709_212_455,
                    us: 123_000
                },
                dt(2024, 2, 29, 13, 14, 15, 654_321),
                time(true, 838, 59, 58, 990_000),
                dt(1999, 12, 31, 23, 59, 59, 900_000),
                time(false, 12, 34, 56, 123_450),
                Datum::Timestamp {
                    secs: 2_145_916_801,
                    us: 1
                },
            ],
            vec![
                int(2),
                Datum::Timestamp {
                    secs: 86_400,
                    us: 500_000
                },
                dt(1, 1, 1, 0, 0, 0, 1),
                time(false, 0, 0, 0, 10_000),
                dt(2000, 1, 1, 0, 0, 0, 0),
                time(true, 0, 0, 1, 10),
                Datum::Timestamp {
                    secs: 978_307_200,
                    us: 999_999
                },
            ],
        ]
    );
}

/// The FORMAT_DESCRIPTION's checksum algorithm is the same whether the
/// reader split it expecting a checksum or not (it always has the trailer).
#[test]
fn fde_checksum_algorithm_does_not_depend_on_split() {
    const FIXTURE: &[u8] = include_bytes!("../fixtures/mariadb-10.11-rows.bin");
    let size = u32::from_le_bytes(FIXTURE[4 + 9..4 + 13].try_into().unwrap()) as usize;
    let fde = &FIXTURE[4..4 + size];
    for checksum in [true, false] {
        let (h, b) = parse::split(fde, checksum).unwrap();
        let Body::FormatDescription { checksum_alg, .. } = parse::body(&h, b).unwrap() else {
            panic!("not a FORMAT_DESCRIPTION")
        };
        assert_eq!(checksum_alg, 1, "split(fde, {checksum})");
    }
    // A damaged CRC32 is found either way.
    let mut bad = fde.to_vec();
    bad[30] ^= 1;
    assert!(parse::split(&bad, false).is_err());
}

/// A TABLE_MAP body of columns `types` with metadata `meta`.
fn map_body(types: &[u8], meta: &[u8]) -> Vec<u8> {
    let mut b = vec![9, 0, 0, 0, 0, 0, 1, 0, 1, b'd', 0, 1, b't', 0];
    b.push(types.len() as u8);
    b.extend_from_slice(types);
    b.push(meta.len() as u8);
    b.extend_from_slice(meta);
    b.extend(std::iter::repeat_n(0, types.len().div_ceil(8)));
    b
}

fn parse_map(body: &[u8]) -> crate::Result<TableMap> {
    let ev = unhex(OLD_TEMPORAL_MAP);
    let (h, _) = parse::split(&ev, true).unwrap();
    match parse::body(&h, body)? {
        Body::TableMap(m) => Ok(m),
        b => panic!("{b:?}"),
    }
}

/// A TABLE_MAP with a column type the decoder cannot read (MariaDB's
/// compressed columns, or one it does not know) decodes; the table's rows
/// are refused when they come. Old DECIMAL (type 0) has no metadata.
#[test]
fn unsupported_column_types_fail_only_when_the_table_is_used() {
    // INT, VARCHAR_COMPRESSED(2 bytes), INT.
    let m = parse_map(&map_body(&[3, 140, 3], &[10, 0])).unwrap();
    assert!(m.unsupported.is_none());
    assert_eq!(m.columns[1].meta, 10);
    // An unknown type: the metadata after it cannot be split.
    let m = parse_map(&map_body(&[3, 99, 15], &[1, 2, 3])).unwrap();
    assert!(m.unsupported.is_some());
    let rows = parse::Rows {
        kind: parse::RowsKind::Write,
        table_id: 9,
        flags: 1,
        ncols: 3,
        present: vec![true; 3],
        present_after: Vec::new(),
        images: &[0, 1, 0, 0, 0],
    };
    assert!(matches!(unpack::each(&rows, &m), Err(Error::Invalid(_))));
    // Old DECIMAL, INT: no metadata at all.
    let m = parse_map(&map_body(&[0, 3], &[])).unwrap();
    assert!(m.unsupported.is_none());
    assert_eq!(m.columns.len(), 2);
}

/// Review s33 M2: an old-format DATETIME(1) or (3) whose bytes overflow a
/// u64 once shifted to microseconds, and old DATETIME / TIME values out of
/// their range, are refused as corrupt (never a panic or a wrapped value).
#[test]
fn hostile_old_temporals_are_corrupt() {
    let col = |ty: u8, f: u8| crate::parse::MapCol {
        ty,
        meta: 0,
        nullable: false,
        local_fsp: Some(f),
    };
    let read = |c: crate::parse::MapCol, b: &[u8]| unpack::value(&mut crate::parse::Rd::new(b), &c);
    let corrupt = |r: crate::Result<Datum>| matches!(r, Err(Error::Corrupt(_)));
    assert!(corrupt(read(col(12, 1), &[0xff; 6])));
    assert!(corrupt(read(col(12, 3), &[0xff; 7])));
    // In u64 but past year 9999 / month 12.
    assert!(corrupt(read(col(12, 6), &[0xff; 8])));
    assert_eq!(
        read(col(12, 0), &99_991_231_235_959u64.to_le_bytes()).unwrap(),
        dt(9999, 12, 31, 23, 59, 59, 0)
    );
    assert!(corrupt(read(
        col(12, 0),
        &100_001_231_235_959u64.to_le_bytes()
    )));
    assert!(corrupt(read(
        col(12, 0),
        &20_241_331_000_000u64.to_le_bytes()
    )));
    // TIME past 838:59:59.999999 either way.
    assert!(corrupt(read(col(11, 6), &[0xff; 6])));
    assert!(corrupt(read(col(11, 0), &[0xff, 0xff, 0x7f])));
    assert_eq!(
        read(col(11, 0), &(8_385_959u32.to_le_bytes()[..3])).unwrap(),
        Datum::Time(3_020_399_000_000)
    );
}
