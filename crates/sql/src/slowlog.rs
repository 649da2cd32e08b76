//! The slow query log: with `slow_query_log` ON, each statement that ran
//! longer than `long_query_time` seconds (fractional; the session's value)
//! is appended to `slow_query_log_file` (relative names are in the datadir)
//! in MySQL's format (`# Time`, `# User@Host`, `# Query_time ... Lock_time
//! ... Rows_sent ... Rows_examined`, `use db;` when the database changed,
//! `SET timestamp=...;`, the statement), and counted in Slow_queries.
use crate::session::Session;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The open log file (reopened when slow_query_log_file changes).
#[derive(Default)]
pub struct SlowLog {
    file: Mutex<Option<(PathBuf, std::fs::File, Option<String>)>>,
}

/// What the log says about one statement.
pub struct Entry<'a> {
    pub text: &'a str,
    /// Wall-clock start, microseconds since the epoch.
    pub start_micros: i64,
    pub query_secs: f64,
    pub rows_sent: u64,
    pub rows_examined: u64,
}

/// A variable as seconds (`long_query_time`, `max_statement_time`).
pub fn secs_var(s: &Session, name: &str) -> f64 {
    s.var_secs(name, |v| {
        v.map(|v| {
            String::from_utf8_lossy(&v.text())
                .trim()
                .parse::<f64>()
                .unwrap_or(0.0)
        })
        .unwrap_or(0.0)
    })
}

fn on(s: &Session) -> bool {
    s.get_var("slow_query_log", true)
        .and_then(|v| v.to_i128())
        .is_some_and(|v| v != 0)
}

/// Logs the statement if it was slow.
pub fn record(s: &Session, e: &Entry) {
    if !on(s) || e.query_secs < secs_var(s, "long_query_time") {
        return;
    }
    s.inst
        .counters
        .slow_queries
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = s
        .get_var("slow_query_log_file", true)
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .unwrap_or_default();
    let datadir = s
        .get_var("datadir", true)
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .unwrap_or_default();
    let path = Path::new(&datadir).join(name);
    let host = s.proc.host();
    let mut out = String::new();
    let now = crate::env::now_micros();
    out.push_str(&format!("# Time: {}\n", iso_time(now)));
    out.push_str(&format!(
        "# User@Host: {u}[{u}] @ {host} []  Id: {:>5}\n",
        s.conn_id,
        u = s.user
    ));
    out.push_str(&format!(
        "# Query_time: {:.6}  Lock_time: {:.6} Rows_sent: {}  Rows_examined: {}\n",
        e.query_secs, 0.0, e.rows_sent, e.rows_examined
    ));
    let mut g = s
        .inst
        .slow_log
        .file
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if g.as_ref().is_none_or(|(p, ..)| *p != path) {
        *g = open(&path).map(|f| (path.clone(), f, None));
    }
    let Some((_, f, last_db)) = g.as_mut() else {
        return;
    };
    if s.db.is_some() && *last_db != s.db {
        out.push_str(&format!(
            "use {};\n",
            s.db.as_deref().unwrap_or("").replace('`', "``")
        ));
        *last_db = s.db.clone();
    }
    out.push_str(&format!("SET timestamp={};\n", e.start_micros / 1_000_000));
    out.push_str(e.text.trim_end_matches([';', ' ', '\n', '\t', '\r']));
    out.push_str(";\n");
    if f.write_all(out.as_bytes()).is_err() {
        *g = None;
    }
}

/// The text the processlist and the slow log show: a statement that may carry a
/// password (`IDENTIFIED BY '...'`, `PASSWORD('...')`, `SET PASSWORD = '...'`: any
/// text naming IDENTIFIED or PASSWORD) has every quoted string replaced by
/// `'<secret>'`, as MySQL rewrites such statements before logging them.
pub fn redact_secrets(text: &str) -> std::borrow::Cow<'_, str> {
    if !contains_ignore_case(text.as_bytes(), b"identified")
        && !contains_ignore_case(text.as_bytes(), b"password")
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut plain = 0;
    while i < b.len() {
        let q = b[i];
        if q != b'\'' && q != b'"' {
            i += 1;
            continue;
        }
        out.push_str(&text[plain..i]);
        // Skip the literal: backslash escapes and doubled quotes stay inside.
        let mut j = i + 1;
        while j < b.len() {
            if b[j] == b'\\' {
                j += 2;
            } else if b[j] == q && b.get(j + 1) == Some(&q) {
                j += 2;
            } else if b[j] == q {
                break;
            } else {
                j += 1;
            }
        }
        out.push_str("'<secret>'");
        i = (j + 1).min(b.len());
        plain = i;
    }
    out.push_str(&text[plain.min(text.len())..]);
    std::borrow::Cow::Owned(out)
}

/// Whether `hay` holds `word` (lower-case ASCII) in any case, without a
/// lower-cased copy of a 512 KiB statement: straight to each candidate first letter.
pub(crate) fn contains_ignore_case(hay: &[u8], word: &[u8]) -> bool {
    let Some(&first) = word.first() else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), hay).any(|i| {
        hay.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    })
}

/// Opens the log for appending; a new file starts with MySQL's header.
fn open(path: &Path) -> Option<std::fs::File> {
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            eprintln!(
                "strata: cannot open the slow query log {}: {e}",
                path.display()
            )
        })
        .ok()?;
    if new {
        let _ = write!(
            f,
            "strata, Version: {} (Strata). started with:\nTcp port: 0  Unix socket: \nTime                 Id Command    Argument\n",
            crate::vars::VERSION
        );
    }
    Some(f)
}

/// `2024-01-31T12:34:56.123456Z` (UTC).
pub fn iso_time(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let us = micros.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{us:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod redact_tests {
    use super::redact_secrets;

    #[test]
    fn passwords_never_reach_the_log() {
        assert_eq!(
            redact_secrets("CREATE USER 'u'@'%' IDENTIFIED BY 'pa''ss\\'word'"),
            "CREATE USER '<secret>'@'<secret>' IDENTIFIED BY '<secret>'"
        );
        assert_eq!(
            redact_secrets("SET PASSWORD = PASSWORD(\"x\")"),
            "SET PASSWORD = PASSWORD('<secret>')"
        );
        assert_eq!(redact_secrets("SELECT 'a' FROM t"), "SELECT 'a' FROM t");
        // An unterminated literal is cut, not echoed.
        assert_eq!(
            redact_secrets("ALTER USER u IDENTIFIED BY 'abc"),
            "ALTER USER u IDENTIFIED BY '<secret>'"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_in_any_case() {
        for q in [
            "CREATE USER u IDENTIFIED BY 'pw'",
            "create user u Identified by 'pw'",
            "SET PASSWORD = 'pw'",
            "select PassWord('pw')",
        ] {
            assert!(!redact_secrets(q).contains("pw'"), "{q}");
        }
        assert_eq!(
            redact_secrets("SELECT 'pw', 'identifie'"),
            "SELECT 'pw', 'identifie'"
        );
        assert!(contains_ignore_case(b"xxPASSWORD", b"password"));
        assert!(!contains_ignore_case(b"passwor", b"password"));
    }
}
