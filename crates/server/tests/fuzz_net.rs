//! Hostile clients against the real server over TCP: each one opens a socket and then does
//! one of: close at once; send random bytes; send a truncated or oversized packet header;
//! log in (as a raw client) and send random command packets, mutated COM_QUERY statements,
//! COM_STMT_PREPARE/EXECUTE with garbage, half packets; then it closes (sometimes in the middle
//! of a reply). Afterwards the server must be alive, root must log in and query, and
//! Threads_connected must come back to where it started: no crash, no hang, no leaked
//! session. `SEED=` replays; `FUZZ_CLIENTS=` (default 150) or `FUZZ_SECS=` size the run.
#![allow(clippy::unwrap_used)]

mod common;

use common::{exec, login, packet, q_i64, read_packet, threads_connected, Rng, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Up to `max - 1` random bytes.
fn some_bytes(rng: &mut Rng, max: u64) -> Vec<u8> {
    let n = rng.below(max) as usize;
    rng.bytes(n)
}

/// Reads whatever the server answers until it pauses; false once the socket is closed.
fn drain(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return true
            }
            Err(_) => return false,
        }
    }
}

const STATEMENTS: &[&str] = &[
    "SELECT 1",
    "SELECT * FROM t WHERE a = 1",
    "INSERT INTO t VALUES (1, 'x')",
    "UPDATE t SET b = CONCAT(b, 'y') WHERE a > 0",
    "BEGIN",
    "SELECT * FROM t WHERE a = 2 FOR UPDATE",
    "DELETE FROM t WHERE a = 3",
    "SET @x = 1",
    "SET abcdé = 1",
    "SHOW PROCESSLIST",
    "SELECT SLEEP(0.01)",
    "SELECT REPEAT('a', 100000)",
    "SELECT X'e9', _binary'\u{1}', 'é'",
];

fn mutated_statement(rng: &mut Rng) -> Vec<u8> {
    let mut b = STATEMENTS[rng.below(STATEMENTS.len() as u64) as usize]
        .as_bytes()
        .to_vec();
    for _ in 0..rng.below(4) {
        if b.is_empty() {
            break;
        }
        let i = rng.below(b.len() as u64) as usize;
        match rng.below(4) {
            0 => b[i] = rng.next_u64() as u8,
            1 => {
                b.remove(i);
            }
            2 => b.insert(i, b"'\"`()\\;\0\xff"[rng.below(9) as usize]),
            _ => b.truncate(i),
        }
    }
    b
}

/// One hostile client; returns the sockets it leaves open for a while.
fn client(port: u16, rng: &mut Rng) -> Option<TcpStream> {
    let mode = rng.below(10);
    if mode <= 3 {
        // Not logged in.
        let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_read_timeout(Some(Duration::from_millis(60))).ok()?;
        match mode {
            0 => return None, // close at once
            1 => {
                let _ = s.write_all(&some_bytes(rng, 300));
            }
            2 => {
                // A header announcing a huge packet, then a little of it.
                let _ = s.write_all(&[0xFF, 0xFF, 0xFF, 1, 1, 2, 3]);
            }
            _ => {
                // A truncated handshake response.
                let _ = read_packet(&mut s);
                let _ = s.write_all(&[50, 0, 0, 1, 0x0D, 0xA2]);
            }
        }
        drain(&mut s);
        return rng.one_in(3).then_some(s);
    }
    let mut s = login(port, Some("fz"))?;
    s.set_read_timeout(Some(Duration::from_millis(40))).ok()?;
    for _ in 0..1 + rng.below(12) {
        let payload: Vec<u8> = match rng.below(9) {
            0 => some_bytes(rng, 40), // anything
            1 => {
                let n = 1 + rng.below(30) as usize;
                let mut p = rng.bytes(n);
                p[0] = rng.below(0x20) as u8; // a real command byte, random body
                p
            }
            2 => {
                let mut p = vec![0x16]; // COM_STMT_PREPARE
                p.extend(mutated_statement(rng));
                p
            }
            3 => {
                let mut p = vec![0x17]; // COM_STMT_EXECUTE with garbage
                p.extend_from_slice(&(rng.below(4) as u32).to_le_bytes());
                p.extend(some_bytes(rng, 40));
                p
            }
            4 => {
                let mut p = vec![0x18]; // COM_STMT_SEND_LONG_DATA
                p.extend_from_slice(&(rng.below(4) as u32).to_le_bytes());
                p.extend(some_bytes(rng, 40));
                p
            }
            5 => {
                let mut p = vec![0x11]; // COM_CHANGE_USER
                p.extend(some_bytes(rng, 40));
                p
            }
            _ => {
                let mut p = vec![0x03]; // COM_QUERY
                p.extend(mutated_statement(rng));
                p
            }
        };
        if rng.one_in(15) {
            // Half a packet, then hang up.
            let full = packet(0, &payload);
            let _ = s.write_all(&full[..full.len() / 2]);
            return None;
        }
        if s.write_all(&packet(0, &payload)).is_err() || !drain(&mut s) {
            return None;
        }
    }
    rng.one_in(4).then_some(s)
}

#[test]
fn hostile_clients_leave_no_session_behind() {
    let mut rng = Rng::from_env("hostile_clients_leave_no_session_behind");
    let srv = Server::start("fuzz-net");
    let mut c = srv.fresh_db("fz");
    exec(&mut c, "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20))");
    exec(&mut c, "INSERT INTO t VALUES (2, 'two'), (3, 'three')");
    let start = threads_connected(&mut c);
    let clients: u64 = std::env::var("FUZZ_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let until = std::env::var("FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(|s| Instant::now() + Duration::from_secs(s));
    let mut open: Vec<TcpStream> = Vec::new();
    let mut n = 0u64;
    loop {
        match until {
            Some(t) if Instant::now() >= t => break,
            None if n >= clients => break,
            _ => {}
        }
        n += 1;
        if let Some(s) = client(srv.port, &mut rng) {
            open.push(s);
        }
        if open.len() > 20 {
            open.clear(); // close them
        }
        if n % 50 == 0 {
            assert!(
                login(srv.port, None).is_some(),
                "root cannot log in after {n} clients\n{}",
                srv.log_tail(30)
            );
        }
    }
    open.clear();
    // Every session ends: the count comes back to where it started.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut c = srv.conn_db("fz");
    loop {
        let now = threads_connected(&mut c);
        // `c` is a new session; the one that measured `start` is still open too.
        if now == start + 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Threads_connected {now}, expected {} after {n} clients\n{}",
            start + 1,
            srv.log_tail(30)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Nobody is locked out of the rows the clients touched.
    exec(&mut c, "SET innodb_lock_wait_timeout = 5");
    exec(&mut c, "BEGIN");
    let locked = q_i64(
        &mut c,
        "SELECT COUNT(*) FROM t WHERE a IN (1, 2, 3) FOR UPDATE",
    );
    assert!(locked <= 3);
    exec(&mut c, "COMMIT");
    eprintln!(
        "fuzz_net: {n} clients, Threads_connected back to {}",
        start + 1
    );
}
