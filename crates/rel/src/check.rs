//! CHECK TABLE: proves a table's indexes agree with its rows, at one
//! snapshot. Every row must decode; every secondary entry must point to an
//! existing row whose indexed columns equal the entry's; and each index
//! must hold exactly one entry per row. Together these mean the index and
//! the table are in one-to-one correspondence.
use crate::catalog::Table;
use crate::scan::scan;
use crate::table as rt;
use crate::Result;
use lsm::{Db, ReadOptions};

/// What CHECK TABLE found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CheckReport {
    pub rows: u64,
    /// (index name, entries)
    pub index_entries: Vec<(String, u64)>,
    /// Problems found; empty = OK.
    pub errors: Vec<String>,
}

/// Checks one table.
pub fn check_table(db: &Db, t: &Table) -> Result<CheckReport> {
    let def = &t.def;
    let snap = db.snapshot();
    let mut rep = CheckReport::default();
    let mut errors = Vec::new();
    let pcf = crate::cf::of(db, &def.pk)?;
    stray_entries(db, &snap, def, &mut errors)?;
    // TTL tables: expired rows and entries are not counted (compactions
    // remove a row and its entries at different times).
    let now = crate::ttl::read_time(Some(snap.unix_time()));
    scan(db, &snap, &def.pk, &mut |k, v| {
        if crate::ttl::pk_expired(def, k, v, now) {
            return Ok(());
        }
        rep.rows += 1;
        if let Err(e) = rt::decode_row(def, k, v, None) {
            if errors.len() < 20 {
                errors.push(format!("row {}: {e}", hex(k)));
            }
        }
        Ok(())
    })?;
    for ix in &def.secondary {
        let mut n = 0u64;
        scan(db, &snap, ix, &mut |k, v| {
            if crate::ttl::sk_expired(def, v, now) {
                return Ok(());
            }
            n += 1;
            let pk = match rt::pk_of_sk(def, ix, k) {
                Ok(pk) => pk,
                Err(e) => {
                    if errors.len() < 20 {
                        errors.push(format!("index {}: entry {}: {e}", ix.name, hex(k)));
                    }
                    return Ok(());
                }
            };
            let ro = ReadOptions {
                snapshot: Some(snap.clone()),
                ..Default::default()
            };
            match db.get_cf(&ro, pcf, &pk)? {
                None => {
                    if errors.len() < 20 {
                        errors.push(format!(
                            "index {}: entry {} points to a missing row",
                            ix.name,
                            hex(k)
                        ));
                    }
                }
                Some(v) => {
                    // The entry the row would have (key images compared, so
                    // that columns keyed by collation weights are checked too).
                    let row = rt::decode_row(def, &pk, &v, None)?;
                    let same = rt::sk_key(def, ix, &row.values, row.hidden)? == k;
                    if !same && errors.len() < 20 {
                        errors.push(format!(
                            "index {}: entry {} does not match its row",
                            ix.name,
                            hex(k)
                        ));
                    }
                }
            }
            Ok(())
        })?;
        if n != rep.rows {
            errors.push(format!(
                "index {} has {n} entries for {} rows",
                ix.name, rep.rows
            ));
        }
        rep.index_entries.push((ix.name.clone(), n));
    }
    rep.errors = errors;
    Ok(rep)
}

/// Entries of the table's index ids in a column family other than the index's own
/// (what a write that missed the index's family would leave).
fn stray_entries(
    db: &Db,
    snap: &lsm::Snapshot,
    def: &crate::schema::TableDef,
    errors: &mut Vec<String>,
) -> Result<()> {
    let all = crate::cf::all(db);
    if all.len() < 2 {
        return Ok(());
    }
    for ix in def.indexes() {
        let own = crate::cf::of(db, ix)?;
        for &cf in all.iter().filter(|&&c| c != own) {
            let it = crate::scan::index_iter(db, cf, snap, ix.id)?;
            if it.valid() {
                errors.push(format!(
                    "index {}: entry {} outside its column family",
                    ix.name,
                    hex(it.key())
                ));
            }
            it.status()?;
        }
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().take(32).map(|x| format!("{x:02x}")).collect()
}
