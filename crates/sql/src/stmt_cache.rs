//! The server-wide cache of compiled statements: a prepared statement's
//! parse tree and plan, shared by every session that prepares the same text
//! in the same database under the same catalog version.
//!
//! Clients such as sysbench prepare the same few statements on every
//! connection and for every table: 32 connections x 32 tables x 5 statements
//! is 5,120 prepared statements, and a parse tree plus plan is about 15 KB,
//! so per-session copies held 75 MB, a third of a 250 MB memory budget.
//! Shared, they are 160 entries. An entry is immutable; a session whose entry
//! went stale (DDL changed the catalog, or USE changed the database)
//! compiles again through the cache and swaps its `Arc`.
use crate::parse::Parsed;
use crate::result::ColumnInfo;
use crate::session::Plan;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Entries kept before the cache starts over (sessions keep their own
/// `Arc`s, so dropping the map never invalidates a prepared statement).
const MAX_ENTRIES: usize = 4096;

/// A statement compiled for one (text, database, catalog version).
pub struct Compiled {
    pub parsed: Parsed,
    pub columns: Vec<ColumnInfo>,
    /// None for statements run by the admin path (SHOW, SET, ...), which
    /// are planned at execution.
    pub plan: Option<Plan>,
    pub version: u64,
    pub db: Option<String>,
}

impl Compiled {
    /// Whether this entry is valid in database `db` at catalog `version`.
    pub fn current(&self, version: u64, db: &Option<String>) -> bool {
        self.version == version && self.db == *db
    }
}

type Key = (String, Option<String>);

/// See the module comment.
#[derive(Default)]
pub struct StmtCache {
    map: Mutex<HashMap<Key, Arc<Compiled>>>,
}

impl StmtCache {
    /// The current entry for (`sql`, `db`) at catalog `version`, if cached.
    pub fn get(&self, sql: &str, db: &Option<String>, version: u64) -> Option<Arc<Compiled>> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&(sql.to_string(), db.clone()))
            .filter(|c| c.current(version, db))
            .cloned()
    }

    /// Stores an entry (replacing a stale one) and returns it.
    pub fn put(&self, sql: &str, c: Compiled) -> Arc<Compiled> {
        let c = Arc::new(c);
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert((sql.to_string(), c.db.clone()), c.clone());
        c
    }

    /// Number of cached entries.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
