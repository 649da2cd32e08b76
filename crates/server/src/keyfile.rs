//! Secret files the server keeps in its datadir (the caching_sha2_password
//! RSA key pair, the decoy key): written atomically, and checked when read
//! for a mode or an owner that lets other users read or replace them.
use std::io::Write;
use std::path::Path;

/// The process's effective user id (the owner of the files it creates).
/// Not /proc/self's owner: a process that is not dumpable (a setuid start,
/// prctl) sees /proc/self owned by root.
#[allow(unsafe_code)]
pub fn euid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory, cannot fail.
    unsafe { libc::geteuid() }
}

/// A warning when the file at `p` can be read by its group or by anyone
/// (anyone who can read a key can use it), written by them, or belongs to
/// another user than the server's (who can replace it); None when it is
/// safe or cannot be inspected.
pub fn unsafe_key_file(p: &Path) -> Option<String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let md = std::fs::metadata(p).ok()?;
    let mode = md.permissions().mode() & 0o777;
    if md.uid() != euid() {
        return Some(format!(
            "{} belongs to another user (uid {}) than the server's; chown it",
            p.display(),
            md.uid()
        ));
    }
    let who = match (mode & 0o044 != 0, mode & 0o022 != 0) {
        (true, true) => "readable and writable",
        (true, false) => "readable",
        (false, true) => "writable",
        (false, false) => return None,
    };
    Some(format!(
        "{} is {who} by its group or by others (mode {mode:o}); chmod 600 it",
        p.display(),
    ))
}

/// Writes `bytes` to `path` (file mode `mode`) all or nothing: into
/// `<path>.tmp` (a stale one is replaced), synced, renamed over `path`, and
/// the directory synced; a crash leaves the old file or none, never part of
/// one.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let r = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn writes_whole_files_with_their_mode_and_warns_about_open_ones() {
        let dir = testkit::TempDir::new("keyfile");
        let p = dir.path().join("k");
        // A stale temporary file (a crash) is replaced, never renamed as is.
        std::fs::write(dir.path().join("k.tmp"), b"par").unwrap();
        write_atomically(&p, b"secret", 0o600).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"secret");
        assert!(!dir.path().join("k.tmp").exists());
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.permissions().mode() & 0o777, 0o600);
        assert_eq!(md.uid(), euid());
        assert_eq!(unsafe_key_file(&p), None);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let w = unsafe_key_file(&p).unwrap();
        assert!(w.contains("readable by its group"), "{w}");
        // A second write replaces the file whole.
        write_atomically(&p, b"other", 0o600).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"other");
    }
}
