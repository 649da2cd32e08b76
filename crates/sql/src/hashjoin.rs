//! Hash lookups into a derived table's materialized rows, for the join
//! conditions `derived.col = <earlier tables' expression>`. A key image
//! is equal for values that compare equal (numbers as doubles, strings
//! without trailing spaces, each temporal kind as itself), so a lookup
//! never misses a match; it may return extra rows (the full condition is
//! still evaluated). A probe whose kind differs from the values stored in
//! that column (a number against strings: '01' = 1) cannot hash and scans.
use rel::value::Value;
use std::collections::HashMap;

/// How a column's values compare: values of one domain hash consistently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Domain {
    Number,
    Bytes,
    Date,
    DateTime,
    Time,
}

fn domain(v: &Value) -> Option<Domain> {
    Some(match v {
        Value::Null => return None,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => Domain::Number,
        Value::Bytes(_) => Domain::Bytes,
        Value::Date(_) => Domain::Date,
        Value::DateTime(_) => Domain::DateTime,
        Value::Time(_) => Domain::Time,
    })
}

/// Appends `v`'s key image (a NULL has none: it equals nothing).
fn image(v: &Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => return false,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => {
            let d = v.to_f64().unwrap_or(0.0);
            let d = if d == 0.0 { 0.0 } else { d };
            out.push(1);
            out.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        Value::Bytes(b) => {
            let t: &[u8] = b;
            out.push(2);
            out.extend_from_slice(&(t.len() as u32).to_le_bytes());
            out.extend_from_slice(t);
        }
        other => {
            out.push(3);
            out.extend_from_slice(&other.text());
            out.push(0);
        }
    }
    true
}

/// Rows of a derived table indexed on some of its columns.
#[derive(Debug, Default)]
pub struct HashIndex {
    cols: Vec<usize>,
    /// Per key column: the one domain of its non-NULL values (None: mixed).
    domains: Vec<Option<Option<Domain>>>,
    map: HashMap<Vec<u8>, Vec<u32>>,
}

/// What a probe found.
pub enum Probe<'a> {
    /// Only these rows can match.
    Rows(&'a [u32]),
    /// Nothing can match (a NULL key, or no row with this key).
    None,
    /// The probe cannot hash: every row is a candidate.
    All,
}

impl HashIndex {
    /// Indexes `rows` on columns `cols`.
    pub fn build(rows: &[Vec<Value>], cols: Vec<usize>) -> HashIndex {
        let mut domains: Vec<Option<Option<Domain>>> = vec![Some(None); cols.len()];
        let mut map: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let mut key = Vec::new();
        'rows: for (i, r) in rows.iter().enumerate() {
            key.clear();
            for (k, &c) in cols.iter().enumerate() {
                let v = r.get(c).unwrap_or(&Value::Null);
                if let Some(d) = domain(v) {
                    domains[k] = match domains[k] {
                        Some(None) => Some(Some(d)),
                        Some(Some(s)) if s != d => None,
                        same => same,
                    };
                }
                if !image(v, &mut key) {
                    continue 'rows;
                }
            }
            map.entry(key.clone()).or_default().push(i as u32);
        }
        HashIndex { cols, domains, map }
    }

    /// The candidate rows for key values `probe` (one per indexed column).
    pub fn probe(&self, probe: &[Value]) -> Probe<'_> {
        let mut key = Vec::new();
        for (k, v) in probe.iter().enumerate() {
            let Some(d) = domain(v) else {
                return Probe::None;
            };
            match self.domains.get(k) {
                Some(Some(None)) => return Probe::None, // only NULLs stored
                Some(Some(Some(s))) if *s == d => {}
                _ => return Probe::All,
            }
            image(v, &mut key);
        }
        match self.map.get(&key) {
            Some(rows) => Probe::Rows(rows),
            None => Probe::None,
        }
    }

    /// The indexed columns.
    pub fn columns(&self) -> &[usize] {
        &self.cols
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(p: Probe<'_>) -> Option<Vec<u32>> {
        match p {
            Probe::Rows(r) => Some(r.to_vec()),
            Probe::None => Some(vec![]),
            Probe::All => None,
        }
    }

    #[test]
    fn equal_values_share_a_key() {
        let rows = vec![
            vec![Value::Int(1), Value::Bytes(b"a".to_vec())],
            vec![Value::Decimal(15, 1), Value::Bytes(b"a ".to_vec())],
            vec![Value::Null, Value::Bytes(b"b".to_vec())],
        ];
        let ix = HashIndex::build(&rows, vec![0]);
        assert_eq!(rows_of(ix.probe(&[Value::Double(1.0)])), Some(vec![0]));
        assert_eq!(rows_of(ix.probe(&[Value::Double(1.5)])), Some(vec![1]));
        assert_eq!(rows_of(ix.probe(&[Value::Null])), Some(vec![]));
        // A string probe against numbers compares as numbers: no hashing.
        assert_eq!(rows_of(ix.probe(&[Value::Bytes(b"1".to_vec())])), None);
        // Strings without a collation are binary: 'a ' is not 'a' (text
        // under a collation keys on its sort keys, `joinorder::hash_keys`).
        let ix = HashIndex::build(&rows, vec![1]);
        assert_eq!(
            rows_of(ix.probe(&[Value::Bytes(b"a".to_vec())])),
            Some(vec![0])
        );
        assert_eq!(rows_of(ix.probe(&[Value::Int(0)])), None);
        // Mixed kinds in a column: every probe scans.
        let mixed = vec![vec![Value::Int(1)], vec![Value::Bytes(b"01".to_vec())]];
        let ix = HashIndex::build(&mixed, vec![0]);
        assert_eq!(rows_of(ix.probe(&[Value::Int(1)])), None);
    }
}
