//! ENUM and SET values in expressions. A value read from such a column is
//! its text (`Value::Bytes`); where MariaDB reads it as a number (arithmetic,
//! a comparison with a number, CAST to a number, SUM/AVG, ORDER BY) the
//! column reference is wrapped in `Func::MemberNumber`, which gives the
//! member number (ENUM, 0 for the '' error value) or the bitmask (SET).
//! Called from `collate::annotate` (after the operands are annotated) and
//! `collate::sort_key`. Hex and bit literals (`0x41`, `b'1'`) become their
//! numbers in the same numeric contexts (MySQL's hybrid literals).
use crate::collate::{derive, Ctx};
use crate::convert::KeyProbe;
use crate::expr::{BinOp, Expr};
use crate::func::Func;
use rel::collation::Collation;
use rel::members::Members;
use rel::value::{ColumnType, TypeKind, Value};

/// The ENUM/SET column type `e` reads directly (a column, a group
/// expression or an ANY_VALUE slot of one), if it is one.
pub fn member_type(e: &Expr, cx: Ctx) -> Option<ColumnType> {
    let Expr::Col(i) = e else { return None };
    let ty = match cx.agg {
        None => cx.cols.get(*i)?.ty.clone(),
        Some((groups, aggs)) => {
            let base = Ctx {
                cols: cx.cols,
                agg: None,
            };
            if *i < groups.len() {
                return member_type(&groups[*i], base);
            }
            let a = aggs.get(*i - groups.len())?;
            if a.func != crate::bind::AggFunc::AnyValue {
                return None;
            }
            return member_type(a.arg.as_ref()?, base);
        }
    };
    ty.is_enum_or_set().then_some(ty)
}

/// `e` as a number when it reads an ENUM/SET column or is a hex or bit
/// literal (`crate::bind::hex_number`), else unchanged.
pub fn as_number(e: Expr, cx: Ctx) -> Expr {
    if crate::bind::is_hex(&e) {
        return crate::bind::hex_number(e);
    }
    match member_type(&e, cx) {
        Some(t) => Expr::Func(
            Func::MemberNumber(t.members, t.kind == TypeKind::Set),
            vec![e],
        ),
        None => e,
    }
}

/// `e` compared with `other`: when `e` reads an ENUM/SET column and `other`
/// is a parameter, its number or its text as the parameter's value is a
/// number or not (decided per execution).
/// A hex or bit literal compared with a parameter: its number or its bytes
/// likewise (MariaDB: `0x1F >= ?` with 5 compares 31 with 5).
fn by_param(e: Expr, other: &Expr, cx: Ctx) -> Expr {
    if crate::bind::is_hex(&e) && matches!(other, Expr::Param(_)) {
        let n = crate::bind::hex_number(e.clone());
        return Expr::Func(Func::NumberOrText, vec![e, other.clone(), n]);
    }
    match (member_type(&e, cx), other) {
        (Some(t), Expr::Param(_)) => Expr::Func(Func::MemberOrText(t), vec![e, other.clone()]),
        _ => e,
    }
}

/// True when `e` is a number (not a string, NULL or a member column).
fn numeric(e: &Expr, cx: Ctx) -> bool {
    !matches!(e, Expr::Const(Value::Null) | Expr::Param(_))
        && member_type(e, cx).is_none()
        && derive(e, cx).is_ok_and(|d| d.is_none())
        && !matches!(
            crate::types::infer(e, cx.cols, cx.agg),
            crate::result::OutType::Date
                | crate::result::OutType::DateTime
                | crate::result::OutType::Time
        )
}

/// `x IN (..)` on an ENUM/SET column whose list mixes numbers, strings
/// and parameters, as the OR of its equalities, so that each item compares
/// by its own kind (MariaDB: `e IN (1, 'c')` is member 1 or the text 'c');
/// the OR has IN's three-valued answer. Applied before annotation (each
/// equality then gets its collation and numeric context). Anything else is
/// returned unchanged.
pub fn split_mixed_in(e: Expr, cx: Ctx) -> Expr {
    match e {
        Expr::In(x, list, negated)
            if member_type(&x, cx).is_some() && list.len() > 1 && mixed(&list, cx) =>
        {
            let eqs: Vec<Expr> = list
                .into_iter()
                .map(|l| Expr::Bin(BinOp::Eq, x.clone(), Box::new(l)))
                .collect();
            // Balanced, so a long list nests only log2(n) deep (evaluation
            // and annotation recurse through it).
            let any = or_tree(eqs);
            if negated {
                Expr::Not(Box::new(any))
            } else {
                any
            }
        }
        other => other,
    }
}

/// The OR of `items` as a balanced tree (FALSE when empty).
fn or_tree(items: Vec<Expr>) -> Expr {
    Expr::balanced(BinOp::Or, items)
}

/// True when an IN list's items are not all of one kind known when
/// planning: numbers with strings, or parameters (whose kind each
/// execution decides).
fn mixed(list: &[Expr], cx: Ctx) -> bool {
    let nums = list.iter().filter(|l| numeric(l, cx)).count();
    let params = list.iter().any(|l| matches!(l, Expr::Param(_)));
    nums < list.len() && (nums > 0 || params)
}

/// Rewrites the operands of `e` (already annotated) that MariaDB reads as
/// numbers: arithmetic and bit operands, negation, a comparison, IN or
/// BETWEEN against numbers, CAST to a number.
pub fn numeric_context(e: Expr, cx: Ctx) -> Expr {
    use BinOp::*;
    match e {
        Expr::Bin(
            op @ (Add | Sub | Mul | Div | IntDiv | Mod | BitAnd | BitOr | BitXor | Shl | Shr),
            x,
            y,
        ) => Expr::Bin(op, Box::new(as_number(*x, cx)), Box::new(as_number(*y, cx))),
        Expr::Bin(op @ (Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge), x, y)
            if numeric(&x, cx) || numeric(&y, cx) =>
        {
            Expr::Bin(op, Box::new(as_number(*x, cx)), Box::new(as_number(*y, cx)))
        }
        Expr::Bin(op @ (Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge), x, y) => {
            let nx = by_param((*x).clone(), &y, cx);
            let ny = by_param(*y, &x, cx);
            Expr::Bin(op, Box::new(nx), Box::new(ny))
        }
        Expr::Neg(x) => Expr::Neg(Box::new(as_number(*x, cx))),
        Expr::BitNot(x) => Expr::BitNot(Box::new(as_number(*x, cx))),
        Expr::In(x, list, n)
            if member_type(&x, cx).is_some() && list.iter().all(|l| numeric(l, cx)) =>
        {
            Expr::In(Box::new(as_number(*x, cx)), list, n)
        }
        // A hex literal against numbers: its number (MySQL).
        Expr::In(x, list, n)
            if (crate::bind::is_hex(&x) || list.iter().any(crate::bind::is_hex))
                && [&*x].into_iter().chain(&list).any(|l| numeric(l, cx)) =>
        {
            let list = list.into_iter().map(|l| as_number(l, cx)).collect();
            Expr::In(Box::new(as_number(*x, cx)), list, n)
        }
        Expr::Between(x, l, h, n)
            if [&*x, &*l, &*h].iter().any(|e| crate::bind::is_hex(e))
                && [&*x, &*l, &*h].iter().any(|e| numeric(e, cx)) =>
        {
            let num = |e: Box<Expr>| Box::new(as_number(*e, cx));
            Expr::Between(num(x), num(l), num(h), n)
        }
        Expr::In(x, list, n) if matches!(list.first(), Some(Expr::Param(_))) => {
            Expr::In(Box::new(by_param(*x, &list[0], cx)), list, n)
        }
        Expr::Between(x, l, h, n)
            if member_type(&x, cx).is_some() && numeric(&l, cx) && numeric(&h, cx) =>
        {
            Expr::Between(Box::new(as_number(*x, cx)), l, h, n)
        }
        Expr::Between(x, l, h, n) if matches!(*l, Expr::Param(_)) => {
            Expr::Between(Box::new(by_param(*x, &l, cx)), l, h, n)
        }
        Expr::Func(Func::FindInSet, args) if args.len() == 2 => {
            match member_type(&args[1], cx).filter(|t| t.kind == TypeKind::Set) {
                Some(t) => Expr::Func(Func::SetFindInSet(t.members, t.coll), args),
                None => Expr::Func(Func::FindInSet, args),
            }
        }
        Expr::Func(
            f @ (Func::CastSigned | Func::CastUnsigned | Func::CastDecimal(..) | Func::CastDouble),
            args,
        ) => Expr::Func(f, args.into_iter().map(|a| as_number(a, cx)).collect()),
        // Numeric functions read hex and bit literals as their numbers; so do
        // GREATEST/LEAST comparing them with numbers (MySQL).
        Expr::Func(
            f @ (Func::Abs
            | Func::Round
            | Func::Truncate
            | Func::Floor
            | Func::Ceil
            | Func::Sign
            | Func::Sqrt
            | Func::Pow
            | Func::Mod),
            args,
        ) => Expr::Func(f, args.into_iter().map(crate::bind::hex_number).collect()),
        Expr::Func(f, args) if f.is_transcendental() => {
            Expr::Func(f, args.into_iter().map(crate::bind::hex_number).collect())
        }
        Expr::Func(f @ (Func::Greatest | Func::Least), args)
            if args.iter().any(crate::bind::is_hex) && args.iter().any(|a| numeric(a, cx)) =>
        {
            Expr::Func(f, args.into_iter().map(crate::bind::hex_number).collect())
        }
        other => other,
    }
}

/// FIND_IN_SET(needle, list): the 1-based position of `needle` among the
/// comma-separated items of `list` (compared under `coll`, bytewise when
/// None), 0 when absent or when `needle` holds a comma; NULL for NULL.
pub fn find_in_set(needle: &Value, list: &Value, coll: Option<Collation>) -> Value {
    if needle.is_null() || list.is_null() {
        return Value::Null;
    }
    let (n, l) = (needle.text(), list.text());
    if n.contains(&b',') || l.is_empty() {
        return Value::Int(0);
    }
    let eq = |x: &[u8]| match coll {
        Some(c) => c.compare(x, &n).is_eq(),
        None => x == &n[..],
    };
    match l.split(|&b| b == b',').position(eq) {
        Some(i) => Value::Int(i as i64 + 1),
        None => Value::Int(0),
    }
}

/// FIND_IN_SET(needle, set_column) as MariaDB computes it: the member
/// number of `needle` in the column's definition when the value holds it.
pub fn set_find_in_set(needle: &Value, set: &Value, m: &Members, coll: Collation) -> Value {
    let (Value::Bytes(n), Value::Bytes(s)) = (needle, set) else {
        return find_in_set(needle, set, Some(coll));
    };
    let mask = m.set_mask(s, Collation::Binary).unwrap_or(0);
    match m.position(n, coll) {
        Some(p) if mask & (1u64 << (p - 1)) != 0 => Value::Int(p as i64),
        _ => Value::Int(0),
    }
}

/// `Func::MemberNumber`: the stored number of a member text.
pub fn number(v: Value, members: &Members, set: bool) -> Value {
    match v {
        Value::Bytes(b) if set => Value::UInt(members.set_mask(&b, Collation::Binary).unwrap_or(0)),
        Value::Bytes(b) => Value::Int(members.enum_number(&b) as i64),
        other => other,
    }
}

/// How a lookup value probes an ENUM/SET key (which holds member numbers
/// or bitmasks). A string compares with the column's text under its
/// collation: equal to exactly one member (SET: one canonical member list)
/// or to nothing, and unordered as a range bound (text order is not member
/// order). A number compares with the member number or bitmask, in key
/// order. With a '' member the text '' also equals the error value 0, so
/// such probes span the column.
pub fn key_probe(v: &Value, t: &ColumnType, bound: bool) -> KeyProbe {
    let m = &t.members;
    let set = t.kind == TypeKind::Set;
    match v {
        Value::Null => KeyProbe::Impossible,
        Value::Bytes(_) if bound => KeyProbe::Unordered,
        Value::Bytes(b) => {
            let empty = t.coll.compare(b, b"").is_eq();
            if m.position(b"", t.coll).is_some() && (set || empty) {
                return KeyProbe::Unordered;
            }
            let text = if empty {
                Some(Vec::new())
            } else if set {
                m.set_mask(b, t.coll)
                    .map(|mask| m.set_text(mask))
                    .filter(|text| t.coll.compare(text, b).is_eq())
            } else {
                m.position(b, t.coll).map(|n| m.get(n).to_vec())
            };
            match text {
                Some(text) => KeyProbe::Exact(Value::Bytes(text)),
                None => KeyProbe::Impossible,
            }
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => {
            let max = if set { m.full_mask() } else { m.len() as u64 };
            let n = match v {
                Value::Double(d) if d.is_nan() => return KeyProbe::Impossible,
                Value::Double(d) => d.clamp(-1.0, max as f64 + 1.0).floor() as i128,
                other => match other.to_i128() {
                    Some(n) => n,
                    None => return KeyProbe::Impossible,
                },
            };
            let conv = Value::UInt(n.clamp(0, max as i128) as u64);
            if rel::value::compare(&conv, v).is_eq() {
                KeyProbe::Exact(conv)
            } else {
                KeyProbe::Inexact(conv)
            }
        }
        _ => KeyProbe::Unordered,
    }
}
