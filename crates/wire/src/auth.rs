//! Password hashing and challenge-response verification for the two supported auth
//! plugins (`mysql_native_password`, `caching_sha2_password`'s fast path; its stored
//! form is in `sha2crypt.rs`), the stored [`Credentials`], and generation of the
//! 20-byte handshake scramble.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha1::Sha1;
use sha2::{Digest, Sha256};

/// Name of the `mysql_native_password` plugin.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";
/// Name of the `caching_sha2_password` plugin.
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";

/// The auth plugin a server announces in its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthPlugin {
    NativePassword,
    CachingSha2Password,
}

impl AuthPlugin {
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => NATIVE_PASSWORD,
            AuthPlugin::CachingSha2Password => CACHING_SHA2_PASSWORD,
        }
    }
}

/// What the server knows of an account. All `None` means the account has an
/// empty password. A client authenticating with `mysql_native_password` is checked
/// against `native_hash`; one using `caching_sha2_password` against `sha2_hash`
/// (fast authentication), else by full authentication (the clear-text password over
/// TLS or a unix socket, or RSA-encrypted) against `sha2_auth` (or `sha2_hash`). An
/// account with only one plugin's data gets clients of the other switched to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub native_hash: Option<[u8; 20]>,
    /// SHA256(SHA256(password)): caching_sha2_password's fast-authentication cache
    /// entry, when the server has one.
    pub sha2_hash: Option<[u8; 32]>,
    /// caching_sha2_password's stored `$A$005$...` string (`sha2crypt`).
    pub sha2_auth: Option<Vec<u8>>,
    /// Any response is accepted, whatever password the client sends (the
    /// server's `--skip-grant-tables` recovery mode, as MySQL's).
    pub any_password: bool,
}

impl Credentials {
    /// Credentials for an account without a password.
    pub fn empty() -> Self {
        Credentials::default()
    }

    /// Both hashes derived from a clear-text password (an empty password gives
    /// [`Credentials::empty`]).
    pub fn from_password(password: &[u8]) -> Self {
        if password.is_empty() {
            return Credentials::empty();
        }
        Credentials {
            native_hash: Some(native_password_hash(password)),
            sha2_hash: Some(sha2_password_hash(password)),
            sha2_auth: None,
            any_password: false,
        }
    }

    pub fn is_empty_password(&self) -> bool {
        self.native_hash.is_none() && !self.has_sha2()
    }

    /// caching_sha2_password can check this account.
    pub fn has_sha2(&self) -> bool {
        self.sha2_auth.is_some() || self.sha2_hash.is_some()
    }

    /// The stand-in for an unknown `user` (MySQL's `decoy_user`), so that the
    /// exchange does not tell unknown users from wrong passwords: one plugin, the
    /// same for a name every time ([`decoy_plugin`]), with only that plugin's data, made of random bytes nobody knows
    /// the password of. For caching_sha2_password a random `$A$005$` string and no
    /// cache entry, so a full authentication runs the same 5000-round crypt as a
    /// real account's.
    pub fn decoy(user: &str) -> Self {
        let mut c = Credentials::empty();
        match decoy_plugin(user) {
            AuthPlugin::NativePassword => {
                let mut h = [0u8; 20];
                h.copy_from_slice(&sha1(&[&new_scramble(0xdec0)]));
                c.native_hash = Some(h);
            }
            AuthPlugin::CachingSha2Password => {
                c.sha2_auth = Some(crate::sha2crypt::random_sha2_auth());
            }
        }
        c
    }
}

/// The key of [`decoy_plugin`]: set by [`set_decoy_key`], else drawn once
/// per process.
static DECOY_KEY: std::sync::OnceLock<[u8; 20]> = std::sync::OnceLock::new();

/// Sets the key [`decoy_plugin`] hashes names with, before the first login
/// (a server keeps it in its data directory, so that an unknown user's
/// stand-in keeps its plugin across restarts, as an account does). False
/// when a key is in use already.
pub fn set_decoy_key(key: [u8; 20]) -> bool {
    DECOY_KEY.set(key).is_ok()
}

/// The plugin an unknown `user`'s stand-in has: a keyed hash of the name (a
/// client cannot predict it, and it does not change between attempts, as a
/// real account's plugin does not); the key is [`set_decoy_key`]'s, or one
/// drawn once per process.
pub fn decoy_plugin(user: &str) -> AuthPlugin {
    let key = DECOY_KEY.get_or_init(|| new_scramble(0xdec0_u64 << 16));
    if sha256(&[key, user.as_bytes()])[0] & 1 == 0 {
        AuthPlugin::NativePassword
    } else {
        AuthPlugin::CachingSha2Password
    }
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// SHA1(SHA1(password)): what MySQL stores for `mysql_native_password`
/// (`authentication_string` is `*` + its upper-case hex).
pub fn native_password_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// SHA256(SHA256(password)): what `caching_sha2_password`'s fast-auth cache holds.
pub fn sha2_password_hash(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// Client side of `mysql_native_password`:
/// SHA1(password) XOR SHA1(scramble || SHA1(SHA1(password))). Empty for an empty password.
pub fn scramble_native(scramble: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1(&[password]);
    let h2 = sha1(&[&h1]);
    let t = sha1(&[scramble, &h2]);
    h1.iter().zip(t.iter()).map(|(a, b)| a ^ b).collect()
}

/// Client side of the `caching_sha2_password` fast path:
/// SHA256(password) XOR SHA256(SHA256(SHA256(password)) || scramble).
pub fn scramble_sha2(scramble: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha256(&[password]);
    let h2 = sha256(&[&h1]);
    let t = sha256(&[&h2, scramble]);
    h1.iter().zip(t.iter()).map(|(a, b)| a ^ b).collect()
}

/// Checks a `mysql_native_password` response against the stored SHA1(SHA1(pw)).
pub fn verify_native(scramble: &[u8], response: &[u8], stored: &[u8; 20]) -> bool {
    if response.len() != 20 {
        return false;
    }
    let t = sha1(&[scramble, stored]);
    let mut h1 = [0u8; 20];
    for i in 0..20 {
        h1[i] = response[i] ^ t[i];
    }
    constant_time_eq(&sha1(&[&h1]), stored)
}

/// Checks a `caching_sha2_password` fast-auth response against SHA256(SHA256(pw)).
pub fn verify_sha2(scramble: &[u8], response: &[u8], stored: &[u8; 32]) -> bool {
    if response.len() != 32 {
        return false;
    }
    let t = sha256(&[stored, scramble]);
    let mut h1 = [0u8; 32];
    for i in 0..32 {
        h1[i] = response[i] ^ t[i];
    }
    constant_time_eq(&sha256(&[&h1]), stored)
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fresh 20-byte scramble of printable ASCII (never NUL or `$`). Its entropy comes
/// from the OS-seeded std hasher keys, the clock, a process-wide counter and `salt`.
pub fn new_scramble(salt: u64) -> [u8; 20] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(n);
    h.write_u64(salt);
    let keyed = h.finish();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let digest = sha256(&[
        &keyed.to_le_bytes(),
        &now.to_le_bytes(),
        &n.to_le_bytes(),
        &salt.to_le_bytes(),
        &u64::from(std::process::id()).to_le_bytes(),
    ]);
    let mut out = [0u8; 20];
    for (o, d) in out.iter_mut().zip(digest.iter()) {
        // 94 printable characters '!'..='~'; '$' is bumped to '%'.
        let c = 33 + d % 94;
        *o = if c == b'$' { b'%' } else { c };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_is_printable_and_varies() {
        let a = new_scramble(1);
        let b = new_scramble(1);
        assert_ne!(a, b);
        for c in a.iter().chain(b.iter()) {
            assert!((33..=126).contains(c) && *c != b'$');
        }
    }

    #[test]
    fn decoys_have_one_plugin_and_keep_it() {
        let mut seen = [false; 2];
        for i in 0..64 {
            let name = format!("u{i}");
            let p = decoy_plugin(&name);
            assert_eq!(decoy_plugin(&name), p, "the same plugin every time");
            let c = Credentials::decoy(&name);
            assert!(!c.any_password && !c.is_empty_password());
            assert!(c.sha2_hash.is_none(), "no cache entry");
            match p {
                AuthPlugin::NativePassword => {
                    assert!(c.native_hash.is_some() && c.sha2_auth.is_none());
                    seen[0] = true;
                }
                AuthPlugin::CachingSha2Password => {
                    let s = c.sha2_auth.clone().unwrap_or_default();
                    assert!(c.native_hash.is_none());
                    let parsed = crate::sha2crypt::parse_sha2_auth(&s).map(|x| x.0);
                    assert_eq!(parsed, Some(crate::sha2crypt::DEFAULT_ROUNDS));
                    seen[1] = true;
                }
            }
            assert_ne!(Credentials::decoy(&name), c, "random data every time");
        }
        assert_eq!(seen, [true, true]);
    }

    #[test]
    fn native_round_trip() {
        let s = new_scramble(7);
        let stored = native_password_hash(b"pw");
        assert!(verify_native(&s, &scramble_native(&s, b"pw"), &stored));
        assert!(!verify_native(&s, &scramble_native(&s, b"pX"), &stored));
        assert!(!verify_native(&s, &[], &stored));
    }
}
