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
