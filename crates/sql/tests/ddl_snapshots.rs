//! DDL against open read views: a REPEATABLE READ snapshot older than a table
//! (created, rebuilt, truncated or given a new index after it) must not read
//! the table's new index ids as if they were empty, and readers during an
//! online index build must not plan through the half-built index.
mod common;
use common::{check_ok, err, has_entries, orphan_index_ids, q, texts, TestDb};

fn t(s: &mut sql::Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

/// d.t with `n` rows (id, v = id % 100, 100 bytes of padding): enough for an
/// index build to take a while. Returns a session in d and `n`.
fn big_table(db: &TestDb) -> (sql::Session, u64) {
    let mut s = db.session(1, "root", None);
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, pad VARCHAR(100))",
    );
    let n = 60_000u64;
    for chunk in 0..(n / 1000) {
        let vals: Vec<String> = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                format!("({id}, {}, REPEAT('x', 100))", id % 100)
            })
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    (s, n)
}

#[test]
fn old_snapshots_do_not_read_newer_tables_as_empty() {
    let db = TestDb::open("sql-ddl-snap");
    let mut b = db.session(2, "root", None);
    q(&mut b, "CREATE DATABASE d");
    q(&mut b, "USE d");
    q(&mut b, "SET lock_wait_timeout = 1");
    q(&mut b, "CREATE TABLE t1 (id INT PRIMARY KEY, v INT)");
    q(&mut b, "INSERT INTO t1 VALUES (1, 1), (2, 2)");
    let mut a = db.session(1, "root", Some("d".into()));
    q(&mut a, "BEGIN");
    assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t1"), ["2"]);
    // A table created after A's snapshot: MySQL's 1412, not an empty table.
    q(&mut b, "CREATE TABLE t2 (id INT PRIMARY KEY)");
    q(&mut b, "INSERT INTO t2 VALUES (1)");
    assert_eq!(err(&mut a, "SELECT * FROM t2"), 1412);
    // The table A read is rebuilt (or waits for A): A never reads it empty.
    let r = {
        let mut c = sql::result::Collect::default();
        b.query("ALTER TABLE t1 MODIFY v BIGINT", &mut c)
            .map(|_| ())
    };
    match r {
        Ok(()) => assert_eq!(err(&mut a, "SELECT COUNT(*) FROM t1"), 1412),
        Err(e) => {
            assert_eq!(e.code, 1205, "{e:?}");
            assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t1"), ["2"]);
        }
    }
    q(&mut a, "COMMIT");
    assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t1"), ["2"]);
    assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t2"), ["1"]);
    // TRUNCATE after a snapshot: the old snapshot must not see the new, empty ids as its data.
    q(&mut a, "BEGIN");
    assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t2"), ["1"]);
    let r = {
        let mut c = sql::result::Collect::default();
        b.query("TRUNCATE TABLE t2", &mut c).map(|_| ())
    };
    match r {
        Ok(()) => assert_eq!(err(&mut a, "SELECT COUNT(*) FROM t2"), 1412),
        Err(e) => {
            assert_eq!(e.code, 1205, "{e:?}");
            assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t2"), ["1"]);
        }
    }
    q(&mut a, "COMMIT");
}

#[test]
fn readers_during_an_index_build_get_every_row() {
    let db = TestDb::open("sql-ddl-build");
    let (mut s, n) = big_table(&db);
    let inst = db.inst.clone();
    let builder = std::thread::spawn(move || {
        let mut b = inst.session(2, "root", Some("d".into()));
        q(&mut b, "CREATE INDEX iv ON t (v)");
    });
    let mut reads = 0;
    while !builder.is_finished() {
        assert_eq!(
            t(&mut s, "SELECT COUNT(*) FROM t WHERE v = 7"),
            [(n / 100).to_string()],
            "read {reads} during the index build"
        );
        reads += 1;
    }
    builder.join().unwrap();
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t WHERE v = 7"),
        [(n / 100).to_string()]
    );
    eprintln!("{reads} reads during the build");
}

/// Writers updating, deleting and inserting rows while CREATE INDEX fills
/// the index from its snapshot: afterwards the index holds exactly one entry
/// per row, with the row's current values (CHECK TABLE, and counts through
/// the index equal to counts through the primary key).
#[test]
fn writers_during_an_index_build_leave_it_exact() {
    let db = TestDb::open("sql-ddl-build-writers");
    let (mut s, n) = big_table(&db);
    let seed = testkit::seed("writers_during_an_index_build_leave_it_exact");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let inst = db.inst.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut w = inst.session(3, "root", Some("d".into()));
            let mut rng = testkit::Rng::new(seed);
            let mut ops = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || ops < 200 {
                let id = rng.below(n);
                match rng.below(3) {
                    0 => q(
                        &mut w,
                        &format!("UPDATE t SET v = v + 1000 WHERE id = {id}"),
                    ),
                    1 => q(&mut w, &format!("DELETE FROM t WHERE id = {id}")),
                    _ => q(
                        &mut w,
                        &format!("REPLACE INTO t VALUES ({}, {}, 'new')", n + ops, ops % 7),
                    ),
                };
                ops += 1;
            }
            ops
        })
    };
    q(&mut s, "CREATE INDEX iv ON t (v)");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let ops = writer.join().unwrap();
    eprintln!("{ops} writes during the build");
    check_ok(&mut s, "t");
    let via_pk = t(&mut s, "SELECT COUNT(*), SUM(v) FROM t IGNORE INDEX (iv)");
    let via_ix = t(
        &mut s,
        "SELECT COUNT(*), SUM(v) FROM t FORCE INDEX (iv) WHERE v >= 0",
    );
    assert_eq!(via_pk, via_ix);
    for v in [0, 7, 1007, 2007] {
        assert_eq!(
            t(
                &mut s,
                &format!("SELECT COUNT(*) FROM t IGNORE INDEX (iv) WHERE v = {v}")
            ),
            t(
                &mut s,
                &format!("SELECT COUNT(*) FROM t FORCE INDEX (iv) WHERE v = {v}")
            ),
            "v = {v}"
        );
    }
}

/// A crash while CREATE INDEX fills the index: the stored definition never
/// had it (it is stored when filled), and the entries written so far go at
/// the next open (its pending record), so the table reads right without it
/// and the index can be created again.
#[test]
fn an_index_build_cut_short_leaves_no_index() {
    let dir = testkit::TempDir::new("sql-ddl-build-crash");
    let o = sql::InstanceOptions {
        sync_on_commit: true,
        ..Default::default()
    };
    let id;
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        for st in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
            "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
        ] {
            q(&mut s, st);
        }
        let old = inst.catalog.state().table("d", "t").unwrap().clone();
        let ix = rel::schema::Index {
            id: 0,
            name: "ka".into(),
            columns: vec![1],
            unique: false,
            primary: false,
            ..Default::default()
        };
        let (nt, ix) = inst.catalog.begin_index(&old, ix).unwrap();
        rel::build::build_index(&inst.txdb, &nt, &ix, std::time::Duration::from_secs(1)).unwrap();
        // Readers never see it before it is finished.
        assert_eq!(
            t(&mut s, "SHOW INDEX FROM t").len(),
            1,
            "the index is listed before its build finished"
        );
        id = ix.id;
        // No finish_index: the instance goes away as in a crash.
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", Some("d".into()));
    assert!(inst
        .catalog
        .state()
        .table("d", "t")
        .unwrap()
        .def
        .secondary
        .is_empty());
    assert_eq!(
        t(&mut s, "SELECT id FROM t WHERE a >= 20 ORDER BY id"),
        ["2", "3"]
    );
    assert!(
        !has_entries(&inst, id, id + 1),
        "entries of the abandoned index {id} stayed"
    );
    q(&mut s, "CREATE INDEX ka ON t (a)");
    check_ok(&mut s, "t");
    assert_eq!(
        t(
            &mut s,
            "SELECT id FROM t FORCE INDEX (ka) WHERE a >= 20 ORDER BY id"
        ),
        ["2", "3"]
    );
}

/// A write whose source read meets a read view older than the table gets
/// 1412 at once (not a wait for a catalog change that never comes).
#[test]
fn writes_reading_through_an_old_view_fail_at_once() {
    let db = TestDb::open("sql-ddl-snap-write");
    let mut b = db.session(2, "root", None);
    for st in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t1 (a INT)",
        "CREATE TABLE t0 (a INT)",
    ] {
        q(&mut b, st);
    }
    let mut a = db.session(1, "root", Some("d".into()));
    q(&mut a, "SET lock_wait_timeout = 30");
    q(&mut a, "BEGIN");
    assert_eq!(t(&mut a, "SELECT COUNT(*) FROM t0"), ["0"]);
    q(&mut b, "CREATE TABLE t2 (a INT)");
    q(&mut b, "INSERT INTO t2 VALUES (5)");
    let start = std::time::Instant::now();
    assert_eq!(
        err(&mut a, "INSERT INTO t1 SELECT a FROM t2 WHERE a = 5"),
        1412
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    q(&mut a, "ROLLBACK");
}

/// CREATE INDEX on d.t run on another thread while session `old` holds a
/// transaction that began before it (so the build waits for it): returns
/// the thread (its result: the error code, if any) once the index is
/// published to writers.
fn build_held_back(db: &TestDb, sql: &'static str) -> std::thread::JoinHandle<Option<u16>> {
    let inst = db.inst.clone();
    let version = db.catalog.version();
    let h = std::thread::spawn(move || {
        let mut d = inst.session(9, "root", Some("d".into()));
        q(&mut d, "SET lock_wait_timeout = 20");
        let mut c = sql::result::Collect::default();
        d.query(sql, &mut c).err().map(|e| e.code)
    });
    while db.catalog.version() == version {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    h
}

fn small_table(db: &TestDb, rows: &str) -> (sql::Session, sql::Session) {
    let mut s = db.session(1, "root", None);
    for st in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
    ] {
        q(&mut s, st);
    }
    q(&mut s, &format!("INSERT INTO t VALUES {rows}"));
    let mut old = db.session(2, "root", Some("d".into()));
    q(&mut old, "BEGIN");
    q(&mut old, "SELECT COUNT(*) FROM t");
    (s, old)
}

/// A UNIQUE build that fails on a duplicate while a writer that maintained
/// the index commits later: the abandoned index keeps no entry.
#[test]
fn an_aborted_build_leaves_no_entries_of_late_writers() {
    let db = TestDb::open("sql-ddl-abort-writers");
    let (mut s, mut old) = small_table(&db, "(1, 5), (2, 5), (3, 6)");
    let build = build_held_back(&db, "CREATE UNIQUE INDEX ua ON t (a)");
    // A writer that began after the index was published maintains it.
    let mut w = db.session(3, "root", Some("d".into()));
    q(&mut w, "BEGIN");
    q(&mut w, "INSERT INTO t VALUES (4, 7)");
    q(&mut old, "COMMIT");
    // The build fails on a = 5 and abandons the index while `w` is open.
    std::thread::sleep(std::time::Duration::from_millis(500));
    q(&mut w, "INSERT INTO t VALUES (5, 8)");
    q(&mut w, "COMMIT");
    assert_eq!(build.join().unwrap(), Some(1062));
    assert_eq!(orphan_index_ids(&db), Vec::<u32>::new());
    assert_eq!(t(&mut s, "SHOW INDEX FROM t").len(), 1);
    check_ok(&mut s, "t");
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t"), ["5"]);
}

/// Two writers inserting one value while CREATE UNIQUE INDEX runs: exactly
/// one of the build and the second insert fails with 1062, never two equal
/// entries.
#[test]
fn unique_builds_and_writers_race_on_a_value() {
    // The value is new: the second writer fails, the build succeeds.
    let db = TestDb::open("sql-ddl-unique-race-new");
    let (mut s, mut old) = small_table(&db, "(1, 5), (2, 6)");
    let build = build_held_back(&db, "CREATE UNIQUE INDEX ua ON t (a)");
    q(&mut s, "INSERT INTO t VALUES (10, 99)");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (11, 99)"), 1062);
    q(&mut old, "COMMIT");
    assert_eq!(build.join().unwrap(), None);
    assert_eq!(
        t(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (ua) WHERE a = 99"
        ),
        ["1"]
    );
    check_ok(&mut s, "t");
    // The value is in a row the build has not filled yet: the insert gets
    // in, the build fails on it.
    let db = TestDb::open("sql-ddl-unique-race-old");
    let (mut s, mut old) = small_table(&db, "(1, 99), (2, 6)");
    let build = build_held_back(&db, "CREATE UNIQUE INDEX ua ON t (a)");
    q(&mut s, "INSERT INTO t VALUES (10, 99)");
    q(&mut old, "COMMIT");
    assert_eq!(build.join().unwrap(), Some(1062));
    assert_eq!(t(&mut s, "SHOW INDEX FROM t").len(), 1);
    assert_eq!(orphan_index_ids(&db), Vec::<u32>::new());
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t WHERE a = 99"), ["2"]);
}

/// A definition change derived from a table an index build has replaced
/// since is refused (`TableChanged`), never written over the finished index.
#[test]
fn replacing_a_table_changed_meanwhile_is_refused() {
    let db = TestDb::open("sql-ddl-replace-race");
    let (mut s, mut old) = small_table(&db, "(1, 5), (2, 6)");
    q(&mut old, "COMMIT");
    let stale = db.catalog.state().table("d", "t").unwrap().clone();
    q(&mut s, "CREATE INDEX ka ON t (a)");
    let r = db
        .catalog
        .replace_table(&stale, stale.def.clone(), false, false);
    assert!(matches!(r, Err(rel::Error::TableChanged(_))), "{r:?}");
    assert_eq!(t(&mut s, "SHOW INDEX FROM t").len(), 2);
    q(&mut s, "TRUNCATE TABLE t");
    q(&mut s, "ALTER TABLE t DROP INDEX ka");
    assert_eq!(t(&mut s, "SHOW INDEX FROM t").len(), 1);
    assert_eq!(orphan_index_ids(&db), Vec::<u32>::new());
}
