//! Prints sqlparser's AST for each argument (a development aid).
fn main() {
    let d = sqlparser::dialect::MySqlDialect {};
    for a in std::env::args().skip(1) {
        match sqlparser::parser::Parser::parse_sql(&d, &a) {
            Ok(s) => println!("{s:#?}"),
            Err(e) => println!("ERR {e}"),
        }
    }
}
