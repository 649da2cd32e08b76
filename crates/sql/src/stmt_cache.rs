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

/// See the module comment.
#[derive(Default)]
pub struct StmtCache {
    map: Mutex<Entries>,
}

/// Entries by text, then by (database, collation): a lookup hashes the
/// borrowed text and allocates nothing (it runs for every text statement).
#[derive(Default)]
struct Entries {
    map: HashMap<String, Vec<Arc<Compiled>>>,
    /// Entries in `map` (all texts' variants).
    count: usize,
    /// Their texts' bytes, each counted once per variant.
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
            .get(sql)?
            .iter()
            .find(|c| c.coll == coll && c.db == *db)
            .filter(|c| c.current(version, db))
            .cloned()
    }

    /// Stores an entry (replacing a stale one) and returns it.
    pub fn put(&self, sql: &str, c: Compiled) -> Arc<Compiled> {
        let c = Arc::new(c);
        if sql.len() > MAX_SHARED_TEXT {
            return c;
        }
        let mut guard = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let e = &mut *guard;
        if c.version < e.version {
            return c;
        }
        if c.version > e.version {
            // Stale entries are never used again; dropping them frees what
            // their plans hold (table definitions, ENUM member lists of
            // dropped tables).
            e.version = c.version;
            let v = c.version;
            e.map.retain(|_, xs| {
                xs.retain(|x| x.version >= v);
                !xs.is_empty()
            });
            e.count = e.map.values().map(Vec::len).sum();
            e.text_bytes = e.map.iter().map(|(k, xs)| k.len() * xs.len()).sum();
        }
        if e.count >= MAX_ENTRIES || e.text_bytes + sql.len() > MAX_TEXT_BYTES {
            e.map.clear();
            e.count = 0;
            e.text_bytes = 0;
        }
        let xs = e.map.entry(sql.to_string()).or_default();
        match xs.iter_mut().find(|x| x.coll == c.coll && x.db == c.db) {
            Some(x) => *x = c.clone(),
            None => {
                xs.push(c.clone());
                e.count += 1;
                e.text_bytes += sql.len();
            }
        }
        c
    }

    /// Number of cached entries.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).count
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stmt::Stmt;

    fn entry(version: u64, db: Option<&str>, coll: Collation) -> Compiled {
        Compiled {
            parsed: Parsed {
                stmt: Stmt::Empty,
                params: vec![],
            },
            columns: vec![],
            plan: None,
            version,
            db: db.map(str::to_string),
            coll,
        }
    }

    #[test]
    fn entries_are_per_text_database_and_collation_and_drop_when_stale() {
        let c = StmtCache::default();
        let (bin, ci) = (Collation::Utf8mb4Bin, Collation::Utf8mb4GeneralCi);
        let (d1, d2) = (Some("d1".to_string()), Some("d2".to_string()));
        let a = c.put("SELECT 1", entry(1, Some("d1"), bin));
        let b = c.put("SELECT 1", entry(1, Some("d2"), bin));
        let d = c.put("SELECT 1", entry(1, Some("d1"), ci));
        let e = c.put("SELECT 2", entry(1, None, bin));
        assert_eq!(c.len(), 4);
        let got = |sql: &str, db: &Option<String>, coll, v| c.get(sql, db, coll, v);
        assert!(Arc::ptr_eq(&got("SELECT 1", &d1, bin, 1).unwrap(), &a));
        assert!(Arc::ptr_eq(&got("SELECT 1", &d2, bin, 1).unwrap(), &b));
        assert!(Arc::ptr_eq(&got("SELECT 1", &d1, ci, 1).unwrap(), &d));
        assert!(Arc::ptr_eq(&got("SELECT 2", &None, bin, 1).unwrap(), &e));
        assert!(got("SELECT 2", &d1, bin, 1).is_none());
        assert!(got("SELECT 3", &d1, bin, 1).is_none());
        // Not current at another catalog version.
        assert!(got("SELECT 1", &d1, bin, 2).is_none());
        // Replacing an entry keeps the count.
        let a2 = c.put("SELECT 1", entry(1, Some("d1"), bin));
        assert_eq!(c.len(), 4);
        assert!(Arc::ptr_eq(&got("SELECT 1", &d1, bin, 1).unwrap(), &a2));
        // An older version is not stored; a newer one drops every stale entry.
        let _ = c.put("SELECT 9", entry(0, None, bin));
        assert_eq!(c.len(), 4);
        let n = c.put("SELECT 1", entry(2, Some("d2"), bin));
        assert_eq!(c.len(), 1);
        assert!(Arc::ptr_eq(&got("SELECT 1", &d2, bin, 2).unwrap(), &n));
        assert!(got("SELECT 1", &d1, bin, 2).is_none());
        assert!(!c.is_empty());
    }
}
