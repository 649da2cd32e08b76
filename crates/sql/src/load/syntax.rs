//! The text of a LOAD DATA statement (sqlparser reads only Hive's form):
//!
//! ```text
//! LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file'
//!     [REPLACE | IGNORE] INTO TABLE tbl
//!     [CHARACTER SET cs]
//!     [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY 'c']]
//!     [LINES [STARTING BY 's'] [TERMINATED BY 's']]
//!     [IGNORE n {LINES | ROWS}]
//!     [(col_or_@var, ...)]
//!     [SET col = expr, ...]
//! ```
//!
//! PARTITION is refused (1235); so are an empty FIELDS TERMINATED BY with an
//! empty ENCLOSED BY, or an empty LINES TERMINATED BY (MySQL's fixed-width
//! rows). The SET list is read by sqlparser as an UPDATE's.
use super::reader::Format;
use crate::error::{Result, SqlError};
use sqlparser::ast;
use sqlparser::tokenizer::Token;

/// What a duplicate key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dup {
    Error,
    Replace,
    Ignore,
}

/// Where a field goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Column(String),
    Var(String),
}

/// A parsed LOAD DATA statement.
#[derive(Debug, Clone)]
pub struct LoadStmt {
    pub local: bool,
    pub file: String,
    pub dup: Dup,
    pub table: ast::ObjectName,
    pub charset: Option<String>,
    pub format: Format,
    pub ignore_lines: u64,
    /// The column list; `None`: every column in order.
    pub targets: Option<Vec<Target>>,
    pub set: Vec<ast::Assignment>,
}

/// True when `sql` is a LOAD DATA statement (LOAD XML is not).
pub fn is_load(sql: &str) -> bool {
    let mut w = sql.split_whitespace();
    matches!((w.next(), w.next()), (Some(a), Some(b))
        if a.eq_ignore_ascii_case("LOAD") && b.eq_ignore_ascii_case("DATA"))
}

struct Toks {
    t: Vec<(Token, usize)>,
    i: usize,
    sql: String,
}

impl Toks {
    fn peek(&self) -> Option<&Token> {
        self.t.get(self.i).map(|x| &x.0)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.t.get(self.i).map(|x| x.0.clone());
        self.i += 1;
        t
    }
    fn word(&self) -> Option<String> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }
    fn eat(&mut self, kw: &str) -> bool {
        if self.word().as_deref() == Some(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, kw: &str) -> Result<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {kw}")))
        }
    }
    fn error(&self, what: &str) -> SqlError {
        let at = self.t.get(self.i).map_or(self.sql.len(), |x| x.1);
        let near: String = self.sql[at..].chars().take(40).collect();
        SqlError::parse(format!("{what} (near '{near}')"))
    }
    /// A string literal's bytes (also X'..' hex).
    fn string(&mut self) -> Result<Vec<u8>> {
        match self.next() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                Ok(s.into_bytes())
            }
            Some(Token::HexStringLiteral(h)) => hex(&h).ok_or_else(|| self.error("bad hex string")),
            _ => {
                self.i -= 1;
                Err(self.error("expected a string"))
            }
        }
    }
    /// A one-character (or empty) string: ENCLOSED BY / ESCAPED BY (1083).
    fn char(&mut self) -> Result<Option<u8>> {
        let s = self.string()?;
        match s.len() {
            0 => Ok(None),
            1 => Ok(Some(s[0])),
            _ => Err(SqlError::wrong_field_terminators()),
        }
    }
    /// An identifier (a word, possibly quoted).
    fn ident(&mut self) -> Result<String> {
        match self.next() {
            Some(Token::Word(w)) => Ok(w.value),
            _ => {
                self.i -= 1;
                Err(self.error("expected a name"))
            }
        }
    }
}

/// The bytes of an even number of hex digits; `None` for anything else.
pub(crate) fn hex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Parses a LOAD DATA statement.
pub fn parse(sql: &str) -> Result<LoadStmt> {
    let t = crate::parse::tokens_at(sql).ok_or_else(|| SqlError::parse("bad LOAD DATA"))?;
    let t = t
        .into_iter()
        .filter(|(t, _)| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    let mut p = Toks {
        t,
        i: 0,
        sql: sql.to_string(),
    };
    p.expect("LOAD")?;
    p.expect("DATA")?;
    if p.eat("CONCURRENT") || p.eat("LOW_PRIORITY") {}
    let local = p.eat("LOCAL");
    p.expect("INFILE")?;
    let file = String::from_utf8_lossy(&p.string()?).into_owned();
    let dup = if p.eat("REPLACE") {
        Dup::Replace
    } else if p.eat("IGNORE") {
        Dup::Ignore
    } else {
        Dup::Error
    };
    p.expect("INTO")?;
    p.expect("TABLE")?;
    let mut parts = vec![ast::Ident::new(p.ident()?)];
    while p.peek() == Some(&Token::Period) {
        p.i += 1;
        parts.push(ast::Ident::new(p.ident()?));
    }
    let table = ast::ObjectName::from(parts);
    if p.word().as_deref() == Some("PARTITION") {
        return Err(SqlError::unsupported("LOAD DATA ... PARTITION"));
    }
    let mut charset = None;
    if p.eat("CHARACTER") {
        p.expect("SET")?;
        charset = Some(match p.peek() {
            Some(Token::SingleQuotedString(_)) => {
                String::from_utf8_lossy(&p.string()?).into_owned()
            }
            _ => p.ident()?,
        });
    } else if p.eat("CHARSET") {
        charset = Some(p.ident()?);
    }
    let mut format = Format::default();
    if p.eat("FIELDS") || p.eat("COLUMNS") {
        let mut any = false;
        loop {
            if p.eat("TERMINATED") {
                p.expect("BY")?;
                format.field_term = p.string()?;
            } else if p.eat("OPTIONALLY") || p.word().as_deref() == Some("ENCLOSED") {
                p.expect("ENCLOSED")?;
                p.expect("BY")?;
                format.enclosed = p.char()?;
            } else if p.eat("ESCAPED") {
                p.expect("BY")?;
                format.escaped = p.char()?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(p.error("expected TERMINATED, ENCLOSED or ESCAPED"));
        }
    }
    if p.eat("LINES") {
        let mut any = false;
        loop {
            if p.eat("STARTING") {
                p.expect("BY")?;
                format.line_start = p.string()?;
            } else if p.eat("TERMINATED") {
                p.expect("BY")?;
                format.line_term = p.string()?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(p.error("expected STARTING or TERMINATED"));
        }
    }
    if format.line_term.is_empty() || (format.field_term.is_empty() && format.enclosed.is_none()) {
        return Err(SqlError::unsupported(
            "LOAD DATA with empty terminators (fixed-width rows)",
        ));
    }
    let mut ignore_lines = 0;
    if p.eat("IGNORE") {
        ignore_lines = match p.next() {
            Some(Token::Number(n, _)) => n.parse().map_err(|_| p.error("bad number"))?,
            _ => return Err(p.error("expected a number")),
        };
        if !(p.eat("LINES") || p.eat("ROWS")) {
            return Err(p.error("expected LINES or ROWS"));
        }
    }
    let mut targets = None;
    if p.peek() == Some(&Token::LParen) {
        p.i += 1;
        let mut list = Vec::new();
        if p.peek() != Some(&Token::RParen) {
            loop {
                let name = p.ident()?;
                list.push(match name.strip_prefix('@') {
                    Some(v) if !v.is_empty() => Target::Var(v.to_string()),
                    _ => Target::Column(name),
                });
                match p.next() {
                    Some(Token::Comma) => {}
                    Some(Token::RParen) => break,
                    _ => {
                        p.i -= 1;
                        return Err(p.error("expected , or )"));
                    }
                }
            }
        } else {
            p.i += 1;
        }
        targets = Some(list);
    }
    let mut set = Vec::new();
    if p.word().as_deref() == Some("SET") {
        let at = p.t[p.i].1;
        let text = format!("UPDATE t {}", &sql[at..]);
        let stmts =
            sqlparser::parser::Parser::parse_sql(&crate::dialect::StrataDialect::default(), &text)
                .map_err(|e| SqlError::parse(format!("{e} (in LOAD DATA ... SET)")))?;
        match stmts.as_slice() {
            [ast::Statement::Update(u)] if u.selection.is_none() && u.from.is_none() => {
                set = u.assignments.clone();
            }
            _ => return Err(p.error("bad SET list")),
        }
        p.i = p.t.len();
    }
    if p.i < p.t.len() && p.peek() != Some(&Token::SemiColon) {
        return Err(p.error("unexpected text"));
    }
    Ok(LoadStmt {
        local,
        file,
        dup,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clause() {
        let l = parse(
            "LOAD DATA LOCAL INFILE '/tmp/x.csv' REPLACE INTO TABLE d.t CHARACTER SET latin1 \
             FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' \
             LINES STARTING BY '>' TERMINATED BY '\\r\\n' IGNORE 2 LINES (a, @b, `c d`) \
             SET e = @b * 2, f = DEFAULT",
        )
        .unwrap();
        assert!(l.local);
        assert_eq!(l.file, "/tmp/x.csv");
        assert_eq!(l.dup, Dup::Replace);
        assert_eq!(l.table.to_string(), "d.t");
        assert_eq!(l.charset.as_deref(), Some("latin1"));
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.enclosed, Some(b'"'));
        assert_eq!(l.format.escaped, None);
        assert_eq!(l.format.line_start, b">");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.ignore_lines, 2);
        assert_eq!(
            l.targets.unwrap(),
            vec![
                Target::Column("a".into()),
                Target::Var("b".into()),
                Target::Column("c d".into())
            ]
        );
        assert_eq!(l.set.len(), 2);
    }

    #[test]
    fn defaults_and_refusals() {
        let l = parse("LOAD DATA INFILE 'f' INTO TABLE t").unwrap();
        assert!(!l.local && l.dup == Dup::Error && l.targets.is_none() && l.set.is_empty());
        assert_eq!(l.format, Format::default());
        let e = parse("LOAD DATA INFILE 'f' INTO TABLE t FIELDS ENCLOSED BY 'ab'").unwrap_err();
        assert_eq!(e.code, 1083);
        let e = parse("LOAD DATA INFILE 'f' INTO TABLE t PARTITION (p0)").unwrap_err();
        assert_eq!(e.code, 1235);
        let e = parse("LOAD DATA INFILE 'f' INTO TABLE t LINES TERMINATED BY ''").unwrap_err();
        assert_eq!(e.code, 1235);
        assert_eq!(
            parse("LOAD DATA INFILE 'f' INTO TABLE t junk")
                .unwrap_err()
                .code,
            1064
        );
    }
}
