//! One client connection: handshake, then a command loop that hands SQL to
//! a `sql::Session` and writes its results as MySQL packets (text rows for
//! COM_QUERY, binary rows for COM_STMT_EXECUTE). A malformed packet or an
//! I/O error ends only this connection.
use crate::results::{column_def, param_value, Sink};
use crate::Shared;
use rel::value::Value;
use sql::error::SqlError;
use sql::result::{ColumnInfo, Outcome};
use sql::Session;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wire::{status, ColumnDef, ColumnType, Command, Conn, OkPacket, ParamType};

/// Largest packet read before the client has authenticated (a handshake
/// response with a long user name, database, plugin data and attributes).
const PRE_AUTH_MAX_PACKET: usize = 64 << 10;

/// Per-prepared-statement protocol state.
#[derive(Default)]
struct StmtState {
    nparams: usize,
    types: Vec<ParamType>,
    long_data: Vec<Option<Vec<u8>>>,
    /// A parameter's long data passed max_allowed_packet: the next execution fails.
    long_overflow: bool,
    columns: Vec<ColumnInfo>,
}

fn status_flags(s: &Session) -> u16 {
    let mut f = 0;
    if s.autocommit() {
        f |= status::SERVER_STATUS_AUTOCOMMIT;
    }
    if s.in_transaction() {
        f |= status::SERVER_STATUS_IN_TRANS;
    }
    f
}

fn finish<S: Read + Write>(
    conn: &mut Conn<S>,
    s: &Session,
    r: sql::Result<Outcome>,
) -> wire::Result<()> {
    finish_more(conn, s, r, false)
}

/// `finish`, with SERVER_MORE_RESULTS_EXISTS when another statement of a multi-statement
/// query follows.
fn finish_more<S: Read + Write>(
    conn: &mut Conn<S>,
    s: &Session,
    r: sql::Result<Outcome>,
    more: bool,
) -> wire::Result<()> {
    let mut st = status_flags(s);
    if more {
        st |= status::SERVER_MORE_RESULTS_EXISTS;
    }
    let warnings = s.warnings.len().min(u16::MAX as usize) as u16;
    match r {
        Ok(o) if o.result_set => conn.finish_result_set(st, warnings),
        Ok(o) => conn.send_ok(&OkPacket {
            affected_rows: match o.found_rows {
                Some(n) if conn.capabilities() & wire::cap::CLIENT_FOUND_ROWS != 0 => n,
                _ => o.affected_rows,
            },
            last_insert_id: o.last_insert_id,
            status: st,
            warnings,
            info: o.info,
        }),
        Err(e) => conn.send_err(e.code, e.state, &e.msg),
    }
}

/// A client socket: a byte stream whose reads and writes can time out.
pub trait Socket: Read + Write + Send {
    fn set_timeouts(&self, read: Duration, write: Duration) -> std::io::Result<()>;
    /// A second handle for the session registry (KILL CONNECTION, a client gone).
    fn hook(&self) -> Option<crate::watch::SocketHook>;
}

/// Holds an authenticated session's place in `Threads_connected` (which
/// max_connections bounds) from the moment it is counted until dropped,
/// whichever way the connection ends.
struct Attached<'a> {
    inst: &'a sql::Instance,
    counted: std::cell::Cell<bool>,
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        if self.counted.get() {
            self.inst.disconnect();
        }
    }
}

/// Holds a place among the connections still in their handshake.
struct Handshaking<'a>(&'a AtomicUsize);

impl Drop for Handshaking<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A global variable in seconds.
fn secs(inst: &sql::Instance, name: &str, default: u64) -> Duration {
    let s = inst
        .global_var(name)
        .and_then(|v| v.to_i128())
        .map_or(default, |v| v.clamp(1, 31_536_000) as u64);
    Duration::from_secs(s)
}

/// The message of a caught panic.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Serves one connection until it quits or fails. A panic (a bug) ends
/// only this connection: its transaction rolls back, its locks and slot are
/// released, and it is counted in `Strata_panics`.
pub fn serve(shared: &Arc<Shared>, stream: crate::tls::Stream, peer: &str) {
    let inst = &shared.inst;
    let conn_id = inst.connect();
    let r = catch_unwind(AssertUnwindSafe(|| {
        serve_inner(shared, stream, conn_id, peer)
    }));
    match r {
        Ok(Err(e)) if !e.is_disconnect() && !is_timeout(&e) => {
            eprintln!("strata: connection {conn_id} ({peer}): {e}");
        }
        Ok(_) => {}
        Err(p) => {
            inst.count_panic();
            eprintln!(
                "strata: connection {conn_id} ({peer}) closed by an internal error: {}",
                panic_message(&*p)
            );
        }
    }
}

/// A read that timed out (connect_timeout, wait_timeout): the connection
/// just ends.
fn is_timeout(e: &wire::Error) -> bool {
    matches!(e, wire::Error::Io(io) if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

fn serve_inner(
    shared: &Arc<Shared>,
    stream: crate::tls::Stream,
    conn_id: u64,
    peer: &str,
) -> wire::Result<()> {
    let inst = &shared.inst;
    // A client that does not finish its handshake within connect_timeout is
    // dropped: silent sockets cannot hold places for long.
    let write_timeout = secs(inst, "net_write_timeout", 60);
    stream
        .set_timeouts(secs(inst, "connect_timeout", 10), write_timeout)
        .map_err(wire::Error::Io)?;
    let hook = stream.hook();
    let unix = stream.is_unix();
    // --server-version (a MariaDB replica needs 10 or later for GTIDs:
    // `sql::vars::VERSION`).
    let version = inst
        .global_var("version")
        .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
        .unwrap_or_else(|| sql::vars::VERSION.to_string());
    let mut conn = Conn::new(stream, conn_id as u32, &version);
    if let Some(cfg) = shared.tls.clone() {
        conn.enable_tls(Box::new(move |s, early| s.start_tls(&cfg, early)));
    }
    conn.set_capability(wire::cap::CLIENT_MULTI_STATEMENTS, true);
    conn.set_unix_socket(unix);
    if let Some(k) = &shared.rsa {
        conn.set_rsa_keys(k.clone());
    }
    conn.set_client_host(peer);
    // Before authentication a client gets no more than a handshake
    // response needs (an unauthenticated socket must not pin megabytes).
    conn.set_max_packet(PRE_AUTH_MAX_PACKET);
    let pending = shared.handshaking.fetch_add(1, Ordering::Relaxed) + 1;
    let handshaking = Handshaking(&shared.handshaking);
    if pending > (2 * shared.max_connections).max(256) {
        send_sql(&mut conn, &SqlError::too_many_connections())?;
        return conn.flush();
    }
    let hosts = crate::accounts::client_hosts(peer);
    let cat = inst.clone();
    let attached = Attached {
        inst,
        counted: std::cell::Cell::new(false),
    };
    // After authentication, before the OK: unknown database, then the
    // session limit (one more session for root, as MySQL keeps one for
    // SUPER users).
    conn.set_client_host(&hosts[0]);
    let login = crate::accounts::Login::default();
    let lookup = |u: &str| crate::accounts::credentials(inst, u, &hosts, &login);
    let info = match conn.handshake_with(&lookup, &|hi| {
        crate::accounts::remember(inst, hi);
        // REQUIRE SSL, then require_secure_transport (MySQL's order).
        crate::accounts::check_transport(inst, &login, &hi.user, &hosts, hi.tls, unix)
            .map_err(sql_packet)?;
        if let Some(d) = &hi.database {
            if !cat.catalog.state().databases.contains_key(d) {
                return Err(sql_packet(SqlError::bad_db(d)));
            }
            crate::accounts::check_db(inst, &login, &hi.user, &hosts, d).map_err(sql_packet)?;
        }
        let n = inst.attach();
        attached.counted.set(true);
        let limit = shared.max_connections as u64 + u64::from(hi.user == "root");
        if n > limit {
            return Err(sql_packet(SqlError::too_many_connections()));
        }
        Ok(())
    }) {
        Ok(i) => i,
        Err(e) => {
            inst.counters
                .aborted_connects
                .fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
    };
    drop(handshaking);
    conn.set_max_packet(shared.max_packet);
    let mut sess = inst.session(conn_id, &info.user, info.database.clone());
    crate::accounts::attach(&mut sess, &hosts, &login);
    sess.proc.set_host(peer);
    sess.tls = conn.get_ref().tls_info();
    if let Some(h) = hook {
        sess.proc.set_hook(Arc::new(h));
    }
    // An interactive client's wait_timeout starts from interactive_timeout.
    let interactive = info.capabilities & wire::cap::CLIENT_INTERACTIVE != 0;
    let idle = if interactive {
        secs(inst, "interactive_timeout", 28800)
    } else {
        secs(inst, "wait_timeout", 28800)
    };
    sess.set_var("wait_timeout".into(), Value::Int(idle.as_secs() as i64));
    set_charset(&mut sess, info.charset);
    conn.get_ref()
        .set_timeouts(idle, write_timeout)
        .map_err(wire::Error::Io)?;
    let mut cl = Client {
        shared,
        stmts: HashMap::new(),
        multi: info.capabilities & wire::cap::CLIENT_MULTI_STATEMENTS != 0,
        hosts: hosts.clone(),
        unix,
        tls: sess.tls.clone(),
        charset: info.charset,
    };
    let result = command_loop(&mut conn, &mut sess, &mut cl, idle, write_timeout);
    if result.is_err() || sess.proc.connection_killed() {
        inst.counters
            .aborted_clients
            .fetch_add(1, Ordering::Relaxed);
    }
    if let Some(b) = &inst.binlog {
        b.unregister_replica(conn_id);
    }
    sess.close();
    drop(attached);
    result
}

/// The handshake's (or COM_CHANGE_USER's) collation sets the connection's character
/// sets and collation, as SET NAMES does. An id Strata does not know, and MySQL
/// 8's utf8mb4_0900_ai_ci (255, which MySQL 8 clients send by default), falls back
/// to the character set's default collation, as MariaDB 10.11 does. False, with
/// nothing set (the session keeps the server's defaults, as MariaDB does), for an
/// id of no character set Strata knows (COM_CHANGE_USER sends two bytes).
fn set_charset(sess: &mut Session, collation: u16) -> bool {
    use rel::collation::Collation;
    let Some(cs) = charset_of_id(collation) else {
        return false;
    };
    for v in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        sess.set_var(v.into(), Value::Bytes(cs.as_bytes().to_vec()));
    }
    // 255 is MySQL 8's utf8mb4_0900_ai_ci, which MariaDB 10.11 does not know:
    // a MySQL 8 client gets the character set's default, as there.
    let coll = Collation::from_id(collation)
        .filter(|c| c.charset() == cs && *c != Collation::Utf8mb4Uca0900AiCi)
        .or_else(|| Collation::default_of_charset(cs))
        .unwrap_or(Collation::DEFAULT);
    sess.set_var(
        "collation_connection".into(),
        Value::Bytes(coll.name().as_bytes().to_vec()),
    );
    true
}

/// The character set of a client's collation id: an id up to 255 as
/// `name_of_collation` reads it; above, that of a collation Strata knows
/// (utf8mb4_uca1400_ai_ci is 2304), or of MariaDB's UCA 14.0.0 ranges of
/// utf8mb3 (2048..) and utf8mb4 (2304..) whose tailorings Strata lacks; None
/// for any other id.
fn charset_of_id(id: u16) -> Option<&'static str> {
    match u8::try_from(id) {
        Ok(b) => Some(sql::text::ClientCharset::name_of_collation(b)),
        Err(_) => rel::collation::Collation::from_id(id)
            .map(|c| c.charset())
            .or(match id {
                2048..=2303 => Some("utf8mb3"),
                2304..=2559 => Some("utf8mb4"),
                _ => None,
            }),
    }
}

/// Test hook of debug builds: a query containing `STRATA_TEST_PANIC_ON`
/// (when set) panics, to test that a panic ends only its connection.
#[cfg(debug_assertions)]
fn inject_panic(text: &str) {
    if let Ok(m) = std::env::var("STRATA_TEST_PANIC_ON") {
        if !m.is_empty() && text.contains(&m) {
            panic!("injected by STRATA_TEST_PANIC_ON");
        }
    }
}

/// What the command loop does after a command.
enum Step {
    /// The reply is written: flush it.
    Reply,
    /// The command has no reply.
    NoReply,
    /// The client said goodbye.
    Quit,
}

/// Per-connection state the command loop keeps beside the session.
struct Client<'a> {
    shared: &'a Shared,
    stmts: HashMap<u32, StmtState>,
    /// CLIENT_MULTI_STATEMENTS (from the handshake, or COM_SET_OPTION).
    multi: bool,
    /// The client's host names (`accounts::client_hosts` of its address):
    /// COM_RESET_CONNECTION and COM_CHANGE_USER find the account from these,
    /// as the handshake did.
    hosts: Vec<String>,
    /// Connected over the unix socket (secure transport, as in MySQL).
    unix: bool,
    /// The connection's TLS cipher and version, for every session it gets
    /// (COM_RESET_CONNECTION and COM_CHANGE_USER make new ones).
    tls: Option<sql::session::TlsInfo>,
    /// The collation id of the handshake (or of the last COM_CHANGE_USER):
    /// COM_RESET_CONNECTION gives the new session its character sets and
    /// collation back, as MariaDB does (not the global defaults). A
    /// COM_CHANGE_USER id of no known character set leaves it (MariaDB keeps
    /// its `org_charset`).
    charset: u16,
}

fn command_loop<S: Socket>(
    conn: &mut Conn<S>,
    sess: &mut Session,
    cl: &mut Client,
    mut idle: Duration,
    write_timeout: Duration,
) -> wire::Result<()> {
    loop {
        // SET wait_timeout takes effect for the next wait.
        let want = sess
            .get_var("wait_timeout", false)
            .and_then(|v| v.to_i128())
            .map_or(idle, |v| Duration::from_secs(v.clamp(1, 31_536_000) as u64));
        if want != idle {
            idle = want;
            conn.get_ref()
                .set_timeouts(idle, write_timeout)
                .map_err(wire::Error::Io)?;
        }
        let cmd = match conn.read_command() {
            Ok(c) => c,
            // The rest of the oversized packet is still unread: reading on
            // would run it as commands. 1153 was sent; close, as MySQL does.
            Err(e @ wire::Error::PacketTooLarge { .. }) => return Err(e),
            // The whole packet was read, so the stream is still in step: answer and
            // go on, as for any other bad command.
            Err(wire::Error::Malformed(m)) => {
                send_sql(conn, &SqlError::malformed_packet(m))?;
                conn.flush()?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let r = catch_unwind(AssertUnwindSafe(|| dispatch(conn, sess, cl, cmd)));
        // KILL CONNECTION (or the client gone): the connection ends here.
        if sess.proc.connection_killed() {
            let _ = conn.flush();
            return Ok(());
        }
        match r {
            Ok(Ok(Step::Reply)) => conn.flush()?,
            Ok(Ok(Step::NoReply)) => {}
            Ok(Ok(Step::Quit)) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(p) => {
                // A bug in this statement. Its transaction and locks go
                // first; the client gets an error (valid also in the middle
                // of a result set) and the connection closes, since what the
                // session held may be half changed.
                let msg = panic_message(&*p);
                sess.inst.count_panic();
                eprintln!(
                    "strata: connection {}: internal error, connection closed: {msg}",
                    sess.conn_id
                );
                let _ = catch_unwind(AssertUnwindSafe(|| sess.rollback()));
                let _ = send_sql(
                    conn,
                    &SqlError::internal(format!(
                        "Internal error (a bug; the connection is closed): {msg}"
                    )),
                );
                let _ = conn.flush();
                return Ok(());
            }
        }
    }
}

/// Runs one command and writes its reply (not flushed).
fn dispatch<S: Read + Write>(
    conn: &mut Conn<S>,
    sess: &mut Session,
    cl: &mut Client,
    cmd: Command,
) -> wire::Result<Step> {
    let stmts = &mut cl.stmts;
    {
        match cmd {
            Command::Query(q) => {
                #[cfg(debug_assertions)]
                inject_panic(&String::from_utf8_lossy(&q));
                let parts = if cl.multi {
                    sql::text::split_statements(&q)
                } else {
                    vec![&q[..]]
                };
                if parts.len() <= 1 {
                    let mut sink = Sink::new(conn, false, sess);
                    let r = sess.query_bytes(&q, &mut sink);
                    finish(conn, sess, r)?;
                } else {
                    // One result per statement, each but the last flagged "more
                    // results"; the first error ends the query.
                    for (i, part) in parts.iter().enumerate() {
                        let mut sink = Sink::new(conn, false, sess);
                        let r = sess.query_bytes(part, &mut sink);
                        let failed = r.is_err();
                        finish_more(conn, sess, r, i + 1 < parts.len() && !failed)?;
                        if failed {
                            break;
                        }
                    }
                }
            }
            Command::StmtPrepare(q) => match sess.prepare_bytes(&q) {
                Ok((id, nparams, cols)) => {
                    let pdefs: Vec<ColumnDef> = (0..nparams)
                        .map(|_| ColumnDef::new("?", ColumnType::VarString))
                        .collect();
                    let cdefs: Vec<ColumnDef> = cols.iter().map(column_def).collect();
                    conn.send_prepare_ok(id, &pdefs, &cdefs, 0)?;
                    stmts.insert(
                        id,
                        StmtState {
                            nparams,
                            types: vec![],
                            long_data: vec![None; nparams],
                            long_overflow: false,
                            columns: cols,
                        },
                    );
                }
                Err(e) => conn.send_err(e.code, e.state, &e.msg)?,
            },
            Command::StmtExecute(pkt) => {
                let Some(st) = stmts.get_mut(&pkt.stmt_id) else {
                    send_sql(
                        conn,
                        &SqlError::unknown_statement(pkt.stmt_id, "mysqld_stmt_execute"),
                    )?;
                    return Ok(Step::Reply);
                };
                if std::mem::take(&mut st.long_overflow) {
                    st.long_data.iter_mut().for_each(|d| *d = None);
                    send_sql(conn, &SqlError::long_data_too_large())?;
                    return Ok(Step::Reply);
                }
                let params =
                    match wire::decode_params(&pkt, st.nparams, &mut st.types, &mut st.long_data) {
                        Ok(p) => p,
                        Err(wire::Error::Malformed(m)) => {
                            st.long_data.iter_mut().for_each(|d| *d = None);
                            send_sql(
                                conn,
                                &SqlError::wrong_arguments(format!("mysqld_stmt_execute: {m}")),
                            )?;
                            return Ok(Step::Reply);
                        }
                        Err(e) => return Err(e),
                    };
                st.long_data.iter_mut().for_each(|d| *d = None);
                let params: Vec<Value> = params.into_iter().map(param_value).collect();
                let _ = &st.columns;
                let mut sink = Sink::new(conn, true, sess);
                let r = sess.execute_prepared(pkt.stmt_id, &params, &mut sink);
                finish(conn, sess, r)?;
            }
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                sess.count_com("stmt_send_long_data");
                if let Some(st) = stmts.get_mut(&stmt_id) {
                    if let Some(slot) = st.long_data.get_mut(param as usize) {
                        let buf = slot.get_or_insert_with(Vec::new);
                        if buf.len() + data.len() <= cl.shared.max_packet {
                            buf.extend_from_slice(&data);
                        } else {
                            // Nothing is dropped silently: the execution reports it.
                            *slot = None;
                            st.long_overflow = true;
                        }
                    }
                }
                return Ok(Step::NoReply);
            }
            Command::StmtClose(id) => {
                stmts.remove(&id);
                sess.close_prepared(id);
                return Ok(Step::NoReply);
            }
            Command::StmtReset(id) => {
                sess.count_com("stmt_reset");
                if let Some(st) = stmts.get_mut(&id) {
                    st.long_data.iter_mut().for_each(|d| *d = None);
                    st.long_overflow = false;
                }
                conn.send_ok(&OkPacket {
                    status: status_flags(sess),
                    ..Default::default()
                })?;
            }
            Command::StmtFetch { .. } => send_sql(conn, &SqlError::unsupported("cursors"))?,
            Command::Ping => {
                sess.count_com("admin_commands");
                conn.send_ok(&OkPacket {
                    status: status_flags(sess),
                    ..Default::default()
                })?
            }
            Command::InitDb(db) => {
                let name = String::from_utf8_lossy(&db).into_owned();
                let mut sink = sql::result::Collect::default();
                let r = sess.query(&format!("USE `{}`", name.replace('`', "``")), &mut sink);
                finish(conn, sess, r)?;
            }
            Command::FieldList { table, wildcard } => {
                let t = String::from_utf8_lossy(&table).into_owned();
                let wild = wildcard.strip_suffix(&[0]).unwrap_or(&wildcard);
                match crate::results::field_list(sess, &t, &String::from_utf8_lossy(wild)) {
                    Ok(defs) => conn.send_field_list(&defs, status_flags(sess))?,
                    Err(e) => send_sql(conn, &e)?,
                }
            }
            Command::Statistics => {
                let up = sess.inst.started.elapsed().as_secs();
                let msg = format!(
                    "Uptime: {up}  Threads: {}  Questions: {}",
                    sess.inst.threads_connected(),
                    sess.inst.questions()
                );
                conn.send_packet(msg.as_bytes())?;
            }
            Command::ResetConnection => {
                // An open bulk load ends first: its failure is the answer
                // (the session is reset all the same).
                let ended = sess.end_bulk_load();
                sess.rollback();
                let (inst, id, user, db) = (
                    sess.inst.clone(),
                    sess.conn_id,
                    sess.user.clone(),
                    sess.db.clone(),
                );
                // The session keeps the account it logged in as (MariaDB
                // keeps its security context): never a second look-up.
                let (account, host) = (sess.account.take(), std::mem::take(&mut sess.host));
                *sess = inst.session(id, &user, db);
                sess.account = account;
                sess.host = host;
                sess.tls = cl.tls.clone();
                set_charset(sess, cl.charset);
                stmts.clear();
                match ended {
                    Ok(()) => conn.send_ok(&OkPacket {
                        status: status_flags(sess),
                        ..Default::default()
                    })?,
                    Err(e) => send_sql(conn, &e)?,
                }
            }
            Command::SetOption(o) => match o {
                0 | 1 => {
                    cl.multi = o == 0;
                    conn.send_eof(status_flags(sess), 0)?
                }
                _ => send_sql(conn, &SqlError::unknown_command(": COM_SET_OPTION value"))?,
            },
            Command::Debug => conn.send_eof(status_flags(sess), 0)?,
            Command::ProcessKill(id) => {
                sess.count_com("kill");
                let t = sql::procs::KillTarget::Thread(id.into());
                match sql::procs::kill(sess, true, &t) {
                    Ok(()) => conn.send_ok(&OkPacket {
                        status: status_flags(sess),
                        ..Default::default()
                    })?,
                    Err(e) => send_sql(conn, &e)?,
                }
            }
            Command::ChangeUser(cu) => {
                // The old session ends first (its transaction rolls back), as in
                // MySQL; an open bulk load's failure ends the connection
                // with that error.
                if let Err(e) = sess.end_bulk_load() {
                    send_sql(conn, &e)?;
                    conn.flush()?;
                    return Ok(Step::Quit);
                }
                sess.rollback();
                let inst = sess.inst.clone();
                let hosts = &cl.hosts;
                let login = crate::accounts::Login::default();
                let lookup = |u: &str| crate::accounts::credentials(&inst, u, hosts, &login);
                // After the password, as at login (a client that does not know
                // it learns nothing, not even which databases exist): the
                // transport checks of the new user (REQUIRE SSL, then
                // require_secure_transport), then the database (1049, 1044).
                let (tls, unix) = (conn.is_tls(), cl.unix);
                let check = |hi: &wire::HandshakeInfo| {
                    crate::accounts::remember(&inst, hi);
                    crate::accounts::check_transport(&inst, &login, &hi.user, hosts, tls, unix)
                        .map_err(sql_packet)?;
                    if let Some(d) = &hi.database {
                        if !inst.catalog.state().databases.contains_key(d) {
                            return Err(sql_packet(SqlError::bad_db(d)));
                        }
                        crate::accounts::check_db(&inst, &login, &hi.user, hosts, d)
                            .map_err(sql_packet)?;
                    }
                    Ok(())
                };
                match conn.change_user_with(&cu, &lookup, &check) {
                    Ok(info) => {
                        let wait = sess.session_var("wait_timeout").cloned();
                        *sess = inst.session(sess.conn_id, &info.user, info.database.clone());
                        crate::accounts::attach(sess, hosts, &login);
                        sess.tls = cl.tls.clone();
                        if let Some(w) = wait {
                            sess.set_var("wait_timeout".into(), w);
                        }
                        if set_charset(sess, info.charset) {
                            cl.charset = info.charset;
                        }
                        stmts.clear();
                        return Ok(Step::NoReply);
                    }
                    // ERR 1045 was sent: the connection ends.
                    Err(wire::Error::Io(e)) => return Err(wire::Error::Io(e)),
                    Err(_) => {
                        conn.flush()?;
                        return Ok(Step::Quit);
                    }
                }
            }
            Command::RegisterSlave(r) => crate::replsrc::register(conn, sess, r)?,
            Command::BinlogDump(d) => {
                if crate::replsrc::dump(conn, sess, cl.shared, d)? {
                    return Ok(Step::Quit);
                }
            }
            Command::BinlogDumpGtid => send_sql(
                conn,
                &SqlError::unsupported(
                    "COM_BINLOG_DUMP_GTID (MySQL's GTID protocol; MariaDB replicas use \
                     COM_BINLOG_DUMP with @slave_connect_state)",
                ),
            )?,
            Command::Quit => return Ok(Step::Quit),
            Command::Unknown(c) => send_sql(conn, &SqlError::unknown_command(format!(" {c}")))?,
        }
    }
    Ok(Step::Reply)
}

/// Sends an error from the error table (sql::error).
fn send_sql<S: Read + Write>(conn: &mut Conn<S>, e: &SqlError) -> wire::Result<()> {
    conn.send_err(e.code, e.state, &e.msg)
}

/// An error from the error table as an ERR packet.
fn sql_packet(e: SqlError) -> wire::ErrPacket {
    wire::ErrPacket::new(e.code, e.state, e.msg)
}
