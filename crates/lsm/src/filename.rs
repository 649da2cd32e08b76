//! Names of the files in a database directory:
//! `000042.log` (WAL), `000043.sst` (table), `MANIFEST-000007`, `CURRENT`
//! (names the live manifest), `LOCK`, and `*.tmp` while being written.
use std::path::{Path, PathBuf};

/// What a file in the directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A write-ahead log.
    Wal(u64),
    /// A table.
    Table(u64),
    /// A manifest.
    Manifest(u64),
    /// CURRENT.
    Current,
    /// LOCK.
    Lock,
    /// A temporary file.
    Temp,
}

/// `dir/000042.log`
pub fn wal(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.log"))
}
/// `dir/000042.sst`
pub fn table(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.sst"))
}
/// `dir/MANIFEST-000042`
pub fn manifest(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("MANIFEST-{n:06}"))
}
/// `dir/CURRENT`
pub fn current(dir: &Path) -> PathBuf {
    dir.join("CURRENT")
}
/// `dir/LOCK`
pub fn lock(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}

/// Classifies a file name.
pub fn parse(name: &str) -> Option<FileKind> {
    if name == "CURRENT" {
        return Some(FileKind::Current);
    }
    if name == "LOCK" {
        return Some(FileKind::Lock);
    }
    if name.ends_with(".tmp") {
        return Some(FileKind::Temp);
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return n.parse().ok().map(FileKind::Manifest);
    }
    if let Some(n) = name.strip_suffix(".log") {
        return n.parse().ok().map(FileKind::Wal);
    }
    if let Some(n) = name.strip_suffix(".sst") {
        return n.parse().ok().map(FileKind::Table);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Path::new("/d");
        assert_eq!(
            parse(wal(d, 7).file_name().unwrap().to_str().unwrap()),
            Some(FileKind::Wal(7))
        );
        assert_eq!(
            parse(table(d, 8).file_name().unwrap().to_str().unwrap()),
            Some(FileKind::Table(8))
        );
        assert_eq!(parse("MANIFEST-000009"), Some(FileKind::Manifest(9)));
        assert_eq!(parse("CURRENT"), Some(FileKind::Current));
        assert_eq!(parse("junk"), None);
    }
}
