//! Privilege checks: before a statement runs, the session's account must
//! hold what the statement needs on what it names (MySQL's rules, at the
//! global level: database and table grants are not stored yet). A session
//! without an account (embedded use, tests) may do everything.
use super::AccountStmt;
use crate::error::{Result, SqlError};
use crate::session::Session;
use crate::stmt::{name_parts, DdlStmt, MaintStmt, RowStmt, SetStmt, ShowStmt, Stmt};
use rel::catalog::privs as p;
use sqlparser::ast;
use std::ops::ControlFlow;

/// The session account's global privileges (`None`: no account, all).
fn global(s: &Session) -> Option<u64> {
    let acc = s.account.as_ref()?;
    let st = s.inst.catalog.state();
    Some(st.accounts.get(acc).map_or(0, |a| a.global))
}

/// Whether the session's account holds every privilege of `need` globally
/// (a session without an account holds all). The user's name says nothing:
/// an account named root without privileges has none.
pub fn has_global(s: &Session, need: u64) -> bool {
    global(s).is_none_or(|g| g & need == need)
}

/// Whether the session may see database `db` (SHOW DATABASES, USE): some
/// privilege, or SHOW DATABASES.
pub fn can_see_db(s: &Session, db: &str) -> bool {
    db.eq_ignore_ascii_case("information_schema")
        || global(s).is_none_or(|g| g & (p::ALL | p::GRANT_OPTION) != 0)
}

struct Who<'a> {
    s: &'a Session,
    g: u64,
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
        if self.g & need == need || db.eq_ignore_ascii_case("information_schema") {
            return Ok(());
        }
        let (u, h) = self.user();
        Err(SqlError::table_access_denied(cmd, u, h, db, t))
    }
    fn db(&self, need: u64, db: &str) -> Result<()> {
        if self.g & need == need || db.eq_ignore_ascii_case("information_schema") {
            return Ok(());
        }
        let (u, h) = self.account();
        Err(SqlError::db_access_denied(u, h, db))
    }
    fn any_db(&self, db: &str) -> Result<()> {
        if self.g & (p::ALL | p::GRANT_OPTION) != 0 {
            return Ok(());
        }
        self.db(1 << 63, db)
    }
    fn specific(&self, need: u64, name: &str) -> Result<()> {
        if self.g & need != 0 {
            return Ok(());
        }
        Err(SqlError::specific_access_denied(name))
    }
    /// (database, table) of a name (the current database for a bare one).
    fn split(&self, n: &ast::ObjectName) -> (String, String) {
        let parts = name_parts(n);
        match parts.as_slice() {
            [d, t] => (d.clone(), t.clone()),
            [t] => (self.s.db.clone().unwrap_or_default(), t.clone()),
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
    fn current_db(&self) -> String {
        self.s.db.clone().unwrap_or_default()
    }
    fn denied_password(&self) -> SqlError {
        let st = self.s.inst.catalog.state();
        let pw = self
            .s
            .account
            .as_ref()
            .and_then(|a| st.accounts.get(a))
            .is_some_and(|a| a.hash.is_some());
        let (u, h) = self.account();
        SqlError::access_denied(u, h, if pw { "YES" } else { "NO" })
    }
}

/// The tables a row statement names, the first being a write's target.
fn relations<V: ast::Visit>(v: &V) -> Vec<ast::ObjectName> {
    let mut out = Vec::new();
    let _ = ast::visit_relations(v, |r| {
        out.push(r.clone());
        ControlFlow::<()>::Continue(())
    });
    out
}

fn rows(w: &Who, r: &RowStmt) -> Result<()> {
    let (names, need, cmd) = match r {
        RowStmt::Select(q) => (relations(q.as_ref()), 0, ""),
        RowStmt::Insert(i) => (relations(i.as_ref()), p::INSERT, "INSERT"),
        RowStmt::Update(u) => (relations(u.as_ref()), p::UPDATE, "UPDATE"),
        RowStmt::Delete(d) => (relations(d.as_ref()), p::DELETE, "DELETE"),
    };
    for (i, n) in names.iter().enumerate() {
        if i == 0 && need != 0 {
            w.tables(std::slice::from_ref(n), need, cmd)?;
        } else {
            w.tables(std::slice::from_ref(n), p::SELECT, "SELECT")?;
        }
    }
    // REPLACE also deletes, ON DUPLICATE KEY UPDATE also updates (MySQL's rule).
    let mut extra = 0;
    if let RowStmt::Insert(i) = r {
        if i.replace_into {
            extra |= p::DELETE;
        }
        if matches!(i.on, Some(ast::OnInsert::DuplicateKeyUpdate(_))) {
            extra |= p::UPDATE;
        }
    }
    // Privileges are global only: a write needs its privileges whichever table it
    // changes. The first relation is not always the target (multi-table DELETE and
    // UPDATE may start with a derived table, even one over information_schema,
    // which the per-table check lets through), so check the server-wide grant.
    let all = need | extra;
    if all != 0 && w.g & all != all {
        let missing = all & !w.g;
        let cmd = if missing & need != 0 {
            cmd
        } else if missing & p::DELETE != 0 {
            "DELETE"
        } else {
            "UPDATE"
        };
        let target = names
            .iter()
            .find(|n| !w.split(n).0.eq_ignore_ascii_case("information_schema"))
            .or(names.first());
        if let Some(n) = target {
            let (db, t) = w.split(n);
            let (u, h) = w.user();
            return Err(SqlError::table_access_denied(cmd, u, h, &db, &t));
        }
    }
    Ok(())
}

/// Refuses `stmt` unless the session's account may run it (1142, 1044,
/// 1227 or 1045 as MySQL gives them).
pub fn check(s: &Session, stmt: &Stmt) -> Result<()> {
    let Some(g) = global(s) else {
        return Ok(());
    };
    if g & p::ALL == p::ALL && g & p::GRANT_OPTION != 0 {
        return Ok(());
    }
    let w = Who { s, g };
    match stmt {
        Stmt::Rows(r) | Stmt::Explain(r) => rows(&w, r),
        Stmt::Set(SetStmt::Use(db)) => w.any_db(db),
        Stmt::Set(SetStmt::Vars(v)) if v.to_string().to_ascii_uppercase().contains("GLOBAL") => {
            w.specific(p::SUPER, "SUPER")
        }
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
        Stmt::Show(sh) => show(&w, sh),
        Stmt::Ddl(d) => ddl(&w, d),
        Stmt::Maint(m) => maint(&w, m),
        Stmt::Account(a) => account(&w, a),
        // INSERT on the table and FILE (also asked of LOCAL for now: stricter than MySQL).
        Stmt::Load(_) if g & (p::INSERT | p::FILE) == p::INSERT | p::FILE => Ok(()),
        Stmt::Load(_) => w.specific(0, "FILE"),
    }
}

fn show(w: &Who, sh: &ShowStmt) -> Result<()> {
    let any = p::ALL | p::GRANT_OPTION;
    match sh {
        ShowStmt::Tables { db, .. } => w.any_db(&db.clone().unwrap_or_else(|| w.current_db())),
        ShowStmt::TableStatus { .. } => w.any_db(&w.current_db()),
        ShowStmt::CreateDatabase(d) => w.any_db(d),
        ShowStmt::Columns { table, .. }
        | ShowStmt::CreateTable(table)
        | ShowStmt::CreateView(table) => {
            let (d, t) = w.split(table);
            if w.g & any == 0 {
                return w.table(1 << 63, "SHOW", &d, &t);
            }
            Ok(())
        }
        ShowStmt::Index { table, db } => {
            let d = db.clone().unwrap_or_else(|| w.current_db());
            if w.g & any == 0 {
                return w.table(1 << 63, "SHOW", &d, table);
            }
            Ok(())
        }
        ShowStmt::EngineStatus => w.specific(p::PROCESS, "PROCESS"),
        _ => Ok(()),
    }
}

fn ddl(w: &Who, d: &DdlStmt) -> Result<()> {
    match d {
        DdlStmt::CreateDatabase { name, .. } => w.db(p::CREATE, name),
        DdlStmt::DropDatabase { name, .. } => w.db(p::DROP, name),
        DdlStmt::AlterDatabase { name, .. } => {
            w.db(p::ALTER, &name.clone().unwrap_or_else(|| w.current_db()))
        }
        DdlStmt::CreateTable(c) => w.tables(std::slice::from_ref(&c.name), p::CREATE, "CREATE"),
        DdlStmt::CreateIndex(c) => w.tables(std::slice::from_ref(&c.table_name), p::INDEX, "INDEX"),
        DdlStmt::AlterTable(a) => w.tables(std::slice::from_ref(&a.name), p::ALTER, "ALTER"),
        DdlStmt::RenameTables(pairs) => {
            for (from, to) in pairs {
                w.tables(std::slice::from_ref(from), p::ALTER | p::DROP, "ALTER")?;
                w.tables(std::slice::from_ref(to), p::CREATE | p::INSERT, "INSERT")?;
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
            if *alter {
                w.tables(std::slice::from_ref(&view.name), p::DROP, "DROP")?;
            }
            w.tables(
                std::slice::from_ref(&view.name),
                p::CREATE_VIEW,
                "CREATE VIEW",
            )?;
            rows(w, &RowStmt::Select(view.query.clone()))
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
        MaintStmt::Analyze(r) => refs(r, p::SELECT | p::INSERT, "INSERT"),
        MaintStmt::Flush(_) => w.specific(p::RELOAD, "RELOAD"),
        MaintStmt::LockTables => w.db(p::LOCK_TABLES | p::SELECT, &w.current_db()),
        MaintStmt::UnlockTables => Ok(()),
        // Whose session it names is known only when it runs: `procs::kill`
        // asks for SUPER to kill another user's session (1095), as MySQL.
        MaintStmt::Kill { .. } => Ok(()),
        // A copy of everything, accounts included: RELOAD, as MariaDB's BACKUP STAGE.
        MaintStmt::Backup(_) => w.specific(p::RELOAD, "RELOAD"),
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
        AccountStmt::ShowGrants(user) if own(user) => Ok(()),
        AccountStmt::SetPassword { .. } => w.db(p::UPDATE, "mysql"),
        AccountStmt::ShowGrants(_) => w.db(p::SELECT, "mysql"),
        AccountStmt::Grant { privs, users, .. } => {
            if w.g & p::GRANT_OPTION == 0 || privs & !w.g != 0 {
                return Err(w.denied_password());
            }
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
        AccountStmt::Revoke { privs, .. } => {
            if w.g & p::GRANT_OPTION == 0 || privs & !w.g != 0 {
                return Err(w.denied_password());
            }
            Ok(())
        }
        AccountStmt::RevokeAll(_) => w.specific(p::CREATE_USER, "CREATE USER"),
    }
}
