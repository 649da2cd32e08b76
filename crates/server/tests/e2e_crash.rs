//! The crash loop: writer threads run autocommit INSERTs and multi-statement
//! transactions (bank transfers that lock both accounts with SELECT ... FOR
//! UPDATE and move money, which updates a secondary index on the balance, plus
//! event rows with secondary indexes) against a server with sync-on-commit (and
//! small memtables, so flushes and compactions run too), recording every
//! acknowledged commit; the server is killed with SIGKILL at a random moment and
//! restarted on the same data directory. Every acknowledged commit must be
//! there, no transaction may be partly visible, the sum of the balances must not
//! change, every secondary index must agree with a full scan, and CHECK TABLE
//! must pass. `SEED=n` replays, `CRASH_CYCLES=n` sets the number of cycles (5
//! by default; docs/TESTING.md has the 1,000-cycle run), `STRATA_BIN=path` runs
//! another build of the server (e.g. target/release/strata).
//!
//! `CRASH_FULL_EVERY=n` (default 1: every cycle) checks the whole history (every
//! transaction of every cycle, CHECK TABLE ev, index against scan) every n-th
//! cycle and at the last; the cycles between check this cycle's transactions one
//! by one, the total number of event rows against the history (any lost or
//! duplicated older row changes it), the accounts, and CHECK TABLE of the small
//! tables. A long run's history grows to a million rows, and scanning it eight
//! times per cycle would make the run quadratic.
#![allow(clippy::unwrap_used)]

mod common;

use common::{err_code, exec, q, q_i64, Rng, Server};
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WRITERS: u64 = 4;
const ACCOUNTS: i64 = 8;

/// What one writer knows after the crash.
#[derive(Default)]
struct Log {
    /// txn id -> number of rows, for every acknowledged commit.
    acked: BTreeMap<u64, u64>,
    /// The commit sent when the server died (may or may not be durable).
    inflight: Option<(u64, u64)>,
    /// Transactions rolled back by the client: must be absent.
    aborted: Vec<u64>,
}

fn setup(srv: &Server) {
    let mut c = srv.fresh_db("crash");
    exec(
        &mut c,
        "CREATE TABLE ev (id BIGINT UNSIGNED PRIMARY KEY, txn BIGINT UNSIGNED NOT NULL,
            writer INT NOT NULL, nparts INT NOT NULL, multi TINYINT NOT NULL,
            payload VARCHAR(200) NOT NULL, KEY k_txn (txn), KEY k_writer (writer, txn))",
    );
    exec(
        &mut c,
        "CREATE TABLE acct (id INT PRIMARY KEY, balance BIGINT NOT NULL,
            moves BIGINT NOT NULL DEFAULT 0, KEY k_bal (balance), KEY k_moves (moves, id))",
    );
    exec(
        &mut c,
        "CREATE TABLE wstate (writer INT PRIMARY KEY, last_txn BIGINT UNSIGNED NOT NULL)",
    );
    let a: Vec<String> = (1..=ACCOUNTS).map(|i| format!("({i}, 1000, 0)")).collect();
    exec(&mut c, &format!("INSERT INTO acct VALUES {}", a.join(",")));
    let w: Vec<String> = (0..WRITERS).map(|i| format!("({i}, 0)")).collect();
    exec(
        &mut c,
        &format!("INSERT INTO wstate VALUES {}", w.join(",")),
    );
}

fn writer(mut conn: Conn, w: u64, cycle: u64, mut rng: Rng, killed: Arc<AtomicBool>) -> Log {
    let mut log = Log::default();
    let ins = match conn
        .prep("INSERT INTO ev (id, txn, writer, nparts, multi, payload) VALUES (?, ?, ?, ?, ?, ?)")
    {
        Ok(s) => s,
        Err(_) if killed.load(Ordering::SeqCst) => return log,
        Err(e) => panic!("writer {w}: prepare: {e}"),
    };
    for n in 0.. {
        let txn = (cycle + 1) * 1_000_000_000 + w * 10_000_000 + n;
        let payload = format!("{txn}-{}", "x".repeat(rng.range(10, 150) as usize));
        let multi = rng.prob(0.5);
        let r: mysql::Result<()> = if !multi {
            // One autocommit INSERT, alternately through text and prepared.
            log.inflight = Some((txn, 1));
            if n % 2 == 0 {
                conn.query_drop(format!(
                    "INSERT INTO ev VALUES ({}, {txn}, {w}, 1, 0, '{payload}')",
                    txn * 10
                ))
            } else {
                conn.exec_drop(&ins, (txn * 10, txn, w, 1, 0, &payload))
            }
        } else {
            let parts = rng.range(2, 6) as u64;
            let (a, b) = (rng.range(1, ACCOUNTS), rng.range(1, ACCOUNTS));
            let amount = rng.range(-50, 50);
            (|| {
                conn.query_drop("BEGIN")?;
                for p in 0..parts {
                    conn.exec_drop(&ins, (txn * 10 + p, txn, w, parts, 1, &payload))?;
                }
                // Lock both accounts (in id order: no deadlocks between
                // writers), read their balances, then write the new ones:
                // each write moves the rows in the balance and moves indexes.
                let (lo, hi) = (a.min(b), a.max(b));
                let locked: Vec<(i64, i64)> = conn.query(format!(
                    "SELECT id, balance FROM acct WHERE id IN ({lo}, {hi}) ORDER BY id FOR UPDATE"
                ))?;
                assert_eq!(
                    locked.len(),
                    if lo == hi { 1 } else { 2 },
                    "writer {w}: {locked:?}"
                );
                for (id, delta) in [(lo, amount), (hi, -amount)] {
                    let bal = locked.iter().find(|(i, _)| *i == id).map(|(_, b)| *b);
                    let bal = bal.unwrap_or_else(|| panic!("writer {w}: account {id} not locked"));
                    // lo == hi: the second write sees the first one's result.
                    let bal = if lo == hi && delta == -amount {
                        bal + amount
                    } else {
                        bal
                    };
                    conn.query_drop(format!(
                        "UPDATE acct SET balance = {}, moves = moves + 1 WHERE id = {id}",
                        bal + delta
                    ))?;
                }
                conn.exec_drop("UPDATE wstate SET last_txn = ? WHERE writer = ?", (txn, w))?;
                log.inflight = Some((txn, parts));
                conn.query_drop("COMMIT")
            })()
        };
        match r {
            Ok(()) => {
                let (t, p) = log.inflight.take().unwrap();
                log.acked.insert(t, p);
            }
            Err(_) if killed.load(Ordering::SeqCst) => return log,
            Err(e) if matches!(err_code(&e), Some((1213 | 1205, _))) => {
                if let Err(e) = conn.query_drop("ROLLBACK") {
                    assert!(killed.load(Ordering::SeqCst), "writer {w}: ROLLBACK: {e}");
                    return log;
                }
                log.inflight = None;
                log.aborted.push(txn);
            }
            Err(e) => panic!("writer {w} cycle {cycle}: {e}"),
        }
    }
    log
}

/// The light check between full ones (see the module comment).
fn verify_light(srv: &Server, logs: &[Log], cycle: u64) -> (usize, usize) {
    let mut c = srv.conn_db("crash");
    let lo = (cycle + 1) * 1_000_000_000;
    // This cycle's transactions: whole, acknowledged ones present, nothing unknown.
    let present: BTreeMap<u64, (u64, u64, u64)> = c
        .query::<(u64, u64, u64, u64), _>(format!(
            "SELECT txn, COUNT(*), MIN(nparts), MAX(nparts) FROM ev WHERE txn >= {lo} AND txn < {} GROUP BY txn",
            lo + 1_000_000_000
        ))
        .unwrap()
        .into_iter()
        .map(|(t, n, a, b)| (t, (n, a, b)))
        .collect();
    for (txn, (n, a, b)) in &present {
        assert!(
            n == a && a == b,
            "cycle {cycle}: partially applied transaction {txn}: {n} rows of {a}..{b}"
        );
    }
    let mut maybe = 0;
    let mut expected_rows: u64 = 0;
    for (w, log) in logs.iter().enumerate() {
        for (txn, parts) in &log.acked {
            expected_rows += parts;
            if *txn >= lo {
                assert_eq!(
                    present.get(txn).map(|p| p.0),
                    Some(*parts),
                    "cycle {cycle}: acknowledged txn {txn} of writer {w} lost"
                );
            }
        }
        if let Some((txn, parts)) = log.inflight {
            if let Some((n, _, _)) = present.get(&txn) {
                assert_eq!(*n, parts, "cycle {cycle}: in-flight txn {txn}");
                expected_rows += parts;
                maybe += 1;
            }
        }
        for txn in log.aborted.iter().filter(|t| **t >= lo) {
            assert!(
                !present.contains_key(txn),
                "cycle {cycle}: rolled-back txn {txn} is visible"
            );
        }
    }
    for txn in present.keys() {
        assert!(
            logs.iter().any(|l| l.acked.contains_key(txn)
                || l.inflight.is_some_and(|(t, _)| t == *txn)
                || l.aborted.contains(txn)),
            "cycle {cycle}: txn {txn} appeared from nowhere"
        );
    }
    // Every older acknowledged row is still there, and nothing more.
    assert_eq!(
        q_i64(&mut c, "SELECT COUNT(*) FROM ev") as u64,
        expected_rows,
        "cycle {cycle}: event rows vs the acknowledged history"
    );
    check_accounts(&mut c, cycle);
    for t in ["acct", "wstate"] {
        assert_eq!(
            q(&mut c, &format!("CHECK TABLE {t}")),
            vec![format!("crash.{t}|check|status|OK")],
            "cycle {cycle}"
        );
    }
    (present.len(), maybe)
}

fn verify(srv: &Server, logs: &[Log], cycle: u64) -> (usize, usize) {
    let mut c = srv.conn_db("crash");
    // All transactions are whole.
    let partial = q(
        &mut c,
        "SELECT txn, COUNT(*), MIN(nparts), MAX(nparts) FROM ev GROUP BY txn HAVING COUNT(*) <> MIN(nparts) OR MIN(nparts) <> MAX(nparts)",
    );
    assert!(
        partial.is_empty(),
        "cycle {cycle}: partially applied transactions: {partial:?}"
    );
    let present: BTreeMap<u64, u64> = c
        .query::<(u64, u64), _>("SELECT txn, COUNT(*) FROM ev GROUP BY txn")
        .unwrap()
        .into_iter()
        .collect();
    let mut maybe = 0;
    let mut allowed = BTreeSet::new();
    for (w, log) in logs.iter().enumerate() {
        for (txn, parts) in &log.acked {
            assert_eq!(
                present.get(txn),
                Some(parts),
                "cycle {cycle}: acknowledged txn {txn} of writer {w} lost"
            );
            allowed.insert(*txn);
        }
        if let Some((txn, parts)) = log.inflight {
            if let Some(n) = present.get(&txn) {
                assert_eq!(*n, parts, "cycle {cycle}: in-flight txn {txn}");
                maybe += 1;
            }
            allowed.insert(txn);
        }
        for txn in &log.aborted {
            assert!(
                !present.contains_key(txn),
                "cycle {cycle}: rolled-back txn {txn} is visible"
            );
        }
    }
    // Nothing that was never sent (this cycle's ids are all known).
    let lo = (cycle + 1) * 1_000_000_000;
    for txn in present
        .keys()
        .filter(|t| **t >= lo && **t < lo + 1_000_000_000)
    {
        assert!(
            allowed.contains(txn),
            "cycle {cycle}: txn {txn} appeared from nowhere"
        );
    }
    check_accounts(&mut c, cycle);
    for w in 0..WRITERS {
        // The secondary index agrees with a full scan.
        let by_ix = q_i64(
            &mut c,
            &format!("SELECT COUNT(*) FROM ev WHERE writer = {w}"),
        );
        let by_scan = q_i64(
            &mut c,
            &format!("SELECT COUNT(*) FROM ev WHERE writer + 0 = {w}"),
        );
        assert_eq!(by_ix, by_scan, "cycle {cycle}: writer {w} index vs scan");
    }
    for t in ["ev", "acct", "wstate"] {
        assert_eq!(
            q(&mut c, &format!("CHECK TABLE {t}")),
            vec![format!("crash.{t}|check|status|OK")],
            "cycle {cycle}"
        );
    }
    (present.len(), maybe)
}

/// Money is conserved, each writer's state row matches its rows, and the
/// account indexes agree with the rows.
fn check_accounts(c: &mut Conn, cycle: u64) {
    // Money is conserved and each writer's state row matches its last
    // multi-statement transaction (updated in the same transactions).
    assert_eq!(
        q_i64(c, "SELECT SUM(balance) FROM acct"),
        ACCOUNTS * 1000,
        "cycle {cycle}"
    );
    for w in 0..WRITERS {
        let last = q_i64(
            c,
            &format!("SELECT last_txn FROM wstate WHERE writer = {w}"),
        );
        let max = q_i64(
            c,
            &format!("SELECT COALESCE(MAX(txn), 0) FROM ev WHERE writer = {w} AND multi = 1"),
        );
        assert_eq!(last, max, "cycle {cycle}: writer {w} state vs its rows");
    }
    // The account indexes agree with the rows (balance and moves change on
    // every transfer); a range on an indexed column is read through its index.
    let rows = q(c, "SELECT id, balance, moves FROM acct ORDER BY id");
    let by_bal = q(
        c,
        "SELECT id, balance, moves FROM acct WHERE balance > -1000000000 ORDER BY id",
    );
    let by_moves = q(
        c,
        "SELECT id, balance, moves FROM acct WHERE moves >= 0 ORDER BY id",
    );
    assert_eq!(rows, by_bal, "cycle {cycle}: balance index vs rows");
    assert_eq!(rows, by_moves, "cycle {cycle}: moves index vs rows");
}

#[test]
fn acknowledged_commits_survive_kill_9() {
    let cycles: u64 = std::env::var("CRASH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    // How long writers run before each kill, in ms (CRASH_WRITE_MS=lo,hi; a long
    // run uses shorter windows so its growing history stays quick to verify).
    let write_ms: (i64, i64) = std::env::var("CRASH_WRITE_MS")
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once(',')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .filter(|(a, b)| a < b)
        .unwrap_or((300, 2500));
    let full_every: u64 = std::env::var("CRASH_FULL_EVERY")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1);
    let mut rng = Rng::from_env("acknowledged_commits_survive_kill_9");
    let mut srv = Server::start_with("crash", &["--sync-on-commit=1", "--write-buffer-size=256K"]);
    setup(&srv);
    let mut all_logs: Vec<Log> = (0..WRITERS).map(|_| Log::default()).collect();
    let mut total_acked = 0;
    for cycle in 0..cycles {
        let killed = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..WRITERS)
            .map(|w| {
                let conn = srv.conn_db("crash");
                let (rng, killed) = (Rng::new(rng.next_u64()), killed.clone());
                std::thread::spawn(move || writer(conn, w, cycle, rng, killed))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(
            rng.range(write_ms.0, write_ms.1) as u64
        ));
        assert!(
            srv.is_running(),
            "the server died by itself in cycle {cycle}"
        );
        killed.store(true, Ordering::SeqCst);
        srv.kill9();
        let logs: Vec<Log> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let acked: usize = logs.iter().map(|l| l.acked.len()).sum();
        total_acked += acked;
        srv.restart();
        // Merge into the history of all cycles: earlier acknowledged commits
        // must stay too; an earlier in-flight one is now decided.
        for (all, log) in all_logs.iter_mut().zip(logs) {
            all.acked.extend(log.acked);
            all.aborted.extend(log.aborted);
            all.inflight = log.inflight;
        }
        let full = cycle % full_every == 0 || cycle + 1 == cycles;
        let (present, maybe) = if full {
            verify(&srv, &all_logs, cycle)
        } else {
            verify_light(&srv, &all_logs, cycle)
        };
        let what = if full {
            "txns present"
        } else {
            "of this cycle's txns present (light check)"
        };
        eprintln!("cycle {cycle}: {acked} commits acknowledged, {present} {what}, {maybe} in-flight ones survived");
        // Decided in-flight transactions become known for later cycles.
        let mut c = srv.conn_db("crash");
        for log in &mut all_logs {
            if let Some((txn, parts)) = log.inflight.take() {
                if q_i64(
                    &mut c,
                    &format!("SELECT COUNT(*) FROM ev WHERE txn = {txn}"),
                ) > 0
                {
                    log.acked.insert(txn, parts);
                } else {
                    log.aborted.push(txn);
                }
            }
        }
    }
    assert!(
        total_acked >= 20 * cycles as usize,
        "only {total_acked} commits in {cycles} cycles"
    );
}
