//! What the JSON functions do to a parsed document: set, insert, replace
//! and remove at a path, array append/insert, the two merges, and the
//! comparisons of JSON_CONTAINS.
use super::{escape, find_mut, key_is, unescape, Step, J};
use std::cmp::Ordering;

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
