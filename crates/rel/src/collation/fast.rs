//! ASCII fast paths of `units` and `weights`: a collation that weighs every
//! ASCII character as exactly one weight from a table (`_general_ci`) maps
//! an all-ASCII string byte by byte, without decoding UTF-8 or calling a
//! closure per character. Sorting, grouping and DISTINCT on a string column
//! weigh every value, so these loops are hot (sysbench's ORDER BY c and
//! DISTINCT c spent a fifth of the read-only CPU there). The results are
//! those of the general paths (unit-tested against them).
use super::{Collation, Weigh, GENERAL_LATIN};

/// The weight of each byte value, when every ASCII character weighs as
/// exactly that one weight under `c`.
fn ascii_table(c: Collation) -> Option<&'static [u16; 256]> {
    match c.weigh() {
        Weigh::General => Some(&GENERAL_LATIN),
        _ => None,
    }
}

/// `Collation::units` of an all-ASCII `s`; false (nothing appended) when
/// the fast path does not apply.
pub(super) fn units(c: Collation, s: &[u8], out: &mut Vec<u32>) -> bool {
    let Some(t) = ascii_table(c) else {
        return false;
    };
    if !s.is_ascii() {
        return false;
    }
    out.extend(s.iter().map(|&b| t[b as usize] as u32));
    true
}

/// `Collation::weights` of an all-ASCII `s` (already trimmed of trailing
/// spaces); false (nothing appended) when the fast path does not apply.
pub(super) fn weights(c: Collation, s: &[u8], out: &mut Vec<u8>) -> bool {
    let Some(t) = ascii_table(c) else {
        return false;
    };
    if !s.is_ascii() {
        return false;
    }
    // PAD SPACE drops trailing weights equal to a space's.
    let mut n = s.len();
    if c.pad_space() {
        let space = t[b' ' as usize];
        while n > 0 && t[s[n - 1] as usize] == space {
            n -= 1;
        }
    }
    out.reserve(2 * n);
    for &b in &s[..n] {
        out.extend_from_slice(&t[b as usize].to_be_bytes());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::for_each_char;
    use super::*;

    /// `units` the general way: character by character.
    fn slow_units(c: Collation, s: &[u8]) -> Vec<u32> {
        let mut out = vec![];
        for_each_char(s, |ch| {
            if let Ok(ch) = ch {
                c.char_weights(ch, &mut |w| out.push(w as u32));
            }
        });
        out
    }

    /// `weights` the general way: every character's weights, then trailing
    /// space weights dropped (PAD SPACE).
    fn slow_weights(c: Collation, s: &[u8]) -> Vec<u8> {
        let mut u = slow_units(c, c.trim(s));
        if let (true, Some(sp)) = (c.pad_space(), c.space_weight()) {
            while u.last() == Some(&(sp as u32)) {
                u.pop();
            }
        }
        u.iter().flat_map(|&w| (w as u16).to_be_bytes()).collect()
    }

    #[test]
    fn ascii_fast_paths_match_the_general_ones() {
        let colls: Vec<Collation> = super::super::ALL
            .iter()
            .copied()
            .filter(|c| ascii_table(*c).is_some())
            .collect();
        assert!(colls.contains(&Collation::Utf8mb4GeneralCi));
        // Every ASCII string of up to two characters, each also followed
        // by spaces and by a space and a tab.
        let mut strings: Vec<Vec<u8>> = vec![vec![]];
        for a in 0u8..128 {
            strings.push(vec![a]);
            for b in 0u8..128 {
                strings.push(vec![a, b]);
            }
        }
        for i in 0..strings.len() {
            let s = strings[i].clone();
            strings.push([s.as_slice(), b"  "].concat());
            strings.push([s.as_slice(), b" \t"].concat());
        }
        for c in colls {
            for s in &strings {
                let mut u = vec![];
                assert!(units(c, s, &mut u));
                assert_eq!(u, slow_units(c, s), "{c:?} units {s:?}");
                let mut w = vec![];
                assert!(weights(c, c.trim(s), &mut w));
                assert_eq!(w, slow_weights(c, s), "{c:?} weights {s:?}");
            }
            let mut u = vec![];
            assert!(!units(c, "é".as_bytes(), &mut u) && u.is_empty());
        }
    }
}
