//! BACKUP DATABASE TO 'dir': an online backup of the whole instance (every
//! database, the catalog and the accounts, which all live in the engine)
//! while sessions keep reading and writing. The engine's checkpoint
//! (`lsm::Db::checkpoint`) takes a consistent cut with no write in flight,
//! hard-links the tables (copies them on another file system) and copies
//! the WALs; then `lsm::seal` lists every file with its CRC32C in
//! BACKUP-INFO, written last. A directory without that file is an
//! unfinished backup, which `strata-tool restore` refuses. See
//! docs/BACKUP.md.
//!
//! Files of the datadir the server keeps outside the engine that a copy
//! needs to behave as its source (caching_sha2_password's RSA key pair and
//! the unknown users' decoy key: crates/server) are copied into the backup
//! before the seal (`set_extra_files`), so they are sealed and restored
//! with the engine's.
//!
//! The directory must be absolute, must not exist or be empty (1086), must
//! be inside secure_file_priv (1290) and outside the datadir (1210); the
//! statement needs RELOAD (`account/check.rs`). MariaDB's BACKUP STAGE and
//! BACKUP LOCK are refused with 1235.
use crate::error::{Result, SqlError};
use crate::result::{rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::{MaintStmt, Stmt};
use sqlparser::tokenizer::Token;
use std::path::{Path, PathBuf};

/// Parses `BACKUP DATABASE TO 'dir'` (sqlparser has no BACKUP).
pub fn parse(sql: &str) -> Result<Stmt> {
    let toks: Vec<Token> = crate::parse::tokens_at(sql)
        .ok_or_else(|| SqlError::parse("bad BACKUP statement"))?
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF | Token::SemiColon))
        .collect();
    let word = |i: usize| match toks.get(i) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    match word(1).as_deref() {
        Some("STAGE" | "LOCK") => {
            return Err(SqlError::unsupported("BACKUP STAGE and BACKUP LOCK"))
        }
        Some("DATABASE") => {}
        _ => {
            return Err(SqlError::parse(
                "BACKUP: expected BACKUP DATABASE TO 'directory'",
            ))
        }
    }
    match (word(2).as_deref(), toks.get(3), toks.len()) {
        (Some("TO"), Some(Token::SingleQuotedString(d) | Token::DoubleQuotedString(d)), 4) => {
            Ok(Stmt::Maint(MaintStmt::Backup(d.clone())))
        }
        _ => Err(SqlError::parse("BACKUP DATABASE: expected TO 'directory'")),
    }
}

/// The backup's directory, checked: absolute, inside secure_file_priv,
/// outside the datadir, absent or empty.
fn target(s: &Session, dir: &str) -> Result<PathBuf> {
    let wrong = || SqlError::wrong_arguments("BACKUP DATABASE");
    let path = Path::new(dir);
    if dir.is_empty() || !path.is_absolute() {
        return Err(wrong());
    }
    let path = std::path::absolute(path).map_err(|_| wrong())?;
    // Its parent must exist: the backup makes only the last component.
    let parent = path
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .ok_or_else(|| {
            SqlError::cant_get_stat(
                path.parent().unwrap_or(&path).display(),
                2,
                "No such file or directory",
            )
        })?;
    let name = path.file_name().ok_or_else(wrong)?;
    let full = parent.join(name);
    let full = std::fs::canonicalize(&full).unwrap_or(full);
    if let Some(root) = crate::load::secure_root(s)? {
        if !full.starts_with(&root) {
            return Err(SqlError::secure_file_priv());
        }
    }
    let data = s
        .get_var("datadir", true)
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .and_then(|d| std::fs::canonicalize(d).ok());
    if data.is_some_and(|d| full.starts_with(&d) || d.starts_with(&full)) {
        return Err(wrong());
    }
    match std::fs::read_dir(&full) {
        Ok(mut entries) => match entries.next() {
            None => Ok(full),
            Some(_) => Err(SqlError::file_exists(full.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(full),
        Err(_) => Err(SqlError::file_exists(full.display())),
    }
}

/// Runs BACKUP DATABASE: one row with the backup's directory, the sequence
/// number of its cut, when it began, and its files and bytes.
pub fn run(s: &mut Session, dir: &str, sink: &mut dyn ResultSink) -> Result<Outcome> {
    // One backup at a time: a second one into the same directory then
    // finds it not empty (1086) before it writes or removes anything, and
    // its cleanup below can never delete the first one's files.
    static BACKUPS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BACKUPS.lock().unwrap_or_else(|p| p.into_inner());
    let full = target(s, dir)?;
    let existed = full.exists();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let r = take(s, &full, started);
    s.proc.set_state("executing");
    let (info, seal) = match r {
        Ok(x) => x,
        Err(e) => {
            // Leave no half backup behind (it would be refused anyway).
            if existed {
                if let Ok(rd) = std::fs::read_dir(&full) {
                    for e in rd.flatten() {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            } else {
                let _ = std::fs::remove_dir_all(&full);
            }
            return Err(e);
        }
    };
    let time = crate::slowlog::iso_time(started);
    rows(
        sink,
        &[
            "Directory",
            "Sequence",
            "Started",
            "Files",
            "Bytes",
            "Linked",
        ],
        vec![vec![
            text(full.display().to_string()),
            text(info.sequence.to_string()),
            text(time),
            text((seal.files.len() + 1).to_string()),
            text(seal.bytes().to_string()),
            text(info.linked.to_string()),
        ]],
    )
}

/// Names the files of the datadir outside the engine that every later
/// backup copies (each under its own name; a file missing at backup time
/// fails the backup). The server calls it at startup with its key files.
pub fn set_extra_files(inst: &crate::Instance, files: Vec<PathBuf>) {
    *inst.backup_extra.lock().unwrap_or_else(|p| p.into_inner()) = files;
}

/// Copies the extra files (`set_extra_files`) into the backup `dir`,
/// keeping their permissions (a private key stays 0600) and syncing each.
fn copy_extra(s: &Session, dir: &Path) -> Result<()> {
    let files = s
        .inst
        .backup_extra
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for f in files {
        let name = f.file_name().ok_or_else(|| {
            SqlError::internal(format!("backup: no file name in {}", f.display()))
        })?;
        let to = dir.join(name);
        let fail = |e: std::io::Error| {
            SqlError::internal(format!(
                "backup: cannot copy {} to {}: {e}",
                f.display(),
                to.display()
            ))
        };
        if to.exists() {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "the backup has a file of that name",
            )));
        }
        std::fs::copy(&f, &to).map_err(fail)?;
        std::fs::File::open(&to)
            .and_then(|c| c.sync_all())
            .map_err(fail)?;
    }
    Ok(())
}

fn take(s: &Session, full: &Path, started: i64) -> Result<(lsm::CheckpointInfo, lsm::seal::Seal)> {
    s.proc.set_state("Backing up: engine files");
    let info = s.inst.txdb.db().checkpoint(full)?;
    copy_extra(s, full)?;
    test_pause(s, full);
    s.proc.set_state("Backing up: checksums");
    let source = s
        .get_var("datadir", true)
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .unwrap_or_default();
    let seal = lsm::seal::write(
        full,
        &[
            ("sequence", info.sequence.to_string()),
            ("started", crate::slowlog::iso_time(started)),
            ("source", source),
            ("version", env!("CARGO_PKG_VERSION").to_string()),
        ],
    )?;
    Ok((info, seal))
}

/// Test hook of debug builds: a backup whose directory contains
/// `STRATA_TEST_BACKUP_PAUSE` (when set) waits 5 s between the engine
/// files and the seal, so a test can kill the server mid-backup.
fn test_pause(s: &Session, full: &Path) {
    #[cfg(debug_assertions)]
    if let Ok(m) = std::env::var("STRATA_TEST_BACKUP_PAUSE") {
        if !m.is_empty() && full.display().to_string().contains(&m) {
            s.proc
                .set_state("Backing up: paused by STRATA_TEST_BACKUP_PAUSE");
            std::thread::sleep(std::time::Duration::from_secs(5));
        }
    }
    let _ = (s, full);
}
