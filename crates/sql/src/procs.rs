//! The server-wide session registry: one [`Proc`] per session (id, user,
//! host, database, command, state, statement text, time in state, rows
//! examined and sent, the kill flag), read by SHOW PROCESSLIST and
//! information_schema.PROCESSLIST, and KILL [HARD|SOFT] [CONNECTION|QUERY
//! [ID]] / KILL USER. The kill flag is checked by the executor at every row
//! (`Env::check_interrupt`) and by row lock waits (`Txn::set_interrupt`).
//! This crate knows no sockets: the server attaches a [`ClientHook`] to a
//! session's entry, through which KILL CONNECTION closes the connection.
use crate::error::{Result, SqlError};
use crate::session::Session;
use rel::value::Value;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Not killed.
pub const KILL_NONE: u8 = 0;
/// KILL QUERY: the running statement stops (1317), the session goes on.
pub const KILL_QUERY: u8 = 1;
/// KILL CONNECTION, or the client went away: the statement stops and the
/// connection closes.
pub const KILL_CONNECTION: u8 = 2;

/// SHOW PROCESSLIST truncates the statement text to this many characters
/// unless FULL (as MySQL and MariaDB).
pub const INFO_CHARS: usize = 100;

/// What the server does for the registry with a session's client connection.
pub trait ClientHook: Send + Sync {
    /// Closes the connection (KILL CONNECTION): the session's reads and
    /// writes fail, so its thread ends and rolls back.
    fn close(&self);
    /// True once the client has closed its end of the connection.
    fn gone(&self) -> bool;
    /// True once the client sent anything or closed: for a connection that
    /// expects nothing from its client (a binlog dump, where COM_QUIT or a
    /// TLS close_notify is the replica leaving).
    fn spoke(&self) -> bool {
        self.gone()
    }
}

/// What a session is doing (SHOW PROCESSLIST's Command and more).
#[derive(Debug, Clone)]
struct Activity {
    command: &'static str,
    state: &'static str,
    info: Option<Arc<str>>,
    since: Instant,
    query_id: u64,
    /// MariaDB's progress reporting: the stage (from 0) of `max_stage`
    /// stages (0: the statement reports no progress).
    stage: u32,
    max_stage: u32,
    /// What the progress counts: "bytes" (of a file) or "rows".
    unit: &'static str,
}

/// One session's entry in the registry.
pub struct Proc {
    pub id: u64,
    pub user: String,
    host: Mutex<String>,
    db: Mutex<Option<String>>,
    activity: Mutex<Activity>,
    /// KILL_NONE, KILL_QUERY or KILL_CONNECTION (shared with the session's
    /// transaction, whose lock waits stop when it is set).
    pub killed: Arc<AtomicU8>,
    /// Rows the running statement has read (the executor's row checks).
    pub examined: AtomicU64,
    /// Rows the running statement has sent.
    pub sent: AtomicU64,
    /// Progress within the stage: work done (e.g. bytes of a LOAD DATA
    /// file read) of `progress_max` (0: unknown).
    progress: AtomicU64,
    progress_max: AtomicU64,
    hook: Mutex<Option<Arc<dyn ClientHook>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Proc {
    fn new(id: u64, user: &str, db: Option<String>) -> Proc {
        Proc {
            id,
            user: user.to_string(),
            host: Mutex::new("localhost".into()),
            db: Mutex::new(db),
            activity: Mutex::new(Activity {
                command: "Sleep",
                state: "",
                info: None,
                since: Instant::now(),
                query_id: 0,
                stage: 0,
                max_stage: 0,
                unit: "bytes",
            }),
            killed: Arc::new(AtomicU8::new(KILL_NONE)),
            examined: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            progress_max: AtomicU64::new(0),
            hook: Mutex::new(None),
        }
    }

    /// The client's host (the server sets it: an IP address or `localhost`).
    pub fn set_host(&self, host: &str) {
        *lock(&self.host) = host.to_string();
    }

    /// The client's host.
    pub fn host(&self) -> String {
        lock(&self.host).clone()
    }

    /// Attaches the server's handle on the client connection.
    pub fn set_hook(&self, hook: Arc<dyn ClientHook>) {
        *lock(&self.hook) = Some(hook);
    }

    pub(crate) fn set_db(&self, db: Option<String>) {
        *lock(&self.db) = db;
    }

    /// A statement starts: `command` ("Query", "Execute"), its text. A
    /// KILL QUERY that reached the session while idle is forgotten (as
    /// MariaDB resets the flag at each command).
    pub(crate) fn begin(&self, command: &'static str, text: &str, query_id: u64) {
        self.begin_shared(command, Arc::from(text), query_id)
    }

    /// `begin` with the statement's text already shared (a prepared
    /// statement's, shown at every execution without a copy).
    pub(crate) fn begin_shared(&self, command: &'static str, text: Arc<str>, query_id: u64) {
        let _ = self.killed.compare_exchange(
            KILL_QUERY,
            KILL_NONE,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
        self.examined.store(0, Ordering::Relaxed);
        self.sent.store(0, Ordering::Relaxed);
        self.progress.store(0, Ordering::Relaxed);
        self.progress_max.store(0, Ordering::Relaxed);
        let mut a = lock(&self.activity);
        a.command = command;
        a.state = "executing";
        a.info = Some(text);
        a.since = Instant::now();
        a.query_id = query_id;
        a.stage = 0;
        a.max_stage = 0;
    }

    /// The running statement reports progress in `max_stages` stages (as
    /// MariaDB's `thd_progress_init`), the first one starting now in
    /// `state`; `unit` is what `progress_report` counts ("bytes", "rows").
    pub fn progress_init(&self, max_stages: u32, state: &'static str, unit: &'static str) {
        self.progress.store(0, Ordering::Relaxed);
        self.progress_max.store(0, Ordering::Relaxed);
        let mut a = lock(&self.activity);
        a.stage = 0;
        a.max_stage = max_stages;
        a.state = state;
        a.unit = unit;
    }

    /// The next stage begins, in `state`; its progress starts at 0.
    pub fn progress_next_stage(&self, state: &'static str) {
        self.progress.store(0, Ordering::Relaxed);
        self.progress_max.store(0, Ordering::Relaxed);
        let mut a = lock(&self.activity);
        a.stage = (a.stage + 1).min(a.max_stage.saturating_sub(1));
        a.state = state;
    }

    /// Progress within the stage: `done` of `max` (0: unknown).
    pub fn progress_report(&self, done: u64, max: u64) {
        self.progress.store(done, Ordering::Relaxed);
        self.progress_max.store(max, Ordering::Relaxed);
    }

    /// The stage's progress in percent (information_schema.PROCESSLIST's
    /// PROGRESS, as MariaDB's); 0 when the statement reports none or the
    /// stage's size is unknown.
    fn stage_percent(&self, a: &Activity) -> f64 {
        let max = self.progress_max.load(Ordering::Relaxed);
        if a.max_stage == 0 || max == 0 {
            return 0.0;
        }
        let done = self.progress.load(Ordering::Relaxed).min(max);
        done as f64 / max as f64 * 100.0
    }

    /// The statement's progress in percent over all its stages (SHOW
    /// PROCESSLIST's Progress, as MariaDB computes it): the stages done
    /// plus the fraction of this one, over all stages.
    pub fn progress_percent(&self) -> String {
        let a = lock(&self.activity).clone();
        let p = match a.max_stage {
            0 => 0.0,
            m => (f64::from(a.stage) * 100.0 + self.stage_percent(&a)) / f64::from(m),
        };
        format!("{p:.3}")
    }

    /// The State shown: while a statement reports progress, its stage
    /// with the rows read so far and the bytes done (of the total when
    /// known), e.g. `Reading file: 1200 rows, 65536 of 1048576 bytes`, or
    /// for a count of rows `Bulk loading: 1200 of 5000 rows`.
    fn state_text(&self, a: &Activity) -> String {
        if a.max_stage == 0 {
            return a.state.to_string();
        }
        let done = self.progress.load(Ordering::Relaxed);
        let max = self.progress_max.load(Ordering::Relaxed);
        if a.unit != "bytes" {
            return match max {
                0 => format!("{}: {done} {}", a.state, a.unit),
                max => format!("{}: {done} of {max} {}", a.state, a.unit),
            };
        }
        let rows = self.examined.load(Ordering::Relaxed);
        match max {
            0 if done == 0 => format!("{}: {rows} rows", a.state),
            0 => format!("{}: {rows} rows, {done} bytes", a.state),
            max => format!("{}: {rows} rows, {done} of {max} bytes", a.state),
        }
    }

    /// What the running statement is doing now (SHOW PROCESSLIST's State).
    pub fn set_state(&self, state: &'static str) {
        lock(&self.activity).state = state;
    }

    /// The statement ended: the session sleeps (in database `db`).
    pub(crate) fn end(&self, db: &Option<String>) {
        {
            let mut a = lock(&self.activity);
            a.command = "Sleep";
            a.state = "";
            a.info = None;
            a.since = Instant::now();
            a.stage = 0;
            a.max_stage = 0;
        }
        let mut d = lock(&self.db);
        if *d != *db {
            *d = db.clone();
        }
    }

    /// When the running statement (or the idle time) began.
    pub fn since(&self) -> Instant {
        lock(&self.activity).since
    }

    /// True while a statement runs.
    pub fn busy(&self) -> bool {
        lock(&self.activity).command != "Sleep"
    }

    /// The error a statement stopped by the kill flag fails with, if set.
    pub fn kill_error(&self) -> Option<SqlError> {
        match self.killed.load(Ordering::Relaxed) {
            KILL_NONE => None,
            KILL_QUERY => Some(SqlError::query_interrupted()),
            _ => Some(SqlError::connection_killed()),
        }
    }

    /// True once KILL CONNECTION (or the client's going away) ended the session.
    pub fn connection_killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed) == KILL_CONNECTION
    }

    /// Sets the kill flag; KILL CONNECTION also closes the client connection.
    pub fn kill(&self, connection: bool) {
        if connection {
            self.killed.store(KILL_CONNECTION, Ordering::Release);
            let hook = lock(&self.hook).clone();
            if let Some(h) = hook {
                h.close();
            }
        } else {
            let _ = self.killed.compare_exchange(
                KILL_NONE,
                KILL_QUERY,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }

    /// The client went away while a statement ran: stop it.
    pub fn client_gone(&self) -> bool {
        let hook = lock(&self.hook).clone();
        hook.is_some_and(|h| h.gone())
    }

    /// Whether the client sent anything or closed (`ClientHook::spoke`).
    pub fn client_spoke(&self) -> bool {
        let hook = lock(&self.hook).clone();
        hook.is_some_and(|h| h.spoke())
    }

    /// The row of information_schema.PROCESSLIST (MariaDB's columns);
    /// SHOW PROCESSLIST takes the first eight, plus `progress_percent`.
    pub fn row(&self, full: bool) -> Vec<Value> {
        let a = lock(&self.activity).clone();
        let t = |x: &str| Value::Bytes(x.as_bytes().to_vec());
        let el = a.since.elapsed();
        let info = a.info.as_deref().map(|i| {
            if full {
                t(i)
            } else {
                t(&i.chars().take(INFO_CHARS).collect::<String>())
            }
        });
        let killed = self.killed.load(Ordering::Relaxed) == KILL_CONNECTION;
        let (stage, max_stage) = match a.max_stage {
            0 => (0, 0),
            m => (i64::from(a.stage) + 1, i64::from(m)),
        };
        vec![
            Value::UInt(self.id),
            t(&self.user),
            t(lock(&self.host).as_str()),
            lock(&self.db).as_deref().map_or(Value::Null, t),
            t(if killed { "Killed" } else { a.command }),
            Value::Int(el.as_secs() as i64),
            t(&self.state_text(&a)),
            info.clone().unwrap_or(Value::Null),
            t(&format!("{:.3}", el.as_secs_f64() * 1000.0)),
            Value::Int(stage),
            Value::Int(max_stage),
            t(&format!("{:.3}", self.stage_percent(&a))),
            Value::Int(0),
            Value::Int(0),
            Value::UInt(self.examined.load(Ordering::Relaxed)),
            Value::UInt(a.query_id),
            a.info
                .as_deref()
                .map_or(Value::Null, |i| Value::Bytes(i.as_bytes().to_vec())),
            Value::UInt(self.id),
        ]
    }

    fn query_id(&self) -> u64 {
        lock(&self.activity).query_id
    }
}

/// Every session's entry, by connection id.
#[derive(Default)]
pub struct Registry {
    procs: Mutex<std::collections::BTreeMap<u64, Arc<Proc>>>,
    next_query: AtomicU64,
}

impl Registry {
    /// Registers a session. A session that replaces another of the same
    /// connection (COM_RESET_CONNECTION, COM_CHANGE_USER) keeps its host and
    /// client hook.
    pub fn register(&self, id: u64, user: &str, db: Option<String>) -> Arc<Proc> {
        let p = Arc::new(Proc::new(id, user, db));
        let mut m = lock(&self.procs);
        if let Some(old) = m.get(&id) {
            p.set_host(&lock(&old.host));
            *lock(&p.hook) = lock(&old.hook).clone();
        }
        m.insert(id, p.clone());
        p
    }

    /// Removes a session's entry (if it was not replaced meanwhile).
    pub fn unregister(&self, p: &Arc<Proc>) {
        let mut m = lock(&self.procs);
        if m.get(&p.id).is_some_and(|q| Arc::ptr_eq(q, p)) {
            m.remove(&p.id);
        }
    }

    /// Every session, by id.
    pub fn all(&self) -> Vec<Arc<Proc>> {
        lock(&self.procs).values().cloned().collect()
    }

    /// Sessions running a statement now (Threads_running).
    pub fn running(&self) -> u64 {
        self.all().iter().filter(|p| p.busy()).count() as u64
    }

    /// A session by id.
    pub fn get(&self, id: u64) -> Option<Arc<Proc>> {
        lock(&self.procs).get(&id).cloned()
    }

    /// A new statement's query id (QUERY_ID, KILL QUERY ID).
    pub fn next_query_id(&self) -> u64 {
        self.next_query.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// What KILL names.
#[derive(Debug, Clone, PartialEq)]
pub enum KillTarget {
    /// A connection id.
    Thread(u64),
    /// QUERY ID n: the session running query n.
    QueryId(u64),
    /// USER name: every session of the user.
    User(String),
    /// CONNECTION_ID(): the session itself.
    Own,
}

/// Whether `p` is a session of `s`'s user (MySQL compares user names: every
/// session of the user, whichever account host it came in by).
fn own(s: &Session, p: &Proc) -> bool {
    s.user == p.user
}

/// Whether `s` may see `p` in the process list: its own user's sessions,
/// every session with PROCESS (MySQL's rule; the user's name gives nothing).
fn may_see(s: &Session, p: &Proc) -> bool {
    own(s, p) || crate::account::has_global(s, rel::catalog::privs::PROCESS)
}

/// Whether `s` may kill `p`: its own user's sessions, any with SUPER
/// (MariaDB's CONNECTION ADMIN, which SUPER implies).
fn may_kill(s: &Session, p: &Proc) -> bool {
    own(s, p) || crate::account::has_global(s, rel::catalog::privs::SUPER)
}

/// The sessions `s` may see, by id.
pub fn visible(s: &Session) -> Vec<Arc<Proc>> {
    s.inst
        .procs
        .all()
        .into_iter()
        .filter(|p| may_see(s, p))
        .collect()
}

/// KILL [CONNECTION | QUERY] target.
pub fn kill(s: &Session, connection: bool, target: &KillTarget) -> Result<()> {
    let reg = &s.inst.procs;
    match target {
        KillTarget::Own => s.proc.kill(connection),
        KillTarget::Thread(id) => {
            let p = reg.get(*id).ok_or_else(|| SqlError::no_such_thread(id))?;
            if !may_kill(s, &p) {
                return Err(SqlError::kill_denied(id));
            }
            p.kill(connection);
        }
        KillTarget::QueryId(q) => {
            let p = reg
                .all()
                .into_iter()
                .find(|p| p.busy() && p.query_id() == *q)
                .ok_or_else(|| SqlError::no_such_query(q))?;
            if !may_kill(s, &p) {
                return Err(SqlError::kill_denied(p.id));
            }
            p.kill(connection);
        }
        KillTarget::User(u) => {
            // MariaDB: no error when the user has no session; another
            // user's sessions need SUPER (1095, and none is killed).
            let targets: Vec<_> = reg.all().into_iter().filter(|p| p.user == *u).collect();
            if let Some(p) = targets.iter().find(|p| !may_kill(s, p)) {
                return Err(SqlError::kill_denied(p.id));
            }
            for p in targets {
                p.kill(connection);
            }
        }
    }
    Ok(())
}
