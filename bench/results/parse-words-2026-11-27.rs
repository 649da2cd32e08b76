// The per-statement word splitting parse.rs did before 98c7b19 (replsrc,
// replica, binlogsql, view_forms, admin, the UPDATE IGNORE / SET
// TRANSACTION block) and what it does now, for one statement text.
use std::hint::black_box;

fn words_of(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|w| !w.is_empty())
}
fn words(s: &str) -> Vec<String> {
    words_of(s).map(|w| w.to_string()).collect()
}
fn up_all(ws: &[String]) -> usize {
    let up: Vec<String> = ws.iter().map(|w| w.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|w| w.as_str()).collect();
    black_box(&u).len()
}
fn old(sql: &str) -> usize {
    let mut n = 0;
    // view_forms
    let ws = words(sql);
    n += black_box(ws.first().map(|w| w.to_ascii_uppercase())).map_or(0, |v| v.len());
    // replsrc::parse
    n += up_all(&words(sql));
    // replica::parse (first 4 upper-cased)
    let ws = words(sql);
    let up: Vec<String> = ws.iter().take(4).map(|w| w.to_ascii_uppercase()).collect();
    n += black_box(&up).len();
    // binlogsql::parse
    n += up_all(&words(sql));
    // admin
    n += up_all(&words(sql));
    // the UPDATE IGNORE / SET TRANSACTION block
    let ws = words(sql);
    n += black_box(ws.first().map(|w| w.to_ascii_uppercase())).map_or(0, |v| v.len());
    n
}
fn new(sql: &str) -> usize {
    let first = words_of(sql).next().unwrap_or("");
    let is = |ks: &[&str]| ks.iter().any(|k| first.eq_ignore_ascii_case(k));
    let mut n = 0;
    n += is(&["CREATE", "ALTER"]) as usize;
    n += is(&["SHOW", "CHANGE", "START", "STOP", "RESET", "PURGE"]) as usize;
    n += is(&["SET", "LOCK", "ALTER", "SHOW", "KILL", "BACKUP", "CHECK", "ANALYZE", "OPTIMIZE", "FLUSH", "START"]) as usize;
    n += is(&["UPDATE", "DELETE", "SET"]) as usize;
    n
}
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args().nth(2).map_or(0, |v| v.parse().unwrap());
    let sql = "SELECT c FROM sbtest1 WHERE id=5017";
    let mut t = 0;
    for i in 0..n {
        let s = black_box(if i % 2 == 0 { sql } else { "SELECT c FROM sbtest1 WHERE id=5018" });
        t += if which == "old" { old(s) } else { new(s) };
    }
    println!("{t}");
}
