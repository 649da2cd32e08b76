//! The JSON functions over JSON text (MariaDB's model: arguments and results
//! are strings): JSON_VALID, JSON_EXTRACT (and MySQL's `->`/`->>`),
//! JSON_UNQUOTE, JSON_QUOTE, JSON_OBJECT, JSON_ARRAY, JSON_CONTAINS,
//! JSON_CONTAINS_PATH, JSON_LENGTH, JSON_DEPTH, JSON_KEYS, JSON_TYPE,
//! JSON_SET/INSERT/REPLACE/REMOVE, JSON_ARRAY_APPEND/INSERT,
//! JSON_MERGE_PRESERVE/PATCH and JSON_SEARCH. Invalid JSON or paths give
//! NULL with MariaDB's warning (4036-4051). An argument that is itself a
//! JSON function's result is embedded as JSON; a comparison's result is
//! `true`/`false`; any other string is quoted.
use super::json::{self, JErr, PErr, Path, SetMode, Step, J};
use super::{arg, Func};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Env, Expr};
use rel::value::Value;

impl Func {
    /// True for the functions whose result is JSON (embedded unquoted when
    /// an argument of another JSON function).
    pub fn returns_json(&self) -> bool {
        matches!(
            self,
            Func::JsonExtract
                | Func::JsonObject
                | Func::JsonArray
                | Func::JsonSet
                | Func::JsonInsert
                | Func::JsonReplace
                | Func::JsonRemove
                | Func::JsonArrayAppend
                | Func::JsonArrayInsert
                | Func::JsonMergePreserve
                | Func::JsonMergePatch
        )
    }

    /// True for the JSON functions whose value arguments keep their type
    /// (a truth value becomes `true`/`false`).
    pub fn json_args_typed(&self) -> bool {
        matches!(
            self,
            Func::JsonObject
                | Func::JsonArray
                | Func::JsonSet
                | Func::JsonInsert
                | Func::JsonReplace
                | Func::JsonArrayAppend
                | Func::JsonArrayInsert
        )
    }

    fn json_name(&self) -> &'static str {
        match self {
            Func::JsonValid => "json_valid",
            Func::JsonExtract => "json_extract",
            Func::JsonUnquote => "json_unquote",
            Func::JsonQuote => "json_quote",
            Func::JsonObject => "json_object",
            Func::JsonArray => "json_array",
            Func::JsonContains => "json_contains",
            Func::JsonContainsPath => "json_contains_path",
            Func::JsonLength => "json_length",
            Func::JsonDepth => "json_depth",
            Func::JsonKeys => "json_keys",
            Func::JsonType => "json_type",
            Func::JsonSet => "json_set",
            Func::JsonInsert => "json_insert",
            Func::JsonReplace => "json_replace",
            Func::JsonRemove => "json_remove",
            Func::JsonArrayAppend => "json_array_append",
            Func::JsonArrayInsert => "json_array_insert",
            Func::JsonMergePreserve => "json_merge_preserve",
            Func::JsonMergePatch => "json_merge_patch",
            Func::JsonSearch => "json_search",
            _ => "json",
        }
    }
}

/// A string's bytes as JSON string contents.
pub(crate) fn escape(s: &[u8]) -> Vec<u8> {
    json::escape(s)
}

fn warn_json(env: &dyn Env, e: JErr, n: usize, f: &Func) {
    let name = f.json_name();
    let w = json_error(e, n, name);
    // JSON_VALID answers 0: its reasons are notes.
    if *f == Func::JsonValid {
        env.note(w);
    } else {
        env.warn(w);
    }
}

fn json_error(e: JErr, n: usize, f: &str) -> SqlError {
    match e {
        JErr::Eos => SqlError::json_eos(n, f),
        JErr::Syntax(p) => SqlError::json_syntax(n, f, p),
        JErr::BadChar(p) => SqlError::json_bad_char(n, f, p),
        JErr::Depth(p) => SqlError::json_depth(n, f, p),
    }
}

fn warn_path(env: &dyn Env, e: PErr, n: usize, f: &Func) {
    let f = f.json_name();
    env.warn(match e {
        PErr::Eos => SqlError::json_path_eos(n, f),
        PErr::Syntax(p) => SqlError::json_path_syntax(n, f, p),
        PErr::Depth(p) => SqlError::json_path_depth(n, f, p),
    });
}

/// True when `e`'s result is JSON.
fn is_json(e: &Expr) -> bool {
    matches!(e, Expr::Func(f, _) if f.returns_json())
}

/// True when `e` is a truth value (printed as `true`/`false`).
pub(crate) fn is_bool(e: &Expr) -> bool {
    match e {
        Expr::Bin(op, ..) => matches!(
            op,
            BinOp::Eq
                | BinOp::NullSafeEq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
        ),
        Expr::Not(_)
        | Expr::IsNull(..)
        | Expr::IsBool(..)
        | Expr::In(..)
        | Expr::Between(..)
        | Expr::Like(..)
        | Expr::Exists(..)
        | Expr::InSubquery(..) => true,
        Expr::Collated(_, x) => is_bool(x),
        _ => false,
    }
}

/// Argument `i` as JSON text to embed (JSON_OBJECT, JSON_ARRAY, aggregates).
pub(crate) fn append_value(e: &Expr, v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Int(i) if is_bool(e) => {
            out.extend_from_slice(if *i != 0 { b"true" } else { b"false" })
        }
        v if v.is_numeric() => v.to_text(out),
        v if is_json(e) => out.extend_from_slice(&v.text()),
        v => {
            out.push(b'"');
            out.extend_from_slice(&json::escape(&v.text()));
            out.push(b'"');
        }
    }
}

/// Argument value `v` of `e` as a parsed JSON value (JSON_SET's values).
fn to_j(e: &Expr, v: Value, n: usize, f: &Func, env: &dyn Env) -> Option<J> {
    Some(match v {
        Value::Null => J::Null,
        Value::Int(i) if is_bool(e) => J::Bool(i != 0),
        v if v.is_numeric() => J::Num(v.text()),
        v if is_json(e) => match json::parse(&v.text()) {
            Ok(j) => j,
            Err(err) => {
                warn_json(env, err, n, f);
                return None;
            }
        },
        v => J::Str(json::escape(&v.text())),
    })
}

struct Call<'a> {
    f: &'a Func,
    args: &'a [Expr],
    row: &'a [Value],
    env: &'a dyn Env,
}

impl Call<'_> {
    fn val(&self, i: usize) -> Result<Value> {
        arg(self.args, i, self.row, self.env)
    }

    /// Argument `i` parsed as JSON; None for NULL or invalid (warned).
    fn doc(&self, i: usize) -> Result<Option<J>> {
        let v = self.val(i)?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(match json::parse(&v.text()) {
            Ok(j) => Some(j),
            Err(e) => {
                warn_json(self.env, e, i + 1, self.f);
                None
            }
        })
    }

    /// Argument `i` as a path; None for NULL or invalid (warned), or for a
    /// wildcard when `wild` is false (warned).
    fn path(&self, i: usize, wild: bool) -> Result<Option<Path>> {
        let v = self.val(i)?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(match Path::parse(&v.text()) {
            Ok(p) if !wild && p.wild() => {
                self.env
                    .warn(SqlError::json_path_wildcard(i + 1, self.f.json_name()));
                None
            }
            Ok(p) => Some(p),
            Err(e) => {
                warn_path(self.env, e, i + 1, self.f);
                None
            }
        })
    }

    /// "one" (false) or "all" (true) in argument `i`.
    fn one_or_all(&self, i: usize) -> Result<Option<bool>> {
        let v = self.val(i)?;
        if v.is_null() {
            return Ok(None);
        }
        let t = v.text();
        if t.eq_ignore_ascii_case(b"one") {
            Ok(Some(false))
        } else if t.eq_ignore_ascii_case(b"all") {
            Ok(Some(true))
        } else {
            self.env.warn(SqlError::json_one_or_all(self.f.json_name()));
            Ok(None)
        }
    }
}

fn text(j: &J) -> Value {
    Value::Bytes(j.text())
}

fn int(b: bool) -> Value {
    Value::Int(b as i64)
}

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let n = args.len();
    let arity_ok = match f {
        Func::JsonValid
        | Func::JsonUnquote
        | Func::JsonQuote
        | Func::JsonDepth
        | Func::JsonType => n == 1,
        Func::JsonExtract | Func::JsonRemove => n >= 2,
        Func::JsonObject => n.is_multiple_of(2),
        Func::JsonArray => true,
        Func::JsonContains => (2..=3).contains(&n),
        Func::JsonContainsPath | Func::JsonSearch => n >= 3,
        Func::JsonLength | Func::JsonKeys => (1..=2).contains(&n),
        Func::JsonSet
        | Func::JsonInsert
        | Func::JsonReplace
        | Func::JsonArrayAppend
        | Func::JsonArrayInsert => n >= 3 && n % 2 == 1,
        Func::JsonMergePreserve | Func::JsonMergePatch => n >= 2,
        _ => false,
    };
    if !arity_ok {
        return Err(SqlError::wrong_param_count_to(f.json_name()));
    }
    let c = Call {
        f: &f,
        args,
        row,
        env,
    };
    Ok(match &f {
        Func::JsonValid => {
            let v = c.val(0)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            match json::parse(&v.text()) {
                Ok(_) => int(true),
                Err(e) => {
                    warn_json(env, e, 1, &f);
                    int(false)
                }
            }
        }
        Func::JsonType => match c.doc(0)? {
            Some(j) => Value::Bytes(j.type_name().as_bytes().to_vec()),
            None => Value::Null,
        },
        Func::JsonDepth => match c.doc(0)? {
            Some(j) => Value::Int(j.depth() as i64),
            None => Value::Null,
        },
        Func::JsonQuote => match c.val(0)? {
            Value::Bytes(b) => {
                let mut out = b"\"".to_vec();
                out.extend_from_slice(&json::escape(&b));
                out.push(b'"');
                Value::Bytes(out)
            }
            _ => Value::Null,
        },
        Func::JsonUnquote => {
            let v = c.val(0)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let t = v.text();
            if !t.trim_ascii_start().starts_with(b"\"") {
                return Ok(Value::Bytes(t));
            }
            match json::parse(&t) {
                Ok(J::Str(raw)) => Value::Bytes(json::unescape(&raw)),
                Ok(_) => Value::Bytes(t),
                Err(e) => {
                    warn_json(env, e, 1, &f);
                    Value::Bytes(t)
                }
            }
        }
        Func::JsonObject => {
            let mut out = b"{".to_vec();
            for i in (0..n).step_by(2) {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                let k = c.val(i)?;
                out.push(b'"');
                if !k.is_null() {
                    out.extend_from_slice(&json::escape(&k.text()));
                }
                out.extend_from_slice(b"\": ");
                append_value(&args[i + 1], &c.val(i + 1)?, &mut out);
            }
            out.push(b'}');
            Value::Bytes(out)
        }
        Func::JsonArray => {
            let mut out = b"[".to_vec();
            for (i, e) in args.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                append_value(e, &c.val(i)?, &mut out);
            }
            out.push(b']');
            Value::Bytes(out)
        }
        Func::JsonExtract => {
            let Some(d) = c.doc(0)? else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            let mut wrap = n > 2;
            for i in 1..n {
                let Some(p) = c.path(i, true)? else {
                    return Ok(Value::Null);
                };
                wrap |= p.wild();
                json::find(&d, &p.0, &mut found);
            }
            match (found.first(), wrap) {
                (None, _) => Value::Null,
                (Some(j), false) => text(j),
                (Some(_), true) => text(&J::Arr(found.into_iter().cloned().collect())),
            }
        }
        Func::JsonLength | Func::JsonKeys => {
            let Some(d) = c.doc(0)? else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            if n > 1 {
                let Some(p) = c.path(1, false)? else {
                    return Ok(Value::Null);
                };
                json::find(&d, &p.0, &mut found);
            } else {
                found.push(&d);
            }
            match (&f, found.first()) {
                (_, None) => Value::Null,
                (Func::JsonLength, Some(j)) => Value::Int(j.length() as i64),
                (_, Some(J::Obj(m))) => {
                    let keys = m.iter().map(|(k, _)| J::Str(k.clone())).collect();
                    text(&J::Arr(keys))
                }
                _ => Value::Null,
            }
        }
        Func::JsonContains => {
            let (Some(d), Some(cand)) = (c.doc(0)?, c.doc(1)?) else {
                return Ok(Value::Null);
            };
            let target = if n > 2 {
                let Some(p) = c.path(2, false)? else {
                    return Ok(Value::Null);
                };
                let mut found = Vec::new();
                json::find(&d, &p.0, &mut found);
                match found.first() {
                    Some(t) => (*t).clone(),
                    None => return Ok(int(false)),
                }
            } else {
                d
            };
            int(json::contains(&target, &cand))
        }
        Func::JsonContainsPath => {
            let Some(d) = c.doc(0)? else {
                return Ok(Value::Null);
            };
            let Some(all) = c.one_or_all(1)? else {
                return Ok(Value::Null);
            };
            let mut hits = Vec::new();
            for i in 2..n {
                let Some(p) = c.path(i, true)? else {
                    return Ok(Value::Null);
                };
                let mut found = Vec::new();
                json::find(&d, &p.0, &mut found);
                hits.push(!found.is_empty());
            }
            int(if all {
                hits.iter().all(|h| *h)
            } else {
                hits.iter().any(|h| *h)
            })
        }
        Func::JsonSet
        | Func::JsonInsert
        | Func::JsonReplace
        | Func::JsonArrayAppend
        | Func::JsonArrayInsert => {
            let Some(mut d) = c.doc(0)? else {
                return Ok(Value::Null);
            };
            for i in (1..n).step_by(2) {
                let Some(p) = c.path(i, false)? else {
                    return Ok(Value::Null);
                };
                let Some(v) = to_j(&args[i + 1], c.val(i + 1)?, i + 2, &f, env) else {
                    return Ok(Value::Null);
                };
                match &f {
                    Func::JsonSet => json::set(&mut d, &p.0, v, SetMode::Set),
                    Func::JsonInsert => json::set(&mut d, &p.0, v, SetMode::Insert),
                    Func::JsonReplace => json::set(&mut d, &p.0, v, SetMode::Replace),
                    Func::JsonArrayAppend => json::array_append(&mut d, &p.0, v),
                    _ => {
                        if !json::array_insert(&mut d, &p.0, v) {
                            return Ok(Value::Null);
                        }
                    }
                }
            }
            text(&d)
        }
        Func::JsonRemove => {
            let Some(mut d) = c.doc(0)? else {
                return Ok(Value::Null);
            };
            for i in 1..n {
                let Some(p) = c.path(i, false)? else {
                    return Ok(Value::Null);
                };
                if p.0.is_empty() {
                    env.warn(SqlError::json_path_dollar(i + 1, f.json_name()));
                    return Ok(Value::Null);
                }
                json::remove(&mut d, &p.0);
            }
            text(&d)
        }
        Func::JsonMergePreserve | Func::JsonMergePatch => {
            let mut acc: Option<J> = None;
            for i in 0..n {
                let Some(j) = c.doc(i)? else {
                    return Ok(Value::Null);
                };
                acc = Some(match acc {
                    None => j,
                    Some(a) if f == Func::JsonMergePatch => json::merge_patch(a, j),
                    Some(a) => json::merge_preserve(a, j),
                });
            }
            acc.as_ref().map_or(Value::Null, text)
        }
        Func::JsonSearch => search(&c)?,
        _ => return Err(SqlError::internal(format!("{f:?} is not a JSON function"))),
    })
}

/// A step of a concrete path: an index (with its array's length) or a key.
type Here<'a> = (Option<usize>, usize, &'a [u8]);

/// True when `p` matches a prefix of the concrete path `h`.
fn path_prefix(p: &[Step], h: &[Here]) -> bool {
    let Some((s, rest)) = p.split_first() else {
        return true;
    };
    if *s == Step::Deep {
        return (0..=h.len()).any(|k| path_prefix(rest, &h[k..]));
    }
    let Some(((idx, len, key), hrest)) = h.split_first() else {
        return false;
    };
    let ok = match (s, idx) {
        (Step::Key(k), None) => json::key_is(key, k),
        (Step::AnyKey, None) => true,
        (Step::Index(i), Some(x)) => i.at(*len) == *x as i64,
        (Step::Range(a, b), Some(x)) => (a.at(*len)..=b.at(*len)).contains(&(*x as i64)),
        (Step::AnyIndex, Some(_)) => true,
        _ => false,
    };
    ok && path_prefix(rest, hrest)
}

/// JSON_SEARCH(doc, 'one'|'all', pattern[, escape[, path...]]): the paths of
/// the strings that match the LIKE pattern (under the default collation).
fn search(c: &Call) -> Result<Value> {
    let Some(d) = c.doc(0)? else {
        return Ok(Value::Null);
    };
    let Some(all) = c.one_or_all(1)? else {
        return Ok(Value::Null);
    };
    let pat = c.val(2)?;
    if pat.is_null() {
        return Ok(Value::Null);
    }
    let pat = pat.text();
    let esc = if c.args.len() > 3 {
        match c.val(3)?.text().first() {
            Some(e) => *e,
            None => b'\\',
        }
    } else {
        b'\\'
    };
    let mut paths = Vec::new();
    for i in 4..c.args.len() {
        let Some(p) = c.path(i, true)? else {
            return Ok(Value::Null);
        };
        paths.push(p);
    }
    let mut hits: Vec<Vec<u8>> = Vec::new();
    let mut here: Vec<Here> = Vec::new();
    walk(&d, &mut here, &mut |h, s| {
        if !all && !hits.is_empty() {
            return;
        }
        if !paths.is_empty() && !paths.iter().any(|p| path_prefix(&p.0, h)) {
            return;
        }
        let u = json::unescape(s);
        if crate::collate::like_chars(&u, &pat, esc, rel::collation::Collation::DEFAULT) {
            let steps: Vec<(Option<usize>, &[u8])> = h.iter().map(|(i, _, k)| (*i, *k)).collect();
            hits.push(json::path_text(&steps));
        }
    });
    Ok(match hits.len() {
        0 => Value::Null,
        1 => text(&J::Str(hits.remove(0))),
        _ => text(&J::Arr(hits.into_iter().map(J::Str).collect())),
    })
}

/// Calls `f` with the concrete path of every string in `j`, in document order.
fn walk<'a>(j: &'a J, here: &mut Vec<Here<'a>>, f: &mut dyn FnMut(&[Here], &[u8])) {
    match j {
        J::Str(s) => f(here, s),
        J::Arr(a) => {
            for (i, v) in a.iter().enumerate() {
                here.push((Some(i), a.len(), b""));
                walk(v, here, f);
                here.pop();
            }
        }
        J::Obj(m) => {
            for (k, v) in m {
                here.push((None, 0, k));
                walk(v, here, f);
                here.pop();
            }
        }
        _ => {}
    }
}
