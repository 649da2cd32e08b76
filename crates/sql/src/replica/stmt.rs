//! The replica's statements: parsing CHANGE MASTER TO (and CHANGE
//! REPLICATION SOURCE TO), START/STOP/RESET SLAVE (REPLICA), SHOW SLAVE
//! (REPLICA) STATUS, and running them. What Strata does not honour (named
//! connections, thread options, UNTIL, SSL and filter options,
//! MASTER_USE_GTID=current_pos) is refused with 1235.
use super::state::{Config, Position};
use crate::error::{Result, SqlError};
use crate::result::{ok, rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::Stmt;
use rel::value::Value;

/// A replica statement.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplicaStmt {
    /// CHANGE MASTER TO: the options given, by MariaDB's name.
    ChangeMaster(Vec<(String, OptVal)>),
    Start,
    Stop,
    Reset {
        all: bool,
    },
    ShowStatus,
}

/// An option's value.
#[derive(Debug, Clone, PartialEq)]
pub enum OptVal {
    Str(String),
    Num(String),
    Word(String),
}

fn parse_err(what: &str) -> SqlError {
    SqlError::parse(format!("near '{what}'"))
}

/// Splits the option list after TO into (name, value) pairs.
fn options(src: &str) -> Result<Vec<(String, OptVal)>> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] as char).is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        let st = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if st == i {
            return Err(parse_err(&src[st..]));
        }
        let mut name = src[st..i].to_ascii_uppercase();
        // MySQL 8.4's SOURCE_* names are MariaDB's MASTER_*.
        if let Some(rest) = name.strip_prefix("SOURCE_") {
            name = format!("MASTER_{rest}");
        }
        skip_ws(&mut i);
        if b.get(i) != Some(&b'=') {
            return Err(parse_err(&src[st..]));
        }
        i += 1;
        skip_ws(&mut i);
        let v = match b.get(i) {
            Some(&q @ (b'\'' | b'"')) => {
                let mut s = Vec::new();
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(parse_err(&src[st..])),
                        Some(&c) if c == q && b.get(i + 1) == Some(&q) => {
                            s.push(q);
                            i += 2;
                        }
                        Some(&c) if c == q => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if i + 1 < b.len() => {
                            s.push(b[i + 1]);
                            i += 2;
                        }
                        Some(&c) => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                OptVal::Str(String::from_utf8_lossy(&s).into_owned())
            }
            Some(c) if c.is_ascii_digit() || *c == b'.' => {
                let s = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                OptVal::Num(src[s..i].to_string())
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'(' => {
                let s = i;
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        b',' if depth == 0 => break,
                        _ => {}
                    }
                    i += 1;
                }
                OptVal::Word(src[s..i].trim().to_string())
            }
            _ => return Err(parse_err(&src[st..])),
        };
        out.push((name, v));
        skip_ws(&mut i);
        match b.get(i) {
            None => return Ok(out),
            Some(b',') => i += 1,
            Some(_) => return Err(parse_err(&src[i..])),
        }
    }
}

/// Parses a replica statement (None: not one). `ws` are the statement's
/// words.
pub fn parse(ws: &[String], sql: &str) -> Option<Result<Stmt>> {
    let up: Vec<String> = ws.iter().take(4).map(|w| w.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|w| w.as_str()).collect();
    let wrap = |r: ReplicaStmt| Some(Ok(Stmt::Replica(r)));
    let rest_after = |n: usize| -> &str {
        // The text after the first `n` words.
        let mut s = sql.trim_start();
        for _ in 0..n {
            let end = s.find(|c: char| c.is_whitespace()).unwrap_or(s.len());
            s = s[end..].trim_start();
        }
        s.trim_end_matches(|c: char| c == ';' || c.is_whitespace())
    };
    let refuse = |what: &str| Some(Err(SqlError::unsupported(what)));
    match u.as_slice() {
        ["CHANGE", "MASTER", "TO", ..] => match options(rest_after(3)) {
            Ok(o) => wrap(ReplicaStmt::ChangeMaster(o)),
            Err(e) => Some(Err(e)),
        },
        ["CHANGE", "REPLICATION", "SOURCE", "TO"] => match options(rest_after(4)) {
            Ok(o) => wrap(ReplicaStmt::ChangeMaster(o)),
            Err(e) => Some(Err(e)),
        },
        ["CHANGE", "MASTER", ..] => refuse("CHANGE MASTER 'connection_name' (named connections)"),
        ["CHANGE", "REPLICATION", "FILTER", ..] => refuse("CHANGE REPLICATION FILTER"),
        ["START" | "STOP", "SLAVE" | "REPLICA"] => wrap(if u[0] == "START" {
            ReplicaStmt::Start
        } else {
            ReplicaStmt::Stop
        }),
        ["START" | "STOP", "ALL", "SLAVES" | "REPLICAS"] => {
            refuse("START/STOP ALL SLAVES (named connections)")
        }
        ["START" | "STOP", "SLAVE" | "REPLICA", ..] => refuse(&format!(
            "{} {} with a connection name, thread option or UNTIL",
            u[0], u[1]
        )),
        ["RESET", "SLAVE" | "REPLICA"] => wrap(ReplicaStmt::Reset { all: false }),
        ["RESET", "SLAVE" | "REPLICA", "ALL"] => wrap(ReplicaStmt::Reset { all: true }),
        ["RESET", "SLAVE" | "REPLICA", ..] => refuse("RESET SLAVE 'connection_name'"),
        ["SHOW", "SLAVE" | "REPLICA", "STATUS"] => wrap(ReplicaStmt::ShowStatus),
        _ => None,
    }
}

/// Runs a replica statement.
pub fn run(s: &mut Session, stmt: &ReplicaStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let inst = s.inst.clone();
    let r = &inst.replica;
    match stmt {
        ReplicaStmt::ChangeMaster(opts) => {
            if r.running() {
                return Err(SqlError::slave_must_stop());
            }
            change_master(r, opts)?;
            ok()
        }
        ReplicaStmt::Start => {
            if !r.start(&inst)? {
                s.warn("Note", SqlError::slave_was_running());
            }
            ok()
        }
        ReplicaStmt::Stop => {
            if !r.stop(true)? {
                s.warn("Note", SqlError::slave_was_not_running());
            }
            ok()
        }
        ReplicaStmt::Reset { all } => {
            if r.running() {
                return Err(SqlError::slave_must_stop());
            }
            // The source's file and position are forgotten; the GTID
            // position stays (MariaDB keeps mysql.gtid_slave_pos).
            let mut p = r.shared.pos().clone();
            p.file.clear();
            p.pos = 4;
            r.store.save_position(&p)?;
            *r.shared.pos() = p;
            *r.shared.status() = super::Status::default();
            if *all {
                r.store.forget_config()?;
                *r.config() = None;
            }
            ok()
        }
        ReplicaStmt::ShowStatus => show_status(r, sink),
    }
}

fn change_master(r: &super::Replica, opts: &[(String, OptVal)]) -> Result<()> {
    let mut cfg = r.config().clone().unwrap_or_else(|| Config {
        port: 3306,
        connect_retry: 60,
        heartbeat: 30.0,
        use_gtid: true,
        ..Default::default()
    });
    let mut pos = r.shared.pos().clone();
    let (mut file, mut at, mut gtid, mut moved) = (None, None, None, false);
    let num = |name: &str, v: &OptVal| -> Result<String> {
        match v {
            OptVal::Num(n) => Ok(n.clone()),
            _ => Err(SqlError::parse(format!("{name} needs a number"))),
        }
    };
    let string = |name: &str, v: &OptVal| -> Result<String> {
        match v {
            OptVal::Str(s) => Ok(s.clone()),
            _ => Err(SqlError::parse(format!("{name} needs a quoted string"))),
        }
    };
    for (name, v) in opts {
        let bad_num = || SqlError::parse(format!("{name}: bad number"));
        match name.as_str() {
            "MASTER_HOST" => {
                cfg.host = string(name, v)?;
                moved = true;
            }
            "MASTER_PORT" => {
                cfg.port = num(name, v)?.parse().map_err(|_| bad_num())?;
                moved = true;
            }
            "MASTER_USER" => cfg.user = string(name, v)?,
            "MASTER_PASSWORD" => cfg.password = string(name, v)?,
            "MASTER_CONNECT_RETRY" => {
                cfg.connect_retry = num(name, v)?.parse().map_err(|_| bad_num())?
            }
            "MASTER_HEARTBEAT_PERIOD" => {
                let p: f64 = num(name, v)?.parse().map_err(|_| bad_num())?;
                if !(0.0..=4_294_967.0).contains(&p) {
                    return Err(SqlError::parse(format!("{name} out of range")));
                }
                cfg.heartbeat = p;
            }
            "MASTER_LOG_FILE" => file = Some(string(name, v)?),
            "MASTER_LOG_POS" => at = Some(num(name, v)?.parse::<u64>().map_err(|_| bad_num())?),
            "MASTER_USE_GTID" => {
                let w = match v {
                    OptVal::Word(w) => w.to_ascii_lowercase(),
                    _ => return Err(SqlError::parse("MASTER_USE_GTID=slave_pos|no")),
                };
                gtid = Some(match w.as_str() {
                    "slave_pos" => true,
                    "no" => false,
                    "current_pos" => {
                        return Err(SqlError::unsupported("MASTER_USE_GTID=current_pos"))
                    }
                    _ => return Err(SqlError::parse("MASTER_USE_GTID=slave_pos|no")),
                });
            }
            // MySQL 8.4's GTID flavour is not MariaDB's.
            "MASTER_AUTO_POSITION" => {
                return Err(SqlError::unsupported(
                    "MASTER_AUTO_POSITION (MySQL GTIDs; use MASTER_USE_GTID=slave_pos)",
                ))
            }
            other => return Err(SqlError::unsupported(format!("CHANGE MASTER TO {other}"))),
        }
    }
    if file.is_some() || at.is_some() {
        // An explicit position means file/position replication (MariaDB
        // 10.11 switches MASTER_USE_GTID to no unless it is given).
        if gtid == Some(true) {
            return Err(SqlError::unsupported(
                "MASTER_LOG_FILE/MASTER_LOG_POS together with MASTER_USE_GTID=slave_pos",
            ));
        }
        cfg.use_gtid = false;
        pos.file = file.unwrap_or(pos.file);
        pos.pos = at.unwrap_or(4).max(4);
    } else if moved {
        // A new source: its log is read from the start (or by GTID).
        pos.file.clear();
        pos.pos = 4;
    }
    if let Some(g) = gtid {
        cfg.use_gtid = g;
    }
    if cfg.host.is_empty() {
        return Err(SqlError::unsupported(
            "CHANGE MASTER TO without MASTER_HOST",
        ));
    }
    cfg.running = false;
    r.store.save_position(&pos)?;
    *r.shared.pos() = pos;
    r.store.save_config(&cfg)?;
    *r.config() = Some(cfg);
    Ok(())
}

fn show_status(r: &super::Replica, sink: &mut dyn ResultSink) -> Result<Outcome> {
    const COLS: [&str; 54] = [
        "Slave_IO_State",
        "Master_Host",
        "Master_User",
        "Master_Port",
        "Connect_Retry",
        "Master_Log_File",
        "Read_Master_Log_Pos",
        "Relay_Log_File",
        "Relay_Log_Pos",
        "Relay_Master_Log_File",
        "Slave_IO_Running",
        "Slave_SQL_Running",
        "Replicate_Do_DB",
        "Replicate_Ignore_DB",
        "Replicate_Do_Table",
        "Replicate_Ignore_Table",
        "Replicate_Wild_Do_Table",
        "Replicate_Wild_Ignore_Table",
        "Last_Errno",
        "Last_Error",
        "Skip_Counter",
        "Exec_Master_Log_Pos",
        "Relay_Log_Space",
        "Until_Condition",
        "Until_Log_File",
        "Until_Log_Pos",
        "Master_SSL_Allowed",
        "Master_SSL_CA_File",
        "Master_SSL_CA_Path",
        "Master_SSL_Cert",
        "Master_SSL_Cipher",
        "Master_SSL_Key",
        "Seconds_Behind_Master",
        "Master_SSL_Verify_Server_Cert",
        "Last_IO_Errno",
        "Last_IO_Error",
        "Last_SQL_Errno",
        "Last_SQL_Error",
        "Replicate_Ignore_Server_Ids",
        "Master_Server_Id",
        "Master_SSL_Crl",
        "Master_SSL_Crlpath",
        "Using_Gtid",
        "Gtid_IO_Pos",
        "Replicate_Do_Domain_Ids",
        "Replicate_Ignore_Domain_Ids",
        "Parallel_Mode",
        "SQL_Delay",
        "SQL_Remaining_Delay",
        "Slave_SQL_Running_State",
        "Slave_DDL_Groups",
        "Slave_Non_Transactional_Groups",
        "Slave_Transactional_Groups",
        "Replicate_Rewrite_DB",
    ];
    let Some(cfg) = r.config().clone() else {
        return rows(sink, &COLS, vec![]);
    };
    let st = r.shared.status().clone();
    let pos: Position = r.shared.pos().clone();
    let running = r.running();
    let (io, sql) = if running {
        (
            st.io_running.as_str(),
            if st.sql_running { "Yes" } else { "No" },
        )
    } else {
        ("No", "No")
    };
    let read_file = if st.read_file.is_empty() {
        pos.file.clone()
    } else {
        st.read_file.clone()
    };
    let read_pos = if st.read_file.is_empty() {
        pos.pos
    } else {
        st.read_pos
    };
    let u = |n: u64| Value::UInt(n);
    let e = || text("");
    let last_errno = st.last_sql_errno;
    let row = vec![
        text(&st.io_state),
        text(&cfg.host),
        text(&cfg.user),
        u(cfg.port as u64),
        u(cfg.connect_retry as u64),
        text(&read_file),
        u(read_pos),
        e(),
        u(4),
        text(&pos.file),
        text(io),
        text(sql),
        e(),
        e(),
        e(),
        e(),
        e(),
        e(),
        u(last_errno as u64),
        text(&st.last_sql_error),
        u(0),
        u(pos.pos),
        u(0),
        text("None"),
        e(),
        u(0),
        text("No"),
        e(),
        e(),
        e(),
        e(),
        e(),
        match (running, st.behind) {
            (true, Some(b)) => u(b),
            _ => Value::Null,
        },
        text("No"),
        u(st.last_io_errno as u64),
        text(&st.last_io_error),
        u(st.last_sql_errno as u64),
        text(&st.last_sql_error),
        e(),
        u(st.master_server_id as u64),
        e(),
        e(),
        text(if cfg.use_gtid { "Slave_Pos" } else { "No" }),
        text(if cfg.use_gtid {
            pos.gtid_text()
        } else {
            String::new()
        }),
        e(),
        e(),
        text("none"),
        u(0),
        Value::Null,
        text(&st.sql_state),
        u(st.ddl_groups),
        u(0),
        u(st.trx_groups),
        e(),
    ];
    rows(sink, &COLS, vec![row])
}
