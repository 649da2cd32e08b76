//! The per-statement `Com_*` status counters (MariaDB's names): which one a
//! statement counts in (`of`), and the counter arrays, one per session
//! (SHOW SESSION STATUS) and one for the instance (SHOW GLOBAL STATUS).
use crate::stmt::{DdlStmt, MaintStmt, PrepStmt, RowStmt, SetStmt, ShowStmt, Stmt, TxnStmt};
use std::sync::atomic::{AtomicU64, Ordering};

/// The counters, sorted (SHOW STATUS lists them in this order, as MariaDB).
pub const NAMES: &[&str] = &[
    "admin_commands",
    "alter_db",
    "alter_table",
    "analyze",
    "backup",
    "begin",
    "change_db",
    "check",
    "commit",
    "create_db",
    "create_index",
    "create_table",
    "create_view",
    "dealloc_sql",
    "delete",
    "delete_multi",
    "drop_db",
    "drop_index",
    "drop_table",
    "drop_view",
    "empty_query",
    "execute_sql",
    "flush",
    "insert",
    "insert_select",
    "kill",
    "load",
    "lock_tables",
    "optimize",
    "prepare_sql",
    "purge_before_date",
    "release_savepoint",
    "rename_table",
    "replace",
    "replace_select",
    "rollback",
    "rollback_to_savepoint",
    "savepoint",
    "select",
    "set_option",
    "show_binlog_events",
    "show_binlogs",
    "show_charsets",
    "show_collations",
    "show_create_db",
    "show_create_table",
    "show_databases",
    "show_engine_status",
    "show_errors",
    "show_fields",
    "show_grants",
    "show_keys",
    "show_master_status",
    "show_processlist",
    "show_status",
    "show_storage_engines",
    "show_table_status",
    "show_tables",
    "show_variables",
    "show_warnings",
    "stmt_close",
    "stmt_execute",
    "stmt_fetch",
    "stmt_prepare",
    "stmt_reset",
    "stmt_send_long_data",
    "truncate",
    "unlock_tables",
    "update",
    "update_multi",
];

/// A counter's position in `NAMES` (`name` must be one of them).
pub fn index(name: &str) -> usize {
    NAMES.binary_search(&name).unwrap_or(0)
}

/// The instance's counters.
pub struct Global(Vec<AtomicU64>);

impl Default for Global {
    fn default() -> Self {
        Global(NAMES.iter().map(|_| AtomicU64::new(0)).collect())
    }
}

impl Global {
    pub fn add(&self, i: usize) {
        if let Some(c) = self.0.get(i) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
    pub fn get(&self, i: usize) -> u64 {
        self.0.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

/// The counter a statement counts in (None: none of them).
pub fn of(stmt: &Stmt) -> Option<&'static str> {
    Some(match stmt {
        Stmt::Rows(r) | Stmt::Explain(r) => match r {
            RowStmt::Select(_) => "select",
            RowStmt::Insert(i) => {
                let select = i
                    .source
                    .as_ref()
                    .is_some_and(|q| !matches!(*q.body, sqlparser::ast::SetExpr::Values(_)));
                match (i.replace_into, select) {
                    (false, false) => "insert",
                    (false, true) => "insert_select",
                    (true, false) => "replace",
                    (true, true) => "replace_select",
                }
            }
            RowStmt::Update(u) => {
                if u.table.joins.is_empty() && u.from.is_none() {
                    "update"
                } else {
                    "update_multi"
                }
            }
            RowStmt::Delete(d) => {
                if d.tables.is_empty() && d.using.is_none() {
                    "delete"
                } else {
                    "delete_multi"
                }
            }
        },
        Stmt::Txn(t) => match t {
            TxnStmt::Start { .. } => "begin",
            TxnStmt::Commit { .. } => "commit",
            TxnStmt::Rollback { .. } => "rollback",
            TxnStmt::Savepoint(_) => "savepoint",
            TxnStmt::RollbackTo(_) => "rollback_to_savepoint",
            TxnStmt::Release(_) => "release_savepoint",
            TxnStmt::Characteristics { .. } => "set_option",
        },
        Stmt::Set(SetStmt::Use(_)) => "change_db",
        Stmt::Account(_) => return None,
        Stmt::Set(_) => "set_option",
        Stmt::Show(s) => match s {
            ShowStmt::Warnings => "show_warnings",
            ShowStmt::Errors => "show_errors",
            ShowStmt::Status { .. } => "show_status",
            ShowStmt::Variables { .. } => "show_variables",
            ShowStmt::Databases { .. } => "show_databases",
            ShowStmt::Tables { .. } => "show_tables",
            ShowStmt::Columns { .. } => "show_fields",
            ShowStmt::CreateTable(_) | ShowStmt::CreateView(_) => "show_create_table",
            ShowStmt::CreateDatabase(_) => "show_create_db",
            ShowStmt::Index { .. } => "show_keys",
            ShowStmt::TableStatus { .. } => "show_table_status",
            ShowStmt::Engines => "show_storage_engines",
            ShowStmt::EngineStatus(_) => "show_engine_status",
            ShowStmt::Collation { .. } => "show_collations",
            ShowStmt::Charset { .. } => "show_charsets",
            ShowStmt::ProcessList { .. } => "show_processlist",
            ShowStmt::Grants => "show_grants",
            ShowStmt::MasterStatus => "show_master_status",
            ShowStmt::SlaveHosts => "show_slave_hosts",
            ShowStmt::BinaryLogs => "show_binlogs",
            ShowStmt::BinlogEvents { .. } => "show_binlog_events",
        },
        Stmt::Ddl(d) => match d {
            DdlStmt::CreateDatabase { .. } => "create_db",
            DdlStmt::AlterDatabase { .. } => "alter_db",
            DdlStmt::CreateTable(_) => "create_table",
            DdlStmt::CreateIndex(_) => "create_index",
            DdlStmt::AlterTable(_) => "alter_table",
            DdlStmt::RenameTables(_) => "rename_table",
            DdlStmt::DropTables { .. } => "drop_table",
            DdlStmt::DropDatabase { .. } => "drop_db",
            DdlStmt::DropIndex { .. } => "drop_index",
            DdlStmt::Truncate(_) => "truncate",
            DdlStmt::CreateView { .. } => "create_view",
            DdlStmt::DropViews { .. } => "drop_view",
        },
        Stmt::Maint(m) => match m {
            MaintStmt::Check(_) => "check",
            MaintStmt::Analyze(_) => "analyze",
            MaintStmt::Optimize(_) => "optimize",
            MaintStmt::Flush(_) => "flush",
            MaintStmt::LockTables => "lock_tables",
            MaintStmt::UnlockTables => "unlock_tables",
            MaintStmt::Keys { .. } => "alter_table",
            MaintStmt::Kill { .. } => "kill",
            MaintStmt::Backup(_) => "backup",
            MaintStmt::Purge { .. } => "purge_before_date",
            MaintStmt::ResetMaster { .. } => "reset",
        },
        Stmt::Prep(p) => match p {
            PrepStmt::Prepare { .. } => "prepare_sql",
            PrepStmt::Execute { .. } => "execute_sql",
            PrepStmt::Deallocate(_) => "dealloc_sql",
        },
        Stmt::Empty => "empty_query",
        Stmt::Load(_) => "load",
        Stmt::Replica(r) => match r {
            crate::replica::ReplicaStmt::ChangeMaster(_) => "change_master",
            crate::replica::ReplicaStmt::Start => "slave_start",
            crate::replica::ReplicaStmt::Stop => "slave_stop",
            crate::replica::ReplicaStmt::Reset { .. } => "reset",
            crate::replica::ReplicaStmt::ShowStatus => "show_slave_status",
        },
        Stmt::CommentOnly => return None,
    })
}
