//! ALTER TABLE and CHECK constraints: a column definition's CHECK (ADD,
//! MODIFY, CHANGE), DROP CONSTRAINT, and the checks kept consistent with
//! the columns (renames rewrite them, a dropped column takes its own check
//! and a check still naming it is 1054).
use super::Work;
use crate::error::{Result, SqlError};
use rel::schema::{Check, CheckLevel, Column};
use rel::value::TypeKind;
use sqlparser::ast;

pub(super) fn work_columns(w: &Work) -> Vec<Column> {
    w.cols.iter().map(|c| c.col.clone()).collect()
}

/// A column definition's `CHECK (..)` (ADD, MODIFY, CHANGE): named after
/// the column; `CONSTRAINT n CHECK` (MySQL) is a table-level check.
pub(super) fn column_check<'a>(
    w: &mut Work,
    col: &str,
    options: impl Iterator<Item = (Option<&'a ast::Ident>, &'a ast::ColumnOption)>,
) -> Result<()> {
    for (named, o) in options {
        let ast::ColumnOption::Check(c) = o else {
            continue;
        };
        crate::check::refuse_unenforced(c)?;
        let mut cols = work_columns(w);
        if !cols.iter().any(|c| c.name.eq_ignore_ascii_case(col)) {
            cols.push(Column::plain(
                col,
                rel::value::ColumnType::new(TypeKind::Int),
            ));
        }
        match named.or(c.name.as_ref()) {
            Some(n) => {
                crate::check::add_table_check(&mut w.checks, Some(n.value.clone()), &c.expr, &cols)?
            }
            None => {
                let text = crate::check::define(&c.expr, col, &cols)?;
                crate::check::add(
                    &mut w.checks,
                    Check {
                        name: col.to_string(),
                        level: CheckLevel::Column,
                        expr: text,
                    },
                )?;
            }
        }
        w.checks_added = true;
    }
    Ok(())
}

/// DROP CONSTRAINT name: a CHECK, else a foreign key, else a UNIQUE key
/// (as MariaDB). False when there is none of that name.
pub(super) fn drop_constraint(w: &mut Work, name: &str) -> bool {
    let is = |n: &str| n.eq_ignore_ascii_case(name);
    if let Some(k) = w.checks.iter().position(|c| is(&c.name)) {
        w.checks.remove(k);
        return true;
    }
    if let Some(k) = w.fks.iter().position(|f| is(&f.name)) {
        w.fks.remove(k);
        return true;
    }
    if let Some(k) = w.secondary.iter().position(|ix| ix.unique && is(&ix.name)) {
        w.secondary.remove(k);
        return true;
    }
    false
}

/// Puts column-level checks first, in column order, and refuses a check
/// naming a column that is gone (MariaDB: 1054 "Unknown column 'a' in
/// 'CHECK'").
pub(super) fn order_checks(w: &mut Work) -> Result<()> {
    for c in &w.checks {
        for n in crate::check::columns_of(&c.expr)? {
            if w.any(&n).is_none() {
                return Err(SqlError::unknown_column(n, "CHECK"));
            }
        }
    }
    let pos = |c: &Check| match c.level {
        CheckLevel::Column => w.any(&c.name).unwrap_or(usize::MAX),
        CheckLevel::Table => usize::MAX,
    };
    let mut keyed: Vec<(usize, Check)> = w.checks.iter().map(|c| (pos(c), c.clone())).collect();
    keyed.sort_by_key(|(p, _)| *p);
    w.checks = keyed.into_iter().map(|(_, c)| c).collect();
    Ok(())
}
