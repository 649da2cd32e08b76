//! The RSA key pair of `caching_sha2_password`'s full authentication without
//! TLS: a client asks for the public key (PEM, sent as is) and sends its
//! password, NUL-terminated and XORed with the scramble, encrypted with
//! RSA-OAEP (SHA-1, as OpenSSL's RSA_PKCS1_OAEP_PADDING). Loading a private
//! key from PEM (PKCS#8 or PKCS#1), generating one, decrypting.

use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding,
};
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};

/// A private key and its public half's PEM.
pub struct RsaKeys {
    key: RsaPrivateKey,
    public_pem: String,
}

impl std::fmt::Debug for RsaKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RsaKeys")
    }
}

fn public_pem(key: &RsaPrivateKey) -> Result<String, String> {
    key.to_public_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("cannot encode the public key: {e}"))
}

impl RsaKeys {
    /// A private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) or PKCS#1 (`BEGIN RSA
    /// PRIVATE KEY`, what MySQL writes).
    pub fn from_private_pem(pem: &str) -> Result<RsaKeys, String> {
        let key = RsaPrivateKey::from_pkcs8_pem(pem)
            .or_else(|_| RsaPrivateKey::from_pkcs1_pem(pem))
            .map_err(|_| "not an RSA private key in PEM (PKCS#8 or PKCS#1)".to_string())?;
        let public_pem = public_pem(&key)?;
        Ok(RsaKeys { key, public_pem })
    }

    /// A new key pair of `bits` bits and the private key's PEM (PKCS#8).
    pub fn generate(bits: usize) -> Result<(RsaKeys, String), String> {
        let mut rng = rsa::rand_core::OsRng;
        let key = RsaPrivateKey::new(&mut rng, bits)
            .map_err(|e| format!("cannot generate an RSA key: {e}"))?;
        let pem = key
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| format!("cannot encode the private key: {e}"))?
            .to_string();
        let public_pem = public_pem(&key)?;
        Ok((RsaKeys { key, public_pem }, pem))
    }

    /// The public key in PEM (`BEGIN PUBLIC KEY`), what a client is sent.
    pub fn public_pem(&self) -> &str {
        &self.public_pem
    }

    /// Whether `pem` holds this key's public half (a public key file must).
    pub fn matches_public_pem(&self, pem: &str) -> bool {
        RsaPublicKey::from_public_key_pem(pem).is_ok_and(|p| p == self.key.to_public_key())
    }

    /// Decrypts an OAEP (SHA-1) ciphertext; `None` for anything that is not one.
    pub fn decrypt(&self, ciphertext: &[u8]) -> Option<Vec<u8>> {
        let mut rng = rsa::rand_core::OsRng;
        self.key
            .decrypt_blinded(&mut rng, Oaep::new::<sha1::Sha1>(), ciphertext)
            .ok()
    }
}

/// Client side: `password` NUL-terminated, XORed with `scramble`, encrypted with
/// the public key in `public_pem` (what a client sends in full authentication).
pub fn encrypt_password(
    public_pem: &str,
    password: &[u8],
    scramble: &[u8],
) -> Result<Vec<u8>, String> {
    let key = RsaPublicKey::from_public_key_pem(public_pem).map_err(|e| e.to_string())?;
    let mut m: Vec<u8> = password.to_vec();
    m.push(0);
    if !scramble.is_empty() {
        for (i, b) in m.iter_mut().enumerate() {
            *b ^= scramble[i % scramble.len()];
        }
    }
    let mut rng = rsa::rand_core::OsRng;
    key.encrypt(&mut rng, Oaep::new::<sha1::Sha1>(), &m)
        .map_err(|e| e.to_string())
}
