//! Password hashing and scramble verification against known vectors (computed
//! independently with Python's hashlib) and against a client-side computation written
//! here with the sha1/sha2 crates directly.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns

use sha1::Sha1;
use sha2::{Digest, Sha256};
use wire::auth::{scramble_native, scramble_sha2, verify_native, verify_sha2};
use wire::{native_password_hash, sha2_password_hash, Credentials};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const NONCE: &[u8; 20] = b"abcdefghijklmnopqrst";

#[test]
fn stored_hashes_match_mysql() {
    // MySQL: PASSWORD('password') = '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'
    assert_eq!(
        hex(&native_password_hash(b"password")),
        "2470c0c06dee42fd1618bb99005adca2ec9d1e19"
    );
    assert_eq!(
        hex(&sha2_password_hash(b"password")),
        "73641c99f7719f57d8f4beb11a303afcd190243a51ced8782ca6d3dbe014d146"
    );
    let c = Credentials::from_password(b"");
    assert!(c.is_empty_password());
}

#[test]
fn native_scramble_vector() {
    // SHA1(pw) XOR SHA1(nonce || SHA1(SHA1(pw))) for pw = "secret".
    let expect = "8817c50fa779daef010ee7577825b0847df9842e";
    assert_eq!(hex(&scramble_native(NONCE, b"secret")), expect);
    // The same, computed here.
    let h1: [u8; 20] = Sha1::digest(b"secret").into();
    let h2: [u8; 20] = Sha1::digest(h1).into();
    let mut t = Sha1::new();
    t.update(NONCE);
    t.update(h2);
    let t: [u8; 20] = t.finalize().into();
    let resp: Vec<u8> = h1.iter().zip(t).map(|(a, b)| a ^ b).collect();
    assert_eq!(hex(&resp), expect);

    let stored = native_password_hash(b"secret");
    assert!(verify_native(NONCE, &resp, &stored));
    let mut bad = resp.clone();
    bad[0] ^= 1;
    assert!(!verify_native(NONCE, &bad, &stored));
    assert!(!verify_native(b"abcdefghijklmnopqrsX", &resp, &stored));
    assert!(!verify_native(NONCE, &resp[..19], &stored));
    assert!(!verify_native(
        NONCE,
        &resp,
        &native_password_hash(b"Secret")
    ));
}

#[test]
fn sha2_scramble_vector() {
    // SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) || nonce) for pw = "secret".
    let expect = "c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809";
    assert_eq!(hex(&scramble_sha2(NONCE, b"secret")), expect);
    let h1: [u8; 32] = Sha256::digest(b"secret").into();
    let h2: [u8; 32] = Sha256::digest(h1).into();
    let mut t = Sha256::new();
    t.update(h2);
    t.update(NONCE);
    let t: [u8; 32] = t.finalize().into();
    let resp: Vec<u8> = h1.iter().zip(t).map(|(a, b)| a ^ b).collect();
    assert_eq!(hex(&resp), expect);

    let stored = sha2_password_hash(b"secret");
    assert!(verify_sha2(NONCE, &resp, &stored));
    let mut bad = resp.clone();
    bad[31] ^= 0x80;
    assert!(!verify_sha2(NONCE, &bad, &stored));
    assert!(!verify_sha2(NONCE, &resp[..31], &stored));
    assert!(!verify_sha2(NONCE, &resp, &sha2_password_hash(b"secreT")));
}

#[test]
fn empty_password_scrambles_are_empty() {
    assert!(scramble_native(NONCE, b"").is_empty());
    assert!(scramble_sha2(NONCE, b"").is_empty());
}

/// `$hex` decoded.
fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn mysql_generated_sha2_auth_string() {
    // Made by MySQL 8 itself: the MySQL 8.0 Reference Manual's example of
    // print_identified_with_as_hex (`CREATE USER 'u1'@'localhost' IDENTIFIED BY
    // 'secret'`, then SHOW CREATE USER), a 20-byte salt with control characters.
    let stored = unhex(
        "244124303035240C7745603626313D613C4C10633E0A104B1E14135A544A7871\
         567245614F4872344643546336546F624F6C7861326932752F45622F4F473273\
         597557627139",
    );
    assert_eq!(stored.len(), wire::sha2crypt::SHA2_AUTH_LEN);
    assert!(wire::sha2crypt::verify_sha2_auth(&stored, b"secret"));
    assert!(!wire::sha2crypt::verify_sha2_auth(&stored, b"Secret"));
    assert!(!wire::sha2crypt::verify_sha2_auth(&stored, b"secret\0"));
}
