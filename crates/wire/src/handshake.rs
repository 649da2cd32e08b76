//! Connection phase: the Handshake v10 greeting, parsing the client's
//! HandshakeResponse41, plugin negotiation (AuthSwitchRequest), password verification
//! (caching_sha2_password's fast and full authentication: clear text over TLS or a
//! unix socket, RSA-OAEP otherwise), and COM_CHANGE_USER re-authentication.

use std::io::{Read, Write};

use crate::auth::{
    constant_time_eq, new_scramble, sha2_password_hash, verify_native, verify_sha2, AuthPlugin,
    Credentials, CACHING_SHA2_PASSWORD, NATIVE_PASSWORD,
};
use crate::codec::{lossy, put_nul_bytes, put_u16, put_u32, Reader};
use crate::command::ChangeUser;
use crate::conn::Conn;
use crate::consts::{cap, errcode};
use crate::error::{malformed, Error, Result};
use crate::resultset::{ErrPacket, OkPacket};
use crate::sha2crypt::verify_sha2_auth;

/// What the client told us during the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeInfo {
    pub user: String,
    /// Initial schema (CLIENT_CONNECT_WITH_DB), if any.
    pub database: Option<String>,
    /// Negotiated capabilities (client & server).
    pub capabilities: u32,
    /// Collation id the client asked for: one byte in the handshake, two in
    /// COM_CHANGE_USER (MariaDB's ids go past 255: utf8mb4_uca1400_ai_ci is 2304).
    pub charset: u16,
    /// Plugin that finally authenticated the client.
    pub auth_plugin: String,
    /// Connection attributes (CLIENT_CONNECT_ATTRS).
    pub attrs: Vec<(String, String)>,
    /// The client's max packet size.
    pub max_packet: u32,
    /// The connection runs over TLS (the client sent an SSLRequest and the TLS
    /// handshake completed).
    pub tls: bool,
    /// After a caching_sha2_password full authentication: SHA256(SHA256(password))
    /// and the stored string (`Credentials::sha2_auth`, empty if none) it was checked
    /// against, for the server's fast-authentication cache.
    pub sha2_verified: Option<([u8; 32], Vec<u8>)>,
}

/// A parsed HandshakeResponse41 packet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandshakeResponse {
    /// Capabilities as sent by the client (not yet intersected).
    pub capabilities: u32,
    pub max_packet: u32,
    pub charset: u8,
    /// The client asked to start TLS (a 32-byte SSLRequest); nothing else is filled.
    pub ssl_request: bool,
    pub user: Vec<u8>,
    pub auth_response: Vec<u8>,
    pub database: Option<Vec<u8>>,
    pub auth_plugin: Option<String>,
    pub attrs: Vec<(String, String)>,
}

/// Parses a HandshakeResponse41 payload; `server_caps` decides which optional
/// fields may be present (a client uses only what the server announced).
pub fn parse_handshake_response(payload: &[u8], server_caps: u32) -> Result<HandshakeResponse> {
    let mut r = Reader::new(payload);
    let client = r.u32()?;
    if client & cap::CLIENT_PROTOCOL_41 == 0 {
        return Err(malformed("client does not speak protocol 4.1"));
    }
    let caps = client & server_caps;
    let mut resp = HandshakeResponse {
        capabilities: client,
        max_packet: r.u32()?,
        charset: r.u8()?,
        ..Default::default()
    };
    r.skip(23)?;
    if r.is_empty() && client & cap::CLIENT_SSL != 0 {
        resp.ssl_request = true;
        return Ok(resp);
    }
    resp.user = r.nul_bytes()?.to_vec();
    resp.auth_response = if caps & cap::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes()?.to_vec()
    } else if caps & cap::CLIENT_SECURE_CONNECTION != 0 {
        let n = r.u8()?;
        r.take(usize::from(n))?.to_vec()
    } else {
        r.nul_or_eof_bytes().to_vec()
    };
    if caps & cap::CLIENT_CONNECT_WITH_DB != 0 && !r.is_empty() {
        let db = r.nul_or_eof_bytes();
        if !db.is_empty() {
            resp.database = Some(db.to_vec());
        }
    }
    if caps & cap::CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        resp.auth_plugin = Some(lossy(r.nul_or_eof_bytes()));
    }
    if caps & cap::CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
        resp.attrs = parse_attrs(&mut r)?;
    }
    Ok(resp)
}

/// Connection attributes: a length-encoded total, then key/value length-encoded strings.
pub(crate) fn parse_attrs(r: &mut Reader<'_>) -> Result<Vec<(String, String)>> {
    let total = r.lenenc_int()?;
    let total = usize::try_from(total).map_err(|_| malformed("attribute block too long"))?;
    let mut a = Reader::new(r.take(total)?);
    let mut attrs = Vec::new();
    while !a.is_empty() {
        let k = lossy(a.lenenc_bytes()?);
        let v = lossy(a.lenenc_bytes()?);
        attrs.push((k, v));
    }
    Ok(attrs)
}

/// Outcome of checking one auth response.
enum Step {
    Accept {
        fast_auth: bool,
    },
    Deny,
    Switch(AuthPlugin),
    /// caching_sha2_password without a matching cache entry: ask for the password.
    FullAuth,
}

fn is_empty_response(resp: &[u8]) -> bool {
    resp.is_empty() || resp == [0]
}

/// Checks `resp`, made by the client's `plugin`, against `creds`. `fresh` is true when
/// the response answers a challenge of that same plugin (the greeting announced it, or
/// we switched to it); otherwise the client may have had no scramble to work with.
fn check_response(
    plugin: &str,
    resp: &[u8],
    creds: &Credentials,
    scramble: &[u8],
    fresh: bool,
    switched: bool,
) -> Step {
    let switch_to = |preferred: AuthPlugin| {
        if switched {
            return Step::Deny;
        }
        let p = match preferred {
            AuthPlugin::CachingSha2Password if creds.has_sha2() => preferred,
            AuthPlugin::NativePassword if creds.native_hash.is_some() => preferred,
            _ if creds.native_hash.is_some() => AuthPlugin::NativePassword,
            _ => AuthPlugin::CachingSha2Password,
        };
        Step::Switch(p)
    };
    if is_empty_response(resp) {
        // An empty password is an empty response; accept it only for accounts without
        // one. A client whose plugin differs from the one announced may send an empty
        // first response on purpose (MySQL 8 libmysqlclient does): challenge it.
        return if creds.is_empty_password() {
            Step::Accept { fast_auth: false }
        } else if !fresh {
            switch_to(if plugin == CACHING_SHA2_PASSWORD {
                AuthPlugin::CachingSha2Password
            } else {
                AuthPlugin::NativePassword
            })
        } else {
            Step::Deny
        };
    }
    match plugin {
        NATIVE_PASSWORD => match &creds.native_hash {
            Some(h) if verify_native(scramble, resp, h) => Step::Accept { fast_auth: false },
            Some(_) => Step::Deny,
            None if creds.has_sha2() => switch_to(AuthPlugin::CachingSha2Password),
            None => Step::Deny,
        },
        // As MySQL: a cache miss or a mismatch asks for the password itself.
        CACHING_SHA2_PASSWORD => match &creds.sha2_hash {
            Some(h) if verify_sha2(scramble, resp, h) => Step::Accept { fast_auth: true },
            _ if creds.has_sha2() => Step::FullAuth,
            _ if creds.native_hash.is_some() => switch_to(AuthPlugin::NativePassword),
            _ => Step::Deny,
        },
        _ => switch_to(AuthPlugin::NativePassword),
    }
}

/// The plugin a COM_CHANGE_USER is switched to: the client's own when the account
/// (or an empty password) allows it, else the account's.
fn renewal_plugin(client: &str, creds: &Credentials) -> AuthPlugin {
    let empty = creds.is_empty_password();
    if client == CACHING_SHA2_PASSWORD && (empty || creds.has_sha2()) {
        AuthPlugin::CachingSha2Password
    } else if empty || creds.native_hash.is_some() {
        AuthPlugin::NativePassword
    } else {
        AuthPlugin::CachingSha2Password
    }
}

impl<S: Read + Write> Conn<S> {
    /// Runs the connection phase: sends Handshake v10, reads the response, verifies
    /// the password (switching plugins when needed) and sends OK. `lookup(user)`
    /// returns the account's credentials, or `None` for an unknown user. On failure
    /// the ERR packet has been sent and flushed and `Err` is returned.
    pub fn handshake(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<Credentials>,
    ) -> Result<HandshakeInfo> {
        self.handshake_with(lookup, &|_| Ok(()))
    }

    /// Like [`Conn::handshake`], with `check` run after a successful password check
    /// and before OK is sent (e.g. to refuse an unknown initial database with ERR 1049).
    pub fn handshake_with(
        &mut self,
        lookup: &dyn Fn(&str) -> Option<Credentials>,
        check: &dyn Fn(&HandshakeInfo) -> std::result::Result<(), ErrPacket>,
    ) -> Result<HandshakeInfo> {
        self.io.reset_seq();
        self.send_greeting()?;
        self.flush()?;
        let payload = self.read_packet_checked()?;
        let mut resp = self.parse_response(&payload)?;
        if resp.ssl_request {
            let Some(hook) = self.tls.as_mut() else {
                return self.reject(
                    errcode::ER_HANDSHAKE_ERROR,
                    "08S01",
                    "SSL connections are not supported",
                );
            };
            // The client starts its TLS handshake right after the SSLRequest, without
            // waiting for a reply: what was read ahead of it is TLS's. A failed TLS
            // handshake gets no ERR packet (the stream is no longer plain protocol).
            let early = self.io.take_read_ahead();
            (hook.0)(self.io.get_mut(), &early)?;
            self.secure = true;
            let payload = self.read_packet_checked()?;
            resp = self.parse_response(&payload)?;
            if resp.ssl_request {
                return self.reject(errcode::ER_HANDSHAKE_ERROR, "08S01", "Bad handshake");
            }
        }
        let user = lossy(&resp.user);
        let plugin = match &resp.auth_plugin {
            Some(p) if self.caps & cap::CLIENT_PLUGIN_AUTH != 0 => p.clone(),
            _ => NATIVE_PASSWORD.to_string(),
        };
        let used = self.authenticate(&user, &plugin, resp.auth_response, lookup, false)?;
        let info = HandshakeInfo {
            user,
            database: resp.database.map(|d| lossy(&d)),
            capabilities: self.caps,
            charset: u16::from(resp.charset),
            auth_plugin: used.to_string(),
            attrs: resp.attrs,
            max_packet: resp.max_packet,
            tls: self.secure,
            sha2_verified: self.verified.take(),
        };
        self.accept(info, check)
    }

    /// Re-authenticates for COM_CHANGE_USER with a new scramble, sent in an
    /// AuthSwitchRequest (the command's own response, made with the handshake's
    /// scramble, is not used); a client without CLIENT_PLUGIN_AUTH cannot take
    /// one, so its response is checked with native auth against the scramble
    /// it was last sent. On success OK has been sent (not flushed
    /// separately: it is flushed here) and the new identity is returned; on failure
    /// ERR 1045 has been sent and the connection should be closed.
    pub fn change_user(
        &mut self,
        cu: &ChangeUser,
        lookup: &dyn Fn(&str) -> Option<Credentials>,
    ) -> Result<HandshakeInfo> {
        self.change_user_with(cu, lookup, &|_| Ok(()))
    }

    /// Like [`Conn::change_user`], with `check` run after a successful password
    /// check and before OK is sent (as [`Conn::handshake_with`]: the database is
    /// checked only for a client that knows the password).
    pub fn change_user_with(
        &mut self,
        cu: &ChangeUser,
        lookup: &dyn Fn(&str) -> Option<Credentials>,
        check: &dyn Fn(&HandshakeInfo) -> std::result::Result<(), ErrPacket>,
    ) -> Result<HandshakeInfo> {
        let plugin = match &cu.auth_plugin {
            Some(p) if self.caps & cap::CLIENT_PLUGIN_AUTH != 0 => p.clone(),
            _ => NATIVE_PASSWORD.to_string(),
        };
        let used = self.authenticate(&cu.user, &plugin, cu.auth_response.clone(), lookup, true)?;
        let info = HandshakeInfo {
            user: cu.user.clone(),
            database: cu.database.clone(),
            capabilities: self.caps,
            charset: cu.charset.unwrap_or(u16::from(self.charset)),
            auth_plugin: used.to_string(),
            attrs: cu.attrs.clone(),
            max_packet: 0,
            tls: self.secure,
            sha2_verified: self.verified.take(),
        };
        self.accept(info, check)
    }

    /// Runs `check` on an authenticated identity, then sends OK (or its ERR).
    fn accept(
        &mut self,
        info: HandshakeInfo,
        check: &dyn Fn(&HandshakeInfo) -> std::result::Result<(), ErrPacket>,
    ) -> Result<HandshakeInfo> {
        if let Err(e) = check(&info) {
            return self.reject(e.code, &e.sqlstate, &e.message);
        }
        self.send_ok(&OkPacket {
            status: self.status,
            ..Default::default()
        })?;
        self.flush()?;
        Ok(info)
    }

    /// Parses a handshake response and records the negotiated capabilities; a
    /// malformed one gets ER_HANDSHAKE_ERROR.
    fn parse_response(&mut self, payload: &[u8]) -> Result<HandshakeResponse> {
        let resp = match parse_handshake_response(payload, self.server_caps) {
            Ok(r) => r,
            Err(e) => {
                self.reject(errcode::ER_HANDSHAKE_ERROR, "08S01", "Bad handshake")?;
                return Err(e);
            }
        };
        self.caps = resp.capabilities & self.server_caps;
        self.client_known = true;
        Ok(resp)
    }

    fn send_greeting(&mut self) -> Result<()> {
        let plugin = self.default_plugin.name();
        let caps = self.server_caps;
        let out = self.io.begin_packet();
        out.push(10);
        put_nul_bytes(out, self.server_version.as_bytes());
        put_u32(out, self.connection_id);
        out.extend_from_slice(&self.scramble[..8]);
        out.push(0);
        put_u16(out, caps as u16);
        out.push(self.charset);
        put_u16(out, self.status);
        put_u16(out, (caps >> 16) as u16);
        out.push(21);
        out.extend_from_slice(&[0u8; 10]);
        out.extend_from_slice(&self.scramble[8..]);
        out.push(0);
        put_nul_bytes(out, plugin.as_bytes());
        self.io.end_packet()
    }

    /// Verifies `resp` for `user`, switching plugins at most once; returns the plugin
    /// that succeeded. Sends the fast-auth marker for caching_sha2 but not the final OK.
    /// With `renew` (COM_CHANGE_USER) `resp`, made with the handshake's scramble, is
    /// not used: a new scramble goes out in an AuthSwitchRequest for the account's
    /// plugin, and the answer to it is checked (unless the client lacks
    /// CLIENT_PLUGIN_AUTH: then `resp` is checked, native auth).
    fn authenticate(
        &mut self,
        user: &str,
        plugin: &str,
        mut resp: Vec<u8>,
        lookup: &dyn Fn(&str) -> Option<Credentials>,
        renew: bool,
    ) -> Result<&'static str> {
        let known = lookup(user);
        if known.as_ref().is_some_and(|c| c.any_password) {
            // No check at all: the OK that follows ends any plugin's exchange.
            return Ok(if plugin == CACHING_SHA2_PASSWORD {
                CACHING_SHA2_PASSWORD
            } else {
                NATIVE_PASSWORD
            });
        }
        // An unknown user goes through the same steps as an account of one plugin
        // with a password nothing matches, so that the reply does not tell unknown
        // users from wrong passwords.
        let creds = known.clone().unwrap_or_else(|| Credentials::decoy(user));
        let mut plugin: String = plugin.to_string();
        let mut fresh = plugin == self.default_plugin.name();
        // A client without CLIENT_PLUGIN_AUTH cannot answer an
        // AuthSwitchRequest: it is never sent one (a response it would need
        // to be asked again for is refused), and its COM_CHANGE_USER response,
        // native auth over the scramble it has, is checked as it is.
        let plugin_auth = self.caps & cap::CLIENT_PLUGIN_AUTH != 0;
        let mut switched = !plugin_auth;
        if !plugin_auth {
            plugin = NATIVE_PASSWORD.to_string();
            fresh = true;
        }
        self.verified = None;
        if renew && plugin_auth {
            self.scramble = new_scramble(u64::from(self.connection_id) << 1);
            let p = renewal_plugin(&plugin, &creds);
            resp = self.switch_plugin(p)?;
            plugin = p.name().to_string();
            fresh = true;
            switched = true;
        }
        loop {
            let step = check_response(&plugin, &resp, &creds, &self.scramble, fresh, switched);
            match step {
                Step::Accept { fast_auth } if known.is_some() => {
                    if fast_auth {
                        // "fast auth OK": 0x01 (more data) 0x03.
                        self.io.write_packet(&[0x01, 0x03])?;
                    }
                    return Ok(if plugin == CACHING_SHA2_PASSWORD {
                        CACHING_SHA2_PASSWORD
                    } else {
                        NATIVE_PASSWORD
                    });
                }
                Step::Accept { .. } | Step::Deny => {
                    return self.deny(user, !is_empty_response(&resp))
                }
                Step::FullAuth => {
                    return match self.full_auth(&creds)? {
                        Some(h) if known.is_some() => {
                            self.verified = Some((h, creds.sha2_auth.clone().unwrap_or_default()));
                            Ok(CACHING_SHA2_PASSWORD)
                        }
                        _ => self.deny(user, true),
                    };
                }
                Step::Switch(p) => {
                    resp = self.switch_plugin(p)?;
                    plugin = p.name().to_string();
                    fresh = true;
                    switched = true;
                }
            }
        }
    }

    /// Sends an AuthSwitchRequest for `p` with the current scramble and reads the
    /// client's answer.
    fn switch_plugin(&mut self, p: AuthPlugin) -> Result<Vec<u8>> {
        let out = self.io.begin_packet();
        out.push(0xFE);
        put_nul_bytes(out, p.name().as_bytes());
        out.extend_from_slice(&self.scramble);
        out.push(0);
        self.io.end_packet()?;
        self.flush()?;
        self.read_packet_checked()
    }

    /// caching_sha2_password's full authentication: sends "perform full
    /// authentication" (`01 04`) and reads the password: in clear text (NUL-terminated)
    /// over TLS or a unix socket; otherwise RSA-OAEP encrypted, XORed with the scramble,
    /// after sending the public key to a client that asks for it (`02`). Returns
    /// SHA256(SHA256(password)) when it is the account's, `None` for a wrong password
    /// or anything malformed (no RSA keys, a ciphertext that does not decrypt).
    fn full_auth(&mut self, creds: &Credentials) -> Result<Option<[u8; 32]>> {
        self.io.write_packet(&[0x01, 0x04])?;
        self.flush()?;
        let mut pkt = self.read_packet_checked()?;
        if !(self.secure || self.unix) {
            let Some(keys) = self.rsa.clone() else {
                return Ok(None);
            };
            if pkt == [0x02] {
                let mut m = Vec::with_capacity(1 + keys.public_pem().len());
                m.push(0x01);
                m.extend_from_slice(keys.public_pem().as_bytes());
                self.io.write_packet(&m)?;
                self.flush()?;
                pkt = self.read_packet_checked()?;
            }
            let Some(mut plain) = keys.decrypt(&pkt) else {
                return Ok(None);
            };
            for (i, b) in plain.iter_mut().enumerate() {
                *b ^= self.scramble[i % self.scramble.len()];
            }
            pkt = plain;
        }
        // The password may hold NUL bytes (SQL takes them): only the terminator goes.
        let pw = pkt.strip_suffix(&[0]).unwrap_or(&pkt);
        let ok = match (&creds.sha2_auth, &creds.sha2_hash) {
            (Some(stored), _) => verify_sha2_auth(stored, pw),
            (None, Some(h)) => constant_time_eq(&sha2_password_hash(pw), h),
            (None, None) => false,
        };
        Ok(ok.then(|| sha2_password_hash(pw)))
    }

    fn deny<T>(&mut self, user: &str, using_password: bool) -> Result<T> {
        let msg = format!(
            "Access denied for user '{}'@'{}' (using password: {})",
            user,
            self.client_host,
            if using_password { "YES" } else { "NO" }
        );
        self.send_err(errcode::ER_ACCESS_DENIED_ERROR, "28000", &msg)?;
        self.flush()?;
        Err(Error::AccessDenied(msg))
    }

    fn reject<T>(&mut self, code: u16, sqlstate: &str, msg: &str) -> Result<T> {
        self.send_err(code, sqlstate, msg)?;
        self.flush()?;
        Err(Error::Rejected {
            code,
            message: msg.to_string(),
        })
    }
}
