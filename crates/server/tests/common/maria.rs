//! A private MariaDB (Debian's mariadb-server, InnoDB) started by a test: its own
//! datadir and unix socket, no network, killed and removed on drop. None when
//! `/usr/sbin/mariadbd` is not installed.
use mysql::{Conn, OptsBuilder};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MARIADBD: &str = "/usr/sbin/mariadbd";

/// Set to 1 to skip the tests that need MariaDB's programs when they are
/// not installed (without it such a test fails: it must not pass
/// vacuously; CI installs mariadb-server and mariadb-client).
pub const SKIP_ENV: &str = "STRATA_SKIP_MARIADB";

/// Whether program `bin` (a path, or a name on PATH) is there. When it is
/// not, `test` fails with a message naming it unless `SKIP_ENV` is 1 (then
/// false: the caller returns, skipped).
pub fn require(bin: &str, test: &str) -> bool {
    let there = Path::new(bin).exists()
        || Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if there {
        return true;
    }
    if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") {
        eprintln!("{test}: {bin} is not installed: skipped ({SKIP_ENV}=1)");
        return false;
    }
    panic!(
        "{test} needs {bin}, which is not installed (Debian: apt-get install mariadb-server \
         mariadb-client); set {SKIP_ENV}=1 to skip it"
    );
}

pub struct MariaDb {
    /// The unix socket it listens on.
    child: Child,
    dir: PathBuf,
    pub sock: PathBuf,
}

impl MariaDb {
    pub fn start() -> Option<MariaDb> {
        MariaDb::start_with("")
    }

    /// Starts one with extra `my.cnf` lines (e.g. `server-id=2`).
    pub fn start_with(extra_cnf: &str) -> Option<MariaDb> {
        if !Path::new(MARIADBD).exists() {
            return None;
        }
        let dir = testkit::unique_temp_path("diff-mariadb");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let sock = dir.join("mysqld.sock");
        let cnf = dir.join("my.cnf");
        std::fs::write(
            &cnf,
            format!(
                "[mariadbd]\nuser=root\ndatadir={d}/data\nsocket={s}\npid-file={d}/mysqld.pid\n\
                 skip-networking\ntmpdir={d}\nlog-error={d}/error.log\ninnodb_buffer_pool_size=32M\n\
                 innodb_log_file_size=16M\nskip-log-bin\nperformance_schema=OFF\n\
                 character-set-server=utf8mb4\ncollation-server=utf8mb4_general_ci\n{x}\n",
                d = dir.display(),
                s = sock.display(),
                x = extra_cnf,
            ),
        )
        .unwrap();
        let ok = Command::new("mariadb-install-db")
            .arg(format!("--defaults-file={}", cnf.display()))
            .args([
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ])
            .arg(format!("--datadir={}/data", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mariadb-install-db failed in {}", dir.display());
        let child = Command::new(MARIADBD)
            .arg(format!("--defaults-file={}", cnf.display()))
            .arg("--user=root")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let m = MariaDb { child, dir, sock };
        let deadline = Instant::now() + Duration::from_secs(60);
        while m.conn().is_none() {
            assert!(
                Instant::now() < deadline,
                "MariaDB did not start: {}",
                std::fs::read_to_string(m.dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(m)
    }

    /// The server's error log (a replica's errors are there).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    pub fn conn(&self) -> Option<Conn> {
        Conn::new(
            OptsBuilder::new()
                .socket(Some(self.sock.display().to_string()))
                .user(Some("root")),
        )
        .ok()
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
