//! The server-wide cache of compiled statements: a prepared statement's
//! parse tree and plan, shared by every session that prepares the same text
//! in the same database under the same catalog version and connection
//! collation (string literals take it: `collate::literals`).
//!
//! Clients such as sysbench prepare the same few statements on every
//! connection and for every table: 32 connections x 32 tables x 5 statements
//! is 5,120 prepared statements, and a parse tree plus plan is about 15 KB,
//! so per-session copies held 75 MB, a third of a 250 MB memory budget.
//! Shared, they are 160 entries. An entry is immutable; a session whose entry
//! went stale (DDL changed the catalog, or USE changed the database)
//! compiles again through the cache and swaps its `Arc`.
use crate::dml::{InsertPlan, ModifyPlan};
use crate::parse::Parsed;
use crate::result::ColumnInfo;
use crate::select::SelectPlan;
use rel::collation::Collation;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Entries kept before the cache starts over (sessions keep their own
/// `Arc`s, so dropping the map never invalidates a prepared statement).
const MAX_ENTRIES: usize = 4096;

/// Statement text held by the cache before it starts over. A parse tree and plan
/// are several times the text, so this bounds the cache to tens of megabytes.
const MAX_TEXT_BYTES: usize = 8 << 20;

/// Longer statements are not shared: the preparing session alone holds them, and
/// they are freed with it.
const MAX_SHARED_TEXT: usize = 16 << 10;

/// The plan of a row statement (SELECT, INSERT/REPLACE, UPDATE, DELETE).
#[derive(Debug, Clone)]
pub enum Plan {
    Select(Box<SelectPlan>),
    Insert(Box<InsertPlan>),
    Modify(Box<ModifyPlan>),
    /// Multi-table UPDATE / DELETE.
    MultiModify(Box<crate::multidml::MultiPlan>),
}

/// A statement compiled for one (text, database, collation_connection,
/// catalog version).
pub struct Compiled {
    pub parsed: Parsed,
    pub columns: Vec<ColumnInfo>,
    /// None for statements that are not row statements (SHOW, SET, ...):
    /// they have no plan.
    pub plan: Option<Plan>,
    pub version: u64,
    pub db: Option<String>,
    /// The collation_connection it was planned under (a prepared statement
    /// keeps it, as in MariaDB).
    pub coll: Collation,
}

impl Compiled {
    /// Whether this entry is valid in database `db` at catalog `version`.
    pub fn current(&self, version: u64, db: &Option<String>) -> bool {
        self.version == version && self.db == *db
    }
}

type Key = (String, Option<String>, Collation);

/// See the module comment.
#[derive(Default)]
pub struct StmtCache {
    map: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<Key, Arc<Compiled>>,
    text_bytes: usize,
    /// The newest catalog version stored: older entries are stale.
    version: u64,
}

impl StmtCache {
    /// The current entry for (`sql`, `db`, `coll`) at catalog `version`,
    /// if cached.
    pub fn get(
        &self,
        sql: &str,
        db: &Option<String>,
        coll: Collation,
        version: u64,
    ) -> Option<Arc<Compiled>> {
        let e = self.map.lock().unwrap_or_else(|p| p.into_inner());
        e.map
            .get(&(sql.to_string(), db.clone(), coll))
            .filter(|c| c.current(version, db))
            .cloned()
    }

    /// Stores an entry (replacing a stale one) and returns it.
    pub fn put(&self, sql: &str, c: Compiled) -> Arc<Compiled> {
        let c = Arc::new(c);
        if sql.len() > MAX_SHARED_TEXT {
            return c;
        }
        let mut e = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if c.version < e.version {
            return c;
        }
        if c.version > e.version {
            // Stale entries are never used again; dropping them frees what
            // their plans hold (table definitions, ENUM member lists of
            // dropped tables).
            e.version = c.version;
            let v = c.version;
            e.map.retain(|_, x| x.version >= v);
            e.text_bytes = e.map.keys().map(|k| k.0.len()).sum();
        }
        if e.map.len() >= MAX_ENTRIES || e.text_bytes + sql.len() > MAX_TEXT_BYTES {
            e.map.clear();
            e.text_bytes = 0;
        }
        let key = (sql.to_string(), c.db.clone(), c.coll);
        if e.map.insert(key, c.clone()).is_none() {
            e.text_bytes += sql.len();
        }
        c
    }

    /// Number of cached entries.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).map.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
