//! Queries that are not one SELECT: `WITH` (common table expressions,
//! which become derived tables where they are named, column lists renaming
//! their columns; recursive ones are checked and tagged by `recursive`) and
//! `UNION [ALL | DISTINCT]` (planned as a derived table whose rows are its
//! branches' rows, deduplicated up to each DISTINCT, under a
//! `SELECT * FROM (...)` carrying the union's ORDER BY and LIMIT).
use super::SelectPlan;
use crate::error::{Result, SqlError};
use crate::result::{ColumnInfo, OutType};
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// `q` with its WITH clause applied: every table reference naming a CTE
/// becomes that CTE's query as a derived table.
pub(super) fn inline_ctes(q: &ast::Query) -> Result<ast::Query> {
    let Some(with) = &q.with else {
        return Ok(q.clone());
    };
    let mut ctes: Vec<Cte> = Vec::new();
    for c in &with.cte_tables {
        let name = c.alias.name.value.clone();
        if ctes.iter().any(|(n, ..)| n.eq_ignore_ascii_case(&name)) {
            return Err(SqlError::duplicate_alias(name));
        }
        // A CTE sees the ones before it (and, WITH RECURSIVE, itself).
        let mut body = inline_ctes(&c.query)?;
        let _ = body.visit(&mut Inline(&ctes));
        if with.recursive && super::recursive::refers_to(&body, &name) {
            body = super::recursive::mark(body, &name, &c.alias.columns)?;
        }
        ctes.push((name, body, c.alias.columns.clone()));
    }
    let mut out = q.clone();
    out.with = None;
    let _ = out.visit(&mut Inline(&ctes));
    Ok(out)
}

/// A common table expression: its name, its query with earlier CTEs
/// inlined, its column list.
type Cte = (String, ast::Query, Vec<ast::TableAliasColumnDef>);

struct Inline<'a>(&'a [Cte]);

impl VisitorMut for Inline<'_> {
    type Break = ();
    fn pre_visit_table_factor(&mut self, t: &mut ast::TableFactor) -> ControlFlow<()> {
        if let ast::TableFactor::Table { name, alias, .. } = t {
            if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
                if let Some((n, q, cols)) = self
                    .0
                    .iter()
                    .find(|(n, ..)| n.eq_ignore_ascii_case(&id.value))
                {
                    let mut alias = alias.clone().unwrap_or(ast::TableAlias {
                        explicit: false,
                        at: None,
                        name: ast::Ident::new(n),
                        columns: vec![],
                    });
                    if alias.columns.is_empty() {
                        alias.columns = cols.clone();
                    }
                    *t = ast::TableFactor::Derived {
                        lateral: false,
                        subquery: Box::new(q.clone()),
                        alias: Some(alias),
                        sample: None,
                    };
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// For a query whose body is a UNION: `SELECT * FROM (<union>) AS __union`
/// with the query's ORDER BY and LIMIT.
pub(super) fn wrap_union(q: &ast::Query) -> ast::Query {
    let mut inner = q.clone();
    inner.order_by = None;
    inner.limit_clause = None;
    inner.locks = vec![];
    let sql = "SELECT * FROM (SELECT 1) AS __union";
    let mut outer = match sqlparser::parser::Parser::parse_sql(
        &crate::dialect::StrataDialect::default(),
        sql,
    ) {
        Ok(mut v) => match v.pop() {
            Some(ast::Statement::Query(q)) => *q,
            _ => unreachable_query(),
        },
        Err(_) => unreachable_query(),
    };
    if let ast::SetExpr::Select(s) = &mut *outer.body {
        if let Some(ast::TableFactor::Derived { subquery, .. }) =
            s.from.first_mut().map(|t| &mut t.relation)
        {
            **subquery = inner;
        }
    }
    outer.order_by = q.order_by.clone();
    outer.limit_clause = q.limit_clause.clone();
    outer.locks = q.locks.clone();
    outer
}

fn unreachable_query() -> ast::Query {
    // The constant text above always parses; keep library code panic-free.
    ast::Query {
        with: None,
        body: Box::new(ast::SetExpr::Values(ast::Values {
            explicit_row: false,
            value_keyword: false,
            rows: vec![],
        })),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: vec![],
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: vec![],
    }
}

/// The branches of a UNION body in order, each with whether the UNION
/// joining it to what precedes is DISTINCT (false for the first).
pub(super) fn union_branches(q: &ast::Query) -> Result<Vec<(bool, ast::Query)>> {
    fn go(
        e: &ast::SetExpr,
        q: &ast::Query,
        distinct: bool,
        out: &mut Vec<(bool, ast::Query)>,
    ) -> Result<()> {
        match e {
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                if *op != ast::SetOperator::Union {
                    return Err(SqlError::unsupported(format!("{op}")));
                }
                let d = match set_quantifier {
                    ast::SetQuantifier::All => false,
                    ast::SetQuantifier::Distinct | ast::SetQuantifier::None => true,
                    other => return Err(SqlError::unsupported(format!("UNION {other}"))),
                };
                go(left, q, distinct, out)?;
                go(right, q, d, out)
            }
            other => {
                let mut b = q.clone();
                b.with = None;
                b.order_by = None;
                b.limit_clause = None;
                b.locks = vec![];
                b.body = Box::new(other.clone());
                out.push((distinct, b));
                Ok(())
            }
        }
    }
    let mut out = Vec::new();
    go(&q.body, q, false, &mut out)?;
    Ok(out)
}

/// A UNION's result columns: the first branch's names, types merged.
pub(super) fn union_columns(parts: &[SelectPlan]) -> Result<Vec<ColumnInfo>> {
    let first = parts.first().map(|p| p.columns.clone()).unwrap_or_default();
    let mut cols: Vec<ColumnInfo> = first
        .iter()
        .map(|c| ColumnInfo::expr(c.name.clone(), c.ty.clone()))
        .collect();
    for p in &parts[1..] {
        if p.columns.len() != cols.len() {
            return Err(SqlError::union_column_count());
        }
        for (c, o) in cols.iter_mut().zip(&p.columns) {
            c.ty = merge(c.ty.clone(), o.ty.clone());
        }
    }
    Ok(cols)
}

/// The declared type of a union column whose branches declare `a` and `b`.
fn merge(a: OutType, b: OutType) -> OutType {
    use OutType as T;
    if a == b {
        return a;
    }
    match (generic(a), generic(b)) {
        (T::Null, x) | (x, T::Null) => x,
        (T::Int { unsigned: x }, T::Int { unsigned: y }) => T::Int { unsigned: x && y },
        (T::Decimal { scale: x }, T::Decimal { scale: y }) => T::Decimal { scale: x.max(y) },
        (T::Int { .. }, T::Decimal { scale }) | (T::Decimal { scale }, T::Int { .. }) => {
            T::Decimal { scale }
        }
        (T::Double, T::Int { .. } | T::Decimal { .. })
        | (T::Int { .. } | T::Decimal { .. }, T::Double) => T::Double,
        (T::Text { len: x }, T::Text { len: y }) => T::Text { len: x.max(y) },
        _ => T::Text { len: 255 },
    }
}

/// A stored column's type as the expression type family it belongs to.
fn generic(t: OutType) -> OutType {
    use rel::value::TypeKind as K;
    let OutType::Column(c) = t else {
        return t;
    };
    match c.kind {
        _ if c.is_integer() => OutType::Int {
            unsigned: c.unsigned,
        },
        K::Decimal => OutType::Decimal { scale: c.scale },
        K::Float | K::Double => OutType::Double,
        K::Date => OutType::Date,
        K::DateTime | K::Timestamp => OutType::DateTime,
        K::Time => OutType::Time,
        _ => OutType::Text { len: c.len.max(1) },
    }
}
