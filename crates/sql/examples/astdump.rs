//! Prints sqlparser's AST for each argument, and the span of each
//! projected expression (a development aid).
use sqlparser::ast::Spanned;
fn main() {
    let d = sqlparser::dialect::MySqlDialect {};
    for a in std::env::args().skip(1) {
        match sqlparser::parser::Parser::parse_sql(&d, &a) {
            Ok(s) => {
                if let Some(sqlparser::ast::Statement::Query(q)) = s.first() {
                    if let sqlparser::ast::SetExpr::Select(sel) = &*q.body {
                        for p in &sel.projection {
                            println!("item span {:?}", p.span());
                        }
                    }
                }
                println!("{s:#?}")
            }
            Err(e) => println!("ERR {e}"),
        }
    }
}
