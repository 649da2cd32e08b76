//! SHOW and DESCRIBE: one function per form, from the catalog, the
//! session and the server's counters. Table descriptions live in `table`,
//! status counters in `status`.
pub mod engine;
pub mod status;
mod table;

pub use status::status;
pub use table::{columns, create_table, index, table_status};

use crate::error::{Result, SqlError};
use crate::result::{rows, text, Outcome, ResultSink};
use crate::select::resolve_table;
use crate::session::Session;
use crate::stmt::ShowStmt;
use crate::vars;
use rel::value::Value;
use sqlparser::ast;

/// Runs a SHOW / DESCRIBE statement.
pub fn run(s: &mut Session, stmt: &ShowStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    match stmt {
        ShowStmt::Warnings | ShowStmt::Errors => {
            let only_err = matches!(stmt, ShowStmt::Errors);
            let r = s
                .warnings
                .iter()
                .filter(|w| !only_err || w.level == "Error")
                .map(|w| vec![text(w.level), Value::Int(w.code as i64), text(&w.msg)])
                .collect();
            rows(sink, &["Level", "Code", "Message"], r)
        }
        ShowStmt::Status { like, global } => {
            let r = status(s, *global)
                .into_iter()
                .filter(|(k, _)| like.as_ref().is_none_or(|l| vars::like_ci(k, l)))
                .map(|(k, v)| vec![text(k), v])
                .collect();
            rows(sink, &["Variable_name", "Value"], r)
        }
        ShowStmt::Variables { global, filter } => variables(s, *global, filter.as_ref(), sink),
        ShowStmt::Databases { like } => {
            let vis = crate::account::Visibility::of(s);
            let r = s
                .inst
                .catalog
                .state()
                .databases
                .keys()
                .chain(["information_schema".to_string()].iter())
                .filter(|d| vis.db(d))
                .filter(|d| like.as_ref().is_none_or(|p| vars::like_ci(d, p)))
                .map(|d| vec![text(d)])
                .collect();
            rows(sink, &["Database"], r)
        }
        ShowStmt::Tables { db, full, like } => tables(s, db.as_ref(), *full, like.as_ref(), sink),
        ShowStmt::Columns { table, full } => {
            let st = s.inst.catalog.state();
            if let Some(v) = crate::select::view::lookup(&st, s.db.as_deref(), table) {
                let t = crate::select::view::view_table(&st, &v)?;
                return columns(&t, *full, sink);
            }
            let t = resolve_table(&st, s.db.as_deref(), table)?;
            columns(&t, *full, sink)
        }
        ShowStmt::CreateView(name) => {
            let st = s.inst.catalog.state();
            match crate::select::view::lookup(&st, s.db.as_deref(), name) {
                Some(v) => show_create_view(&v, sink),
                None => {
                    let t = resolve_table(&st, s.db.as_deref(), name)?;
                    Err(SqlError::wrong_object(&t.def.db, &t.def.name, "VIEW"))
                }
            }
        }
        ShowStmt::CreateTable(name) => {
            let st = s.inst.catalog.state();
            if let Some(v) = crate::select::view::lookup(&st, s.db.as_deref(), name) {
                return show_create_view(&v, sink);
            }
            let t = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), name)?;
            rows(
                sink,
                &["Table", "Create Table"],
                vec![vec![text(&t.def.name), text(create_table(&t.def))]],
            )
        }
        ShowStmt::Index { table, db } => {
            let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
            let st = s.inst.catalog.state();
            let t = st
                .table(&db, table)
                .ok_or_else(|| SqlError::no_table(format!("{db}.{table}")))?;
            index(t, sink)
        }
        ShowStmt::TableStatus { like } => table_status(s, like.as_deref(), sink),
        ShowStmt::Engines => rows(
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
        ShowStmt::EngineStatus(engine) => engine::status(s, engine, sink),
        ShowStmt::Collation { like } => rows(
            sink,
            &[
                "Collation",
                "Charset",
                "Id",
                "Default",
                "Compiled",
                "Sortlen",
            ],
            rel::collation::ALL
                .iter()
                .filter(|c| like.as_ref().is_none_or(|p| vars::like_ci(c.name(), p)))
                .map(|c| {
                    let dflt =
                        rel::collation::Collation::default_of_charset(c.charset()) == Some(*c);
                    vec![
                        text(c.name()),
                        text(c.charset()),
                        Value::Int(c.id() as i64),
                        text(if dflt { "Yes" } else { "" }),
                        text("Yes"),
                        Value::Int(c.sortlen() as i64),
                    ]
                })
                .collect(),
        ),
        ShowStmt::Charset { like } => rows(
            sink,
            &["Charset", "Description", "Default collation", "Maxlen"],
            crate::infoschema::charsets()
                .into_iter()
                .filter(|(cs, ..)| like.as_ref().is_none_or(|p| vars::like_ci(cs, p)))
                .map(|(cs, dflt, desc)| {
                    vec![
                        text(cs),
                        text(desc),
                        text(dflt.name()),
                        Value::Int(dflt.max_len() as i64),
                    ]
                })
                .collect(),
        ),
        ShowStmt::ProcessList { full } => rows(
            sink,
            &[
                "Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress",
            ],
            crate::procs::visible(s)
                .iter()
                .map(|p| {
                    let mut r = p.row(*full);
                    r.truncate(8);
                    r.push(text(p.progress_percent()));
                    r
                })
                .collect(),
        ),
        ShowStmt::MasterStatus | ShowStmt::BinaryLogs | ShowStmt::BinlogEvents { .. } => {
            crate::binlogsql::show(s, stmt, sink)
        }
        ShowStmt::SlaveHosts => crate::replsrc::show_hosts(s, sink),
        ShowStmt::Grants => rows(
            sink,
            &[&format!("Grants for {}@%", s.user)],
            vec![vec![text(format!(
                "GRANT ALL PRIVILEGES ON *.* TO `{}`@`%`",
                s.user
            ))]],
        ),
        ShowStmt::CreateDatabase(name) => {
            let c = match s.inst.catalog.state().databases.get(name) {
                None => return Err(SqlError::bad_db(name)),
                Some(Ok(c)) => *c,
                Some(Err(why)) => return Err(crate::ddl::unreadable_db(name, why)),
            };
            rows(
                sink,
                &["Database", "Create Database"],
                vec![vec![
                    text(name),
                    text(format!(
                        "CREATE DATABASE `{}` /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */",
                        name.replace('`', "``"),
                        c.charset(),
                        c.name()
                    )),
                ]],
            )
        }
    }
}

/// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view): MySQL's four columns.
fn show_create_view(v: &rel::view::ViewDef, sink: &mut dyn ResultSink) -> Result<Outcome> {
    rows(
        sink,
        &[
            "View",
            "Create View",
            "character_set_client",
            "collation_connection",
        ],
        vec![vec![
            text(&v.name),
            text(crate::ddl::view_create_text(v)),
            text(&v.charset_client),
            text(&v.collation_connection),
        ]],
    )
}

/// SHOW [GLOBAL | SESSION] VARIABLES [LIKE ... | WHERE ...].
fn variables(
    s: &Session,
    global: bool,
    filter: Option<&ast::ShowStatementFilter>,
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    let mut out = Vec::new();
    for (k, _) in s.inst.all_vars() {
        let v = s.get_var(&k, global).unwrap_or(Value::Null);
        let keep = match filter {
            None => true,
            Some(ast::ShowStatementFilter::Like(p)) | Some(ast::ShowStatementFilter::ILike(p)) => {
                vars::like_ci(&k, p)
            }
            Some(ast::ShowStatementFilter::Where(w)) => {
                let scope = crate::bind::Scope {
                    cols: vec![
                        (String::new(), "Variable_name".into()),
                        (String::new(), "Value".into()),
                    ],
                    types: Vec::new(),
                    hidden: Vec::new(),
                };
                let mut b = crate::bind::Binder::new(&[]);
                let e = b.expr(w, &scope)?;
                let env = crate::env::StmtEnv::new(s, &[]);
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

/// SHOW [FULL] TABLES [FROM db] [LIKE ...].
fn tables(
    s: &Session,
    db: Option<&String>,
    full: bool,
    like: Option<&String>,
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    let db = match db {
        Some(d) => d.clone(),
        None => s.db.clone().ok_or_else(SqlError::no_db)?,
    };
    let st = s.inst.catalog.state();
    let system = crate::infoschema::is_schema(&db);
    if !system && !st.databases.contains_key(&db) {
        return Err(SqlError::bad_db(db));
    }
    let all = if system {
        crate::infoschema::View::ALL
            .iter()
            .map(|v| v.name().to_string())
            .collect()
    } else {
        let mut v = st.table_names(&db);
        v.extend(st.view_names(&db));
        v.sort();
        v
    };
    // Only the tables the account holds some privilege on (as MariaDB).
    let vis = crate::account::Visibility::of(s);
    let names: Vec<String> = all
        .into_iter()
        .filter(|t| like.is_none_or(|p| vars::like_ci(t, p)))
        .filter(|t| vis.table(&db, t))
        .collect();
    let kind = |t: &str| {
        if system {
            "SYSTEM VIEW"
        } else if st.view(&db, t).is_some() {
            "VIEW"
        } else {
            "BASE TABLE"
        }
    };
    let col = format!("Tables_in_{db}");
    if full {
        rows(
            sink,
            &[&col, "Table_type"],
            names
                .into_iter()
                .map(|t| vec![text(kind(&t)), text(t)].into_iter().rev().collect())
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
