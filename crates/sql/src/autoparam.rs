//! Text statements that differ only in their literals share one compiled form
//! (parse tree and plan): `UPDATE district1 SET d_next_o_id = 3002 WHERE
//! d_id = 5` becomes `... = ? WHERE d_id = ?` with the values (3002, 5), and
//! runs as a prepared statement would. sysbench-tpcc sends every statement
//! as text with its values spelled out; parsing each one again took a quarter
//! of the server's CPU (docs/BENCHMARKS.md, TPC-C).
//!
//! Only literals whose meaning cannot change by becoming parameters are
//! replaced: plain numbers and single-quoted strings without escapes, after
//! `=`, `<`, `>`, `(`, `,`, `+`, `*`, `/`, `%` or one of a few keywords
//! (AND, OR, IN, LIKE, BETWEEN, VALUES, WHEN, THEN, ELSE, NOT); a number with
//! its `-` after `=`, `(`, `,` or one of those words is one (negative) literal,
//! valued as the binder folds the sign, unless what follows binds tighter than
//! the sign (`-5 COLLATE x` is `-(5 COLLATE x)`; also `->`, `::`). A word
//! after `.` is a name even when reserved (`t.values -5`). So `SELECT 1`
//! (whose value names its column), `ORDER BY 2` (an ordinal), `LIMIT 10`,
//! `INTERVAL 1 DAY`, `DATE '...'`, `X'..'` and `_utf8'..'` keep their text.
//! The compiled statement is then checked (`eligible`): a parameter in a
//! select list, ORDER BY or GROUP BY (reached through `a, 5` lists) makes
//! it ineligible, as does any error while parsing or planning it; the
//! statement then runs the ordinary way, and the cache remembers that.
//! Statements with comments, `?`, double quotes, hex or bit literals (a
//! number beside a constant, a string beside a parameter) or over 16 KB are
//! left alone.
use rel::value::Value;
use sqlparser::ast;
use std::ops::ControlFlow;

/// A statement with its literals taken out.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The text with `?` in place of each literal taken out.
    pub text: String,
    /// The literals' values, in text order.
    pub params: Vec<Value>,
}

/// Longest statement considered (longer ones are not shared in the cache).
const MAX_TEXT: usize = 16 << 10;

const AFTER_WORDS: &[&str] = &[
    "AND", "OR", "IN", "LIKE", "BETWEEN", "VALUES", "WHEN", "THEN", "ELSE", "NOT", "XOR",
];

/// Bytes that continue a word (identifier or keyword): ASCII letters and
/// digits, `_`, `$` and every byte of a multi-byte UTF-8 character.
const WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
        i += 1;
    }
    t
};

fn word_char(c: u8) -> bool {
    WORD[usize::from(c)]
}

/// What precedes the current position, for deciding whether a literal there
/// may become a parameter.
#[derive(Clone, Copy)]
enum Prev {
    /// A significant byte that is not part of a word (or nothing: 0).
    Byte(u8),
    /// A word spelled `sql[start..end]`.
    Word(usize, usize),
    /// Something that is not a literal's left neighbour (a name such as
    /// `@var`, a number-like word such as `0x1F`, a literal).
    Other,
}

/// The end of the number starting at `b[i]` (a digit): digits, an optional
/// fraction and exponent; false when a word byte or `.` follows (`0x1F`,
/// `1abc`, `12.5.3`: not a plain number).
fn scan_number(b: &[u8], i: usize) -> (usize, bool) {
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut j = digits(i);
    if j < b.len() && b[j] == b'.' {
        j = digits(j + 1);
    }
    if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
        let mut k = j + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        if k < b.len() && b[k].is_ascii_digit() {
            j = digits(k);
        }
    }
    (j, !(j < b.len() && (word_char(b[j]) || b[j] == b'.')))
}

/// Whether what follows the number ending at `b[j]` binds tighter than a
/// unary minus (sqlparser reads the sign's operand up to `MulDivModOp`):
/// `-5 COLLATE x` is `-(5 COLLATE x)`, a number compared as a number, where
/// `? COLLATE x` with -5 would be the string '-5'; likewise `->`, `->>`,
/// `::`, `[`, `.`, postfix `!`, `^@` and `AT TIME ZONE`. Such a `-N` stays text.
fn binds_tighter_than_sign(b: &[u8], j: usize) -> bool {
    let k = j + b[j..]
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'))
        .count();
    let rest = &b[k..];
    let word = |w: &[u8]| {
        rest.len() >= w.len()
            && rest[..w.len()].eq_ignore_ascii_case(w)
            && rest.get(w.len()).is_none_or(|&c| !word_char(c))
    };
    match rest.first() {
        Some(b'-') => rest.get(1) == Some(&b'>'),
        Some(b':') => rest.get(1) == Some(&b':'),
        Some(b'!') => rest.get(1) != Some(&b'='),
        Some(b'^') => rest.get(1) == Some(&b'@'),
        Some(b'[' | b'.') => true,
        Some(_) => word(b"COLLATE") || word(b"AT"),
        None => false,
    }
}

/// Whether a `-` after `prev` is a sign (the start of a negative literal)
/// rather than a binary minus: after `=`, `(`, `,` or one of `AFTER_WORDS`.
fn neg_allowed_in(sql: &str, prev: Prev) -> bool {
    match prev {
        Prev::Byte(c) => matches!(c, b'=' | b'(' | b','),
        Prev::Word(s, e) => AFTER_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(&sql[s..e])),
        Prev::Other => false,
    }
}

/// The statement with its replaceable literals taken out, or None when it
/// has none or must not be touched (see the module comment).
///
/// It runs on every text statement, so it scans bytes without allocating
/// anything but its result.
pub fn normalize(sql: &str) -> Option<Normalized> {
    let b = sql.as_bytes();
    if b.len() > MAX_TEXT {
        return None;
    }
    let start = b.iter().position(|c| !c.is_ascii_whitespace())?;
    let first_len = b[start..]
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    let first = &sql[start..start + first_len];
    if !["SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(first))
    {
        return None;
    }
    let mut out = String::new();
    let mut params = Vec::new();
    let mut prev = Prev::Byte(0);
    let mut i = 0;
    let mut last = 0;
    let allowed = |prev: Prev| match prev {
        // Not after '-': -9223372036854775808 is a literal of its own.
        Prev::Byte(c) => matches!(
            c,
            b'=' | b'<' | b'>' | b'(' | b',' | b'+' | b'*' | b'/' | b'%'
        ),
        Prev::Word(s, e) => AFTER_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(&sql[s..e])),
        Prev::Other => false,
    };
    let neg_allowed = |prev: Prev| neg_allowed_in(sql, prev);
    // Takes out the literal at `sql[from..to]` (its value `v`).
    let mut take = |out: &mut String, from: usize, to: usize, v: Value, last: &mut usize| {
        if out.capacity() == 0 {
            out.reserve(sql.len());
        }
        out.push_str(&sql[*last..from]);
        out.push('?');
        params.push(v);
        *last = to;
    };
    while i < b.len() {
        let c = b[i];
        if word_char(c) && !c.is_ascii_digit() {
            let mut j = i + 1;
            while j < b.len() && word_char(b[j]) {
                j += 1;
            }
            // A word after `.` is a name, even a reserved one (`t.values -5`).
            prev = if matches!(prev, Prev::Byte(b'.')) {
                Prev::Other
            } else {
                Prev::Word(i, j)
            };
            i = j;
            continue;
        }
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => i += 1,
            b'?' | b'"' | b'#' | b'\\' => return None,
            b'/' if b.get(i + 1) == Some(&b'*') => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            b'`' => {
                let end = i + 1 + b[i + 1..].iter().position(|&x| x == b'`')?;
                i = end + 1;
                prev = Prev::Byte(b'`');
            }
            // X'1F', b'1': see `0x1F` below.
            b'\''
                if matches!(prev, Prev::Word(s, e) if e == i && e - s == 1
                && matches!(b[s], b'x' | b'X' | b'b' | b'B')) =>
            {
                return None;
            }
            b'\'' => {
                let end = i + 1 + b[i + 1..].iter().position(|&x| x == b'\'')?;
                if b.get(end + 1) == Some(&b'\'') {
                    return None; // '' inside the string
                }
                // A backslash escape ('a\\b', 'a\nb'): the parser unescapes the
                // literal, a parameter would keep its raw bytes.
                if b[i + 1..end].contains(&b'\\') {
                    return None;
                }
                // Adjacent strings concatenate ('a' 'b'): leave those alone.
                let next = b[end + 1..].iter().find(|x| !x.is_ascii_whitespace());
                if allowed(prev) && next != Some(&b'\'') {
                    let v = Value::Bytes(b[i + 1..end].to_vec());
                    take(&mut out, i, end + 1, v, &mut last);
                }
                i = end + 1;
                prev = Prev::Byte(b'\'');
            }
            b'@' => {
                // @var / @@var: a name, not a literal.
                while i < b.len() && (b[i] == b'@' || word_char(b[i]) || b[i] == b'.') {
                    i += 1;
                }
                prev = Prev::Other;
            }
            // A negative number in a value position (`SET c_balance=-2010.5`, as
            // TPC-C's payment sends it): one literal, valued as the binder folds
            // `-` into the number; left as text where the binder would not fold.
            b'-' if b.get(i + 1).is_some_and(u8::is_ascii_digit) && neg_allowed(prev) => {
                let (j, plain) = scan_number(b, i + 1);
                if !plain || binds_tighter_than_sign(b, j) {
                    // `-0x1F`: the number-like word is read next; `-5 COLLATE x`:
                    // the sign applies to more than the number, which is read
                    // next (and stays text: it follows `-`).
                    prev = Prev::Byte(b'-');
                    i += 1;
                    continue;
                }
                let v = match crate::bind::number_literal(&sql[i + 1..j]).ok()? {
                    Value::Int(x) => Some(Value::Int(-x)),
                    Value::UInt(u) if u == 1u64 << 63 => Some(Value::Int(i64::MIN)),
                    Value::Decimal(m, sc) => Some(Value::Decimal(-m, sc)),
                    Value::Double(d) => Some(Value::Double(-d)),
                    _ => None,
                };
                if let Some(v) = v {
                    take(&mut out, i, j, v, &mut last);
                }
                i = j;
                prev = Prev::Byte(b'0');
            }
            b'0'..=b'9' => {
                let (mut j, plain) = scan_number(b, i);
                // 0x1F, 1abc, 12.5.3: not a plain number.
                if !plain {
                    // A hex or bit literal is a number only beside a constant
                    // number (`0x1F >= 1`), not beside a parameter: leave the
                    // statement alone.
                    if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X' | b'b' | b'B')) {
                        return None;
                    }
                    while j < b.len() && word_char(b[j]) {
                        j += 1;
                    }
                    i = j;
                    prev = Prev::Other;
                    continue;
                }
                if allowed(prev) {
                    let v = crate::bind::number_literal(&sql[i..j]).ok()?;
                    take(&mut out, i, j, v, &mut last);
                }
                i = j;
                prev = Prev::Byte(b'0');
            }
            _ => {
                prev = Prev::Byte(c);
                i += 1;
            }
        }
    }
    if params.is_empty() {
        return None;
    }
    out.push_str(&sql[last..]);
    Some(Normalized { text: out, params })
}

/// True when no parameter of the (normalized) statement sits where a
/// literal and a parameter differ: a select list (the value names its
/// column), ORDER BY or GROUP BY (a number is an ordinal).
pub fn eligible(stmt: &crate::stmt::RowStmt) -> bool {
    use crate::stmt::RowStmt;
    use sqlparser::ast::Visit;
    struct V(bool);
    impl ast::Visitor for V {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(ob) = &q.order_by {
                if let ast::OrderByKind::Expressions(es) = &ob.kind {
                    if es.iter().any(|e| has_param(&e.expr)) {
                        self.0 = false;
                        return ControlFlow::Break(());
                    }
                }
            }
            if !set_expr_ok(&q.body) {
                self.0 = false;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = V(true);
    let _ = match stmt {
        RowStmt::Select(q) => q.visit(&mut v),
        RowStmt::Insert(i) => i.visit(&mut v),
        RowStmt::Update(u) => u.visit(&mut v),
        RowStmt::Delete(d, _) => d.visit(&mut v),
    };
    v.0
}

fn set_expr_ok(s: &ast::SetExpr) -> bool {
    match s {
        ast::SetExpr::Select(sel) => {
            let proj = sel.projection.iter().all(|p| match p {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => !has_param(e),
                _ => true,
            });
            let group = match &sel.group_by {
                ast::GroupByExpr::Expressions(es, _) => !es.iter().any(has_param),
                ast::GroupByExpr::All(_) => true,
            };
            proj && group
        }
        ast::SetExpr::SetOperation { left, right, .. } => set_expr_ok(left) && set_expr_ok(right),
        ast::SetExpr::Query(q) => set_expr_ok(&q.body),
        _ => true,
    }
}

fn has_param(e: &ast::Expr) -> bool {
    ast::visit_expressions(e, |x| match x {
        ast::Expr::Value(v) if matches!(v.value, ast::Value::Placeholder(_)) => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Option<(String, Vec<String>)> {
        normalize(s).map(|x| {
            (
                x.text,
                x.params
                    .iter()
                    .map(|v| String::from_utf8_lossy(&v.text()).into_owned())
                    .collect(),
            )
        })
    }

    #[test]
    fn literals_in_value_positions_become_parameters() {
        assert_eq!(
            n("UPDATE district1 SET d_next_o_id = 3002 WHERE d_id = 5 AND d_w_id= 1"),
            Some((
                "UPDATE district1 SET d_next_o_id = ? WHERE d_id = ? AND d_w_id= ?".into(),
                vec!["3002".into(), "5".into(), "1".into()]
            ))
        );
        assert_eq!(
            n("INSERT INTO t VALUES (1, 'a b', -2.50, 1e3)"),
            Some((
                "INSERT INTO t VALUES (?, ?, ?, ?)".into(),
                vec!["1".into(), "a b".into(), "-2.50".into(), "1000".into()]
            ))
        );
        assert_eq!(
            n("SELECT c FROM t1 WHERE k IN (3, 4) AND c LIKE 'x%' LIMIT 10"),
            Some((
                "SELECT c FROM t1 WHERE k IN (?, ?) AND c LIKE ? LIMIT 10".into(),
                vec!["3".into(), "4".into(), "x%".into()]
            ))
        );
    }

    #[test]
    fn negative_numbers_in_value_positions_are_one_parameter() {
        // TPC-C's payment: c_balance is negative, and a statement whose text
        // kept it missed the cache (parsed and planned) every time.
        assert_eq!(
            n("UPDATE customer1 SET c_balance=-2010.500000, c_ytd_payment=10.5 WHERE c_id=-7"),
            Some((
                "UPDATE customer1 SET c_balance=?, c_ytd_payment=? WHERE c_id=?".into(),
                vec!["-2010.500000".into(), "10.5".into(), "-7".into()]
            ))
        );
        assert_eq!(
            n("SELECT a FROM t WHERE b IN (-1, -2e1) AND c = -9223372036854775808"),
            Some((
                "SELECT a FROM t WHERE b IN (?, ?) AND c = ?".into(),
                vec!["-1".into(), "-20".into(), "-9223372036854775808".into()]
            ))
        );
        // A binary minus, a number the binder does not fold, not a plain number.
        assert_eq!(
            n("SELECT a FROM t WHERE b = 3-5 AND c = d -5"),
            Some((
                "SELECT a FROM t WHERE b = ?-5 AND c = d -5".into(),
                vec!["3".into()]
            ))
        );
        assert_eq!(n("SELECT a FROM t WHERE b = -9223372036854775809"), None);
        assert_eq!(n("SELECT a FROM t WHERE b = -0x1F"), None);
        assert_eq!(n("SELECT a FROM t WHERE b = - 5"), None);
        assert_eq!(n("SELECT a FROM t WHERE b < -5"), None);
    }

    #[test]
    fn literals_whose_meaning_would_change_stay() {
        for s in [
            "SELECT 1",
            "SELECT a FROM t ORDER BY 2",
            "SELECT a FROM t GROUP BY 1 LIMIT 5",
            "SELECT a FROM t WHERE d > DATE '2024-01-01'",
            "SELECT a FROM t WHERE d > NOW() - INTERVAL 1 DAY",
            "SELECT a FROM t WHERE b = X'00'",
            "SELECT a FROM t WHERE b = _utf8mb4'x'",
            "SELECT a FROM t1 WHERE b = 0x1F",
            "SHOW TABLES",
            "SET @a = 1",
        ] {
            assert_eq!(n(s), None, "{s}");
        }
        // Strings with escapes, comments, quotes and placeholders: the statement is left alone.
        for s in [
            "SELECT a FROM t WHERE b = 'it''s'",
            "SELECT a FROM t WHERE b = 'a\\'b'",
            "SELECT a FROM t WHERE b = 'a\\\\b'",
            "INSERT INTO t VALUES (1, 'a\\nb')",
            "SELECT a FROM t WHERE b = \"x\"",
            "SELECT a FROM t WHERE b = 1 /* c */",
            "SELECT a FROM t WHERE b = 1 -- c",
            "SELECT a FROM t WHERE b = ?",
            "SELECT a FROM t WHERE b = 'a' 'b'",
        ] {
            assert_eq!(n(s), None, "{s}");
        }
        // Names with digits and backquoted names are not literals.
        assert_eq!(
            n("SELECT `1` FROM order_line1 WHERE s_dist_05 = 7"),
            Some((
                "SELECT `1` FROM order_line1 WHERE s_dist_05 = ?".into(),
                vec!["7".into()]
            ))
        );
    }
}
