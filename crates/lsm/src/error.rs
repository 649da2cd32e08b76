//! The engine's one error type, sorted by what the caller does next.
//!
//! - `Io`: the operating system refused a read or write; retrying may work.
//! - `Corruption`: bytes on disk fail a checksum or do not decode; names the
//!   file and byte offset. Never retried, never turned into a wrong answer.
//! - `InvalidArgument`: the caller asked for something impossible.
//! - `ReadOnly`: an earlier write or fsync failed; the database refuses every
//!   later write until it is reopened (nothing acknowledged was lost).
//! - `NoSpace`: the disk is full (ENOSPC); the write was not acknowledged.
//! - `Busy`: the directory is locked by another process.
use std::fmt;

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// An engine error.
#[derive(Debug, Clone)]
pub enum Error {
    /// An I/O error with what was being done.
    Io {
        context: String,
        kind: std::io::ErrorKind,
        message: String,
    },
    /// Bytes from disk that fail a checksum or cannot be decoded.
    Corruption {
        file: String,
        offset: u64,
        what: String,
    },
    /// A bad request from the caller.
    InvalidArgument(String),
    /// The database is in a background error state; writes are refused.
    ReadOnly(String),
    /// The device is full.
    NoSpace(String),
    /// Another process holds the database lock.
    Busy(String),
    /// The database has been closed.
    Closed,
}

impl Error {
    /// Wraps an `std::io::Error` with a context string, mapping ENOSPC to `NoSpace`.
    pub fn io(context: impl Into<String>, e: std::io::Error) -> Error {
        let context = context.into();
        if e.raw_os_error() == Some(28) || e.kind() == std::io::ErrorKind::StorageFull {
            return Error::NoSpace(format!("{context}: {e}"));
        }
        Error::Io {
            context,
            kind: e.kind(),
            message: e.to_string(),
        }
    }

    /// Builds a corruption error.
    pub fn corruption(file: impl Into<String>, offset: u64, what: impl Into<String>) -> Error {
        Error::Corruption {
            file: file.into(),
            offset,
            what: what.into(),
        }
    }

    /// True for `Corruption`.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// Names the file and block offset of a corruption found inside a block
    /// (block decoders do not know where their bytes came from).
    pub fn in_block(self, name: &str, block_offset: u64) -> Error {
        match self {
            Error::Corruption { file, what, .. } if file.is_empty() => Error::Corruption {
                file: name.to_string(),
                offset: block_offset,
                what,
            },
            other => other,
        }
    }

    /// Adds a file name to a corruption error that was raised without one.
    pub fn in_file(self, name: &str) -> Error {
        match self {
            Error::Corruption { file, offset, what } if file.is_empty() => Error::Corruption {
                file: name.to_string(),
                offset,
                what,
            },
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                context, message, ..
            } => write!(f, "IO error: {context}: {message}"),
            Error::Corruption { file, offset, what } => {
                write!(f, "Corruption: {what} (file {file}, offset {offset})")
            }
            Error::InvalidArgument(m) => write!(f, "Invalid argument: {m}"),
            Error::ReadOnly(m) => write!(f, "Database is read-only after a background error: {m}"),
            Error::NoSpace(m) => write!(f, "No space left on device: {m}"),
            Error::Busy(m) => write!(f, "Busy: {m}"),
            Error::Closed => write!(f, "Database is closed"),
        }
    }
}

impl std::error::Error for Error {}
