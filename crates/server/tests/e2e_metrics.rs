//! The Prometheus endpoint against the real binary (`--metrics-port`):
//! scraped with a plain TcpStream and parsed as the text exposition format
//! (every sample typed, counters move with the statements run), then fed
//! garbage (random bytes, an endless head, bad request lines, idle
//! connections past the connection bound): each gets 400/404/405/503 or
//! is cut off, and both the endpoint and the MySQL port keep answering.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, q1, Rng, Server};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use testkit::seed;

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Sends `req` and returns the whole response (the server closes).
fn http(port: u16, req: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(req);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status_code(resp: &str) -> u16 {
    resp.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Scrapes /metrics: samples by name (with labels) and the declared types.
fn scrape(port: u16) -> (HashMap<String, f64>, HashMap<String, String>) {
    let resp = http(port, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(status_code(&resp), 200, "{resp:.300}");
    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4"),
        "{head}"
    );
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(len, body.len());
    let mut samples = HashMap::new();
    let mut types = HashMap::new();
    for line in body.lines() {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let (name, kind) = t.split_once(' ').unwrap();
            assert!(matches!(kind, "counter" | "gauge"), "{line}");
            assert!(
                types.insert(name.to_string(), kind.to_string()).is_none(),
                "twice: {line}"
            );
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (name, value) = line.rsplit_once(' ').unwrap();
        let base = name.split('{').next().unwrap();
        assert!(
            base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !base.starts_with(|c: char| c.is_ascii_digit()),
            "bad metric name: {line}"
        );
        assert!(types.contains_key(base), "sample before its TYPE: {line}");
        let v: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value: {line}"));
        samples.insert(name.to_string(), v);
    }
    (samples, types)
}

#[test]
fn metrics_endpoint_serves_status_and_survives_garbage() {
    let s0 = seed("e2e_metrics");
    let mut r = Rng::new(s0);
    let mport = free_port();
    let srv = Server::start_with("metrics", &[&format!("--metrics-port={mport}")]);
    let log = std::fs::read_to_string(&srv.log).unwrap();
    assert!(
        log.contains(&format!("metrics on http://127.0.0.1:{mport}/metrics")),
        "{log}"
    );
    let (before, types) = scrape(mport);
    assert_eq!(before["mysql_up"], 1.0);
    assert_eq!(types["mysql_global_status_commands_total"], "counter");
    assert_eq!(types["mysql_global_status_threads_connected"], "gauge");
    assert_eq!(
        types["mysql_global_status_strata_user_bytes_written"],
        "counter"
    );
    assert_eq!(types["mysql_global_status_strata_l0_files"], "gauge");
    for name in [
        "mysql_global_status_questions",
        "mysql_global_status_uptime",
        "mysql_global_status_strata_stall_micros",
        "mysql_global_status_strata_block_cache_hits",
        "mysql_global_status_strata_compaction_bytes_written",
        "mysql_global_status_strata_wal_bytes",
        "mysql_global_status_strata_wal_syncs",
        "mysql_global_status_strata_block_cache_misses",
        "mysql_global_status_strata_l0_bytes",
        "mysql_global_status_strata_pending_compaction_bytes",
        "mysql_global_status_threads_running",
    ] {
        assert!(before.contains_key(name), "{name} missing");
    }
    let mut c = srv.fresh_db("m");
    exec(&mut c, "CREATE TABLE t (id INT PRIMARY KEY, v TEXT)");
    for i in 0..20 {
        exec(
            &mut c,
            &format!("INSERT INTO t VALUES ({i}, REPEAT('v', 1000))"),
        );
    }
    for _ in 0..5 {
        assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "20");
    }
    let (after, _) = scrape(mport);
    let sel = "mysql_global_status_commands_total{command=\"select\"}";
    let ins = "mysql_global_status_commands_total{command=\"insert\"}";
    assert!(
        after[sel] >= before[sel] + 5.0,
        "{} -> {}",
        before[sel],
        after[sel]
    );
    assert!(after[ins] >= before[ins] + 20.0);
    assert!(after["mysql_global_status_threads_connected"] >= 1.0);
    assert!(
        after["mysql_global_status_strata_user_bytes_written"]
            >= before["mysql_global_status_strata_user_bytes_written"] + 20_000.0
    );

    // Wrong paths and methods, bad request lines.
    assert_eq!(
        status_code(&http(mport, b"GET /nope HTTP/1.1\r\n\r\n")),
        404
    );
    assert_eq!(
        status_code(&http(mport, b"POST /metrics HTTP/1.1\r\n\r\n")),
        405
    );
    let head = http(mport, b"HEAD /metrics HTTP/1.0\r\n\r\n");
    assert_eq!(status_code(&head), 200);
    assert!(head.ends_with("\r\n\r\n"), "HEAD has no body");
    for bad in [
        &b"GET /metrics HTTP/9.9\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"\x00\x01\x02\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nbroken header\r\n\r\n",
        b"GET /me trics HTTP/1.1\r\n\r\n",
    ] {
        assert_eq!(status_code(&http(mport, bad)), 400, "{bad:?}");
    }
    // An endless head: cut off with 400 at the size bound.
    {
        let mut s = TcpStream::connect(("127.0.0.1", mport)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nX: ");
        let junk = vec![b'a'; 64 << 10];
        let _ = s.write_all(&junk);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        assert_eq!(status_code(&String::from_utf8_lossy(&out)), 400);
    }
    // Random garbage, seeded.
    for i in 0..30 {
        let n = 1 + r.below(3000) as usize;
        let mut junk: Vec<u8> = (0..n).map(|_| r.below(256) as u8).collect();
        if i % 2 == 0 {
            junk.extend_from_slice(b"\r\n\r\n");
        }
        let mut s = TcpStream::connect(("127.0.0.1", mport)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(&junk);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let code = status_code(&String::from_utf8_lossy(&out));
        assert!(
            out.is_empty() || matches!(code, 400 | 404 | 405),
            "seed {s0}: garbage {i} got {:?}",
            String::from_utf8_lossy(&out)
        );
    }
    // Idle connections past the bound: the extra ones get 503 at once, the
    // MySQL port is unaffected, and the endpoint recovers after the head
    // deadline.
    let idle: Vec<TcpStream> = (0..10)
        .map(|_| TcpStream::connect(("127.0.0.1", mport)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let busy = http(mport, b"GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(status_code(&busy), 503, "{busy:.200}");
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "20");
    let t = Instant::now();
    loop {
        let resp = http(mport, b"GET /metrics HTTP/1.1\r\n\r\n");
        if status_code(&resp) == 200 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "endpoint stuck: {resp:.200}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(idle);
    assert_eq!(q1(&mut c, "SELECT COUNT(*) FROM t"), "20");
    let (last, _) = scrape(mport);
    assert!(last[sel] >= after[sel] + 2.0);
    eprintln!("seed {s0}");
}

/// A metrics port that is taken stops the start with a message naming it
/// (before the database is opened); without --metrics-port nothing listens.
#[test]
fn metrics_port_in_use_stops_startup() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = testkit::unique_temp_path("e2e-metrics-taken");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg(format!("--datadir={}", dir.join("data").display()))
        .arg(format!("--port={}", free_port()))
        .arg("--socket=")
        .arg(format!("--metrics-port={port}"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cannot listen on 127.0.0.1:{port} for the metrics endpoint (--metrics-port)"
        )),
        "{err}"
    );
    assert!(!err.contains("ready for connections"), "{err}");
    drop(taken);

    // Off by default: the log names no endpoint.
    let srv = Server::start("metrics-off");
    let log = std::fs::read_to_string(&srv.log).unwrap();
    assert!(!log.contains("metrics on"), "{log}");
}
