//! What `caching_sha2_password` stores for an account: MySQL's
//! `authentication_string` `$A$005$<salt><digest>` (70 bytes), the SHA-256
//! crypt of Drepper's SHA-crypt specification with a 20-byte salt and
//! 1000 × the 3 hex digits rounds (005: 5000), its digest in crypt's base-64.
//! Building it from a password, checking its shape and checking a clear-text
//! password against it (the server's full authentication).

use sha2::{Digest, Sha256};

/// Length of a stored string: `$A$` + 3 hex digits + `$` + 20 salt bytes + 43 digest characters.
pub const SHA2_AUTH_LEN: usize = 70;
/// Salt bytes (MySQL's CRYPT_SALT_LENGTH).
pub const SALT_LEN: usize = 20;
/// Digest characters.
const DIGEST_LEN: usize = 43;
/// Longest password hashed (MySQL's CACHING_SHA2_PASSWORD_MAX_PASSWORD_LENGTH): the
/// crypt's cost grows with the square of the length.
pub const MAX_PASSWORD_LEN: usize = 256;
/// Rounds MySQL uses by default (written `005`).
pub const DEFAULT_ROUNDS: u32 = 5000;

const B64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `n` bytes of `digest` repeated (steps 16 and 20 of the specification).
fn repeat(digest: &[u8; 32], n: usize) -> Vec<u8> {
    digest.iter().copied().cycle().take(n).collect()
}

/// The 43-character SHA-256 crypt digest of `password` with `salt` (at most 20
/// bytes used, as MySQL) and `rounds`.
pub fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> [u8; DIGEST_LEN] {
    let salt = &salt[..salt.len().min(SALT_LEN)];
    let pl = password.len();
    let b: [u8; 32] = Sha256::new()
        .chain_update(password)
        .chain_update(salt)
        .chain_update(password)
        .finalize()
        .into();
    let mut a = Sha256::new().chain_update(password).chain_update(salt);
    let mut i = pl;
    while i > 32 {
        a.update(b);
        i -= 32;
    }
    a.update(&b[..i]);
    let mut i = pl;
    while i > 0 {
        if i & 1 != 0 {
            a.update(b);
        } else {
            a.update(password);
        }
        i >>= 1;
    }
    let a: [u8; 32] = a.finalize().into();
    let mut dp = Sha256::new();
    for _ in 0..pl {
        dp.update(password);
    }
    let p = repeat(&dp.finalize().into(), pl);
    let mut ds = Sha256::new();
    for _ in 0..16 + usize::from(a[0]) {
        ds.update(salt);
    }
    let s = repeat(&ds.finalize().into(), salt.len());
    let mut c = a;
    for r in 0..rounds {
        let mut h = Sha256::new();
        if r & 1 != 0 {
            h.update(&p);
        } else {
            h.update(c);
        }
        if r % 3 != 0 {
            h.update(&s);
        }
        if r % 7 != 0 {
            h.update(&p);
        }
        if r & 1 != 0 {
            h.update(c);
        } else {
            h.update(&p);
        }
        c = h.finalize().into();
    }
    let mut out = [0u8; DIGEST_LEN];
    let mut o = 0;
    let mut put = |b2: u8, b1: u8, b0: u8, n: usize| {
        let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
        for _ in 0..n {
            out[o] = B64[(w & 0x3f) as usize];
            o += 1;
            w >>= 6;
        }
    };
    for k in 0..10 {
        // Drepper's byte order: (0,10,20), (21,1,11), (12,22,2), ...
        let (x, y, z) = [
            (0, 10, 20),
            (21, 1, 11),
            (12, 22, 2),
            (3, 13, 23),
            (24, 4, 14),
            (15, 25, 5),
            (6, 16, 26),
            (27, 7, 17),
            (18, 28, 8),
            (9, 19, 29),
        ][k];
        put(c[x], c[y], c[z], 4);
    }
    put(0, c[31], c[30], 3);
    out
}

/// The stored string for `password` with `salt` (20 bytes, none `$` or NUL) and MySQL's
/// default 5000 rounds.
pub fn sha2_auth_string(password: &[u8], salt: &[u8; SALT_LEN]) -> Vec<u8> {
    let mut v = format!("$A${:03X}$", DEFAULT_ROUNDS / 1000).into_bytes();
    v.extend_from_slice(salt);
    v.extend_from_slice(&sha256_crypt(password, salt, DEFAULT_ROUNDS));
    v
}

/// A well-formed stored string (5000 rounds) of random salt and digest: no password
/// is known to match it (the stand-in of an unknown user, `Credentials::decoy`).
pub fn random_sha2_auth() -> Vec<u8> {
    let salt = crate::auth::new_scramble(0x5a17);
    let mut v = format!("$A${:03X}$", DEFAULT_ROUNDS / 1000).into_bytes();
    v.extend_from_slice(&salt);
    let mut left = DIGEST_LEN;
    while left > 0 {
        let r = crate::auth::new_scramble(left as u64);
        for &b in r.iter().take(left) {
            // new_scramble's bytes are 33..=126: 94 values, folded onto 64.
            v.push(B64[usize::from(b) % 64]);
        }
        left = left.saturating_sub(r.len());
    }
    v
}

/// A stored string's rounds, salt and digest; `None` when it is not one
/// (length, `$A$`, 3 hex digits of at least 5 (thousand rounds), `$`, a salt without
/// `$` or NUL, a digest of crypt base-64 characters).
pub fn parse_sha2_auth(s: &[u8]) -> Option<(u32, &[u8], &[u8])> {
    if s.len() != SHA2_AUTH_LEN || !s.starts_with(b"$A$") || s[6] != b'$' {
        return None;
    }
    let digits = std::str::from_utf8(&s[3..6]).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rounds = u32::from_str_radix(digits, 16).ok()? * 1000;
    if rounds < DEFAULT_ROUNDS {
        return None;
    }
    let salt = &s[7..7 + SALT_LEN];
    let digest = &s[7 + SALT_LEN..];
    if salt.iter().any(|&b| b == b'$' || b == 0) || !digest.iter().all(|b| B64.contains(b)) {
        return None;
    }
    Some((rounds, salt, digest))
}

/// Whether `password` is the one `stored` was made from (false for a string that is
/// not one, or a password longer than [`MAX_PASSWORD_LEN`]).
pub fn verify_sha2_auth(stored: &[u8], password: &[u8]) -> bool {
    let Some((rounds, salt, digest)) = parse_sha2_auth(stored) else {
        return false;
    };
    if password.len() > MAX_PASSWORD_LEN {
        return false;
    }
    let d = sha256_crypt(password, salt, rounds);
    d.iter().zip(digest).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drepper_test_vectors() {
        // glibc crypt(3) agrees (Python: crypt.crypt("Hello world!", "$5$saltstring")).
        assert_eq!(
            &sha256_crypt(b"Hello world!", b"saltstring", 5000),
            b"5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        assert_eq!(
            &sha256_crypt(b"Hello world!", b"saltstringsaltst", 10000),
            b"3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"
        );
        assert_eq!(
            &sha256_crypt(
                b"we have a short salt string but not a short password",
                b"short",
                77777
            ),
            b"JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/"
        );
    }

    #[test]
    fn stored_string_round_trip() {
        let salt = *b"abcdefghij0123456789";
        let s = sha2_auth_string(b"pw", &salt);
        assert_eq!(s.len(), SHA2_AUTH_LEN);
        assert!(s.starts_with(b"$A$005$abcdefghij0123456789"));
        assert!(verify_sha2_auth(&s, b"pw"));
        assert!(!verify_sha2_auth(&s, b"pX"));
        assert!(!verify_sha2_auth(&s, b""));
        let mut bad = s.clone();
        bad[4] = b'G';
        assert!(parse_sha2_auth(&bad).is_none());
        assert!(!verify_sha2_auth(&s[..69], b"pw"));
        assert!(!verify_sha2_auth(&s, &[b'x'; MAX_PASSWORD_LEN + 1]));
    }

    #[test]
    fn random_strings_are_well_formed() {
        let a = random_sha2_auth();
        let b = random_sha2_auth();
        assert_ne!(a, b);
        assert_eq!(parse_sha2_auth(&a).map(|p| p.0), Some(DEFAULT_ROUNDS));
        assert!(!verify_sha2_auth(&a, b""));
    }
}
