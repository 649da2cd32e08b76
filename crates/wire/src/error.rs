//! The crate's error type: every decoder and every network operation reports through
//! [`Error`]; nothing in this crate panics on bytes from the network.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong while talking to a client.
#[derive(Debug)]
pub enum Error {
    /// The socket failed; `UnexpectedEof` means the client closed the connection.
    Io(std::io::Error),
    /// The client sent bytes that do not form a valid packet or field.
    Malformed(String),
    /// A command exceeded the configured max packet size (ER_NET_PACKET_TOO_LARGE was sent).
    PacketTooLarge(usize),
    /// Authentication failed (ER_ACCESS_DENIED_ERROR was sent to the client).
    AccessDenied(String),
    /// The handshake was refused for another reason (the ERR packet was sent to the client).
    Rejected { code: u16, message: String },
    /// The caller used the API inconsistently (e.g. a row with the wrong number of values).
    Misuse(String),
}

impl Error {
    /// True when the error only means the peer went away (clean close or reset).
    pub fn is_disconnect(&self) -> bool {
        use std::io::ErrorKind::*;
        matches!(self, Error::Io(e) if matches!(e.kind(), UnexpectedEof | ConnectionReset | BrokenPipe | ConnectionAborted))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "i/o error: {e}"),
            Error::Malformed(m) => write!(f, "malformed packet: {m}"),
            Error::PacketTooLarge(n) => write!(f, "packet of {n} bytes exceeds max_allowed_packet"),
            Error::AccessDenied(m) => write!(f, "{m}"),
            Error::Rejected { code, message } => {
                write!(f, "handshake rejected ({code}): {message}")
            }
            Error::Misuse(m) => write!(f, "API misuse: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// Shorthand for building a [`Error::Malformed`].
pub(crate) fn malformed(what: impl Into<String>) -> Error {
    Error::Malformed(what.into())
}
