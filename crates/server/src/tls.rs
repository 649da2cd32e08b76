//! TLS for client connections (rustls, the `ring` provider): the server's
//! certificate and key from `--ssl-cert`/`--ssl-key` (PEM), client
//! certificates checked against `--ssl-ca` when a client offers one, and the
//! client stream: plain TCP, a unix socket, or either one after the
//! client's SSLRequest switched it to TLS (`Stream::start_tls`, run by
//! `wire::Conn`'s handshake through `Conn::enable_tls`).
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The PEM files TLS is configured from.
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    pub cert: Option<String>,
    pub key: Option<String>,
    pub ca: Option<String>,
}

impl TlsFiles {
    /// True when any TLS option was given.
    pub fn any(&self) -> bool {
        self.cert.is_some() || self.key.is_some() || self.ca.is_some()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_certs(path: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let p = Path::new(path);
    if let Err(e) = std::fs::metadata(p) {
        return Err(format!("cannot read {what} {path}: {e}"));
    }
    let certs = CertificateDer::pem_file_iter(p)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read {what} {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what} {path} holds no PEM certificate"));
    }
    Ok(certs)
}

/// Loads the server's TLS configuration: `None` when no TLS option was
/// given; an error (the server refuses to start) for a missing file, a
/// file that holds no PEM certificate or key, a key that does not belong to
/// the certificate, or `--ssl-ca` without a certificate.
pub fn load(files: &TlsFiles) -> Result<Option<Arc<ServerConfig>>, String> {
    if !files.any() {
        return Ok(None);
    }
    let (Some(cert), Some(key)) = (&files.cert, &files.key) else {
        return Err(
            "TLS needs both --ssl-cert and --ssl-key (PEM files); --ssl-ca alone is not enough"
                .into(),
        );
    };
    let chain = read_certs(cert, "--ssl-cert")?;
    if let Err(e) = std::fs::metadata(key) {
        return Err(format!("cannot read --ssl-key {key}: {e}"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read a PEM private key from --ssl-key {key}: {e}"))?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = match &files.ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in read_certs(ca, "--ssl-ca")? {
                roots
                    .add(c)
                    .map_err(|e| format!("bad certificate in --ssl-ca {ca}: {e}"))?;
            }
            // Clients may present a certificate (checked against the CA) or none,
            // as MySQL's server with --ssl-ca.
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("bad --ssl-ca {ca}: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let config = builder
        .with_single_cert(chain, key_der)
        .map_err(|e| format!("--ssl-key {key} does not fit --ssl-cert {cert}: {e}"))?;
    Ok(Some(Arc::new(config)))
}

/// A client socket before TLS.
pub enum Plain {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Read for Plain {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Plain::Tcp(s) => s.read(buf),
            Plain::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Plain {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Plain::Tcp(s) => s.write(buf),
            Plain::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Plain::Tcp(s) => s.flush(),
            Plain::Unix(s) => s.flush(),
        }
    }
}

impl Plain {
    fn set_timeouts(&self, read: Duration, write: Duration) -> io::Result<()> {
        match self {
            Plain::Tcp(s) => {
                s.set_read_timeout(Some(read))?;
                s.set_write_timeout(Some(write))
            }
            Plain::Unix(s) => {
                s.set_read_timeout(Some(read))?;
                s.set_write_timeout(Some(write))
            }
        }
    }
    fn hook(&self) -> Option<crate::watch::SocketHook> {
        match self {
            Plain::Tcp(s) => s.try_clone().ok().map(crate::watch::SocketHook::Tcp),
            Plain::Unix(s) => s.try_clone().ok().map(crate::watch::SocketHook::Unix),
        }
    }
}

/// A client connection's stream.
pub enum Stream {
    Plain(Plain),
    Tls(Box<StreamOwned<ServerConnection, Plain>>),
    /// During the switch to TLS, and after a failed one: reads and writes fail.
    Broken,
}

fn broken() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "TLS handshake failed")
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Broken => Err(broken()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Broken => Err(broken()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            Stream::Broken => Err(broken()),
        }
    }
}

impl Stream {
    pub fn tcp(s: TcpStream) -> Stream {
        Stream::Plain(Plain::Tcp(s))
    }

    pub fn unix(s: UnixStream) -> Stream {
        Stream::Plain(Plain::Unix(s))
    }

    fn plain(&self) -> Option<&Plain> {
        match self {
            Stream::Plain(p) => Some(p),
            Stream::Tls(t) => Some(&t.sock),
            Stream::Broken => None,
        }
    }

    /// A unix-socket connection (a secure transport, as in MySQL).
    pub fn is_unix(&self) -> bool {
        matches!(self.plain(), Some(Plain::Unix(_)))
    }

    /// Switches to TLS: `early` is what the client sent after its SSLRequest
    /// and was already read (the start of its ClientHello); returns when the
    /// TLS handshake is complete. A failure (garbage, a client that gives up,
    /// a timeout of the socket) leaves the stream `Broken`.
    pub fn start_tls(&mut self, config: &Arc<ServerConfig>, early: &[u8]) -> io::Result<()> {
        let Stream::Plain(sock) = std::mem::replace(self, Stream::Broken) else {
            return Err(io::Error::other("the connection is already TLS"));
        };
        let mut conn = ServerConnection::new(config.clone()).map_err(io::Error::other)?;
        let mut rest = early;
        while !rest.is_empty() {
            if conn.read_tls(&mut rest)? == 0 {
                break;
            }
            conn.process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
        let mut tls = StreamOwned::new(conn, sock);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        *self = Stream::Tls(Box::new(tls));
        Ok(())
    }

    /// The negotiated cipher and protocol version in OpenSSL's names (what
    /// MySQL's Ssl_cipher and Ssl_version show), when the stream is TLS.
    pub fn tls_info(&self) -> Option<sql::session::TlsInfo> {
        let Stream::Tls(t) = self else { return None };
        let suite = t.conn.negotiated_cipher_suite()?.suite();
        let version = match t.conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
            _ => "unknown",
        };
        Some(sql::session::TlsInfo {
            cipher: openssl_name(suite),
            version: version.into(),
        })
    }
}

/// A cipher suite's OpenSSL name (TLS 1.3 suites keep their IANA names).
fn openssl_name(suite: rustls::CipherSuite) -> String {
    use rustls::CipherSuite as C;
    let n = match suite {
        C::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        C::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        C::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return format!("{other:?}"),
    };
    n.to_string()
}

impl crate::conn::Socket for Stream {
    fn set_timeouts(&self, read: Duration, write: Duration) -> io::Result<()> {
        match self.plain() {
            Some(p) => p.set_timeouts(read, write),
            None => Err(broken()),
        }
    }
    fn hook(&self) -> Option<crate::watch::SocketHook> {
        self.plain().and_then(Plain::hook)
    }
}
