//! What the planner honours. Every clause of a query, table reference or function call
//! that Strata does not implement is refused here with 1235 ("not supported yet") before
//! planning, so that nothing is accepted and then silently ignored (issue 14 item 8).
//!
//! The sqlparser structs are destructured field by field: a field added by a new sqlparser
//! version fails to compile here until someone decides whether Strata honours it.
//! Index hints (USE/FORCE/IGNORE INDEX) are resolved here into an [`IndexHint`] that the
//! access path choice obeys.
use crate::error::{Result, SqlError};
use rel::schema::TableDef;
use sqlparser::ast;

fn no(what: &str) -> SqlError {
    SqlError::unsupported(what)
}

/// Checks a query's clauses (not its expressions: the binder refuses what it cannot bind).
pub fn check_query(q: &ast::Query) -> Result<()> {
    let ast::Query {
        with: _, // refused by the planner
        body,
        order_by,
        limit_clause,
        fetch,
        locks,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = q;
    if fetch.is_some() {
        return Err(no("FETCH FIRST"));
    }
    if for_clause.is_some() {
        return Err(no("FOR XML/JSON/BROWSE"));
    }
    if settings.is_some() || format_clause.is_some() || !pipe_operators.is_empty() {
        return Err(no("SETTINGS, FORMAT and pipe operators"));
    }
    if let Some(o) = order_by {
        if o.interpolate.is_some() {
            return Err(no("ORDER BY ... INTERPOLATE"));
        }
        if let ast::OrderByKind::All(_) = o.kind {
            return Err(no("ORDER BY ALL"));
        }
        if let ast::OrderByKind::Expressions(v) = &o.kind {
            for e in v {
                check_order_expr(e)?;
            }
        }
    }
    if let Some(ast::LimitClause::LimitOffset { limit_by, .. }) = limit_clause {
        if !limit_by.is_empty() {
            return Err(no("LIMIT ... BY"));
        }
    }
    if locks.len() > 1 {
        return Err(no("more than one locking clause"));
    }
    for l in locks {
        if l.of.is_some() {
            return Err(no("FOR UPDATE OF"));
        }
    }
    if let ast::SetExpr::Select(s) = &**body {
        check_select(s)?;
    }
    Ok(())
}

/// `ORDER BY e WITH FILL` and NULLS FIRST/LAST are not MySQL.
pub fn check_order_expr(e: &ast::OrderByExpr) -> Result<()> {
    if e.with_fill.is_some() {
        return Err(no("ORDER BY ... WITH FILL"));
    }
    if e.options.nulls_first.is_some() {
        return Err(no("NULLS FIRST / NULLS LAST"));
    }
    Ok(())
}

/// Checks a SELECT's clauses.
pub fn check_select(s: &ast::Select) -> Result<()> {
    let ast::Select {
        select_token: _,
        optimizer_hints,
        distinct,
        select_modifiers: _, // priorities and cache hints are advisory; FOUND_ROWS is honoured
        top,
        top_before_distinct: _,
        projection: _,
        exclude,
        into,
        from: _, // checked table by table by `check_table`
        lateral_views,
        prewhere,
        selection: _,
        connect_by,
        group_by,
        cluster_by,
        distribute_by,
        sort_by,
        having: _,
        named_window,
        qualify,
        window_before_qualify: _,
        value_table_mode,
        flavor,
    } = s;
    for h in optimizer_hints {
        let up = h.text.to_ascii_uppercase();
        for semantic in ["MAX_EXECUTION_TIME", "SET_VAR", "RESOURCE_GROUP"] {
            if up.contains(semantic) {
                return Err(no(&format!("the optimizer hint {semantic}")));
            }
        }
    }
    if let Some(ast::Distinct::On(_)) = distinct {
        return Err(no("DISTINCT ON"));
    }
    if top.is_some() {
        return Err(no("TOP"));
    }
    if exclude.is_some() {
        return Err(no("SELECT * EXCLUDE"));
    }
    if let Some(i) = into {
        if i.temporary || i.unlogged || i.table {
            return Err(no("SELECT INTO a table"));
        }
    }
    if !lateral_views.is_empty() || prewhere.is_some() || !connect_by.is_empty() {
        return Err(no("LATERAL VIEW, PREWHERE and CONNECT BY"));
    }
    match group_by {
        ast::GroupByExpr::All(_) => return Err(no("GROUP BY ALL")),
        ast::GroupByExpr::Expressions(_, mods) => {
            if let Some(m) = mods.first() {
                return Err(no(&format!("GROUP BY ... {m}")));
            }
        }
    }
    if !cluster_by.is_empty() || !distribute_by.is_empty() || !sort_by.is_empty() {
        return Err(no("CLUSTER BY, DISTRIBUTE BY and SORT BY"));
    }
    let _ = named_window; // bound by `window::WinCtx`
    if qualify.is_some() {
        return Err(no("QUALIFY"));
    }
    if value_table_mode.is_some() || !matches!(flavor, ast::SelectFlavor::Standard) {
        return Err(no("this SELECT form"));
    }
    Ok(())
}

/// Checks a function call's clauses: window functions, FILTER, WITHIN GROUP and argument
/// clauses other than GROUP_CONCAT's ORDER BY and SEPARATOR are refused.
pub fn check_function(f: &ast::Function, name: &str) -> Result<()> {
    let ast::Function {
        name: _,
        uses_odbc_syntax: _,
        parameters,
        args,
        filter,
        null_treatment,
        over,
        within_group,
    } = f;
    if over.is_some() {
        // A call with OVER is bound by `window::bind_call` instead.
        return Err(no("window functions (OVER) here"));
    }
    if filter.is_some() || null_treatment.is_some() || !within_group.is_empty() {
        return Err(no(&format!(
            "FILTER, WITHIN GROUP or NULL treatment in {name}"
        )));
    }
    if !matches!(parameters, ast::FunctionArguments::None) {
        return Err(no(&format!("parametric function {name}")));
    }
    if let ast::FunctionArguments::List(l) = args {
        for c in &l.clauses {
            match c {
                ast::FunctionArgumentClause::OrderBy(v)
                    if name == "GROUP_CONCAT" || name == "JSON_ARRAYAGG" =>
                {
                    for e in v {
                        check_order_expr(e)?;
                    }
                }
                ast::FunctionArgumentClause::Separator(_) if name == "GROUP_CONCAT" => {}
                other => return Err(no(&format!("{other} in {name}"))),
            }
        }
    }
    Ok(())
}

/// Index hints of one table reference: which indexes (by position, 0 = primary key)
/// the access path may use, and whether a table scan counts as a last resort (FORCE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHint {
    pub allowed: Vec<bool>,
    pub force: bool,
}

impl IndexHint {
    /// May the access path use index `i`?
    pub fn allows(h: Option<&IndexHint>, i: usize) -> bool {
        h.is_none_or(|h| h.allowed.get(i).copied().unwrap_or(false))
    }
}

/// Checks a table reference's clauses and resolves its index hints against `def`
/// (an unknown index name is 1176, as in MySQL).
pub fn check_table(rel: &ast::TableFactor, def: &TableDef) -> Result<Option<IndexHint>> {
    let ast::TableFactor::Table {
        name: _,
        alias: _,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
    } = rel
    else {
        return Err(no("derived tables"));
    };
    if args.is_some() || *with_ordinality || json_path.is_some() {
        return Err(no("table functions"));
    }
    if !with_hints.is_empty() || version.is_some() || sample.is_some() {
        return Err(no("table hints, versions and samples"));
    }
    if !partitions.is_empty() {
        return Err(no("PARTITION selection"));
    }
    if index_hints.is_empty() {
        return Ok(None);
    }
    let n = 1 + def.secondary.len();
    let mut used: Option<Vec<bool>> = None;
    let mut ignored = vec![false; n];
    let mut force = false;
    for h in index_hints {
        let mut set = vec![false; n];
        for name in &h.index_names {
            let pos = if name.value.eq_ignore_ascii_case("PRIMARY") && !def.hidden_pk {
                Some(0)
            } else {
                def.secondary
                    .iter()
                    .position(|ix| ix.name.eq_ignore_ascii_case(&name.value))
                    .map(|p| p + 1)
            };
            let Some(p) = pos else {
                return Err(SqlError::no_key(&name.value, &def.name));
            };
            set[p] = true;
        }
        match h.hint_type {
            ast::TableIndexHintType::Ignore => {
                for (i, s) in set.iter().enumerate() {
                    ignored[i] |= *s;
                }
            }
            ast::TableIndexHintType::Use | ast::TableIndexHintType::Force => {
                if matches!(h.hint_type, ast::TableIndexHintType::Force) {
                    force = true;
                }
                let u = used.get_or_insert_with(|| vec![false; n]);
                for (i, s) in set.iter().enumerate() {
                    u[i] |= *s;
                }
            }
        }
    }
    let mut allowed = used.unwrap_or_else(|| vec![true; n]);
    for (i, ig) in ignored.iter().enumerate() {
        if *ig {
            allowed[i] = false;
        }
    }
    Ok(Some(IndexHint { allowed, force }))
}

/// Checks an INSERT / REPLACE's clauses.
pub fn check_insert(i: &ast::Insert) -> Result<()> {
    let ast::Insert {
        insert_token: _,
        optimizer_hints: _,
        or,
        ignore: _,
        into: _,
        table: _,
        table_alias,
        columns: _,
        overwrite,
        source: _,
        assignments: _,
        partitioned,
        after_columns,
        has_table_keyword: _,
        on,
        returning,
        output,
        replace_into: _,
        priority: _, // LOW_PRIORITY / HIGH_PRIORITY / DELAYED are scheduling hints
        insert_alias,
        settings,
        format_clause,
        multi_table_insert_type,
        multi_table_into_clauses,
        multi_table_when_clauses,
        multi_table_else_clause,
    } = i;
    if or.is_some() || *overwrite || table_alias.is_some() {
        return Err(no("this INSERT form"));
    }
    if partitioned.is_some() || !after_columns.is_empty() {
        return Err(no("INSERT ... PARTITION"));
    }
    if let Some(o) = on {
        if !matches!(o, ast::OnInsert::DuplicateKeyUpdate(_)) {
            return Err(no("ON CONFLICT"));
        }
    }
    if returning.is_some() || output.is_some() {
        return Err(no("RETURNING"));
    }
    if insert_alias.is_some() {
        return Err(no("INSERT ... AS alias"));
    }
    if settings.is_some() || format_clause.is_some() {
        return Err(no("SETTINGS and FORMAT"));
    }
    if multi_table_insert_type.is_some()
        || !multi_table_into_clauses.is_empty()
        || !multi_table_when_clauses.is_empty()
        || multi_table_else_clause.is_some()
    {
        return Err(no("multi-table INSERT"));
    }
    Ok(())
}

/// Checks an UPDATE's clauses (single table; ORDER BY and LIMIT are honoured).
pub fn check_update(u: &ast::Update) -> Result<()> {
    let ast::Update {
        update_token: _,
        optimizer_hints: _,
        table,
        assignments: _,
        from,
        selection: _,
        returning,
        output,
        or,
        order_by,
        limit: _,
    } = u;
    if from.is_some() || !table.joins.is_empty() {
        return Err(no("multi-table UPDATE"));
    }
    // `UPDATE IGNORE` reaches here as sqlparser's `OR IGNORE` (parse.rs rewrites it).
    if returning.is_some()
        || output.is_some()
        || !matches!(or, None | Some(ast::SqliteOnConflict::Ignore))
    {
        return Err(no("this UPDATE form"));
    }
    for e in order_by {
        check_order_expr(e)?;
    }
    Ok(())
}

/// Checks a DELETE's clauses (single table; ORDER BY and LIMIT are honoured).
pub fn check_delete(d: &ast::Delete) -> Result<()> {
    let ast::Delete {
        delete_token: _,
        optimizer_hints: _,
        tables,
        from,
        using,
        selection: _,
        returning,
        output,
        order_by,
        limit: _,
    } = d;
    let from = match from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    if from.len() != 1 || !tables.is_empty() || using.is_some() || !from[0].joins.is_empty() {
        return Err(no("multi-table DELETE"));
    }
    if returning.is_some() || output.is_some() {
        return Err(no("RETURNING"));
    }
    for e in order_by {
        check_order_expr(e)?;
    }
    Ok(())
}

/// MyRocks directives in a table comment that Strata would otherwise keep as plain
/// text: column families (an index's comment names them). TTL directives
/// (`ttl_duration=`, `ttl_col=`) are read by `rel::ttl::from_comment`.
fn check_comment(c: &str) -> Result<()> {
    let l = c.to_ascii_lowercase();
    if l.contains("cfname=") || l.starts_with("rev:") {
        return Err(no(&format!(
            "MyRocks column family directives in a table comment: COMMENT '{c}'"
        )));
    }
    Ok(())
}

/// Checks an index's options (USING BTREE/HASH is an access method hint; a comment
/// may name the index's column family, as MyRocks reads it: `rel::cf::from_comment`,
/// whose refusals (rev:, per-partition families, TTL) are 1235 here).
pub fn check_index_options(opts: &[ast::IndexOption]) -> Result<()> {
    index_meta(opts).map(|_| ())
}

/// An index's column family ("" for the default one) and COMMENT ("" for none),
/// from its options.
pub fn index_meta(opts: &[ast::IndexOption]) -> Result<(String, String)> {
    let mut out = (String::new(), String::new());
    for o in opts {
        if let ast::IndexOption::Comment(c) = o {
            let cf = rel::cf::from_comment(c).map_err(SqlError::unsupported)?;
            out = (cf.unwrap_or_default(), c.clone());
        }
    }
    Ok(out)
}

/// FOREIGN KEY clauses Strata enforces as InnoDB does; MATCH FULL/PARTIAL,
/// DEFERRABLE and SET DEFAULT (which InnoDB parses and ignores) are refused.
pub fn check_foreign_key(fk: &ast::ForeignKeyConstraint) -> Result<()> {
    if fk
        .match_kind
        .as_ref()
        .is_some_and(|m| !matches!(m, ast::ConstraintReferenceMatchKind::Simple))
    {
        return Err(no("MATCH FULL / MATCH PARTIAL foreign keys"));
    }
    if fk.characteristics.is_some() {
        return Err(no("deferrable foreign keys"));
    }
    for a in [&fk.on_delete, &fk.on_update].into_iter().flatten() {
        if matches!(a, ast::ReferentialAction::SetDefault) {
            return Err(no("ON DELETE/UPDATE SET DEFAULT"));
        }
    }
    Ok(())
}

/// Checks CREATE TABLE's clauses and options; returns warnings for options accepted
/// without effect where MySQL's own engines may ignore them too. (The MySQL dialect
/// sets only the fields named here; the rest belong to other databases.)
pub fn check_create_table(ct: &ast::CreateTable) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    if ct.or_replace || ct.temporary || ct.clone.is_some() || ct.version.is_some() {
        return Err(no("CREATE OR REPLACE / TEMPORARY / CLONE TABLE"));
    }
    if ct.partition_by.is_some() || ct.cluster_by.is_some() || ct.order_by.is_some() {
        return Err(no("partitioned tables"));
    }
    if ct.primary_key.is_some() || ct.on_commit.is_some() || ct.inherits.is_some() {
        return Err(no("this CREATE TABLE form"));
    }
    if let Some(ast::CommentDef::WithEq(c) | ast::CommentDef::WithoutEq(c)) = &ct.comment {
        check_comment(c)?;
    }
    for con in &ct.constraints {
        check_constraint(con)?;
    }
    for o in table_options(ct) {
        match o {
            ast::SqlOption::Comment(ast::CommentDef::WithEq(c) | ast::CommentDef::WithoutEq(c)) => {
                check_comment(c)?
            }
            ast::SqlOption::KeyValue { key, value } => {
                match option_key(key).as_str() {
                    "ENGINE" | "CHARSET" | "DEFAULT CHARSET" | "CHARACTER SET"
                    | "DEFAULT CHARACTER SET" | "COLLATE" | "DEFAULT COLLATE" | "COMMENT" => {}
                    // Storage layout hints InnoDB-specific or advisory in MySQL too.
                    "ROW FORMAT" | "KEY BLOCK SIZE" | "STATS PERSISTENT" | "STATS AUTO RECALC"
                    | "STATS SAMPLE PAGES" | "PACK KEYS" | "CHECKSUM" | "DELAY KEY WRITE"
                    | "AVG ROW LENGTH" | "MAX ROWS" | "MIN ROWS" | "PAGE CHECKSUM"
                    | "TRANSACTIONAL" => {}
                    "AUTO INCREMENT" => warnings.push(format!(
                        "AUTO_INCREMENT={value} is ignored: the counter continues after the largest value in the table"
                    )),
                    "ENCRYPTION" | "ENCRYPTED"
                        if value.to_string().trim_matches(|c| c == '\'' || c == '"').eq_ignore_ascii_case("N")
                            || value.to_string().eq_ignore_ascii_case("NO") => {}
                    _ => return Err(no(&format!("table option {}", key.value))),
                }
            }
            ast::SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("ENGINE") && l.values.is_empty() => {}
            other => return Err(no(&format!("table option {other}"))),
        }
    }
    Ok(warnings)
}

/// The options of a CREATE TABLE, whichever syntax carried them.
pub fn table_options(ct: &ast::CreateTable) -> &[ast::SqlOption] {
    match &ct.table_options {
        ast::CreateTableOptions::None => &[],
        ast::CreateTableOptions::Plain(v)
        | ast::CreateTableOptions::Options(v)
        | ast::CreateTableOptions::With(v)
        | ast::CreateTableOptions::TableProperties(v) => v,
    }
}

/// A `KEY = value` table option's key as this module matches it: upper case, `_` as a
/// space (`DEFAULT_CHARSET` and `DEFAULT CHARSET` are one option).
pub fn option_key(key: &ast::Ident) -> String {
    key.value.to_ascii_uppercase().replace('_', " ")
}

/// Table constraints: keys, foreign keys and CHECK are honoured (CHECK ... NOT
/// ENFORCED is refused).
pub fn check_constraint(con: &ast::TableConstraint) -> Result<()> {
    match con {
        ast::TableConstraint::ForeignKey(fk) => check_foreign_key(fk),
        ast::TableConstraint::Check(c) => crate::check::refuse_unenforced(c),
        ast::TableConstraint::Unique(u) => check_index_options(&u.index_options),
        ast::TableConstraint::Index(ix) => check_index_options(&ix.index_options),
        ast::TableConstraint::PrimaryKey(pk) => check_index_options(&pk.index_options),
        _ => Ok(()),
    }
}
