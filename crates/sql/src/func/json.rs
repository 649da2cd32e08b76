//! JSON text as MariaDB models it (a JSON value is a string): the parser
//! (MariaDB's grammar: `1.` is a number, any character may follow a `\`,
//! nesting is limited to 32 levels, so no recursion here is deeper than that),
//! the normalized writer (`[1, 2]`, `{"k": v}`; numbers and strings keep
//! their text as written), paths (`$`, `.key`, `."key"`, `.*`, `[n]`,
//! `[last-n]`, `[n to m]`, `[*]`, `**`; at most 31 steps) and what the
//! functions in `json_fn.rs` do to a parsed value: find, change, merge,
//! compare.
use std::cmp::Ordering;

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

/// An array index as written in a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idx {
    /// `[n]`.
    From(i64),
    /// `[last-n]` (and `[-n]`, which is `[last-(n-1)]`).
    Back(i64),
}

impl Idx {
    /// The position in an array of `len` elements (may be out of range).
    pub fn at(self, len: usize) -> i64 {
        match self {
            Idx::From(n) => n,
            Idx::Back(n) => len as i64 - 1 - n,
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `.key` or `."key"` (unescaped).
    Key(Vec<u8>),
    /// `.*`
    AnyKey,
    Index(Idx),
    /// `[n to m]`
    Range(Idx, Idx),
    /// `[*]`
    AnyIndex,
    /// `**`: any number of levels.
    Deep,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

/// Why a path does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PErr {
    Eos,
    Syntax(usize),
    /// More than 31 steps.
    Depth(usize),
}

/// The most steps a path may have (MariaDB: 32 levels including `$`).
const MAX_STEPS: usize = DEPTH_LIMIT - 1;

impl Path {
    pub fn parse(s: &[u8]) -> Result<Path, PErr> {
        let mut i = 0;
        let ws = |i: &mut usize| {
            while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
                *i += 1;
            }
        };
        ws(&mut i);
        match s.get(i) {
            None => return Err(PErr::Eos),
            Some(b'$') => i += 1,
            Some(_) => return Err(PErr::Syntax(i + 1)),
        }
        let mut steps = Vec::new();
        while i < s.len() {
            if steps.len() >= MAX_STEPS {
                return Err(PErr::Depth(i + 2));
            }
            match s[i] {
                b'.' => {
                    i += 1;
                    match s.get(i) {
                        None => return Err(PErr::Eos),
                        Some(b'*') => {
                            i += 1;
                            steps.push(Step::AnyKey);
                        }
                        Some(b'"') => {
                            i += 1;
                            let start = i;
                            loop {
                                match s.get(i) {
                                    None => return Err(PErr::Eos),
                                    Some(b'\\') => i += 2,
                                    Some(b'"') => break,
                                    Some(_) => i += 1,
                                }
                            }
                            steps.push(Step::Key(unescape(&s[start..i])));
                            i += 1;
                        }
                        Some(_) => {
                            let start = i;
                            while s
                                .get(i)
                                .is_some_and(|c| !matches!(c, b'.' | b'[' | b'*' | b' ' | b'\t'))
                            {
                                i += 1;
                            }
                            if i == start {
                                return Err(PErr::Syntax(i + 1));
                            }
                            steps.push(Step::Key(s[start..i].to_vec()));
                        }
                    }
                }
                b'[' => {
                    i += 1;
                    ws(&mut i);
                    if s.get(i) == Some(&b'*') {
                        i += 1;
                        ws(&mut i);
                        match s.get(i) {
                            None => return Err(PErr::Eos),
                            Some(b']') => i += 1,
                            Some(_) => return Err(PErr::Syntax(i + 1)),
                        }
                        steps.push(Step::AnyIndex);
                        continue;
                    }
                    let a = index(s, &mut i)?;
                    ws(&mut i);
                    let b = if s[i..].starts_with(b"to") {
                        i += 2;
                        ws(&mut i);
                        let b = index(s, &mut i)?;
                        ws(&mut i);
                        Some(b)
                    } else {
                        None
                    };
                    match s.get(i) {
                        None => return Err(PErr::Eos),
                        Some(b']') => i += 1,
                        Some(_) => return Err(PErr::Syntax(i + 1)),
                    }
                    steps.push(match b {
                        Some(b) => Step::Range(a, b),
                        None => Step::Index(a),
                    });
                }
                b'*' if s.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    if i >= s.len() {
                        return Err(PErr::Eos);
                    }
                    steps.push(Step::Deep);
                }
                _ => return Err(PErr::Syntax(i + 1)),
            }
        }
        Ok(Path(steps))
    }

    /// True when the path can match more than one value.
    pub fn wild(&self) -> bool {
        self.0.iter().any(|s| {
            matches!(
                s,
                Step::AnyKey | Step::AnyIndex | Step::Range(..) | Step::Deep
            )
        })
    }
}

/// `n`, `-n`, `last` or `last - n` inside brackets.
fn index(s: &[u8], i: &mut usize) -> Result<Idx, PErr> {
    let ws = |i: &mut usize| {
        while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    };
    let number = |i: &mut usize| -> Result<i64, PErr> {
        let start = *i;
        while s.get(*i).is_some_and(|c| c.is_ascii_digit()) {
            *i += 1;
        }
        if *i == start {
            return Err(if *i >= s.len() {
                PErr::Eos
            } else {
                PErr::Syntax(*i + 1)
            });
        }
        std::str::from_utf8(&s[start..*i])
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
            .ok_or(PErr::Syntax(start + 1))
    };
    if s[*i..].starts_with(b"last") {
        *i += 4;
        ws(i);
        if s.get(*i) == Some(&b'-') {
            *i += 1;
            ws(i);
            return Ok(Idx::Back(number(i)?));
        }
        return Ok(Idx::Back(0));
    }
    if s.get(*i) == Some(&b'-') {
        *i += 1;
        let n = number(i)?;
        return Ok(Idx::Back(n.saturating_sub(1)));
    }
    Ok(Idx::From(number(i)?))
}

/// True when the raw key `raw` names `key` (unescaped).
pub fn key_is(raw: &[u8], key: &[u8]) -> bool {
    if raw.contains(&b'\\') {
        unescape(raw) == key
    } else {
        raw == key
    }
}

/// Every value `steps` reaches from `j`, in document order. A scalar or an
/// object is its own element 0 (`$[0]`, `$[last]`).
pub fn find<'a>(j: &'a J, steps: &[Step], out: &mut Vec<&'a J>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(j);
        return;
    };
    match (step, j) {
        (Step::Key(k), J::Obj(m)) => {
            if let Some((_, v)) = m.iter().find(|(rk, _)| key_is(rk, k)) {
                find(v, rest, out);
            }
        }
        (Step::AnyKey, J::Obj(m)) => m.iter().for_each(|(_, v)| find(v, rest, out)),
        (Step::Index(i), J::Arr(a)) => {
            if let Some(v) = usize::try_from(i.at(a.len())).ok().and_then(|p| a.get(p)) {
                find(v, rest, out);
            }
        }
        (Step::Index(i), _) if i.at(1) == 0 => find(j, rest, out),
        (Step::Range(x, y), J::Arr(a)) => {
            let (from, to) = (x.at(a.len()).max(0), y.at(a.len()));
            for p in from..=to.min(a.len() as i64 - 1) {
                find(&a[p as usize], rest, out);
            }
        }
        (Step::AnyIndex, J::Arr(a)) => a.iter().for_each(|v| find(v, rest, out)),
        (Step::Deep, _) => {
            find(j, rest, out);
            match j {
                J::Arr(a) => a.iter().for_each(|v| find(v, steps, out)),
                J::Obj(m) => m.iter().for_each(|(_, v)| find(v, steps, out)),
                _ => {}
            }
        }
        _ => {}
    }
}

/// The value `steps` (no wildcards) reaches, for changing it.
pub fn find_mut<'a>(mut j: &'a mut J, steps: &[Step]) -> Option<&'a mut J> {
    for s in steps {
        j = match s {
            Step::Key(k) => match j {
                J::Obj(m) => &mut m.iter_mut().find(|(rk, _)| key_is(rk, k))?.1,
                _ => return None,
            },
            Step::Index(i) => {
                if let J::Arr(a) = j {
                    let p = usize::try_from(i.at(a.len())).ok()?;
                    a.get_mut(p)?
                } else if i.at(1) == 0 {
                    j
                } else {
                    return None;
                }
            }
            _ => return None,
        };
    }
    Some(j)
}

/// How JSON_SET, JSON_INSERT and JSON_REPLACE treat existing and missing values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetMode {
    Set,
    Insert,
    Replace,
}

/// JSON_SET/INSERT/REPLACE of one path (no wildcards) to `v`.
pub fn set(doc: &mut J, steps: &[Step], v: J, mode: SetMode) {
    let Some((last, parent)) = steps.split_last() else {
        if mode != SetMode::Insert {
            *doc = v;
        }
        return;
    };
    let Some(p) = find_mut(doc, parent) else {
        return;
    };
    match last {
        Step::Key(k) => {
            if let J::Obj(m) = p {
                match m.iter_mut().find(|(rk, _)| key_is(rk, k)) {
                    Some((_, old)) if mode != SetMode::Insert => *old = v,
                    Some(_) => {}
                    None if mode != SetMode::Replace => m.push((escape(k), v)),
                    None => {}
                }
            }
        }
        Step::Index(i) => {
            if let J::Arr(a) = p {
                let at = i.at(a.len());
                if at >= 0 && (at as usize) < a.len() {
                    if mode != SetMode::Insert {
                        a[at as usize] = v;
                    }
                } else if at >= 0 && mode != SetMode::Replace {
                    a.push(v);
                }
            } else {
                let at = i.at(1);
                if at == 0 {
                    if mode != SetMode::Insert {
                        *p = v;
                    }
                } else if at > 0 && mode != SetMode::Replace {
                    let old = std::mem::replace(p, J::Null);
                    *p = J::Arr(vec![old, v]);
                }
            }
        }
        _ => {}
    }
}

/// JSON_REMOVE of one path (no wildcards, not `$`).
pub fn remove(doc: &mut J, steps: &[Step]) {
    let Some((last, parent)) = steps.split_last() else {
        return;
    };
    let Some(p) = find_mut(doc, parent) else {
        return;
    };
    match (last, p) {
        (Step::Key(k), J::Obj(m)) => {
            if let Some(pos) = m.iter().position(|(rk, _)| key_is(rk, k)) {
                m.remove(pos);
            }
        }
        (Step::Index(i), J::Arr(a)) => {
            if let Ok(at) = usize::try_from(i.at(a.len())) {
                if at < a.len() {
                    a.remove(at);
                }
            }
        }
        _ => {}
    }
}

/// JSON_ARRAY_APPEND: onto an array, or wrapping a non-array with `v`.
pub fn array_append(doc: &mut J, steps: &[Step], v: J) {
    if let Some(t) = find_mut(doc, steps) {
        if let J::Arr(a) = t {
            a.push(v);
        } else {
            let old = std::mem::replace(t, J::Null);
            *t = J::Arr(vec![old, v]);
        }
    }
}

/// JSON_ARRAY_INSERT: `steps` ends in an index; inserts before it (or at the
/// end). False when the path does not end in an index.
pub fn array_insert(doc: &mut J, steps: &[Step], v: J) -> bool {
    let Some((Step::Index(i), parent)) = steps.split_last() else {
        return false;
    };
    if let Some(J::Arr(a)) = find_mut(doc, parent) {
        let at = i.at(a.len()).clamp(0, a.len() as i64) as usize;
        a.insert(at, v);
    }
    true
}

/// JSON_MERGE_PRESERVE of two values.
pub fn merge_preserve(a: J, b: J) -> J {
    match (a, b) {
        (J::Obj(mut x), J::Obj(y)) => {
            for (k, v) in y {
                let ku = unescape(&k);
                match x.iter_mut().find(|(rk, _)| key_is(rk, &ku)) {
                    Some((_, old)) => {
                        let o = std::mem::replace(old, J::Null);
                        *old = merge_preserve(o, v);
                    }
                    None => x.push((k, v)),
                }
            }
            J::Obj(x)
        }
        (J::Arr(mut x), J::Arr(y)) => {
            x.extend(y);
            J::Arr(x)
        }
        (J::Arr(mut x), y) => {
            x.push(y);
            J::Arr(x)
        }
        (x, J::Arr(y)) => {
            let mut v = vec![x];
            v.extend(y);
            J::Arr(v)
        }
        (x, y) => J::Arr(vec![x, y]),
    }
}

/// JSON_MERGE_PATCH of two values (RFC 7396).
pub fn merge_patch(a: J, b: J) -> J {
    match (a, b) {
        (J::Obj(mut x), J::Obj(y)) => {
            for (k, v) in y {
                let ku = unescape(&k);
                let pos = x.iter().position(|(rk, _)| key_is(rk, &ku));
                match (pos, v) {
                    (Some(p), J::Null) => {
                        x.remove(p);
                    }
                    (None, J::Null) => {}
                    (Some(p), v) => {
                        let o = std::mem::replace(&mut x[p].1, J::Null);
                        x[p].1 = merge_patch(o, v);
                    }
                    (None, v) => x.push((k, merge_patch(J::Obj(Vec::new()), v))),
                }
            }
            J::Obj(x)
        }
        (_, J::Obj(y)) => merge_patch(J::Obj(Vec::new()), J::Obj(y)),
        (_, y) => y,
    }
}

/// Two scalars equal as JSON values (numbers by value, strings unescaped).
pub fn scalar_eq(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Num(x), J::Num(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (J::Str(x), J::Str(y)) => x == y || unescape(x) == unescape(y),
        (J::Null, J::Null) => true,
        (J::Bool(x), J::Bool(y)) => x == y,
        _ => false,
    }
}

fn num_cmp(x: &[u8], y: &[u8]) -> Option<Ordering> {
    if x == y {
        return Some(Ordering::Equal);
    }
    let p = |s: &[u8]| std::str::from_utf8(s).ok()?.parse::<f64>().ok();
    p(x)?.partial_cmp(&p(y)?)
}

/// JSON_CONTAINS: whether `target` contains `cand` (MySQL's rules: an array
/// contains each element of an array candidate, an object each member of an
/// object candidate, and a non-array candidate found in any element).
pub fn contains(target: &J, cand: &J) -> bool {
    match (target, cand) {
        (J::Arr(t), J::Arr(c)) => c.iter().all(|x| t.iter().any(|y| contains(y, x))),
        (J::Arr(t), c) => t.iter().any(|y| contains(y, c)),
        (J::Obj(t), J::Obj(c)) => c.iter().all(|(k, v)| {
            let ku = unescape(k);
            t.iter()
                .find(|(rk, _)| key_is(rk, &ku))
                .is_some_and(|(_, tv)| contains(tv, v))
        }),
        (J::Obj(_), _) | (_, J::Obj(_)) | (_, J::Arr(_)) => false,
        (t, c) => scalar_eq(t, c),
    }
}

/// The text of a path to a value, as JSON_SEARCH prints it (`$[0].key`).
pub fn path_text(steps: &[(Option<usize>, &[u8])]) -> Vec<u8> {
    let mut out = b"$".to_vec();
    for (i, k) in steps {
        match i {
            Some(i) => out.extend_from_slice(format!("[{i}]").as_bytes()),
            None => {
                out.push(b'.');
                let plain = !k.is_empty()
                    && k.iter()
                        .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80);
                if plain {
                    out.extend_from_slice(k);
                } else {
                    out.push(b'"');
                    out.extend_from_slice(k);
                    out.push(b'"');
                }
            }
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
