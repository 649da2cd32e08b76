//! The SQL dialect Strata parses: sqlparser's MySQL dialect with MySQL's operator
//! precedence where sqlparser's differs. sqlparser ranks XOR above comparisons and
//! LIKE (with `^`), so `a IS NULL XOR b LIKE 'x%'` parsed as `(a IS NULL XOR b) LIKE
//! 'x%'`; MySQL ranks it between AND and OR. `@v := expr` (assignment to a user
//! variable inside an expression) ranks lowest and groups to the right, as in
//! MySQL (sqlparser ranks `:=` with `=`). `x [NOT] REGEXP y` is parsed here:
//! sqlparser's own reading takes `REGEXP NULL` for `NOT NULL` and fails on
//! `'a' REGEXP NULL`. `BINARY x` binds as tightly as MySQL's (sqlparser casts
//! the whole expression after it: `BINARY 'a' = 'A'` was `BINARY ('a' = 'A')`).
//! `!x` (NOT as tightly bound as unary minus) and the infix `a MOD b` are parsed
//! here too. MySQL's JSON operators `->` and `->>` bind tighter than arithmetic
//! (sqlparser ranks them with PostgreSQL's other operators, below `+`).
//! Everything else is delegated, and
//! `dialect()` answers MySQL's type id so MySQL-only syntax keeps parsing.
use sqlparser::ast::{BinaryOperator, CastKind, DataType, Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;
use std::any::TypeId;

/// The precedence of `:=`: below OR (5).
const ASSIGN_PREC: u8 = 2;

#[derive(Debug, Default)]
pub struct StrataDialect(MySqlDialect);

impl Dialect for StrataDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }
    fn prec_value(&self, prec: Precedence) -> u8 {
        match prec {
            // MySQL: ... NOT > AND (10) > XOR > OR (5).
            Precedence::Xor => 7,
            p => self.0.prec_value(p),
        }
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.0.supports_string_literal_backslash_escape()
    }
    fn supports_string_literal_concatenation(&self) -> bool {
        self.0.supports_string_literal_concatenation()
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        self.0.ignores_wildcard_escapes()
    }
    fn supports_numeric_prefix(&self) -> bool {
        self.0.supports_numeric_prefix()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        self.0.supports_bitwise_shift_operators()
    }
    fn supports_multiline_comment_hints(&self) -> bool {
        self.0.supports_multiline_comment_hints()
    }
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        let kw = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
        let re = |t: &Token| kw(t, Keyword::REGEXP) || kw(t, Keyword::RLIKE);
        let (t0, t1) = (
            parser.peek_nth_token(0).token,
            parser.peek_nth_token(1).token,
        );
        let negated = kw(&t0, Keyword::NOT) && re(&t1);
        if negated || re(&t0) {
            let regexp = kw(if negated { &t1 } else { &t0 }, Keyword::REGEXP);
            if negated {
                parser.next_token();
            }
            parser.next_token();
            return Some(
                parser
                    .parse_subexpr(self.prec_value(Precedence::Like))
                    .map(|pattern| Expr::RLike {
                        negated,
                        expr: Box::new(expr.clone()),
                        pattern: Box::new(pattern),
                        regexp,
                    }),
            );
        }
        // `a MOD b`: the infix MOD (MariaDB prints `%` so in CHECK constraints).
        if kw(&t0, Keyword::MOD) {
            parser.next_token();
            return Some(
                parser
                    .parse_subexpr(self.prec_value(Precedence::MulDivModOp))
                    .map(|right| Expr::BinaryOp {
                        left: Box::new(expr.clone()),
                        op: BinaryOperator::Modulo,
                        right: Box::new(right),
                    }),
            );
        }
        if parser.peek_token().token == Token::Assignment {
            let is_user_var = matches!(expr, Expr::Identifier(i)
                if i.quote_style.is_none() && i.value.starts_with('@') && !i.value.starts_with("@@"));
            if !is_user_var {
                return Some(Err(ParserError::ParserError(format!(
                    "only a user variable can be assigned with := (near '{expr} :=')"
                ))));
            }
            parser.next_token();
            // Right-associative: `@a := @b := 1` assigns both.
            return Some(
                parser
                    .parse_subexpr(ASSIGN_PREC - 1)
                    .map(|right| Expr::BinaryOp {
                        left: Box::new(expr.clone()),
                        op: BinaryOperator::Assignment,
                        right: Box::new(right),
                    }),
            );
        }
        self.0.parse_infix(parser, expr, precedence)
    }
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match parser.peek_token().token {
            Token::Assignment => return Some(Ok(ASSIGN_PREC)),
            // MySQL's `col->'$.path'` and `->>` bind tighter than arithmetic.
            Token::Arrow | Token::LongArrow => {
                return Some(Ok(self.prec_value(Precedence::DoubleColon)))
            }
            _ => {}
        }
        if matches!(&parser.peek_token().token, Token::Word(w) if w.keyword == Keyword::MOD) {
            return Some(Ok(self.prec_value(Precedence::MulDivModOp)));
        }
        self.0.get_next_precedence(parser)
    }
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let binary = matches!(&parser.peek_token().token,
            Token::Word(w) if w.keyword == Keyword::BINARY && w.quote_style.is_none());
        if binary {
            parser.next_token();
            return Some(
                parser
                    .parse_subexpr(self.prec_value(Precedence::MulDivModOp))
                    .map(|e| Expr::Cast {
                        kind: CastKind::Cast,
                        expr: Box::new(e),
                        data_type: DataType::Binary(None),
                        format: None,
                    }),
            );
        }
        // `!x`: MySQL's NOT that binds as tightly as unary minus (`!a + 1` is
        // `(!a) + 1`); MariaDB prints CHECK constraints with it.
        if parser.peek_token().token == Token::ExclamationMark {
            parser.next_token();
            return Some(
                parser
                    .parse_subexpr(self.prec_value(Precedence::MulDivModOp))
                    .map(|e| Expr::UnaryOp {
                        op: sqlparser::ast::UnaryOperator::BangNot,
                        expr: Box::new(e),
                    }),
            );
        }
        self.0.parse_prefix(parser)
    }
    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.0.parse_statement(parser)
    }
    fn require_interval_qualifier(&self) -> bool {
        self.0.require_interval_qualifier()
    }
    fn supports_limit_comma(&self) -> bool {
        self.0.supports_limit_comma()
    }
    fn supports_create_table_select(&self) -> bool {
        self.0.supports_create_table_select()
    }
    fn supports_insert_set(&self) -> bool {
        self.0.supports_insert_set()
    }
    fn supports_user_host_grantee(&self) -> bool {
        self.0.supports_user_host_grantee()
    }
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.0.is_table_factor_alias(explicit, kw, parser)
    }
    fn supports_table_hints(&self) -> bool {
        self.0.supports_table_hints()
    }
    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.0.requires_single_line_comment_whitespace()
    }
    fn supports_match_against(&self) -> bool {
        self.0.supports_match_against()
    }
    fn supports_select_modifiers(&self) -> bool {
        self.0.supports_select_modifiers()
    }
    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }
    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.0.supports_comma_separated_set_assignments()
    }
    fn supports_update_order_by(&self) -> bool {
        self.0.supports_update_order_by()
    }
    fn supports_data_type_signed_suffix(&self) -> bool {
        self.0.supports_data_type_signed_suffix()
    }
    fn supports_cross_join_constraint(&self) -> bool {
        self.0.supports_cross_join_constraint()
    }
    fn supports_double_ampersand_operator(&self) -> bool {
        self.0.supports_double_ampersand_operator()
    }
    fn supports_binary_kw_as_cast(&self) -> bool {
        self.0.supports_binary_kw_as_cast()
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        self.0.supports_comment_optimizer_hint()
    }
    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.0.supports_constraint_keyword_without_name()
    }
    fn supports_key_column_option(&self) -> bool {
        self.0.supports_key_column_option()
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        self.0.supports_group_by_with_modifier()
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.0.supports_left_associative_joins_without_parens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> String {
        Parser::parse_sql(&StrataDialect::default(), sql).unwrap()[0].to_string()
    }

    /// The first select-list expression of `sql`.
    fn first_item(sql: &str) -> Expr {
        let p = Parser::parse_sql(&StrataDialect::default(), sql).unwrap();
        let sqlparser::ast::Statement::Query(q) = &p[0] else {
            panic!()
        };
        let sqlparser::ast::SetExpr::Select(s) = &*q.body else {
            panic!()
        };
        let sqlparser::ast::SelectItem::UnnamedExpr(e) = &s.projection[0] else {
            panic!()
        };
        e.clone()
    }

    #[test]
    fn xor_ranks_between_and_and_or() {
        // The printed form shows the grouping through the parse tree's nesting.
        match first_item("SELECT 0 XOR 'x' LIKE 'x%'") {
            Expr::BinaryOp { op, right, .. } => {
                assert_eq!(op, sqlparser::ast::BinaryOperator::Xor);
                assert!(matches!(*right, Expr::Like { .. }), "{right:?}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse("SELECT 1 XOR 2"), "SELECT 1 XOR 2");
    }

    #[test]
    fn assignment_ranks_lowest_and_groups_right() {
        let e = first_item("SELECT @a := @b := 1 OR 2 = 3");
        let Expr::BinaryOp { op, right, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!(op, BinaryOperator::Assignment);
        let Expr::BinaryOp { op, right, .. } = *right else {
            panic!("{right:?}")
        };
        assert_eq!(op, BinaryOperator::Assignment);
        assert!(
            matches!(
                &*right,
                Expr::BinaryOp {
                    op: BinaryOperator::Or,
                    ..
                }
            ),
            "{right:?}"
        );
        assert!(Parser::parse_sql(&StrataDialect::default(), "SELECT 1 := 1").is_err());
        assert!(Parser::parse_sql(&StrataDialect::default(), "SELECT @@x := 1").is_err());
    }

    #[test]
    fn regexp_takes_null_as_its_pattern() {
        for (sql, neg) in [
            ("SELECT 'a' REGEXP NULL", false),
            ("SELECT 'a' NOT RLIKE NULL", true),
        ] {
            match first_item(sql) {
                Expr::RLike {
                    negated, pattern, ..
                } => {
                    assert_eq!(negated, neg);
                    assert_eq!(pattern.to_string(), "NULL");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            first_item("SELECT NOT 'a' REGEXP 'b'"),
            Expr::UnaryOp { .. }
        ));
    }

    #[test]
    fn binary_binds_tightly() {
        for sql in ["SELECT BINARY 'a' = 'A'", "SELECT BINARY 'Abc' REGEXP 'a'"] {
            match first_item(sql) {
                Expr::BinaryOp { left, .. } | Expr::RLike { expr: left, .. } => {
                    assert!(matches!(*left, Expr::Cast { .. }), "{sql}: {left:?}")
                }
                other => panic!("{sql}: {other:?}"),
            }
        }
        assert!(matches!(
            first_item("SELECT BINARY('x')"),
            Expr::Cast { .. }
        ));
        assert_eq!(
            parse("SELECT CAST(a AS BINARY) FROM t"),
            "SELECT CAST(a AS BINARY) FROM t"
        );
    }
}
