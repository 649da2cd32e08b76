//! The key that picks the plugin of an unknown user's stand-in
//! (`wire::auth::decoy_plugin`), kept in `<datadir>/auth-decoy-key` (mode
//! 0600) so that the stand-in keeps its plugin across restarts, as a real
//! account does: a plugin that changed with each restart would tell unknown
//! users from accounts. Made on the first start that finds no file; a file
//! that does not decode stops the server (a new key would change every
//! stand-in). Format: docs/formats/accounts.md ("Decoy key file").
use crate::config::Config;
use std::io::Write;
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
    let path = cfg.datadir.join(FILE);
    let key = match std::fs::read(&path) {
        Ok(b) => decode(&b).map_err(|e| {
            format!(
                "{}: {e}; remove it to make a new one (unknown users' logins may then change plugin)",
                path.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => make(&path)?,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    wire::auth::set_decoy_key(key);
    Ok(())
}

/// A new random key, written to `path` (mode 0600, synced with its directory).
fn make(path: &Path) -> Result<[u8; KEY_LEN], String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = [0u8; KEY_LEN];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        f.write_all(&encode(&key))?;
        f.sync_all()?;
        if let Some(d) = path.parent() {
            std::fs::File::open(d)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{decode, encode, LEN};

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
}
