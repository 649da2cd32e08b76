//! A sealed directory: the list of its files with sizes and CRC32Cs,
//! written last into the directory (`BACKUP-INFO`), so that a copy
//! interrupted before the seal, or damaged after it, is recognized. Backups
//! (a checkpoint plus the seal) use it; the format is in
//! docs/formats/backup.md.
//!
//! ```text
//! strata-backup 1
//! meta <name> <value>          (any number; values without newlines)
//! file <crc32c hex8> <size> <name>
//! end <crc32c hex8 of every byte before this line>
//! ```
use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// The seal's file name.
pub const SEAL_FILE: &str = "BACKUP-INFO";
const MAGIC: &str = "strata-backup 1";

/// A directory's seal, as read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seal {
    /// `meta` lines, in order.
    pub meta: Vec<(String, String)>,
    /// (name, size, crc32c) of each file.
    pub files: Vec<(String, u64, u32)>,
}

impl Seal {
    /// A `meta` value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// Total bytes of the files.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.1).sum()
    }
}

/// CRC32C and size of a file, read in 1 MiB pieces.
pub fn file_crc(path: &Path) -> Result<(u64, u32)> {
    let mut f = std::fs::File::open(path).map_err(ioe(path))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut size, mut crc) = (0u64, 0u32);
    loop {
        let n = f.read(&mut buf).map_err(ioe(path))?;
        if n == 0 {
            return Ok((size, crc));
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        size += n as u64;
    }
}

fn ioe(p: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(p.display().to_string(), e)
}

fn bad(dir: &Path, what: impl std::fmt::Display) -> Error {
    Error::Corruption {
        file: dir.join(SEAL_FILE).display().to_string(),
        offset: 0,
        what: what.to_string(),
    }
}

/// Seals `dir`: checksums every file in it (a subdirectory is an error)
/// and writes the seal, synced, with `meta` first.
pub fn write(dir: &Path, meta: &[(&str, String)]) -> Result<Seal> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(ioe(dir))? {
        let e = e.map_err(ioe(dir))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.file_type().map_err(ioe(dir))?.is_file() || name.contains(char::is_whitespace) {
            return Err(Error::InvalidArgument(format!(
                "{}: cannot seal {name}: not a plain file",
                dir.display()
            )));
        }
        if name != SEAL_FILE {
            names.push(name);
        }
    }
    names.sort();
    let mut seal = Seal::default();
    let mut text = format!("{MAGIC}\n");
    for (k, v) in meta {
        let v = v.replace(['\n', '\r'], " ");
        text.push_str(&format!("meta {k} {v}\n"));
        seal.meta.push((k.to_string(), v));
    }
    for name in names {
        let (size, crc) = file_crc(&dir.join(&name))?;
        text.push_str(&format!("file {crc:08x} {size} {name}\n"));
        seal.files.push((name, size, crc));
    }
    text.push_str(&format!("end {:08x}\n", crc32c::crc32c(text.as_bytes())));
    let tmp = dir.join(format!("{SEAL_FILE}.tmp"));
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(ioe(&tmp))?;
        f.write_all(text.as_bytes()).map_err(ioe(&tmp))?;
        f.sync_all().map_err(ioe(&tmp))?;
    }
    std::fs::rename(&tmp, dir.join(SEAL_FILE)).map_err(ioe(&tmp))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ioe(dir))?;
    Ok(seal)
}

/// Reads the seal of `dir` and checks it: the seal's own checksum, every
/// listed file's size and CRC32C, and no file in the directory that the
/// seal does not list.
pub fn verify(dir: &Path) -> Result<Seal> {
    let path = dir.join(SEAL_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(
                dir,
                "missing: not a finished backup (interrupted, or not a backup)",
            ))
        }
        Err(e) => return Err(Error::io(path.display().to_string(), e)),
    };
    let body_end = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let (body, last) = text.split_at(body_end);
    let want = last
        .trim_end()
        .strip_prefix("end ")
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or_else(|| bad(dir, "no end line: truncated"))?;
    if crc32c::crc32c(body.as_bytes()) != want {
        return Err(bad(dir, "checksum mismatch"));
    }
    let mut lines = body.lines();
    if lines.next() != Some(MAGIC) {
        return Err(bad(dir, format!("not a '{MAGIC}' file")));
    }
    let mut seal = Seal::default();
    for l in lines {
        let mut p = l.splitn(4, ' ');
        match (p.next(), p.next(), p.next(), p.next()) {
            (Some("meta"), Some(k), v, rest) => {
                let v = [v, rest].iter().flatten().copied().collect::<Vec<_>>();
                seal.meta.push((k.to_string(), v.join(" ")));
            }
            (Some("file"), Some(crc), Some(size), Some(name)) => {
                let crc = u32::from_str_radix(crc, 16).map_err(|_| bad(dir, l))?;
                let size = size.parse::<u64>().map_err(|_| bad(dir, l))?;
                // A plain file name inside the backup, listed once: a name
                // with a separator or `..` would make restore read or write
                // outside the directories it was given.
                let plain = matches!(
                    Path::new(name).components().collect::<Vec<_>>()[..],
                    [std::path::Component::Normal(_)]
                ) && !name.contains(['/', '\\']);
                if !plain || seal.files.iter().any(|(n, _, _)| n == name) {
                    return Err(bad(dir, format!("bad file name in '{l}'")));
                }
                seal.files.push((name.to_string(), size, crc));
            }
            _ => return Err(bad(dir, format!("bad line '{l}'"))),
        }
    }
    for (name, size, crc) in &seal.files {
        let p = dir.join(name);
        let (s, c) = file_crc(&p).map_err(|e| bad(dir, format!("{name}: {e}")))?;
        if s != *size {
            return Err(Error::corruption(
                p.display().to_string(),
                s,
                format!("{s} bytes, the backup had {size}"),
            ));
        }
        if c != *crc {
            return Err(Error::corruption(
                p.display().to_string(),
                0,
                "CRC32C differs from the backup's",
            ));
        }
    }
    for e in std::fs::read_dir(dir).map_err(ioe(dir))? {
        let name = e
            .map_err(ioe(dir))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name != SEAL_FILE && !seal.files.iter().any(|f| f.0 == name) {
            return Err(bad(
                dir,
                format!("{name} is not part of the backup (was a server started on it?)"),
            ));
        }
    }
    Ok(seal)
}
