//! CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW, RENAME TABLE of a view
//! and the text SHOW CREATE VIEW shows. A view's SELECT is planned at
//! CREATE time (unknown tables and columns fail then, as in MySQL) and
//! stored as text with its column list and MySQL's definer, security and
//! algorithm fields (`rel::view`); queries expand it where it is named
//! (`select::view`). Writes through a view are refused (1235).
use super::split_name;
use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome};
use crate::session::Session;
use rel::view::{Algorithm, ViewDef};
use sqlparser::ast;

/// CREATE [OR REPLACE] VIEW / ALTER VIEW (`alter`).
pub fn create_view(s: &mut Session, v: &ast::CreateView, alter: bool) -> Result<Outcome> {
    if v.materialized
        || v.secure
        || v.or_alter
        || v.temporary
        || v.if_not_exists
        || v.copy_grants
        || v.to.is_some()
        || v.comment.is_some()
        || v.with_no_schema_binding
        || !v.cluster_by.is_empty()
        || !matches!(v.options, ast::CreateTableOptions::None)
        || v.columns
            .iter()
            .any(|c| c.data_type.is_some() || c.options.is_some())
    {
        return Err(SqlError::unsupported(format!(
            "this CREATE VIEW form: {}",
            v.to_string().chars().take(60).collect::<String>()
        )));
    }
    let (db, name) = split_name(s, &v.name)?;
    let st = s.inst.catalog.state();
    if !st.databases.contains_key(&db) {
        return Err(SqlError::bad_db(&db));
    }
    if crate::infoschema::is_schema(&db) {
        return Err(SqlError::unsupported("views in information_schema"));
    }
    if name.chars().count() > 64 {
        return Err(SqlError::identifier_too_long(format!(
            "Identifier name '{name}' is too long"
        )));
    }
    let has_param = {
        let mut f = false;
        let _ = ast::visit_expressions(&*v.query, |e| {
            if matches!(e, ast::Expr::Value(x) if matches!(x.value, ast::Value::Placeholder(_))) {
                f = true;
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        f
    };
    if has_param {
        return Err(SqlError::view_variable());
    }
    // The SELECT must plan now, in the view's database.
    let p = {
        let _literals = crate::collate::literals(s.conn_collation());
        crate::select::plan(&v.query, &st, Some(&db), &[])?
    };
    if p.into.is_some() {
        return Err(SqlError::view_variable());
    }
    let columns: Vec<String> = v.columns.iter().map(|c| c.name.value.clone()).collect();
    if !columns.is_empty() && columns.len() != p.columns.len() {
        return Err(SqlError::view_wrong_list());
    }
    let names: Vec<&str> = if columns.is_empty() {
        p.columns.iter().map(|c| c.name.as_str()).collect()
    } else {
        columns.iter().map(|c| c.as_str()).collect()
    };
    for (i, n) in names.iter().enumerate() {
        if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
            return Err(SqlError::duplicate_column(n));
        }
    }
    let params = v.params.as_ref();
    let algorithm = match params.and_then(|p| p.algorithm.as_ref()) {
        None | Some(ast::CreateViewAlgorithm::Undefined) => Algorithm::Undefined,
        Some(ast::CreateViewAlgorithm::Merge) => Algorithm::Merge,
        Some(ast::CreateViewAlgorithm::TempTable) => Algorithm::TempTable,
    };
    let (definer_user, definer_host) = match params.and_then(|p| p.definer.as_ref()) {
        Some(ast::GranteeName::UserHost { user, host }) => (user.value.clone(), host.value.clone()),
        Some(ast::GranteeName::ObjectName(n)) => (crate::stmt::name_parts(n).join("."), "%".into()),
        None => (s.user.clone(), "localhost".to_string()),
    };
    let invoker = matches!(
        params.and_then(|p| p.security.as_ref()),
        Some(ast::CreateViewSecurity::Invoker)
    );
    let var = |n: &str, d: &str| {
        s.get_var(n, false)
            .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
            .unwrap_or_else(|| d.to_string())
    };
    // The text is parsed again where the view is used. sqlparser prints a
    // string literal holding a backslash in a form that reads back as
    // another string ('a\\b' prints as 'a\b'): refuse such a view rather
    // than store a different query.
    let text = v.query.to_string();
    if text.contains('\\') {
        let same = matches!(
            crate::parse::parse(&text).map(|p| p.stmt),
            Ok(crate::stmt::Stmt::Rows(crate::stmt::RowStmt::Select(q))) if *q == *v.query
        );
        if !same {
            return Err(SqlError::unsupported(
                "a view whose SELECT has a string literal with a backslash",
            ));
        }
    }
    let def = ViewDef {
        db,
        name,
        columns,
        query: text,
        algorithm,
        definer_user,
        definer_host,
        invoker,
        charset_client: var("character_set_client", "utf8mb4"),
        collation_connection: var("collation_connection", "utf8mb4_general_ci"),
    };
    s.inst
        .catalog
        .put_view(def, v.or_replace, alter)
        .map_err(|e| match e {
            rel::Error::NoSuchTable(t) => SqlError::no_table(t),
            other => other.into(),
        })?;
    ok()
}

/// DROP VIEW [IF EXISTS] a, b: the views found go; the other names are
/// MariaDB's 4092 (a note with IF EXISTS).
pub fn drop_views(s: &mut Session, names: &[ast::ObjectName], if_exists: bool) -> Result<Outcome> {
    let listed = names
        .iter()
        .map(|n| split_name(s, n))
        .collect::<Result<Vec<_>>>()?;
    let missing = s.inst.catalog.drop_views(&listed)?;
    if !missing.is_empty() {
        let st = s.inst.catalog.state();
        let shown: Vec<String> = missing.iter().map(|(d, n)| format!("{d}.{n}")).collect();
        if if_exists {
            for m in shown {
                s.warn("Note", SqlError::unknown_view(m));
            }
        } else {
            for (d, n) in &missing {
                if st.table(d, n).is_some() {
                    s.warn("Warning", SqlError::wrong_object(d, n, "VIEW"));
                }
            }
            return Err(SqlError::unknown_view(shown.join(",")));
        }
    }
    ok()
}

/// SHOW CREATE VIEW's text (MySQL's form, with the column list when the
/// view has one).
pub fn create_text(v: &ViewDef) -> String {
    let q = |s: &str| format!("`{}`", s.replace('`', "``"));
    let cols = if v.columns.is_empty() {
        String::new()
    } else {
        let c: Vec<String> = v.columns.iter().map(|c| q(c)).collect();
        format!(" ({})", c.join(","))
    };
    format!(
        "CREATE ALGORITHM={} DEFINER={}@{} SQL SECURITY {} VIEW {}{} AS {}",
        v.algorithm.name(),
        q(&v.definer_user),
        q(&v.definer_host),
        if v.invoker { "INVOKER" } else { "DEFINER" },
        q(&v.name),
        cols,
        v.query
    )
}
