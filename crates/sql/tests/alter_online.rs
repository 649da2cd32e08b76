//! Online ALTER TABLE rebuilds (`ddl/online.rs`, `rel::shadow`): writers
//! insert, update and delete while MODIFY / ADD COLUMN (not at the end) /
//! DROP COLUMN rebuild the table, some of their writes commit while the
//! rebuild runs, and afterwards the rows equal a model of the writes and
//! CHECK TABLE is OK; a concurrent write that does not convert or that
//! duplicates a new unique key fails the ALTER and leaves the old table; a
//! crash (the instance dropped) at any point of a rebuild leaves the old
//! table or the new one, never a mix; LOCK= and ALGORITHM= as MariaDB.
#![allow(clippy::unwrap_used)]
use sql::result::Collect;
use sql::Session;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

mod common;
use common::{check_ok, fails, has_entries, q, show_create as show, texts, TestDb};

fn t(s: &mut Session, sql: &str) -> Vec<String> {
    texts(q(s, sql))
}

/// Asserts two row lists are equal, naming the first difference.
fn same_rows(got: Vec<String>, want: Vec<String>) {
    let diff = got.iter().zip(&want).position(|(a, b)| a != b);
    assert!(
        got == want,
        "{} rows, {} expected; first difference at {diff:?}: {:?} vs {:?}",
        got.len(),
        want.len(),
        diff.map(|i| &got[i]),
        diff.map(|i| &want[i])
    );
}

const ROWS: u64 = 3000;
const WRITERS: u64 = 3;

/// A table of `ROWS` rows (id, a = id * 10, b = 'r<id>', c = 1).
fn fill(s: &mut Session) {
    q(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c INT DEFAULT 1, KEY kb (b))",
    );
    for chunk in (1..=ROWS).collect::<Vec<_>>().chunks(500) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, 'r{i}', 1)", i * 10))
            .collect();
        q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
}

#[test]
fn online_rebuilds_let_writers_on_and_lose_nothing() {
    let db = TestDb::open("sql-alter-online");
    let mut s = common::session_in_d(&db);
    fill(&mut s);
    let seed = testkit::seed("online_rebuilds_let_writers_on_and_lose_nothing");
    // 1 while an ALTER runs; writes that start and end in it count.
    let altering = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let during = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (inst, stop, altering, during) = (
            db.inst.clone(),
            stop.clone(),
            altering.clone(),
            during.clone(),
        );
        writers.push(std::thread::spawn(move || {
            let mut s = inst.session(10 + w, "root", Some("d".into()));
            let mut rng = testkit::Rng::new(seed ^ (w + 1));
            // The rows this writer owns: initial ids = w mod WRITERS, and
            // the ids it inserts.
            let mut model: BTreeMap<u64, (i64, String)> = (1..=ROWS)
                .filter(|i| i % WRITERS == w)
                .map(|i| (i, (i as i64 * 10, format!("r{i}"))))
                .collect();
            let mut next = 1_000_000 * (w + 1);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) || n < 30 {
                let before = altering.load(Ordering::SeqCst);
                let keys: Vec<u64> = model.keys().copied().collect();
                match rng.below(3) {
                    0 => {
                        next += 1;
                        let a = rng.below(1000) as i64;
                        q(
                            &mut s,
                            &format!("INSERT INTO t (id, a, b) VALUES ({next}, {a}, 'i{n}')"),
                        );
                        model.insert(next, (a, format!("i{n}")));
                    }
                    1 if !keys.is_empty() => {
                        let id = keys[rng.below(keys.len() as u64) as usize];
                        q(
                            &mut s,
                            &format!("UPDATE t SET a = a + 1, b = 'u{n}' WHERE id = {id}"),
                        );
                        let e = model.get_mut(&id).unwrap();
                        *e = (e.0 + 1, format!("u{n}"));
                    }
                    _ if !keys.is_empty() => {
                        let id = keys[rng.below(keys.len() as u64) as usize];
                        q(&mut s, &format!("DELETE FROM t WHERE id = {id}"));
                        model.remove(&id);
                    }
                    _ => {}
                }
                if before && altering.load(Ordering::SeqCst) {
                    during.fetch_add(1, Ordering::SeqCst);
                }
                n += 1;
            }
            model
        }));
    }
    let mut per_alter = Vec::new();
    for sql in [
        "ALTER TABLE t MODIFY a BIGINT, LOCK=NONE",
        "ALTER TABLE t ADD COLUMN x INT DEFAULT 7 AFTER id",
        "ALTER TABLE t DROP COLUMN c, ALGORITHM=INPLACE, LOCK=NONE",
        "ALTER TABLE t MODIFY b VARCHAR(40) NOT NULL, ADD KEY ka (a)",
    ] {
        std::thread::sleep(std::time::Duration::from_millis(30));
        let d0 = during.load(Ordering::SeqCst);
        altering.store(true, Ordering::SeqCst);
        let started = std::time::Instant::now();
        q(&mut s, sql);
        altering.store(false, Ordering::SeqCst);
        per_alter.push((sql, during.load(Ordering::SeqCst) - d0, started.elapsed()));
    }
    stop.store(true, Ordering::Relaxed);
    let mut model = BTreeMap::new();
    for h in writers {
        model.extend(h.join().unwrap());
    }
    eprintln!("writes committed during each ALTER: {per_alter:?}");
    for (sql, n, _) in &per_alter {
        assert!(*n > 0, "no write committed while `{sql}` ran");
    }
    let want: Vec<String> = model
        .iter()
        .map(|(id, (a, b))| format!("{id}|7|{a}|{b}"))
        .collect();
    same_rows(t(&mut s, "SELECT id, x, a, b FROM t ORDER BY id"), want);
    check_ok(&mut s, "t");
    // The new indexes answer as the rows do.
    let (id, (a, b)) = model.iter().last().unwrap();
    assert_eq!(
        t(
            &mut s,
            &format!("SELECT id FROM t FORCE INDEX (kb) WHERE b = '{b}' AND id = {id}")
        ),
        [id.to_string()]
    );
    assert!(t(
        &mut s,
        &format!("SELECT id FROM t FORCE INDEX (ka) WHERE a = {a}")
    )
    .contains(&id.to_string()));
    let created = show(&mut s, "t");
    assert!(
        created.contains(
            "`x` int DEFAULT '7',\n  `a` bigint DEFAULT NULL,\n  `b` varchar(40) NOT NULL"
        ) && !created.contains("`c`")
            && created.contains("KEY `ka` (`a`)"),
        "{created}"
    );
}

/// Runs `alter` on another thread once `d` (a transaction open before it)
/// has let it start; `during` runs once the shadow is published and before
/// the copy can end (`hold` keeps the copy's last row locked until it
/// commits). Returns the ALTER's error code (0: it succeeded).
fn alter_with_writer(db: &TestDb, alter: &str, during: &[&str]) -> u16 {
    let mut d = db.inst.session(20, "root", Some("d".into()));
    q(&mut d, "BEGIN");
    q(&mut d, "SELECT COUNT(*) FROM t");
    let (inst, sql) = (db.inst.clone(), alter.to_string());
    let h = std::thread::spawn(move || {
        let mut s = inst.session(21, "root", Some("d".into()));
        let mut c = Collect::default();
        s.query(&sql, &mut c).err().map_or(0, |e| e.code)
    });
    let t0 = std::time::Instant::now();
    while db
        .inst
        .catalog
        .state()
        .table("d", "t")
        .unwrap()
        .shadow
        .is_none()
    {
        assert!(
            t0.elapsed().as_secs() < 20,
            "the shadow was never published"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut hold = db.inst.session(22, "root", Some("d".into()));
    q(&mut hold, "BEGIN");
    for sql in during {
        q(&mut hold, sql);
    }
    // The ALTER drains `d`, then its copy waits for `hold`'s row locks.
    q(&mut d, "COMMIT");
    std::thread::sleep(std::time::Duration::from_millis(50));
    q(&mut hold, "COMMIT");
    h.join().unwrap()
}

#[test]
fn a_concurrent_write_that_does_not_convert_fails_the_alter() {
    let db = TestDb::open("sql-alter-online-conv");
    let mut s = common::session_in_d(&db);
    fill(&mut s);
    let before = show(&mut s, "t");
    let code = alter_with_writer(
        &db,
        "ALTER TABLE t MODIFY b VARCHAR(8), LOCK=NONE",
        &[&format!(
            "UPDATE t SET b = 'much too long' WHERE id = {ROWS}"
        )],
    );
    assert_eq!(code, 1265, "the ALTER fails with Data truncated");
    // The writer's change committed; the table is the old one.
    assert_eq!(show(&mut s, "t"), before);
    assert!(db
        .inst
        .catalog
        .state()
        .table("d", "t")
        .unwrap()
        .shadow
        .is_none());
    assert_eq!(
        t(&mut s, &format!("SELECT b FROM t WHERE id = {ROWS}")),
        ["much too long"]
    );
    assert_eq!(t(&mut s, "SELECT COUNT(*) FROM t"), [ROWS.to_string()]);
    check_ok(&mut s, "t");
    // Once the row fits, the same ALTER goes through.
    q(
        &mut s,
        &format!("UPDATE t SET b = 'short' WHERE id = {ROWS}"),
    );
    q(&mut s, "ALTER TABLE t MODIFY b VARCHAR(8), LOCK=NONE");
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t WHERE b <> ''"),
        [ROWS.to_string()]
    );
}

#[test]
fn duplicates_of_a_new_unique_key_fail_the_alter_and_leave_the_old_table() {
    let db = TestDb::open("sql-alter-online-dup");
    let mut s = common::session_in_d(&db);
    fill(&mut s);
    let before = show(&mut s, "t");
    // Found by the copy.
    q(&mut s, "UPDATE t SET a = 10 WHERE id = 2000");
    let (code, msg) = fails(
        &mut s,
        "ALTER TABLE t ADD COLUMN y INT FIRST, ADD UNIQUE KEY ua (a), LOCK=NONE",
    );
    assert_eq!(
        (code, msg.as_str()),
        (1062, "Duplicate entry '10' for key 'ua'")
    );
    assert_eq!(show(&mut s, "t"), before);
    q(&mut s, "UPDATE t SET a = 20000 WHERE id = 2000");
    // Put by a concurrent writer while the copy runs.
    let code = alter_with_writer(
        &db,
        "ALTER TABLE t ADD COLUMN y INT FIRST, ADD UNIQUE KEY ua (a)",
        &[
            "INSERT INTO t (id, a, b) VALUES (5000001, 30, 'dup')",
            &format!("UPDATE t SET b = 'held' WHERE id = {ROWS}"),
        ],
    );
    assert_eq!(code, 1062);
    assert_eq!(show(&mut s, "t"), before);
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t"),
        [(ROWS + 1).to_string()]
    );
    check_ok(&mut s, "t");
    // Without the duplicate, it runs (and the writer's rows are there).
    q(&mut s, "DELETE FROM t WHERE id = 5000001");
    let code = alter_with_writer(
        &db,
        "ALTER TABLE t ADD COLUMN y INT FIRST, ADD UNIQUE KEY ua (a)",
        &["INSERT INTO t (id, a, b) VALUES (5000002, 7, 'new')"],
    );
    assert_eq!(code, 0);
    assert_eq!(
        t(&mut s, "SELECT id, y, b FROM t WHERE a = 7"),
        ["5000002|NULL|new"]
    );
    assert_eq!(
        t(&mut s, "SELECT COUNT(*) FROM t"),
        [(ROWS + 1).to_string()]
    );
    check_ok(&mut s, "t");
}

#[test]
fn lock_and_algorithm_clauses_as_mariadb() {
    let db = TestDb::open("sql-alter-online-clauses");
    let mut s = common::session_in_d(&db);
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, a INT)");
    q(&mut s, "INSERT INTO p VALUES (1, 1), (2, 2)");
    // Online kinds accept LOCK=NONE and ALGORITHM=INPLACE.
    q(&mut s, "ALTER TABLE p ADD b INT FIRST, LOCK=NONE");
    q(&mut s, "ALTER TABLE p DROP b, ALGORITHM=INPLACE");
    // COPY takes a lock: it runs with writers held out, and refuses NONE.
    q(&mut s, "ALTER TABLE p MODIFY a BIGINT, ALGORITHM=COPY");
    let (code, msg) = fails(
        &mut s,
        "ALTER TABLE p MODIFY a INT, ALGORITHM=COPY, LOCK=NONE",
    );
    assert_eq!(
        (code, msg.as_str()),
        (
            1846,
            "LOCK=NONE is not supported. Reason: COPY algorithm requires a lock. Try LOCK=SHARED."
        )
    );
    // What cannot run online refuses LOCK=NONE and ALGORITHM=INPLACE.
    let (code, msg) = fails(
        &mut s,
        "ALTER TABLE p ADD k INT AUTO_INCREMENT UNIQUE, LOCK=NONE",
    );
    assert_eq!(
        (code, msg.as_str()),
        (
            1846,
            "LOCK=NONE is not supported. Reason: Adding an auto-increment column requires a lock. Try LOCK=SHARED."
        )
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE p MODIFY id BIGINT, LOCK=NONE").0,
        1846
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE p MODIFY id BIGINT, ALGORITHM=INPLACE").0,
        1846
    );
    assert_eq!(
        fails(&mut s, "ALTER TABLE p ADD c INT FIRST, ALGORITHM=INSTANT").0,
        1846
    );
    // Without the clause they run, with writers held out.
    q(&mut s, "ALTER TABLE p MODIFY id BIGINT");
    assert_eq!(t(&mut s, "SELECT * FROM p ORDER BY id"), ["1|1", "2|2"]);
}

/// A crash (the instance dropped without a clean shutdown) at a seeded
/// point of an online rebuild while writers wrote through the shadow:
/// before the copy, after it, after it and more writes, or after the
/// commit (of a shadow written to after the copy).
/// The next open has the old table (and the new ids empty) or the new
/// one, with every committed write, never a mix.
#[test]
fn a_crash_during_an_online_rebuild_leaves_old_or_new() {
    let seed = testkit::seed("a_crash_during_an_online_rebuild_leaves_old_or_new");
    let mut rng = testkit::Rng::new(seed);
    for round in 0..4 {
        let point = (rng.below(4) as usize + round) % 4;
        crash_at(point, &mut rng);
    }
}

fn crash_at(point: usize, rng: &mut testkit::Rng) {
    let dir = testkit::TempDir::new("sql-alter-online-crash");
    let o = sql::InstanceOptions {
        sync_on_commit: true,
        ..Default::default()
    };
    let new_pk;
    let want: Vec<String>;
    {
        let inst = sql::Instance::open(&dir.0, &o).unwrap();
        let mut s = inst.session(1, "root", None);
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        fill(&mut s);
        let old = inst.catalog.state().table("d", "t").unwrap().clone();
        // The new definition: column c dropped (b, the key's column, moves).
        let mut def = old.def.clone();
        def.columns.remove(3);
        def.value_cols = vec![1, 2];
        inst.catalog.reserve_ids(&mut def).unwrap();
        new_pk = def.pk.id;
        let convert: Box<rel::shadow::Convert> = Box::new(|r, _| Ok(r.values[..3].to_vec()));
        let nt = inst
            .catalog
            .begin_rebuild(&old, def.clone(), convert)
            .unwrap();
        // Writers through the shadow.
        let n = rng.below(20) + 1;
        for i in 0..n {
            let id = 1 + rng.below(ROWS);
            q(&mut s, &format!("UPDATE t SET b = 'w{i}' WHERE id = {id}"));
            q(
                &mut s,
                &format!("DELETE FROM t WHERE id = {}", 1 + rng.below(ROWS)),
            );
            q(
                &mut s,
                &format!(
                    "INSERT INTO t (id, a, b) VALUES ({}, 1, 'n{i}')",
                    10_000 + i
                ),
            );
        }
        if point >= 1 {
            rel::shadow::copy_online(&inst.txdb, &nt, std::time::Duration::from_secs(5)).unwrap();
        }
        if point >= 2 {
            // Writers after the copy, through the shadow.
            q(&mut s, "UPDATE t SET b = 'late' WHERE id = 1");
            q(&mut s, "DELETE FROM t WHERE id = 2");
            q(
                &mut s,
                "INSERT INTO t (id, a, b) VALUES (20000, 2, 'after')",
            );
        }
        want = t(&mut s, "SELECT id, a, b FROM t ORDER BY id");
        if point == 3 {
            inst.catalog
                .commit_defs(vec![rel::catalog::DefChange {
                    from: Some(nt.clone()),
                    def,
                    pending: true,
                    auto_inc: 0,
                    hidden_next: 0,
                }])
                .unwrap();
        }
        eprintln!("crash at point {point}");
    }
    let inst = sql::Instance::open(&dir.0, &o).unwrap();
    let mut s = inst.session(1, "root", Some("d".into()));
    let created = show(&mut s, "t");
    assert_eq!(created.contains("`c` int"), point < 3, "{created}");
    same_rows(t(&mut s, "SELECT id, a, b FROM t ORDER BY id"), want);
    check_ok(&mut s, "t");
    if point < 3 {
        // The shadow's entries are gone.
        assert!(
            !has_entries(&inst, new_pk, new_pk + 2),
            "entries of the abandoned shadow"
        );
    }
}
