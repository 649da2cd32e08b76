//! The SQL dialect Strata parses: sqlparser's MySQL dialect with MySQL's operator
//! precedence where sqlparser's differs. sqlparser ranks XOR above comparisons and
//! LIKE (with `^`), so `a IS NULL XOR b LIKE 'x%'` parsed as `(a IS NULL XOR b) LIKE
//! 'x%'`; MySQL ranks it between AND and OR. Everything else is delegated, and
//! `dialect()` answers MySQL's type id so MySQL-only syntax keeps parsing.
use sqlparser::ast::{Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use std::any::TypeId;

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
        self.0.parse_infix(parser, expr, precedence)
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

    #[test]
    fn xor_ranks_between_and_and_or() {
        // The printed form shows the grouping through the parse tree's nesting.
        let p = Parser::parse_sql(&StrataDialect::default(), "SELECT 0 XOR 'x' LIKE 'x%'").unwrap();
        let sqlparser::ast::Statement::Query(q) = &p[0] else {
            panic!()
        };
        let sqlparser::ast::SetExpr::Select(s) = &*q.body else {
            panic!()
        };
        let sqlparser::ast::SelectItem::UnnamedExpr(e) = &s.projection[0] else {
            panic!()
        };
        match e {
            Expr::BinaryOp { op, right, .. } => {
                assert_eq!(*op, sqlparser::ast::BinaryOperator::Xor);
                assert!(matches!(**right, Expr::Like { .. }), "{e:?}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parse("SELECT 1 XOR 2"), "SELECT 1 XOR 2");
    }
}
