//! Logins against the stored accounts: which host names a client has,
//! which account it is (`rel::catalog::find_account`), its credentials for
//! the handshake (with caching_sha2_password's fast-authentication cache), the database access check at connect, root's password
//! at startup (`--root-password[-file]`, `--initialize`), and the recovery
//! mode `--skip-grant-tables`.
use crate::config::Config;
use rel::catalog::find_account;
use sql::error::SqlError;
use sql::{Instance, Session};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--skip-grant-tables`: set once at startup, before any connection.
static SKIP_GRANTS: AtomicBool = AtomicBool::new(false);

fn skipping() -> bool {
    SKIP_GRANTS.load(Ordering::Relaxed)
}

/// Turns on `--skip-grant-tables` (MySQL's recovery mode): every login is
/// accepted whatever password it sends and its session holds every
/// privilege, so an administrator can CREATE USER / GRANT again. Only on a
/// loopback address (MySQL 8 turns networking off for it): a name is
/// resolved, and every address it stands for must be loopback (a hosts file
/// may map "localhost" elsewhere).
pub fn skip_grant_tables(cfg: &Config) -> Result<(), String> {
    let a = cfg.bind_address.as_str();
    if !is_loopback_bind(a) {
        return Err(format!(
            "--skip-grant-tables lets anyone in: it needs --bind-address on a loopback address (not {a})"
        ));
    }
    SKIP_GRANTS.store(true, Ordering::Relaxed);
    eprintln!(
        "strata: --skip-grant-tables: logins are not checked and hold every privilege; \
         create an account, then restart without it"
    );
    Ok(())
}

/// Whether listening on `addr` (an address or a name, as `--bind-address`
/// takes it) reaches only this machine: every address it resolves to is
/// loopback (a name that does not resolve is not).
fn is_loopback_bind(addr: &str) -> bool {
    use std::net::ToSocketAddrs;
    if let Ok(ip) = addr.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    match (addr, 0u16).to_socket_addrs() {
        Ok(it) => {
            let v: Vec<_> = it.collect();
            !v.is_empty() && v.iter().all(|s| s.ip().is_loopback())
        }
        Err(_) => false,
    }
}

/// The names a client's account host patterns are matched against, the
/// first being the one messages show: a loopback or unix-socket client is
/// `localhost` (as MySQL resolves it) and also its address.
pub fn client_hosts(peer: &str) -> Vec<String> {
    let loopback = peer == "localhost"
        || peer == "::1"
        || peer.starts_with("127.")
        || peer.starts_with("::ffff:127.");
    let mut v = Vec::new();
    if loopback {
        v.push("localhost".to_string());
    }
    if peer != "localhost" {
        v.push(peer.to_string());
    }
    v
}

fn find(
    inst: &Instance,
    user: &str,
    hosts: &[String],
) -> Option<std::sync::Arc<rel::catalog::Account>> {
    let hs: Vec<&str> = hosts.iter().map(String::as_str).collect();
    find_account(&inst.catalog.state().accounts, user, &hs)
}

/// The account a login's password is checked against, found once (by
/// `credentials`): the transport and database checks and the session's
/// identity use this one, never a second look-up (an account created,
/// dropped or altered meanwhile must not hand the session another
/// account's privileges).
#[derive(Default)]
pub struct Login(std::cell::RefCell<Option<std::sync::Arc<rel::catalog::Account>>>);

impl Login {
    fn get(&self) -> Option<std::sync::Arc<rel::catalog::Account>> {
        self.0.borrow().clone()
    }
}

/// The stored credentials of the account `user` from `hosts` is, recording
/// that account in `login`.
pub fn credentials(
    inst: &Instance,
    user: &str,
    hosts: &[String],
    login: &Login,
) -> Option<wire::Credentials> {
    *login.0.borrow_mut() = None;
    if skipping() {
        return Some(wire::Credentials {
            any_password: true,
            ..wire::Credentials::empty()
        });
    }
    let a = find(inst, user, hosts)?;
    let c = wire::Credentials {
        native_hash: a.hash,
        sha2_hash: a.sha2.as_deref().and_then(|s| inst.sha2_cache.get(s)),
        sha2_auth: a.sha2.clone(),
        any_password: false,
    };
    *login.0.borrow_mut() = Some(a);
    Some(c)
}

/// After a caching_sha2_password full authentication: the password's
/// SHA256(SHA256()) goes into the cache, for the stored string it was checked
/// against (a password changed since never matches it).
pub fn remember(inst: &Instance, hi: &wire::HandshakeInfo) {
    if let Some((hash, stored)) = &hi.sha2_verified {
        if !stored.is_empty() {
            inst.sha2_cache.insert(stored.clone(), *hash);
        }
    }
}

/// The transport checks after a login's password (MySQL's order): an
/// account with REQUIRE SSL needs TLS (a unix socket is not enough, as in
/// MariaDB: 1045), and under require_secure_transport a TCP connection
/// needs TLS (3159; unix sockets are secure).
pub fn check_transport(
    inst: &Instance,
    login: &Login,
    user: &str,
    hosts: &[String],
    tls: bool,
    unix: bool,
) -> Result<(), SqlError> {
    if tls {
        return Ok(());
    }
    if let Some(a) = login.get() {
        if a.require_ssl {
            let pw = if a.has_password() { "YES" } else { "NO" };
            return Err(SqlError::access_denied(user, &hosts[0], pw));
        }
    }
    let required = inst
        .global_var("require_secure_transport")
        .and_then(|v| v.to_i128())
        .is_some_and(|v| v != 0);
    if required && !unix {
        return Err(SqlError::secure_transport_required());
    }
    Ok(())
}

/// Connecting with a database: the account must have some privilege in it
/// (global, database or table level; 1044), as it is now.
pub fn check_db(
    inst: &Instance,
    login: &Login,
    user: &str,
    hosts: &[String],
    db: &str,
) -> Result<(), SqlError> {
    if skipping() {
        return Ok(());
    }
    let Some(a) = login.get() else {
        return Err(SqlError::db_access_denied(user, &hosts[0], db));
    };
    if db.eq_ignore_ascii_case("information_schema") {
        return Ok(());
    }
    let key = (a.user.clone(), a.host.clone());
    let now = inst.catalog.state().accounts.get(&key).cloned();
    if now.is_some_and(|n| n.any_in_db(db)) {
        return Ok(());
    }
    // MariaDB names the account's host pattern here.
    Err(SqlError::db_access_denied(user, &a.host, db))
}

/// Ties an authenticated session to the account its password was checked
/// against (`login`; its privileges are looked up by that account's name
/// at each statement: one dropped meanwhile has none, as after a DROP USER
/// of a connected account).
pub fn attach(sess: &mut Session, hosts: &[String], login: &Login) {
    sess.host = hosts.first().cloned().unwrap_or_else(|| "localhost".into());
    if skipping() {
        // No account: every privilege (the recovery mode).
        sess.account = None;
        return;
    }
    sess.account = Some(match login.get() {
        Some(a) => (a.user.clone(), a.host.clone()),
        // Not reached (no account, no login); no privileges rather than all.
        None => (sess.user.clone(), String::new()),
    });
}

/// Startup: root's password from the flag or the file, or a random one on
/// `--initialize` of a new instance (printed once, written to
/// `<datadir>/root-password` with mode 0600).
pub fn bootstrap(inst: &Instance, cfg: &Config) -> Result<(), String> {
    let mut pw = cfg.root_password.clone();
    if let Some(f) = &cfg.root_password_file {
        let t =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        pw = Some(t.lines().next().unwrap_or("").to_string());
    }
    if cfg.initialize && pw.is_none() {
        let st = inst.catalog.state();
        if st.accounts.is_empty() && !st.accounts_initialized {
            let p = random_password()?;
            let path = cfg.datadir.join("root-password");
            write_private(&path, &p)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!(
                "strata: a temporary password is generated for root@%: {p} (also in {})",
                path.display()
            );
            pw = Some(p);
        } else {
            eprintln!("strata: --initialize: the instance already has accounts; nothing changed");
        }
    }
    sql::account::bootstrap_root(inst, pw.as_deref()).map_err(|e| e.msg)
}

fn random_password() -> Result<String, String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    const A: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    Ok(b.iter().map(|x| A[*x as usize % A.len()] as char).collect())
}

fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    writeln!(f, "{text}")?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::{attach, check_db, credentials, is_loopback_bind, Login};
    use sql::result::Collect;

    fn run(s: &mut sql::Session, sql: &str) {
        s.query(sql, &mut Collect::default()).unwrap();
    }

    /// The session is the account whose password was checked, even when a
    /// more specific account of the user appears (or that one goes) before
    /// the session is attached: the login's one look-up decides.
    #[test]
    fn the_session_gets_the_account_its_password_was_checked_against() {
        let dir = testkit::TempDir::new("accounts-login-race");
        let inst = sql::Instance::open(&dir.0, &Default::default()).unwrap();
        let mut root = inst.session(1, "root", None);
        run(&mut root, "CREATE DATABASE d");
        run(&mut root, "CREATE USER r IDENTIFIED BY 'a'");
        let hosts = super::client_hosts("127.0.0.1");
        let login = Login::default();
        let c = credentials(&inst, "r", &hosts, &login).unwrap();
        assert_eq!(c.native_hash, Some(sql::account::native_hash("a")));
        // Between the password check and the attach: a more specific
        // account of r with another password and every privilege.
        run(&mut root, "CREATE USER r@localhost IDENTIFIED BY 'b'");
        run(&mut root, "GRANT ALL ON *.* TO r@localhost");
        assert!(check_db(&inst, &login, "r", &hosts, "d").is_err());
        let mut s = inst.session(2, "r", None);
        attach(&mut s, &hosts, &login);
        assert_eq!(s.account, Some(("r".to_string(), "%".to_string())));
        let e = s
            .query("CREATE DATABASE e", &mut Collect::default())
            .unwrap_err();
        assert_eq!(e.code, 1044, "{}", e.msg);
        // The more specific account's login, dropped before the attach:
        // the session is still r@localhost (no privileges, as a session of
        // a dropped account), never r@% whose password it never gave.
        run(&mut root, "GRANT CREATE ON *.* TO r");
        let login = Login::default();
        let c = credentials(&inst, "r", &hosts, &login).unwrap();
        assert_eq!(c.native_hash, Some(sql::account::native_hash("b")));
        run(&mut root, "DROP USER r@localhost");
        let mut s = inst.session(3, "r", None);
        attach(&mut s, &hosts, &login);
        assert_eq!(s.account, Some(("r".to_string(), "localhost".to_string())));
        let e = s
            .query("CREATE DATABASE e", &mut Collect::default())
            .unwrap_err();
        assert_eq!(e.code, 1044, "{}", e.msg);
    }

    #[test]
    fn loopback_binds_are_told_by_address_and_by_resolution() {
        for a in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            assert!(is_loopback_bind(a), "{a}");
        }
        for a in ["0.0.0.0", "::", "10.0.0.1", "no-such-host.invalid", ""] {
            assert!(!is_loopback_bind(a), "{a}");
        }
    }
}
