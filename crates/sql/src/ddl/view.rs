//! CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW, RENAME TABLE of a view
//! and the text SHOW CREATE VIEW shows. A view's SELECT is planned at
//! CREATE time (unknown tables and columns fail then, as in MySQL) and
//! stored as text with its column list and MySQL's definer, security and
//! algorithm fields (`rel::view`); queries expand it where it is named
//! (`select::view`); writes through a view are rewritten onto its table
//! (`viewdml`), and WITH CHECK OPTION needs an updatable view (1368).
use super::split_name;
use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome};
use crate::session::Session;
use rel::view::{Algorithm, ViewDef};
use sqlparser::ast;

/// CREATE [OR REPLACE] VIEW / ALTER VIEW (`alter`).
pub fn create_view(
    s: &mut Session,
    v: &ast::CreateView,
    alter: bool,
    check: rel::view::CheckOption,
) -> Result<Outcome> {
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
    super::check_table_name(&name)?;
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
    let (definer_user, definer_host) = definer(s, v);
    crate::account::check_lengths(&definer_user, &definer_host)?;
    let explicit = params.is_some_and(|p| p.definer.is_some());
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
    // `*` stands for the columns the tables have now (MySQL expands it at
    // CREATE: a column added later does not appear, one dropped makes the
    // view invalid).
    let mut query = (*v.query).clone();
    expand_wildcards(&mut query, &st, &db)?;
    let text = query.to_string();
    if text.contains('\\') {
        let same = matches!(
            crate::parse::parse(&text).map(|p| p.stmt),
            Ok(crate::stmt::Stmt::Rows(crate::stmt::RowStmt::Select(q))) if *q == query
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
        check,
    };
    if check != rel::view::CheckOption::None && !crate::viewdml::updatable(&st, &def) {
        return Err(SqlError::check_option_not_updatable(&def.db, &def.name));
    }
    let missing = (explicit
        && s.account.is_some()
        && crate::account::check::definer_account(&st, &def.definer_user, &def.definer_host)
            .is_none())
    .then(|| SqlError::no_such_definer(&def.definer_user, &def.definer_host));
    s.inst
        .catalog
        .put_view(def, v.or_replace, alter)
        .map_err(|e| match e {
            rel::Error::NoSuchTable(t) => SqlError::no_table(t),
            other => other.into(),
        })?;
    // MariaDB's note: such a view answers 1449 until the account exists.
    if let Some(e) = missing {
        s.warn("Note", e);
    }
    ok()
}

/// The DEFINER of CREATE/ALTER VIEW as (user, host): the session's account
/// by default and for CURRENT_USER, as MariaDB (the definer's rights are
/// looked up by that exact account; a host is lowercased as accounts'
/// are).
pub fn definer(s: &Session, v: &ast::CreateView) -> (String, String) {
    let current = || {
        s.account
            .clone()
            .unwrap_or_else(|| (s.user.clone(), "localhost".to_string()))
    };
    match v.params.as_ref().and_then(|p| p.definer.as_ref()) {
        Some(ast::GranteeName::UserHost { user, host }) => {
            (user.value.clone(), host.value.to_ascii_lowercase())
        }
        Some(ast::GranteeName::ObjectName(n))
            if matches!(n.0.as_slice(), [ast::ObjectNamePart::Identifier(i)]
                if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("CURRENT_USER")) =>
        {
            current()
        }
        Some(ast::GranteeName::ObjectName(n)) => (crate::stmt::name_parts(n).join("."), "%".into()),
        None => current(),
    }
}

/// DROP VIEW [IF EXISTS] a, b: the views found go; the other names are
/// MariaDB's 4092 (a note with IF EXISTS). When some go and others fail
/// that way, the binary log records the views dropped (`DROP VIEW` of
/// them, which a replica runs without error), not the statement.
pub fn drop_views(s: &mut Session, names: &[ast::ObjectName], if_exists: bool) -> Result<Outcome> {
    let listed = names
        .iter()
        .map(|n| split_name(s, n))
        .collect::<Result<Vec<_>>>()?;
    let missing = s.inst.catalog.drop_views(&listed, |found, missing| {
        if !found.is_empty() && !missing.is_empty() && !if_exists {
            let names: Vec<String> = found
                .iter()
                .map(|(d, t)| super::logged_name(s, d, t))
                .collect();
            let stmt = crate::stmt::DdlStmt::DropViews {
                names: Vec::new(),
                if_exists,
            };
            let text = format!("DROP VIEW {} /* generated by server */", names.join(","));
            crate::binlogsql::retext_ddl(s, Some(&text), &stmt);
        }
    })?;
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
    let check = match v.check {
        rel::view::CheckOption::None => "",
        rel::view::CheckOption::Local => " WITH LOCAL CHECK OPTION",
        rel::view::CheckOption::Cascaded => " WITH CASCADED CHECK OPTION",
    };
    format!(
        "CREATE ALGORITHM={} DEFINER={}@{} SQL SECURITY {} VIEW {}{} AS {}{}",
        v.algorithm.name(),
        q(&v.definer_user),
        q(&v.definer_host),
        if v.invoker { "INVOKER" } else { "DEFINER" },
        q(&v.name),
        cols,
        v.query,
        check
    )
}

/// Replaces `*` and `t.*` in the select lists of a view's SELECT (each
/// branch of a UNION) by the columns they stand for now, qualified by the
/// table's alias or name. A FROM clause joined with USING or NATURAL, or
/// reading a derived table or table function, keeps its `*` (read again
/// at each use).
fn expand_wildcards(q: &mut ast::Query, st: &rel::catalog::CatalogState, db: &str) -> Result<()> {
    fn body(b: &mut ast::SetExpr, st: &rel::catalog::CatalogState, db: &str) -> Result<()> {
        match b {
            ast::SetExpr::Select(s) => select(s, st, db),
            ast::SetExpr::SetOperation { left, right, .. } => {
                body(left, st, db)?;
                body(right, st, db)
            }
            ast::SetExpr::Query(q) => body(&mut q.body, st, db),
            _ => Ok(()),
        }
    }
    fn select(s: &mut ast::Select, st: &rel::catalog::CatalogState, db: &str) -> Result<()> {
        let has_wild = s.projection.iter().any(|p| {
            matches!(
                p,
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
            )
        });
        if !has_wild {
            return Ok(());
        }
        // (qualifier, columns) per FROM item, in order.
        let mut items: Vec<(String, Vec<String>)> = Vec::new();
        for twj in &s.from {
            let mut factors = vec![&twj.relation];
            for j in &twj.joins {
                use ast::JoinOperator as J;
                let c = match &j.join_operator {
                    J::Join(c)
                    | J::Inner(c)
                    | J::Left(c)
                    | J::LeftOuter(c)
                    | J::Right(c)
                    | J::RightOuter(c)
                    | J::CrossJoin(c)
                    | J::StraightJoin(c) => c,
                    _ => return Ok(()),
                };
                if matches!(
                    c,
                    ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural
                ) {
                    return Ok(());
                }
                factors.push(&j.relation);
            }
            for f in factors {
                let ast::TableFactor::Table {
                    name,
                    alias,
                    args: None,
                    ..
                } = f
                else {
                    return Ok(());
                };
                let parts = crate::stmt::name_parts(name);
                let (d, n) = match parts.as_slice() {
                    [n] => (db, n.as_str()),
                    [d, n] => (d.as_str(), n.as_str()),
                    _ => return Ok(()),
                };
                let cols: Vec<String> = if let Some(v) = st.view(d, n) {
                    let t = crate::select::view::view_table(st, v)?;
                    t.def.columns.iter().map(|c| c.name.clone()).collect()
                } else if let Some(t) = st.table(d, n) {
                    t.def.columns.iter().map(|c| c.name.clone()).collect()
                } else {
                    // A CTE or what the planner already refused.
                    return Ok(());
                };
                let qual = alias
                    .as_ref()
                    .map_or_else(|| n.to_string(), |a| a.name.value.clone());
                items.push((qual, cols));
            }
        }
        let col = |q: &str, c: &str| {
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(vec![
                ast::Ident::with_quote('`', q),
                ast::Ident::with_quote('`', c),
            ]))
        };
        let mut out = Vec::with_capacity(s.projection.len());
        for p in s.projection.drain(..) {
            match p {
                ast::SelectItem::Wildcard(_) => {
                    for (q, cols) in &items {
                        out.extend(cols.iter().map(|c| col(q, c)));
                    }
                }
                ast::SelectItem::QualifiedWildcard(
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) => {
                    let parts = crate::stmt::name_parts(&n);
                    let want = parts.last().cloned().unwrap_or_default();
                    match items.iter().find(|(q, _)| q.eq_ignore_ascii_case(&want)) {
                        Some((q, cols)) => out.extend(cols.iter().map(|c| col(q, c))),
                        None => return Err(SqlError::unknown_table(&want)),
                    }
                }
                other => out.push(other),
            }
        }
        s.projection = out;
        Ok(())
    }
    if q.with.is_some() {
        return Ok(());
    }
    body(&mut q.body, st, db)
}
