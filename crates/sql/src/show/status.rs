//! SHOW STATUS: the server's counters (including the engine's bytes
//! written per source and lock statistics).
use crate::session::Session;
use rel::value::Value;
use std::sync::atomic::Ordering;

/// SHOW [GLOBAL | SESSION] STATUS variables: Com_* and Questions are the
/// session's unless `global`, the others the server's.
pub fn status(s: &Session, global: bool) -> Vec<(String, Value)> {
    let inst = &s.inst;
    let e = inst.txdb.db().stats();
    let t = inst.txdb.stats();
    let u = |v: u64| Value::UInt(v);
    let c = &inst.counters;
    let r = |a: &std::sync::atomic::AtomicU64| u(a.load(Ordering::Relaxed));
    let tls = |f: fn(&crate::session::TlsInfo) -> &String| {
        Value::Bytes(
            s.tls
                .as_ref()
                .map(f)
                .cloned()
                .unwrap_or_default()
                .into_bytes(),
        )
    };
    let mut v: Vec<(String, Value)> = vec![
        ("Aborted_clients".into(), r(&c.aborted_clients)),
        ("Aborted_connects".into(), r(&c.aborted_connects)),
    ];
    for (i, name) in crate::com::NAMES.iter().enumerate() {
        let n = if global {
            inst.com.get(i)
        } else {
            s.com.get(i).copied().unwrap_or(0)
        };
        v.push((format!("Com_{name}"), u(n)));
    }
    v.extend([
        ("Connections".into(), u(inst.connections())),
        (
            "Max_statement_time_exceeded".into(),
            r(&c.statement_timeouts),
        ),
        ("Max_used_connections".into(), r(&c.max_used)),
        ("Prepared_stmt_count".into(), r(&inst.prepared)),
        ("Queries".into(), u(inst.questions())),
        (
            "Questions".into(),
            u(if global {
                inst.questions()
            } else {
                s.questions
            }),
        ),
        ("Slow_queries".into(), r(&c.slow_queries)),
        // The connection's TLS (GLOBAL shows the session's too, as MariaDB does).
        ("Ssl_cipher".into(), tls(|t| &t.cipher)),
        ("Ssl_version".into(), tls(|t| &t.version)),
        ("Threads_connected".into(), u(inst.threads_connected())),
        ("Threads_created".into(), u(inst.connections())),
        ("Threads_running".into(), u(inst.procs.running())),
        ("Uptime".into(), u(inst.started.elapsed().as_secs())),
    ]);
    v.extend([
        ("Strata_panics".into(), u(inst.panics())),
        ("Innodb_row_lock_waits".into(), u(t.row_lock_waits)),
        (
            "Innodb_row_lock_current_waits".into(),
            u(t.row_lock_current_waits),
        ),
        (
            "Innodb_row_lock_time".into(),
            u(t.row_lock_time_micros / 1000),
        ),
        (
            "Innodb_row_lock_time_max".into(),
            u(t.row_lock_time_max_micros / 1000),
        ),
        ("Strata_lock_wait_timeouts".into(), u(t.lock_wait_timeouts)),
        ("Strata_deadlocks".into(), u(t.deadlocks)),
        ("Strata_commits".into(), u(t.commits)),
        ("Strata_rollbacks".into(), u(t.rollbacks)),
        (
            "Strata_live_table_bytes".into(),
            u(inst.txdb.db().live_table_bytes()),
        ),
    ]);
    use crate::ddl::sortbuild as sb;
    use std::sync::atomic::Ordering::Relaxed;
    v.push((
        "Strata_sorted_index_builds".into(),
        u(sb::SORTED_BUILDS.load(Relaxed)),
    ));
    v.push((
        "Strata_sorted_index_runs".into(),
        u(sb::SORTED_RUNS.load(Relaxed)),
    ));
    v.push((
        "Strata_bulk_load_rows".into(),
        u(crate::bulk::BULK_ROWS.load(Relaxed)),
    ));
    let db = inst.txdb.db();
    v.push((
        "Strata_pending_compaction_bytes".into(),
        u(db.pending_compaction_bytes(lsm::DEFAULT_CF)),
    ));
    for (level, (files, bytes)) in db.level_summary(lsm::DEFAULT_CF).into_iter().enumerate() {
        v.push((format!("Strata_l{level}_files"), u(files as u64)));
        v.push((format!("Strata_l{level}_bytes"), u(bytes)));
    }
    for (k, val) in e.pairs() {
        v.push((format!("Strata_{k}"), u(val)));
    }
    v
}
