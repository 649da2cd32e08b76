//! Which engine column family holds an index's entries (MyRocks' "column family
//! per index"): the index COMMENT names it (`cfname=name`, or a bare `name`), it is
//! created on first use with the options the instance configured for that name
//! (`lsm::Db::ensure_cf`), and every read, write, lock, range deletion, compaction
//! and ingestion of the index's keys goes through [`of`]. The catalog itself, and
//! indexes without a column family, use the default one. A name `rev:x` is a
//! family of its own (not `x`) whose keys are kept in reverse byte order
//! (RocksDB's ReverseBytewiseComparator): `keyrange` reads its byte ranges.
use crate::schema::Index;
use lsm::{ColumnFamily, Comparator, Db, DEFAULT_CF};

/// The longest column family name, after an optional `rev:` (as
/// `--override-cf-options` takes them: `lsm::optstr::MAX_CF_NAME`).
pub const MAX_NAME: usize = lsm::optstr::MAX_CF_NAME;

/// The prefix of a reverse-ordered family's name (MyRocks').
pub const REV: &str = "rev:";

/// Whether family `name` keeps its keys in reverse byte order.
pub fn is_reverse(name: &str) -> bool {
    name.starts_with(REV)
}

/// Whether `name` may name a column family: 1 to 64 ASCII letters, digits, `_`,
/// `$` or `-`, not starting with `__` (MyRocks' system families, `__system__`),
/// optionally after `rev:` (a reverse-ordered family).
pub fn valid_name(name: &str) -> bool {
    plain_name(name.strip_prefix(REV).unwrap_or(name))
}

fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with("__")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'-')
}

/// The column family an index COMMENT names, as MyRocks reads it: the value of a
/// `cfname=` qualifier (up to `;`), or else the whole comment when it is a
/// column family name; None for no comment, a comment that is other text, or
/// `default` (the default family). `rev:name` (any case of `rev:`) is the
/// reverse-ordered family `rev:name`. Errors (a message for error 1235) for
/// what Strata does not honour: per-partition qualifiers (`p0_cfname=`), TTL
/// qualifiers (a TTL belongs in the table's COMMENT: `crate::ttl`), and a `cfname=` value that is not a valid name.
pub fn from_comment(comment: &str) -> Result<Option<String>, String> {
    let c = comment.trim();
    let lower = c.to_ascii_lowercase();
    if lower.contains("ttl_duration=") || lower.contains("ttl_col=") {
        return Err(format!(
            "TTL directives in an index comment (a TTL is the table's COMMENT): COMMENT '{comment}'"
        ));
    }
    let mut named = None;
    for part in c.split(';') {
        let part = part.trim();
        let Some(pos) = part.to_ascii_lowercase().find("cfname=") else {
            continue;
        };
        if pos > 0 {
            return Err(format!(
                "per-partition column families: COMMENT '{comment}'"
            ));
        }
        if named.is_some() {
            return Err(format!("two cfname= qualifiers: COMMENT '{comment}'"));
        }
        named = Some(part[pos + "cfname=".len()..].trim().to_string());
    }
    let name = match named {
        Some(n) => n,
        None if c.to_ascii_lowercase().starts_with(REV) || valid_name(c) => c.to_string(),
        None => return Ok(None),
    };
    let name = match name.get(..REV.len()) {
        Some(p) if p.eq_ignore_ascii_case(REV) => format!("{REV}{}", &name[REV.len()..]),
        _ => name,
    };
    if name == "default" {
        return Ok(None);
    }
    if !valid_name(&name) {
        return Err(format!(
            "column family name '{name}' (1 to {MAX_NAME} letters, digits, '_', '$' or '-', not starting with '__')"
        ));
    }
    Ok(Some(name))
}

/// The column family of index `ix`, created (with its configured options) if
/// this is its first use.
pub fn of(db: &Db, ix: &Index) -> lsm::Result<ColumnFamily> {
    if ix.cf.is_empty() {
        Ok(DEFAULT_CF)
    } else if is_reverse(&ix.cf) {
        db.ensure_cf_ordered(&ix.cf, Comparator::ReverseBytewise)
    } else {
        db.ensure_cf_ordered(&ix.cf, Comparator::Bytewise)
    }
}

/// Every column family that may hold index entries: the default one and every
/// other (for index ids whose index definition is unknown, e.g. an abandoned
/// rebuild's).
pub fn all(db: &Db) -> Vec<ColumnFamily> {
    db.cf_names().iter().filter_map(|n| db.cf(n)).collect()
}
