//! Rows and index entries of one table, read and written through a
//! transaction.
//!
//! - Primary key entry: `pk.id (4 B) + key image of the PK columns` (or an
//!   8-byte big-endian hidden id) -> row value (`rowcodec`) of the other
//!   columns.
//! - Secondary entry: `ix.id + key images of the index columns + key images
//!   of the PK columns not already in the index` -> empty value.
//! - TTL tables (`crate::ttl`): a row value without a TTL column starts with
//!   the row's time (8 bytes), every secondary entry's value is the row's
//!   time, expired rows read as absent (also to duplicate checks: a new row
//!   replaces an expired one), and secondary entries are removed with Delete
//!   (a replaced expired row leaves its entries behind, hidden by their time,
//!   so an entry may be Put twice).
//!
//! Writers lock the primary key entry (exclusive row lock) before changing
//! it. Non-unique secondary entries are written blind (Put / SingleDelete,
//! no read), as MyRocks does; a unique index is checked under an exclusive
//! lock on its key prefix. Callers pass rows already coerced to the column
//! types and complete (one value per column).
use crate::catalog::Table;
use crate::keycodec;
use crate::rowcodec::{self, RowReader};
use crate::schema::{Index, TableDef};
use crate::value::Value;
use crate::{Error, Result};
use std::sync::atomic::Ordering;
use txn::{LockMode, Txn};

/// Appends the key image of `row`'s columns `cols` of `def`.
pub fn encode_cols(out: &mut Vec<u8>, def: &TableDef, cols: &[usize], row: &[Value]) -> Result<()> {
    for &c in cols {
        let col = &def.columns[c];
        keycodec::encode(out, def.key_format, &col.ty, col.nullable, &row[c])?;
    }
    Ok(())
}

/// The primary key entry's key for a full row. Hidden-PK tables keep the
/// hidden id in `hidden`.
pub fn pk_key(def: &TableDef, row: &[Value], hidden: Option<u64>) -> Result<Vec<u8>> {
    let mut k = Vec::with_capacity(16);
    k.extend_from_slice(&keycodec::index_prefix(def.pk.id));
    if def.hidden_pk {
        let h = hidden.ok_or_else(|| Error::Internal("hidden pk missing".into()))?;
        k.extend_from_slice(&h.to_be_bytes());
    } else {
        encode_cols(&mut k, def, &def.pk.columns, row)?;
    }
    // No key is a bare index prefix (`keyrange::span` relies on it).
    debug_assert!(k.len() > 4);
    Ok(k)
}

/// A secondary index entry's key for a full row.
pub fn sk_key(def: &TableDef, ix: &Index, row: &[Value], hidden: Option<u64>) -> Result<Vec<u8>> {
    sk_key_split(def, ix, row, hidden).map(|(k, _)| k)
}

/// A secondary index entry's key for a full row, and the length of its
/// prefix up to the end of the index columns (what a unique index keeps
/// unique).
pub fn sk_key_split(
    def: &TableDef,
    ix: &Index,
    row: &[Value],
    hidden: Option<u64>,
) -> Result<(Vec<u8>, usize)> {
    let mut k = Vec::with_capacity(32);
    k.extend_from_slice(&keycodec::index_prefix(ix.id));
    encode_cols(&mut k, def, &ix.columns, row)?;
    let split = k.len();
    // No key is a bare index prefix (`keyrange::span` relies on it).
    debug_assert!(split > 4);
    if def.hidden_pk {
        let h = hidden.ok_or_else(|| Error::Internal("hidden pk missing".into()))?;
        k.extend_from_slice(&h.to_be_bytes());
    } else {
        let rest: Vec<usize> = def
            .pk
            .columns
            .iter()
            .copied()
            .filter(|c| !ix.columns.contains(c))
            .collect();
        encode_cols(&mut k, def, &rest, row)?;
    }
    Ok((k, split))
}

/// The row value (non-PK columns) of a row written now.
pub fn row_value(def: &TableDef, row: &[Value]) -> Vec<u8> {
    row_value_at(def, row, crate::ttl::stamp_now())
}

/// The row value of a row whose time is `stamp` (kept only by TTL tables
/// without a TTL column).
pub fn row_value_at(def: &TableDef, row: &[Value], stamp: u64) -> Vec<u8> {
    let types: Vec<_> = def.value_cols.iter().map(|&c| &def.columns[c].ty).collect();
    let vals: Vec<&Value> = def.value_cols.iter().map(|&c| &row[c]).collect();
    // Sized for the whole row (strings and a varint or so per column, the
    // TTL stamp): growing from a small guess cost reallocations on every
    // row of a load.
    let text: usize = vals
        .iter()
        .map(|v| match v {
            Value::Bytes(b) => b.len(),
            _ => 0,
        })
        .sum();
    let mut out = Vec::with_capacity(24 + text + 11 * vals.len());
    if def.ttl.is_some_and(|t| t.col.is_none()) {
        out.extend_from_slice(&stamp.to_be_bytes());
    }
    rowcodec::encode(&mut out, &types, &vals);
    out
}

/// A secondary entry's value: empty, or in a TTL table the row's time
/// (`stamp` for one without a TTL column).
pub fn sk_value(def: &TableDef, row: &[Value], stamp: u64) -> Vec<u8> {
    match &def.ttl {
        None => Vec::new(),
        Some(t) => crate::ttl::row_time(t, row, Some(stamp))
            .to_be_bytes()
            .to_vec(),
    }
}

/// Removes a secondary entry: SingleDelete (its one Put), or Delete in a TTL
/// table (see the module comment).
fn delete_sk(txn: &mut Txn, def: &TableDef, cf: lsm::ColumnFamily, key: &[u8]) {
    if def.ttl.is_some() {
        txn.delete(cf, key);
    } else {
        txn.single_delete(cf, key);
    }
}

/// A decoded row with its hidden id (hidden-PK tables).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub values: Vec<Value>,
    pub hidden: Option<u64>,
    /// The time kept with the row (TTL tables without a TTL column).
    pub stamp: Option<u64>,
}

impl Row {
    /// A row not read from storage.
    pub fn new(values: Vec<Value>, hidden: Option<u64>) -> Row {
        Row {
            values,
            hidden,
            stamp: None,
        }
    }
}

/// Decodes a primary key entry. `want[c]` false skips decoding column `c`
/// (it is left NULL); `None` decodes all. Decoding stops after the last
/// wanted column of the key and of the value: bytes past it are not read
/// (nor checked).
pub fn decode_row(def: &TableDef, key: &[u8], value: &[u8], want: Option<&[bool]>) -> Result<Row> {
    let wanted = |c: usize| want.is_none_or(|w| w.get(c).copied().unwrap_or(false));
    // Not `vec![Value::Null; n]`: that clones the NULL n - 1 times.
    let mut values = Vec::with_capacity(def.columns.len());
    values.resize_with(def.columns.len(), || Value::Null);
    let mut hidden = None;
    let body = key
        .get(4..)
        .ok_or_else(|| Error::Corruption("short primary key".into()))?;
    if def.hidden_pk {
        let b: [u8; 8] = body
            .try_into()
            .map_err(|_| Error::Corruption("bad hidden primary key".into()))?;
        hidden = Some(u64::from_be_bytes(b));
    } else {
        // Key columns up to the last one wanted (and decodable).
        let n = def
            .pk
            .columns
            .iter()
            .rposition(|&c| wanted(c) && def.pk_in_key(c))
            .map_or(0, |i| i + 1);
        let mut s = body;
        for &c in &def.pk.columns[..n] {
            let col = &def.columns[c];
            if wanted(c) && def.pk_in_key(c) {
                values[c] = keycodec::decode(&mut s, def.key_format, &col.ty, col.nullable)?;
            } else {
                keycodec::skip(&mut s, def.key_format, &col.ty, col.nullable)?;
            }
        }
    }
    let mut stamp = None;
    let mut value = value;
    if def.ttl.is_some_and(|t| t.col.is_none()) {
        let (t, rest) = crate::ttl::split_value(value)?;
        stamp = Some(t);
        value = rest;
    }
    // Value columns up to the last one wanted.
    let n = match want {
        None => def.value_cols.len(),
        Some(_) => def
            .value_cols
            .iter()
            .rposition(|&c| wanted(c))
            .map_or(0, |j| j + 1),
    };
    if n == 0 {
        return Ok(Row {
            values,
            hidden,
            stamp,
        });
    }
    let mut r = RowReader::new(value)?;
    for (j, &c) in def.value_cols[..n].iter().enumerate() {
        let col = &def.columns[c];
        let w = wanted(c);
        match r.next(&col.ty, w)? {
            Some(v) => values[c] = v,
            // Stored before the column was added (instant ADD COLUMN).
            None if w => values[c] = def.missing_value(j),
            None => {}
        }
    }
    Ok(Row {
        values,
        hidden,
        stamp,
    })
}

/// Decodes the columns a secondary entry's key holds (index columns and
/// primary key columns); others are NULL, and so are the columns whose key
/// image holds weights (`keycodec::is_lossy`: an index never covers them).
/// Returns the row and the hidden id.
pub fn decode_sk(def: &TableDef, ix: &Index, key: &[u8]) -> Result<Row> {
    let mut values = vec![Value::Null; def.columns.len()];
    let mut s = key
        .get(4..)
        .ok_or_else(|| Error::Corruption("short index key".into()))?;
    let mut one = |s: &mut &[u8], c: usize| -> Result<()> {
        let col = &def.columns[c];
        if keycodec::is_lossy(&col.ty, def.key_format) {
            keycodec::skip(s, def.key_format, &col.ty, col.nullable)
        } else {
            values[c] = keycodec::decode(s, def.key_format, &col.ty, col.nullable)?;
            Ok(())
        }
    };
    for &c in &ix.columns {
        one(&mut s, c)?;
    }
    let mut hidden = None;
    if def.hidden_pk {
        let b: [u8; 8] = s
            .try_into()
            .map_err(|_| Error::Corruption("bad hidden key in index".into()))?;
        hidden = Some(u64::from_be_bytes(b));
    } else {
        for &c in &def.pk.columns {
            if !ix.columns.contains(&c) {
                one(&mut s, c)?;
            }
        }
    }
    Ok(Row::new(values, hidden))
}

/// The primary key for the row a secondary entry points to: the key images
/// of the primary key columns, taken from the entry as they are (so that
/// columns keyed by weights need no decoding).
pub fn pk_of_sk(def: &TableDef, ix: &Index, key: &[u8]) -> Result<Vec<u8>> {
    let mut s = key
        .get(4..)
        .ok_or_else(|| Error::Corruption("short index key".into()))?;
    let mut out = Vec::with_capacity(key.len());
    out.extend_from_slice(&keycodec::index_prefix(def.pk.id));
    if def.hidden_pk {
        for &c in &ix.columns {
            let col = &def.columns[c];
            keycodec::skip(&mut s, def.key_format, &col.ty, col.nullable)?;
        }
        if s.len() != 8 {
            return Err(Error::Corruption("bad hidden key in index".into()));
        }
        out.extend_from_slice(s);
        return Ok(out);
    }
    // Spans of the index columns, then of the primary key columns appended.
    let mut spans: Vec<(usize, &[u8])> = Vec::with_capacity(ix.columns.len() + 2);
    let cols = ix
        .columns
        .iter()
        .chain(def.pk.columns.iter().filter(|c| !ix.columns.contains(c)));
    for &c in cols {
        let col = &def.columns[c];
        let before = s;
        keycodec::skip(&mut s, def.key_format, &col.ty, col.nullable)?;
        spans.push((c, &before[..before.len() - s.len()]));
    }
    if !s.is_empty() {
        return Err(Error::Corruption("trailing bytes in index key".into()));
    }
    for &c in &def.pk.columns {
        match spans.iter().find(|(x, _)| *x == c) {
            Some((_, b)) => out.extend_from_slice(b),
            None => {
                return Err(Error::Corruption(
                    "primary key column missing from index".into(),
                ))
            }
        }
    }
    Ok(out)
}

fn txn_err(e: txn::Error) -> Error {
    Error::Txn(e)
}

/// Refuses a write to a table an ALTER TABLE is replacing (or has
/// replaced) by a transaction the ALTER does not wait for (its tag, the
/// catalog version it began under, is not older than the freeze): the
/// caller waits for the ALTER and runs the statement again on the new table.
fn writable(txn: &Txn, t: &Table) -> Result<()> {
    if txn.tag() >= t.frozen.load(Ordering::SeqCst) {
        return Err(Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)));
    }
    Ok(())
}

/// Reads the row stored under `key` (a primary key entry's key); with
/// `lock`, takes the row lock and reads the latest committed version.
pub fn get(
    txn: &mut Txn,
    def: &TableDef,
    key: &[u8],
    lock: Option<LockMode>,
    want: Option<&[bool]>,
) -> Result<Option<Row>> {
    get_as(txn, def, key, lock, want, true)
}

/// As [`get`], but an expired row of a TTL table that is still stored is
/// read too (foreign key actions: a child row is there until removed).
pub fn get_stored(
    txn: &mut Txn,
    def: &TableDef,
    key: &[u8],
    lock: Option<LockMode>,
    want: Option<&[bool]>,
) -> Result<Option<Row>> {
    get_as(txn, def, key, lock, want, false)
}

fn get_as(
    txn: &mut Txn,
    def: &TableDef,
    key: &[u8],
    lock: Option<LockMode>,
    want: Option<&[bool]>,
    hide: bool,
) -> Result<Option<Row>> {
    let cf = crate::cf::of(txn.db(), &def.pk)?;
    let v = match lock {
        None => txn.get(cf, key),
        Some(m) => txn.get_locked(cf, key, m),
    }
    .map_err(txn_err)?;
    let Some(v) = v else {
        return Ok(None);
    };
    if hide && def.ttl.is_some() {
        let now = if lock.is_some() {
            crate::ttl::now_latest()
        } else {
            crate::ttl::now_for(txn)
        };
        if crate::ttl::pk_hidden(def, key, &v, now) {
            return Ok(None);
        }
    }
    Ok(Some(decode_row(def, key, &v, want)?))
}

/// TTL tables: true when reads at `now` pass over secondary entry `k` -> `v`
/// of `ix`: an expired entry is hidden with read filtering on and, with it
/// off, passed over unless it is the entry of the row stored under its
/// primary key ([`sk_current`]). Only an expired entry can have outlived its
/// row: compactions remove a row and its entries at different times (and a
/// new row may then take the key), and an entry's time is its row's, so it
/// had expired when its row went. Read at `txn`'s read view, or the latest
/// committed version with `latest`.
pub fn sk_skipped(
    txn: &mut Txn,
    def: &TableDef,
    ix: &Index,
    (k, v): (&[u8], &[u8]),
    now: u64,
    latest: bool,
) -> Result<bool> {
    if !crate::ttl::sk_expired(def, v, now) {
        return Ok(false);
    }
    if crate::ttl::filtering() {
        return Ok(true);
    }
    Ok(!sk_current(txn, def, ix, k, latest)?)
}

/// True when secondary entry `k` of `ix` is the entry of the row stored
/// under the primary key it holds (expired or not), read at `txn`'s read
/// view or (`latest`) its latest committed version.
pub fn sk_current(
    txn: &mut Txn,
    def: &TableDef,
    ix: &Index,
    k: &[u8],
    latest: bool,
) -> Result<bool> {
    let pk = pk_of_sk(def, ix, k)?;
    let cf = crate::cf::of(txn.db(), &def.pk)?;
    let v = if latest {
        txn.get_latest(cf, &pk)
    } else {
        txn.get(cf, &pk)
    }
    .map_err(txn_err)?;
    let Some(v) = v else {
        return Ok(false);
    };
    let row = decode_row(def, &pk, &v, None)?;
    Ok(sk_key(def, ix, &row.values, row.hidden)? == k)
}

/// The text of a duplicate key for error 1062 (values joined by '-').
fn dup_text(_def: &TableDef, ix: &Index, row: &[Value]) -> String {
    key_text(ix, row)
}

/// The text of `row`'s key in index `ix` (values joined by '-').
pub fn key_text(ix: &Index, row: &[Value]) -> String {
    ix.columns
        .iter()
        .map(|&c| String::from_utf8_lossy(&row[c].text()).into_owned())
        .collect::<Vec<_>>()
        .join("-")
}

/// Finds a row that conflicts with `row` on the primary key or a unique
/// index, locking what it checks. Returns the conflicting row and the
/// index's name.
pub fn find_conflict(txn: &mut Txn, t: &Table, row: &[Value]) -> Result<Option<(Row, String)>> {
    let def = &t.def;
    if !def.hidden_pk {
        let key = pk_key(def, row, None)?;
        if let Some(r) = get(txn, def, &key, Some(LockMode::Exclusive), None)? {
            return Ok(Some((r, def.pk.name.clone())));
        }
    }
    for ix in t.write_indexes().filter(|i| i.unique) {
        if let Some(pk) = unique_holder(txn, def, ix, row)? {
            if let Some(r) = get(txn, def, &pk, Some(LockMode::Exclusive), None)? {
                return Ok(Some((r, ix.name.clone())));
            }
        }
    }
    Ok(None)
}

/// For a unique index: locks the index prefix of `row` and returns the
/// primary key of a row already holding it (rows with a NULL in the
/// index columns never conflict).
fn unique_holder(
    txn: &mut Txn,
    def: &TableDef,
    ix: &Index,
    row: &[Value],
) -> Result<Option<Vec<u8>>> {
    if ix.columns.iter().any(|&c| row[c].is_null()) {
        return Ok(None);
    }
    let mut prefix = keycodec::index_prefix(ix.id).to_vec();
    encode_cols(&mut prefix, def, &ix.columns, row)?;
    let cf = crate::cf::of(txn.db(), ix)?;
    txn.lock(cf, &prefix, LockMode::Exclusive)
        .map_err(txn_err)?;
    let upper = keycodec::prefix_successor(&prefix);
    let now = crate::ttl::now_latest();
    let mut it =
        crate::keyrange::scan(txn, cf, &prefix, upper.as_deref(), false, true).map_err(txn_err)?;
    // Entries of expired rows (TTL tables) hold nothing.
    while let Some((k, v)) = it.next().map_err(txn_err)? {
        if !sk_skipped(txn, def, ix, (k, v), now, true)? {
            return Ok(Some(pk_of_sk(def, ix, k)?));
        }
    }
    Ok(None)
}

/// An upper bound of a table's primary keys, stored or being written by
/// any transaction (shared by the table's successive `Table`s while its
/// primary index id stays): an insert whose key is above it cannot be a
/// duplicate, so it skips the read (loads in key order, AUTO_INCREMENT).
/// Unknown until the first insert reads the index's last key; every insert
/// raises it under its row lock, so an uncommitted row is always below it;
/// rollbacks and deletes leave it high (still a bound).
#[derive(Debug, Default)]
pub struct PkHigh(std::sync::Mutex<Option<Vec<u8>>>);

impl PkHigh {
    /// True when `key` (its row lock held) is above every primary key of
    /// index `pk` (it becomes the bound).
    fn claim(&self, db: &lsm::Db, pk: &Index, key: &[u8]) -> Result<bool> {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let high = match &mut *g {
            Some(h) => h,
            None => g.insert(last_key(db, pk)?.unwrap_or_default()),
        };
        if key > high.as_slice() {
            high.clear();
            high.extend_from_slice(key);
            return Ok(true);
        }
        Ok(false)
    }

    /// Forgets the bound (keys were added another way: ingestion).
    pub fn forget(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The last key of index `ix`, at the latest state.
fn last_key(db: &lsm::Db, ix: &Index) -> Result<Option<Vec<u8>>> {
    let lo = keycodec::index_prefix(ix.id).to_vec();
    let hi = keycodec::index_prefix(ix.id + 1).to_vec();
    let mut it = crate::keyrange::KeyIter::new(
        db,
        crate::cf::of(db, ix)?,
        lsm::ReadOptions::default(),
        &lo,
        Some(&hi),
    )?;
    it.seek_to_last();
    let k = it.valid().then(|| it.key().to_vec());
    it.status()?;
    Ok(k)
}

/// Inserts a new row; fails with `DupKey` on a primary or unique conflict.
/// Hidden-PK tables get their hidden id here. Returns the row's key.
pub fn insert(txn: &mut Txn, t: &Table, row: &[Value]) -> Result<Vec<u8>> {
    Ok(insert_replacing(txn, t, row)?.0)
}

/// [`insert`], also returning the expired row (TTL tables) the new row
/// replaced under its primary key, if any: gone for reads, it is deleted.
pub fn insert_replacing(txn: &mut Txn, t: &Table, row: &[Value]) -> Result<(Vec<u8>, Option<Row>)> {
    writable(txn, t)?;
    let def = &t.def;
    let hidden = def
        .hidden_pk
        .then(|| t.hidden_next.fetch_add(1, Ordering::SeqCst));
    let key = pk_key(def, row, hidden)?;
    let pcf = crate::cf::of(txn.db(), &def.pk)?;
    let mut replaced = None;
    if hidden.is_none() {
        txn.lock(pcf, &key, LockMode::Exclusive).map_err(txn_err)?;
        let old = if t.pk_high.claim(txn.db(), &def.pk, &key)? {
            None
        } else {
            txn.get_latest(pcf, &key).map_err(txn_err)?
        };
        if let Some(v) = old {
            if !crate::ttl::pk_hidden(def, &key, &v, crate::ttl::now_latest()) {
                return Err(Error::DupKey(
                    dup_text(def, &def.pk, row),
                    def.pk.name.clone(),
                ));
            }
            replaced = Some(decode_row(def, &key, &v, None)?);
        }
    } else {
        txn.lock(pcf, &key, LockMode::Exclusive).map_err(txn_err)?;
    }
    // Every check before the first write: a caller that goes on after a
    // `DupKey` (INSERT IGNORE) must find the table as it was.
    for ix in t.write_indexes().filter(|i| i.unique) {
        if unique_holder(txn, def, ix, row)?.is_some() {
            return Err(Error::DupKey(dup_text(def, ix, row), ix.name.clone()));
        }
    }
    // The new row replaces an expired one (TTL tables): its entries go with
    // it, so that none is left pointing at the new row.
    if let Some(gone) = &replaced {
        for ix in t.write_indexes() {
            let cf = crate::cf::of(txn.db(), ix)?;
            delete_sk(txn, def, cf, &sk_key(def, ix, &gone.values, None)?);
        }
    }
    let stamp = crate::ttl::stamp_now();
    txn.put(pcf, &key, &row_value_at(def, row, stamp));
    let skv = sk_value(def, row, stamp);
    for ix in t.write_indexes() {
        let cf = crate::cf::of(txn.db(), ix)?;
        txn.put(cf, &sk_key(def, ix, row, hidden)?, &skv);
    }
    crate::shadow::mirror_put(txn, t, &key, row, hidden)?;
    t.estimate.add(1);
    Ok((key, replaced))
}

/// Replaces `old` (as read under an exclusive lock) with `new`. A new
/// primary key that an expired row holds (TTL tables) replaces that row,
/// which is returned (see [`insert_replacing`]).
pub fn update(txn: &mut Txn, t: &Table, old: &Row, new: &[Value]) -> Result<Option<Row>> {
    writable(txn, t)?;
    let def = &t.def;
    let old_key = pk_key(def, &old.values, old.hidden)?;
    let new_key = pk_key(def, new, old.hidden)?;
    if old_key != new_key {
        delete(txn, t, old)?;
        if let Some(h) = old.hidden {
            return Err(Error::Internal(format!("hidden key {h} changed")));
        }
        return Ok(insert_replacing(txn, t, new)?.1);
    }
    let pcf = crate::cf::of(txn.db(), &def.pk)?;
    txn.lock(pcf, &old_key, LockMode::Exclusive)
        .map_err(txn_err)?;
    let stamp = crate::ttl::stamp_now();
    let skv = sk_value(def, new, stamp);
    // A new row time (TTL tables) rewrites every secondary entry's value.
    let retime = def.ttl.is_some() && sk_value(def, &old.values, old.stamp.unwrap_or(0)) != skv;
    for ix in t.write_indexes() {
        let changed = ix.columns.iter().any(|&c| !same(&old.values[c], &new[c]));
        if !changed && !retime {
            continue;
        }
        if ix.unique {
            if let Some(holder) = unique_holder(txn, def, ix, new)? {
                if holder != old_key {
                    return Err(Error::DupKey(dup_text(def, ix, new), ix.name.clone()));
                }
            }
        }
        let cf = crate::cf::of(txn.db(), ix)?;
        delete_sk(txn, def, cf, &sk_key(def, ix, &old.values, old.hidden)?);
        txn.put(cf, &sk_key(def, ix, new, old.hidden)?, &skv);
    }
    txn.put(pcf, &new_key, &row_value_at(def, new, stamp));
    crate::shadow::mirror_put(txn, t, &new_key, new, old.hidden)?;
    Ok(None)
}

/// Bitwise-identical values (key images would match).
fn same(a: &Value, b: &Value) -> bool {
    a == b
}

/// Deletes a row (as read under an exclusive lock).
pub fn delete(txn: &mut Txn, t: &Table, row: &Row) -> Result<()> {
    writable(txn, t)?;
    let def = &t.def;
    let key = pk_key(def, &row.values, row.hidden)?;
    let pcf = crate::cf::of(txn.db(), &def.pk)?;
    txn.lock(pcf, &key, LockMode::Exclusive).map_err(txn_err)?;
    txn.delete(pcf, &key);
    // Each secondary key is Put once per row version and deleted once, so
    // SingleDelete applies (it and its Put vanish together in compaction).
    for ix in t.write_indexes() {
        let cf = crate::cf::of(txn.db(), ix)?;
        delete_sk(txn, def, cf, &sk_key(def, ix, &row.values, row.hidden)?);
    }
    crate::shadow::mirror_delete(txn, t, &key)?;
    t.estimate.add(-1);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `sample`: id INT (the key), k INT, c CHAR(120) (the value).
    fn entry(def: &TableDef, row: &[Value]) -> (Vec<u8>, Vec<u8>) {
        (pk_key(def, row, None).unwrap(), row_value(def, row))
    }

    #[test]
    fn decoding_stops_after_the_last_wanted_column() {
        let def = crate::schema::tests::sample();
        let row = [Value::Int(7), Value::Int(-3), Value::Bytes(b"abc".to_vec())];
        let (k, v) = entry(&def, &row);
        // Everything, and each column alone.
        assert_eq!(decode_row(&def, &k, &v, None).unwrap().values, row);
        for c in 0..3 {
            let mut want = [false; 3];
            want[c] = true;
            let got = decode_row(&def, &k, &v, Some(&want[..])).unwrap().values;
            for (i, g) in got.iter().enumerate() {
                assert_eq!(
                    *g,
                    if i == c { row[i].clone() } else { Value::Null },
                    "want {c}"
                );
            }
        }
        // Only k: the bytes of c are not read (a value cut inside c still
        // decodes k), nor is the key (a bare index prefix).
        let want = [false, true, false];
        for cut in v.len() - 3..v.len() {
            let got = decode_row(&def, &k[..4], &v[..cut], Some(&want[..])).unwrap();
            assert_eq!(got.values, [Value::Null, Value::Int(-3), Value::Null]);
        }
        // Nothing of the value: not even its header is read.
        let got = decode_row(&def, &k, &[], Some(&[true, false, false][..])).unwrap();
        assert_eq!(got.values, [Value::Int(7), Value::Null, Value::Null]);
        // A wanted column still fails on bad bytes.
        assert!(decode_row(&def, &k, &v[..v.len() - 1], Some(&[false, false, true][..])).is_err());
        assert!(decode_row(&def, &k[..5], &v, Some(&[true, false, false][..])).is_err());
    }
}
