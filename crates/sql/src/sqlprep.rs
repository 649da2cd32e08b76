//! SQL-level prepared statements: `PREPARE name FROM 'text' | @var`,
//! `EXECUTE name [USING expr, ...]` and `{DEALLOCATE | DROP} PREPARE name`.
//! Parsed here (sqlparser knows only PostgreSQL's forms) and run on the
//! session's prepared-statement table, the one COM_STMT_PREPARE uses: a name
//! (case-insensitive) maps to a statement id, so both count against
//! max_prepared_stmt_count and share the compiled-statement cache.
use crate::error::{Result, SqlError};
use crate::result::{ok, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::{PrepStmt, Stmt};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

/// Recognizes PREPARE, EXECUTE and DEALLOCATE/DROP PREPARE; None for any other
/// statement.
pub fn parse(sql: &str) -> Option<Result<Stmt>> {
    let mut w = sql.split_whitespace();
    let first = w.next()?.to_ascii_uppercase();
    let second = w.next().map(|s| s.to_ascii_uppercase());
    match (first.as_str(), second.as_deref()) {
        ("PREPARE" | "EXECUTE", Some(_)) => {}
        ("DEALLOCATE" | "DROP", Some("PREPARE")) => {}
        _ => return None,
    }
    Some(parse_prep(sql).map(Stmt::Prep))
}

fn syntax(e: impl std::fmt::Display) -> SqlError {
    SqlError::parse(e.to_string())
}

fn parse_prep(sql: &str) -> Result<PrepStmt> {
    let dialect = crate::dialect::StrataDialect::default();
    let mut p = Parser::new(&dialect).try_with_sql(sql).map_err(syntax)?;
    let stmt = if p.parse_keyword(Keyword::PREPARE) {
        let name = p.parse_identifier().map_err(syntax)?.value;
        p.expect_keyword_is(Keyword::FROM).map_err(syntax)?;
        let from = p.parse_expr().map_err(syntax)?;
        let ok = match &from {
            ast::Expr::Value(v) => matches!(
                v.value,
                ast::Value::SingleQuotedString(_)
                    | ast::Value::DoubleQuotedString(_)
                    | ast::Value::HexStringLiteral(_)
            ),
            ast::Expr::Identifier(i) => {
                i.quote_style.is_none() && i.value.starts_with('@') && !i.value.starts_with("@@")
            }
            _ => false,
        };
        if !ok {
            return Err(SqlError::parse(format!(
                "PREPARE takes a string or a user variable (near '{from}')"
            )));
        }
        PrepStmt::Prepare {
            name,
            from: Box::new(from),
        }
    } else if p.parse_keyword(Keyword::EXECUTE) {
        let name = p.parse_identifier().map_err(syntax)?.value;
        let using = if p.parse_keyword(Keyword::USING) {
            p.parse_comma_separated(Parser::parse_expr)
                .map_err(syntax)?
        } else {
            vec![]
        };
        PrepStmt::Execute { name, using }
    } else {
        if !p.parse_keyword(Keyword::DEALLOCATE) {
            p.expect_keyword_is(Keyword::DROP).map_err(syntax)?;
        }
        p.expect_keyword_is(Keyword::PREPARE).map_err(syntax)?;
        PrepStmt::Deallocate(p.parse_identifier().map_err(syntax)?.value)
    };
    while p.consume_token(&Token::SemiColon) {}
    if p.peek_token().token != Token::EOF {
        return Err(SqlError::parse(format!("near '{}'", p.peek_token())));
    }
    Ok(stmt)
}

/// Runs PREPARE, EXECUTE or DEALLOCATE PREPARE.
pub fn run(s: &mut Session, stmt: &PrepStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    match stmt {
        PrepStmt::Prepare { name, from } => {
            // A statement of the same name goes first, even if the new one fails.
            if let Some(id) = s.named_stmts.remove(&key(name)) {
                s.close_prepared(id);
            }
            let text = match crate::set::eval_expr(s, from)? {
                rel::Value::Null => return Err(SqlError::parse("near 'NULL'")),
                v => String::from_utf8(v.text())
                    .map_err(|_| SqlError::parse("the statement text is not UTF-8"))?,
            };
            let (id, _, _) = s.prepare(&text)?;
            s.named_stmts.insert(key(name), id);
            ok()
        }
        PrepStmt::Execute { name, using } => {
            let id = *s
                .named_stmts
                .get(&key(name))
                .ok_or_else(|| SqlError::unknown_statement(name, "EXECUTE"))?;
            match s.prepared_params(id) {
                None => return Err(SqlError::unknown_statement(name, "EXECUTE")),
                Some(n) if n != using.len() => return Err(SqlError::wrong_arguments("EXECUTE")),
                Some(_) => {}
            }
            let params = using
                .iter()
                .map(|e| crate::set::eval_expr(s, e))
                .collect::<Result<Vec<_>>>()?;
            s.execute_prepared_inner(id, &params, sink)
        }
        PrepStmt::Deallocate(name) => {
            let id = s
                .named_stmts
                .remove(&key(name))
                .ok_or_else(|| SqlError::unknown_statement(name, "DEALLOCATE PREPARE"))?;
            s.close_prepared(id);
            ok()
        }
    }
}

/// Statement names compare case-insensitively.
fn key(name: &str) -> String {
    name.to_lowercase()
}
