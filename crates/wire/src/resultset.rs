//! Response packets: OK, ERR, EOF, column definitions, result-set framing (column
//! count, definitions, terminator per CLIENT_DEPRECATE_EOF), COM_FIELD_LIST replies
//! and the COM_STMT_PREPARE response.

use std::io::{Read, Write};

use crate::codec::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32};
use crate::conn::Conn;
use crate::consts::{cap, charset, colflag, ColumnType};
use crate::error::{Error, Result};

/// Contents of an OK packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OkPacket {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
    /// Human-readable info (e.g. "Rows matched: 1  Changed: 1  Warnings: 0").
    pub info: String,
}

/// An error to report to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    pub code: u16,
    /// Five characters, e.g. "42000".
    pub sqlstate: String,
    pub message: String,
}

impl ErrPacket {
    pub fn new(code: u16, sqlstate: &str, message: impl Into<String>) -> Self {
        ErrPacket {
            code,
            sqlstate: sqlstate.to_string(),
            message: message.into(),
        }
    }
}

/// One column of a result set (Protocol::ColumnDefinition41).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    /// Collation id (63 = binary for numbers, dates and blobs).
    pub charset: u16,
    /// Maximum display length.
    pub length: u32,
    pub col_type: ColumnType,
    pub flags: u16,
    /// Digits after the point (0x1F for "not fixed" floats, fsp for temporal types).
    pub decimals: u8,
}

/// A column definition borrowing its names (what is sent; `Conn::send_column_refs`
/// writes one without copying the names of a planned statement's columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnDefRef<'a> {
    pub schema: &'a str,
    pub table: &'a str,
    pub org_table: &'a str,
    pub name: &'a str,
    pub org_name: &'a str,
    pub charset: u16,
    pub length: u32,
    pub col_type: ColumnType,
    pub flags: u16,
    pub decimals: u8,
}

impl<'a> ColumnDefRef<'a> {
    /// As `ColumnDef::new`.
    pub fn new(name: &'a str, col_type: ColumnType) -> ColumnDefRef<'a> {
        use ColumnType::*;
        let bin = u16::from(charset::BINARY);
        let num = colflag::BINARY_FLAG | colflag::NUM_FLAG;
        let (cs, length, flags, decimals) = match col_type {
            Tiny => (bin, 4, num, 0),
            Short => (bin, 6, num, 0),
            Int24 => (bin, 9, num, 0),
            Long => (bin, 11, num, 0),
            LongLong => (bin, 20, num, 0),
            Year => (
                bin,
                4,
                colflag::UNSIGNED_FLAG | colflag::ZEROFILL_FLAG | num,
                0,
            ),
            Float => (bin, 12, num, 31),
            Double => (bin, 22, num, 31),
            Decimal | NewDecimal => (bin, 67, num, 30),
            Date | NewDate => (bin, 10, colflag::BINARY_FLAG, 0),
            Time => (bin, 10, colflag::BINARY_FLAG, 0),
            DateTime | Timestamp => (bin, 19, colflag::BINARY_FLAG, 0),
            Null => (bin, 0, colflag::BINARY_FLAG, 0),
            Bit => (bin, 1, colflag::UNSIGNED_FLAG, 0),
            TinyBlob | MediumBlob | LongBlob | Blob | Geometry => (
                bin,
                0xFFFF_FFFF,
                colflag::BLOB_FLAG | colflag::BINARY_FLAG,
                0,
            ),
            Json => (
                bin,
                0xFFFF_FFFF,
                colflag::BLOB_FLAG | colflag::BINARY_FLAG,
                0,
            ),
            VarChar | VarString | String | Enum | Set => {
                (u16::from(charset::UTF8MB4_GENERAL_CI), 1024, 0, 0)
            }
        };
        ColumnDefRef {
            schema: "",
            table: "",
            org_table: "",
            name,
            org_name: name,
            charset: cs,
            length,
            col_type,
            flags,
            decimals,
        }
    }

    /// The owned definition.
    pub fn owned(&self) -> ColumnDef {
        ColumnDef {
            schema: self.schema.to_string(),
            table: self.table.to_string(),
            org_table: self.org_table.to_string(),
            name: self.name.to_string(),
            org_name: self.org_name.to_string(),
            charset: self.charset,
            length: self.length,
            col_type: self.col_type,
            flags: self.flags,
            decimals: self.decimals,
        }
    }
}

impl ColumnDef {
    /// A computed column (no table) named `name`, with a charset, length, flags and
    /// decimals typical for `col_type`. Adjust the public fields as needed.
    pub fn new(name: &str, col_type: ColumnType) -> ColumnDef {
        ColumnDefRef::new(name, col_type).owned()
    }

    /// The definition borrowing this one's names.
    pub fn borrowed(&self) -> ColumnDefRef<'_> {
        ColumnDefRef {
            schema: &self.schema,
            table: &self.table,
            org_table: &self.org_table,
            name: &self.name,
            org_name: &self.org_name,
            charset: self.charset,
            length: self.length,
            col_type: self.col_type,
            flags: self.flags,
            decimals: self.decimals,
        }
    }

    /// Builder-style table/schema setter.
    pub fn with_table(mut self, schema: &str, table: &str) -> ColumnDef {
        self.schema = schema.to_string();
        self.table = table.to_string();
        self.org_table = table.to_string();
        self
    }

    /// Builder-style flag setter (ORed in).
    pub fn with_flags(mut self, flags: u16) -> ColumnDef {
        self.flags |= flags;
        self
    }
}

fn put_column_def(out: &mut Vec<u8>, c: &ColumnDefRef) {
    put_lenenc_bytes(out, b"def");
    put_lenenc_bytes(out, c.schema.as_bytes());
    put_lenenc_bytes(out, c.table.as_bytes());
    put_lenenc_bytes(out, c.org_table.as_bytes());
    put_lenenc_bytes(out, c.name.as_bytes());
    put_lenenc_bytes(out, c.org_name.as_bytes());
    out.push(0x0C);
    put_u16(out, c.charset);
    put_u32(out, c.length);
    out.push(c.col_type as u8);
    put_u16(out, c.flags);
    out.push(c.decimals);
    out.extend_from_slice(&[0, 0]);
}

impl<S: Read + Write> Conn<S> {
    /// OK packet (0x00 header).
    pub fn send_ok(&mut self, ok: &OkPacket) -> Result<()> {
        self.put_ok(0x00, ok)
    }

    fn put_ok(&mut self, header: u8, ok: &OkPacket) -> Result<()> {
        let out = self.io.begin_packet();
        out.push(header);
        put_lenenc_int(out, ok.affected_rows);
        put_lenenc_int(out, ok.last_insert_id);
        put_u16(out, ok.status);
        put_u16(out, ok.warnings);
        // The docs say string<EOF> without CLIENT_SESSION_TRACK, but MySQL's
        // net_send_ok writes a length-encoded string either way (and only when
        // non-empty), and libmysqlclient/libmariadb read it as one.
        if !ok.info.is_empty() {
            put_lenenc_bytes(out, ok.info.as_bytes());
        }
        self.io.end_packet()
    }

    /// ERR packet: 0xFF, code, '#', 5-character SQLSTATE (padded/truncated), message.
    /// Before the client's capabilities are known the SQLSTATE is omitted.
    pub fn send_err(&mut self, code: u16, sqlstate: &str, msg: &str) -> Result<()> {
        let with_state = self.client_known && self.caps & cap::CLIENT_PROTOCOL_41 != 0;
        let out = self.io.begin_packet();
        out.push(0xFF);
        put_u16(out, code);
        if with_state {
            out.push(b'#');
            let mut st = [b'H', b'Y', b'0', b'0', b'0'];
            for (d, s) in st.iter_mut().zip(sqlstate.bytes()) {
                *d = s;
            }
            out.extend_from_slice(&st);
        }
        out.extend_from_slice(msg.as_bytes());
        self.io.end_packet()
    }

    pub fn send_err_packet(&mut self, e: &ErrPacket) -> Result<()> {
        self.send_err(e.code, &e.sqlstate, &e.message)
    }

    /// A raw EOF packet (0xFE, warnings, status), whatever CLIENT_DEPRECATE_EOF says
    /// (e.g. the COM_SET_OPTION / COM_DEBUG reply).
    pub fn send_eof(&mut self, status: u16, warnings: u16) -> Result<()> {
        let out = self.io.begin_packet();
        out.push(0xFE);
        put_u16(out, warnings);
        put_u16(out, status);
        self.io.end_packet()
    }

    /// Result-set header: column count, definitions, then EOF unless DEPRECATE_EOF.
    /// Rows and [`Conn::finish_result_set`] follow.
    pub fn send_columns(&mut self, cols: &[ColumnDef]) -> Result<()> {
        self.send_column_refs(cols.iter().map(ColumnDef::borrowed))
    }

    /// As `send_columns`, from definitions that borrow their names.
    pub fn send_column_refs<'a>(
        &mut self,
        cols: impl ExactSizeIterator<Item = ColumnDefRef<'a>>,
    ) -> Result<()> {
        let out = self.io.begin_packet();
        put_lenenc_int(out, cols.len() as u64);
        self.io.end_packet()?;
        for c in cols {
            put_column_def(self.io.begin_packet(), &c);
            self.io.end_packet()?;
        }
        self.eof_unless_deprecated()
    }

    fn put_defs(&mut self, cols: &[ColumnDef], field_list: bool) -> Result<()> {
        for c in cols {
            let out = self.io.begin_packet();
            put_column_def(out, &c.borrowed());
            if field_list {
                // COM_FIELD_LIST column definitions carry a default value: NULL.
                out.push(0xFB);
            }
            self.io.end_packet()?;
        }
        Ok(())
    }

    fn eof_unless_deprecated(&mut self) -> Result<()> {
        if self.deprecate_eof() {
            Ok(())
        } else {
            self.send_eof(self.status, 0)
        }
    }

    /// Column definitions only, in COM_FIELD_LIST form (with a NULL default value);
    /// end the reply with [`Conn::finish_result_set`].
    pub fn send_column_defs_only(&mut self, cols: &[ColumnDef]) -> Result<()> {
        self.put_defs(cols, true)
    }

    /// The whole COM_FIELD_LIST reply: definitions then the terminator.
    pub fn send_field_list(&mut self, cols: &[ColumnDef], status: u16) -> Result<()> {
        self.put_defs(cols, true)?;
        self.finish_result_set(status, 0)
    }

    /// Ends a result set: EOF, or with CLIENT_DEPRECATE_EOF an OK packet with a 0xFE
    /// header. Set `SERVER_MORE_RESULTS_EXISTS` in `status` when another follows.
    pub fn finish_result_set(&mut self, status: u16, warnings: u16) -> Result<()> {
        if self.deprecate_eof() {
            self.put_ok(
                0xFE,
                &OkPacket {
                    status,
                    warnings,
                    ..Default::default()
                },
            )
        } else {
            self.send_eof(status, warnings)
        }
    }

    /// COM_STMT_PREPARE reply: header, parameter definitions and column definitions,
    /// each list followed by EOF unless DEPRECATE_EOF (and omitted when empty).
    pub fn send_prepare_ok(
        &mut self,
        stmt_id: u32,
        params: &[ColumnDef],
        cols: &[ColumnDef],
        warnings: u16,
    ) -> Result<()> {
        let (Ok(ncols), Ok(nparams)) = (u16::try_from(cols.len()), u16::try_from(params.len()))
        else {
            return Err(Error::Misuse(
                "more than 65535 columns or parameters".into(),
            ));
        };
        let out = self.io.begin_packet();
        out.push(0x00);
        put_u32(out, stmt_id);
        put_u16(out, ncols);
        put_u16(out, nparams);
        out.push(0);
        put_u16(out, warnings);
        self.io.end_packet()?;
        if !params.is_empty() {
            self.put_defs(params, false)?;
            self.eof_unless_deprecated()?;
        }
        if !cols.is_empty() {
            self.put_defs(cols, false)?;
            self.eof_unless_deprecated()?;
        }
        Ok(())
    }
}
