//! Literals and operators as the binder reads them: numbers, strings,
//! hex and bit literals (binary strings that are numbers in numeric context)
//! and character set introducers (`_latin1'x'`, `_binary X'41'`, `N'x'`)
//! into values, binary operators, CAST's target types, and what makes an
//! operand compare byte for byte.
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr};
use crate::func::Func;
use rel::collation::Collation;
use rel::value::Value;
use sqlparser::ast;

/// A literal whose value is an expression of its own: hex and bit literals
/// and the national character set (`N'x'`), `Func::Literal` around the value.
/// None for the others (`literal` gives their values).
pub(super) fn typed_literal(v: &ast::Value) -> Result<Option<Expr>> {
    use ast::Value as V;
    Ok(Some(match v {
        V::HexStringLiteral(h) => binary_literal(unhex(h)?),
        V::SingleQuotedByteStringLiteral(b) | V::DoubleQuotedByteStringLiteral(b) => {
            binary_literal(unbit(b).ok_or_else(|| SqlError::parse(format!("near 'b'{b}''")))?)
        }
        V::NationalStringLiteral(s) => Expr::Func(
            Func::Literal(Collation::Utf8mb3GeneralCi, false),
            vec![Expr::Const(Value::Bytes(s.clone().into_bytes()))],
        ),
        _ => return Ok(None),
    }))
}

/// A hex or bit literal: a binary string, a number in numeric context.
fn binary_literal(b: Vec<u8>) -> Expr {
    Expr::Func(
        Func::Literal(Collation::Binary, true),
        vec![Expr::Const(Value::Bytes(b))],
    )
}

/// `0b0101` (sqlparser reads it as a word): the bit literal, if it is one.
pub(super) fn bit_word(id: &ast::Ident) -> Option<Expr> {
    if id.quote_style.is_some() {
        return None;
    }
    let bits = id.value.strip_prefix("0b")?;
    unbit(bits).filter(|_| !bits.is_empty()).map(binary_literal)
}

/// The bytes of bit string `bits` ('0's and '1's), right-aligned in whole
/// bytes as MySQL reads `b'..'`; None when another character is there.
fn unbit(bits: &str) -> Option<Vec<u8>> {
    if !bits.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    let mut out = Vec::with_capacity(bits.len() / 8 + 1);
    let lead = bits.len() % 8;
    let mut chunks: Vec<&[u8]> = Vec::new();
    if lead > 0 {
        chunks.push(&bits.as_bytes()[..lead]);
    }
    chunks.extend(bits.as_bytes()[lead..].chunks(8));
    for c in chunks {
        out.push(c.iter().fold(0u8, |acc, b| (acc << 1) | (b - b'0')));
    }
    Some(out)
}

/// A hex or bit literal's value in numeric context (MySQL's BIGINT
/// UNSIGNED: its last 8 bytes); any other expression unchanged.
pub fn hex_number(e: Expr) -> Expr {
    match e {
        Expr::Func(Func::Literal(_, true), args) => match args.as_slice() {
            [Expr::Const(Value::Bytes(b))] => {
                let tail = &b[b.len().saturating_sub(8)..];
                Expr::Const(Value::UInt(
                    tail.iter().fold(0u64, |acc, c| (acc << 8) | *c as u64),
                ))
            }
            _ => Expr::Func(Func::Literal(Collation::Binary, true), args),
        },
        other => other,
    }
}

/// True for a hex or bit literal.
pub fn is_hex(e: &Expr) -> bool {
    matches!(e, Expr::Func(Func::Literal(_, true), _))
}

/// `_cs 'text'` or `_cs X'..'`: the string in character set `cs`, of its
/// default collation, coercible as a literal. The text is the statement's
/// bytes reinterpreted in `cs` (`_latin1'é'` sent as UTF-8 is two latin1
/// characters, as MySQL reads it); a hex value must be valid in `cs`
/// (1300). None when `prefix` names no character set (the caller reports
/// an unknown column, as MySQL); 1235 for a character set Strata lacks.
pub(super) fn introduced(prefix: &str, value: &ast::Expr) -> Result<Option<Expr>> {
    let Some(cs) = prefix.strip_prefix('_') else {
        return Ok(None);
    };
    let c = match Collation::default_of_charset(cs) {
        Some(c) => c,
        None if Collation::known_unsupported_charset(cs) => {
            return Err(SqlError::unsupported(format!(
                "character set introducer {prefix}"
            )))
        }
        None => return Ok(None),
    };
    let ast::Expr::Value(v) = value else {
        return Ok(None);
    };
    use ast::Value as V;
    let (raw, hex) = match &v.value {
        V::SingleQuotedString(s) | V::DoubleQuotedString(s) => (s.clone().into_bytes(), false),
        V::HexStringLiteral(h) => (unhex(h)?, true),
        other => return Err(SqlError::parse(format!("near '{prefix} {other}'"))),
    };
    let bytes = match c.charset() {
        "latin1" if hex || !raw.is_ascii() => {
            let mut s = String::with_capacity(raw.len());
            crate::text::latin1_to_utf8(&raw, &mut s);
            s.into_bytes()
        }
        "utf8mb4" | "utf8mb3" if hex && std::str::from_utf8(&raw).is_err() => {
            let shown: String = raw.iter().take(6).map(|b| format!("{b:02X}")).collect();
            return Err(SqlError::invalid_character_string(shown));
        }
        _ => raw,
    };
    Ok(Some(Expr::Func(
        Func::Literal(c, false),
        vec![Expr::Const(Value::Bytes(bytes))],
    )))
}

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
        V::SingleQuotedByteStringLiteral(b) | V::DoubleQuotedByteStringLiteral(b) => {
            Value::Bytes(unbit(b).ok_or_else(|| SqlError::parse(format!("near 'b'{b}''")))?)
        }
        other => match other.clone().into_string() {
            Some(s) => Value::Bytes(s.into_bytes()),
            None => return Err(SqlError::unsupported(format!("literal {other}"))),
        },
    })
}

/// The value of a numeric literal spelled `s` (digits, an optional fraction and
/// exponent), as `literal` gives it for `ast::Value::Number`.
pub(crate) fn number(s: &str) -> Result<Value> {
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
