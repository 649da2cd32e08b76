//! Statements that are not row reads or writes: transaction control, SET,
//! USE, DDL, SHOW / DESCRIBE / EXPLAIN, CHECK and ANALYZE TABLE.
use crate::ddl;
use crate::error::{Result, SqlError};
use crate::parse::{Parsed, Stmt};
use crate::result::{ColumnInfo, Outcome, ResultSink};
use crate::select::resolve_table;
use crate::session::Session;
use crate::show;
use crate::vars;
use rel::value::Value;
use sqlparser::ast;
use txn::Isolation;

fn ok() -> Result<Outcome> {
    Ok(Outcome::default())
}

fn text(s: impl AsRef<str>) -> Value {
    Value::Bytes(s.as_ref().as_bytes().to_vec())
}

/// Sends a result set of text columns.
pub fn rows(sink: &mut dyn ResultSink, cols: &[&str], rows: Vec<Vec<Value>>) -> Result<Outcome> {
    let c: Vec<ColumnInfo> = cols.iter().map(|n| ColumnInfo::text(n)).collect();
    sink.columns(&c)?;
    for r in rows {
        sink.row(&r)?;
    }
    Ok(Outcome {
        result_set: true,
        ..Default::default()
    })
}

pub(crate) fn name_parts(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn split_name(s: &Session, n: &ast::ObjectName) -> Result<(String, String)> {
    let p = name_parts(n);
    match p.as_slice() {
        [t] => Ok((s.db.clone().ok_or_else(SqlError::no_db)?, t.clone())),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::parse("bad name")),
    }
}

/// Runs a non-plan statement.
pub fn run(
    s: &mut Session,
    parsed: &Parsed,
    params: &[Value],
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    s.stmt_params = (parsed.params.clone(), params.to_vec());
    match &parsed.stmt {
        Stmt::Empty => Err(SqlError::new(1065, "42000", "Query was empty")),
        Stmt::SetNames(cs) => {
            for v in [
                "character_set_client",
                "character_set_connection",
                "character_set_results",
            ] {
                s.set_var(v.into(), text(cs));
            }
            ok()
        }
        Stmt::ShowWarnings | Stmt::ShowErrors => {
            let only_err = matches!(parsed.stmt, Stmt::ShowErrors);
            let r = s
                .warnings
                .iter()
                .filter(|w| !only_err || w.level == "Error")
                .map(|w| vec![text(w.level), Value::Int(w.code as i64), text(&w.msg)])
                .collect();
            rows(sink, &["Level", "Code", "Message"], r)
        }
        Stmt::ShowStatus { like, .. } => {
            let r = show::status(s)
                .into_iter()
                .filter(|(k, _)| like.as_ref().is_none_or(|l| vars::like_ci(k, l)))
                .map(|(k, v)| vec![text(k), v])
                .collect();
            rows(sink, &["Variable_name", "Value"], r)
        }
        Stmt::ShowIndex { table, db } => {
            let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
            let st = s.inst.catalog.state();
            let t = st
                .table(&db, table)
                .ok_or_else(|| SqlError::no_table(&db, table))?;
            show::index(t, sink)
        }
        Stmt::ShowEngines => rows(
            sink,
            &[
                "Engine",
                "Support",
                "Comment",
                "Transactions",
                "XA",
                "Savepoints",
            ],
            vec![vec![
                text("STRATA"),
                text("DEFAULT"),
                text("LSM-tree storage engine"),
                text("YES"),
                text("NO"),
                text("NO"),
            ]],
        ),
        Stmt::ShowEngineStatus => rows(
            sink,
            &["Type", "Name", "Status"],
            vec![vec![
                text("STRATA"),
                text(""),
                text(s.inst.txdb.db().describe_levels()),
            ]],
        ),
        Stmt::ShowCollation => rows(
            sink,
            &[
                "Collation",
                "Charset",
                "Id",
                "Default",
                "Compiled",
                "Sortlen",
            ],
            vec![
                vec![
                    text("utf8mb4_general_ci"),
                    text("utf8mb4"),
                    Value::Int(45),
                    text("Yes"),
                    text("Yes"),
                    Value::Int(1),
                ],
                vec![
                    text("utf8mb4_bin"),
                    text("utf8mb4"),
                    Value::Int(46),
                    text(""),
                    text("Yes"),
                    Value::Int(1),
                ],
                vec![
                    text("binary"),
                    text("binary"),
                    Value::Int(63),
                    text("Yes"),
                    text("Yes"),
                    Value::Int(1),
                ],
            ],
        ),
        Stmt::ShowCharset => rows(
            sink,
            &["Charset", "Description", "Default collation", "Maxlen"],
            vec![
                vec![
                    text("utf8mb4"),
                    text("UTF-8 Unicode"),
                    text("utf8mb4_general_ci"),
                    Value::Int(4),
                ],
                vec![
                    text("binary"),
                    text("Binary pseudo charset"),
                    text("binary"),
                    Value::Int(1),
                ],
            ],
        ),
        Stmt::ShowTableStatus { like } => show::table_status(s, like.as_deref(), sink),
        Stmt::ShowProcessList => rows(
            sink,
            &[
                "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
            ],
            vec![vec![
                Value::UInt(s.conn_id),
                text(&s.user),
                text("localhost"),
                s.db.as_ref().map(text).unwrap_or(Value::Null),
                text("Query"),
                Value::Int(0),
                text(""),
                text("SHOW PROCESSLIST"),
            ]],
        ),
        Stmt::ShowGrants => rows(
            sink,
            &[&format!("Grants for {}@%", s.user)],
            vec![vec![text(format!(
                "GRANT ALL PRIVILEGES ON *.* TO `{}`@`%`",
                s.user
            ))]],
        ),
        Stmt::ShowCreateDatabase(name) => {
            if !s.inst.catalog.state().databases.contains_key(name) {
                return Err(SqlError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{name}'"),
                ));
            }
            rows(
                sink,
                &["Database", "Create Database"],
                vec![vec![
                    text(name),
                    text(format!(
                        "CREATE DATABASE `{name}` /*!40100 DEFAULT CHARACTER SET utf8mb4 */"
                    )),
                ]],
            )
        }
        Stmt::CheckTable(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let st = s.inst.catalog.state();
                let label = text(format!("{db}.{t}"));
                match st.table(&db, t) {
                    None => {
                        out.push(vec![
                            label.clone(),
                            text("check"),
                            text("Error"),
                            text(format!("Table '{db}.{t}' doesn't exist")),
                        ]);
                        out.push(vec![
                            label,
                            text("check"),
                            text("status"),
                            text("Operation failed"),
                        ]);
                    }
                    Some(table) => {
                        let rep = rel::check::check_table(s.inst.txdb.db(), table)?;
                        for e in &rep.errors {
                            out.push(vec![label.clone(), text("check"), text("Error"), text(e)]);
                        }
                        let status = if rep.errors.is_empty() {
                            "OK"
                        } else {
                            "Corrupt"
                        };
                        out.push(vec![label, text("check"), text("status"), text(status)]);
                    }
                }
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        Stmt::AnalyzeTable(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let exists = s.inst.catalog.state().table(&db, t).is_some();
                out.push(vec![
                    text(format!("{db}.{t}")),
                    text("analyze"),
                    text("status"),
                    text(if exists { "OK" } else { "Table doesn't exist" }),
                ]);
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        Stmt::Flush(what) => {
            let up = what.to_ascii_uppercase();
            if up.contains("READ LOCK") || up.contains("FOR EXPORT") {
                return Err(SqlError::unsupported(
                    "FLUSH TABLES WITH READ LOCK and FLUSH TABLES ... FOR EXPORT",
                ));
            }
            ok()
        }
        Stmt::StartConsistentSnapshot(mode) => {
            let Some(ro) = mode else {
                return Err(SqlError::unsupported("this START TRANSACTION form"));
            };
            s.start_transaction(true, None, *ro)?;
            ok()
        }
        Stmt::SetTransactionScoped(global, st) => match &**st {
            ast::Statement::Set(ast::Set::SetTransaction {
                modes, snapshot, ..
            }) => crate::set::set_transaction(s, modes, snapshot.is_some(), Some(*global)),
            _ => Err(SqlError::parse("SET TRANSACTION")),
        },
        Stmt::Ast(stmt) => run_ast(s, stmt, parsed, sink),
    }
}

fn run_ast(
    s: &mut Session,
    stmt: &ast::Statement,
    parsed: &Parsed,
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    use ast::Statement as S;
    if matches!(
        stmt,
        S::CreateTable(_)
            | S::CreateIndex(_)
            | S::CreateDatabase { .. }
            | S::Drop { .. }
            | S::Truncate(_)
            | S::AlterTable(_)
    ) {
        // DDL commits the open transaction, then obeys the session's read-only settings.
        s.commit()?;
        s.check_write()?;
    }
    match stmt {
        S::StartTransaction { modes, .. } => {
            let (iso, ro) = transaction_modes(modes)?;
            let snapshot = stmt
                .to_string()
                .to_ascii_uppercase()
                .contains("CONSISTENT SNAPSHOT");
            s.start_transaction(snapshot, iso, ro)?;
            ok()
        }
        S::Commit { .. } => {
            s.commit()?;
            ok()
        }
        S::Rollback {
            savepoint: None, ..
        } => {
            s.rollback();
            ok()
        }
        S::Rollback {
            savepoint: Some(_), ..
        }
        | S::Savepoint { .. }
        | S::ReleaseSavepoint { .. } => Err(SqlError::unsupported("SAVEPOINT")),
        S::Set(set) => crate::set::set_stmt(s, set),
        S::Use(u) => {
            let name = match u {
                ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                    name_parts(n).join(".")
                }
                _ => return Err(SqlError::unsupported("this USE form")),
            };
            if !s.inst.catalog.state().databases.contains_key(&name) {
                return Err(SqlError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{name}'"),
                ));
            }
            s.db = Some(name);
            ok()
        }
        S::ShowVariables { filter, global, .. } => {
            let all = s.inst.all_vars();
            let mut out = Vec::new();
            for (k, _) in all {
                let v = s.get_var(&k, *global).unwrap_or(Value::Null);
                let keep = match filter {
                    None => true,
                    Some(ast::ShowStatementFilter::Like(p))
                    | Some(ast::ShowStatementFilter::ILike(p)) => vars::like_ci(&k, p),
                    Some(ast::ShowStatementFilter::Where(w)) => {
                        let scope = crate::bind::Scope {
                            cols: vec![
                                (String::new(), "Variable_name".into()),
                                (String::new(), "Value".into()),
                            ],
                        };
                        let mut b = crate::bind::Binder::new(&[]);
                        let e = b.expr(w, &scope)?;
                        let env = crate::session::StmtEnv::new(s, &[]);
                        let row = [text(&k), Value::Bytes(v.text())];
                        crate::expr::accepts(&e.eval(&row, &env)?)
                    }
                    #[allow(unreachable_patterns)]
                    Some(_) => true,
                };
                if keep {
                    out.push(vec![text(&k), Value::Bytes(v.text())]);
                }
            }
            rows(sink, &["Variable_name", "Value"], out)
        }
        S::ShowStatus { filter, .. } => {
            let r = show::status(s)
                .into_iter()
                .filter(|(k, _)| match filter {
                    Some(ast::ShowStatementFilter::Like(p)) => vars::like_ci(k, p),
                    _ => true,
                })
                .map(|(k, v)| vec![text(k), v])
                .collect();
            rows(sink, &["Variable_name", "Value"], r)
        }
        S::ShowDatabases { show_options, .. } => {
            let pat = like_of(show_options);
            let r = s
                .inst
                .catalog
                .state()
                .databases
                .keys()
                .chain(["information_schema".to_string()].iter())
                .filter(|d| pat.as_ref().is_none_or(|p| vars::like_ci(d, p)))
                .map(|d| vec![text(d)])
                .collect();
            rows(sink, &["Database"], r)
        }
        S::ShowTables {
            full, show_options, ..
        } => {
            let db = match show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
            {
                Some(n) => name_parts(n).join("."),
                None => s.db.clone().ok_or_else(SqlError::no_db)?,
            };
            let st = s.inst.catalog.state();
            if !st.databases.contains_key(&db) {
                return Err(SqlError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{db}'"),
                ));
            }
            let pat = like_of(show_options);
            let names: Vec<String> = st
                .table_names(&db)
                .into_iter()
                .filter(|t| pat.as_ref().is_none_or(|p| vars::like_ci(t, p)))
                .collect();
            let col = format!("Tables_in_{db}");
            if *full {
                rows(
                    sink,
                    &[&col, "Table_type"],
                    names
                        .into_iter()
                        .map(|t| vec![text(t), text("BASE TABLE")])
                        .collect(),
                )
            } else {
                rows(
                    sink,
                    &[&col],
                    names.into_iter().map(|t| vec![text(t)]).collect(),
                )
            }
        }
        S::ShowColumns {
            full, show_options, ..
        } => {
            let n = show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
                .ok_or_else(|| SqlError::parse("SHOW COLUMNS needs FROM table"))?;
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), n)?;
            show::columns(&t, *full, sink)
        }
        S::ExplainTable { table_name, .. } => {
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), table_name)?;
            show::columns(&t, false, sink)
        }
        S::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            obj_name,
        } => {
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), obj_name)?;
            rows(
                sink,
                &["Table", "Create Table"],
                vec![vec![text(&t.def.name), text(show::create_table(&t.def))]],
            )
        }
        S::Explain { statement, .. } => crate::explain::explain(s, statement, parsed, sink),
        S::CreateDatabase {
            db_name,
            if_not_exists,
            ..
        } => {
            s.commit()?;
            let name = name_parts(db_name).join(".");
            let created = s.inst.catalog.create_database(&name, *if_not_exists)?;
            Ok(Outcome::affected(created as u64))
        }
        S::CreateTable(ct) => {
            s.commit()?;
            let (db, name) = split_name(s, &ct.name)?;
            let warnings = crate::accept::check_create_table(ct)?;
            let def = ddl::table_def(ct, &db, &name)?;
            s.inst.catalog.create_table(def, ct.if_not_exists)?;
            for w in warnings {
                s.warn("Warning", 1235, w);
            }
            ok()
        }
        S::CreateIndex(ci) => {
            s.commit()?;
            if ci.predicate.is_some() || !ci.include.is_empty() || !ci.with.is_empty() {
                return Err(SqlError::unsupported(
                    "partial and covering (INCLUDE) indexes",
                ));
            }
            crate::accept::check_index_options(&ci.index_options)?;
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &ci.table_name)?;
            let cols = ddl::index_columns(&t, &ci.columns)?;
            let name = ci
                .name
                .as_ref()
                .map(|n| name_parts(n).join("."))
                .unwrap_or_else(|| t.def.columns[cols[0]].name.clone());
            ddl::create_index(
                &s.inst.catalog,
                &t,
                &name,
                cols,
                ci.unique,
                ci.if_not_exists,
                &ddl_wait(s),
            )?;
            ok()
        }
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            ..
        } => {
            s.commit()?;
            match object_type {
                ast::ObjectType::Table => {
                    let mut missing = Vec::new();
                    for n in names {
                        let (db, t) = split_name(s, n)?;
                        if !s.inst.catalog.drop_table(&db, &t, true)? {
                            missing.push(format!("{db}.{t}"));
                        }
                    }
                    if !missing.is_empty() {
                        if *if_exists {
                            for m in missing {
                                s.warn("Note", 1051, format!("Unknown table '{m}'"));
                            }
                        } else {
                            return Err(SqlError::new(
                                1051,
                                "42S02",
                                format!("Unknown table '{}'", missing.join(",")),
                            ));
                        }
                    }
                    ok()
                }
                ast::ObjectType::Database | ast::ObjectType::Schema => {
                    let name = names
                        .first()
                        .map(|n| name_parts(n).join("."))
                        .unwrap_or_default();
                    let dropped = s
                        .inst
                        .catalog
                        .drop_database(&name, *if_exists)
                        .map_err(|e| match e {
                            rel::Error::NoSuchDb(d) => SqlError::new(
                                1008,
                                "HY000",
                                format!("Can't drop database '{d}'; database doesn't exist"),
                            ),
                            other => other.into(),
                        })?;
                    match dropped {
                        Some(n) => {
                            if s.db.as_deref() == Some(&name) {
                                s.db = None;
                            }
                            Ok(Outcome::affected(n as u64))
                        }
                        None => {
                            s.warn(
                                "Note",
                                1008,
                                format!("Can't drop database '{name}'; database doesn't exist"),
                            );
                            ok()
                        }
                    }
                }
                ast::ObjectType::Index => {
                    let tn = table
                        .as_ref()
                        .ok_or_else(|| SqlError::parse("DROP INDEX needs ON table"))?;
                    let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), tn)?;
                    let ix = names
                        .first()
                        .map(|n| name_parts(n).join("."))
                        .unwrap_or_default();
                    ddl::drop_index(&s.inst.catalog, &t, &ix)?;
                    ok()
                }
                other => Err(SqlError::unsupported(format!("DROP {other}"))),
            }
        }
        S::Truncate(tr) => {
            s.commit()?;
            for target in &tr.table_names {
                let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &target.name)?;
                ddl::truncate(&s.inst.catalog, &t)?;
            }
            ok()
        }
        S::AlterTable(at) => {
            s.commit()?;
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &at.name)?;
            // Every operation is checked before any runs: no half-applied ALTER.
            for op in &at.operations {
                match op {
                    ast::AlterTableOperation::AddConstraint { constraint, .. } => {
                        crate::accept::check_constraint(constraint)?
                    }
                    ast::AlterTableOperation::DropIndex { .. } => {}
                    other => return Err(SqlError::unsupported(format!("ALTER TABLE {other}"))),
                }
            }
            for op in &at.operations {
                let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), &at.name)
                    .unwrap_or(t.clone());
                match op {
                    ast::AlterTableOperation::AddConstraint { constraint, .. } => {
                        crate::accept::check_constraint(constraint)?;
                        match constraint {
                            ast::TableConstraint::Index(ix) => {
                                let cols = ddl::index_columns(&t, &ix.columns)?;
                                let name = ix
                                    .name
                                    .as_ref()
                                    .map(|n| n.value.clone())
                                    .unwrap_or_else(|| t.def.columns[cols[0]].name.clone());
                                ddl::create_index(
                                    &s.inst.catalog,
                                    &t,
                                    &name,
                                    cols,
                                    false,
                                    false,
                                    &ddl_wait(s),
                                )?;
                            }
                            ast::TableConstraint::Unique(u) => {
                                let cols = ddl::index_columns(&t, &u.columns)?;
                                let name = u
                                    .name
                                    .as_ref()
                                    .or(u.index_name.as_ref())
                                    .map(|n| n.value.clone())
                                    .unwrap_or_else(|| t.def.columns[cols[0]].name.clone());
                                ddl::create_index(
                                    &s.inst.catalog,
                                    &t,
                                    &name,
                                    cols,
                                    true,
                                    false,
                                    &ddl_wait(s),
                                )?;
                            }
                            ast::TableConstraint::ForeignKey(_)
                            | ast::TableConstraint::Check(_) => {
                                crate::accept::check_constraint(constraint)?;
                            }
                            other => {
                                return Err(SqlError::unsupported(format!(
                                    "ALTER TABLE ADD {other}"
                                )))
                            }
                        }
                    }
                    ast::AlterTableOperation::DropIndex { name } => {
                        ddl::drop_index(&s.inst.catalog, &t, &name.value)?
                    }
                    other => return Err(SqlError::unsupported(format!("ALTER TABLE {other}"))),
                }
            }
            ok()
        }
        S::LockTables { .. } => {
            s.warn(
                "Warning",
                1235,
                "LOCK TABLES does not lock in Strata yet: other sessions can still read and write these tables",
            );
            ok()
        }
        S::UnlockTables => ok(),
        S::Analyze(_) => ok(),
        other => Err(SqlError::unsupported(first_words(&other.to_string()))),
    }
}

/// The isolation level and access mode named by START/SET TRANSACTION.
pub fn transaction_modes(
    modes: &[ast::TransactionMode],
) -> Result<(Option<Isolation>, Option<bool>)> {
    let (mut iso, mut ro) = (None, None);
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                iso = Some(match l {
                    ast::TransactionIsolationLevel::ReadCommitted
                    | ast::TransactionIsolationLevel::ReadUncommitted => Isolation::ReadCommitted,
                    ast::TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                    _ => return Err(crate::vars::isolation_unsupported()),
                })
            }
            ast::TransactionMode::AccessMode(a) => {
                ro = Some(matches!(a, ast::TransactionAccessMode::ReadOnly));
            }
        }
    }
    Ok((iso, ro))
}

/// Waits for transactions older than a catalog version, up to the
/// session's lock wait timeout.
fn ddl_wait(s: &Session) -> impl Fn(u64) -> bool + '_ {
    let secs = s
        .get_var("lock_wait_timeout", false)
        .and_then(|v| v.to_i128())
        .unwrap_or(50)
        .clamp(1, 86400) as u64;
    move |v| {
        s.inst
            .wait_for_sessions(v, std::time::Duration::from_secs(secs.min(3600)))
    }
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

fn like_of(o: &ast::ShowStatementOptions) -> Option<String> {
    match &o.filter_position {
        Some(ast::ShowStatementFilterPosition::Infix(ast::ShowStatementFilter::Like(p)))
        | Some(ast::ShowStatementFilterPosition::Suffix(ast::ShowStatementFilter::Like(p))) => {
            Some(p.clone())
        }
        _ => None,
    }
}
