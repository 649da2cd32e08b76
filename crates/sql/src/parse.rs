//! From SQL text to a statement: MySQL's executable comments (`/*! ... */`)
//! are opened, `LOCK IN SHARE MODE` becomes `FOR SHARE`, a few
//! administrative statements sqlparser does not know are recognized
//! directly (PREPARE/EXECUTE/DEALLOCATE in `sqlprep`), `SET @v := x` and
//! `UPDATE t1, t2 SET` and `ALTER TABLE t RENAME u` (`alter_rename`) are rewritten to forms sqlparser reads, and everything
//! else goes to sqlparser's MySQL dialect. The
//! positions of `?` placeholders are recorded so the binder can number
//! them in text order.
use crate::error::{Result, SqlError};
use crate::procs::KillTarget;
use crate::stmt::{self, DdlStmt, MaintStmt, RowStmt, SetStmt, ShowStmt, Stmt, TxnStmt};
use sqlparser::ast;
use sqlparser::parser::Parser;

/// A statement plus the (line, column) of each `?`.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub stmt: Stmt,
    pub params: Vec<(u64, u64)>,
}

/// Parses one statement.
pub fn parse(sql: &str) -> Result<Parsed> {
    let text = preprocess(sql);
    let trimmed = text.trim().trim_end_matches(';').trim();
    if trimmed.is_empty() {
        return Ok(Parsed {
            stmt: Stmt::Empty,
            params: vec![],
        });
    }
    if let Some(stmt) = txn_control(trimmed) {
        return Ok(Parsed {
            stmt,
            params: vec![],
        });
    }
    if let Some(p) = crate::fastvalues::parse(trimmed) {
        return p;
    }
    if let Some(s) = crate::sqlprep::parse(trimmed) {
        return Ok(Parsed {
            stmt: s?,
            params: vec![],
        });
    }
    if let Some(s) = crate::account::parse(trimmed) {
        return Ok(Parsed {
            stmt: s?,
            params: vec![],
        });
    }
    if crate::load::syntax::is_load(trimmed) {
        return Ok(Parsed {
            stmt: Stmt::Load(Box::new(crate::load::syntax::parse(trimmed)?)),
            params: vec![],
        });
    }
    // The words are split (and upper-cased) only for statements whose
    // first word can start one of the forms read from them: not for the
    // SELECTs, INSERTs and UPDATEs that make up a workload.
    let first = words_of(trimmed).next().unwrap_or("");
    let is = |ks: &[&str]| ks.iter().any(|k| first.eq_ignore_ascii_case(k));
    if is(&["CREATE", "ALTER"]) {
        if let Some(p) = view_forms(trimmed) {
            return p;
        }
    }
    if is(&["SHOW", "CHANGE", "START", "STOP", "RESET", "PURGE"]) {
        let ws = words(trimmed);
        if let Some(s) = crate::replsrc::parse(&ws) {
            return Ok(Parsed {
                stmt: s,
                params: vec![],
            });
        }
        if let Some(s) = crate::replica::parse(&ws, trimmed) {
            return Ok(Parsed {
                stmt: s?,
                params: vec![],
            });
        }
        if let Some(s) = crate::binlogsql::parse(&ws, trimmed) {
            return Ok(Parsed {
                stmt: s?,
                params: vec![],
            });
        }
    }
    const ADMIN: &[&str] = &[
        "SET", "LOCK", "ALTER", "SHOW", "KILL", "BACKUP", "CHECK", "ANALYZE", "OPTIMIZE", "FLUSH",
        "START", "REPAIR",
    ];
    if is(ADMIN) {
        if let Some(s) = admin(trimmed)? {
            return Ok(Parsed {
                stmt: s,
                params: vec![],
            });
        }
    }
    if is(&["ALTER"]) && crate::alter_rename::table_comment(trimmed) {
        return Err(SqlError::unsupported(
            "ALTER TABLE ... COMMENT (a table's comment, with its TTL and column families, is set by CREATE TABLE)",
        ));
    }
    if is(&["UPDATE", "DELETE", "SET"]) {
        let ws = words(trimmed);
        // sqlparser would read IGNORE as the table name: `UPDATE IGNORE` becomes its
        // `UPDATE OR IGNORE` below, `DELETE IGNORE` a flag of the DELETE; the other
        // spellings are refused.
        let verb = ws.first().map(|w| w.to_ascii_uppercase());
        if update_ignore(trimmed).is_none()
            && delete_ignore(trimmed).is_none()
            && matches!(verb.as_deref(), Some("UPDATE" | "DELETE"))
            && ws
                .iter()
                .skip(1)
                .take(3)
                .take_while(|w| {
                    ["LOW_PRIORITY", "QUICK", "IGNORE"]
                        .iter()
                        .any(|k| w.eq_ignore_ascii_case(k))
                })
                .any(|w| w.eq_ignore_ascii_case("IGNORE"))
        {
            return Err(SqlError::unsupported(format!(
                "{} IGNORE",
                verb.unwrap_or_default()
            )));
        }
        if ws.len() > 3
            && ws[0].eq_ignore_ascii_case("SET")
            && ws[2].eq_ignore_ascii_case("TRANSACTION")
            && ["GLOBAL", "SESSION", "LOCAL"]
                .iter()
                .any(|k| ws[1].eq_ignore_ascii_case(k))
        {
            let global = ws[1].eq_ignore_ascii_case("GLOBAL");
            let at = trimmed
                .to_ascii_uppercase()
                .find("TRANSACTION")
                .unwrap_or(0);
            let inner = parse(&format!("SET {}", &trimmed[at..]))?;
            if let Stmt::Txn(TxnStmt::Characteristics {
                scope: None,
                modes,
                snapshot,
            }) = inner.stmt
            {
                return Ok(Parsed {
                    stmt: Stmt::Txn(TxnStmt::Characteristics {
                        scope: Some(global),
                        modes,
                        snapshot,
                    }),
                    params: vec![],
                });
            }
        }
    }
    // Rewrites to forms sqlparser reads, before `?` positions are taken.
    let units = interval_units(trimmed);
    let trimmed = units.as_deref().unwrap_or(trimmed);
    let ws_as = weight_string_as(trimmed);
    let trimmed = ws_as.as_deref().unwrap_or(trimmed);
    let ignore = update_ignore(trimmed);
    let trimmed = ignore.as_deref().unwrap_or(trimmed);
    let del_ignore = delete_ignore(trimmed);
    let trimmed = del_ignore.as_deref().unwrap_or(trimmed);
    let rewritten = set_colon_eq(trimmed)
        .or_else(|| update_commas(trimmed))
        .or_else(|| crate::alter_rename::rewrite(trimmed));
    let trimmed = rewritten.as_deref().unwrap_or(trimmed);
    let params = placeholders(trimmed);
    // sqlparser's tree of a SELECT is about a thousand times its text: a 38 MB chain of
    // `SELECT 1 UNION ALL ...` took 24 GB. Bound the SELECTs before parsing.
    let selects = selects(trimmed);
    if selects > MAX_SELECTS {
        return Err(SqlError::unsupported(format!(
            "{selects} SELECTs in one statement (at most {MAX_SELECTS})"
        )));
    }
    let mut stmts =
        Parser::parse_sql(&crate::dialect::StrataDialect::default(), trimmed).map_err(|e| {
            let m = e.to_string();
            let m = m
                .strip_prefix("sql parser error: ")
                .unwrap_or(&m)
                .to_string();
            SqlError::parse(format!("{m} (near '{}')", snippet(trimmed)))
        })?;
    if stmts.is_empty() {
        return Ok(Parsed {
            stmt: Stmt::CommentOnly,
            params,
        });
    }
    if stmts.len() != 1 {
        return Err(SqlError::parse(
            "exactly one statement per query is supported",
        ));
    }
    let mut s = stmts.pop().ok_or_else(|| SqlError::parse("empty"))?;
    crate::depth::bound(&mut s)?;
    let mut stmt = stmt::classify(s)?;
    if let Stmt::Rows(RowStmt::Delete(_, ignore)) = &mut stmt {
        *ignore = del_ignore.is_some();
    }
    Ok(Parsed { stmt, params })
}

/// BEGIN, COMMIT and ROLLBACK (each with an optional WORK), read without
/// sqlparser: a TPC-C client sends two of them per transaction, and a full
/// parse of one cost as much as running a primary-key lookup. The statements
/// are exactly what sqlparser makes of the same text (a test compares them).
fn txn_control(sql: &str) -> Option<Stmt> {
    let mut ws = sql.split_ascii_whitespace();
    let verb = ws.next()?;
    match ws.next() {
        None => {}
        Some(w) if w.eq_ignore_ascii_case("WORK") => {}
        Some(_) => return None,
    }
    if ws.next().is_some() {
        return None;
    }
    let is = |k: &str| verb.eq_ignore_ascii_case(k);
    Some(if is("BEGIN") {
        Stmt::Txn(TxnStmt::Start {
            snapshot: false,
            modes: vec![],
        })
    } else if is("COMMIT") {
        Stmt::Txn(TxnStmt::Commit { chain: false })
    } else if is("ROLLBACK") {
        Stmt::Txn(TxnStmt::Rollback { chain: false })
    } else {
        return None;
    })
}

/// The statement's tokens with the byte offset each starts at.
pub(crate) fn tokens_at(sql: &str) -> Option<Vec<(sqlparser::tokenizer::Token, usize)>> {
    let dialect = crate::dialect::StrataDialect::default();
    let toks = sqlparser::tokenizer::Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .ok()?;
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    toks.into_iter()
        .map(|t| {
            let loc = t.span.start;
            let start = *line_starts.get((loc.line as usize).checked_sub(1)?)?;
            let (off, _) = sql[start..]
                .char_indices()
                .chain(std::iter::once((sql.len() - start, ' ')))
                .nth((loc.column as usize).checked_sub(1)?)?;
            Some((t.token, start + off))
        })
        .collect()
}

/// `UPDATE IGNORE t ...` as sqlparser reads it: `UPDATE OR IGNORE t ...`
/// (None for any other statement).
fn update_ignore(sql: &str) -> Option<String> {
    ignore_after("UPDATE", sql).map(|rest| format!("UPDATE OR IGNORE{rest}"))
}

/// `DELETE IGNORE ...` as `DELETE ...` (the caller marks the statement
/// IGNORE); None for any other statement.
fn delete_ignore(sql: &str) -> Option<String> {
    ignore_after("DELETE", sql).map(|rest| format!("DELETE{rest}"))
}

/// What follows `<verb> IGNORE` (from the whitespace after IGNORE) when
/// `sql` starts so.
fn ignore_after<'s>(verb: &str, sql: &'s str) -> Option<&'s str> {
    let rest = sql
        .get(..verb.len())
        .filter(|h| h.eq_ignore_ascii_case(verb))?;
    let after = &sql[rest.len()..];
    let word = after.trim_start();
    let gap = after.len() - word.len();
    let next = word.get(..6).filter(|w| w.eq_ignore_ascii_case("IGNORE"))?;
    if gap == 0 || !word[next.len()..].starts_with(char::is_whitespace) {
        return None;
    }
    Some(&word[next.len()..])
}

/// `SET @v := expr` is MySQL's other spelling of `SET @v = expr`: the `:=`
/// right after each SET target becomes ` =` (the same length, so `?` positions
/// hold). None when the statement is not a SET or needs no change.
fn set_colon_eq(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::Token;
    let head = sql.get(..3)?;
    if !head.eq_ignore_ascii_case("SET") || !sql.contains(":=") {
        return None;
    }
    let mut out = sql.to_string();
    let (mut depth, mut target, mut changed) = (0i32, false, false);
    for (i, (t, at)) in tokens_at(sql)?.into_iter().enumerate() {
        match t {
            Token::Whitespace(_) => {}
            Token::Word(w) if i == 0 && w.value.eq_ignore_ascii_case("SET") => target = true,
            Token::Word(_) | Token::Period if target => {}
            Token::Assignment if target && depth == 0 => {
                if out.get(at..at + 2) != Some(":=") {
                    return None;
                }
                out.replace_range(at..at + 2, " =");
                changed = true;
                target = false;
            }
            Token::LParen => {
                depth += 1;
                target = false;
            }
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => target = true,
            _ => target = false,
        }
    }
    changed.then_some(out)
}

/// MySQL's compound INTERVAL units (`'1 2' DAY_HOUR`) become the standard's
/// `DAY TO HOUR`, which sqlparser reads (the binder maps it back);
/// SECOND_MICROSECOND becomes `MICROSECOND TO SECOND`.
fn interval_units(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::Token;
    const UNITS: [&str; 11] = [
        "YEAR_MONTH",
        "DAY_HOUR",
        "DAY_MINUTE",
        "DAY_SECOND",
        "DAY_MICROSECOND",
        "HOUR_MINUTE",
        "HOUR_SECOND",
        "HOUR_MICROSECOND",
        "MINUTE_SECOND",
        "MINUTE_MICROSECOND",
        "SECOND_MICROSECOND",
    ];
    let up = sql.to_ascii_uppercase();
    if !UNITS.iter().any(|u| up.contains(u)) {
        return None;
    }
    let mut hits = Vec::new();
    for (t, at) in tokens_at(sql)? {
        if let Token::Word(w) = t {
            let u = w.value.to_ascii_uppercase();
            if w.quote_style.is_none() && UNITS.contains(&u.as_str()) {
                // sqlparser reads no `SECOND TO ...`: the binder maps the
                // reversed pair back.
                let with = if u == "SECOND_MICROSECOND" {
                    "MICROSECOND TO SECOND".to_string()
                } else {
                    u.replacen('_', " TO ", 1)
                };
                hits.push((at, w.value.len(), with));
            }
        }
    }
    if hits.is_empty() {
        return None;
    }
    let mut out = sql.to_string();
    for (at, len, with) in hits.into_iter().rev() {
        out.replace_range(at..at + len, &with);
    }
    Some(out)
}

/// `WEIGHT_STRING(x AS CHAR(n))` / `AS BINARY(n)` becomes
/// `WEIGHT_STRING(x, 'CHAR', n)`, which sqlparser reads (the binder checks
/// the form). None when there is nothing to rewrite.
fn weight_string_as(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::Token;
    if !sql.to_ascii_uppercase().contains("WEIGHT_STRING") {
        return None;
    }
    let toks: Vec<(Token, usize)> = tokens_at(sql)?
        .into_iter()
        .filter(|(t, _)| !matches!(t, Token::Whitespace(_)))
        .collect();
    let word = |i: usize, w: &str| {
        matches!(toks.get(i), Some((Token::Word(x), _))
            if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    };
    let (mut depth, mut calls, mut hits) = (0usize, Vec::new(), Vec::new());
    for i in 0..toks.len() {
        match &toks[i].0 {
            Token::LParen => {
                depth += 1;
                if i > 0 && word(i - 1, "WEIGHT_STRING") {
                    calls.push(depth);
                }
            }
            Token::RParen => {
                if calls.last() == Some(&depth) {
                    calls.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Word(_) if calls.last() == Some(&depth) && word(i, "AS") => {
                let kind = if word(i + 1, "CHAR") {
                    "CHAR"
                } else if word(i + 1, "BINARY") {
                    "BINARY"
                } else {
                    continue;
                };
                if let (
                    Some((Token::LParen, _)),
                    Some((Token::Number(n, false), _)),
                    Some((Token::RParen, end)),
                    Some((Token::RParen, _)),
                ) = (
                    toks.get(i + 2),
                    toks.get(i + 3),
                    toks.get(i + 4),
                    toks.get(i + 5),
                ) {
                    // AS CHAR(0) is a syntax error in MariaDB: left to the parser.
                    if n.parse::<u64>().map_or(true, |n| n == 0) {
                        continue;
                    }
                    hits.push((toks[i].1, end + 1, format!(", '{kind}', {n}")));
                }
            }
            _ => {}
        }
    }
    if hits.is_empty() {
        return None;
    }
    let mut out = sql.to_string();
    for (from, to, with) in hits.into_iter().rev() {
        out.replace_range(from..to, &with);
    }
    Some(out)
}

/// `UPDATE t1, t2 SET ...` (MySQL's multi-table UPDATE with a comma join):
/// the commas before SET become CROSS JOIN, which sqlparser reads. None when
/// the statement is not such an UPDATE.
fn update_commas(sql: &str) -> Option<String> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let head = sql.get(..6)?;
    if !head.eq_ignore_ascii_case("UPDATE") || !sql.contains(',') {
        return None;
    }
    let mut commas = Vec::new();
    let mut depth = 0i32;
    for (t, at) in tokens_at(sql)? {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w)
                if depth == 0 && w.quote_style.is_none() && w.keyword == Keyword::SET =>
            {
                break
            }
            Token::Comma if depth == 0 => commas.push(at),
            _ => {}
        }
    }
    if commas.is_empty() {
        return None;
    }
    let mut out = sql.to_string();
    for at in commas.into_iter().rev() {
        if out.get(at..at + 1) != Some(",") {
            return None;
        }
        out.replace_range(at..at + 1, " CROSS JOIN ");
    }
    Some(out)
}

fn snippet(s: &str) -> String {
    s.chars().take(80).collect()
}

/// The server version `/*!NNNNN ... */` comments are compared with: their
/// text runs when NNNNN is at most this (MySQL 8.0.35).
pub const COMMENT_VERSION: u64 = 80035;

/// Opens `/*! ... */` and `/*!NNNNN ... */` comments (those for a later
/// version stay comments; MariaDB's `/*M!...*/` are comments, as in MySQL),
/// drops other comments' markers only where sqlparser would choke, and
/// rewrites `LOCK IN SHARE MODE`.
pub fn preprocess(sql: &str) -> String {
    let b = sql.as_bytes();
    // No `/*!` anywhere (quoted or not): nothing to open, so no walk over the
    // quotes of a 512 KiB INSERT.
    if memchr::memmem::find(b, b"/*!").is_none() {
        return rewrite_share_mode(sql.to_string());
    }
    preprocess_walk(sql)
}

/// `preprocess` the long way: a walk over every byte.
pub(crate) fn preprocess_walk(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i = skip_quoted(b, i, q);
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) == Some(&b'!') => {
                out.push_str(&sql[last..i]);
                let mut j = i + 3;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let later = sql[i + 3..j]
                    .parse::<u64>()
                    .is_ok_and(|v| v > COMMENT_VERSION);
                // Find the closing */ (not inside quotes).
                let mut k = j;
                let mut end = b.len();
                while k + 1 < b.len() {
                    match b[k] {
                        q @ (b'\'' | b'"' | b'`') => {
                            k = skip_quoted(b, k, q);
                            continue;
                        }
                        b'*' if b[k + 1] == b'/' => {
                            end = k;
                            break;
                        }
                        _ => k += 1,
                    }
                }
                out.push(' ');
                if !later {
                    out.push_str(&sql[j..end]);
                }
                out.push(' ');
                i = (end + 2).min(b.len());
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[last.min(sql.len())..]);
    rewrite_share_mode(out)
}

fn skip_quoted(b: &[u8], start: usize, q: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        // Straight to the next byte that matters (long string literals).
        match b[i..]
            .iter()
            .position(|&c| c == q || (c == b'\\' && q != b'`'))
        {
            Some(p) => i += p,
            None => return b.len(),
        }
        if b[i] == b'\\' && q != b'`' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

fn rewrite_share_mode(mut s: String) -> String {
    // Only the end is looked at (no upper-cased copy of a 512 KiB INSERT).
    const TAIL: &str = "LOCK IN SHARE MODE";
    let t = s.trim_end().trim_end_matches(';').trim_end();
    let n = t.len();
    if n >= TAIL.len() && t.as_bytes()[n - TAIL.len()..].eq_ignore_ascii_case(TAIL.as_bytes()) {
        s.truncate(n - TAIL.len());
        s.push_str(" FOR SHARE");
    }
    s
}

/// (line, column) of each `?` outside quotes and comments, as sqlparser
/// numbers them (1-based, columns in characters).
/// Most SELECT keywords one statement may hold (UNION terms, subqueries).
pub const MAX_SELECTS: usize = 4000;

/// Occurrences of the word SELECT (also inside literals: an over-count only refuses
/// sooner).
fn selects(s: &str) -> usize {
    let b = s.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    (0..b.len().saturating_sub(5))
        .filter(|&i| {
            b[i..i + 6].eq_ignore_ascii_case(b"SELECT")
                && (i == 0 || !word(b[i - 1]))
                && b.get(i + 6).is_none_or(|&c| !word(c))
        })
        .count()
}

fn placeholders(s: &str) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let (mut line, mut col) = (1u64, 1u64);
    let mut i = 0;
    let mut quote: Option<char> = None;
    let mut block = false;
    let mut line_comment = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if line_comment {
            if c == '\n' {
                line_comment = false;
            }
        } else if block {
            if c == '*' && next == Some('/') {
                block = false;
                i += 1;
                col += 1;
            }
        } else if let Some(q) = quote {
            if c == '\\' && q != '`' {
                i += 1;
                col += 1;
            } else if c == q {
                if next == Some(q) {
                    i += 1;
                    col += 1;
                } else {
                    quote = None;
                }
            }
        } else {
            match c {
                '\'' | '"' | '`' => quote = Some(c),
                '#' => line_comment = true,
                '-' if next == Some('-') => line_comment = true,
                '/' if next == Some('*') => block = true,
                '?' => out.push((line, col)),
                _ => {}
            }
        }
        if chars.get(i) == Some(&'\n') {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
        i += 1;
    }
    out
}

/// CREATE/ALTER VIEW forms sqlparser does not read: `ALTER [ALGORITHM=..]
/// [DEFINER=..] [SQL SECURITY ..] VIEW` is parsed as the CREATE it mirrors
/// and marked ALTER; `WITH [CASCADED | LOCAL] CHECK OPTION` is cut off and
/// kept in the statement.
fn view_forms(sql: &str) -> Option<Result<Parsed>> {
    let ws = words(sql);
    let verb = ws.first()?.to_ascii_uppercase();
    if verb != "CREATE" && verb != "ALTER" {
        return None;
    }
    let at = ws
        .iter()
        .take(12)
        .position(|w| w.eq_ignore_ascii_case("VIEW"))?;
    const OTHER: [&str; 9] = [
        "TABLE",
        "DATABASE",
        "SCHEMA",
        "INDEX",
        "PROCEDURE",
        "FUNCTION",
        "TRIGGER",
        "EVENT",
        "USER",
    ];
    if ws[1..at]
        .iter()
        .any(|w| OTHER.iter().any(|o| w.eq_ignore_ascii_case(o)))
    {
        return None;
    }
    let n = ws.len();
    let with_check = n > 3
        && ws[n - 1].eq_ignore_ascii_case("OPTION")
        && ws[n - 2].eq_ignore_ascii_case("CHECK");
    let alter_form = verb == "ALTER" && at > 1;
    if !with_check && !alter_form {
        return None;
    }
    // `WITH [CASCADED | LOCAL] CHECK OPTION` ends the statement: cut it
    // off (sqlparser does not read it) and keep what it says.
    let (body, check) = if with_check {
        let trimmed = sql.trim_end().trim_end_matches(';').trim_end();
        let upper = trimmed.to_ascii_uppercase();
        let at = upper.rfind("WITH")?;
        let tail: Vec<&str> = upper[at..].split_whitespace().collect();
        let check = match tail.as_slice() {
            ["WITH", "CHECK", "OPTION"] | ["WITH", "CASCADED", "CHECK", "OPTION"] => {
                rel::view::CheckOption::Cascaded
            }
            ["WITH", "LOCAL", "CHECK", "OPTION"] => rel::view::CheckOption::Local,
            _ => return None,
        };
        (trimmed[..at].to_string(), check)
    } else {
        (sql.to_string(), rel::view::CheckOption::None)
    };
    let text = if alter_form {
        format!("CREATE{}", body.get(5..)?)
    } else {
        body
    };
    Some(parse(&text).map(|mut p| {
        if let Stmt::Ddl(stmt::DdlStmt::CreateView {
            alter, check: c, ..
        }) = &mut p.stmt
        {
            *alter = *alter || alter_form;
            *c = check;
        }
        p
    }))
}

fn words_of(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
}

fn words(s: &str) -> Vec<String> {
    words_of(s).map(|w| w.to_string()).collect()
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '`' || c == '\'' || c == '"')
        .to_string()
}

fn table_name(w: &str) -> (Option<String>, String) {
    match w.split_once('.') {
        Some((d, t)) => (Some(unquote(d)), unquote(t)),
        None => (None, unquote(w)),
    }
}

fn like_arg(ws: &[String], at: usize) -> Option<String> {
    if ws.get(at).is_some_and(|w| w.eq_ignore_ascii_case("LIKE")) {
        ws.get(at + 1).map(|w| unquote(w))
    } else {
        None
    }
}

/// `ALTER {DATABASE | SCHEMA} [name] {[DEFAULT] {CHARACTER SET | CHARSET | COLLATE} [=] x}...`
/// (`ws`: the words after DATABASE; sqlparser lacks MySQL's form).
fn alter_database(ws: &[String]) -> Result<Stmt> {
    let ws: Vec<&str> = ws
        .iter()
        .flat_map(|w| w.split('='))
        .filter(|w| !w.is_empty())
        .collect();
    let is_kw = |w: &str| {
        ["DEFAULT", "CHARACTER", "CHARSET", "COLLATE"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(w))
    };
    let mut i = 0;
    let name = match ws.first() {
        Some(w) if !is_kw(w) => {
            i = 1;
            Some(unquote(w))
        }
        _ => None,
    };
    let (mut charset, mut collate) = (None, None);
    while i < ws.len() {
        if ws[i].eq_ignore_ascii_case("DEFAULT") {
            i += 1;
        }
        let kw = ws.get(i).map(|w| w.to_ascii_uppercase());
        let (slot, skip) = match kw.as_deref() {
            Some("CHARACTER") if ws.get(i + 1).is_some_and(|w| w.eq_ignore_ascii_case("SET")) => {
                (&mut charset, 2)
            }
            Some("CHARSET") => (&mut charset, 1),
            Some("COLLATE") => (&mut collate, 1),
            Some(w) => return Err(SqlError::unsupported(format!("ALTER DATABASE ... {w}"))),
            None => return Err(SqlError::parse("ALTER DATABASE: option expected")),
        };
        let Some(v) = ws.get(i + skip) else {
            return Err(SqlError::parse("ALTER DATABASE: value expected"));
        };
        *slot = Some(unquote(v));
        i += skip + 1;
    }
    if charset.is_none() && collate.is_none() {
        return Err(SqlError::parse(
            "ALTER DATABASE: CHARACTER SET or COLLATE expected",
        ));
    }
    Ok(Stmt::Ddl(DdlStmt::AlterDatabase {
        name,
        charset,
        collate,
    }))
}

/// KILL [HARD | SOFT] [CONNECTION | QUERY [ID]] id / KILL ... USER name
/// (MariaDB's forms; the id a number or CONNECTION_ID()).
fn kill(ws: &[String], u: &[&str]) -> Result<Stmt> {
    let u = match u.first() {
        Some(&"HARD") => &u[1..],
        Some(&"SOFT") => return Err(SqlError::unsupported("KILL SOFT")),
        _ => u,
    };
    let ws = &ws[ws.len() - u.len()..];
    let (connection, query_id, rest, wrest) = match u {
        ["CONNECTION", r @ ..] => (true, false, r, &ws[1..]),
        ["QUERY", "ID", r @ ..] => (false, true, r, &ws[2..]),
        ["QUERY", r @ ..] => (false, false, r, &ws[1..]),
        r => (true, false, r, ws),
    };
    let bad = || SqlError::parse(format!("near '{}' at KILL", wrest.join(" ")));
    let target = match rest {
        ["USER", _] if !query_id => {
            let name = unquote(&wrest[1]);
            let name = name.split('@').next().unwrap_or("").trim_matches('\'');
            KillTarget::User(unquote(name))
        }
        [n] => {
            let id = if *n == "CONNECTION_ID()" {
                None
            } else {
                Some(n.parse::<u64>().map_err(|_| bad())?)
            };
            match (query_id, id) {
                (true, Some(q)) => KillTarget::QueryId(q),
                (false, Some(t)) => KillTarget::Thread(t),
                (_, None) => KillTarget::Own,
            }
        }
        _ => return Err(bad()),
    };
    Ok(Stmt::Maint(MaintStmt::Kill { connection, target }))
}

/// Statements recognized without sqlparser (their first words: `ADMIN`).
fn admin(s: &str) -> Result<Option<Stmt>> {
    let ws = words(s);
    let up: Vec<String> = ws.iter().map(|w| w.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|w| w.as_str()).collect();
    Ok(match u.as_slice() {
        ["SET", "NAMES", cs, rest @ ..] => Some(Stmt::Set(SetStmt::Names {
            charset: unquote(cs).to_ascii_lowercase(),
            collate: match rest {
                ["COLLATE", ..] => ws.get(4).map(|c| unquote(c).to_ascii_lowercase()),
                _ => None,
            },
        })),
        ["SET", "CHARACTER", "SET", cs, ..] | ["SET", "CHARSET", cs, ..] => Some(Stmt::Set(
            SetStmt::CharacterSet(unquote(cs).to_ascii_lowercase()),
        )),
        // sqlparser's LOCK TABLES takes no `db.table`; mysqldump and MySQL do.
        ["LOCK", "TABLE" | "TABLES", _, rest @ ..]
            if rest
                .iter()
                .any(|w| w.starts_with("READ") || w.starts_with("WRITE")) =>
        {
            Some(Stmt::Maint(MaintStmt::LockTables))
        }
        // MariaDB's null rebuild (sqlparser does not know FORCE): the rows
        // are copied, as ALGORITHM=COPY does.
        ["ALTER", "TABLE", _, "FORCE"] => {
            Some(parse(&format!("ALTER TABLE {} ALGORITHM=COPY", ws[2]))?.stmt)
        }
        ["ALTER", "TABLE", _, "DISABLE" | "ENABLE", "KEYS"] => {
            let (db, table) = table_name(&ws[2]);
            Some(Stmt::Maint(MaintStmt::Keys { db, table }))
        }
        ["SHOW", "WARNINGS", ..] => Some(Stmt::Show(ShowStmt::Warnings)),
        ["SHOW", "ERRORS", ..] => Some(Stmt::Show(ShowStmt::Errors)),
        ["SHOW", "GLOBAL" | "SESSION" | "LOCAL", "STATUS", "WHERE", ..]
        | ["SHOW", "STATUS", "WHERE", ..] => {
            return Err(SqlError::unsupported("SHOW STATUS WHERE"))
        }
        ["SHOW", scope @ ("GLOBAL" | "SESSION" | "LOCAL"), "STATUS", ..] => {
            Some(Stmt::Show(ShowStmt::Status {
                like: like_arg(&ws, 3),
                global: *scope == "GLOBAL",
            }))
        }
        ["SHOW", "STATUS", ..] => Some(Stmt::Show(ShowStmt::Status {
            like: like_arg(&ws, 2),
            global: false,
        })),
        ["SHOW", "INDEX" | "INDEXES" | "KEYS", "FROM" | "IN", t, rest @ ..] => {
            let (db, table) = table_name(&ws[3]);
            let _ = t;
            let db = match rest {
                ["FROM" | "IN", _, ..] => Some(unquote(&ws[5])),
                _ => db,
            };
            Some(Stmt::Show(ShowStmt::Index { table, db }))
        }
        ["SHOW", "ENGINES", ..] | ["SHOW", "STORAGE", "ENGINES", ..] => {
            Some(Stmt::Show(ShowStmt::Engines))
        }
        ["SHOW", "ENGINE", _, "STATUS"] => {
            Some(Stmt::Show(ShowStmt::EngineStatus(unquote(&ws[2]))))
        }
        ["SHOW", "COLLATION", rest @ ..]
        | ["SHOW", "CHARSET", rest @ ..]
        | ["SHOW", "CHARACTER", "SET", rest @ ..] => {
            if rest.first() == Some(&"WHERE") {
                return Err(SqlError::unsupported(
                    "SHOW COLLATION/CHARACTER SET ... WHERE",
                ));
            }
            let like = like_arg(&ws, ws.len() - rest.len());
            Some(Stmt::Show(if u[1] == "COLLATION" {
                ShowStmt::Collation { like }
            } else {
                ShowStmt::Charset { like }
            }))
        }
        ["SHOW", "TABLE", "STATUS", ..] => {
            let at = ws.iter().position(|w| w.eq_ignore_ascii_case("LIKE"));
            Some(Stmt::Show(ShowStmt::TableStatus {
                like: at.and_then(|a| like_arg(&ws, a)),
            }))
        }
        ["SHOW", "PROCESSLIST", ..] => Some(Stmt::Show(ShowStmt::ProcessList { full: false })),
        ["SHOW", "FULL", "PROCESSLIST", ..] => {
            Some(Stmt::Show(ShowStmt::ProcessList { full: true }))
        }
        ["KILL", ..] => Some(kill(&ws[1..], &u[1..])?),
        ["BACKUP", ..] => Some(crate::backup::parse(s)?),
        ["SHOW", "GRANTS", ..] => Some(Stmt::Show(ShowStmt::Grants)),
        ["ALTER", "DATABASE" | "SCHEMA", ..] => Some(alter_database(&ws[2..])?),
        ["SHOW", "CREATE", "DATABASE" | "SCHEMA", rest @ ..] => rest
            .last()
            .map(|_| Stmt::Show(ShowStmt::CreateDatabase(unquote(&ws[ws.len() - 1])))),
        ["CHECK", "TABLE", ..] => Some(Stmt::Maint(MaintStmt::Check(
            ws[2..]
                .iter()
                .filter(|w| !is_check_option(w))
                .map(|w| table_name(w))
                .collect(),
        ))),
        ["ANALYZE", "TABLE", ..]
        | ["ANALYZE", "NO_WRITE_TO_BINLOG", "TABLE", ..]
        | ["ANALYZE", "LOCAL", "TABLE", ..] => {
            let at = up.iter().position(|w| w == "TABLE").unwrap_or(1) + 1;
            Some(Stmt::Maint(MaintStmt::Analyze(
                ws[at..].iter().map(|w| table_name(w)).collect(),
            )))
        }
        ["OPTIMIZE", "TABLE", ..]
        | ["OPTIMIZE", "NO_WRITE_TO_BINLOG", "TABLE", ..]
        | ["OPTIMIZE", "LOCAL", "TABLE", ..] => {
            let at = up.iter().position(|w| w == "TABLE").unwrap_or(1) + 1;
            if ws.len() <= at {
                return Err(SqlError::parse("near '' at OPTIMIZE TABLE"));
            }
            Some(Stmt::Maint(MaintStmt::Optimize(
                ws[at..].iter().map(|w| table_name(w)).collect(),
            )))
        }
        ["REPAIR", "TABLE", ..]
        | ["REPAIR", "NO_WRITE_TO_BINLOG", "TABLE", ..]
        | ["REPAIR", "LOCAL", "TABLE", ..] => {
            let at = up.iter().position(|w| w == "TABLE").unwrap_or(1) + 1;
            let names: Vec<_> = ws[at..]
                .iter()
                .zip(&up[at..])
                .filter(|(_, u)| !matches!(u.as_str(), "QUICK" | "EXTENDED" | "USE_FRM"))
                .map(|(w, _)| table_name(w))
                .collect();
            if names.is_empty() {
                return Err(SqlError::parse("near '' at REPAIR TABLE"));
            }
            Some(Stmt::Maint(MaintStmt::Repair(names)))
        }
        ["FLUSH", rest @ ..] => Some(Stmt::Maint(MaintStmt::Flush(rest.join(" ")))),
        ["START", "TRANSACTION", "WITH", "CONSISTENT", "SNAPSHOT", rest @ ..] => {
            let access = match rest {
                [] => None,
                ["READ", "ONLY"] => Some(ast::TransactionAccessMode::ReadOnly),
                ["READ", "WRITE"] => Some(ast::TransactionAccessMode::ReadWrite),
                // Refused below (sqlparser does not know this form).
                _ => return Err(SqlError::unsupported("this START TRANSACTION form")),
            };
            Some(Stmt::Txn(TxnStmt::Start {
                snapshot: true,
                modes: access
                    .map(ast::TransactionMode::AccessMode)
                    .into_iter()
                    .collect(),
            }))
        }
        _ => None,
    })
}

fn is_check_option(w: &str) -> bool {
    matches!(
        w.to_ascii_uppercase().as_str(),
        "FOR" | "UPGRADE" | "QUICK" | "FAST" | "MEDIUM" | "EXTENDED" | "CHANGED"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_control_read_without_sqlparser_as_sqlparser_reads_it() {
        for text in [
            "BEGIN",
            "begin",
            "BEGIN WORK",
            "Begin work",
            "COMMIT",
            "commit",
            "COMMIT WORK",
            "ROLLBACK",
            "rollback",
            "ROLLBACK WORK",
            "COMMIT\n WORK",
        ] {
            let fast = txn_control(text).unwrap_or_else(|| panic!("{text}: not read"));
            let stmts =
                Parser::parse_sql(&crate::dialect::StrataDialect::default(), text).expect(text);
            let slow = stmt::classify(stmts.into_iter().next().expect(text)).expect(text);
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{text}");
            assert_eq!(
                format!("{:?}", parse(&format!(" {text} ;")).expect(text).stmt),
                format!("{slow:?}")
            );
        }
        // Everything else goes the ordinary way.
        for text in [
            "BEGIN WORK NOW",
            "COMMIT AND CHAIN",
            "ROLLBACK TO s1",
            "COMMIT WORK RELEASE",
            "BEGINNING",
            "START TRANSACTION",
            "ROLLBACK WORK AND NO CHAIN",
            "WORK",
        ] {
            assert!(txn_control(text).is_none(), "{text}");
        }
        assert!(matches!(
            parse("COMMIT AND CHAIN").map(|p| p.stmt),
            Ok(Stmt::Txn(TxnStmt::Commit { chain: true }))
        ));
    }

    #[test]
    fn executable_comments_and_share_mode() {
        assert_eq!(
            preprocess("CREATE TABLE t (a int) /*! ENGINE = rocksdb */").trim_end(),
            "CREATE TABLE t (a int)   ENGINE = rocksdb"
        );
        assert!(preprocess("select '/*!x*/' ").contains("'/*!x*/'"));
        assert!(preprocess("SELECT 1 /*!50100 , 2 */").contains(", 2"));
        assert!(!preprocess("SELECT 1 /*!90000 , 2 */").contains(", 2"));
        assert!(!preprocess("SELECT 1 /*!100616 , 2 */").contains(", 2"));
        assert!(matches!(
            parse("/*M!100616 SET @OLD_NOTE_VERBOSITY=@@NOTE_VERBOSITY */").map(|p| p.stmt),
            Ok(Stmt::CommentOnly)
        ));
        assert!(preprocess("select c from t where id=1 lock in share mode").ends_with("FOR SHARE"));
    }

    #[test]
    fn selects_are_counted_as_words() {
        assert_eq!(selects("SELECT 1 UNION select 2"), 2);
        assert_eq!(selects("SELECT selected, my_select FROM t"), 1);
        assert_eq!(selects("select"), 1);
        let many = vec!["SELECT 1"; MAX_SELECTS + 1].join(" UNION ALL ");
        assert_eq!(parse(&many).map(|_| ()).unwrap_err().code, 1235);
    }

    #[test]
    fn placeholders_skip_strings_and_comments() {
        let p = placeholders("select '?', `?` , ? -- ?\n, ? /* ? */");
        assert_eq!(p, vec![(1, 19), (2, 3)]);
    }

    #[test]
    fn parses_sysbench_statements() {
        for q in [
            "SELECT c FROM sbtest1 WHERE id=?",
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
            "UPDATE sbtest1 SET k=k+1 WHERE id=?",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
            "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = rocksdb */",
            "SHOW STATUS LIKE 'x%'",
            "CHECK TABLE sbtest1, sbtest2",
            "  ",
        ] {
            parse(q).unwrap();
        }
        assert!(
            matches!(parse("SET NAMES utf8mb4").unwrap().stmt, Stmt::Set(SetStmt::Names { ref charset, collate: None }) if charset == "utf8mb4")
        );
        assert_eq!(parse("SELECT ? + ?").unwrap().params.len(), 2);
        assert_eq!(parse("selec 1").unwrap_err().code, 1064);
    }
}
