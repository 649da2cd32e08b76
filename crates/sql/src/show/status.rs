//! SHOW STATUS: the server's counters (including the engine's bytes
//! written per source and lock statistics).
use crate::session::Session;
use rel::value::Value;

/// SHOW STATUS variables.
pub fn status(s: &Session) -> Vec<(String, Value)> {
    let inst = &s.inst;
    let e = inst.txdb.db().stats();
    let t = inst.txdb.stats();
    let u = |v: u64| Value::UInt(v);
    let mut v: Vec<(String, Value)> = vec![
        ("Uptime".into(), u(inst.started.elapsed().as_secs())),
        ("Threads_connected".into(), u(inst.threads_connected())),
        ("Questions".into(), u(inst.questions())),
        ("Connections".into(), u(inst.connections())),
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
    ];
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
