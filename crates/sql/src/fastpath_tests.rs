//! Seeded randomized equivalence of the big-statement fast paths with the
//! walks they skip (738515c): `text::split_statements` (no `;`),
//! `parse::preprocess` (no `/*!`), `slowlog::redact_secrets`' case-insensitive
//! search, and `fastvalues` (rows read directly) against sqlparser, over
//! statements built from quotes, `''`, backslash escapes, comments, `/*!`,
//! `;`, NULLs and negative numbers. `SEED=` reruns a failure.
#![allow(clippy::unwrap_used)]
use testkit::Rng;

/// Pieces the random statements are made of.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "SELECT ", "INSERT INTO t VALUES ", "(", ")", ", ", ";", " ", "\n", "\t", "'", "''", "\\'",
    "\\\\", "\\", "\"", "`", "/*", "*/", "/*!", "/*!50000 ", "/*!90000 ", "/*M!", "-- ", "--x",
    "#", "NULL", "-5", "3.25", "'a''b'", "'x\\'y'", "\"q\"", "`c;d`", "LOCK IN SHARE MODE",
    "é", "abc", "1e5", "*", "/", "!", "-", "a;b", "'c;d'", "/* ; */", "PassWord", "IDENTIFIED",
];

fn statement(rng: &mut Rng, pieces: &[&str]) -> String {
    let n = rng.below(14);
    (0..n)
        .map(|_| pieces[rng.below(pieces.len() as u64) as usize])
        .collect()
}

#[test]
fn split_and_preprocess_fast_paths_equal_their_walks() {
    let mut rng = Rng::from_env("split_and_preprocess_fast_paths_equal_their_walks");
    // Without `;` and `/*!` in part of the inputs, so the fast paths run.
    let no_semi: Vec<&str> = PIECES
        .iter()
        .copied()
        .filter(|p| !p.contains(';'))
        .collect();
    let no_bang: Vec<&str> = PIECES
        .iter()
        .copied()
        .filter(|p| !p.contains("/*!"))
        .collect();
    let (mut fast_split, mut fast_pre) = (0, 0);
    for i in 0..30_000 {
        let pieces: &[&str] = match i % 3 {
            0 => PIECES,
            1 => &no_semi,
            _ => &no_bang,
        };
        let sql = statement(&mut rng, pieces);
        let b = sql.as_bytes();
        fast_split += usize::from(!b.contains(&b';'));
        fast_pre += usize::from(!sql.contains("/*!"));
        assert_eq!(
            crate::text::split_statements(b),
            crate::text::split_walk(b),
            "split_statements({sql:?})"
        );
        assert_eq!(
            crate::parse::preprocess(&sql),
            crate::parse::preprocess_walk(&sql),
            "preprocess({sql:?})"
        );
        let lower = sql.to_ascii_lowercase();
        for w in ["identified", "password"] {
            assert_eq!(
                crate::slowlog::contains_ignore_case(b, w.as_bytes()),
                lower.contains(w),
                "{w} in {sql:?}"
            );
        }
    }
    assert!(
        fast_split > 5_000 && fast_pre > 5_000,
        "{fast_split} {fast_pre}"
    );
}

/// Literals only sqlparser reads (fastvalues leaves their statements to it).
const ODD: &[&str] = &[
    "'a\\'b'", "'\\\\'", "1e5", "DEFAULT", "\"s\"", "0x1F", "- 5", "NOW()",
];

/// A literal fastvalues reads directly.
fn literal(rng: &mut Rng) -> String {
    let text = |rng: &mut Rng| -> String {
        (0..rng.below(12))
            .map(|_| {
                [
                    "a", " ", "''", "é", ";", ",", ")", "(", "-", "0", "\"", "/*!", "`",
                ][rng.below(13) as usize]
            })
            .collect()
    };
    match rng.below(12) {
        0 => "NULL".into(),
        1 => "null".into(),
        2 => format!("-{}", rng.below(1000)),
        3 => format!("{}.{}", rng.below(100), rng.below(100)),
        4 => format!("-{}.{:02}", rng.below(100), rng.below(100)),
        5 => format!("{:04}", rng.below(100)),
        6 | 7 | 8 => format!("'{}'", text(rng)),
        _ => rng.below(1_000_000).to_string(),
    }
}

#[test]
fn fastvalues_rows_equal_what_sqlparser_reads() {
    use crate::stmt::{RowStmt, Stmt};
    let mut rng = Rng::from_env("fastvalues_rows_equal_what_sqlparser_reads");
    let dialect = crate::dialect::StrataDialect::default();
    let mut fast = 0;
    for _ in 0..300 {
        let width = 1 + rng.below(4);
        let mut sql = [
            "INSERT INTO t VALUES ",
            "insert into d.t (a) values",
            "REPLACE INTO t VALUE",
        ][rng.below(3) as usize]
            .to_string();
        let mut first = true;
        let mut rows = 0;
        let odd_at = rng.chance(20).then(|| rng.below(60));
        while sql.len() < crate::fastvalues::MIN_LEN + 64 {
            if !first {
                sql.push_str([",", ", ", ",\n"][rng.below(3) as usize]);
            }
            first = false;
            let mut row: Vec<String> = (0..width).map(|_| literal(&mut rng)).collect();
            // In one statement of five, somewhere, one literal only the
            // ordinary parser reads.
            if odd_at == Some(rows) {
                row[0] = ODD[rng.below(ODD.len() as u64) as usize].into();
            }
            rows += 1;
            sql.push_str(&format!(
                "({})",
                row.join([",", ", "][rng.below(2) as usize])
            ));
        }
        let slow = sqlparser::parser::Parser::parse_sql(&dialect, &sql);
        match super::fastvalues::parse(&sql) {
            Some(Ok(p)) => {
                fast += 1;
                let Stmt::Rows(RowStmt::Insert(a)) = p.stmt else {
                    panic!("not an insert: {sql}")
                };
                let slow = slow.unwrap_or_else(|e| panic!("{e}: {sql}"));
                assert_eq!(
                    sqlparser::ast::Statement::Insert(*a).to_string(),
                    slow[0].to_string(),
                    "{sql}"
                );
            }
            Some(Err(e)) => panic!("{e}: {sql}"),
            None => {
                // Only what it does not read makes it step aside.
                assert!(odd_at.is_some(), "fast path refused {sql}");
            }
        }
    }
    assert!(fast > 100, "{fast} of 300 took the fast path");
}
