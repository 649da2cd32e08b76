//! Hot backup and restore against the real binaries (docs/BACKUP.md):
//! writers commit multi-row transactions (recording each acknowledged
//! commit) while sysbench write_only runs on other tables and the memtables
//! flush; a backup is taken mid-load through SQL and another through the
//! `strata-backup` client, both restored with `strata-backup restore`, and
//! a server started on each copy (and one started straight on a backup
//! directory) must hold, for every writer, exactly a prefix of its commits
//! that includes every commit acknowledged before the backup began: every
//! row with its value, no transaction half-applied, CHECK TABLE OK,
//! secondary indexes equal to the primary. Also: the refusals (privilege,
//! secure_file_priv, non-empty or relative target), the accounts in the
//! copy, a damaged backup refused by restore, a kill -9 mid-backup
//! leaving the source intact and the partial backup refused, and a restore
//! leaving a multi-level backup's tables exactly as they were (no compaction
//! while it verifies the copy).
mod common;

use common::{exec, expect_err, q, q_i64, Rng, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WRITERS: i64 = 4;
/// acct rows per writer: writer w owns ids w*PER .. w*PER+PER-1.
const PER: i64 = 50;

fn tool() -> &'static str {
    env!("CARGO_BIN_EXE_strata-backup")
}

/// One acknowledged commit: txn `t` set acct `a` to (t, 't<t>') and acct
/// `b` to t, and inserted ledger rows (t, 0..3).
#[derive(Clone, Copy)]
struct Commit {
    t: i64,
    a: i64,
    b: i64,
    at: Instant,
}

fn setup(c: &mut Conn) {
    exec(c, "CREATE DATABASE bk");
    exec(c, "USE bk");
    exec(
        c,
        "CREATE TABLE acct (id INT PRIMARY KEY, v BIGINT NOT NULL, tag VARCHAR(24) NOT NULL, KEY kv (v), KEY ktag (tag))",
    );
    exec(
        c,
        "CREATE TABLE ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, txn BIGINT NOT NULL, part INT NOT NULL, val BIGINT NOT NULL, UNIQUE KEY ut (txn, part))",
    );
    let rows: Vec<String> = (0..WRITERS * PER)
        .map(|i| format!("({i}, 0, 'init')"))
        .collect();
    exec(c, &format!("INSERT INTO acct VALUES {}", rows.join(",")));
}

/// Commits transactions until `stop`; returns every acknowledged one.
fn writer(srv_port: u16, w: i64, seed: u64, stop: Arc<AtomicBool>) -> Vec<Commit> {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(srv_port)
        .user(Some("root"))
        .prefer_socket(false)
        .db_name(Some("bk"));
    let mut c = Conn::new(opts).expect("writer connects");
    let mut rng = Rng::new(seed ^ (w as u64 + 1));
    let mut done = Vec::new();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let t = (w + 1) * 1_000_000 + n;
        let a = w * PER + rng.below(PER as u64) as i64;
        let b = w * PER + (a - w * PER + 1 + rng.below(PER as u64 - 1) as i64) % PER;
        exec(&mut c, "START TRANSACTION");
        exec(
            &mut c,
            &format!("UPDATE acct SET v = {t}, tag = 't{t}' WHERE id = {a}"),
        );
        exec(&mut c, &format!("UPDATE acct SET v = {t} WHERE id = {b}"));
        exec(
            &mut c,
            &format!(
                "INSERT INTO ledger (txn, part, val) VALUES ({t}, 0, {}), ({t}, 1, {}), ({t}, 2, {})",
                t * 3,
                t * 3 + 1,
                t * 3 + 2
            ),
        );
        exec(&mut c, "COMMIT");
        done.push(Commit {
            t,
            a,
            b,
            at: Instant::now(),
        });
    }
    done
}

/// Checks a server running on a copy taken at `start` against the commits.
fn verify_copy(srv: &Server, commits: &[Vec<Commit>], start: Instant, what: &str) {
    let mut c = srv.conn_db("bk");
    for t in ["acct", "ledger"] {
        assert_eq!(
            q(&mut c, &format!("CHECK TABLE {t}")),
            vec![format!("bk.{t}|check|status|OK")],
            "{what}: CHECK TABLE {t}"
        );
    }
    // Secondary indexes against the primary key, row for row.
    let by_pk = q(
        &mut c,
        "SELECT id, v, tag FROM acct IGNORE INDEX (kv, ktag) ORDER BY id",
    );
    let by_v = q(
        &mut c,
        "SELECT id, v, tag FROM acct FORCE INDEX (kv) WHERE v >= 0 ORDER BY id",
    );
    let by_tag = q(
        &mut c,
        "SELECT id, v, tag FROM acct FORCE INDEX (ktag) WHERE tag >= '' ORDER BY id",
    );
    assert_eq!(by_pk.len() as i64, WRITERS * PER, "{what}");
    assert_eq!(by_pk, by_v, "{what}: index kv differs from the rows");
    assert_eq!(by_pk, by_tag, "{what}: index ktag differs from the rows");
    let ledger_pk = q(
        &mut c,
        "SELECT txn, part, val FROM ledger ORDER BY txn, part",
    );
    let ledger_ut = q(
        &mut c,
        "SELECT txn, part, val FROM ledger FORCE INDEX (ut) WHERE txn >= 0 ORDER BY txn, part",
    );
    assert_eq!(
        ledger_pk, ledger_ut,
        "{what}: index ut differs from the rows"
    );
    // The ledger: whole transactions only.
    let mut txns: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for r in &ledger_pk {
        let f: Vec<i64> = r.split('|').map(|x| x.parse().unwrap()).collect();
        txns.entry(f[0]).or_default().push((f[1], f[2]));
    }
    for (t, parts) in &txns {
        assert_eq!(
            parts,
            &vec![(0, t * 3), (1, t * 3 + 1), (2, t * 3 + 2)],
            "{what}: transaction {t} half applied"
        );
    }
    // Per writer: the copy holds a prefix of its commits, covering every
    // commit acknowledged before the backup began.
    let mut expect: HashMap<i64, (i64, String)> = (0..WRITERS * PER)
        .map(|i| (i, (0, "init".to_string())))
        .collect();
    let mut total = 0;
    for (w, list) in commits.iter().enumerate() {
        let in_copy = list.iter().take_while(|c| txns.contains_key(&c.t)).count();
        let acked_before = list.iter().filter(|c| c.at < start).count();
        assert!(
            in_copy >= acked_before,
            "{what}: writer {w}: {acked_before} commits acknowledged before the backup, the copy has {in_copy}"
        );
        for c in &list[in_copy..] {
            assert!(
                !txns.contains_key(&c.t),
                "{what}: writer {w}: the copy has {} but not an earlier commit (not a prefix)",
                c.t
            );
        }
        for c in &list[..in_copy] {
            expect.insert(c.a, (c.t, format!("t{}", c.t)));
            expect.get_mut(&c.b).unwrap().0 = c.t;
        }
        total += in_copy;
    }
    assert_eq!(txns.len(), total, "{what}: transactions nobody committed");
    for r in &by_pk {
        let f: Vec<&str> = r.split('|').collect();
        let id: i64 = f[0].parse().unwrap();
        let (v, tag) = &expect[&id];
        assert_eq!(
            (f[1].parse::<i64>().unwrap(), f[2]),
            (*v, tag.as_str()),
            "{what}: acct row {id}"
        );
    }
    eprintln!("{what}: {total} transactions in the copy");
}

fn run_tool(args: &[&str]) -> (bool, String) {
    let o = Command::new(tool())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run strata-backup");
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The sysbench load beside the writers (when sysbench is installed).
fn sysbench_write_only(port: u16, secs: u32, cmd: &str) -> Option<std::process::Child> {
    Command::new("sysbench")
        .arg("oltp_write_only")
        .arg("--db-driver=mysql")
        .arg("--mysql-host=127.0.0.1")
        .arg(format!("--mysql-port={port}"))
        .arg("--mysql-user=root")
        .arg("--mysql-password=")
        .arg("--mysql-db=sbtest")
        .arg("--tables=1")
        .arg("--table-size=2000")
        .arg("--threads=2")
        .arg(format!("--time={secs}"))
        .arg("--report-interval=0")
        .arg("--mysql-ignore-errors=1213,1205")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

fn check_sbtest(srv: &Server, what: &str) {
    let mut c = srv.conn();
    if q(&mut c, "SHOW DATABASES LIKE 'sbtest'").is_empty() {
        return;
    }
    exec(&mut c, "USE sbtest");
    if q(&mut c, "SHOW TABLES LIKE 'sbtest1'").is_empty() {
        return;
    }
    assert_eq!(
        q(&mut c, "CHECK TABLE sbtest1"),
        vec!["sbtest.sbtest1|check|status|OK".to_string()],
        "{what}: sbtest1"
    );
    let ix = q_i64(&mut c, "SELECT COUNT(*) FROM sbtest1 WHERE k >= 0");
    let scan = q_i64(&mut c, "SELECT COUNT(*) FROM sbtest1 WHERE k + 0 >= 0");
    assert_eq!(ix, scan, "{what}: sbtest1 index k vs full scan");
}

#[test]
fn backup_under_load_restores_every_committed_transaction() {
    let srv = Server::start_with(
        "backup-load",
        &["--write-buffer-size=256K", "--secure-file-priv="],
    );
    let mut c = srv.conn();
    setup(&mut c);
    let sysbench = {
        exec(&mut c, "CREATE DATABASE sbtest");
        let prepared = sysbench_write_only(srv.port, 0, "prepare")
            .and_then(|mut ch| ch.wait().ok())
            .is_some_and(|st| st.success());
        if prepared {
            sysbench_write_only(srv.port, 6, "run")
        } else {
            eprintln!("sysbench not available: own writers only");
            None
        }
    };
    let seed = testkit::seed("e2e_backup");
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (stop, port) = (stop.clone(), srv.port);
            std::thread::spawn(move || writer(port, w, seed, stop))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let root = srv.root.clone();
    let (bk1, bk2) = (root.join("bk1"), root.join("bk2"));
    // Through SQL.
    let start1 = Instant::now();
    let r = q(&mut c, &format!("BACKUP DATABASE TO '{}'", bk1.display()));
    assert_eq!(r.len(), 1, "{r:?}");
    let f: Vec<&str> = r[0].split('|').collect();
    assert_eq!(f[0], bk1.display().to_string());
    assert!(f[1].parse::<u64>().unwrap() > 0, "sequence: {r:?}");
    assert!(f[3].parse::<u64>().unwrap() >= 3, "files: {r:?}");
    assert!(f[4].parse::<u64>().unwrap() > 0, "bytes: {r:?}");
    std::thread::sleep(Duration::from_millis(700));
    // Through the client.
    let start2 = Instant::now();
    let (ok, out) = run_tool(&[
        "backup",
        &format!("--port={}", srv.port),
        "--user=root",
        "--password=",
        bk2.to_str().unwrap(),
    ]);
    assert!(
        ok && out.contains("Sequence: "),
        "strata-backup backup: {out}"
    );
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let commits: Vec<Vec<Commit>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    if let Some(mut ch) = sysbench {
        let _ = ch.wait();
    }
    let n: usize = commits.iter().map(|l| l.len()).sum();
    assert!(n > 20, "the writers committed only {n} transactions");
    assert_eq!(
        q(&mut c, "SHOW GLOBAL STATUS LIKE 'Com_backup'"),
        vec!["Com_backup|2"]
    );
    // Restore both and start a server on each copy.
    for (bk, start, what) in [
        (&bk1, start1, "SQL backup"),
        (&bk2, start2, "client backup"),
    ] {
        let data = root.join(format!(
            "restored-{}",
            bk.file_name().unwrap().to_string_lossy()
        ));
        let (ok, out) = run_tool(&["restore", bk.to_str().unwrap(), data.to_str().unwrap()]);
        assert!(
            ok && out.contains("tables verified"),
            "restore {what}: {out}"
        );
        let copy = Server::start_on("backup-copy", &data, &[]);
        verify_copy(&copy, &commits, start, what);
        check_sbtest(&copy, what);
    }
    // A server straight on a backup directory.
    let copy = Server::start_on("backup-direct", &bk1, &[]);
    verify_copy(&copy, &commits, start1, "server on the backup directory");
    drop(copy);
    // The source itself holds every commit.
    verify_copy(&srv, &commits, Instant::now(), "source");
    check_sbtest(&srv, "source");
}

#[test]
fn backup_refusals_accounts_and_damaged_backups() {
    let srv = Server::start("backup-refuse");
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE d");
    exec(
        &mut c,
        "CREATE TABLE d.t (a INT PRIMARY KEY, b VARCHAR(10), KEY kb (b))",
    );
    exec(&mut c, "INSERT INTO d.t VALUES (1, 'x'), (2, 'y')");
    exec(&mut c, "CREATE USER 'bu'@'localhost' IDENTIFIED BY 'pw'");
    let root = srv.root.clone();
    // Default secure_file_priv: strata-files beside the datadir.
    let files = root.join("strata-files");
    assert!(files.is_dir());
    let e = expect_err(
        &mut c,
        &format!("BACKUP DATABASE TO '{}'", root.join("out").display()),
        1290,
        "HY000",
    );
    assert!(e.contains("secure-file-priv"), "{e}");
    expect_err(&mut c, "BACKUP DATABASE TO 'relative/dir'", 1210, "HY000");
    expect_err(&mut c, "BACKUP DATABASE TO ''", 1210, "HY000");
    expect_err(&mut c, "BACKUP STAGE START", 1235, "42000");
    expect_err(&mut c, "BACKUP DATABASE", 1064, "42000");
    std::fs::create_dir_all(files.join("busy")).unwrap();
    std::fs::write(files.join("busy/x"), b"x").unwrap();
    let e = expect_err(
        &mut c,
        &format!("BACKUP DATABASE TO '{}'", files.join("busy").display()),
        1086,
        "HY000",
    );
    assert!(e.contains("already exists"), "{e}");
    // Privilege: RELOAD.
    let as_bu = || Conn::new(srv.opts().user(Some("bu")).pass(Some("pw"))).expect("bu connects");
    let mut bu = as_bu();
    let e = expect_err(
        &mut bu,
        &format!("BACKUP DATABASE TO '{}'", files.join("b0").display()),
        1227,
        "42000",
    );
    assert!(e.contains("RELOAD"), "{e}");
    assert!(!files.join("b0").exists());
    exec(&mut c, "GRANT RELOAD ON *.* TO 'bu'@'localhost'");
    let mut bu = as_bu();
    let bk = files.join("b1");
    let r = q(&mut bu, &format!("BACKUP DATABASE TO '{}'", bk.display()));
    assert_eq!(r.len(), 1);
    // An existing empty directory is fine.
    std::fs::create_dir_all(files.join("b2")).unwrap();
    q(
        &mut c,
        &format!("BACKUP DATABASE TO '{}'", files.join("b2").display()),
    );
    // Restore refuses a non-empty target, and a damaged backup.
    let busy = files.join("busy");
    let (ok, out) = run_tool(&["restore", bk.to_str().unwrap(), busy.to_str().unwrap()]);
    assert!(!ok && out.contains("not empty"), "{out}");
    let bad = root.join("damaged");
    copy_dir(&files.join("b2"), &bad);
    let victim = std::fs::read_dir(&bad)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst" || x == "log"))
        .expect("a table or WAL file");
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&victim, &bytes).unwrap();
    let (ok, out) = run_tool(&[
        "restore",
        bad.to_str().unwrap(),
        root.join("r-bad").to_str().unwrap(),
    ]);
    assert!(!ok && out.contains("CRC32C differs"), "{out}");
    // The copy has the data and the accounts (with RELOAD).
    let data = root.join("restored");
    let (ok, out) = run_tool(&["restore", bk.to_str().unwrap(), data.to_str().unwrap()]);
    assert!(ok, "{out}");
    let copy = Server::start_on("backup-refuse-copy", &data, &[]);
    let mut cc =
        Conn::new(copy.opts().user(Some("bu")).pass(Some("pw"))).expect("bu logs in to the copy");
    let mut rc = copy.conn();
    assert_eq!(
        q(&mut rc, "SELECT a, b FROM d.t ORDER BY a"),
        vec!["1|x", "2|y"]
    );
    assert_eq!(q(&mut rc, "CHECK TABLE d.t"), vec!["d.t|check|status|OK"]);
    let g = q(&mut cc, "SHOW GRANTS");
    assert!(
        g[0].starts_with("GRANT RELOAD ON *.* TO `bu`@`localhost`"),
        "{g:?}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

/// Debug builds pause a backup whose directory contains this mark.
const PAUSE_MARK: &str = "pause-mark-e2e-backup";

#[test]
fn kill_during_backup_leaves_the_source_intact_and_the_backup_refused() {
    std::env::set_var("STRATA_TEST_BACKUP_PAUSE", PAUSE_MARK);
    let mut srv = Server::start_with("backup-kill", &["--secure-file-priv="]);
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b))",
    );
    for i in 0..20 {
        exec(&mut c, &format!("INSERT INTO t VALUES ({i}, {})", i * 7));
    }
    let bk: PathBuf = srv.root.join(PAUSE_MARK);
    let opts = srv.opts();
    let bk2 = bk.clone();
    let h = std::thread::spawn(move || {
        let mut c = Conn::new(opts).unwrap();
        c.query_drop(format!("BACKUP DATABASE TO '{}'", bk2.display()))
    });
    // Wait until the backup is paused (its state shows in the processlist).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pl = q(&mut c, "SHOW PROCESSLIST");
        if pl.iter().any(|r| r.contains("Backing up: paused")) {
            break;
        }
        assert!(Instant::now() < deadline, "the backup never paused: {pl:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(bk.join("CURRENT").exists(), "the engine files are written");
    srv.kill9();
    assert!(h.join().unwrap().is_err(), "the backup's connection died");
    let (ok, out) = run_tool(&[
        "restore",
        bk.to_str().unwrap(),
        srv.root.join("r").to_str().unwrap(),
    ]);
    assert!(!ok && out.contains("not a finished backup"), "{out}");
    assert!(
        !srv.root.join("r").exists()
            || std::fs::read_dir(srv.root.join("r"))
                .unwrap()
                .next()
                .is_none()
    );
    srv.restart();
    let mut c = srv.conn_db("d");
    assert_eq!(
        q_i64(&mut c, "SELECT SUM(b) FROM t"),
        (0..20).map(|i| i * 7).sum::<i64>()
    );
    assert_eq!(q(&mut c, "CHECK TABLE t"), vec!["d.t|check|status|OK"]);
}

/// A backup carries the server's key files (caching_sha2_password's RSA
/// pair, the unknown users' decoy key): a copy restored from it and started
/// on it decrypts, over plain TCP, a password a client encrypted with the
/// source's public key (before, the copy generated a new pair and refused
/// such a client with 1045), and keeps the stand-ins of unknown users.
#[test]
fn backup_carries_the_key_files() {
    use std::os::unix::fs::PermissionsExt;
    let srv = Server::start("backup-keys");
    let mut c = srv.conn();
    exec(
        &mut c,
        "CREATE USER sha@'%' IDENTIFIED WITH caching_sha2_password BY 'secret'",
    );
    // A client holding the source's public key (it never asks for one).
    let pinned = srv.root.join("source-public.pem");
    std::fs::copy(srv.datadir.join("public_key.pem"), &pinned).unwrap();
    let login = |s: &Server| {
        Conn::new(
            s.opts()
                .user(Some("sha"))
                .pass(Some("secret"))
                .server_key_path(Some(pinned.clone())),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    login(&srv).expect("the source takes the pinned key");
    let bk = srv.root.join("strata-files").join("keys");
    let (ok, out) = run_tool(&[
        "backup",
        &format!("--port={}", srv.port),
        "--user=root",
        "--password=",
        bk.to_str().unwrap(),
    ]);
    assert!(ok, "{out}");
    for f in ["private_key.pem", "public_key.pem", "auth-decoy-key"] {
        let m = std::fs::metadata(bk.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(m.permissions().mode() & 0o777, 0o600, "{f}");
    }
    let data = srv.root.join("restored-keys");
    let (ok, out) = run_tool(&["restore", bk.to_str().unwrap(), data.to_str().unwrap()]);
    assert!(ok, "{out}");
    let copy = Server::start_on("backup-keys-copy", &data, &[]);
    for f in ["private_key.pem", "public_key.pem", "auth-decoy-key"] {
        assert_eq!(
            std::fs::read(copy.datadir.join(f)).unwrap(),
            std::fs::read(srv.datadir.join(f)).unwrap(),
            "{f}"
        );
    }
    // A new server: full authentication, with the RSA exchange.
    login(&copy).expect("the copy takes the source's pinned key");
    // The stock client, which asks for the key.
    let o = Command::new("mariadb")
        .args(["--protocol=TCP", "-h127.0.0.1", &format!("-P{}", copy.port)])
        .args([
            "--skip-ssl",
            "-usha",
            "-psecret",
            "-N",
            "-B",
            "-e",
            "SELECT CURRENT_USER()",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run the mariadb client");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "sha@%");
}

/// The table files a database's manifest names, as (family, level, number),
/// read without opening the database (nothing in `dir` changes).
fn manifest_files(dir: &Path) -> BTreeSet<(String, usize, u64)> {
    let mut vs = lsm::version::VersionSet::new(
        dir,
        Arc::new(lsm::vfs::OsFs),
        Arc::new(|_: u64| {}),
        lsm::Comparator::Bytewise,
    );
    vs.recover(&|_| None)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out = BTreeSet::new();
    for cf in vs.cfs.values() {
        for (level, files) in cf.current.levels.iter().enumerate() {
            out.extend(files.iter().map(|f| (cf.name.clone(), level, f.number())));
        }
    }
    out
}

fn files_per_level(files: &BTreeSet<(String, usize, u64)>) -> BTreeMap<usize, usize> {
    let mut n = BTreeMap::new();
    for (cf, level, _) in files {
        if cf == "default" {
            *n.entry(*level).or_default() += 1;
        }
    }
    n
}

/// `strata-backup restore` leaves the backed-up tables as they are: it
/// verifies the copy with compactions off. The source is shaped by the
/// server under its level ratio (6) with small level targets (L0, L5, L6),
/// and the backup is taken with 3 files in level 0 and rows in the WAL:
/// opening the copy flushes those to a 4th level-0 file, the level-0
/// trigger, so verifying with compactions on (the engine's defaults, or the
/// server's options) would compact level 0 into the levels below; it would
/// also rewrite any level over the targets it computes, which differ from
/// the server's when it ran with --default-cf-options.
#[test]
fn restore_leaves_a_multi_level_backup_as_it_is() {
    let srv = Server::start_with(
        "backup-levels",
        &[
            "--write-buffer-size=64K",
            "--secure-file-priv=",
            "--default-cf-options=max_bytes_for_level_base=256K;target_file_size_base=64K",
        ],
    );
    let mut c = srv.conn();
    exec(&mut c, "CREATE DATABASE lv");
    exec(&mut c, "USE lv");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(250) NOT NULL)",
    );
    let levels = |c: &mut Conn| -> BTreeMap<usize, usize> {
        q(
            c,
            "SELECT LEVEL, COUNT(*) FROM information_schema.STRATA_SST_FILES \
             WHERE CF_NAME = 'default' GROUP BY LEVEL",
        )
        .iter()
        .map(|r| {
            let (l, n) = r.split_once('|').unwrap();
            (l.parse().unwrap(), n.parse().unwrap())
        })
        .collect()
    };
    let mut rng = Rng::new(0x5eed_1e7e15);
    let mut id = 0;
    let mut insert = |c: &mut Conn, n: usize| {
        let rows: Vec<String> = (0..n)
            .map(|_| {
                id += 1;
                let pad: String = (0..12)
                    .map(|_| format!("{:016x}", rng.next_u64()))
                    .collect();
                format!("({id}, '{pad}')")
            })
            .collect();
        exec(c, &format!("INSERT INTO t VALUES {}", rows.join(",")));
        id
    };
    let root = srv.root.clone();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut attempt = 0;
    let (bk, backed_up) = loop {
        assert!(
            Instant::now() < deadline,
            "no backup with 3 level-0 files and 2 levels below: {:?}",
            levels(&mut c)
        );
        let rows = insert(&mut c, 40);
        let l = levels(&mut c);
        let below = l.keys().filter(|k| **k > 0).count();
        if l.get(&0) != Some(&3) || below < 2 || rows < 8000 {
            continue;
        }
        // Rows left in the memtable (and so in the WAL the backup copies).
        let last = insert(&mut c, 5);
        attempt += 1;
        let bk = root.join(format!("bk-levels-{attempt}"));
        q(&mut c, &format!("BACKUP DATABASE TO '{}'", bk.display()));
        let files = manifest_files(&bk);
        let per = files_per_level(&files);
        // A flush or compaction may have finished between the look and the
        // backup: then write on and take another.
        if per.get(&0) == Some(&3) && per.keys().filter(|k| **k > 0).count() >= 2 {
            eprintln!("backup {attempt}: {per:?}, {last} rows");
            break (bk, files);
        }
        std::fs::remove_dir_all(&bk).unwrap();
    };
    let data = root.join("restored-levels");
    let (ok, out) = run_tool(&["restore", bk.to_str().unwrap(), data.to_str().unwrap()]);
    assert!(ok && out.contains("tables verified"), "restore: {out}");
    let restored = manifest_files(&data);
    let missing: Vec<_> = backed_up.difference(&restored).collect();
    assert!(
        missing.is_empty(),
        "verifying the copy rewrote or moved tables {missing:?}: backup {:?}, restored {:?}",
        files_per_level(&backed_up),
        files_per_level(&restored)
    );
    let newest = backed_up.iter().map(|f| f.2).max().unwrap();
    let added: Vec<_> = restored.difference(&backed_up).collect();
    assert!(
        added.iter().all(|(_, level, n)| *level == 0 && *n > newest),
        "restore added tables other than the WAL's flush: {added:?}"
    );
    // The WAL's rows made a 4th level-0 table: the level-0 trigger of the
    // server's options (and the engine's) was reached, so this copy would
    // have been compacted had verification let it.
    assert!(
        files_per_level(&restored)[&0] >= 4,
        "the WAL of the backup was not flushed: {:?}",
        files_per_level(&restored)
    );
    // The copy holds every row.
    let copy = Server::start_on("backup-levels-copy", &data, &[]);
    let mut c2 = copy.conn_db("lv");
    assert_eq!(
        q(&mut c2, "CHECK TABLE t"),
        vec!["lv.t|check|status|OK".to_string()]
    );
    assert_eq!(
        q_i64(&mut c2, "SELECT COUNT(*) FROM t"),
        q_i64(&mut c, "SELECT COUNT(*) FROM t")
    );
}
