//! The client side of the protocol, as much as a replica needs to follow a
//! MySQL/MariaDB source: connect with Handshake v10 and
//! `mysql_native_password` (also through an auth switch), text queries
//! (COM_QUERY: OK or a text result set), COM_REGISTER_SLAVE and
//! COM_BINLOG_DUMP, then the stream of binlog events. Everything a server
//! sends is decoded through [`Reader`], so bad bytes are errors, never
//! panics. A server's ERR packet is [`Error::Rejected`] with its code and
//! message.
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::auth::{scramble_native, scramble_sha2};
use crate::codec::{lossy, put_nul_bytes, put_u16, put_u32, Reader};
use crate::consts::cap;
use crate::error::{malformed, Error, Result};
use crate::packet::PacketStream;

/// COM_QUERY, COM_BINLOG_DUMP, COM_REGISTER_SLAVE, COM_QUIT.
const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_BINLOG_DUMP: u8 = 0x12;
const COM_REGISTER_SLAVE: u8 = 0x15;

/// The capabilities this client asks for (protocol 4.1, 4.1 auth, plugin
/// auth, transactions; no SSL, compression or deprecated EOF).
const CLIENT_CAPS: u32 = cap::CLIENT_LONG_PASSWORD
    | cap::CLIENT_LONG_FLAG
    | cap::CLIENT_PROTOCOL_41
    | cap::CLIENT_TRANSACTIONS
    | cap::CLIENT_SECURE_CONNECTION
    | cap::CLIENT_MULTI_RESULTS
    | cap::CLIENT_PLUGIN_AUTH;

/// utf8mb4_general_ci.
const CLIENT_CHARSET: u8 = 45;

/// Where and as whom to connect.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Connect timeout, and the read timeout of every later read (a
    /// stream with heartbeats sets it above the heartbeat period).
    pub timeout: Duration,
}

/// What a text query returned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryResult {
    /// Column names (empty for a statement without a result set).
    pub columns: Vec<String>,
    /// Rows, NULL as None.
    pub rows: Vec<Vec<Option<Vec<u8>>>>,
    pub affected_rows: u64,
}

/// One connection to a server.
pub struct Client {
    ps: PacketStream<TcpStream>,
    /// The server's version string from its handshake.
    pub server_version: String,
    /// The connection id the server gave us.
    pub connection_id: u32,
}

/// An ERR packet's payload as the error it carries.
fn err_packet(p: &[u8]) -> Error {
    let mut r = Reader::new(p);
    let code = r.skip(1).and_then(|_| r.u16()).unwrap_or(0);
    let mut rest = r.rest();
    if rest.first() == Some(&b'#') && rest.len() >= 6 {
        rest = &rest[6..];
    }
    Error::Rejected {
        code,
        message: lossy(rest),
    }
}

/// The affected-rows field of an OK packet.
fn ok_affected(p: &[u8]) -> Result<u64> {
    let mut r = Reader::new(p);
    r.skip(1)?;
    r.lenenc_int()
}

/// An EOF packet (0xfe, shorter than 9 bytes: longer ones are rows).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xfe) && p.len() < 9
}

impl Client {
    /// Connects and authenticates.
    pub fn connect(t: &Target) -> Result<Client> {
        let mut last = None;
        let addrs = (t.host.as_str(), t.port).to_socket_addrs()?;
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, t.timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = match (stream, last) {
            (Some(s), _) => s,
            (None, Some(e)) => return Err(Error::Io(e)),
            (None, None) => return Err(malformed(format!("no address for {}", t.host))),
        };
        stream.set_read_timeout(Some(t.timeout))?;
        stream.set_write_timeout(Some(t.timeout))?;
        let _ = stream.set_nodelay(true);
        let mut ps = PacketStream::new(stream);
        ps.set_max_packet(1 << 30);
        let greeting = ps.read_packet()?;
        if greeting.first() == Some(&0xff) {
            return Err(err_packet(&greeting));
        }
        let g = parse_greeting(&greeting)?;
        let mut c = Client {
            ps,
            server_version: g.version.clone(),
            connection_id: g.conn_id,
        };
        c.authenticate(t, &g)?;
        Ok(c)
    }

    fn authenticate(&mut self, t: &Target, g: &Greeting) -> Result<()> {
        let pw = t.password.as_bytes();
        let (plugin, auth) = match g.plugin.as_str() {
            "caching_sha2_password" => (g.plugin.as_str(), scramble_sha2(&g.scramble, pw)),
            _ => ("mysql_native_password", scramble_native(&g.scramble, pw)),
        };
        let mut p = Vec::with_capacity(64 + t.user.len());
        put_u32(&mut p, CLIENT_CAPS);
        put_u32(&mut p, 1 << 30);
        p.push(CLIENT_CHARSET);
        p.extend_from_slice(&[0u8; 23]);
        put_nul_bytes(&mut p, t.user.as_bytes());
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
        put_nul_bytes(&mut p, plugin.as_bytes());
        self.send(&p)?;
        let mut switched = false;
        loop {
            let r = self.ps.read_packet()?;
            match r.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => return Err(err_packet(&r)),
                // caching_sha2_password: fast auth succeeded, OK follows.
                Some(0x01) if r.get(1) == Some(&3) => continue,
                Some(0xfe) if !switched => {
                    switched = true;
                    let mut rd = Reader::new(&r[1..]);
                    let name = lossy(rd.nul_bytes()?);
                    let mut data = rd.rest();
                    if data.last() == Some(&0) {
                        data = &data[..data.len() - 1];
                    }
                    let resp = match name.as_str() {
                        "mysql_native_password" => scramble_native(data, pw),
                        other => {
                            return Err(malformed(format!(
                                "the server asks for authentication plugin {other}; only mysql_native_password is supported"
                            )))
                        }
                    };
                    self.ps.write_packet(&resp)?;
                    self.ps.flush()?;
                }
                _ => {
                    return Err(malformed(
                        "authentication needs more than mysql_native_password (full caching_sha2_password needs TLS)",
                    ))
                }
            }
        }
    }

    /// Sends one command packet (sequence restarts at 0).
    fn send(&mut self, payload: &[u8]) -> Result<()> {
        self.ps.write_packet(payload)?;
        self.ps.flush()
    }

    fn command(&mut self, code: u8, body: &[u8]) -> Result<()> {
        self.ps.reset_seq();
        let mut p = Vec::with_capacity(1 + body.len());
        p.push(code);
        p.extend_from_slice(body);
        self.send(&p)
    }

    /// Sets the read timeout of later reads.
    pub fn set_read_timeout(&mut self, d: Duration) -> Result<()> {
        self.ps.get_ref().set_read_timeout(Some(d))?;
        Ok(())
    }

    /// A clone of the socket (to shut it down from another thread).
    pub fn socket(&self) -> Result<TcpStream> {
        Ok(self.ps.get_ref().try_clone()?)
    }

    /// Runs a text query: OK, ERR or a text result set.
    pub fn query(&mut self, sql: &str) -> Result<QueryResult> {
        self.command(COM_QUERY, sql.as_bytes())?;
        let first = self.ps.read_packet()?;
        match first.first() {
            Some(0x00) => {
                return Ok(QueryResult {
                    affected_rows: ok_affected(&first)?,
                    ..Default::default()
                })
            }
            Some(0xff) => return Err(err_packet(&first)),
            Some(0xfb) => return Err(malformed("LOCAL INFILE request")),
            _ => {}
        }
        let n = Reader::new(&first).lenenc_int()? as usize;
        let mut out = QueryResult::default();
        for _ in 0..n {
            let p = self.ps.read_packet()?;
            let mut r = Reader::new(&p);
            for _ in 0..4 {
                r.lenenc_bytes()?; // catalog, schema, table, org_table
            }
            out.columns.push(lossy(r.lenenc_bytes()?));
        }
        let eof = self.ps.read_packet()?;
        if !is_eof(&eof) {
            return Err(malformed("no EOF after the column definitions"));
        }
        loop {
            let p = self.ps.read_packet()?;
            if is_eof(&p) {
                return Ok(out);
            }
            if p.first() == Some(&0xff) {
                return Err(err_packet(&p));
            }
            let mut r = Reader::new(&p);
            let mut row = Vec::with_capacity(n);
            for _ in 0..n {
                if r.rest().first() == Some(&0xfb) {
                    r.skip(1)?;
                    row.push(None);
                } else {
                    row.push(Some(r.lenenc_bytes()?.to_vec()));
                }
            }
            out.rows.push(row);
        }
    }

    /// COM_REGISTER_SLAVE: announces this replica (SHOW SLAVE HOSTS).
    pub fn register_slave(&mut self, server_id: u32, host: &str, port: u16) -> Result<()> {
        let mut b = Vec::with_capacity(18 + host.len());
        put_u32(&mut b, server_id);
        let host = &host.as_bytes()[..host.len().min(255)];
        b.push(host.len() as u8);
        b.extend_from_slice(host);
        b.push(0); // user
        b.push(0); // password
        put_u16(&mut b, port);
        put_u32(&mut b, 0); // replication rank
        put_u32(&mut b, 0); // master id
        self.command(COM_REGISTER_SLAVE, &b)?;
        let r = self.ps.read_packet()?;
        match r.first() {
            Some(0x00) => Ok(()),
            Some(0xff) => Err(err_packet(&r)),
            _ => Err(malformed("unexpected answer to COM_REGISTER_SLAVE")),
        }
    }

    /// COM_BINLOG_DUMP from `file` at `pos` (an empty file with GTID
    /// positioning: the source starts from @slave_connect_state). Events
    /// then come through [`Client::next_event`].
    pub fn binlog_dump(&mut self, server_id: u32, file: &str, pos: u32) -> Result<()> {
        let mut b = Vec::with_capacity(10 + file.len());
        put_u32(&mut b, pos);
        put_u16(&mut b, 0); // flags: blocking
        put_u32(&mut b, server_id);
        b.extend_from_slice(file.as_bytes());
        self.command(COM_BINLOG_DUMP, &b)
    }

    /// The next event of a binlog dump (header, body and checksum, without
    /// the leading OK byte); None when the source ended the stream (EOF).
    pub fn next_event(&mut self) -> Result<Option<Vec<u8>>> {
        let mut p = self.ps.read_packet()?;
        match p.first() {
            Some(0x00) => {
                p.remove(0);
                Ok(Some(p))
            }
            Some(0xfe) if p.len() < 9 => Ok(None),
            Some(0xff) => Err(err_packet(&p)),
            _ => Err(malformed("unexpected packet in the binlog stream")),
        }
    }

    /// Says goodbye (COM_QUIT); errors are ignored.
    pub fn quit(mut self) {
        let _ = self.command(COM_QUIT, &[]);
    }
}

/// What a server's initial handshake packet says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Greeting {
    version: String,
    conn_id: u32,
    scramble: Vec<u8>,
    plugin: String,
}

fn parse_greeting(p: &[u8]) -> Result<Greeting> {
    let mut r = Reader::new(p);
    let proto = r.u8()?;
    if proto != 10 {
        return Err(malformed(format!("handshake protocol {proto}, not 10")));
    }
    let version = lossy(r.nul_bytes()?);
    let conn_id = r.u32()?;
    let mut scramble = r.take(8)?.to_vec();
    r.skip(1)?;
    let caps_lo = r.u16()? as u32;
    if caps_lo & cap::CLIENT_PROTOCOL_41 == 0 {
        return Err(malformed("the server does not speak protocol 4.1"));
    }
    let mut plugin = String::from("mysql_native_password");
    if !r.is_empty() {
        r.skip(1 + 2)?; // charset, status
        let caps = caps_lo | (r.u16()? as u32) << 16;
        let auth_len = r.u8()? as usize;
        r.skip(10)?;
        if caps & cap::CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part = r.take(n)?;
            let part = part.strip_suffix(&[0]).unwrap_or(part);
            scramble.extend_from_slice(part);
        }
        if caps & cap::CLIENT_PLUGIN_AUTH != 0 {
            plugin = lossy(r.nul_or_eof_bytes());
        }
    }
    Ok(Greeting {
        version,
        conn_id,
        scramble,
        plugin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A MariaDB 10.11 greeting (captured from Debian's mariadbd).
    fn greeting() -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.19-MariaDB-0+deb12u1-log\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        p.extend_from_slice(&0xf7feu16.to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&0x81bfu16.to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0u8; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        p
    }

    #[test]
    fn greeting_parses() {
        let g = parse_greeting(&greeting()).unwrap();
        assert_eq!(g.version, "5.5.5-10.11.19-MariaDB-0+deb12u1-log");
        assert_eq!(g.conn_id, 7);
        assert_eq!(g.scramble, b"abcdefghijklmnopqrst");
        assert_eq!(g.plugin, "mysql_native_password");
    }

    #[test]
    fn truncated_greetings_are_errors() {
        let g = greeting();
        // 53 bytes is a whole pre-4.1-auth greeting; the plugin name may be cut.
        for n in (0..82).filter(|&n| n != 53) {
            assert!(parse_greeting(&g[..n]).is_err(), "prefix of {n} bytes");
        }
    }

    #[test]
    fn err_packets_carry_code_and_text() {
        let mut p = vec![0xff];
        p.extend_from_slice(&1045u16.to_le_bytes());
        p.extend_from_slice(b"#28000Access denied");
        match err_packet(&p) {
            Error::Rejected { code, message } => {
                assert_eq!(code, 1045);
                assert_eq!(message, "Access denied");
            }
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            err_packet(&[0xff]),
            Error::Rejected { code: 0, .. }
        ));
    }
}
