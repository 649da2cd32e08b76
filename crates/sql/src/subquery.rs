//! What an uncorrelated subquery evaluates to for one execution of its
//! statement: a scalar, the set an IN tests against, or whether EXISTS
//! found a row. `select::exec` computes them before the statement reads its
//! first row and hands them to expressions through `Env::subquery`.
use rel::value::Value;
use std::cmp::Ordering;
use std::collections::HashSet;

/// How a subquery is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubKind {
    /// `(SELECT x ...)` as a value: at most one row of one column.
    Scalar,
    /// `v IN (SELECT x ...)`: one column, any number of rows.
    In,
    /// `EXISTS (SELECT ...)`: only whether a row exists.
    Exists,
    /// `(a, b) IN (SELECT x, y ...)`: this many columns, any number of rows.
    InRow(usize),
}

/// The value of one subquery for this execution.
#[derive(Debug, Clone)]
pub enum SubResult {
    Scalar(Value),
    Set(SubSet),
    Exists(bool),
    /// The rows of a row IN subquery.
    Rows(Vec<Vec<Value>>),
}

/// `(v1, v2, ..) IN (rows)` in three-valued logic (None is NULL), as MySQL
/// compares rows: a row matches when every pair is equal, is unknown when no
/// pair differs but one is NULL; `colls` are the pairs' collations.
pub fn row_in(
    vals: &[Value],
    rows: &[Vec<Value>],
    colls: &[Option<rel::collation::Collation>],
) -> Option<bool> {
    let mut unknown = false;
    for r in rows {
        let mut m = Some(true);
        for (i, (v, x)) in vals.iter().zip(r).enumerate() {
            if v.is_null() || x.is_null() {
                m = None;
            } else if crate::collate::cmp(v, x, colls.get(i).copied().flatten()) != Ordering::Equal
            {
                m = Some(false);
                break;
            }
        }
        match m {
            Some(true) => return Some(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(false)
    }
}

/// The rows of an IN subquery.
#[derive(Debug, Clone, Default)]
pub struct SubSet {
    values: Vec<Value>,
    /// Every non-NULL value is an integer: probes by integers hash.
    ints: Option<HashSet<i128>>,
    has_null: bool,
}

impl SubSet {
    /// A set from the subquery's single column.
    pub fn new(column: Vec<Value>) -> SubSet {
        let has_null = column.iter().any(|v| v.is_null());
        let values: Vec<Value> = column.into_iter().filter(|v| !v.is_null()).collect();
        let ints = values
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::UInt(_)))
            .then(|| values.iter().filter_map(|v| v.to_i128()).collect());
        SubSet {
            values,
            ints,
            has_null,
        }
    }

    /// `v IN (set)` in three-valued logic: None is NULL. An empty set holds
    /// nothing, not even NULL.
    pub fn contains(&self, v: &Value) -> Option<bool> {
        self.contains_coll(v, None)
    }

    /// `contains` with strings compared under `coll` when given.
    pub fn contains_coll(
        &self,
        v: &Value,
        coll: Option<rel::collation::Collation>,
    ) -> Option<bool> {
        if self.values.is_empty() && !self.has_null {
            return Some(false);
        }
        if v.is_null() {
            return None;
        }
        let found = match (&self.ints, v) {
            (Some(set), Value::Int(_) | Value::UInt(_)) => {
                v.to_i128().is_some_and(|i| set.contains(&i))
            }
            _ => self
                .values
                .iter()
                .any(|x| crate::collate::cmp(v, x, coll) == Ordering::Equal),
        };
        if found {
            Some(true)
        } else if self.has_null {
            None
        } else {
            Some(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_follows_three_valued_logic() {
        let s = SubSet::new(vec![Value::Int(1), Value::Int(3)]);
        assert_eq!(s.contains(&Value::Int(3)), Some(true));
        assert_eq!(s.contains(&Value::Int(2)), Some(false));
        assert_eq!(s.contains(&Value::Double(3.0)), Some(true));
        assert_eq!(s.contains(&Value::Bytes(b"1".to_vec())), Some(true));
        assert_eq!(s.contains(&Value::Null), None);
        let n = SubSet::new(vec![Value::Int(1), Value::Null]);
        assert_eq!(n.contains(&Value::Int(1)), Some(true));
        assert_eq!(n.contains(&Value::Int(2)), None);
        let e = SubSet::new(vec![]);
        assert_eq!(e.contains(&Value::Null), Some(false));
        let t = SubSet::new(vec![Value::Bytes(b"a".to_vec()), Value::Int(2)]);
        assert_eq!(t.contains(&Value::Bytes(b"a".to_vec())), Some(true));
        assert_eq!(t.contains(&Value::Int(2)), Some(true));
    }
}
