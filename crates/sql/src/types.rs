//! Result column types of expressions, as MySQL declares them to clients
//! (the binary protocol encodes each value by its column's declared type).
use crate::bind::{AggFunc, AggSpec};
use crate::expr::{BinOp, Expr};
use crate::func::Func;
use crate::result::OutType;
use rel::schema::Column;
use rel::value::{ColumnType, TypeKind, Value};

/// The declared type of `e`, evaluated over a table row, or over the
/// grouped row (group exprs then aggregates) when `agg` is set.
pub fn infer(e: &Expr, t: &[Column], agg: Option<&(Vec<Expr>, Vec<AggSpec>)>) -> OutType {
    match e {
        Expr::Const(v) => of_value(v),
        Expr::Param(_) => OutType::Text { len: 255 },
        Expr::Outer(_) => OutType::Null,
        Expr::Subquery(_, ty) | Expr::Correlated(_, ty) => ty.clone(),
        Expr::Dependent(x, _) => infer(x, t, agg),
        Expr::InSubquery(..) | Expr::Exists(..) => OutType::Int { unsigned: false },
        Expr::Col(i) => match agg {
            Some((groups, aggs)) => {
                if *i < groups.len() {
                    infer(&groups[*i], t, None)
                } else {
                    match aggs.get(*i - groups.len()) {
                        Some(a) => agg_type(a, t),
                        None => OutType::Null,
                    }
                }
            }
            None => match t.get(*i) {
                Some(c) => OutType::Column(c.ty.clone()),
                None => OutType::Null,
            },
        },
        Expr::Neg(x) => infer(x, t, agg),
        // A number under COLLATE is its text (`Expr::Collate`).
        Expr::Collate(x, _) => match infer(x, t, agg) {
            OutType::Int { .. } | OutType::Decimal { .. } | OutType::Double => {
                OutType::Text { len: 64 }
            }
            OutType::Column(c)
                if matches!(
                    c.kind,
                    TypeKind::TinyInt
                        | TypeKind::SmallInt
                        | TypeKind::MediumInt
                        | TypeKind::Int
                        | TypeKind::BigInt
                        | TypeKind::Float
                        | TypeKind::Double
                        | TypeKind::Decimal
                        | TypeKind::Year
                ) =>
            {
                OutType::Text { len: 64 }
            }
            other => other,
        },
        Expr::Collated(..) => OutType::Int { unsigned: false },
        Expr::SortKey(..) => OutType::Text { len: 65535 },
        Expr::Not(_)
        | Expr::IsNull(..)
        | Expr::IsBool(..)
        | Expr::In(..)
        | Expr::Between(..)
        | Expr::Like(..) => OutType::Int { unsigned: false },
        Expr::BitNot(_) => OutType::Int { unsigned: true },
        Expr::Bin(op, a, b) => match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod | BinOp::IntDiv => {
                let (x, y) = (numeric(infer(a, t, agg)), numeric(infer(b, t, agg)));
                match (x, y) {
                    (Num::Dbl, _) | (_, Num::Dbl) => OutType::Double,
                    (Num::Dec(s1), Num::Dec(s2)) => OutType::Decimal {
                        scale: if *op == BinOp::Mul {
                            s1 + s2
                        } else {
                            s1.max(s2)
                        },
                    },
                    (Num::Dec(s), _) | (_, Num::Dec(s)) => OutType::Decimal { scale: s },
                    _ => OutType::Int { unsigned: false },
                }
            }
            BinOp::Div => match (numeric(infer(a, t, agg)), numeric(infer(b, t, agg))) {
                (Num::Dbl, _) | (_, Num::Dbl) => OutType::Double,
                (Num::Dec(s), _) => OutType::Decimal { scale: s + 4 },
                _ => OutType::Decimal { scale: 4 },
            },
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                OutType::Int { unsigned: true }
            }
            _ => OutType::Int { unsigned: false },
        },
        Expr::Case {
            whens, otherwise, ..
        } => {
            let mut branches: Vec<&Expr> = whens.iter().map(|(_, r)| r).collect();
            if let Some(o) = otherwise {
                branches.push(o);
            }
            unify(branches.into_iter().map(|b| infer(b, t, agg)))
        }
        Expr::Func(f, args) => func_type(f, args, t, agg),
        Expr::SysVar(..) | Expr::UserVar(_) => OutType::Text { len: 255 },
        Expr::Assign(_, e) => infer(e, t, agg),
    }
}

enum Num {
    Int,
    Dec(u8),
    Dbl,
}

fn numeric(t: OutType) -> Num {
    match t {
        OutType::Int { .. } => Num::Int,
        OutType::Decimal { scale } => Num::Dec(scale),
        OutType::Column(c) if c.is_integer() => Num::Int,
        OutType::Column(c) if c.kind == TypeKind::Decimal => Num::Dec(c.scale),
        OutType::Null => Num::Int,
        _ => Num::Dbl,
    }
}

fn of_value(v: &Value) -> OutType {
    match v {
        Value::Null => OutType::Null,
        Value::Int(_) => OutType::Int { unsigned: false },
        Value::UInt(_) => OutType::Int { unsigned: true },
        Value::Double(_) => OutType::Double,
        Value::Decimal(_, s) => OutType::Decimal { scale: *s },
        Value::Bytes(b) => OutType::Text {
            len: b.len().max(1) as u32,
        },
        Value::Date(_) => OutType::Date,
        Value::DateTime(_) => OutType::DateTime,
        Value::Time(_) => OutType::Time,
    }
}

fn agg_type(a: &AggSpec, t: &[Column]) -> OutType {
    let arg = a
        .arg
        .as_ref()
        .map(|e| infer(e, t, None))
        .unwrap_or(OutType::Null);
    agg_result(a.func, arg)
}

/// The type of aggregate `func` over an argument of type `arg` (also as a window function).
pub fn agg_result(func: AggFunc, arg: OutType) -> OutType {
    match func {
        AggFunc::CountStar | AggFunc::Count => OutType::Int { unsigned: false },
        AggFunc::Sum => match numeric(arg) {
            Num::Int => OutType::Decimal { scale: 0 },
            Num::Dec(s) => OutType::Decimal { scale: s },
            Num::Dbl => OutType::Double,
        },
        AggFunc::Avg => match numeric(arg) {
            Num::Int => OutType::Decimal { scale: 4 },
            Num::Dec(s) => OutType::Decimal { scale: s + 4 },
            Num::Dbl => OutType::Double,
        },
        // MIN/MAX of an ENUM/SET column are strings (MariaDB: VARCHAR).
        AggFunc::Min | AggFunc::Max => match arg {
            OutType::Column(c) if c.is_enum_or_set() => OutType::Text {
                len: c.members.char_len(c.kind == TypeKind::Set),
            },
            a => a,
        },
        AggFunc::AnyValue => arg,
        AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
            OutType::Text { len: 1024 }
        }
        AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => OutType::Double,
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => OutType::Int { unsigned: true },
    }
}

fn func_type(
    f: &Func,
    args: &[Expr],
    t: &[Column],
    agg: Option<&(Vec<Expr>, Vec<AggSpec>)>,
) -> OutType {
    let first = || {
        args.first()
            .map(|a| infer(a, t, agg))
            .unwrap_or(OutType::Null)
    };
    match f {
        Func::MemberOrText(t) => OutType::Column(t.clone()),
        Func::NumberOrText => first(),
        // A literal of its collation: VARBINARY for a binary string, else
        // VARCHAR of its characters.
        Func::Literal(c, _) => {
            let len = match args.first() {
                Some(Expr::Const(Value::Bytes(b))) if *c == rel::collation::Collation::Binary => {
                    b.len()
                }
                Some(Expr::Const(Value::Bytes(b))) => String::from_utf8_lossy(b).chars().count(),
                _ => 0,
            };
            let mut ty = ColumnType::new(if *c == rel::collation::Collation::Binary {
                TypeKind::VarBinary
            } else {
                TypeKind::VarChar
            });
            ty.len = len.max(1) as u32;
            ty.coll = *c;
            OutType::Column(ty)
        }
        // A binary string (MariaDB: VARBINARY).
        Func::WeightString(_) => OutType::Column(ColumnType {
            len: 255,
            ..ColumnType::new(TypeKind::VarBinary)
        }),
        Func::CollInfo(0 | 1, _) => OutType::Text { len: 64 },
        Func::Length
        | Func::CollInfo(..)
        | Func::CharLength
        | Func::Locate
        | Func::Sign
        | Func::ConnectionId
        | Func::LastInsertId
        | Func::RowCount
        | Func::FoundRows
        | Func::UnixTimestamp
        | Func::Year
        | Func::Month
        | Func::Day
        | Func::CastSigned
        | Func::MemberNumber(..)
        | Func::FindInSet
        | Func::SetFindInSet(..)
        | Func::Sleep
        | Func::Instr
        | Func::Ascii
        | Func::Strcmp
        | Func::Field
        | Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::DayOfWeek
        | Func::Weekday
        | Func::DayOfYear
        | Func::DateDiff
        | Func::TimestampDiff(_)
        | Func::IntervalCount(_)
        | Func::PeriodAdd
        | Func::PeriodDiff
        | Func::Regexp
        | Func::RegexpLike
        | Func::RegexpInstr
        | Func::InetAton
        | Func::UuidShort
        | Func::Quarter
        | Func::ToDays
        | Func::TimeToSec
        | Func::Crc32
        | Func::BitCount
        | Func::JsonValid
        | Func::JsonContains
        | Func::JsonContainsPath
        | Func::JsonLength
        | Func::JsonDepth
        | Func::Ord => OutType::Int {
            unsigned: matches!(
                f,
                Func::ConnectionId
                    | Func::LastInsertId
                    | Func::FoundRows
                    | Func::InetAton
                    | Func::UuidShort
                    | Func::Crc32
            ),
        },
        Func::CastUnsigned => OutType::Int { unsigned: true },
        Func::Abs
        | Func::Round
        | Func::Truncate
        | Func::Floor
        | Func::Ceil
        | Func::NullIf
        | Func::Mod => match first() {
            OutType::Column(c) if c.is_integer() => OutType::Int {
                unsigned: c.unsigned,
            },
            other => other,
        },
        Func::If => unify(args.iter().skip(1).map(|a| infer(a, t, agg))),
        Func::IfNull | Func::Coalesce | Func::Greatest | Func::Least => {
            unify(args.iter().map(|a| infer(a, t, agg)))
        }
        Func::Sqrt | Func::Pow | Func::Rand | Func::CastDouble => OutType::Double,
        f if f.is_transcendental() => OutType::Double,
        Func::RowInSubquery(..) => OutType::Int { unsigned: false },
        Func::SecToTime => OutType::Time,
        Func::CastDecimal(_, s) => OutType::Decimal { scale: *s },
        Func::Now | Func::FromUnixtime | Func::CastDateTime | Func::ConvertTz => OutType::DateTime,
        Func::CurDate | Func::Date | Func::CastDate => OutType::Date,
        Func::CurTime => OutType::Time,
        Func::LastDay | Func::MakeDate => OutType::Date,
        Func::StrToDate => match args.get(1) {
            Some(Expr::Const(Value::Bytes(f))) => match crate::func::strdate::kind(f) {
                crate::func::strdate::Kind::Date => OutType::Date,
                crate::func::strdate::Kind::Time => OutType::Time,
                crate::func::strdate::Kind::DateTime => OutType::DateTime,
            },
            _ => OutType::DateTime,
        },
        // A microsecond interval makes DATETIME(6) (MariaDB's type for it).
        Func::DateAdd(crate::func::time::Unit::Microsecond) => match first() {
            OutType::Date | OutType::DateTime => datetime6(),
            OutType::Column(c)
                if matches!(
                    c.kind,
                    TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp
                ) =>
            {
                datetime6()
            }
            _ => OutType::Text { len: 26 },
        },
        Func::DateAdd(u) => match first() {
            OutType::Date if u.whole_days() => OutType::Date,
            OutType::Column(c) if c.kind == TypeKind::Date && u.whole_days() => OutType::Date,
            OutType::Date | OutType::DateTime => OutType::DateTime,
            OutType::Column(c)
                if matches!(
                    c.kind,
                    TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp
                ) =>
            {
                OutType::DateTime
            }
            _ => OutType::Text { len: 29 },
        },
        _ => OutType::Text { len: 255 },
    }
}

/// The type of a string result column whose values are binary strings
/// (`collate::is_binary_string`): VARBINARY of as many bytes, as MariaDB
/// declares `x'00ff'`, `CAST(.. AS BINARY)`, `UNHEX(..)` or `CONCAT(x'00', 'a')`.
pub fn binary_string(o: OutType) -> OutType {
    match o {
        OutType::Text { len } => OutType::Column(ColumnType {
            len,
            ..ColumnType::new(TypeKind::VarBinary)
        }),
        other => other,
    }
}

/// DATETIME(6).
fn datetime6() -> OutType {
    OutType::Column(ColumnType {
        scale: 6,
        ..ColumnType::new(TypeKind::DateTime)
    })
}

/// The type of an expression that returns one of several branches (CASE,
/// IF, COALESCE, ...): NULL branches are ignored; all-integer stays an
/// integer, all-numeric becomes DECIMAL or DOUBLE, equal types stay, any
/// other mix is a string (as MySQL does).
fn unify(types: impl Iterator<Item = OutType>) -> OutType {
    let ts: Vec<OutType> = types.filter(|t| *t != OutType::Null).collect();
    let Some(first) = ts.first().cloned() else {
        return OutType::Null;
    };
    if ts.iter().all(|t| *t == first) {
        return first;
    }
    let nums: Vec<Num> = ts
        .iter()
        .map(|t| match t {
            OutType::Int { .. } | OutType::Decimal { .. } | OutType::Double => {
                Some(numeric(t.clone()))
            }
            OutType::Column(c)
                if c.is_integer()
                    || matches!(
                        c.kind,
                        TypeKind::Decimal | TypeKind::Float | TypeKind::Double
                    ) =>
            {
                Some(numeric(t.clone()))
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if nums.len() == ts.len() {
        if nums.iter().any(|n| matches!(n, Num::Dbl)) {
            return OutType::Double;
        }
        let scale = nums
            .iter()
            .map(|n| if let Num::Dec(s) = n { *s } else { 0 })
            .max()
            .unwrap_or(0);
        return if scale == 0 && nums.iter().all(|n| matches!(n, Num::Int)) {
            OutType::Int { unsigned: false }
        } else {
            OutType::Decimal { scale }
        };
    }
    OutType::Text { len: 255 }
}

/// The column type a derived table declares for a result column of type `o`
/// (a string of literals: the collation literals are planned under).
pub fn column_type(o: OutType) -> ColumnType {
    let with = |kind, unsigned, len, scale| ColumnType {
        unsigned,
        len,
        scale,
        ..ColumnType::new(kind)
    };
    match o {
        OutType::Column(t) => t,
        OutType::Int { unsigned } => with(TypeKind::BigInt, unsigned, 20, 0),
        OutType::Decimal { scale } => with(TypeKind::Decimal, false, 65, scale),
        OutType::Double => ColumnType::new(TypeKind::Double),
        OutType::Text { len } => ColumnType {
            coll: crate::collate::literal_collation(),
            ..with(TypeKind::VarChar, false, len, 0)
        },
        OutType::Date => ColumnType::new(TypeKind::Date),
        OutType::DateTime => with(TypeKind::DateTime, false, 0, 6),
        OutType::Time => with(TypeKind::Time, false, 0, 6),
        OutType::Null => with(TypeKind::VarBinary, false, 0, 0),
    }
}
