#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use mysql::prelude::Queryable;
#[test]
fn probe() {
    let srv = Server::start("probe");
    let mut c = srv.fresh_db("d");
    exec(
        &mut c,
        "CREATE TABLE e (id INT PRIMARY KEY, n INT, s VARCHAR(5))",
    );
    exec(&mut c, "INSERT INTO e VALUES (1, NULL, NULL), (2, 5, 'x')");
    for sql in std::env::var("PROBE").unwrap().split(';') {
        let t = c.query::<mysql::Row, _>(sql).map(|r| {
            r.iter()
                .map(|r| join_row(&row_strings(r)))
                .collect::<Vec<_>>()
        });
        let b = c.exec::<mysql::Row, _, _>(sql, ()).map(|r| {
            r.iter()
                .map(|r| join_row(&row_strings(r)))
                .collect::<Vec<_>>()
        });
        let ty = c.query_iter(sql).map(|r| {
            r.columns()
                .as_ref()
                .iter()
                .map(|c| format!("{}:{:?}", c.name_str(), c.column_type()))
                .collect::<Vec<_>>()
        });
        println!("{sql}\n  text={t:?}\n  bin ={b:?}\n  types={ty:?}");
    }
}
