//! ENUM and SET member lists. A column type holds a `Members` handle: a
//! reference-counted list shared by the copies of that type (catalog
//! entries, plans, cached prepared statements), freed when the last of them
//! goes, so declaring and dropping tables with ever new lists (each up to
//! 65,535 members of up to 255 characters) does not grow memory.
//! `Members::live_lists` counts the lists alive in the process (tests).
//!
//! An ENUM value is stored as its 1-based member number (0 is the '' error
//! value), a SET value as a bitmask (bit `i` for member `i + 1`); in memory
//! both are their text (`Value::Bytes`), mapped here.
use crate::collation::Collation;
use crate::value::{ColumnType, TypeKind, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Most members of an ENUM (MySQL's limit).
pub const MAX_ENUM_MEMBERS: usize = 65535;
/// Most members of a SET.
pub const MAX_SET_MEMBERS: usize = 64;

/// Lists alive in the process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// One list's members; counted in `LIVE` while it exists.
struct List(Box<[Box<[u8]>]>);

impl Drop for List {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A member list (empty for the types that have none).
#[derive(Clone, Default)]
pub struct Members(Option<Arc<List>>);

impl PartialEq for Members {
    fn eq(&self, other: &Members) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.0 == b.0,
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

impl Eq for Members {}

impl std::hash::Hash for Members {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.list().hash(h)
    }
}

impl std::fmt::Debug for Members {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list().iter().map(|m| String::from_utf8_lossy(m)))
            .finish()
    }
}

impl Members {
    /// No members.
    pub const NONE: Members = Members(None);

    /// A handle on a new list of `list`'s members.
    pub fn new(list: Vec<Vec<u8>>) -> Members {
        if list.is_empty() {
            return Members::NONE;
        }
        LIVE.fetch_add(1, Ordering::Relaxed);
        let boxed: Box<[Box<[u8]>]> = list.into_iter().map(Vec::into_boxed_slice).collect();
        Members(Some(Arc::new(List(boxed))))
    }

    /// Member lists alive in the process (declared and not yet freed).
    pub fn live_lists() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    /// Handles sharing this list (0 for no members).
    pub fn handles(&self) -> usize {
        self.0.as_ref().map_or(0, Arc::strong_count)
    }

    fn list(&self) -> &[Box<[u8]>] {
        match &self.0 {
            Some(l) => &l.0,
            None => &[],
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.list().len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.list().is_empty()
    }

    /// The members in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.list().iter().map(|b| &b[..])
    }

    /// Member `n` (1-based); 0 and numbers past the end are ''.
    pub fn get(&self, n: u64) -> &[u8] {
        match n.checked_sub(1) {
            Some(i) => self.list().get(i as usize).map_or(&[], |b| &b[..]),
            None => &[],
        }
    }

    /// The 1-based number of the member equal to `s` under `coll`.
    pub fn position(&self, s: &[u8], coll: Collation) -> Option<u64> {
        self.list()
            .iter()
            .position(|m| coll.compare(m, s).is_eq())
            .map(|i| i as u64 + 1)
    }

    /// The ENUM number of a stored text (the '' error value is 0).
    pub fn enum_number(&self, s: &[u8]) -> u64 {
        match self.list().iter().position(|m| &m[..] == s) {
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
        for (i, m) in self.list().iter().enumerate().take(64) {
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
        match self.len() {
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
            let n = self.len() as u32;
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
    fn enum_and_set_mapping() {
        let a = Members::new(vec![b"x".to_vec(), b"y".to_vec(), b"it's".to_vec()]);
        let b = Members::new(vec![b"x".to_vec(), b"y".to_vec(), b"it's".to_vec()]);
        assert_eq!(a, b);
        assert_ne!(a, Members::new(vec![b"x".to_vec()]));
        assert_ne!(a, Members::NONE);
        assert_eq!(Members::NONE, Members::new(Vec::new()));
        let c = a.clone();
        assert_eq!((a.handles(), c.handles(), b.handles()), (2, 2, 1));
        drop(c);
        assert_eq!(a.handles(), 1);
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
