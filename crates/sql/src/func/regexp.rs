//! Regular expressions: `s REGEXP p` / `RLIKE` (bound as `Func::Regexp`),
//! REGEXP_LIKE, REGEXP_REPLACE, REGEXP_SUBSTR and REGEXP_INSTR with MySQL's
//! optional position / occurrence / return-option / match-type arguments.
//! Patterns are compiled by the `regex` crate (linear time: no backreferences
//! in patterns) and cached per thread. Matching is case-insensitive, as with
//! MySQL's default case-insensitive collation, unless the match type says `c`.
//! Positions count characters. A bad pattern is error 1139, as MariaDB reports it.
use super::{arg, int_arg, too_large, Func};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr};
use regex::bytes::{Regex, RegexBuilder};
use rel::value::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// Compiled patterns kept per thread: (pattern, flags) → regex.
const CACHE: usize = 64;

thread_local! {
    static COMPILED: RefCell<HashMap<(Vec<u8>, String), Regex>> = RefCell::new(HashMap::new());
}

/// The regex for `pattern` under MySQL match-type letters (`c`, `i`, `m`, `n`, `u`).
fn compile(pattern: &[u8], match_type: &str) -> Result<Regex> {
    let key = (pattern.to_vec(), match_type.to_string());
    if let Some(r) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    let text = std::str::from_utf8(pattern)
        .map_err(|_| SqlError::regexp("the pattern is not valid UTF-8"))?;
    let mut b = RegexBuilder::new(text);
    b.case_insensitive(true).size_limit(8 << 20);
    for c in match_type.chars() {
        match c {
            'c' => b.case_insensitive(false),
            'i' => b.case_insensitive(true),
            'm' => b.multi_line(true),
            'n' => b.dot_matches_new_line(true),
            'u' => &mut b,
            other => return Err(SqlError::regexp(format!("unknown match type '{other}'"))),
        };
    }
    let r = b
        .build()
        .map_err(|e| SqlError::regexp(first_line(&e.to_string())))?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE {
            c.clear();
        }
        c.insert(key, r.clone());
    });
    Ok(r)
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_string()
}

/// Byte offset of the `pos`-th character (1-based); None past the end + 1.
fn char_offset(s: &[u8], pos: i64) -> Option<usize> {
    if pos < 1 {
        return None;
    }
    let mut n = 1;
    for (i, _) in String::from_utf8_lossy(s).char_indices() {
        if n == pos {
            return Some(i);
        }
        n += 1;
    }
    (n == pos).then_some(s.len())
}

/// Characters in `s[..off]` (plus one: a 1-based position).
fn char_pos(s: &[u8], off: usize) -> i64 {
    String::from_utf8_lossy(&s[..off]).chars().count() as i64 + 1
}

/// The optional text argument `i` (a match type); "" when absent.
fn opt_text(args: &[Expr], i: usize, row: &[Value], env: &dyn Env) -> Result<Option<String>> {
    if args.len() <= i {
        return Ok(Some(String::new()));
    }
    let v = arg(args, i, row, env)?;
    Ok((!v.is_null()).then(|| String::from_utf8_lossy(&v.text()).into_owned()))
}

/// The optional integer argument `i`, `default` when absent.
fn opt_int(
    args: &[Expr],
    i: usize,
    default: i64,
    row: &[Value],
    env: &dyn Env,
) -> Result<Option<i64>> {
    if args.len() <= i {
        return Ok(Some(default));
    }
    int_arg(args, i, row, env)
}

pub(super) fn call(f: Func, args: &[Expr], row: &[Value], env: &dyn Env) -> Result<Value> {
    let (min, max) = match f {
        Func::Regexp => (2, 2),
        Func::RegexpLike => (2, 3),
        Func::RegexpReplace => (3, 6),
        Func::RegexpSubstr => (2, 5),
        _ => (2, 6),
    };
    if args.len() < min || args.len() > max {
        return Err(SqlError::wrong_param_count());
    }
    let s = arg(args, 0, row, env)?;
    let p = arg(args, 1, row, env)?;
    if s.is_null() || p.is_null() {
        return Ok(Value::Null);
    }
    let (s, p) = (s.text(), p.text());
    // The match type is the last optional argument of each function.
    let mt_at = match f {
        Func::RegexpLike => 2,
        Func::RegexpReplace => 5,
        Func::RegexpSubstr => 4,
        Func::RegexpInstr => 5,
        _ => usize::MAX,
    };
    let Some(mt) = opt_text(args, mt_at, row, env)? else {
        return Ok(Value::Null);
    };
    let re = compile(&p, &mt)?;
    Ok(match f {
        Func::Regexp | Func::RegexpLike => Value::Int(re.is_match(&s) as i64),
        Func::RegexpReplace => {
            let Some(repl) = Some(arg(args, 2, row, env)?).filter(|v| !v.is_null()) else {
                return Ok(Value::Null);
            };
            let (Some(pos), Some(occ)) = (
                opt_int(args, 3, 1, row, env)?,
                opt_int(args, 4, 0, row, env)?,
            ) else {
                return Ok(Value::Null);
            };
            let Some(start) = char_offset(&s, pos) else {
                return Err(SqlError::regexp("the position is out of range"));
            };
            let repl = replacement(&repl.text());
            let mut out = s[..start].to_vec();
            let mut last = start;
            for (n, caps) in re.captures_iter(&s[start..]).enumerate() {
                let Some(m) = caps.get(0) else { continue };
                if occ > 0 && n as i64 + 1 != occ {
                    continue;
                }
                out.extend_from_slice(&s[last..start + m.start()]);
                caps.expand(&repl, &mut out);
                last = start + m.end();
                if out.len() > super::max_string(env) {
                    return Ok(too_large(f, env));
                }
                if occ > 0 {
                    break;
                }
            }
            out.extend_from_slice(&s[last..]);
            Value::Bytes(out)
        }
        Func::RegexpSubstr | Func::RegexpInstr => {
            let (Some(pos), Some(occ)) = (
                opt_int(args, 2, 1, row, env)?,
                opt_int(args, 3, 1, row, env)?,
            ) else {
                return Ok(Value::Null);
            };
            let Some(ret) = (if f == Func::RegexpInstr {
                opt_int(args, 4, 0, row, env)?
            } else {
                Some(0)
            }) else {
                return Ok(Value::Null);
            };
            let Some(start) = char_offset(&s, pos) else {
                return Err(SqlError::regexp("the position is out of range"));
            };
            let hit = re
                .find_iter(&s[start..])
                .nth(occ.max(1) as usize - 1)
                .map(|m| (start + m.start(), start + m.end()));
            match (f, hit) {
                (Func::RegexpSubstr, Some((a, b))) => Value::Bytes(s[a..b].to_vec()),
                (Func::RegexpSubstr, None) => Value::Null,
                (_, Some((a, b))) => Value::Int(char_pos(&s, if ret == 0 { a } else { b })),
                (_, None) => Value::Int(0),
            }
        }
        _ => {
            return Err(SqlError::internal(format!(
                "{f:?} is not a regexp function"
            )))
        }
    })
}

/// A replacement string with `\N` and `$N` group references, in the `regex`
/// crate's `${N}` form (other `$` are literal).
fn replacement(r: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(r.len());
    let mut i = 0;
    while i < r.len() {
        let c = r[i];
        let next = r.get(i + 1).copied();
        match (c, next) {
            (b'\\' | b'$', Some(d)) if d.is_ascii_digit() => {
                out.extend_from_slice(format!("${{{}}}", d - b'0').as_bytes());
                i += 2;
            }
            (b'\\', Some(n)) => {
                if n == b'$' {
                    out.extend_from_slice(b"$$");
                } else {
                    out.push(n);
                }
                i += 2;
            }
            (b'$', _) => {
                out.extend_from_slice(b"$$");
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_groups_and_literals() {
        assert_eq!(replacement(b"x\\1y$2"), b"x${1}y${2}".to_vec());
        assert_eq!(replacement(b"a$b\\$"), b"a$$b$$".to_vec());
        assert_eq!(char_offset("héllo".as_bytes(), 3), Some(3));
        assert_eq!(char_offset(b"ab", 3), Some(2));
        assert_eq!(char_offset(b"ab", 4), None);
        assert_eq!(char_pos("héllo".as_bytes(), 3), 3);
    }

    #[test]
    fn case_insensitive_unless_c() {
        assert!(compile(b"B", "").unwrap().is_match(b"abc"));
        assert!(!compile(b"B", "c").unwrap().is_match(b"abc"));
        assert!(compile(b"(", "").is_err());
        assert!(compile(b"a", "z").is_err());
    }
}
