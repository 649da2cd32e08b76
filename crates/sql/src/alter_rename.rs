//! MySQL's `ALTER TABLE t ... RENAME new_name` (TO and AS are optional; MariaDB
//! and MySQL take the bare form) rewritten to `RENAME TO new_name`, which
//! sqlparser reads (it takes a bare RENAME for `RENAME [COLUMN] a TO b`); and
//! an ALTER TABLE's table COMMENT option found, to be refused (1235: the
//! comment holds a table's TTL and column families, which ALTER does not change).
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// The tokens (no whitespace) of an ALTER [ONLINE] [IGNORE] TABLE statement
/// with the position of TABLE among them; None for any other statement.
fn alter_table_tokens(sql: &str) -> Option<(Vec<(Token, usize)>, usize)> {
    // Cheap refusal of most statements before tokenizing: ALTER, or a comment
    // (whitespace or a comment may come before ALTER).
    let head = sql.trim_start();
    let alter = head
        .get(..5)
        .is_some_and(|h| h.eq_ignore_ascii_case("ALTER"));
    if !alter && !head.starts_with("/*") && !head.starts_with('#') && !head.starts_with("--") {
        return None;
    }
    let toks: Vec<(Token, usize)> = crate::parse::tokens_at(sql)?
        .into_iter()
        .filter(|(t, _)| !matches!(t, Token::Whitespace(_)))
        .collect();
    if keyword(&toks, 0) != Some(Keyword::ALTER) {
        return None;
    }
    // ALTER [ONLINE] [IGNORE] TABLE
    let table_at = (1..4).find(|&i| keyword(&toks, i) == Some(Keyword::TABLE))?;
    let word = |i: usize| match toks.get(i) {
        Some((Token::Word(w), _)) => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    if (1..table_at).any(|i| !matches!(word(i).as_str(), "ONLINE" | "IGNORE")) {
        return None;
    }
    Some((toks, table_at))
}

/// Token `i`'s keyword when it is an unquoted word.
fn keyword(toks: &[(Token, usize)], i: usize) -> Option<Keyword> {
    match toks.get(i) {
        Some((Token::Word(w), _)) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// True when an ALTER TABLE has a table option COMMENT (`COMMENT [=] '...'`
/// as one of its comma-separated items, not a column's or an index's
/// COMMENT): a table's comment holds its TTL and column-family settings,
/// which ALTER TABLE does not change, so it is refused (1235) rather than
/// read as something else.
pub(crate) fn table_comment(sql: &str) -> bool {
    let Some((toks, table_at)) = alter_table_tokens(sql) else {
        return false;
    };
    // The table name: `t` or `db.t`.
    let mut i = table_at + 2;
    if matches!(toks.get(i), Some((Token::Period, _))) {
        i += 2;
    }
    let (mut depth, mut item_start) = (0usize, true);
    for j in i..toks.len() {
        match &toks[j].0 {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Comma if depth == 0 => {
                item_start = true;
                continue;
            }
            _ => {}
        }
        if item_start && depth == 0 && keyword(&toks, j) == Some(Keyword::COMMENT) {
            return true;
        }
        item_start = false;
    }
    false
}

/// `sql` with ` TO` after each bare table RENAME of an ALTER TABLE; None when
/// it is no ALTER TABLE or needs no change.
pub(crate) fn rewrite(sql: &str) -> Option<String> {
    let (toks, table_at) = alter_table_tokens(sql)?;
    let kw = |i: usize| keyword(&toks, i);
    let mut inserts = Vec::new();
    let mut depth = 0usize;
    for i in table_at + 1..toks.len() {
        match &toks[i].0 {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth != 0 || kw(i) != Some(Keyword::RENAME) {
            continue;
        }
        let named = match &toks.get(i + 1) {
            Some((Token::Word(w), _)) if w.quote_style.is_some() => true,
            Some((Token::Word(w), _)) => !matches!(
                w.keyword,
                Keyword::TO
                    | Keyword::AS
                    | Keyword::COLUMN
                    | Keyword::INDEX
                    | Keyword::KEY
                    | Keyword::CONSTRAINT
            ),
            _ => false,
        };
        // `RENAME a TO b` (no COLUMN) stays a column rename.
        let column = kw(i + 2) == Some(Keyword::TO);
        if named && !column {
            if let Some((_, at)) = toks.get(i + 1) {
                inserts.push(*at);
            }
        }
    }
    if inserts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 3 * inserts.len());
    let mut from = 0;
    for at in inserts {
        out.push_str(&sql[from..at]);
        out.push_str("TO ");
        from = at;
    }
    out.push_str(&sql[from..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{rewrite, table_comment};

    #[test]
    fn table_comment_items_are_found() {
        assert!(table_comment("ALTER TABLE t COMMENT = 'ttl_duration=10;'"));
        assert!(table_comment("alter table d.t add c int, comment 'x'"));
        assert!(table_comment(
            "ALTER ONLINE TABLE `t` ENGINE=STRATA, COMMENT='x'"
        ));
        assert!(!table_comment("ALTER TABLE t ADD c INT COMMENT 'x'"));
        assert!(!table_comment(
            "ALTER TABLE t MODIFY c INT COMMENT 'x', ADD d INT"
        ));
        assert!(!table_comment(
            "ALTER TABLE t ADD INDEX k (c) COMMENT 'cfname=a'"
        ));
        assert!(!table_comment("ALTER TABLE comment ADD c INT"));
        assert!(!table_comment("SELECT 1"));
    }

    #[test]
    fn bare_rename_gets_to() {
        assert_eq!(
            rewrite("ALTER TABLE a RENAME b").as_deref(),
            Some("ALTER TABLE a RENAME TO b")
        );
        assert_eq!(
            rewrite("alter table a add c int, rename `d e`").as_deref(),
            Some("alter table a add c int, rename TO `d e`")
        );
        assert_eq!(
            rewrite("ALTER TABLE a RENAME db.b").as_deref(),
            Some("ALTER TABLE a RENAME TO db.b")
        );
        // Comments before ALTER (clients and dumps send them).
        for (sql, want) in [
            (
                "/* c */ ALTER TABLE a RENAME b",
                "/* c */ ALTER TABLE a RENAME TO b",
            ),
            (
                "-- c\nALTER TABLE a RENAME b",
                "-- c\nALTER TABLE a RENAME TO b",
            ),
            (
                "# c\n alter table a rename b",
                "# c\n alter table a rename TO b",
            ),
        ] {
            assert_eq!(rewrite(sql).as_deref(), Some(want), "{sql}");
        }
        for same in [
            "ALTER TABLE a RENAME TO b",
            "ALTER TABLE a RENAME AS b",
            "ALTER TABLE a RENAME COLUMN x TO y",
            "ALTER TABLE a RENAME x TO y",
            "ALTER TABLE a RENAME INDEX i TO j",
            "ALTER TABLE a RENAME KEY i TO j",
            "ALTER TABLE a COMMENT 'RENAME b'",
            "SELECT 'ALTER TABLE a RENAME b'",
            "ALTER VIEW v AS SELECT 1",
            "/* ALTER TABLE a RENAME b */ SELECT 1",
            "-- ALTER TABLE a RENAME b\nSELECT 1",
        ] {
            assert_eq!(rewrite(same), None, "{same}");
        }
    }
}
