//! TTL tables as MyRocks has them (issue 12 item 6): a table COMMENT
//! `ttl_duration=N;` (the row's insert/update time kept with it) or
//! `ttl_duration=N;ttl_col=c;` (a BIGINT UNSIGNED NOT NULL column). Expired rows
//! are hidden from reads (scans, point and index lookups, duplicate checks) at
//! the time the read view was taken, and removed by compactions (OPTIMIZE TABLE)
//! from the primary key and every secondary index, never while an older
//! snapshot can read them. Errors 4066/4069/4070 as MyRocks reports them.
//!
//! The TTL variables and test clock offsets are process-wide (as MyRocks'
//! are server-wide): the tests of this file run one at a time.
#![allow(clippy::unwrap_used)]

mod common;
use common::ttl::{insert_at, ttl_parent_with_children};
use common::{check_ok, fails, q, rows, session_in_d, TestDb};
use sql::Session;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the other tests of this file off and puts the TTL variables back.
struct Serial(#[allow(dead_code)] MutexGuard<'static, ()>);

fn serial() -> Serial {
    let g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    reset();
    Serial(g)
}

fn reset() {
    use std::sync::atomic::Ordering::Relaxed;
    rel::ttl::ENABLE.store(true, Relaxed);
    rel::ttl::READ_FILTERING.store(true, Relaxed);
    rel::ttl::DEBUG_REC_TS.store(0, Relaxed);
    rel::ttl::DEBUG_SNAPSHOT_TS.store(0, Relaxed);
    rel::ttl::DEBUG_READ_FILTER_TS.store(0, Relaxed);
}

impl Drop for Serial {
    fn drop(&mut self) {
        reset();
    }
}

/// Keys stored in the engine under index `id` (what compaction has not
/// removed), read raw at the latest state.
fn keys_of(inst: &sql::Instance, id: u32) -> usize {
    entries_of(inst, id).len()
}

/// The entries (key, value) stored in the engine under index `id`.
fn entries_of(inst: &sql::Instance, id: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let eng = inst.catalog.db();
    let lo = id.to_be_bytes().to_vec();
    let mut n = Vec::new();
    for cf in rel::cf::all(eng) {
        let mut it = eng
            .iter_cf(
                lsm::ReadOptions {
                    lower_bound: Some(lo.clone()),
                    upper_bound: Some((id + 1).to_be_bytes().to_vec()),
                    ..Default::default()
                },
                cf,
            )
            .unwrap();
        it.seek(&lo);
        while it.valid() {
            n.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
    }
    n
}

/// (primary index id, first secondary index id) of `d.name`.
fn ids(db: &TestDb, name: &str) -> (u32, u32) {
    let st = db.catalog.state();
    let t = st.table("d", name).unwrap();
    (t.def.pk.id, t.def.secondary[0].id)
}

#[test]
fn implicit_ttl_hides_expired_rows_and_compaction_removes_them() {
    let _g = serial();
    let db = TestDb::open("ttl-implicit");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT NOT NULL, c VARCHAR(10), KEY kb (b)) \
         COMMENT='ttl_duration=100;'",
    );
    insert_at(
        &mut s,
        -300,
        "INSERT INTO t VALUES (1, 10, 'old'), (2, 20, 'old')",
    );
    // 60 s old: 40 s left.
    insert_at(&mut s, -60, "INSERT INTO t VALUES (3, 30, 'young')");
    q(&mut s, "INSERT INTO t VALUES (4, 40, 'new')");
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["3", "4"]);
    assert_eq!(
        rows(&mut s, "SELECT a, c FROM t WHERE a = 1"),
        Vec::<String>::new()
    );
    assert_eq!(
        rows(&mut s, "SELECT a FROM t WHERE b = 10"),
        Vec::<String>::new()
    );
    // Covering index scan and the index-to-row path.
    assert_eq!(
        rows(&mut s, "SELECT b FROM t WHERE b > 0 ORDER BY b"),
        ["30", "40"]
    );
    assert_eq!(
        rows(&mut s, "SELECT c FROM t WHERE b >= 10 ORDER BY b"),
        ["young", "new"]
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["2"]);
    // Expired rows are not updated by statements that cannot see them.
    q(&mut s, "UPDATE t SET c = 'x' WHERE a <> 3");
    assert_eq!(rows(&mut s, "SELECT c FROM t ORDER BY a"), ["young", "x"]);
    // The clock moves on 50 s for reads: row 3 expires too.
    q(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = 50");
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["4"]);
    q(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = 0");
    // Without read filtering the rows not compacted yet show, unchanged.
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(
        rows(&mut s, "SELECT a, c FROM t ORDER BY a"),
        ["1|old", "2|old", "3|young", "4|x"]
    );
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
    // Stored until a compaction; then gone from the primary key and the index.
    let (pk, kb) = ids(&db, "t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (4, 4));
    // strata_enable_ttl = OFF: compactions keep them (and reads show them).
    q(&mut s, "SET GLOBAL strata_enable_ttl = OFF");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (4, 4));
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["4"]);
    q(&mut s, "SET GLOBAL strata_enable_ttl = ON");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (2, 2));
    assert_eq!(db.txdb.db().stats().compaction_filtered, 4);
    assert_eq!(
        rows(&mut s, "SELECT a, b, c FROM t ORDER BY a"),
        ["3|30|young", "4|40|x"]
    );
    check_ok(&mut s, "t");
    // The clock (strata_debug_ttl_snapshot_ts: compactions and reads) moves
    // on 50 s: row 3 goes.
    q(&mut s, "SET GLOBAL strata_debug_ttl_snapshot_ts = 50");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (1, 1));
    assert_eq!(rows(&mut s, "SELECT a FROM t WHERE b > 0"), ["4"]);
    check_ok(&mut s, "t");
}

#[test]
fn updates_restamp_rows_and_expired_rows_do_not_conflict() {
    let _g = serial();
    let db = TestDb::open("ttl-update");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, u INT, KEY ku (u), UNIQUE KEY uu (u)) \
         COMMENT='ttl_duration=100;'",
    );
    insert_at(&mut s, -90, "INSERT INTO t VALUES (1, 1), (2, 2)");
    // An update stamps the row with the current time: it lives on.
    q(&mut s, "UPDATE t SET u = 5 WHERE a = 2");
    // The clock moves on 20 s (reads and compactions alike).
    q(&mut s, "SET GLOBAL strata_debug_ttl_snapshot_ts = 20");
    assert_eq!(rows(&mut s, "SELECT a, u FROM t"), ["2|5"]);
    assert_eq!(rows(&mut s, "SELECT a FROM t WHERE u = 5"), ["2"]);
    assert_eq!(
        rows(&mut s, "SELECT a FROM t WHERE u = 1"),
        Vec::<String>::new()
    );
    // An expired row does not block its primary key or unique value (MyRocks).
    q(&mut s, "INSERT INTO t VALUES (1, 7)");
    q(&mut s, "INSERT INTO t VALUES (3, 1)");
    assert_eq!(fails(&mut s, "INSERT INTO t VALUES (4, 5)").0, 1062);
    assert_eq!(fails(&mut s, "INSERT INTO t VALUES (2, 9)").0, 1062);
    assert_eq!(
        rows(&mut s, "SELECT a, u FROM t ORDER BY a"),
        ["1|7", "2|5", "3|1"]
    );
    assert_eq!(rows(&mut s, "SELECT a FROM t WHERE u = 1"), ["3"]);
    assert_eq!(rows(&mut s, "SELECT u FROM t ORDER BY u"), ["1", "5", "7"]);
    check_ok(&mut s, "t");
    q(&mut s, "DELETE FROM t WHERE a = 3");
    assert_eq!(
        rows(&mut s, "SELECT a FROM t WHERE u = 1"),
        Vec::<String>::new()
    );
    // The replaced row's entries (u = 1 and 2 of the expired rows) go too.
    let (_, ku) = ids(&db, "t");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(keys_of(&db, ku), 2);
    check_ok(&mut s, "t");
    assert_eq!(
        rows(&mut s, "SELECT a, u FROM t ORDER BY a"),
        ["1|7", "2|5"]
    );
}

#[test]
fn ttl_column_gives_the_row_time() {
    let _g = serial();
    let db = TestDb::open("ttl-col");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, ts BIGINT UNSIGNED NOT NULL, KEY kts (ts)) \
         COMMENT='ttl_duration=100;ttl_col=ts;'",
    );
    q(
        &mut s,
        "INSERT INTO t VALUES (1, UNIX_TIMESTAMP() - 500), (2, UNIX_TIMESTAMP() - 50), \
         (3, UNIX_TIMESTAMP() + 1000)",
    );
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["2", "3"]);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t WHERE ts > 0"), ["2"]);
    // The row's time is the column: setting it back expires the row.
    q(&mut s, "UPDATE t SET ts = 1 WHERE a = 3");
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["2"]);
    let (pk, kts) = ids(&db, "t");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kts)), (1, 1));
    check_ok(&mut s, "t");
    assert!(common::show_create(&mut s, "t").contains("COMMENT='ttl_duration=100;ttl_col=ts;'"));
}

#[test]
fn an_open_snapshot_keeps_reading_rows_that_expire() {
    let _g = serial();
    let db = TestDb::open("ttl-snapshot");
    let mut s = session_in_d(&db);
    let mut a = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b)) COMMENT='ttl_duration=100;'",
    );
    // Two seconds to live.
    insert_at(&mut s, -98, "INSERT INTO t VALUES (1, 1), (2, 2)");
    q(&mut a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    assert_eq!(rows(&mut a, "SELECT COUNT(*) FROM t"), ["2"]);
    std::thread::sleep(std::time::Duration::from_millis(3100));
    // Expired for new reads...
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    // ...but the transaction reads at its snapshot's time, and compaction
    // leaves what its snapshot can read.
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(rows(&mut a, "SELECT a FROM t ORDER BY a"), ["1", "2"]);
    assert_eq!(rows(&mut a, "SELECT a FROM t WHERE b = 2"), ["2"]);
    let (pk, kb) = ids(&db, "t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (2, 2));
    q(&mut a, "COMMIT");
    assert_eq!(rows(&mut a, "SELECT COUNT(*) FROM t"), ["0"]);
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (0, 0));
}

/// Locking reads and duplicate checks read the latest versions, so they judge
/// expiry by the current time, not by an older read view's: a row another
/// transaction took as expired (and replaced under a unique key) must not come
/// back to life through a locking read of a transaction that started earlier.
#[test]
fn locking_reads_judge_expiry_now_not_at_the_snapshot() {
    let _g = serial();
    let db = TestDb::open("ttl-locking");
    let mut s = session_in_d(&db);
    let mut a = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY ku (u)) COMMENT='ttl_duration=100;'",
    );
    // Two seconds to live.
    insert_at(&mut s, -98, "INSERT INTO t VALUES (1, 7, 0)");
    q(&mut a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    assert_eq!(rows(&mut a, "SELECT id FROM t"), ["1"]);
    std::thread::sleep(std::time::Duration::from_millis(3100));
    // Expired now: its unique value is free.
    q(&mut s, "INSERT INTO t VALUES (2, 7, 0)");
    // The older transaction still reads row 1 at its snapshot, but a locking
    // read sees it expired: the UPDATE finds nothing, and SELECT ... FOR
    // UPDATE returns only the live row.
    assert_eq!(rows(&mut a, "SELECT id FROM t"), ["1"]);
    q(&mut a, "UPDATE t SET v = 1 WHERE id = 1");
    assert_eq!(
        rows(&mut a, "SELECT id FROM t WHERE u = 7 FOR UPDATE"),
        ["2"]
    );
    q(&mut a, "COMMIT");
    assert_eq!(rows(&mut s, "SELECT id, u, v FROM t"), ["2|7|0"]);
    // A unique index built later holds only the live row's value.
    insert_at(&mut s, -200, "INSERT INTO t VALUES (3, 8, 0)");
    q(&mut s, "INSERT INTO t VALUES (4, 8, 0)");
    q(&mut s, "ALTER TABLE t ADD UNIQUE KEY kv (u, v)");
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE u = 8 AND v = 0"),
        ["4"]
    );
    check_ok(&mut s, "t");
}

#[test]
fn bad_ttl_definitions_get_myrocks_errors() {
    let _g = serial();
    let db = TestDb::open("ttl-errors");
    let mut s = session_in_d(&db);
    let col = |c: &str| {
        format!(
            "TTL column ({c}) in MyRocks must be an unsigned non-null 64-bit integer, \
             exist inside the table, and have an accompanying ttl duration."
        )
    };
    for (sql, code, msg) in [
        (
            "CREATE TABLE t (a INT PRIMARY KEY, ts BIGINT UNSIGNED) COMMENT='ttl_duration=1;ttl_col=ts;'",
            4070,
            col("ts"),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY, ts INT UNSIGNED NOT NULL) COMMENT='ttl_duration=1;ttl_col=ts;'",
            4070,
            col("ts"),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY, ts BIGINT NOT NULL) COMMENT='ttl_duration=1;ttl_col=ts;'",
            4070,
            col("ts"),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY) COMMENT='ttl_duration=1;ttl_col=nope;'",
            4070,
            col("nope"),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY, ts BIGINT UNSIGNED NOT NULL) COMMENT='ttl_col=ts;'",
            4070,
            col("ts"),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY) COMMENT='ttl_duration=abc;'",
            4066,
            "TTL duration (abc) in MyRocks must be an unsigned non-null 64-bit integer.".into(),
        ),
        (
            "CREATE TABLE t (a INT PRIMARY KEY) COMMENT='ttl_duration=0;'",
            4066,
            "TTL duration (0) in MyRocks must be an unsigned non-null 64-bit integer.".into(),
        ),
        (
            "CREATE TABLE t (a INT) COMMENT='ttl_duration=10;'",
            4069,
            "TTL support is currently disabled when table has a hidden PK.".into(),
        ),
    ] {
        assert_eq!(fails(&mut s, sql), (code, msg), "{sql}");
    }
    let (code, msg) = fails(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY) COMMENT='ttl_duration=1;custom_p0_ttl_duration=5;'",
    );
    assert_eq!(code, 1235, "{msg}");
    assert!(msg.contains("per-partition TTL"), "{msg}");
    // ALTER TABLE keeps the comment: the TTL column must stay valid, and the
    // primary key.
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, ts BIGINT UNSIGNED NOT NULL, b INT) \
         COMMENT='ttl_duration=10;ttl_col=ts;'",
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t DROP COLUMN ts"),
        (4070, col("ts"))
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t RENAME COLUMN ts TO t2"),
        (4070, col("ts"))
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE t MODIFY ts BIGINT UNSIGNED NULL"),
        (4070, col("ts"))
    );
    assert_eq!(fails(&mut s, "ALTER TABLE t DROP PRIMARY KEY").0, 4069);
    // SET SESSION of the global-only variables fails; out-of-range offsets too.
    assert_eq!(fails(&mut s, "SET strata_enable_ttl = 0").0, 1229);
    assert_eq!(
        fails(&mut s, "SET GLOBAL strata_debug_ttl_rec_ts = 4000").0,
        1231
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@global.strata_enable_ttl, @@global.strata_enable_ttl_read_filtering"
        ),
        ["1|1"]
    );
}

#[test]
fn alter_restart_and_drop_keep_ttl_semantics() {
    let _g = serial();
    let dir = testkit::TempDir::new("ttl-restart");
    {
        let inst = common::open_at(&dir);
        let mut s = common::root_in_d(&inst);
        q(
            &mut s,
            "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b)) COMMENT='ttl_duration=100;'",
        );
        insert_at(&mut s, -300, "INSERT INTO t VALUES (1, 1)");
        insert_at(&mut s, -60, "INSERT INTO t VALUES (2, 2)");
        q(&mut s, "INSERT INTO t VALUES (3, 3)");
        // A rebuild (column added in the middle, index added) keeps each
        // row's time and leaves the expired row out.
        q(
            &mut s,
            "ALTER TABLE t ADD COLUMN c INT DEFAULT 7 AFTER a, ADD INDEX kc (c)",
        );
        q(&mut s, "CREATE INDEX kb2 ON t (b, a)");
        assert_eq!(
            rows(&mut s, "SELECT a, c FROM t ORDER BY a"),
            ["2|7", "3|7"]
        );
        check_ok(&mut s, "t");
        inst.shutdown().unwrap();
    }
    let inst = common::open_at(&dir);
    let mut s = common::root_in_d(&inst);
    assert!(common::show_create(&mut s, "t").contains("COMMENT='ttl_duration=100;'"));
    // Row 2 (60 s old) expires 50 s on, through every index.
    q(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = 50");
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["3"]);
    assert_eq!(
        rows(&mut s, "SELECT a FROM t WHERE b = 2"),
        Vec::<String>::new()
    );
    assert_eq!(rows(&mut s, "SELECT b FROM t WHERE b > 0"), ["3"]);
    q(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = 0");
    assert_eq!(rows(&mut s, "SELECT a FROM t ORDER BY a"), ["2", "3"]);
    // The compaction filter knows the table after the restart.
    q(&mut s, "SET GLOBAL strata_debug_ttl_snapshot_ts = 50");
    q(&mut s, "OPTIMIZE TABLE t");
    q(&mut s, "SET GLOBAL strata_debug_ttl_snapshot_ts = 0");
    let st = inst.catalog.state();
    let t = st.table("d", "t").unwrap().clone();
    drop(st);
    for ix in t.def.indexes() {
        assert_eq!(keys_of(&inst, ix.id), 1, "index {}", ix.name);
    }
    check_ok(&mut s, "t");
    q(&mut s, "DROP TABLE t");
    q(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    q(&mut s, "INSERT INTO t VALUES (1)");
    q(&mut s, "SET GLOBAL strata_debug_ttl_snapshot_ts = 3600");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(rows(&mut s, "SELECT a FROM t"), ["1"]);
}

/// The statements of `stale_entries_never_give_wrong_rows`, with their
/// answers: whatever the switches, an index gives only the rows the table has.
fn reads_through_kb_and_uc(s: &mut Session) {
    // Through the index to the row (the stale entry b = 10 points at key 1;
    // the range is the whole WHERE, so only the entry speaks for the row).
    assert_eq!(
        rows(
            s,
            "SELECT a, b FROM t FORCE INDEX (kb) WHERE b BETWEEN 10 AND 10"
        ),
        Vec::<String>::new()
    );
    // Covering.
    assert_eq!(
        rows(s, "SELECT a FROM t FORCE INDEX (kb) WHERE b = 10"),
        Vec::<String>::new()
    );
    assert_eq!(
        rows(s, "SELECT b FROM t FORCE INDEX (kb) WHERE b > 0 ORDER BY b"),
        ["20"]
    );
    assert_eq!(
        rows(s, "SELECT a FROM t FORCE INDEX (uc) WHERE c = 100"),
        Vec::<String>::new()
    );
    // Locking reads.
    assert_eq!(
        rows(
            s,
            "SELECT a FROM t FORCE INDEX (kb) WHERE b >= 10 FOR UPDATE"
        ),
        ["1"]
    );
    assert_eq!(rows(s, "SELECT a, b, c FROM t"), ["1|20|200"]);
}

/// Issue 12 (TTL review): an expired row's secondary entries must never lead
/// to another row, however the TTL switches are set. Entries outlive their
/// row when a new row takes its primary key (the insert now removes them) and
/// when a compaction removes the row before them (in another column family
/// here): reads with filtering off check an expired entry against the row its
/// key points at.
#[test]
fn stale_entries_never_give_wrong_rows() {
    let _g = serial();
    let db = TestDb::open("ttl-stale");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, c INT, KEY kb (b) COMMENT 'cfname=ttl_sk', \
         UNIQUE KEY uc (c) COMMENT 'cfname=ttl_sk') COMMENT='ttl_duration=100;'",
    );
    let (pk, kb) = ids(&db, "t");
    // 1. A new row takes an expired row's key: the old entries go with it.
    insert_at(&mut s, -300, "INSERT INTO t VALUES (1, 10, 100)");
    q(&mut s, "INSERT INTO t VALUES (1, 20, 200)");
    assert_eq!(keys_of(&db, kb), 1);
    for (enable, filter) in [(1, 0), (0, 1), (0, 0), (1, 1)] {
        q(&mut s, &format!("SET GLOBAL strata_enable_ttl = {enable}"));
        q(
            &mut s,
            &format!("SET GLOBAL strata_enable_ttl_read_filtering = {filter}"),
        );
        reads_through_kb_and_uc(&mut s);
    }
    check_ok(&mut s, "t");
    // 2. A compaction of the primary key's family removes an expired row
    // before its entries (in family ttl_sk), then a new row takes its key.
    q(&mut s, "DELETE FROM t");
    insert_at(&mut s, -300, "INSERT INTO t VALUES (1, 10, 100)");
    let eng = db.txdb.db();
    eng.flush().unwrap();
    eng.compact_range(lsm::DEFAULT_CF, None, None).unwrap();
    assert_eq!((keys_of(&db, pk), keys_of(&db, kb)), (0, 1));
    q(&mut s, "INSERT INTO t VALUES (1, 20, 200)");
    assert_eq!(keys_of(&db, kb), 2);
    for (enable, filter) in [(1, 0), (0, 1), (0, 0), (1, 1)] {
        q(&mut s, &format!("SET GLOBAL strata_enable_ttl = {enable}"));
        q(
            &mut s,
            &format!("SET GLOBAL strata_enable_ttl_read_filtering = {filter}"),
        );
        reads_through_kb_and_uc(&mut s);
        // The stale unique entry holds no value: c = 100 is free.
        q(&mut s, "INSERT INTO t VALUES (2, 30, 100)");
        assert_eq!(
            rows(&mut s, "SELECT a FROM t FORCE INDEX (uc) WHERE c = 100"),
            ["2"]
        );
        q(&mut s, "DELETE FROM t WHERE a = 2");
    }
    check_ok(&mut s, "t");
}

/// Foreign keys (MyRocks has none; InnoDB has no TTL): an expired child row
/// still stored is a child. RESTRICT keeps its parent (the child would
/// otherwise be left without one, visible again with read filtering off) and
/// CASCADE removes it with the parent.
#[test]
fn foreign_keys_see_expired_children_until_removed() {
    let _g = serial();
    let db = TestDb::open("ttl-fk");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, KEY kp (pid), \
         FOREIGN KEY (pid) REFERENCES p (id)) COMMENT='ttl_duration=100;'",
    );
    q(
        &mut s,
        "CREATE TABLE cc (id INT PRIMARY KEY, pid INT, KEY kp (pid), \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE) COMMENT='ttl_duration=100;'",
    );
    q(&mut s, "INSERT INTO p VALUES (1), (2)");
    insert_at(&mut s, -300, "INSERT INTO c VALUES (1, 1)");
    insert_at(&mut s, -300, "INSERT INTO cc VALUES (1, 2)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM c"), ["0"]);
    assert_eq!(fails(&mut s, "DELETE FROM p WHERE id = 1").0, 1451);
    q(&mut s, "DELETE FROM p WHERE id = 2");
    let (cc_pk, cc_kp) = ids(&db, "cc");
    assert_eq!((keys_of(&db, cc_pk), keys_of(&db, cc_kp)), (0, 0));
    // Once a compaction removed the child, the parent may go.
    q(&mut s, "OPTIMIZE TABLE c");
    q(&mut s, "DELETE FROM p WHERE id = 1");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM p"), ["0"]);
}

/// strata_debug_ttl_read_filter_ts moves reads' clock ahead of compactions'
/// only: a negative offset would show rows that compactions remove at any
/// moment.
#[test]
fn read_filter_offset_is_never_negative() {
    let _g = serial();
    let db = TestDb::open("ttl-negative");
    let mut s = session_in_d(&db);
    assert_eq!(
        fails(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = -1"),
        (
            1231,
            "Variable 'strata_debug_ttl_read_filter_ts' can't be set to the value of '-1'".into()
        )
    );
    q(&mut s, "SET GLOBAL strata_debug_ttl_read_filter_ts = 0");
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY) COMMENT='ttl_duration=100;'",
    );
    insert_at(&mut s, -120, "INSERT INTO t VALUES (1)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    // Set directly (as a misbehaving caller would): still never behind.
    rel::ttl::DEBUG_READ_FILTER_TS.store(-60, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
}

/// What the compaction filter guarantees snapshots: a version a live snapshot
/// can read is never removed, so with read filtering off a transaction's
/// snapshot keeps showing expired rows through compactions; a snapshot taken
/// while a compaction runs is not protected (docs/ARCHITECTURE.md).
#[test]
fn a_snapshot_keeps_expired_rows_with_filtering_off() {
    let _g = serial();
    let db = TestDb::open("ttl-snapshot-off");
    let mut s = session_in_d(&db);
    let mut a = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b)) COMMENT='ttl_duration=100;'",
    );
    insert_at(&mut s, -300, "INSERT INTO t VALUES (1, 1), (2, 2)");
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    q(&mut a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    assert_eq!(rows(&mut a, "SELECT a FROM t ORDER BY a"), ["1", "2"]);
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(rows(&mut a, "SELECT a FROM t ORDER BY a"), ["1", "2"]);
    assert_eq!(rows(&mut a, "SELECT a FROM t WHERE b = 2"), ["2"]);
    q(&mut a, "COMMIT");
    q(&mut s, "OPTIMIZE TABLE t");
    assert_eq!(rows(&mut a, "SELECT COUNT(*) FROM t"), ["0"]);
}

/// Review 2 of issue 12: INSERT IGNORE of a row that would replace an expired
/// one but fails a unique check leaves the expired row whole (its secondary
/// entries were removed before the check, and IGNORE went on): with read
/// filtering off it is found through its indexes and holds its unique value.
#[test]
fn insert_ignore_over_an_expired_row_leaves_it_whole() {
    let _g = serial();
    let db = TestDb::open("ttl-ignore");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, c INT, KEY kb (b), UNIQUE KEY uc (c)) \
         COMMENT='ttl_duration=100;'",
    );
    insert_at(&mut s, -300, "INSERT INTO t VALUES (1, 10, 100)");
    q(&mut s, "INSERT INTO t VALUES (2, 20, 200)");
    // Row 1 has expired; the new row 1 would take c = 200, which row 2 holds.
    q(&mut s, "INSERT IGNORE INTO t VALUES (1, 30, 200)");
    assert_eq!(rows(&mut s, "SELECT a, b, c FROM t"), ["2|20|200"]);
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(
        rows(&mut s, "SELECT a, b, c FROM t ORDER BY a"),
        ["1|10|100", "2|20|200"]
    );
    assert_eq!(
        rows(&mut s, "SELECT a FROM t FORCE INDEX (kb) WHERE b = 10"),
        ["1"]
    );
    assert_eq!(
        rows(&mut s, "SELECT a FROM t FORCE INDEX (uc) WHERE c = 100"),
        ["1"]
    );
    assert_eq!(fails(&mut s, "INSERT INTO t VALUES (3, 40, 100)").0, 1062);
    check_ok(&mut s, "t");
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = ON");
    // A row that passes the checks still replaces it, entries and all.
    q(&mut s, "INSERT IGNORE INTO t VALUES (1, 30, 300)");
    assert_eq!(
        rows(
            &mut s,
            "SELECT a FROM t FORCE INDEX (kb) WHERE b > 0 ORDER BY b"
        ),
        ["2", "1"]
    );
    check_ok(&mut s, "t");
}

/// Review 2 of issue 12: a compaction judges expiry by the clock read with
/// its snapshot list (`lsm::FilterContext::unix_time`), not by the clock when
/// its filter is made: a snapshot taken in between is not protected by the
/// compaction, and reads at its own time the rows that had not expired then.
#[test]
fn the_compaction_filter_judges_by_the_clock_of_its_snapshot_list() {
    use lsm::{CompactionFilterFactory, Decision};
    let _g = serial();
    let db = TestDb::open("ttl-filter-clock");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, KEY kb (b)) COMMENT='ttl_duration=100;'",
    );
    insert_at(&mut s, -150, "INSERT INTO t VALUES (1, 1)");
    let (pk, kb) = ids(&db, "t");
    let st = db.catalog.state();
    let t = st.table("d", "t").unwrap();
    let reg = std::sync::Arc::new(rel::ttl::Registry::default());
    reg.refresh(std::iter::once(&**t));
    let factory = rel::ttl::FilterFactory(reg);
    let now = rel::ttl::unix_now();
    // Expired 50 s ago: kept by a compaction whose list is 60 s old.
    for (at, want) in [(now - 60, Decision::Keep), (now, Decision::Remove)] {
        let f = factory
            .create(&lsm::FilterContext {
                cf: 0,
                output_level: 6,
                bottommost: true,
                unix_time: at,
            })
            .unwrap();
        for id in [pk, kb] {
            let e = entries_of(&db, id);
            assert_eq!(e.len(), 1);
            assert_eq!(f.filter(6, &e[0].0, &e[0].1), want, "index {id} at {at}");
        }
    }
}

/// Review 2 of issue 12: ON UPDATE CASCADE and SET NULL never bring an
/// expired child back (a rewrite stamps the row with the current time), nor
/// fail on its unique values (1062 for a row no statement sees): a child that
/// reads hide is deleted instead, so no stored child is left without parent.
#[test]
fn cascades_do_not_revive_expired_children() {
    let _g = serial();
    let db = TestDb::open("ttl-fk-revive");
    let mut s = session_in_d(&db);
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, u INT, KEY kp (pid), UNIQUE KEY uu (u), \
         FOREIGN KEY (pid) REFERENCES p (id) ON UPDATE CASCADE) COMMENT='ttl_duration=100;'",
    );
    q(
        &mut s,
        "CREATE TABLE n (id INT PRIMARY KEY, pid INT, KEY kp (pid), \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET NULL) \
         COMMENT='ttl_duration=100;'",
    );
    q(&mut s, "INSERT INTO p VALUES (1), (2), (5)");
    insert_at(&mut s, -300, "INSERT INTO c VALUES (1, 1, 7)");
    insert_at(&mut s, -300, "INSERT INTO n VALUES (1, 1), (2, 2)");
    // Live rows: u = 7 is free (the expired row holds nothing).
    q(&mut s, "INSERT INTO c VALUES (2, 5, 7)");
    q(&mut s, "INSERT INTO n VALUES (3, 5)");
    q(&mut s, "UPDATE p SET id = 3 WHERE id = 1");
    q(&mut s, "DELETE FROM p WHERE id = 2");
    q(&mut s, "UPDATE p SET id = 6 WHERE id = 5");
    assert_eq!(rows(&mut s, "SELECT id, pid, u FROM c"), ["2|6|7"]);
    assert_eq!(rows(&mut s, "SELECT id, pid FROM n"), ["3|NULL"]);
    // Not just hidden: gone, so no stored child points at a missing parent.
    q(&mut s, "SET GLOBAL strata_enable_ttl_read_filtering = OFF");
    assert_eq!(rows(&mut s, "SELECT id, pid, u FROM c"), ["2|6|7"]);
    assert_eq!(rows(&mut s, "SELECT id, pid FROM n"), ["3|NULL"]);
    check_ok(&mut s, "c");
    check_ok(&mut s, "n");
    // With read filtering off an expired child is a visible row, and is
    // rewritten as an UPDATE of it would be.
    insert_at(&mut s, -300, "INSERT INTO n VALUES (4, 3)");
    q(&mut s, "UPDATE p SET id = 4 WHERE id = 3");
    assert_eq!(
        rows(&mut s, "SELECT id, pid FROM n ORDER BY id"),
        ["3|NULL", "4|NULL"]
    );
}

/// Review 2 of issue 12: a row that takes the primary key of an expired
/// parent row replaces it (expired is absent, as in MyRocks): the children of
/// the values the old row held and the new one does not get the ON DELETE
/// action, so none is left pointing at a parent value no row has.
#[test]
fn inserting_over_an_expired_parent_acts_on_its_children() {
    let _g = serial();
    let db = TestDb::open("ttl-fk-parent");
    let mut s = session_in_d(&db);
    ttl_parent_with_children(&mut s, "INT", &["id", "k"]);
    insert_at(
        &mut s,
        -300,
        "INSERT INTO p VALUES (1, 10), (2, 20), (3, 3)",
    );
    q(&mut s, "INSERT INTO c VALUES (1, 10), (2, 20)");
    q(&mut s, "INSERT INTO r VALUES (3, 3)");
    // Row 1 comes back with another k: its old value's children go.
    q(&mut s, "INSERT INTO p VALUES (1, 11)");
    // Row 2 keeps its value: its children stay.
    q(&mut s, "INSERT INTO p VALUES (2, 20)");
    assert_eq!(rows(&mut s, "SELECT id, pk FROM c"), ["2|20"]);
    // RESTRICT: the value another table needs stays.
    assert_eq!(fails(&mut s, "INSERT INTO p VALUES (3, 4)").0, 1451);
    q(&mut s, "INSERT INTO p VALUES (3, 3)");
    assert_eq!(
        rows(&mut s, "SELECT id, k FROM p ORDER BY id"),
        ["1|11", "2|20", "3|3"]
    );
    check_ok(&mut s, "c");
}

/// ALTER TABLE ... COMMENT would change a table's TTL (MyRocks allows it);
/// Strata does not, so it is refused with 1235 (it was a parse error, 1064),
/// never accepted with the TTL left as it was.
#[test]
fn alter_table_comment_is_refused_and_the_ttl_kept() {
    let _g = serial();
    let db = TestDb::open("ttl-alter-comment");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, a INT) COMMENT='ttl_duration=100;'",
    );
    q(&mut s, "CREATE TABLE n (id INT PRIMARY KEY, a INT)");
    for sql in [
        "ALTER TABLE u COMMENT = 'ttl_duration=5000;'",
        "ALTER TABLE n COMMENT 'ttl_duration=100;'",
        "ALTER TABLE u ADD b INT, COMMENT = 'plain'",
    ] {
        let (code, msg) = fails(&mut s, sql);
        assert_eq!(code, 1235, "{sql}: {msg}");
        assert!(msg.contains("ALTER TABLE ... COMMENT"), "{msg}");
    }
    assert!(common::show_create(&mut s, "u").ends_with("COMMENT='ttl_duration=100;'"));
    assert!(!common::show_create(&mut s, "n").contains("COMMENT"));
    // A column's comment is not the table's.
    q(&mut s, "ALTER TABLE n ADD c INT COMMENT 'ttl_duration=1;'");
    assert!(!common::show_create(&mut s, "n").contains("COMMENT='"));
}
