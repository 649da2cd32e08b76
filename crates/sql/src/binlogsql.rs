//! The binary log as SQL sees it (the log itself: `strata-binlog`): SHOW
//! MASTER STATUS, SHOW BINARY LOGS, SHOW BINLOG EVENTS, FLUSH BINARY LOGS,
//! PURGE BINARY LOGS; the computed variables @@gtid_binlog_pos and
//! @@gtid_current_pos; giving a session's transactions their binlog record
//! (`begin`), and logging a DDL statement as a QUERY event (`log_ddl`).
use crate::error::{Result, SqlError};
use crate::result::{ok, rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::{MaintStmt, ShowStmt, Stmt};
use rel::value::Value;

impl From<binlog::Error> for SqlError {
    fn from(e: binlog::Error) -> SqlError {
        SqlError::internal(e.to_string())
    }
}

/// Parses the binary log statements sqlparser does not know (None: not one).
pub fn parse(ws: &[String], sql: &str) -> Option<Result<Stmt>> {
    let up: Vec<String> = ws.iter().map(|w| w.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|w| w.as_str()).collect();
    let unq = |w: &str| {
        w.trim_matches(|c| c == '\'' || c == '"' || c == '`')
            .to_string()
    };
    Some(Ok(match u.as_slice() {
        // SHOW BINARY LOG STATUS: MySQL 8.4's name.
        ["SHOW", "MASTER" | "BINLOG", "STATUS"] | ["SHOW", "BINARY", "LOG", "STATUS"] => {
            Stmt::Show(ShowStmt::MasterStatus)
        }
        ["SHOW", "BINARY" | "MASTER", "LOGS"] => Stmt::Show(ShowStmt::BinaryLogs),
        ["SHOW", "BINLOG", "EVENTS", rest @ ..] => {
            let (mut file, mut from, mut limit) = (None, 0u64, None);
            let mut i = 0;
            let num = |w: Option<&&str>| w.and_then(|w| w.parse::<u64>().ok());
            while i < rest.len() {
                match rest[i] {
                    "IN" if i + 1 < rest.len() => {
                        file = Some(unq(&ws[3 + i + 1]));
                        i += 2;
                    }
                    "FROM" => match num(rest.get(i + 1)) {
                        Some(n) => {
                            from = n;
                            i += 2;
                        }
                        None => {
                            return Some(Err(SqlError::parse(
                                "SHOW BINLOG EVENTS FROM needs a number",
                            )))
                        }
                    },
                    "LIMIT" => {
                        let a = num(rest.get(i + 1));
                        let b = num(rest.get(i + 2));
                        limit = match (a, b) {
                            (Some(o), Some(n)) => Some((o, n)),
                            (Some(n), None) => Some((0, n)),
                            _ => {
                                return Some(Err(SqlError::parse(
                                    "SHOW BINLOG EVENTS LIMIT needs a number",
                                )))
                            }
                        };
                        i = rest.len();
                    }
                    w => {
                        return Some(Err(SqlError::parse(format!(
                            "near '{w}' in SHOW BINLOG EVENTS"
                        ))))
                    }
                }
            }
            Stmt::Show(ShowStmt::BinlogEvents { file, from, limit })
        }
        ["PURGE", "BINARY" | "MASTER", "LOGS", "TO", _] => Stmt::Maint(MaintStmt::Purge {
            to: Some(unq(&ws[4])),
            before: None,
        }),
        ["PURGE", "BINARY" | "MASTER", "LOGS", "BEFORE", ..] => {
            let at = sql.to_ascii_uppercase().find("BEFORE").unwrap_or(0) + 6;
            Stmt::Maint(MaintStmt::Purge {
                to: None,
                before: Some(sql[at..].trim().to_string()),
            })
        }
        ["PURGE", ..] => {
            return Some(Err(SqlError::parse(
                "PURGE BINARY LOGS TO 'file' | BEFORE 'datetime'",
            )))
        }
        ["RESET", "MASTER"] => Stmt::Maint(MaintStmt::ResetMaster { to: None }),
        ["RESET", "MASTER", "TO", n] => match n.parse::<u32>() {
            // As MariaDB 10.11: 0 starts at file 1, 2147483647 is allowed.
            Ok(n) if n <= 0x7fff_ffff => Stmt::Maint(MaintStmt::ResetMaster { to: Some(n.max(1)) }),
            _ => {
                return Some(Err(SqlError::parse(format!(
                    "RESET MASTER TO takes a file number from 0 to 2147483647, not {n}"
                ))))
            }
        },
        // Replication itself is not there yet.
        ["SHOW", "SLAVE" | "REPLICA", ..]
        | ["SHOW", "ALL", "SLAVES", ..]
        | ["CHANGE", "MASTER" | "REPLICATION", ..]
        | ["START" | "STOP" | "RESET", "SLAVE" | "REPLICA", ..]
        | ["RESET", "MASTER", ..] => {
            return Some(Err(SqlError::unsupported(format!("{} {}", u[0], u[1]))))
        }
        _ => return None,
    }))
}

/// The binlog record header a session's new transaction starts with, when
/// the binary log is on and the session logs (sql_log_bin).
pub(crate) fn begin(s: &Session, t: &mut txn::Txn) {
    if let Some(b) = &s.inst.binlog {
        if s.var_int("sql_log_bin") != 0 {
            t.set_annex(b.cf(), binlog::log::TXN_PREFIX, b.record_header());
        }
    }
}

/// The QUERY record of DDL statement `sql` about to run (None when the log
/// is off or the session does not log): the statement's text in UTF-8
/// (character_set_client utf8mb4, whatever the client sent it in), the
/// session's sql_mode, foreign_key_checks and unique_checks, the current
/// database (for CREATE/DROP DATABASE the database itself, with
/// LOG_EVENT_SUPPRESS_USE_F, as MariaDB writes them) and the statement's
/// start as its timestamp.
pub(crate) fn ddl_record(
    s: &Session,
    sql: &str,
    stmt: &crate::stmt::DdlStmt,
) -> Option<rel::binlog::DdlRecord> {
    use crate::stmt::DdlStmt;
    let b = s.inst.binlog.as_ref()?;
    if s.var_int("sql_log_bin") == 0 {
        return None;
    }
    let (db, flags) = match stmt {
        DdlStmt::CreateDatabase { name, .. } | DdlStmt::DropDatabase { name, .. } => {
            (name.as_str(), binlog::event::flag::SUPPRESS_USE)
        }
        _ => (s.db.as_deref().unwrap_or(""), 0),
    };
    let cs = |name: &str| {
        let v = s.get_var(name, false).map(|v| v.text()).unwrap_or_default();
        rel::collation::Collation::from_name(&String::from_utf8_lossy(&v))
            .map_or(UTF8MB4_GENERAL_CI, |c| c.id())
    };
    // OPTION_NO_FOREIGN_KEY_CHECKS, OPTION_RELAXED_UNIQUE_CHECKS.
    let mut flags2 = 0;
    if !s.fk_checks() {
        flags2 |= 1 << 26;
    }
    if s.var_int("unique_checks") == 0 {
        flags2 |= 1 << 27;
    }
    let q = binlog::event::QueryInfo {
        thread_id: s.proc.id as u32,
        flags2,
        db,
        sql_mode: s.sql_mode().0,
        charset: [
            UTF8MB4_GENERAL_CI,
            cs("collation_connection"),
            cs("collation_server"),
        ],
        query: sql,
    };
    let mut bytes = b.record_header();
    binlog::record::query_item(&mut bytes, flags, &binlog::event::query(&q));
    Some(rel::binlog::DdlRecord {
        cf: b.cf().0,
        prefix: binlog::log::TXN_PREFIX.to_vec(),
        bytes,
    })
}

/// The id MariaDB writes as character_set_client for a utf8mb4 client.
const UTF8MB4_GENERAL_CI: u16 = 45;

/// Runs DDL statement `stmt` (text `sql`) with its QUERY record pending
/// (`ddl_record`): the catalog write that makes the statement visible
/// carries the record in its own batch (`rel::binlog::set_ddl_record`). A
/// statement that changed nothing but succeeded (IF EXISTS / IF NOT EXISTS
/// finding nothing to do) is logged in a batch of its own, as MariaDB logs
/// it; one that failed before any change is not logged.
pub(crate) fn run_ddl(
    s: &mut Session,
    sql: &str,
    stmt: &crate::stmt::DdlStmt,
    f: impl FnOnce(&mut Session) -> Result<Outcome>,
) -> Result<Outcome> {
    let rec = ddl_record(s, sql, stmt);
    let logging = rec.is_some();
    rel::binlog::set_ddl_record(rec);
    let r = f(s);
    let left = rel::binlog::take_ddl_record();
    if let (Ok(_), Some(rec), true) = (&r, left, logging) {
        let mut b = lsm::WriteBatch::new();
        b.put_cf_seq_keyed(rec.cf, &rec.prefix, &rec.bytes);
        let sync = lsm::WriteOptions {
            sync: true,
            disable_wal: false,
        };
        s.inst.catalog.db().write(sync, b)?;
    }
    if logging {
        crate::replsrc::committed(s);
    }
    r
}

/// Replaces the pending QUERY record's text (DROP TABLE logs the tables it
/// drops, not the ones it did not find), or drops it (`None`: nothing to log).
pub(crate) fn retext_ddl(s: &Session, sql: Option<&str>, stmt: &crate::stmt::DdlStmt) {
    if rel::binlog::take_ddl_record().is_none() {
        return;
    }
    rel::binlog::set_ddl_record(sql.and_then(|q| ddl_record(s, q, stmt)));
}

/// Refuses statements that would change data without going through the
/// binary log while it is on.
pub(crate) fn refuse_unlogged(s: &Session, what: &str) -> Result<()> {
    match s.inst.binlog {
        Some(_) => Err(SqlError::unsupported(format!(
            "{what} while the binary log is on (log-bin)"
        ))),
        None => Ok(()),
    }
}

/// @@gtid_binlog_pos and @@gtid_current_pos ("" without a binary log).
pub(crate) fn gtid_pos(s: &Session) -> Value {
    match &s.inst.binlog {
        Some(b) => text(b.gtid_pos().unwrap_or_default()),
        None => text(""),
    }
}

/// SHOW MASTER STATUS, SHOW BINARY LOGS, SHOW BINLOG EVENTS.
pub fn show(s: &mut Session, stmt: &ShowStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let b = s.inst.binlog.clone();
    match stmt {
        ShowStmt::MasterStatus => {
            let cols = ["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"];
            let r = match b {
                Some(b) => {
                    let (f, pos) = b.status()?;
                    vec![vec![text(f), Value::UInt(pos), text(""), text("")]]
                }
                None => vec![],
            };
            rows(sink, &cols, r)
        }
        ShowStmt::BinaryLogs => {
            let b = b.ok_or_else(SqlError::no_binary_logging)?;
            let r = b
                .list()?
                .into_iter()
                .map(|(f, n)| vec![text(f), Value::UInt(n)])
                .collect();
            rows(sink, &["Log_name", "File_size"], r)
        }
        ShowStmt::BinlogEvents { file, from, limit } => {
            let cols = [
                "Log_name",
                "Pos",
                "Event_type",
                "Server_id",
                "End_log_pos",
                "Info",
            ];
            let Some(b) = b else {
                return rows(sink, &cols, vec![]);
            };
            let (off, n) = limit.unwrap_or((0, u64::MAX));
            let evs = b
                .events_limit(file.as_deref(), *from, off, n)?
                .ok_or_else(|| {
                    SqlError::binlog_command_failed(
                        "SHOW BINLOG EVENTS",
                        "Could not find target log",
                    )
                })?;
            let r = evs
                .into_iter()
                .map(|e| {
                    vec![
                        text(e.log_name),
                        Value::UInt(e.pos),
                        text(e.event_type),
                        Value::UInt(e.server_id as u64),
                        Value::UInt(e.end_log_pos),
                        text(e.info),
                    ]
                })
                .collect();
            rows(sink, &cols, r)
        }
        _ => Err(SqlError::internal("not a binary log SHOW")),
    }
}

/// FLUSH BINARY LOGS (also FLUSH LOGS): a new file.
pub(crate) fn flush(s: &Session) -> Result<()> {
    if let Some(b) = &s.inst.binlog {
        b.flush_logs()?;
    }
    Ok(())
}

/// RESET MASTER [TO n]: every binary log file goes, the log starts again
/// at file n (1) with an empty @@gtid_binlog_pos (`binlog::Binlog::reset`).
pub fn reset_master(s: &mut Session, to: Option<u32>) -> Result<Outcome> {
    let b = s.inst.binlog.clone().ok_or_else(SqlError::binlog_closed)?;
    b.reset(to.unwrap_or(1))?;
    ok()
}

/// PURGE BINARY LOGS TO 'file' | BEFORE 'datetime'.
pub fn purge(s: &mut Session, to: Option<&str>, before: Option<&str>) -> Result<Outcome> {
    let Some(b) = s.inst.binlog.clone() else {
        return ok();
    };
    if let Some(f) = to {
        if !b.purge_to(f)? {
            return Err(SqlError::unknown_target_binlog());
        }
        return ok();
    }
    let when = before.unwrap_or_default();
    let lit = when.trim().trim_matches(|c| c == '\'' || c == '"');
    let quoted = when.trim().len() >= 2 && when.trim().len() == lit.len() + 2;
    let p = rel::temporal::parse_datetime(lit.as_bytes())
        .filter(|_| quoted)
        .ok_or_else(|| {
            SqlError::unsupported(format!(
                "PURGE BINARY LOGS BEFORE {when} (a quoted datetime literal only)"
            ))
        })?;
    let secs = rel::temporal::datetime_to_unix_secs(p).max(0) as u64;
    b.purge_before(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))?;
    ok()
}
