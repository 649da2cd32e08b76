//! Statement text as the client sent it: bytes in the connection's character set
//! (`character_set_client`), turned into the UTF-8 text the parser reads without losing a
//! byte of any string literal (issue 14 item 1).
//!
//! A small lexer that knows MySQL's quoting (`'..'` and `".."` strings with doubled quotes
//! and backslash escapes, `` `..` `` identifiers, `--`, `#` and `/* */` comments; `/*!` and
//! `/*+` comments hold SQL and are lexed through) walks the bytes:
//! - with a UTF-8 client (utf8mb4, utf8mb3, ascii), valid UTF-8 text is passed on as it is;
//!   a string literal whose bytes are not UTF-8 becomes `_binary X'..'` of exactly
//!   its bytes (after unescaping), so a BLOB gets what the client sent;
//! - with a latin1 client every byte outside binary literals is read as latin1 (MySQL's
//!   latin1 is cp1252) and becomes its UTF-8 character;
//! - a literal with a character set introducer (`_binary`, `_latin1`, `_utf8mb4`,
//!   `_utf8mb3`, `_utf8`) becomes `_cs X'..'` of exactly its bytes, which the binder
//!   reads in that character set (`bind::literal::introduced`), whatever the client's.
//!
//! Bytes that are not UTF-8 outside string literals (in keywords, identifiers) are an error
//! (1300), never replaced.
use crate::error::{Result, SqlError};
use std::borrow::Cow;

/// How the bytes of a statement are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCharset {
    Utf8,
    Latin1,
    Binary,
}

impl ClientCharset {
    /// From a `character_set_client` value.
    pub fn from_name(name: &str) -> ClientCharset {
        match name.to_ascii_lowercase().as_str() {
            "latin1" => ClientCharset::Latin1,
            "binary" => ClientCharset::Binary,
            _ => ClientCharset::Utf8,
        }
    }

    /// The `character_set_client` name for a handshake collation id.
    pub fn name_of_collation(id: u8) -> &'static str {
        match id {
            5 | 8 | 15 | 31 | 47 | 48 | 49 | 94 => "latin1",
            63 => "binary",
            33 | 83 | 192..=215 => "utf8mb3",
            11 | 65 => "ascii",
            _ => "utf8mb4",
        }
    }
}

// cp1252 for 0x80..=0x9F (MySQL's latin1); other bytes are their own code point.
use rel::collation::CP1252;

fn latin1_char(b: u8) -> char {
    if (0x80..0xA0).contains(&b) {
        CP1252[(b - 0x80) as usize]
    } else {
        b as char
    }
}

pub(crate) fn latin1_to_utf8(b: &[u8], out: &mut String) {
    out.extend(b.iter().map(|&c| latin1_char(c)));
}

/// UTF-8 text as latin1 bytes for a client whose `character_set_results` is latin1
/// (characters latin1 lacks become `?`, as MySQL converts them).
pub fn utf8_to_latin1(b: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(b)
        .chars()
        .map(rel::collation::latin1_byte)
        .collect()
}

fn invalid(b: &[u8]) -> SqlError {
    let shown: String = b.iter().take(6).map(|c| format!("\\x{c:02X}")).collect();
    SqlError::invalid_character_string(shown)
}

/// The statement as UTF-8 text for the parser (borrowed when nothing changes).
pub fn decode(q: &[u8], cs: ClientCharset) -> Result<Cow<'_, str>> {
    if cs != ClientCharset::Latin1 {
        if let Ok(s) = std::str::from_utf8(q) {
            return Ok(Cow::Borrowed(s));
        }
    }
    Lexer {
        q,
        cs,
        out: String::with_capacity(q.len() + 16),
    }
    .run()
    .map(Cow::Owned)
}

/// Splits a multi-statement query (CLIENT_MULTI_STATEMENTS) at the semicolons outside
/// quotes, identifiers and comments. Empty pieces (a trailing `;`) are dropped.
pub fn split_statements(q: &[u8]) -> Vec<&[u8]> {
    // Without a `;` anywhere (a big INSERT's usual case) there is one piece: no
    // need to walk its quotes byte by byte.
    if memchr::memchr(b';', q).is_none() {
        return if q.iter().all(|c| c.is_ascii_whitespace()) {
            Vec::new()
        } else {
            vec![q]
        };
    }
    split_walk(q)
}

/// `split_statements` the long way: a walk over every byte.
pub(crate) fn split_walk(q: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < q.len() {
        i = match q[i] {
            b'\'' | b'"' => string_end(q, i),
            b'`' => q[i + 1..]
                .iter()
                .position(|c| *c == b'`')
                .map_or(q.len(), |p| i + 2 + p),
            b'#' => line_end(q, i),
            b'-' if q.get(i + 1) == Some(&b'-')
                && q.get(i + 2)
                    .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                line_end(q, i)
            }
            b'/' if q.get(i + 1) == Some(&b'*') => q[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(q.len(), |p| i + 4 + p),
            b';' => {
                out.push(&q[start..i]);
                start = i + 1;
                i + 1
            }
            _ => i + 1,
        };
    }
    out.push(&q[start..]);
    out.retain(|p| !p.iter().all(|c| c.is_ascii_whitespace()));
    out
}

struct Lexer<'a> {
    q: &'a [u8],
    cs: ClientCharset,
    out: String,
}

impl Lexer<'_> {
    /// Copies `b`, which is outside string literals.
    fn text(&mut self, b: &[u8]) -> Result<()> {
        match self.cs {
            ClientCharset::Latin1 => latin1_to_utf8(b, &mut self.out),
            _ => match std::str::from_utf8(b) {
                Ok(s) => self.out.push_str(s),
                Err(e) => return Err(invalid(&b[e.valid_up_to()..])),
            },
        }
        Ok(())
    }

    /// Copies a comment: bytes that are not text are dropped with it.
    fn comment(&mut self, b: &[u8]) {
        match self.cs {
            ClientCharset::Latin1 => latin1_to_utf8(b, &mut self.out),
            _ => self.out.push_str(&String::from_utf8_lossy(b)),
        }
    }

    fn run(mut self) -> Result<String> {
        let q = self.q;
        let mut i = 0;
        let mut plain = 0; // start of bytes not yet copied
        while i < q.len() {
            match q[i] {
                b'\'' | b'"' => {
                    let (intro, at) = introducer(q, plain, i);
                    self.text(&q[plain..at])?;
                    let (value, end) = unquote(q, i);
                    self.literal(intro, &q[i..end], &value)?;
                    i = end;
                    plain = i;
                }
                b'`' => {
                    let end = q[i + 1..]
                        .iter()
                        .position(|c| *c == b'`')
                        .map_or(q.len(), |p| i + 2 + p);
                    i = end;
                }
                b'#' => {
                    self.text(&q[plain..i])?;
                    let end = line_end(q, i);
                    self.comment(&q[i..end]);
                    i = end;
                    plain = i;
                }
                b'-' if q.get(i + 1) == Some(&b'-')
                    && q.get(i + 2)
                        .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
                {
                    self.text(&q[plain..i])?;
                    let end = line_end(q, i);
                    self.comment(&q[i..end]);
                    i = end;
                    plain = i;
                }
                b'/' if q.get(i + 1) == Some(&b'*')
                    && !matches!(q.get(i + 2), Some(b'!' | b'+')) =>
                {
                    self.text(&q[plain..i])?;
                    let end = q[i + 2..]
                        .windows(2)
                        .position(|w| w == b"*/")
                        .map_or(q.len(), |p| i + 4 + p);
                    self.comment(&q[i..end]);
                    i = end;
                    plain = i;
                }
                _ => i += 1,
            }
        }
        self.text(&q[plain..])?;
        Ok(self.out)
    }

    /// Emits one string literal: `raw` as written (with quotes), `value` its bytes.
    fn literal(&mut self, intro: Option<&str>, raw: &[u8], value: &[u8]) -> Result<()> {
        let name = match intro {
            Some(name) => name,
            None if self.cs == ClientCharset::Latin1 => {
                latin1_to_utf8(raw, &mut self.out);
                return Ok(());
            }
            None => match std::str::from_utf8(raw) {
                Ok(s) => {
                    self.out.push_str(s);
                    return Ok(());
                }
                // Not UTF-8: exactly its bytes, as a binary string.
                Err(_) => "_binary",
            },
        };
        // An introduced string: its bytes, read in that character set by
        // the binder (`_latin1 X'E9'` is 'é').
        self.out.push_str(name);
        self.out.push_str(" X'");
        for b in value {
            self.out.push_str(&format!("{b:02X}"));
        }
        self.out.push('\'');
        Ok(())
    }
}

/// The character set introducers the lexer reads (`_binary`, `_latin1`,
/// `_utf8mb4`, `_utf8mb3`, `_utf8`).
const INTRODUCERS: [&str; 5] = ["_binary", "_latin1", "_utf8mb4", "_utf8mb3", "_utf8"];

/// A character set introducer right before the quote at `quote` (spaces
/// allowed between); returns it and where the text before it ends (the
/// introducer is written again with the literal).
fn introducer(q: &[u8], from: usize, quote: usize) -> (Option<&'static str>, usize) {
    let mut j = quote;
    while j > from && q[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    for word in INTRODUCERS {
        let word_b = word.as_bytes();
        if j >= from + word_b.len() && q[j - word_b.len()..j].eq_ignore_ascii_case(word_b) {
            let start = j - word_b.len();
            let boundary = start == 0
                || !(q[start - 1].is_ascii_alphanumeric()
                    || q[start - 1] == b'_'
                    || q[start - 1] >= 0x80);
            if boundary {
                return (Some(word), start);
            }
        }
    }
    (None, quote)
}

/// The end of a `#` or `--` comment (the newline stays outside it).
fn line_end(q: &[u8], from: usize) -> usize {
    q[from..]
        .iter()
        .position(|c| *c == b'\n')
        .map_or(q.len(), |p| from + p)
}

/// The index just past the string literal starting at `start`, as `unquote`
/// finds it, without building its value (a 512 KiB INSERT's strings were
/// copied byte by byte only to be dropped when splitting statements).
fn string_end(q: &[u8], start: usize) -> usize {
    let quote = q[start];
    let mut i = start + 1;
    while i < q.len() {
        // Up to the next backslash or quote.
        match q[i..].iter().position(|&c| c == b'\\' || c == quote) {
            None => return q.len(),
            Some(p) => i += p,
        }
        if q[i] == b'\\' {
            if i + 1 < q.len() {
                i += 2;
            } else {
                i += 1;
            }
        } else if q.get(i + 1) == Some(&quote) {
            i += 2;
        } else {
            return i + 1;
        }
    }
    q.len()
}

/// The value of the string literal starting at `start` (MySQL's escapes, doubled quotes)
/// and the index just past its closing quote (the end of the input if unclosed).
fn unquote(q: &[u8], start: usize) -> (Vec<u8>, usize) {
    let quote = q[start];
    let mut v = Vec::new();
    let mut i = start + 1;
    while i < q.len() {
        let c = q[i];
        if c == b'\\' && i + 1 < q.len() {
            let n = q[i + 1];
            match n {
                b'0' => v.push(0),
                b'b' => v.push(8),
                b'n' => v.push(b'\n'),
                b'r' => v.push(b'\r'),
                b't' => v.push(b'\t'),
                b'Z' => v.push(26),
                // Kept with their backslash (LIKE patterns).
                b'%' | b'_' => v.extend_from_slice(&[b'\\', n]),
                other => v.push(other),
            }
            i += 2;
        } else if c == quote {
            if q.get(i + 1) == Some(&quote) {
                v.push(quote);
                i += 2;
            } else {
                return (v, i + 1);
            }
        } else {
            v.push(c);
            i += 1;
        }
    }
    (v, q.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `string_end` ends a literal where `unquote` does: escapes, doubled
    /// quotes, the other quote inside, unclosed literals, a final backslash.
    #[test]
    fn string_end_agrees_with_unquote() {
        let seed = testkit::seed("string_end_agrees_with_unquote");
        let mut rng = testkit::Rng::new(seed);
        let parts: &[&[u8]] = &[b"'", b"\"", b"\\", b"a", b"''", b"\\'", b" ", b"x;"];
        for _ in 0..20_000 {
            let mut q = vec![if rng.below(2) == 0 { b'\'' } else { b'"' }];
            for _ in 0..rng.below(8) {
                q.extend_from_slice(parts[rng.below(parts.len() as u64) as usize]);
            }
            assert_eq!(
                string_end(&q, 0),
                unquote(&q, 0).1,
                "SEED={seed} {:?}",
                String::from_utf8_lossy(&q)
            );
        }
    }

    #[test]
    fn statements_split_outside_quotes_and_comments() {
        let q = b"SELECT ';', `a;b`, \"x\\\";\" FROM t; -- c;\nSELECT 2 /* ; */ ; # ;\n ;  ";
        let parts: Vec<String> = split_statements(q)
            .iter()
            .map(|p| String::from_utf8_lossy(p).trim().to_string())
            .collect();
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[2], "# ;");
        assert!(parts[0].starts_with("SELECT ';'") && parts[0].ends_with("FROM t"));
        assert!(parts[1].starts_with("-- c;") && parts[1].ends_with("/* ; */"));
        assert_eq!(split_statements(b"SELECT 1").len(), 1);
        assert!(split_statements(b" ; ").is_empty());
        // Without any `;` (the scan-free path): one piece, or none if blank.
        assert!(split_statements(b" \n\t ").is_empty());
        assert_eq!(split_statements(b"SELECT 'a").len(), 1);
    }

    /// Escapes bytes the way PyMySQL / mysqlclient do for a string literal.
    fn escape(b: &[u8]) -> Vec<u8> {
        let mut o = Vec::new();
        for &c in b {
            match c {
                0 => o.extend_from_slice(b"\\0"),
                b'\n' => o.extend_from_slice(b"\\n"),
                b'\r' => o.extend_from_slice(b"\\r"),
                26 => o.extend_from_slice(b"\\Z"),
                b'\'' => o.extend_from_slice(b"\\'"),
                b'"' => o.extend_from_slice(b"\\\""),
                b'\\' => o.extend_from_slice(b"\\\\"),
                c => o.push(c),
            }
        }
        o
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|c| format!("{c:02X}")).collect()
    }

    #[test]
    fn random_bytes_in_literals_arrive_exactly() {
        let seed = testkit::seed("random_bytes_in_literals_arrive_exactly");
        let mut rng = testkit::Rng::new(seed);
        for _ in 0..2000 {
            let n = rng.below(40) as usize;
            let b = rng.bytes(n);
            for intro in ["", "_binary", "_binary "] {
                let mut q = b"INSERT INTO t VALUES (".to_vec();
                q.extend_from_slice(intro.as_bytes());
                q.push(b'\'');
                q.extend(escape(&b));
                q.extend_from_slice(b"') -- \xff comment\n");
                let out = decode(&q, ClientCharset::Utf8).unwrap();
                let utf8 = std::str::from_utf8(&b).is_ok();
                if intro.is_empty() && utf8 {
                    // Unchanged: the parser unescapes it.
                    assert!(out.starts_with("INSERT INTO t VALUES ('"), "SEED={seed}");
                } else if !intro.is_empty() || !utf8 {
                    let want = format!("INSERT INTO t VALUES (_binary X'{}')", hex(&b));
                    assert!(out.starts_with(&want), "SEED={seed}: {out:?} vs {want:?}");
                }
            }
        }
    }

    #[test]
    fn quotes_comments_and_identifiers() {
        let q = b"SELECT 'a''b\\'c', \"d\"\"\xe9\", `x\xc3\xa9`, 1 /* \xff */ # \xfe\n-- \xfd\n/*!40101 'z' */";
        let out = decode(q, ClientCharset::Utf8).unwrap();
        assert_eq!(
            out,
            "SELECT 'a''b\\'c', _binary X'6422E9', `xé`, 1 /* \u{FFFD} */ # \u{FFFD}\n-- \u{FFFD}\n/*!40101 'z' */"
        );
        // Not UTF-8 outside a literal: an error, not a replacement.
        assert_eq!(
            decode(b"SELECT \xff", ClientCharset::Utf8)
                .unwrap_err()
                .code,
            1300
        );
        // An unterminated literal is left for the parser to refuse.
        assert!(decode(b"SELECT '\xff", ClientCharset::Utf8).is_ok());
    }

    #[test]
    fn latin1_results_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        let mut s = String::new();
        latin1_to_utf8(&all, &mut s);
        assert_eq!(utf8_to_latin1(s.as_bytes()), all);
        assert_eq!(utf8_to_latin1("a☃".as_bytes()), b"a?");
    }

    #[test]
    fn latin1_clients() {
        let out = decode(
            b"SELECT '\xe9\x80', _binary'\xe9', X'E9' -- \xe9",
            ClientCharset::Latin1,
        )
        .unwrap();
        assert_eq!(out, "SELECT 'é€', _binary X'E9', X'E9' -- é");
        let out = decode(b"SELECT _latin1'\xe9'", ClientCharset::Utf8).unwrap();
        assert_eq!(out, "SELECT _latin1 X'E9'");
        let out = decode(b"SELECT _utf8mb4 '\xc3\xa9', '\xff'", ClientCharset::Latin1).unwrap();
        assert_eq!(out, "SELECT _utf8mb4 X'C3A9', '\u{FF}'");
        // A word ending in _binary is not an introducer.
        let out = decode(b"SELECT my_binary'\xff'", ClientCharset::Utf8).unwrap();
        assert_eq!(out, "SELECT my_binary_binary X'FF'");
    }
}
