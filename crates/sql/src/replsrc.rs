//! Strata as a replication source, the SQL side: what a replica's dump
//! connection set in its session (`@master_binlog_checksum`,
//! `@master_heartbeat_period`, `@slave_connect_state`, ... as MariaDB's
//! replica sends them) read into `binlog::dump` settings, the REPLICATION
//! SLAVE check of COM_REGISTER_SLAVE and COM_BINLOG_DUMP, and SHOW SLAVE
//! HOSTS. The dump itself: `binlog::dump`; its connection: the server's
//! `replsrc`.
use crate::error::{Result, SqlError};
use crate::result::{rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::{ShowStmt, Stmt};
use rel::catalog::privs as p;
use rel::value::Value;
use std::time::Duration;

/// Parses SHOW SLAVE HOSTS / SHOW REPLICA HOSTS, and MySQL 8.4's SHOW
/// REPLICAS (tools that take a non-MariaDB 10.11 for MySQL 8.4 send it)
/// (None: not one).
pub fn parse(ws: &[String]) -> Option<Stmt> {
    let up: Vec<String> = ws.iter().map(|w| w.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|w| w.as_str()).collect();
    match u.as_slice() {
        ["SHOW", "SLAVE" | "REPLICA", "HOSTS"] | ["SHOW", "REPLICAS"] => {
            Some(Stmt::Show(ShowStmt::SlaveHosts))
        }
        _ => None,
    }
}

/// COM_REGISTER_SLAVE and COM_BINLOG_DUMP need REPLICATION SLAVE (1227).
pub fn check_replication_slave(s: &Session) -> Result<()> {
    if crate::account::check::has_global(s, p::REPLICATION_SLAVE) {
        Ok(())
    } else {
        Err(SqlError::specific_access_denied("REPLICATION SLAVE"))
    }
}

fn user_text(s: &Session, name: &str) -> Option<String> {
    match s.user_vars.get(name)? {
        Value::Null => None,
        v => Some(String::from_utf8_lossy(&v.text()).into_owned()),
    }
}

/// What a dump connection's session asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpSettings {
    /// `@master_binlog_checksum`: None when unset (a replica that does not
    /// know checksums: the log has them, it cannot be served), else
    /// whether it is CRC32.
    pub checksum: Option<bool>,
    /// `@master_heartbeat_period` (nanoseconds; 0 or unset: none).
    pub heartbeat: Option<Duration>,
    /// `@slave_connect_state`: start from this GTID state (MariaDB's
    /// GTID mode) instead of the dump's file and position.
    pub connect_state: Option<String>,
    /// `@slave_gtid_strict_mode` is on (a GTID start in a hole of the log
    /// is an error).
    pub gtid_strict: bool,
}

/// The shortest heartbeat period a dump keeps (MariaDB's replica refuses
/// a period below 1 ms; a raw client asking for less gets 1 ms, not a
/// stream of heartbeats).
pub const MIN_HEARTBEAT: Duration = Duration::from_millis(1);

/// `@master_heartbeat_period` (nanoseconds) as a period: None for unset,
/// 0 or negative; at least `MIN_HEARTBEAT`.
pub fn heartbeat_period(nanos: Option<i128>) -> Option<Duration> {
    nanos
        .filter(|&n| n > 0)
        .map(|n| Duration::from_nanos(n.min(u64::MAX as i128) as u64).max(MIN_HEARTBEAT))
}

/// The dump settings of session `s`.
pub fn dump_settings(s: &Session) -> DumpSettings {
    let checksum = user_text(s, "master_binlog_checksum").map(|v| v.eq_ignore_ascii_case("CRC32"));
    let heartbeat = heartbeat_period(
        s.user_vars
            .get("master_heartbeat_period")
            .and_then(|v| v.to_i128()),
    );
    DumpSettings {
        checksum,
        heartbeat,
        connect_state: user_text(s, "slave_connect_state"),
        gtid_strict: s
            .user_vars
            .get("slave_gtid_strict_mode")
            .and_then(|v| v.to_i128())
            .is_some_and(|v| v != 0),
    }
}

/// SHOW SLAVE HOSTS: the replicas registered now (MariaDB's columns).
pub fn show_hosts(s: &mut Session, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let cols = ["Server_id", "Host", "Port", "Master_id"];
    let r = match &s.inst.binlog {
        Some(b) => b
            .replicas()
            .into_iter()
            .map(|r| {
                vec![
                    Value::UInt(r.server_id.into()),
                    text(r.host),
                    Value::UInt(r.port.into()),
                    Value::UInt(r.master_id.into()),
                ]
            })
            .collect(),
        None => vec![],
    };
    rows(sink, &cols, r)
}

/// A transaction of `s` committed: the binary log's files catch up now,
/// so that waiting dumps send it at once.
pub(crate) fn committed(s: &Session) {
    if let Some(b) = &s.inst.binlog {
        b.kick();
    }
}

/// Marks session `s` as a dump in SHOW PROCESSLIST ("Binlog Dump"), or
/// back to sleeping when `running` is false.
pub fn mark_dump(s: &Session, running: bool) {
    if running {
        s.proc.begin("Binlog Dump", "", 0);
        s.proc
            .set_state("Master has sent all binlog to slave; waiting for more updates");
    } else {
        s.proc.end(&s.db);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_84_names_are_aliases() {
        // MySQL 8.4's names, which tools send to a non-MariaDB server
        // whose version is at least 8.4 (Strata's 10.11.9-strata).
        let show = |q: &str| match crate::parse::parse(q) {
            Ok(p) => match p.stmt {
                Stmt::Show(ShowStmt::SlaveHosts) => "hosts",
                Stmt::Show(ShowStmt::MasterStatus) => "status",
                _ => "other",
            },
            Err(_) => "error",
        };
        for (q, want) in [
            ("SHOW REPLICAS", "hosts"),
            ("show replicas", "hosts"),
            ("SHOW SLAVE HOSTS", "hosts"),
            ("SHOW BINARY LOG STATUS", "status"),
            ("show binary log status", "status"),
            ("SHOW MASTER STATUS", "status"),
        ] {
            assert_eq!(show(q), want, "{q}");
        }
    }

    #[test]
    fn heartbeat_period_has_a_floor() {
        assert_eq!(heartbeat_period(None), None);
        assert_eq!(heartbeat_period(Some(0)), None);
        assert_eq!(heartbeat_period(Some(-5)), None);
        assert_eq!(heartbeat_period(Some(1)), Some(MIN_HEARTBEAT));
        assert_eq!(heartbeat_period(Some(999_999)), Some(MIN_HEARTBEAT));
        assert_eq!(
            heartbeat_period(Some(2_500_000_000)),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(
            heartbeat_period(Some(i128::MAX)),
            Some(Duration::from_nanos(u64::MAX))
        );
    }
}
