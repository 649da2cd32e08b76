//! Installing an altered table definition (see `alter`): deciding whether
//! rows must be rewritten (`classify`), the conversion of a rewritten row
//! (`converter`, shared with the online rebuild in `online`), and doing it
//! with writers held out (`install`): the tables are frozen at a new catalog version, older
//! transactions are waited for, rows are copied into fresh index ids when
//! the layout changed (`rel::rebuild`, with ALTER TABLE's conversion
//! errors), and the new definitions are committed in one catalog write.
use super::alter::Work;
use super::{ddl_wait, wait_error};
use crate::bulk::lock::{lock_tables, TableLock};
use crate::convert::for_store;
use crate::error::{Result, SqlError};
use crate::session::Session;
use rel::catalog::{DefChange, Table};
use rel::schema::{Column, TableDef};
use rel::value::{ColumnType, TypeKind, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How the new definition is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    Metadata,
    Instant,
    Rebuild,
}

/// Whether values of type `a` are stored (row value and key image) exactly
/// as values of type `b` and every `a` value fits `b`.
fn same_storage(a: &ColumnType, b: &ColumnType) -> bool {
    // A collation change changes the key images (weights) and whether a
    // primary key column is also stored in the row value.
    if a.kind != b.kind || a.unsigned != b.unsigned || a.scale != b.scale || a.coll != b.coll {
        return false;
    }
    if a.is_integer() || a.kind == TypeKind::Year {
        return true;
    }
    match a.kind {
        TypeKind::Char | TypeKind::VarChar | TypeKind::Text => b.len >= a.len,
        TypeKind::VarBinary | TypeKind::Blob => b.len >= a.len,
        // Members appended at the end keep every stored number; like
        // MariaDB, not when its packed size would grow.
        TypeKind::Enum | TypeKind::Set => {
            let (m, n) = (&a.members, &b.members);
            n.len() >= m.len()
                && m.iter().zip(n.iter()).all(|(x, y)| x == y)
                && member_pack(a) == member_pack(b)
        }
        _ => a.len == b.len,
    }
}

/// MariaDB's storage size of an ENUM/SET column (a rebuild there when it grows).
fn member_pack(t: &ColumnType) -> usize {
    let n = t.members.len();
    match t.kind {
        TypeKind::Enum if n < 256 => 1,
        TypeKind::Enum => 2,
        _ => match n.div_ceil(8) {
            3 => 4,
            k if k > 4 => 8,
            k => k,
        },
    }
}

pub(super) fn classify(
    old: &TableDef,
    new: &TableDef,
    w: &Work,
    positions: &[Option<usize>],
) -> Change {
    if w.keys_added || old.hidden_pk != new.hidden_pk {
        return Change::Rebuild;
    }
    // Every index of the new definition must be an old one over the same
    // columns (dropping a column from an index rewrites it).
    for ix in new.indexes() {
        let Some(o) = old.indexes().find(|o| o.id == ix.id) else {
            return Change::Rebuild;
        };
        let same = o.columns.len() == ix.columns.len()
            && o.columns
                .iter()
                .zip(&ix.columns)
                .all(|(&oc, &nc)| positions[oc] == Some(nc));
        if !same {
            return Change::Rebuild;
        }
    }
    let src = |c: usize| w.cols[c].source;
    let keyed = |d: &TableDef, c: usize| d.indexes().any(|ix| ix.columns.contains(&c));
    // Stored columns: the old ones in their old order, unchanged in storage
    // (a column in a key also keeps its nullability: it is in the key image),
    // then only added ones.
    let mut added = false;
    let mut j = 0;
    for &c in &new.value_cols {
        match src(c) {
            None => added = true,
            Some(_) if added => return Change::Rebuild,
            Some(oc) => {
                if old.value_cols.get(j) != Some(&oc) {
                    return Change::Rebuild;
                }
                j += 1;
            }
        }
    }
    if j != old.value_cols.len() {
        return Change::Rebuild;
    }
    for (nc, c) in new.columns.iter().enumerate() {
        let Some(oc) = src(nc) else {
            if c.auto_increment || new.pk.columns.contains(&nc) {
                return Change::Rebuild;
            }
            continue;
        };
        let o = &old.columns[oc];
        let tightened = o.nullable && !c.nullable;
        let null_in_key = o.nullable != c.nullable && keyed(new, nc);
        if !same_storage(&o.ty, &c.ty) || tightened || null_in_key {
            return Change::Rebuild;
        }
        if c.auto_increment && !o.auto_increment {
            return Change::Rebuild;
        }
    }
    if added {
        Change::Instant
    } else {
        Change::Metadata
    }
}

/// The value an added column takes in existing rows: its default, the
/// current time for DEFAULT CURRENT_TIMESTAMP, else NULL or, for NOT NULL,
/// the type's implicit default (0, '', zero date), as MySQL fills them.
fn fill_value(c: &Column, now: i64) -> Value {
    if c.default_now {
        return Value::DateTime(rel::temporal::datetime_from_unix_micros(
            now / 1_000_000 * 1_000_000,
        ));
    }
    if let Some(d) = &c.default {
        return d.clone();
    }
    if c.nullable {
        return Value::Null;
    }
    implicit_zero(&c.ty)
}

fn implicit_zero(t: &ColumnType) -> Value {
    match t.kind {
        TypeKind::Float | TypeKind::Double => Value::Double(0.0),
        TypeKind::Decimal => Value::Decimal(0, t.scale),
        TypeKind::Date => Value::Date(0),
        TypeKind::DateTime | TypeKind::Timestamp => Value::DateTime(0),
        TypeKind::Time => Value::Time(0),
        TypeKind::Enum => Value::Bytes(t.members.get(1).to_vec()),
        _ if t.is_string() || t.kind == TypeKind::Set => Value::Bytes(Vec::new()),
        _ if t.unsigned && t.kind == TypeKind::BigInt => Value::UInt(0),
        _ => Value::Int(0),
    }
}

/// Converts a stored value into a changed column, with ALTER TABLE's
/// errors (MariaDB: NULL into NOT NULL and too long are 1265 "Data
/// truncated").
fn convert_value(v: Value, c: &Column, row: u64) -> Result<Value> {
    let row = row as usize;
    for_store(v, c, row).map_err(|e| match e.code {
        crate::error::ER_BAD_NULL_ERROR | crate::error::ER_DATA_TOO_LONG => {
            SqlError::data_truncated(&c.name, row)
        }
        _ => e,
    })
}

/// The conversion of an old row (and its number, from 1) into `def`'s
/// columns for a rebuild: `src[i]` is the old position of new column `i`
/// (None: added, it gets its fill value or, AUTO_INCREMENT, the row
/// number), values converted with ALTER TABLE's errors, then `checks`.
pub(super) fn converter(
    old: TableDef,
    def: TableDef,
    src: Vec<Option<usize>>,
    now: i64,
    checks: Option<crate::check::Checks>,
) -> impl Fn(&rel::table::Row, u64) -> Result<Vec<Value>> {
    let fills: Vec<Value> = def.columns.iter().map(|c| fill_value(c, now)).collect();
    move |row, n| {
        let mut out = Vec::with_capacity(def.columns.len());
        for (i, c) in def.columns.iter().enumerate() {
            let v = match src[i] {
                Some(oc) => {
                    let v = row.values[oc].clone();
                    let o = &old.columns[oc];
                    if o.ty == c.ty && (c.nullable || !v.is_null()) {
                        v
                    } else {
                        convert_value(v, c, n)?
                    }
                }
                None if c.auto_increment => Value::Int(n as i64),
                None => fills[i].clone(),
            };
            out.push(v);
        }
        if let Some(c) = &checks {
            c.verify_always(&out, &crate::expr::NoEnv)?;
        }
        Ok(out)
    }
}

/// Installs `def` in place of `old` (and the children's new definitions),
/// holding writers out (see the module comment). Returns the rows copied.
pub(super) fn install(
    s: &Session,
    old: &Arc<Table>,
    mut def: TableDef,
    change: Change,
    children: Vec<(Arc<Table>, TableDef)>,
    w: &Work,
) -> Result<u64> {
    let cat = &s.inst.catalog;
    let frozen: Vec<Arc<Table>> = std::iter::once(old.clone())
        .chain(children.iter().map(|c| c.0.clone()))
        .collect();
    let (thaw, _held) = hold_writers(s, &frozen)?;
    let now = crate::env::now_micros();
    // New checks hold for every row; so must all of them for rewritten rows.
    let mut checks = if w.checks_added || (change == Change::Rebuild && !def.checks.is_empty()) {
        match crate::check::Checks::of(&def) {
            Ok(c) => Some(c),
            Err(e) => {
                thaw();
                return Err(e);
            }
        }
    } else {
        None
    };
    let mut copied = rel::rebuild::Copied {
        rows: 0,
        auto_inc: 1,
        hidden_next: 1,
    };
    if let (Some(c), false) = (&checks, change == Change::Rebuild) {
        if let Err(e) = validate_in_place(s, old, &def, w, c, now) {
            thaw();
            return Err(e);
        }
    }
    match change {
        // Rows keep their layout: values for columns they lack carry over.
        Change::Metadata => {
            def.instant = old.def.instant.clone();
            def.instant_from = old.def.instant_from;
        }
        Change::Instant => {
            def.instant_from = if old.def.instant.is_empty() {
                old.def.value_cols.len()
            } else {
                old.def.instant_from
            };
            def.instant = old.def.instant.clone();
            for &c in &def.value_cols[old.def.value_cols.len()..] {
                def.instant.push(fill_value(&def.columns[c], now));
            }
        }
        Change::Rebuild => {
            def.instant.clear();
            def.instant_from = 0;
            if let Err(e) = cat.reserve_ids(&mut def) {
                thaw();
                return Err(e.into());
            }
            let src: Vec<Option<usize>> = w.cols.iter().map(|c| c.source).collect();
            let convert = converter(old.def.clone(), def.clone(), src, now, checks.take());
            let r = rel::rebuild::copy_rows(cat.db(), old, &def, convert)
                .and_then(|c| validate_new_keys(s, &def, old).map(|_| c));
            match r {
                Ok(c) => copied = c,
                Err(e) => {
                    let _ = cat.release_ids(&def);
                    thaw();
                    return Err(e);
                }
            }
        }
    }
    let pending = change == Change::Rebuild;
    let mut changes = vec![DefChange {
        from: Some(old.clone()),
        def: def.clone(),
        pending,
        auto_inc: copied.auto_inc.max(w.auto_inc.unwrap_or(0)),
        hidden_next: copied.hidden_next,
    }];
    for (t, d) in children {
        changes.push(DefChange {
            from: Some(t),
            def: d,
            pending: false,
            auto_inc: 0,
            hidden_next: 0,
        });
    }
    if let Err(e) = cat.commit_defs(changes) {
        if pending {
            let _ = cat.release_ids(&def);
        }
        thaw();
        return Err(e.into());
    }
    Ok(if pending { copied.rows } else { 0 })
}

/// Checks every row of `old`, as `def` will read it (added columns with
/// the values they get), against `checks` (4025 for the first that fails).
fn validate_in_place(
    s: &Session,
    old: &Arc<Table>,
    def: &TableDef,
    w: &Work,
    checks: &crate::check::Checks,
    now: i64,
) -> Result<()> {
    let src: Vec<Option<usize>> = w.cols.iter().map(|c| c.source).collect();
    let fills: Vec<Value> = def.columns.iter().map(|c| fill_value(c, now)).collect();
    rel::rebuild::for_each_row(s.inst.catalog.db(), old, |row| -> Result<()> {
        let full: Vec<Value> = src
            .iter()
            .enumerate()
            .map(|(i, s)| match s {
                Some(oc) => row.values[*oc].clone(),
                None => fills[i].clone(),
            })
            .collect();
        checks.verify_always(&full, &crate::expr::NoEnv)
    })
}

/// Freezes `tables` at a new catalog version: transactions that begin
/// from now on are refused writes to them (and wait, see `dispatch`);
/// older ones may write and are waited for here (1205 after
/// lock_wait_timeout). First takes the tables' bulk locks (`bulk::lock`:
/// waits for another session's bulk load of them to end), held until the
/// returned guards drop. Returns what undoes the freeze if the change is
/// abandoned (a committed change retires the old tables instead).
pub(super) fn hold_writers<'a>(
    s: &'a Session,
    tables: &'a [Arc<Table>],
) -> Result<(impl Fn() + 'a, Vec<TableLock>)> {
    let locks = lock_tables(s, tables.iter().map(|t| name_of(t)).collect())?;
    let cat = &s.inst.catalog;
    let v = cat.bump_with(|v| {
        for t in tables {
            t.frozen.store(v, Ordering::SeqCst);
        }
    });
    let thaw = move || {
        for t in tables {
            t.frozen.store(u64::MAX, Ordering::SeqCst);
        }
        cat.bump();
    };
    if !ddl_wait(s)(v) {
        thaw();
        return Err(wait_error(s));
    }
    Ok((thaw, locks))
}

/// A table's name as the bulk locks key it.
pub(crate) fn name_of(t: &Table) -> crate::bulk::lock::Name {
    (t.def.db.clone(), t.def.name.clone())
}

/// True while `t` is the current table of its name.
pub(crate) fn is_current(s: &Session, t: &Arc<Table>) -> bool {
    s.inst
        .catalog
        .state()
        .table(&t.def.db, &t.def.name)
        .is_some_and(|c| Arc::ptr_eq(c, t))
}

/// A table frozen for writers (`hold_writers` for one table, owning what
/// it needs) and held for its session (its bulk lock): thawed when
/// dropped, unless the table was replaced meanwhile (its successor is not
/// frozen).
pub(crate) struct Frozen {
    inst: Arc<crate::Instance>,
    table: Arc<Table>,
    version: u64,
    _locks: Vec<TableLock>,
}

impl Frozen {
    /// Takes `t`'s bulk lock (waiting for another session's load or DDL
    /// of it), freezes it and waits for the transactions that may still
    /// write it (1205 after lock_wait_timeout). None when `t` is no longer
    /// the current table of its name, or an index build or online rebuild
    /// is changing it: the caller resolves the table again. The caller
    /// must not itself be inside a transaction or statement (its own slot
    /// would be waited for).
    pub(crate) fn new(s: &Session, t: &Arc<Table>) -> Result<Option<Frozen>> {
        let locks = lock_tables(s, vec![name_of(t)])?;
        if !is_current(s, t) || !t.building.is_empty() || t.shadow.is_some() {
            return Ok(None);
        }
        let tables = [t.clone()];
        let (thaw, _) = hold_writers(s, &tables)?;
        std::mem::forget(thaw);
        let f = Frozen {
            inst: s.inst.clone(),
            table: t.clone(),
            version: t.frozen.load(Ordering::SeqCst),
            _locks: locks,
        };
        // Replaced while its writers were waited for (DROP, TRUNCATE...).
        Ok(is_current(s, t).then_some(f))
    }

    /// The frozen table.
    pub(crate) fn table(&self) -> &Arc<Table> {
        &self.table
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = self.table.frozen.compare_exchange(
            self.version,
            u64::MAX,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.inst.catalog.bump();
    }
}

/// With foreign_key_checks on, the rows of a rebuilt table must satisfy
/// its foreign keys (new ones, and old ones whose columns changed).
fn validate_new_keys(s: &Session, def: &TableDef, old: &Arc<Table>) -> Result<()> {
    if !s.fk_checks() {
        return Ok(());
    }
    let st = s.inst.catalog.state();
    for (k, fk) in def.foreign_keys.iter().enumerate() {
        if old.def.foreign_keys.iter().any(|o| o == fk) {
            continue;
        }
        let mut txn = s.inst.txdb.begin(txn::Isolation::ReadCommitted);
        let r = rel::fk::validate(&mut txn, &st, def, k);
        txn.rollback();
        r?;
    }
    Ok(())
}
