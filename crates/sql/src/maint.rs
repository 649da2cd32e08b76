//! Table maintenance and locking statements: CHECK TABLE (the engine-level
//! check in `rel::check`), ANALYZE TABLE (statistics in `rel::stats`), FLUSH, LOCK / UNLOCK TABLES.
use crate::error::{Result, SqlError};
use crate::result::{ok, rows, text, Outcome, ResultSink};
use crate::session::Session;
use crate::stmt::MaintStmt;

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
                    None => {
                        out.push(vec![
                            label.clone(),
                            text("check"),
                            text("Error"),
                            text(format!("Table '{db}.{t}' doesn't exist")),
                        ]);
                        out.push(vec![
                            label,
                            text("check"),
                            text("status"),
                            text("Operation failed"),
                        ]);
                    }
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
        MaintStmt::Flush(what) => {
            let up = what.to_ascii_uppercase();
            if up.contains("READ LOCK") || up.contains("FOR EXPORT") {
                return Err(SqlError::unsupported(
                    "FLUSH TABLES WITH READ LOCK and FLUSH TABLES ... FOR EXPORT",
                ));
            }
            ok()
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
