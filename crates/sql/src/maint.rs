//! Table maintenance and locking statements: CHECK TABLE (the engine-level
//! check in `rel::check`), ANALYZE TABLE (statistics in `rel::stats`),
//! OPTIMIZE TABLE (each index's key range compacted down to the last level,
//! as MyRocks' OPTIMIZE: deleted and overwritten entries dropped), REPAIR
//! TABLE (nothing to repair: a note per table, as MariaDB's InnoDB), FLUSH,
//! LOCK / UNLOCK TABLES.
use crate::error::{Result, SqlError};
use crate::result::{ok, rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::MaintStmt;
use rel::value::Value;

/// The two rows of a table operation that failed: the error, then the
/// status (MariaDB's shape).
fn failed(label: &Value, op: &str, msg: String) -> [Vec<Value>; 2] {
    [
        vec![label.clone(), text(op), text("Error"), text(msg)],
        vec![
            label.clone(),
            text(op),
            text("status"),
            text("Operation failed"),
        ],
    ]
}

/// Compacts the key range of each of the table's indexes (primary and
/// secondary) down to the engine's last level.
fn optimize(db: &lsm::Db, def: &rel::schema::TableDef) -> lsm::Result<()> {
    for ix in def.indexes() {
        let lo = rel::keycodec::index_prefix(ix.id);
        let hi = rel::keycodec::index_prefix(ix.id + 1);
        let cf = rel::cf::of(db, ix)?;
        let (a, b) = rel::keyrange::span(rel::keyrange::reversed(db, cf), &lo, &hi);
        db.compact_range(cf, Some(a), Some(b))?;
    }
    Ok(())
}

/// Runs a maintenance statement.
pub fn run(s: &mut Session, stmt: &MaintStmt, sink: &mut dyn ResultSink) -> Result<Outcome> {
    match stmt {
        MaintStmt::Backup(dir) => crate::backup::run(s, dir, sink),
        MaintStmt::Kill { connection, target } => {
            crate::procs::kill(s, *connection, target)?;
            crate::result::ok()
        }
        MaintStmt::Check(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let st = s.inst.catalog.state();
                let label = text(format!("{db}.{t}"));
                match st.table(&db, t) {
                    None => out.extend(failed(
                        &label,
                        "check",
                        format!("Table '{db}.{t}' doesn't exist"),
                    )),
                    Some(table) => {
                        let rep = rel::check::check_table(s.inst.txdb.db(), table)?;
                        for e in &rep.errors {
                            out.push(vec![label.clone(), text("check"), text("Error"), text(e)]);
                        }
                        let status = if rep.errors.is_empty() {
                            "OK"
                        } else {
                            "Corrupt"
                        };
                        out.push(vec![label, text("check"), text("status"), text(status)]);
                    }
                }
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        MaintStmt::Analyze(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let table = s.inst.catalog.state().table(&db, t).cloned();
                if let Some(table) = &table {
                    // Statistics for the planner (rel::stats), stored.
                    let stats = rel::stats::analyze(s.inst.txdb.db(), table, &|| false)?;
                    s.inst.catalog.store_stats(table, stats)?;
                }
                out.push(vec![
                    text(format!("{db}.{t}")),
                    text("analyze"),
                    text("status"),
                    text(if table.is_some() {
                        "OK"
                    } else {
                        "Table doesn't exist"
                    }),
                ]);
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        MaintStmt::Optimize(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let table = s.inst.catalog.state().table(&db, t).cloned();
                let label = text(format!("{db}.{t}"));
                let Some(table) = table else {
                    out.extend(failed(
                        &label,
                        "optimize",
                        format!("Table '{db}.{t}' doesn't exist"),
                    ));
                    continue;
                };
                match optimize(s.inst.txdb.db(), &table.def) {
                    Ok(()) => out.push(vec![label, text("optimize"), text("status"), text("OK")]),
                    Err(e) => out.extend(failed(&label, "optimize", e.to_string())),
                }
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        MaintStmt::Repair(tables) => {
            let mut out = Vec::new();
            for (db, t) in tables {
                let db = db.clone().or(s.db.clone()).ok_or_else(SqlError::no_db)?;
                let label = text(format!("{db}.{t}"));
                if s.inst.catalog.state().table(&db, t).is_none() {
                    let msg = format!("Table '{db}.{t}' doesn't exist");
                    out.extend(failed(&label, "repair", msg));
                    continue;
                }
                let msg = "The storage engine for the table doesn't support repair";
                out.push(vec![label, text("repair"), text("note"), text(msg)]);
            }
            rows(sink, &["Table", "Op", "Msg_type", "Msg_text"], out)
        }
        MaintStmt::Flush(what) => {
            let up = what.to_ascii_uppercase();
            if up.contains("READ LOCK") || up.contains("FOR EXPORT") {
                return Err(SqlError::unsupported(
                    "FLUSH TABLES WITH READ LOCK and FLUSH TABLES ... FOR EXPORT",
                ));
            }
            if up.contains("LOGS") {
                crate::binlogsql::flush(s)?;
            }
            if up.contains("PRIVILEGES") {
                // As MySQL: caching_sha2_password accounts authenticate in full again.
                s.inst.sha2_cache.clear();
            }
            ok()
        }
        MaintStmt::Purge { to, before } => {
            crate::binlogsql::purge(s, to.as_deref(), before.as_deref())
        }
        MaintStmt::ResetMaster { to } => {
            // An implicit commit, as in MariaDB: the open transaction is
            // committed before the log starts again (and is not in it).
            s.commit()?;
            crate::binlogsql::reset_master(s, *to)
        }
        MaintStmt::LockTables => {
            s.warn(
                "Warning",
                SqlError::not_honoured("LOCK TABLES does not lock in Strata yet: other sessions can still read and write these tables"),
            );
            ok()
        }
        MaintStmt::UnlockTables => ok(),
        MaintStmt::Keys { db, table } => {
            let db = db
                .clone()
                .or_else(|| s.db.clone())
                .ok_or_else(SqlError::no_db)?;
            let st = s.inst.catalog.state();
            if st.table(&db, table).is_none() {
                return Err(SqlError::no_table(format!("{db}.{table}")));
            }
            // Strata maintains every index on every write, as InnoDB does.
            s.warn("Note", SqlError::illegal_ha(&db, table));
            ok()
        }
    }
}
