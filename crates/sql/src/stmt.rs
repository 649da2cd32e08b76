//! What a statement is. `classify` is the one place that decides a parsed
//! statement's kind: it sorts sqlparser's statements (and the forms
//! `parse` recognizes itself) into the kinds below, each of which has one
//! home that runs it (`dispatch` routes them: rows to `exec`, transaction
//! control to `txnctl`, SET and USE to `set`, SHOW and DESCRIBE to `show`,
//! DDL to `ddl`, table maintenance to `maint`, EXPLAIN to `explain`, SQL-level
//! PREPARE/EXECUTE to `sqlprep`).
//! A statement kind Strata does not run is refused here with 1235.
use crate::error::{Result, SqlError};
use sqlparser::ast;

/// A statement, by kind.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// Reads or writes rows: planned, and cached with prepared statements.
    Rows(RowStmt),
    /// EXPLAIN of a row statement.
    Explain(RowStmt),
    Txn(TxnStmt),
    Set(SetStmt),
    Show(ShowStmt),
    /// Commits the open transaction first, as in MySQL.
    Ddl(DdlStmt),
    Maint(MaintStmt),
    /// SQL-level prepared statements (`sqlprep`).
    Prep(PrepStmt),
    /// LOAD DATA [LOCAL] INFILE (`load`).
    Load(Box<crate::load::syntax::LoadStmt>),
    /// Only comments or whitespace.
    Empty,
    /// CREATE/ALTER/DROP/RENAME USER, SET PASSWORD, GRANT, REVOKE, SHOW GRANTS.
    Account(crate::account::AccountStmt),
    /// Only comments (e.g. MariaDB's `/*M!... */` in dump files): nothing to do.
    CommentOnly,
    /// CHANGE MASTER TO, START/STOP/RESET SLAVE, SHOW SLAVE STATUS (`replica`).
    Replica(crate::replica::ReplicaStmt),
}

/// SELECT, INSERT/REPLACE, UPDATE, DELETE.
#[derive(Debug, Clone)]
pub enum RowStmt {
    Select(Box<ast::Query>),
    Insert(Box<ast::Insert>),
    Update(Box<ast::Update>),
    /// A DELETE; true for DELETE IGNORE (sqlparser has no place for it).
    Delete(Box<ast::Delete>, bool),
}

/// Transaction control.
#[derive(Debug, Clone)]
pub enum TxnStmt {
    /// BEGIN / START TRANSACTION [modes]; `snapshot`: WITH CONSISTENT SNAPSHOT.
    Start {
        snapshot: bool,
        modes: Vec<ast::TransactionMode>,
    },
    /// COMMIT / ROLLBACK; `chain`: AND CHAIN (a new transaction starts at once,
    /// with the same isolation level and access mode).
    Commit {
        chain: bool,
    },
    Rollback {
        chain: bool,
    },
    /// SAVEPOINT name.
    Savepoint(String),
    /// ROLLBACK [WORK] TO [SAVEPOINT] name.
    RollbackTo(String),
    /// RELEASE SAVEPOINT name.
    Release(String),
    /// SET [GLOBAL | SESSION] TRANSACTION: `scope` None is the next
    /// transaction only, Some(true) the global default, Some(false) the session's.
    Characteristics {
        scope: Option<bool>,
        modes: Vec<ast::TransactionMode>,
        snapshot: bool,
    },
}

/// PREPARE / EXECUTE / DEALLOCATE PREPARE.
#[derive(Debug, Clone)]
pub enum PrepStmt {
    /// PREPARE name FROM 'text' | @var.
    Prepare { name: String, from: Box<ast::Expr> },
    /// EXECUTE name [USING expr, ...].
    Execute { name: String, using: Vec<ast::Expr> },
    /// DEALLOCATE PREPARE name / DROP PREPARE name.
    Deallocate(String),
}

/// Session state: variables, character set, current database.
#[derive(Debug, Clone)]
pub enum SetStmt {
    /// SET NAMES cs [COLLATE c].
    Names {
        charset: String,
        collate: Option<String>,
    },
    /// SET CHARACTER SET cs / SET CHARSET cs.
    CharacterSet(String),
    /// SET of variables (also time_zone).
    Vars(Box<ast::Set>),
    /// USE db.
    Use(String),
}

/// SHOW and DESCRIBE.
#[derive(Debug, Clone)]
pub enum ShowStmt {
    Warnings,
    Errors,
    /// SHOW [GLOBAL | SESSION] STATUS [LIKE].
    Status {
        like: Option<String>,
        global: bool,
    },
    Variables {
        global: bool,
        filter: Option<ast::ShowStatementFilter>,
    },
    Databases {
        like: Option<String>,
    },
    Tables {
        db: Option<String>,
        full: bool,
        like: Option<String>,
    },
    Columns {
        table: ast::ObjectName,
        full: bool,
    },
    CreateTable(ast::ObjectName),
    CreateView(ast::ObjectName),
    CreateDatabase(String),
    Index {
        table: String,
        db: Option<String>,
    },
    TableStatus {
        like: Option<String>,
    },
    Engines,
    /// SHOW ENGINE name STATUS.
    EngineStatus(String),
    Collation {
        like: Option<String>,
    },
    Charset {
        like: Option<String>,
    },
    /// SHOW [FULL] PROCESSLIST.
    ProcessList {
        full: bool,
    },
    Grants,
    /// SHOW MASTER STATUS (`binlogsql`).
    MasterStatus,
    /// SHOW SLAVE HOSTS (`replsrc`).
    SlaveHosts,
    /// SHOW BINARY LOGS.
    BinaryLogs,
    /// SHOW BINLOG EVENTS [IN file] [FROM pos] [LIMIT [offset,] n].
    BinlogEvents {
        file: Option<String>,
        from: u64,
        limit: Option<(u64, u64)>,
    },
}

/// Data definition.
#[derive(Debug, Clone)]
pub enum DdlStmt {
    CreateDatabase {
        name: String,
        if_not_exists: bool,
        /// MariaDB's CREATE OR REPLACE DATABASE: drops it first.
        or_replace: bool,
        charset: Option<String>,
        collate: Option<String>,
    },
    /// ALTER {DATABASE | SCHEMA} [name] [DEFAULT] CHARACTER SET / COLLATE
    /// (parse.rs; `None`: the current database).
    AlterDatabase {
        name: Option<String>,
        charset: Option<String>,
        collate: Option<String>,
    },
    CreateTable(Box<ast::CreateTable>),
    CreateIndex(Box<ast::CreateIndex>),
    AlterTable(Box<ast::AlterTable>),
    /// RENAME TABLE a TO b [, c TO d ...] (old, new).
    RenameTables(Vec<(ast::ObjectName, ast::ObjectName)>),
    /// DROP [TEMPORARY] TABLE. Strata has no temporary tables (CREATE TEMPORARY TABLE is
    /// 1235), so DROP TEMPORARY TABLE names no table there is: every name is unknown (1051,
    /// a note with IF EXISTS) and no permanent table of that name is ever touched.
    DropTables {
        names: Vec<ast::ObjectName>,
        if_exists: bool,
        temporary: bool,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    DropIndex {
        name: String,
        table: ast::ObjectName,
    },
    Truncate(Vec<ast::ObjectName>),
    /// CREATE [OR REPLACE] VIEW, ALTER VIEW (`alter`: the view must exist).
    CreateView {
        view: Box<ast::CreateView>,
        alter: bool,
        /// WITH [CASCADED | LOCAL] CHECK OPTION (read by `parse`).
        check: rel::view::CheckOption,
    },
    DropViews {
        names: Vec<ast::ObjectName>,
        if_exists: bool,
    },
}

/// A table named as (database, table).
pub type TableRef = (Option<String>, String);

/// Table maintenance and locking.
#[derive(Debug, Clone)]
pub enum MaintStmt {
    Check(Vec<TableRef>),
    Analyze(Vec<TableRef>),
    /// OPTIMIZE TABLE: the tables' key ranges compacted (`lsm::Db::compact_range`).
    Optimize(Vec<TableRef>),
    /// REPAIR TABLE: nothing to repair in Strata's engine (a note per
    /// table, as MariaDB's InnoDB answers); MariaDB logs it, so a replica
    /// runs it too.
    Repair(Vec<TableRef>),
    /// FLUSH and what follows it.
    Flush(String),
    LockTables,
    UnlockTables,
    /// ALTER TABLE t DISABLE/ENABLE KEYS (MyISAM's; a note, as InnoDB gives).
    Keys {
        db: Option<String>,
        table: String,
    },
    /// KILL [HARD | SOFT] [CONNECTION | QUERY [ID]] target / KILL USER name.
    Kill {
        connection: bool,
        target: crate::procs::KillTarget,
    },
    /// BACKUP DATABASE TO 'dir' (`backup.rs`).
    Backup(String),
    /// PURGE BINARY LOGS TO 'file' | BEFORE datetime (`binlogsql`).
    Purge {
        to: Option<String>,
        before: Option<String>,
    },
    /// RESET MASTER [TO n] (`binlogsql`).
    ResetMaster {
        to: Option<u32>,
    },
}

/// The parts of a possibly qualified name.
pub fn name_parts(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn joined(n: &ast::ObjectName) -> String {
    name_parts(n).join(".")
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

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Decides what a statement sqlparser produced is.
pub fn classify(stmt: ast::Statement) -> Result<Stmt> {
    use ast::Statement as S;
    Ok(match stmt {
        S::Query(q) => Stmt::Rows(RowStmt::Select(q)),
        S::Insert(i) => Stmt::Rows(RowStmt::Insert(Box::new(i))),
        S::Update(u) => Stmt::Rows(RowStmt::Update(Box::new(u))),
        S::Delete(d) => Stmt::Rows(RowStmt::Delete(Box::new(d), false)),
        S::Explain { statement, .. } => match classify(*statement)? {
            Stmt::Rows(r @ (RowStmt::Select(_) | RowStmt::Update(_) | RowStmt::Delete(..))) => {
                Stmt::Explain(r)
            }
            _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
        },
        S::StartTransaction { ref modes, .. } => {
            let snapshot = stmt
                .to_string()
                .to_ascii_uppercase()
                .contains("CONSISTENT SNAPSHOT");
            Stmt::Txn(TxnStmt::Start {
                snapshot,
                modes: modes.clone(),
            })
        }
        S::Commit {
            chain,
            end: false,
            modifier: None,
        } => Stmt::Txn(TxnStmt::Commit { chain }),
        S::Rollback {
            chain,
            savepoint: None,
        } => Stmt::Txn(TxnStmt::Rollback { chain }),
        S::Rollback {
            chain: false,
            savepoint: Some(name),
        } => Stmt::Txn(TxnStmt::RollbackTo(name.value)),
        S::Savepoint { name } => Stmt::Txn(TxnStmt::Savepoint(name.value)),
        S::ReleaseSavepoint { name } => Stmt::Txn(TxnStmt::Release(name.value)),
        S::Set(ast::Set::SetTransaction {
            modes, snapshot, ..
        }) => Stmt::Txn(TxnStmt::Characteristics {
            scope: None,
            modes,
            snapshot: snapshot.is_some(),
        }),
        S::Set(set) => Stmt::Set(SetStmt::Vars(Box::new(set))),
        S::Use(u) => match u {
            ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                Stmt::Set(SetStmt::Use(joined(&n)))
            }
            _ => return Err(SqlError::unsupported("this USE form")),
        },
        S::ShowVariables { filter, global, .. } => {
            Stmt::Show(ShowStmt::Variables { global, filter })
        }
        S::ShowStatus { filter, global, .. } => Stmt::Show(ShowStmt::Status {
            like: match filter {
                Some(ast::ShowStatementFilter::Like(p)) => Some(p),
                None => None,
                Some(_) => return Err(SqlError::unsupported("SHOW STATUS WHERE")),
            },
            global,
        }),
        S::ShowDatabases { show_options, .. } => Stmt::Show(ShowStmt::Databases {
            like: like_of(&show_options),
        }),
        S::ShowTables {
            full, show_options, ..
        } => Stmt::Show(ShowStmt::Tables {
            db: show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
                .map(joined),
            full,
            like: like_of(&show_options),
        }),
        S::ShowColumns {
            full, show_options, ..
        } => {
            let table = show_options
                .show_in
                .and_then(|i| i.parent_name)
                .ok_or_else(|| SqlError::parse("SHOW COLUMNS needs FROM table"))?;
            Stmt::Show(ShowStmt::Columns { table, full })
        }
        S::ExplainTable { table_name, .. } => Stmt::Show(ShowStmt::Columns {
            table: table_name,
            full: false,
        }),
        S::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            obj_name,
        } => Stmt::Show(ShowStmt::CreateTable(obj_name)),
        S::ShowCreate {
            obj_type: ast::ShowCreateObject::View,
            obj_name,
        } => Stmt::Show(ShowStmt::CreateView(obj_name)),
        S::CreateView(v) => Stmt::Ddl(DdlStmt::CreateView {
            view: Box::new(v),
            alter: false,
            check: rel::view::CheckOption::None,
        }),
        S::AlterView {
            name,
            columns,
            query,
            with_options,
        } => {
            if !with_options.is_empty() {
                return Err(SqlError::unsupported("ALTER VIEW ... WITH options"));
            }
            Stmt::Ddl(DdlStmt::CreateView {
                view: Box::new(ast::CreateView {
                    or_alter: false,
                    or_replace: false,
                    materialized: false,
                    secure: false,
                    name,
                    name_before_not_exists: false,
                    columns: columns
                        .into_iter()
                        .map(|name| ast::ViewColumnDef {
                            name,
                            data_type: None,
                            options: None,
                        })
                        .collect(),
                    query,
                    options: ast::CreateTableOptions::None,
                    cluster_by: vec![],
                    comment: None,
                    with_no_schema_binding: false,
                    if_not_exists: false,
                    temporary: false,
                    copy_grants: false,
                    to: None,
                    params: None,
                }),
                alter: true,
                check: rel::view::CheckOption::None,
            })
        }
        S::CreateDatabase {
            db_name,
            if_not_exists,
            or_replace,
            default_charset,
            default_collation,
            location,
            managed_location,
            transient,
            clone,
            comment,
            default_ddl_collation,
            ..
        } => {
            // Other dialects' options (LOCATION, CLONE, ...) and MariaDB's
            // database COMMENT are not kept: refused rather than dropped.
            if location.is_some()
                || managed_location.is_some()
                || transient
                || clone.is_some()
                || comment.is_some()
                || default_ddl_collation.is_some()
            {
                return Err(SqlError::unsupported("this CREATE DATABASE option"));
            }
            Stmt::Ddl(DdlStmt::CreateDatabase {
                name: joined(&db_name),
                if_not_exists,
                or_replace,
                charset: default_charset,
                collate: default_collation,
            })
        }
        S::CreateTable(mut ct) => {
            crate::ddl::json_alias_create(&mut ct)?;
            Stmt::Ddl(DdlStmt::CreateTable(Box::new(ct)))
        }
        S::CreateIndex(ci) => Stmt::Ddl(DdlStmt::CreateIndex(Box::new(ci))),
        S::AlterTable(mut at) => {
            crate::ddl::json_alias_alter(&mut at)?;
            Stmt::Ddl(DdlStmt::AlterTable(Box::new(at)))
        }
        S::RenameTable(r) => Stmt::Ddl(DdlStmt::RenameTables(
            r.into_iter().map(|r| (r.old_name, r.new_name)).collect(),
        )),
        S::Truncate(tr) => Stmt::Ddl(DdlStmt::Truncate(
            tr.table_names.into_iter().map(|t| t.name).collect(),
        )),
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            temporary,
            ..
        } => Stmt::Ddl(match object_type {
            ast::ObjectType::Table => DdlStmt::DropTables {
                names,
                if_exists,
                temporary,
            },
            _ if temporary => {
                return Err(SqlError::unsupported(format!(
                    "DROP TEMPORARY {object_type}"
                )))
            }
            ast::ObjectType::View => DdlStmt::DropViews { names, if_exists },
            ast::ObjectType::Database | ast::ObjectType::Schema => DdlStmt::DropDatabase {
                name: names.first().map(joined).unwrap_or_default(),
                if_exists,
            },
            ast::ObjectType::Index => DdlStmt::DropIndex {
                name: names.first().map(joined).unwrap_or_default(),
                table: table.ok_or_else(|| SqlError::parse("DROP INDEX needs ON table"))?,
            },
            other => return Err(SqlError::unsupported(format!("DROP {other}"))),
        }),
        S::LockTables { .. } => Stmt::Maint(MaintStmt::LockTables),
        S::UnlockTables => Stmt::Maint(MaintStmt::UnlockTables),
        S::Analyze(a) => Stmt::Maint(MaintStmt::Analyze(
            a.table_name
                .iter()
                .map(|n| {
                    let mut p = name_parts(n);
                    let t = p.pop().unwrap_or_default();
                    (p.pop(), t)
                })
                .collect(),
        )),
        other => return Err(SqlError::unsupported(first_words(&other.to_string()))),
    })
}
