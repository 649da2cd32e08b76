//! Online table rebuilds (ALTER TABLE that rewrites rows while writers go
//! on): the new definition, under fresh index ids (`Catalog::reserve_ids`,
//! pending `P` record), is published as the table's *shadow*
//! (`Table::shadow`); every write to the old table is also converted to the
//! new definition and applied to the shadow in the writer's transaction
//! (`mirror_put`, `mirror_delete`), while `copy_online` copies the rows the
//! writers have not touched, each at its latest version under a shared row
//! lock, in batches. The caller then holds writers out briefly, checks what
//! the writers added to the shadow's unique indexes (`Shadow::verify`) and
//! commits the new definition (`Catalog::commit_defs`, which range-deletes
//! the old ids), or abandons the shadow (`Catalog::abort_rebuild`, then
//! `release_ids`).
//!
//! Only rebuilds that keep the primary key's key image (same columns, same
//! types) run online: an old row and its shadow row then have the same key
//! after the index id (`shadow_key`), so the old row's lock covers both.
use crate::catalog::{Catalog, Table};
use crate::keycodec;
use crate::scan::for_each_row_locked;
use crate::schema::TableDef;
use crate::table::{self as rt, Row};
use crate::value::Value;
use crate::{Error, Result};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use txn::{Txn, TxnDb};

/// Converts an old row (and its number, from 1, for error messages) into
/// the shadow's columns. A conversion that fails returns `Err(())` and
/// keeps its own error for the caller (the ALTER then fails with it).
pub type Convert = dyn Fn(&Row, u64) -> std::result::Result<Vec<Value>, ()> + Send + Sync;

/// The table a rebuild is filling: its definition (ids from `reserve_ids`)
/// and the conversion from the old rows.
pub struct Shadow {
    pub def: TableDef,
    convert: Box<Convert>,
    /// Unique-index prefixes (index id + key images) writers put into the
    /// shadow: checked for duplicates before the shadow is committed.
    touched: Mutex<HashSet<Vec<u8>>>,
}

impl std::fmt::Debug for Shadow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shadow").field("def", &self.def).finish()
    }
}

impl Shadow {
    pub fn new(def: TableDef, convert: Box<Convert>) -> Shadow {
        Shadow {
            def,
            convert,
            touched: Mutex::new(HashSet::new()),
        }
    }

    /// The shadow's key of the old row stored under `old_key`.
    fn key_of(&self, old_key: &[u8]) -> Vec<u8> {
        let mut k = keycodec::index_prefix(self.def.pk.id).to_vec();
        k.extend_from_slice(old_key.get(4..).unwrap_or_default());
        k
    }

    /// Checks, with writers held out, that no unique index of the shadow
    /// holds two entries of a prefix a writer put (the copy checked its
    /// own rows): `Error::DupKey` for the first found.
    pub fn verify(&self, db: &lsm::Db) -> Result<()> {
        let touched: Vec<Vec<u8>> = self
            .touched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        for prefix in touched {
            let upper = keycodec::prefix_successor(&prefix);
            let id = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
            let Some(ix) = self.def.secondary.iter().find(|i| i.id == id) else {
                return Err(Error::Internal("unique entry of no index".into()));
            };
            let mut it = crate::keyrange::KeyIter::new(
                db,
                crate::cf::of(db, ix)?,
                lsm::ReadOptions::default(),
                &prefix,
                upper.as_deref(),
            )?;
            it.seek_to_first();
            let first = it.valid().then(|| it.key().to_vec());
            it.next();
            let second = it.valid();
            it.status()?;
            if let (Some(k), true) = (first, second) {
                return Err(self.dup_error(db, &k));
            }
        }
        Ok(())
    }

    /// The duplicate key error for the unique entry `k` of the shadow.
    fn dup_error(&self, db: &lsm::Db, k: &[u8]) -> Error {
        let id = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
        let Some(ix) = self.def.secondary.iter().find(|i| i.id == id) else {
            return Error::Internal("unique entry of no index".into());
        };
        // The row's values (the key holds weights for some columns).
        let row = rt::pk_of_sk(&self.def, ix, k).and_then(|pk| {
            let ro = lsm::ReadOptions::default();
            let v = db.get_cf(&ro, crate::cf::of(db, &self.def.pk)?, &pk)?;
            match v {
                Some(v) => rt::decode_row(&self.def, &pk, &v, None),
                None => rt::decode_sk(&self.def, ix, k),
            }
        });
        match row {
            Ok(r) => Error::DupKey(rt::key_text(ix, &r.values), ix.name.clone()),
            Err(e) => e,
        }
    }

    /// Writes `new` (the shadow's values of the row) under `key`, replacing
    /// what the shadow holds there (its secondary entries that change go).
    fn put(&self, txn: &mut Txn, key: &[u8], new: &[Value], hidden: Option<u64>) -> Result<()> {
        let def = &self.def;
        let pcf = crate::cf::of(txn.db(), &def.pk)?;
        let cur = match txn.get_latest(pcf, key).map_err(Error::Txn)? {
            Some(v) => Some(rt::decode_row(def, key, &v, None)?),
            None => None,
        };
        for ix in &def.secondary {
            let nk = rt::sk_key(def, ix, new, hidden)?;
            let cf = crate::cf::of(txn.db(), ix)?;
            if let Some(c) = &cur {
                let ok = rt::sk_key(def, ix, &c.values, hidden)?;
                if ok == nk {
                    continue;
                }
                txn.single_delete(cf, &ok);
            }
            txn.put(cf, &nk, &[]);
            if ix.unique && ix.columns.iter().all(|&c| !new[c].is_null()) {
                let mut prefix = keycodec::index_prefix(ix.id).to_vec();
                rt::encode_cols(&mut prefix, def, &ix.columns, new)?;
                self.touched
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(prefix);
            }
        }
        txn.put(pcf, key, &rt::row_value(def, new));
        Ok(())
    }
}

/// A writer stored `row` under `key` in `t`: the shadow (if any) gets its
/// conversion. A row that does not convert is left out: the conversion
/// kept its error, and the rebuild fails with it.
pub(crate) fn mirror_put(
    txn: &mut Txn,
    t: &Table,
    key: &[u8],
    row: &[Value],
    hidden: Option<u64>,
) -> Result<()> {
    let Some(sh) = &t.shadow else {
        return Ok(());
    };
    let r = Row::new(row.to_vec(), hidden);
    match (sh.convert)(&r, 1) {
        Ok(new) => sh.put(txn, &sh.key_of(key), &new, hidden),
        Err(()) => Ok(()),
    }
}

/// A writer deleted the row under `key` of `t`: so does the shadow.
pub(crate) fn mirror_delete(txn: &mut Txn, t: &Table, key: &[u8]) -> Result<()> {
    let Some(sh) = &t.shadow else {
        return Ok(());
    };
    let skey = sh.key_of(key);
    let pcf = crate::cf::of(txn.db(), &sh.def.pk)?;
    let Some(v) = txn.get_latest(pcf, &skey).map_err(Error::Txn)? else {
        return Ok(());
    };
    let cur = rt::decode_row(&sh.def, &skey, &v, None)?;
    for ix in &sh.def.secondary {
        let cf = crate::cf::of(txn.db(), ix)?;
        txn.single_delete(cf, &rt::sk_key(&sh.def, ix, &cur.values, cur.hidden)?);
    }
    txn.delete(pcf, &skey);
    Ok(())
}

/// Copies every row of `t` (published with its shadow, older writers
/// drained) the writers have not already put into the shadow: the rows are
/// listed from a snapshot and each is copied as it is when its batch runs.
/// Returns the rows seen. Fails with `Error::DupKey` when two rows share a
/// unique key of the shadow, with a lock wait timeout, or with
/// `Error::Internal` when a row does not convert (the conversion kept the
/// real error).
pub fn copy_online(txdb: &TxnDb, t: &Table, lock_wait: Duration) -> Result<u64> {
    let Some(sh) = &t.shadow else {
        return Err(Error::Internal("no rebuild in progress".into()));
    };
    for_each_row_locked(txdb, &t.def.pk, lock_wait, &mut |txn, n, k, v| {
        copy_row(txn, t, sh, n, k, v)
    })
}

/// Copies one row (locked, at its latest version, the `n`th found) into
/// the shadow unless a writer already put it there.
fn copy_row(txn: &mut Txn, t: &Table, sh: &Shadow, n: u64, k: &[u8], v: &[u8]) -> Result<()> {
    let te = Error::Txn;
    let def = &sh.def;
    let skey = sh.key_of(k);
    let pcf = crate::cf::of(txn.db(), &def.pk)?;
    if txn.get_latest(pcf, &skey).map_err(te)?.is_some() {
        return Ok(());
    }
    let row = rt::decode_row(&t.def, k, v, None)?;
    let new =
        (sh.convert)(&row, n).map_err(|()| Error::Internal("row conversion failed".into()))?;
    for ix in def.secondary.iter().filter(|i| i.unique) {
        if ix.columns.iter().any(|&c| new[c].is_null()) {
            continue;
        }
        let mut prefix = keycodec::index_prefix(ix.id).to_vec();
        rt::encode_cols(&mut prefix, def, &ix.columns, &new)?;
        let upper = keycodec::prefix_successor(&prefix);
        let cf = crate::cf::of(txn.db(), ix)?;
        let mut it =
            crate::keyrange::scan(txn, cf, &prefix, upper.as_deref(), false, true).map_err(te)?;
        if it.next().map_err(te)?.is_some() {
            return Err(Error::DupKey(rt::key_text(ix, &new), ix.name.clone()));
        }
    }
    sh.put(txn, &skey, &new, row.hidden)
}

impl Catalog {
    /// Starts an online rebuild of `t` (the current table of its name, no
    /// index build under way) into `def` (ids from `reserve_ids`):
    /// publishes `t` with the shadow, which writers maintain from then on.
    pub fn begin_rebuild(
        &self,
        t: &Arc<Table>,
        def: TableDef,
        convert: Box<Convert>,
    ) -> Result<Arc<Table>> {
        let _g = self.lock_ddl();
        let st = self.state();
        let current = st
            .table(&t.def.db, &t.def.name)
            .is_some_and(|c| Arc::ptr_eq(c, t));
        if !current || !t.building.is_empty() || t.shadow.is_some() {
            return Err(Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)));
        }
        let mut n = self.successor(t, t.def.clone());
        n.shadow = Some(Arc::new(Shadow::new(def, convert)));
        let n = Arc::new(n);
        let n2 = n.clone();
        self.publish(|st| {
            st.tables
                .insert((n2.def.db.clone(), n2.def.name.clone()), n2);
        });
        Ok(n)
    }

    /// Abandons the online rebuild of `t` (as `begin_rebuild` returned
    /// it): the table is published without its shadow if it is still
    /// current (returns whether it was). The caller waits for older
    /// writers, then releases the ids.
    pub fn abort_rebuild(&self, t: &Arc<Table>) -> bool {
        let _g = self.lock_ddl();
        let st = self.state();
        let current = st
            .table(&t.def.db, &t.def.name)
            .is_some_and(|c| Arc::ptr_eq(c, t));
        if current {
            let n = Arc::new(self.successor(t, t.def.clone()));
            self.publish(|st| {
                st.tables.insert((n.def.db.clone(), n.def.name.clone()), n);
            });
        }
        current
    }
}
