//! # strata-binlog: the binary log in MariaDB's format
//!
//! Owns the binlog's bytes and nothing of SQL (as `wire` owns the protocol):
//! - [`event`]: the v4 event layouts MariaDB 10.x writes (common header,
//!   CRC32 trailer, FORMAT_DESCRIPTION, ROTATE, GTID_LIST, BINLOG_CHECKPOINT,
//!   GTID, QUERY, TABLE_MAP, WRITE/UPDATE/DELETE_ROWS v1, XID);
//! - [`row`]: column types, TABLE_MAP metadata and row image packing;
//! - [`record`]: a transaction's position-free record, committed in the
//!   transaction's own engine batch, and how it renders into events;
//! - [`log`]: the log of an engine: records in the `__binlog__` column
//!   family, files and index materialized from them, rotation, purge;
//! - [`decode`]: reading files back (SHOW BINLOG EVENTS, checks);
//! - [`dump`]: streaming the files to a replica (COM_BINLOG_DUMP);
//! - [`parse`] and [`unpack`]: decoding what a source sends a replica
//!   (event bodies, row images).
//!
//! The layer above (rel) maps its columns and values onto [`row`] and
//! appends items to a transaction's annex (`txn::Annex`); see
//! docs/REPLICATION.md and docs/formats/binlog.md.
pub mod decode;
pub mod dump;
mod dumpgtid;
pub mod event;
mod filestart;
mod gtidindex;
pub mod log;
pub mod parse;
pub mod record;
pub mod row;
pub mod unpack;

#[cfg(test)]
mod dump_tests;
#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unpack_tests;

pub use log::{Binlog, Config, EventRow};

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A value does not fit its column's binlog type.
    Invalid(String),
    /// Bytes read back (a record, a file) do not decode.
    Corrupt(String),
    /// A file operation failed.
    Io(String),
    /// The engine failed.
    Engine(String),
    /// A replica's dump cannot go on (ER_MASTER_FATAL_ERROR_READING_BINLOG,
    /// 1236, with this text).
    Dump(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Invalid(s) => write!(f, "binlog: {s}"),
            Error::Corrupt(s) => write!(f, "binlog corrupt: {s}"),
            Error::Io(s) => write!(f, "binlog I/O: {s}"),
            Error::Engine(s) => write!(f, "binlog engine: {s}"),
            Error::Dump(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Error {}

impl From<lsm::Error> for Error {
    fn from(e: lsm::Error) -> Error {
        Error::Engine(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;
