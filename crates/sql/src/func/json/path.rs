//! JSON paths (`$`, `.key`, `."key"`, `.*`, `[n]`, `[last-n]`, `[n to m]`,
//! `[*]`, `**`; at most 31 steps): their parser, finding the values a path
//! reaches in a parsed document, and a found value's path as text.
use super::{unescape, DEPTH_LIMIT, J};

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
