//! SHOW STATUS: the server's counters (including the engine's bytes
//! written per source and lock statistics).
use crate::session::Session;
use crate::Instance;
use rel::value::Value;
use std::sync::atomic::Ordering;

/// SHOW [GLOBAL | SESSION] STATUS variables: Com_* and Questions are the
/// session's unless `global`, the others the server's.
pub fn status(s: &Session, global: bool) -> Vec<(String, Value)> {
    collect(&s.inst, (!global).then_some(s), Some(s))
}

/// The server's GLOBAL STATUS variables, without a session (the metrics
/// endpoint).
pub fn global_status(inst: &Instance) -> Vec<(String, Value)> {
    collect(inst, None, None)
}

/// Status variables: Com_* and Questions of `session` if given, the Ssl_*
/// values of `conn`'s connection.
fn collect(
    inst: &Instance,
    session: Option<&Session>,
    conn: Option<&Session>,
) -> Vec<(String, Value)> {
    let e = inst.txdb.db().stats();
    let t = inst.txdb.stats();
    let u = |v: u64| Value::UInt(v);
    let c = &inst.counters;
    let r = |a: &std::sync::atomic::AtomicU64| u(a.load(Ordering::Relaxed));
    let tls = |f: fn(&crate::session::TlsInfo) -> &String| {
        Value::Bytes(
            conn.and_then(|s| s.tls.as_ref())
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
        let n = match session {
            None => inst.com.get(i),
            Some(s) => s.com.get(i).copied().unwrap_or(0),
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
            u(session.map_or(inst.questions(), |s| s.questions)),
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
    // The session's loads (SESSION), or the server's (GLOBAL).
    let bulk = match session {
        Some(s) => s.bulk_counts,
        None => crate::bulk::Counts {
            rows: crate::bulk::BULK_ROWS.load(Relaxed),
            streamed: crate::bulk::BULK_STREAMED.load(Relaxed),
            read_back: crate::bulk::BULK_READ_BACK.load(Relaxed),
        },
    };
    v.push(("Strata_bulk_load_read_back".into(), u(bulk.read_back)));
    v.push(("Strata_bulk_load_rows".into(), u(bulk.rows)));
    v.push(("Strata_bulk_load_streamed".into(), u(bulk.streamed)));
    let db = inst.txdb.db();
    v.push((
        "Strata_pending_compaction_bytes".into(),
        u(db.pending_compaction_bytes(lsm::DEFAULT_CF)),
    ));
    for (level, (files, bytes)) in db.level_summary(lsm::DEFAULT_CF).into_iter().enumerate() {
        v.push((format!("Strata_l{level}_files"), u(files as u64)));
        v.push((format!("Strata_l{level}_bytes"), u(bytes)));
    }
    v.push(("Strata_block_cache_usage".into(), u(db.block_cache_usage())));
    v.push(("Strata_snapshots".into(), u(db.snapshot_count() as u64)));
    v.push((
        "Strata_pending_reclaims".into(),
        u(db.pending_reclaims() as u64),
    ));
    for (k, val) in e.pairs() {
        v.push((format!("Strata_{k}"), u(val)));
    }
    v
}
