//! EXPLAIN: the access path a SELECT, UPDATE or DELETE would use, in
//! MySQL's tabular EXPLAIN shape; for a join, its tables in join order with
//! their estimated rows.
use crate::access;
use crate::error::{Result, SqlError};
use crate::exec::{self, Plan};
use crate::result::{text, ColumnInfo, OutType, Outcome, ResultSink};
use crate::select::SelectPlan;
use crate::session::Session;
use crate::stmt::RowStmt;
use crate::subquery::SubKind;
use rel::value::Value;

/// One EXPLAIN row: select id, select_type, table, access path, Extra,
/// estimated rows, hash join.
struct Entry {
    id: i64,
    kind: &'static str,
    table: std::sync::Arc<rel::catalog::Table>,
    access: access::Access,
    extra: String,
    rows: Option<i64>,
    hashed: bool,
}

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
    let mut next_id = 1;
    match &plan {
        Plan::Select(p) => select_entries(p, "SIMPLE", &mut next_id, &mut entries),
        Plan::Modify(p) => {
            entries.push(Entry {
                id: 1,
                kind: "SIMPLE",
                table: p.table.clone(),
                access: p.access.clone(),
                extra: "Using where".to_string(),
                rows: None,
                hashed: false,
            });
            next_id = 2;
            subquery_entries(&p.subqueries, &mut next_id, &mut entries);
        }
        Plan::Insert(_) | Plan::MultiModify(_) => {}
    }
    let mut rows = Vec::new();
    for e in entries {
        let t = &e.table;
        let (kind, key) = e.access.describe(&t.def);
        let (kind, key) = if e.hashed {
            ("hash_ALL".to_string(), "#hash#$hj".to_string())
        } else {
            (kind, key)
        };
        let possible: Vec<String> = t.def.indexes().map(|i| i.name.clone()).collect();
        let ranges = if e.access.ranges.is_empty() {
            Value::Null
        } else {
            Value::Int(e.access.ranges.len() as i64)
        };
        rows.push(vec![
            Value::Int(e.id),
            text(e.kind),
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
            e.rows.map_or(Value::Null, Value::Int),
            text(e.extra),
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

/// The rows of one SELECT (its tables in join order, each with its
/// estimated rows per row of the tables before it; a hash join as MariaDB's
/// BNLH join), then those of its subqueries.
fn select_entries(p: &SelectPlan, kind: &'static str, next_id: &mut i64, out: &mut Vec<Entry>) {
    let id = *next_id;
    *next_id += 1;
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
    let extra = extra.join("; ");
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
        out.push(Entry {
            id,
            kind,
            table: j.table.clone(),
            access: j.access.clone(),
            extra: parts.join("; "),
            rows,
            hashed,
        });
    }
    if let (Some(t), Some(a)) = (&p.table, &p.access) {
        out.push(Entry {
            id,
            kind,
            table: t.clone(),
            access: a.clone(),
            extra,
            rows: None,
            hashed: false,
        });
    }
    subquery_entries(&p.subqueries, next_id, out);
}

/// The rows of subqueries: SUBQUERY (run once per execution) or DEPENDENT
/// SUBQUERY (per row of the query around it).
fn subquery_entries(subs: &[(SelectPlan, SubKind)], next_id: &mut i64, out: &mut Vec<Entry>) {
    for (sp, _) in subs {
        let kind = if sp.outer_refs.is_empty() {
            "SUBQUERY"
        } else {
            "DEPENDENT SUBQUERY"
        };
        select_entries(sp, kind, next_id, out);
    }
}
