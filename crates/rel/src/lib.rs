//! # strata-rel: tables and indexes as ordered keys
//!
//! The relational layer between SQL and the transactional engine. It owns:
//! - [`value`]: SQL values and column types, comparison and formatting;
//! - [`collation`]: how strings compare, sort and group (weights per character);
//! - [`members`]: ENUM and SET member lists (interned) and their value mapping;
//! - [`keycodec`]: order-preserving key images of values (MyRocks' layout:
//!   4-byte index id + memcomparable key columns);
//! - [`rowcodec`]: the compact, versioned row value (non-key columns);
//! - [`schema`]: table and index definitions and their stored form;
//! - [`constraint`]: CHECK constraints (expression text) and their stored form;
//! - [`catalog`]: databases and tables stored in the engine, cached as an
//!   immutable snapshot;
//! - [`table`]: row reads and writes with secondary-index maintenance,
//!   row locks and uniqueness checks, through a `txn::Txn`;
//! - [`view`]: view definitions as the catalog stores them;
//! - [`check`]: CHECK TABLE (every index entry against its row);
//! - [`build`]: filling a new secondary index from the table's rows
//!   (both read through `scan`);
//! - [`ttl`]: TTL tables (MyRocks' `ttl_duration=` COMMENT): row times, the
//!   read filter and the engine compaction filter;
//! - [`rebuild`]: copying a table's rows into a new definition (ALTER
//!   TABLE), its indexes written alongside.
//!
//! It knows nothing of SQL text or the wire protocol. Byte layouts are in
//! docs/formats/rows.md and docs/formats/catalog.md.

pub mod binlog;
pub mod build;
pub mod catalog;
pub mod cf;
pub mod check;
pub mod collation;
pub mod constraint;
pub mod fk;
pub mod keycodec;
pub mod keyrange;
pub mod members;
pub mod rebuild;
pub mod rowcodec;
mod scan;
pub mod schema;
pub mod shadow;
pub mod stats;
pub mod table;
pub mod temporal;
pub mod ttl;
pub mod value;
pub mod view;

pub use value::{ColumnType, TypeKind, Value};

/// Errors of the relational layer.
#[derive(Debug)]
pub enum Error {
    /// The engine failed (I/O, corruption, read-only).
    Engine(lsm::Error),
    /// A lock wait timed out, a deadlock, or the engine failed under a transaction.
    Txn(txn::Error),
    /// A stored row, key or definition does not decode.
    Corruption(String),
    /// A broken invariant (a bug), reported instead of panicking.
    Internal(String),
    /// Duplicate entry: (the key's text, index name).
    DupKey(String, String),
    NoSuchDb(String),
    NoSuchTable(String),
    DbExists(String),
    TableExists(String),
    /// A definition over one of the limits every stored definition must
    /// respect (see `schema::Limit`).
    Limit(schema::Limit),
    /// A table whose stored definition cannot be read: (db.table, why).
    Unreadable(String, String),
    /// A child row without its parent (the constraint, as `fk::describe_in_table`).
    NoParent(String),
    /// A parent row that children still reference (the constraint).
    RowReferenced(String),
    /// Cascades nested deeper than the limit.
    FkDepth(u32),
    /// A write to a table that ALTER TABLE is rebuilding or has replaced
    /// (db.table): run the statement again once the rebuild is over.
    TableChanged(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Engine(e) => write!(f, "storage engine error: {e}"),
            Error::Txn(e) => write!(f, "{e}"),
            Error::Corruption(s) => write!(f, "corruption: {s}"),
            Error::Internal(s) => write!(f, "internal error: {s}"),
            Error::DupKey(k, ix) => write!(f, "Duplicate entry '{k}' for key '{ix}'"),
            Error::NoSuchDb(d) => write!(f, "Unknown database '{d}'"),
            Error::NoSuchTable(t) => write!(f, "Table '{t}' doesn't exist"),
            Error::DbExists(d) => write!(f, "Can't create database '{d}'; database exists"),
            Error::TableExists(t) => write!(f, "Table '{t}' already exists"),
            Error::Limit(l) => write!(f, "{l}"),
            Error::Unreadable(t, why) => {
                write!(f, "the definition of table {t} cannot be read: {why}")
            }
            Error::NoParent(c) => write!(
                f,
                "Cannot add or update a child row: a foreign key constraint fails ({c})"
            ),
            Error::RowReferenced(c) => write!(
                f,
                "Cannot delete or update a parent row: a foreign key constraint fails ({c})"
            ),
            Error::FkDepth(n) => write!(
                f,
                "Foreign key cascade delete/update exceeds max depth of {n}."
            ),
            Error::TableChanged(t) => write!(f, "table {t} is being rebuilt by ALTER TABLE"),
        }
    }
}

impl std::error::Error for Error {}

impl From<lsm::Error> for Error {
    fn from(e: lsm::Error) -> Self {
        Error::Engine(e)
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;
