//! The transaction layer's error type: engine errors passed through, plus the
//! two lock outcomes a SQL layer maps to MySQL errors (1205 lock wait
//! timeout, 1213 deadlock).
use std::fmt;

/// Result alias used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// A transaction error.
#[derive(Debug, Clone)]
pub enum Error {
    /// The storage engine failed (I/O, corruption, read-only, ...).
    Engine(lsm::Error),
    /// A row lock was not granted within the lock wait timeout. Only the
    /// statement fails; the transaction stays open and keeps its locks
    /// (InnoDB with `innodb_rollback_on_timeout=OFF`). MySQL error 1205.
    LockWaitTimeout,
    /// Waiting for the row lock would close a cycle of waiting
    /// transactions. The caller must roll back the whole transaction
    /// (MySQL error 1213).
    Deadlock,
    /// A lock wait stopped because its owner was interrupted (KILL QUERY,
    /// see `Txn::set_interrupt`). Only the statement fails. MySQL error 1317.
    Interrupted,
}

impl Error {
    /// True for the lock outcomes a client typically retries
    /// (`LockWaitTimeout`, `Deadlock`).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::LockWaitTimeout | Error::Deadlock)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Engine(e) => write!(f, "{e}"),
            Error::LockWaitTimeout => {
                write!(f, "Lock wait timeout exceeded; try restarting transaction")
            }
            Error::Deadlock => write!(
                f,
                "Deadlock found when trying to get lock; try restarting transaction"
            ),
            Error::Interrupted => write!(f, "Query execution was interrupted"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Engine(e) => Some(e),
            _ => None,
        }
    }
}

impl From<lsm::Error> for Error {
    fn from(e: lsm::Error) -> Self {
        Error::Engine(e)
    }
}
