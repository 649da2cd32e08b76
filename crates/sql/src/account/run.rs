//! Running the account statements against the catalog's `U` records, the
//! first start's root account, and SHOW GRANTS in MariaDB's format.
use super::{AccountStmt, Auth, Target, UserName, UserSpec};
use crate::error::{Result, SqlError};
use crate::result::{self, Outcome, ResultSink};
use crate::session::Session;
use crate::Instance;
use rel::catalog::{privs, Account, AccountMap, AccountWrite, Plugin};
use sha1::{Digest, Sha1};

/// SHA1(SHA1(password)): what `mysql_native_password` stores.
pub fn native_hash(pw: &str) -> [u8; 20] {
    let a: [u8; 20] = Sha1::digest(pw.as_bytes()).into();
    Sha1::digest(a).into()
}

/// `*` and 40 hex digits (MySQL's `authentication_string`) as the hash;
/// empty: no password.
fn parse_hash(s: &str) -> Result<Option<[u8; 20]>> {
    if s.is_empty() {
        return Ok(None);
    }
    let hex = s.strip_prefix('*').ok_or_else(SqlError::passwd_length)?;
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SqlError::passwd_length());
    }
    let mut h = [0u8; 20];
    for (i, b) in h.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| SqlError::passwd_length())?;
    }
    Ok(Some(h))
}

/// caching_sha2_password's string for `pw`, with a fresh salt.
fn sha2_string(pw: &str) -> Result<Vec<u8>> {
    if pw.len() > wire::sha2crypt::MAX_PASSWORD_LEN {
        return Err(SqlError::not_valid_password());
    }
    // The scramble generator's 20 printable bytes (never `$` or NUL) are a salt;
    // without quotes and backslashes SHOW GRANTS prints it as it is.
    let mut salt = wire::auth::new_scramble(pw.len() as u64);
    for b in salt
        .iter_mut()
        .filter(|b| matches!(**b, b'\'' | b'"' | b'\\'))
    {
        *b = b'.';
    }
    Ok(wire::sha2crypt::sha2_auth_string(pw.as_bytes(), &salt))
}

/// Sets an account's plugin and password from an IDENTIFIED clause: a password
/// with the plugin named, else the account's own; a hash says its plugin (`*hex`:
/// mysql_native_password, `$A$...`: caching_sha2_password), and must be one of the
/// plugin named.
fn set_auth(a: &mut Account, auth: &Auth) -> Result<()> {
    let (named, auth) = match auth {
        Auth::With(p, inner) => (Some(*p), &**inner),
        other => (None, other),
    };
    a.hash = None;
    a.sha2 = None;
    match auth {
        Auth::Password(pw) => {
            a.plugin = named.unwrap_or(a.plugin);
            if !pw.is_empty() {
                match a.plugin {
                    Plugin::Native => a.hash = Some(native_hash(pw)),
                    Plugin::CachingSha2 => a.sha2 = Some(sha2_string(pw)?),
                }
            }
        }
        Auth::Hash(h) if h.is_empty() => a.plugin = named.unwrap_or(a.plugin),
        Auth::Hash(h) if named == Some(Plugin::CachingSha2) || h.starts_with('$') => {
            if named == Some(Plugin::Native) {
                return Err(SqlError::passwd_length());
            }
            // Only MySQL's default round count: every login attempt naming the
            // account runs the crypt, so a string with up to 4,095,000 rounds (which
            // SET PASSWORD lets any user give their own account) would make each
            // attempt cost seconds of CPU.
            match wire::sha2crypt::parse_sha2_auth(h.as_bytes()) {
                Some((rounds, ..)) if rounds == wire::sha2crypt::DEFAULT_ROUNDS => {}
                _ => return Err(SqlError::password_format()),
            }
            a.plugin = Plugin::CachingSha2;
            a.sha2 = Some(h.as_bytes().to_vec());
        }
        Auth::Hash(h) => {
            a.plugin = Plugin::Native;
            a.hash = parse_hash(h)?;
        }
        Auth::With(..) => return Err(SqlError::internal("nested IDENTIFIED WITH")),
    }
    Ok(())
}

fn hash_text(h: &[u8; 20]) -> String {
    let mut s = String::from("*");
    for b in h {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// `'user'@'host'` as MariaDB names accounts in messages.
fn quoted((u, h): &(String, String)) -> String {
    format!("'{u}'@'{h}'")
}

fn key(u: &(String, String)) -> (String, String) {
    u.clone()
}

/// The session's own account (CURRENT_USER), or `name`.
fn resolve(s: &Session, name: &UserName) -> Result<(String, String)> {
    match name {
        Some(n) => Ok(n.clone()),
        None => Ok(s
            .account
            .clone()
            .unwrap_or_else(|| (s.user.clone(), "%".to_string()))),
    }
}

/// Runs an account statement (privileges were checked by `check`).
pub fn run(s: &mut Session, st: &AccountStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    if !matches!(
        st,
        AccountStmt::ShowGrants(_) | AccountStmt::ShowCreateUser(_)
    ) {
        // Account changes commit the open transaction, as DDL does.
        s.commit()?;
        s.check_write()?;
    }
    let mut notes = Vec::new();
    let cat = &s.inst.catalog;
    match st {
        AccountStmt::Create {
            users,
            if_not_exists,
            or_replace,
        } => cat.change_accounts(|m| {
            let mut w = Vec::new();
            let mut failed = Vec::new();
            for UserSpec {
                name,
                auth,
                require_ssl,
            } in users
            {
                let mut new = Account {
                    require_ssl: require_ssl.unwrap_or(false),
                    ..Account::new(&name.0, &name.1)
                };
                if let Some(auth) = auth {
                    set_auth(&mut new, auth)?;
                }
                let exists =
                    m.contains_key(name) || w.iter().any(|(k, _): &AccountWrite| k == name);
                if exists && !or_replace {
                    if *if_not_exists {
                        notes.push(SqlError::user_exists(quoted(name)));
                    } else {
                        failed.push(quoted(name));
                    }
                    continue;
                }
                w.push((key(name), Some(new)));
            }
            fail_after(w, failed, "CREATE USER")
        })?,
        AccountStmt::Alter { users, if_exists } => cat.change_accounts(|m| {
            let mut w = Vec::new();
            let mut failed = Vec::new();
            for UserSpec {
                name,
                auth,
                require_ssl,
            } in users
            {
                let Some(a) = m.get(name) else {
                    if *if_exists {
                        notes.push(SqlError::cannot_user("ALTER USER", quoted(name)));
                    } else {
                        failed.push(quoted(name));
                    }
                    continue;
                };
                let mut a = (**a).clone();
                if let Some(auth) = auth {
                    set_auth(&mut a, auth)?;
                }
                if let Some(r) = require_ssl {
                    a.require_ssl = *r;
                }
                w.push((key(name), Some(a)));
            }
            fail_after(w, failed, "ALTER USER")
        })?,
        AccountStmt::Drop { users, if_exists } => cat.change_accounts(|m| {
            let mut w: Vec<AccountWrite> = Vec::new();
            let mut failed = Vec::new();
            for name in users {
                if !m.contains_key(name) || w.iter().any(|(k, _)| k == name) {
                    if *if_exists {
                        notes.push(SqlError::user_missing(quoted(name)));
                    } else {
                        failed.push(quoted(name));
                    }
                    continue;
                }
                w.push((key(name), None));
            }
            fail_after(w, failed, "DROP USER")
        })?,
        AccountStmt::Rename(pairs) => cat.change_accounts(|m| {
            // Applied in order on a copy, as MariaDB renames one by one.
            let mut cur: AccountMap = m.clone();
            let mut failed = Vec::new();
            for (from, to) in pairs {
                if !cur.contains_key(from) || cur.contains_key(to) {
                    failed.push(quoted(from));
                    continue;
                }
                if let Some(a) = cur.remove(from) {
                    let mut a = (*a).clone();
                    a.user = to.0.clone();
                    a.host = to.1.clone();
                    cur.insert(key(to), std::sync::Arc::new(a));
                }
            }
            let mut w: Vec<AccountWrite> = Vec::new();
            for k in m.keys().filter(|k| !cur.contains_key(*k)) {
                w.push((k.clone(), None));
            }
            for (k, a) in &cur {
                if m.get(k) != Some(a) {
                    w.push((k.clone(), Some((**a).clone())));
                }
            }
            fail_after(w, failed, "RENAME USER")
        })?,
        AccountStmt::SetPassword { user, auth } => {
            let name = resolve(s, user)?;
            cat.change_accounts(|m| {
                let Some(a) = m.get(&name) else {
                    return Err(SqlError::password_no_match());
                };
                let mut a = (**a).clone();
                // The account keeps its plugin (a hash says its own).
                set_auth(&mut a, auth)?;
                Ok((vec![(name.clone(), Some(a))], None))
            })?
        }
        AccountStmt::Grant {
            privs: p,
            target,
            users,
        } => {
            let level = level(s, target)?;
            let bits = level_privs(*p, target)?;
            if let Level::Table(d, t) = &level {
                let st = cat.state();
                if st.table(d, t).is_none() && st.view(d, t).is_none() {
                    return Err(SqlError::no_table(format!("{d}.{t}")));
                }
            }
            cat.change_accounts(|m| {
                let mut w = Vec::new();
                for UserSpec {
                    name,
                    auth,
                    require_ssl,
                } in users
                {
                    let mut a = match m.get(name) {
                        Some(a) => (**a).clone(),
                        // NO_AUTO_CREATE_USER (MariaDB's default): a GRANT
                        // creates an account only with a password.
                        None if auth.is_some() => Account::new(&name.0, &name.1),
                        None => return Err(SqlError::password_no_match()),
                    };
                    if let Some(auth) = auth {
                        set_auth(&mut a, auth)?;
                    }
                    if let Some(r) = require_ssl {
                        a.require_ssl = *r;
                    }
                    // USAGE at a level stores nothing (as MariaDB).
                    match &level {
                        Level::Global => a.global |= bits,
                        Level::Db(d) if bits != 0 => *a.dbs.entry(d.clone()).or_insert(0) |= bits,
                        Level::Table(d, t) if bits != 0 => {
                            *a.tables.entry((d.clone(), t.clone())).or_insert(0) |= bits
                        }
                        _ => {}
                    }
                    w.push((key(name), Some(a)));
                }
                Ok((w, None))
            })?
        }
        AccountStmt::Revoke {
            privs: p,
            target,
            users,
        } => {
            let level = level(s, target)?;
            let bits = level_privs(*p, target)?;
            cat.change_accounts(|m| revoke(m, users, &level, bits))?
        }
        AccountStmt::RevokeAll(users) => cat.change_accounts(|m| {
            let mut w = Vec::new();
            let mut failed = Vec::new();
            for name in users {
                match m.get(name) {
                    Some(a) => {
                        let mut a = (**a).clone();
                        a.global = 0;
                        a.dbs.clear();
                        a.tables.clear();
                        w.push((key(name), Some(a)));
                    }
                    None => failed.push(quoted(name)),
                }
            }
            fail_after(w, failed, "REVOKE")
        })?,
        AccountStmt::ShowGrants(u) => return show_grants(s, u, sink),
        AccountStmt::ShowCreateUser(u) => return show_create_user(s, u, sink),
    }
    // A changed password or a dropped account leaves no fast path behind.
    s.inst.sha2_cache.retain(&s.inst.catalog.state().accounts);
    for n in notes {
        s.warn("Note", n);
    }
    result::ok()
}

/// What a GRANT/REVOKE applies to, its database resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Level {
    Global,
    Db(String),
    Table(String, String),
}

/// The level a target names (`*` and a bare table: the current database,
/// 1046 without one).
pub(super) fn level(s: &Session, target: &Target) -> Result<Level> {
    let cur = || s.db.clone().ok_or_else(SqlError::no_db);
    Ok(match target {
        Target::Global => Level::Global,
        Target::Db(d) => Level::Db(d.clone().map_or_else(cur, Ok)?),
        Target::Table(d, t) => Level::Table(d.clone().map_or_else(cur, Ok)?, t.clone()),
    })
}

/// The privileges of a GRANT/REVOKE at the target's level (ALL: every one
/// that level has, GRANT OPTION apart); privileges that level does not
/// have are refused as MariaDB refuses them (database: 1221, table: 1144).
pub(super) fn level_privs(bits: u64, target: &Target) -> Result<u64> {
    let (allowed, err): (u64, fn() -> SqlError) = match target {
        Target::Global => return Ok(bits),
        Target::Db(_) => (privs::DB, || {
            SqlError::wrong_usage("DB GRANT", "GLOBAL PRIVILEGES")
        }),
        Target::Table(..) => (privs::TABLE, SqlError::illegal_grant_for_table),
    };
    if bits & privs::ALL == privs::ALL {
        return Ok((bits & privs::GRANT_OPTION) | (allowed & !privs::GRANT_OPTION));
    }
    if bits & !allowed != 0 {
        return Err(err());
    }
    Ok(bits)
}

/// REVOKE of `bits` at `level`: an account that does not exist, or has no
/// grant at that database (1141) or table (1147), is an error; a grant left
/// without privileges is removed.
fn revoke(m: &AccountMap, users: &[(String, String)], level: &Level, bits: u64) -> Writes {
    let mut w = Vec::new();
    for name in users {
        let Some(a) = m.get(name) else {
            return Err(SqlError::no_such_grant(&name.0, &name.1));
        };
        let mut a = (**a).clone();
        match level {
            Level::Global => a.global &= !bits,
            Level::Db(d) => {
                let Some(b) = a.dbs.get_mut(d) else {
                    return Err(SqlError::no_such_grant(&name.0, &name.1));
                };
                *b &= !bits;
                if *b == 0 {
                    a.dbs.remove(d);
                }
            }
            Level::Table(d, t) => {
                let k = (d.clone(), t.clone());
                let Some(b) = a.tables.get_mut(&k) else {
                    return Err(SqlError::no_such_table_grant(&name.0, &name.1, t));
                };
                *b &= !bits;
                if *b == 0 {
                    a.tables.remove(&k);
                }
            }
        }
        w.push((key(name), Some(a)));
    }
    Ok((w, None))
}

/// The writes, unless some accounts failed: then the others are still
/// written (as MariaDB does) and 1396 names the failed ones.
fn fail_after(w: Vec<AccountWrite>, failed: Vec<String>, op: &'static str) -> Writes {
    if failed.is_empty() {
        return Ok((w, None));
    }
    Ok((w, Some(SqlError::cannot_user(op, failed.join(",")))))
}

type Writes = Result<(Vec<AccountWrite>, Option<SqlError>)>;

/// The privilege list of SHOW GRANTS (`USAGE` for none; ALL PRIVILEGES
/// when `bits` hold every privilege of `all`, the level's set).
pub(super) fn priv_text(bits: u64, all: u64) -> String {
    let all = all & !privs::GRANT_OPTION;
    if bits & all == all {
        return "ALL PRIVILEGES".into();
    }
    let names: Vec<&str> = privs::NAMES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "USAGE".into()
    } else {
        names.join(", ")
    }
}

/// An identifier in backquotes, as SHOW GRANTS writes names.
fn bq(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// SHOW GRANTS: the global line, the database grants (exact names, then
/// patterns, most specific first), then the table grants by name.
/// SHOW CREATE USER in MariaDB's format: `CREATE USER `u`@`h`` with the
/// password (as SHOW GRANTS writes it) and `REQUIRE SSL`.
fn show_create_user(s: &Session, u: &UserName, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let name = resolve(s, u)?;
    let st = s.inst.catalog.state();
    let Some(a) = st.accounts.get(&name) else {
        // MariaDB 10.11 answers 1133 here.
        return Err(SqlError::password_no_match());
    };
    let mut line = format!(
        "CREATE USER {}@{}{}",
        bq(&a.user),
        bq(&a.host),
        identified(a)
    );
    if a.require_ssl {
        line.push_str(" REQUIRE SSL");
    }
    result::rows(
        sink,
        &[&format!("CREATE USER for {}@{}", a.user, a.host)],
        vec![vec![result::text(line)]],
    )
}

fn show_grants(s: &Session, u: &UserName, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let name = resolve(s, u)?;
    let st = s.inst.catalog.state();
    let Some(a) = st.accounts.get(&name) else {
        return Err(SqlError::no_such_grant(&name.0, &name.1));
    };
    let to = format!("{}@{}", bq(&a.user), bq(&a.host));
    let with = |bits: u64| {
        if bits & privs::GRANT_OPTION != 0 {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    };
    let mut line = format!("GRANT {} ON *.* TO {to}", priv_text(a.global, privs::ALL));
    line.push_str(&identified(a));
    if a.require_ssl {
        line.push_str(" REQUIRE SSL");
    }
    line.push_str(with(a.global));
    let mut lines = vec![line];
    let mut dbs: Vec<(&String, &u64)> = a.dbs.iter().collect();
    dbs.sort_by_key(|(d, _)| {
        let wild = rel::catalog::has_wildcard(d);
        let prefix = if wild {
            d.find(['%', '_']).unwrap_or(0)
        } else {
            0
        };
        (wild, std::cmp::Reverse(prefix), (*d).clone())
    });
    for (d, bits) in dbs {
        lines.push(format!(
            "GRANT {} ON {}.* TO {to}{}",
            priv_text(*bits, privs::DB),
            bq(d),
            with(*bits)
        ));
    }
    for ((d, t), bits) in &a.tables {
        lines.push(format!(
            "GRANT {} ON {}.{} TO {to}{}",
            priv_text(*bits, privs::TABLE),
            bq(d),
            bq(t),
            with(*bits)
        ));
    }
    result::rows(
        sink,
        &[&format!("Grants for {}@{}", a.user, a.host)],
        lines.into_iter().map(|l| vec![result::text(l)]).collect(),
    )
}

/// How SHOW GRANTS and SHOW CREATE USER write an account's password, in MariaDB's forms: ` IDENTIFIED
/// BY PASSWORD '*hex'`, ` IDENTIFIED VIA caching_sha2_password USING '$A$...'`
/// (`''` without a password), or nothing. A string with bytes that do not print
/// (MySQL's salts hold control characters) is written as a hex literal, as
/// MySQL's SHOW CREATE USER does (`0x2441...`), so that the line can be run again.
fn identified(a: &Account) -> String {
    match (a.plugin, &a.hash, &a.sha2) {
        (Plugin::Native, Some(h), _) => format!(" IDENTIFIED BY PASSWORD '{}'", hash_text(h)),
        (Plugin::Native, None, _) => String::new(),
        (Plugin::CachingSha2, _, s) => {
            let s = s.as_deref().unwrap_or_default();
            format!(
                " IDENTIFIED VIA caching_sha2_password USING {}",
                sql_string(s)
            )
        }
    }
}

/// `bytes` as an SQL literal: quoted (backslash and quote escaped) when every byte
/// prints, else `0x` and upper-case hex digits.
fn sql_string(bytes: &[u8]) -> String {
    if bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
        let s = String::from_utf8_lossy(bytes);
        return format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
    }
    let mut s = String::from("0x");
    for b in bytes {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// At every start: a new instance (or a catalog from before accounts) gets
/// `'root'@'%'` with all privileges, as the single account of earlier
/// releases was; and, when `password` is given, every `root` account's
/// password is set to it. An instance whose accounts were all dropped gets
/// none back (MySQL never recreates root): nobody can log in until a start
/// with `--skip-grant-tables` creates one (docs/ACCOUNTS.md).
pub fn bootstrap_root(inst: &Instance, password: Option<&str>) -> Result<()> {
    let fresh = !inst.catalog.state().accounts_initialized;
    inst.catalog.change_accounts(|m| {
        let mut w: Vec<AccountWrite> = Vec::new();
        let hash = password.filter(|p| !p.is_empty()).map(native_hash);
        if m.is_empty() && fresh {
            w.push((
                ("root".into(), "%".into()),
                Some(Account {
                    hash,
                    global: privs::ALL | privs::GRANT_OPTION,
                    ..Account::new("root", "%")
                }),
            ));
        } else if m.is_empty() {
            eprintln!(
                "strata: there are no accounts (all were dropped): nobody can log in; \
                 start with --skip-grant-tables to create one"
            );
        } else if let Some(pw) = password {
            for (k, a) in m.iter().filter(|(k, _)| k.0 == "root") {
                let mut a = (**a).clone();
                set_auth(&mut a, &Auth::Password(pw.to_string()))?;
                w.push((k.clone(), Some(a)));
            }
        }
        Ok::<_, SqlError>((w, None))
    })
}
