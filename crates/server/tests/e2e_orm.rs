//! Real ORMs against the real `strata` binary, unchanged (issue 11): Python scripts in
//! `tests/orm/` drive SQLAlchemy (PyMySQL) and Django (mysqlclient), and PyMySQL and
//! Connector/Python log in to caching_sha2_password accounts, from a virtualenv
//! the test creates and caches under the target directory (`orm-venv/`, reused while
//! the pinned `requirements-*.txt` are unchanged; `STRATA_ORM_VENV=dir` puts it
//! elsewhere). Each script asserts exact results and exits non-zero on the first
//! failure; its output and the server log's tail are printed then.
//!
//! Without Python 3 with venv and pip (or PyPI), or for Django without what
//! mysqlclient builds with (libmariadb-dev, pkg-config, python3-dev, a C compiler),
//! the tests are skipped, unless `STRATA_ORM_REQUIRE=1` (CI) makes that a failure.
#![allow(clippy::unwrap_used)]

mod common;

use common::Server;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One venv setup at a time (the tests of this file run in parallel).
static VENV: Mutex<()> = Mutex::new(());

fn orm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/orm")
}

/// The venv directory: `STRATA_ORM_VENV`, or `orm-venv` in the target directory.
fn venv_dir() -> PathBuf {
    if let Ok(d) = std::env::var("STRATA_ORM_VENV") {
        return PathBuf::from(d);
    }
    // CARGO_BIN_EXE_strata is <target>/<profile>/strata.
    let bin = Path::new(env!("CARGO_BIN_EXE_strata"));
    bin.parent().and_then(Path::parent).map_or_else(
        || std::env::temp_dir().join("strata-orm-venv"),
        |t| t.join("orm-venv"),
    )
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The venv's python with the packages of `requirements-<part>.txt` installed, or
/// why it cannot be had.
fn python_with(part: &str) -> Result<PathBuf, String> {
    let _guard = VENV.lock().unwrap_or_else(|e| e.into_inner());
    let dir = venv_dir();
    let py = dir.join("bin/python");
    if !py.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        run(Command::new("python3").arg("-m").arg("venv").arg(&dir))
            .map_err(|e| format!("cannot create a venv (python3 with venv needed): {e}"))?;
    }
    let req = orm_dir().join(format!("requirements-{part}.txt"));
    let want = std::fs::read_to_string(&req).map_err(|e| format!("{}: {e}", req.display()))?;
    let stamp = dir.join(format!("installed-{part}.txt"));
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        run(Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&req))
        .map_err(|e| format!("pip install -r {}: {e}", req.display()))?;
        std::fs::write(&stamp, &want).map_err(|e| e.to_string())?;
    }
    Ok(py)
}

/// The python to run `part`'s script with; None (skip) when there is none and
/// STRATA_ORM_REQUIRE is not set.
fn python_or_skip(part: &str) -> Option<PathBuf> {
    match python_with(part) {
        Ok(py) => Some(py),
        Err(e) => {
            assert!(
                std::env::var("STRATA_ORM_REQUIRE").is_err(),
                "the {part} test needs Python (STRATA_ORM_REQUIRE is set): {e}"
            );
            eprintln!("e2e_orm {part}: skipped: {e}");
            None
        }
    }
}

/// Runs `script` against `server` (port as its argument); panics with its output
/// and the server log when it fails or runs past `limit`.
fn run_script(py: &Path, script: &str, server: &Server, limit: Duration) {
    run_script_with(py, script, server, &[], limit)
}

/// [`run_script`] with more arguments after the port.
fn run_script_with(py: &Path, script: &str, server: &Server, args: &[&str], limit: Duration) {
    let out_path = server.root.join(format!("{script}.out"));
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(py)
        .arg(orm_dir().join(script))
        .arg(server.port.to_string())
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    match status {
        Some(st) if st.success() => eprintln!("{output}"),
        Some(st) => panic!("{script} failed ({st}):\n{output}\n{}", server.log_tail(30)),
        None => panic!(
            "{script} ran past {limit:?}:\n{output}\n{}",
            server.log_tail(30)
        ),
    }
}

/// SQLAlchemy 2.0: a schema with one-to-many and many-to-many relationships created,
/// reflected and checked; sessions, joins, eager loads, subqueries (IN, EXISTS
/// through any()/has(), scalar, correlated count, derived), GROUP BY/HAVING,
/// pagination, updates and cascading deletes, every result asserted.
#[test]
fn sqlalchemy_orm_runs_unchanged() {
    let Some(py) = python_or_skip("sqlalchemy") else {
        return;
    };
    let server = Server::start("orm-sqlalchemy");
    run_script(&py, "sqlalchemy_e2e.py", &server, Duration::from_secs(120));
}

/// Django 5.1: `migrate` for admin, auth, contenttypes, sessions and messages, then
/// ORM queries over users, groups and permissions, sessions and the admin log, and
/// admin migrated back to zero and forward again.
#[test]
fn django_migrate_and_orm() {
    let Some(py) = python_or_skip("django") else {
        return;
    };
    let server = Server::start("orm-django");
    run_script(&py, "django_e2e.py", &server, Duration::from_secs(240));
}

/// caching_sha2_password with Python drivers: PyMySQL logging in over plain TCP (RSA
/// key exchange), TLS and the unix socket, full then fast authentication; MySQL's
/// Connector/Python switching between caching_sha2 and native accounts with
/// COM_CHANGE_USER over TLS (full, then fast); wrong passwords and unknown users 1045.
#[test]
fn python_drivers_with_caching_sha2_accounts() {
    let Some(py) = python_or_skip("sha2") else {
        return;
    };
    let dir = common::TempDir::new("orm-sha2");
    let mut args = common::tls_files(&dir.0);
    let sock = dir.0.join("s.sock");
    args.push(format!("--socket={}", sock.display()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_with("orm-sha2", &a);
    let sock = sock.display().to_string();
    run_script_with(
        &py,
        "sha2_e2e.py",
        &server,
        &[&sock],
        Duration::from_secs(120),
    );
}
