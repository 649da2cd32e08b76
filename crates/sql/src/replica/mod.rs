//! Strata as a replica of a MariaDB source (issue 13 part 3): the
//! statements (CHANGE MASTER TO, START/STOP/RESET SLAVE, SHOW SLAVE STATUS
//! and the MySQL 8.4 spellings), the replica's configuration and applied
//! position kept in the `__replica__` column family ([`state`]), the
//! applier that turns a source's events into Strata transactions
//! ([`apply`]) and the thread that streams and applies them ([`run`]).
//!
//! The network side is not here: `sql` knows no packets. The server
//! registers a [`Connector`] (its MySQL client) at startup; the thread
//! asks it for a [`Source`] of raw events.
mod apply;
#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod ddl_tests;
mod globals;
mod query;
mod run;
mod state;
mod stmt;
mod values;
mod versioned;

pub(crate) use globals::assign as assign_global;
pub use run::{ConnectRequest, Connector, Source, SourceError, ER_SLAVE_FATAL};
pub use state::{Config, Position};
pub use stmt::{parse, run as execute, OptVal, ReplicaStmt};

use crate::error::Result;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// What SHOW SLAVE STATUS reports besides the configuration.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub io_running: IoState,
    pub sql_running: bool,
    pub io_state: String,
    pub sql_state: String,
    /// The source's file and the position after the last event received.
    pub read_file: String,
    pub read_pos: u64,
    pub last_io_errno: u16,
    pub last_io_error: String,
    pub last_sql_errno: u16,
    pub last_sql_error: String,
    pub master_server_id: u32,
    /// Seconds_Behind_Master while running (None: NULL).
    pub behind: Option<u64>,
    /// Transactions and DDL applied since START SLAVE.
    pub ddl_groups: u64,
    pub trx_groups: u64,
}

/// Slave_IO_Running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IoState {
    #[default]
    No,
    Connecting,
    Yes,
}

impl IoState {
    fn as_str(self) -> &'static str {
        match self {
            IoState::No => "No",
            IoState::Connecting => "Connecting",
            IoState::Yes => "Yes",
        }
    }
}

/// What the statements and the thread share.
pub(crate) struct Shared {
    pub(crate) stop: AtomicBool,
    pub(crate) status: Mutex<Status>,
    /// Ends a blocking read of the current source (STOP SLAVE, shutdown).
    pub(crate) interrupt: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// The applied position (what the applier last committed).
    pub(crate) pos: Mutex<Position>,
    /// The applier transaction's interrupt (`Txn::set_interrupt`): STOP
    /// SLAVE ends a lock wait at once.
    pub(crate) kill: Arc<AtomicU8>,
    /// Event groups still to skip (sql_slave_skip_counter at START SLAVE).
    pub(crate) skip: AtomicU64,
    /// The session of the DDL the applier runs (or last ran): STOP SLAVE
    /// kills its statement, ending its waits for local transactions and
    /// table locks at once.
    pub(crate) ddl_proc: Mutex<Option<Arc<crate::procs::Proc>>>,
}

impl Shared {
    pub(crate) fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn pos(&self) -> std::sync::MutexGuard<'_, Position> {
        self.pos.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Asks the applier to stop: a lock wait of its transaction and the
    /// waits of its DDL end at once.
    pub(crate) fn interrupt_apply(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.kill.store(1, Ordering::SeqCst);
        if let Some(p) = self.ddl_proc().as_ref() {
            p.kill(false);
        }
    }
    /// The applier's DDL session (`ddl_proc`): a new one is killed at once
    /// when a stop was asked for before it was there.
    pub(crate) fn ddl_proc(&self) -> std::sync::MutexGuard<'_, Option<Arc<crate::procs::Proc>>> {
        self.ddl_proc.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Whether the group starting now is to be skipped (counts it).
    pub(crate) fn take_skip(&self) -> bool {
        self.skip
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// The replica side of an instance.
pub struct Replica {
    store: state::Store,
    cfg: Mutex<Option<Config>>,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Held for the whole of START and STOP: a START racing a STOP cannot
    /// start a second thread beside one being stopped.
    control: Mutex<()>,
    connector: OnceLock<Arc<Connector>>,
}

impl Replica {
    /// Loads the configuration and applied position from the engine.
    pub(crate) fn open(db: &lsm::Db) -> Result<Replica> {
        let store = state::Store::open(db)?;
        let cfg = store.load_config()?;
        let pos = store.load_position()?;
        Ok(Replica {
            store,
            cfg: Mutex::new(cfg),
            shared: Arc::new(Shared {
                stop: AtomicBool::new(false),
                status: Mutex::new(Status::default()),
                interrupt: Mutex::new(None),
                pos: Mutex::new(pos),
                kill: Arc::new(AtomicU8::new(0)),
                skip: AtomicU64::new(0),
                ddl_proc: Mutex::new(None),
            }),
            control: Mutex::new(()),
            thread: Mutex::new(None),
            connector: OnceLock::new(),
        })
    }

    /// The server's way to reach a source (set once, at startup).
    pub fn set_connector(&self, c: Arc<Connector>) {
        let _ = self.connector.set(c);
    }

    fn config(&self) -> std::sync::MutexGuard<'_, Option<Config>> {
        self.cfg.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn thread(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        self.thread.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the replication thread is running.
    pub fn running(&self) -> bool {
        self.thread().as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Starts replication at server startup if it was running when the
    /// server stopped (START SLAVE persists that, STOP SLAVE clears it).
    pub fn resume(&self, inst: &Arc<crate::Instance>) -> Result<()> {
        let on = self.config().as_ref().is_some_and(|c| c.running);
        if on {
            self.start(inst)?;
        }
        Ok(())
    }

    /// START SLAVE: false if it was already running.
    pub(crate) fn start(&self, inst: &Arc<crate::Instance>) -> Result<bool> {
        let _control = self.control.lock().unwrap_or_else(|p| p.into_inner());
        let mut th = self.thread();
        if th.as_ref().is_some_and(|h| !h.is_finished()) {
            return Ok(false);
        }
        if let Some(h) = th.take() {
            let _ = h.join();
        }
        let cfg = self
            .config()
            .clone()
            .ok_or_else(crate::error::SqlError::bad_slave)?;
        let connector = self.connector.get().cloned().ok_or_else(|| {
            crate::error::SqlError::unsupported("replication without a network (no connector)")
        })?;
        let mut c = cfg.clone();
        c.running = true;
        self.store.save_config(&c)?;
        *self.config() = Some(c);
        self.shared.stop.store(false, Ordering::SeqCst);
        self.shared.kill.store(0, Ordering::SeqCst);
        // sql_slave_skip_counter: consumed by this run.
        let skip = inst
            .global_var("sql_slave_skip_counter")
            .and_then(|v| v.to_i128())
            .unwrap_or(0)
            .max(0) as u64;
        self.shared.skip.store(skip, Ordering::SeqCst);
        if skip > 0 {
            inst.set_global("sql_slave_skip_counter", rel::value::Value::Int(0));
        }
        {
            let mut st = self.shared.status();
            let keep = (st.ddl_groups, st.trx_groups);
            *st = Status {
                io_running: IoState::Connecting,
                sql_running: true,
                io_state: "Connecting to master".into(),
                ..Default::default()
            };
            (st.ddl_groups, st.trx_groups) = keep;
        }
        let shared = self.shared.clone();
        let inst = inst.clone();
        let store = self.store.clone();
        let h = std::thread::Builder::new()
            .name("replica".into())
            .stack_size(crate::SESSION_STACK_SIZE)
            .spawn(move || run::run(inst, store, cfg, connector, shared))
            .map_err(|e| crate::error::SqlError::internal(format!("replica thread: {e}")))?;
        *th = Some(h);
        Ok(true)
    }

    /// Stops the thread and waits for it (the open transaction, if any,
    /// rolls back; the applied position is the last committed one).
    /// `persist`: remember that replication is off (STOP SLAVE; shutdown
    /// keeps it on for the next start). False if it was not running.
    pub(crate) fn stop(&self, persist: bool) -> Result<bool> {
        let _control = self.control.lock().unwrap_or_else(|p| p.into_inner());
        let h = self.thread().take();
        let was = h.as_ref().is_some_and(|h| !h.is_finished());
        self.shared.interrupt_apply();
        if let Some(f) = self
            .shared
            .interrupt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            f();
        }
        if let Some(h) = h {
            let _ = h.join();
        }
        {
            let mut st = self.shared.status();
            st.io_running = IoState::No;
            st.sql_running = false;
            st.io_state.clear();
            st.sql_state.clear();
            st.behind = None;
        }
        if persist {
            let mut cfg = self.config();
            if let Some(c) = cfg.as_mut() {
                if c.running {
                    c.running = false;
                    self.store.save_config(c)?;
                }
            }
        }
        Ok(was)
    }

    /// Stops the thread at server shutdown.
    pub fn shutdown(&self) {
        let _ = self.stop(false);
    }

    /// @@gtid_slave_pos.
    pub fn gtid_slave_pos(&self) -> String {
        self.shared.pos().gtid_text()
    }
}
