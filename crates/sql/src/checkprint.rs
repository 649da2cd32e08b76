//! Expressions printed as MariaDB prints a CHECK constraint (SHOW CREATE
//! TABLE, information_schema.CHECK_CONSTRAINTS): identifiers in backticks,
//! keywords and function names in lower case, `MOD`/`DIV`, strings in
//! single quotes with backslash escapes, and parentheses only where
//! precedence needs them (MariaDB's `print_parenthesised`: a left operand
//! of lower precedence, a right operand of lower or equal precedence; AND
//! and OR chains are flat). Forms without a rule here print as sqlparser
//! prints them, which parses back to the same expression.
use sqlparser::ast::{self, BinaryOperator as B, Expr, UnaryOperator as U};

// MariaDB's `enum precedence`, lowest first.
const OR: u8 = 1;
const XOR: u8 = 2;
const AND: u8 = 3;
const NOT: u8 = 4;
const BETWEEN: u8 = 5;
const CMP: u8 = 6;
const BITOR: u8 = 7;
const BITAND: u8 = 8;
const SHIFT: u8 = 9;
const ADD: u8 = 10;
const MUL: u8 = 11;
const BITXOR: u8 = 12;
const NEG: u8 = 13;
const HIGHEST: u8 = 15;

/// The expression's text.
pub fn print(e: &Expr) -> String {
    let mut s = String::new();
    put(&mut s, e);
    s
}

fn binop(op: &B) -> Option<(&'static str, u8)> {
    Some(match op {
        B::Or => ("or", OR),
        B::Xor => ("xor", XOR),
        B::And => ("and", AND),
        B::Eq => ("=", CMP),
        B::NotEq => ("<>", CMP),
        B::Lt => ("<", CMP),
        B::LtEq => ("<=", CMP),
        B::Gt => (">", CMP),
        B::GtEq => (">=", CMP),
        B::Spaceship => ("<=>", CMP),
        B::BitwiseOr => ("|", BITOR),
        B::BitwiseAnd => ("&", BITAND),
        B::PGBitwiseShiftLeft => ("<<", SHIFT),
        B::PGBitwiseShiftRight => (">>", SHIFT),
        B::Plus => ("+", ADD),
        B::Minus => ("-", ADD),
        B::Multiply => ("*", MUL),
        B::Divide => ("/", MUL),
        B::Modulo => ("MOD", MUL),
        B::MyIntegerDivide => ("DIV", MUL),
        B::BitwiseXor => ("^", BITXOR),
        _ => return None,
    })
}

/// An expression's precedence as MariaDB ranks it.
fn prec(e: &Expr) -> u8 {
    match e {
        Expr::BinaryOp { op, .. } => binop(op).map_or(HIGHEST, |(_, p)| p),
        Expr::UnaryOp { op: U::Not, .. } => NOT,
        Expr::UnaryOp { .. } => NEG,
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsNotTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsNotFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotUnknown(_)
        | Expr::InList { .. }
        | Expr::Like { .. }
        | Expr::RLike { .. } => CMP,
        Expr::Between { .. } => BETWEEN,
        Expr::Nested(x) => prec(x),
        _ => HIGHEST,
    }
}

/// Prints `e` in parentheses when its precedence is below `min`.
fn operand(s: &mut String, e: &Expr, min: u8) {
    if prec(e) < min {
        s.push('(');
        put(s, e);
        s.push(')');
    } else {
        put(s, e);
    }
}

fn quote_ident(s: &mut String, name: &str) {
    s.push('`');
    s.push_str(&name.replace('`', "``"));
    s.push('`');
}

fn quote_str(s: &mut String, v: &str) {
    s.push('\'');
    for ch in v.chars() {
        match ch {
            '\'' => s.push_str("\\'"),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\0' => s.push_str("\\0"),
            c => s.push(c),
        }
    }
    s.push('\'');
}

fn list(s: &mut String, items: &[Expr]) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        put(s, x);
    }
}

fn put(s: &mut String, e: &Expr) {
    match e {
        Expr::Identifier(id) => quote_ident(s, &id.value),
        Expr::CompoundIdentifier(ids) => match ids.last() {
            Some(id) => quote_ident(s, &id.value),
            None => s.push_str(&e.to_string()),
        },
        Expr::Nested(x) => put(s, x),
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(t) | ast::Value::DoubleQuotedString(t) => {
                quote_str(s, t)
            }
            ast::Value::Boolean(b) => s.push_str(if *b { "1" } else { "0" }),
            ast::Value::Null => s.push_str("NULL"),
            other => s.push_str(&other.to_string()),
        },
        Expr::BinaryOp { left, op, right } => match binop(op) {
            Some((text, p)) => {
                // AND, OR (MariaDB's n-ary conditions) are flat on both sides.
                let right_min = if p == AND || p == OR { p } else { p + 1 };
                operand(s, left, p);
                s.push(' ');
                s.push_str(text);
                s.push(' ');
                operand(s, right, right_min);
            }
            None => s.push_str(&e.to_string()),
        },
        Expr::UnaryOp { op, expr } => match op {
            U::Minus => {
                s.push('-');
                operand(s, expr, NEG);
            }
            U::Plus => operand(s, expr, NEG),
            U::BitwiseNot => {
                s.push('~');
                operand(s, expr, NEG);
            }
            U::Not | U::BangNot => match negate(expr) {
                Some(n) => put(s, &n),
                None => {
                    s.push_str("!(");
                    put(s, expr);
                    s.push(')');
                }
            },
            _ => s.push_str(&e.to_string()),
        },
        Expr::IsNull(x) => suffix(s, x, " is null"),
        Expr::IsNotNull(x) => suffix(s, x, " is not null"),
        Expr::IsTrue(x) => suffix(s, x, " is true"),
        Expr::IsNotTrue(x) => suffix(s, x, " is not true"),
        Expr::IsFalse(x) => suffix(s, x, " is false"),
        Expr::IsNotFalse(x) => suffix(s, x, " is not false"),
        Expr::IsUnknown(x) => suffix(s, x, " is null"),
        Expr::IsNotUnknown(x) => suffix(s, x, " is not null"),
        Expr::InList {
            expr,
            list: items,
            negated,
        } => {
            operand(s, expr, CMP);
            s.push_str(if *negated { " not in (" } else { " in (" });
            list(s, items);
            s.push(')');
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            operand(s, expr, BETWEEN);
            s.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            operand(s, low, BETWEEN);
            s.push_str(" and ");
            operand(s, high, BETWEEN);
        }
        Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        } => {
            operand(s, expr, CMP);
            // MariaDB prints two spaces before NOT.
            s.push_str(if *negated { "  not like " } else { " like " });
            operand(s, pattern, CMP + 1);
            if let Some(esc) = escape_char {
                s.push_str(" escape ");
                put(s, esc);
            }
        }
        Expr::RLike {
            negated,
            expr,
            pattern,
            ..
        } => {
            // MariaDB prints NOT REGEXP as !(x regexp p).
            if *negated {
                s.push_str("!(");
            }
            operand(s, expr, CMP);
            s.push_str(" regexp ");
            operand(s, pattern, CMP + 1);
            if *negated {
                s.push(')');
            }
        }
        Expr::Cast {
            kind: ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
            ..
        } => {
            s.push_str("cast(");
            put(s, expr);
            s.push_str(" as ");
            s.push_str(&data_type.to_string().to_ascii_lowercase());
            s.push(')');
        }
        Expr::Collate { expr, collation } => {
            operand(s, expr, NEG);
            s.push_str(" collate ");
            s.push_str(&collation.to_string().trim_matches('`').to_ascii_lowercase());
        }
        Expr::Case {
            operand: op,
            conditions,
            else_result,
            ..
        } => {
            s.push_str("case ");
            if let Some(o) = op {
                put(s, o);
                s.push(' ');
            }
            for w in conditions {
                s.push_str("when ");
                put(s, &w.condition);
                s.push_str(" then ");
                put(s, &w.result);
                s.push(' ');
            }
            if let Some(x) = else_result {
                s.push_str("else ");
                put(s, x);
                s.push(' ');
            }
            s.push_str("end");
        }
        Expr::Function(f) => function(s, f, e),
        _ => s.push_str(&e.to_string()),
    }
}

/// NOT `e` as MariaDB rewrites it: comparisons inverted, AND/OR by De
/// Morgan, the negated form of IN/BETWEEN/LIKE/IS, a plain value `e = 0`;
/// None where MariaDB keeps `!(e)`. Each is equal to NOT `e` for every
/// value, NULL included.
fn negate(e: &Expr) -> Option<Expr> {
    let b = |x: &Expr| Box::new(x.clone());
    Some(match e {
        Expr::Nested(x) => return negate(x),
        Expr::BinaryOp { left, op, right } => {
            let inv = match op {
                B::Eq => B::NotEq,
                B::NotEq => B::Eq,
                B::Lt => B::GtEq,
                B::GtEq => B::Lt,
                B::Gt => B::LtEq,
                B::LtEq => B::Gt,
                B::And | B::Or => {
                    let not = |x: &Expr| {
                        negate(x).unwrap_or_else(|| Expr::UnaryOp {
                            op: U::Not,
                            expr: b(x),
                        })
                    };
                    return Some(Expr::BinaryOp {
                        left: Box::new(not(left)),
                        op: if *op == B::And { B::Or } else { B::And },
                        right: Box::new(not(right)),
                    });
                }
                _ => return None,
            };
            Expr::BinaryOp {
                left: left.clone(),
                op: inv,
                right: right.clone(),
            }
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: expr.clone(),
            list: list.clone(),
            negated: !negated,
        },
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => Expr::Between {
            expr: expr.clone(),
            negated: !negated,
            low: low.clone(),
            high: high.clone(),
        },
        Expr::IsNull(x) => Expr::IsNotNull(x.clone()),
        Expr::IsNotNull(x) => Expr::IsNull(x.clone()),
        Expr::IsTrue(x) => Expr::IsNotTrue(x.clone()),
        Expr::IsNotTrue(x) => Expr::IsTrue(x.clone()),
        Expr::IsFalse(x) => Expr::IsNotFalse(x.clone()),
        Expr::IsNotFalse(x) => Expr::IsFalse(x.clone()),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => Expr::BinaryOp {
            left: b(e),
            op: B::Eq,
            right: Box::new(Expr::value(ast::Value::Number("0".into(), false))),
        },
        _ => return None,
    })
}

fn suffix(s: &mut String, x: &Expr, text: &str) {
    operand(s, x, CMP);
    s.push_str(text);
}

fn function(s: &mut String, f: &ast::Function, whole: &Expr) {
    let plain = f.over.is_none()
        && f.filter.is_none()
        && f.within_group.is_empty()
        && matches!(f.parameters, ast::FunctionArguments::None);
    let args = match &f.args {
        ast::FunctionArguments::List(l)
            if plain && l.duplicate_treatment.is_none() && l.clauses.is_empty() =>
        {
            let mut v = Vec::new();
            for a in &l.args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => v.push(x.clone()),
                    _ => return s.push_str(&whole.to_string()),
                }
            }
            v
        }
        ast::FunctionArguments::None if plain => Vec::new(),
        _ => return s.push_str(&whole.to_string()),
    };
    let name = f.name.to_string().trim_matches('`').to_ascii_lowercase();
    let name = match name.as_str() {
        "upper" => "ucase",
        "lower" => "lcase",
        "length" => "octet_length",
        "substring" => "substr",
        n => n,
    };
    s.push_str(name);
    s.push('(');
    list(s, &args);
    s.push(')');
}
