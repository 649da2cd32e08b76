//! Codec tests against bytes MariaDB 10.11.19 wrote (a scratch `mariadbd
//! --log-bin --binlog-format=ROW`, binlog_annotate_row_events off, running
//! `CREATE TABLE t(id int primary key, b bigint, v varchar(20), c char(5),
//! d decimal(10,2), dt datetime, ts timestamp null, f double, bl blob,
//! dt6 datetime(6), de decimal(20,5), ti tinyint unsigned, e enum('a','b'))`
//! in database `d` (utf8mb4), one two-row INSERT, an UPDATE, a DELETE and
//! FLUSH BINARY LOGS): whole events, header and CRC32 included.
#![allow(clippy::unwrap_used)]
use crate::event::{self, kind, Gtid, Header};
use crate::record::{self, Cursor};
use crate::row::{put_row, Cell, ColType};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const TS: u32 = 0x6b08_76dc;

/// The INSERT's transaction at offset 777: GTID 0-1-3, TABLE_MAP, WRITE_ROWS, XID 10.
const INSERT_TRX: &str = "dc76086ba2010000002a0000003303000008000300000000000000000000000c000000000000e34cf864dc76086b13010000004500000078030000000008000000000001000164000174000d03080ffef6121105fc12f601fe0f5000fe140a0200000802061405f701fe1f2656e7e6dc76086b170100000072000000ea030000000008000000000001000dff1f00e001000000fbffffffffffffff0668c3a96c6c6f0261627fffff84d299b244310565937d25000000000000f83f0600626c6f62627999b244310501e24080007b1b3a0c14008707c802feff02000000289d3401dc76086b10010000001f0000000904000000000a00000000000000007f604a";
/// The UPDATE's transaction at offset 1033 (GTID 0-1-4, XID 11).
const UPDATE_TRX: &str = "dc76086ba2010000002a0000003304000008000400000000000000000000000c000000000000dff0de1fdc76086b13010000004500000078040000000008000000000001000164000174000d03080ffef6121105fc12f601fe0f5000fe140a0200000802061405f701fe1f1c86ccfddc76086b1801000000b30000002b050000000008000000000001000dff1fff1f00e001000000fbffffffffffffff0668c3a96c6c6f0261627fffff84d299b244310565937d25000000000000f83f0600626c6f62627999b244310501e24080007b1b3a0c14008707c80200e001000000fbffffffffffffff01780261627fffff84d299b244310565937d25000000000000f83f0600626c6f62627999b244310501e24080007b1b3a0c14008707c802052e3717dc76086b10010000001f0000004a05000000000b0000000000000031748466";
/// DELETE_ROWS at 1465 (row id 2, every other column NULL).
const DELETE_EV: &str =
    "dc76086b190100000028000000e1050000000008000000000001000dff1ffeff020000002b4d7593";
/// ROTATE at 1536.
const ROTATE_EV: &str = "dc76086b04010000002f0000002f060000000004000000000000006d7973716c2d62696e2e3030303030320c6d5e0d";
/// GTID_LIST [0-1-5] at offset 256 of the second file.
const GTID_LIST_EV: &str =
    "dc76086ba3010000002b0000002b010000000001000000000000000100000005000000000000009207e180";
/// BINLOG_CHECKPOINT at 285 of the first file.
const CHECKPOINT_EV: &str =
    "d676086ba1010000002b000000480100000000100000006d7973716c2d62696e2e3030303030316ad372fe";
/// QUERY `create database d` at 370 (thread 5, flags SUPPRESS_USE).
const QUERY_EV: &str = "dc76086b020100000051000000c3010000080005000000000000000100001a000000000001010000205400000000060373746404210021002d00640063726561746520646174616261736520641a0c2b39";

fn cols() -> Vec<ColType> {
    vec![
        ColType::Int(4),
        ColType::Int(8),
        ColType::VarString { max_bytes: 80 },
        ColType::String { max_bytes: 20 },
        ColType::Decimal {
            precision: 10,
            scale: 2,
        },
        ColType::DateTime2 { fsp: 0 },
        ColType::Timestamp2 { fsp: 0 },
        ColType::Double,
        ColType::Blob { pack: 2 },
        ColType::DateTime2 { fsp: 6 },
        ColType::Decimal {
            precision: 20,
            scale: 5,
        },
        ColType::Int(1),
        ColType::Enum { pack: 1 },
    ]
}

fn row1(v: &str) -> Vec<Cell<'_>> {
    let dt = |us| Cell::DateTime {
        y: 2024,
        mo: 1,
        d: 2,
        h: 3,
        mi: 4,
        s: 5,
        us,
    };
    vec![
        Cell::Int(1),
        Cell::Int(-5),
        Cell::Bytes(v.as_bytes()),
        Cell::Bytes(b"ab"),
        Cell::Decimal(-12345, 2),
        dt(0),
        Cell::Timestamp {
            secs: 1_704_164_645,
            us: 0,
        },
        Cell::Double(1.5),
        Cell::Bytes(b"blobby"),
        dt(123456),
        Cell::Decimal(12345678901234567, 5),
        Cell::UInt(200),
        Cell::UInt(2),
    ]
}

fn row2() -> Vec<Cell<'static>> {
    let mut r = vec![Cell::Null; 13];
    r[0] = Cell::Int(2);
    r
}

fn table_map_item() -> Vec<u8> {
    let map: Vec<_> = cols()
        .iter()
        .enumerate()
        .map(|(i, c)| c.map_column(i != 0))
        .collect();
    event::table_map(8, "d", "t", &map)
}

/// A record with one rows statement of `kind` whose images are `images`.
fn rows_record(k: u8, images: &[Vec<Cell<'_>>]) -> Vec<u8> {
    let mut rec = record::header(1, TS);
    record::item(&mut rec, record::TAG_TABLE_MAP, &table_map_item());
    record::item(
        &mut rec,
        record::TAG_ROWS_HEAD,
        &record::rows_head_payload(k, 8, 13),
    );
    let step = if k == kind::UPDATE_ROWS_V1 { 2 } else { 1 };
    for pair in images.chunks(step) {
        let mut img = Vec::new();
        for r in pair {
            put_row(&mut img, &cols(), r).unwrap();
        }
        record::item(&mut rec, record::TAG_ROW, &img);
    }
    rec
}

fn render(rec: &[u8], pos: u64, last: u64, xid: u64) -> (Vec<u8>, Cursor) {
    let mut out = Vec::new();
    let mut cur = Cursor {
        pos,
        gtid: Some(Gtid {
            domain: 0,
            server_id: 1,
            seq_no: last,
        }),
    };
    record::render(&mut out, &mut cur, &record::decode(rec).unwrap(), xid).unwrap();
    (out, cur)
}

#[test]
fn insert_transaction_matches_mariadb_byte_for_byte() {
    let rec = rows_record(kind::WRITE_ROWS_V1, &[row1("héllo"), row2()]);
    let (out, cur) = render(&rec, 777, 2, 10);
    assert_eq!(out, hex(INSERT_TRX));
    assert_eq!(cur.pos, 1033);
    assert_eq!(cur.gtid.unwrap().to_string(), "0-1-3");
}

#[test]
fn update_transaction_matches_mariadb_byte_for_byte() {
    let rec = rows_record(kind::UPDATE_ROWS_V1, &[row1("héllo"), row1("x")]);
    let (out, cur) = render(&rec, 1033, 3, 11);
    assert_eq!(out, hex(UPDATE_TRX));
    assert_eq!(cur.pos, 1354);
}

#[test]
fn delete_event_matches_mariadb() {
    let rec = rows_record(kind::DELETE_ROWS_V1, &[row2()]);
    let (out, _) = render(&rec, 1354, 4, 12);
    let want = hex(DELETE_EV);
    // GTID (42 bytes) + TABLE_MAP (69) precede it.
    assert_eq!(&out[42 + 69..42 + 69 + want.len()], &want[..]);
}

#[test]
fn other_events_match_mariadb() {
    let h = |kind, flags| Header {
        timestamp: TS,
        kind,
        server_id: 1,
        flags,
    };
    let mut out = Vec::new();
    assert_eq!(
        event::write_event(
            &mut out,
            1536,
            h(kind::ROTATE, 0),
            &event::rotate(4, "mysql-bin.000002")
        ),
        1583
    );
    assert_eq!(out, hex(ROTATE_EV));
    out.clear();
    let g = Gtid {
        domain: 0,
        server_id: 1,
        seq_no: 5,
    };
    event::write_event(
        &mut out,
        256,
        h(kind::GTID_LIST, 0),
        &event::gtid_list(&[g]),
    );
    assert_eq!(out, hex(GTID_LIST_EV));
    out.clear();
    let h0 = Header {
        timestamp: 0x6b08_76d6,
        ..h(kind::BINLOG_CHECKPOINT, 0)
    };
    event::write_event(
        &mut out,
        285,
        h0,
        &event::binlog_checkpoint("mysql-bin.000001"),
    );
    assert_eq!(out, hex(CHECKPOINT_EV));
    out.clear();
    let q = event::QueryInfo {
        thread_id: 5,
        flags2: 0x0100_0000,
        db: "d",
        sql_mode: 0x5420_0000,
        charset: [33, 33, 45],
        query: "create database d",
    };
    event::write_event(
        &mut out,
        370,
        h(kind::QUERY, event::flag::SUPPRESS_USE),
        &event::query(&q),
    );
    assert_eq!(out, hex(QUERY_EV));
    // An empty GTID_LIST is padded as MariaDB pads it (29-byte event).
    assert_eq!(event::gtid_list(&[]), [0, 0, 0, 0, 0, 0]);
}

#[test]
fn format_description_as_mariadb_lays_it_out() {
    let b = event::format_description(0);
    assert_eq!(b.len(), 252 - 19 - 4);
    assert_eq!(&b[..2], &[4, 0]);
    assert_eq!(b[56], 19);
    // The post-header lengths MariaDB 10.11 lists, then CRC32.
    let want =
        hex("380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a");
    assert_eq!(&b[57..57 + want.len()], &want[..]);
    assert_eq!(
        &b[57 + 159..],
        &hex("0004130400")[..]
            .iter()
            .chain(&hex("0d0808080a0a0a01"))
            .copied()
            .collect::<Vec<_>>()[..]
    );
}

#[test]
fn files_decode_and_describe() {
    let mut file = event::MAGIC.to_vec();
    let h = |kind| Header {
        timestamp: TS,
        kind,
        server_id: 1,
        flags: 0,
    };
    let pos = event::write_event(
        &mut file,
        4,
        h(kind::FORMAT_DESCRIPTION),
        &event::format_description(0),
    );
    assert_eq!(pos, 256);
    let rec = rows_record(kind::WRITE_ROWS_V1, &[row1("héllo"), row2()]);
    let (out, cur) = render(&rec, pos, 2, 10);
    file.extend_from_slice(&out);
    let evs = crate::decode::events(&file).unwrap();
    let infos: Vec<(String, String)> = evs
        .iter()
        .map(|e| (crate::decode::type_name(e.kind), crate::decode::info(e)))
        .collect();
    assert_eq!(
        infos,
        [
            (
                "Format_desc",
                format!("Server ver: {}, Binlog ver: 4", event::SERVER_VERSION)
            ),
            ("Gtid", "BEGIN GTID 0-1-3".into()),
            ("Table_map", "table_id: 8 (d.t)".into()),
            ("Write_rows_v1", "table_id: 8 flags: STMT_END_F".into()),
            ("Xid", "COMMIT /* xid=10 */".into()),
        ]
        .map(|(a, b)| (a.to_string(), b))
    );
    assert_eq!(evs.last().unwrap().end_pos, cur.pos);
    // A flipped bit or a torn tail is refused, never a panic.
    let mut bad = file.clone();
    bad[300] ^= 1;
    assert!(crate::decode::events(&bad).is_err());
    for cut in [5, 20, file.len() - 1] {
        assert!(crate::decode::events(&file[..cut]).is_err());
    }
}

#[test]
fn big_statements_split_into_rows_events() {
    let rows: Vec<Vec<Cell<'_>>> = (0..300).map(|_| row1("héllo")).collect();
    let rec = rows_record(kind::WRITE_ROWS_V1, &rows);
    let (out, _) = render(&rec, 4, 0, 1);
    let mut file = event::MAGIC.to_vec();
    file.extend_from_slice(&out);
    let evs = crate::decode::events(&file).unwrap();
    let rows_evs: Vec<_> = evs
        .iter()
        .filter(|e| e.kind == kind::WRITE_ROWS_V1)
        .collect();
    assert!(rows_evs.len() > 1);
    for (i, e) in rows_evs.iter().enumerate() {
        let end = i + 1 == rows_evs.len();
        assert_eq!(
            u16::from_le_bytes([e.body[6], e.body[7]]) & event::STMT_END_F != 0,
            end
        );
        assert!(e.body.len() < record::MAX_ROWS_BYTES + 200);
    }
}

#[test]
fn records_that_do_not_decode_are_refused() {
    let rec = rows_record(kind::WRITE_ROWS_V1, &[row2()]);
    for cut in 0..rec.len() {
        if let Ok(r) = record::decode(&rec[..cut]) {
            // A prefix that ends between items is a shorter valid record.
            let mut out = Vec::new();
            let mut cur = Cursor { pos: 4, gtid: None };
            let _ = record::render(&mut out, &mut cur, &r, 1);
        }
    }
    let mut bad = rec.clone();
    bad[0] = 9;
    assert!(record::decode(&bad).is_err());
}
