//! Which engine column family holds an index's entries (MyRocks' "column family
//! per index"): the index COMMENT names it (`cfname=name`, or a bare `name`), it is
//! created on first use with the options the instance configured for that name
//! (`lsm::Db::ensure_cf`), and every read, write, lock, range deletion, compaction
//! and ingestion of the index's keys goes through [`of`]. The catalog itself, and
//! indexes without a column family, use the default one.
use crate::schema::Index;
use lsm::{ColumnFamily, Db, DEFAULT_CF};

/// The longest column family name.
pub const MAX_NAME: usize = 64;

/// Whether `name` may name a column family: 1 to 64 ASCII letters, digits, `_`,
/// `$` or `-`, not starting with `__` (MyRocks' system families, `__system__`).
pub fn valid_name(name: &str) -> bool {
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
/// `default` (the default family). Errors (a message for error 1235) for what
/// Strata does not honour: reverse-ordered families (`rev:`), per-partition
/// qualifiers (`p0_cfname=`), TTL qualifiers (a TTL belongs in the table's COMMENT:
/// `crate::ttl`), and a `cfname=` value that is not a
/// valid name.
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
        None if c.to_ascii_lowercase().starts_with("rev:") || valid_name(c) => c.to_string(),
        None => return Ok(None),
    };
    if name.to_ascii_lowercase().starts_with("rev:") {
        return Err(format!(
            "reverse-ordered column families (rev:): COMMENT '{comment}'"
        ));
    }
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
    } else {
        db.ensure_cf(&ix.cf)
    }
}

/// Every column family that may hold index entries: the default one and every
/// other (for index ids whose index definition is unknown, e.g. an abandoned
/// rebuild's).
pub fn all(db: &Db) -> Vec<ColumnFamily> {
    db.cf_names().iter().filter_map(|n| db.cf(n)).collect()
}
