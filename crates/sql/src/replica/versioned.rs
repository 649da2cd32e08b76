//! MariaDB's executable comments in a replicated QUERY event's text, read
//! as the MariaDB source reads them (its lexer, sql_lex.cc), before the
//! applier classifies and runs the statement: Strata's own parser follows
//! MySQL 8.0's rules (`crate::parse::preprocess`), which differ.
//!
//! `/*!` or `/*M!`, then exactly five digits (six when a sixth follows)
//! give a version V: the comment's content is part of the statement when
//! V is at most the source's version and (V < 50700, V > 99999, or the
//! comment is `/*M!`); otherwise the whole comment is discarded (MySQL
//! 5.7's `/*!50700 ... */` to `/*!99999 ... */` are ignored by MariaDB).
//! Without the digits the content is always part of the statement. A
//! discarded comment may hold one plain `/* */` comment; inside a comment
//! whose content is kept, a nested comment is discarded whole and the next
//! `*/` closes the versioned one. Quoted strings and identifiers (with
//! backslash escapes unless NO_BACKSLASH_ESCAPES) and `--`/`#` line
//! comments are passed over.
//!
//! The result has no executable comment left (kept content is unwrapped,
//! the markers become spaces; discarded comments become one space), so
//! Strata's parser sees exactly what MariaDB executed.

/// MariaDB's version id (`10.11.19-MariaDB-log` is 101119) from an FDE's
/// server version; None for a source that is not MariaDB.
pub(crate) fn mariadb_version(server_version: &str) -> Option<u64> {
    if !server_version.contains("MariaDB") {
        return None;
    }
    let mut parts = server_version
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|p| p.parse::<u64>().ok());
    let (a, b, c) = (parts.next()??, parts.next()??, parts.next()??);
    Some(a * 10_000 + b.min(99) * 100 + c.min(99))
}

/// `sql` as MariaDB `version` executes it (`None`: the text holds no
/// executable comment, nothing to change).
pub(crate) fn expand(sql: &[u8], version: u64, backslash_escapes: bool) -> Option<Vec<u8>> {
    if !sql.windows(3).any(|w| w == b"/*!" || w == b"/*M") {
        return None;
    }
    let mut out = Vec::with_capacity(sql.len());
    let mut i = 0;
    // Inside a versioned comment whose content is kept.
    let mut open = false;
    while i < sql.len() {
        let rest = &sql[i..];
        match rest[0] {
            q @ (b'\'' | b'"' | b'`') => {
                let end = i + quoted_len(rest, q, backslash_escapes && q != b'`');
                out.extend_from_slice(&sql[i..end]);
                i = end;
            }
            b'#' => i = line_comment(sql, i, &mut out),
            b'-' if rest.starts_with(b"--")
                && rest
                    .get(2)
                    .is_none_or(|c| c.is_ascii_whitespace() || *c < 32) =>
            {
                i = line_comment(sql, i, &mut out)
            }
            b'*' if open && rest.starts_with(b"*/") => {
                out.push(b' ');
                open = false;
                i += 2;
            }
            b'/' if rest.starts_with(b"/*") => {
                let marker = match rest.get(2) {
                    Some(b'!') => Some(3),
                    Some(b'M') if rest.get(3) == Some(&b'!') => Some(4),
                    _ => None,
                };
                let Some(m) = marker.filter(|_| !open) else {
                    // A plain comment (or one inside a kept versioned
                    // comment): passed over whole.
                    let end = comment_end(sql, i + 2, 0);
                    out.extend_from_slice(&sql[i..end]);
                    i = end;
                    continue;
                };
                let digits = rest[m..].iter().take_while(|c| c.is_ascii_digit()).count();
                out.push(b' ');
                if digits < 5 {
                    // Not a version: the content is always kept.
                    open = true;
                    i += m;
                    continue;
                }
                let n = digits.min(6);
                let v = rest[m..m + n]
                    .iter()
                    .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
                if v <= version && (!(50700..=99999).contains(&v) || m == 4) {
                    open = true;
                    i += m + n;
                } else {
                    i = comment_end(sql, i + m, 1);
                }
            }
            _ => {
                out.push(rest[0]);
                i += 1;
            }
        }
    }
    Some(out)
}

/// The length of the quoted span at the start of `s` (to its end if it is
/// not closed).
fn quoted_len(s: &[u8], q: u8, escapes: bool) -> usize {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' if escapes => i += 2,
            c if c == q && s.get(i + 1) == Some(&q) => i += 2,
            c if c == q => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// Copies a line comment starting at `i` (to the end of the line); where
/// it ends.
fn line_comment(sql: &[u8], i: usize, out: &mut Vec<u8>) -> usize {
    let end = sql[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(sql.len(), |p| i + p);
    out.extend_from_slice(&sql[i..end]);
    end
}

/// Where the comment whose body starts at `from` ends (after its `*/`;
/// the end of the text if it is not closed), allowing `nest` levels of
/// `/* */` inside.
fn comment_end(sql: &[u8], from: usize, nest: usize) -> usize {
    let mut depth = 0;
    let mut i = from;
    while i + 1 < sql.len() {
        match (sql[i], sql[i + 1]) {
            (b'*', b'/') if depth == 0 => return i + 2,
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
            }
            (b'/', b'*') if depth < nest => {
                depth += 1;
                i += 2;
            }
            _ => i += 1,
        }
    }
    sql.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sql: &str, version: u64) -> String {
        let out = expand(sql.as_bytes(), version, true).unwrap_or_else(|| sql.as_bytes().to_vec());
        String::from_utf8(out)
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn mariadb_rules() {
        const V: u64 = 101119;
        // MariaDB-only comments up to the source's version run.
        assert_eq!(run("/*M!100100 DELETE FROM t */", V), "DELETE FROM t");
        assert_eq!(run("/*M!110000 DELETE FROM t */", V), "");
        assert_eq!(run("/*M!50700 DROP TABLE t */", V), "DROP TABLE t");
        // Six-digit versions are MariaDB's: run up to its version.
        assert_eq!(
            run("/*!100100 CREATE TABLE m (a int) */", V),
            "CREATE TABLE m (a int)"
        );
        assert_eq!(run("/*!110000 CREATE TABLE m (a int) */", V), "");
        // MySQL 5.7+ versions are ignored; older ones and none run.
        assert_eq!(
            run("CREATE TABLE t (a int) /*!50700 foo */", V),
            "CREATE TABLE t (a int)"
        );
        assert_eq!(run("/*!99999 DROP TABLE t */", V), "");
        assert_eq!(
            run("DROP /*!40005 TEMPORARY */ TABLE x", V),
            "DROP TEMPORARY TABLE x"
        );
        assert_eq!(run("/*! DELETE FROM t */", V), "DELETE FROM t");
        assert_eq!(run("/*!1234 x */", V), "1234 x");
        // A version of 7 digits reads six, the seventh is content.
        assert_eq!(run("SELECT /*!1001001 */", V), "SELECT 1");
        // Quotes and line comments hide markers; nesting.
        assert_eq!(
            run("SELECT '/*!50700 a */' /*!40101 , 1 */", V),
            "SELECT '/*!50700 a */' , 1"
        );
        assert_eq!(run("SELECT 'it\\'s /*!x*/'", V), "SELECT 'it\\'s /*!x*/'");
        assert_eq!(
            run("SELECT 1 -- /*!40101 , 2 */\n", V),
            "SELECT 1 -- /*!40101 , 2 */"
        );
        assert_eq!(run("/*!50700 a /* b */ c */ SELECT 1", V), "SELECT 1");
        assert_eq!(run("/*!40101 SELECT /* c */ 1 */ ", V), "SELECT /* c */ 1");
        assert_eq!(run("/* plain */ SELECT 1", V), "/* plain */ SELECT 1");
        assert!(expand(b"BEGIN", V, true).is_none());
    }

    #[test]
    fn versions_of_sources() {
        assert_eq!(
            mariadb_version("10.11.19-MariaDB-0+deb12u1-log"),
            Some(101119)
        );
        assert_eq!(mariadb_version("11.4.2-MariaDB"), Some(110402));
        assert_eq!(mariadb_version("8.0.35"), None);
        assert_eq!(mariadb_version("MariaDB"), None);
    }
}
