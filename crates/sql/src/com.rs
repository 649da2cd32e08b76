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
    "change_master",
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
    "repair",
    "replace",
    "replace_select",
    "reset",
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
    "show_slave_hosts",
    "show_slave_status",
    "show_status",
    "show_storage_engines",
    "show_table_status",
    "show_tables",
    "show_variables",
    "show_warnings",
    "start_slave",
    "stmt_close",
    "stmt_execute",
    "stmt_fetch",
    "stmt_prepare",
    "stmt_reset",
    "stmt_send_long_data",
    "stop_slave",
    "truncate",
    "unlock_tables",
    "update",
    "update_multi",
];

/// A counter's position in `NAMES` (`name` must be one of them).
pub fn index(name: &str) -> usize {
    NAMES.binary_search(&name).unwrap_or(0)
}

/// `index` at compile time (`com!`): a name that is not a counter does not
/// compile, and a statement finds its counter without a search.
pub const fn at(name: &str) -> usize {
    let mut i = 0;
    while i < NAMES.len() {
        if crate::sqlmode::eq(NAMES[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("not a Com_ counter")
}

/// The position of counter `$name` in `NAMES`, as a constant.
macro_rules! com {
    ($name:literal) => {
        const { $crate::com::at($name) }
    };
}
pub(crate) use com;

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

/// The counter a statement counts in, as its position in `NAMES` (None: none
/// of them).
pub fn of(stmt: &Stmt) -> Option<usize> {
    Some(match stmt {
        Stmt::Rows(r) | Stmt::Explain(r) => match r {
            RowStmt::Select(_) => com!("select"),
            RowStmt::Insert(i) => {
                let select = i
                    .source
                    .as_ref()
                    .is_some_and(|q| !matches!(*q.body, sqlparser::ast::SetExpr::Values(_)));
                match (i.replace_into, select) {
                    (false, false) => com!("insert"),
                    (false, true) => com!("insert_select"),
                    (true, false) => com!("replace"),
                    (true, true) => com!("replace_select"),
                }
            }
            RowStmt::Update(u) => {
                if u.table.joins.is_empty() && u.from.is_none() {
                    com!("update")
                } else {
                    com!("update_multi")
                }
            }
            RowStmt::Delete(d, _) => {
                if d.tables.is_empty() && d.using.is_none() {
                    com!("delete")
                } else {
                    com!("delete_multi")
                }
            }
        },
        Stmt::Txn(t) => match t {
            TxnStmt::Start { .. } => com!("begin"),
            TxnStmt::Commit { .. } => com!("commit"),
            TxnStmt::Rollback { .. } => com!("rollback"),
            TxnStmt::Savepoint(_) => com!("savepoint"),
            TxnStmt::RollbackTo(_) => com!("rollback_to_savepoint"),
            TxnStmt::Release(_) => com!("release_savepoint"),
            TxnStmt::Characteristics { .. } => com!("set_option"),
        },
        Stmt::Set(SetStmt::Use(_)) => com!("change_db"),
        Stmt::Account(_) => return None,
        Stmt::Set(_) => com!("set_option"),
        Stmt::Show(s) => match s {
            ShowStmt::Warnings => com!("show_warnings"),
            ShowStmt::Errors => com!("show_errors"),
            ShowStmt::Status { .. } => com!("show_status"),
            ShowStmt::Variables { .. } => com!("show_variables"),
            ShowStmt::Databases { .. } => com!("show_databases"),
            ShowStmt::Tables { .. } => com!("show_tables"),
            ShowStmt::Columns { .. } => com!("show_fields"),
            ShowStmt::CreateTable(_) | ShowStmt::CreateView(_) => com!("show_create_table"),
            ShowStmt::CreateDatabase(_) => com!("show_create_db"),
            ShowStmt::Index { .. } => com!("show_keys"),
            ShowStmt::TableStatus { .. } => com!("show_table_status"),
            ShowStmt::Engines => com!("show_storage_engines"),
            ShowStmt::EngineStatus(_) => com!("show_engine_status"),
            ShowStmt::Collation { .. } => com!("show_collations"),
            ShowStmt::Charset { .. } => com!("show_charsets"),
            ShowStmt::ProcessList { .. } => com!("show_processlist"),
            ShowStmt::Grants => com!("show_grants"),
            ShowStmt::MasterStatus => com!("show_master_status"),
            ShowStmt::SlaveHosts => com!("show_slave_hosts"),
            ShowStmt::BinaryLogs => com!("show_binlogs"),
            ShowStmt::BinlogEvents { .. } => com!("show_binlog_events"),
        },
        Stmt::Ddl(d) => match d {
            DdlStmt::CreateDatabase { .. } => com!("create_db"),
            DdlStmt::AlterDatabase { .. } => com!("alter_db"),
            DdlStmt::CreateTable(_) => com!("create_table"),
            DdlStmt::CreateIndex(_) => com!("create_index"),
            DdlStmt::AlterTable(_) => com!("alter_table"),
            DdlStmt::RenameTables(_) => com!("rename_table"),
            DdlStmt::DropTables { .. } => com!("drop_table"),
            DdlStmt::DropDatabase { .. } => com!("drop_db"),
            DdlStmt::DropIndex { .. } => com!("drop_index"),
            DdlStmt::Truncate(_) => com!("truncate"),
            DdlStmt::CreateView { .. } => com!("create_view"),
            DdlStmt::DropViews { .. } => com!("drop_view"),
        },
        Stmt::Maint(m) => match m {
            MaintStmt::Check(_) => com!("check"),
            MaintStmt::Analyze(_) => com!("analyze"),
            MaintStmt::Optimize(_) => com!("optimize"),
            MaintStmt::Repair(_) => com!("repair"),
            MaintStmt::Flush(_) => com!("flush"),
            MaintStmt::LockTables => com!("lock_tables"),
            MaintStmt::UnlockTables => com!("unlock_tables"),
            MaintStmt::Keys { .. } => com!("alter_table"),
            MaintStmt::Kill { .. } => com!("kill"),
            MaintStmt::Backup(_) => com!("backup"),
            MaintStmt::Purge { .. } => com!("purge_before_date"),
            MaintStmt::ResetMaster { .. } => com!("reset"),
        },
        Stmt::Prep(p) => match p {
            PrepStmt::Prepare { .. } => com!("prepare_sql"),
            PrepStmt::Execute { .. } => com!("execute_sql"),
            PrepStmt::Deallocate(_) => com!("dealloc_sql"),
        },
        Stmt::Empty => com!("empty_query"),
        Stmt::Load(_) => com!("load"),
        Stmt::Replica(r) => match r {
            crate::replica::ReplicaStmt::ChangeMaster(_) => com!("change_master"),
            crate::replica::ReplicaStmt::Start => com!("start_slave"),
            crate::replica::ReplicaStmt::Stop => com!("stop_slave"),
            crate::replica::ReplicaStmt::Reset { .. } => com!("reset"),
            crate::replica::ReplicaStmt::ShowStatus => com!("show_slave_status"),
        },
        Stmt::CommentOnly => return None,
    })
}
