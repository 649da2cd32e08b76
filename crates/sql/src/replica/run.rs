//! The replication thread: connects to the source through the server's
//! [`Connector`] from the applied position (file/offset, or GTIDs with
//! MASTER_USE_GTID=slave_pos), hands every event to the applier, and on a
//! network error reconnects with a backoff (0.5 s doubling up to
//! MASTER_CONNECT_RETRY), resuming from the applied position (a
//! half-received transaction is rolled back and comes again whole). An
//! apply error stops it with Last_SQL_Errno/Last_SQL_Error set, as
//! MariaDB's SQL thread stops; a source's refusal to serve its log (1236)
//! stops it with Last_IO_Errno.
use super::apply::{Applier, Fault};
use super::state::{Config, Store};
use super::{IoState, Shared};
use crate::Instance;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the thread asks the server's connector for.
#[derive(Debug, Clone)]
pub struct ConnectRequest {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// This server's @@server_id (COM_REGISTER_SLAVE, COM_BINLOG_DUMP).
    pub server_id: u32,
    /// Where to start: the source's file and offset, or (Some) the GTID
    /// position to send as @slave_connect_state.
    pub file: String,
    pub pos: u64,
    pub gtid: Option<String>,
    /// MASTER_HEARTBEAT_PERIOD (zero: none).
    pub heartbeat: Duration,
}

/// Why a source could not be reached or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    /// The connection failed or broke: retry.
    Network(String),
    /// The source answered with an error packet.
    Server { code: u16, message: String },
}

/// A connected source streaming its binary log.
pub trait Source: Send {
    /// The next event (header, body, checksum); None when the source
    /// ended the stream.
    fn next_event(&mut self) -> Result<Option<Vec<u8>>, SourceError>;
    /// A way to end a blocking `next_event` from another thread.
    fn interrupter(&self) -> Box<dyn Fn() + Send + Sync>;
    /// The source's @@global.binlog_format, if it said.
    fn binlog_format(&self) -> Option<String> {
        None
    }
}

/// The warning for a source whose binlog_format is not ROW (None: ROW or
/// unknown): the applier stops at its first statement-format DML.
pub(crate) fn format_warning(format: Option<&str>) -> Option<String> {
    let f = format?;
    (!f.eq_ignore_ascii_case("ROW")).then(|| {
        format!(
            "Warning: the master's binlog_format is {f}: Strata applies row events only and \
             stops (1235) at the first DML the master logs as a statement; set \
             binlog_format=ROW on the master"
        )
    })
}

/// The server's MySQL client: connects, registers and starts the dump.
pub type Connector = dyn Fn(&ConnectRequest) -> Result<Box<dyn Source>, SourceError> + Send + Sync;

/// ER_MASTER_FATAL_ERROR_READING_BINLOG: the source cannot serve the
/// position asked for.
const ER_MASTER_FATAL: u16 = 1236;
/// ER_SLAVE_FATAL_ERROR: the connector found a reason replication cannot
/// work (equal server ids); the IO side stops with the message as given.
pub const ER_SLAVE_FATAL: u16 = 1593;
/// ER_SLAVE_FATAL_ERROR / connection failures are reported as 2003
/// (CR_CONN_HOST_ERROR) like MariaDB's IO thread does.
const CR_CONN_HOST_ERROR: u16 = 2003;

fn stopping(shared: &Shared) -> bool {
    shared.stop.load(Ordering::SeqCst)
}

/// Sleeps up to `d`, waking early when asked to stop.
fn pause(shared: &Shared, d: Duration) {
    let until = Instant::now() + d;
    while !stopping(shared) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

pub(crate) fn run(
    inst: Arc<Instance>,
    store: Store,
    cfg: Config,
    connector: Arc<Connector>,
    shared: Arc<Shared>,
) {
    let server_id = inst
        .global_var("server_id")
        .and_then(|v| v.to_i128())
        .unwrap_or(0) as u32;
    let max_wait = Duration::from_secs(cfg.connect_retry.max(1) as u64);
    let mut backoff = Duration::from_millis(500);
    // (The family exists: CHANGE MASTER made it, saving the configuration.)
    let cf = match store.cf() {
        Ok(cf) => cf,
        Err(e) => return stopped(&shared, Some(Fault::Sql(e.code, e.msg))),
    };
    let mut applier = Applier::new(inst, cf, shared.clone());
    let fault = loop {
        if stopping(&shared) {
            break None;
        }
        let pos = shared.pos().clone();
        let req = ConnectRequest {
            host: cfg.host.clone(),
            port: cfg.port,
            user: cfg.user.clone(),
            password: cfg.password.clone(),
            server_id,
            file: pos.file.clone(),
            pos: pos.pos.max(4),
            gtid: cfg.use_gtid.then(|| pos.gtid_text()),
            heartbeat: Duration::from_secs_f64(cfg.heartbeat.max(0.0)),
        };
        {
            let mut st = shared.status();
            st.io_running = IoState::Connecting;
            st.io_state = "Connecting to master".into();
        }
        let mut src = match connector(&req) {
            Ok(s) => s,
            Err(SourceError::Server { code, message }) if code == ER_MASTER_FATAL => {
                break Some(Fault::Io(code, format!("Got fatal error {code} from master when reading data from binary log: '{message}'")));
            }
            Err(SourceError::Server { code, message }) if code == ER_SLAVE_FATAL => {
                break Some(Fault::Io(code, message));
            }
            Err(e) => {
                let (code, msg) = match e {
                    SourceError::Server { code, message } => (code, message),
                    SourceError::Network(m) => (CR_CONN_HOST_ERROR, m),
                };
                let mut st = shared.status();
                st.last_io_errno = code;
                st.last_io_error = format!(
                    "error connecting to master '{}@{}:{}' - retry-time: {}  maximum-retries: 100000  message: {msg}",
                    cfg.user,
                    cfg.host,
                    cfg.port,
                    max_wait.as_secs()
                );
                drop(st);
                pause(&shared, backoff);
                backoff = (backoff * 2).min(max_wait);
                continue;
            }
        };
        *shared.interrupt.lock().unwrap_or_else(|p| p.into_inner()) = Some(src.interrupter());
        if stopping(&shared) {
            break None;
        }
        {
            let mut st = shared.status();
            st.io_running = IoState::Yes;
            st.io_state = "Waiting for master to send event".into();
            st.sql_state = "Slave has read all relay log; waiting for more updates".into();
            st.last_io_errno = 0;
            st.last_io_error.clear();
            // Shown with Last_IO_Errno 0 (a warning, not an error) and
            // written to the error log.
            if let Some(w) = format_warning(src.binlog_format().as_deref()) {
                eprintln!("strata: replica: {w}");
                st.last_io_error = w;
            }
        }
        backoff = Duration::from_millis(500);
        let end = loop {
            if stopping(&shared) {
                break None;
            }
            match src.next_event() {
                Ok(Some(ev)) => {
                    if let Err(f) = applier.event(&ev) {
                        // STOP SLAVE interrupting a lock wait is no error.
                        break (!stopping(&shared)).then_some(f);
                    }
                }
                Ok(None) => break Some(Fault::Io(0, "the master ended the binlog stream".into())),
                Err(SourceError::Network(m)) => break Some(Fault::Io(CR_CONN_HOST_ERROR, m)),
                Err(SourceError::Server { code, message }) => {
                    break Some(Fault::Io(code, format!("Got fatal error {code} from master when reading data from binary log: '{message}'")))
                }
            }
        };
        applier.abort();
        *shared.interrupt.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match end {
            None => break None,
            Some(Fault::Io(code, m)) if code != ER_MASTER_FATAL && code != 1743 => {
                // Reconnect from the applied position.
                let mut st = shared.status();
                st.io_running = IoState::Connecting;
                st.io_state = "Reconnecting after a failed master event read".into();
                st.last_io_errno = code;
                st.last_io_error = m;
                drop(st);
                pause(&shared, backoff);
                backoff = (backoff * 2).min(max_wait);
            }
            Some(f) => break Some(f),
        }
    };
    stopped(&shared, fault)
}

/// The replica's status once its thread ends, `fault` its reason if any.
fn stopped(shared: &Shared, fault: Option<Fault>) {
    let mut st = shared.status();
    st.io_running = IoState::No;
    st.sql_running = false;
    st.io_state.clear();
    st.sql_state.clear();
    st.behind = None;
    match fault {
        Some(Fault::Sql(code, m)) => {
            st.last_sql_errno = code;
            st.last_sql_error = m;
        }
        Some(Fault::Io(code, m)) => {
            st.last_io_errno = code;
            st.last_io_error = m;
        }
        None => {}
    }
}
