//! MySQL's `WEIGHT_STRING(s [AS CHAR(n)])` as MariaDB writes it, byte for
//! byte (observed on MariaDB 10.11): every character's weights in order,
//! trailing spaces included (the PAD SPACE comparison's trimming is not
//! applied), each weight as MariaDB sizes it:
//!
//! - `binary`: the bytes themselves;
//! - `utf8mb4_bin` / `_nopad_bin`: the code point in 3 bytes, `utf8mb3_bin`
//!   in 2, `latin1_bin` the latin1 byte;
//! - general_ci and the UCA collations: 2 bytes per weight (none, one or
//!   several per character); the latin1 `_ci`/`_cs` collations 1 byte.
//!
//! `AS CHAR(n)` keeps the first `n` weights and pads to `n` with the weight
//! of a space (PAD SPACE collations) or with MariaDB's NO PAD filler (zero
//! bytes; 0x0200 for the UCA collations). A byte that is not UTF-8 weighs
//! as U+FFFD would.
//!
//! Also latin1 as MySQL has it (cp1252), shared with the statement decoder.
use super::{for_each_char, Collation, Weigh};

/// cp1252 for 0x80..=0x9F (MySQL's latin1); other bytes are their own code
/// point.
pub const CP1252: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{8D}', '\u{017D}', '\u{8F}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{9D}', '\u{017E}', '\u{0178}',
];

/// The latin1 (cp1252) byte of a character; `?` when latin1 lacks it.
pub fn latin1_byte(c: char) -> u8 {
    match c as u32 {
        n @ (0..=0x7F | 0xA0..=0xFF) => n as u8,
        _ => CP1252
            .iter()
            .position(|x| *x == c)
            .map_or(b'?', |i| 0x80 + i as u8),
    }
}

impl Collation {
    /// Bytes of one weight in WEIGHT_STRING's output.
    fn weight_bytes(self) -> usize {
        match (self.weigh(), self.charset()) {
            (Weigh::Bytes, "utf8mb4") => 3,
            (Weigh::Bytes, "utf8mb3") => 2,
            (Weigh::Bytes, _) | (Weigh::Latin1(_), _) => 1,
            _ => 2,
        }
    }

    /// Calls `f` with each weight of `c` as WEIGHT_STRING counts them.
    fn ws_weights(self, c: char, f: &mut impl FnMut(u32)) {
        match self.weigh() {
            Weigh::Bytes if self.charset() == "latin1" => f(latin1_byte(c) as u32),
            Weigh::Bytes if self.charset() == "utf8mb3" => f((c as u32).min(0xFFFF)),
            Weigh::Bytes => f(c as u32),
            _ => self.char_weights(c, &mut |w| f(w as u32)),
        }
    }

    /// MariaDB's WEIGHT_STRING of `s` (`n`: AS CHAR(n), the number of
    /// weights kept or padded to). None when the result would pass `max`
    /// bytes (MariaDB: NULL past max_allowed_packet).
    pub fn weight_string(self, s: &[u8], n: Option<usize>, max: usize) -> Option<Vec<u8>> {
        if self == Collation::Binary {
            let mut out = s.to_vec();
            if let Some(n) = n {
                if n > max {
                    return None;
                }
                out.resize(n, 0);
            }
            return (out.len() <= max).then_some(out);
        }
        let size = self.weight_bytes();
        let limit = n.unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(s.len() * size);
        let mut count = 0usize;
        let mut push = |w: u32, out: &mut Vec<u8>| {
            if count < limit {
                out.extend_from_slice(&w.to_be_bytes()[4 - size..]);
                count += 1;
            }
        };
        for_each_char(s, |c| {
            self.ws_weights(c.unwrap_or('\u{FFFD}'), &mut |w| push(w, &mut out))
        });
        if out.len() > max {
            return None;
        }
        if let Some(n) = n {
            if n.checked_mul(size).is_none_or(|b| b > max) {
                return None;
            }
            let pad = match (self.pad_space(), self.weigh()) {
                (true, _) => {
                    let mut w = 0;
                    self.ws_weights(' ', &mut |x| w = x);
                    w
                }
                (false, Weigh::Uca(_)) => 0x0200,
                (false, _) => 0,
            };
            while count < n {
                out.extend_from_slice(&pad.to_be_bytes()[4 - size..]);
                count += 1;
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Collation as C;

    fn hex(c: Collation, s: &str, n: Option<usize>) -> String {
        c.weight_string(s.as_bytes(), n, 1 << 20)
            .unwrap()
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect()
    }

    #[test]
    fn weight_strings_as_mariadb_writes_them() {
        // Each observed on MariaDB 10.11.
        assert_eq!(hex(C::Utf8mb4GeneralCi, "aB ", None), "004100420020");
        assert_eq!(hex(C::Utf8mb4Bin, "aB ", None), "000061000042000020");
        assert_eq!(hex(C::Utf8mb4UnicodeCi, "aB ", None), "0E330E4A0209");
        assert_eq!(hex(C::Utf8mb4GeneralCi, "ab", Some(4)), "0041004200200020");
        assert_eq!(hex(C::Utf8mb4GeneralCi, "ab", Some(1)), "0041");
        assert_eq!(hex(C::Utf8mb4UnicodeCi, "ab", Some(4)), "0E330E4A02090209");
        assert_eq!(hex(C::Utf8mb4UnicodeCi, "ßa", Some(1)), "0FEA");
        assert_eq!(
            hex(C::Utf8mb4UnicodeCi, "ßab", Some(5)),
            "0FEA0FEA0E330E4A0209"
        );
        assert_eq!(
            hex(C::Utf8mb4Bin, "ab", Some(4)),
            "000061000062000020000020"
        );
        assert_eq!(
            hex(C::Utf8mb4UnicodeNopadCi, "ab", Some(4)),
            "0E330E4A02000200"
        );
        assert_eq!(hex(C::Utf8mb4GeneralNopadCi, "a", Some(3)), "004100000000");
        assert_eq!(hex(C::Utf8mb4NopadBin, "a", Some(3)), "000061000000000000");
        assert_eq!(hex(C::Utf8mb4Unicode520Ci, "a", Some(3)), "120F020A020A");
        assert_eq!(hex(C::Latin1SwedishNopadCi, "a", Some(3)), "410000");
        assert_eq!(hex(C::Latin1Bin, "a", Some(3)), "612020");
        assert_eq!(hex(C::Latin1Bin, "aé ", None), "61E920");
        assert_eq!(hex(C::Latin1SwedishCi, "aé ", None), "414520");
        assert_eq!(hex(C::Latin1GeneralCs, "aé", Some(4)), "42602020");
        assert_eq!(hex(C::Utf8mb4GeneralCi, "😀", None), "FFFD");
        assert_eq!(hex(C::Utf8mb4Bin, "😀", None), "01F600");
        assert_eq!(hex(C::Utf8mb4Unicode520Ci, "😀", None), "FBC3F600");
        assert_eq!(hex(C::Utf8mb3Bin, "é", Some(2)), "00E90020");
        assert_eq!(hex(C::Utf8mb4GeneralCi, "", Some(2)), "00200020");
        assert_eq!(hex(C::Utf8mb4UnicodeCi, "a\t", Some(3)), "0E3302010209");
        assert_eq!(hex(C::Binary, "a", Some(3)), "610000");
        assert_eq!(hex(C::Binary, "ab", Some(1)), "61");
        assert_eq!(
            C::Utf8mb4Bin.weight_string(b"ab", Some(1 << 30), 1 << 20),
            None
        );
        assert_eq!(latin1_byte('€'), 0x80);
        assert_eq!(latin1_byte('☃'), b'?');
    }
}
