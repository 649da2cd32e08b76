//! Write batches: a group of updates applied atomically. The encoded batch
//! is also the WAL record payload (docs/formats/wal.md).
//!
//! ```text
//! batch  := seq: fixed64 | count: fixed32 | op*
//! op     := kind: u8 | cf: varint32 | key: lenprefixed | value: lenprefixed?
//!           (value present for Value, and for RangeDelete where it is the end key)
//! ```
//!
//! A sequence-keyed put ([`WriteBatch::put_cf_seq_keyed`]) ends its key with
//! 8 bytes the write path fills with the op's own sequence number (big-endian)
//! before the batch reaches the WAL, so the stored record is an ordinary put.
use crate::coding::{put_length_prefixed, put_varint32, Decoder};
use crate::error::{Error, Result};
use crate::key::{SeqNo, ValueKind};

const HEADER: usize = 12;

/// An atomic group of updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    /// Sequence-keyed puts: (offset in `rep` of the 8 key bytes to fill, op
    /// index in the batch).
    stamps: Vec<(usize, u32)>,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

/// One decoded update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOp<'a> {
    /// What the update does.
    pub kind: ValueKind,
    /// Column family id.
    pub cf: u32,
    /// The key (start key for RangeDelete).
    pub key: &'a [u8],
    /// The value (end key for RangeDelete; empty for deletes).
    pub value: &'a [u8],
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch {
            rep: vec![0; HEADER],
            stamps: Vec::new(),
        }
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.put_cf(0, key, value)
    }
    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.op(ValueKind::Value, cf, key, Some(value))
    }
    /// Puts `value` in column family `cf` under `prefix` followed by the
    /// 8-byte big-endian sequence number this op is given when the batch is
    /// written: keys unique and ordered as the writes were committed (the
    /// binary log's records).
    pub fn put_cf_seq_keyed(&mut self, cf: u32, prefix: &[u8], value: &[u8]) {
        let mut key = Vec::with_capacity(prefix.len() + 8);
        key.extend_from_slice(prefix);
        key.extend_from_slice(&[0; 8]);
        let idx = self.count();
        self.op(ValueKind::Value, cf, &key, Some(value));
        let value_len = value.len() + varint_len(value.len() as u32);
        self.stamps.push((self.rep.len() - value_len - 8, idx));
    }
    /// Deletes `key` in the default column family.
    pub fn delete(&mut self, key: &[u8]) {
        self.delete_cf(0, key)
    }
    /// Deletes `key` in column family `cf`.
    pub fn delete_cf(&mut self, cf: u32, key: &[u8]) {
        self.op(ValueKind::Delete, cf, key, None)
    }
    /// Deletes a key that was put exactly once since its last deletion
    /// (RocksDB's SingleDelete); compaction then drops both entries.
    pub fn single_delete_cf(&mut self, cf: u32, key: &[u8]) {
        self.op(ValueKind::SingleDelete, cf, key, None)
    }
    /// Deletes every key in `[start, end)`.
    pub fn delete_range_cf(&mut self, cf: u32, start: &[u8], end: &[u8]) {
        self.op(ValueKind::RangeDelete, cf, start, Some(end))
    }

    fn op(&mut self, kind: ValueKind, cf: u32, key: &[u8], value: Option<&[u8]>) {
        // One reservation for the whole op (kind, cf and two length varints
        // take at most 16 bytes) instead of a reallocation per field.
        self.rep
            .reserve(16 + key.len() + value.map_or(0, |v| v.len()));
        self.rep.push(kind as u8);
        put_varint32(&mut self.rep, cf);
        put_length_prefixed(&mut self.rep, key);
        if let Some(v) = value {
            put_length_prefixed(&mut self.rep, v);
        }
        let c = self.count() + 1;
        self.rep[8..12].copy_from_slice(&c.to_le_bytes());
    }

    /// Number of updates.
    pub fn count(&self) -> u32 {
        crate::coding::get_fixed32(&self.rep[8..]).unwrap_or(0)
    }
    /// True when the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }
    /// Encoded size in bytes.
    pub fn size(&self) -> usize {
        self.rep.len()
    }
    /// Removes every update.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER, 0);
        self.stamps.clear();
    }
    /// The first sequence number assigned to this batch.
    pub fn seq(&self) -> SeqNo {
        crate::coding::get_fixed64(&self.rep).unwrap_or(0)
    }
    /// Sets the first sequence number and fills the keys of the
    /// sequence-keyed puts with their ops' numbers.
    pub(crate) fn set_seq(&mut self, seq: SeqNo) {
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
        for &(off, idx) in &self.stamps {
            let s = seq + idx as u64;
            self.rep[off..off + 8].copy_from_slice(&s.to_be_bytes());
        }
    }
    /// Appends every update of `other`.
    pub(crate) fn append(&mut self, other: &WriteBatch) {
        let (base, n) = (self.rep.len() - HEADER, self.count());
        self.stamps
            .extend(other.stamps.iter().map(|&(o, i)| (o + base, i + n)));
        self.rep.extend_from_slice(&other.rep[HEADER..]);
        let c = self.count() + other.count();
        self.rep[8..12].copy_from_slice(&c.to_le_bytes());
    }
    /// The encoded bytes.
    pub fn data(&self) -> &[u8] {
        &self.rep
    }
    /// Wraps bytes read from a WAL record, checking the header.
    pub fn from_data(data: Vec<u8>) -> Result<WriteBatch> {
        if data.len() < HEADER {
            return Err(Error::corruption(
                "",
                0,
                "write batch shorter than its header",
            ));
        }
        Ok(WriteBatch {
            rep: data,
            stamps: Vec::new(),
        })
    }

    /// Decodes every update; `Corruption` if the bytes do not decode or the
    /// count does not match.
    pub fn ops(&self) -> Result<Vec<BatchOp<'_>>> {
        let mut out = Vec::with_capacity(self.count() as usize);
        self.for_each_op(|op| {
            out.push(op);
            Ok(())
        })?;
        Ok(out)
    }

    /// Decodes every update in order and calls `f` on each, without
    /// collecting them; `Corruption` as `ops`, or the first error of `f`.
    pub fn for_each_op<'a>(&'a self, mut f: impl FnMut(BatchOp<'a>) -> Result<()>) -> Result<()> {
        let bad = |what: &str| Error::corruption("", 0, format!("write batch: {what}"));
        let mut d = Decoder::new(&self.rep[HEADER..]);
        let mut n = 0usize;
        while !d.is_empty() {
            let kind = d
                .u8()
                .and_then(ValueKind::from_u8)
                .ok_or_else(|| bad("unknown kind"))?;
            let cf = d.varint32().ok_or_else(|| bad("bad column family"))?;
            let key = d.length_prefixed().ok_or_else(|| bad("bad key"))?;
            let value = match kind {
                ValueKind::Value | ValueKind::RangeDelete => {
                    d.length_prefixed().ok_or_else(|| bad("bad value"))?
                }
                _ => &[],
            };
            f(BatchOp {
                kind,
                cf,
                key,
                value,
            })?;
            n += 1;
        }
        if n != self.count() as usize {
            return Err(bad("count does not match"));
        }
        Ok(())
    }
}

/// Bytes of `v` as a varint32.
fn varint_len(mut v: u32) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_keyed_puts_take_their_op_numbers() {
        let mut a = WriteBatch::new();
        a.put_cf(0, b"x", b"1");
        a.put_cf_seq_keyed(5, b"T", &[7u8; 200]);
        let mut b = WriteBatch::new();
        b.delete_cf(0, b"y");
        b.put_cf_seq_keyed(5, b"T", b"v");
        a.append(&b);
        a.set_seq(1000);
        let data = WriteBatch::from_data(a.data().to_vec()).unwrap();
        let ops = data.ops().unwrap();
        let mut k1 = b"T".to_vec();
        k1.extend_from_slice(&1001u64.to_be_bytes());
        let mut k3 = b"T".to_vec();
        k3.extend_from_slice(&1003u64.to_be_bytes());
        assert_eq!((ops[1].key, ops[1].value), (&k1[..], &[7u8; 200][..]));
        assert_eq!((ops[3].key, ops[3].value), (&k3[..], &b"v"[..]));
        assert_eq!(ops[0].key, b"x");
    }

    #[test]
    fn round_trip_and_append() {
        let mut b = WriteBatch::new();
        b.put(b"k1", b"v1");
        b.delete_cf(3, b"k2");
        b.delete_range_cf(0, b"a", b"c");
        let mut c = WriteBatch::new();
        c.single_delete_cf(1, b"x");
        b.append(&c);
        b.set_seq(77);
        let b2 = WriteBatch::from_data(b.data().to_vec()).unwrap();
        assert_eq!(b2.seq(), 77);
        let ops = b2.ops().unwrap();
        assert_eq!(ops.len(), 4);
        assert_eq!(
            ops[0],
            BatchOp {
                kind: ValueKind::Value,
                cf: 0,
                key: b"k1",
                value: b"v1"
            }
        );
        assert_eq!(ops[2].value, b"c");
        assert_eq!(ops[3].kind, ValueKind::SingleDelete);
        let mut bad = b.data().to_vec();
        bad.truncate(bad.len() - 1);
        assert!(WriteBatch::from_data(bad)
            .unwrap()
            .ops()
            .unwrap_err()
            .is_corruption());
    }
}
