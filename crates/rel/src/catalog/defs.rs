//! Definition changes that give or take index ids: replacing a table's
//! definition (ALTER, TRUNCATE, new indexes), reserving ids for a rebuild and
//! releasing them, and installing several definitions in one synced write
//! (ALTER TABLE, RENAME TABLE).
use super::*;

impl Catalog {
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
        if old.def.pk.id == t.def.pk.id {
            t.pk_high = old.pk_high.clone();
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
                reclaim_ids(&self.db, ix.id, ix.id + 1)?;
            }
        }
        Ok(t)
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
            for ix in c.def.indexes() {
                crate::cf::of(&self.db, ix)?;
            }
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
        crate::binlog::attach_ddl_record(&mut b);
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
                    if f.def.pk.id == t.def.pk.id {
                        t.pk_high = f.pk_high.clone();
                    }
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
pub(super) fn id_span(def: &TableDef) -> (u32, u32) {
    let first = def.indexes().map(|i| i.id).min().unwrap_or(0);
    let last = def.indexes().map(|i| i.id).max().unwrap_or(0);
    (first, last + 1)
}

/// Range-deletes the entries of index ids `first..end` in every column family
/// (an index's family is not always known: an abandoned rebuild's `P` ids) and
/// has the engine remove their files from disk in the background
/// (`lsm::Db::reclaim_range`): the ids are never used again. Callers have made
/// the catalog change that drops the ids durable first.
pub(crate) fn reclaim_ids(db: &Db, first: u32, end: u32) -> Result<()> {
    if first < FIRST_USER_INDEX_ID || end <= first {
        return Ok(());
    }
    let lo = keycodec::index_prefix(first);
    let hi = keycodec::index_prefix(end);
    for cf in crate::cf::all(db) {
        let (a, b) = crate::keyrange::span(crate::keyrange::reversed(db, cf), &lo, &hi);
        db.delete_range(cf, a, b)?;
        db.reclaim_range(cf, a, b);
    }
    Ok(())
}
