//! Loading rows into an empty table as table files instead of through
//! transactions: the rows' primary key entries and each secondary index's
//! entries are sorted (`keysort::KeySorter`, spilling to disk past a budget) or,
//! for input already in primary key order, written as they come, into
//! table files (`lsm::BulkWriter`) that are ingested together, in one
//! manifest record, at the end: into the last level, never through the
//! memtable, the WAL or a compaction. Used by LOAD DATA into an empty
//! table (`load`, sorted: duplicates of the primary key or of a UNIQUE
//! index fail the whole load with 1062, as InnoDB's rolled-back statement)
//! and by the `strata_bulk_load` session mode (ordered: a key not above
//! the previous one is MariaDB's 4054, "Keys are out order during bulk
//! load").
//!
//! The caller holds the table (`lock`: no other load or DDL of it) and
//! other writers out of it while it loads (`ddl::Frozen`) and checks
//! `eligible` first: no foreign keys to check, no index being built or
//! rebuilt, and nothing stored under any of its index ids. The files are
//! ingested only while the table is still the current one of its name
//! (`Catalog::while_current`), else the load fails with 1412.
pub mod lock;
mod session;

pub(crate) use session::{end_session_load, session_insert, SessionLoad};

use crate::error::{Result, SqlError};
use crate::keysort::{Interrupt, KeySorter};
use rel::catalog::Table;
use rel::schema::Index;
use rel::table as rt;
use rel::value::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Rows loaded through table files (`Strata_bulk_load_rows`).
pub static BULK_ROWS: AtomicU64 = AtomicU64::new(0);
/// Of those, rows written to the table files as they came, in key order,
/// never sorted (`Strata_bulk_load_streamed`).
pub static BULK_STREAMED: AtomicU64 = AtomicU64::new(0);
/// Rows written straight to table files and read back into the sort once a
/// key came out of order (`Strata_bulk_load_read_back`).
pub static BULK_READ_BACK: AtomicU64 = AtomicU64::new(0);

/// What bulk loads did: a session's (SHOW SESSION STATUS), so that a test
/// or a user can tell which path a load took; the server's are the statics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Rows loaded through table files.
    pub rows: u64,
    /// Of those, written as they came (in key order), never sorted.
    pub streamed: u64,
    /// Rows read back from table files into the sort.
    pub read_back: u64,
}

impl Counts {
    /// Adds `o`, here and to the server's totals.
    pub fn add(&mut self, o: Counts) {
        self.rows += o.rows;
        self.streamed += o.streamed;
        self.read_back += o.read_back;
        BULK_ROWS.fetch_add(o.rows, Ordering::Relaxed);
        BULK_STREAMED.fetch_add(o.streamed, Ordering::Relaxed);
        BULK_READ_BACK.fetch_add(o.read_back, Ordering::Relaxed);
    }
}

/// What a repeated primary key does in a sorted load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dedup {
    /// Fails the load (1062).
    Error,
    /// The first row stays (IGNORE).
    First,
    /// The last row stays (REPLACE).
    Last,
}

/// What a finished load did.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rows: u64,
    /// Rows dropped for a repeated key (IGNORE: skipped, REPLACE: replaced).
    pub dropped: u64,
    /// The first few repeated keys' errors (IGNORE's warnings).
    pub dups: Vec<SqlError>,
    /// How the rows went (the caller adds them to its session's).
    pub counts: Counts,
}

/// Where a load's primary key entries go.
enum Primary {
    /// Input in key order: written at the end of each statement
    /// (`commit_stmt`; the last key written kept, the statement's rows
    /// staged meanwhile).
    Ordered(Box<lsm::BulkWriter>, Option<Vec<u8>>, Vec<Staged>),
    /// Any order (LOAD DATA): written straight to table files while the
    /// keys come in order (a file dumped in primary key order is never
    /// sorted), sorted at the end once one does not.
    Sorted(Box<Unsorted>),
}

/// A load of rows in any order.
struct Unsorted {
    /// While every key so far came in order: the files they went to (their
    /// secondary entries went to the sorts as they came).
    direct: Option<lsm::BulkWriter>,
    /// The last key written to `direct`.
    last: Option<Vec<u8>>,
    /// Once a key came out of order: every row, sorted at the end (its
    /// secondary entries are made from the sorted rows, with the repeated
    /// keys dropped).
    sort: KeySorter,
}

/// A row of the running statement (ordered loads): its primary key
/// entry, its values and its hidden primary key.
struct Staged {
    key: Vec<u8>,
    value: Vec<u8>,
    row: Vec<Value>,
    hidden: Option<u64>,
    /// When it was added (a TTL table's row time without a TTL column).
    stamp: u64,
}

/// One bulk load into one table.
pub struct BulkLoad {
    pub table: Arc<Table>,
    primary: Primary,
    /// The primary key's family keeps keys in reverse byte order: ordered
    /// input comes in that order (descending keys), as MyRocks'.
    rev_pk: bool,
    /// Per secondary index: its entries, sorted at the end.
    secondary: Vec<(Index, KeySorter)>,
    rows: u64,
    /// A write of staged rows failed: the load can only be abandoned.
    broken: bool,
    /// Polled while the load reads back, sorts and writes (KILL).
    interrupt: Option<Interrupt>,
    /// Entries read back from the direct files into the sort.
    read_back: u64,
    /// Memory of the sorts together (see `BulkLoad::new`).
    budget: usize,
}

/// True when `t` can be loaded in bulk: not a TTL table with a TTL column, no foreign
/// key of its own (their checks need the transaction path), no index being built and no
/// online rebuild, and no entry under any of its index ids (read at the latest state;
/// the caller holds writers out).
pub fn eligible(db: &lsm::Db, t: &Table) -> Result<bool> {
    if !t.def.foreign_keys.is_empty() || !t.building.is_empty() || t.shadow.is_some() {
        return Ok(false);
    }
    // The engine ingests files of one column family in one manifest record:
    // indexes in several families go row by row (atomic through the WAL).
    if t.def.indexes().any(|ix| ix.cf != t.def.pk.cf) {
        return Ok(false);
    }
    // A TTL column may give a row that has expired already, which duplicate
    // checks must not see (the row path's rule); the sorts know nothing of
    // it: row by row. Without one, each row's time is when it was added (its
    // secondary entries carry it too: `push_entry`), never expired yet.
    if t.def.ttl.is_some_and(|ttl| ttl.col.is_some()) {
        return Ok(false);
    }
    let snap = db.snapshot();
    for ix in t.def.indexes() {
        if !rel::build::index_empty(db, &snap, ix)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn internal(e: rel::Error) -> SqlError {
    e.into()
}

impl BulkLoad {
    /// Starts a load of `t`; `ordered`: rows come in primary key order.
    /// `budget`: memory of the load's sorts together (`strata_merge_buf_size`),
    /// shared out among the sorts in use; past its share a sort spills to
    /// disk. The primary key's sort and the secondary indexes' never hold
    /// entries at once: the secondary sorts share the budget while the keys
    /// come in order (an ordered load, or a sorted one until a key does
    /// not), the primary key's has it alone once the rows are sorted (the
    /// secondary entries are dropped then, and made again from the sorted
    /// rows), and the secondary sorts share what it holds not at the end,
    /// while it gives back its rows (see `finish`). Each sort gets at least
    /// 64 KiB.
    pub fn new(db: &lsm::Db, t: Arc<Table>, ordered: bool, budget: usize) -> Result<BulkLoad> {
        let total = budget;
        let share = budget / t.def.secondary.len().max(1);
        // Entries are written in their family's order (descending bytes in
        // a reverse one).
        let rev =
            |ix: &Index| -> Result<bool> { Ok(rel::keyrange::reversed(db, rel::cf::of(db, ix)?)) };
        let rev_pk = rev(&t.def.pk)?;
        let primary = if ordered {
            Primary::Ordered(
                Box::new(db.bulk_writer(rel::cf::of(db, &t.def.pk)?)?),
                None,
                Vec::new(),
            )
        } else {
            Primary::Sorted(Box::new(Unsorted {
                direct: Some(db.bulk_writer(rel::cf::of(db, &t.def.pk)?)?),
                last: None,
                sort: KeySorter::new(rev_pk, total),
            }))
        };
        let secondary = t
            .def
            .secondary
            .iter()
            .map(|ix| Ok((ix.clone(), KeySorter::new(rev(ix)?, share))))
            .collect::<Result<_>>()?;
        Ok(BulkLoad {
            table: t,
            primary,
            rev_pk,
            secondary,
            rows: 0,
            broken: false,
            interrupt: None,
            read_back: 0,
            budget: total,
        })
    }

    /// The memory budget of each sort that holds entries now: the
    /// primary key's once the rows are sorted, else each secondary index's.
    pub fn sort_budgets(&self) -> Vec<usize> {
        match &self.primary {
            Primary::Sorted(u) if u.direct.is_none() => vec![u.sort.budget()],
            _ => self.secondary.iter().map(|(_, s)| s.budget()).collect(),
        }
    }

    /// Polls `check` (every few thousand entries) while the load reads back,
    /// sorts and writes its entries: a KILL stops even its end promptly.
    pub fn set_interrupt(&mut self, check: Interrupt) {
        if let Primary::Sorted(u) = &mut self.primary {
            u.sort.set_interrupt(check.clone());
        }
        for (_, s) in &mut self.secondary {
            s.set_interrupt(check.clone());
        }
        self.interrupt = Some(check);
    }

    /// Fails once the statement must stop, every `POLL_EVERY` calls.
    fn poll(check: Option<&Interrupt>, n: &mut u64) -> Result<()> {
        *n += 1;
        match check {
            Some(c) if n.is_multiple_of(crate::runmerge::POLL_EVERY) => c(),
            _ => Ok(()),
        }
    }

    /// Adds a complete row (coerced to the column types, checked).
    pub fn add(&mut self, row: &[Value]) -> Result<()> {
        let t = &self.table;
        let def = &t.def;
        let hidden = def
            .hidden_pk
            .then(|| t.hidden_next.fetch_add(1, Ordering::SeqCst));
        let key = rt::pk_key(def, row, hidden).map_err(internal)?;
        let stamp = rel::ttl::stamp_now();
        let value = rt::row_value_at(def, row, stamp);
        match &mut self.primary {
            Primary::Ordered(_, last, staged) => {
                let prev = staged.last().map(|s| &s.key).or(last.as_ref());
                if prev.is_some_and(|l| if self.rev_pk { *l <= key } else { *l >= key }) {
                    return Err(SqlError::keys_out_of_order());
                }
                staged.push(Staged {
                    key,
                    value,
                    // Kept for the secondary entries only (sysbench's tables
                    // get theirs by CREATE INDEX after the load).
                    row: if self.secondary.is_empty() {
                        Vec::new()
                    } else {
                        row.to_vec()
                    },
                    hidden,
                    stamp,
                });
            }
            Primary::Sorted(u) => {
                if let Some(w) = &mut u.direct {
                    let rev = self.rev_pk;
                    if u.last
                        .as_ref()
                        .is_none_or(|l| if rev { *l > key } else { *l < key })
                    {
                        w.put(&key, &value)?;
                        for (ix, s) in &mut self.secondary {
                            push_entry(s, def, ix, row, hidden, stamp)?;
                        }
                        u.last = Some(key);
                        self.rows += 1;
                        return Ok(());
                    }
                    // The first key out of order (or repeated): the rows so
                    // far join the sort, ahead of the rest (a repeated key's
                    // first row stays first), and the secondary entries are
                    // made again from the sorted rows at the end (dropped
                    // first: the sort has the whole budget).
                    for (_, s) in &mut self.secondary {
                        s.clear();
                    }
                    if let Some(w) = u.direct.take() {
                        let (sort, check, n) =
                            (&mut u.sort, self.interrupt.as_ref(), &mut self.read_back);
                        w.read_back(&mut |k, v| {
                            Self::poll(check, n)?;
                            sort.push(k, v)
                        })?;
                    }
                }
                u.sort.push(&key, &value)?;
                self.rows += 1;
            }
        }
        Ok(())
    }

    /// Ends a statement of an ordered load that succeeded: its staged rows
    /// join the load (a failed statement calls `abort_stmt`, and none of
    /// its rows are loaded). An error here leaves the load broken.
    pub fn commit_stmt(&mut self) -> Result<()> {
        let Primary::Ordered(w, last, staged) = &mut self.primary else {
            return Ok(());
        };
        let def = &self.table.def;
        let r = (|| -> Result<()> {
            for st in staged.drain(..) {
                w.put(&st.key, &st.value)?;
                for (ix, s) in &mut self.secondary {
                    push_entry(s, def, ix, &st.row, st.hidden, st.stamp)?;
                }
                *last = Some(st.key);
                self.rows += 1;
            }
            Ok(())
        })();
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    /// Drops the staged rows of a statement that failed.
    pub fn abort_stmt(&mut self) {
        if let Primary::Ordered(_, _, staged) = &mut self.primary {
            staged.clear();
        }
    }

    /// Rows added so far (of an ordered load: of its ended statements).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Sorts what is left, writes the table files and ingests them all at
    /// once, if the table is still the current one of its name (else
    /// 1412). Fails (ingesting nothing) on a duplicate unique key, or a
    /// repeated primary key under `Dedup::Error`. Rows still staged (a
    /// statement that did not end) are not loaded.
    pub fn finish(mut self, cat: &rel::catalog::Catalog, dedup: Dedup) -> Result<Loaded> {
        if self.broken {
            return Err(SqlError::internal(
                "bulk load abandoned after a failed write: none of its rows were loaded",
            ));
        }
        let db = cat.db();
        let def = &self.table.def;
        let mut writers = Vec::with_capacity(1 + self.secondary.len());
        let mut done = Loaded::default();
        match self.primary {
            Primary::Ordered(w, _, _) => {
                writers.push(*w);
                done.rows = self.rows;
                done.counts.streamed = self.rows;
            }
            Primary::Sorted(u) => match *u {
                Unsorted {
                    direct: Some(w), ..
                } => {
                    writers.push(w);
                    done.rows = self.rows;
                    done.counts.streamed = self.rows;
                }
                Unsorted { sort: s, .. } => {
                    // The secondary sorts fill while the rows come out of
                    // this one: they share what it does not hold meanwhile.
                    let left = self.budget.saturating_sub(s.finish_memory());
                    let share = left / self.secondary.len().max(1);
                    for (_, sec) in &mut self.secondary {
                        sec.set_budget(share)?;
                    }
                    let mut w = db.bulk_writer(rel::cf::of(db, &def.pk)?)?;
                    // The row held back until the next key shows it is not repeated.
                    let mut held: Option<(Vec<u8>, Vec<u8>)> = None;
                    let secondary = &mut self.secondary;
                    let mut emit = |k: &[u8], v: &[u8], done: &mut Loaded| -> Result<()> {
                        w.put(k, v)?;
                        done.rows += 1;
                        if !secondary.is_empty() {
                            let row = rt::decode_row(def, k, v, None).map_err(internal)?;
                            for (ix, s) in secondary.iter_mut() {
                                let stamp = row.stamp.unwrap_or(0);
                                push_entry(s, def, ix, &row.values, row.hidden, stamp)?;
                            }
                        }
                        Ok(())
                    };
                    s.finish(&mut |k, v| {
                        if let Some((hk, hv)) = held.as_mut() {
                            if hk.as_slice() == k {
                                done.dropped += 1;
                                if dedup == Dedup::Error || done.dups.len() < 64 {
                                    let row = rt::decode_row(def, k, v, None).map_err(internal)?;
                                    let e = SqlError::dup_entry(
                                        rt::key_text(&def.pk, &row.values),
                                        &def.pk.name,
                                    );
                                    if dedup == Dedup::Error {
                                        return Err(e);
                                    }
                                    done.dups.push(e);
                                }
                                if dedup == Dedup::Last {
                                    hv.clear();
                                    hv.extend_from_slice(v);
                                }
                                return Ok(true);
                            }
                            emit(hk, hv, &mut done)?;
                            hk.clear();
                            hk.extend_from_slice(k);
                            hv.clear();
                            hv.extend_from_slice(v);
                        } else {
                            held = Some((k.to_vec(), v.to_vec()));
                        }
                        Ok(true)
                    })?;
                    if let Some((hk, hv)) = held.take() {
                        emit(&hk, &hv, &mut done)?;
                    }
                    writers.push(w);
                }
            },
        }
        // Each writer's thread ends once the next writer has its entries (it
        // writes the files of one index while the next index's entries are
        // merged, as before), not at the ingestion: at most two writer threads
        // and their batches at a time, whatever the number of indexes.
        let sk_len = rt::sk_value(def, &[], 0).len();
        for (ix, s) in self.secondary {
            let mut w = db.bulk_writer(rel::cf::of(db, &ix)?)?;
            let (mut prev, mut prev_len) = (Vec::new(), 0usize);
            s.finish(&mut |k, payload| {
                // (`s` polls the interruption check.)
                // The entry's value first (a TTL table's row time), then for
                // a unique entry the length of the unique prefix (u32
                // little-endian) and the key's text.
                let (value, payload) = payload.split_at(sk_len.min(payload.len()));
                let (len, text) = match payload.split_first_chunk::<4>() {
                    Some((len, text)) => (u32::from_le_bytes(*len) as usize, text),
                    None => (0, &[][..]),
                };
                if len > 0 && len == prev_len && prev.get(..len) == k.get(..len) {
                    let text = String::from_utf8_lossy(text).into_owned();
                    return Err(SqlError::dup_entry(&text, &ix.name));
                }
                w.put(k, value)?;
                prev.clear();
                prev.extend_from_slice(k);
                prev_len = len;
                Ok(true)
            })?;
            if let Some(prev) = writers.last_mut() {
                prev.seal()?;
            }
            writers.push(w);
        }
        // Not into a table dropped or changed meanwhile (its ids may be
        // gone, or an index be missing the rows' entries).
        cat.while_current(&self.table, || {
            lsm::BulkWriter::ingest_all_after_snapshots(writers)
        })
        .ok_or_else(SqlError::table_def_changed)??;
        self.table.pk_high.forget();
        self.table.estimate.add(done.rows as i64);
        done.counts.rows = done.rows;
        done.counts.read_back = self.read_back;
        Ok(done)
    }
}

/// Pushes row's entry of secondary index `ix` into its sort: the key, and
/// as payload the entry's value (`rt::sk_value`: empty, or in a TTL table
/// the row's time, `stamp` the row's) followed, for a unique index with no
/// NULL, by the length of its unique prefix and the key's text (for 1062).
fn push_entry(
    s: &mut KeySorter,
    def: &rel::schema::TableDef,
    ix: &Index,
    row: &[Value],
    hidden: Option<u64>,
    stamp: u64,
) -> Result<()> {
    let (k, split) = rt::sk_key_split(def, ix, row, hidden).map_err(internal)?;
    let mut payload = rt::sk_value(def, row, stamp);
    let unique = ix.unique && ix.columns.iter().all(|&c| !row[c].is_null());
    if unique {
        payload.extend_from_slice(&(split as u32).to_le_bytes());
        payload.extend_from_slice(rt::key_text(ix, row).as_bytes());
    }
    s.push(&k, &payload)
}
