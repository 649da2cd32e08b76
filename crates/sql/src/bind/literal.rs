//! Literals and operators as the binder reads them: numbers, strings and
//! hex literals into values, binary operators, CAST's target types, and
//! what makes an operand compare byte for byte.
use crate::error::{Result, SqlError};
use crate::expr::BinOp;
use crate::func::Func;
use rel::value::Value;
use sqlparser::ast;

/// True for `BINARY x`, `CAST(x AS BINARY)` and `x COLLATE ..._bin`: text compared
/// byte for byte.
pub(super) fn binary_operand(e: &ast::Expr) -> bool {
    use ast::DataType as D;
    match e {
        ast::Expr::Cast { data_type, .. } => matches!(
            data_type,
            D::Binary(_) | D::Varbinary(_) | D::Blob(_) | D::Bytea
        ),
        ast::Expr::Collate { collation, .. } => {
            let c = collation.to_string().to_ascii_lowercase();
            c.ends_with("_bin") || c.trim_matches('`') == "binary" || c.ends_with("_bin`")
        }
        ast::Expr::Nested(x) => binary_operand(x),
        _ => false,
    }
}

pub(super) fn binop(op: &ast::BinaryOperator) -> Result<BinOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Plus => BinOp::Add,
        B::Minus => BinOp::Sub,
        B::Multiply => BinOp::Mul,
        B::Divide => BinOp::Div,
        B::Modulo => BinOp::Mod,
        B::MyIntegerDivide | B::DuckIntegerDivide => BinOp::IntDiv,
        B::Gt => BinOp::Gt,
        B::Lt => BinOp::Lt,
        B::GtEq => BinOp::Ge,
        B::LtEq => BinOp::Le,
        B::Eq => BinOp::Eq,
        B::NotEq => BinOp::Ne,
        B::Spaceship => BinOp::NullSafeEq,
        B::And => BinOp::And,
        B::Or => BinOp::Or,
        B::Xor => BinOp::Xor,
        B::BitwiseAnd => BinOp::BitAnd,
        B::BitwiseOr => BinOp::BitOr,
        B::BitwiseXor => BinOp::BitXor,
        B::PGBitwiseShiftLeft => BinOp::Shl,
        B::PGBitwiseShiftRight => BinOp::Shr,
        other => return Err(SqlError::unsupported(format!("operator {other}"))),
    })
}

/// A literal's value.
pub fn literal(v: &ast::Value) -> Result<Value> {
    use ast::Value as V;
    Ok(match v {
        V::Number(s, _) => number(s)?,
        V::Boolean(b) => Value::Int(*b as i64),
        V::Null => Value::Null,
        V::HexStringLiteral(h) => Value::Bytes(unhex(h)?),
        other => match other.clone().into_string() {
            Some(s) => Value::Bytes(s.into_bytes()),
            None => return Err(SqlError::unsupported(format!("literal {other}"))),
        },
    })
}

fn number(s: &str) -> Result<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Ok(Value::UInt(u));
    }
    if !s.contains(['e', 'E']) {
        if let Some((ip, fp)) = s.split_once('.') {
            let scale = fp.len().min(30) as u8;
            if ip.len() + fp.len() <= 38 {
                if let Some(m) = crate::convert::parse_decimal(s, scale) {
                    return Ok(Value::Decimal(m, scale));
                }
            }
        }
    }
    s.parse::<f64>()
        .map(Value::Double)
        .map_err(|_| SqlError::parse(format!("bad number '{s}'")))
}

fn unhex(h: &str) -> Result<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    // Byte pairs, not string slices: a non-ASCII character is a bad digit,
    // not a slice inside a character.
    h.as_bytes()
        .chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16);
            match (d(p[0]), p.get(1).and_then(|c| d(*c))) {
                (Some(a), Some(b)) => Ok((a * 16 + b) as u8),
                _ => Err(SqlError::parse("bad hex literal")),
            }
        })
        .collect()
}

/// The function that casts to a data type.
pub fn cast_func(t: &ast::DataType) -> Result<Func> {
    use ast::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => Func::CastSigned,
        D::Unsigned | D::UnsignedInteger | D::IntUnsigned(_) | D::BigIntUnsigned(_) => {
            Func::CastUnsigned
        }
        D::Char(_) | D::Varchar(_) | D::Text | D::Binary(_) | D::Character(_) | D::Nvarchar(_) => {
            Func::CastChar
        }
        D::Date => Func::CastDate,
        D::Datetime(_) | D::Timestamp(..) => Func::CastDateTime,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => Func::CastDouble,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p as u8, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
                    (*p as u8, (*s).clamp(0, 30) as u8)
                }
            };
            Func::CastDecimal(p, s)
        }
        other => return Err(SqlError::unsupported(format!("CAST to {other}"))),
    })
}
