//! The catalog: databases and table definitions, stored in the engine under
//! the system index id 1 and cached in memory as an immutable, versioned
//! snapshot (`Arc<CatalogState>`) that statements read without locking.
//!
//! DDL is serialized by one mutex, written as one synced engine batch, and
//! published by swapping the snapshot. Keys (docs/formats/catalog.md):
//!
//! ```text
//! 00000001 'D' <db name>                 -> [1]              a database
//! 00000001 'T' <db name> 00 <table name> -> TableDef bytes   a table
//! 00000001 'N'                           -> u32 LE           next index id
//! 00000001 'P' <first id u32 BE>          -> end id u32 LE    ids a rebuild fills
//! 00000001 'V' <db name> 00 <view name>  -> ViewDef bytes    a view
//! 00000001 'S' <db name> 00 <table name> -> TableStats bytes statistics
//! 00000001 'U' <user> 00 <host>           -> Account bytes    an account
//! ```
use crate::collation::Collation;
use crate::keycodec::{self, prefix_successor};
use crate::schema::{Index, TableDef};
use crate::value::Value;
use crate::view::ViewDef;
use crate::{Error, Result};
use lsm::{Db, ReadOptions, WriteBatch, WriteOptions};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

mod accounts;
mod defs;
mod drops;
mod open;
mod views;

pub use accounts::{
    db_matches, find_account, has_wildcard, host_matches, privs, Account, AccountMap, AccountWrite,
    Plugin, NATIVE_PLUGIN, SHA2_AUTH_LEN, SHA2_PLUGIN,
};
pub(crate) use defs::reclaim_ids;
pub use defs::DefChange;
use open::encode_database;

/// Index id of the catalog itself.
pub const CATALOG_INDEX_ID: u32 = 1;
/// First index id given to user tables.
pub const FIRST_USER_INDEX_ID: u32 = 256;

/// A table as statements see it: its definition plus shared counters.
#[derive(Debug)]
pub struct Table {
    pub def: TableDef,
    /// Next AUTO_INCREMENT value to hand out.
    pub auto_inc: AtomicU64,
    /// Next hidden primary key (tables without a primary key).
    pub hidden_next: AtomicU64,
    /// Writes by transactions tagged (`Txn::tag`) with a catalog version at
    /// least this are refused with `Error::TableChanged` (`u64::MAX`: none
    /// are): set by ALTER TABLE while it replaces the table (`bump_with`),
    /// and 0 once it has been replaced.
    pub frozen: AtomicU64,
    /// Secondary indexes being built online (CREATE INDEX): writers
    /// maintain them (`write_indexes`), but they are not in `def`, so the
    /// planner and readers do not use them, and they are not stored until
    /// the build commits (`finish_index`).
    pub building: Vec<Index>,
    /// Index ids whose entries are complete only for read views at or
    /// after an engine sequence (created, rebuilt, truncated or filled
    /// since the instance opened): an older read view must not read them
    /// (MySQL's 1412). Ids not listed are complete for every read view.
    pub since: Vec<(u32, u64)>,
    /// The new definition an online ALTER TABLE is filling (`shadow`):
    /// writers apply their changes to it too.
    pub shadow: Option<Arc<crate::shadow::Shadow>>,
    /// Estimated rows and ANALYZE's statistics (planner input), shared
    /// with the table's earlier and later `Table`s.
    pub estimate: Arc<crate::stats::Estimate>,
    /// An upper bound of the primary keys (the insert shortcut), shared
    /// with the earlier and later `Table`s of the same primary index id.
    pub pk_high: Arc<crate::table::PkHigh>,
}

impl Table {
    /// A table with its counters' next values.
    pub fn new(def: TableDef, auto_inc: u64, hidden_next: u64) -> Table {
        Table {
            def,
            auto_inc: AtomicU64::new(auto_inc),
            hidden_next: AtomicU64::new(hidden_next),
            frozen: AtomicU64::new(u64::MAX),
            building: Vec::new(),
            since: Vec::new(),
            shadow: None,
            estimate: Arc::default(),
            pk_high: Arc::default(),
        }
    }

    /// The engine sequence from which index `id`'s entries are complete
    /// (0: for every read view).
    pub fn readable_since(&self, id: u32) -> u64 {
        self.since.iter().find(|(i, _)| *i == id).map_or(0, |e| e.1)
    }

    /// Every secondary index writers maintain: `def`'s and those being built.
    pub fn write_indexes(&self) -> impl Iterator<Item = &Index> {
        self.def.secondary.iter().chain(&self.building)
    }

    /// `since` for a table with definition `def` succeeding `old` (if
    /// any), written at engine sequence `seq`: ids `old` had keep their
    /// sequence, new ids get `seq`.
    fn since_after(def: &TableDef, old: Option<&Table>, seq: u64) -> Vec<(u32, u64)> {
        def.indexes()
            .filter_map(|ix| match old {
                Some(o) if o.def.indexes().any(|i| i.id == ix.id) => {
                    let s = o.readable_since(ix.id);
                    (s > 0).then_some((ix.id, s))
                }
                _ => Some((ix.id, seq)),
            })
            .collect()
    }

    /// Reserves `n` consecutive AUTO_INCREMENT values, returning the first.
    pub fn reserve_auto_inc(&self, n: u64) -> u64 {
        self.auto_inc.fetch_add(n, Ordering::SeqCst)
    }

    /// Makes sure later AUTO_INCREMENT values are above `used`.
    pub fn note_auto_inc(&self, used: u64) {
        self.auto_inc
            .fetch_max(used.saturating_add(1), Ordering::SeqCst);
    }
}

/// A foreign key as its parent sees it: the child table and the key's
/// position in its `foreign_keys`.
pub type ChildKey = (Arc<Table>, usize);

/// A database's default collation, or why its stored record could not be
/// read (an unknown format or collation id: docs/formats/catalog.md). The
/// record stays as it is until ALTER DATABASE rewrites it or DROP DATABASE
/// deletes it.
pub type DbCollation = std::result::Result<Collation, String>;

/// A table or view whose stored definition could not be read at open.
#[derive(Debug, Clone)]
pub struct Unreadable {
    /// What was wrong (reported when the name is used).
    pub why: String,
    /// A `V` record (else a `T` record).
    pub view: bool,
    /// The table's index ids when its definition decoded but the table
    /// did not load; empty when unknown (its entries cannot be found).
    pub ids: Vec<u32>,
}

impl Unreadable {
    fn new(why: impl ToString, view: bool, ids: Vec<u32>) -> Unreadable {
        Unreadable {
            why: why.to_string(),
            view,
            ids,
        }
    }
}

/// What DROP TABLE did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// No table of the name (and `if_exists`).
    Absent,
    /// The table and its entries went.
    Table,
    /// An unreadable table's record went; `data_left`: its index ids were
    /// unknown, so its entries stay where they are (never reused ids).
    Unreadable { data_left: bool },
}

/// One immutable view of the catalog.
#[derive(Debug, Default)]
pub struct CatalogState {
    /// Bumped by every DDL; prepared statements re-plan when it changes.
    pub version: u64,
    /// Each database with its default collation (for tables created in it
    /// without one), or why its record could not be read at open (the
    /// database exists and its tables open; what needs its default fails).
    pub databases: BTreeMap<String, DbCollation>,
    pub tables: HashMap<(String, String), Arc<Table>>,
    /// Tables and views whose stored definition could not be read at open:
    /// the others open; these give an error when used, keep their name
    /// taken, and go with DROP TABLE / DROP VIEW / DROP DATABASE.
    pub unreadable: BTreeMap<(String, String), Unreadable>,
    /// For each table that foreign keys name as their parent: the tables
    /// declaring them and the key's position in their `foreign_keys`.
    pub referenced_by: HashMap<(String, String), Vec<ChildKey>>,
    /// Views, by (database, name); they share the tables' namespace.
    pub views: HashMap<(String, String), Arc<ViewDef>>,
    /// Accounts, by (user, host pattern).
    pub accounts: AccountMap,
    /// The catalog has had accounts (its `A` record): an instance whose
    /// accounts were all dropped stays without any, rather than getting a
    /// passwordless root again at the next start.
    pub accounts_initialized: bool,
}

impl CatalogState {
    /// The foreign keys naming `db.name` as their parent.
    pub fn children(&self, db: &str, name: &str) -> &[ChildKey] {
        self.referenced_by
            .get(&(db.to_string(), name.to_string()))
            .map_or(&[], Vec::as_slice)
    }

    /// True when some foreign key names `db.name` as its parent.
    pub fn is_referenced(&self, db: &str, name: &str) -> bool {
        !self.referenced_by.is_empty() && !self.children(db, name).is_empty()
    }

    /// Rebuilds `referenced_by` from the tables.
    fn index_references(&mut self) {
        let mut m: HashMap<(String, String), Vec<ChildKey>> = HashMap::new();
        for t in self.tables.values() {
            for (k, fk) in t.def.foreign_keys.iter().enumerate() {
                m.entry((fk.parent_db.clone(), fk.parent_table.clone()))
                    .or_default()
                    .push((t.clone(), k));
            }
        }
        for v in m.values_mut() {
            v.sort_by(|a, b| {
                (&a.0.def.db, &a.0.def.name, a.1).cmp(&(&b.0.def.db, &b.0.def.name, b.1))
            });
        }
        self.referenced_by = m;
    }

    /// Looks a table up.
    pub fn table(&self, db: &str, name: &str) -> Option<&Arc<Table>> {
        self.tables.get(&(db.to_string(), name.to_string()))
    }

    /// Looks a view up.
    pub fn view(&self, db: &str, name: &str) -> Option<&Arc<ViewDef>> {
        if self.views.is_empty() {
            return None;
        }
        self.views.get(&(db.to_string(), name.to_string()))
    }

    /// True when a table, an unreadable table or a view has this name.
    pub fn name_taken(&self, db: &str, name: &str) -> bool {
        let k = (db.to_string(), name.to_string());
        self.tables.contains_key(&k)
            || self.unreadable.contains_key(&k)
            || self.views.contains_key(&k)
    }

    /// View names of a database, sorted.
    pub fn view_names(&self, db: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .views
            .keys()
            .filter(|(d, _)| d == db)
            .map(|(_, n)| n.clone())
            .collect();
        v.sort();
        v
    }

    /// Table names of a database, sorted.
    pub fn table_names(&self, db: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .tables
            .keys()
            .filter(|(d, _)| d == db)
            .map(|(_, n)| n.clone())
            .collect();
        v.sort();
        v
    }
}

/// The catalog of one database instance.
pub struct Catalog {
    db: Db,
    state: RwLock<Arc<CatalogState>>,
    /// Mirrors `state.version` for cheap staleness checks.
    version: AtomicU64,
    ddl: Mutex<u32>, // next index id, guarded with DDL
    /// The TTL of the TTL tables' indexes (the compaction filter's input).
    ttl: Arc<crate::ttl::Registry>,
}

pub(crate) fn key(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = keycodec::index_prefix(CATALOG_INDEX_ID).to_vec();
    k.push(tag);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            k.push(0);
        }
        k.extend_from_slice(p);
    }
    k
}

pub(crate) fn sync() -> WriteOptions {
    WriteOptions {
        sync: true,
        disable_wal: false,
    }
}

impl Catalog {
    /// The current catalog snapshot.
    pub fn state(&self) -> Arc<CatalogState> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The current catalog version (bumped by every DDL).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    pub(crate) fn publish(&self, f: impl FnOnce(&mut CatalogState)) {
        let mut g = self.state.write().unwrap_or_else(|p| p.into_inner());
        let mut st = CatalogState {
            version: g.version + 1,
            databases: g.databases.clone(),
            tables: g.tables.clone(),
            unreadable: g.unreadable.clone(),
            referenced_by: HashMap::new(),
            views: g.views.clone(),
            accounts: g.accounts.clone(),
            accounts_initialized: g.accounts_initialized,
        };
        f(&mut st);
        st.index_references();
        self.ttl.refresh(st.tables.values().map(|t| &**t));
        self.version.store(st.version, Ordering::Release);
        *g = Arc::new(st);
    }

    pub(crate) fn lock_ddl(&self) -> std::sync::MutexGuard<'_, u32> {
        self.ddl.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// CREATE DATABASE with its default collation.
    pub fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
        coll: Collation,
    ) -> Result<bool> {
        let _g = self.lock_ddl();
        if self.state().databases.contains_key(name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::DbExists(name.into()))
            };
        }
        self.write_database(name, coll)?;
        Ok(true)
    }

    /// ALTER DATABASE: a new default collation (for tables created later).
    pub fn alter_database(&self, name: &str, coll: Collation) -> Result<()> {
        let _g = self.lock_ddl();
        if !self.state().databases.contains_key(name) {
            return Err(Error::NoSuchDb(name.into()));
        }
        self.write_database(name, coll)
    }

    fn write_database(&self, name: &str, coll: Collation) -> Result<()> {
        self.db.write(sync(), {
            let mut b = WriteBatch::new();
            b.put(&key(b'D', &[name.as_bytes()]), &encode_database(coll));
            crate::binlog::attach_ddl_record(&mut b);
            b
        })?;
        self.publish(|st| {
            st.databases.insert(name.to_string(), Ok(coll));
        });
        Ok(())
    }

    /// DROP DATABASE: drops its tables too. Returns the number of tables.
    pub fn drop_database(&self, name: &str, if_exists: bool) -> Result<Option<usize>> {
        let _g = self.lock_ddl();
        let st = self.state();
        if !st.databases.contains_key(name) {
            return if if_exists {
                Ok(None)
            } else {
                Err(Error::NoSuchDb(name.into()))
            };
        }
        let tables: Vec<Arc<Table>> = st
            .tables
            .values()
            .filter(|t| t.def.db == name)
            .cloned()
            .collect();
        let unreadable: Vec<(String, Unreadable)> = st
            .unreadable
            .iter()
            .filter(|((d, _), _)| d == name)
            .map(|((_, n), u)| (n.clone(), u.clone()))
            .collect();
        let mut b = WriteBatch::new();
        b.delete(&key(b'D', &[name.as_bytes()]));
        for t in &tables {
            b.delete(&key(b'T', &[t.def.db.as_bytes(), t.def.name.as_bytes()]));
            b.delete(&key(b'S', &[t.def.db.as_bytes(), t.def.name.as_bytes()]));
        }
        for v in st.view_names(name) {
            b.delete(&key(b'V', &[name.as_bytes(), v.as_bytes()]));
        }
        for (n, u) in &unreadable {
            delete_unreadable(&mut b, name, n, u);
        }
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.databases.remove(name);
            st.tables.retain(|(d, _), _| d != name);
            st.views.retain(|(d, _), _| d != name);
            st.unreadable.retain(|(d, _), _| d != name);
        });
        for t in &tables {
            self.reclaim(&t.def)?;
        }
        let mut count = tables.len();
        for (n, u) in &unreadable {
            if !u.view {
                count += 1;
                self.reclaim_unreadable(name, n, u)?;
            }
        }
        Ok(Some(count))
    }

    /// Deletes every entry of a dropped table's indexes.
    fn reclaim(&self, def: &TableDef) -> Result<()> {
        for ix in def.indexes() {
            reclaim_ids(&self.db, ix.id, ix.id + 1)?;
        }
        Ok(())
    }

    /// Gives index ids to `def` (its `pk.id` and secondary ids are
    /// overwritten) and stores it. Returns false if it existed and
    /// `if_not_exists`.
    pub fn create_table(&self, mut def: TableDef, if_not_exists: bool) -> Result<bool> {
        let mut next = self.lock_ddl();
        let st = self.state();
        if !st.databases.contains_key(&def.db) {
            return Err(Error::NoSuchDb(def.db.clone()));
        }
        if st.name_taken(&def.db, &def.name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(Error::TableExists(def.name.clone()))
            };
        }
        let mut id = *next;
        def.pk.id = id;
        id += 1;
        for ix in &mut def.secondary {
            ix.id = id;
            id += 1;
        }
        self.store_def(&def, id)?;
        *next = id;
        let mut t = Table::new(def, 1, 1);
        t.since = Table::since_after(&t.def, None, self.db.latest_sequence());
        self.publish(|st| {
            st.tables
                .insert((t.def.db.clone(), t.def.name.clone()), Arc::new(t));
        });
        Ok(true)
    }

    fn store_def(&self, def: &TableDef, next_id: u32) -> Result<()> {
        // Never store what `decode` would refuse at the next start.
        def.check_limits().map_err(Error::Limit)?;
        // The indexes' column families exist (durably) before the definition names them.
        for ix in def.indexes() {
            crate::cf::of(&self.db, ix)?;
        }
        let mut b = WriteBatch::new();
        b.put(
            &key(b'T', &[def.db.as_bytes(), def.name.as_bytes()]),
            &def.encode(),
        );
        b.put(&key(b'N', &[]), &next_id.to_le_bytes());
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        Ok(())
    }

    /// Deletes the entries of an unreadable table's indexes when its ids
    /// are known; otherwise says on stderr that they stay.
    fn reclaim_unreadable(&self, db: &str, name: &str, u: &Unreadable) -> Result<()> {
        if u.ids.is_empty() {
            eprintln!(
                "strata: dropped unreadable table {db}.{name}: its index ids are unknown, \
                 so its entries stay on disk"
            );
        }
        for id in &u.ids {
            reclaim_ids(&self.db, *id, id + 1)?;
        }
        Ok(())
    }

    /// Stores ANALYZE's statistics of `t` (one synced write) and installs
    /// them as its estimates.
    pub fn store_stats(&self, t: &Table, s: crate::stats::TableStats) -> Result<()> {
        let _g = self.lock_ddl();
        let st = self.state();
        if !st
            .table(&t.def.db, &t.def.name)
            .is_some_and(|cur| Arc::ptr_eq(&cur.estimate, &t.estimate))
        {
            return Err(Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)));
        }
        let mut b = WriteBatch::new();
        b.put(
            &key(b'S', &[t.def.db.as_bytes(), t.def.name.as_bytes()]),
            &s.encode(),
        );
        crate::binlog::attach_ddl_record(&mut b);
        self.db.write(sync(), b)?;
        t.estimate.set(s);
        Ok(())
    }

    /// Runs `f` while `t` is the current table of its name, with every
    /// catalog change held out (DDL waits): None, not run, when it is not.
    pub fn while_current<R>(&self, t: &Arc<Table>, f: impl FnOnce() -> R) -> Option<R> {
        let _g = self.lock_ddl();
        let st = self.state();
        let cur = st.table(&t.def.db, &t.def.name)?;
        Arc::ptr_eq(cur, t).then(f)
    }

    /// The engine.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Publishes an unchanged catalog under a new version (so that
    /// statements plan again and DDL can wait for older ones); returns it.
    pub fn bump(&self) -> u64 {
        self.bump_with(|_| {})
    }

    /// As `bump`, calling `f` with the new version before anyone can see
    /// it (ALTER TABLE freezes tables at it).
    pub fn bump_with(&self, f: impl FnOnce(u64)) -> u64 {
        let _g = self.lock_ddl();
        f(self.version() + 1);
        self.publish(|_| {});
        self.version()
    }
}

/// Adds to `b` the deletes of an unreadable table's or view's records.
fn delete_unreadable(b: &mut WriteBatch, db: &str, name: &str, u: &Unreadable) {
    let (d, n) = (db.as_bytes(), name.as_bytes());
    if u.view {
        b.delete(&key(b'V', &[d, n]));
    } else {
        b.delete(&key(b'T', &[d, n]));
        b.delete(&key(b'S', &[d, n]));
    }
}

/// A default value for display (SHOW CREATE TABLE).
pub fn default_sql(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        other => {
            let t = String::from_utf8_lossy(&other.text()).replace('\'', "''");
            format!("'{t}'")
        }
    }
}
