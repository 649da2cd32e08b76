//! caching_sha2_password's fast-authentication cache, as MySQL keeps it in
//! memory only: SHA256(SHA256(password)) of the accounts that completed a full
//! authentication, keyed by the account's stored `$A$...` string (a fresh salt
//! for every password set, so an entry can only ever match the password it was
//! made from). Account statements drop the entries no account holds any more
//! (password changes, DROP USER); FLUSH PRIVILEGES empties it.
use rel::catalog::AccountMap;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct Sha2Cache(Mutex<HashMap<Vec<u8>, [u8; 32]>>);

impl Sha2Cache {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, [u8; 32]>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry for an account's stored string.
    pub fn get(&self, stored: &[u8]) -> Option<[u8; 32]> {
        self.map().get(stored).copied()
    }

    /// Records a full authentication's SHA256(SHA256(password)) for the stored
    /// string it was checked against.
    pub fn insert(&self, stored: Vec<u8>, hash: [u8; 32]) {
        self.map().insert(stored, hash);
    }

    /// FLUSH PRIVILEGES: every account needs a full authentication again.
    pub fn clear(&self) {
        self.map().clear();
    }

    /// Drops the entries whose string no account in `accounts` holds.
    pub fn retain(&self, accounts: &AccountMap) {
        let mut m = self.map();
        if m.is_empty() {
            return;
        }
        let held: std::collections::HashSet<&[u8]> = accounts
            .values()
            .filter_map(|a| a.sha2.as_deref())
            .collect();
        m.retain(|k, _| held.contains(k.as_slice()));
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
