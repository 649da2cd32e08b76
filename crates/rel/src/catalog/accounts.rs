//! Accounts in the catalog: the `U` records (one per `'user'@'host'`, with
//! its authentication plugin and password hash, global privileges and TLS requirement;
//! docs/formats/accounts.md), the
//! in-memory map statements and logins read, MySQL's host patterns (`%`,
//! `_`) and which account a connecting client is (the most specific host).
use super::*;

/// The privileges MySQL names, as bits of `Account::global` (MariaDB's
/// order of `mysql.user` columns; the stored bit numbers never change).
pub mod privs {
    pub const SELECT: u64 = 1 << 0;
    pub const INSERT: u64 = 1 << 1;
    pub const UPDATE: u64 = 1 << 2;
    pub const DELETE: u64 = 1 << 3;
    pub const CREATE: u64 = 1 << 4;
    pub const DROP: u64 = 1 << 5;
    pub const RELOAD: u64 = 1 << 6;
    pub const SHUTDOWN: u64 = 1 << 7;
    pub const PROCESS: u64 = 1 << 8;
    pub const FILE: u64 = 1 << 9;
    pub const GRANT_OPTION: u64 = 1 << 10;
    pub const REFERENCES: u64 = 1 << 11;
    pub const INDEX: u64 = 1 << 12;
    pub const ALTER: u64 = 1 << 13;
    pub const SHOW_DATABASES: u64 = 1 << 14;
    pub const SUPER: u64 = 1 << 15;
    pub const CREATE_TEMPORARY_TABLES: u64 = 1 << 16;
    pub const LOCK_TABLES: u64 = 1 << 17;
    pub const EXECUTE: u64 = 1 << 18;
    pub const REPLICATION_SLAVE: u64 = 1 << 19;
    pub const REPLICATION_CLIENT: u64 = 1 << 20;
    pub const CREATE_VIEW: u64 = 1 << 21;
    pub const SHOW_VIEW: u64 = 1 << 22;
    pub const CREATE_ROUTINE: u64 = 1 << 23;
    pub const ALTER_ROUTINE: u64 = 1 << 24;
    pub const CREATE_USER: u64 = 1 << 25;
    pub const EVENT: u64 = 1 << 26;
    pub const TRIGGER: u64 = 1 << 27;
    pub const CREATE_TABLESPACE: u64 = 1 << 28;
    pub const DELETE_HISTORY: u64 = 1 << 29;

    /// Every privilege but GRANT OPTION (what ALL [PRIVILEGES] grants).
    pub const ALL: u64 = (1 << 30) - 1 - GRANT_OPTION;

    /// What a database-level grant (`db.*`) may hold (MariaDB's DB_ACLS).
    pub const DB: u64 = SELECT
        | INSERT
        | UPDATE
        | DELETE
        | CREATE
        | DROP
        | GRANT_OPTION
        | REFERENCES
        | INDEX
        | ALTER
        | CREATE_TEMPORARY_TABLES
        | LOCK_TABLES
        | EXECUTE
        | CREATE_VIEW
        | SHOW_VIEW
        | CREATE_ROUTINE
        | ALTER_ROUTINE
        | EVENT
        | TRIGGER
        | DELETE_HISTORY;

    /// What a table-level grant (`db.t`) may hold (MariaDB's TABLE_ACLS).
    pub const TABLE: u64 = SELECT
        | INSERT
        | UPDATE
        | DELETE
        | CREATE
        | DROP
        | GRANT_OPTION
        | REFERENCES
        | INDEX
        | ALTER
        | CREATE_VIEW
        | SHOW_VIEW
        | TRIGGER
        | DELETE_HISTORY;

    /// Each privilege's name as SHOW GRANTS writes it, in MariaDB's order.
    pub const NAMES: &[(u64, &str)] = &[
        (SELECT, "SELECT"),
        (INSERT, "INSERT"),
        (UPDATE, "UPDATE"),
        (DELETE, "DELETE"),
        (CREATE, "CREATE"),
        (DROP, "DROP"),
        (RELOAD, "RELOAD"),
        (SHUTDOWN, "SHUTDOWN"),
        (PROCESS, "PROCESS"),
        (FILE, "FILE"),
        (REFERENCES, "REFERENCES"),
        (INDEX, "INDEX"),
        (ALTER, "ALTER"),
        (SHOW_DATABASES, "SHOW DATABASES"),
        (SUPER, "SUPER"),
        (CREATE_TEMPORARY_TABLES, "CREATE TEMPORARY TABLES"),
        (LOCK_TABLES, "LOCK TABLES"),
        (EXECUTE, "EXECUTE"),
        (REPLICATION_SLAVE, "REPLICATION SLAVE"),
        (REPLICATION_CLIENT, "BINLOG MONITOR"),
        (CREATE_VIEW, "CREATE VIEW"),
        (SHOW_VIEW, "SHOW VIEW"),
        (CREATE_ROUTINE, "CREATE ROUTINE"),
        (ALTER_ROUTINE, "ALTER ROUTINE"),
        (CREATE_USER, "CREATE USER"),
        (EVENT, "EVENT"),
        (TRIGGER, "TRIGGER"),
        (CREATE_TABLESPACE, "CREATE TABLESPACE"),
        (DELETE_HISTORY, "DELETE HISTORY"),
    ];
}

/// The authentication plugin stored as 1.
pub const NATIVE_PLUGIN: &str = "mysql_native_password";
/// The authentication plugin stored as 2.
pub const SHA2_PLUGIN: &str = "caching_sha2_password";

/// How an account's password is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plugin {
    /// `mysql_native_password`: `Account::hash`.
    #[default]
    Native,
    /// `caching_sha2_password`: `Account::sha2`.
    CachingSha2,
}

impl Plugin {
    pub fn name(self) -> &'static str {
        match self {
            Plugin::Native => NATIVE_PLUGIN,
            Plugin::CachingSha2 => SHA2_PLUGIN,
        }
    }

    /// The plugin a name (any case) stands for.
    pub fn from_name(name: &str) -> Option<Plugin> {
        [Plugin::Native, Plugin::CachingSha2]
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

/// Length of caching_sha2_password's stored string (`$A$005$`, 20 salt bytes, 43
/// digest characters).
pub const SHA2_AUTH_LEN: usize = 70;

/// One account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    /// The host pattern (`%` and `_` wildcards, as LIKE).
    pub host: String,
    /// The authentication plugin: which of `hash` and `sha2` is used (the other is
    /// `None`).
    pub plugin: Plugin,
    /// mysql_native_password: SHA1(SHA1(password)); `None`: no password.
    pub hash: Option<[u8; 20]>,
    /// caching_sha2_password: MySQL's `$A$005$<salt><digest>` string (70 bytes);
    /// `None`: no password.
    pub sha2: Option<Vec<u8>>,
    /// Global (`*.*`) privileges, `privs` bits.
    pub global: u64,
    /// REQUIRE SSL: the account logs in only over TLS.
    pub require_ssl: bool,
    /// Database-level grants (`db.*`): the database name or pattern (`%`,
    /// `_`, `\` escapes, as MySQL reads a grant's database) and its bits
    /// (within `privs::DB`, never 0).
    pub dbs: BTreeMap<String, u64>,
    /// Table-level grants (`db.t`, exact names) and their bits (within
    /// `privs::TABLE`, never 0).
    pub tables: BTreeMap<(String, String), u64>,
}

/// Accounts by (user, host).
pub type AccountMap = BTreeMap<(String, String), Arc<Account>>;

/// An account change: the key goes (`None`) or gets this account.
pub type AccountWrite = ((String, String), Option<Account>);

/// Version 1: global privileges only; version 2 adds the TLS requirement;
/// version 3 adds database and table grants; version 4 adds the
/// caching_sha2_password plugin (2) and its string. Version 3 is written only when
/// the account has some grant below the global level, so an account without
/// them keeps version 2's bytes (readable by releases before grants); version 4
/// only for caching_sha2_password accounts.
const VERSION_1: u8 = 1;
const VERSION_2: u8 = 2;
const VERSION_3: u8 = 3;
const VERSION_4: u8 = 4;

/// A length-prefixed string; one longer than the prefix holds is refused
/// (the SQL layer refuses names over MySQL's limits before this).
fn put_str(v: &mut Vec<u8>, s: &str) -> std::result::Result<(), Error> {
    let n = u16::try_from(s.len())
        .map_err(|_| Error::Internal(format!("account record name of {} bytes", s.len())))?;
    v.extend_from_slice(&n.to_le_bytes());
    v.extend_from_slice(s.as_bytes());
    Ok(())
}

impl Account {
    /// An account without a password or privileges.
    pub fn new(user: &str, host: &str) -> Account {
        Account {
            user: user.to_string(),
            host: host.to_string(),
            plugin: Plugin::Native,
            hash: None,
            sha2: None,
            global: 0,
            require_ssl: false,
            dbs: BTreeMap::new(),
            tables: BTreeMap::new(),
        }
    }

    /// The record's value (docs/formats/accounts.md); a name too long for
    /// its length prefix is an error, never truncated.
    pub fn encode(&self) -> std::result::Result<Vec<u8>, Error> {
        let sha2 = self.plugin == Plugin::CachingSha2;
        let grants = sha2 || !self.dbs.is_empty() || !self.tables.is_empty();
        let mut v = vec![match (sha2, grants) {
            (true, _) => VERSION_4,
            (false, true) => VERSION_3,
            (false, false) => VERSION_2,
        }];
        for s in [&self.user, &self.host] {
            put_str(&mut v, s)?;
        }
        if sha2 {
            v.push(2);
            match &self.sha2 {
                Some(s) if s.len() == SHA2_AUTH_LEN => {
                    v.push(SHA2_AUTH_LEN as u8);
                    v.extend_from_slice(s);
                }
                Some(s) => {
                    return Err(Error::Internal(format!(
                        "caching_sha2_password string of {} bytes",
                        s.len()
                    )))
                }
                None => v.push(0),
            }
        } else {
            v.push(1);
            match &self.hash {
                Some(h) => {
                    v.push(20);
                    v.extend_from_slice(h);
                }
                None => v.push(0),
            }
        }
        v.extend_from_slice(&self.global.to_le_bytes());
        v.push(u8::from(self.require_ssl));
        if grants {
            v.extend_from_slice(&(self.dbs.len() as u32).to_le_bytes());
            for (d, bits) in &self.dbs {
                put_str(&mut v, d)?;
                v.extend_from_slice(&bits.to_le_bytes());
            }
            v.extend_from_slice(&(self.tables.len() as u32).to_le_bytes());
            for ((d, t), bits) in &self.tables {
                put_str(&mut v, d)?;
                put_str(&mut v, t)?;
                v.extend_from_slice(&bits.to_le_bytes());
            }
        }
        let crc = crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        Ok(v)
    }

    /// Reads a record's value; any other version, plugin, hash length, a
    /// bad checksum, short or trailing bytes are errors.
    pub fn decode(v: &[u8]) -> std::result::Result<Account, String> {
        if v.len() < 4 {
            return Err("short account record".into());
        }
        let (body, sum) = v.split_at(v.len() - 4);
        if crc32(body) != u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]) {
            return Err("account record checksum mismatch".into());
        }
        let mut r = Reader(body);
        let version = r.take(1)?[0];
        if !(VERSION_1..=VERSION_4).contains(&version) {
            return Err("unknown account record version".into());
        }
        let user = r.string()?;
        let host = r.string()?;
        let (mut hash, mut sha2) = (None, None);
        let plugin = match r.take(1)?[0] {
            1 => {
                hash = match r.take(1)?[0] {
                    0 => None,
                    20 => {
                        let mut h = [0u8; 20];
                        h.copy_from_slice(r.take(20)?);
                        Some(h)
                    }
                    n => return Err(format!("bad password hash length {n} in account record")),
                };
                Plugin::Native
            }
            2 if version == VERSION_4 => {
                sha2 = match usize::from(r.take(1)?[0]) {
                    0 => None,
                    SHA2_AUTH_LEN => {
                        let s = r.take(SHA2_AUTH_LEN)?;
                        if !s.starts_with(b"$A$") {
                            return Err("bad caching_sha2_password string in account record".into());
                        }
                        Some(s.to_vec())
                    }
                    n => {
                        return Err(format!(
                            "bad caching_sha2_password string length {n} in account record"
                        ))
                    }
                };
                Plugin::CachingSha2
            }
            _ => return Err("unknown authentication plugin in account record".into()),
        };
        let global = r.u64()?;
        let require_ssl = match version {
            VERSION_1 => false,
            _ => match r.take(1)?[0] {
                0 => false,
                1 => true,
                n => return Err(format!("unknown TLS requirement {n} in account record")),
            },
        };
        let mut a = Account {
            plugin,
            hash,
            sha2,
            global,
            require_ssl,
            ..Account::new(&user, &host)
        };
        if version >= VERSION_3 {
            for _ in 0..r.u32()? {
                let d = r.string()?;
                let bits = r.u64()?;
                if bits == 0 || bits & !privs::DB != 0 || a.dbs.insert(d, bits).is_some() {
                    return Err("bad database grant in account record".into());
                }
            }
            for _ in 0..r.u32()? {
                let d = r.string()?;
                let t = r.string()?;
                let bits = r.u64()?;
                if bits == 0 || bits & !privs::TABLE != 0 || a.tables.insert((d, t), bits).is_some()
                {
                    return Err("bad table grant in account record".into());
                }
            }
        }
        if !r.0.is_empty() {
            return Err("trailing bytes in account record".into());
        }
        Ok(a)
    }

    /// The account has a password (of either plugin).
    pub fn has_password(&self) -> bool {
        self.hash.is_some() || self.sha2.is_some()
    }

    /// The privileges of the database-level grant that applies to `db`:
    /// the grant naming it exactly, else the most specific pattern matching
    /// it (MySQL takes one entry, not their union); 0 if none.
    pub fn db_privs(&self, db: &str) -> u64 {
        if let Some(b) = self.dbs.get(db) {
            return *b;
        }
        self.dbs
            .iter()
            // A pattern, or a name with `\` escapes (`my\_db` names my_db).
            .filter(|(p, _)| (has_wildcard(p) || p.contains('\\')) && db_matches(p, db))
            .max_by_key(|(p, _)| specificity(p))
            .map_or(0, |(_, b)| *b)
    }

    /// The database-level privileges the account holds on every database
    /// a grant pattern `target` matches (GRANT ... ON `pattern`.* checks
    /// the grantor with this): its own entry for that exact pattern, else
    /// the most specific pattern covering every name `target` matches.
    pub fn db_privs_pattern(&self, target: &str) -> u64 {
        if let Some(b) = self.dbs.get(target) {
            return *b;
        }
        self.dbs
            .iter()
            .filter(|(p, _)| (has_wildcard(p) || p.contains('\\')) && pattern_covers(p, target))
            .max_by_key(|(p, _)| specificity(p))
            .map_or(0, |(_, b)| *b)
    }

    /// Every privilege the account holds on table `db`.`t` (global,
    /// database and table level together).
    pub fn table_privs(&self, db: &str, t: &str) -> u64 {
        let tab = if self.tables.is_empty() {
            0
        } else {
            self.tables
                .get(&(db.to_string(), t.to_string()))
                .copied()
                .unwrap_or(0)
        };
        self.global | self.db_privs(db) | tab
    }

    /// Whether the account holds some privilege in database `db` (USE,
    /// SHOW DATABASES, connecting with it): a global one that applies to
    /// databases, a database grant, or a grant on one of its tables.
    pub fn any_in_db(&self, db: &str) -> bool {
        self.global & privs::DB != 0
            || self.db_privs(db) != 0
            || self.tables.keys().any(|(d, _)| d == db)
    }

    /// Whether the account holds some privilege on table `db`.`t` (its name
    /// shown in SHOW TABLES and information_schema, SHOW CREATE TABLE).
    pub fn any_on_table(&self, db: &str, t: &str) -> bool {
        self.table_privs(db, t) & privs::TABLE != 0
    }
}

/// A cursor over a record's bytes.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("short account record".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn string(&mut self) -> std::result::Result<String, String> {
        let l = self.take(2)?;
        let n = u16::from_le_bytes([l[0], l[1]]) as usize;
        let s = std::str::from_utf8(self.take(n)?).map_err(|_| "account name is not UTF-8")?;
        Ok(s.to_string())
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        let mut g = [0u8; 8];
        g.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(g))
    }
}

/// CRC-32 (IEEE, as zlib) of `data`.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Whether `host` matches the pattern (`%` any run, `_` one character;
/// ASCII case-insensitive, as host names compare in MySQL).
pub fn host_matches(pattern: &str, host: &str) -> bool {
    wild_match(pattern.as_bytes(), host.as_bytes(), false)
}

/// Whether database `db` matches a grant's database pattern (`%`, `_`, and
/// `\` escaping the next character; case-sensitive, as database names on
/// Linux).
pub fn db_matches(pattern: &str, db: &str) -> bool {
    wild_match(pattern.as_bytes(), db.as_bytes(), true)
}

/// A grant pattern's pieces: a literal byte, `_`, `%`.
#[derive(Clone, Copy, PartialEq)]
enum Wild {
    Lit(u8),
    One,
    Any,
}

fn wild_tokens(p: &str) -> Vec<Wild> {
    let b = p.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() => {
                out.push(Wild::Lit(b[i + 1]));
                i += 2;
                continue;
            }
            b'%' => out.push(Wild::Any),
            b'_' => out.push(Wild::One),
            c => out.push(Wild::Lit(c)),
        }
        i += 1;
    }
    out
}

/// Whether every name pattern `target` matches is matched by `pattern`
/// (sound, not complete: `%` covers any run of the target's pieces, `_`
/// one literal or `_`, a literal only itself). O(pattern x target).
pub fn pattern_covers(pattern: &str, target: &str) -> bool {
    let (p, t) = (wild_tokens(pattern), wild_tokens(target));
    // ok[i][j]: p[i..] covers t[j..]; filled from the ends.
    let w = t.len() + 1;
    let mut ok = vec![false; (p.len() + 1) * w];
    ok[p.len() * w + t.len()] = true;
    for i in (0..p.len()).rev() {
        for j in (0..=t.len()).rev() {
            let next = |di: usize, dj: usize| ok[(i + di) * w + j + dj];
            let v = match (p[i], t.get(j)) {
                (Wild::Any, None) => next(1, 0),
                (Wild::Any, Some(_)) => next(1, 0) || next(0, 1),
                (Wild::One, Some(Wild::Lit(_) | Wild::One)) => next(1, 1),
                (Wild::Lit(c), Some(Wild::Lit(d))) if c == *d => next(1, 1),
                _ => false,
            };
            ok[i * w + j] = v;
        }
    }
    ok[0]
}

/// Whether a grant's database names a pattern (an unescaped `%` or `_`).
pub fn has_wildcard(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'%' | b'_' => return true,
            _ => i += 1,
        }
    }
    false
}

/// LIKE-style matching, greedy with one backtrack point (the last `%`):
/// O(pattern x text) at worst, never exponential, whatever the `%`s of a
/// hostile pattern. `exact`: case-sensitive, with `\` escapes.
fn wild_match(p: &[u8], h: &[u8], exact: bool) -> bool {
    let (mut i, mut j) = (0, 0);
    // After the last `%` seen: where the pattern resumes, and the text
    // position that `%` has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while j < h.len() {
        let (lit, next) = match p.get(i) {
            Some(b'\\') if exact && i + 1 < p.len() => (Some(p[i + 1]), i + 2),
            Some(&c) => (Some(c), i + 1),
            None => (None, i),
        };
        let escaped = next == i + 2;
        match lit {
            Some(b'%') if !escaped => {
                i = next;
                star = Some((i, j));
                continue;
            }
            Some(c)
                if (c == b'_' && !escaped)
                    || c == h[j]
                    || (!exact && c.eq_ignore_ascii_case(&h[j])) =>
            {
                i = next;
                j += 1;
                continue;
            }
            _ => {}
        }
        match star {
            // The last `%` takes one more character and the rest retries.
            Some((pi, hj)) => {
                i = pi;
                j = hj + 1;
                star = Some((pi, hj + 1));
            }
            None => return false,
        }
    }
    p[i.min(p.len())..].iter().all(|&c| c == b'%')
}

/// How specific a host pattern is (greater first), as MySQL sorts
/// `mysql.user`: names without wildcards first, then patterns by the
/// length of their text before the first wildcard; `%` last.
fn specificity(pattern: &str) -> (u8, usize) {
    match pattern.find(['%', '_']) {
        None => (1, pattern.len()),
        Some(i) => (0, i),
    }
}

/// The account a client `user` connecting from any of `hosts` (its names
/// and addresses) is: the matching one with the most specific host.
pub fn find_account(map: &AccountMap, user: &str, hosts: &[&str]) -> Option<Arc<Account>> {
    map.values()
        .filter(|a| a.user == user && hosts.iter().any(|h| host_matches(&a.host, h)))
        .max_by_key(|a| specificity(&a.host))
        .cloned()
}

impl Catalog {
    /// Changes accounts in one synced write: `f` sees the current accounts
    /// (under the DDL lock, so checks and writes do not race) and returns
    /// the writes and an error to report after them (some accounts of a
    /// statement failed, the others changed), or an error and no writes.
    pub fn change_accounts<E: From<Error>>(
        &self,
        f: impl FnOnce(&AccountMap) -> std::result::Result<(Vec<AccountWrite>, Option<E>), E>,
    ) -> std::result::Result<(), E> {
        let _g = self.lock_ddl();
        let (writes, after) = f(&self.state().accounts)?;
        let after = after.map_or(Ok(()), Err);
        let mark = !self.state().accounts_initialized;
        if writes.is_empty() && !mark {
            return after;
        }
        let mut b = WriteBatch::new();
        if mark {
            // From the first account write on, the catalog has accounts
            // (docs/formats/accounts.md, "The A record").
            b.put(&key(b'A', &[]), &[1]);
        }
        for ((u, h), a) in &writes {
            let k = key(b'U', &[u.as_bytes(), h.as_bytes()]);
            match a {
                Some(a) => b.put(&k, &a.encode()?),
                None => b.delete(&k),
            }
        }
        self.db.write(sync(), b).map_err(Error::from)?;
        self.publish(|st| {
            st.accounts_initialized = true;
            for (k, a) in writes {
                match a {
                    Some(a) => st.accounts.insert(k, Arc::new(a)),
                    None => st.accounts.remove(&k),
                };
            }
        });
        after
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_refuse_every_damage() {
        let a = Account {
            hash: Some([7; 20]),
            global: privs::SELECT | privs::GRANT_OPTION,
            require_ssl: true,
            ..Account::new("app", "10.0.%")
        };
        let v = a.encode().unwrap();
        assert_eq!(Account::decode(&v), Ok(a.clone()));
        for n in 0..v.len() {
            assert!(Account::decode(&v[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..v.len() {
            let mut w = v.clone();
            w[i] ^= 0x40;
            assert!(Account::decode(&w).is_err(), "flipped byte {i}");
        }
        assert_eq!(v[0], 2, "no grants: version 2's bytes");
        let none = Account {
            hash: None,
            require_ssl: false,
            ..a
        };
        assert_eq!(Account::decode(&none.encode().unwrap()), Ok(none));
    }

    /// A caching_sha2_password account: version 4, byte by byte, read back,
    /// every damage refused; plugin 2 in an older version is refused.
    #[test]
    fn version_4_caching_sha2_records() {
        let mut auth = b"$A$005$".to_vec();
        auth.extend_from_slice(&[b's'; 20]);
        auth.extend_from_slice(&[b'd'; 43]);
        let a = Account {
            plugin: Plugin::CachingSha2,
            sha2: Some(auth.clone()),
            global: privs::SELECT,
            ..Account::new("app", "%")
        };
        let v = a.encode().unwrap();
        let mut want = vec![4u8, 3, 0, b'a', b'p', b'p', 1, 0, b'%', 2, 70];
        want.extend_from_slice(&auth);
        want.extend_from_slice(&privs::SELECT.to_le_bytes());
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let crc = crc32(&want);
        want.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(v, want);
        assert_eq!(Account::decode(&v), Ok(a.clone()));
        assert!(a.has_password());
        for n in 0..v.len() {
            assert!(Account::decode(&v[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..v.len() {
            let mut w = v.clone();
            w[i] ^= 0x40;
            assert!(Account::decode(&w).is_err(), "flipped byte {i}");
        }
        // No password; with grants.
        let mut b = Account {
            sha2: None,
            ..a.clone()
        };
        b.dbs.insert("d".into(), privs::INSERT);
        assert_eq!(Account::decode(&b.encode().unwrap()), Ok(b.clone()));
        assert!(!b.has_password());
        // Plugin 2 in a version 3 record is refused.
        let mut old = want[..want.len() - 4].to_vec();
        old[0] = 3;
        let crc = crc32(&old);
        old.extend_from_slice(&crc.to_le_bytes());
        assert!(Account::decode(&old).is_err());
        // A native account still writes version 2.
        let n = Account {
            hash: Some([1; 20]),
            ..Account::new("app", "%")
        };
        assert_eq!(n.encode().unwrap()[0], 2);
    }

    /// A version 1 record (before REQUIRE SSL), byte by byte: still read, as REQUIRE NONE.
    #[test]
    fn version_1_records_still_read() {
        let mut v = vec![1u8, 3, 0];
        v.extend_from_slice(b"app");
        v.extend_from_slice(&[1, 0, b'%', 1, 20]);
        v.extend_from_slice(&[9; 20]);
        v.extend_from_slice(&(privs::SELECT | privs::INSERT).to_le_bytes());
        let crc = crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        let a = Account::decode(&v).unwrap();
        assert_eq!(
            a,
            Account {
                user: "app".into(),
                host: "%".into(),
                hash: Some([9; 20]),
                global: privs::SELECT | privs::INSERT,
                ..Account::new("app", "%")
            }
        );
        // Rewritten as version 2: one more byte before the checksum.
        let w = a.encode().unwrap();
        assert_eq!(w[0], 2);
        assert_eq!(w.len(), v.len() + 1);
        assert_eq!(w[w.len() - 5], 0);
        // A version 2 requirement byte other than 0 or 1 is refused.
        let mut bad = w[..w.len() - 5].to_vec();
        bad.push(2);
        let crc = crc32(&bad);
        bad.extend_from_slice(&crc.to_le_bytes());
        assert!(Account::decode(&bad).is_err());
    }

    /// A version 2 record as today's releases before grants write it, byte
    /// by byte: read as it was, and written back with the same bytes.
    #[test]
    fn version_2_records_read_and_rewrite_unchanged() {
        let mut v = vec![2u8, 3, 0];
        v.extend_from_slice(b"app");
        v.extend_from_slice(&[1, 0, b'%', 1, 20]);
        v.extend_from_slice(&[7; 20]);
        v.extend_from_slice(&privs::SELECT.to_le_bytes());
        v.push(1);
        let crc = crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        let a = Account::decode(&v).unwrap();
        assert_eq!(a.hash, Some([7; 20]));
        assert_eq!(a.global, privs::SELECT);
        assert!(a.require_ssl);
        assert!(a.dbs.is_empty() && a.tables.is_empty());
        assert_eq!(a.encode().unwrap(), v);
    }

    /// The version 3 example of docs/formats/accounts.md, byte by byte.
    #[test]
    fn version_3_bytes_are_the_documented_ones() {
        let mut a = Account::new("app", "%");
        a.global = privs::SELECT;
        a.dbs.insert("d".into(), privs::INSERT);
        a.tables.insert(
            ("d".into(), "t".into()),
            privs::SELECT | privs::UPDATE | privs::GRANT_OPTION,
        );
        let mut v = vec![3u8, 3, 0];
        v.extend_from_slice(b"app");
        v.extend_from_slice(&[1, 0, b'%', 1, 0]);
        v.extend_from_slice(&privs::SELECT.to_le_bytes());
        v.push(0);
        v.extend_from_slice(&[1, 0, 0, 0, 1, 0, b'd', 2, 0, 0, 0, 0, 0, 0, 0]);
        v.extend_from_slice(&[1, 0, 0, 0, 1, 0, b'd', 1, 0, b't', 5, 4, 0, 0, 0, 0, 0, 0]);
        let crc = crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(a.encode().unwrap(), v);
        assert_eq!(Account::decode(&v), Ok(a));
    }

    #[test]
    fn grants_round_trip_in_version_3_and_refuse_every_damage() {
        let mut a = Account::new("app", "%");
        a.global = privs::PROCESS;
        a.dbs.insert("d1".into(), privs::SELECT | privs::INSERT);
        a.dbs.insert("d\\_%".into(), privs::DB);
        a.tables.insert(
            ("d2".into(), "t".into()),
            privs::UPDATE | privs::GRANT_OPTION,
        );
        let v = a.encode().unwrap();
        assert_eq!(v[0], 3);
        assert_eq!(Account::decode(&v), Ok(a.clone()));
        for n in 0..v.len() {
            assert!(Account::decode(&v[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..v.len() {
            let mut w = v.clone();
            w[i] ^= 0x40;
            assert!(Account::decode(&w).is_err(), "flipped byte {i}");
        }
        // A database grant with a global-only privilege is refused.
        let mut bad = a.clone();
        bad.dbs.insert("x".into(), privs::SUPER);
        assert!(Account::decode(&bad.encode().unwrap()).is_err());
        // A pattern covers another only if it matches all it matches.
        for (p, t, want) in [
            ("%", "d_", true),
            ("d%", "d_x%", true),
            ("d_", "d%", false),
            ("d_", "d_", true),
            ("d\\_", "d_", false),
            ("d_", "d\\_", true),
            ("a%b", "a%", false),
            ("%x", "_%x", true),
        ] {
            assert_eq!(pattern_covers(p, t), want, "{p} covers {t}");
        }
        // An escaped name grants that one database.
        let mut e = Account::new("e", "%");
        e.dbs.insert("my\\_db".into(), privs::SELECT);
        assert_eq!(e.db_privs("my_db"), privs::SELECT);
        assert_eq!(e.db_privs("myxdb"), 0);
        // A name longer than its length prefix is an error, not truncated.
        let long = Account::new(&"u".repeat(70_000), "%");
        assert!(long.encode().is_err());
        // The privileges that apply.
        assert_eq!(a.db_privs("d1"), privs::SELECT | privs::INSERT);
        assert_eq!(a.db_privs("d_x"), privs::DB);
        assert_eq!(a.db_privs("dax"), 0, "escaped _ is literal");
        assert_eq!(a.db_privs("D1"), 0, "case-sensitive");
        assert_eq!(
            a.table_privs("d2", "t"),
            privs::PROCESS | privs::UPDATE | privs::GRANT_OPTION
        );
        assert!(a.any_in_db("d2") && a.any_in_db("d_1") && !a.any_in_db("d3"));
        assert!(a.any_on_table("d1", "anything") && !a.any_on_table("d2", "u"));
    }

    #[test]
    fn host_patterns_and_most_specific_first() {
        assert!(host_matches("%", "anything"));
        assert!(host_matches("10.0.%", "10.0.3.4"));
        assert!(!host_matches("10.0.%", "10.1.3.4"));
        assert!(host_matches("h_st", "HOST"));
        assert!(!host_matches("h_st", "hst"));
        assert!(host_matches("localhost", "LocalHost"));
        assert!(host_matches("a%b%c", "axxbyyc"));
        assert!(!host_matches("a%b%c", "axxbyy"));
        assert!(host_matches("%%", ""));
        assert!(!host_matches("_", ""));
        assert!(host_matches("%.example.com", "db.example.com"));
        assert!(!host_matches("%.example.com", "example.com"));
        assert!(host_matches("1%1", "121"));
        assert!(!host_matches("", "x"));
        assert!(host_matches("", ""));
        let mut m = AccountMap::new();
        for h in ["%", "10.%", "10.0.0.1", "localhost"] {
            m.insert(("u".into(), h.into()), Arc::new(Account::new("u", h)));
        }
        let host = |hs: &[&str]| find_account(&m, "u", hs).map(|a| a.host.clone());
        assert_eq!(host(&["10.0.0.1"]).as_deref(), Some("10.0.0.1"));
        assert_eq!(host(&["10.0.0.2"]).as_deref(), Some("10.%"));
        assert_eq!(host(&["192.168.1.1"]).as_deref(), Some("%"));
        assert_eq!(
            host(&["localhost", "127.0.0.1"]).as_deref(),
            Some("localhost")
        );
        assert_eq!(find_account(&m, "v", &["localhost"]), None);
    }

    #[test]
    fn hostile_host_patterns_match_in_polynomial_time() {
        // A backtracking matcher takes C(66, 33) steps on this pair (it never
        // finished); the two-pointer one a few thousand.
        let pattern = "%a".repeat(33) + "b";
        let host = "a".repeat(66);
        let t = std::time::Instant::now();
        assert!(!host_matches(&pattern, &host));
        let long = "%_".repeat(120) + "z";
        assert!(!host_matches(&long, &"y".repeat(250)));
        assert!(host_matches(&("%a".repeat(33) + "%"), &host));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn crc_is_zlibs() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
