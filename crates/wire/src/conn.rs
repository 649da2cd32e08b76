//! [`Conn`]: one client connection: its packet stream, the negotiated capabilities,
//! per-connection settings, and the command loop entry point [`Conn::read_command`].
//! Handshake, result-set and row methods live in their own modules as further
//! `impl Conn` blocks.

use std::io::{Read, Write};

use crate::auth::{new_scramble, AuthPlugin};
use crate::command::{decode_command, Command};
use crate::consts::{cap, charset, errcode, status};
use crate::error::{Error, Result};
use crate::packet::PacketStream;

/// Switches a connection's stream to TLS in place, after the client's SSLRequest
/// (see [`Conn::enable_tls`]): called with the stream and the bytes the client sent
/// after the SSLRequest that were already read (the start of its TLS handshake); returns
/// once the TLS handshake is complete, or fails (the connection must then be closed).
pub type TlsUpgrade<S> = Box<dyn FnMut(&mut S, &[u8]) -> std::io::Result<()> + Send>;

/// The TLS upgrade of a connection that offers TLS.
pub(crate) struct TlsHook<S>(pub(crate) TlsUpgrade<S>);

impl<S> std::fmt::Debug for TlsHook<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsHook")
    }
}

/// One client connection. Every `send_*`/row method only appends to an output buffer;
/// [`Conn::flush`] writes it with one `write_all` (large result sets are also written
/// early, about every megabyte).
#[derive(Debug)]
pub struct Conn<S> {
    pub(crate) io: PacketStream<S>,
    pub(crate) connection_id: u32,
    pub(crate) server_version: String,
    pub(crate) server_caps: u32,
    /// Negotiated capabilities (the server's own before the handshake response).
    pub(crate) caps: u32,
    /// True once the client's capabilities are known.
    pub(crate) client_known: bool,
    pub(crate) scramble: [u8; 20],
    pub(crate) default_plugin: AuthPlugin,
    pub(crate) charset: u8,
    pub(crate) status: u16,
    pub(crate) client_host: String,
    /// Reusable formatting space for row values.
    pub(crate) scratch: Vec<u8>,
    /// Set by [`Conn::enable_tls`]: TLS is offered.
    pub(crate) tls: Option<TlsHook<S>>,
    /// The connection runs over TLS (the client's SSLRequest was honoured).
    pub(crate) secure: bool,
    /// The stream is a unix socket (secure transport: caching_sha2_password's full
    /// authentication takes the clear-text password, as over TLS).
    pub(crate) unix: bool,
    /// caching_sha2_password's RSA key pair (full authentication without TLS).
    pub(crate) rsa: Option<std::sync::Arc<crate::rsa_keys::RsaKeys>>,
    /// Set by a successful caching_sha2_password full authentication, taken into
    /// [`crate::HandshakeInfo::sha2_verified`].
    pub(crate) verified: Option<([u8; 32], Vec<u8>)>,
}

impl<S: Read + Write> Conn<S> {
    /// Wraps an accepted stream. Nothing is sent until [`Conn::handshake`].
    pub fn new(stream: S, connection_id: u32, server_version: &str) -> Self {
        Conn {
            io: PacketStream::new(stream),
            connection_id,
            server_version: server_version.replace('\0', ""),
            server_caps: cap::DEFAULT_SERVER,
            caps: cap::DEFAULT_SERVER,
            client_known: false,
            scramble: new_scramble(u64::from(connection_id)),
            default_plugin: AuthPlugin::NativePassword,
            charset: charset::UTF8MB4_GENERAL_CI,
            status: status::SERVER_STATUS_AUTOCOMMIT,
            client_host: "localhost".to_string(),
            scratch: Vec::new(),
            tls: None,
            secure: false,
            unix: false,
            rsa: None,
            verified: None,
        }
    }

    /// The stream is a unix socket: caching_sha2_password's full authentication
    /// takes the password in clear text (as MySQL: a secure transport).
    pub fn set_unix_socket(&mut self, unix: bool) {
        self.unix = unix;
    }

    /// caching_sha2_password's key pair: without TLS (or a unix socket) a client in
    /// full authentication gets its public key and sends the password encrypted.
    /// Without one such a client is denied.
    pub fn set_rsa_keys(&mut self, keys: std::sync::Arc<crate::rsa_keys::RsaKeys>) {
        self.rsa = Some(keys);
    }

    /// Offers TLS: the greeting advertises CLIENT_SSL, and a client's SSLRequest (the
    /// 32-byte short handshake response) makes the handshake run `upgrade` on the
    /// stream, then read the full handshake response over TLS. Without it an
    /// SSLRequest is refused (ER_HANDSHAKE_ERROR).
    pub fn enable_tls(&mut self, upgrade: TlsUpgrade<S>) {
        self.tls = Some(TlsHook(upgrade));
        self.server_caps |= cap::CLIENT_SSL;
        if !self.client_known {
            self.caps = self.server_caps;
        }
    }

    /// True once the connection runs over TLS.
    pub fn is_tls(&self) -> bool {
        self.secure
    }

    /// Turns a server capability on or off before the handshake (e.g.
    /// `CLIENT_MULTI_STATEMENTS`, `CLIENT_SESSION_TRACK`). Flags this crate cannot
    /// honour (compression, query attributes, optional metadata) stay off; SSL is
    /// turned on by [`Conn::enable_tls`].
    pub fn set_capability(&mut self, flag: u32, on: bool) {
        if on {
            self.server_caps |= flag & !cap::UNSUPPORTED;
        } else {
            self.server_caps &= !flag;
        }
        // Protocol 4.1 is the only protocol spoken here.
        self.server_caps |= cap::CLIENT_PROTOCOL_41;
        if !self.client_known {
            self.caps = self.server_caps;
        }
    }

    /// The auth plugin announced in the handshake (default `mysql_native_password`).
    pub fn set_default_auth_plugin(&mut self, plugin: AuthPlugin) {
        self.default_plugin = plugin;
    }

    /// Collation id announced in the handshake (default utf8mb4_general_ci = 45).
    pub fn set_server_charset(&mut self, id: u8) {
        self.charset = id;
    }

    /// Status flags announced in the handshake and in the EOF after column definitions
    /// (default `SERVER_STATUS_AUTOCOMMIT`).
    pub fn set_status(&mut self, flags: u16) {
        self.status = flags;
    }

    /// Host name used in "Access denied for user 'u'@'host'" (default `localhost`).
    pub fn set_client_host(&mut self, host: &str) {
        self.client_host = host.to_string();
    }

    /// Largest command packet accepted (default 64 MiB); larger ones get
    /// ER_NET_PACKET_TOO_LARGE and `Err(PacketTooLarge)`.
    pub fn set_max_packet(&mut self, bytes: usize) {
        self.io.set_max_packet(bytes);
    }

    /// Negotiated capabilities (client & server) once the handshake has read the
    /// client's response; the server's own flags before that.
    pub fn capabilities(&self) -> u32 {
        self.caps
    }

    /// True when result sets end with an OK packet (CLIENT_DEPRECATE_EOF negotiated).
    pub fn deprecate_eof(&self) -> bool {
        self.caps & cap::CLIENT_DEPRECATE_EOF != 0
    }

    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// The 20-byte challenge sent in the handshake.
    pub fn scramble(&self) -> &[u8; 20] {
        &self.scramble
    }

    pub fn get_ref(&self) -> &S {
        self.io.get_ref()
    }

    /// The underlying stream (e.g. to set timeouts). Do not read or write it directly.
    pub fn get_mut(&mut self) -> &mut S {
        self.io.get_mut()
    }

    pub fn into_inner(self) -> S {
        self.io.into_inner()
    }

    /// Reads the next command, resetting the sequence id. `Err(Io(UnexpectedEof))` when
    /// the client closed the connection; any other `Err` means the connection should be
    /// closed (an oversized packet has already been answered with ERR 1153).
    pub fn read_command(&mut self) -> Result<Command> {
        self.io.reset_seq();
        let payload = self.read_packet_checked()?;
        decode_command(payload, self.caps)
    }

    /// Reads one packet; an oversized one is answered with ER_NET_PACKET_TOO_LARGE.
    pub(crate) fn read_packet_checked(&mut self) -> Result<Vec<u8>> {
        match self.io.read_packet() {
            Err(Error::PacketTooLarge(n)) => {
                self.send_err(
                    errcode::ER_NET_PACKET_TOO_LARGE,
                    "08S01",
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                )?;
                self.flush()?;
                Err(Error::PacketTooLarge(n))
            }
            r => r,
        }
    }

    /// LOAD DATA LOCAL: asks the client for file `name` (a 0xFB packet) and
    /// returns a reader over the contents it sends, packet by packet up to
    /// the empty packet that ends them (an empty file: at once). `None` when
    /// the client did not negotiate CLIENT_LOCAL_FILES (nothing is sent). The
    /// reader drains the rest of the file when dropped early, so the next
    /// reply (OK or ERR) follows the client's last packet.
    pub fn local_infile(&mut self, name: &[u8]) -> Result<Option<LocalInfile<'_, S>>> {
        if self.caps & cap::CLIENT_LOCAL_FILES == 0 {
            return Ok(None);
        }
        let mut p = Vec::with_capacity(1 + name.len());
        p.push(0xFB);
        p.extend_from_slice(name);
        self.io.write_packet(&p)?;
        self.io.flush()?;
        Ok(Some(LocalInfile {
            conn: self,
            buf: Vec::new(),
            pos: 0,
            done: false,
        }))
    }

    /// Appends one raw packet (e.g. the COM_STATISTICS reply string).
    pub fn send_packet(&mut self, payload: &[u8]) -> Result<()> {
        self.io.write_packet(payload)
    }

    /// Writes all buffered output to the stream.
    pub fn flush(&mut self) -> Result<()> {
        self.io.flush()
    }

    /// Bytes buffered and not yet written.
    pub fn pending_output(&self) -> usize {
        self.io.pending()
    }
}

/// The file a client sends for LOAD DATA LOCAL (`Conn::local_infile`).
#[derive(Debug)]
pub struct LocalInfile<'a, S: Read + Write> {
    conn: &'a mut Conn<S>,
    buf: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<S: Read + Write> Read for LocalInfile<'_, S> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos >= self.buf.len() {
            if self.done {
                return Ok(0);
            }
            let p = self.conn.io.read_packet().map_err(|e| {
                self.done = true;
                std::io::Error::other(e.to_string())
            })?;
            if p.is_empty() {
                self.done = true;
                return Ok(0);
            }
            self.buf = p;
            self.pos = 0;
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<S: Read + Write> Drop for LocalInfile<'_, S> {
    fn drop(&mut self) {
        while !self.done {
            match self.conn.io.read_packet() {
                Ok(p) if !p.is_empty() => {}
                _ => self.done = true,
            }
        }
    }
}
