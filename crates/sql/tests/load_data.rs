//! LOAD DATA INFILE (server-side files under secure_file_priv), the bulk
//! path into empty tables, CREATE INDEX by sorted runs and the
//! strata_bulk_load session mode. Expected answers were checked against
//! MariaDB 10.11 (the same statements and files on mariadbd).
mod common;
use common::{
    check_ok, fails, q, rows, session_in_d, status, with_files, write_file as write, TestDb,
};
use sql::{Session, Value};

/// An instance whose secure_file_priv is a temporary directory; returns it
/// with the directory.
fn setup(name: &str) -> (TestDb, testkit::TempDir, Session) {
    with_files(TestDb::open(name), name)
}

fn warnings(s: &mut Session) -> Vec<String> {
    rows(s, "SHOW WARNINGS")
}

#[test]
fn default_format_tabs_escapes_and_null() {
    let (_db, dir, mut s) = setup("load-default");
    q(
        &mut s,
        "CREATE TABLE t (a INT, b VARCHAR(20), c VARCHAR(20))",
    );
    let f = write(&dir, "t.txt", b"1\tx\\ty\t\\N\n2\ta\\\\b\t\n3\t\\N\tNULL\n");
    q(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE t"));
    assert_eq!(
        rows(&mut s, "SELECT a, b, c, c IS NULL FROM t ORDER BY a"),
        ["1|x\ty|NULL|1", "2|a\\b||0", "3|NULL|NULL|0"]
    );
    check_ok(&mut s, "t");
}

#[test]
fn csv_options_enclosed_line_prefix_ignore_lines() {
    let (_db, dir, mut s) = setup("load-csv");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(30), note VARCHAR(30))",
    );
    let f = write(
        &dir,
        "t.csv",
        b"id,name,note\r\n>1,\"Smith, J\",\"say \"\"hi\"\"\"\r\njunk line\r\n>2,Doe,NULL\r\n>3,\"x\",\"NULL\"\r\n",
    );
    let r = q(
        &mut s,
        &format!(
            "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' \
             LINES STARTING BY '>' TERMINATED BY '\\r\\n' IGNORE 1 LINES"
        ),
    );
    assert!(r.is_empty());
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, name, note, note IS NULL FROM t ORDER BY id"
        ),
        ["1|Smith, J|say \"hi\"|0", "2|Doe|NULL|1", "3|x|NULL|0"]
    );
}

#[test]
fn column_list_user_variables_and_set() {
    let (_db, dir, mut s) = setup("load-vars");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, total INT, label VARCHAR(20) DEFAULT 'none', d INT DEFAULT 7)",
    );
    let f = write(&dir, "t.txt", b"1,10,3,A\n2,20,4,B\n");
    q(
        &mut s,
        &format!(
            "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' \
             (id, @price, @qty, @tag) SET total = @price * @qty, label = LOWER(@tag)"
        ),
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|30|a|7", "2|80|b|7"]
    );
}

#[test]
fn short_and_long_lines_warn_and_strict_mode_fails() {
    let (_db, dir, mut s) = setup("load-counts");
    q(
        &mut s,
        "CREATE TABLE t (a INT, b INT, c VARCHAR(5) DEFAULT 'z')",
    );
    let f = write(&dir, "t.txt", b"1,2\n3,4,x,extra\n");
    let sql = format!("LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ','");
    let (code, msg) = fails(&mut s, &sql);
    assert_eq!(
        (code, msg.as_str()),
        (1261, "Row 1 doesn't contain data for all columns")
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["0"]);
    q(&mut s, "SET sql_mode = ''");
    q(&mut s, &sql);
    assert_eq!(
        warnings(&mut s),
        [
            "Warning|1261|Row 1 doesn't contain data for all columns",
            "Warning|1262|Row 2 was truncated; it contained more data than there were input columns"
        ]
    );
    // MariaDB: a missing column gets its type's zero value, not its DEFAULT.
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY a"),
        ["1|2|", "3|4|x"]
    );
}

#[test]
fn bad_values_error_in_strict_mode_and_warn_with_ignore() {
    let (_db, dir, mut s) = setup("load-values");
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, n INT)");
    q(&mut s, "INSERT INTO t VALUES (100, 0)");
    let f = write(&dir, "t.txt", b"1\tabc\n2\t5\n");
    let sql = format!("LOAD DATA INFILE '{f}' INTO TABLE t");
    assert_eq!(fails(&mut s, &sql).0, 1366);
    q(
        &mut s,
        &format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE t"),
    );
    // (MariaDB names the column `d`.`t`.`n`; Strata's store() writes 'n'.)
    let w = warnings(&mut s);
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("Warning|1366|Incorrect integer value: 'abc' for column"),
        "{w:?}"
    );
    assert!(w[0].ends_with(" at row 1"), "{w:?}");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1|0", "2|5", "100|0"]
    );
}

#[test]
fn duplicates_error_ignore_replace_on_rows_and_bulk_paths() {
    for prefill in [false, true] {
        let (_db, dir, mut s) = setup(&format!("load-dups-{prefill}"));
        q(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), KEY kv (v))",
        );
        if prefill {
            q(&mut s, "INSERT INTO t VALUES (1000, 'pre')");
        }
        let f = write(&dir, "t.txt", b"2\ta\n1\tb\n2\tc\n");
        let (code, msg) = fails(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE t"));
        assert_eq!(
            (code, msg.as_str()),
            (1062, "Duplicate entry '2' for key 'PRIMARY'")
        );
        let n = if prefill { 1 } else { 0 };
        assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), [format!("{n}")]);
        q(
            &mut s,
            &format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE t"),
        );
        assert_eq!(
            warnings(&mut s),
            ["Warning|1062|Duplicate entry '2' for key 'PRIMARY'"]
        );
        let mut want = vec!["1|b", "2|a"];
        if prefill {
            want.push("1000|pre");
        }
        assert_eq!(rows(&mut s, "SELECT * FROM t ORDER BY id"), want);
        q(&mut s, "DELETE FROM t WHERE id < 1000");
        q(
            &mut s,
            &format!("LOAD DATA INFILE '{f}' REPLACE INTO TABLE t"),
        );
        want[1] = "2|c";
        assert_eq!(rows(&mut s, "SELECT * FROM t ORDER BY id"), want);
        assert_eq!(
            rows(&mut s, "SELECT id FROM t FORCE INDEX (kv) WHERE v = 'c'"),
            ["2"]
        );
        check_ok(&mut s, "t");
    }
}

#[test]
fn empty_tables_load_through_table_files_with_their_indexes() {
    let (_db, dir, mut s) = setup("load-bulk");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(20), UNIQUE KEY uc (c), KEY kk (k))",
    );
    let mut body = String::new();
    // Out of primary key order on purpose: the bulk path sorts.
    for i in (0..5000).rev() {
        body.push_str(&format!("{i}\t{}\tc{i}\n", i % 97));
    }
    let f = write(&dir, "t.txt", body.as_bytes());
    let before = status(&mut s, "Strata_bulk_load_rows");
    q(&mut s, "SET strata_merge_buf_size = 65536");
    q(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE t"));
    // (A process-wide counter: other tests of this file may add to it.)
    assert!(status(&mut s, "Strata_bulk_load_rows") - before >= 5000);
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*), SUM(id) FROM t"),
        ["5000|12497500"]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kk) WHERE k = 5"
        ),
        ["52"]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM t WHERE c = 'c4321'"), ["4321"]);
    check_ok(&mut s, "t");
    // A repeated unique key fails the whole load: nothing is left.
    q(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, c CHAR(5), UNIQUE KEY uc (c))",
    );
    let f = write(&dir, "u.txt", b"1\tx\n2\ty\n3\tx\n");
    let (code, msg) = fails(&mut s, &format!("LOAD DATA INFILE '{f}' INTO TABLE u"));
    assert_eq!(
        (code, msg.as_str()),
        (1062, "Duplicate entry 'x' for key 'uc'")
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM u"), ["0"]);
    check_ok(&mut s, "u");
}

#[test]
fn server_files_stay_inside_secure_file_priv() {
    let (db, dir, mut s) = setup("load-priv");
    q(&mut s, "CREATE TABLE t (a INT)");
    let outside = testkit::TempDir::new("load-priv-outside");
    let f = outside.0.join("x.txt");
    std::fs::write(&f, "1\n").unwrap();
    let sql = format!("LOAD DATA INFILE '{}' INTO TABLE t", f.display());
    let (code, msg) = fails(&mut s, &sql);
    assert_eq!(code, 1290);
    assert!(msg.contains("--secure-file-priv"), "{msg}");
    // A relative name is in the database's directory (outside: 1290); a
    // missing file is MariaDB's 13.
    let rel = write(&dir, "rel.txt", b"5\n");
    assert_eq!(
        fails(&mut s, "LOAD DATA INFILE 'rel.txt' INTO TABLE t").0,
        1290
    );
    q(&mut s, &format!("LOAD DATA INFILE '{rel}' INTO TABLE t"));
    assert_eq!(rows(&mut s, "SELECT a FROM t"), ["5"]);
    let missing = dir.0.join("nope.txt").display().to_string();
    let (code, msg) = fails(
        &mut s,
        &format!("LOAD DATA INFILE '{missing}' INTO TABLE t"),
    );
    assert_eq!(code, 13);
    assert_eq!(
        msg,
        format!("Can't get stat of '{missing}' (Errcode: 2 \"No such file or directory\")")
    );
    db.inst.set_global("secure_file_priv", Value::Null);
    assert_eq!(
        fails(&mut s, &format!("LOAD DATA INFILE '{rel}' INTO TABLE t")).0,
        1290
    );
    // LOCAL needs a client that sends files (a session without one: 4166).
    assert_eq!(
        fails(&mut s, "LOAD DATA LOCAL INFILE 'rel.txt' INTO TABLE t").0,
        4166
    );
    assert_eq!(
        fails(&mut s, "LOAD DATA INFILE 'x' INTO TABLE t PARTITION (p)").0,
        1235
    );
}

#[test]
fn latin1_files_are_converted() {
    let (_db, dir, mut s) = setup("load-latin1");
    q(&mut s, "CREATE TABLE t (a VARCHAR(10))");
    let f = write(&dir, "t.txt", b"caf\xe9\n");
    q(
        &mut s,
        &format!("LOAD DATA INFILE '{f}' INTO TABLE t CHARACTER SET latin1"),
    );
    assert_eq!(rows(&mut s, "SELECT a, HEX(a) FROM t"), ["café|636166C3A9"]);
}

#[test]
fn create_index_by_sorted_runs_spills_and_finds_duplicates() {
    let db = TestDb::open("load-sorted-index");
    let mut s = session_in_d(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(40))",
    );
    for chunk in 0..20 {
        let vals: Vec<String> = (0..500)
            .map(|i| {
                let id = chunk * 500 + i;
                format!("({id}, {}, 'row-{}')", (id * 7919) % 1000, id % 4000)
            })
            .collect();
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    let builds = status(&mut s, "Strata_sorted_index_builds");
    let runs = status(&mut s, "Strata_sorted_index_runs");
    q(&mut s, "SET strata_merge_buf_size = 65536");
    q(&mut s, "CREATE INDEX k ON t (k)");
    assert!(status(&mut s, "Strata_sorted_index_builds") > builds);
    assert!(status(&mut s, "Strata_sorted_index_runs") > runs + 2);
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (k) WHERE k BETWEEN 10 AND 19"
        ),
        rows(
            &mut s,
            "SELECT COUNT(*) FROM t IGNORE INDEX (k) WHERE k BETWEEN 10 AND 19"
        )
    );
    check_ok(&mut s, "t");
    // c repeats every 4000 rows: a unique index fails with MySQL's message.
    let (code, msg) = fails(&mut s, "ALTER TABLE t ADD UNIQUE INDEX uc (c)");
    assert_eq!(code, 1062);
    assert!(
        msg.starts_with("Duplicate entry 'row-") && msg.ends_with("' for key 'uc'"),
        "{msg}"
    );
    assert_eq!(rows(&mut s, "SHOW INDEX FROM t").len(), 2);
    assert_eq!(common::orphan_index_ids(&db), Vec::<u32>::new());
    q(&mut s, "DELETE FROM t WHERE id >= 4000");
    q(&mut s, "CREATE UNIQUE INDEX uc ON t (c)");
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE c = 'row-123'"),
        ["123"]
    );
    check_ok(&mut s, "t");
}

#[test]
fn bulk_load_session_mode() {
    let db = TestDb::open("load-session-bulk");
    let mut s = session_in_d(&db);
    assert_eq!(fails(&mut s, "SET rocksdb_bulk_load = 1").0, 1235);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY kk (k))",
    );
    q(&mut s, "CREATE TABLE o (id INT PRIMARY KEY)");
    q(&mut s, "SET strata_bulk_load = 1");
    q(&mut s, "INSERT INTO t VALUES (1, 5), (2, 4), (3, 5)");
    q(&mut s, "INSERT INTO t VALUES (10, 1)");
    // Not visible to others until the load ends.
    let mut other = session_in_d(&db);
    assert_eq!(rows(&mut other, "SELECT COUNT(*) FROM t"), ["0"]);
    let (code, msg) = fails(&mut s, "INSERT INTO t VALUES (4, 0)");
    assert_eq!(
        (code, msg.as_str()),
        (4054, "Keys are out order during bulk load")
    );
    q(&mut s, "INSERT INTO t VALUES (11, 5)");
    q(&mut s, "SET strata_bulk_load = 0");
    assert_eq!(
        rows(&mut other, "SELECT id FROM t ORDER BY id"),
        ["1", "2", "3", "10", "11"]
    );
    assert_eq!(
        rows(
            &mut other,
            "SELECT id FROM t FORCE INDEX (kk) WHERE k = 5 ORDER BY id"
        ),
        ["1", "3", "11"]
    );
    check_ok(&mut s, "t");
    // Into a table that is not empty: the ordinary path (no order needed).
    q(&mut s, "SET strata_bulk_load = 1");
    q(&mut s, "INSERT INTO t VALUES (0, 0)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM t"), ["6"]);
    // Another table's INSERT ends one load and starts the next; any other
    // statement ends it.
    q(&mut s, "INSERT INTO o VALUES (5), (6)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM o"), ["2"]);
    q(&mut s, "SET strata_bulk_load = 0");
    check_ok(&mut s, "o");
}

/// The bulk path with repeated primary keys: IGNORE keeps each key's first
/// line, REPLACE its last (as the row path does), the index holds exactly
/// the rows kept, in a forward and a reverse (`rev:`) column family. Files
/// in random order (sorted, spilled to many runs), in key order (written
/// as they come, never sorted) and in key order for 10,000 lines before
/// keys repeat (the rows written so far go back into the sort).
#[test]
fn bulk_ignore_and_replace_keep_first_and_last_across_spilled_runs() {
    let seed = testkit::seed("bulk_ignore_and_replace_keep_first_and_last_across_spilled_runs");
    let mut rng = testkit::Rng::new(seed);
    let (_db, dir, mut s) = setup("load-dups-spilled");
    // 20k rows of some 50 bytes each in the sort: runs of 64 KiB.
    q(&mut s, "SET strata_merge_buf_size = 65536");
    for (shape, ordered_lines) in [("random", 0u64), ("ordered", 20_000), ("both", 10_000)] {
        let mut body = String::new();
        let (mut first, mut last) = (
            std::collections::BTreeMap::new(),
            std::collections::BTreeMap::new(),
        );
        for line in 0..20_000u64 {
            let id = if line < ordered_lines {
                line * 3
            } else {
                rng.below(4000)
            };
            body.push_str(&format!("{id}\tv{line}\n"));
            first.entry(id).or_insert(line);
            last.insert(id, line);
        }
        let f = write(&dir, &format!("{shape}.txt"), body.as_bytes());
        for (n, cf) in ["", " COMMENT 'rev:cf_r'"].iter().enumerate() {
            for (how, want) in [("IGNORE", &first), ("REPLACE", &last)] {
                let t = format!("t_{shape}_{n}_{how}");
                q(
                    &mut s,
                    &format!(
                        "CREATE TABLE {t} (id INT, v VARCHAR(10), PRIMARY KEY (id){cf}, KEY kv (v){cf})"
                    ),
                );
                let before = status(&mut s, "Strata_bulk_load_rows");
                q(
                    &mut s,
                    &format!("LOAD DATA INFILE '{f}' {how} INTO TABLE {t}"),
                );
                // (A process-wide counter: other tests may add to it.)
                assert!(status(&mut s, "Strata_bulk_load_rows") - before >= want.len() as u64);
                let want: Vec<String> = want.iter().map(|(id, l)| format!("{id}|v{l}")).collect();
                let got = rows(&mut s, &format!("SELECT id, v FROM {t} ORDER BY id"));
                assert!(got == want, "SEED={seed} {t}: rows differ");
                let by_index = rows(
                    &mut s,
                    &format!("SELECT id, v FROM {t} FORCE INDEX (kv) WHERE v > '' ORDER BY id"),
                );
                assert!(by_index == want, "SEED={seed} {t}: index differs");
                check_ok(&mut s, &t);
            }
        }
    }
}
