//! Planner choices visible through EXPLAIN: equality propagation across join
//! conditions (TPC-C New-Order's customer/warehouse join), and that the
//! implied conditions never change a result.
use sql::result::Collect;
use sql::{Instance, InstanceOptions, Session, Value};

mod common;
use common::{q, texts};

/// (table, type) of each EXPLAIN row.
fn access(s: &mut Session, sql: &str) -> Vec<(String, String)> {
    q(s, &format!("EXPLAIN {sql}"))
        .into_iter()
        .map(|r| {
            let t = |i: usize| String::from_utf8_lossy(&r[i].text()).into_owned();
            (t(2), t(3))
        })
        .collect()
}

#[test]
fn constants_are_carried_across_join_conditions() {
    // Removed on drop, also when an assertion fails.
    let d = testkit::TempDir::new("sql-planner");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE tpcc");
    q(&mut s, "USE tpcc");
    q(
        &mut s,
        "CREATE TABLE warehouse1 (w_id SMALLINT NOT NULL, w_tax DECIMAL(4,2), PRIMARY KEY (w_id))",
    );
    q(
        &mut s,
        "CREATE TABLE customer1 (c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL,
         c_discount DECIMAL(4,2), c_last VARCHAR(16), c_credit CHAR(2), PRIMARY KEY (c_w_id, c_d_id, c_id))",
    );
    q(
        &mut s,
        "CREATE TABLE notes (id INT PRIMARY KEY, w VARCHAR(10), KEY (w, id))",
    );
    for w in 1..=3 {
        q(
            &mut s,
            &format!("INSERT INTO warehouse1 VALUES ({w}, 0.{w})"),
        );
        for dd in 1..=2 {
            for c in 1..=5 {
                q(
                    &mut s,
                    &format!("INSERT INTO customer1 VALUES ({c}, {dd}, {w}, 0.0{c}, 'L{c}', 'GC')"),
                );
            }
        }
        q(&mut s, &format!("INSERT INTO notes VALUES ({w}, '{w}')"));
    }
    // New-Order's query, FROM order as sysbench-tpcc sends it: customer first.
    let new_order = "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1
        WHERE w_id = 2 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 4";
    let plan = access(&mut s, new_order);
    assert_eq!(plan.len(), 2, "{plan:?}");
    assert_eq!(plan[0].0, "customer1");
    assert_ne!(
        plan[0].1, "ALL",
        "customer1 must be probed on its key: {plan:?}"
    );
    assert_ne!(plan[1].1, "ALL", "{plan:?}");
    assert_eq!(texts(q(&mut s, new_order)), vec!["0.04|L4|GC|0.20"]);
    // The same through a prepared statement's parameters.
    let (id, n, _) = s
        .prepare(
            "SELECT c_discount, w_tax FROM customer1, warehouse1
             WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
        )
        .unwrap();
    assert_eq!(n, 3);
    let mut c = Collect::default();
    s.execute_prepared(id, &[Value::Int(3), Value::Int(2), Value::Int(5)], &mut c)
        .unwrap();
    assert_eq!(texts(c.rows), vec!["0.05|0.30"]);
    // A single table: a = b AND b = const gives a = const for the access path.
    assert_ne!(
        access(
            &mut s,
            "SELECT * FROM customer1 WHERE c_w_id = c_d_id AND c_d_id = 2 AND c_id = 1"
        )[0]
        .1,
        "ALL"
    );
    // Different comparison families are not joined: a string column equal to a
    // number compares as numbers, so `w = 1` is not implied for the index on w.
    q(&mut s, "INSERT INTO notes VALUES (10, '01'), (11, '1.0')");
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT n.id FROM warehouse1 x, notes n WHERE x.w_id = 1 AND n.w = x.w_id ORDER BY n.id"
        )),
        vec!["1", "10", "11"]
    );
    // The same on one table, through every kind of key condition: a number
    // probing a string index must not miss '01' or '1.0'.
    for w in [
        "w = 1",
        "w = 1.0",
        "w IN (1, 7)",
        "w = 1 OR w = 7",
        "w BETWEEN 1 AND 1",
        "w >= 1 AND w <= 1",
    ] {
        assert_eq!(
            texts(q(
                &mut s,
                &format!("SELECT id FROM notes WHERE {w} ORDER BY id")
            )),
            vec!["1", "10", "11"],
            "{w}"
        );
    }
    assert_eq!(
        texts(q(&mut s, "SELECT id FROM notes WHERE w = '1' ORDER BY id")),
        vec!["1"]
    );
    // A parameter bound as a number spans the key at execution; the order the
    // index gives (w, id) is then not id order, so the sort must stay.
    let (id, _, _) = s
        .prepare("SELECT id FROM notes WHERE w = ? ORDER BY id DESC")
        .unwrap();
    for (v, want) in [
        (Value::Int(1), vec!["11", "10", "1"]),
        (Value::Bytes(b"1".to_vec()), vec!["1"]),
        (Value::Double(1.0), vec!["11", "10", "1"]),
    ] {
        let mut c = Collect::default();
        s.execute_prepared(id, std::slice::from_ref(&v), &mut c)
            .unwrap();
        assert_eq!(texts(c.rows), want, "{v:?}");
    }
    // A class of three: a = b, b = c, c = const reaches all of them, results unchanged.
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT COUNT(*) FROM customer1 a, customer1 b, warehouse1 w
             WHERE a.c_w_id = b.c_w_id AND b.c_w_id = w.w_id AND w.w_id = 3
               AND a.c_d_id = 1 AND b.c_d_id = 2 AND a.c_id = b.c_id"
        )),
        vec!["5"]
    );
    let plan = access(
        &mut s,
        "SELECT COUNT(*) FROM customer1 a, customer1 b, warehouse1 w
         WHERE a.c_w_id = b.c_w_id AND b.c_w_id = w.w_id AND w.w_id = 3
           AND a.c_d_id = 1 AND b.c_d_id = 2 AND a.c_id = b.c_id",
    );
    assert!(plan.iter().all(|(_, t)| t != "ALL"), "{plan:?}");
    drop(s);
    drop(inst);
}

/// (table, type, rows, Extra) of each EXPLAIN row, in join order.
fn explain(s: &mut Session, sql: &str) -> Vec<(String, String, String, String)> {
    q(s, &format!("EXPLAIN {sql}"))
        .into_iter()
        .map(|r| {
            let t = |i: usize| String::from_utf8_lossy(&r[i].text()).into_owned();
            (t(2), t(3), t(8), t(9))
        })
        .collect()
}

/// `big` (2000 rows, an index on its link to `small`) and `small` (20 rows).
fn big_and_small(s: &mut Session) {
    q(s, "CREATE DATABASE jo");
    q(s, "USE jo");
    q(
        s,
        "CREATE TABLE big (id INT PRIMARY KEY, sid INT, pad VARCHAR(20), KEY (sid))",
    );
    q(
        s,
        "CREATE TABLE small (id INT PRIMARY KEY, tag INT, name VARCHAR(10))",
    );
    for chunk in 0..20 {
        let vals: Vec<String> = (0..100)
            .map(|i| {
                let id = chunk * 100 + i;
                format!("({id}, {}, 'p{id}')", id % 20)
            })
            .collect();
        q(s, &format!("INSERT INTO big VALUES {}", vals.join(",")));
    }
    let vals: Vec<String> = (0..20)
        .map(|i| format!("({i}, {}, 'n{i}')", i % 5))
        .collect();
    q(s, &format!("INSERT INTO small VALUES {}", vals.join(",")));
}

#[test]
fn join_order_follows_estimated_cost() {
    let d = testkit::TempDir::new("sql-planner-order");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    big_and_small(&mut s);
    // Estimates follow inserts without ANALYZE.
    assert_eq!(
        texts(q(&mut s, "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'jo' ORDER BY 1")),
        vec!["big|2000", "small|20"]
    );
    // FROM order puts the big table first; the small selective table drives
    // and the big one is read by its index on the join column.
    let sql =
        "SELECT big.id, small.name FROM big, small WHERE big.sid = small.id AND small.tag = 3";
    let plan = explain(&mut s, sql);
    assert_eq!(plan[0].0, "small", "{plan:?}");
    assert_eq!(
        (plan[1].0.as_str(), plan[1].1.as_str()),
        ("big", "ref"),
        "{plan:?}"
    );
    assert_eq!(plan[1].2, "200", "rows per key before ANALYZE: {plan:?}");
    let mut got = texts(q(&mut s, sql));
    got.sort();
    assert_eq!(got.len(), 400);
    let mut want = texts(q(&mut s, &format!("SELECT STRAIGHT_JOIN {}", &sql[7..])));
    want.sort();
    assert_eq!(got, want);
    // The same with JOIN ... ON.
    let on = "SELECT big.id FROM big JOIN small ON big.sid = small.id WHERE small.tag = 3";
    assert_eq!(explain(&mut s, on)[0].0, "small");
    // SELECT * keeps FROM order whatever the join order.
    let star = q(
        &mut s,
        "SELECT * FROM big, small WHERE big.sid = small.id AND small.id = 7 AND big.id = 27",
    );
    assert_eq!(texts(star), vec!["27|7|p27|7|2|n7"]);
    // LEFT JOIN keeps its order: the right side after the left.
    let left = "SELECT big.id FROM big LEFT JOIN small ON big.sid = small.id AND small.tag = 3";
    let plan = explain(&mut s, left);
    assert_eq!(plan[0].0, "big", "{plan:?}");
    assert_eq!(q(&mut s, left).len(), 2000);
    // STRAIGHT_JOIN keeps FROM order, as a modifier or as the join.
    let plan = explain(
        &mut s,
        "SELECT STRAIGHT_JOIN big.id FROM big, small WHERE big.sid = small.id AND small.tag = 3",
    );
    assert_eq!(plan[0].0, "big", "{plan:?}");
    let plan = explain(
        &mut s,
        "SELECT big.id FROM big STRAIGHT_JOIN small ON big.sid = small.id WHERE small.tag = 3",
    );
    assert_eq!(plan[0].0, "big", "{plan:?}");
    // A selective condition on the big table's key makes it the driver.
    let plan = explain(
        &mut s,
        "SELECT small.name FROM small, big WHERE big.sid = small.id AND big.id = 5",
    );
    assert_eq!(
        (plan[0].0.as_str(), plan[0].1.as_str()),
        ("big", "const"),
        "{plan:?}"
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT small.name FROM small, big WHERE big.sid = small.id AND big.id = 5"
        )),
        vec!["n5"]
    );
}

#[test]
fn analyze_cardinality_persists_and_bad_records_are_ignored() {
    let d = testkit::TempDir::new("sql-planner-stats");
    let card = |s: &mut Session| {
        texts(q(s, "SELECT INDEX_NAME, SEQ_IN_INDEX, CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_NAME = 'big' ORDER BY 1, 2"))
    };
    {
        let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
        let mut s = inst.session(1, "root", None);
        big_and_small(&mut s);
        assert_eq!(
            texts(q(&mut s, "ANALYZE TABLE big, small")),
            vec!["jo.big|analyze|status|OK", "jo.small|analyze|status|OK"]
        );
        assert_eq!(card(&mut s), vec!["PRIMARY|1|2000", "sid|1|20"]);
        let show: Vec<String> = q(&mut s, "SHOW INDEX FROM big")
            .into_iter()
            .map(|r| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(&r[2].text()),
                    String::from_utf8_lossy(&r[6].text())
                )
            })
            .collect();
        assert_eq!(show, vec!["PRIMARY=2000", "sid=20"]);
        // With ANALYZE's cardinality: 100 rows per sid.
        let plan = explain(
            &mut s,
            "SELECT big.id FROM big, small WHERE big.sid = small.id AND small.tag = 3",
        );
        assert_eq!(
            (plan[1].0.as_str(), plan[1].2.as_str()),
            ("big", "100"),
            "{plan:?}"
        );
        q(&mut s, "DELETE FROM big WHERE id >= 1000");
        assert_eq!(
            texts(q(
                &mut s,
                "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = 'big'"
            )),
            vec!["1000"]
        );
    }
    // Stored: the same after a restart (ANALYZE's row count, not the later deletes).
    {
        let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
        let mut s = inst.session(1, "root", None);
        q(&mut s, "USE jo");
        assert_eq!(card(&mut s), vec!["PRIMARY|1|2000", "sid|1|20"]);
        // A damaged statistics record: the table still opens, estimates
        // come from the engine.
        let mut k = vec![0, 0, 0, 1, b'S'];
        k.extend_from_slice(b"jo\0big");
        inst.txdb.db().put(&k, &[1, 2, 3]).unwrap();
    }
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    q(&mut s, "USE jo");
    assert_eq!(texts(q(&mut s, "SELECT COUNT(*) FROM big")), vec!["1000"]);
    let c = card(&mut s);
    assert_ne!(c, vec!["PRIMARY|1|2000", "sid|1|20"], "{c:?}");
    // ANALYZE writes a good record again.
    q(&mut s, "ANALYZE TABLE big");
    assert_eq!(card(&mut s), vec!["PRIMARY|1|1000", "sid|1|20"]);
}

#[test]
fn unindexed_equi_join_hashes_the_inner_table() {
    let d = testkit::TempDir::new("sql-planner-hash");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE h");
    q(&mut s, "USE h");
    q(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, k INT, s VARCHAR(10))",
    );
    q(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, k INT, s VARCHAR(10))",
    );
    for t in ["a", "b"] {
        for chunk in 0..20 {
            let vals: Vec<String> = (0..100)
                .map(|i| {
                    let id = chunk * 100 + i;
                    let k = if id % 97 == 0 {
                        "NULL".to_string()
                    } else {
                        ((id * 7) % 500).to_string()
                    };
                    let s = if t == "a" {
                        format!("'x{}'", id % 50)
                    } else {
                        format!("'X{}'", id % 40)
                    };
                    format!("({id}, {k}, {s})")
                })
                .collect();
            q(
                &mut s,
                &format!("INSERT INTO {t} VALUES {}", vals.join(",")),
            );
        }
    }
    // Expected: key k of a row id is (id*7)%500 unless id%97 == 0 (NULL).
    let key = |id: i64| (id % 97 != 0).then_some((id * 7) % 500);
    let mut want = 0i64;
    for x in 0..2000 {
        for y in 0..2000 {
            if key(x).is_some() && key(x) == key(y) {
                want += 1;
            }
        }
    }
    let sql = "SELECT COUNT(*) FROM a, b WHERE a.k = b.k";
    let plan = explain(&mut s, sql);
    assert_eq!(plan[1].1, "hash_ALL", "{plan:?}");
    assert!(
        plan[1].3.contains("Using join buffer (flat, BNLH join)"),
        "{plan:?}"
    );
    let t0 = std::time::Instant::now();
    assert_eq!(texts(q(&mut s, sql)), vec![want.to_string()]);
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
    // Collated strings hash under their collation ('x1' = 'X1').
    let strs = "SELECT COUNT(*) FROM a JOIN b ON a.s = b.s";
    assert_eq!(explain(&mut s, strs)[1].1, "hash_ALL");
    let mut want = 0;
    for x in 0..2000 {
        for y in 0..2000 {
            if x % 50 == y % 40 {
                want += 1;
            }
        }
    }
    assert_eq!(texts(q(&mut s, strs)), vec![want.to_string()]);
    // A LEFT JOIN keeps unmatched rows with NULLs.
    let left = "SELECT COUNT(*), COUNT(b.id) FROM a LEFT JOIN b ON a.k = b.k AND b.id < 10";
    let matched = (0..2000)
        .filter(|&x| (0..10).any(|y| key(x).is_some() && key(x) == key(y)))
        .count();
    let pairs: usize = (0..2000)
        .map(|x| {
            (0..10)
                .filter(|&y| key(x).is_some() && key(x) == key(y))
                .count()
        })
        .sum();
    assert_eq!(
        texts(q(&mut s, left)),
        vec![format!("{}|{}", 2000 - matched + pairs, pairs)]
    );
    // Past tmp_table_size the join falls back to nested loops (same rows).
    q(&mut s, "SET tmp_table_size = 1024");
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT COUNT(*) FROM a, b WHERE a.k = b.k AND a.id < 50"
        )),
        texts(q(
            &mut s,
            "SELECT COUNT(*) FROM a, b WHERE a.k + 0 = b.k + 0 AND a.id < 50"
        ))
    );
}

#[test]
fn tpcc_stock_level_keeps_its_plan() {
    let d = testkit::TempDir::new("sql-planner-tpcc");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    q(&mut s, "CREATE DATABASE tp");
    q(&mut s, "USE tp");
    q(&mut s, "CREATE TABLE stock1 (s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT, PRIMARY KEY (s_w_id, s_i_id))");
    q(&mut s, "CREATE TABLE order_line1 (ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL, ol_i_id INT, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))");
    for w in 1..=2 {
        let vals: Vec<String> = (1..=1000)
            .map(|i| format!("({i}, {w}, {})", i % 100))
            .collect();
        q(
            &mut s,
            &format!("INSERT INTO stock1 VALUES {}", vals.join(",")),
        );
        for dd in 1..=3 {
            let vals: Vec<String> = (1..=100)
                .flat_map(|o| {
                    (1..=5)
                        .map(move |n| format!("({o}, {dd}, {w}, {n}, {})", (o * 7 + n) % 1000 + 1))
                })
                .collect();
            q(
                &mut s,
                &format!("INSERT INTO order_line1 VALUES {}", vals.join(",")),
            );
        }
    }
    let sql =
        "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line1, stock1 WHERE ol_w_id = 1 AND ol_d_id = 2
        AND ol_o_id < 90 AND ol_o_id >= 70 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 50";
    for analyzed in [false, true] {
        let plan = explain(&mut s, sql);
        assert_eq!(
            (plan[0].0.as_str(), plan[0].1.as_str()),
            ("order_line1", "range"),
            "{analyzed}: {plan:?}"
        );
        assert_eq!(
            (plan[1].0.as_str(), plan[1].1.as_str()),
            ("stock1", "const"),
            "{analyzed}: {plan:?}"
        );
        q(&mut s, "ANALYZE TABLE order_line1, stock1");
    }
    let want = q(&mut s, &format!("SELECT STRAIGHT_JOIN {}", &sql[7..]));
    assert_eq!(q(&mut s, sql), want);
}
