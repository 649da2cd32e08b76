//! Exclusive table locks for bulk loads and DDL (`TableLocks`, one per
//! instance): a table being loaded in bulk (LOAD DATA's bulk path, an
//! open `strata_bulk_load` load, idle or not) is held by its session until
//! the load ends, and every DDL that holds writers out of a table
//! (`ddl::install::hold_writers`: ALTER TABLE, CREATE INDEX's sorted build,
//! RENAME) takes the same lock for its duration. A second load or DDL of
//! the table waits for it, up to lock_wait_timeout (then 1205, as a
//! metadata lock wait in MySQL), and stops at KILL. Without it two loads
//! of one table would both ingest (the later silently overwriting), and a
//! rebuild could copy the table before a load's rows arrive.
use crate::error::{Result, SqlError};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A table's name (database, table).
pub type Name = (String, String);

/// The tables held, and by which session (connection id).
#[derive(Default)]
pub struct TableLocks {
    held: Mutex<HashMap<Name, u64>>,
    cv: Condvar,
}

/// One held table, released when dropped (a lock its session already
/// held when it was taken is left to the outer holder).
pub struct TableLock {
    locks: Arc<TableLocks>,
    name: Name,
    owned: bool,
}

impl TableLocks {
    /// Takes `names` for session `owner` (in sorted order, so two holders
    /// of several tables cannot wait for each other forever): waits while
    /// another session holds one, until `timeout` (1205) or until `killed`
    /// reports an error.
    pub fn acquire(
        self: &Arc<Self>,
        mut names: Vec<Name>,
        owner: u64,
        timeout: Duration,
        killed: &dyn Fn() -> Option<SqlError>,
    ) -> Result<Vec<TableLock>> {
        names.sort();
        names.dedup();
        let end = Instant::now() + timeout;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                match held.get(&name) {
                    None => {
                        held.insert(name.clone(), owner);
                        out.push(TableLock {
                            locks: self.clone(),
                            name,
                            owned: true,
                        });
                        break;
                    }
                    Some(&o) if o == owner => {
                        out.push(TableLock {
                            locks: self.clone(),
                            name,
                            owned: false,
                        });
                        break;
                    }
                    Some(_) => {}
                }
                if let Some(e) = killed() {
                    return Err(e);
                }
                let now = Instant::now();
                if now >= end {
                    return Err(SqlError::lock_wait_timeout());
                }
                // Woken by a release; the slice bounds the reaction to KILL.
                let slice = (end - now).min(Duration::from_millis(100));
                held = self
                    .cv
                    .wait_timeout(held, slice)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        Ok(out)
    }

    /// The session holding `name`, if any.
    pub fn holder(&self, name: &Name) -> Option<u64> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.get(name).copied()
    }
}

impl Drop for TableLock {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let mut held = self.locks.held.lock().unwrap_or_else(|p| p.into_inner());
        held.remove(&self.name);
        drop(held);
        self.locks.cv.notify_all();
    }
}

/// Takes the tables `names` for session `s` (see `TableLocks::acquire`),
/// waiting up to its lock_wait_timeout (SHOW PROCESSLIST shows MySQL's
/// "Waiting for table metadata lock" meanwhile).
pub(crate) fn lock_tables(s: &crate::session::Session, names: Vec<Name>) -> Result<Vec<TableLock>> {
    let secs = s
        .get_var("lock_wait_timeout", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(50)
        .clamp(1, 3600) as u64;
    let proc = s.proc.clone();
    let waited = std::cell::Cell::new(false);
    let r = s
        .inst
        .bulk_locks
        .acquire(names, proc.id, Duration::from_secs(secs), &|| {
            if !waited.replace(true) {
                proc.set_state("Waiting for table metadata lock");
            }
            proc.kill_error()
        });
    if waited.get() {
        proc.set_state("executing");
    }
    r
}
