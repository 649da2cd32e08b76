//! PAD SPACE comparison and the memcomparable key image of a string.
//!
//! MySQL compares two strings under a PAD SPACE collation as if the
//! shorter one were padded with spaces: after a common prefix, the rest
//! of the longer one decides by its first weight that is not a space's.
//! A character weighing less than a space (TAB, LF and the other control
//! characters) therefore sorts the longer string first: 'a\t' < 'a' <
//! 'a\x7f'. Trimming trailing spaces and comparing gets equality right
//! but not this order.
//!
//! The comparison works on a string's *units*: its bytes under the `_bin`
//! collations, its 16-bit weights under the others, a byte that is not
//! UTF-8 as `NOT_UTF8 + byte` (after every weight, as `weights` orders
//! it). A PAD SPACE collation pads with one unit, the space's
//! (`pad_unit`); every PAD SPACE collation weighs a space as exactly one
//! unit (unit-tested), so padding never has to cycle through a sequence.
//!
//! `key_image` is the memcomparable form used by index keys (key format 2,
//! docs/formats/rows.md) and ORDER BY sort keys: MyRocks' space-padded
//! segments. The units, trailing pad units removed, are cut into chunks of
//! 8 bytes (8 one-byte units under `_bin`, 4 two-byte weights otherwise; a
//! not-UTF-8 byte is the two weights 0xFFFF, byte), the last chunk padded
//! with the pad unit, and each chunk is followed by a marker: 1 when the
//! rest of the string compares below spaces, 3 above, 2 when the string
//! ends in this chunk. Comparing two images bytewise compares the strings
//! padded with spaces; images are never a prefix of one another. NO PAD
//! collations' image is the weight string with 0x00 escaped as 0x00 0xFF,
//! terminated by 0x00 0x01 (their key image in every format).
use super::{for_each_char, Collation, Weigh};
use std::cmp::Ordering;

/// The unit of a byte that is not UTF-8 (plus the byte): above every weight.
const NOT_UTF8: u32 = 0x1_0000;

/// Marker after a chunk: the rest of the string compares below spaces.
pub const LESS_THAN_SPACES: u8 = 1;
/// Marker after the last chunk: the string ends here.
pub const EQUAL_TO_SPACES: u8 = 2;
/// Marker after a chunk: the rest of the string compares above spaces.
pub const GREATER_THAN_SPACES: u8 = 3;
/// Bytes of units in a chunk (each followed by its marker byte).
pub const CHUNK: usize = 8;

/// Compares two unit sequences; when one ends, the rest of the other is
/// compared with `pad` repeated (None: NO PAD, the shorter sorts first).
fn pad_cmp<T: Ord + Copy>(
    mut a: impl Iterator<Item = T>,
    mut b: impl Iterator<Item = T>,
    pad: Option<T>,
) -> Ordering {
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => return x.cmp(&y),
            (None, None) => return Ordering::Equal,
            (Some(x), None) => return rest_vs_pad(x, a, pad),
            (None, Some(y)) => return rest_vs_pad(y, b, pad).reverse(),
        }
    }
}

/// How `first` followed by `rest` compares with endless `pad` units.
fn rest_vs_pad<T: Ord + Copy>(first: T, rest: impl Iterator<Item = T>, pad: Option<T>) -> Ordering {
    let Some(p) = pad else {
        return Ordering::Greater;
    };
    std::iter::once(first)
        .chain(rest)
        .find(|&u| u != p)
        .map_or(Ordering::Equal, |u| u.cmp(&p))
}

impl Collation {
    /// Appends the units of `s` (see the module comment), nothing trimmed.
    pub fn units(self, s: &[u8], out: &mut Vec<u32>) {
        if self.is_bin() {
            out.extend(s.iter().map(|&b| b as u32));
            return;
        }
        if super::fast::units(self, s, out) {
            return;
        }
        for_each_char(s, |c| match c {
            Ok(c) => self.char_weights(c, &mut |w| out.push(w as u32)),
            Err(b) => out.push(NOT_UTF8 + b as u32),
        });
    }

    /// The unit PAD SPACE pads with (a space's), None for NO PAD (and for a
    /// collation whose space does not weigh exactly one unit).
    pub fn pad_unit(self) -> Option<u32> {
        if !self.pad_space() {
            return None;
        }
        if self.is_bin() {
            return Some(b' ' as u32);
        }
        self.space_weight().map(|w| w as u32)
    }

    /// Compares two strings under the collation (PAD SPACE: as if the
    /// shorter were padded with spaces).
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        if self.is_bin() {
            let pad = self.pad_space().then_some(b' ');
            return pad_cmp(a.iter().copied(), b.iter().copied(), pad);
        }
        let pad = self.pad_unit();
        if pad.is_none() && self.pad_space() {
            // No single space weight: trailing spaces trimmed (no such
            // collation today).
            let (mut wa, mut wb) = (Vec::new(), Vec::new());
            self.weights(a, &mut wa);
            self.weights(b, &mut wb);
            return wa.cmp(&wb);
        }
        if self.upper_ascii() && a.is_ascii() && b.is_ascii() {
            // general_ci and latin1_swedish_ci weigh ASCII as its upper case
            // (a space as 0x20).
            let up = |x: &u8| x.to_ascii_uppercase();
            let pad = pad.map(|_| b' ');
            return pad_cmp(a.iter().map(up), b.iter().map(up), pad);
        }
        let (mut ua, mut ub) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
        self.units(a, &mut ua);
        self.units(b, &mut ub);
        pad_cmp(ua.into_iter(), ub.into_iter(), pad)
    }

    /// True when the collation weighs ASCII as its upper case (a space as
    /// 0x20): general_ci and latin1_swedish_ci.
    fn upper_ascii(self) -> bool {
        matches!(self.weigh(), Weigh::General)
            || matches!(
                self,
                Collation::Latin1SwedishCi | Collation::Latin1SwedishNopadCi
            )
    }

    /// True when `compare` of `s` with another string it holds for runs in
    /// place (no allocation, no decoding): `_bin` and binary collations, and
    /// all-ASCII strings under the collations weighing ASCII as its upper
    /// case. A sort can then compare such strings directly instead of
    /// materializing their `key_image`s (the two orders agree: unit-tested).
    pub fn compares_in_place(self, s: &[u8]) -> bool {
        self.is_bin() || (self.upper_ascii() && all_ascii(s))
    }

    /// `compare` of two strings that `compares_in_place` holds for, without
    /// checking that again (a sort checks each string once, not per
    /// comparison): bytes, or ASCII upper case, padded with spaces under PAD
    /// SPACE.
    pub fn compare_in_place(self, a: &[u8], b: &[u8]) -> Ordering {
        let pad = self.pad_space().then_some(b' ');
        if self.is_bin() {
            return pad_cmp(a.iter().copied(), b.iter().copied(), pad);
        }
        // Past the common prefix (equal bytes are equal upper case).
        let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let up = |x: &u8| x.to_ascii_uppercase();
        pad_cmp(a[same..].iter().map(up), b[same..].iter().map(up), pad)
    }

    /// The first eight units of `s` as `compare_in_place` compares them
    /// (ASCII upper case unless `_bin`), past its end the pad (spaces under
    /// PAD SPACE, zero bytes under NO PAD), as a big-endian number. Of two
    /// strings that `compares_in_place` holds for, when their prefixes differ
    /// they compare as their prefixes do (when equal, `compare_in_place`
    /// decides): a sort compares most pairs of strings as two numbers.
    pub fn in_place_prefix(self, s: &[u8]) -> u64 {
        let mut w = [if self.pad_space() { b' ' } else { 0 }; 8];
        let n = s.len().min(8);
        w[..n].copy_from_slice(&s[..n]);
        let x = u64::from_be_bytes(w);
        if self.is_bin() {
            return x;
        }
        // ASCII a-z to upper case, eight bytes at once (bytes past 0x7F
        // stay): a byte's bit 7 after adding 0x1F says >= 'a', after adding
        // 0x05 > 'z'; no sum carries into the next byte.
        const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let h = x & LOW7;
        let lower = (h + 0x1F1F_1F1F_1F1F_1F1F) & !(h + 0x0505_0505_0505_0505) & !x & HIGH;
        x - (lower >> 2)
    }

    /// Appends the memcomparable, prefix-free image of `s` (see the module
    /// comment): bytewise order of images is the collation's order, equal
    /// strings have equal images.
    pub fn key_image(self, s: &[u8], out: &mut Vec<u8>) {
        let Some(pad) = self.pad_unit() else {
            let mut w = Vec::with_capacity(s.len() * 2);
            self.weights(s, &mut w);
            for &c in &w {
                out.push(c);
                if c == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0, 1]);
            return;
        };
        let mut units = Vec::with_capacity(s.len());
        self.units(s, &mut units);
        let width = if self.is_bin() { 1 } else { 2 };
        if width == 2 {
            // A byte that is not UTF-8: two 16-bit units, 0xFFFF then it.
            if units.iter().any(|&u| u >= NOT_UTF8) {
                units = units
                    .iter()
                    .flat_map(|&u| match u.checked_sub(NOT_UTF8) {
                        Some(b) => [Some(0xFFFF), Some(b)],
                        None => [Some(u), None],
                    })
                    .flatten()
                    .collect();
            }
        }
        while units.last() == Some(&pad) {
            units.pop();
        }
        let per = CHUNK / width;
        out.reserve(units.len().div_ceil(per).max(1) * (CHUNK + 1));
        // Each chunk is assembled in `chunk` (units, pad units, marker) and
        // appended at once.
        let put = |chunk: &mut [u8; CHUNK + 1], i: usize, u: u32| {
            if width == 1 {
                chunk[i] = u as u8;
            } else {
                chunk[2 * i..2 * i + 2].copy_from_slice(&(u as u16).to_be_bytes());
            }
        };
        let mut chunk = [0u8; CHUNK + 1];
        // First unit other than a space's at or after `next` (cached).
        let mut next = 0usize;
        let mut start = 0usize;
        loop {
            let end = (start + per).min(units.len());
            for (i, &u) in units[start..end].iter().enumerate() {
                put(&mut chunk, i, u);
            }
            for i in end - start..per {
                put(&mut chunk, i, pad);
            }
            if end == units.len() {
                chunk[CHUNK] = EQUAL_TO_SPACES;
                out.extend_from_slice(&chunk);
                return;
            }
            if next < end {
                next = end;
                while units[next] == pad {
                    // Ends before the last unit: trailing pads are removed.
                    next += 1;
                }
            }
            chunk[CHUNK] = if units[next] < pad {
                LESS_THAN_SPACES
            } else {
                GREATER_THAN_SPACES
            };
            out.extend_from_slice(&chunk);
            start = end;
        }
    }
}

/// Skips one `key_image` of a PAD SPACE collation at the front of `src`
/// (None: truncated or a bad marker).
pub fn skip_image(src: &mut &[u8]) -> Option<()> {
    loop {
        let marker = *src.get(CHUNK)?;
        *src = &src[CHUNK + 1..];
        match marker {
            EQUAL_TO_SPACES => return Some(()),
            LESS_THAN_SPACES | GREATER_THAN_SPACES => {}
            _ => return None,
        }
    }
}

/// Decodes a `_bin` collation's PAD SPACE `key_image` at the front of
/// `src` into the string without its trailing spaces.
pub fn decode_bin_image(src: &mut &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let marker = *src.get(CHUNK)?;
        out.extend_from_slice(&src[..CHUNK]);
        *src = &src[CHUNK + 1..];
        match marker {
            EQUAL_TO_SPACES => break,
            LESS_THAN_SPACES | GREATER_THAN_SPACES => {}
            _ => return None,
        }
    }
    while out.last() == Some(&b' ') {
        out.pop();
    }
    Some(out)
}

/// The reference PAD SPACE comparison (for tests): pad the shorter unit
/// sequence with `pad` to the longer one's length and compare.
#[doc(hidden)]
pub fn reference_cmp(c: Collation, a: &[u8], b: &[u8]) -> Ordering {
    let (mut ua, mut ub) = (Vec::new(), Vec::new());
    c.units(a, &mut ua);
    c.units(b, &mut ub);
    if let Some(p) = c.pad_unit() {
        let n = ua.len().max(ub.len());
        ua.resize(n, p);
        ub.resize(n, p);
    }
    ua.cmp(&ub)
}

/// `s.is_ascii()`, eight bytes at a time (a sort checks every string it
/// holds; the slice method went byte by byte here).
pub(crate) fn all_ascii(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(8);
    let mut high = 0u64;
    for c in &mut chunks {
        if let Ok(w) = <[u8; 8]>::try_from(c) {
            high |= u64::from_ne_bytes(w);
        }
    }
    let rest = chunks.remainder().iter().fold(0u8, |a, b| a | b);
    high & 0x8080_8080_8080_8080 == 0 && rest & 0x80 == 0
}
