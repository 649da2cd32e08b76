//! Privilege checks: before a statement runs, the session's account must
//! hold what the statement needs on what it names (MySQL's rules: a table's
//! privileges are the global, database and table level grants together),
//! and what the account may see (SHOW DATABASES/TABLES, information_schema).
//! A session without an account (embedded use, tests, --skip-grant-tables)
//! may do everything.
use super::{AccountStmt, Target};
use crate::error::{Result, SqlError};
use crate::session::Session;
use crate::stmt::{name_parts, DdlStmt, MaintStmt, RowStmt, SetStmt, ShowStmt, Stmt};
use rel::catalog::{privs as p, Account};
use sqlparser::ast;
use std::sync::Arc;

/// The session's account as it is now (`None`: no account, all
/// privileges); an account dropped since the login has none.
fn account_of(s: &Session) -> Option<Arc<Account>> {
    looked_up(s).map(|(a, _)| a)
}

/// The session's account as the catalog of one version holds it, with
/// whether it passes every check (`check`): remembered per session, so a
/// statement does not look the account up again while the catalog keeps its
/// version. Every account statement (CREATE/DROP USER, GRANT, REVOKE, SET
/// PASSWORD, ...) and every DDL publishes a new catalog version, so the next
/// statement after one, in any session, looks the account up again.
pub(crate) struct AccountMemo {
    version: u64,
    user: String,
    host: String,
    account: Arc<Account>,
    /// Holds every privilege with GRANT OPTION and the catalog has no views.
    passes_all: bool,
}

fn looked_up(s: &Session) -> Option<(Arc<Account>, bool)> {
    let (u, h) = s.account.as_ref()?;
    // The version first: a catalog published after it is only newer, and the
    // next statement then sees a version other than the one remembered.
    let version = s.inst.catalog.version();
    if let Ok(m) = s.account_memo.try_borrow() {
        if let Some(m) = m
            .as_ref()
            .filter(|m| m.version == version && m.user == *u && m.host == *h)
        {
            return Some((m.account.clone(), m.passes_all));
        }
    }
    let st = s.inst.catalog.state();
    let account = st
        .accounts
        .get(&(u.clone(), h.clone()))
        .cloned()
        .unwrap_or_else(|| Arc::new(Account::new(u, h)));
    // An account holding everything passes every check but a view's: its
    // definer's rights are the ones used, whoever reads it (MariaDB).
    let passes_all = account.global & p::ALL == p::ALL
        && account.global & p::GRANT_OPTION != 0
        && st.views.is_empty();
    if let Ok(mut m) = s.account_memo.try_borrow_mut() {
        *m = Some(AccountMemo {
            version,
            user: u.clone(),
            host: h.clone(),
            account: account.clone(),
            passes_all,
        });
    }
    Some((account, passes_all))
}

/// Whether the session's account holds every privilege of `need` globally
/// (a session without an account holds all). The user's name says nothing:
/// an account named root without privileges has none.
pub fn has_global(s: &Session, need: u64) -> bool {
    account_of(s).is_none_or(|a| a.global & need == need)
}

/// Whether the session may see database `db` (SHOW DATABASES, SCHEMATA):
/// SHOW DATABASES, or some privilege in it.
pub fn can_see_db(s: &Session, db: &str) -> bool {
    Visibility::of(s).db(db)
}

/// A filter for many names: the account looked up once.
pub struct Visibility(Option<Arc<Account>>);

impl Visibility {
    pub fn of(s: &Session) -> Visibility {
        Visibility(account_of(s))
    }
    pub fn db(&self, db: &str) -> bool {
        db.eq_ignore_ascii_case("information_schema")
            || self
                .0
                .as_ref()
                .is_none_or(|a| a.global & p::SHOW_DATABASES != 0 || a.any_in_db(db))
    }
    pub fn table(&self, db: &str, t: &str) -> bool {
        db.eq_ignore_ascii_case("information_schema")
            || self.0.as_ref().is_none_or(|a| a.any_on_table(db, t))
    }
}

struct Who<'a> {
    s: &'a Session,
    a: Arc<Account>,
}

impl Who<'_> {
    /// The user and the client's host (1142 names these).
    fn user(&self) -> (&str, &str) {
        (&self.s.user, &self.s.host)
    }
    /// The user and the account's host pattern (1044 and 1045 name these).
    fn account(&self) -> (&str, &str) {
        match &self.s.account {
            Some((u, h)) => (u, h),
            None => self.user(),
        }
    }
    fn table(&self, need: u64, cmd: &str, db: &str, t: &str) -> Result<()> {
        self.own_table(need, cmd, db, t)?;
        let st = self.s.inst.catalog.state();
        match st.view(db, t) {
            Some(v) => self.through_view(&st, need, v, v, 0),
            None => Ok(()),
        }
    }
    /// The account's own privileges on a table or view (a view's definer
    /// is not asked: GRANT on a view).
    fn own_table(&self, need: u64, cmd: &str, db: &str, t: &str) -> Result<()> {
        if is_info(db) {
            return self.info_read(need);
        }
        if self.a.table_privs(db, t) & need != need {
            let (u, h) = self.user();
            return Err(SqlError::table_access_denied(cmd, u, h, db, t));
        }
        Ok(())
    }
    /// What view `v` (reached from `top`, the view the statement names)
    /// reads, and for a write the table or view beneath it that the write
    /// goes to, must be held by its definer (SQL SECURITY DEFINER) or the
    /// session's account (INVOKER), else 1356 naming `top`, as MariaDB;
    /// views beneath are checked the same way, each by its own definer,
    /// for reads and writes alike. A definer account that does not exist
    /// is 1449 (MariaDB refuses the view rather than fall back to the
    /// invoker).
    fn through_view(
        &self,
        st: &rel::catalog::CatalogState,
        need: u64,
        v: &rel::view::ViewDef,
        top: &rel::view::ViewDef,
        depth: usize,
    ) -> Result<()> {
        let invalid = || SqlError::view_invalid(&top.db, &top.name);
        if depth > 64 {
            return Err(invalid());
        }
        let definer;
        let acct: &Account = if v.invoker {
            &self.a
        } else {
            definer = definer_account(st, &v.definer_user, &v.definer_host)
                .ok_or_else(|| SqlError::no_such_definer(&v.definer_user, &v.definer_host))?;
            &definer
        };
        let writes = need & (p::INSERT | p::UPDATE | p::DELETE);
        let mut below = None;
        if writes != 0 {
            if let Some((d, t)) = crate::viewdml::direct_source(st, v)? {
                if acct.table_privs(&d, &t) & writes != writes {
                    return Err(invalid());
                }
                if let Some(sub) = st.view(&d, &t) {
                    self.through_view(st, writes, sub, top, depth + 1)?;
                    below = Some((d, t));
                }
            }
        }
        if need & p::SELECT != 0 || writes != 0 {
            let q = crate::select::view::qualified(v)?;
            for (d, t) in super::rows::tables_read(&q, &v.db) {
                if is_info(&d) {
                    continue;
                }
                if acct.table_privs(&d, &t) & p::SELECT == 0 {
                    return Err(invalid());
                }
                if let Some(sub) = st.view(&d, &t) {
                    if below.as_ref() != Some(&(d.clone(), t.clone())) {
                        self.through_view(st, p::SELECT, sub, top, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }
    /// Some privilege on the table (SHOW CREATE TABLE, SHOW COLUMNS).
    fn any_table(&self, cmd: &str, db: &str, t: &str) -> Result<()> {
        if db.eq_ignore_ascii_case("information_schema") || self.a.any_on_table(db, t) {
            return Ok(());
        }
        let (u, h) = self.user();
        Err(SqlError::table_access_denied(cmd, u, h, db, t))
    }
    fn db(&self, need: u64, db: &str) -> Result<()> {
        if is_info(db) {
            return self.info_read(need);
        }
        if (self.a.global | self.a.db_privs(db)) & need == need {
            return Ok(());
        }
        let (u, h) = self.account();
        Err(SqlError::db_access_denied(u, h, db))
    }
    /// information_schema is readable by everyone and writable by no one
    /// (1044, as MySQL).
    fn info_read(&self, need: u64) -> Result<()> {
        if need & !p::SELECT == 0 {
            return Ok(());
        }
        let (u, h) = self.account();
        Err(SqlError::db_access_denied(u, h, "information_schema"))
    }
    /// Some privilege in the database (USE, SHOW TABLES).
    fn any_db(&self, db: &str) -> Result<()> {
        if db.eq_ignore_ascii_case("information_schema") || self.a.any_in_db(db) {
            return Ok(());
        }
        let (u, h) = self.account();
        Err(SqlError::db_access_denied(u, h, db))
    }
    fn specific(&self, need: u64, name: &str) -> Result<()> {
        if self.a.global & need != 0 {
            return Ok(());
        }
        Err(SqlError::specific_access_denied(name))
    }
    /// (database, table) of a name (the current database for a bare one).
    fn split(&self, n: &ast::ObjectName) -> (String, String) {
        let parts = name_parts(n);
        match parts.as_slice() {
            [d, t] => (d.clone(), t.clone()),
            [t] => (self.current_db(), t.clone()),
            _ => (String::new(), parts.join(".")),
        }
    }
    fn tables(&self, names: &[ast::ObjectName], need: u64, cmd: &str) -> Result<()> {
        for n in names {
            let (d, t) = self.split(n);
            self.table(need, cmd, &d, &t)?;
        }
        Ok(())
    }
    /// A table moving from `from` to `to` (RENAME TABLE, ALTER TABLE ...
    /// RENAME): ALTER and DROP on the old name, CREATE and INSERT on the
    /// new; 1142 names the privileges missing, as MariaDB ("DROP, ALTER
    /// command denied", "INSERT, CREATE command denied").
    fn rename(&self, from: &ast::ObjectName, to: &ast::ObjectName) -> Result<()> {
        for (n, need) in [(from, p::ALTER | p::DROP), (to, p::CREATE | p::INSERT)] {
            let (d, t) = self.split(n);
            let lacking = need & !self.a.table_privs(&d, &t);
            self.own_table(need, &missing(lacking), &d, &t)?;
        }
        Ok(())
    }
    fn current_db(&self) -> String {
        self.s.db.clone().unwrap_or_default()
    }
    fn denied_password(&self) -> SqlError {
        let (u, h) = self.account();
        SqlError::access_denied(u, h, if self.a.has_password() { "YES" } else { "NO" })
    }
}

/// Refuses `stmt` unless the session's account may run it (1142, 1044,
/// 1227 or 1045 as MySQL gives them).
pub fn check(s: &Session, stmt: &Stmt) -> Result<()> {
    let Some((a, passes_all)) = looked_up(s) else {
        return Ok(());
    };
    let w = Who { s, a };
    info_schema_writes(&w, stmt)?;
    if passes_all {
        return Ok(());
    }
    match stmt {
        Stmt::Rows(r) | Stmt::Explain(r) => super::rows::rows(&w.rows(), r),
        Stmt::Set(SetStmt::Use(db)) => w.any_db(db),
        // sql_log_bin keeps a session's changes out of the binary log:
        // SUPER (MariaDB: SUPER or BINLOG ADMIN, which Strata lacks).
        Stmt::Set(SetStmt::Vars(v))
            if sets_global(v) || v.to_string().to_ascii_uppercase().contains("SQL_LOG_BIN") =>
        {
            w.specific(p::SUPER, "SUPER")
        }
        Stmt::Txn(crate::stmt::TxnStmt::Characteristics {
            scope: Some(true), ..
        }) => w.specific(p::SUPER, "SUPER"),
        Stmt::Txn(_)
        | Stmt::Set(_)
        | Stmt::Prep(_)
        | Stmt::Empty
        | Stmt::CommentOnly
        | Stmt::Show(
            ShowStmt::Warnings
            | ShowStmt::Errors
            | ShowStmt::Status { .. }
            | ShowStmt::Variables { .. }
            | ShowStmt::Databases { .. }
            | ShowStmt::Engines
            | ShowStmt::Collation { .. }
            | ShowStmt::Charset { .. }
            | ShowStmt::ProcessList { .. }
            | ShowStmt::Grants,
        ) => Ok(()),
        // MariaDB's BINLOG MONITOR (REPLICATION CLIENT's new name).
        Stmt::Show(
            ShowStmt::MasterStatus | ShowStmt::BinaryLogs | ShowStmt::BinlogEvents { .. },
        ) => w.specific(p::REPLICATION_CLIENT, "BINLOG MONITOR"),
        // MariaDB's SLAVE MONITOR and REPLICATION SLAVE ADMIN.
        Stmt::Replica(crate::replica::ReplicaStmt::ShowStatus) => {
            w.specific(p::REPLICATION_CLIENT, "SUPER, SLAVE MONITOR")
        }
        Stmt::Replica(_) => w.specific(p::SUPER, "SUPER, REPLICATION SLAVE ADMIN"),
        // MariaDB 10.5+: REPLICATION MASTER ADMIN (REPLICATION SLAVE no
        // longer does); SUPER stands for it, as for the other admin ones.
        Stmt::Show(ShowStmt::SlaveHosts) => w.specific(p::SUPER, "SUPER, REPLICATION MASTER ADMIN"),
        Stmt::Show(sh) => show(&w, sh),
        Stmt::Ddl(d) => ddl(&w, d),
        Stmt::Maint(m) => maint(&w, m),
        Stmt::Account(a) => account(&w, a),
        Stmt::Load(l) => {
            // INSERT on the table (and DELETE for REPLACE); FILE to read the
            // server's files (also asked of LOCAL for now: stricter than MySQL).
            w.specific(p::FILE, "FILE")?;
            let need = match l.dup {
                crate::load::syntax::Dup::Replace => p::INSERT | p::DELETE,
                _ => p::INSERT,
            };
            let (d, t) = w.split(&l.table);
            w.table(need, "INSERT", &d, &t)
        }
    }
}

impl<'a> Who<'a> {
    /// The table checks of a row statement.
    fn rows(&'a self) -> super::rows::Tables<'a> {
        super::rows::Tables {
            check: Box::new(move |need, cmd, db, t| self.table(need, cmd, db, t)),
            column: Box::new(move |db, t, col| {
                if self.a.table_privs(db, t) & p::SELECT != 0 {
                    return Ok(());
                }
                let (u, h) = self.user();
                Err(SqlError::column_access_denied("SELECT", u, h, col, t))
            }),
            db: self.current_db(),
        }
    }
}

fn show(w: &Who, sh: &ShowStmt) -> Result<()> {
    match sh {
        ShowStmt::Tables { db, .. } => w.any_db(&db.clone().unwrap_or_else(|| w.current_db())),
        ShowStmt::TableStatus { .. } => w.any_db(&w.current_db()),
        ShowStmt::CreateDatabase(d) => w.any_db(d),
        ShowStmt::Columns { table, .. } => {
            let (d, t) = w.split(table);
            w.any_table("SELECT", &d, &t)
        }
        ShowStmt::CreateTable(table) | ShowStmt::CreateView(table) => {
            let (d, t) = w.split(table);
            w.any_table("SHOW", &d, &t)
        }
        ShowStmt::Index { table, db } => {
            let d = db.clone().unwrap_or_else(|| w.current_db());
            w.any_table("SELECT", &d, table)
        }
        ShowStmt::EngineStatus(_) => w.specific(p::PROCESS, "PROCESS"),
        _ => Ok(()),
    }
}

/// Whether a SET assigns a global variable (`SET GLOBAL x`, `SET
/// @@global.x`), by the parsed scope and names, never by the values.
fn sets_global(v: &ast::Set) -> bool {
    let name = |n: &ast::ObjectName| {
        n.to_string()
            .trim_start_matches('`')
            .to_ascii_uppercase()
            .starts_with("@@GLOBAL.")
    };
    let scope = |c: &Option<ast::ContextModifier>| matches!(c, Some(ast::ContextModifier::Global));
    match v {
        ast::Set::SingleAssignment {
            scope: c, variable, ..
        } => scope(c) || name(variable),
        ast::Set::MultipleAssignments { assignments } => {
            assignments.iter().any(|a| scope(&a.scope) || name(&a.name))
        }
        ast::Set::ParenthesizedAssignments { variables, .. } => variables.iter().any(name),
        // Other forms: by their text (stricter).
        other => other.to_string().to_ascii_uppercase().contains("GLOBAL"),
    }
}

/// The names of privileges `bits`, comma separated in MariaDB's order
/// (its 1142 for a statement needing several).
fn missing(bits: u64) -> String {
    let v: Vec<&str> = p::NAMES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    v.join(", ")
}

fn is_info(db: &str) -> bool {
    db.eq_ignore_ascii_case("information_schema")
}

/// Creating, changing or dropping information_schema (in any case) or
/// anything in it, or granting on it, is refused to every account, root
/// included (1044, as MySQL).
fn info_schema_writes(w: &Who, stmt: &Stmt) -> Result<()> {
    let table = |n: &ast::ObjectName| is_info(&w.split(n).0);
    let hit = match stmt {
        Stmt::Ddl(d) => match d {
            DdlStmt::CreateDatabase { name, .. } | DdlStmt::DropDatabase { name, .. } => {
                is_info(name)
            }
            DdlStmt::AlterDatabase { name, .. } => {
                is_info(&name.clone().unwrap_or_else(|| w.current_db()))
            }
            DdlStmt::CreateTable(c) => table(&c.name),
            DdlStmt::CreateIndex(c) => table(&c.table_name),
            DdlStmt::AlterTable(a) => {
                table(&a.name)
                    || a.operations.iter().any(|op| match op {
                        ast::AlterTableOperation::RenameTable { table_name } => match table_name {
                            ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => {
                                table(n)
                            }
                        },
                        _ => false,
                    })
            }
            DdlStmt::RenameTables(pairs) => pairs.iter().any(|(a, b)| table(a) || table(b)),
            DdlStmt::DropTables { names, .. }
            | DdlStmt::DropViews { names, .. }
            | DdlStmt::Truncate(names) => names.iter().any(table),
            DdlStmt::DropIndex { table: t, .. } => table(t),
            DdlStmt::CreateView { view, .. } => table(&view.name),
        },
        Stmt::Account(AccountStmt::Grant { target, .. }) => match super::run::level(w.s, target) {
            Ok(super::run::Level::Db(d) | super::run::Level::Table(d, _)) => is_info(&d),
            _ => false,
        },
        _ => false,
    };
    if hit {
        let (u, h) = w.account();
        return Err(SqlError::db_access_denied(u, h, "information_schema"));
    }
    Ok(())
}

fn ddl(w: &Who, d: &DdlStmt) -> Result<()> {
    match d {
        DdlStmt::CreateDatabase { name, .. } => w.db(p::CREATE, name),
        DdlStmt::DropDatabase { name, .. } => w.db(p::DROP, name),
        DdlStmt::AlterDatabase { name, .. } => {
            w.db(p::ALTER, &name.clone().unwrap_or_else(|| w.current_db()))
        }
        DdlStmt::CreateTable(c) => {
            w.tables(std::slice::from_ref(&c.name), p::CREATE, "CREATE")?;
            // CREATE TABLE ... SELECT reads, ... LIKE reads the other's definition.
            if let Some(q) = &c.query {
                super::rows::rows(&w.rows(), &RowStmt::Select(q.clone()))?;
            }
            if let Some(like) = &c.like {
                let n = match like {
                    ast::CreateTableLikeKind::Parenthesized(l)
                    | ast::CreateTableLikeKind::Plain(l) => &l.name,
                };
                w.tables(std::slice::from_ref(n), p::SELECT, "SELECT")?;
            }
            Ok(())
        }
        DdlStmt::CreateIndex(c) => w.tables(std::slice::from_ref(&c.table_name), p::INDEX, "INDEX"),
        DdlStmt::AlterTable(a) => {
            // RENAME TO moves the table: as RENAME TABLE (MySQL's rule).
            for op in &a.operations {
                if let ast::AlterTableOperation::RenameTable { table_name } = op {
                    let to = match table_name {
                        ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                    };
                    w.rename(&a.name, to)?;
                }
            }
            w.tables(std::slice::from_ref(&a.name), p::ALTER, "ALTER")
        }
        DdlStmt::RenameTables(pairs) => {
            for (from, to) in pairs {
                w.rename(from, to)?;
            }
            Ok(())
        }
        DdlStmt::DropTables { names, .. } | DdlStmt::DropViews { names, .. } => {
            w.tables(names, p::DROP, "DROP")
        }
        DdlStmt::DropIndex { table, .. } => {
            w.tables(std::slice::from_ref(table), p::INDEX, "INDEX")
        }
        DdlStmt::Truncate(names) => w.tables(names, p::DROP, "DROP"),
        DdlStmt::CreateView { view, alter, .. } => {
            // ALTER VIEW and CREATE OR REPLACE VIEW may drop the old one.
            if *alter || view.or_replace {
                w.tables(std::slice::from_ref(&view.name), p::DROP, "DROP")?;
            }
            w.tables(
                std::slice::from_ref(&view.name),
                p::CREATE_VIEW,
                "CREATE VIEW",
            )?;
            // Another account as DEFINER lends the view its rights: SUPER
            // (MariaDB's SUPER or SET USER; 1227).
            if Some(crate::ddl::view::definer(w.s, view)) != w.s.account {
                w.specific(p::SUPER, "SUPER, SET USER")?;
            }
            // The query is planned in the view's database (ddl/view.rs).
            let mut t = w.rows();
            t.db = w.split(&view.name).0;
            super::rows::rows(&t, &RowStmt::Select(view.query.clone()))
        }
    }
}

fn maint(w: &Who, m: &MaintStmt) -> Result<()> {
    let refs = |r: &[(Option<String>, String)], need: u64, cmd: &str| {
        for (d, t) in r {
            w.table(need, cmd, &d.clone().unwrap_or_else(|| w.current_db()), t)?;
        }
        Ok(())
    };
    match m {
        MaintStmt::Check(r) => refs(r, p::SELECT, "SELECT"),
        MaintStmt::Analyze(r) | MaintStmt::Optimize(r) | MaintStmt::Repair(r) => {
            refs(r, p::SELECT | p::INSERT, "INSERT")
        }
        MaintStmt::Flush(_) => w.specific(p::RELOAD, "RELOAD"),
        MaintStmt::LockTables => w.db(p::LOCK_TABLES | p::SELECT, &w.current_db()),
        MaintStmt::UnlockTables => Ok(()),
        // Whose session it names is known only when it runs: `procs::kill`
        // asks for SUPER to kill another user's session (1095), as MySQL.
        MaintStmt::Kill { .. } => Ok(()),
        // A copy of everything, accounts included: RELOAD, as MariaDB's BACKUP STAGE.
        MaintStmt::Backup(_) => w.specific(p::RELOAD, "RELOAD"),
        // MariaDB's BINLOG ADMIN; SUPER here.
        MaintStmt::Purge { .. } => w.specific(p::SUPER, "SUPER, BINLOG ADMIN"),
        MaintStmt::ResetMaster { .. } => w.specific(p::RELOAD, "RELOAD"),
        MaintStmt::Keys { db, table } => refs(&[(db.clone(), table.clone())], p::ALTER, "ALTER"),
    }
}

fn account(w: &Who, a: &AccountStmt) -> Result<()> {
    let own = |u: &super::UserName| u.as_ref().is_none_or(|n| Some(n) == w.s.account.as_ref());
    match a {
        AccountStmt::Create { .. }
        | AccountStmt::Alter { .. }
        | AccountStmt::Drop { .. }
        | AccountStmt::Rename(_) => w.specific(p::CREATE_USER, "CREATE USER"),
        AccountStmt::SetPassword { user, .. } if own(user) => Ok(()),
        AccountStmt::ShowGrants(user) | AccountStmt::ShowCreateUser(user) if own(user) => Ok(()),
        AccountStmt::SetPassword { .. } => w.db(p::UPDATE, "mysql"),
        AccountStmt::ShowGrants(_) | AccountStmt::ShowCreateUser(_) => w.db(p::SELECT, "mysql"),
        AccountStmt::Grant {
            privs,
            target,
            users,
        } => {
            grant_level(w, *privs, target)?;
            // GRANT ... IDENTIFIED BY sets a password, GRANT ... REQUIRE the TLS
            // requirement, and GRANT to a missing account creates it: CREATE USER's
            // to do (MariaDB), not GRANT OPTION's.
            let st = w.s.inst.catalog.state();
            if users.iter().any(|u| {
                u.auth.is_some() || u.require_ssl.is_some() || !st.accounts.contains_key(&u.name)
            }) {
                return w.specific(p::CREATE_USER, "CREATE USER");
            }
            Ok(())
        }
        AccountStmt::Revoke { privs, target, .. } => grant_level(w, *privs, target),
        AccountStmt::RevokeAll(_) => w.specific(p::CREATE_USER, "CREATE USER"),
    }
}

/// GRANT/REVOKE of `privs` on `target`: the grantor needs GRANT OPTION and
/// the privileges at that level (global: 1045, database: 1044, table:
/// 1142 "GRANT command denied", as MariaDB).
fn grant_level(w: &Who, privs: u64, target: &Target) -> Result<()> {
    let need = super::run::level_privs(privs, target)? | p::GRANT_OPTION;
    match super::run::level(w.s, target)? {
        super::run::Level::Global => {
            if w.a.global & need != need {
                return Err(w.denied_password());
            }
            Ok(())
        }
        // A pattern is granted only by a pattern covering all it matches.
        super::run::Level::Db(d)
            if (rel::catalog::has_wildcard(&d) || d.contains('\\')) && !is_info(&d) =>
        {
            if (w.a.global | w.a.db_privs_pattern(&d)) & need == need {
                return Ok(());
            }
            let (u, h) = w.account();
            Err(SqlError::db_access_denied(u, h, &d))
        }
        super::run::Level::Db(d) => w.db(need, &d),
        super::run::Level::Table(d, t) => w.own_table(need, "GRANT", &d, &t),
    }
}

/// The account a view's DEFINER `user`@`host` names: that exact account, else
/// the one a client `user` connecting from `host` would be (the most specific
/// matching host pattern), so that the `root`@`localhost` which dumps from
/// MariaDB and MySQL name is served by Strata's `root`@`%`. None: 1449.
pub fn definer_account(
    st: &rel::catalog::CatalogState,
    user: &str,
    host: &str,
) -> Option<std::sync::Arc<Account>> {
    st.accounts
        .get(&(user.to_string(), host.to_string()))
        .cloned()
        .or_else(|| rel::catalog::find_account(&st.accounts, user, &[host]))
}
