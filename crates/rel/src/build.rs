//! Building a new secondary index from the table's rows: a full scan at
//! one snapshot, written in batches of index entries, checking uniqueness
//! for a UNIQUE index. The caller (DDL) publishes the index definition
//! first, so that writers maintain the new index while it is built, and
//! waits for writers that planned without it before calling this.
use crate::catalog::Table;
use crate::keycodec;
use crate::scan::scan;
use crate::schema::Index;
use crate::table as rt;
use crate::{Error, Result};
use lsm::{Db, WriteBatch, WriteOptions};
use std::collections::HashSet;

/// Batch size of index entries written at once.
const BATCH_BYTES: usize = 4 << 20;

/// Writes the entries of index `ix` for every row of `t` as of now.
/// Fails with `Error::DupKey` when `ix` is unique and two rows share a
/// non-NULL key (the entries written so far stay: the caller drops the
/// index, which reclaims them).
pub fn build_index(db: &Db, t: &Table, ix: &Index) -> Result<()> {
    let snap = db.snapshot();
    let mut batch = WriteBatch::new();
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let sync = WriteOptions {
        sync: true,
        disable_wal: false,
    };
    scan(db, &snap, t.def.pk.id, &mut |k, v| {
        let row = rt::decode_row(&t.def, k, v, None)?;
        let key = rt::sk_key(&t.def, ix, &row.values, row.hidden)?;
        if ix.unique && ix.columns.iter().all(|&c| !row.values[c].is_null()) {
            let mut prefix = keycodec::index_prefix(ix.id).to_vec();
            rt::encode_cols(&mut prefix, &t.def, &ix.columns, &row.values)?;
            if !seen.insert(prefix) {
                let txt: Vec<String> = ix
                    .columns
                    .iter()
                    .map(|&c| String::from_utf8_lossy(&row.values[c].text()).into_owned())
                    .collect();
                return Err(Error::DupKey(txt.join("-"), ix.name.clone()));
            }
        }
        batch.put(&key, &[]);
        if batch.size() > BATCH_BYTES {
            db.write(sync, std::mem::take(&mut batch))?;
        }
        Ok(())
    })?;
    if !batch.is_empty() {
        db.write(sync, batch)?;
    }
    Ok(())
}
