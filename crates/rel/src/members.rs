//! ENUM and SET member lists, interned so that `ColumnType` stays `Copy`: a
//! column type holds a `Members` handle (a pointer to a list shared by every
//! column declared with the same members). Interned lists are never freed;
//! their number is bounded by the distinct lists declared while the process
//! runs (each at most 65,535 members of at most 255 characters).
//!
//! An ENUM value is stored as its 1-based member number (0 is the '' error
//! value), a SET value as a bitmask (bit `i` for member `i + 1`); in memory
//! both are their text (`Value::Bytes`), mapped here.
use crate::collation::Collation;
use crate::value::{ColumnType, TypeKind, Value};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// Most members of an ENUM (MySQL's limit).
pub const MAX_ENUM_MEMBERS: usize = 65535;
/// Most members of a SET.
pub const MAX_SET_MEMBERS: usize = 64;

/// A member list (empty for the types that have none).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Members(&'static [Box<[u8]>]);

impl std::fmt::Debug for Members {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|m| String::from_utf8_lossy(m)))
            .finish()
    }
}

type List = &'static [Box<[u8]>];

fn interned() -> &'static Mutex<HashSet<List>> {
    static SET: OnceLock<Mutex<HashSet<List>>> = OnceLock::new();
    SET.get_or_init(|| Mutex::new(HashSet::new()))
}

impl Members {
    /// No members.
    pub const NONE: Members = Members(&[]);

    /// The shared handle of `list`.
    pub fn intern(list: Vec<Vec<u8>>) -> Members {
        if list.is_empty() {
            return Members::NONE;
        }
        let boxed: Vec<Box<[u8]>> = list.into_iter().map(Vec::into_boxed_slice).collect();
        let mut set = interned().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = set.get(boxed.as_slice()) {
            return Members(found);
        }
        let leaked: &'static [Box<[u8]>] = Box::leak(boxed.into_boxed_slice());
        set.insert(leaked);
        Members(leaked)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The members in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &'static [u8]> {
        self.0.iter().map(|b| &b[..])
    }

    /// Member `n` (1-based); 0 and numbers past the end are ''.
    pub fn get(&self, n: u64) -> &'static [u8] {
        match n.checked_sub(1) {
            Some(i) => self.0.get(i as usize).map_or(&[], |b| &b[..]),
            None => &[],
        }
    }

    /// The 1-based number of the member equal to `s` under `coll`.
    pub fn position(&self, s: &[u8], coll: Collation) -> Option<u64> {
        self.0
            .iter()
            .position(|m| coll.compare(m, s).is_eq())
            .map(|i| i as u64 + 1)
    }

    /// The ENUM number of a stored text (the '' error value is 0).
    pub fn enum_number(&self, s: &[u8]) -> u64 {
        match self.0.iter().position(|m| &m[..] == s) {
            Some(i) => i as u64 + 1,
            None => 0,
        }
    }

    /// The SET bitmask of `s` (comma-separated members, any order, repeats
    /// allowed; '' is the empty set); None when a part is not a member.
    pub fn set_mask(&self, s: &[u8], coll: Collation) -> Option<u64> {
        if s.is_empty() {
            return Some(0);
        }
        let mut mask = 0u64;
        for part in s.split(|&c| c == b',') {
            let n = self.position(part, coll)?;
            mask |= 1u64 << (n - 1);
        }
        Some(mask)
    }

    /// The members whose bits are set in `mask`, in declaration order,
    /// joined by commas (bits past the members are ignored).
    pub fn set_text(&self, mask: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, m) in self.0.iter().enumerate().take(64) {
            if mask & (1u64 << i) != 0 {
                if !out.is_empty() {
                    out.push(b',');
                }
                out.extend_from_slice(m);
            }
        }
        out
    }

    /// The mask with every member's bit.
    pub fn full_mask(&self) -> u64 {
        match self.0.len() {
            n if n >= 64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// The SQL list as SHOW CREATE TABLE prints it: `'a','it''s'`.
    pub fn sql_list(&self) -> String {
        let mut s = String::new();
        for (i, m) in self.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push('\'');
            s.push_str(&String::from_utf8_lossy(m).replace('\'', "''"));
            s.push('\'');
        }
        s
    }

    /// Characters of the longest member (ENUM) or of all members joined by
    /// commas (SET): the column's character length.
    pub fn char_len(&self, set: bool) -> u32 {
        let chars = |m: &[u8]| String::from_utf8_lossy(m).chars().count() as u32;
        if set {
            let n = self.0.len() as u32;
            self.iter().map(chars).sum::<u32>() + n.saturating_sub(1)
        } else {
            self.iter().map(chars).max().unwrap_or(0)
        }
    }
}

/// The number an ENUM or SET value (its text, already converted to the
/// column) is stored as: the member number or the bitmask.
pub fn stored_number(t: &ColumnType, v: &Value) -> u64 {
    match v {
        Value::Bytes(b) if t.kind == TypeKind::Set => t.members.set_mask(b, t.coll).unwrap_or(0),
        Value::Bytes(b) => t.members.enum_number(b),
        other => other
            .to_i128()
            .map_or(0, |i| i.clamp(0, u64::MAX as i128) as u64),
    }
}

/// The value (text) of a stored ENUM number or SET bitmask.
pub fn stored_value(t: &ColumnType, n: u64) -> Value {
    Value::Bytes(if t.kind == TypeKind::Set {
        t.members.set_text(n)
    } else {
        t.members.get(n).to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_enum_and_set_mapping() {
        let a = Members::intern(vec![b"x".to_vec(), b"y".to_vec(), b"it's".to_vec()]);
        let b = Members::intern(vec![b"x".to_vec(), b"y".to_vec(), b"it's".to_vec()]);
        assert!(std::ptr::eq(a.0, b.0));
        assert_eq!(a.get(2), b"y");
        assert_eq!(a.get(0), b"");
        assert_eq!(a.get(9), b"");
        assert_eq!(a.position(b"Y", Collation::Utf8mb4GeneralCi), Some(2));
        assert_eq!(a.position(b"Y", Collation::Utf8mb4Bin), None);
        assert_eq!(a.set_mask(b"it's,x,x", Collation::Utf8mb4Bin), Some(5));
        assert_eq!(a.set_mask(b"x,q", Collation::Utf8mb4Bin), None);
        assert_eq!(a.set_text(5), b"x,it's");
        assert_eq!(a.sql_list(), "'x','y','it''s'");
        assert_eq!(a.char_len(false), 4);
        assert_eq!(a.char_len(true), 8);
        assert_eq!(a.full_mask(), 7);
    }
}
