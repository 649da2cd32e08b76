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
    /// Tables whose stored definition could not be read at open, with why:
    /// the others open; these give an error when used.
    pub unreadable: BTreeMap<(String, String), String>,
    /// For each table that foreign keys name as their parent: the tables
    /// declaring them and the key's position in their `foreign_keys`.
    pub referenced_by: HashMap<(String, String), Vec<ChildKey>>,
    /// Views, by (database, name); they share the tables' namespace.
    pub views: HashMap<(String, String), Arc<ViewDef>>,
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
    /// Loads the catalog from the engine (creating the default databases
    /// on a new instance).
    pub fn open(db: Db) -> Result<Catalog> {
        let mut st = CatalogState::default();
        let mut next_id = FIRST_USER_INDEX_ID;
        let lo = keycodec::index_prefix(CATALOG_INDEX_ID).to_vec();
        let hi = prefix_successor(&lo);
        let mut it = db.iter(ReadOptions {
            lower_bound: Some(lo.clone()),
            upper_bound: hi,
            ..Default::default()
        })?;
        it.seek(&lo);
        let mut defs = Vec::new();
        let mut pending = Vec::new();
        let mut stats: HashMap<(String, String), crate::stats::TableStats> = HashMap::new();
        while it.valid() {
            let k = &it.key()[4..];
            match k.first() {
                Some(b'D') => {
                    // One unreadable record must not keep the rest from
                    // opening: the database exists (its tables open, its
                    // name stays taken), what needs its default fails.
                    let name = String::from_utf8_lossy(&k[1..]).into_owned();
                    let coll = decode_database(it.value());
                    if let Err(e) = &coll {
                        eprintln!(
                            "strata: the record of database {name} cannot be read ({e}): \
                             its tables open, creating tables in it fails until \
                             ALTER DATABASE rewrites it"
                        );
                    }
                    st.databases.insert(name, coll);
                }
                Some(b'T') => match TableDef::decode(it.value()) {
                    Ok(d) => defs.push(d),
                    // One unreadable definition must not keep the others
                    // from opening: the table is reported when used.
                    Err(e) => {
                        let (db, name) = split_name(&k[1..]);
                        eprintln!("strata: table {db}.{name} is not available: {e}");
                        st.unreadable.insert((db, name), e.to_string());
                    }
                },
                Some(b'V') => match ViewDef::decode(it.value()) {
                    Ok(v) => {
                        st.views.insert((v.db.clone(), v.name.clone()), Arc::new(v));
                    }
                    Err(e) => {
                        let (db, name) = split_name(&k[1..]);
                        eprintln!("strata: view {db}.{name} is not available: {e}");
                        st.unreadable.insert((db, name), e.to_string());
                    }
                },
                Some(b'S') => {
                    // Statistics only guide plans: a bad record is ignored.
                    let (db, name) = split_name(&k[1..]);
                    match crate::stats::TableStats::decode(it.value()) {
                        Ok(s) => {
                            stats.insert((db, name), s);
                        }
                        Err(e) => eprintln!("strata: statistics of {db}.{name} ignored: {e}"),
                    }
                }
                Some(b'N') => {
                    let v = it.value();
                    if v.len() != 4 {
                        return Err(Error::Corruption("catalog next-id record".into()));
                    }
                    next_id = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                }
                Some(b'P') => {
                    let (k, v) = (&k[1..], it.value());
                    if k.len() != 4 || v.len() != 4 {
                        // Which ids it names is unknown: nothing is
                        // reclaimed and the record stays (the ids are below
                        // `N`, never given again).
                        eprintln!(
                            "strata: a pending-rebuild record cannot be read \
                             (key {k:02x?}, value {v:02x?}); left as it is"
                        );
                        it.next();
                        continue;
                    }
                    let first = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
                    pending.push((first, u32::from_le_bytes([v[0], v[1], v[2], v[3]])));
                }
                _ => return Err(Error::Corruption("unknown catalog record".into())),
            }
            it.next();
        }
        it.status()?;
        drop(it);
        // A rebuild that did not finish (a crash): its table kept the old
        // definition; the entries it wrote under its new ids go.
        for (first, end) in pending {
            reclaim_ids(&db, first, end)?;
            let mut b = WriteBatch::new();
            b.delete(&key(b'P', &[&first.to_be_bytes()]));
            db.write(sync(), b)?;
        }
        for def in defs {
            let (d, n) = (def.db.clone(), def.name.clone());
            let s = stats.remove(&(d.clone(), n.clone()));
            match load_table(&db, def, s) {
                Ok(t) => {
                    st.tables.insert((d, n), Arc::new(t));
                }
                Err(e @ (Error::Corruption(_) | Error::Internal(_))) => {
                    eprintln!("strata: table {d}.{n} is not available: {e}");
                    st.unreadable.insert((d, n), e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
        st.index_references();
        let cat = Catalog {
            db,
            state: RwLock::new(Arc::new(st)),
            version: AtomicU64::new(0),
            ddl: Mutex::new(next_id),
        };
        for name in ["test"] {
            if !cat.state().databases.contains_key(name) {
                cat.create_database(name, true, Collation::DEFAULT)?;
            }
        }
        Ok(cat)
    }

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
        };
        f(&mut st);
        st.index_references();
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
        let mut b = WriteBatch::new();
        b.delete(&key(b'D', &[name.as_bytes()]));
        for t in &tables {
            b.delete(&key(b'T', &[t.def.db.as_bytes(), t.def.name.as_bytes()]));
            b.delete(&key(b'S', &[t.def.db.as_bytes(), t.def.name.as_bytes()]));
        }
        for v in st.view_names(name) {
            b.delete(&key(b'V', &[name.as_bytes(), v.as_bytes()]));
        }
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.databases.remove(name);
            st.tables.retain(|(d, _), _| d != name);
            st.views.retain(|(d, _), _| d != name);
        });
        for t in &tables {
            self.reclaim(&t.def)?;
        }
        Ok(Some(tables.len()))
    }

    /// Deletes every entry of a dropped table's indexes.
    fn reclaim(&self, def: &TableDef) -> Result<()> {
        for ix in def.indexes() {
            let lo = keycodec::index_prefix(ix.id);
            let hi = keycodec::index_prefix(ix.id + 1);
            self.db.delete_range(lsm::DEFAULT_CF, &lo, &hi)?;
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
        let mut b = WriteBatch::new();
        b.put(
            &key(b'T', &[def.db.as_bytes(), def.name.as_bytes()]),
            &def.encode(),
        );
        b.put(&key(b'N', &[]), &next_id.to_le_bytes());
        self.db.write(sync(), b)?;
        Ok(())
    }

    /// DROP TABLE. Returns false if absent and `if_exists`.
    pub fn drop_table(&self, db: &str, name: &str, if_exists: bool) -> Result<bool> {
        let _g = self.lock_ddl();
        let st = self.state();
        let Some(t) = st.table(db, name).cloned() else {
            return if if_exists {
                Ok(false)
            } else {
                Err(Error::NoSuchTable(format!("{db}.{name}")))
            };
        };
        let mut b = WriteBatch::new();
        b.delete(&key(b'T', &[db.as_bytes(), name.as_bytes()]));
        b.delete(&key(b'S', &[db.as_bytes(), name.as_bytes()]));
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.tables.remove(&(db.to_string(), name.to_string()));
        });
        self.reclaim(&t.def)?;
        Ok(true)
    }

    /// Replaces a table's definition (ALTER-like changes, new indexes,
    /// TRUNCATE). `base` is the table `def` was derived from: if another
    /// change (an online index build finishing, another DDL) replaced it
    /// meanwhile, nothing is written and the result is `TableChanged`, so
    /// that the caller derives `def` again from the current table instead of
    /// losing that change. `fresh_pk` gives fresh ids to the primary key and
    /// to every index, otherwise to indexes whose id is 0. Returns the new
    /// table; counters carry over unless `reset_counters`.
    pub fn replace_table(
        &self,
        base: &Arc<Table>,
        mut def: TableDef,
        fresh_pk: bool,
        reset_counters: bool,
    ) -> Result<Arc<Table>> {
        let mut next = self.lock_ddl();
        let st = self.state();
        let Some(old) = st.table(&def.db, &def.name).cloned() else {
            return Err(Error::NoSuchTable(format!("{}.{}", def.db, def.name)));
        };
        if !Arc::ptr_eq(&old, base) {
            return Err(Error::TableChanged(format!("{}.{}", def.db, def.name)));
        }
        if fresh_pk && !old.building.is_empty() {
            // TRUNCATE during CREATE INDEX: the build reads the old ids.
            return Err(Error::TableChanged(format!("{}.{}", def.db, def.name)));
        }
        let mut id = *next;
        if fresh_pk {
            def.pk.id = id;
            id += 1;
        }
        for ix in &mut def.secondary {
            if ix.id == 0 || fresh_pk {
                ix.id = id;
                id += 1;
            }
        }
        self.store_def(&def, id)?;
        *next = id;
        let (ai, hn) = if reset_counters {
            (1, 1)
        } else {
            (
                old.auto_inc.load(Ordering::SeqCst),
                old.hidden_next.load(Ordering::SeqCst),
            )
        };
        let mut t = Table::new(def, ai, hn);
        t.since = Table::since_after(&t.def, Some(&old), self.db.latest_sequence());
        t.building = old.building.clone();
        if !fresh_pk {
            t.estimate = old.estimate.clone();
        }
        let t = Arc::new(t);
        let t2 = t.clone();
        self.publish(|st| {
            st.tables
                .insert((t2.def.db.clone(), t2.def.name.clone()), t2);
        });
        // Reclaim indexes that no longer exist.
        let live: Vec<u32> = t.def.indexes().map(|i| i.id).collect();
        for ix in old.def.indexes() {
            if !live.contains(&ix.id) {
                let lo = keycodec::index_prefix(ix.id);
                let hi = keycodec::index_prefix(ix.id + 1);
                self.db.delete_range(lsm::DEFAULT_CF, &lo, &hi)?;
            }
        }
        Ok(t)
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
        self.db.write(sync(), b)?;
        t.estimate.set(s);
        Ok(())
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

    /// Gives `def` (a table about to be rebuilt) fresh ids for all its
    /// indexes and records them as pending (a `P` record), so that the
    /// entries written under them are removed at the next open if the
    /// rebuild never commits.
    pub fn reserve_ids(&self, def: &mut TableDef) -> Result<()> {
        let mut next = self.lock_ddl();
        let first = *next;
        let mut id = first;
        def.pk.id = id;
        id += 1;
        for ix in &mut def.secondary {
            ix.id = id;
            id += 1;
        }
        let mut b = WriteBatch::new();
        b.put(&key(b'N', &[]), &id.to_le_bytes());
        b.put(&key(b'P', &[&first.to_be_bytes()]), &id.to_le_bytes());
        self.db.write(sync(), b)?;
        *next = id;
        Ok(())
    }

    /// Drops the entries of a rebuild that did not commit (ids from
    /// `reserve_ids`) and its pending record.
    pub fn release_ids(&self, def: &TableDef) -> Result<()> {
        let _g = self.lock_ddl();
        let (first, end) = id_span(def);
        reclaim_ids(&self.db, first, end)?;
        let mut b = WriteBatch::new();
        b.delete(&key(b'P', &[&first.to_be_bytes()]));
        self.db.write(sync(), b)?;
        Ok(())
    }

    /// Replaces tables' definitions at once, in one synced write (ALTER
    /// TABLE, RENAME TABLE): each change's `from` table (if any) goes, its
    /// `def` comes in under its own name, with `from`'s counters. Fails,
    /// changing nothing, if a `from` is no longer the current table of its
    /// name, or a new name is taken by a table not going away. `pending`
    /// changes had their ids from `reserve_ids` (their record goes too).
    /// Index ids no new definition uses are reclaimed.
    pub fn commit_defs(&self, changes: Vec<DefChange>) -> Result<Vec<Arc<Table>>> {
        let next = self.lock_ddl();
        let st = self.state();
        let name_of = |d: &TableDef| (d.db.clone(), d.name.clone());
        let leaving: Vec<(String, String)> = changes
            .iter()
            .filter_map(|c| c.from.as_ref().map(|t| name_of(&t.def)))
            .collect();
        for c in &changes {
            if let Some(t) = &c.from {
                let cur = st.table(&t.def.db, &t.def.name);
                if !cur.is_some_and(|cur| Arc::ptr_eq(cur, t)) || !t.building.is_empty() {
                    return Err(Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)));
                }
            }
            if !st.databases.contains_key(&c.def.db) {
                return Err(Error::NoSuchDb(c.def.db.clone()));
            }
            let n = name_of(&c.def);
            let taken = st.name_taken(&n.0, &n.1) && !leaving.contains(&n);
            let twice = changes.iter().filter(|o| name_of(&o.def) == n).count() > 1;
            if taken || twice {
                return Err(Error::TableExists(c.def.name.clone()));
            }
            c.def.check_limits().map_err(Error::Limit)?;
        }
        let mut b = WriteBatch::new();
        for n in &leaving {
            b.delete(&key(b'T', &[n.0.as_bytes(), n.1.as_bytes()]));
            b.delete(&key(b'S', &[n.0.as_bytes(), n.1.as_bytes()]));
        }
        for c in &changes {
            b.put(
                &key(b'T', &[c.def.db.as_bytes(), c.def.name.as_bytes()]),
                &c.def.encode(),
            );
            if c.pending {
                b.delete(&key(b'P', &[&id_span(&c.def).0.to_be_bytes()]));
            }
        }
        b.put(&key(b'N', &[]), &next.to_le_bytes());
        self.db.write(sync(), b)?;
        let seq = self.db.latest_sequence();
        let tables: Vec<Arc<Table>> = changes
            .iter()
            .map(|c| {
                let (ai, hn) = c.from.as_ref().map_or((1, 1), |t| {
                    (
                        t.auto_inc.load(Ordering::SeqCst),
                        t.hidden_next.load(Ordering::SeqCst),
                    )
                });
                let mut t = Table::new(c.def.clone(), ai.max(c.auto_inc), hn.max(c.hidden_next));
                t.since = Table::since_after(&t.def, c.from.as_deref(), seq);
                if let Some(f) = &c.from {
                    t.estimate = f.estimate.clone();
                }
                Arc::new(t)
            })
            .collect();
        self.publish(|st| {
            for n in &leaving {
                st.tables.remove(n);
            }
            for t in &tables {
                st.tables.insert(name_of(&t.def), t.clone());
            }
        });
        drop(next);
        // Writers still holding a replaced table retry on the new one.
        let live: Vec<u32> = tables
            .iter()
            .flat_map(|t| t.def.indexes().map(|i| i.id))
            .collect();
        for c in &changes {
            if let Some(t) = &c.from {
                t.frozen.store(0, Ordering::SeqCst);
                for ix in t.def.indexes().filter(|i| !live.contains(&i.id)) {
                    reclaim_ids(&self.db, ix.id, ix.id + 1)?;
                }
            }
        }
        Ok(tables)
    }
}

impl Catalog {
    /// CREATE [OR REPLACE] VIEW and ALTER VIEW: stores `def` in one synced
    /// write. `replace`: an existing view of the name is replaced (a table
    /// of the name is still `TableExists`); `must_exist` (ALTER VIEW): the
    /// view must be there (`NoSuchTable`).
    pub fn put_view(&self, def: ViewDef, replace: bool, must_exist: bool) -> Result<()> {
        let _g = self.lock_ddl();
        let st = self.state();
        if !st.databases.contains_key(&def.db) {
            return Err(Error::NoSuchDb(def.db.clone()));
        }
        let is_view = st.view(&def.db, &def.name).is_some();
        if must_exist && !is_view {
            return Err(Error::NoSuchTable(format!("{}.{}", def.db, def.name)));
        }
        if st.name_taken(&def.db, &def.name) && !(is_view && (replace || must_exist)) {
            return Err(Error::TableExists(def.name.clone()));
        }
        let mut b = WriteBatch::new();
        b.put(
            &key(b'V', &[def.db.as_bytes(), def.name.as_bytes()]),
            &def.encode(),
        );
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.views
                .insert((def.db.clone(), def.name.clone()), Arc::new(def));
        });
        Ok(())
    }

    /// DROP VIEW of the views named that exist (one synced write); returns
    /// the names (db, name) that are not views.
    pub fn drop_views(&self, names: &[(String, String)]) -> Result<Vec<(String, String)>> {
        let _g = self.lock_ddl();
        let st = self.state();
        let (found, missing): (Vec<_>, Vec<_>) = names
            .iter()
            .cloned()
            .partition(|(d, n)| st.view(d, n).is_some());
        if !found.is_empty() {
            let mut b = WriteBatch::new();
            for (d, n) in &found {
                b.delete(&key(b'V', &[d.as_bytes(), n.as_bytes()]));
            }
            self.db.write(sync(), b)?;
            self.publish(|st| {
                for k in &found {
                    st.views.remove(k);
                }
            });
        }
        Ok(missing)
    }

    /// RENAME TABLE of a view: the definition moves to the new name in one
    /// synced write.
    pub fn rename_view(&self, from: (&str, &str), to: (&str, &str)) -> Result<()> {
        let _g = self.lock_ddl();
        let st = self.state();
        let Some(v) = st.view(from.0, from.1) else {
            return Err(Error::NoSuchTable(format!("{}.{}", from.0, from.1)));
        };
        if !st.databases.contains_key(to.0) {
            return Err(Error::NoSuchDb(to.0.to_string()));
        }
        if st.name_taken(to.0, to.1) {
            return Err(Error::TableExists(to.1.to_string()));
        }
        let mut def = (**v).clone();
        def.db = to.0.to_string();
        def.name = to.1.to_string();
        let mut b = WriteBatch::new();
        b.delete(&key(b'V', &[from.0.as_bytes(), from.1.as_bytes()]));
        b.put(
            &key(b'V', &[to.0.as_bytes(), to.1.as_bytes()]),
            &def.encode(),
        );
        self.db.write(sync(), b)?;
        self.publish(|st| {
            st.views.remove(&(from.0.to_string(), from.1.to_string()));
            st.views
                .insert((def.db.clone(), def.name.clone()), Arc::new(def));
        });
        Ok(())
    }
}

/// The (database, name) of a `T` or `V` key's rest.
fn split_name(k: &[u8]) -> (String, String) {
    let mut parts = k.splitn(2, |b| *b == 0);
    let db = String::from_utf8_lossy(parts.next().unwrap_or(b"")).into_owned();
    let name = String::from_utf8_lossy(parts.next().unwrap_or(b"")).into_owned();
    (db, name)
}

/// One table definition `Catalog::commit_defs` installs.
pub struct DefChange {
    /// The table it replaces (None: a new table).
    pub from: Option<Arc<Table>>,
    pub def: TableDef,
    /// Its ids came from `Catalog::reserve_ids`.
    pub pending: bool,
    /// Lower bounds for the counters (a rebuild that numbered rows).
    pub auto_inc: u64,
    pub hidden_next: u64,
}

/// The first and one past the last index id of `def` (ids from
/// `reserve_ids` are consecutive).
fn id_span(def: &TableDef) -> (u32, u32) {
    let first = def.indexes().map(|i| i.id).min().unwrap_or(0);
    let last = def.indexes().map(|i| i.id).max().unwrap_or(0);
    (first, last + 1)
}

/// Range-deletes the entries of index ids `first..end`.
pub(crate) fn reclaim_ids(db: &Db, first: u32, end: u32) -> Result<()> {
    if first < FIRST_USER_INDEX_ID || end <= first {
        return Ok(());
    }
    let lo = keycodec::index_prefix(first);
    let hi = keycodec::index_prefix(end);
    db.delete_range(lsm::DEFAULT_CF, &lo, &hi)?;
    Ok(())
}

/// Builds the in-memory table, recovering its counters from the data: the
/// next AUTO_INCREMENT value is one more than the largest stored in an
/// index led by that column (InnoDB before 8.0 does the same).
fn load_table(db: &Db, def: TableDef, stats: Option<crate::stats::TableStats>) -> Result<Table> {
    let mut auto = 1u64;
    if let Some(c) = def.auto_inc_column() {
        if let Some(ix) = def.indexes().find(|ix| ix.columns.first() == Some(&c)) {
            if let Some(k) = last_key(db, ix.id)? {
                let col = &def.columns[c];
                let mut s = &k[4..];
                let v = keycodec::decode(&mut s, def.key_format, &col.ty, col.nullable)?;
                if let Some(i) = v.to_i128() {
                    auto = (i.max(0) as u64).saturating_add(1);
                }
            }
        }
    }
    let mut hidden = 1u64;
    if def.hidden_pk {
        if let Some(k) = last_key(db, def.pk.id)? {
            if k.len() >= 12 {
                let mut a = [0u8; 8];
                a.copy_from_slice(&k[4..12]);
                hidden = u64::from_be_bytes(a).saturating_add(1);
            }
        }
    }
    let rows = match &stats {
        Some(s) => s.rows,
        None => crate::stats::engine_rows(db, &def),
    };
    let mut t = Table::new(def, auto, hidden);
    t.estimate = Arc::new(crate::stats::Estimate::new(rows, stats));
    Ok(t)
}

fn last_key(db: &Db, index_id: u32) -> Result<Option<Vec<u8>>> {
    let lo = keycodec::index_prefix(index_id).to_vec();
    let hi = keycodec::index_prefix(index_id + 1).to_vec();
    let mut it = db.iter(ReadOptions {
        lower_bound: Some(lo),
        upper_bound: Some(hi.clone()),
        ..Default::default()
    })?;
    it.seek_for_prev(&hi);
    let r = if it.valid() && it.key() < &hi[..] {
        Some(it.key().to_vec())
    } else {
        None
    };
    it.status()?;
    Ok(r)
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

/// A database record's value (docs/formats/catalog.md): `0x01` for the
/// server default collation (what every release wrote before collations),
/// else `0x02` and the collation's id (u16 LE).
fn encode_database(coll: Collation) -> Vec<u8> {
    if coll == Collation::DEFAULT {
        return vec![1];
    }
    let id = coll.id().to_le_bytes();
    vec![2, id[0], id[1]]
}

fn decode_database(v: &[u8]) -> DbCollation {
    match v {
        [1] => Ok(Collation::DEFAULT),
        [2, a, b] => {
            let id = u16::from_le_bytes([*a, *b]);
            Collation::from_id(id).ok_or_else(|| format!("unknown collation id {id}"))
        }
        _ => Err(format!("unknown record format {v:02x?}")),
    }
}

#[cfg(test)]
mod database_record_tests {
    use super::*;

    #[test]
    fn database_records_round_trip_and_reject_bad_bytes() {
        for c in crate::collation::ALL {
            assert_eq!(decode_database(&encode_database(c)), Ok(c));
        }
        assert_eq!(encode_database(Collation::DEFAULT), vec![1]);
        assert!(decode_database(&[]).is_err());
        assert!(decode_database(&[2, 45]).is_err());
        assert!(decode_database(&[2, 0xff, 0xff]).is_err());
        assert!(decode_database(&[3, 45, 0]).is_err());
        assert!(decode_database(&[1, 0]).is_err());
    }
}
