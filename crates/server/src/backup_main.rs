//! The `strata-backup` binary: `strata-backup backup` and `strata-backup
//! restore` (docs/BACKUP.md).
//!
//! backup: connects to a running server over the MySQL protocol (the
//! `mysql` crate) and runs `BACKUP DATABASE TO 'dir'`; the server writes the
//! backup (the directory is on the server's host).
//!
//! restore: offline. Checks the backup's seal (BACKUP-INFO: every file's
//! size and CRC32C, no file missing or extra; an interrupted backup has no
//! seal and is refused), copies the files into a new data directory (which
//! must not exist or be empty), checks each copy's CRC32C, then opens the
//! copy with the engine, compactions off (manifest and WAL records checked
//! as it recovers) and reads every block of every table
//! (`Db::verify_checksums`).
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage:
  strata-backup backup [--host=H] [--port=P] [--socket=S] [--user=U] [--password=P | --password-file=F] DIR
  strata-backup restore BACKUP_DIR NEW_DATADIR";

/// `--name=value` options and the remaining arguments.
fn split_args(args: &[String]) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let (mut opts, mut rest) = (Vec::new(), Vec::new());
    for a in args {
        match a.strip_prefix("--") {
            Some(o) => {
                let (k, v) = o
                    .split_once('=')
                    .ok_or_else(|| format!("option --{o} needs =value\n{USAGE}"))?;
                opts.push((k.to_string(), v.to_string()));
            }
            None => rest.push(a.clone()),
        }
    }
    Ok((opts, rest))
}

/// A string literal for SQL text.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `strata-backup backup ...`: prints the server's answer as `name: value` lines.
fn backup(args: &[String]) -> Result<(), String> {
    let (opts, rest) = split_args(args)?;
    let [dir] = rest.as_slice() else {
        return Err(USAGE.into());
    };
    let dir = std::path::absolute(dir).map_err(|e| format!("{dir}: {e}"))?;
    let mut b = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(3306)
        .user(Some("root"))
        .prefer_socket(false);
    for (k, v) in &opts {
        b = match k.as_str() {
            "host" => b.ip_or_hostname(Some(v.clone())),
            "port" => b.tcp_port(v.parse().map_err(|_| format!("bad --port={v}"))?),
            "socket" => b.socket(Some(v.clone())).prefer_socket(true),
            "user" => b.user(Some(v.clone())),
            "password" => b.pass(Some(v.clone())),
            "password-file" => {
                let p = std::fs::read_to_string(v).map_err(|e| format!("{v}: {e}"))?;
                b.pass(Some(p.trim_end_matches(['\n', '\r']).to_string()))
            }
            other => return Err(format!("unknown option --{other}\n{USAGE}")),
        };
    }
    let mut c = mysql::Conn::new(b).map_err(|e| format!("connect: {e}"))?;
    let sql = format!("BACKUP DATABASE TO {}", quote(&dir.display().to_string()));
    let r = c.query_iter(sql).map_err(|e| e.to_string())?;
    let cols: Vec<String> = r
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    for row in r {
        let row = row.map_err(|e| e.to_string())?;
        for (i, name) in cols.iter().enumerate() {
            let v: Option<String> = row.get(i);
            println!("{name}: {}", v.unwrap_or_default());
        }
    }
    Ok(())
}

/// `strata-backup restore BACKUP NEW_DATADIR`.
fn restore(args: &[String]) -> Result<(), String> {
    let [from, to] = args else {
        return Err(USAGE.into());
    };
    let (from, to) = (PathBuf::from(from), PathBuf::from(to));
    let seal = lsm::seal::verify(&from).map_err(|e| format!("refusing {}: {e}", from.display()))?;
    if std::fs::read_dir(&to).is_ok_and(|mut d| d.next().is_some()) {
        return Err(format!(
            "refusing: {} exists and is not empty",
            to.display()
        ));
    }
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&to)
            .map_err(|e| format!("{}: {e}", to.display()))?;
    }
    for (name, size, crc) in &seal.files {
        let dst = to.join(name);
        copy_synced(&from.join(name), &dst)?;
        let got = lsm::seal::file_crc(&dst).map_err(|e| e.to_string())?;
        if got != (*size, *crc) {
            return Err(format!(
                "{}: the copy differs from the backup",
                dst.display()
            ));
        }
    }
    std::fs::File::open(&to)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("{}: {e}", to.display()))?;
    let tables = verify_engine(&to).map_err(|e| {
        format!(
            "{} does not open as a database: {e} (the restored files are left there)",
            to.display()
        )
    })?;
    println!(
        "restored {} files, {} bytes (sequence {}, started {}) into {}; {tables} tables verified",
        seal.files.len(),
        seal.bytes(),
        seal.get("sequence").unwrap_or("?"),
        seal.get("started").unwrap_or("?"),
        to.display()
    );
    Ok(())
}

fn copy_synced(src: &Path, dst: &Path) -> Result<(), String> {
    let e = |e: std::io::Error| format!("copy {} to {}: {e}", src.display(), dst.display());
    std::fs::copy(src, dst).map_err(e)?;
    std::fs::File::open(dst)
        .and_then(|f| f.sync_all())
        .map_err(e)
}

/// Opens the database (recovery reads the manifest and WALs, checking
/// their CRCs) and reads every table block; returns the tables read. The
/// copy's tables stay as they are: no compaction runs (the options the
/// server ran with, `--default-cf-options` and all, are not known here, and
/// under other level targets or level-0 triggers the copy would look over
/// target and be rewritten, in the wrong compression). The WALs replayed are
/// flushed to level 0 with the server's default compression.
fn verify_engine(dir: &Path) -> lsm::Result<u64> {
    let opts = lsm::Options {
        create_if_missing: false,
        disable_auto_compactions: true,
        default_cf: sql::cf_options(&sql::InstanceOptions::default()),
        ..Default::default()
    };
    let db = lsm::Db::open(dir, opts)?;
    let n = db.verify_checksums()?;
    db.close()?;
    Ok(n)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(|s| s.as_str()) {
        Some("backup") => backup(&args[1..]),
        Some("restore") => restore(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    if let Err(e) = r {
        eprintln!("strata-backup: {e}");
        std::process::exit(1);
    }
}
