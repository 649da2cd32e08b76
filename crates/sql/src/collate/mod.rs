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
//!
//! String literals, `?` parameters, user variables and the strings functions
//! make of them take the connection's collation (`@@collation_connection`) as MySQL
//! does: the planner runs under `literals(c)` (`exec::plan`, a view's body
//! under the collation stored with the view), so a plan depends on it (the
//! statement cache keys on it).
mod eval;

pub use eval::*;

use crate::bind::{AggFunc, AggSpec};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr};
use crate::func::Func;
use crate::result::OutType;
use rel::collation::Collation;
use rel::schema::Column;
use rel::value::{TypeKind, Value};
use std::cell::Cell;

thread_local! {
    /// The collation of literals for what this thread plans now.
    static LITERALS: Cell<Collation> = const { Cell::new(Collation::DEFAULT) };
}

/// The collation string literals get while planning (the connection's).
pub fn literal_collation() -> Collation {
    LITERALS.with(|l| l.get())
}

/// While alive, literals planned on this thread take collation `c`; the
/// previous one comes back on drop (views nest inside a statement).
pub struct Literals(Collation);

/// Plans literals under `c` until the returned guard drops.
pub fn literals(c: Collation) -> Literals {
    Literals(LITERALS.with(|l| l.replace(c)))
}

impl Drop for Literals {
    fn drop(&mut self) {
        LITERALS.with(|l| l.set(self.0));
    }
}

/// How strongly an operand imposes its collation (MySQL's coercibility,
/// strongest first, numbered as COERCIBILITY() answers; NONE is folded into
/// its neighbour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coerce {
    Explicit,
    Implicit,
    /// System constants: USER(), DATABASE(), VERSION(), @@variables.
    Sysconst,
    Coercible,
    Ignorable,
}

impl Coerce {
    fn name(self) -> &'static str {
        match self {
            Coerce::Explicit => "EXPLICIT",
            Coerce::Implicit => "IMPLICIT",
            Coerce::Sysconst => "SYSCONST",
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
        OutType::Text { .. } => Some(Some((literal_collation(), Coerce::Coercible))),
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
        // Hex and bit literals (binary) and introduced strings.
        Expr::Func(Func::Literal(c, _), _) => Some((*c, Coerce::Coercible)),
        Expr::Const(Value::Bytes(_)) | Expr::Param(_) | Expr::UserVar(_) => {
            Some((literal_collation(), Coerce::Coercible))
        }
        // System values are utf8mb3_general_ci in MariaDB; the default here.
        Expr::SysVar(..) => Some((Collation::DEFAULT, Coerce::Sysconst)),
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
        Expr::Subquery(_, t) | Expr::Correlated(_, t) => string_type(t).flatten(),
        Expr::Dependent(x, _) => derive(x, cx)?,
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
                Func::NullIf | Func::NumberOrText => args.get(..1).unwrap_or(&[]),
                // System values (utf8mb3_general_ci in MariaDB).
                Func::Database | Func::Version | Func::User | Func::CurrentUser => {
                    return Ok(Some((Collation::DEFAULT, Coerce::Sysconst)))
                }
                Func::ConvertUsing(c) => return Ok(Some((*c, Coerce::Implicit))),
                // CAST(x AS CHAR): a string of the connection's character set.
                Func::CastChar => return Ok(Some((literal_collation(), Coerce::Implicit))),
                Func::CollInfo(..) => return Ok(Some((Collation::DEFAULT, Coerce::Sysconst))),
                Func::WeightString(_) => return Ok(Some((Collation::Binary, Coerce::Implicit))),
                // Decoded bytes: binary strings (coercible, as MariaDB).
                Func::Unhex | Func::FromBase64 => {
                    return Ok(Some((Collation::Binary, Coerce::Coercible)))
                }
                // Digests, hex, base64, formatted dates and JSON text are
                // new strings (text in MariaDB whatever their argument).
                Func::Hex
                | Func::Md5
                | Func::Sha1
                | Func::Sha2
                | Func::ToBase64
                | Func::DateFormat
                | Func::TimeFormat
                | Func::DayName
                | Func::MonthName
                | Func::JsonQuote
                | Func::JsonUnquote
                | Func::JsonType
                | Func::JsonKeys
                | Func::JsonSearch => &[],
                _ => args,
            };
            let mut d = None;
            for x in from {
                d = merge(d, derive(x, cx)?, "concat")?;
            }
            d.or(Some((literal_collation(), Coerce::Coercible)))
        }
        _ => None,
    })
}

/// Whether `e` is a binary string (of collation `binary`): a result column
/// of it is declared VARBINARY, its bytes sent unconverted.
pub fn is_binary_string(e: &Expr, cx: Ctx) -> bool {
    matches!(derive(e, cx), Ok(Some((Collation::Binary, _))))
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
        // Two literals of one character set and different collations
        // (`_utf8mb4'a' = 'A'` under a unicode_ci connection) cannot be
        // compared (MariaDB); CONCAT takes the first.
        Coerce::Coercible if op == "concat" => Ok(Some((ca, pa))),
        Coerce::Ignorable => Ok(Some((ca, pa))),
        _ => Err(SqlError::illegal_mix(
            ca.name(),
            pa.name(),
            cb.name(),
            pb.name(),
            op,
        )),
    }
}

pub(crate) fn is_cmp(op: BinOp) -> bool {
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
    let e = match crate::members::split_mixed_in(e, cx) {
        Expr::Neg(x) => Expr::Neg(a(x)?),
        Expr::Not(x) => Expr::Not(a(x)?),
        Expr::BitNot(x) => Expr::BitNot(a(x)?),
        Expr::IsNull(x, n) => Expr::IsNull(a(x)?, n),
        Expr::IsBool(x, w, n) => Expr::IsBool(a(x)?, w, n),
        Expr::Collate(x, c) => {
            let x = a(x)?;
            check_collate(&x, c, cx)?;
            Expr::Collate(x, c)
        }
        Expr::Bin(op, x, y) => Expr::Bin(op, a(x)?, a(y)?),
        Expr::In(x, l, n) => Expr::In(a(x)?, all(l)?, n),
        Expr::InSubquery(x, k, n) => Expr::InSubquery(a(x)?, k, n),
        Expr::Dependent(x, refs) => Expr::Dependent(a(x)?, refs),
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
    let e = match e {
        Expr::Func(Func::WeightString(_), args) => weight_string(args, cx)?,
        // Each pair of a row IN subquery compares under its own collation.
        Expr::Func(Func::RowInSubquery(k, _), args) => {
            let colls = args
                .iter()
                .map(|x| cmp_coll(&[x], cx, "in", false))
                .collect::<Result<Vec<_>>>()?;
            Expr::Func(Func::RowInSubquery(k, colls), args)
        }
        Expr::Func(Func::CollInfo(k, _), args) => {
            let info = match args.first() {
                Some(x) => coll_info(x, cx)?,
                None => None,
            };
            Expr::Func(Func::CollInfo(k, info), args)
        }
        e => e,
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

/// The collation and coercibility COLLATION(x)/COERCIBILITY(x) answer
/// (MariaDB's numbers: EXPLICIT 0, IMPLICIT 2, SYSCONST 3, COERCIBLE 4,
/// NUMERIC 5, IGNORABLE 6); None for a number or temporal value.
fn coll_info(x: &Expr, cx: Ctx) -> Result<Option<(Collation, u8)>> {
    Ok(derive(x, cx)?.map(|(c, k)| match k {
        Coerce::Explicit => (c, 0),
        Coerce::Implicit => (c, 2),
        // System constants are utf8mb3_general_ci in MariaDB.
        Coerce::Sysconst => (Collation::Utf8mb3GeneralCi, 3),
        Coerce::Coercible => (c, 4),
        Coerce::Ignorable => (Collation::Binary, 6),
    }))
}

/// `x COLLATE c`: `c` must belong to x's character set (1253; a number
/// or temporal value is a string of the connection's character set, NULL
/// takes any collation). `CAST(.. AS BINARY)` is bound as COLLATE binary.
fn check_collate(x: &Expr, c: Collation, cx: Ctx) -> Result<()> {
    if c == Collation::Binary {
        return Ok(());
    }
    let cs = match derive(x, cx)? {
        None => literal_collation().charset(),
        Some((_, Coerce::Ignorable)) => return Ok(()),
        Some((xc, _)) => xc.charset(),
    };
    if cs != c.charset() {
        return Err(SqlError::collation_charset_mismatch(c.name(), cs));
    }
    Ok(())
}

/// WEIGHT_STRING(x [, 'CHAR'|'BINARY', n]) (the parser's form of `AS
/// CHAR(n)`) with the collation x weighs under: a temporal value is its text
/// as bytes, a number gives NULL (MariaDB).
fn weight_string(args: Vec<Expr>, cx: Ctx) -> Result<Expr> {
    let form_ok = match args.as_slice() {
        [_] => true,
        [_, Expr::Const(Value::Bytes(k)), Expr::Const(Value::Int(n))] => {
            (k == b"CHAR" || k == b"BINARY") && *n >= 1
        }
        _ => false,
    };
    if !form_ok {
        // MariaDB's grammar has no other form: a syntax error there.
        return Err(SqlError::parse(
            "WEIGHT_STRING takes a string, optionally AS CHAR(n) or AS BINARY(n)",
        ));
    }
    let c = match derive(&args[0], cx)? {
        Some((c, _)) => Some(c),
        None => match crate::types::infer(&args[0], cx.cols, cx.agg) {
            OutType::Date | OutType::DateTime | OutType::Time => Some(Collation::Binary),
            OutType::Column(t)
                if matches!(
                    t.kind,
                    TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time
                ) =>
            {
                Some(Collation::Binary)
            }
            _ => None,
        },
    };
    Ok(Expr::Func(Func::WeightString(c), args))
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

#[cfg(test)]
mod tests {
    use super::*;

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
