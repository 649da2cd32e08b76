//! ENUM/SET member lists are freed once nothing refers to them: a client
//! creating and dropping tables with ever new member lists (a hostile
//! input: up to 65,535 members each) does not grow the server's memory.
//! `Members::live_lists` counts the lists alive in the process, so this
//! file holds a single test (no other test of its binary allocates lists
//! meanwhile). Interned lists that were never freed (the old design) made
//! the count grow by one per table.
#![allow(clippy::unwrap_used)]
use rel::members::Members;
use sql::result::Collect;

mod common;
use common::{q, rows, session_in_d, TestDb};

/// An ENUM list of `n` members unique to round `round`.
fn members(round: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("'r{round}m{i}'"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn dropped_tables_free_their_member_lists() {
    let db = TestDb::open("sql-enum-memory");
    let mut s = session_in_d(&db);
    let base = Members::live_lists();
    q(&mut s, "CREATE TABLE tx (id INT PRIMARY KEY)");
    for round in 0..60 {
        q(
            &mut s,
            &format!(
                "CREATE TABLE t{round} (id INT PRIMARY KEY, e ENUM({}) NOT NULL, \
                 s SET('a{round}','b{round}'), KEY(e))",
                members(round, 3000)
            ),
        );
        q(
            &mut s,
            &format!("INSERT INTO t{round} VALUES (1, 'r{round}m7', 'b{round}'), (2, 9, 3)"),
        );
        // Plans and a cached prepared statement hold the types too.
        assert_eq!(
            rows(
                &mut s,
                &format!("SELECT e, e+0, s FROM t{round} WHERE e = 'r{round}m8' ORDER BY e")
            ),
            [format!("r{round}m8|9|a{round},b{round}")]
        );
        q(
            &mut s,
            &format!("PREPARE st FROM 'SELECT e FROM t{round} WHERE e = ?'"),
        );
        q(&mut s, &format!("SET @v = 'r{round}m7'"));
        assert_eq!(rows(&mut s, "EXECUTE st USING @v"), [format!("r{round}m7")]);
        // ALTER TABLE rebuilds with a new list (one more member).
        if round % 10 == 0 {
            q(
                &mut s,
                &format!(
                    "ALTER TABLE t{round} MODIFY e ENUM({},'x') NOT NULL",
                    members(round, 3000)
                ),
            );
        }
        q(&mut s, &format!("DROP TABLE t{round}"));
        q(&mut s, "DEALLOCATE PREPARE st");
        // At most this round's lists linger in stale statement-cache
        // entries (until the next statement is cached); nothing
        // accumulates across rounds.
        let live = Members::live_lists();
        assert!(
            live <= base + 2,
            "round {round}: {live} member lists alive, {base} before any table"
        );
    }
    // A failed CREATE (a duplicate member) leaves no list behind either.
    let mut c = Collect::default();
    let bad = format!("CREATE TABLE bad (e ENUM({},'r0m1'))", members(0, 3000));
    assert_eq!(s.query(&bad, &mut c).unwrap_err().code, 1291);
    // The next statement cached drops the stale entries.
    q(&mut s, "SELECT id FROM tx WHERE id = 5");
    assert_eq!(Members::live_lists(), base, "lists alive after the tables");
    drop(s);
    drop(db);
    assert_eq!(Members::live_lists(), base);
}
