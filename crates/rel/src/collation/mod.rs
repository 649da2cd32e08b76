//! Collations: how strings of a column or expression compare, sort and
//! group. Each collation gives a *weight* per character; two strings are
//! equal when their weight sequences are equal after trailing spaces are
//! removed (PAD SPACE, as every collation here is), and ordered by them.
//!
//! - `binary` (BINARY/VARBINARY/BLOB): bytes, nothing trimmed.
//! - `*_bin`: code points (UTF-8 byte order), trailing spaces trimmed.
//! - `utf8mb4_general_ci`/`utf8mb3_general_ci`: one 16-bit weight per BMP
//!   character (case and most Latin accents folded, from `tables.rs`,
//!   generated from MariaDB), 0xFFFD for characters outside the BMP.
//! - `latin1_swedish_ci`: the character's latin1 (cp1252) byte, then the
//!   Swedish weight of that byte (a character latin1 lacks weighs as `?`).
//!
//! Index keys of a string column hold its weights (`weights`), so a UNIQUE
//! index, equality probes, ranges and index order all follow the collation;
//! the original value is kept in the row (see `is_lossy`).
use std::cmp::Ordering;

mod tables;

/// A collation (MySQL's id and name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collation {
    Binary,
    Utf8mb4GeneralCi,
    Utf8mb4Bin,
    Utf8mb3GeneralCi,
    Utf8mb3Bin,
    Latin1SwedishCi,
    Latin1Bin,
}

/// Every collation, for SHOW COLLATION and lookups.
pub const ALL: [Collation; 7] = [
    Collation::Binary,
    Collation::Utf8mb4GeneralCi,
    Collation::Utf8mb4Bin,
    Collation::Utf8mb3GeneralCi,
    Collation::Utf8mb3Bin,
    Collation::Latin1SwedishCi,
    Collation::Latin1Bin,
];

/// What a collation of a known name lacks here: it is MySQL's but Strata
/// does not implement it (callers refuse it with "not supported yet").
pub const KNOWN_UNSUPPORTED: [&str; 8] = [
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_520_ci",
    "utf8mb4_0900_ai_ci",
    "utf8mb4_0900_as_cs",
    "utf8mb4_0900_bin",
    "utf8mb3_unicode_ci",
    "utf8mb4_general_nopad_ci",
    "latin1_general_ci",
];

impl Collation {
    /// The server default (`collation_server`, `collation_connection`).
    pub const DEFAULT: Collation = Collation::Utf8mb4GeneralCi;

    /// MySQL's collation id (as in the protocol and SHOW COLLATION).
    pub fn id(self) -> u16 {
        match self {
            Collation::Binary => 63,
            Collation::Utf8mb4GeneralCi => 45,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb3GeneralCi => 33,
            Collation::Utf8mb3Bin => 83,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 47,
        }
    }

    /// The collation with MySQL's id `id`.
    pub fn from_id(id: u16) -> Option<Collation> {
        ALL.iter().copied().find(|c| c.id() == id)
    }

    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb3GeneralCi => "utf8mb3_general_ci",
            Collation::Utf8mb3Bin => "utf8mb3_bin",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::Latin1Bin => "latin1_bin",
        }
    }

    /// The collation named `name` (case-insensitive; `utf8_` means `utf8mb3_`).
    pub fn from_name(name: &str) -> Option<Collation> {
        let n = name.to_ascii_lowercase();
        let n = match n.strip_prefix("utf8_") {
            Some(rest) => format!("utf8mb3_{rest}"),
            None => n,
        };
        ALL.iter().copied().find(|c| c.name() == n)
    }

    /// The collation a type gets when none is declared: `binary` for
    /// binary and non-string kinds, else the server default.
    pub fn default_for(t: &crate::value::ColumnType) -> Collation {
        if t.is_text() {
            Collation::DEFAULT
        } else {
            Collation::Binary
        }
    }

    /// The character set's name.
    pub fn charset(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Utf8mb4GeneralCi | Collation::Utf8mb4Bin => "utf8mb4",
            Collation::Utf8mb3GeneralCi | Collation::Utf8mb3Bin => "utf8mb3",
            Collation::Latin1SwedishCi | Collation::Latin1Bin => "latin1",
        }
    }

    /// The default collation of character set `cs` (`utf8` means utf8mb3).
    pub fn default_of_charset(cs: &str) -> Option<Collation> {
        Some(match cs.to_ascii_lowercase().as_str() {
            "utf8mb4" => Collation::Utf8mb4GeneralCi,
            "utf8mb3" | "utf8" => Collation::Utf8mb3GeneralCi,
            "latin1" => Collation::Latin1SwedishCi,
            "binary" => Collation::Binary,
            _ => return None,
        })
    }

    /// True for a character set name MySQL knows but Strata does not store.
    pub fn known_unsupported_charset(cs: &str) -> bool {
        matches!(
            cs.to_ascii_lowercase().as_str(),
            "ascii" | "utf16" | "utf32" | "ucs2" | "latin2" | "cp1250" | "gbk" | "big5" | "sjis"
        )
    }

    /// Bytes per character at most (for lengths in information_schema).
    pub fn max_len(self) -> u32 {
        match self {
            Collation::Binary | Collation::Latin1SwedishCi | Collation::Latin1Bin => 1,
            Collation::Utf8mb3GeneralCi | Collation::Utf8mb3Bin => 3,
            _ => 4,
        }
    }

    /// True when strings compare as their bytes (after PAD SPACE trimming):
    /// the binary and `_bin` collations. Comparisons under such a
    /// collation need no weights.
    pub fn is_bytewise(self) -> bool {
        matches!(
            self,
            Collation::Binary
                | Collation::Utf8mb4Bin
                | Collation::Utf8mb3Bin
                | Collation::Latin1Bin
        )
    }

    /// True when a key image (the weights) does not give the value back:
    /// index keys of such a column cannot be decoded into the column.
    pub fn is_lossy(self) -> bool {
        !self.is_bytewise()
    }

    /// True for the case-insensitive collations.
    pub fn is_ci(self) -> bool {
        self.name().ends_with("_ci")
    }

    /// True when trailing spaces do not count (every collation but binary).
    pub fn pad_space(self) -> bool {
        self != Collation::Binary
    }

    /// The weight of one character (non-bytewise collations).
    fn weight(self, c: char) -> u16 {
        let cp = c as u32;
        match self {
            Collation::Utf8mb4GeneralCi | Collation::Utf8mb3GeneralCi => {
                if cp > 0xFFFF {
                    return 0xFFFD;
                }
                match tables::GENERAL_CI.binary_search_by_key(&(cp as u16), |e| e.0) {
                    Ok(i) => tables::GENERAL_CI[i].1,
                    Err(_) => cp as u16,
                }
            }
            Collation::Latin1SwedishCi => {
                let w = if cp <= 0xFFFF {
                    tables::LATIN1_SWEDISH_CI.binary_search_by_key(&(cp as u16), |e| e.0)
                } else {
                    Err(0)
                };
                match w {
                    Ok(i) => tables::LATIN1_SWEDISH_CI[i].1 as u16,
                    Err(_) => b'?' as u16,
                }
            }
            _ => cp.min(0xFFFF) as u16,
        }
    }

    /// The string without its trailing spaces when the collation pads.
    pub fn trim(self, s: &[u8]) -> &[u8] {
        if !self.pad_space() {
            return s;
        }
        let mut n = s.len();
        while n > 0 && s[n - 1] == b' ' {
            n -= 1;
        }
        &s[..n]
    }

    /// Appends the memcomparable weight string of `s` (trailing spaces
    /// trimmed when the collation pads): for bytewise collations the bytes
    /// themselves, otherwise two big-endian bytes per character. Bytes that
    /// are not UTF-8 weigh as themselves, after every character.
    pub fn weights(self, s: &[u8], out: &mut Vec<u8>) {
        let s = self.trim(s);
        if self.is_bytewise() {
            out.extend_from_slice(s);
            return;
        }
        for_each_char(s, |c| match c {
            Ok(c) => out.extend_from_slice(&self.weight(c).to_be_bytes()),
            Err(b) => out.extend_from_slice(&[0xFF, 0xFF, b]),
        });
    }

    /// Compares two strings under the collation.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        let (a, b) = (self.trim(a), self.trim(b));
        if self.is_bytewise() {
            return a.cmp(b);
        }
        if a.is_ascii() && b.is_ascii() && self.is_ci() {
            // Every ci collation here weighs ASCII as its upper-case letter.
            let up = |x: &u8| x.to_ascii_uppercase();
            return a.iter().map(up).cmp(b.iter().map(up));
        }
        let (mut wa, mut wb) = (
            Vec::with_capacity(a.len() * 2),
            Vec::with_capacity(b.len() * 2),
        );
        self.weights(a, &mut wa);
        self.weights(b, &mut wb);
        wa.cmp(&wb)
    }

    /// True when two characters are equal under the collation (LIKE's
    /// per-character test).
    pub fn char_eq(self, a: char, b: char) -> bool {
        a == b || (!self.is_bytewise() && self.weight(a) == self.weight(b))
    }

    /// A sort key whose bytes compare like the strings do under the
    /// collation and which contains no space byte (0x20), so that a
    /// PAD SPACE byte comparison of two keys is a plain byte comparison:
    /// each 16-bit weight becomes three base-94 digits 0x21..=0x7E.
    pub fn sort_key(self, s: &[u8]) -> Vec<u8> {
        let mut w = Vec::with_capacity(s.len() * 2);
        self.weights(s, &mut w);
        if self.is_bytewise() {
            return w;
        }
        let mut out = Vec::with_capacity(w.len() / 2 * 3 + 2);
        let mut i = 0;
        while i < w.len() {
            if w[i] == 0xFF && w.get(i + 1) == Some(&0xFF) && i + 2 < w.len() {
                // A byte that is not UTF-8: after every character.
                let b = w[i + 2] as u32;
                out.extend_from_slice(&[0x7E, 0x7E, 0x21 + (b / 94) as u8, 0x21 + (b % 94) as u8]);
                i += 3;
                continue;
            }
            let x = u16::from_be_bytes([w[i], *w.get(i + 1).unwrap_or(&0)]) as u32;
            out.extend_from_slice(&[
                0x21 + (x / 8836) as u8,
                0x21 + (x / 94 % 94) as u8,
                0x21 + (x % 94) as u8,
            ]);
            i += 2;
        }
        out
    }
}

/// Calls `f` with each UTF-8 character of `s`, or `Err(byte)` for a byte
/// that does not start a valid character.
pub fn for_each_char(s: &[u8], mut f: impl FnMut(Result<char, u8>)) {
    let mut rest = s;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(t) => {
                t.chars().for_each(|c| f(Ok(c)));
                return;
            }
            Err(e) => {
                let good = e.valid_up_to();
                // SAFETY-free: the prefix was just validated.
                if let Ok(t) = std::str::from_utf8(&rest[..good]) {
                    t.chars().for_each(|c| f(Ok(c)));
                }
                let bad = e.error_len().unwrap_or(rest.len() - good).max(1);
                for &b in &rest[good..good + bad] {
                    f(Err(b));
                }
                rest = &rest[good + bad..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_ci_folds_case_and_accents() {
        let c = Collation::Utf8mb4GeneralCi;
        assert_eq!(c.compare(b"abc", b"ABC"), Ordering::Equal);
        assert_eq!(c.compare("résumé".as_bytes(), b"RESUME"), Ordering::Equal);
        assert_eq!(c.compare(b"a ", b"A"), Ordering::Equal);
        assert_eq!(c.compare(b"a", b"B"), Ordering::Less);
        assert_eq!(
            c.compare(b"_", b"a"),
            Ordering::Greater,
            "'_' (0x5F) > 'A' (0x41)"
        );
        assert_eq!(Collation::Utf8mb4Bin.compare(b"a", b"B"), Ordering::Greater);
        assert_eq!(Collation::Binary.compare(b"a ", b"a"), Ordering::Greater);
    }

    #[test]
    fn weights_order_like_compare() {
        let words: Vec<&[u8]> = vec![
            b"",
            b"a",
            b"A",
            b"ab",
            b"Ab ",
            b"b",
            b"_",
            b"[",
            b"z",
            "é".as_bytes(),
            "Ö".as_bytes(),
            b"\xff",
            "€".as_bytes(),
            "😀".as_bytes(),
        ];
        for c in ALL {
            for x in &words {
                for y in &words {
                    let (mut wx, mut wy) = (vec![], vec![]);
                    c.weights(x, &mut wx);
                    c.weights(y, &mut wy);
                    assert_eq!(wx.cmp(&wy), c.compare(x, y), "{c:?} {x:?} {y:?}");
                    let (sx, sy) = (c.sort_key(x), c.sort_key(y));
                    if !c.is_bytewise() {
                        assert!(!sx.contains(&b' '));
                        assert_eq!(sx.cmp(&sy), c.compare(x, y), "{c:?} {x:?} {y:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn names_and_ids_round_trip() {
        for c in ALL {
            assert_eq!(Collation::from_id(c.id()), Some(c));
            assert_eq!(Collation::from_name(c.name()), Some(c));
        }
        assert_eq!(
            Collation::from_name("UTF8_GENERAL_CI"),
            Some(Collation::Utf8mb3GeneralCi)
        );
    }
}
