//! The key that picks the plugin of an unknown user's stand-in
//! (`wire::auth::decoy_plugin`), kept in `<datadir>/auth-decoy-key` (mode
//! 0600) so that the stand-in keeps its plugin across restarts, as a real
//! account does: a plugin that changed with each restart would tell unknown
//! users from accounts. Made on the first start that finds no file (written
//! atomically: a crash leaves no part of one); a file that does not decode
//! stops the server (a new key would change every stand-in), one that others
//! can read or that another user owns gets a warning in the log (as the
//! caching_sha2_password key files do: `keyfile`). Format:
//! docs/formats/accounts.md ("Decoy key file").
use crate::config::Config;
use std::path::Path;

/// The file's name in the datadir.
pub const FILE: &str = "auth-decoy-key";
const MAGIC: &[u8; 4] = b"SDKY";
const VERSION: u8 = 1;
const KEY_LEN: usize = 20;
/// Magic, version, 3 reserved bytes, the key, CRC-32C of what precedes.
const LEN: usize = 4 + 1 + 3 + KEY_LEN + 4;

/// The file's bytes for `key`.
fn encode(key: &[u8; KEY_LEN]) -> [u8; LEN] {
    let mut b = [0u8; LEN];
    b[..4].copy_from_slice(MAGIC);
    b[4] = VERSION;
    b[8..8 + KEY_LEN].copy_from_slice(key);
    let crc = crc32c::crc32c(&b[..LEN - 4]);
    b[LEN - 4..].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The key in the file's bytes; why not if they are not a key file.
fn decode(b: &[u8]) -> Result<[u8; KEY_LEN], String> {
    if b.len() != LEN {
        return Err(format!("{} bytes, not {LEN}", b.len()));
    }
    if &b[..4] != MAGIC {
        return Err("not a decoy key file".into());
    }
    if b[4] != VERSION {
        return Err(format!("version {} (this server reads {VERSION})", b[4]));
    }
    let crc = crc32c::crc32c(&b[..LEN - 4]);
    if b[LEN - 4..] != crc.to_le_bytes() {
        return Err("checksum mismatch".into());
    }
    let mut key = [0u8; KEY_LEN];
    key.copy_from_slice(&b[8..8 + KEY_LEN]);
    Ok(key)
}

/// Reads (or, on a start without one, makes) the datadir's key and hands it
/// to the wire layer, before any login.
pub fn load(cfg: &Config) -> Result<(), String> {
    let key = read_or_make(&cfg.datadir.join(FILE))?;
    if !wire::auth::set_decoy_key(key) {
        // Only a login before this call could have drawn another key.
        return Err("the decoy key was in use before it was read from the datadir".into());
    }
    Ok(())
}

/// The key in the file at `path`, or a new one written there if there is
/// none; warns about a file others can read or another user owns.
fn read_or_make(path: &Path) -> Result<[u8; KEY_LEN], String> {
    match std::fs::read(path) {
        Ok(b) => {
            let key = decode(&b).map_err(|e| {
                format!(
                    "{}: {e}; remove it to make a new one (unknown users' logins may then change plugin)",
                    path.display()
                )
            })?;
            if let Some(w) = crate::keyfile::unsafe_key_file(path) {
                eprintln!("strata: warning: {w}");
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => make(path),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// A new random key, written to `path` (mode 0600, atomically).
fn make(path: &Path) -> Result<[u8; KEY_LEN], String> {
    let mut key = [0u8; KEY_LEN];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    crate::keyfile::write_atomically(path, &encode(&key), 0o600)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{decode, encode, read_or_make, LEN};

    #[test]
    fn round_trip_and_every_damage_is_refused() {
        let key = [7u8; 20];
        let b = encode(&key);
        assert_eq!(decode(&b).unwrap(), key);
        for i in 0..LEN {
            let mut d = b;
            d[i] ^= 0x10;
            assert!(decode(&d).is_err(), "byte {i}");
        }
        assert!(decode(&b[..LEN - 1]).is_err());
    }

    /// Review s31 LOW4: the key is made once, whole (no temporary file left),
    /// mode 0600, and read back unchanged on the next start.
    #[test]
    fn a_made_key_is_read_back_by_the_next_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = testkit::TempDir::new("decoy-key");
        let p = dir.path().join(super::FILE);
        let key = read_or_make(&p).unwrap();
        assert_eq!(read_or_make(&p).unwrap(), key);
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::write(&p, &encode(&key)[..LEN - 1]).unwrap();
        assert!(read_or_make(&p).is_err());
    }
}
