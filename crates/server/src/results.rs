//! Between SQL values and protocol packets: result column definitions, the result sink
//! that writes text or binary rows straight into the connection's output (converting
//! text to the client's character set), and binary-protocol parameters as SQL values
//! (impossible temporal values kept as text so they fail as text would).
use rel::value::{self as val, ColumnType as CT, TypeKind, Value};
use sql::result::{ColumnInfo, OutType, ResultSink};
use sql::{Session, SqlError};
use std::io::{Read, Write};
use wire::{colflag, ColumnDef, ColumnDefRef, ColumnType, Conn, Param};

/// COM_FIELD_LIST (libmariadb's `mysql_list_fields`, used by the `mariadb`
/// client's name completion): the columns of table or view `t` of the current
/// database whose names match `wild` (LIKE, any case; empty: all), as MariaDB;
/// 1046 without a current database, 1146 (`db.t`) for one that does not exist or
/// on which the account holds nothing (as SHOW COLUMNS).
pub fn field_list(sess: &Session, t: &str, wild: &str) -> Result<Vec<ColumnDef>, SqlError> {
    let Some(db) = sess.db.as_deref() else {
        return Err(SqlError::no_db());
    };
    let unknown = || SqlError::no_table(format!("{db}.{t}"));
    if !sql::account::Visibility::of(sess).table(db, t) {
        return Err(unknown());
    }
    let st = sess.inst.catalog.state();
    let tab = match (st.view(db, t), st.table(db, t)) {
        (Some(v), _) => sql::select::view::view_table(&st, v)?,
        (None, Some(tab)) => tab.clone(),
        (None, None) => return Err(unknown()),
    };
    Ok(tab
        .def
        .columns
        .iter()
        .filter(|c| wild.is_empty() || sql::vars::like_ci(&c.name, wild))
        .map(|c| {
            column_def(&ColumnInfo {
                name: c.name.clone(),
                org_name: c.name.clone(),
                table: t.to_string(),
                org_table: t.to_string(),
                db: db.to_string(),
                ty: OutType::Column(c.ty.clone()),
                nullable: c.nullable,
                primary: false,
                auto_increment: c.auto_increment,
            })
        })
        .collect())
}

/// Maps a result column to its protocol definition.
pub fn column_def(c: &ColumnInfo) -> ColumnDef {
    column_def_ref(c).owned()
}

/// `column_def` borrowing the column's names.
fn column_def_ref(c: &ColumnInfo) -> ColumnDefRef<'_> {
    let (t, unsigned, len, binary_charset, dec) = match &c.ty {
        OutType::Column(ct) => col_type(ct),
        OutType::Int { unsigned } => (ColumnType::LongLong, *unsigned, 21, true, 0),
        OutType::Decimal { scale } => (ColumnType::NewDecimal, false, 67, true, *scale),
        OutType::Double => (ColumnType::Double, false, 22, true, 31),
        OutType::Text { len } => (
            ColumnType::VarString,
            false,
            len.saturating_mul(4),
            false,
            0,
        ),
        OutType::Date => (ColumnType::Date, false, 10, true, 0),
        OutType::DateTime => (ColumnType::DateTime, false, 19, true, 0),
        OutType::Time => (ColumnType::Time, false, 10, true, 0),
        OutType::Null => (ColumnType::Null, false, 0, true, 0),
    };
    let mut d = ColumnDefRef::new(&c.name, t);
    d.schema = &c.db;
    d.table = &c.table;
    d.org_table = &c.org_table;
    d.org_name = &c.org_name;
    d.length = len;
    d.decimals = dec;
    let mut f = d.flags;
    // Strings, as MariaDB: binary ones (BINARY, VARBINARY, BLOB, binary
    // expressions) in collation 63 with the BINARY flag, their bytes sent as
    // they are; text in utf8mb4 without it (`Sink` converts it for a latin1
    // client).
    if matches!(
        t,
        ColumnType::String | ColumnType::VarString | ColumnType::Blob
    ) {
        if binary_charset {
            d.charset = u16::from(wire::charset::BINARY);
            f |= colflag::BINARY_FLAG;
        } else {
            d.charset = u16::from(wire::charset::UTF8MB4_GENERAL_CI);
            f &= !colflag::BINARY_FLAG;
        }
    }
    if !c.nullable {
        f |= colflag::NOT_NULL_FLAG;
    }
    if c.primary {
        f |= colflag::PRI_KEY_FLAG;
    }
    if c.auto_increment {
        f |= colflag::AUTO_INCREMENT_FLAG;
    }
    if unsigned {
        f |= colflag::UNSIGNED_FLAG;
    }
    match &c.ty {
        OutType::Column(ct) if ct.kind == TypeKind::Enum => f |= colflag::ENUM_FLAG,
        OutType::Column(ct) if ct.kind == TypeKind::Set => f |= colflag::SET_FLAG,
        _ => {}
    }
    d.flags = f;
    d
}

fn col_type(ct: &CT) -> (ColumnType, bool, u32, bool, u8) {
    let u = ct.unsigned;
    match ct.kind {
        TypeKind::TinyInt => (ColumnType::Tiny, u, 4, true, 0),
        TypeKind::SmallInt => (ColumnType::Short, u, 6, true, 0),
        TypeKind::MediumInt => (ColumnType::Int24, u, 9, true, 0),
        TypeKind::Int => (ColumnType::Long, u, 11, true, 0),
        TypeKind::BigInt => (ColumnType::LongLong, u, 20, true, 0),
        TypeKind::Year => (ColumnType::Year, true, 4, true, 0),
        TypeKind::Float => (ColumnType::Float, false, 12, true, 31),
        TypeKind::Double => (ColumnType::Double, false, 22, true, 31),
        TypeKind::Decimal => (ColumnType::NewDecimal, u, ct.len + 2, true, ct.scale),
        TypeKind::Char => (ColumnType::String, false, ct.len * 4, false, 0),
        TypeKind::VarChar => (ColumnType::VarString, false, ct.len * 4, false, 0),
        TypeKind::Text => (ColumnType::Blob, false, ct.max_bytes() as u32, false, 0),
        TypeKind::Binary => (ColumnType::String, false, ct.len, true, 0),
        TypeKind::VarBinary => (ColumnType::VarString, false, ct.len, true, 0),
        TypeKind::Blob => (ColumnType::Blob, false, ct.max_bytes() as u32, true, 0),
        TypeKind::Date => (ColumnType::Date, false, 10, true, 0),
        TypeKind::DateTime => (ColumnType::DateTime, false, 19, true, ct.scale),
        TypeKind::Timestamp => (ColumnType::Timestamp, false, 19, true, ct.scale),
        TypeKind::Time => (ColumnType::Time, false, 10, true, ct.scale),
        // MariaDB sends ENUM and SET as STRING with ENUM_FLAG / SET_FLAG.
        TypeKind::Enum | TypeKind::Set => (
            ColumnType::String,
            false,
            ct.members.char_len(ct.kind == TypeKind::Set) * 4,
            false,
            0,
        ),
    }
}

/// Writes rows as text or binary protocol rows.
pub(crate) struct Sink<'a, S: Read + Write> {
    conn: &'a mut Conn<S>,
    binary: bool,
    /// Per result column, how its values are sent.
    cols: Vec<OutCol>,
    text: Vec<u8>,
    started: bool,
    /// character_set_results is latin1: text columns are converted.
    latin1: bool,
}

/// How a result column's values are sent.
#[derive(Clone, Copy)]
struct OutCol {
    ty: ColumnType,
    /// Holds text (not binary) strings.
    textual: bool,
    /// The fraction digits of a stored DATETIME/TIMESTAMP/TIME column (its
    /// values print with exactly that many, as in MySQL).
    fsp: Option<u8>,
}

impl<'a, S: Read + Write> Sink<'a, S> {
    pub(crate) fn new(conn: &'a mut Conn<S>, binary: bool, sess: &Session) -> Self {
        let latin1 = sess.with_var(
            "character_set_results",
            |v| matches!(v, Some(Value::Bytes(b)) if b.eq_ignore_ascii_case(b"latin1")),
        );
        Sink {
            conn,
            binary,
            cols: Vec::new(),
            text: Vec::new(),
            started: false,
            latin1,
        }
    }
}

impl<S: Read + Write> ResultSink for Sink<'_, S> {
    fn local_infile(&mut self, name: &str) -> sql::Result<Box<dyn Read + '_>> {
        match self.conn.local_infile(name.as_bytes()).map_err(io_err)? {
            Some(r) => Ok(Box::new(r)),
            None => Err(sql::SqlError::local_infile_disabled()),
        }
    }

    fn columns(&mut self, cols: &[ColumnInfo]) -> sql::Result<()> {
        self.cols.clear();
        self.cols.extend(cols.iter().map(|c| {
            let d = column_def_ref(c);
            OutCol {
                ty: d.col_type,
                textual: d.charset == u16::from(wire::charset::UTF8MB4_GENERAL_CI),
                fsp: match &c.ty {
                    sql::result::OutType::Column(ct)
                        if matches!(
                            ct.kind,
                            TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time
                        ) =>
                    {
                        Some(ct.scale)
                    }
                    _ => None,
                },
            }
        }));
        self.started = true;
        // The definitions borrow the plan's column names: nothing is copied.
        let latin1 = self.latin1;
        let defs = cols.iter().map(|c| {
            let mut d = column_def_ref(c);
            if latin1 && d.charset != 63 {
                d.charset = 8; // latin1_swedish_ci
            }
            d
        });
        self.conn.send_column_refs(defs).map_err(io_err)
    }

    fn row(&mut self, row: &[Value]) -> sql::Result<()> {
        // Text for a latin1 client: converted from the stored UTF-8.
        let converted: Vec<Value>;
        let needs = self.latin1
            && row
                .iter()
                .any(|v| matches!(v, Value::Bytes(b) if !b.is_ascii()));
        let row = if needs {
            converted = row
                .iter()
                .zip(
                    self.cols
                        .iter()
                        .map(|c| c.textual)
                        .chain(std::iter::repeat(false)),
                )
                .map(|(v, t)| match v {
                    Value::Bytes(b) if t => Value::Bytes(sql::text::utf8_to_latin1(b)),
                    other => other.clone(),
                })
                .collect();
            &converted[..]
        } else {
            row
        };
        if self.binary {
            let mut r = self.conn.binary_row(row.len());
            for (v, c) in row.iter().zip(&self.cols) {
                push_binary(&mut r, c.ty, v, &mut self.text);
            }
            r.finish().map_err(io_err)
        } else {
            let mut r = self.conn.text_row();
            for (i, v) in row.iter().enumerate() {
                let fsp = self.cols.get(i).and_then(|c| c.fsp);
                match v {
                    Value::Null => {
                        r.push_null();
                    }
                    Value::Bytes(b) => {
                        r.push_bytes(b);
                    }
                    Value::Int(i) => {
                        r.push_i64(*i);
                    }
                    Value::UInt(u) => {
                        r.push_u64(*u);
                    }
                    Value::DateTime(p) if fsp.is_some() => {
                        self.text.clear();
                        rel::temporal::format_datetime(*p, fsp.unwrap_or(0), &mut self.text);
                        r.push_bytes(&self.text);
                    }
                    Value::Time(t) if fsp.is_some() => {
                        self.text.clear();
                        rel::temporal::format_time_fsp(*t, fsp.unwrap_or(0), &mut self.text);
                        r.push_bytes(&self.text);
                    }
                    other => {
                        self.text.clear();
                        other.to_text(&mut self.text);
                        r.push_bytes(&self.text);
                    }
                }
            }
            r.finish().map_err(io_err)
        }
    }
}

fn push_binary<S: Read + Write>(
    r: &mut wire::BinaryRow<'_, S>,
    t: ColumnType,
    v: &Value,
    buf: &mut Vec<u8>,
) {
    if v.is_null() || t == ColumnType::Null {
        r.push_null();
        return;
    }
    match t {
        ColumnType::Tiny
        | ColumnType::Short
        | ColumnType::Int24
        | ColumnType::Long
        | ColumnType::LongLong
        | ColumnType::Year => {
            match v {
                Value::UInt(u) => r.push_u64(t, *u),
                other => r.push_i64(
                    t,
                    other
                        .to_i128()
                        .unwrap_or(0)
                        .clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                ),
            };
        }
        ColumnType::Float => {
            r.push_f32(v.to_f64().unwrap_or(0.0) as f32);
        }
        ColumnType::Double => {
            r.push_f64(v.to_f64().unwrap_or(0.0));
        }
        ColumnType::Date | ColumnType::DateTime | ColumnType::Timestamp => {
            let p = match v {
                Value::DateTime(p) => *p,
                Value::Date(d) => {
                    let (y, m, dd) = val::date_unpack(*d);
                    val::datetime_pack(y, m, dd, 0, 0, 0, 0)
                }
                Value::Bytes(b) => val::parse_datetime(b).unwrap_or(0),
                _ => 0,
            };
            let (y, mo, d, h, mi, s, us) = val::datetime_unpack(p);
            if t == ColumnType::Date {
                r.push_date(y as u16, mo as u8, d as u8);
            } else {
                r.push_datetime(y as u16, mo as u8, d as u8, h as u8, mi as u8, s as u8, us);
            }
        }
        ColumnType::Time => {
            let tm = match v {
                Value::Time(t) => *t,
                Value::Bytes(b) => val::parse_time(b).unwrap_or(0),
                _ => 0,
            };
            let a = tm.unsigned_abs();
            let secs = a / 1_000_000;
            r.push_time(
                tm < 0,
                (secs / 86400) as u32,
                ((secs / 3600) % 24) as u8,
                ((secs / 60) % 60) as u8,
                (secs % 60) as u8,
                (a % 1_000_000) as u32,
            );
        }
        _ => match v {
            Value::Bytes(b) => {
                r.push_bytes(b);
            }
            other => {
                buf.clear();
                other.to_text(buf);
                r.push_bytes(buf);
            }
        },
    }
}

fn io_err(e: wire::Error) -> SqlError {
    SqlError::connection_lost(e)
}

pub(crate) fn param_value(p: Param) -> Value {
    match p {
        Param::Null => Value::Null,
        Param::Int(i) => Value::Int(i),
        Param::UInt(u) => Value::UInt(u),
        Param::Float(f) => Value::Double(f as f64),
        Param::Double(d) => Value::Double(d),
        Param::Bytes(b) => Value::Bytes(b),
        // A temporal parameter is validated like the same value written as text: an
        // impossible one (month 13, hour 25, TIME past 838 hours) goes on as its text, so
        // storing it fails (strict mode, 1292) exactly as through the text protocol.
        Param::Date { year, month, day } => {
            let t = format!("{year:04}-{month:02}-{day:02}");
            match rel::temporal::parse_date(t.as_bytes()) {
                Some(d) => Value::Date(d),
                None => Value::Bytes(t.into_bytes()),
            }
        }
        Param::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micro,
        } => {
            let t = format!(
                "{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}.{micro:06}"
            );
            match rel::temporal::parse_datetime(t.as_bytes()) {
                Some(p) if micro < 1_000_000 => Value::DateTime(p),
                _ => Value::Bytes(t.into_bytes()),
            }
        }
        Param::Time {
            neg,
            days,
            hours,
            minutes,
            seconds,
            micro,
        } => {
            let h = days as u64 * 24 + hours as u64;
            let t = format!(
                "{}{h}:{minutes:02}:{seconds:02}.{micro:06}",
                if neg { "-" } else { "" }
            );
            match rel::temporal::parse_time(t.as_bytes()) {
                Some(x) if micro < 1_000_000 => Value::Time(x),
                _ => Value::Bytes(t.into_bytes()),
            }
        }
    }
}
