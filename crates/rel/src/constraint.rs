//! CHECK constraints of a table definition and their stored form (the
//! checks section of table definition version 5, docs/formats/catalog.md).
//! A check is kept as its expression's SQL text (as MariaDB keeps it): the
//! SQL layer parses, binds and evaluates it; this layer only stores it.
use lsm::coding::{put_length_prefixed, put_varint64, Decoder};

/// Most CHECK constraints a definition may hold (`decode` accepts no more).
pub const MAX_CHECKS: usize = 1024;
/// Longest stored expression text, in bytes.
pub const MAX_CHECK_TEXT: usize = 65_535;

/// Where a check was declared, which decides its name and how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckLevel {
    /// `col INT CHECK (...)`: named after its column (renamed and dropped
    /// with it), printed in the column's definition.
    Column,
    /// `[CONSTRAINT [name]] CHECK (...)` among the table's elements.
    Table,
}

/// A CHECK constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The constraint's name; a column-level check's is its column's.
    pub name: String,
    pub level: CheckLevel,
    /// The expression as SQL text, in the form SHOW CREATE TABLE prints.
    pub expr: String,
}

/// Appends the checks section: `count:varint` then per check
/// `name:string level:u8 expr:string`.
pub(crate) fn encode_checks(o: &mut Vec<u8>, checks: &[Check]) {
    put_varint64(o, checks.len() as u64);
    for c in checks {
        put_length_prefixed(o, c.name.as_bytes());
        o.push(match c.level {
            CheckLevel::Column => 0,
            CheckLevel::Table => 1,
        });
        put_length_prefixed(o, c.expr.as_bytes());
    }
}

/// Reads the checks section (version 5 holds at least one check; a
/// column-level check must name one of the `ncols` columns' names, which
/// the caller cannot know yet, so only its shape is checked here).
/// `may_be_empty`: a version where the section is always written (6).
pub(crate) fn decode_checks(
    d: &mut Decoder,
    ncols: usize,
    may_be_empty: bool,
) -> Option<Vec<Check>> {
    let n = d.varint64()? as usize;
    if (n == 0 && !may_be_empty) || n > MAX_CHECKS || ncols == 0 {
        return None;
    }
    let text = |d: &mut Decoder, max: usize| -> Option<String> {
        let b = d.length_prefixed()?;
        if b.is_empty() || b.len() > max {
            return None;
        }
        String::from_utf8(b.to_vec()).ok()
    };
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let name = text(d, 256)?;
        let level = match d.u8()? {
            0 => CheckLevel::Column,
            1 => CheckLevel::Table,
            _ => return None,
        };
        let expr = text(d, MAX_CHECK_TEXT)?;
        out.push(Check { name, level, expr });
    }
    Some(out)
}
