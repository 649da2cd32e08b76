//! EXPLAIN: the access path a SELECT, UPDATE or DELETE would use, in
//! MySQL's tabular EXPLAIN shape; for a join, its tables in join order with
//! their estimated rows.
use crate::access;
use crate::error::{Result, SqlError};
use crate::exec::{self, Plan};
use crate::result::{text, ColumnInfo, OutType, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::RowStmt;
use rel::value::Value;

/// One EXPLAIN row: table, access path, Extra, estimated rows, hash join.
type Entry = (
    std::sync::Arc<rel::catalog::Table>,
    access::Access,
    String,
    Option<i64>,
    bool,
);

/// EXPLAIN of a row statement.
pub fn explain(
    s: &mut Session,
    stmt: &RowStmt,
    params: &[(u64, u64)],
    sink: &mut dyn ResultSink,
) -> Result<Outcome> {
    if matches!(stmt, RowStmt::Insert(_)) {
        return Err(SqlError::unsupported("EXPLAIN of this statement"));
    }
    let plan = match exec::plan(s, stmt, params)? {
        // A multi-table UPDATE or DELETE reads as its join.
        Plan::MultiModify(m) => Plan::Select(Box::new(m.select)),
        p => p,
    };
    let (table, acc, extra) = match &plan {
        Plan::Select(p) => {
            let mut extra = Vec::new();
            if p.filter.is_some() {
                extra.push("Using where");
            }
            if p.window.is_some() {
                extra.push("Using temporary; Using window");
            }
            if !p.presorted {
                extra.push("Using filesort");
            }
            if p.access.as_ref().is_some_and(|a| a.covering) {
                extra.push("Using index");
            }
            (p.table.clone(), p.access.clone(), extra.join("; "))
        }
        Plan::Modify(p) => (
            Some(p.table.clone()),
            Some(p.access.clone()),
            "Using where".to_string(),
        ),
        Plan::Insert(_) | Plan::MultiModify(_) => (None, None, String::new()),
    };
    let cols = [
        "id",
        "select_type",
        "table",
        "type",
        "possible_keys",
        "key",
        "key_len",
        "ref",
        "rows",
        "Extra",
    ];
    let mut entries: Vec<Entry> = Vec::new();
    if let Plan::Select(p) = &plan {
        // The tables in join order, each with its estimated rows per row of
        // the tables before it; a hash join as MariaDB's BNLH join.
        for (i, j) in p.join.iter().enumerate() {
            let mut e: Vec<String> = Vec::new();
            let hashed = !j.hash_join.is_empty() && j.derived.is_none();
            if hashed {
                e.push("Using where; Using join buffer (flat, BNLH join)".into());
            } else if j.filter.is_some() || j.on.is_some() {
                e.push("Using where".into());
            }
            if i + 1 == p.join.len() && !extra.is_empty() {
                e.push(extra.clone());
            }
            let rows = (j.derived.is_none()).then(|| j.rows.round().max(1.0) as i64);
            let mut parts: Vec<String> = Vec::new();
            for x in e.join("; ").split("; ") {
                if !x.is_empty() && !parts.iter().any(|p| p == x) {
                    parts.push(x.to_string());
                }
            }
            entries.push((
                j.table.clone(),
                j.access.clone(),
                parts.join("; "),
                rows,
                hashed,
            ));
        }
    }
    if let (Some(t), Some(a)) = (table, acc) {
        entries.push((t, a, extra.clone(), None, false));
    }
    let mut rows = Vec::new();
    for (t, a, extra, est, hashed) in entries {
        let (kind, key) = a.describe(&t.def);
        let (kind, key) = if hashed {
            ("hash_ALL".to_string(), "#hash#$hj".to_string())
        } else {
            (kind, key)
        };
        let possible: Vec<String> = t.def.indexes().map(|i| i.name.clone()).collect();
        let ranges = if a.ranges.is_empty() {
            Value::Null
        } else {
            Value::Int(a.ranges.len() as i64)
        };
        rows.push(vec![
            Value::Int(1),
            text("SIMPLE"),
            text(&t.def.name),
            text(&kind),
            text(possible.join(",")),
            if kind == "ALL" {
                Value::Null
            } else {
                text(key)
            },
            Value::Null,
            ranges,
            est.map_or(Value::Null, Value::Int),
            text(extra),
        ]);
    }
    if rows.is_empty() {
        let mut r = vec![Value::Int(1), text("SIMPLE")];
        r.extend(std::iter::repeat_n(Value::Null, 7));
        r.push(text("No tables used"));
        rows.push(r);
    }
    let c: Vec<ColumnInfo> = cols
        .iter()
        .map(|n| ColumnInfo::expr(*n, OutType::Text { len: 64 }))
        .collect();
    sink.columns(&c)?;
    for r in &rows {
        sink.row(r)?;
    }
    Ok(Outcome {
        result_set: true,
        ..Default::default()
    })
}
