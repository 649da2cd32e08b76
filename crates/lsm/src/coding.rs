//! Varints and fixed-width little-endian integers, plus a checked `Decoder`
//! that never panics on input bytes: every read returns `None` when the
//! input is too short or malformed, and callers turn that into `Corruption`.

/// Appends a varint-encoded u32.
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

/// Appends a varint-encoded u64 (LEB128, 7 bits per byte, low bits first).
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Appends a varint length followed by the bytes.
pub fn put_length_prefixed(dst: &mut Vec<u8>, s: &[u8]) {
    put_varint32(dst, s.len() as u32);
    dst.extend_from_slice(s);
}

/// Appends a little-endian u32.
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends a little-endian u64.
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian u32 from the first 4 bytes, if present.
pub fn get_fixed32(src: &[u8]) -> Option<u32> {
    src.get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads a little-endian u64 from the first 8 bytes, if present.
pub fn get_fixed64(src: &[u8]) -> Option<u64> {
    let b = src.get(..8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

/// A cursor over untrusted bytes.
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts decoding at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }
    /// Bytes consumed so far.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// True when every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
    /// The bytes not yet consumed.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }
    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }
    /// Reads a varint u64 (at most 10 bytes).
    #[inline]
    pub fn varint64(&mut self) -> Option<u64> {
        // One byte (lengths, small numbers: most varints in blocks and rows)
        // without a loop or a call.
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Some(u64::from(b))
            }
            _ => self.varint64_long(),
        }
    }

    /// `varint64` of two bytes or more, over the slice; the position stays
    /// on a malformed one.
    fn varint64_long(&mut self) -> Option<u64> {
        let rest = self.buf.get(self.pos..)?;
        let mut result = 0u64;
        for (i, &b) in rest.iter().take(10).enumerate() {
            result |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Some(result);
            }
        }
        None
    }
    /// Reads a varint u32.
    #[inline]
    pub fn varint32(&mut self) -> Option<u32> {
        u32::try_from(self.varint64()?).ok()
    }
    /// Reads a little-endian u32.
    pub fn fixed32(&mut self) -> Option<u32> {
        let v = get_fixed32(self.rest())?;
        self.pos += 4;
        Some(v)
    }
    /// Reads a little-endian u64.
    pub fn fixed64(&mut self) -> Option<u64> {
        let v = get_fixed64(self.rest())?;
        self.pos += 8;
        Some(v)
    }
    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    /// Reads a varint length and that many bytes.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = self.varint32()? as usize;
        self.bytes(n)
    }
}

/// CRC32C masked as LevelDB does, so that a CRC stored inside data that is
/// itself checksummed does not produce a trivially valid CRC.
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

/// A 32-bit hash for bloom filters and cache sharding (LevelDB's Hash, a
/// Murmur-like mix). Stable: it is stored on disk inside filters.
pub fn hash32(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        h = h.wrapping_add(w).wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        for (i, b) in rest.iter().enumerate() {
            h = h.wrapping_add((*b as u32) << (8 * i));
        }
        h = h.wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        let vals = [0u64, 1, 127, 128, 300, 1 << 31, u32::MAX as u64, u64::MAX];
        let mut buf = Vec::new();
        for v in vals {
            put_varint64(&mut buf, v);
        }
        let mut d = Decoder::new(&buf);
        for v in vals {
            assert_eq!(d.varint64(), Some(v));
        }
        assert!(d.is_empty());
        assert_eq!(d.varint64(), None);
    }

    /// Every length of varint decodes to its value and moves past exactly
    /// its bytes; cut short anywhere, it is refused.
    #[test]
    fn varints_of_every_length_decode() {
        for bits in 0..64 {
            for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 1] {
                let mut buf = Vec::new();
                put_varint64(&mut buf, v);
                buf.push(0x2a);
                let mut d = Decoder::new(&buf);
                assert_eq!(d.varint64(), Some(v), "{v}");
                assert_eq!(d.pos(), buf.len() - 1, "{v}");
                assert_eq!(d.u8(), Some(0x2a));
                for cut in 0..buf.len() - 1 {
                    assert_eq!(Decoder::new(&buf[..cut]).varint64(), None, "{v} {cut}");
                }
            }
        }
    }

    #[test]
    fn truncated_and_overlong_varints_fail() {
        assert_eq!(Decoder::new(&[0x80]).varint64(), None);
        assert_eq!(Decoder::new(&[0xff; 11]).varint64(), None);
        assert_eq!(
            Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x7f]).varint32(),
            None
        );
        assert_eq!(Decoder::new(&[5, 1, 2]).length_prefixed(), None);
    }

    #[test]
    fn crc_mask_round_trip() {
        let c = crc32c::crc32c(b"hello");
        assert_ne!(mask_crc(c), c);
        assert_eq!(unmask_crc(mask_crc(c)), c);
    }
}

/// A 64-bit hash for bloom filters (multiply-xorshift over 8-byte words,
/// finished with MurmurHash3's fmix64). Stable: filters store its bits.
pub fn hash64(data: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (data.len() as u64).wrapping_mul(K) ^ 0x5bd1_e995;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(a)).wrapping_mul(K).rotate_left(31);
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    h = (h ^ u64::from_le_bytes(last) ^ (rest.len() as u64) << 59).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}
