//! A cache-local bloom filter (the idea of RocksDB's FastLocalBloom): each
//! key sets all its probe bits inside one 64-byte cache line, so a lookup
//! costs one cache miss whatever the number of probes.
//!
//! ```text
//! filter := lines: [num_lines * 64 bytes] | probes: u8 | version: u8 (1)
//!           | num_lines: fixed32
//! ```
//! Line = (low 32 bits of hash64(key) * num_lines) >> 32; probe bit i uses
//! the top 9 bits of h, h = high 32 bits of the hash, multiplied by the
//! golden ratio between probes.
use crate::coding::{get_fixed32, hash64, put_fixed32};

const LINE_BYTES: usize = 64;

/// Hashes per chunk of `Hashes` (512 KiB).
const CHUNK: usize = 1 << 16;

/// The key hashes of a table being built, in fixed-size chunks: 8 bytes a
/// key and no regrowth. A `Vec<u64>` doubling to 16M entries held its old
/// 64 MiB and new 128 MiB buffers at once, and two compactions doing so
/// together took a TPC-C server past its 600 MB memory limit.
#[derive(Default)]
pub struct Hashes {
    chunks: Vec<Vec<u64>>,
    len: usize,
}

impl Hashes {
    /// Appends a hash.
    pub fn push(&mut self, h: u64) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(h),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(h);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    /// Hashes pushed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No hash pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Memory held.
    pub fn memory(&self) -> usize {
        self.chunks.iter().map(|c| c.capacity() * 8).sum()
    }

    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.chunks.iter().flatten().copied()
    }
}

/// Builds a filter from key hashes.
pub fn build(hashes: &Hashes, bits_per_key: u32) -> Vec<u8> {
    let probes = ((bits_per_key as f64 * 0.69).round() as u32).clamp(1, 30) as u8;
    let bits = (hashes.len() as u64 * bits_per_key as u64).max(512);
    let lines = bits.div_ceil(512) as usize;
    let mut out = vec![0u8; lines * LINE_BYTES];
    for h in hashes.iter() {
        let line = line_of(h, lines);
        let mut p = (h >> 32) as u32;
        for _ in 0..probes {
            let bit = (p >> 23) as usize;
            out[line * LINE_BYTES + bit / 8] |= 1 << (bit % 8);
            p = p.wrapping_mul(0x9e37_79b9);
        }
    }
    out.push(probes);
    out.push(1);
    put_fixed32(&mut out, lines as u32);
    out
}

#[inline]
fn line_of(h: u64, lines: usize) -> usize {
    (((h & 0xffff_ffff) * lines as u64) >> 32) as usize
}

/// The hash a key is filtered by.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    hash64(key)
}

/// A decoded filter.
pub struct Bloom {
    data: Vec<u8>,
    lines: usize,
    probes: u32,
}

impl Bloom {
    /// Decodes a filter block; `None` when malformed (then the table reads
    /// as if it had no filter, and the table reader reports corruption).
    pub fn new(mut data: Vec<u8>) -> Option<Bloom> {
        let n = data.len();
        if n < 6 {
            return None;
        }
        let lines = get_fixed32(&data[n - 4..])? as usize;
        let (probes, version) = (data[n - 6] as u32, data[n - 5]);
        if version != 1 || lines == 0 || lines.checked_mul(LINE_BYTES)? != n - 6 {
            return None;
        }
        data.truncate(n - 6);
        Some(Bloom {
            data,
            lines,
            probes,
        })
    }
    /// False means the key is certainly absent.
    pub fn may_contain(&self, h: u64) -> bool {
        let line = line_of(h, self.lines) * LINE_BYTES;
        let mut p = (h >> 32) as u32;
        for _ in 0..self.probes {
            let bit = (p >> 23) as usize;
            if self.data[line + bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            p = p.wrapping_mul(0x9e37_79b9);
        }
        true
    }
    /// Memory used.
    pub fn size(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_low_false_positive_rate() {
        let keys: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| format!("key{i}").into_bytes())
            .collect();
        let mut hashes = Hashes::default();
        for k in &keys {
            hashes.push(key_hash(k));
        }
        assert_eq!(hashes.len(), 10_000);
        assert_eq!(hashes.memory(), CHUNK * 8);
        let f = Bloom::new(build(&hashes, 10)).unwrap();
        assert!(keys.iter().all(|k| f.may_contain(key_hash(k))));
        let fp = (0..10_000u32)
            .filter(|i| f.may_contain(key_hash(format!("other{i}").as_bytes())))
            .count();
        assert!(fp < 250, "false positive rate too high: {fp}/10000");
        assert!(Bloom::new(vec![1, 2, 3]).is_none());
    }
}
