//! Accounts and privileges as statements: CREATE/ALTER/DROP/RENAME USER,
//! SET PASSWORD, GRANT/REVOKE and SHOW GRANTS are read here (sqlparser does
//! not know MySQL's forms), run in `run.rs`, and every statement's
//! privileges are checked in `check.rs` (the tables a row statement reads
//! and writes are found in `rows.rs`). Privileges are global (`*.*`),
//! database (`db.*`) or table (`db.t`) level. What the grammar allows but
//! Strata does not honour (column and routine privileges, roles, REQUIRE
//! X509/ISSUER/SUBJECT/CIPHER, resource limits, password expiry, locking,
//! plugins other than mysql_native_password and caching_sha2_password) is
//! refused with 1235.
use crate::error::{Result, SqlError};
use crate::stmt::Stmt;

mod cache;
pub(crate) mod check;
mod rows;
mod run;

pub use cache::Sha2Cache;
pub use check::{can_see_db, check, has_global, Visibility};
pub use run::{bootstrap_root, native_hash, run};

/// `'user'@'host'` (`None`: CURRENT_USER).
pub type UserName = Option<(String, String)>;

/// How an account authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// IDENTIFIED BY 'pw' (empty: no password), with the account's own plugin (a new
    /// account's: mysql_native_password).
    Password(String),
    /// IDENTIFIED BY PASSWORD '*hex' (or a caching_sha2_password `$A$...` string):
    /// the hash says the plugin.
    Hash(String),
    /// IDENTIFIED WITH plugin [BY 'pw' | AS 'hash'] (the inner one is `Password` or
    /// `Hash`).
    With(rel::catalog::Plugin, Box<Auth>),
}

/// One account in CREATE/ALTER USER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSpec {
    pub name: (String, String),
    pub auth: Option<Auth>,
    /// The statement's `REQUIRE SSL` (true) or `REQUIRE NONE` (false); `None`:
    /// no REQUIRE clause (a new account requires nothing, an existing one keeps
    /// its requirement).
    pub require_ssl: Option<bool>,
}

/// What a GRANT/REVOKE names (`None`: the current database, `*` / `t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `*.*`
    Global,
    /// `db.*` (a pattern: `%`, `_`, `\`) or `*`.
    Db(Option<String>),
    /// `db.t` or `t`.
    Table(Option<String>, String),
}

/// An account statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountStmt {
    Create {
        users: Vec<UserSpec>,
        if_not_exists: bool,
        or_replace: bool,
    },
    Alter {
        users: Vec<UserSpec>,
        if_exists: bool,
    },
    Drop {
        users: Vec<(String, String)>,
        if_exists: bool,
    },
    Rename(Vec<((String, String), (String, String))>),
    SetPassword {
        user: UserName,
        auth: Auth,
    },
    Grant {
        privs: u64,
        target: Target,
        users: Vec<UserSpec>,
    },
    Revoke {
        privs: u64,
        target: Target,
        users: Vec<(String, String)>,
    },
    /// REVOKE ALL PRIVILEGES, GRANT OPTION FROM ...
    RevokeAll(Vec<(String, String)>),
    ShowGrants(UserName),
    /// SHOW CREATE USER u (MariaDB's form, with the plugin and password).
    ShowCreateUser(UserName),
}

/// A token of an account statement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    /// A quoted string or identifier (the quote character).
    Quoted(String, char),
    Punct(char),
}

fn tokens(s: &str) -> Result<Vec<Tok>> {
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' || c == '`' {
            let mut v = String::new();
            i += 1;
            loop {
                match cs.get(i) {
                    None => return Err(syntax(s)),
                    Some(&x) if x == c => {
                        if cs.get(i + 1) == Some(&c) {
                            v.push(c);
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                    Some('\\') if c != '`' => {
                        let e = cs.get(i + 1).copied().ok_or_else(|| syntax(s))?;
                        v.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            '0' => '\0',
                            'r' => '\r',
                            other => other,
                        });
                        i += 2;
                    }
                    Some(&x) => {
                        v.push(x);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Quoted(v, c));
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let st = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || matches!(cs[i], '_' | '$' | '-')) {
                i += 1;
            }
            out.push(Tok::Word(cs[st..i].iter().collect()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    Ok(out)
}

/// MariaDB 10.11's limits on an account's user and host names
/// (characters): 1470 past them.
pub(crate) fn check_lengths(u: &str, h: &str) -> Result<()> {
    if u.chars().count() > 128 {
        return Err(SqlError::string_too_long(shown(u), "user name", 128));
    }
    if h.chars().count() > 255 {
        return Err(SqlError::string_too_long(shown(h), "host name", 255));
    }
    Ok(())
}

/// A name as MariaDB's 1470 shows it (`%-.70sT`): past 70 characters, its
/// first 67 and "...".
pub(crate) fn shown(s: &str) -> String {
    if s.chars().count() <= 70 {
        return s.to_string();
    }
    let mut t: String = s.chars().take(67).collect();
    t.push_str("...");
    t
}

fn syntax(s: &str) -> SqlError {
    let near: String = s.chars().take(80).collect();
    SqlError::parse(format!(
        "check the manual that corresponds to your MariaDB server version for the right syntax to use near '{near}'"
    ))
}

/// A cursor over the tokens.
struct P<'a> {
    t: Vec<Tok>,
    i: usize,
    text: &'a str,
}

impl P<'_> {
    fn peek_kw(&self, k: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn kw(&mut self, k: &str) -> bool {
        let m = self.peek_kw(k);
        if m {
            self.i += 1;
        }
        m
    }
    fn kws(&mut self, ks: &[&str]) -> bool {
        let save = self.i;
        if ks.iter().all(|k| self.kw(k)) {
            return true;
        }
        self.i = save;
        false
    }
    fn expect_kw(&mut self, k: &str) -> Result<()> {
        if self.kw(k) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn punct(&mut self, c: char) -> bool {
        let m = self.t.get(self.i) == Some(&Tok::Punct(c));
        if m {
            self.i += 1;
        }
        m
    }
    fn done(&self) -> bool {
        self.i >= self.t.len()
    }
    fn err(&self) -> SqlError {
        syntax(self.text)
    }
    fn string(&mut self) -> Result<String> {
        match self.t.get(self.i) {
            Some(Tok::Quoted(v, '\'' | '"')) => {
                self.i += 1;
                Ok(v.clone())
            }
            _ => Err(self.err()),
        }
    }
    /// The string after AS / USING: quoted, or a hex literal (`X'2441...'`,
    /// `0x2441...`), as SHOW CREATE USER writes strings with bytes that do not
    /// print. Bytes that are not UTF-8 cannot be a stored hash: they become
    /// U+FFFD, which no hash holds (1827 / 1372 follow).
    fn hash_string(&mut self) -> Result<String> {
        let hex = match (self.t.get(self.i), self.t.get(self.i + 1)) {
            (Some(Tok::Word(x)), Some(Tok::Quoted(h, '\''))) if x.eq_ignore_ascii_case("x") => {
                Some((h.clone(), 2))
            }
            // Lower-case `x` only: `0X41` is no literal (MySQL, MariaDB).
            (Some(Tok::Word(w)), _) if w.len() > 2 && w.starts_with("0x") => {
                Some((w.get(2..).unwrap_or_default().to_string(), 1))
            }
            _ => None,
        };
        let Some((h, n)) = hex else {
            return self.string();
        };
        let bytes = crate::load::syntax::hex(&h).ok_or_else(|| self.err())?;
        self.i += n;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
    /// A name part: a word or any quoted text.
    fn name(&mut self) -> Result<String> {
        match self.t.get(self.i) {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w, _)) => {
                self.i += 1;
                Ok(w.clone())
            }
            _ => Err(self.err()),
        }
    }
    /// `user[@host]` (host `%` when absent); `None` for CURRENT_USER[()].
    fn user(&mut self) -> Result<UserName> {
        if self.kw("CURRENT_USER") {
            if self.punct('(') && !self.punct(')') {
                return Err(self.err());
            }
            return Ok(None);
        }
        let u = self.name()?;
        let h = if self.punct('@') {
            self.name()?
        } else {
            "%".to_string()
        };
        if u.is_empty() {
            return Err(SqlError::unsupported("anonymous accounts"));
        }
        check_lengths(&u, &h)?;
        Ok(Some((u, h.to_ascii_lowercase())))
    }
    fn named_user(&mut self) -> Result<(String, String)> {
        self.user()?
            .ok_or_else(|| SqlError::unsupported("CURRENT_USER in this statement"))
    }
    /// `[IDENTIFIED {BY [PASSWORD] 'x' | WITH plugin [BY 'pw' | AS 'hash']}]`.
    fn auth(&mut self) -> Result<Option<Auth>> {
        if !self.kw("IDENTIFIED") {
            return Ok(None);
        }
        if self.kw("BY") {
            if self.kw("PASSWORD") {
                return Ok(Some(Auth::Hash(self.string()?)));
            }
            return Ok(Some(Auth::Password(self.string()?)));
        }
        if self.kw("VIA") || self.kw("WITH") {
            let name = self.name()?;
            let Some(plugin) = rel::catalog::Plugin::from_name(&name) else {
                return Err(SqlError::unsupported(format!(
                    "authentication plugin {name}"
                )));
            };
            let inner = if self.kw("BY") {
                Auth::Password(self.string()?)
            } else if self.kw("AS") || self.kw("USING") {
                Auth::Hash(self.hash_string()?)
            } else {
                Auth::Password(String::new())
            };
            return Ok(Some(Auth::With(plugin, Box::new(inner))));
        }
        Err(self.err())
    }
    fn spec(&mut self) -> Result<UserSpec> {
        let name = self.named_user()?;
        let auth = self.auth()?;
        Ok(UserSpec {
            name,
            auth,
            require_ssl: None,
        })
    }
    /// `[REQUIRE {NONE | SSL}]` after the accounts, for every one of them;
    /// X509, ISSUER, SUBJECT and CIPHER (client certificates) are 1235.
    fn require(&mut self, users: &mut [UserSpec]) -> Result<()> {
        if !self.kw("REQUIRE") {
            return Ok(());
        }
        let ssl = if self.kw("NONE") {
            false
        } else if self.kw("SSL") {
            true
        } else {
            return match self.t.get(self.i) {
                Some(Tok::Word(w)) => Err(SqlError::unsupported(format!(
                    "REQUIRE {}",
                    w.to_ascii_uppercase()
                ))),
                _ => Err(self.err()),
            };
        };
        for u in users {
            u.require_ssl = Some(ssl);
        }
        Ok(())
    }
    fn list<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        let mut v = vec![f(self)?];
        while self.punct(',') {
            v.push(f(self)?);
        }
        Ok(v)
    }
    /// What may follow the accounts: nothing Strata honours.
    fn end(&mut self) -> Result<()> {
        if self.done() {
            return Ok(());
        }
        for k in [
            "REQUIRE", "WITH", "PASSWORD", "ACCOUNT", "DEFAULT", "RESOURCE",
        ] {
            if self.peek_kw(k) {
                let what: Vec<String> = self.t[self.i..]
                    .iter()
                    .take(2)
                    .map(|t| match t {
                        Tok::Word(w) => w.to_ascii_uppercase(),
                        Tok::Quoted(w, _) => w.clone(),
                        Tok::Punct(c) => c.to_string(),
                    })
                    .collect();
                return Err(SqlError::unsupported(what.join(" ")));
            }
        }
        Err(self.err())
    }
    /// A privilege list, as bits (`ALL [PRIVILEGES]`: every one but GRANT OPTION).
    fn privs(&mut self) -> Result<u64> {
        use rel::catalog::privs as p;
        if self.kw("ALL") {
            self.kw("PRIVILEGES");
            return Ok(p::ALL);
        }
        let mut bits = 0;
        loop {
            let b = if self.kw("USAGE") {
                0
            } else if self.kws(&["GRANT", "OPTION"]) {
                p::GRANT_OPTION
            } else if self.kws(&["SHOW", "DATABASES"]) {
                p::SHOW_DATABASES
            } else if self.kws(&["SHOW", "VIEW"]) {
                p::SHOW_VIEW
            } else if self.kws(&["CREATE", "TEMPORARY", "TABLES"]) {
                p::CREATE_TEMPORARY_TABLES
            } else if self.kws(&["CREATE", "VIEW"]) {
                p::CREATE_VIEW
            } else if self.kws(&["CREATE", "ROUTINE"]) {
                p::CREATE_ROUTINE
            } else if self.kws(&["CREATE", "USER"]) {
                p::CREATE_USER
            } else if self.kws(&["CREATE", "TABLESPACE"]) {
                p::CREATE_TABLESPACE
            } else if self.kws(&["ALTER", "ROUTINE"]) {
                p::ALTER_ROUTINE
            } else if self.kws(&["LOCK", "TABLES"]) {
                p::LOCK_TABLES
            } else if self.kws(&["REPLICATION", "SLAVE"]) {
                p::REPLICATION_SLAVE
            } else if self.kws(&["REPLICATION", "CLIENT"]) || self.kws(&["BINLOG", "MONITOR"]) {
                p::REPLICATION_CLIENT
            } else if self.kws(&["DELETE", "HISTORY"]) {
                p::DELETE_HISTORY
            } else {
                let w = match self.t.get(self.i) {
                    Some(Tok::Word(w)) => w.to_ascii_uppercase(),
                    _ => return Err(self.err()),
                };
                let b = match w.as_str() {
                    "SELECT" => p::SELECT,
                    "INSERT" => p::INSERT,
                    "UPDATE" => p::UPDATE,
                    "DELETE" => p::DELETE,
                    "CREATE" => p::CREATE,
                    "DROP" => p::DROP,
                    "RELOAD" => p::RELOAD,
                    "SHUTDOWN" => p::SHUTDOWN,
                    "PROCESS" => p::PROCESS,
                    "FILE" => p::FILE,
                    "REFERENCES" => p::REFERENCES,
                    "INDEX" => p::INDEX,
                    "ALTER" => p::ALTER,
                    "SUPER" => p::SUPER,
                    "EXECUTE" => p::EXECUTE,
                    "EVENT" => p::EVENT,
                    "TRIGGER" => p::TRIGGER,
                    _ => return Err(SqlError::unsupported(format!("the privilege {w}"))),
                };
                self.i += 1;
                b
            };
            if self.punct('(') {
                return Err(SqlError::unsupported("column privileges"));
            }
            bits |= b;
            if !self.punct(',') {
                return Ok(bits);
            }
        }
    }
    /// The privileges and what they are on (a GRANT/REVOKE without ON
    /// grants roles: refused).
    fn privs_on(&mut self) -> Result<(u64, Target)> {
        if !self
            .t
            .iter()
            .any(|t| matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("ON")))
        {
            return Err(SqlError::unsupported("roles"));
        }
        let privs = self.privs()?;
        Ok((privs, self.target()?))
    }
    /// `ON [TABLE] {*.* | * | db.* | db.t | t}`.
    fn target(&mut self) -> Result<Target> {
        self.expect_kw("ON")?;
        if self.kw("PROCEDURE") || self.kw("FUNCTION") || self.kw("PACKAGE") {
            return Err(SqlError::unsupported("routine privileges"));
        }
        self.kw("TABLE");
        if self.punct('*') {
            if self.punct('.') {
                if self.punct('*') {
                    return Ok(Target::Global);
                }
                return Err(self.err());
            }
            return Ok(Target::Db(None));
        }
        // Names over MySQL's 64 characters are refused (1102, 1103).
        let db = |n: String| {
            if n.chars().count() > 64 {
                return Err(SqlError::wrong_db_name(&n));
            }
            Ok(n)
        };
        let table = |n: String| {
            if n.chars().count() > 64 {
                return Err(SqlError::wrong_table_name(&n));
            }
            Ok(n)
        };
        let first = self.name()?;
        if !self.punct('.') {
            return Ok(Target::Table(None, table(first)?));
        }
        if self.punct('*') {
            return Ok(Target::Db(Some(db(first)?)));
        }
        let t = self.name()?;
        Ok(Target::Table(Some(db(first)?), table(t)?))
    }
}

/// Reads an account statement (`None`: not one).
pub fn parse(text: &str) -> Option<Result<Stmt>> {
    let first: Vec<String> = text
        .split_whitespace()
        .take(4)
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let f: Vec<&str> = first.iter().map(String::as_str).collect();
    let ours = matches!(
        f.as_slice(),
        ["CREATE", "USER", ..]
            | ["CREATE", "OR", "REPLACE", "USER", ..]
            | ["ALTER", "USER", ..]
            | ["DROP", "USER", ..]
            | ["RENAME", "USER", ..]
            | ["GRANT", ..]
            | ["REVOKE", ..]
            | ["SHOW", "GRANTS", ..]
            | ["SHOW", "CREATE", "USER", ..]
            | ["CREATE", "ROLE", ..]
            | ["DROP", "ROLE", ..]
            | ["SET", "ROLE", ..]
            | ["SET", "DEFAULT", "ROLE", ..]
    ) || (f.first() == Some(&"SET")
        && f.get(1).is_some_and(|w| w.starts_with("PASSWORD")));
    if !ours {
        return None;
    }
    Some(parse_account(text).map(Stmt::Account))
}

fn parse_account(text: &str) -> Result<AccountStmt> {
    let mut p = P {
        t: tokens(text)?,
        i: 0,
        text,
    };
    if p.kws(&["CREATE", "ROLE"]) || p.kws(&["DROP", "ROLE"]) || p.kws(&["SET", "ROLE"]) {
        return Err(SqlError::unsupported("roles"));
    }
    if p.kws(&["SET", "DEFAULT", "ROLE"]) {
        return Err(SqlError::unsupported("roles"));
    }
    let st = if p.kw("CREATE") {
        let or_replace = p.kws(&["OR", "REPLACE"]);
        p.expect_kw("USER")?;
        let if_not_exists = p.kws(&["IF", "NOT", "EXISTS"]);
        let mut users = p.list(P::spec)?;
        p.require(&mut users)?;
        AccountStmt::Create {
            users,
            if_not_exists,
            or_replace,
        }
    } else if p.kws(&["ALTER", "USER"]) {
        let if_exists = p.kws(&["IF", "EXISTS"]);
        let mut users = p.list(P::spec)?;
        p.require(&mut users)?;
        AccountStmt::Alter { users, if_exists }
    } else if p.kws(&["DROP", "USER"]) {
        let if_exists = p.kws(&["IF", "EXISTS"]);
        let users = p.list(P::named_user)?;
        AccountStmt::Drop { users, if_exists }
    } else if p.kws(&["RENAME", "USER"]) {
        AccountStmt::Rename(p.list(|p| {
            let a = p.named_user()?;
            p.expect_kw("TO")?;
            Ok((a, p.named_user()?))
        })?)
    } else if p.kws(&["SET", "PASSWORD"]) {
        let user = if p.kw("FOR") { p.user()? } else { None };
        if !p.punct('=') {
            return Err(p.err());
        }
        let auth = if p.kw("PASSWORD") {
            if !p.punct('(') {
                return Err(p.err());
            }
            let pw = p.string()?;
            if !p.punct(')') {
                return Err(p.err());
            }
            Auth::Password(pw)
        } else if p.kw("OLD_PASSWORD") {
            return Err(SqlError::unsupported("OLD_PASSWORD"));
        } else {
            // A plain string is the hash itself (as MariaDB reads it).
            Auth::Hash(p.string()?)
        };
        AccountStmt::SetPassword { user, auth }
    } else if p.kw("GRANT") {
        let (privs, target) = p.privs_on()?;
        p.expect_kw("TO")?;
        let mut users = p.list(P::spec)?;
        p.require(&mut users)?;
        let mut privs = privs;
        if p.kws(&["WITH", "GRANT", "OPTION"]) {
            privs |= rel::catalog::privs::GRANT_OPTION;
        }
        p.end()?;
        return Ok(AccountStmt::Grant {
            privs,
            target,
            users,
        });
    } else if p.kw("REVOKE") {
        if {
            let save = p.i;
            let all = p.kw("ALL") && {
                p.kw("PRIVILEGES");
                p.punct(',') && p.kws(&["GRANT", "OPTION"])
            };
            if !all {
                p.i = save;
            }
            all
        } {
            p.expect_kw("FROM")?;
            let users = p.list(P::named_user)?;
            p.end()?;
            return Ok(AccountStmt::RevokeAll(users));
        }
        let (privs, target) = p.privs_on()?;
        p.expect_kw("FROM")?;
        let users = p.list(P::named_user)?;
        p.end()?;
        return Ok(AccountStmt::Revoke {
            privs,
            target,
            users,
        });
    } else if p.kws(&["SHOW", "GRANTS"]) {
        let u = if p.kw("FOR") { p.user()? } else { None };
        AccountStmt::ShowGrants(u)
    } else if p.kws(&["SHOW", "CREATE", "USER"]) {
        AccountStmt::ShowCreateUser(p.user()?)
    } else {
        return Err(p.err());
    };
    p.end()?;
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(s: &str) -> Result<AccountStmt> {
        parse_account(s)
    }

    #[test]
    fn reads_the_account_statements() {
        let u = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            acc("CREATE USER IF NOT EXISTS 'app'@'10.%' IDENTIFIED BY 'p''w', bob").unwrap(),
            AccountStmt::Create {
                users: vec![
                    UserSpec {
                        name: u("app", "10.%"),
                        auth: Some(Auth::Password("p'w".into())),
                        require_ssl: None,
                    },
                    UserSpec {
                        name: u("bob", "%"),
                        auth: None,
                        require_ssl: None,
                    }
                ],
                if_not_exists: true,
                or_replace: false,
            }
        );
        assert_eq!(
            acc("SET PASSWORD FOR a@localhost = PASSWORD('x')").unwrap(),
            AccountStmt::SetPassword {
                user: Some(u("a", "localhost")),
                auth: Auth::Password("x".into())
            }
        );
        assert_eq!(
            acc("REVOKE ALL PRIVILEGES, GRANT OPTION FROM a").unwrap(),
            AccountStmt::RevokeAll(vec![u("a", "%")])
        );
        use rel::catalog::privs as p;
        assert_eq!(
            acc("GRANT SELECT, SHOW VIEW ON *.* TO a WITH GRANT OPTION").unwrap(),
            AccountStmt::Grant {
                privs: p::SELECT | p::SHOW_VIEW | p::GRANT_OPTION,
                target: Target::Global,
                users: vec![UserSpec {
                    name: u("a", "%"),
                    auth: None,
                    require_ssl: None,
                }]
            }
        );
        // REQUIRE applies to every account of the statement.
        assert_eq!(
            acc("ALTER USER a, b@h REQUIRE SSL").unwrap(),
            AccountStmt::Alter {
                users: vec![
                    UserSpec {
                        name: u("a", "%"),
                        auth: None,
                        require_ssl: Some(true),
                    },
                    UserSpec {
                        name: u("b", "h"),
                        auth: None,
                        require_ssl: Some(true),
                    }
                ],
                if_exists: false,
            }
        );
        match acc("CREATE USER a IDENTIFIED BY 'x' REQUIRE NONE").unwrap() {
            AccountStmt::Create { users, .. } => assert_eq!(users[0].require_ssl, Some(false)),
            other => panic!("{other:?}"),
        }
        match acc("GRANT SELECT ON *.* TO a REQUIRE SSL WITH GRANT OPTION").unwrap() {
            AccountStmt::Grant { users, privs, .. } => {
                assert_eq!(users[0].require_ssl, Some(true));
                assert_eq!(privs, p::SELECT | p::GRANT_OPTION);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(acc("CREATE USER u REQUIRE").unwrap_err().code, 1064);
        for refused in [
            "GRANT SELECT (a) ON *.* TO u",
            "GRANT r TO u",
            "CREATE ROLE r",
            "CREATE USER u REQUIRE X509",
            "ALTER USER u REQUIRE ISSUER 'x'",
            "CREATE USER u REQUIRE SUBJECT 'x'",
            "GRANT USAGE ON *.* TO u REQUIRE CIPHER 'x'",
            "CREATE USER u PASSWORD EXPIRE",
            "GRANT ALL ON *.* TO u WITH MAX_QUERIES_PER_HOUR 3",
            "CREATE USER u IDENTIFIED VIA ed25519",
            "GRANT EXECUTE ON PROCEDURE db.p TO u",
        ] {
            assert_eq!(acc(refused).unwrap_err().code, 1235, "{refused}");
        }
        for (text, target) in [
            ("GRANT SELECT ON db.* TO u", Target::Db(Some("db".into()))),
            (
                "GRANT SELECT ON `d-1`.`t 1` TO u",
                Target::Table(Some("d-1".into()), "t 1".into()),
            ),
            (
                "GRANT SELECT ON TABLE t TO u",
                Target::Table(None, "t".into()),
            ),
            ("GRANT SELECT ON * TO u", Target::Db(None)),
        ] {
            match acc(text).unwrap() {
                AccountStmt::Grant { target: t, .. } => assert_eq!(t, target, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        use rel::catalog::Plugin;
        for (text, plugin, inner) in [
            (
                "CREATE USER u IDENTIFIED WITH caching_sha2_password BY 'pw'",
                Plugin::CachingSha2,
                Auth::Password("pw".into()),
            ),
            (
                "ALTER USER u IDENTIFIED WITH 'CACHING_SHA2_PASSWORD' AS '$A$005$x'",
                Plugin::CachingSha2,
                Auth::Hash("$A$005$x".into()),
            ),
            (
                "CREATE USER u IDENTIFIED VIA caching_sha2_password USING 'h'",
                Plugin::CachingSha2,
                Auth::Hash("h".into()),
            ),
            (
                "ALTER USER u IDENTIFIED WITH mysql_native_password",
                Plugin::Native,
                Auth::Password(String::new()),
            ),
        ] {
            let users = match acc(text).unwrap() {
                AccountStmt::Create { users, .. } | AccountStmt::Alter { users, .. } => users,
                other => panic!("{text}: {other:?}"),
            };
            assert_eq!(
                users[0].auth,
                Some(Auth::With(plugin, Box::new(inner))),
                "{text}"
            );
        }
        assert_eq!(
            acc("CREATE USER u IDENTIFIED WITH sha256_password BY 'x'")
                .unwrap_err()
                .code,
            1235
        );
        assert_eq!(acc("GRANT SELECT ON db. TO u").unwrap_err().code, 1064);
        assert_eq!(acc("CREATE USER").unwrap_err().code, 1064);
        assert_eq!(acc("DROP USER 'a").unwrap_err().code, 1064);
    }
}
