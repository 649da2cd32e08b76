//! RENAME TABLE a TO b [, c TO d ...]: the renames are applied in order to
//! the names (so `a TO tmp, b TO a, tmp TO b` swaps), also across
//! databases; foreign keys of any table that name a renamed parent follow
//! it. Everything is checked first (1146 for a missing table, 1050 for a
//! name taken, 1025 for a missing database, as MariaDB) and written in one
//! catalog write, with writers held out as ALTER TABLE does.
use super::install::hold_writers;
use super::split_name;
use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome};
use crate::session::Session;
use rel::catalog::{DefChange, Table};
use rel::schema::TableDef;
use sqlparser::ast;
use std::sync::Arc;

type Name = (String, String);

pub fn rename_tables(
    s: &mut Session,
    pairs: &[(ast::ObjectName, ast::ObjectName)],
) -> Result<Outcome> {
    for (_, to) in pairs {
        super::check_table_name(&split_name(s, to)?.1)?;
    }
    let st = s.inst.catalog.state();
    if let [(from, to)] = pairs {
        let (f, t) = (split_name(s, from)?, split_name(s, to)?);
        if st.view(&f.0, &f.1).is_some() {
            if f.0 != t.0 {
                return Err(SqlError::unsupported(
                    "RENAME TABLE of a view to another database",
                ));
            }
            s.inst
                .catalog
                .rename_view((&f.0, &f.1), (&t.0, &t.1))
                .map_err(|e| match e {
                    rel::Error::TableExists(n) => SqlError::table_exists(n),
                    other => other.into(),
                })?;
            return ok();
        }
    }
    for (from, _) in pairs {
        let f = split_name(s, from)?;
        if st.view(&f.0, &f.1).is_some() {
            return Err(SqlError::unsupported(
                "RENAME TABLE of a view with other renames",
            ));
        }
    }
    // Each table touched: the table as it is and its definition under its
    // name so far.
    let mut moved: Vec<(Arc<Table>, TableDef)> = Vec::new();
    let taken = |moved: &[(Arc<Table>, TableDef)], n: &Name| {
        moved.iter().any(|(_, d)| d.db == n.0 && d.name == n.1)
            || st.table(&n.0, &n.1).is_some_and(|t| {
                // Renamed away already: the name is free.
                !moved.iter().any(|(a, _)| Arc::ptr_eq(a, t))
            })
            || st.unreadable.contains_key(n)
            || st.view(&n.0, &n.1).is_some()
    };
    for (from, to) in pairs {
        let f = split_name(s, from)?;
        let t = split_name(s, to)?;
        let i = match moved.iter().position(|(_, d)| d.db == f.0 && d.name == f.1) {
            Some(i) => i,
            None => match st.table(&f.0, &f.1) {
                Some(tb) if !moved.iter().any(|(a, _)| Arc::ptr_eq(a, tb)) => {
                    moved.push((tb.clone(), tb.def.clone()));
                    moved.len() - 1
                }
                _ => return Err(SqlError::no_table(format!("{}.{}", f.0, f.1))),
            },
        };
        if taken(&moved, &t) {
            return Err(SqlError::table_exists(&t.1));
        }
        if !st.databases.contains_key(&t.0) {
            return Err(SqlError::error_on_rename(
                format!("./{}/{}", f.0, f.1),
                format!("./{}/{}", t.0, t.1),
            ));
        }
        moved[i].1.db = t.0;
        moved[i].1.name = t.1;
    }
    let renamed: Vec<(Name, Name)> = moved
        .iter()
        .map(|(a, d)| {
            (
                (a.def.db.clone(), a.def.name.clone()),
                (d.db.clone(), d.name.clone()),
            )
        })
        .filter(|(a, b)| a != b)
        .collect();
    if renamed.is_empty() {
        return ok();
    }
    let follow = |def: &mut TableDef| {
        let mut changed = false;
        for fk in &mut def.foreign_keys {
            let parent = (fk.parent_db.clone(), fk.parent_table.clone());
            if let Some((_, to)) = renamed.iter().find(|(from, _)| *from == parent) {
                fk.parent_db = to.0.clone();
                fk.parent_table = to.1.clone();
                changed = true;
            }
        }
        changed
    };
    for (_, d) in &mut moved {
        follow(d);
    }
    let mut others: Vec<(Arc<Table>, TableDef)> = Vec::new();
    for t in st.tables.values() {
        if moved.iter().any(|(a, _)| Arc::ptr_eq(a, t)) {
            continue;
        }
        let mut d = t.def.clone();
        if follow(&mut d) {
            others.push((t.clone(), d));
        }
    }
    moved.extend(others);
    let tables: Vec<Arc<Table>> = moved.iter().map(|(a, _)| a.clone()).collect();
    let (thaw, _held) = hold_writers(s, &tables)?;
    let changes = moved
        .into_iter()
        .map(|(a, def)| DefChange {
            from: Some(a),
            def,
            pending: false,
            auto_inc: 0,
            hidden_next: 0,
        })
        .collect();
    if let Err(e) = s.inst.catalog.commit_defs(changes) {
        thaw();
        return Err(e.into());
    }
    ok()
}
