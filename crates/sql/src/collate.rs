//! Collations of expressions: which collation a comparison, LIKE, IN,
//! BETWEEN, CASE, ORDER BY, GROUP BY or DISTINCT follows, by MySQL's
//! coercibility rules (an explicit COLLATE beats a column, a column beats a
//! literal or parameter; two columns of different collations are error
//! 1267), and evaluation under it.
//!
//! After binding, `annotate` wraps each comparison whose operands are
//! strings of a collation that is not bytewise in `Expr::Collated(c, ..)`;
//! code that does not know the wrapper (hash joins, equality propagation)
//! treats it as an opaque predicate, so it can only lose an optimization,
//! never answer with bytewise equality. Access paths look through the
//! wrapper when its collation is the key column's (index keys hold that
//! collation's weights). ORDER BY keys become `Expr::SortKey`, GROUP BY and
//! DISTINCT hash weights (`group_colls`, `image`).
use crate::bind::{AggFunc, AggSpec};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Env, Expr};
use crate::func::Func;
use crate::result::OutType;
use crate::subquery::SubResult;
use rel::collation::{for_each_char, Collation};
use rel::schema::Column;
use rel::value::{compare, Value};
use std::cmp::Ordering;

/// How strongly an operand imposes its collation (MySQL's coercibility,
/// strongest first; NONE and SYSCONST are folded into their neighbours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coerce {
    Explicit,
    Implicit,
    Coercible,
    Ignorable,
}

impl Coerce {
    fn name(self) -> &'static str {
        match self {
            Coerce::Explicit => "EXPLICIT",
            Coerce::Implicit => "IMPLICIT",
            Coerce::Coercible => "COERCIBLE",
            Coerce::Ignorable => "IGNORABLE",
        }
    }
}

/// A string operand's collation and coercibility; None for numbers and
/// temporal values.
pub type Derived = Option<(Collation, Coerce)>;

/// The row an expression is evaluated over: table columns, or the grouped
/// row (group expressions, then aggregates) of an aggregate query.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub cols: &'a [Column],
    pub agg: Option<&'a (Vec<Expr>, Vec<AggSpec>)>,
}

impl<'a> Ctx<'a> {
    pub fn new(cols: &'a [Column]) -> Ctx<'a> {
        Ctx { cols, agg: None }
    }

    fn base(self) -> Ctx<'a> {
        Ctx {
            cols: self.cols,
            agg: None,
        }
    }
}

fn string_type(t: &OutType) -> Option<Derived> {
    match t {
        OutType::Column(ty) if ty.is_string() || ty.is_enum_or_set() => Some(Some((
            if ty.is_binary() {
                Collation::Binary
            } else {
                ty.coll
            },
            Coerce::Implicit,
        ))),
        OutType::Text { .. } => Some(Some((Collation::DEFAULT, Coerce::Coercible))),
        OutType::Null => Some(Some((Collation::DEFAULT, Coerce::Ignorable))),
        _ => None,
    }
}

/// The collation named by a CHARACTER SET and/or COLLATE clause, or `dflt`
/// when neither is given. MySQL's errors: 1115 for an unknown character
/// set, 1273 for an unknown collation, 1253 when they do not belong
/// together; a collation or character set MySQL has but Strata does not is
/// refused with 1235.
pub fn resolve(charset: Option<&str>, collate: Option<&str>, dflt: Collation) -> Result<Collation> {
    let cs = match charset {
        None => None,
        Some(cs) => match Collation::default_of_charset(cs) {
            Some(c) => Some(c),
            None if Collation::known_unsupported_charset(cs) => {
                return Err(SqlError::unsupported(format!("CHARACTER SET {cs}")))
            }
            None => return Err(SqlError::unknown_charset(cs)),
        },
    };
    let co = match collate {
        None => None,
        Some(name) => match Collation::from_name(name) {
            Some(c) => Some(c),
            None if Collation::known_unsupported(name) => {
                return Err(SqlError::unsupported(format!("COLLATE {name}")))
            }
            None => return Err(SqlError::unknown_collation(name)),
        },
    };
    match (cs, co) {
        (None, None) => Ok(dflt),
        (Some(c), None) | (None, Some(c)) => Ok(c),
        (Some(c), Some(k)) if c.charset() == k.charset() => Ok(k),
        (Some(c), Some(k)) => Err(SqlError::collation_charset_mismatch(k.name(), c.charset())),
    }
}

/// The collation a string-valued expression has (None: not a string).
pub fn derive(e: &Expr, cx: Ctx) -> Result<Derived> {
    Ok(match e {
        Expr::Collate(_, c) => Some((*c, Coerce::Explicit)),
        Expr::Const(Value::Null) => Some((Collation::DEFAULT, Coerce::Ignorable)),
        Expr::Const(Value::Bytes(_)) | Expr::Param(_) | Expr::UserVar(_) | Expr::SysVar(..) => {
            Some((Collation::DEFAULT, Coerce::Coercible))
        }
        Expr::Const(_) => None,
        Expr::Col(i) => match cx.agg {
            Some((groups, aggs)) => {
                if *i < groups.len() {
                    derive(&groups[*i], cx.base())?
                } else {
                    match aggs.get(*i - groups.len()) {
                        Some(a) => match (a.func, &a.arg) {
                            (
                                AggFunc::Min
                                | AggFunc::Max
                                | AggFunc::AnyValue
                                | AggFunc::GroupConcat,
                                Some(x),
                            ) => derive(x, cx.base())?,
                            _ => None,
                        },
                        None => None,
                    }
                }
            }
            None => match cx.cols.get(*i) {
                Some(c) => string_type(&OutType::Column(c.ty.clone())).flatten(),
                None => None,
            },
        },
        Expr::Subquery(_, t) => string_type(t).flatten(),
        Expr::Case {
            whens, otherwise, ..
        } => {
            if !is_string(e, cx) {
                return Ok(None);
            }
            let mut d = None;
            for x in whens.iter().map(|(_, t)| t).chain(otherwise.as_deref()) {
                d = merge(d, derive(x, cx)?, "case")?;
            }
            d
        }
        Expr::Func(f, args) => {
            if !is_string(e, cx) {
                return Ok(None);
            }
            let from: &[Expr] = match f {
                Func::If => args.get(1..).unwrap_or(&[]),
                Func::NullIf => args.get(..1).unwrap_or(&[]),
                // Digests, hex and formatted dates are new strings.
                Func::Hex
                | Func::Md5
                | Func::Sha1
                | Func::Sha2
                | Func::DateFormat
                | Func::DayName
                | Func::MonthName
                | Func::Database
                | Func::Version
                | Func::User => &[],
                _ => args,
            };
            let mut d = None;
            for x in from {
                d = merge(d, derive(x, cx)?, "concat")?;
            }
            d.or(Some((Collation::DEFAULT, Coerce::Coercible)))
        }
        _ => None,
    })
}

fn is_string(e: &Expr, cx: Ctx) -> bool {
    string_type(&crate::types::infer(e, cx.cols, cx.agg)).is_some()
}

fn rank(c: Collation) -> u8 {
    match c.charset() {
        "utf8mb4" => 3,
        "utf8mb3" => 2,
        _ => 1,
    }
}

/// The collation two operands are compared (or combined) under.
pub fn merge(a: Derived, b: Derived, op: &str) -> Result<Derived> {
    let ((ca, pa), (cb, pb)) = match (a, b) {
        (None, x) | (x, None) => return Ok(x),
        (Some(x), Some(y)) => (x, y),
    };
    if ca == cb {
        return Ok(Some((ca, pa.min(pb))));
    }
    if pa != pb {
        return Ok(Some(if pa < pb { (ca, pa) } else { (cb, pb) }));
    }
    if ca == Collation::Binary || cb == Collation::Binary {
        return Ok(Some((Collation::Binary, pa)));
    }
    // One character set, one side `_bin`: the `_bin` collation (MySQL's rule
    // for equal coercibility).
    if ca.charset() == cb.charset() && pa != Coerce::Explicit && (ca.is_bin() || cb.is_bin()) {
        return Ok(Some(if ca.is_bin() { (ca, pa) } else { (cb, pb) }));
    }
    if ca.charset() != cb.charset() && pa != Coerce::Explicit {
        return Ok(Some(if rank(ca) >= rank(cb) {
            (ca, pa)
        } else {
            (cb, pb)
        }));
    }
    match pa {
        Coerce::Coercible | Coerce::Ignorable => Ok(Some((ca, pa))),
        _ => Err(SqlError::illegal_mix(
            ca.name(),
            pa.name(),
            cb.name(),
            pb.name(),
            op,
        )),
    }
}

fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::NullSafeEq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

/// The collation of a comparison of all of `ops` (None: not a string
/// comparison, or one that is bytewise).
fn cmp_coll(ops: &[&Expr], cx: Ctx, op: &str, like: bool) -> Result<Option<Collation>> {
    let mut d = None;
    for x in ops {
        match derive(x, cx)? {
            // A number or temporal operand: compared as such, not as strings
            // (LIKE reads its operand as a string).
            None if !like => return Ok(None),
            None => {}
            some => d = merge(d, some, op)?,
        }
    }
    Ok(match d {
        Some((c, _)) if !c.is_bytewise() || (like && c != Collation::Binary) => Some(c),
        _ => None,
    })
}

/// Wraps the string comparisons in `e` (bound over `cx`) that follow a
/// collation other than a bytewise one in `Expr::Collated`.
pub fn annotate(e: Expr, cx: Ctx) -> Result<Expr> {
    let a = |x: Box<Expr>| -> Result<Box<Expr>> { Ok(Box::new(annotate(*x, cx)?)) };
    let all =
        |v: Vec<Expr>| -> Result<Vec<Expr>> { v.into_iter().map(|x| annotate(x, cx)).collect() };
    let e = match e {
        Expr::Neg(x) => Expr::Neg(a(x)?),
        Expr::Not(x) => Expr::Not(a(x)?),
        Expr::BitNot(x) => Expr::BitNot(a(x)?),
        Expr::IsNull(x, n) => Expr::IsNull(a(x)?, n),
        Expr::IsBool(x, w, n) => Expr::IsBool(a(x)?, w, n),
        Expr::Collate(x, c) => Expr::Collate(a(x)?, c),
        Expr::Bin(op, x, y) => Expr::Bin(op, a(x)?, a(y)?),
        Expr::In(x, l, n) => Expr::In(a(x)?, all(l)?, n),
        Expr::InSubquery(x, k, n) => Expr::InSubquery(a(x)?, k, n),
        Expr::Between(x, l, h, n) => Expr::Between(a(x)?, a(l)?, a(h)?, n),
        Expr::Like(x, p, n, esc) => Expr::Like(a(x)?, a(p)?, n, esc),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => Expr::Case {
            operand: operand.map(a).transpose()?,
            whens: whens
                .into_iter()
                .map(|(w, t)| Ok((annotate(w, cx)?, annotate(t, cx)?)))
                .collect::<Result<_>>()?,
            otherwise: otherwise.map(a).transpose()?,
        },
        Expr::Func(f, args) => Expr::Func(f, all(args)?),
        other => other,
    };
    let e = crate::members::numeric_context(e, cx);
    let coll = match &e {
        Expr::Bin(op, x, y) if is_cmp(*op) => cmp_coll(&[x, y], cx, op_name(*op), false)?,
        Expr::In(x, l, _) => {
            let mut ops: Vec<&Expr> = vec![x];
            ops.extend(l.iter());
            cmp_coll(&ops, cx, "in", false)?
        }
        Expr::InSubquery(x, ..) => cmp_coll(&[x], cx, "in", false)?,
        Expr::Between(x, l, h, _) => cmp_coll(&[x, l, h], cx, "between", false)?,
        Expr::Like(x, p, ..) => cmp_coll(&[x, p], cx, "like", true)?,
        Expr::Case {
            operand: Some(o),
            whens,
            ..
        } => {
            let mut ops: Vec<&Expr> = vec![o];
            ops.extend(whens.iter().map(|(w, _)| w));
            cmp_coll(&ops, cx, "case", false)?
        }
        Expr::Func(
            Func::NullIf | Func::Strcmp | Func::Field | Func::Greatest | Func::Least,
            args,
        ) => {
            let ops: Vec<&Expr> = args.iter().collect();
            cmp_coll(&ops, cx, "strcmp", false)?
        }
        Expr::Func(Func::Locate | Func::Instr | Func::FindInSet, args) if args.len() >= 2 => {
            cmp_coll(&[&args[0], &args[1]], cx, "locate", false)?
        }
        _ => None,
    };
    Ok(match coll {
        Some(c) => Expr::Collated(c, Box::new(e)),
        None => e,
    })
}

fn op_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "=",
        BinOp::NullSafeEq => "<=>",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        _ => ">=",
    }
}

/// ORDER BY key `e` as a sort key under its collation (unchanged when it is
/// not a string of a non-bytewise collation).
pub fn sort_key(e: Expr, cx: Ctx) -> Result<Expr> {
    if crate::members::member_type(&e, cx).is_some() {
        // ENUM and SET sort by member number (MariaDB).
        return Ok(crate::members::as_number(e, cx));
    }
    Ok(match derive(&e, cx)? {
        Some((c, _)) if !c.is_bytewise() => Expr::SortKey(c, Box::new(e)),
        _ => e,
    })
}

/// The collation each expression's values group by (GROUP BY, DISTINCT):
/// None for bytewise or non-string values.
pub fn group_colls(exprs: &[Expr], cx: Ctx) -> Result<Vec<Option<Collation>>> {
    exprs
        .iter()
        .map(|e| {
            Ok(match derive(e, cx)? {
                Some((c, _)) if !c.is_bytewise() => Some(c),
                _ => None,
            })
        })
        .collect()
}

/// Compares two values, strings under `coll` when given.
pub fn cmp(x: &Value, y: &Value, coll: Option<Collation>) -> Ordering {
    match (coll, x, y) {
        (Some(c), Value::Bytes(a), Value::Bytes(b)) => c.compare(a, b),
        _ => compare(x, y),
    }
}

/// Appends the hash image of a value: strings under `coll` by their weights.
pub fn image(v: &Value, coll: Option<Collation>, out: &mut Vec<u8>) {
    match (coll, v) {
        (Some(c), Value::Bytes(b)) => {
            let mut w = Vec::with_capacity(b.len() * 2);
            c.weights(b, &mut w);
            out.push(4);
            out.extend_from_slice(&(w.len() as u32).to_le_bytes());
            out.extend_from_slice(&w);
        }
        _ => crate::agg::hash_image(v, out),
    }
}

/// Evaluates `e`, a comparison wrapped by `annotate`, under `c`.
pub fn eval_collated(c: Collation, e: &Expr, row: &[Value], env: &dyn Env) -> Result<Value> {
    let c = Some(c);
    match e {
        Expr::Bin(op, a, b) if is_cmp(*op) => {
            let (x, y) = (a.eval(row, env)?, b.eval(row, env)?);
            Ok(compare_op(*op, &x, &y, c))
        }
        Expr::In(x, list, negated) => eval_in(x, list, *negated, c, row, env),
        Expr::Between(x, lo, hi, negated) => eval_between(x, lo, hi, *negated, c, row, env),
        Expr::Like(x, p, negated, esc) => eval_like(x, p, *negated, *esc, c, row, env),
        Expr::InSubquery(x, k, negated) => eval_in_subquery(x, *k, *negated, c, row, env),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => eval_case(operand.as_deref(), whens, otherwise.as_deref(), c, row, env),
        Expr::Func(f, args) => eval_func(f, args, c, row, env),
        other => other.eval(row, env),
    }
}

/// The functions that compare strings, under collation `c` (wrapped by
/// `annotate`).
fn eval_func(
    f: &Func,
    args: &[Expr],
    c: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let a = |i: usize| -> Result<Value> {
        match args.get(i) {
            Some(e) => e.eval(row, env),
            None => Ok(Value::Null),
        }
    };
    Ok(match f {
        Func::FindInSet => crate::members::find_in_set(&a(0)?, &a(1)?, c),
        Func::NullIf => {
            let (x, y) = (a(0)?, a(1)?);
            if !x.is_null() && !y.is_null() && cmp(&x, &y, c).is_eq() {
                Value::Null
            } else {
                x
            }
        }
        Func::Strcmp => {
            let (x, y) = (a(0)?, a(1)?);
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            let o = cmp(&Value::Bytes(x.text()), &Value::Bytes(y.text()), c);
            Value::Int(o as i64)
        }
        Func::Field => {
            let x = a(0)?;
            if !x.is_null() {
                for i in 1..args.len() {
                    let y = a(i)?;
                    if !y.is_null() && cmp(&x, &y, c).is_eq() {
                        return Ok(Value::Int(i as i64));
                    }
                }
            }
            Value::Int(0)
        }
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for i in 0..args.len() {
                let v = a(i)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let o = best.as_ref().map(|b| cmp(&v, b, c));
                let want = if *f == Func::Greatest {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                if o.is_none_or(|o| o == want) {
                    best = Some(v);
                }
            }
            best.unwrap_or(Value::Null)
        }
        Func::Locate | Func::Instr => {
            let (needle, hay) = if *f == Func::Locate {
                (a(0)?, a(1)?)
            } else {
                (a(1)?, a(0)?)
            };
            let from = if *f == Func::Locate && args.len() > 2 {
                match a(2)?.to_i128() {
                    None => return Ok(Value::Null),
                    Some(p) if p < 1 => return Ok(Value::Int(0)),
                    Some(p) => p as usize,
                }
            } else {
                1
            };
            if needle.is_null() || hay.is_null() {
                return Ok(Value::Null);
            }
            match c {
                Some(c) => Value::Int(find_chars(&hay.text(), &needle.text(), from, c)),
                None => crate::func::call(f, args, row, env)?,
            }
        }
        _ => crate::func::call(f, args, row, env)?,
    })
}

/// 1-based character position of `needle` in `hay` at or after character
/// `from` under `c` (0: not found).
fn find_chars(hay: &[u8], needle: &[u8], from: usize, c: Collation) -> i64 {
    let (h, n) = (units(hay), units(needle));
    let eq = |a: u32, b: u32| match (char::from_u32(a), char::from_u32(b)) {
        (Some(x), Some(y)) => c.char_eq(x, y),
        _ => a == b,
    };
    if from > h.len() + 1 {
        return 0;
    }
    if n.is_empty() {
        return from as i64;
    }
    for start in from - 1..h.len() {
        if start + n.len() > h.len() {
            break;
        }
        if n.iter().zip(&h[start..]).all(|(x, y)| eq(*x, *y)) {
            return start as i64 + 1;
        }
    }
    0
}

/// A comparison operator applied to two values.
pub fn compare_op(op: BinOp, x: &Value, y: &Value, coll: Option<Collation>) -> Value {
    if op == BinOp::NullSafeEq {
        return Value::Int(match (x.is_null(), y.is_null()) {
            (true, true) => 1,
            (false, false) => cmp(x, y, coll).is_eq() as i64,
            _ => 0,
        });
    }
    if x.is_null() || y.is_null() {
        return Value::Null;
    }
    let o = cmp(x, y, coll);
    let r = match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    };
    Value::Int(r as i64)
}

/// `x [NOT] IN (list)` in three-valued logic.
pub fn eval_in(
    x: &Expr,
    list: &[Expr],
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for e in list {
        let xv = e.eval(row, env)?;
        if xv.is_null() {
            saw_null = true;
        } else if cmp(&v, &xv, coll) == Ordering::Equal {
            return Ok(Value::Int(!negated as i64));
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Int(negated as i64)
    })
}

/// `x [NOT] BETWEEN lo AND hi`: (x >= lo AND x <= hi) in three-valued
/// logic (a NULL bound makes it NULL only when the other test does not fail).
pub fn eval_between(
    x: &Expr,
    lo: &Expr,
    hi: &Expr,
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let l = lo.eval(row, env)?;
    let h = hi.eval(row, env)?;
    let ge = (!l.is_null()).then(|| cmp(&v, &l, coll) != Ordering::Less);
    let le = (!h.is_null()).then(|| cmp(&v, &h, coll) != Ordering::Greater);
    Ok(match (ge, le) {
        (Some(false), _) | (_, Some(false)) => Value::Int(negated as i64),
        (Some(true), Some(true)) => Value::Int(!negated as i64),
        _ => Value::Null,
    })
}

/// `x [NOT] IN (subquery k)`.
pub fn eval_in_subquery(
    x: &Expr,
    k: usize,
    negated: bool,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    match env.subquery(k) {
        Some(SubResult::Set(s)) => Ok(match s.contains_coll(&v, coll) {
            None => Value::Null,
            Some(b) => Value::Int((b != negated) as i64),
        }),
        _ => Err(SqlError::internal(format!("subquery {k} not computed"))),
    }
}

/// CASE [operand] WHEN ... THEN ... [ELSE ...] END.
pub fn eval_case(
    operand: Option<&Expr>,
    whens: &[(Expr, Expr)],
    otherwise: Option<&Expr>,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let op = match operand {
        Some(o) => Some(o.eval(row, env)?),
        None => None,
    };
    for (w, t) in whens {
        let wv = w.eval(row, env)?;
        let hit = match &op {
            Some(o) => !o.is_null() && !wv.is_null() && cmp(o, &wv, coll) == Ordering::Equal,
            None => wv.truth() == Some(true),
        };
        if hit {
            return t.eval(row, env);
        }
    }
    match otherwise {
        Some(e) => e.eval(row, env),
        None => Ok(Value::Null),
    }
}

/// `x [NOT] LIKE p [ESCAPE esc]`: bytewise under no collation, else
/// character by character under it.
#[allow(clippy::too_many_arguments)]
pub fn eval_like(
    x: &Expr,
    p: &Expr,
    negated: bool,
    esc: u8,
    coll: Option<Collation>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Value> {
    let v = x.eval(row, env)?;
    let pv = p.eval(row, env)?;
    if v.is_null() || pv.is_null() {
        return Ok(Value::Null);
    }
    let m = match coll {
        None => crate::expr::like(&v.text(), &pv.text(), esc),
        Some(c) => like_chars(&v.text(), &pv.text(), esc, c),
    };
    Ok(Value::Int((m != negated) as i64))
}

/// A character of a LIKE operand: a code point, or 0x110000 + byte for a
/// byte that is not UTF-8.
fn units(s: &[u8]) -> Vec<u32> {
    let mut v = Vec::with_capacity(s.len());
    for_each_char(s, |c| {
        v.push(match c {
            Ok(c) => c as u32,
            Err(b) => 0x110000 + b as u32,
        })
    });
    v
}

/// LIKE over characters, each compared under `c`.
pub fn like_chars(s: &[u8], p: &[u8], esc: u8, c: Collation) -> bool {
    let (s, p) = (units(s), units(p));
    let esc = esc as u32;
    let eq = |a: u32, b: u32| match (char::from_u32(a), char::from_u32(b)) {
        (Some(x), Some(y)) => c.char_eq(x, y),
        _ => a == b,
    };
    crate::expr::like_units(&s, &p, '%' as u32, '_' as u32, esc, eq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_follows_the_collation_per_character() {
        let ci = Collation::Utf8mb4GeneralCi;
        assert!(like_chars(b"ABC", b"a%", b'\\', ci));
        assert!(like_chars("é".as_bytes(), b"_", b'\\', ci));
        assert!(like_chars("Résumé".as_bytes(), b"res_me", b'\\', ci));
        assert!(!like_chars(b"abc", b"a_", b'\\', ci));
        assert!(like_chars(b"a%c", b"A\\%C", b'\\', ci));
        assert!(!like_chars(b"ABC", b"a%", b'\\', Collation::Utf8mb4Bin));
        assert!(like_chars(
            "é".as_bytes(),
            b"_",
            b'\\',
            Collation::Utf8mb4Bin
        ));
    }

    #[test]
    fn coercibility_decides_and_explicit_collations_clash() {
        let col = |c| Some((c, Coerce::Implicit));
        let lit = Some((Collation::Utf8mb4GeneralCi, Coerce::Coercible));
        let bin = Collation::Utf8mb4Bin;
        assert_eq!(merge(col(bin), lit, "=").unwrap(), col(bin));
        assert_eq!(merge(lit, col(bin), "=").unwrap(), col(bin));
        assert_eq!(
            merge(col(Collation::Utf8mb4GeneralCi), col(bin), "=").unwrap(),
            col(bin),
            "of one character set, the _bin collation"
        );
        let expl = Some((Collation::Utf8mb4GeneralCi, Coerce::Explicit));
        assert_eq!(merge(col(bin), expl, "=").unwrap(), expl);
        let expl_bin = Some((bin, Coerce::Explicit));
        assert!(
            merge(expl, expl_bin, "=").is_err(),
            "two explicit collations clash"
        );
        assert_eq!(
            merge(
                col(Collation::Latin1SwedishCi),
                col(Collation::Utf8mb4GeneralCi),
                "="
            )
            .unwrap(),
            col(Collation::Utf8mb4GeneralCi),
            "the wider character set wins"
        );
    }
}
