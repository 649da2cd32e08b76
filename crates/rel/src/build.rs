//! Building a new secondary index from the table's rows online: the rows
//! are listed from one snapshot and their entries written in batches, each
//! row locked and read at its latest version, checking uniqueness for a
//! UNIQUE index. The caller (DDL) publishes the index to writers first, so
//! that they maintain it while it is built, and waits for writers that
//! planned without it before calling this.
//!
//! The catalog side of an online build (`Catalog::begin_index`,
//! `finish_index`, `abort_index`) lives here too: the index is published
//! to writers only (`Table::building`) and stored with the definition once
//! filled, under a pending (`P`) record until then, so that neither a
//! reader nor a restart ever sees a half-built index.
use crate::catalog::{key, reclaim_ids, sync as synced, Catalog, Table};
use crate::keycodec;
use crate::scan::for_each_row_locked;
use crate::schema::{Index, TableDef};
use crate::table as rt;
use crate::{Error, Result};
use lsm::{Db, ReadOptions, Snapshot, WriteBatch};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use txn::{LockMode, Txn, TxnDb};

/// Fills index `ix` of `t` (published to writers: `Table::building`) for
/// every row of the table: the rows are listed from a snapshot and each
/// row's entry written as the row is when its batch runs (locked shared,
/// at its latest version: `scan::for_each_row_locked`), so a row deleted
/// since the snapshot gets no entry, an updated one the entry of its new
/// values. Fails with `Error::DupKey` when `ix` is unique and two rows
/// share a non-NULL key, and with a lock wait timeout (waiting `lock_wait`
/// at most per row); the entries written so far stay: the caller abandons
/// the index, which reclaims them. Not fsynced: the catalog write that
/// installs the index is.
pub fn build_index(txdb: &TxnDb, t: &Table, ix: &Index, lock_wait: Duration) -> Result<()> {
    for_each_row_locked(txdb, &t.def.pk, lock_wait, &mut |txn, _, k, v| {
        fill_row(txn, t, ix, k, v)
    })?;
    Ok(())
}

/// True when index `ix` holds no entry at `snap` (no writer has put one
/// since the index was published): the precondition of filling it by
/// ingesting sorted files, which must not meet entries of writers.
pub fn index_empty(db: &Db, snap: &Snapshot, ix: &Index) -> Result<bool> {
    let it = crate::scan::index_iter(db, crate::cf::of(db, ix)?, snap, ix.id)?;
    let empty = !it.valid();
    it.status()?;
    Ok(empty)
}

/// Calls `each(key, unique_len)` with the entry of index `ix` for every row
/// of `t` at `snap`, in primary key order (the rows read bypassing the block
/// cache, only the columns the entry needs decoded). `unique_len` is the
/// length of the key's prefix up to the end of the index columns when `ix`
/// is unique and none of them is NULL (that prefix must not repeat), else 0.
/// Returns the rows read. For the sorted fill of a new index while writers
/// are held out (`sql::ddl`), which sorts the entries and ingests them.
pub fn index_entries(
    db: &Db,
    snap: &Snapshot,
    t: &Table,
    ix: &Index,
    each: &mut dyn FnMut(Vec<u8>, usize) -> Result<()>,
) -> Result<u64> {
    let def = &t.def;
    let mut want = vec![false; def.columns.len()];
    for &c in ix.columns.iter().chain(&def.pk.columns) {
        want[c] = true;
    }
    let mut rows = 0u64;
    crate::scan::scan(db, snap, &def.pk, &mut |k, v| {
        rows += 1;
        let row = rt::decode_row(def, k, v, Some(want.as_slice()))?;
        let (key, split) = rt::sk_key_split(def, ix, &row.values, row.hidden)?;
        let unique = ix.unique && ix.columns.iter().all(|&c| !row.values[c].is_null());
        each(key, if unique { split } else { 0 })
    })?;
    Ok(rows)
}

/// The duplicate-key error (1062) for a unique index entry `key` that
/// repeats an earlier entry's index columns, with the values of the row it
/// points to at `snap`.
pub fn dup_error(db: &Db, snap: &Snapshot, t: &Table, ix: &Index, key: &[u8]) -> Error {
    let text = (|| -> Result<String> {
        let pk = rt::pk_of_sk(&t.def, ix, key)?;
        let opts = ReadOptions {
            snapshot: Some(snap.clone()),
            ..Default::default()
        };
        let v = db
            .get_cf(&opts, crate::cf::of(db, &t.def.pk)?, &pk)?
            .ok_or_else(|| Error::Internal("indexed row not found".into()))?;
        let row = rt::decode_row(&t.def, &pk, &v, None)?;
        Ok(rt::key_text(ix, &row.values))
    })();
    match text {
        Ok(text) => Error::DupKey(text, ix.name.clone()),
        Err(e) => e,
    }
}

/// Writes the entry of one row (locked, at its latest version) unless a
/// writer that maintains the index already wrote it (a second Put under one
/// key would outlive the SingleDelete a later change of the row writes).
fn fill_row(txn: &mut Txn, t: &Table, ix: &Index, k: &[u8], v: &[u8]) -> Result<()> {
    let te = Error::Txn;
    // TTL tables: an expired row and the entries of expired rows hold no
    // unique value (as `table::unique_holder`); the row still gets its entry,
    // for reads with TTL filtering off.
    let now = crate::ttl::now_latest();
    let expired = crate::ttl::pk_hidden(&t.def, k, v, now);
    let row = rt::decode_row(&t.def, k, v, None)?;
    let key = rt::sk_key(&t.def, ix, &row.values, row.hidden)?;
    let cf = crate::cf::of(txn.db(), ix)?;
    if ix.unique && !expired && ix.columns.iter().all(|&c| !row.values[c].is_null()) {
        let mut prefix = keycodec::index_prefix(ix.id).to_vec();
        rt::encode_cols(&mut prefix, &t.def, &ix.columns, &row.values)?;
        // As a writer's uniqueness check (`table::unique_holder`): the
        // prefix lock makes a concurrent insert of the same value wait.
        txn.lock(cf, &prefix, LockMode::Exclusive).map_err(te)?;
        let upper = keycodec::prefix_successor(&prefix);
        let held = {
            let mut it = crate::keyrange::scan(txn, cf, &prefix, upper.as_deref(), false, true)
                .map_err(te)?;
            let mut held = None;
            while let Some((k, v)) = it.next().map_err(te)? {
                if !rt::sk_skipped(txn, &t.def, ix, (k, v), now, true)? {
                    held = Some(k.to_vec());
                    break;
                }
            }
            held
        };
        match held {
            Some(h) if h == key => return Ok(()),
            Some(_) => {
                return Err(Error::DupKey(
                    rt::key_text(ix, &row.values),
                    ix.name.clone(),
                ));
            }
            None => {}
        }
    } else if txn.get_latest(cf, &key).map_err(te)?.is_some() {
        return Ok(());
    }
    let value = rt::sk_value(&t.def, &row.values, row.stamp.unwrap_or(0));
    txn.put(cf, &key, &value);
    Ok(())
}

impl Catalog {
    /// Starts an online index build of `ix` on `t` (the current table of
    /// its name): gives `ix` a fresh id, records the id as pending (a `P`
    /// record: the entries written under it are removed at the next open
    /// if the build never finishes) and publishes the table with `ix` among
    /// the indexes writers maintain (`Table::building`). The stored
    /// definition is unchanged until `finish_index`.
    pub fn begin_index(&self, t: &Arc<Table>, mut ix: Index) -> Result<(Arc<Table>, Index)> {
        let mut next = self.lock_ddl();
        let st = self.state();
        let Some(cur) = st
            .table(&t.def.db, &t.def.name)
            .filter(|c| Arc::ptr_eq(c, t))
        else {
            return Err(Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)));
        };
        if ix.columns.iter().any(|&c| c >= cur.def.columns.len()) {
            return Err(Error::Internal(format!(
                "index {} names a column {} does not have",
                ix.name, cur.def.name
            )));
        }
        ix.id = *next;
        // Its column family exists (durably, in the manifest) before any entry.
        crate::cf::of(self.db(), &ix)?;
        let end = ix.id + 1;
        let mut b = WriteBatch::new();
        b.put(&key(b'N', &[]), &end.to_le_bytes());
        b.put(&key(b'P', &[&ix.id.to_be_bytes()]), &end.to_le_bytes());
        self.db().write(synced(), b)?;
        *next = end;
        let mut n = self.successor(cur, cur.def.clone());
        n.building.push(ix.clone());
        let n = Arc::new(n);
        let n2 = n.clone();
        self.publish(|st| {
            st.tables
                .insert((n2.def.db.clone(), n2.def.name.clone()), n2);
        });
        Ok((n, ix))
    }

    /// Commits the online build of index `id` of `db.name`: the definition
    /// with the index is stored and the pending record dropped in one
    /// synced write; from then on the planner may use it (read views older
    /// than that write may not: `since`).
    pub fn finish_index(&self, db: &str, name: &str, id: u32) -> Result<Arc<Table>> {
        self.commit_online(db, name, &[id], |d| Ok::<_, Error>(d.clone()))
    }

    /// Commits an online ALTER of `db.name` in one synced write: the
    /// indexes `ids` being built join the definition, `change` derives the
    /// rest from it (the current definition, with the keys `stage_def`
    /// published: indexes or keys dropped), the pending records go, and
    /// the statement's binary log record (if any) rides in the same batch.
    /// Index ids the new definition no longer uses are reclaimed.
    pub fn commit_online<E: From<Error>>(
        &self,
        db: &str,
        name: &str,
        ids: &[u32],
        change: impl FnOnce(&TableDef) -> std::result::Result<TableDef, E>,
    ) -> std::result::Result<Arc<Table>, E> {
        let next = self.lock_ddl();
        let st = self.state();
        let cur = st
            .table(db, name)
            .cloned()
            .ok_or_else(|| Error::NoSuchTable(format!("{db}.{name}")))?;
        let mut def = cur.def.clone();
        let mut building = cur.building.clone();
        for id in ids {
            let Some(pos) = building.iter().position(|i| i.id == *id) else {
                return Err(Error::TableChanged(format!("{db}.{name}")).into());
            };
            def.secondary.push(building.remove(pos));
        }
        let def = change(&def)?;
        def.check_limits().map_err(Error::Limit)?;
        let mut b = WriteBatch::new();
        b.put(&key(b'T', &[db.as_bytes(), name.as_bytes()]), &def.encode());
        b.put(&key(b'N', &[]), &next.to_le_bytes());
        for id in ids {
            b.delete(&key(b'P', &[&id.to_be_bytes()]));
        }
        crate::binlog::attach_ddl_record(&mut b);
        self.db().write(synced(), b).map_err(Error::from)?;
        let mut n = self.successor(&cur, def);
        n.building = building;
        let seq = self.db().latest_sequence();
        n.since.extend(ids.iter().map(|id| (*id, seq)));
        let n = Arc::new(n);
        let n2 = n.clone();
        self.publish(|st| {
            st.tables.insert((db.to_string(), name.to_string()), n2);
        });
        drop(next);
        let live: Vec<u32> = n.def.indexes().map(|i| i.id).collect();
        for ix in cur.def.indexes().filter(|i| !live.contains(&i.id)) {
            reclaim_ids(self.db(), ix.id, ix.id + 1)?;
        }
        Ok(n)
    }

    /// Publishes `change` of the current definition of `db.name` to
    /// statements (writers enforce a foreign key added there) without
    /// storing it: an online ALTER checks its new keys so, and stores the
    /// definition with `commit_online` only when they hold. A crash before
    /// leaves the stored definition.
    pub fn stage_def<E: From<Error>>(
        &self,
        db: &str,
        name: &str,
        change: impl FnOnce(&TableDef) -> std::result::Result<TableDef, E>,
    ) -> std::result::Result<Arc<Table>, E> {
        let _g = self.lock_ddl();
        let cur = self
            .state()
            .table(db, name)
            .cloned()
            .ok_or_else(|| Error::NoSuchTable(format!("{db}.{name}")))?;
        let n = Arc::new(self.successor(&cur, change(&cur.def)?));
        let n2 = n.clone();
        self.publish(|st| {
            st.tables.insert((db.to_string(), name.to_string()), n2);
        });
        Ok(n)
    }

    /// Abandons the online build of index `id` of `db.name`: writers stop
    /// maintaining it (the table is published without it), then, once
    /// `drained` has waited for the transactions that may still write its
    /// entries (those older than that catalog version, which planned with
    /// it), everything under its id is range-deleted and its pending record
    /// dropped. If they do not end in time, the entries there now go and the
    /// pending record stays, so the next open reclaims what they add later.
    pub fn abort_index(
        &self,
        db: &str,
        name: &str,
        id: u32,
        drained: &dyn Fn(u64) -> bool,
    ) -> Result<()> {
        {
            let _g = self.lock_ddl();
            if let Some(cur) = self.state().table(db, name).cloned() {
                if let Some(pos) = cur.building.iter().position(|i| i.id == id) {
                    let mut n = self.successor(&cur, cur.def.clone());
                    n.building.remove(pos);
                    let n = Arc::new(n);
                    self.publish(|st| {
                        st.tables.insert((db.to_string(), name.to_string()), n);
                    });
                }
            }
        }
        let all_out = drained(self.version());
        reclaim_ids(self.db(), id, id + 1)?;
        if all_out {
            let mut b = WriteBatch::new();
            b.delete(&key(b'P', &[&id.to_be_bytes()]));
            self.db().write(synced(), b)?;
        }
        Ok(())
    }

    /// The table replacing `cur` with definition `def` (same index ids):
    /// counters, indexes being built and `since` carried over.
    pub(crate) fn successor(&self, cur: &Table, def: TableDef) -> Table {
        let mut n = Table::new(
            def,
            cur.auto_inc.load(Ordering::SeqCst),
            cur.hidden_next.load(Ordering::SeqCst),
        );
        n.building = cur.building.clone();
        n.since = cur.since.clone();
        n.estimate = cur.estimate.clone();
        if cur.def.pk.id == n.def.pk.id {
            n.pk_high = cur.pk_high.clone();
        }
        n
    }
}
