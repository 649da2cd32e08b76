//! caching_sha2_password's RSA key pair at startup, as MySQL finds it:
//! `--caching-sha2-password-private-key-path` (default `private_key.pem`) and
//! `--caching-sha2-password-public-key-path` (default `public_key.pem`),
//! relative paths in the datadir. When both default files are absent a
//! 2048-bit pair is generated there (private key mode 0600); a file named
//! but missing, unreadable, not a key, or a public key that is not the
//! private key's stops the server with a message naming the option. A
//! private key file readable or writable by group or others, or owned by
//! another user than the server's, gets a warning in the log.
use crate::config::Config;
use std::path::PathBuf;
use std::sync::Arc;

const PRIVATE_OPT: &str = "--caching-sha2-password-private-key-path";
const PUBLIC_OPT: &str = "--caching-sha2-password-public-key-path";

fn path(cfg: &Config, given: &Option<String>, default: &str) -> PathBuf {
    let p = PathBuf::from(given.as_deref().unwrap_or(default));
    if p.is_absolute() {
        p
    } else {
        cfg.datadir.join(p)
    }
}

/// The key pair clients without TLS encrypt their password with.
pub fn load(cfg: &Config) -> Result<Option<Arc<wire::RsaKeys>>, String> {
    let private = path(cfg, &cfg.sha2_private_key, "private_key.pem");
    let public = path(cfg, &cfg.sha2_public_key, "public_key.pem");
    let defaults = cfg.sha2_private_key.is_none() && cfg.sha2_public_key.is_none();
    if defaults && !private.exists() && !public.exists() {
        if !cfg.sha2_auto_generate {
            return Ok(None);
        }
        return generate(&private, &public).map(|k| Some(Arc::new(k)));
    }
    let pem = std::fs::read_to_string(&private)
        .map_err(|e| format!("{PRIVATE_OPT}: cannot read {}: {e}", private.display()))?;
    let keys = wire::RsaKeys::from_private_pem(&pem)
        .map_err(|e| format!("{PRIVATE_OPT}: {}: {e}", private.display()))?;
    if let Some(w) = crate::keyfile::unsafe_key_file(&private) {
        eprintln!("strata: warning: {PRIVATE_OPT}: {w}");
    }
    match std::fs::read_to_string(&public) {
        Ok(p) if keys.matches_public_pem(&p) => {}
        Ok(_) => {
            return Err(format!(
                "{PUBLIC_OPT}: {} is not the public key of {}",
                public.display(),
                private.display()
            ))
        }
        // Only the default public file may be missing: clients get the private
        // key's public half.
        Err(_) if cfg.sha2_public_key.is_none() => {}
        Err(e) => {
            return Err(format!(
                "{PUBLIC_OPT}: cannot read {}: {e}",
                public.display()
            ))
        }
    }
    Ok(Some(Arc::new(keys)))
}

/// The key files a backup copies: those in use that lie directly in the
/// datadir (the generated pair, or files named relative to it), so that a
/// copy started on the backup decrypts what clients holding the source's
/// public key send. Files elsewhere are the operator's, like the options
/// that name them.
pub fn backup_files(cfg: &Config) -> Vec<PathBuf> {
    [
        path(cfg, &cfg.sha2_private_key, "private_key.pem"),
        path(cfg, &cfg.sha2_public_key, "public_key.pem"),
    ]
    .into_iter()
    .filter(|p| p.parent() == Some(cfg.datadir.as_path()) && p.is_file())
    .collect()
}

fn generate(private: &std::path::Path, public: &std::path::Path) -> Result<wire::RsaKeys, String> {
    let (keys, pem) = wire::RsaKeys::generate(2048)?;
    let write = |p: &std::path::Path, text: &str, mode: u32| {
        crate::keyfile::write_atomically(p, text.as_bytes(), mode)
    };
    write(private, &pem, 0o600).map_err(|e| format!("cannot write {}: {e}", private.display()))?;
    write(public, keys.public_pem(), 0o600)
        .map_err(|e| format!("cannot write {}: {e}", public.display()))?;
    eprintln!(
        "strata: generated the caching_sha2_password RSA key pair {} and {}",
        private.display(),
        public.display()
    );
    Ok(keys)
}
