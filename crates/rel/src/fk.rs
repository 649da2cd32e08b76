//! Foreign keys, enforced as InnoDB enforces them: row writes go through a
//! [`Writer`], which (with foreign_key_checks on) checks a child row's
//! parent, and applies RESTRICT / NO ACTION, CASCADE or SET NULL to the
//! children of a deleted or re-keyed parent row, nesting at most
//! [`MAX_CASCADE_DEPTH`] cascades.
//!
//! Locks. A parent value is named by the key prefix of the parent index
//! the constraint uses (the first index led by the referenced columns):
//! a child write takes a shared lock on it before looking the parent up;
//! a parent delete or key update takes it exclusively before looking for
//! children. So a child can never commit pointing at a parent that a
//! concurrent transaction deletes, and neither side reads past the other.
//! Lookups read the latest committed data plus the transaction's own
//! writes, never the snapshot (InnoDB's "current read").
//!
//! TTL tables: an expired child still stored is a child (RESTRICT keeps its
//! parent, ON DELETE CASCADE removes it), but one that reads hide is never
//! rewritten: ON UPDATE CASCADE and SET NULL delete it (see [`gone`]), and
//! its removal, as a compaction's, does nothing to its own children. A row
//! that takes an expired row's primary key (INSERT, or UPDATE of the key)
//! replaces it as a delete would.
//!
//! Matching is MATCH SIMPLE: a child row with a NULL in the key references
//! nothing. A parent row's deletion is refused while children reference
//! its values, even if another parent row has the same values (InnoDB's
//! behaviour for non-unique parent keys).
use crate::catalog::{CatalogState, Table};
use crate::keycodec;
use crate::schema::{FkAction, Index, TableDef};
use crate::table::{self as rt, Row};
use crate::value::Value;
use crate::{Error, Result};
use std::sync::Arc;
use txn::{LockMode, Txn};

/// Most nested cascades from one row change (InnoDB's limit).
pub const MAX_CASCADE_DEPTH: u32 = 15;

/// Writes rows with the foreign keys enforced; `st: None` is
/// foreign_key_checks off (plain writes, no cascades).
#[derive(Clone, Copy)]
pub struct Writer<'a> {
    pub st: Option<&'a CatalogState>,
    /// unique_checks is off (the binary log's rows events say so).
    pub relaxed_unique: bool,
}

impl<'a> Writer<'a> {
    /// A writer for `st`, or one that does not check when `checks` is off.
    pub fn new(st: &'a CatalogState, checks: bool) -> Writer<'a> {
        Writer {
            st: checks.then_some(st),
            relaxed_unique: false,
        }
    }

    /// The same writer, its rows logged with RELAXED_UNIQUE_CHECKS_F when
    /// `unique_checks` is off (Strata still checks them).
    pub fn unique_checks(self, on: bool) -> Writer<'a> {
        Writer {
            relaxed_unique: !on,
            ..self
        }
    }

    /// The flags of the binary log's rows events for this writer's rows.
    fn log_flags(&self) -> u16 {
        use binlog::record::rows_flag;
        let mut f = 0;
        if self.st.is_none() {
            f |= rows_flag::NO_FOREIGN_KEY_CHECKS;
        }
        if self.relaxed_unique {
            f |= rows_flag::RELAXED_UNIQUE_CHECKS;
        }
        f
    }

    /// Inserts a new row (see [`rt::insert`]), then checks its parents.
    /// A new row that replaces an expired one (TTL tables: expired is
    /// absent, as in MyRocks) deletes it: the children of the values it
    /// held and the new row does not get its ON DELETE actions.
    pub fn insert(&self, txn: &mut Txn, t: &Table, row: &[Value]) -> Result<Vec<u8>> {
        let (key, replaced) = rt::insert_replacing(txn, t, row)?;
        crate::binlog::log_insert(txn, t, self.log_flags(), row)?;
        if let Some(st) = self.st {
            if let Some(old) = replaced {
                let pending = referencing_rows(txn, st, &t.def, &old, Some(row), true)?;
                cascade(txn, st, pending, None, 0)?;
            }
            check_parents(txn, st, &t.def, row, None)?;
        }
        Ok(key)
    }

    /// Replaces `old` with `new` (see [`rt::update`]).
    pub fn update(&self, txn: &mut Txn, t: &Table, old: &Row, new: &[Value]) -> Result<()> {
        match self.st {
            None => {
                rt::update(txn, t, old, new)?;
            }
            Some(st) => update(txn, st, t, old, new, 0)?,
        }
        crate::binlog::log_update(txn, t, self.log_flags(), &old.values, new)
    }

    /// Deletes a row (see [`rt::delete`]).
    pub fn delete(&self, txn: &mut Txn, t: &Table, row: &Row) -> Result<()> {
        match self.st {
            None => rt::delete(txn, t, row)?,
            Some(st) => delete(txn, st, t, row, 0)?,
        }
        crate::binlog::log_delete(txn, t, self.log_flags(), &row.values)
    }
}

fn txn_err(e: txn::Error) -> Error {
    Error::Txn(e)
}

fn update(
    txn: &mut Txn,
    st: &CatalogState,
    t: &Table,
    old: &Row,
    new: &[Value],
    depth: u32,
) -> Result<()> {
    if depth > MAX_CASCADE_DEPTH {
        return Err(Error::FkDepth(MAX_CASCADE_DEPTH));
    }
    let pending = referencing_rows(txn, st, &t.def, old, Some(new), false)?;
    let replaced = rt::update(txn, t, old, new)?;
    check_parents(txn, st, &t.def, new, Some(&old.values))?;
    cascade(txn, st, pending, Some(new), depth)?;
    // A new key an expired row held replaced it as a delete would (see
    // [`Writer::insert`]): the children of values the new row lacks get
    // their ON DELETE action.
    if let Some(gone_row) = replaced {
        let pending = referencing_rows(txn, st, &t.def, &gone_row, Some(new), true)?;
        cascade(txn, st, pending, None, depth)?;
    }
    Ok(())
}

fn delete(txn: &mut Txn, st: &CatalogState, t: &Table, row: &Row, depth: u32) -> Result<()> {
    if depth > MAX_CASCADE_DEPTH {
        return Err(Error::FkDepth(MAX_CASCADE_DEPTH));
    }
    let pending = referencing_rows(txn, st, &t.def, row, None, true)?;
    rt::delete(txn, t, row)?;
    cascade(txn, st, pending, None, depth)
}

/// The constraint as SHOW CREATE TABLE and the errors print it:
/// ``CONSTRAINT `n` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE CASCADE``.
/// The parent's database is named when it differs from the child's, or
/// always with `qualify`.
pub fn describe(def: &TableDef, k: usize, qualify: bool) -> String {
    let Some(fk) = def.foreign_keys.get(k) else {
        return String::new();
    };
    let q = |n: &str| format!("`{}`", n.replace('`', "``"));
    let list = |v: Vec<&str>| v.into_iter().map(q).collect::<Vec<_>>().join(", ");
    let child: Vec<&str> = fk
        .columns
        .iter()
        .filter_map(|&c| def.columns.get(c).map(|c| c.name.as_str()))
        .collect();
    let parent = if qualify || fk.parent_db != def.db {
        format!("{}.{}", q(&fk.parent_db), q(&fk.parent_table))
    } else {
        q(&fk.parent_table)
    };
    let mut s = format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        q(&fk.name),
        list(child),
        parent,
        list(fk.parent_columns.iter().map(String::as_str).collect())
    );
    if fk.on_delete != FkAction::Restrict {
        s.push_str(&format!(" ON DELETE {}", fk.on_delete.sql()));
    }
    if fk.on_update != FkAction::Restrict {
        s.push_str(&format!(" ON UPDATE {}", fk.on_update.sql()));
    }
    s
}

/// The constraint with its table, as errors 1451 and 1452 name it.
pub fn describe_in_table(def: &TableDef, k: usize) -> String {
    format!(
        "`{}`.`{}`, {}",
        def.db.replace('`', "``"),
        def.name.replace('`', "``"),
        describe(def, k, false)
    )
}

/// Positions of `names` in `def` (None if one is missing).
pub fn resolve_columns(def: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| def.column(n)).collect()
}

/// The index a constraint uses on a table: the first (primary key first)
/// whose leading columns are `cols`, in that order.
pub fn index_led_by<'d>(def: &'d TableDef, cols: &[usize]) -> Option<&'d Index> {
    def.indexes().find(|ix| {
        !(ix.primary && def.hidden_pk)
            && ix.columns.len() >= cols.len()
            && ix.columns[..cols.len()] == *cols
    })
}

/// `ix.id` + the key images of `vals` as columns `cols` of `def`.
fn prefix(def: &TableDef, ix: &Index, cols: &[usize], vals: &[&Value]) -> Result<Vec<u8>> {
    let mut k = keycodec::index_prefix(ix.id).to_vec();
    for (&c, v) in cols.iter().zip(vals) {
        let col = &def.columns[c];
        keycodec::encode(&mut k, def.key_format, &col.ty, col.nullable, v)?;
    }
    Ok(k)
}

/// Checks that every foreign key of `def` whose columns `row` sets (all
/// of them, or with `old` those that changed) finds its parent row; takes
/// a shared lock on each parent value.
fn check_parents(
    txn: &mut Txn,
    st: &CatalogState,
    def: &TableDef,
    row: &[Value],
    old: Option<&[Value]>,
) -> Result<()> {
    for (k, fk) in def.foreign_keys.iter().enumerate() {
        if let Some(old) = old {
            if fk.columns.iter().all(|&c| old[c] == row[c]) {
                continue;
            }
        }
        if fk.columns.iter().any(|&c| row[c].is_null()) {
            continue;
        }
        let fail = || Error::NoParent(describe_in_table(def, k));
        let Some(parent) = st.table(&fk.parent_db, &fk.parent_table) else {
            return Err(fail());
        };
        let pdef = &parent.def;
        let Some(pcols) = resolve_columns(pdef, &fk.parent_columns) else {
            return Err(fail());
        };
        let Some(pix) = index_led_by(pdef, &pcols) else {
            return Err(fail());
        };
        let vals: Vec<&Value> = fk.columns.iter().map(|&c| &row[c]).collect();
        // A value the parent column cannot hold has no parent.
        let Ok(key) = prefix(pdef, pix, &pcols, &vals) else {
            return Err(fail());
        };
        let cf = crate::cf::of(txn.db(), pix)?;
        let found = if pix.primary && pcols.len() == pix.columns.len() {
            txn.get_locked(cf, &key, LockMode::Shared)
                .map_err(txn_err)?
                .is_some()
        } else {
            txn.lock(cf, &key, LockMode::Shared).map_err(txn_err)?;
            let upper = keycodec::prefix_successor(&key);
            let mut it = crate::keyrange::scan(txn, cf, &key, upper.as_deref(), false, true)
                .map_err(txn_err)?;
            let now = crate::ttl::now_latest();
            let mut found = false;
            while let Some((k, v)) = it.next().map_err(txn_err)? {
                // TTL tables: an expired parent still stored is a parent,
                // but an expired entry may have outlived its row.
                if pix.primary
                    || !crate::ttl::sk_expired(pdef, v, now)
                    || rt::sk_current(txn, pdef, pix, k, true)?
                {
                    found = true;
                    break;
                }
            }
            found
        };
        if !found {
            return Err(fail());
        }
    }
    Ok(())
}

/// Children to act on after a parent row changes: the child table, which
/// of its keys, the action, the parent columns and the rows (read under
/// exclusive locks).
struct Pending {
    child: Arc<Table>,
    fk: usize,
    action: FkAction,
    parent_cols: Vec<usize>,
    rows: Vec<Row>,
}

/// For a parent row being deleted (`new: None`) or replaced by `new`:
/// locks each referenced value `new` does not keep exclusively and finds
/// the rows referencing it. A RESTRICT / NO ACTION key with such rows fails
/// here, before anything is written; the rest are returned for [`cascade`].
/// The action is the keys' ON DELETE one if `deleting`, else ON UPDATE.
fn referencing_rows(
    txn: &mut Txn,
    st: &CatalogState,
    def: &TableDef,
    old: &Row,
    new: Option<&[Value]>,
    deleting: bool,
) -> Result<Vec<Pending>> {
    let mut out = Vec::new();
    if !st.is_referenced(&def.db, &def.name) {
        return Ok(out);
    }
    let own_key = rt::pk_key(def, &old.values, old.hidden)?;
    for (child, k) in st.children(&def.db, &def.name) {
        let fk = &child.def.foreign_keys[*k];
        let Some(pcols) = resolve_columns(def, &fk.parent_columns) else {
            continue;
        };
        if let Some(new) = new {
            // A row replacing an expired one as a delete would keeps the
            // children of every value it matches as they do (by collation
            // key: 'A' is still the parent of 'a' under a _ci collation).
            // An UPDATE of the key is a change unless the bytes are equal,
            // as InnoDB has it: 'a' -> 'A' cascades, or fails RESTRICT.
            let kept = if deleting {
                let now: Vec<&Value> = pcols.iter().map(|&c| &new[c]).collect();
                matches(def, &pcols, &old.values, &now)
            } else {
                pcols.iter().all(|&c| old.values[c] == new[c])
            };
            if kept {
                continue;
            }
        }
        let vals: Vec<&Value> = pcols.iter().map(|&c| &old.values[c]).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        if let Some(pix) = index_led_by(def, &pcols) {
            let key = prefix(def, pix, &pcols, &vals)?;
            let cf = crate::cf::of(txn.db(), pix)?;
            txn.lock(cf, &key, LockMode::Exclusive).map_err(txn_err)?;
        }
        let action = if deleting { fk.on_delete } else { fk.on_update };
        let same_table = child.def.db == def.db && child.def.name == def.name;
        let mut rows = Vec::new();
        for r in children_with(txn, &child.def, &fk.columns, &vals)? {
            // A row referencing itself goes with it under CASCADE/SET NULL.
            let own = same_table && rt::pk_key(def, &r.values, r.hidden)? == own_key;
            if !(own && matches!(action, FkAction::Cascade | FkAction::SetNull)) {
                rows.push(r);
            }
        }
        if rows.is_empty() {
            continue;
        }
        if matches!(action, FkAction::Restrict | FkAction::NoAction) {
            return Err(Error::RowReferenced(describe_in_table(&child.def, *k)));
        }
        out.push(Pending {
            child: child.clone(),
            fk: *k,
            action,
            parent_cols: pcols,
            rows,
        });
    }
    Ok(out)
}

/// The rows of a child table whose columns `cols` equal `vals`, each read
/// at its latest version under an exclusive lock (through the index the
/// key uses; a full scan if the index is gone).
fn children_with(
    txn: &mut Txn,
    def: &TableDef,
    cols: &[usize],
    vals: &[&Value],
) -> Result<Vec<Row>> {
    let ix = index_led_by(def, cols);
    let cf = crate::cf::of(txn.db(), ix.unwrap_or(&def.pk))?;
    let lo = match ix {
        Some(ix) => match prefix(def, ix, cols, vals) {
            Ok(k) => k,
            // A value no child column can hold: no child has it.
            Err(_) => return Ok(Vec::new()),
        },
        None => keycodec::index_prefix(def.pk.id).to_vec(),
    };
    let hi = keycodec::prefix_successor(&lo);
    let mut it =
        crate::keyrange::scan(txn, cf, &lo, hi.as_deref(), false, true).map_err(txn_err)?;
    let mut rows = Vec::new();
    while let Some((k, _)) = it.next().map_err(txn_err)? {
        let key = match ix {
            Some(ix) if !ix.primary => rt::pk_of_sk(def, ix, k)?,
            _ => k.to_vec(),
        };
        // An expired child (TTL tables) still stored counts: RESTRICT keeps
        // the parent, CASCADE removes it too.
        let Some(r) = rt::get_stored(txn, def, &key, Some(LockMode::Exclusive), None)? else {
            continue;
        };
        // Checked at the locked version: it may have changed meanwhile (or,
        // in a TTL table, be a new row under an expired entry's key).
        if matches(def, cols, &r.values, vals) {
            rows.push(r);
        }
    }
    Ok(rows)
}

/// True when `row`'s columns `cols` have the key images of `vals`.
fn matches(def: &TableDef, cols: &[usize], row: &[Value], vals: &[&Value]) -> bool {
    cols.iter().zip(vals).all(|(&c, v)| {
        let col = &def.columns[c];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        keycodec::encode(&mut a, def.key_format, &col.ty, col.nullable, &row[c]).is_ok()
            && keycodec::encode(&mut b, def.key_format, &col.ty, col.nullable, v).is_ok()
            && a == b
    })
}

/// Applies CASCADE and SET NULL to the rows [`referencing_rows`] found,
/// after the parent row was written (`new`: its new values, None if it
/// was deleted).
fn cascade(
    txn: &mut Txn,
    st: &CatalogState,
    pending: Vec<Pending>,
    new: Option<&[Value]>,
    depth: u32,
) -> Result<()> {
    for p in pending {
        let cdef = &p.child.def;
        let fk = &cdef.foreign_keys[p.fk];
        for r in p.rows {
            // An earlier cascade of this change may have changed the row.
            let key = rt::pk_key(cdef, &r.values, r.hidden)?;
            let Some(cur) = rt::get_stored(txn, cdef, &key, Some(LockMode::Exclusive), None)?
            else {
                continue;
            };
            let was: Vec<&Value> = fk.columns.iter().map(|&c| &r.values[c]).collect();
            if !matches(cdef, &fk.columns, &cur.values, &was) {
                continue;
            }
            let rewrite = matches!(
                (p.action, new),
                (FkAction::SetNull, _) | (FkAction::Cascade, Some(_))
            );
            // An expired child reads hide is removed as a compaction would
            // remove it: without ON DELETE actions for its own children.
            let removes = rewrite || matches!(p.action, FkAction::Cascade);
            if removes && gone(cdef, &cur) {
                rt::delete(txn, &p.child, &cur)?;
                continue;
            }
            match (p.action, new) {
                (FkAction::Cascade, None) => delete(txn, st, &p.child, &cur, depth + 1)?,
                (FkAction::Cascade, Some(new)) => {
                    let mut row = cur.values.clone();
                    for (&c, &pc) in fk.columns.iter().zip(&p.parent_cols) {
                        row[c] = new[pc].clone();
                    }
                    update(txn, st, &p.child, &cur, &row, depth + 1)?;
                }
                (FkAction::SetNull, _) => {
                    let mut row = cur.values.clone();
                    for &c in &fk.columns {
                        if !cdef.columns[c].nullable {
                            // CREATE/ALTER refuse SET NULL on a NOT NULL column.
                            return Err(Error::Internal(format!(
                                "SET NULL on NOT NULL column {}",
                                cdef.columns[c].name
                            )));
                        }
                        row[c] = Value::Null;
                    }
                    update(txn, st, &p.child, &cur, &row, depth + 1)?;
                }
                (FkAction::Restrict | FkAction::NoAction, _) => {
                    return Err(Error::RowReferenced(describe_in_table(cdef, p.fk)))
                }
            }
        }
    }
    Ok(())
}

/// True when `row` of `def` has expired and reads hide it (TTL tables, read
/// filtering on): CASCADE and SET NULL delete such a child instead of
/// rewriting it, as a compaction would remove it. A rewrite would stamp it
/// with the current time (bringing it back) and check its unique values
/// against live rows (1062 for a row no statement can see).
fn gone(def: &TableDef, row: &Row) -> bool {
    crate::ttl::filtering()
        && def.ttl.is_some_and(|ttl| {
            let t = crate::ttl::row_time(&ttl, &row.values, row.stamp);
            crate::ttl::expired(&ttl, t, crate::ttl::now_latest())
        })
}

/// Checks the existing rows of `def` against its foreign key `k` (ALTER
/// TABLE ADD FOREIGN KEY with foreign_key_checks on): the first row
/// without a parent fails with `NoParent`.
pub fn validate(txn: &mut Txn, st: &CatalogState, def: &TableDef, k: usize) -> Result<()> {
    let one = TableDef {
        foreign_keys: def.foreign_keys.get(k).cloned().into_iter().collect(),
        ..def.clone()
    };
    let lo = keycodec::index_prefix(def.pk.id).to_vec();
    let hi = keycodec::prefix_successor(&lo);
    let cf = crate::cf::of(txn.db(), &def.pk)?;
    let mut it =
        crate::keyrange::scan(txn, cf, &lo, hi.as_deref(), false, false).map_err(txn_err)?;
    let mut rows = Vec::new();
    loop {
        rows.clear();
        while let Some((k, v)) = it.next().map_err(txn_err)? {
            rows.push(rt::decode_row(def, k, v, None)?);
            if rows.len() >= 1024 {
                break;
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        // Checking takes locks and reads through the same transaction, so
        // the scan pauses between batches.
        for r in &rows {
            check_parents(txn, st, &one, &r.values, None).map_err(|e| match e {
                Error::NoParent(_) => Error::NoParent(describe_in_table(def, k)),
                other => other,
            })?;
        }
    }
}
