//! What a statement returns: column metadata, rows streamed to a
//! `ResultSink` (the server writes them straight into packets), or an OK
//! with counts. Knows nothing of the wire format.
use crate::error::Result;
use rel::value::{ColumnType, TypeKind, Value};

/// The type a result column is declared with.
#[derive(Debug, Clone, PartialEq)]
pub enum OutType {
    /// A stored column's own type.
    Column(ColumnType),
    /// BIGINT (signed or unsigned).
    Int {
        unsigned: bool,
    },
    Decimal {
        scale: u8,
    },
    Double,
    /// VARCHAR of at most `len` characters.
    Text {
        len: u32,
    },
    Date,
    DateTime,
    Time,
    Null,
}

impl OutType {
    /// The kind for a column type.
    pub fn kind(&self) -> Option<TypeKind> {
        match self {
            OutType::Column(c) => Some(c.kind),
            _ => None,
        }
    }
}

/// A result column.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    pub name: String,
    pub org_name: String,
    pub table: String,
    pub org_table: String,
    pub db: String,
    pub ty: OutType,
    pub nullable: bool,
    pub primary: bool,
    pub auto_increment: bool,
}

impl ColumnInfo {
    /// A computed column.
    pub fn expr(name: impl Into<String>, ty: OutType) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            org_name: String::new(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            ty,
            nullable: true,
            primary: false,
            auto_increment: false,
        }
    }

    /// A text column (SHOW output).
    pub fn text(name: &str) -> ColumnInfo {
        ColumnInfo::expr(name, OutType::Text { len: 64 })
    }
}

/// Where result rows go.
pub trait ResultSink {
    /// Starts a result set.
    fn columns(&mut self, cols: &[ColumnInfo]) -> Result<()>;
    /// One row (after `columns`).
    fn row(&mut self, row: &[Value]) -> Result<()>;
    /// LOAD DATA LOCAL: asks the client for file `name` and reads what it
    /// sends (the server's sink speaks MySQL's LOCAL INFILE request); the
    /// reader must be read to its end. Sinks without a client refuse (1148).
    fn local_infile(&mut self, name: &str) -> Result<Box<dyn std::io::Read + '_>> {
        let _ = name;
        Err(crate::SqlError::local_infile_disabled())
    }
}

/// How a statement ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// A result set was sent (its rows went to the sink).
    pub result_set: bool,
    pub affected_rows: u64,
    /// Rows matched (UPDATE), reported instead of `affected_rows` to
    /// clients that set CLIENT_FOUND_ROWS.
    pub found_rows: Option<u64>,
    pub last_insert_id: u64,
    pub info: String,
    /// Warnings raised, moved into SHOW WARNINGS.
    pub warnings: Vec<crate::SqlError>,
}

impl Outcome {
    /// OK with a row count.
    pub fn affected(n: u64) -> Outcome {
        Outcome {
            affected_rows: n,
            ..Default::default()
        }
    }
}

/// A sink that keeps everything (for tests and internal queries).
#[derive(Debug, Default)]
pub struct Collect {
    pub cols: Vec<ColumnInfo>,
    pub rows: Vec<Vec<Value>>,
}

impl Collect {
    /// The rows as `a|b|c` text, each value as the text protocol sends it
    /// (what tests compare).
    pub fn texts(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    }
}

impl ResultSink for Collect {
    fn columns(&mut self, cols: &[ColumnInfo]) -> Result<()> {
        self.cols = cols.to_vec();
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> Result<()> {
        self.rows.push(row.to_vec());
        Ok(())
    }
}

/// Sends a result set of text columns.
pub fn rows(
    sink: &mut dyn ResultSink,
    cols: &[&str],
    rows: Vec<Vec<rel::Value>>,
) -> crate::Result<Outcome> {
    let c: Vec<ColumnInfo> = cols.iter().map(|n| ColumnInfo::text(n)).collect();
    sink.columns(&c)?;
    for r in rows {
        sink.row(&r)?;
    }
    Ok(Outcome {
        result_set: true,
        ..Default::default()
    })
}

/// A text value (SHOW output and the like).
pub fn text(s: impl AsRef<str>) -> rel::Value {
    rel::Value::Bytes(s.as_ref().as_bytes().to_vec())
}

/// The outcome of a statement that returns no rows and changes none.
pub fn ok() -> crate::Result<Outcome> {
    Ok(Outcome::default())
}
