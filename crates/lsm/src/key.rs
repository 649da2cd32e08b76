//! Internal keys: how a user key, a sequence number and a kind are stored
//! together, and how they are ordered.
//!
//! ```text
//! internal key := user_key | trailer: fixed64 LE = (seq << 8) | kind
//! ```
//! Order: user keys by the column family's comparator, then trailer
//! descending, so the newest version of a key comes first.
//!
//! DO NOT CHANGE THE KIND VALUES: they are stored in WAL records and tables.
use std::cmp::Ordering;

/// A sequence number: the position of a write in the database's history.
pub type SeqNo = u64;

/// The largest sequence number that fits in a trailer (56 bits).
pub const MAX_SEQ: SeqNo = (1 << 56) - 1;

/// What an entry means. Persisted values; never reorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ValueKind {
    /// The key is deleted (a tombstone).
    Delete = 0,
    /// The key has a value.
    Value = 1,
    /// Deletes exactly one earlier `Value`; compaction drops both when they meet.
    SingleDelete = 2,
    /// A range tombstone: the value holds the exclusive end key.
    RangeDelete = 3,
}

/// The kind used when seeking: it sorts first among equal (key, seq).
pub const KIND_FOR_SEEK: ValueKind = ValueKind::RangeDelete;

impl ValueKind {
    /// Decodes a stored kind byte.
    pub fn from_u8(b: u8) -> Option<ValueKind> {
        match b {
            0 => Some(ValueKind::Delete),
            1 => Some(ValueKind::Value),
            2 => Some(ValueKind::SingleDelete),
            3 => Some(ValueKind::RangeDelete),
            _ => None,
        }
    }
}

/// How user keys are ordered in a column family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparator {
    /// Lexicographic byte order (RocksDB's `BytewiseComparator`).
    Bytewise,
    /// Reverse lexicographic order (RocksDB's `ReverseBytewiseComparator`).
    ReverseBytewise,
}

impl Comparator {
    /// Compares two user keys.
    #[inline]
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Comparator::Bytewise => a.cmp(b),
            Comparator::ReverseBytewise => b.cmp(a),
        }
    }

    /// Stable name stored in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Comparator::Bytewise => "strata.Bytewise",
            Comparator::ReverseBytewise => "strata.ReverseBytewise",
        }
    }

    /// Parses a stored name.
    pub fn from_name(s: &str) -> Option<Comparator> {
        match s {
            "strata.Bytewise" => Some(Comparator::Bytewise),
            "strata.ReverseBytewise" => Some(Comparator::ReverseBytewise),
            _ => None,
        }
    }

    /// Compares two internal keys.
    #[inline]
    pub fn compare_internal(self, a: &[u8], b: &[u8]) -> Ordering {
        let (ua, ta) = split(a);
        let (ub, tb) = split(b);
        match self.compare(ua, ub) {
            Ordering::Equal => tb.cmp(&ta),
            o => o,
        }
    }

    /// A short key `k` with `start <= k < limit` (bytewise only), used for
    /// index entries; falls back to `start`.
    pub fn shortest_separator(self, start: &[u8], limit: &[u8]) -> Vec<u8> {
        if self == Comparator::Bytewise {
            let n = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
            if n < start.len() && n < limit.len() {
                let b = start[n];
                if b < 0xff && b + 1 < limit[n] {
                    let mut k = start[..=n].to_vec();
                    k[n] += 1;
                    return k;
                }
            }
        }
        start.to_vec()
    }
}

#[inline]
fn split(k: &[u8]) -> (&[u8], u64) {
    if k.len() < 8 {
        return (k, 0);
    }
    let (u, t) = k.split_at(k.len() - 8);
    let mut a = [0u8; 8];
    a.copy_from_slice(t);
    (u, u64::from_le_bytes(a))
}

/// Builds an internal key into `dst` (cleared first).
#[inline]
pub fn make_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SeqNo, kind: ValueKind) {
    dst.clear();
    dst.reserve(user_key.len() + 8);
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&((seq << 8) | kind as u64).to_le_bytes());
}

/// `k` (an internal key) with its sequence number replaced by `seq` and its
/// kind kept, into `out` (cleared first; a malformed key is copied as is).
pub fn replace_seq(out: &mut Vec<u8>, k: &[u8], seq: SeqNo) {
    out.clear();
    if k.len() < 8 {
        out.extend_from_slice(k);
        return;
    }
    let (uk, t) = k.split_at(k.len() - 8);
    out.extend_from_slice(uk);
    out.extend_from_slice(&((seq << 8) | t[0] as u64).to_le_bytes());
}

/// `k` with its sequence number replaced by `seq` (see [`replace_seq`]).
pub fn with_seq(k: &[u8], seq: SeqNo) -> Vec<u8> {
    let mut v = Vec::with_capacity(k.len());
    replace_seq(&mut v, k, seq);
    v
}

/// The sequence number of an internal key (0 if malformed).
pub fn seq_of(k: &[u8]) -> SeqNo {
    if k.len() < 8 {
        return 0;
    }
    split(k).1 >> 8
}

/// Returns a new internal key.
pub fn internal_key(user_key: &[u8], seq: SeqNo, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, user_key, seq, kind);
    v
}

/// A decoded view of an internal key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number.
    pub seq: SeqNo,
    /// The entry kind.
    pub kind: ValueKind,
}

/// Decodes an internal key; `None` if it is too short or the kind is unknown.
#[inline]
pub fn parse_internal_key(k: &[u8]) -> Option<ParsedKey<'_>> {
    if k.len() < 8 {
        return None;
    }
    let (user_key, t) = split(k);
    let kind = ValueKind::from_u8((t & 0xff) as u8)?;
    Some(ParsedKey {
        user_key,
        seq: t >> 8,
        kind,
    })
}

/// The user key part of an internal key (the whole slice if malformed).
#[inline]
pub fn user_key(k: &[u8]) -> &[u8] {
    split(k).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_newest_first() {
        let c = Comparator::Bytewise;
        let a1 = internal_key(b"a", 1, ValueKind::Value);
        let a2 = internal_key(b"a", 2, ValueKind::Value);
        let b1 = internal_key(b"b", 1, ValueKind::Value);
        assert_eq!(c.compare_internal(&a2, &a1), Ordering::Less);
        assert_eq!(c.compare_internal(&a1, &b1), Ordering::Less);
        let r = Comparator::ReverseBytewise;
        assert_eq!(r.compare_internal(&a1, &b1), Ordering::Greater);
        let p = parse_internal_key(&a2).unwrap();
        assert_eq!(
            (p.user_key, p.seq, p.kind),
            (&b"a"[..], 2, ValueKind::Value)
        );
        assert!(parse_internal_key(b"short").is_none());
    }

    #[test]
    fn separator_is_between() {
        let c = Comparator::Bytewise;
        let s = c.shortest_separator(b"abcdef", b"abzz");
        assert!(s.as_slice() >= &b"abcdef"[..] && s.as_slice() < &b"abzz"[..]);
        assert_eq!(s, b"abd");
        assert_eq!(c.shortest_separator(b"abc", b"abd"), b"abc");
    }
}
