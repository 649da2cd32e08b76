//! A full disk (a small tmpfs) makes the server refuse writes with a clear error, keep
//! serving reads, and write again by itself once space is freed, without a restart; a
//! server started on a full disk starts read-only and resumes the same way (issue 14).
//! Needs root to mount a tmpfs; prints why and passes without it.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q_i64, Server};
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = testkit::unique_temp_path("e2e-diskfull-mnt");
        std::fs::create_dir_all(&dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("e2e_diskfull: cannot mount a tmpfs (not root?): skipped");
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Fills the file system holding `p` with a file of zeros.
fn fill(p: &Path) {
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=1000"])
        .arg(format!("of={}", p.display()))
        .stderr(std::process::Stdio::null())
        .status();
}

fn wait_writable(c: &mut mysql::Conn, sql: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match c.query_drop(sql) {
            Ok(()) => return,
            Err(e) => assert!(Instant::now() < deadline, "writes did not resume: {e}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_full_disk_is_survived_without_a_restart() {
    let Some(fs) = Tmpfs::mount("48m") else {
        return;
    };
    let data = fs.0.join("data");
    let mut srv = Server::start_with(
        "diskfull",
        &[
            &format!("--datadir={}", data.display()),
            "--write-buffer-size=1M",
        ],
    );
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(
        &mut c,
        "CREATE TABLE d.t (id INT PRIMARY KEY, pad VARCHAR(1000))",
    );
    let filler = fs.0.join("filler");
    fill(&filler);
    // Writes fail once the disk is full (the first few may still fit).
    let mut id = 0;
    let err = loop {
        id += 1;
        match c.query_drop(format!("INSERT INTO d.t VALUES ({id}, REPEAT('x', 1000))")) {
            Ok(()) => assert!(id < 100_000, "the disk never filled"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        err.to_lowercase().contains("space") || err.contains("read-only"),
        "{err}"
    );
    let acknowledged = id - 1;
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM d.t"), acknowledged);
    // Space is freed: writes resume by themselves.
    std::fs::remove_file(&filler).unwrap();
    wait_writable(&mut c, "INSERT INTO d.t VALUES (-1, 'after')");
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM d.t"), acknowledged + 1);
    // A restart on a full disk: read-only, then writable again once space is freed.
    srv.kill9();
    fill(&filler);
    srv.restart();
    let mut c = srv.conn();
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM d.t"), acknowledged + 1);
    assert!(c.query_drop("INSERT INTO d.t VALUES (-2, 'full')").is_err());
    std::fs::remove_file(&filler).unwrap();
    wait_writable(&mut c, "INSERT INTO d.t VALUES (-2, 'free')");
    assert_eq!(q_i64(&mut c, "SELECT COUNT(*) FROM d.t"), acknowledged + 2);
    drop(c);
    srv.kill9();
}
