//! Binding window calls: the WINDOW clause's named windows (a window may build on an
//! earlier one: MariaDB's 4009-4013), the OVER clause of each call (PARTITION BY, ORDER
//! BY, frame checked as MariaDB checks it: 4014, 4017, 4018, 4020, 1064 for a negative
//! offset) and the function's arguments. Only where `Binder::win` is set (the select
//! list and ORDER BY) may a window function appear; elsewhere it is 4015, inside an
//! aggregate's argument 4074.
use super::{Bound, Frame, WinCall, WinKind, WinSpec, WIN_MARK};
use crate::bind::{AggFunc, AggSpec, Binder, Scope};
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use rel::value::Value;
use sqlparser::ast;

/// The window calls of one query level being bound, and its named windows.
#[derive(Debug, Default)]
pub struct WinCtx {
    named: Vec<(String, ast::WindowSpec)>,
    pub calls: Vec<WinCall>,
    /// The query's select list: PARTITION BY and ORDER BY may name its
    /// aliases (`select::alias::window_item`); empty when the query has no
    /// window function.
    pub proj: std::sync::Arc<[ast::SelectItem]>,
}

impl WinCtx {
    /// Reads a WINDOW clause: each window may refer to one defined before it.
    pub fn new(defs: &[ast::NamedWindowDefinition]) -> Result<WinCtx> {
        let mut cx = WinCtx::default();
        for ast::NamedWindowDefinition(name, def) in defs {
            if cx.find(&name.value).is_some() {
                return Err(SqlError::window_duplicate(&name.value));
            }
            let spec = match def {
                ast::NamedWindowExpr::NamedWindow(other) => cx
                    .find(&other.value)
                    .cloned()
                    .ok_or_else(|| SqlError::window_undefined(&other.value))?,
                ast::NamedWindowExpr::WindowSpec(s) => cx.resolve(s)?,
            };
            cx.named.push((name.value.clone(), spec));
        }
        Ok(cx)
    }

    fn find(&self, name: &str) -> Option<&ast::WindowSpec> {
        self.named
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, s)| s)
    }

    /// `(w ORDER BY ...)`: the named window's lists with this one's additions.
    fn resolve(&self, s: &ast::WindowSpec) -> Result<ast::WindowSpec> {
        let Some(name) = &s.window_name else {
            return Ok(s.clone());
        };
        let base = self
            .find(&name.value)
            .ok_or_else(|| SqlError::window_undefined(&name.value))?;
        if !s.partition_by.is_empty() {
            return Err(SqlError::window_ref_partition(&name.value));
        }
        if !s.order_by.is_empty() && !base.order_by.is_empty() {
            return Err(SqlError::window_ref_order(&name.value));
        }
        if base.window_frame.is_some() {
            return Err(SqlError::window_ref_frame(&name.value));
        }
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: base.partition_by.clone(),
            order_by: if s.order_by.is_empty() {
                base.order_by.clone()
            } else {
                s.order_by.clone()
            },
            window_frame: s.window_frame.clone(),
        })
    }
}

/// The arguments of a call: expressions, and whether it was `f(*)` / `f(DISTINCT ...)`.
fn arguments(f: &ast::Function, name: &str) -> Result<(Vec<ast::Expr>, bool, bool)> {
    match &f.args {
        ast::FunctionArguments::None => Ok((vec![], false, false)),
        ast::FunctionArguments::Subquery(_) => Err(SqlError::parse(format!("near '{name}('"))),
        ast::FunctionArguments::List(l) => {
            if !l.clauses.is_empty() {
                return Err(SqlError::unsupported(format!(
                    "clauses in {name}() as a window function"
                )));
            }
            let mut out = Vec::new();
            let mut star = false;
            for a in &l.args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => out.push(e.clone()),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                    _ => return Err(SqlError::unsupported(format!("argument form in {name}"))),
                }
            }
            let distinct = matches!(
                l.duplicate_treatment,
                Some(ast::DuplicateTreatment::Distinct)
            );
            Ok((out, distinct, star))
        }
    }
}

fn kind_of(name: &str) -> Option<WinKind> {
    Some(match name {
        "ROW_NUMBER" => WinKind::RowNumber,
        "RANK" => WinKind::Rank,
        "DENSE_RANK" => WinKind::DenseRank,
        "PERCENT_RANK" => WinKind::PercentRank,
        "CUME_DIST" => WinKind::CumeDist,
        "NTILE" => WinKind::Ntile,
        "LAG" => WinKind::Lag,
        "LEAD" => WinKind::Lead,
        "FIRST_VALUE" => WinKind::FirstValue,
        "LAST_VALUE" => WinKind::LastValue,
        "NTH_VALUE" => WinKind::NthValue,
        _ => return None,
    })
}

/// True for the functions that exist only with OVER (without it: 1064, as in MySQL's
/// and MariaDB's grammars).
pub fn window_only(name: &str) -> bool {
    kind_of(name).is_some()
}

fn agg_of(name: &str, star: bool) -> Option<AggFunc> {
    Some(match name {
        "COUNT" if star => AggFunc::CountStar,
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "AVG" => AggFunc::Avg,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "STD" | "STDDEV" | "STDDEV_POP" => AggFunc::StdPop,
        "STDDEV_SAMP" => AggFunc::StdSamp,
        "VARIANCE" | "VAR_POP" => AggFunc::VarPop,
        "VAR_SAMP" => AggFunc::VarSamp,
        "BIT_AND" => AggFunc::BitAnd,
        "BIT_OR" => AggFunc::BitOr,
        "BIT_XOR" => AggFunc::BitXor,
        _ => return None,
    })
}

/// Binds `f(...) OVER ...` (f's name upper-cased in `name`); returns its slot.
pub fn bind_call(b: &mut Binder, f: &ast::Function, name: &str, scope: &Scope) -> Result<Expr> {
    let Some(over) = &f.over else {
        return Err(SqlError::internal("window call without OVER"));
    };
    let Some(mut cx) = b.win.take() else {
        return Err(if b.agg_arg {
            SqlError::window_in_aggregate()
        } else {
            SqlError::window_placement()
        });
    };
    let r = bind_in(b, &cx, f, over, name, scope);
    let call = match r {
        Ok(c) => c,
        Err(e) => {
            b.win = Some(cx);
            return Err(e);
        }
    };
    cx.calls.push(call);
    let slot = WIN_MARK + cx.calls.len() - 1;
    b.win = Some(cx);
    Ok(Expr::Col(slot))
}

fn bind_in(
    b: &mut Binder,
    cx: &WinCtx,
    f: &ast::Function,
    over: &ast::WindowType,
    name: &str,
    scope: &Scope,
) -> Result<WinCall> {
    let ast::Function {
        name: _,
        uses_odbc_syntax: _,
        parameters,
        args: _,
        filter,
        null_treatment,
        over: _,
        within_group,
    } = f;
    if filter.is_some() || null_treatment.is_some() || !within_group.is_empty() {
        return Err(SqlError::unsupported(format!(
            "FILTER, WITHIN GROUP or NULL treatment in {name}"
        )));
    }
    if !matches!(parameters, ast::FunctionArguments::None) {
        return Err(SqlError::unsupported(format!("parametric function {name}")));
    }
    let spec = match over {
        ast::WindowType::NamedWindow(w) => cx
            .find(&w.value)
            .cloned()
            .ok_or_else(|| SqlError::window_undefined(&w.value))?,
        ast::WindowType::WindowSpec(s) => cx.resolve(s)?,
    };
    let lname = name.to_ascii_lowercase();
    let (args, distinct, star) = arguments(f, name)?;
    let syntax = || SqlError::parse(format!("near '{name}(' (wrong arguments)"));
    let kind = match (kind_of(name), agg_of(name, star)) {
        (Some(k), _) => k,
        (None, Some(_)) => WinKind::Agg,
        (None, None)
            if matches!(
                name,
                "GROUP_CONCAT" | "ANY_VALUE" | "JSON_ARRAYAGG" | "JSON_OBJECTAGG"
            ) =>
        {
            return Err(SqlError::unsupported(format!(
                "{name}() aggregate as window function"
            )))
        }
        (None, None) => return Err(SqlError::parse(format!("near '{name}(...) OVER'"))),
    };
    if distinct {
        return Err(SqlError::unsupported(format!(
            "{name}(DISTINCT) aggregate as window function"
        )));
    }
    let mut call = WinCall {
        kind,
        name: lname.clone(),
        args: Vec::new(),
        n: None,
        agg: None,
        spec: WinSpec {
            partition: Vec::new(),
            order: Vec::new(),
        },
        frame: Frame::default_range(),
    };
    // Arguments, with the count each function takes (MariaDB's grammar: 1064).
    let (min, max) = match kind {
        WinKind::RowNumber
        | WinKind::Rank
        | WinKind::DenseRank
        | WinKind::PercentRank
        | WinKind::CumeDist => (0, 0),
        WinKind::Ntile | WinKind::FirstValue | WinKind::LastValue => (1, 1),
        // LAG/LEAD's default is MySQL 8's (MariaDB 10.11 takes two arguments).
        WinKind::Lag | WinKind::Lead => (1, 3),
        WinKind::NthValue => (2, 2),
        WinKind::Agg if star => (0, 0),
        WinKind::Agg => (1, 1),
    };
    if args.len() < min || args.len() > max || (star && kind != WinKind::Agg) {
        return Err(syntax());
    }
    // A window function in the arguments is 4074, in the window spec 4015.
    let mut bound = Vec::with_capacity(args.len());
    let outer = std::mem::replace(&mut b.agg_arg, true);
    for a in &args {
        match b.expr(a, scope) {
            Ok(x) => bound.push(x),
            Err(e) => {
                b.agg_arg = outer;
                return Err(e);
            }
        }
    }
    b.agg_arg = outer;
    match kind {
        WinKind::Agg => {
            let func = agg_of(name, star).ok_or_else(syntax)?;
            call.agg = Some(AggSpec::new(func, bound.pop(), false));
        }
        WinKind::Ntile => call.n = bound.pop(),
        WinKind::NthValue => {
            call.n = bound.pop();
            call.args = bound;
        }
        WinKind::Lag | WinKind::Lead => {
            let mut it = bound.into_iter();
            call.args.extend(it.next());
            call.n = it.next();
            call.args.extend(it.next());
        }
        _ => call.args = bound,
    }
    if let Some(n) = &call.n {
        if !n.is_row_independent() {
            if kind == WinKind::Ntile {
                return Err(SqlError::ntile_argument());
            }
            return Err(SqlError::unsupported(format!(
                "a {lname} argument that is not a constant"
            )));
        }
    }
    for p in &spec.partition_by {
        let p = crate::select::alias::window_item(p, &cx.proj, scope, true);
        call.spec.partition.push(b.expr(&p, scope)?);
    }
    for o in &spec.order_by {
        crate::accept::check_order_expr(o)?;
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        let e = crate::select::alias::window_item(&o.expr, &cx.proj, scope, false);
        call.spec.order.push((b.expr(&e, scope)?, desc));
    }
    let needs_order = matches!(
        kind,
        WinKind::Rank
            | WinKind::DenseRank
            | WinKind::PercentRank
            | WinKind::CumeDist
            | WinKind::Lag
            | WinKind::Lead
    );
    if needs_order && call.spec.order.is_empty() {
        return Err(SqlError::window_needs_order(&lname));
    }
    if let Some(fr) = &spec.window_frame {
        let no_frame = matches!(
            kind,
            WinKind::RowNumber
                | WinKind::Rank
                | WinKind::DenseRank
                | WinKind::PercentRank
                | WinKind::CumeDist
                | WinKind::Ntile
        );
        if no_frame {
            return Err(SqlError::window_frame_not_allowed(&lname));
        }
        call.frame = frame(b, fr)?;
    }
    Ok(call)
}

/// A frame clause, checked as MariaDB checks it.
fn frame(b: &mut Binder, f: &ast::WindowFrame) -> Result<Frame> {
    let rows = match f.units {
        ast::WindowFrameUnits::Rows => true,
        ast::WindowFrameUnits::Range => false,
        ast::WindowFrameUnits::Groups => return Err(SqlError::unsupported("GROUPS frames")),
    };
    let start = bound(b, &f.start_bound, rows)?;
    let end = match &f.end_bound {
        Some(e) => bound(b, e, rows)?,
        None => Bound::CurrentRow,
    };
    use Bound as B;
    let bad = matches!(start, B::UnboundedFollowing)
        || matches!(end, B::UnboundedPreceding)
        || (matches!(start, B::CurrentRow) && matches!(end, B::Preceding(_)))
        || (matches!(end, B::CurrentRow) && matches!(start, B::Following(_)));
    if bad {
        return Err(SqlError::window_bad_bounds());
    }
    Ok(Frame { rows, start, end })
}

fn bound(b: &mut Binder, x: &ast::WindowFrameBound, rows: bool) -> Result<Bound> {
    let offset = |b: &mut Binder, e: &ast::Expr| -> Result<Value> {
        match e {
            ast::Expr::Interval(_) => {
                return Err(SqlError::unsupported("RANGE frames with INTERVAL"))
            }
            // MariaDB's grammar takes a literal number only.
            ast::Expr::Value(_) | ast::Expr::UnaryOp { .. } => {}
            other => return Err(SqlError::parse(format!("near '{other}' in a window frame"))),
        }
        let v = match b.expr(e, &Scope::default())? {
            Expr::Const(v) => v,
            _ => return Err(SqlError::unsupported("a frame offset that is not a number")),
        };
        let neg = v.to_f64().is_some_and(|d| d < 0.0);
        match &v {
            // MariaDB's grammar takes an unsigned literal.
            _ if neg => Err(SqlError::parse(format!("near '{e}' in a window frame"))),
            Value::Int(_) | Value::UInt(_) => Ok(v),
            Value::Decimal(..) | Value::Double(_) if rows => Err(SqlError::window_rows_type()),
            Value::Decimal(..) | Value::Double(_) => Ok(v),
            _ if rows => Err(SqlError::window_rows_type()),
            _ => Err(SqlError::window_range_type()),
        }
    };
    Ok(match x {
        ast::WindowFrameBound::CurrentRow => Bound::CurrentRow,
        ast::WindowFrameBound::Preceding(None) => Bound::UnboundedPreceding,
        ast::WindowFrameBound::Following(None) => Bound::UnboundedFollowing,
        ast::WindowFrameBound::Preceding(Some(e)) => Bound::Preceding(offset(b, e)?),
        ast::WindowFrameBound::Following(Some(e)) => Bound::Following(offset(b, e)?),
    })
}
