//! DDL: CREATE/DROP DATABASE, CREATE TABLE, DROP TABLE, TRUNCATE,
//! CREATE/DROP INDEX and ALTER TABLE ADD/DROP INDEX (a new index is
//! published, then filled from a snapshot by `rel::build` while writers
//! maintain it). Each runs outside any transaction (`dispatch` commits
//! first, as MySQL does). Table definitions are translated in `define`.
mod alter;
mod coltypes;
mod create;
mod define;
mod fkey;
mod install;
mod online;
mod online_keys;
mod rename;
pub mod sortbuild;
pub(crate) mod view;

pub use coltypes::{json_alias_alter, json_alias_create};

pub use view::create_text as view_create_text;

pub use define::{column_type, const_eval, index_columns, table_def};
pub(crate) use install::{is_current, name_of, Frozen};

use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome};
use crate::select::resolve_table;
use crate::session::Session;
use crate::stmt::{name_parts, DdlStmt};
use rel::catalog::{Catalog, Table};
use rel::collation::Collation;
use rel::schema::Index;
use sqlparser::ast;
use std::sync::Arc;

fn split_name(s: &Session, n: &ast::ObjectName) -> Result<(String, String)> {
    let p = name_parts(n);
    match p.as_slice() {
        [t] => Ok((s.db.clone().ok_or_else(SqlError::no_db)?, t.clone())),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::parse("bad name")),
    }
}

/// The default collation of database `db` (the server's when it does not
/// exist: creating a table in it fails later with 1049); an error naming
/// the problem when its stored record could not be read.
pub fn db_collation(s: &Session, db: &str) -> Result<Collation> {
    match s.inst.catalog.state().databases.get(db) {
        None => Ok(Collation::DEFAULT),
        Some(Ok(c)) => Ok(*c),
        Some(Err(why)) => Err(unreadable_db(db, why)),
    }
}

/// The error for using what a database's unreadable record held (its
/// default collation): the record is kept until ALTER DATABASE rewrites it.
pub fn unreadable_db(db: &str, why: &str) -> SqlError {
    SqlError::engine(format!(
        "the record of database '{db}' cannot be read ({why}); \
         ALTER DATABASE `{db}` CHARACTER SET ... or COLLATE ... rewrites it"
    ))
}

/// A database name MariaDB refuses (1102): empty, ending with a space, or
/// over 64 characters.
fn check_db_name(name: &str) -> Result<()> {
    if rel::schema::bad_name(name) || name.chars().count() > rel::schema::MAX_IDENT {
        return Err(SqlError::wrong_db_name(name));
    }
    Ok(())
}

/// A new table's or view's name MariaDB refuses (1103): empty, ending with
/// a space, or over 64 characters.
pub(crate) fn check_table_name(name: &str) -> Result<()> {
    if rel::schema::bad_name(name) || name.chars().count() > rel::schema::MAX_IDENT {
        return Err(SqlError::wrong_table_name(name));
    }
    Ok(())
}

/// Runs a DDL statement.
pub fn run(s: &mut Session, stmt: &DdlStmt) -> Result<Outcome> {
    match stmt {
        DdlStmt::CreateDatabase {
            name,
            if_not_exists,
            or_replace,
            charset,
            collate,
        } => {
            let coll = crate::collate::resolve(
                charset.as_deref(),
                collate.as_deref(),
                Collation::DEFAULT,
            )?;
            if *or_replace {
                return Err(SqlError::unsupported("CREATE OR REPLACE DATABASE"));
            }
            check_db_name(name)?;
            let created = s.inst.catalog.create_database(name, *if_not_exists, coll)?;
            Ok(Outcome::affected(created as u64))
        }
        DdlStmt::AlterDatabase {
            name,
            charset,
            collate,
        } => {
            let name = match name.as_ref().or(s.db.as_ref()) {
                Some(n) => n.clone(),
                None => return Err(SqlError::no_db()),
            };
            let cur = match s.inst.catalog.state().databases.get(&name) {
                None => return Err(SqlError::bad_db(&name)),
                Some(Ok(c)) => *c,
                // A new default repairs an unreadable record; one taken
                // from it cannot be.
                Some(Err(why)) if charset.is_none() && collate.is_none() => {
                    return Err(unreadable_db(&name, why))
                }
                Some(Err(_)) => Collation::DEFAULT,
            };
            // The pair resolves as in CREATE DATABASE (CHARACTER SET alone
            // gives that charset's default collation).
            let coll = crate::collate::resolve(charset.as_deref(), collate.as_deref(), cur)?;
            s.inst.catalog.alter_database(&name, coll)?;
            Ok(Outcome::affected(1))
        }
        DdlStmt::CreateTable(ct) => {
            if let Some(like) = &ct.like {
                let n = match like {
                    ast::CreateTableLikeKind::Parenthesized(l)
                    | ast::CreateTableLikeKind::Plain(l) => {
                        if l.defaults.is_some() {
                            return Err(SqlError::unsupported(
                                "CREATE TABLE ... LIKE ... INCLUDING/EXCLUDING DEFAULTS",
                            ));
                        }
                        &l.name
                    }
                };
                if ct.query.is_some() || !ct.columns.is_empty() {
                    return Err(SqlError::parse(
                        "CREATE TABLE ... LIKE takes no columns or SELECT",
                    ));
                }
                return create::create_like(s, ct, n);
            }
            if let Some(q) = &ct.query {
                return create::create_as_select(s, ct, q);
            }
            let (db, name) = split_name(s, &ct.name)?;
            let warnings = crate::accept::check_create_table(ct)?;
            let (mut def, fks) = table_def(ct, &db, &name, db_collation(s, &db)?)?;
            let st = s.inst.catalog.state();
            if !(ct.if_not_exists && st.table(&db, &name).is_some()) {
                let checks = s.fk_checks();
                for fk in &fks {
                    fkey::add(&mut def, fk, &st, checks)?;
                }
            }
            crate::check::refuse_cascaded(&def)?;
            s.inst.catalog.create_table(def, ct.if_not_exists)?;
            for w in warnings {
                s.warn("Warning", SqlError::not_honoured(w));
            }
            ok()
        }
        DdlStmt::CreateIndex(ci) => {
            if ci.predicate.is_some() || !ci.include.is_empty() || !ci.with.is_empty() {
                return Err(SqlError::unsupported(
                    "partial and covering (INCLUDE) indexes",
                ));
            }
            crate::accept::check_index_options(&ci.index_options)?;
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &ci.table_name)?;
            // Held until the index is published: no bulk load or other DDL
            // of the table meanwhile. The table is looked up again under
            // it: a DDL that held it may have changed the columns.
            let _held = crate::bulk::lock::lock_tables(s, vec![name_of(&t)])?;
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &ci.table_name)?;
            let cols = index_columns(&t, &ci.columns)?;
            let name = ci
                .name
                .as_ref()
                .map(|n| name_parts(n).join("."))
                .unwrap_or_else(|| t.def.columns[cols[0]].name.clone());
            let meta = crate::accept::index_meta(&ci.index_options)?;
            create_index(s, &t, &name, cols, ci.unique, ci.if_not_exists, meta)?;
            ok()
        }
        DdlStmt::DropTables {
            names,
            if_exists,
            temporary: true,
        } => {
            // No temporary tables exist: every name is unknown, nothing is dropped or logged.
            crate::binlogsql::retext_ddl(s, None, stmt);
            let mut missing = Vec::new();
            for n in names {
                let (db, t) = split_name(s, n)?;
                missing.push(format!("{db}.{t}"));
            }
            if !*if_exists {
                return Err(SqlError::unknown_table(missing.join(",")));
            }
            for m in missing {
                s.warn("Note", SqlError::unknown_table(m));
            }
            ok()
        }
        DdlStmt::DropTables {
            names, if_exists, ..
        } => {
            let mut missing = Vec::new();
            let listed = names
                .iter()
                .map(|n| split_name(s, n))
                .collect::<Result<Vec<_>>>()?;
            if s.fk_checks() {
                // Refused before any is dropped: a table other tables' keys reference.
                let st = s.inst.catalog.state();
                for (db, t) in &listed {
                    if let Some(t) = st.table(db, t) {
                        if fkey::referenced_from_outside(&t.def, &st, &listed).is_some() {
                            return Err(SqlError::table_is_referenced());
                        }
                    }
                }
            }
            // Waits for bulk loads of the tables to end.
            let _held = crate::bulk::lock::lock_tables(s, listed.clone())?;
            // DROP TABLE names no view: MariaDB's 1965 (a note with IF EXISTS).
            let st = s.inst.catalog.state();
            let is_view = |(d, t): &(String, String)| {
                let k = (d.clone(), t.clone());
                st.view(d, t).is_some() || st.unreadable.get(&k).is_some_and(|u| u.view)
            };
            let views: Vec<String> = listed
                .iter()
                .filter(|n| is_view(n))
                .map(|(d, t)| format!("{d}.{t}"))
                .collect();
            let tables: Vec<(String, String)> =
                listed.iter().filter(|n| !is_view(n)).cloned().collect();
            drop(st);
            // One catalog write drops them all, its record worded under the
            // DDL lock from what is there.
            let dropped = s
                .inst
                .catalog
                .drop_tables(&tables, |d| log_drop_text(s, stmt, &tables, d, *if_exists))?;
            for ((db, t), d) in tables.iter().zip(&dropped) {
                match d {
                    rel::catalog::Dropped::Absent => missing.push(format!("{db}.{t}")),
                    rel::catalog::Dropped::Unreadable { data_left: true } => {
                        s.warn("Warning", SqlError::unreadable_data_left(db, t))
                    }
                    _ => {}
                }
            }
            if !missing.is_empty() {
                if *if_exists {
                    for m in missing {
                        s.warn("Note", SqlError::unknown_table(m));
                    }
                } else {
                    return Err(SqlError::unknown_table(missing.join(",")));
                }
            }
            if let Some(v) = views.first() {
                if !*if_exists {
                    return Err(SqlError::is_a_view(v));
                }
                for v in views {
                    s.warn("Note", SqlError::is_a_view(v));
                }
            }
            ok()
        }
        DdlStmt::DropDatabase { name, if_exists } => {
            check_db_name(name)?;
            let dropped = s
                .inst
                .catalog
                .drop_database(name, *if_exists)
                .map_err(|e| match e {
                    rel::Error::NoSuchDb(d) => SqlError::db_drop_missing(d),
                    other => other.into(),
                })?;
            match dropped {
                Some(n) => {
                    if s.db.as_deref() == Some(name) {
                        s.db = None;
                    }
                    Ok(Outcome::affected(n as u64))
                }
                None => {
                    s.warn("Note", SqlError::db_drop_missing(name));
                    ok()
                }
            }
        }
        DdlStmt::DropIndex { name, table } => {
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), table)?;
            let _held = crate::bulk::lock::lock_tables(s, vec![name_of(&t)])?;
            drop_index(&s.inst.catalog, &t, name)?;
            ok()
        }
        DdlStmt::Truncate(names) => {
            for n in names {
                let st = s.inst.catalog.state();
                let t = resolve_table(&st, s.db.as_deref(), n)?;
                let _held = crate::bulk::lock::lock_tables(s, vec![name_of(&t)])?;
                if s.fk_checks() {
                    if let Some(c) = fkey::referenced_from_outside(&t.def, &st, &[]) {
                        return Err(SqlError::truncate_referenced(c));
                    }
                }
                truncate(&s.inst.catalog, &t)?;
            }
            ok()
        }
        DdlStmt::AlterTable(at) => alter_table(s, at),
        DdlStmt::RenameTables(pairs) => rename::rename_tables(s, pairs),
        DdlStmt::CreateView { view, alter, check } => view::create_view(s, view, *alter, *check),
        DdlStmt::DropViews { names, if_exists } => view::drop_views(s, names, *if_exists),
    }
}

/// What the binary log records for DROP TABLE (MariaDB's generated form):
/// the tables dropped (all the names with IF EXISTS, which a replica runs
/// without error; views were left out of `tables`); nothing when none is.
fn log_drop_text(
    s: &Session,
    stmt: &DdlStmt,
    tables: &[(String, String)],
    dropped: &[rel::catalog::Dropped],
    if_exists: bool,
) {
    let names: Vec<String> = tables
        .iter()
        .zip(dropped)
        .filter(|(_, d)| if_exists || **d != rel::catalog::Dropped::Absent)
        .map(|((d, t), _)| logged_name(s, d, t))
        .collect();
    let text = (!names.is_empty()).then(|| {
        let ie = if if_exists { "IF EXISTS " } else { "" };
        format!(
            "DROP TABLE {ie}{} /* generated by server */",
            names.join(",")
        )
    });
    crate::binlogsql::retext_ddl(s, text.as_deref(), stmt);
}

/// A table or view as the statements the server words for the binary log
/// name it: quoted, qualified unless it is in the current database.
fn logged_name(s: &Session, db: &str, name: &str) -> String {
    let q = |x: &str| format!("`{}`", x.replace('`', "``"));
    match s.db.as_deref() {
        Some(cur) if cur == db => q(name),
        _ => format!("{}.{}", q(db), q(name)),
    }
}

/// ALTER TABLE: index and foreign key changes alone run online, all or
/// nothing (`online_keys`; several at once, all checked before any runs);
/// anything else goes to `alter`.
fn alter_table(s: &mut Session, at: &ast::AlterTable) -> Result<Outcome> {
    use ast::AlterTableOperation as Op;
    let online = !at.operations.is_empty()
        && at.operations.iter().all(|op| match op {
            Op::AddConstraint { constraint, .. } => matches!(
                constraint,
                ast::TableConstraint::Index(_)
                    | ast::TableConstraint::Unique(_)
                    | ast::TableConstraint::ForeignKey(_)
            ),
            Op::DropIndex { name } => !name.value.eq_ignore_ascii_case("PRIMARY"),
            Op::DropForeignKey { .. } => true,
            _ => false,
        });
    if !online {
        return alter::alter(s, at);
    }
    let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &at.name)?;
    // No bulk load or other DDL of the table until the new definition is
    // stored; the table is looked up again under the lock (a DDL that held
    // it may have changed the columns the plan refers to by position).
    let _held = crate::bulk::lock::lock_tables(s, vec![name_of(&t)])?;
    let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &at.name)?;
    // Every operation is checked before any runs: no half-applied ALTER.
    for op in &at.operations {
        match op {
            ast::AlterTableOperation::AddConstraint { constraint, .. } => {
                crate::accept::check_constraint(constraint)?
            }
            ast::AlterTableOperation::DropIndex { .. } => {}
            ast::AlterTableOperation::DropForeignKey { name, .. } => {
                if !t
                    .def
                    .foreign_keys
                    .iter()
                    .any(|f| f.name.eq_ignore_ascii_case(&name.value))
                {
                    return Err(SqlError::cant_drop_foreign_key(&name.value));
                }
            }
            other => return Err(SqlError::unsupported(format!("ALTER TABLE {other}"))),
        }
    }
    online_keys::alter(s, at, &t)
}

/// CREATE INDEX: publishes the index to writers
/// only, fills it from a snapshot of the table (by sorted runs ingested as
/// table files with writers held out, or online in batches: `sortbuild`),
/// then stores the definition with it (a crash before leaves the old definition, and the
/// entries written so far are dropped at the next open).
/// Before filling it, waits (lock_wait_timeout) for transactions that
/// started before the index was published to end: they do not maintain it.
/// The caller holds the table's bulk lock (taken before `t` was looked up).
pub fn create_index(
    s: &Session,
    t: &Arc<Table>,
    name: &str,
    cols: Vec<usize>,
    unique: bool,
    if_not_exists: bool,
    (cf, comment): (String, String),
) -> Result<()> {
    let cat = &s.inst.catalog;
    if if_not_exists
        && t.def
            .indexes()
            .chain(&t.building)
            .any(|ix| ix.name.eq_ignore_ascii_case(name))
    {
        return Ok(());
    }
    let ix = Index {
        id: 0,
        name: name.to_string(),
        columns: cols,
        unique,
        primary: false,
        cf,
        comment,
    };
    let mut built = Vec::new();
    let r = online_keys::build(s, t, &t.def, ix, &mut built)
        .and_then(|ix| Ok(cat.finish_index(&t.def.db, &t.def.name, ix.id)?));
    if let Err(e) = r {
        // Undo: writers stop maintaining it; once those that planned with
        // it have ended, its entries go.
        for id in built {
            cat.abort_index(&t.def.db, &t.def.name, id, &ddl_wait(s))?;
        }
        return Err(e);
    }
    Ok(())
}

/// DROP INDEX.
pub fn drop_index(cat: &Catalog, t: &Arc<Table>, name: &str) -> Result<()> {
    if name.eq_ignore_ascii_case("PRIMARY") {
        return Err(SqlError::unsupported("dropping the primary key"));
    }
    replace_current(cat, t, false, false, |t| {
        let mut def = t.def.clone();
        let before = def.secondary.len();
        def.secondary.retain(|i| !i.name.eq_ignore_ascii_case(name));
        if def.secondary.len() == before {
            return Err(SqlError::cant_drop(name));
        }
        if fkey::index_needed(&t.def, name, &cat.state()) {
            return Err(SqlError::drop_index_fk(name));
        }
        check_auto_key(&def)?;
        Ok(def)
    })?;
    Ok(())
}

/// An AUTO_INCREMENT column must lead a key (1075), after any change to the
/// table's indexes.
pub(crate) fn check_auto_key(def: &rel::schema::TableDef) -> Result<()> {
    if let Some(a) = def.auto_inc_column() {
        if def.pk.columns.first() != Some(&a)
            && !def.secondary.iter().any(|i| i.columns.first() == Some(&a))
        {
            return Err(SqlError::wrong_auto_key());
        }
    }
    Ok(())
}

/// TRUNCATE: new index ids, old data reclaimed by range deletion.
pub fn truncate(cat: &Catalog, t: &Arc<Table>) -> Result<()> {
    replace_current(cat, t, true, true, |cur| Ok(cur.def.clone()))?;
    Ok(())
}

/// Replaces the current definition of `t`'s table by `change` applied to
/// it (`Catalog::replace_table`); when another change replaced the table
/// between reading it and writing (an online index build finishing), the
/// change is derived again from the newer table, never written over it.
pub(crate) fn replace_current(
    cat: &Catalog,
    t: &Table,
    fresh_pk: bool,
    reset_counters: bool,
    change: impl Fn(&Arc<Table>) -> Result<rel::schema::TableDef>,
) -> Result<Arc<Table>> {
    let (db, name) = (&t.def.db, &t.def.name);
    loop {
        let cur = cat
            .state()
            .table(db, name)
            .cloned()
            .ok_or_else(|| SqlError::no_table(format!("{db}.{name}")))?;
        let def = change(&cur)?;
        match cat.replace_table(&cur, def, fresh_pk, reset_counters) {
            Err(rel::Error::TableChanged(_))
                if !cat
                    .state()
                    .table(db, name)
                    .is_some_and(|now| Arc::ptr_eq(now, &cur)) => {}
            r => return Ok(r?),
        }
    }
}

/// Waits for transactions older than a catalog version, up to the
/// session's lock wait timeout; false then or at once when the session is
/// killed (`wait_error` says which).
pub(super) fn ddl_wait(s: &Session) -> impl Fn(u64) -> bool + '_ {
    let secs = s
        .get_var("lock_wait_timeout", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(50)
        .clamp(1, 86400) as u64;
    move |v| {
        s.inst
            .wait_for_sessions(v, std::time::Duration::from_secs(secs.min(3600)), &|| {
                s.proc.kill_error().is_some()
            })
    }
}

/// The error of a `ddl_wait` that returned false: the session's KILL, or
/// 1205.
pub(super) fn wait_error(s: &Session) -> SqlError {
    s.proc
        .kill_error()
        .unwrap_or_else(SqlError::lock_wait_timeout)
}
