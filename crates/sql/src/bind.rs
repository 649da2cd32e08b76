//! The binder: sqlparser expressions -> bound `Expr`, resolving column
//! names against a `Scope`, numbering `?` placeholders by their position in
//! the statement text, and (in aggregate mode) collecting aggregate calls
//! and GROUP BY references into slots of the grouped row.
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr};
use crate::func::Func;
use crate::result::OutType;
use crate::subquery::SubKind;
use rel::value::{self as val, Value};
use sqlparser::ast;

mod call;
mod literal;
mod row;
pub(crate) use literal::number as number_literal;
use literal::{binary_operand, binop};
pub use literal::{cast_func, hex_number, is_hex, literal};

/// Plans the subqueries met while binding (implemented by the SELECT
/// planner, so that binding does not depend on planning).
pub trait SubPlanner {
    /// Plans `q`, used as `kind` inside a query whose columns are `scope`;
    /// returns its index among the statement's subqueries, the type of its
    /// first column, and the positions of `scope` it reads (correlated; else
    /// empty).
    fn plan(&self, q: &ast::Query, kind: SubKind, scope: &Scope) -> Result<Planned>;
    /// A column of the query around this one (`Expr::Correlated`), when
    /// this is a subquery and that query has the column; an error when only
    /// a query further out has it.
    fn outer_ref(&self, table: Option<&str>, name: &str) -> Result<Option<Expr>>;
}

/// A subquery as `SubPlanner::plan` planned it.
pub struct Planned {
    pub k: usize,
    pub ty: OutType,
    /// The positions of the outer row it reads (empty: uncorrelated).
    pub refs: Vec<usize>,
}

/// Names visible to an expression: position i of the row is `cols[i]`.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// (table name or alias, column name)
    pub cols: Vec<(String, String)>,
    /// The type of each column where known (a correlated subquery's
    /// `Expr::Correlated` takes it); may be empty.
    pub types: Vec<rel::value::ColumnType>,
    /// Positions only a qualified name reaches: the right-hand copies of
    /// the columns a `JOIN ... USING` / `NATURAL JOIN` merged.
    pub hidden: Vec<usize>,
}

impl Scope {
    /// Position of a (possibly qualified) column name.
    pub fn find(&self, table: Option<&str>, name: &str) -> Result<Option<usize>> {
        let mut hit = None;
        for (i, (t, c)) in self.cols.iter().enumerate() {
            if c.eq_ignore_ascii_case(name)
                && table.map_or(!self.hidden.contains(&i), |tt| tt.eq_ignore_ascii_case(t))
            {
                if hit.is_some() {
                    return Err(SqlError::ambiguous_column(name, "field list"));
                }
                hit = Some(i);
            }
        }
        Ok(hit)
    }
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    GroupConcat,
    /// A non-grouped column read in a grouped query (MySQL returns the
    /// value of some row of the group).
    AnyValue,
    /// STD / STDDEV / STDDEV_POP, STDDEV_SAMP, VARIANCE / VAR_POP, VAR_SAMP.
    StdPop,
    StdSamp,
    VarPop,
    VarSamp,
    BitAnd,
    BitOr,
    BitXor,
    /// JSON_ARRAYAGG(x [ORDER BY ...]): NULLs included, as `null`.
    JsonArrayAgg,
    /// JSON_OBJECTAGG(k, v): the argument is bound as `JSON_OBJECT(k, v)`.
    JsonObjectAgg,
}

/// One aggregate of a grouped query.
#[derive(Debug, Clone)]
pub struct AggSpec {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    pub distinct: bool,
    /// GROUP_CONCAT's ORDER BY (over the base row; true = descending) and SEPARATOR.
    pub order: Vec<(Expr, bool)>,
    pub sep: Vec<u8>,
    /// The collation MIN/MAX compare and DISTINCT deduplicates strings by
    /// (None: as values).
    pub coll: Option<rel::collation::Collation>,
}

impl AggFunc {
    /// The variance and bit aggregates (no DISTINCT; numbers only).
    pub fn statistic(self) -> bool {
        matches!(
            self,
            AggFunc::StdPop
                | AggFunc::StdSamp
                | AggFunc::VarPop
                | AggFunc::VarSamp
                | AggFunc::BitAnd
                | AggFunc::BitOr
                | AggFunc::BitXor
        )
    }
}

impl AggSpec {
    /// An aggregate without GROUP_CONCAT's clauses.
    pub fn new(func: AggFunc, arg: Option<Expr>, distinct: bool) -> AggSpec {
        AggSpec {
            func,
            arg,
            distinct,
            order: vec![],
            sep: b",".to_vec(),
            coll: None,
        }
    }
}

/// Aggregate-mode state: the grouped row is group exprs then aggregates.
#[derive(Debug, Default)]
pub struct AggCtx {
    pub group_ast: Vec<ast::Expr>,
    pub group: Vec<Expr>,
    pub aggs: Vec<AggSpec>,
}

/// Binds expressions of one statement.
pub struct Binder<'a> {
    /// (line, column) of each `?` in the statement, in text order.
    pub params: &'a [(u64, u64)],
    /// When set, expressions are bound over the grouped row.
    pub agg: Option<AggCtx>,
    /// Where an unknown column was referenced (for the error message).
    pub place: &'static str,
    /// For INSERT ... ON DUPLICATE KEY UPDATE: VALUES(col) reads position
    /// `values_base + col`.
    pub values_base: Option<usize>,
    /// Where subqueries are planned; None where they cannot run (1235).
    pub sub: Option<&'a dyn SubPlanner>,
    /// Window calls of the select list and ORDER BY; None where a window
    /// function may not appear (4015).
    pub win: Option<crate::window::WinCtx>,
    /// Binding an aggregate's argument (a window function there is 4074).
    pub agg_arg: bool,
    /// Correlated subqueries may appear (computed per row: a SELECT's WHERE,
    /// and its select list and ORDER BY without grouping); elsewhere 1235.
    pub dependent: bool,
}

impl<'a> Binder<'a> {
    /// A binder for a statement with these placeholder positions.
    pub fn new(params: &'a [(u64, u64)]) -> Binder<'a> {
        Binder {
            params,
            agg: None,
            place: "field list",
            values_base: None,
            sub: None,
            win: None,
            agg_arg: false,
            dependent: false,
        }
    }

    fn param(&self, span: &sqlparser::tokenizer::Span) -> Result<Expr> {
        let at = (span.start.line, span.start.column);
        match self.params.iter().position(|p| *p == at) {
            Some(i) => Ok(Expr::Param(i)),
            None => Err(SqlError::internal("could not place a '?' parameter")),
        }
    }

    /// Binds `e` over `scope`.
    pub fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Expr> {
        if let Some(agg) = &self.agg {
            if let Some(i) = agg.group_ast.iter().position(|g| g == e) {
                return Ok(Expr::Col(i));
            }
        }
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(id) => match literal::bit_word(id) {
                Some(bits) => bits,
                None => self.ident(None, id, scope)?,
            },
            A::CompoundIdentifier(ids) => {
                let n = ids.len();
                if n >= 2 && ids[0].value.starts_with("@@") {
                    let scope_kw = ids[0].value.trim_start_matches("@@").to_ascii_lowercase();
                    let name = ids[1..]
                        .iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".");
                    return Ok(Expr::SysVar(
                        name.to_ascii_lowercase(),
                        scope_kw == "global",
                    ));
                }
                if n < 2 {
                    return Err(SqlError::parse("bad identifier"));
                }
                self.ident(Some(&ids[n - 2].value), &ids[n - 1], scope)?
            }
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(_) => self.param(&v.span)?,
                other => match literal::typed_literal(other)? {
                    Some(x) => x,
                    None => Expr::Const(literal(other)?),
                },
            },
            A::Prefixed { prefix, value } => match literal::introduced(&prefix.value, value)? {
                Some(x) => x,
                None => return Err(SqlError::unknown_column(&prefix.value, self.place)),
            },
            A::Nested(inner) => self.expr(inner, scope)?,
            A::UnaryOp { op, expr } => {
                let x = self.expr(expr, scope)?;
                match op {
                    ast::UnaryOperator::Minus => match x {
                        Expr::Const(Value::Int(i)) if i != i64::MIN => Expr::Const(Value::Int(-i)),
                        Expr::Const(Value::UInt(u)) if u == 1u64 << 63 => {
                            Expr::Const(Value::Int(i64::MIN))
                        }
                        Expr::Const(Value::Decimal(m, s)) => Expr::Const(Value::Decimal(-m, s)),
                        Expr::Const(Value::Double(d)) => Expr::Const(Value::Double(-d)),
                        other => Expr::Neg(Box::new(other)),
                    },
                    ast::UnaryOperator::Plus => x,
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => Expr::Not(Box::new(x)),
                    ast::UnaryOperator::BitwiseNot => Expr::BitNot(Box::new(x)),
                    other => return Err(SqlError::unsupported(format!("operator {other}"))),
                }
            }
            A::BinaryOp {
                left,
                op: op @ (ast::BinaryOperator::Plus | ast::BinaryOperator::Minus),
                right,
            } if matches!(&**right, A::Interval(_))
                || (matches!(&**left, A::Interval(_)) && *op == ast::BinaryOperator::Plus) =>
            {
                if matches!(&**right, A::Interval(_)) {
                    self.interval_add(left, right, *op == ast::BinaryOperator::Minus, scope)?
                } else {
                    self.interval_add(right, left, false, scope)?
                }
            }
            A::BinaryOp {
                left,
                op: ast::BinaryOperator::Assignment,
                right,
            } => match &**left {
                A::Identifier(id) if id.quote_style.is_none() && !id.value.starts_with("@@") => {
                    let name = id
                        .value
                        .strip_prefix('@')
                        .ok_or_else(|| SqlError::parse(format!("near '{} :='", id.value)))?;
                    let x = self.expr(right, scope)?;
                    Expr::Assign(name.to_ascii_lowercase(), Box::new(x))
                }
                other => return Err(SqlError::parse(format!("near '{other} :='"))),
            },
            // MySQL's `doc->'$.path'` (JSON_EXTRACT) and `doc->>'$.path'`
            // (JSON_UNQUOTE of it); MariaDB has neither.
            A::BinaryOp {
                left,
                op: op @ (ast::BinaryOperator::Arrow | ast::BinaryOperator::LongArrow),
                right,
            } => {
                let l = self.expr(left, scope)?;
                let r = self.expr(right, scope)?;
                let e = Expr::Func(Func::JsonExtract, vec![l, r]);
                if *op == ast::BinaryOperator::LongArrow {
                    Expr::Func(Func::JsonUnquote, vec![e])
                } else {
                    e
                }
            }
            A::BinaryOp { left, op, right } => {
                if let Some(e) = self.row_compare(left, op, right, scope)? {
                    return Ok(e);
                }
                let o = binop(op)?;
                let l = self.expr(left, scope)?;
                let r = self.expr(right, scope)?;
                Expr::Bin(o, Box::new(l), Box::new(r))
            }
            A::IsNull(x) => Expr::IsNull(Box::new(self.expr(x, scope)?), false),
            A::IsNotNull(x) => Expr::IsNull(Box::new(self.expr(x, scope)?), true),
            A::IsTrue(x) => Expr::IsBool(Box::new(self.expr(x, scope)?), true, false),
            A::IsNotTrue(x) => Expr::IsBool(Box::new(self.expr(x, scope)?), true, true),
            A::IsFalse(x) => Expr::IsBool(Box::new(self.expr(x, scope)?), false, false),
            A::IsNotFalse(x) => Expr::IsBool(Box::new(self.expr(x, scope)?), false, true),
            A::Extract { field, expr, .. } => {
                use ast::DateTimeField as F;
                let f = match field {
                    F::Year => Func::Year,
                    F::Quarter => Func::Quarter,
                    F::Month => Func::Month,
                    F::Day => Func::Day,
                    F::Hour => Func::Hour,
                    F::Minute => Func::Minute,
                    F::Second => Func::Second,
                    F::Microsecond => Func::Microsecond,
                    other => return Err(SqlError::unsupported(format!("EXTRACT({other} ...)"))),
                };
                Expr::Func(f, vec![self.expr(expr, scope)?])
            }
            A::IsUnknown(x) => Expr::IsNull(Box::new(self.expr(x, scope)?), false),
            A::IsNotUnknown(x) => Expr::IsNull(Box::new(self.expr(x, scope)?), true),
            A::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let mut args = vec![self.expr(expr, scope)?, self.expr(pattern, scope)?];
                // A binary operand (`BINARY x`, `COLLATE ..._bin`) matches case-sensitively.
                let m = if binary_operand(expr) || binary_operand(pattern) {
                    args.push(Expr::Const(Value::Bytes(b"c".to_vec())));
                    Expr::Func(Func::RegexpLike, args)
                } else {
                    Expr::Func(Func::Regexp, args)
                };
                if *negated {
                    Expr::Not(Box::new(m))
                } else {
                    m
                }
            }
            A::IsDistinctFrom(a, b) => Expr::Not(Box::new(Expr::Bin(
                BinOp::NullSafeEq,
                Box::new(self.expr(a, scope)?),
                Box::new(self.expr(b, scope)?),
            ))),
            A::IsNotDistinctFrom(a, b) => Expr::Bin(
                BinOp::NullSafeEq,
                Box::new(self.expr(a, scope)?),
                Box::new(self.expr(b, scope)?),
            ),
            A::InList {
                expr,
                list,
                negated,
            } => {
                if let Some(e) = self.row_in(expr, list, *negated, scope)? {
                    return Ok(e);
                }
                let x = self.expr(expr, scope)?;
                let l = list
                    .iter()
                    .map(|i| self.expr(i, scope))
                    .collect::<Result<Vec<_>>>()?;
                Expr::In(Box::new(x), l, *negated)
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between(
                Box::new(self.expr(expr, scope)?),
                Box::new(self.expr(low, scope)?),
                Box::new(self.expr(high, scope)?),
                *negated,
            ),
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            } => {
                let esc = match escape_char {
                    None => b'\\',
                    Some(e) => match self.expr(e, scope)? {
                        Expr::Const(Value::Bytes(b)) if b.len() == 1 => b[0],
                        _ => return Err(SqlError::wrong_arguments("ESCAPE")),
                    },
                };
                Expr::Like(
                    Box::new(self.expr(expr, scope)?),
                    Box::new(self.expr(pattern, scope)?),
                    *negated,
                    esc,
                )
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(Box::new(self.expr(o, scope)?)),
                    None => None,
                };
                let mut whens = Vec::new();
                for c in conditions {
                    whens.push((
                        self.expr(&c.condition, scope)?,
                        self.expr(&c.result, scope)?,
                    ));
                }
                let otherwise = match else_result {
                    Some(x) => Some(Box::new(self.expr(x, scope)?)),
                    None => None,
                };
                Expr::Case {
                    operand,
                    whens,
                    otherwise,
                }
            }
            A::Cast {
                expr, data_type, ..
            }
            | A::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => {
                let x = self.expr(expr, scope)?;
                let cast = Expr::Func(cast_func(data_type)?, vec![x]);
                // CAST(.. AS BINARY) is a binary string (IMPLICIT, as MariaDB):
                // compared bytewise.
                if matches!(data_type, ast::DataType::Binary(_)) {
                    Expr::Func(
                        Func::ConvertUsing(rel::collation::Collation::Binary),
                        vec![cast],
                    )
                } else {
                    cast
                }
            }
            A::Convert {
                expr,
                data_type: None,
                charset,
                ..
            } => {
                let x = self.expr(expr, scope)?;
                match charset {
                    Some(cs) => {
                        let cs = cs.to_string().to_ascii_lowercase();
                        let cs = cs.trim_matches(|c| c == '`' || c == '\'' || c == '"');
                        let c = crate::collate::resolve(
                            Some(cs),
                            None,
                            rel::collation::Collation::DEFAULT,
                        )?;
                        Expr::Func(Func::ConvertUsing(c), vec![x])
                    }
                    None => x,
                }
            }
            A::Collate { expr, collation } => {
                let name = collation.to_string();
                let name = name.trim_matches(|c| c == '`' || c == '\'' || c == '"');
                let c =
                    crate::collate::resolve(None, Some(name), rel::collation::Collation::DEFAULT)?;
                Expr::Collate(Box::new(self.expr(expr, scope)?), c)
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, scope)?];
                args.push(match substring_from {
                    Some(f) => self.expr(f, scope)?,
                    None => Expr::Const(Value::Int(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.expr(f, scope)?);
                }
                Expr::Func(Func::Substring, args)
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                let x = self.expr(expr, scope)?;
                if let Some(what) = trim_what {
                    let (leading, trailing) = match trim_where {
                        Some(ast::TrimWhereField::Leading) => (true, false),
                        Some(ast::TrimWhereField::Trailing) => (false, true),
                        _ => (true, true),
                    };
                    let rem = self.expr(what, scope)?;
                    return Ok(Expr::Func(
                        Func::TrimFrom { leading, trailing },
                        vec![x, rem],
                    ));
                }
                let f = match trim_where {
                    Some(ast::TrimWhereField::Leading) => Func::LTrim,
                    Some(ast::TrimWhereField::Trailing) => Func::RTrim,
                    _ => Func::Trim,
                };
                Expr::Func(f, vec![x])
            }
            A::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.expr(expr, scope)?]),
            A::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.expr(expr, scope)?]),
            A::TypedString(ts) => {
                let s = ts.value.clone().into_string().unwrap_or_default();
                let f = cast_func(&ts.data_type)?;
                let v = Value::Bytes(s.into_bytes());
                match f {
                    Func::CastDate => match val::parse_date(&v.text()) {
                        Some(d) => Expr::Const(Value::Date(d)),
                        None => return Err(SqlError::wrong_value("DATE")),
                    },
                    Func::CastDateTime => match val::parse_datetime(&v.text()) {
                        Some(d) => Expr::Const(Value::DateTime(d)),
                        None => return Err(SqlError::wrong_value("DATETIME")),
                    },
                    other => Expr::Func(other, vec![Expr::Const(v)]),
                }
            }
            A::Function(_) if row::row_items(e).is_some() => {
                return Err(SqlError::operand_columns(1))
            }
            A::Function(f) => self.function(f, scope)?,
            A::Subquery(q) => {
                let p = self.subquery(q, SubKind::Scalar, scope)?;
                dependent(Expr::Subquery(p.k, p.ty), p.refs)
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                if let Some(items) = row::row_items(expr) {
                    if items.iter().any(|i| row::row_items(i).is_some()) {
                        return Err(SqlError::operand_columns(1));
                    }
                    let xs = items
                        .iter()
                        .map(|i| self.expr(i, scope))
                        .collect::<Result<Vec<_>>>()?;
                    let p = self.subquery(subquery, SubKind::InRow(xs.len()), scope)?;
                    let e = Expr::Func(Func::RowInSubquery(p.k, vec![None; xs.len()]), xs);
                    let e = dependent(e, p.refs);
                    return Ok(if *negated { Expr::Not(Box::new(e)) } else { e });
                }
                let x = self.expr(expr, scope)?;
                let p = self.subquery(subquery, SubKind::In, scope)?;
                dependent(Expr::InSubquery(Box::new(x), p.k, *negated), p.refs)
            }
            A::Exists { subquery, negated } => {
                let p = self.subquery(subquery, SubKind::Exists, scope)?;
                dependent(Expr::Exists(p.k, *negated), p.refs)
            }
            // A row where one value belongs (`SELECT (1, 2)`, `(a, b) + 1`).
            A::Tuple(_) => return Err(SqlError::operand_columns(1)),
            other => return Err(SqlError::unsupported(format!("expression {other}"))),
        })
    }

    /// `when ± INTERVAL n unit` (a bare number is days, as ADDDATE takes it).
    fn interval_add(
        &mut self,
        when: &ast::Expr,
        iv: &ast::Expr,
        negate: bool,
        scope: &Scope,
    ) -> Result<Expr> {
        let (n, unit) = match iv {
            ast::Expr::Interval(i) => {
                if i.leading_precision.is_some() {
                    return Err(SqlError::unsupported("INTERVAL precision"));
                }
                // `DAY_HOUR` reaches here as `DAY TO HOUR` (see `parse`).
                let compound = match (&i.leading_field, &i.last_field) {
                    (Some(f), Some(l)) => {
                        let name = format!("{f}_{l}");
                        match crate::func::time::Compound::from_name(&name)? {
                            Some(c) => Some(c),
                            None => {
                                return Err(SqlError::unsupported(format!("INTERVAL ... {name}")))
                            }
                        }
                    }
                    (_, Some(_)) => return Err(SqlError::parse("INTERVAL needs a unit")),
                    _ => None,
                };
                match (compound, &i.leading_field) {
                    // `'1 2' DAY_HOUR`: the text counted in hours.
                    (Some(c), _) => (
                        Expr::Func(Func::IntervalCount(c), vec![self.expr(&i.value, scope)?]),
                        c.unit(),
                    ),
                    (None, Some(f)) => (
                        self.expr(&i.value, scope)?,
                        crate::func::time::Unit::from_field(f)?,
                    ),
                    (None, None) => return Err(SqlError::parse("INTERVAL needs a unit")),
                }
            }
            other => (self.expr(other, scope)?, crate::func::time::Unit::Day),
        };
        let w = self.expr(when, scope)?;
        let n = if negate { Expr::Neg(Box::new(n)) } else { n };
        Ok(Expr::Func(Func::DateAdd(unit), vec![w, n]))
    }

    fn subquery(&mut self, q: &ast::Query, kind: SubKind, scope: &Scope) -> Result<Planned> {
        let p = match self.sub {
            Some(p) => p.plan(q, kind, scope)?,
            None => {
                return Err(SqlError::unsupported(format!(
                    "subqueries in the {}",
                    self.place
                )))
            }
        };
        if !p.refs.is_empty() && (!self.dependent || self.agg.is_some()) {
            return Err(SqlError::unsupported(format!(
                "correlated subqueries in the {}{}",
                self.place,
                if self.agg.is_some() {
                    " of a grouped query"
                } else {
                    ""
                }
            )));
        }
        Ok(p)
    }

    fn ident(&mut self, table: Option<&str>, id: &ast::Ident, scope: &Scope) -> Result<Expr> {
        let name = &id.value;
        if id.quote_style.is_none() && table.is_none() {
            if let Some(v) = name.strip_prefix("@@") {
                let (global, n) = match v.split_once('.') {
                    Some((s, n)) if s.eq_ignore_ascii_case("global") => (true, n),
                    Some((s, n))
                        if s.eq_ignore_ascii_case("session") || s.eq_ignore_ascii_case("local") =>
                    {
                        (false, n)
                    }
                    _ => (false, v),
                };
                return Ok(Expr::SysVar(n.to_ascii_lowercase(), global));
            }
            if let Some(v) = name.strip_prefix('@') {
                return Ok(Expr::UserVar(v.to_ascii_lowercase()));
            }
            let up = name.to_ascii_uppercase();
            if matches!(
                up.as_str(),
                "CURRENT_TIMESTAMP"
                    | "CURRENT_DATE"
                    | "CURRENT_TIME"
                    | "LOCALTIME"
                    | "LOCALTIMESTAMP"
                    | "CURRENT_USER"
            ) && scope.find(None, name)?.is_none()
            {
                if let Some(f) = Func::by_name(&up) {
                    return Ok(Expr::Func(f, vec![]));
                }
            }
        }
        let pos = scope.find(table, name)?;
        match pos {
            Some(p) => self.column_ref(p),
            None => {
                let full = match table {
                    Some(t) => format!("{t}.{name}"),
                    None => name.clone(),
                };
                if let Some(p) = self.sub {
                    if let Some(e) = p.outer_ref(table, name)? {
                        return Ok(e);
                    }
                }
                Err(SqlError::unknown_column(&full, self.place))
            }
        }
    }

    /// A reference to base column `p`: direct, or in aggregate mode an
    /// implicit ANY_VALUE slot.
    pub fn column_ref(&mut self, p: usize) -> Result<Expr> {
        match &mut self.agg {
            None => Ok(Expr::Col(p)),
            Some(agg) => {
                if let Some(i) = agg
                    .group
                    .iter()
                    .position(|g| matches!(g, Expr::Col(c) if *c == p))
                {
                    return Ok(Expr::Col(i));
                }
                let base = agg.group.len();
                let existing = agg.aggs.iter().position(|a| {
                    a.func == AggFunc::AnyValue && matches!(a.arg, Some(Expr::Col(c)) if c == p)
                });
                let j = existing.unwrap_or_else(|| {
                    agg.aggs
                        .push(AggSpec::new(AggFunc::AnyValue, Some(Expr::Col(p)), false));
                    agg.aggs.len() - 1
                });
                Ok(Expr::Col(base + j))
            }
        }
    }
}

/// `e` (a subquery expression) marked as computed per row when it reads
/// positions `refs` of the row.
fn dependent(e: Expr, refs: Vec<usize>) -> Expr {
    if refs.is_empty() {
        e
    } else {
        Expr::Dependent(Box::new(e), refs)
    }
}
