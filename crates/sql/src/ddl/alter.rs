//! ALTER TABLE with column changes: ADD [COLUMN] (FIRST/AFTER, several at
//! once), DROP [COLUMN], MODIFY, CHANGE, RENAME COLUMN, ALTER COLUMN SET/DROP
//! DEFAULT, RENAME TO, ADD/DROP PRIMARY KEY, and index and foreign key
//! changes in the same statement. The operations are applied in order to a
//! working copy of the definition (`Work`); the result is then installed in
//! one of three ways (`Change`):
//!
//! - metadata only (renames, defaults, widening a string, dropping an
//!   index): the new definition is committed, rows untouched;
//! - instant ADD COLUMN (new columns after every existing one, outside the
//!   primary key): rows stay as they are and read the new columns' values
//!   at ALTER time from the definition (`TableDef::instant`);
//! - rebuild (everything else): rows are converted into the new definition
//!   under fresh index ids (`rel::rebuild`), with MySQL's strict conversion
//!   errors, and the new definition replaces the old one in one write.
//!
//! A rebuild runs online when it can (`online`: writers go on, the ALTER
//! fails if one of their rows does not convert); otherwise, and for the
//! other two, writers are held out while it runs (`install`): the old table is
//! frozen for transactions that begin from then on (their writes fail with
//! `TableChanged` and `dispatch` runs the statement again once the ALTER is
//! over), and the ALTER waits for older transactions to end before it copies
//! or commits. Reads go on against the old table. A crash before the commit
//! leaves the old table (the copy's entries are dropped at the next open); the
//! commit is one synced catalog write.
use super::define::{column_spec, const_eval};
use super::install::{classify, install, Change};
use super::online;
use super::{fkey, split_name};
use crate::convert::for_store;
use crate::error::{Result, SqlError};
use crate::result::Outcome;
use crate::session::Session;
use checks::{column_check, drop_constraint, order_checks, work_columns};
use rel::catalog::Table;
use rel::schema::{Check, CheckLevel, Column, ForeignKey, Index, TableDef};
use rel::value::{TypeKind, Value};
use sqlparser::ast;
use std::sync::Arc;

#[path = "alter_checks.rs"]
mod checks;

/// A column of the working definition: `slot` identifies it for keys
/// (old columns: their old position; added ones: after those), `source`
/// is its old position (None: added by this statement).
#[derive(Clone)]
pub(super) struct WCol {
    pub(super) col: Column,
    slot: usize,
    pub(super) source: Option<usize>,
}

/// The definition being altered; index and foreign key columns are slots.
pub(super) struct Work {
    pub(super) cols: Vec<WCol>,
    pk: Vec<usize>,
    /// The primary key's column family and comment.
    pk_meta: (String, String),
    secondary: Vec<Index>,
    fks: Vec<ForeignKey>,
    /// CHECK constraints (texts name columns by their current names).
    checks: Vec<Check>,
    /// A CHECK was added or redefined: existing rows are validated.
    pub(super) checks_added: bool,
    /// FOREIGN KEY clauses to add once the columns are final.
    add_fks: Vec<ast::ForeignKeyConstraint>,
    next_slot: usize,
    /// Indexes or a primary key were added (they need building).
    pub(super) keys_added: bool,
    /// AUTO_INCREMENT = n.
    pub(super) auto_inc: Option<u64>,
    /// The table's name after RENAME TO.
    db: String,
    name: String,
    /// The table's default collation (for character columns added or
    /// redefined without their own).
    collation: rel::collation::Collation,
}

fn table_label(t: &TableDef) -> String {
    t.name.clone()
}

impl Work {
    fn new(def: &TableDef) -> Work {
        Work {
            cols: def
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| WCol {
                    col: c.clone(),
                    slot: i,
                    source: Some(i),
                })
                .collect(),
            pk: if def.hidden_pk {
                vec![]
            } else {
                def.pk.columns.clone()
            },
            pk_meta: (def.pk.cf.clone(), def.pk.comment.clone()),
            secondary: def.secondary.clone(),
            fks: def.foreign_keys.clone(),
            checks: def.checks.clone(),
            checks_added: false,
            add_fks: vec![],
            next_slot: def.columns.len(),
            keys_added: false,
            auto_inc: None,
            db: def.db.clone(),
            name: def.name.clone(),
            collation: def.collation,
        }
    }

    fn any(&self, name: &str) -> Option<usize> {
        self.cols
            .iter()
            .position(|c| c.col.name.eq_ignore_ascii_case(name))
    }

    /// A column of the table as it was (not one this statement added).
    fn existing(&self, name: &str) -> Option<usize> {
        self.cols
            .iter()
            .position(|c| c.source.is_some() && c.col.name.eq_ignore_ascii_case(name))
    }

    fn slot_of(&self, name: &str) -> Option<usize> {
        self.any(name).map(|i| self.cols[i].slot)
    }

    fn place(
        &mut self,
        c: WCol,
        pos: &Option<ast::MySQLColumnPosition>,
        table: &str,
    ) -> Result<()> {
        let at = match pos {
            None => self.cols.len(),
            Some(ast::MySQLColumnPosition::First) => 0,
            Some(ast::MySQLColumnPosition::After(n)) => {
                self.any(&n.value)
                    .ok_or_else(|| SqlError::unknown_column(&n.value, table))?
                    + 1
            }
        };
        self.cols.insert(at, c);
        Ok(())
    }
}

/// Runs an ALTER TABLE that is more than index and foreign key changes.
pub fn alter(s: &mut Session, at: &ast::AlterTable) -> Result<Outcome> {
    use ast::AlterTableOperation as Op;
    let st = s.inst.catalog.state();
    let old = match crate::select::resolve_table(&st, s.db.as_deref(), &at.name) {
        Ok(t) => t,
        Err(e) if at.if_exists && e.code == crate::error::ER_NO_SUCH_TABLE => {
            s.warn("Note", e);
            return crate::result::ok();
        }
        Err(e) => return Err(e),
    };
    let label = table_label(&old.def);
    let mut w = Work::new(&old.def);
    let mut algorithm = ast::AlterTableAlgorithm::Default;
    let mut lock = ast::AlterTableLock::Default;
    let mut notes = Vec::new();
    for op in &at.operations {
        match op {
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position,
                ..
            } => {
                let spec = column_spec(
                    &column_def.name.value,
                    &column_def.data_type,
                    column_def.options.iter().map(|o| &o.option),
                    w.collation,
                )?;
                if w.any(&spec.col.name).is_some() {
                    if *if_not_exists {
                        notes.push(SqlError::duplicate_column(&spec.col.name));
                        continue;
                    }
                    return Err(SqlError::duplicate_column(&spec.col.name));
                }
                let slot = w.next_slot;
                w.next_slot += 1;
                key_options(&mut w, slot, &spec)?;
                column_check(
                    &mut w,
                    &spec.col.name,
                    column_def
                        .options
                        .iter()
                        .map(|o| (o.name.as_ref(), &o.option)),
                )?;
                w.place(
                    WCol {
                        col: spec.col,
                        slot,
                        source: None,
                    },
                    column_position,
                    &label,
                )?;
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for n in column_names {
                    match w.existing(&n.value) {
                        Some(i) => {
                            let name = w.cols[i].col.name.clone();
                            w.checks.retain(|c| {
                                !(c.level == CheckLevel::Column
                                    && c.name.eq_ignore_ascii_case(&name))
                            });
                            drop_column(&mut w, i)
                        }
                        None if *if_exists => notes.push(SqlError::cant_drop(&n.value)),
                        None => return Err(SqlError::cant_drop(&n.value)),
                    }
                }
            }
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => change_column(
                &mut w,
                &label,
                &col_name.value,
                &col_name.value,
                data_type,
                options,
                column_position,
            )?,
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => change_column(
                &mut w,
                &label,
                &old_name.value,
                &new_name.value,
                data_type,
                options,
                column_position,
            )?,
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let i = w
                    .existing(&old_column_name.value)
                    .ok_or_else(|| SqlError::unknown_column(&old_column_name.value, &label))?;
                rename_column(&mut w, i, &new_column_name.value)?;
            }
            Op::DropConstraint {
                if_exists, name, ..
            } => {
                if !drop_constraint(&mut w, &name.value) {
                    let e = SqlError::cant_drop_constraint(&name.value);
                    if !*if_exists {
                        return Err(e);
                    }
                    notes.push(e);
                }
            }
            Op::AlterColumn { column_name, op } => {
                let i = w
                    .existing(&column_name.value)
                    .ok_or_else(|| SqlError::unknown_column(&column_name.value, &label))?;
                let c = &mut w.cols[i].col;
                match op {
                    ast::AlterColumnOperation::SetDefault { value } => set_default(c, value)?,
                    ast::AlterColumnOperation::DropDefault => {
                        c.default = None;
                        c.default_now = false;
                    }
                    other => return Err(SqlError::unsupported(format!("ALTER COLUMN {other}"))),
                }
            }
            Op::RenameTable { table_name } => {
                let n = match table_name {
                    ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                };
                let (db, name) = split_name(s, n)?;
                super::check_table_name(&name)?;
                w.db = db;
                w.name = name;
            }
            Op::AddConstraint { constraint, .. } => add_constraint(&mut w, constraint)?,
            Op::DropIndex { name } => {
                let before = w.secondary.len();
                w.secondary
                    .retain(|i| !i.name.eq_ignore_ascii_case(&name.value));
                if w.secondary.len() == before {
                    if name.value.eq_ignore_ascii_case("PRIMARY") && !w.pk.is_empty() {
                        w.pk.clear();
                        w.pk_meta = Default::default();
                    } else {
                        return Err(SqlError::cant_drop(&name.value));
                    }
                }
            }
            Op::DropPrimaryKey { .. } => {
                if w.pk.is_empty() {
                    return Err(SqlError::cant_drop("PRIMARY"));
                }
                w.pk.clear();
                w.pk_meta = Default::default();
            }
            Op::DropForeignKey { name, .. } => {
                let before = w.fks.len();
                w.fks.retain(|f| !f.name.eq_ignore_ascii_case(&name.value));
                if w.fks.len() == before {
                    return Err(SqlError::cant_drop_foreign_key(&name.value));
                }
            }
            Op::Algorithm { algorithm: a, .. } => algorithm = *a,
            Op::Lock { lock: l, .. } => lock = *l,
            Op::AutoIncrement { value, .. } => {
                let v = const_eval(&ast::Expr::Value(value.clone()))?;
                w.auto_inc = Some(v.to_i128().unwrap_or(0).clamp(0, u64::MAX as i128) as u64);
            }
            other => return Err(SqlError::unsupported(format!("ALTER TABLE {other}"))),
        }
    }
    if w.cols.is_empty() {
        return Err(SqlError::cant_remove_all_columns());
    }
    order_checks(&mut w)?;
    let (mut def, positions) = finish(&w, &old.def)?;
    // The TTL follows the comment: its column may have moved, been renamed,
    // dropped or changed (4070), the primary key dropped (4069).
    def.ttl = rel::ttl::from_comment(&def.comment, &def)?;
    let checks = s.fk_checks();
    for fk in &w.add_fks {
        fkey::add(&mut def, fk, &st, checks)?;
        w.keys_added = true;
    }
    crate::check::refuse_cascaded(&def)?;
    let children = fk_consistency(&old.def, &def, &st, &positions)?;
    // The key format stays unless the rows are rewritten: a rebuild writes
    // every index in the current format (PAD SPACE segments).
    def.key_format = old.def.key_format;
    def.derive();
    // ALGORITHM=COPY (and ALTER TABLE t FORCE, read as it) always copies
    // the rows, as MariaDB does: the way to rewrite a table in the current
    // key format.
    let change = match algorithm {
        ast::AlterTableAlgorithm::Copy => Change::Rebuild,
        _ => classify(&old.def, &def, &w, &positions),
    };
    if change == Change::Rebuild {
        def.key_format = rel::keycodec::KeyFormat::PadSpace;
        def.derive();
    }
    let blocker = match change {
        Change::Rebuild => online::blocker(&st, &old, &def, &w, &positions, children.len()),
        _ => None,
    };
    let online = way(change, blocker, algorithm, lock)?;
    for n in notes {
        s.warn("Note", n);
    }
    let rows = if online {
        online::install_online(s, &old, def, &w)?
    } else {
        install(s, &old, def, change, children, &w)?
    };
    Ok(Outcome::affected(rows))
}

/// Whether a rebuild runs online (else with writers held out), honouring
/// ALGORITHM= and LOCK= as MariaDB does: a change they do not allow is
/// refused with 1846. `blocker`: why a rebuild cannot run online.
fn way(
    change: Change,
    blocker: Option<&'static str>,
    algorithm: ast::AlterTableAlgorithm,
    lock: ast::AlterTableLock,
) -> Result<bool> {
    use ast::AlterTableAlgorithm as A;
    use ast::AlterTableLock as L;
    // COPY always copies (MariaDB), whatever the change.
    if algorithm == A::Copy && lock == L::None {
        return Err(SqlError::alter_not_supported(
            "LOCK=NONE",
            "COPY algorithm requires a lock",
            "LOCK=SHARED",
        ));
    }
    if change != Change::Rebuild {
        return Ok(false);
    }
    if algorithm == A::Instant {
        return Err(SqlError::alter_not_supported(
            "ALGORITHM=INSTANT",
            "this change rewrites the table's rows",
            "ALGORITHM=COPY",
        ));
    }
    if algorithm == A::Copy {
        return Ok(false);
    }
    match blocker {
        Some(why) if lock == L::None => Err(SqlError::alter_not_supported(
            "LOCK=NONE",
            why,
            "LOCK=SHARED",
        )),
        Some(why) if algorithm == A::Inplace => Err(SqlError::alter_not_supported(
            "ALGORITHM=INPLACE",
            why,
            "ALGORITHM=COPY",
        )),
        Some(_) => Ok(false),
        // LOCK=SHARED/EXCLUSIVE ask for writers held out.
        None => Ok(matches!(lock, L::Default | L::None)),
    }
}

/// Keys a column's options declare (PRIMARY KEY, UNIQUE, REFERENCES).
fn key_options(w: &mut Work, slot: usize, spec: &super::define::ColumnSpec) -> Result<()> {
    if spec.primary {
        if !w.pk.is_empty() {
            return Err(SqlError::multiple_primary_keys());
        }
        w.pk = vec![slot];
        w.keys_added = true;
    }
    if spec.unique {
        w.secondary.push(Index {
            id: 0,
            name: unique_index_name(w, &spec.col.name),
            columns: vec![slot],
            unique: true,
            primary: false,
            ..Default::default()
        });
        w.keys_added = true;
    }
    if let Some(fk) = &spec.fk {
        w.add_fks.push(fk.clone());
    }
    Ok(())
}

fn unique_index_name(w: &Work, base: &str) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while w
        .secondary
        .iter()
        .any(|i| i.name.eq_ignore_ascii_case(&name))
        || name.eq_ignore_ascii_case("PRIMARY")
    {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// DROP COLUMN: the column leaves every index (an index left without
/// columns goes), as MySQL does.
fn drop_column(w: &mut Work, i: usize) {
    let slot = w.cols[i].slot;
    w.cols.remove(i);
    w.pk.retain(|&c| c != slot);
    for ix in &mut w.secondary {
        ix.columns.retain(|&c| c != slot);
    }
    w.secondary.retain(|ix| !ix.columns.is_empty());
}

fn rename_column(w: &mut Work, i: usize, new: &str) -> Result<()> {
    if let Some(j) = w.any(new) {
        if j != i {
            return Err(SqlError::duplicate_column(new));
        }
    }
    let old = std::mem::replace(&mut w.cols[i].col.name, new.to_string());
    if old != new {
        for c in &mut w.checks {
            if c.level == CheckLevel::Column && c.name.eq_ignore_ascii_case(&old) {
                c.name = new.to_string();
            }
            c.expr = crate::check::rename_column(&c.expr, &old, new)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn change_column(
    w: &mut Work,
    label: &str,
    old_name: &str,
    new_name: &str,
    data_type: &ast::DataType,
    options: &[ast::ColumnOption],
    pos: &Option<ast::MySQLColumnPosition>,
) -> Result<()> {
    let i = w
        .existing(old_name)
        .ok_or_else(|| SqlError::unknown_column(old_name, label))?;
    let spec = column_spec(new_name, data_type, options.iter(), w.collation)?;
    let slot = w.cols[i].slot;
    // The primary key of the table already holds it: MODIFY ... PRIMARY KEY
    // declares a second one (MySQL: 1068).
    key_options(w, slot, &spec)?;
    rename_column(w, i, new_name)?;
    // The column's own check is replaced by the one of the new definition.
    w.checks
        .retain(|c| !(c.level == CheckLevel::Column && c.name.eq_ignore_ascii_case(new_name)));
    column_check(w, new_name, options.iter().map(|o| (None, o)))?;
    let mut c = w.cols.remove(i);
    c.col = spec.col;
    if pos.is_none() {
        w.cols.insert(i, c);
    } else {
        w.place(c, pos, label)?;
    }
    Ok(())
}

fn set_default(c: &mut Column, value: &ast::Expr) -> Result<()> {
    let (v, now) = super::define::default_expr(value)?;
    if now && !matches!(c.ty.kind, TypeKind::DateTime | TypeKind::Timestamp) {
        return Err(SqlError::invalid_default(&c.name));
    }
    c.default_now = now;
    c.default = match v {
        None => None,
        Some(v) if v.is_null() => {
            if !c.nullable {
                return Err(SqlError::invalid_default(&c.name));
            }
            Some(Value::Null)
        }
        Some(v) => Some(for_store(v, c, 0).map_err(|_| SqlError::invalid_default(&c.name))?),
    };
    Ok(())
}

fn add_constraint(w: &mut Work, con: &ast::TableConstraint) -> Result<()> {
    crate::accept::check_constraint(con)?;
    let slots = |w: &Work, cols: &[ast::IndexColumn]| -> Result<Vec<usize>> {
        cols.iter()
            .map(|ic| {
                let n = match &ic.column.expr {
                    ast::Expr::Identifier(i) => i.value.clone(),
                    ast::Expr::Function(f) => f.name.to_string(),
                    other => other.to_string(),
                };
                w.slot_of(&n).ok_or_else(|| SqlError::no_key_column(n))
            })
            .collect()
    };
    let first_name = |w: &Work, slot: usize| {
        w.cols
            .iter()
            .find(|c| c.slot == slot)
            .map(|c| c.col.name.clone())
            .unwrap_or_default()
    };
    let (cols, name, unique, (cf, comment)) = match con {
        ast::TableConstraint::PrimaryKey(pk) => {
            if !w.pk.is_empty() {
                return Err(SqlError::multiple_primary_keys());
            }
            w.pk = slots(w, &pk.columns)?;
            w.pk_meta = crate::accept::index_meta(&pk.index_options)?;
            w.keys_added = true;
            return Ok(());
        }
        ast::TableConstraint::Index(ix) => (
            slots(w, &ix.columns)?,
            ix.name.as_ref().map(|n| n.value.clone()),
            false,
            crate::accept::index_meta(&ix.index_options)?,
        ),
        ast::TableConstraint::Unique(u) => (
            slots(w, &u.columns)?,
            u.name
                .as_ref()
                .or(u.index_name.as_ref())
                .map(|n| n.value.clone()),
            true,
            crate::accept::index_meta(&u.index_options)?,
        ),
        ast::TableConstraint::ForeignKey(fk) => {
            w.add_fks.push(fk.clone());
            return Ok(());
        }
        ast::TableConstraint::Check(c) => {
            let cols = work_columns(w);
            let name = c.name.as_ref().map(|n| n.value.clone());
            crate::check::add_table_check(&mut w.checks, name, &c.expr, &cols)?;
            w.checks_added = true;
            return Ok(());
        }
        other => return Err(SqlError::unsupported(format!("ALTER TABLE ADD {other}"))),
    };
    let name = match name {
        Some(n) => {
            if w.secondary.iter().any(|i| i.name.eq_ignore_ascii_case(&n)) {
                return Err(SqlError::duplicate_key_name(n));
            }
            n
        }
        None => unique_index_name(w, &first_name(w, cols[0])),
    };
    w.secondary.push(Index {
        id: 0,
        name,
        columns: cols,
        unique,
        primary: false,
        cf,
        comment,
    });
    w.keys_added = true;
    Ok(())
}

/// The new definition from the working copy, and for each slot its new
/// position (None: dropped).
fn finish(w: &Work, old: &TableDef) -> Result<(TableDef, Vec<Option<usize>>)> {
    let mut positions = vec![None; w.next_slot];
    for (i, c) in w.cols.iter().enumerate() {
        positions[c.slot] = Some(i);
    }
    let map =
        |cols: &[usize]| -> Vec<usize> { cols.iter().filter_map(|&s| positions[s]).collect() };
    let mut cols: Vec<Column> = w.cols.iter().map(|c| c.col.clone()).collect();
    let pk_cols = map(&w.pk);
    for &c in &pk_cols {
        cols[c].nullable = false;
    }
    let hidden = pk_cols.is_empty();
    let pk = Index {
        id: old.pk.id,
        name: "PRIMARY".into(),
        columns: pk_cols,
        unique: true,
        primary: true,
        cf: w.pk_meta.0.clone(),
        comment: w.pk_meta.1.clone(),
    };
    let secondary: Vec<Index> = w
        .secondary
        .iter()
        .map(|ix| Index {
            columns: map(&ix.columns),
            ..ix.clone()
        })
        .collect();
    let mut def = TableDef::new(
        w.db.clone(),
        w.name.clone(),
        cols,
        pk,
        hidden,
        secondary,
        old.engine.clone(),
        old.comment.clone(),
    );
    def.collation = w.collation;
    def.checks = w.checks.clone();
    def.foreign_keys = w
        .fks
        .iter()
        .map(|f| ForeignKey {
            columns: map(&f.columns),
            ..f.clone()
        })
        .collect();
    if let Some(a) = def.auto_inc_column() {
        let keyed = def.pk.columns.first() == Some(&a)
            || def
                .secondary
                .iter()
                .any(|ix| ix.columns.first() == Some(&a));
        if !keyed || def.columns.iter().filter(|c| c.auto_increment).count() > 1 {
            return Err(SqlError::wrong_auto_key());
        }
    }
    Ok((def, positions))
}

/// Checks foreign keys against the change (a column a key uses dropped or
/// made incompatible: 1553, 1829, 1832, 1833) and returns the children whose
/// keys must follow a renamed table or column, with their new definitions.
fn fk_consistency(
    old: &TableDef,
    new: &TableDef,
    st: &rel::catalog::CatalogState,
    positions: &[Option<usize>],
) -> Result<Vec<(Arc<Table>, TableDef)>> {
    // This table's own keys: a column dropped from one (1553, naming the
    // index it needs) or no longer matching its parent (1832).
    for (k, fk) in old.foreign_keys.iter().enumerate() {
        let Some(now) = new.foreign_keys.iter().find(|f| f.name == fk.name) else {
            continue;
        };
        if now.columns.len() != fk.columns.len() {
            let ix = rel::fk::index_led_by(old, &fk.columns)
                .map(|i| i.name.clone())
                .unwrap_or_else(|| fk.name.clone());
            return Err(SqlError::drop_index_fk(ix));
        }
        let self_ref = fk.parent_db == old.db && fk.parent_table == old.name;
        let parent = if self_ref {
            Some(new.clone())
        } else {
            st.table(&fk.parent_db, &fk.parent_table)
                .map(|t| t.def.clone())
        };
        if let Some(p) = parent {
            let pcols = rel::fk::resolve_columns(&p, &now.parent_columns);
            for (i, &c) in now.columns.iter().enumerate() {
                let fits = pcols
                    .as_ref()
                    .and_then(|pc| pc.get(i))
                    .is_none_or(|&pc| fkey::compatible(&new.columns[c].ty, &p.columns[pc].ty));
                let was = &old.columns[fk.columns[i]].ty;
                if !fits && *was != new.columns[c].ty {
                    return Err(SqlError::fk_column_change(
                        &new.columns[c].name,
                        &old.foreign_keys[k].name,
                    ));
                }
            }
        }
    }
    // Keys of other tables referencing this one.
    let mut out: Vec<(Arc<Table>, TableDef)> = Vec::new();
    let renamed_table = new.db != old.db || new.name != old.name;
    for (child, k) in st.children(&old.db, &old.name) {
        let self_ref = child.def.db == old.db && child.def.name == old.name;
        if self_ref {
            continue;
        }
        let fk = &child.def.foreign_keys[*k];
        let mut names = Vec::new();
        for (i, pname) in fk.parent_columns.iter().enumerate() {
            let Some(oc) = old.column(pname) else {
                names.push(pname.clone());
                continue;
            };
            let Some(nc) = positions.get(oc).copied().flatten() else {
                return Err(SqlError::fk_column_drop_child(
                    pname,
                    &fk.name,
                    format!("`{}`.`{}`", child.def.db, child.def.name),
                ));
            };
            let cc = &child.def.columns[fk.columns[i]];
            if old.columns[oc].ty != new.columns[nc].ty
                && !fkey::compatible(&cc.ty, &new.columns[nc].ty)
            {
                return Err(SqlError::fk_column_change_child(
                    &old.columns[oc].name,
                    &fk.name,
                    format!("{}/{}", child.def.db, child.def.name),
                ));
            }
            names.push(new.columns[nc].name.clone());
        }
        if names != fk.parent_columns || renamed_table {
            let pos = out.iter().position(|(t, _)| Arc::ptr_eq(t, child));
            let i = match pos {
                Some(i) => i,
                None => {
                    out.push((child.clone(), child.def.clone()));
                    out.len() - 1
                }
            };
            let f = &mut out[i].1.foreign_keys[*k];
            f.parent_columns = names;
            f.parent_db = new.db.clone();
            f.parent_table = new.name.clone();
        }
    }
    Ok(out)
}
