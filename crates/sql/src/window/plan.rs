//! Finishing a query's window calls once its row is known: expressions under their
//! collations (PARTITION BY and ORDER BY as collation sort keys, so 'a' and 'A' share a
//! partition under a `_ci` collation), RANGE offsets checked (4019, 4021), and the
//! typing context for the select list: each window slot seen as a column of the type
//! and collation the call returns.
use super::{Bound, WinCall, WinKind, WindowPlan};
use crate::bind::{AggFunc, AggSpec};
use crate::collate::{self, annotate, Ctx};
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use crate::result::OutType;
use crate::types::{agg_result, column_type, infer};
use rel::schema::Column;
use rel::value::{TypeKind, Value};

/// What `finish` gives the planner: the window step, and the columns and grouped row
/// (when grouping) that type the select list with window slots appended.
pub struct Finished {
    pub plan: WindowPlan,
    pub cols: Vec<Column>,
    pub agg: Option<(Vec<Expr>, Vec<AggSpec>)>,
}

/// Finishes `calls`, bound over the table row (`cols`) or the grouped row (`agg`).
pub fn finish(
    calls: Vec<WinCall>,
    cols: &[Column],
    agg: Option<&(Vec<Expr>, Vec<AggSpec>)>,
) -> Result<Finished> {
    let cx = Ctx { cols, agg };
    let width = match agg {
        Some((g, a)) => g.len() + a.len(),
        None => cols.len(),
    };
    let mut done = Vec::with_capacity(calls.len());
    let mut slots = Vec::with_capacity(calls.len());
    for (k, c) in calls.into_iter().enumerate() {
        let c = annotate_call(c, cx)?;
        check_range(&c, cx)?;
        let (ty, coll) = result_type(&c, cx)?;
        let mut ct = column_type(ty);
        if let (true, Some(co)) = (ct.is_string() && !ct.is_binary(), coll) {
            ct.coll = co;
        }
        slots.push(Column::plain(format!("window {k}"), ct));
        done.push(sort_keys(c, cx)?);
    }
    let base = cols.len();
    let mut tcols = cols.to_vec();
    let n = slots.len();
    tcols.extend(slots);
    let tagg = agg.map(|(g, a)| {
        let mut a = a.clone();
        a.extend((0..n).map(|k| AggSpec::new(AggFunc::AnyValue, Some(Expr::Col(base + k)), false)));
        (g.clone(), a)
    });
    Ok(Finished {
        plan: WindowPlan::new(done, width),
        cols: tcols,
        agg: tagg,
    })
}

fn annotate_call(mut c: WinCall, cx: Ctx) -> Result<WinCall> {
    let an = |e: Expr| annotate(e, cx);
    c.args = c.args.into_iter().map(an).collect::<Result<_>>()?;
    c.n = c.n.map(an).transpose()?;
    c.spec.partition = c
        .spec
        .partition
        .into_iter()
        .map(an)
        .collect::<Result<_>>()?;
    c.spec.order = c
        .spec
        .order
        .into_iter()
        .map(|(e, d)| Ok((an(e)?, d)))
        .collect::<Result<_>>()?;
    if let Some(a) = &mut c.agg {
        a.arg = a.arg.take().map(an).transpose()?;
        if let Some(x) = &a.arg {
            a.coll = collate::group_colls(std::slice::from_ref(x), cx)?[0];
        }
    }
    Ok(c)
}

/// PARTITION BY and ORDER BY as sort keys under their collations.
fn sort_keys(mut c: WinCall, cx: Ctx) -> Result<WinCall> {
    c.spec.partition = c
        .spec
        .partition
        .into_iter()
        .map(|e| collate::sort_key(e, cx))
        .collect::<Result<_>>()?;
    c.spec.order = c
        .spec
        .order
        .into_iter()
        .map(|(e, d)| Ok((collate::sort_key(e, cx)?, d)))
        .collect::<Result<_>>()?;
    Ok(c)
}

fn is_numeric(t: OutType) -> bool {
    match t {
        OutType::Int { .. } | OutType::Decimal { .. } | OutType::Double | OutType::Null => true,
        OutType::Column(c) => {
            c.is_integer()
                || matches!(
                    c.kind,
                    TypeKind::Decimal | TypeKind::Double | TypeKind::Float
                )
        }
        _ => false,
    }
}

/// A RANGE frame with an offset needs one numeric ORDER BY key.
fn check_range(c: &WinCall, cx: Ctx) -> Result<()> {
    let offset = |b: &Bound| matches!(b, Bound::Preceding(_) | Bound::Following(_));
    if c.frame.rows || !(offset(&c.frame.start) || offset(&c.frame.end)) {
        return Ok(());
    }
    let [(key, _)] = c.spec.order.as_slice() else {
        return Err(SqlError::window_range_order());
    };
    if !is_numeric(infer(key, cx.cols, cx.agg)) {
        return Err(SqlError::window_range_type());
    }
    Ok(())
}

/// The type a call returns, and the collation of a string result.
fn result_type(c: &WinCall, cx: Ctx) -> Result<(OutType, Option<rel::collation::Collation>)> {
    let value = |e: &Expr| -> Result<(OutType, Option<rel::collation::Collation>)> {
        Ok((
            infer(e, cx.cols, cx.agg),
            collate::derive(e, cx)?.map(|(co, _)| co),
        ))
    };
    Ok(match c.kind {
        WinKind::RowNumber | WinKind::Rank | WinKind::DenseRank | WinKind::Ntile => {
            (OutType::Int { unsigned: false }, None)
        }
        WinKind::PercentRank | WinKind::CumeDist => (OutType::Double, None),
        WinKind::Lag | WinKind::Lead if c.args.len() == 2 => value(&Expr::Case {
            operand: None,
            whens: vec![(Expr::Const(Value::Int(1)), c.args[0].clone())],
            otherwise: Some(Box::new(c.args[1].clone())),
        })?,
        WinKind::Lag
        | WinKind::Lead
        | WinKind::FirstValue
        | WinKind::LastValue
        | WinKind::NthValue => match c.args.first() {
            Some(x) => value(x)?,
            None => (OutType::Null, None),
        },
        WinKind::Agg => {
            let Some(a) = &c.agg else {
                return Err(SqlError::internal("window aggregate without its spec"));
            };
            let (arg, coll) = match &a.arg {
                Some(x) => value(x)?,
                None => (OutType::Null, None),
            };
            let coll = matches!(a.func, AggFunc::Min | AggFunc::Max)
                .then_some(coll)
                .flatten();
            (agg_result(a.func, arg), coll)
        }
    })
}
