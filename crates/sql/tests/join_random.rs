//! Join results under cost-based reordering and hash joins, against a
//! nested-loop oracle in FROM order: random tables (some indexed, NULLs,
//! sizes from empty to a few hundred rows, some ANALYZEd) and random
//! joins (comma, JOIN ... ON, LEFT JOIN ... ON, STRAIGHT_JOIN) with random
//! ON and WHERE conditions. Seeded (SEED=... replays a failure).
use sql::{Instance, InstanceOptions};

mod common;
use common::texts;

/// A column: (table, column 0 = id, 1 = a, 2 = b).
type Col = (usize, usize);

#[derive(Clone, Debug)]
enum Cond {
    Eq(Col, Col),
    EqC(Col, i64),
    Lt(Col, i64),
    IsNull(Col),
}

impl Cond {
    fn sql(&self) -> String {
        let c = |(t, k): &Col| format!("t{t}.{}", ["id", "a", "b"][*k]);
        match self {
            Cond::Eq(x, y) => format!("{} = {}", c(x), c(y)),
            Cond::EqC(x, v) => format!("{} = {v}", c(x)),
            Cond::Lt(x, v) => format!("{} < {v}", c(x)),
            Cond::IsNull(x) => format!("{} IS NULL", c(x)),
        }
    }

    /// True only when the condition is TRUE (NULL comparisons are not).
    fn holds(&self, row: &[Option<Vec<Option<i64>>>]) -> bool {
        let v = |(t, k): &Col| row[*t].as_ref().and_then(|r| r[*k]);
        match self {
            Cond::Eq(x, y) => matches!((v(x), v(y)), (Some(a), Some(b)) if a == b),
            Cond::EqC(x, c) => v(x) == Some(*c),
            Cond::Lt(x, c) => v(x).is_some_and(|a| a < *c),
            Cond::IsNull(x) => v(x).is_none(),
        }
    }
}

/// How table j joins the tables before it.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Comma,
    Inner,
    Left,
}

fn random_cond(r: &mut testkit::Rng, tables: usize, must: Option<usize>) -> Cond {
    let t = must.unwrap_or_else(|| r.below(tables as u64) as usize);
    let col = |r: &mut testkit::Rng, t: usize| (t, r.below(3) as usize);
    match r.below(10) {
        0..=5 if tables > 1 => {
            let mut o = r.below(tables as u64) as usize;
            if o == t {
                o = (o + 1) % tables;
            }
            Cond::Eq(col(r, t), col(r, o))
        }
        6 => Cond::EqC(col(r, t), r.range(0, 5)),
        7 | 8 => Cond::Lt(col(r, t), r.range(0, 6)),
        _ => Cond::IsNull(col(r, t)),
    }
}

#[test]
fn reordered_joins_match_nested_loops() {
    let mut r = testkit::Rng::from_env("reordered_joins_match_nested_loops");
    let d = testkit::TempDir::new("sql-join-random");
    let inst = Instance::open(&d.0, &InstanceOptions::default()).unwrap();
    let mut s = inst.session(1, "root", None);
    common::q(&mut s, "CREATE DATABASE jr");
    common::q(&mut s, "USE jr");
    let mut data: Vec<Vec<Vec<Option<i64>>>> = Vec::new();
    for t in 0..4 {
        let keys = match r.below(3) {
            0 => "",
            1 => ", KEY (a)",
            _ => ", KEY (a, b), KEY (b)",
        };
        common::q(
            &mut s,
            &format!("CREATE TABLE t{t} (id INT PRIMARY KEY, a INT, b INT{keys})"),
        );
        let n = [0, 3, 20, 300][r.below(4) as usize] + r.below(5);
        // t0 and t1 are in every join: rows there keep the comparison from being vacuous.
        let n = if t < 2 { n.max(3) } else { n };
        let mut rows = Vec::new();
        for id in 0..n as i64 {
            let v = |r: &mut testkit::Rng| (!r.one_in(5)).then(|| r.range(0, 5));
            let row = vec![Some(id), v(&mut r), v(&mut r)];
            rows.push(row);
        }
        for chunk in rows.chunks(100) {
            let vals: Vec<String> = chunk
                .iter()
                .map(|row| {
                    let f = |x: &Option<i64>| x.map_or("NULL".to_string(), |v| v.to_string());
                    format!("({}, {}, {})", f(&row[0]), f(&row[1]), f(&row[2]))
                })
                .collect();
            common::q(
                &mut s,
                &format!("INSERT INTO t{t} VALUES {}", vals.join(",")),
            );
        }
        if r.chance(50) {
            common::q(&mut s, &format!("ANALYZE TABLE t{t}"));
        }
        data.push(rows);
    }
    let mut total = 0;
    for round in 0..250 {
        let m = 2 + r.below(3) as usize;
        // Keep the oracle's cross products small.
        if data[..m].iter().map(|t| t.len().max(1)).product::<usize>() > 100_000 {
            continue;
        }
        let mut kinds = vec![Kind::Comma];
        let mut ons: Vec<Vec<Cond>> = vec![Vec::new()];
        for j in 1..m {
            let k = match r.below(4) {
                0 => Kind::Comma,
                1 | 2 => Kind::Inner,
                _ => Kind::Left,
            };
            let mut on = Vec::new();
            if k != Kind::Comma {
                // ON conditions read table j and tables before it.
                for _ in 0..1 + r.below(2) {
                    let mut c = random_cond(&mut r, j + 1, Some(j));
                    if let Cond::Eq(_, (o, _)) = &mut c {
                        *o = (*o).min(j);
                    }
                    on.push(c);
                }
            }
            kinds.push(k);
            ons.push(on);
        }
        // A comma after a LEFT JOIN would change precedence: use JOIN ON TRUE.
        let wheres: Vec<Cond> = (0..r.below(4))
            .map(|_| random_cond(&mut r, m, None))
            .collect();
        let straight = r.one_in(6);
        let mut sql = format!(
            "SELECT {}{} FROM t0",
            if straight { "STRAIGHT_JOIN " } else { "" },
            (0..m)
                .map(|t| format!("t{t}.id, t{t}.a, t{t}.b"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for j in 1..m {
            let on = if ons[j].is_empty() {
                "TRUE".to_string()
            } else {
                ons[j]
                    .iter()
                    .map(Cond::sql)
                    .collect::<Vec<_>>()
                    .join(" AND ")
            };
            match kinds[j] {
                Kind::Comma if !kinds[..j].contains(&Kind::Left) => {
                    sql.push_str(&format!(", t{j}"))
                }
                Kind::Comma | Kind::Inner => sql.push_str(&format!(" JOIN t{j} ON {on}")),
                Kind::Left => sql.push_str(&format!(" LEFT JOIN t{j} ON {on}")),
            }
        }
        if !wheres.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(
                &wheres
                    .iter()
                    .map(Cond::sql)
                    .collect::<Vec<_>>()
                    .join(" AND "),
            );
        }
        // The oracle: nested loops in FROM order.
        let mut partial: Vec<Vec<Option<Vec<Option<i64>>>>> = vec![vec![None; m]];
        for j in 0..m {
            let mut next = Vec::new();
            for p in partial {
                let mut any = false;
                for row in &data[j] {
                    let mut q = p.clone();
                    q[j] = Some(row.clone());
                    if ons[j].iter().all(|c| c.holds(&q)) {
                        any = true;
                        next.push(q);
                    }
                }
                if !any && kinds[j] == Kind::Left {
                    next.push(p);
                }
            }
            partial = next;
        }
        let f = |x: &Option<i64>| x.map_or("NULL".to_string(), |v| v.to_string());
        let mut want: Vec<String> = partial
            .into_iter()
            .filter(|row| wheres.iter().all(|c| c.holds(row)))
            .map(|row| {
                row.iter()
                    .map(|t| match t {
                        Some(v) => v.iter().map(f).collect::<Vec<_>>().join("|"),
                        None => "NULL|NULL|NULL".to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect();
        want.sort();
        let mut got = texts(common::q(&mut s, &sql));
        got.sort();
        assert_eq!(
            got.len(),
            want.len(),
            "round {round}: {sql}\nplan: {:?}",
            texts(common::q(&mut s, &format!("EXPLAIN {sql}")))
        );
        assert_eq!(got, want, "round {round}: {sql}");
        total += got.len();
    }
    eprintln!("compared {total} rows");
    assert!(total > 0);
}
