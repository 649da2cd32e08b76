//! The Prometheus endpoint (`--metrics-port`, off by default, bound to
//! 127.0.0.1 unless `--metrics-bind` says otherwise): `GET /metrics`
//! answers the server's GLOBAL STATUS counters in the Prometheus text
//! exposition format (version 0.0.4), named as mysqld_exporter names them
//! (`mysql_global_status_<name>`, `Com_*` as
//! `mysql_global_status_commands_total{command="..."}`), so existing
//! dashboards work.
//!
//! A tiny HTTP/1.1 server on std, apart from the MySQL listeners: a fixed
//! pool of `WORKERS` handler threads fed through a queue of `QUEUE`
//! connections (more get 503 at once), the request head bounded to
//! `MAX_HEAD` bytes and `DEADLINE` seconds, every response `Connection:
//! close`. Anything malformed gets 400; a slow, huge or garbage request
//! holds one handler for at most the deadline, never the server.
use crate::Shared;
use rel::value::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::TrySendError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Handler threads (each serves one request at a time).
const WORKERS: usize = 4;
/// Accepted connections waiting for a handler; more get 503 at once.
const QUEUE: usize = 4;
/// Largest request head (request line and headers).
const MAX_HEAD: usize = 8 << 10;
/// Time a client has to send its request head.
const DEADLINE: Duration = Duration::from_secs(2);

/// Binds the endpoint's listener (`--metrics-port`, None when 0); a port
/// that is taken stops the server's start with a message naming it.
pub fn listen(cfg: &crate::config::Config) -> Result<Option<TcpListener>, String> {
    if cfg.metrics_port == 0 {
        return Ok(None);
    }
    let addr = format!("{}:{}", cfg.metrics_bind, cfg.metrics_port);
    let l = TcpListener::bind(&addr).map_err(|e| {
        format!("cannot listen on {addr} for the metrics endpoint (--metrics-port): {e}")
    })?;
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    eprintln!("strata: metrics on http://{addr}/metrics");
    Ok(Some(l))
}

/// The accept loop of the metrics listener (until shutdown): connections go
/// to `WORKERS` handler threads through a queue; at most `WORKERS + QUEUE`
/// are held at once (counted from accept to the end of their answer), and
/// any beyond are answered 503 and closed by the accept thread.
pub fn serve(sh: Arc<Shared>, l: TcpListener) {
    let (tx, rx) = std::sync::mpsc::sync_channel::<TcpStream>(WORKERS + QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    let held = Arc::new(AtomicUsize::new(0));
    for i in 0..WORKERS {
        let (sh, rx, held) = (sh.clone(), rx.clone(), held.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("strata-metrics-{i}"))
            .spawn(move || loop {
                // The sender goes with the accept loop: then the workers end.
                let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                match next {
                    Ok(s) => {
                        handle(&sh, s);
                        held.fetch_sub(1, Ordering::AcqRel);
                    }
                    Err(_) => return,
                }
            });
        if let Err(e) = spawned {
            eprintln!("strata: cannot start a metrics thread: {e}");
        }
    }
    crate::accept_loop(
        &sh,
        || l.accept(),
        |(s, _)| {
            let _ = s.set_nonblocking(false);
            let refused = if held.fetch_add(1, Ordering::AcqRel) >= WORKERS + QUEUE {
                Some(s)
            } else {
                // Never full: the count above bounds what is queued.
                tx.try_send(s).err().map(|e| match e {
                    TrySendError::Full(s) | TrySendError::Disconnected(s) => s,
                })
            };
            if let Some(mut s) = refused {
                held.fetch_sub(1, Ordering::AcqRel);
                let _ = s.set_write_timeout(Some(Duration::from_millis(200)));
                let _ = respond(&mut s, 503, "text/plain", b"busy\n", false);
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        },
    );
}

/// Why a request head could not be read.
#[derive(Debug, PartialEq)]
enum HeadError {
    /// Longer than `MAX_HEAD`.
    TooLarge,
    /// Not complete by the deadline.
    Timeout,
    /// The client closed or the socket failed.
    Closed,
}

/// Reads bytes up to the blank line ending the request head, by
/// `deadline`: `wait(s, left)` bounds each read to the time left.
fn read_head<R: Read>(
    s: &mut R,
    deadline: Instant,
    mut wait: impl FnMut(&mut R, Duration),
) -> Result<Vec<u8>, HeadError> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = head_end(&buf) {
            buf.truncate(end);
            return Ok(buf);
        }
        if buf.len() > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HeadError::Timeout);
        }
        wait(s, left);
        match s.read(&mut chunk) {
            Ok(0) => return Err(HeadError::Closed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(HeadError::Timeout)
            }
            Err(_) => return Err(HeadError::Closed),
        }
    }
}

/// Where the head ends (the blank line: CRLF CRLF, or LF LF).
fn head_end(b: &[u8]) -> Option<usize> {
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = b.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
}

/// A parsed request: method and path (without the query string).
#[derive(Debug, PartialEq)]
pub struct Request {
    pub method: String,
    pub path: String,
}

/// Parses a request head; None if it is not a well-formed HTTP/1.x request.
pub fn parse(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || method.is_empty()
        || !method.bytes().all(|c| c.is_ascii_uppercase())
        || !target.starts_with('/')
        || !target.bytes().all(|c| c.is_ascii_graphic())
        || !matches!(version, "HTTP/1.0" | "HTTP/1.1")
    {
        return None;
    }
    for h in lines {
        let (name, _) = h.split_once(':')?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        {
            return None;
        }
    }
    let path = target.split('?').next().unwrap_or(target);
    Some(Request {
        method: method.to_string(),
        path: path.to_string(),
    })
}

fn handle(sh: &Shared, mut s: TcpStream) {
    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
    let head = match read_head(&mut s, Instant::now() + DEADLINE, |s, left| {
        let _ = s.set_read_timeout(Some(left.max(Duration::from_millis(1))));
    }) {
        Ok(h) => h,
        Err(HeadError::Closed) => return,
        Err(HeadError::TooLarge) => {
            let _ = respond(&mut s, 400, "text/plain", b"request too large\n", false);
            return;
        }
        Err(HeadError::Timeout) => {
            let _ = respond(&mut s, 408, "text/plain", b"request timeout\n", false);
            return;
        }
    };
    let Some(req) = parse(&head) else {
        let _ = respond(&mut s, 400, "text/plain", b"bad request\n", false);
        return;
    };
    let head_only = req.method == "HEAD";
    let _ = match (req.method.as_str(), req.path.as_str()) {
        ("GET" | "HEAD", "/metrics") => {
            let body = render(&sh.inst);
            respond(
                &mut s,
                200,
                "text/plain; version=0.0.4; charset=utf-8",
                body.as_bytes(),
                head_only,
            )
        }
        ("GET" | "HEAD", _) => respond(
            &mut s,
            404,
            "text/plain",
            b"not found: try /metrics\n",
            head_only,
        ),
        _ => respond(&mut s, 405, "text/plain", b"method not allowed\n", false),
    };
    let _ = s.shutdown(std::net::Shutdown::Both);
}

fn respond(
    s: &mut TcpStream,
    code: u16,
    ctype: &str,
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        _ => "Service Unavailable",
    };
    let allow = if code == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    s.write_all(&out)?;
    s.flush()
}

/// Status variables that go up and down (the rest only grow).
fn is_gauge(name: &str) -> bool {
    matches!(
        name,
        "Threads_connected"
            | "Threads_running"
            | "Max_used_connections"
            | "Prepared_stmt_count"
            | "Innodb_row_lock_current_waits"
            | "Innodb_row_lock_time_max"
            | "Strata_live_table_bytes"
            | "Strata_pending_compaction_bytes"
            | "Strata_block_cache_usage"
            | "Strata_snapshots"
            | "Strata_pending_reclaims"
            | "Strata_stall_longest_micros"
            | "Strata_delayed_write_rate"
            | "Strata_compaction_rate_limit"
    ) || name
        .strip_prefix("Strata_l")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

fn number(v: &Value) -> Option<String> {
    match v {
        Value::UInt(n) => Some(n.to_string()),
        Value::Int(n) => Some(n.to_string()),
        Value::Double(f) if f.is_finite() => Some(f.to_string()),
        _ => None,
    }
}

/// The exposition text for the instance's GLOBAL STATUS now.
pub fn render(inst: &sql::Instance) -> String {
    let mut out = String::from(
        "# HELP mysql_up Whether the server is up.\n# TYPE mysql_up gauge\nmysql_up 1\n",
    );
    let status = sql::show::status::global_status(inst);
    let com: Vec<(String, String)> = status
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("Com_")?.to_string(), number(v)?)))
        .collect();
    out.push_str("# HELP mysql_global_status_commands_total Statements run, by kind (Com_*).\n");
    out.push_str("# TYPE mysql_global_status_commands_total counter\n");
    for (c, v) in &com {
        out.push_str(&format!(
            "mysql_global_status_commands_total{{command=\"{c}\"}} {v}\n"
        ));
    }
    for (k, v) in &status {
        if k.starts_with("Com_") {
            continue;
        }
        let Some(v) = number(v) else {
            continue;
        };
        let name = format!("mysql_global_status_{}", k.to_ascii_lowercase());
        let kind = if is_gauge(k) { "gauge" } else { "counter" };
        out.push_str(&format!(
            "# HELP {name} SHOW GLOBAL STATUS {k}.\n# TYPE {name} {kind}\n{name} {v}\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_requests_and_refuses_garbage() {
        assert_eq!(
            parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*"),
            Some(Request {
                method: "GET".into(),
                path: "/metrics".into()
            })
        );
        for bad in [
            &b"GET /metrics"[..],
            b"GET /metrics HTTP/2.0",
            b"get /metrics HTTP/1.1",
            b"GET metrics HTTP/1.1",
            b"GET /metrics HTTP/1.1 extra",
            b"GET /metrics HTTP/1.1\r\nno colon here",
            b"\xff\xfe /metrics HTTP/1.1",
            b"",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn heads_are_bounded() {
        let mut big = std::io::repeat(b'a');
        let r = read_head(&mut big, Instant::now() + DEADLINE, |_, _| {});
        assert_eq!(r, Err(HeadError::TooLarge));
        let mut ok = &b"GET / HTTP/1.0\n\nrest"[..];
        assert_eq!(
            read_head(&mut ok, Instant::now() + DEADLINE, |_, _| {}).unwrap(),
            b"GET / HTTP/1.0"
        );
        let mut short = &b"GET / HTTP/1.0\r\n"[..];
        assert_eq!(
            read_head(&mut short, Instant::now() + DEADLINE, |_, _| {}),
            Err(HeadError::Closed)
        );
    }
}
