//! FOREIGN KEY definitions: CREATE TABLE's (table and column level) and
//! ALTER TABLE ADD/DROP FOREIGN KEY's, turned into `rel::schema::ForeignKey`
//! and checked against the parent as InnoDB checks them (error 1005, errno
//! 150), with the child index InnoDB adds when none is led by the key's
//! columns. Enforcement on row writes is `rel::fk`.
use crate::error::{Result, SqlError};
use crate::stmt::name_parts;
use rel::catalog::CatalogState;
use rel::fk::{index_led_by, resolve_columns};
use rel::schema::{FkAction, ForeignKey, Index, TableDef};
use rel::value::{ColumnType, TypeKind};
use sqlparser::ast;

fn incorrectly_formed(def: &TableDef) -> SqlError {
    SqlError::cant_create_table(
        &def.db,
        &def.name,
        150,
        "Foreign key constraint is incorrectly formed",
    )
}

fn action(a: &Option<ast::ReferentialAction>) -> Result<FkAction> {
    Ok(match a {
        None | Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => {
            return Err(SqlError::unsupported("ON DELETE/UPDATE SET DEFAULT"))
        }
    })
}

/// Whether a child column of type `a` may reference a parent column of
/// type `b`: the same key image for equal values (InnoDB: same integer
/// size and sign, same DECIMAL, strings of one kind whatever their length).
pub(super) fn compatible(a: &ColumnType, b: &ColumnType) -> bool {
    use TypeKind as K;
    let text = |k: K| matches!(k, K::Char | K::VarChar | K::Text);
    let bin = |k: K| matches!(k, K::Binary | K::VarBinary | K::Blob);
    if text(a.kind) || bin(a.kind) {
        return (text(a.kind) && text(b.kind)) || (bin(a.kind) && bin(b.kind));
    }
    match a.kind {
        K::Decimal => b.kind == K::Decimal && a.len == b.len && a.scale == b.scale,
        K::DateTime | K::Timestamp | K::Time => a.kind == b.kind && a.scale == b.scale,
        _ => a.kind == b.kind && a.unsigned == b.unsigned,
    }
}

/// Adds the foreign key `fk` to `def` (a table being created, or ALTER
/// TABLE's copy of one): resolves and checks it, names it (given name,
/// else `<table>_ibfk_<n>`) and adds a child index if none is led by its
/// columns. `checks`: foreign_key_checks (off, the parent may be missing).
/// Returns the name of the index added, if one was.
pub fn add(
    def: &mut TableDef,
    fk: &ast::ForeignKeyConstraint,
    st: &CatalogState,
    checks: bool,
) -> Result<Option<String>> {
    crate::accept::check_foreign_key(fk)?;
    let cols = fk
        .columns
        .iter()
        .map(|c| {
            def.column(&c.value)
                .ok_or_else(|| SqlError::no_key_column(&c.value))
        })
        .collect::<Result<Vec<usize>>>()?;
    if cols.is_empty() || cols.len() != fk.referred_columns.len() {
        return Err(incorrectly_formed(def));
    }
    let (parent_db, parent_table) = match name_parts(&fk.foreign_table).as_slice() {
        [t] => (def.db.clone(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::parse("bad table name")),
    };
    let given = fk
        .name
        .as_ref()
        .or(fk.index_name.as_ref())
        .map(|n| n.value.clone());
    let name = match &given {
        Some(n) => n.clone(),
        None => {
            let base = format!("{}_ibfk_", def.name);
            let n = def
                .foreign_keys
                .iter()
                .filter_map(|f| f.name.strip_prefix(&base)?.parse::<u32>().ok())
                .max()
                .unwrap_or(0);
            format!("{base}{}", n + 1)
        }
    };
    // Constraint names are unique within a database (InnoDB: errno 121).
    let taken = def
        .foreign_keys
        .iter()
        .any(|f| f.name.eq_ignore_ascii_case(&name))
        || st.tables.values().any(|t| {
            t.def.db == def.db
                && t.def.name != def.name
                && t.def
                    .foreign_keys
                    .iter()
                    .any(|f| f.name.eq_ignore_ascii_case(&name))
        });
    if taken {
        return Err(SqlError::cant_create_table(
            &def.db,
            &def.name,
            121,
            "Duplicate key on write or update",
        ));
    }
    let key = ForeignKey {
        name: name.clone(),
        columns: cols.clone(),
        parent_db,
        parent_table,
        parent_columns: fk
            .referred_columns
            .iter()
            .map(|c| c.value.clone())
            .collect(),
        on_delete: action(&fk.on_delete)?,
        on_update: action(&fk.on_update)?,
    };
    let set_null = key.on_delete == FkAction::SetNull || key.on_update == FkAction::SetNull;
    if set_null && cols.iter().any(|&c| !def.columns[c].nullable) {
        return Err(incorrectly_formed(def));
    }
    let self_ref = key.parent_db == def.db && key.parent_table == def.name;
    let parent = if self_ref {
        Some(def.clone())
    } else {
        st.table(&key.parent_db, &key.parent_table)
            .map(|t| t.def.clone())
    };
    match &parent {
        None if checks => return Err(incorrectly_formed(def)),
        None => {}
        Some(p) => {
            let pcols =
                resolve_columns(p, &key.parent_columns).ok_or_else(|| incorrectly_formed(def))?;
            if index_led_by(p, &pcols).is_none() {
                return Err(incorrectly_formed(def));
            }
            let fits = cols
                .iter()
                .zip(&pcols)
                .all(|(&c, &pc)| compatible(&def.columns[c].ty, &p.columns[pc].ty));
            if !fits {
                return Err(incorrectly_formed(def));
            }
        }
    }
    let mut added = None;
    if index_led_by(def, &cols).is_none() {
        let mut ix_name = given.unwrap_or_else(|| def.columns[cols[0]].name.clone());
        let base = ix_name.clone();
        let mut n = 2;
        while def.indexes().any(|i| i.name.eq_ignore_ascii_case(&ix_name)) {
            ix_name = format!("{base}_{n}");
            n += 1;
        }
        def.secondary.push(Index {
            id: 0,
            name: ix_name.clone(),
            columns: cols,
            unique: false,
            primary: false,
            ..Default::default()
        });
        added = Some(ix_name);
    }
    def.foreign_keys.push(key);
    Ok(added)
}

/// True when dropping index `name` of `def` would leave one of its foreign
/// keys, or a foreign key referencing it, without an index (error 1553).
pub fn index_needed(def: &TableDef, name: &str, st: &CatalogState) -> bool {
    let mut after = def.clone();
    after
        .secondary
        .retain(|i| !i.name.eq_ignore_ascii_case(name));
    !keys_served(&after, st)
}

/// Whether every foreign key of `def` (child side) and every key of
/// another table referencing it (parent side) has an index of `def` led
/// by its columns.
pub fn keys_served(def: &TableDef, st: &CatalogState) -> bool {
    let child_side = def
        .foreign_keys
        .iter()
        .all(|fk| index_led_by(def, &fk.columns).is_some());
    let parent_side = st.children(&def.db, &def.name).iter().all(|(c, k)| {
        let Some(fk) = c.def.foreign_keys.get(*k) else {
            return true;
        };
        resolve_columns(def, &fk.parent_columns).is_none_or(|pc| index_led_by(def, &pc).is_some())
    });
    child_side && parent_side
}

/// The first foreign key referencing `def` from another table not in
/// `except` (db, name), described for errors 1701.
pub fn referenced_from_outside(
    def: &TableDef,
    st: &CatalogState,
    except: &[(String, String)],
) -> Option<String> {
    st.children(&def.db, &def.name).iter().find_map(|(c, k)| {
        let other = (c.def.db.clone(), c.def.name.clone());
        let same = other.0 == def.db && other.1 == def.name;
        (!same && !except.contains(&other)).then(|| {
            format!(
                "`{}`.`{}`, {}",
                c.def.db,
                c.def.name,
                rel::fk::describe(&c.def, *k, true)
            )
        })
    })
}
