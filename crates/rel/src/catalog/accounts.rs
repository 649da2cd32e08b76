//! Accounts in the catalog: the `U` records (one per `'user'@'host'`, with
//! its password hash, global privileges and TLS requirement;
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

/// The only authentication plugin accounts have (stored as 1).
pub const NATIVE_PLUGIN: &str = "mysql_native_password";

/// One account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    /// The host pattern (`%` and `_` wildcards, as LIKE).
    pub host: String,
    /// SHA1(SHA1(password)); `None`: no password.
    pub hash: Option<[u8; 20]>,
    /// Global (`*.*`) privileges, `privs` bits.
    pub global: u64,
    /// REQUIRE SSL: the account logs in only over TLS.
    pub require_ssl: bool,
}

/// Accounts by (user, host).
pub type AccountMap = BTreeMap<(String, String), Arc<Account>>;

/// An account change: the key goes (`None`) or gets this account.
pub type AccountWrite = ((String, String), Option<Account>);

/// The version written; version 1 records (before REQUIRE SSL) are still read,
/// as REQUIRE NONE.
const VERSION: u8 = 2;

impl Account {
    /// The record's value (docs/formats/accounts.md).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = vec![VERSION];
        for s in [&self.user, &self.host] {
            v.extend_from_slice(&(s.len() as u16).to_le_bytes());
            v.extend_from_slice(s.as_bytes());
        }
        v.push(1);
        match &self.hash {
            Some(h) => {
                v.push(20);
                v.extend_from_slice(h);
            }
            None => v.push(0),
        }
        v.extend_from_slice(&self.global.to_le_bytes());
        v.push(u8::from(self.require_ssl));
        let crc = crc32(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        v
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
        let mut r = body;
        let mut take = |n: usize| -> std::result::Result<&[u8], String> {
            if r.len() < n {
                return Err("short account record".into());
            }
            let (a, b) = r.split_at(n);
            r = b;
            Ok(a)
        };
        let version = take(1)?[0];
        if !(1..=VERSION).contains(&version) {
            return Err("unknown account record version".into());
        }
        let mut strings = Vec::new();
        for _ in 0..2 {
            let l = take(2)?;
            let n = u16::from_le_bytes([l[0], l[1]]) as usize;
            let s = std::str::from_utf8(take(n)?).map_err(|_| "account name is not UTF-8")?;
            strings.push(s.to_string());
        }
        if take(1)?[0] != 1 {
            return Err("unknown authentication plugin in account record".into());
        }
        let hash = match take(1)?[0] {
            0 => None,
            20 => {
                let mut h = [0u8; 20];
                h.copy_from_slice(take(20)?);
                Some(h)
            }
            n => return Err(format!("bad password hash length {n} in account record")),
        };
        let mut g = [0u8; 8];
        g.copy_from_slice(take(8)?);
        let require_ssl = match version {
            1 => false,
            _ => match take(1)?[0] {
                0 => false,
                1 => true,
                n => return Err(format!("unknown TLS requirement {n} in account record")),
            },
        };
        if !r.is_empty() {
            return Err("trailing bytes in account record".into());
        }
        let host = strings.pop().unwrap_or_default();
        let user = strings.pop().unwrap_or_default();
        Ok(Account {
            user,
            host,
            hash,
            global: u64::from_le_bytes(g),
            require_ssl,
        })
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
/// ASCII case-insensitive, as host names compare in MySQL). Greedy with one
/// backtrack point (the last `%`): O(pattern x host) at worst, never
/// exponential, whatever the `%`s of a hostile pattern.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let (p, h) = (pattern.as_bytes(), host.as_bytes());
    let (mut i, mut j) = (0, 0);
    // After the last `%` seen: where the pattern resumes, and the host
    // position that `%` has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while j < h.len() {
        match p.get(i) {
            Some(b'%') => {
                i += 1;
                star = Some((i, j));
            }
            Some(&c) if c == b'_' || c.eq_ignore_ascii_case(&h[j]) => {
                i += 1;
                j += 1;
            }
            _ => match star {
                // The last `%` takes one more character and the rest retries.
                Some((pi, hj)) => {
                    i = pi;
                    j = hj + 1;
                    star = Some((pi, hj + 1));
                }
                None => return false,
            },
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
                Some(a) => b.put(&k, &a.encode()),
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
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_refuse_every_damage() {
        let a = Account {
            user: "app".into(),
            host: "10.0.%".into(),
            hash: Some([7; 20]),
            global: privs::SELECT | privs::GRANT_OPTION,
            require_ssl: true,
        };
        let v = a.encode();
        assert_eq!(Account::decode(&v), Ok(a.clone()));
        for n in 0..v.len() {
            assert!(Account::decode(&v[..n]).is_err(), "truncated at {n}");
        }
        for i in 0..v.len() {
            let mut w = v.clone();
            w[i] ^= 0x40;
            assert!(Account::decode(&w).is_err(), "flipped byte {i}");
        }
        let none = Account {
            hash: None,
            require_ssl: false,
            ..a
        };
        assert_eq!(Account::decode(&none.encode()), Ok(none));
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
                require_ssl: false,
            }
        );
        // Rewritten as version 2: one more byte before the checksum.
        let w = a.encode();
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
            m.insert(
                ("u".into(), h.into()),
                Arc::new(Account {
                    user: "u".into(),
                    host: h.into(),
                    hash: None,
                    global: 0,
                    require_ssl: false,
                }),
            );
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
