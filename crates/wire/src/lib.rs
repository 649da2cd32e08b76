//! strata-wire: the server side of the MySQL client/server protocol (protocol 4.1,
//! Handshake v10). It frames packets, authenticates clients, decodes commands and
//! encodes responses; it knows no SQL. See `docs/WIRE.md` for the supported subset.
//!
//! # Shape of a server loop
//!
//! ```no_run
//! use wire::{Command, Conn, Credentials, OkPacket, ColumnDef, ColumnType, status};
//! # fn serve(stream: std::net::TcpStream) -> wire::Result<()> {
//! let mut conn = Conn::new(stream, 1, "8.0.36-strata");
//! let info = conn.handshake(&|user| (user == "root").then(Credentials::empty))?;
//! loop {
//!     let cmd = match conn.read_command() {
//!         Ok(c) => c,
//!         Err(e) if e.is_disconnect() => return Ok(()),
//!         Err(e) => return Err(e),
//!     };
//!     match cmd {
//!         Command::Query(sql) => {
//!             conn.send_columns(&[ColumnDef::new("1", ColumnType::LongLong)])?;
//!             let mut row = conn.text_row();
//!             row.push_i64(1);
//!             row.finish()?;
//!             conn.finish_result_set(status::SERVER_STATUS_AUTOCOMMIT, 0)?;
//!         }
//!         Command::Ping => conn.send_ok(&OkPacket { status: status::SERVER_STATUS_AUTOCOMMIT, ..Default::default() })?,
//!         Command::Quit => return Ok(()),
//!         _ => conn.send_err(1047, "08S01", "Unknown command")?,
//!     }
//!     conn.flush()?;
//! }
//! # }
//! ```
//!
//! # API summary
//!
//! * [`Conn`]: `new`, configuration (`set_capability`, `set_default_auth_plugin`,
//!   `set_max_packet`, `set_client_host`, `set_status`, `set_server_charset`,
//!   `enable_tls`, `set_unix_socket`, `set_rsa_keys`), `is_tls`,
//!   `handshake` / `handshake_with`, `read_command`, `change_user`, responses
//!   (`send_ok`, `send_err`, `send_eof`, `send_columns`, `finish_result_set`,
//!   `send_prepare_ok`, `send_field_list`, `send_column_defs_only`, `send_packet`),
//!   rows (`text_row`, `binary_row`, `send_text_row`), `flush`, `capabilities`.
//!   All responses are buffered until `flush`.
//! * Commands: [`Command`], [`ExecutePacket`], [`decode_params`] -> [`Param`].
//! * Auth: [`Credentials`], [`native_password_hash`], [`sha2_password_hash`], the
//!   verification and client-side scramble functions in [`auth`]; caching_sha2's
//!   stored form in [`sha2crypt`], its RSA key exchange in [`rsa_keys`].
//! * Constants: [`cap`], [`status`], [`colflag`], [`charset`], [`com`], [`errcode`],
//!   [`ColumnType`].

pub mod auth;
pub mod client;
pub mod codec;
mod command;
mod conn;
mod consts;
mod error;
mod handshake;
pub mod packet;
mod params;
mod resultset;
mod row;
pub mod rsa_keys;
pub mod sha2crypt;

pub use auth::{native_password_hash, sha2_password_hash, AuthPlugin, Credentials};
pub use command::{
    decode_command, BinlogDump, ChangeUser, Command, RegisterSlave, BINLOG_DUMP_NON_BLOCK,
};
pub use conn::{Conn, LocalInfile, TlsUpgrade};
pub use consts::{cap, charset, colflag, com, errcode, status, ColumnType};
pub use error::{Error, Result};
pub use handshake::{parse_handshake_response, HandshakeInfo, HandshakeResponse};
pub use params::{decode_params, ExecutePacket, Param, ParamType};
pub use resultset::{ColumnDef, ColumnDefRef, ErrPacket, OkPacket};
pub use row::{BinaryRow, TextRow};
pub use rsa_keys::RsaKeys;
