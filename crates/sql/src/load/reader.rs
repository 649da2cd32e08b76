//! Splitting a LOAD DATA input into rows of fields, as MySQL's reader does:
//! FIELDS TERMINATED BY (a string, default tab), [OPTIONALLY] ENCLOSED BY (a
//! character, default none), ESCAPED BY (a character, default `\`), LINES
//! STARTING BY (a prefix: text before it is skipped, lines without it too)
//! and TERMINATED BY (a string, default newline). An escape character
//! before `0 b n r t Z` gives NUL, backspace, newline, carriage return, tab
//! and ^Z, before anything else that character itself (so a terminator or
//! the enclosing character can be escaped); an unenclosed field that is
//! exactly the escape character and `N` is NULL, and so is the bare word
//! `NULL` when ENCLOSED BY is set. In an enclosed field the enclosing
//! character ends the field only when followed by a field or line
//! terminator (or the end), and a doubled one stands for itself.
//!
//! The input is read in chunks from any `Read` (a file, or the packets of a
//! LOCAL client), so memory does not grow with the file; a line is held
//! whole, up to a limit (`with_limit`: max_allowed_packet), past which
//! reading fails with `LineTooLong` (an enclosed field never closed would
//! otherwise grow to the end of the input).
use std::io::Read;

/// The reading options of a LOAD DATA statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Format {
    pub field_term: Vec<u8>,
    pub enclosed: Option<u8>,
    pub escaped: Option<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for Format {
    fn default() -> Format {
        Format {
            field_term: b"\t".to_vec(),
            enclosed: None,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// One field: `None` is NULL.
pub type Field = Option<Vec<u8>>;

/// The error (inside an `std::io::Error`) of a line over the limit.
#[derive(Debug)]
pub struct LineTooLong(pub usize);

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a line longer than {} bytes", self.0)
    }
}

impl std::error::Error for LineTooLong {}

const CHUNK: usize = 256 << 10;

/// Rows of fields from an input.
pub struct Reader<R: Read> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    f: Format,
    /// Most bytes of one line's fields.
    limit: usize,
    /// Bytes of the current line's fields so far.
    line_bytes: usize,
}

impl<R: Read> Reader<R> {
    pub fn new(src: R, f: Format) -> Reader<R> {
        Reader {
            src,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            f,
            limit: usize::MAX,
            line_bytes: 0,
        }
    }

    /// Caps the bytes of one line's fields at `limit`.
    pub fn with_limit(mut self, limit: usize) -> Reader<R> {
        self.limit = limit;
        self
    }

    /// Fails once the line holds more than the limit (`extra`: bytes of
    /// the field being read).
    fn check_len(&self, extra: usize) -> std::io::Result<()> {
        if self.line_bytes.saturating_add(extra) > self.limit {
            return Err(std::io::Error::other(LineTooLong(self.limit)));
        }
        Ok(())
    }

    /// Makes at least `n` bytes available from `pos` unless the input ends.
    fn fill(&mut self, n: usize) -> std::io::Result<()> {
        while self.buf.len() - self.pos < n && !self.eof {
            if self.pos > 0 && self.pos >= self.buf.len() / 2 {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let old = self.buf.len();
            self.buf.resize(old + CHUNK, 0);
            let got = loop {
                match self.src.read(&mut self.buf[old..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r,
                }
            };
            let got = match got {
                Ok(g) => g,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            };
            self.buf.truncate(old + got);
            if got == 0 {
                self.eof = true;
            }
        }
        Ok(())
    }

    fn at(&mut self, s: &[u8]) -> std::io::Result<bool> {
        if s.is_empty() {
            return Ok(false);
        }
        self.fill(s.len())?;
        Ok(self.buf[self.pos..].starts_with(s))
    }

    fn peek(&mut self) -> std::io::Result<Option<u8>> {
        self.fill(1)?;
        Ok(self.buf.get(self.pos).copied())
    }

    /// Skips past the next line terminator (IGNORE n LINES). False at the end.
    pub fn skip_line(&mut self) -> std::io::Result<bool> {
        let term = self.f.line_term.clone();
        loop {
            if self.peek()?.is_none() {
                return Ok(false);
            }
            if self.at(&term)? {
                self.pos += term.len();
                return Ok(true);
            }
            self.pos += 1;
        }
    }

    /// Skips to just after the next LINES STARTING BY prefix. False at the end.
    fn find_start(&mut self) -> std::io::Result<bool> {
        let start = self.f.line_start.clone();
        if start.is_empty() {
            return Ok(self.peek()?.is_some());
        }
        loop {
            if self.at(&start)? {
                self.pos += start.len();
                return Ok(true);
            }
            if self.peek()?.is_none() {
                return Ok(false);
            }
            self.pos += 1;
        }
    }

    /// The next row's fields, `None` at the end of the input.
    pub fn next_row(&mut self) -> std::io::Result<Option<Vec<Field>>> {
        if !self.find_start()? {
            return Ok(None);
        }
        let mut row = Vec::new();
        self.line_bytes = 0;
        loop {
            let (field, line_end) = self.field()?;
            // A field counts at least one byte: a line of endless empty
            // fields is bounded too.
            self.line_bytes += field.as_ref().map_or(0, |f| f.len()).max(1);
            self.check_len(0)?;
            row.push(field);
            if line_end {
                return Ok(Some(row));
            }
        }
    }

    /// One field and whether the line ended after it.
    fn field(&mut self) -> std::io::Result<(Field, bool)> {
        // Taken out for the call (not cloned per field), put back after.
        let ft = std::mem::take(&mut self.f.field_term);
        let lt = std::mem::take(&mut self.f.line_term);
        let r = self.field_with(&ft, &lt);
        self.f.field_term = ft;
        self.f.line_term = lt;
        r
    }

    /// Bytes from `pos` that are plain field text of an unenclosed field:
    /// up to the first escape character or first byte of a terminator (or
    /// the end of what is buffered). They are taken in one copy instead of
    /// byte by byte.
    fn plain_run(&self, ft: &[u8], lt: &[u8]) -> usize {
        let (esc, f0, l0) = (self.f.escaped, ft.first().copied(), lt.first().copied());
        self.buf[self.pos..]
            .iter()
            .position(|&c| Some(c) == esc || Some(c) == f0 || Some(c) == l0)
            .unwrap_or(self.buf.len() - self.pos)
    }

    fn field_with(&mut self, ft: &[u8], lt: &[u8]) -> std::io::Result<(Field, bool)> {
        let mut out = Vec::new();
        let enc = self.f.enclosed;
        let enclosed = match enc {
            Some(q) if self.peek()? == Some(q) => {
                self.pos += 1;
                Some(q)
            }
            _ => None,
        };
        let mut escaped_any = false;
        loop {
            self.check_len(out.len())?;
            let Some(c) = self.peek()? else {
                return Ok((self.finish(out, enclosed, escaped_any), true));
            };
            if Some(c) == self.f.escaped {
                self.fill(2)?;
                match self.buf.get(self.pos + 1).copied() {
                    Some(n) => {
                        self.pos += 2;
                        escaped_any = true;
                        if n == b'N' && enclosed.is_none() && out.is_empty() {
                            // `\N` alone is NULL; followed by more it is "N...".
                            if self.at(ft)? || self.at(lt)? || self.peek()?.is_none() {
                                let end = self.end_field(ft, lt)?;
                                return Ok((None, end));
                            }
                        }
                        out.push(unescape(n));
                    }
                    None => {
                        self.pos += 1;
                        out.push(c);
                    }
                }
                continue;
            }
            if let Some(q) = enclosed {
                if c == q {
                    self.fill(2)?;
                    if self.buf.get(self.pos + 1) == Some(&q) {
                        self.pos += 2;
                        out.push(q);
                        continue;
                    }
                    self.pos += 1;
                    if self.peek()?.is_none() || self.at(ft)? || self.at(lt)? {
                        let end = self.end_field(ft, lt)?;
                        return Ok((Some(out), end));
                    }
                    out.push(q);
                    continue;
                }
                // Text up to the next escape or enclosing character.
                let esc = self.f.escaped;
                let run = self.buf[self.pos..]
                    .iter()
                    .position(|&b| b == q || Some(b) == esc)
                    .unwrap_or(self.buf.len() - self.pos);
                out.extend_from_slice(&self.buf[self.pos..self.pos + run.max(1)]);
                self.pos += run.max(1);
                continue;
            }
            let run = self.plain_run(ft, lt);
            if run > 0 {
                out.extend_from_slice(&self.buf[self.pos..self.pos + run]);
                self.pos += run;
                continue;
            }
            if self.at(ft)? {
                self.pos += ft.len();
                return Ok((self.finish(out, None, escaped_any), false));
            }
            if self.at(lt)? {
                self.pos += lt.len();
                return Ok((self.finish(out, None, escaped_any), true));
            }
            self.pos += 1;
            out.push(c);
        }
    }

    /// After a field: consumes a field terminator (false) or a line
    /// terminator / the end (true).
    fn end_field(&mut self, ft: &[u8], lt: &[u8]) -> std::io::Result<bool> {
        if self.at(ft)? {
            self.pos += ft.len();
            return Ok(false);
        }
        if self.at(lt)? {
            self.pos += lt.len();
        }
        Ok(true)
    }

    /// An unenclosed `NULL` is NULL when ENCLOSED BY is set.
    fn finish(&self, out: Vec<u8>, enclosed: Option<u8>, escaped: bool) -> Field {
        if enclosed.is_none() && !escaped && self.f.enclosed.is_some() && out == b"NULL" {
            return None;
        }
        Some(out)
    }
}

fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(input: &str, f: Format) -> Vec<Vec<Option<String>>> {
        let mut r = Reader::new(input.as_bytes(), f);
        let mut out = Vec::new();
        while let Some(row) = r.next_row().unwrap() {
            out.push(
                row.into_iter()
                    .map(|f| f.map(|b| String::from_utf8(b).unwrap()))
                    .collect(),
            );
        }
        out
    }

    fn s(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|x| x.map(|x| x.to_string())).collect()
    }

    #[test]
    fn defaults_split_tabs_and_newlines_with_escapes() {
        let got = rows("1\ta\\tb\n2\t\\N\n3\t\\Nx\n", Format::default());
        assert_eq!(
            got,
            vec![
                s(&[Some("1"), Some("a\tb")]),
                s(&[Some("2"), None]),
                s(&[Some("3"), Some("Nx")]),
            ]
        );
    }

    #[test]
    fn enclosed_fields_keep_terminators_and_doubled_quotes() {
        let f = Format {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            ..Default::default()
        };
        let got = rows("\"a,b\",\"say \"\"hi\"\"\",NULL,\"NULL\"\n5,x\"y,\"\"\n", f);
        assert_eq!(
            got,
            vec![
                s(&[Some("a,b"), Some("say \"hi\""), None, Some("NULL")]),
                s(&[Some("5"), Some("x\"y"), Some("")]),
            ]
        );
    }

    #[test]
    fn line_prefix_and_multi_byte_terminators() {
        let f = Format {
            field_term: b"||".to_vec(),
            line_start: b"xxx".to_vec(),
            line_term: b"\r\n".to_vec(),
            ..Default::default()
        };
        let got = rows("skip me\r\nxxx1||2\r\nnoise xxx3||4", f);
        assert_eq!(
            got,
            vec![s(&[Some("1"), Some("2")]), s(&[Some("3"), Some("4")])]
        );
    }

    #[test]
    fn terminator_prefixes_in_text_and_long_plain_lines() {
        // Text runs stop at a terminator's first byte; one that does not
        // start a whole terminator is text.
        let f = Format {
            field_term: b"<>".to_vec(),
            line_term: b"\r\n".to_vec(),
            ..Default::default()
        };
        let got = rows("a<b<>c\rd\r\n<<>>\r\n", f.clone());
        assert_eq!(
            got,
            vec![s(&[Some("a<b"), Some("c\rd")]), s(&[Some("<"), Some(">")])]
        );
        // The line limit holds for text taken in runs.
        let line = format!("{}\t{}\r\n", "x".repeat(40), "y".repeat(40));
        let mut r = Reader::new(line.as_bytes(), Format::default()).with_limit(60);
        let e = r.next_row().unwrap_err();
        assert!(e.get_ref().is_some_and(|e| e.is::<LineTooLong>()), "{e}");
        let mut r = Reader::new(line.as_bytes(), f).with_limit(81);
        assert!(r.next_row().unwrap().is_some());
    }

    #[test]
    fn chunk_boundaries_do_not_matter() {
        // A reader giving one byte at a time.
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() || b.is_empty() {
                    return Ok(0);
                }
                b[0] = self.0[0];
                self.0 = &self.0[1..];
                Ok(1)
            }
        }
        let f = Format {
            field_term: b"<>".to_vec(),
            enclosed: Some(b'\''),
            ..Default::default()
        };
        let text = b"'a<>b'<>2\n\\N<>'it''s'\n";
        let mut r = Reader::new(Slow(text), f);
        let a = r.next_row().unwrap().unwrap();
        assert_eq!(a, vec![Some(b"a<>b".to_vec()), Some(b"2".to_vec())]);
        let b = r.next_row().unwrap().unwrap();
        assert_eq!(b, vec![None, Some(b"it's".to_vec())]);
        assert!(r.next_row().unwrap().is_none());
    }
}
