//! Copying a table's rows into a new definition (ALTER TABLE that changes
//! how rows are stored): a full scan of the old primary index at one
//! snapshot, each row converted by the caller, then written with all its
//! index entries under the new definition's ids (from
//! `Catalog::reserve_ids`, so nothing reads them until the new definition
//! is committed) in synced batches. The caller holds writers out of the old
//! table for the duration (`Table::frozen`) and commits the new definition
//! with `Catalog::commit_defs`, or drops the copy with `release_ids`.
use crate::catalog::Table;
use crate::keycodec;
use crate::scan::scan;
use crate::schema::TableDef;
use crate::table::{self as rt, key_text, Row};
use crate::value::Value;
use crate::Error;
use lsm::{Db, WriteBatch, WriteOptions};
use std::collections::HashSet;

/// Batch size of entries written at once.
const BATCH_BYTES: usize = 4 << 20;

/// What a copy wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Rows copied.
    pub rows: u64,
    /// One more than the largest AUTO_INCREMENT value stored (1 if none).
    pub auto_inc: u64,
    /// One more than the largest hidden primary key written (1 if none).
    pub hidden_next: u64,
}

/// Copies every row of `old` (as of now) into `new`: `convert(row, n)`
/// gives row number `n`'s (from 1) values for `new`'s columns, already
/// coerced to their types. Fails with `Error::DupKey` when two rows collide
/// on `new`'s primary key or a unique index, or with `convert`'s error; the
/// entries written so far stay for the caller to release.
pub fn copy_rows<E: From<Error>>(
    db: &Db,
    old: &Table,
    new: &TableDef,
    mut convert: impl FnMut(&Row, u64) -> std::result::Result<Vec<Value>, E>,
) -> std::result::Result<Copied, E> {
    let snap = db.snapshot();
    let sync = WriteOptions {
        sync: true,
        disable_wal: false,
    };
    let mut batch = WriteBatch::new();
    // Keys seen, for the indexes whose uniqueness the old table's keys do
    // not already prove (all of them, to be simple and safe: a conversion
    // may make two keys equal).
    let mut seen: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); 1 + new.secondary.len()];
    let mut out = Copied {
        rows: 0,
        auto_inc: 1,
        hidden_next: 1,
    };
    let auto = new.auto_inc_column();
    let mut failed: Option<E> = None;
    let pcf = crate::cf::of(db, &new.pk).map_err(Error::from)?.0;
    let scfs = new
        .secondary
        .iter()
        .map(|ix| crate::cf::of(db, ix).map(|c| c.0))
        .collect::<lsm::Result<Vec<u32>>>()
        .map_err(Error::from)?;
    // Expired rows of a TTL table are not copied (reads do not see them).
    let now = crate::ttl::read_time(Some(snap.unix_time()));
    let r = scan(db, &snap, &old.def.pk, &mut |k, v| {
        if crate::ttl::pk_hidden(&old.def, k, v, now) {
            return Ok(());
        }
        let row = rt::decode_row(&old.def, k, v, None)?;
        out.rows += 1;
        let values = match convert(&row, out.rows) {
            Ok(v) => v,
            Err(e) => {
                failed = Some(e);
                return Err(Error::Internal("conversion failed".into()));
            }
        };
        if values.len() != new.columns.len() {
            return Err(Error::Internal("converted row has the wrong width".into()));
        }
        let hidden = new.hidden_pk.then(|| {
            let h = row.hidden.unwrap_or(out.hidden_next);
            out.hidden_next = out.hidden_next.max(h.saturating_add(1));
            h
        });
        if let Some(a) = auto {
            if let Some(i) = values[a].to_i128() {
                let next = (i.max(0) as u64).saturating_add(1);
                out.auto_inc = out.auto_inc.max(next);
            }
        }
        let key = rt::pk_key(new, &values, hidden)?;
        if !new.hidden_pk && !seen[0].insert(key.clone()) {
            return Err(Error::DupKey(
                key_text(&new.pk, &values),
                new.pk.name.clone(),
            ));
        }
        // A row keeps its time when both tables keep one with the row.
        let stamp = row.stamp.unwrap_or_else(crate::ttl::stamp_now);
        batch.put_cf(pcf, &key, &rt::row_value_at(new, &values, stamp));
        let skv = rt::sk_value(new, &values, stamp);
        for (i, ix) in new.secondary.iter().enumerate() {
            if ix.unique && ix.columns.iter().all(|&c| !values[c].is_null()) {
                let mut prefix = keycodec::index_prefix(ix.id).to_vec();
                rt::encode_cols(&mut prefix, new, &ix.columns, &values)?;
                if !seen[i + 1].insert(prefix) {
                    return Err(Error::DupKey(key_text(ix, &values), ix.name.clone()));
                }
            }
            batch.put_cf(scfs[i], &rt::sk_key(new, ix, &values, hidden)?, &skv);
        }
        if batch.size() > BATCH_BYTES {
            db.write(sync, std::mem::take(&mut batch))?;
        }
        Ok(())
    });
    if let Some(e) = failed {
        return Err(e);
    }
    r?;
    if !batch.is_empty() {
        db.write(sync, batch).map_err(Error::from)?;
    }
    Ok(out)
}

/// Calls `f` with every row of `t` as of now (ALTER TABLE validating a new
/// CHECK constraint against rows that stay where they are).
pub fn for_each_row<E: From<Error>>(
    db: &Db,
    t: &Table,
    mut f: impl FnMut(&Row) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let snap = db.snapshot();
    let mut failed: Option<E> = None;
    let now = crate::ttl::read_time(Some(snap.unix_time()));
    let r = scan(db, &snap, &t.def.pk, &mut |k, v| {
        if crate::ttl::pk_hidden(&t.def, k, v, now) {
            return Ok(());
        }
        let row = rt::decode_row(&t.def, k, v, None)?;
        f(&row).map_err(|e| {
            failed = Some(e);
            Error::Internal("row refused".into())
        })
    });
    match (r, failed) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(()), None) => Ok(()),
    }
}
