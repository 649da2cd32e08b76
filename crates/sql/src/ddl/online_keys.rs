//! ALTER TABLE made only of index and foreign key additions and drops, run
//! online and all or nothing: each new index is published to writers and
//! filled from a snapshot (`build_index`), each new foreign key is
//! published to statements without being stored (`Catalog::stage_def`) and,
//! with foreign_key_checks on, checked against every existing row; then
//! one synced catalog write (`Catalog::commit_online`) stores the whole new
//! definition (the drops applied there) together with the statement's
//! binary log record. A failure anywhere (a duplicate in a new unique
//! index, an orphan for a new key: 1452, a lock wait timeout, an index a
//! key still needs) undoes what was published, and nothing is stored or
//! logged; a crash before the final write leaves the old definition.
use super::{check_auto_key, ddl_wait, fkey, index_columns, sortbuild, wait_error};
use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome};
use crate::session::Session;
use rel::catalog::Table;
use rel::schema::{Index, TableDef};
use sqlparser::ast;
use std::sync::Arc;

/// What the statement published so far (undone on failure).
#[derive(Default)]
struct Done {
    /// Ids of the indexes built (in `Table::building`).
    built: Vec<u32>,
    /// Names of the foreign keys staged.
    staged: Vec<String>,
}

/// Runs the online ALTER `at` on `t` (its operations were checked; the
/// caller holds the table's bulk lock, taken before `t` was looked up).
pub(super) fn alter(s: &mut Session, at: &ast::AlterTable, t: &Arc<Table>) -> Result<Outcome> {
    // The QUERY record is held back until the final catalog write.
    let rec = rel::binlog::take_ddl_record();
    let mut done = Done::default();
    let r = publish(s, at, t, &mut done).and_then(|_| {
        rel::binlog::set_ddl_record(rec);
        commit(s, at, t, &done)
    });
    if let Err(e) = r {
        rel::binlog::take_ddl_record();
        undo(s, t, &done)?;
        return Err(e);
    }
    ok()
}

/// Builds the new indexes and stages the new keys, in statement order,
/// then checks the staged keys against the rows.
fn publish(s: &Session, at: &ast::AlterTable, t: &Arc<Table>, done: &mut Done) -> Result<()> {
    use ast::AlterTableOperation as Op;
    let cat = &s.inst.catalog;
    let checks = s.fk_checks();
    // The definition as it will be: names taken, indexes keys can use.
    let mut plan = t.def.clone();
    for op in &at.operations {
        if let Op::DropIndex { name } = op {
            let before = plan.secondary.len();
            plan.secondary
                .retain(|i| !i.name.eq_ignore_ascii_case(&name.value));
            if plan.secondary.len() == before {
                return Err(SqlError::cant_drop(&name.value));
            }
        }
    }
    for op in &at.operations {
        let Op::AddConstraint { constraint, .. } = op else {
            continue;
        };
        crate::accept::check_constraint(constraint)?;
        let (cols, name, unique, meta) = match constraint {
            ast::TableConstraint::Index(ix) => {
                let cols = index_columns(t, &ix.columns)?;
                let name = ix.name.as_ref().map(|n| n.value.clone());
                (
                    cols,
                    name,
                    false,
                    crate::accept::index_meta(&ix.index_options)?,
                )
            }
            ast::TableConstraint::Unique(u) => {
                let cols = index_columns(t, &u.columns)?;
                let name = u.name.as_ref().or(u.index_name.as_ref());
                let name = name.map(|n| n.value.clone());
                (
                    cols,
                    name,
                    true,
                    crate::accept::index_meta(&u.index_options)?,
                )
            }
            ast::TableConstraint::ForeignKey(fk) => {
                let added = fkey::add(&mut plan, fk, &cat.state(), checks)?;
                let key = plan
                    .foreign_keys
                    .last()
                    .cloned()
                    .ok_or_else(|| SqlError::internal("foreign key vanished"))?;
                if let Some(ix) = added {
                    let Some(ix) = plan.secondary.pop() else {
                        return Err(SqlError::internal(format!("index {ix} vanished")));
                    };
                    let ix = build(s, t, &plan, ix, &mut done.built)?;
                    plan.secondary.push(ix);
                }
                cat.stage_def(&t.def.db, &t.def.name, |cur| {
                    let mut def = cur.clone();
                    def.foreign_keys.push(key.clone());
                    crate::check::refuse_cascaded(&def)?;
                    Ok::<_, SqlError>(def)
                })?;
                done.staged.push(key.name);
                continue;
            }
            other => return Err(SqlError::unsupported(format!("ALTER TABLE ADD {other}"))),
        };
        let name = name.unwrap_or_else(|| t.def.columns[cols[0]].name.clone());
        let ix = Index {
            id: 0,
            name,
            columns: cols,
            unique,
            primary: false,
            cf: meta.0,
            comment: meta.1,
        };
        let ix = build(s, t, &plan, ix, &mut done.built)?;
        plan.secondary.push(ix);
    }
    if !checks || done.staged.is_empty() {
        return Ok(());
    }
    if !ddl_wait(s)(cat.version()) {
        return Err(wait_error(s));
    }
    let st = cat.state();
    let cur = st
        .table(&t.def.db, &t.def.name)
        .ok_or_else(|| SqlError::no_table(format!("{}.{}", t.def.db, t.def.name)))?;
    for name in &done.staged {
        let k = cur
            .def
            .foreign_keys
            .iter()
            .position(|f| &f.name == name)
            .ok_or_else(|| SqlError::internal("staged foreign key vanished"))?;
        let mut txn = s.inst.txdb.begin(txn::Isolation::ReadCommitted);
        let r = rel::fk::validate(&mut txn, &st, &cur.def, k);
        txn.rollback();
        r?;
    }
    Ok(())
}

/// Publishes index `ix` of `t` to writers (its id added to `built`), waits
/// for the writers that planned without it and fills it from a snapshot
/// (`sortbuild::fill`); its name is checked against `plan` and the indexes
/// being built. Returns it with its id. The caller holds bulk loads of the
/// table out, and commits the index or aborts it.
pub(super) fn build(
    s: &Session,
    t: &Arc<Table>,
    plan: &TableDef,
    ix: Index,
    built: &mut Vec<u32>,
) -> Result<Index> {
    let cat = &s.inst.catalog;
    let cur = cat
        .state()
        .table(&t.def.db, &t.def.name)
        .cloned()
        .ok_or_else(|| SqlError::no_table(format!("{}.{}", t.def.db, t.def.name)))?;
    // The columns `plan` and `ix` refer to by position are the table's.
    if cur.def.columns != plan.columns {
        return Err(rel::Error::TableChanged(format!("{}.{}", t.def.db, t.def.name)).into());
    }
    if plan
        .indexes()
        .chain(&cur.building)
        .any(|i| i.name.eq_ignore_ascii_case(&ix.name))
    {
        return Err(SqlError::duplicate_key_name(&ix.name));
    }
    let (nt, ix) = cat.begin_index(&cur, ix)?;
    built.push(ix.id);
    if !ddl_wait(s)(cat.version()) {
        return Err(wait_error(s));
    }
    sortbuild::fill(s, &nt, &ix)?;
    Ok(ix)
}

/// The final write: the built indexes join the definition, the drops are
/// applied to the indexes and keys that were there before (an index built
/// here keeps the name it replaces), the foreign keys are checked against
/// the result as DROP INDEX checks them (all drops at once, as MariaDB:
/// 1553 when a key is left without an index), the record rides along.
fn commit(s: &Session, at: &ast::AlterTable, t: &Arc<Table>, done: &Done) -> Result<()> {
    use ast::AlterTableOperation as Op;
    let cat = &s.inst.catalog;
    cat.commit_online(&t.def.db, &t.def.name, &done.built, |cur| {
        let mut def = cur.clone();
        let mut dropped = None;
        for op in &at.operations {
            match op {
                Op::DropIndex { name } => {
                    let name = &name.value;
                    def.secondary.retain(|i| {
                        done.built.contains(&i.id) || !i.name.eq_ignore_ascii_case(name)
                    });
                    dropped.get_or_insert(name);
                }
                Op::DropForeignKey { name, .. } => {
                    let name = &name.value;
                    def.foreign_keys.retain(|f| {
                        !f.name.eq_ignore_ascii_case(name) || done.staged.contains(&f.name)
                    });
                }
                _ => {}
            }
        }
        // Taken under the catalog's DDL lock: keys added meanwhile count.
        if let Some(name) = dropped {
            if !fkey::keys_served(&def, &cat.state()) {
                return Err(SqlError::drop_index_fk(name));
            }
        }
        check_auto_key(&def)?;
        Ok(def)
    })?;
    Ok(())
}

/// Takes back what `publish` published: the staged keys (never stored)
/// and the indexes built (`Catalog::abort_index`).
fn undo(s: &Session, t: &Arc<Table>, done: &Done) -> Result<()> {
    let cat = &s.inst.catalog;
    if !done.staged.is_empty() {
        cat.stage_def(&t.def.db, &t.def.name, |cur| {
            let mut def = cur.clone();
            def.foreign_keys.retain(|f| !done.staged.contains(&f.name));
            Ok::<_, SqlError>(def)
        })?;
    }
    let wait = ddl_wait(s);
    for id in &done.built {
        cat.abort_index(&t.def.db, &t.def.name, *id, &wait)?;
    }
    Ok(())
}
