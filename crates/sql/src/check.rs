//! CHECK constraints (MariaDB's semantics): an expression of CREATE/ALTER
//! TABLE is refused when it has a subquery (1970), a function that is not
//! deterministic, an aggregate or a variable (1901) or an unknown column
//! (1054), and stored as text in MariaDB's printed form (`checkprint`);
//! rows written by INSERT (VALUES, SELECT, REPLACE, ON DUPLICATE KEY
//! UPDATE), UPDATE and multi-table UPDATE are checked before the write: a
//! check that is FALSE (not NULL) fails the statement with 4025, unless
//! `check_constraint_checks` is 0. Checks are compiled (parsed, bound,
//! annotated with collations) once per statement execution.
use crate::bind::{Binder, Scope};
use crate::collate::{annotate, Ctx};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use rel::schema::{Check, CheckLevel, Column, TableDef};
use rel::value::Value;
use sqlparser::ast;
use std::ops::ControlFlow;

pub use crate::checkprint::print;

/// Functions a CHECK may not call: not deterministic, or reading the
/// session or the server (MariaDB's VCOL_NON_DETERMINISTIC / VCOL_SESSION_FUNC).
const FORBIDDEN: &[(&str, &str)] = &[
    ("rand", "rand"),
    ("now", "current_timestamp"),
    ("current_timestamp", "current_timestamp"),
    ("localtime", "current_timestamp"),
    ("localtimestamp", "current_timestamp"),
    ("sysdate", "sysdate"),
    ("curdate", "curdate"),
    ("current_date", "curdate"),
    ("curtime", "curtime"),
    ("current_time", "curtime"),
    ("utc_date", "utc_date"),
    ("utc_time", "utc_time"),
    ("utc_timestamp", "utc_timestamp"),
    ("unix_timestamp", "unix_timestamp"),
    ("uuid", "uuid"),
    ("uuid_short", "uuid_short"),
    ("connection_id", "connection_id"),
    ("user", "user"),
    ("current_user", "current_user"),
    ("session_user", "user"),
    ("system_user", "user"),
    ("database", "database"),
    ("schema", "database"),
    ("last_insert_id", "last_insert_id"),
    ("found_rows", "found_rows"),
    ("row_count", "row_count"),
    ("sleep", "sleep"),
    ("benchmark", "benchmark"),
    ("get_lock", "get_lock"),
    ("release_lock", "release_lock"),
    ("is_free_lock", "is_free_lock"),
    ("is_used_lock", "is_used_lock"),
    ("version", "version"),
    ("nextval", "nextval"),
    ("lastval", "lastval"),
    ("setval", "setval"),
];

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "group_concat",
    "std",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "bit_and",
    "bit_or",
    "bit_xor",
    "json_arrayagg",
    "json_objectagg",
];

/// Validates the expression of a CHECK named `name` (for errors) over
/// `cols` and returns its stored text.
pub fn define(e: &ast::Expr, name: &str, cols: &[Column]) -> Result<String> {
    let flow = ast::visit_expressions(e, |x| match refused(x, name, cols) {
        Some(err) => ControlFlow::Break(err),
        None => ControlFlow::Continue(()),
    });
    if let ControlFlow::Break(err) = flow {
        return Err(err);
    }
    Ok(print(e))
}

fn refused(x: &ast::Expr, name: &str, cols: &[Column]) -> Option<SqlError> {
    match x {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
            Some(SqlError::check_subquery())
        }
        ast::Expr::Function(f) => {
            let n = f.name.to_string().to_ascii_lowercase();
            let n = n.trim_matches('`');
            if let Some((_, shown)) = FORBIDDEN.iter().find(|(k, _)| *k == n) {
                return Some(SqlError::check_function(format!("{shown}()"), name));
            }
            if AGGREGATES.contains(&n) || f.over.is_some() {
                return Some(SqlError::check_function(format!("{n}()"), name));
            }
            if matches!(f.args, ast::FunctionArguments::Subquery(_)) {
                return Some(SqlError::check_subquery());
            }
            None
        }
        ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
            Some(SqlError::parse("a parameter in a CHECK constraint"))
        }
        ast::Expr::Identifier(id) => ident(id, name, cols),
        ast::Expr::CompoundIdentifier(ids) => match ids.first() {
            Some(first) if ids.len() >= 2 && first.value.starts_with('@') => {
                Some(SqlError::check_function(
                    ids.iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join("."),
                    name,
                ))
            }
            _ => ids.last().and_then(|id| ident(id, name, cols)),
        },
        _ => None,
    }
}

fn ident(id: &ast::Ident, name: &str, cols: &[Column]) -> Option<SqlError> {
    if id.quote_style.is_none() && id.value.starts_with('@') {
        return Some(SqlError::check_function(&id.value, name));
    }
    if id.quote_style.is_none() {
        let up = id.value.to_ascii_lowercase();
        if let Some((_, shown)) = FORBIDDEN.iter().find(|(k, _)| *k == up) {
            return Some(SqlError::check_function(format!("{shown}()"), name));
        }
    }
    if cols.iter().any(|c| c.name.eq_ignore_ascii_case(&id.value)) {
        None
    } else {
        Some(SqlError::unknown_column(&id.value, "CHECK"))
    }
}

/// Parses a stored check's text.
pub fn parse(text: &str) -> Result<ast::Expr> {
    let dialect = crate::dialect::StrataDialect::default();
    let mut p = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| SqlError::parse(e.to_string()))?;
    let e = p.parse_expr().map_err(|e| SqlError::parse(e.to_string()))?;
    if p.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return Err(SqlError::parse(format!("CHECK ({text})")));
    }
    Ok(e)
}

/// A table's checks ready to evaluate over its rows.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// (name in error messages, expression over the table's columns).
    list: Vec<(String, Expr)>,
    db: String,
    table: String,
    /// A write through a view WITH CHECK OPTION: (db, view, condition) the
    /// row must satisfy (TRUE) whatever `check_constraint_checks` says.
    view: Option<(String, String, Expr)>,
}

impl Checks {
    /// Compiles `def`'s checks (none: nothing to do, nothing parsed).
    pub fn of(def: &TableDef) -> Result<Checks> {
        let mut out = Checks {
            list: Vec::with_capacity(def.checks.len()),
            db: def.db.clone(),
            table: def.name.clone(),
            view: None,
        };
        if def.checks.is_empty() {
            return Ok(out);
        }
        let scope = Scope {
            cols: def
                .columns
                .iter()
                .map(|c| (def.name.clone(), c.name.clone()))
                .collect(),
            types: Vec::new(),
            hidden: Vec::new(),
        };
        for c in &def.checks {
            let mut b = Binder::new(&[]);
            let e = b.expr(&parse(&c.expr)?, &scope)?;
            let e = annotate(e, Ctx::new(&def.columns))?;
            out.list.push((error_name(def, c), e));
        }
        Ok(out)
    }

    /// These checks and a view's CHECK OPTION condition (bound by
    /// [`bind_view_check`]).
    pub fn with_view(mut self, view: Option<&(String, String, Expr)>) -> Checks {
        self.view = view.cloned();
        self
    }

    /// True when there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.view.is_none()
    }

    /// Checks a row about to be written (full row, table column order).
    pub fn verify(&self, row: &[Value], env: &dyn Env) -> Result<()> {
        if let Some((db, view, e)) = &self.view {
            if e.eval(row, env)?.truth() != Some(true) {
                return Err(SqlError::check_option_failed(db, view));
            }
        }
        if self.list.is_empty() || !enabled(env) {
            return Ok(());
        }
        self.verify_always(row, env)
    }

    /// Checks a row whatever `check_constraint_checks` says (ALTER TABLE).
    pub fn verify_always(&self, row: &[Value], env: &dyn Env) -> Result<()> {
        for (name, e) in &self.list {
            if e.eval(row, env)?.truth() == Some(false) {
                return Err(SqlError::constraint_failed(name, &self.db, &self.table));
            }
        }
        Ok(())
    }
}

/// A view's CHECK OPTION condition bound over the columns of `def` (its
/// base table), for [`Checks::with_view`].
pub fn bind_view_check(
    c: &crate::viewdml::Check,
    def: &TableDef,
) -> Result<(String, String, Expr)> {
    let scope = Scope {
        cols: def
            .columns
            .iter()
            .map(|col| (c.alias.clone(), col.name.clone()))
            .collect(),
        types: Vec::new(),
        hidden: Vec::new(),
    };
    let mut b = Binder::new(&[]);
    let e = annotate(b.expr(&c.cond, &scope)?, Ctx::new(&def.columns))?;
    Ok((c.db.clone(), c.view.clone(), e))
}

/// `check_constraint_checks` (on unless set to 0).
fn enabled(env: &dyn Env) -> bool {
    env.sys_var("check_constraint_checks", false)
        .and_then(|v| v.to_i128())
        .is_none_or(|v| v != 0)
}

/// How error 4025 names a check: a column-level one as `table.column`.
fn error_name(def: &TableDef, c: &Check) -> String {
    match c.level {
        CheckLevel::Column => format!("{}.{}", def.name, c.name),
        CheckLevel::Table => c.name.clone(),
    }
}

/// The name MariaDB gives an unnamed table-level check: `CONSTRAINT_n`
/// with the smallest n not taken.
pub fn auto_name(checks: &[Check]) -> String {
    (1..)
        .map(|n| format!("CONSTRAINT_{n}"))
        .find(|n| !checks.iter().any(|c| c.name.eq_ignore_ascii_case(n)))
        .unwrap_or_default()
}

/// Refuses a second check of the same name (1826).
pub fn add(checks: &mut Vec<Check>, c: Check) -> Result<()> {
    if checks.iter().any(|o| o.name.eq_ignore_ascii_case(&c.name)) {
        return Err(SqlError::dup_constraint_name("CHECK", &c.name));
    }
    checks.push(c);
    Ok(())
}

/// The column names a stored check refers to.
pub fn columns_of(text: &str) -> Result<Vec<String>> {
    let e = parse(text)?;
    let mut out = Vec::new();
    let _ = ast::visit_expressions(&e, |x| {
        match x {
            ast::Expr::Identifier(id) => out.push(id.value.clone()),
            ast::Expr::CompoundIdentifier(ids) => {
                out.extend(ids.last().map(|i| i.value.clone()));
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(out)
}

/// A stored check's text with column `from` renamed to `to`.
pub fn rename_column(text: &str, from: &str, to: &str) -> Result<String> {
    let mut e = parse(text)?;
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        match x {
            ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case(from) => {
                id.value = to.to_string()
            }
            ast::Expr::CompoundIdentifier(ids) => {
                if let Some(id) = ids
                    .last_mut()
                    .filter(|i| i.value.eq_ignore_ascii_case(from))
                {
                    id.value = to.to_string();
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(print(&e))
}

/// The checks of a CREATE TABLE (column-level ones first, in column
/// order, then the table's), validated over `cols`.
pub fn of_create(ct: &ast::CreateTable, cols: &[Column]) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    let mut table_level = Vec::new();
    for cd in &ct.columns {
        for o in &cd.options {
            if let ast::ColumnOption::Check(c) = &o.option {
                refuse_unenforced(c)?;
                match o.name.as_ref().or(c.name.as_ref()) {
                    // MySQL's `col INT CONSTRAINT n CHECK (..)`: a named, table-level check.
                    Some(n) => table_level.push((Some(n.value.clone()), c.expr.as_ref())),
                    None => {
                        let text = define(&c.expr, &cd.name.value, cols)?;
                        add(
                            &mut out,
                            Check {
                                name: cd.name.value.clone(),
                                level: CheckLevel::Column,
                                expr: text,
                            },
                        )?;
                    }
                }
            }
        }
    }
    for con in &ct.constraints {
        if let ast::TableConstraint::Check(c) = con {
            refuse_unenforced(c)?;
            table_level.push((c.name.as_ref().map(|n| n.value.clone()), c.expr.as_ref()));
        }
    }
    for (name, e) in table_level {
        add_table_check(&mut out, name, e, cols)?;
    }
    Ok(out)
}

/// Adds a table-level check (ALTER TABLE ADD [CONSTRAINT [n]] CHECK, or
/// one of CREATE TABLE).
pub fn add_table_check(
    checks: &mut Vec<Check>,
    name: Option<String>,
    e: &ast::Expr,
    cols: &[Column],
) -> Result<()> {
    let name = name.unwrap_or_else(|| auto_name(checks));
    let text = define(e, &name, cols)?;
    add(
        checks,
        Check {
            name,
            level: CheckLevel::Table,
            expr: text,
        },
    )
}

/// MariaDB refuses a check naming a column that a foreign key's action
/// changes (ON UPDATE CASCADE / SET NULL, ON DELETE SET NULL: the engine
/// writes those rows without evaluating checks): 1901 naming the column.
pub fn refuse_cascaded(def: &TableDef) -> Result<()> {
    use rel::schema::FkAction as A;
    let changed = |col: usize| {
        def.foreign_keys.iter().any(|fk| {
            fk.columns.contains(&col)
                && (matches!(fk.on_update, A::Cascade | A::SetNull) || fk.on_delete == A::SetNull)
        })
    };
    for c in &def.checks {
        for n in columns_of(&c.expr)? {
            if let Some(col) = def.column(&n).filter(|&col| changed(col)) {
                return Err(SqlError::check_function(&def.columns[col].name, &c.name));
            }
        }
    }
    Ok(())
}

/// `CHECK (..) NOT ENFORCED` (MySQL 8): MariaDB has no such thing.
pub fn refuse_unenforced(c: &ast::CheckConstraint) -> Result<()> {
    if c.enforced == Some(false) || c.no_inherit {
        return Err(SqlError::unsupported("CHECK ... NOT ENFORCED"));
    }
    Ok(())
}

/// The text SHOW CREATE TABLE gives a table-level check.
pub fn describe(c: &Check) -> String {
    format!(
        "CONSTRAINT `{}` CHECK ({})",
        c.name.replace('`', "``"),
        c.expr
    )
}
