//! Online rebuilds (ALTER TABLE that rewrites rows while writers go on, as
//! InnoDB's LOCK=NONE): the new definition is published as the table's
//! shadow, which writers maintain in their own transactions (each write
//! converted as the rebuild converts rows); older writers are waited for,
//! the rows are copied in batches under shared row locks
//! (`rel::shadow::copy_online`); then writers are held out briefly
//! (`hold_writers`) while the conversion errors and unique keys of
//! concurrent writes are checked and the new definition is committed in one
//! synced catalog write. A crash before that commit leaves the old table
//! (the shadow's ids are pending, `P`, and dropped at the next open).
//!
//! A concurrent write whose row does not convert (e.g. a value too long
//! for a narrowed column) or that duplicates a new unique key fails the
//! ALTER, not the writer, as InnoDB's online ALTER does. Which rebuilds run
//! online is `blocker`'s answer; the others hold writers out (`install`).
use super::alter::Work;
use super::install::{converter, hold_writers};
use super::{ddl_wait, wait_error};
use crate::error::{Result, SqlError};
use crate::session::Session;
use rel::catalog::{CatalogState, DefChange, Table};
use rel::schema::TableDef;
use std::sync::{Arc, Mutex};

/// Why this rebuild cannot run online (None: it can). `positions[oc]` is
/// the new position of old column `oc`.
pub(super) fn blocker(
    st: &CatalogState,
    old: &Table,
    def: &TableDef,
    w: &Work,
    positions: &[Option<usize>],
    children: usize,
) -> Option<&'static str> {
    let o = &old.def;
    if o.ttl.is_some() || def.ttl.is_some() {
        return Some("Strata rebuilds TTL tables only with writers held out");
    }
    if children > 0
        || !o.foreign_keys.is_empty()
        || !def.foreign_keys.is_empty()
        || st.is_referenced(&o.db, &o.name)
    {
        return Some("Strata rebuilds tables with foreign keys only with writers held out");
    }
    if w.cols
        .iter()
        .any(|c| c.source.is_none() && c.col.auto_increment)
    {
        return Some("Adding an auto-increment column requires a lock");
    }
    // The primary key's key image must stay as it is (an old row and its
    // shadow row share their key after the index id).
    let same_pk = o.hidden_pk == def.hidden_pk
        && (o.hidden_pk
            || (o.pk.columns.len() == def.pk.columns.len()
                && o.pk.columns.iter().zip(&def.pk.columns).all(|(&oc, &nc)| {
                    let (a, b) = (&o.columns[oc], &def.columns[nc]);
                    positions[oc] == Some(nc) && a.ty == b.ty && a.nullable == b.nullable
                })));
    if !same_pk {
        return Some("Strata changes a primary key only with writers held out");
    }
    if !old.building.is_empty() || old.shadow.is_some() {
        return Some("another online change of the table is under way");
    }
    None
}

/// Rebuilds `old` into `def` online (see the module comment). Returns the
/// rows the copy read (as the blocking rebuild reports the rows copied).
pub(super) fn install_online(
    s: &Session,
    old: &Arc<Table>,
    mut def: TableDef,
    w: &Work,
) -> Result<u64> {
    let cat = &s.inst.catalog;
    let now = crate::env::now_micros();
    let checks = if def.checks.is_empty() {
        None
    } else {
        Some(crate::check::Checks::of(&def)?)
    };
    def.instant.clear();
    def.instant_from = 0;
    cat.reserve_ids(&mut def)?;
    // The first conversion error, of the copy or of a concurrent writer.
    let failed: Arc<Mutex<Option<SqlError>>> = Arc::default();
    let convert: Box<rel::shadow::Convert> = {
        let src: Vec<Option<usize>> = w.cols.iter().map(|c| c.source).collect();
        let conv = converter(old.def.clone(), def.clone(), src, now, checks);
        let failed = failed.clone();
        Box::new(move |row, n| {
            conv(row, n).map_err(|e| {
                let mut g = failed.lock().unwrap_or_else(|p| p.into_inner());
                if g.is_none() {
                    *g = Some(e);
                }
            })
        })
    };
    let nt = match cat.begin_rebuild(old, def.clone(), convert) {
        Ok(t) => t,
        Err(e) => {
            cat.release_ids(&def)?;
            return Err(e.into());
        }
    };
    let first_error = || failed.lock().unwrap_or_else(|p| p.into_inner()).take();
    match run(s, &nt, &def, w, &first_error) {
        Ok(rows) => Ok(rows),
        Err(e) => {
            cat.abort_rebuild(&nt);
            // Writers that still maintain the shadow end before its
            // entries go (those of a writer waited for in vain stay,
            // unreachable: ids are never reused).
            let _ = ddl_wait(s)(cat.version());
            cat.release_ids(&def)?;
            Err(e)
        }
    }
}

/// Waits for writers that do not maintain the shadow, copies the rows,
/// then commits the shadow with writers held out.
fn run(
    s: &Session,
    nt: &Arc<Table>,
    def: &TableDef,
    w: &Work,
    first_error: &dyn Fn() -> Option<SqlError>,
) -> Result<u64> {
    let cat = &s.inst.catalog;
    if !ddl_wait(s)(cat.version()) {
        return Err(wait_error(s));
    }
    let rows = match rel::shadow::copy_online(&s.inst.txdb, nt, s.lock_timeout()) {
        Ok(n) => n,
        Err(e) => return Err(first_error().unwrap_or_else(|| e.into())),
    };
    let frozen = [nt.clone()];
    let (thaw, _held) = hold_writers(s, &frozen)?;
    let committed = (|| -> Result<()> {
        if let Some(e) = first_error() {
            return Err(e);
        }
        if let Some(sh) = &nt.shadow {
            sh.verify(cat.db())?;
        }
        cat.commit_defs(vec![DefChange {
            from: Some(nt.clone()),
            def: def.clone(),
            pending: true,
            auto_inc: w.auto_inc.unwrap_or(0),
            hidden_next: 0,
        }])?;
        Ok(())
    })();
    if committed.is_err() {
        // A table another DDL replaced meanwhile stays frozen as it left it.
        if cat.abort_rebuild(nt) {
            thaw();
        } else {
            cat.bump();
        }
    }
    committed.map(|()| rows)
}
