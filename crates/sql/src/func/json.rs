//! JSON text as MariaDB models it (a JSON value is a string): the parser
//! (MariaDB's grammar: `1.` is a number, any character may follow a `\`,
//! nesting is limited to 32 levels, so no recursion here is deeper than that),
//! the normalized writer (`[1, 2]`, `{"k": v}`; numbers and strings keep
//! their text as written) and string escapes; paths (`path.rs`) and what the
//! functions in `json_fn.rs` do to a parsed value (`edit.rs`: change, merge,
//! compare).
mod edit;
mod path;
pub use edit::*;
pub use path::*;

/// MariaDB's limit on nesting (JSON_DEPTH_LIMIT): a 32nd level is an error.
pub const DEPTH_LIMIT: usize = 32;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    /// A number's text as written.
    Num(Vec<u8>),
    /// A string's bytes between its quotes, escapes as written.
    Str(Vec<u8>),
    Arr(Vec<J>),
    /// Members in order; keys as written (escaped), duplicates kept.
    Obj(Vec<(Vec<u8>, J)>),
}

/// Why a text is not JSON (positions are 1-based, as MariaDB reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JErr {
    /// The text ended inside a value.
    Eos,
    /// A character that breaks the syntax.
    Syntax(usize),
    /// A control character inside a string.
    BadChar(usize),
    /// Nesting reached `DEPTH_LIMIT`.
    Depth(usize),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

/// Parses a whole JSON text (surrounding whitespace allowed).
pub fn parse(s: &[u8]) -> Result<J, JErr> {
    let mut p = Parser { s, i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i < s.len() {
        return Err(JErr::Syntax(p.i + 1));
    }
    Ok(v)
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> Result<J, JErr> {
        self.ws();
        let Some(c) = self.peek() else {
            return Err(JErr::Eos);
        };
        match c {
            b'[' | b'{' => {
                if depth + 1 >= DEPTH_LIMIT {
                    return Err(JErr::Depth(self.i + 1));
                }
                self.i += 1;
                if c == b'[' {
                    self.array(depth + 1)
                } else {
                    self.object(depth + 1)
                }
            }
            b'"' => {
                self.i += 1;
                Ok(J::Str(self.string()?))
            }
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.word(b"true", J::Bool(true)),
            b'f' => self.word(b"false", J::Bool(false)),
            b'n' => self.word(b"null", J::Null),
            _ => Err(JErr::Syntax(self.i + 1)),
        }
    }

    fn word(&mut self, w: &[u8], v: J) -> Result<J, JErr> {
        for &b in w {
            match self.peek() {
                None => return Err(JErr::Eos),
                Some(c) if c == b => self.i += 1,
                Some(_) => return Err(JErr::Syntax(self.i + 1)),
            }
        }
        self.end_of_scalar()?;
        Ok(v)
    }

    /// A scalar must be followed by a delimiter.
    fn end_of_scalar(&self) -> Result<(), JErr> {
        match self.peek() {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'}') => Ok(()),
            Some(_) => Err(JErr::Syntax(self.i + 1)),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<J, JErr> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(JErr::Syntax(start + 1));
            }
        }
        if self.peek() == Some(b'0') {
            self.i += 1;
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            let e = self.i;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(JErr::Syntax(e + 1));
            }
        }
        self.end_of_scalar()?;
        Ok(J::Num(self.s[start..self.i].to_vec()))
    }

    /// A string's raw bytes; the opening quote is consumed.
    fn string(&mut self) -> Result<Vec<u8>, JErr> {
        let start = self.i;
        loop {
            let Some(c) = self.peek() else {
                return Err(JErr::Eos);
            };
            match c {
                b'"' => {
                    let raw = self.s[start..self.i].to_vec();
                    self.i += 1;
                    return Ok(raw);
                }
                b'\\' => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(JErr::Eos),
                        Some(b'u') => {
                            self.i += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    None => return Err(JErr::Eos),
                                    Some(h) if h.is_ascii_hexdigit() => self.i += 1,
                                    Some(_) => return Err(JErr::Syntax(self.i)),
                                }
                            }
                        }
                        Some(_) => self.i += 1,
                    }
                }
                0..=0x1f => return Err(JErr::BadChar(self.i + 1)),
                _ => self.i += 1,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<J, JErr> {
        let mut v = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(J::Arr(v));
        }
        loop {
            v.push(self.value(depth)?);
            self.ws();
            match self.peek() {
                None => return Err(JErr::Eos),
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(J::Arr(v));
                }
                Some(_) => return Err(JErr::Syntax(self.i + 1)),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<J, JErr> {
        let mut v = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(J::Obj(v));
        }
        loop {
            self.ws();
            match self.peek() {
                None => return Err(JErr::Eos),
                Some(b'"') => self.i += 1,
                Some(_) => return Err(JErr::Syntax(self.i + 1)),
            }
            let k = self.string()?;
            self.ws();
            match self.peek() {
                None => return Err(JErr::Eos),
                Some(b':') => self.i += 1,
                Some(_) => return Err(JErr::Syntax(self.i + 1)),
            }
            v.push((k, self.value(depth)?));
            self.ws();
            match self.peek() {
                None => return Err(JErr::Eos),
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(J::Obj(v));
                }
                Some(_) => return Err(JErr::Syntax(self.i + 1)),
            }
        }
    }
}

impl J {
    /// The normalized text MariaDB prints.
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            J::Null => out.extend_from_slice(b"null"),
            J::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            J::Num(n) => out.extend_from_slice(n),
            J::Str(s) => {
                out.push(b'"');
                out.extend_from_slice(s);
                out.push(b'"');
            }
            J::Arr(v) => {
                out.push(b'[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    x.write(out);
                }
                out.push(b']');
            }
            J::Obj(v) => {
                out.push(b'{');
                for (i, (k, x)) in v.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.push(b'"');
                    out.extend_from_slice(k);
                    out.extend_from_slice(b"\": ");
                    x.write(out);
                }
                out.push(b'}');
            }
        }
    }

    /// JSON_TYPE's name.
    pub fn type_name(&self) -> &'static str {
        match self {
            J::Null => "NULL",
            J::Bool(_) => "BOOLEAN",
            J::Num(n) if n.contains(&b'.') => "DOUBLE",
            J::Num(_) => "INTEGER",
            J::Str(_) => "STRING",
            J::Arr(_) => "ARRAY",
            J::Obj(_) => "OBJECT",
        }
    }

    /// JSON_DEPTH: 1 for a scalar or an empty container.
    pub fn depth(&self) -> usize {
        match self {
            J::Arr(v) => 1 + v.iter().map(J::depth).max().unwrap_or(0),
            J::Obj(v) => 1 + v.iter().map(|(_, x)| x.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    /// JSON_LENGTH: elements, members, or 1 for a scalar.
    pub fn length(&self) -> usize {
        match self {
            J::Arr(v) => v.len(),
            J::Obj(v) => v.len(),
            _ => 1,
        }
    }
}

/// The bytes a JSON string's escapes stand for (an unknown escape is its
/// character; a lone surrogate becomes `?`).
pub fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    let hex4 = |i: usize| -> Option<u32> {
        let h = raw.get(i..i + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' || i + 1 >= raw.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = raw[i + 1];
        i += 2;
        let ch = match e {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let Some(u) = hex4(i) else {
                    out.push(b'u');
                    continue;
                };
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&u)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && hex4(i + 2).is_some_and(|l| (0xDC00..0xE000).contains(&l))
                {
                    let l = hex4(i + 2).unwrap_or(0xDC00);
                    i += 6;
                    0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00)
                } else {
                    u
                };
                char::from_u32(cp).unwrap_or('?')
            }
            other => {
                out.push(other);
                continue;
            }
        };
        let mut b = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
    }
    out
}

/// A string's bytes as JSON string contents (JSON_QUOTE without the quotes).
pub fn escape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            0..=0x1f => out.extend_from_slice(format!("\\u{c:04X}").as_bytes()),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        String::from_utf8(parse(s.as_bytes()).unwrap().text()).unwrap()
    }

    #[test]
    fn parses_and_normalizes() {
        assert_eq!(
            norm(r#" {"a" :[1,  2,{"b":3}] ,"c":"x\u00e9"} "#),
            r#"{"a": [1, 2, {"b": 3}], "c": "x\u00e9"}"#
        );
        assert_eq!(norm("1."), "1.");
        assert_eq!(norm("[1E2, -0, 0.10]"), "[1E2, -0, 0.10]");
        assert_eq!(norm(r#""\x""#), r#""\x""#);
    }

    #[test]
    fn rejects_with_positions() {
        assert_eq!(parse(b"{a:1}"), Err(JErr::Syntax(2)));
        assert_eq!(parse(b""), Err(JErr::Eos));
        assert_eq!(parse(b"[1,]"), Err(JErr::Syntax(4)));
        assert_eq!(parse(b"01"), Err(JErr::Syntax(2)));
        assert_eq!(parse(b"-01"), Err(JErr::Syntax(3)));
        assert_eq!(parse(b".5"), Err(JErr::Syntax(1)));
        assert_eq!(parse(b"-"), Err(JErr::Syntax(1)));
        assert_eq!(parse(b"tru"), Err(JErr::Eos));
        assert_eq!(parse(b"True"), Err(JErr::Syntax(1)));
        assert_eq!(parse(b"1e"), Err(JErr::Syntax(2)));
        assert_eq!(parse(b"[] x"), Err(JErr::Syntax(4)));
        assert_eq!(parse(b"\"a\tb\""), Err(JErr::BadChar(3)));
        assert_eq!(parse(b"[1 2]"), Err(JErr::Syntax(4)));
    }

    #[test]
    fn depth_is_bounded() {
        let ok = format!("{}{}", "[".repeat(31), "]".repeat(31));
        assert!(parse(ok.as_bytes()).is_ok());
        let bad = format!("{}{}", "[".repeat(32), "]".repeat(32));
        assert_eq!(parse(bad.as_bytes()), Err(JErr::Depth(32)));
        let hostile = "[".repeat(100_000);
        assert_eq!(parse(hostile.as_bytes()), Err(JErr::Depth(32)));
        let hostile = "{\"a\":".repeat(100_000);
        assert!(matches!(parse(hostile.as_bytes()), Err(JErr::Depth(_))));
    }

    #[test]
    fn paths() {
        let p = Path::parse(b"$.a[1].\"b c\"[*].*[last-1][0 to 2]**.d").unwrap();
        assert_eq!(p.0.len(), 9);
        assert!(p.wild());
        assert!(!Path::parse(b"$.a[-1]").unwrap().wild());
        assert_eq!(Path::parse(b"a"), Err(PErr::Syntax(1)));
        assert_eq!(Path::parse(b"$["), Err(PErr::Eos));
        assert_eq!(Path::parse(b"$ . a"), Err(PErr::Syntax(2)));
        assert_eq!(Path::parse(b"$x"), Err(PErr::Syntax(2)));
        assert_eq!(Path::parse(b""), Err(PErr::Eos));
        let deep = |n: usize| format!("${}", "[0]".repeat(n));
        assert!(matches!(
            Path::parse(deep(32).as_bytes()),
            Err(PErr::Depth(_))
        ));
        assert!(Path::parse(deep(31).as_bytes()).is_ok());
        assert_eq!(Path::parse(b"$**"), Err(PErr::Eos));
    }

    #[test]
    fn finds_in_document_order() {
        let j = parse(br#"{"a":{"a":1},"b":[1,{"c":2}]}"#).unwrap();
        let p = Path::parse(b"$**.a").unwrap();
        let mut out = Vec::new();
        find(&j, &p.0, &mut out);
        let t: Vec<Vec<u8>> = out.iter().map(|x| x.text()).collect();
        assert_eq!(t, vec![b"{\"a\": 1}".to_vec(), b"1".to_vec()]);
        let mut out = Vec::new();
        find(&j, &Path::parse(b"$.b[last]").unwrap().0, &mut out);
        assert_eq!(out[0].text(), b"{\"c\": 2}");
    }

    #[test]
    fn changes() {
        let mut j = parse(br#"{"a":1}"#).unwrap();
        set(
            &mut j,
            &Path::parse(b"$[1]").unwrap().0,
            J::Num(b"5".to_vec()),
            SetMode::Set,
        );
        assert_eq!(j.text(), b"[{\"a\": 1}, 5]");
        let mut j = parse(br#"[1,2]"#).unwrap();
        array_insert(
            &mut j,
            &Path::parse(b"$[1]").unwrap().0,
            J::Str(b"x".to_vec()),
        );
        assert_eq!(j.text(), b"[1, \"x\", 2]");
        let m = merge_patch(
            parse(br#"{"a":1,"b":2}"#).unwrap(),
            parse(br#"{"a":null,"c":{"d":1}}"#).unwrap(),
        );
        assert_eq!(m.text(), b"{\"b\": 2, \"c\": {\"d\": 1}}");
        let m = merge_preserve(
            parse(br#"{"a":1}"#).unwrap(),
            parse(br#"{"a":2,"b":3}"#).unwrap(),
        );
        assert_eq!(m.text(), b"{\"a\": [1, 2], \"b\": 3}");
    }

    #[test]
    fn escapes_round_trip() {
        let s = "a\"b\\c\n\t\u{1}é".as_bytes();
        assert_eq!(escape(s), b"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9");
        assert_eq!(unescape(&escape(s)), s);
        assert_eq!(unescape(br"\ud83d\ude00"), "😀".as_bytes());
        assert_eq!(unescape(br"a\qb"), b"aqb");
    }
}
