//! QUERY events inside an open row-format transaction: MariaDB logs
//! SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT there as statements. This
//! module recognises those (the only statements the applier honours inside
//! a transaction); anything else is refused, never run as DDL mid-txn.

/// A savepoint statement logged inside a transaction.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inner {
    Savepoint(String),
    RollbackTo(String),
    Release(String),
}

/// A savepoint name: `quoted` (`` doubled) or bare.
fn name(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some(q) = s.strip_prefix('`') {
        let body = q.strip_suffix('`')?;
        return Some(body.replace("``", "`"));
    }
    (!s.is_empty() && !s.contains(char::is_whitespace)).then(|| s.to_string())
}

/// Strips a case-insensitive keyword followed by whitespace.
fn kw<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let head = s.get(..word.len())?;
    let rest = &s[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

/// The savepoint statement `stmt` is, if it is one.
pub(crate) fn parse(stmt: &str) -> Option<Inner> {
    let s = stmt.trim().trim_end_matches(';').trim_end();
    if let Some(r) = kw(s, "SAVEPOINT") {
        return name(r).map(Inner::Savepoint);
    }
    if let Some(r) = kw(s, "ROLLBACK").and_then(|r| kw(r, "TO")) {
        let r = kw(r, "SAVEPOINT").unwrap_or(r);
        return name(r).map(Inner::RollbackTo);
    }
    if let Some(r) = kw(s, "RELEASE").and_then(|r| kw(r, "SAVEPOINT")) {
        return name(r).map(Inner::Release);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn savepoint_statements_as_mariadb_logs_them() {
        assert_eq!(parse("SAVEPOINT `a`"), Some(Inner::Savepoint("a".into())));
        assert_eq!(
            parse("ROLLBACK TO `a`"),
            Some(Inner::RollbackTo("a".into()))
        );
        assert_eq!(
            parse("rollback to savepoint `x``y`"),
            Some(Inner::RollbackTo("x`y".into()))
        );
        assert_eq!(
            parse("RELEASE SAVEPOINT b"),
            Some(Inner::Release("b".into()))
        );
        assert_eq!(parse("INSERT INTO t VALUES (1)"), None);
        assert_eq!(parse("SAVEPOINTS"), None);
    }
}
