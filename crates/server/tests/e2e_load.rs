//! LOAD DATA against the real binary: LOCAL through the stock `mariadb`
//! client (`--local-infile`: the server's 0xFB request, the client sending
//! the file), the refusal when the client disables it (4166), server-side
//! files under --secure-file-priv, and rows loaded by the bulk path and by
//! strata_bulk_load surviving a kill -9 and restart.
mod common;
use common::{exec, q, Server, TempDir};
use std::process::Command;

/// Runs the stock client on `db` with `sql`; (success, stdout, stderr).
fn client(srv: &Server, extra: &[&str], sql: &str) -> (bool, String, String) {
    common::run_client(
        Command::new("mariadb")
            .args([
                "-h127.0.0.1",
                &format!("-P{}", srv.port),
                "-uroot",
                "-N",
                "-B",
            ])
            .args(extra)
            .args(["d", "-e", sql]),
    )
}

fn rows_file(dir: &TempDir, name: &str, n: u64) -> String {
    let mut body = String::new();
    for i in (1..=n).rev() {
        body.push_str(&format!("{i},{},\"name {i}, with comma\"\n", i % 10));
    }
    let p = dir.0.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

#[test]
fn load_data_local_through_the_mariadb_client() {
    let files = TempDir::new("e2e-load-local-files");
    let srv = Server::start("load-local");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(40), KEY kk (k))",
    );
    let f = rows_file(&files, "t.csv", 20_000);
    let load = format!(
        "LOAD DATA LOCAL INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'"
    );
    let (ok, out, err) = client(
        &srv,
        &["--local-infile=1"],
        &format!("{load}; SELECT ROW_COUNT()"),
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "20000");
    assert_eq!(
        q(&mut c, "SELECT COUNT(*), SUM(id), MIN(name) FROM t"),
        ["20000|200010000|name 1, with comma"]
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*) FROM t FORCE INDEX (kk) WHERE k = 3"
        ),
        ["2000"]
    );
    assert_eq!(q(&mut c, "CHECK TABLE t")[0].rsplit('|').next(), Some("OK"));
    // Again into the now full table: LOCAL acts as IGNORE (every row a duplicate).
    let (ok, _, err) = client(&srv, &["--local-infile=1"], &load);
    assert!(ok, "{err}");
    assert_eq!(q(&mut c, "SELECT COUNT(*) FROM t"), ["20000"]);
    // A client that disables it.
    let (ok, _, err) = client(&srv, &["--local-infile=0"], &load);
    assert!(!ok);
    assert!(err.contains("4166"), "{err}");
    // The connection is usable after a LOCAL load.
    let (ok, out, err) = client(
        &srv,
        &["--local-infile=1"],
        &format!("TRUNCATE t; {load}; SELECT COUNT(*) FROM t; SELECT 1"),
    );
    assert!(ok, "{err}");
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), ["20000", "1"]);
}

#[test]
fn loaded_rows_survive_kill_9() {
    let files = TempDir::new("e2e-load-crash-files");
    let prv = format!("--secure-file-priv={}", files.0.display());
    let mut srv = Server::start_with("load-crash", &[&prv]);
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, name VARCHAR(40), KEY kk (k))",
    );
    exec(
        &mut c,
        "CREATE TABLE b (id INT PRIMARY KEY, k INT, KEY kk (k))",
    );
    exec(&mut c, "CREATE TABLE s (id INT PRIMARY KEY, k INT)");
    let f = rows_file(&files, "t.csv", 30_000);
    exec(
        &mut c,
        &format!("LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'"),
    );
    exec(&mut c, "SET strata_bulk_load = 1");
    for chunk in 0..10 {
        let vals: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {})", id % 7)
            })
            .collect();
        exec(&mut c, &format!("INSERT INTO b VALUES {}", vals.join(",")));
    }
    exec(&mut c, "SET strata_bulk_load = 0");
    for i in 0..50 {
        exec(&mut c, &format!("INSERT INTO s VALUES ({i}, {i})"));
    }
    exec(&mut c, "CREATE INDEX ks ON s (k)");
    drop(c);
    srv.kill9();
    srv.restart();
    let mut c = srv.conn_db("d");
    assert_eq!(
        q(&mut c, "SELECT COUNT(*), SUM(id) FROM t"),
        ["30000|450015000"]
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*) FROM t FORCE INDEX (kk) WHERE k = 0"
        ),
        ["3000"]
    );
    assert_eq!(
        q(&mut c, "SELECT COUNT(*), SUM(id) FROM b"),
        ["10000|49995000"]
    );
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*) FROM b FORCE INDEX (kk) WHERE k = 0"
        ),
        ["1429"]
    );
    assert_eq!(
        q(&mut c, "SELECT id FROM s FORCE INDEX (ks) WHERE k = 7"),
        ["7"]
    );
    for t in ["t", "b", "s"] {
        assert_eq!(
            q(&mut c, &format!("CHECK TABLE {t}"))[0].rsplit('|').next(),
            Some("OK")
        );
    }
}
