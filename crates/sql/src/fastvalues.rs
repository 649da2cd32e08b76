//! Big `INSERT/REPLACE ... VALUES (...), (...), ...` statements whose rows are
//! only plain literals (what sysbench prepare, mysqldump and loaders send,
//! 512 KiB at a time): sqlparser tokenizing and parsing every value was
//! about a third of the server's CPU while loading. Here only the head (up
//! to VALUES) goes through `parse` (with one stand-in row), and the rows are
//! read directly into the same expressions sqlparser would give: numbers
//! (`Number`, a minus sign as `UnaryOp`), single-quoted strings without
//! backslashes (`''` for a quote), and NULL. Anything else in a row (an
//! expression, DEFAULT, a backslash escape, an exponent, a double-quoted
//! string, text after the rows such as ON DUPLICATE KEY UPDATE) gives `None`
//! and the statement is parsed the ordinary way.
use crate::error::Result;
use crate::parse::Parsed;
use crate::stmt::{RowStmt, Stmt};
use sqlparser::ast;

/// Statements shorter than this are left to the ordinary parser (and to
/// `autoparam`, which shares their compiled form).
pub(crate) const MIN_LEN: usize = 4096;

/// The statement read with its rows taken directly, or None (see above).
pub(crate) fn parse(sql: &str) -> Option<Result<Parsed>> {
    let b = sql.as_bytes();
    if b.len() < MIN_LEN {
        return None;
    }
    let verb: String = b
        .iter()
        .take(7)
        .map(|c| c.to_ascii_uppercase() as char)
        .collect();
    if !(verb.starts_with("INSERT") || verb.starts_with("REPLACE")) {
        return None;
    }
    let at = values_keyword(b)?;
    // The stand-in statement must itself stay below the fast path's length.
    if at + 16 >= MIN_LEN {
        return None;
    }
    let rows = rows(&sql[at..])?;
    let head = format!("{} (NULL)", &sql[..at]);
    let mut parsed = match crate::parse::parse(&head) {
        Ok(p) => p,
        Err(_) => return None,
    };
    if !parsed.params.is_empty() {
        return None;
    }
    let Stmt::Rows(RowStmt::Insert(ins)) = &mut parsed.stmt else {
        return None;
    };
    let body = ins.source.as_mut()?;
    let ast::SetExpr::Values(v) = body.body.as_mut() else {
        return None;
    };
    if v.rows.len() != 1 || v.explicit_row {
        return None;
    }
    v.rows = rows.into_iter().map(ast::Parens::with_empty_span).collect();
    Some(Ok(parsed))
}

/// The byte offset just after the first VALUES (or VALUE) keyword outside
/// quotes, if the head before it holds no comment, placeholder or string.
fn values_keyword(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'`' => quote = Some(c),
            b'\'' | b'"' | b'?' | b'#' => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            b'/' if b.get(i + 1) == Some(&b'*') => return None,
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                let w = &b[start..i];
                if w.eq_ignore_ascii_case(b"VALUES") || w.eq_ignore_ascii_case(b"VALUE") {
                    return Some(i);
                }
                if w.eq_ignore_ascii_case(b"SELECT") || w.eq_ignore_ascii_case(b"SET") {
                    return None;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && b[*i].is_ascii_whitespace() {
        *i += 1;
    }
}

/// The rows after VALUES, each a list of literal expressions, up to the
/// end of the statement.
fn rows(s: &str) -> Option<Vec<Vec<ast::Expr>>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let mut width = None;
    loop {
        skip_ws(b, &mut i);
        if b.get(i) != Some(&b'(') {
            return None;
        }
        i += 1;
        let mut row = Vec::with_capacity(width.unwrap_or(4));
        loop {
            skip_ws(b, &mut i);
            row.push(literal(s, b, &mut i)?);
            skip_ws(b, &mut i);
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b')') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
        width.get_or_insert(row.len());
        out.push(row);
        skip_ws(b, &mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            None => return Some(out),
            _ => return None,
        }
    }
}

fn literal(s: &str, b: &[u8], i: &mut usize) -> Option<ast::Expr> {
    let value = |v: ast::Value| ast::Expr::Value(v.with_empty_span());
    match *b.get(*i)? {
        b'\'' => {
            let mut text = String::new();
            let mut start = *i + 1;
            let mut j = start;
            loop {
                // Straight to the next quote or backslash (SIMD, not byte by byte).
                j += memchr::memchr2(b'\'', b'\\', b.get(j..)?)?;
                match *b.get(j)? {
                    b'\\' => return None,
                    b'\'' if b.get(j + 1) == Some(&b'\'') => {
                        text.push_str(&s[start..=j]);
                        j += 2;
                        start = j;
                    }
                    b'\'' => {
                        text.push_str(&s[start..j]);
                        *i = j + 1;
                        return Some(value(ast::Value::SingleQuotedString(text)));
                    }
                    _ => j += 1,
                }
            }
        }
        b'-' => {
            *i += 1;
            let n = number(s, b, i)?;
            Some(ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr: Box::new(n),
            })
        }
        c if c.is_ascii_digit() => number(s, b, i),
        c if c.is_ascii_alphabetic() => {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_alphanumeric() {
                *i += 1;
            }
            if b[start..*i].eq_ignore_ascii_case(b"NULL") {
                Some(value(ast::Value::Null))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Digits with an optional fraction (`12`, `3.25`); anything else is None.
fn number(s: &str, b: &[u8], i: &mut usize) -> Option<ast::Expr> {
    let start = *i;
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        let f = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == f {
            return None;
        }
    }
    if b.get(*i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.' || *c == b'_')
    {
        return None;
    }
    Some(ast::Expr::Value(
        ast::Value::Number(s[start..*i].to_string(), false).with_empty_span(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(sql: &str) -> String {
        // Long enough for the fast path: repeat the last row.
        let mut s = sql.to_string();
        while s.len() < MIN_LEN {
            s.push_str(", (7, -2.5, 'it''s', NULL)");
        }
        s
    }

    #[test]
    fn rows_equal_what_sqlparser_reads() {
        let sql = pad(
            "INSERT INTO d.t (a, b, c, `d`) VALUES (1, -2.50, 'x y', NULL),(0012, 3, '', null)",
        );
        let fast = parse(&sql).expect("fast path").unwrap();
        let slow =
            sqlparser::parser::Parser::parse_sql(&crate::dialect::StrataDialect::default(), &sql)
                .unwrap();
        let Stmt::Rows(RowStmt::Insert(a)) = fast.stmt else {
            panic!("not an insert")
        };
        assert_eq!(ast::Statement::Insert(*a).to_string(), slow[0].to_string());
    }

    #[test]
    fn anything_else_takes_the_ordinary_way() {
        for tail in [
            ", (1, NOW(), 'a', 1)",
            ", (1, 'a\\'b', 'a', 1)",
            ", (1, 1e5, 'a', 1)",
            ", (1, DEFAULT, 'a', 1)",
            ", (1, \"a\", 'a', 1)",
            ", (1, 0x10, 'a', 1)",
            " ON DUPLICATE KEY UPDATE a = 1",
        ] {
            let sql = pad("INSERT INTO t VALUES (1, 2, 'a', NULL)") + tail;
            assert!(parse(&sql).is_none(), "{tail}");
        }
        assert!(parse(&pad("INSERT INTO t SELECT 1 FROM u WHERE x IN (1)")).is_none());
        assert!(parse("INSERT INTO t VALUES (1)").is_none());
    }
}
