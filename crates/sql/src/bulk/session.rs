//! The `strata_bulk_load` session mode (MyRocks' `rocksdb_bulk_load`):
//! INSERTs into one empty table, in primary key order, written straight
//! into table files; the rows become visible when the load ends (SET
//! strata_bulk_load = 0, an INSERT into another table, any other statement
//! but SET, or the end of the session), ingested with their secondary
//! index entries at once.
//!
//! The contract (docs/LOAD.md): the table is held for the session while
//! the load is open (`lock`: another session's load or DDL of it waits,
//! 1205 after lock_wait_timeout; other writers wait too); each INSERT is
//! all or nothing (its rows are staged and join the load only when it
//! succeeds; KILL QUERY stops it at the next row); the load itself is not
//! a transaction: it only runs with autocommit outside a transaction (an
//! INSERT with autocommit=0 or in BEGIN ends an open load first and runs
//! the ordinary, transactional way, so ROLLBACK undoes it).
use super::{eligible, BulkLoad, Dedup};
use crate::error::Result;
use rel::value::Value;

/// An open load: the rows so far, and the table held and frozen.
pub struct SessionLoad {
    load: BulkLoad,
    _frozen: crate::ddl::Frozen,
}

/// Ends the session's bulk load, if any: its rows are ingested (an error
/// leaves none of them, e.g. 1062 for a repeated unique key, or 1412 when
/// the table was dropped or changed meanwhile: it must be the very table
/// the load began with). The error says that the load's rows are lost
/// (`SqlError::bulk_load_lost`): the statement that ended the load gets
/// it, not having run.
/// `killable`: a statement ends it, whose KILL stops the sorts and merges
/// (losing the rows); not when the session ends or is replaced.
pub(crate) fn end_session_load(s: &mut crate::session::Session, killable: bool) -> Result<()> {
    let Some(mut b) = s.bulk.take() else {
        return Ok(());
    };
    // (Replacing the check of the last INSERT, whose deadline has passed.)
    let proc = s.proc.clone();
    b.load
        .set_interrupt(std::sync::Arc::new(move || match killable {
            true => proc.kill_error().map_or(Ok(()), Err),
            false => Ok(()),
        }));
    s.proc.set_state("End bulk insert");
    let (name, rows) = (table_name(&b), b.load.rows());
    let done = b
        .load
        .finish(&s.inst.catalog, Dedup::Error)
        .map_err(|e| e.bulk_load_lost(name, rows))?;
    s.bulk_counts.add(done.counts);
    Ok(())
}

/// The loaded table's name, quoted (`db`.`t`).
fn table_name(b: &SessionLoad) -> String {
    let def = &b.load.table.def;
    format!("`{}`.`{}`", def.db, def.name)
}

/// An INSERT under `strata_bulk_load = 1`: `None` when it runs the ordinary
/// way instead (not a plain INSERT ... VALUES, inside a transaction or
/// with autocommit off, or a table that is not empty or has foreign keys).
pub(crate) fn session_insert(
    s: &mut crate::session::Session,
    p: &crate::dml::InsertPlan,
    params: &[Value],
) -> Result<Option<crate::result::Outcome>> {
    use crate::dml::{InsertSource, OnDup};
    let InsertSource::Values(rows) = &p.source else {
        end_session_load(s, true)?;
        return Ok(None);
    };
    if !matches!(p.on_dup, OnDup::Error) || p.view_check.is_some() {
        end_session_load(s, true)?;
        return Ok(None);
    }
    // The load is not a transaction: in one (or with autocommit off) rows
    // go the ordinary way, after the rows loaded so far are ingested.
    if s.explicit() || !s.autocommit() {
        end_session_load(s, true)?;
        return Ok(None);
    }
    let same = s
        .bulk
        .as_ref()
        .is_some_and(|b| std::sync::Arc::ptr_eq(&b.load.table, &p.table));
    if !same {
        end_session_load(s, true)?;
        let paused = s.pause_for_ddl();
        let f = crate::ddl::Frozen::new(s, &p.table);
        if paused {
            s.announce();
        }
        // None: the table changed since the statement was planned (the
        // ordinary path finds that out and runs it again on the new one).
        let Some(f) = f? else {
            return Ok(None);
        };
        if !eligible(s.inst.txdb.db(), f.table())? {
            return Ok(None);
        }
        let budget = crate::ddl::sortbuild::budget(s);
        let load = BulkLoad::new(s.inst.txdb.db(), f.table().clone(), true, budget)?;
        s.bulk = Some(SessionLoad { load, _frozen: f });
    }
    let Some(mut b) = s.bulk.take() else {
        return Ok(None);
    };
    let mut txn = s.inst.txdb.begin(txn::Isolation::ReadCommitted);
    // Progress (SHOW PROCESSLIST): the statement's rows staged so far.
    s.proc.progress_init(1, "Bulk loading", "rows");
    let (result, warnings) = {
        let env = crate::env::StmtEnv::new(s, params);
        // This statement's KILL and deadline stop the load's merges meanwhile.
        if let Some(check) = crate::expr::Env::interrupt(&env) {
            b.load.set_interrupt(check);
        }
        let st = s.inst.catalog.state();
        let r = (|| -> Result<crate::dml::InsertResult> {
            let w = s.writer(&st);
            let mut ins = crate::dml::Inserter::new(p, &env, w)?;
            ins.how.null_default &= rows.len() > 1;
            for (rn, r) in rows.iter().enumerate() {
                // KILL QUERY stops the statement at the next row.
                crate::expr::Env::check_interrupt(&env)?;
                s.proc.progress_report(rn as u64, rows.len() as u64);
                let given = r
                    .iter()
                    .map(|e| e.as_ref().map(|e| e.eval(&[], &env)).transpose())
                    .collect::<Result<Vec<_>>>()?;
                ins.row(&mut txn, rn, given, Some(&mut b.load))?;
            }
            Ok(ins.res)
        })();
        (r, env.warnings.into_inner())
    };
    // All or nothing: the statement's rows join the load only if it succeeded.
    let result = match result {
        Ok(res) => match b.load.commit_stmt() {
            Ok(()) => Ok(res),
            Err(e) => {
                // Its files can no longer be trusted: the load is abandoned,
                // with the rows of the statements before.
                let e = e.bulk_load_lost(table_name(&b), b.load.rows());
                drop(b);
                for (level, w) in warnings {
                    s.warn(level, w);
                }
                return Err(e);
            }
        },
        Err(e) => {
            b.load.abort_stmt();
            Err(e)
        }
    };
    s.bulk = Some(b);
    for (level, w) in warnings {
        s.warn(level, w);
    }
    let res = result?;
    if let Some(id) = res.first_auto_id {
        s.last_insert_id = id;
    }
    s.row_count = res.affected as i64;
    Ok(Some(crate::result::Outcome {
        affected_rows: res.affected,
        last_insert_id: res.first_auto_id.unwrap_or(0),
        info: if rows.len() > 1 {
            format!("Records: {}  Duplicates: 0  Warnings: 0", rows.len())
        } else {
            String::new()
        },
        ..Default::default()
    }))
}
