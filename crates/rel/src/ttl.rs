//! TTL tables, as MyRocks has them: a table COMMENT `ttl_duration=<seconds>;`
//! (optionally `ttl_col=<column>;`, a `BIGINT UNSIGNED NOT NULL` column holding
//! the row's time in Unix seconds) makes rows expire `duration` seconds after
//! their time. Without `ttl_col` the row's insert/update time is kept with the
//! row: 8 bytes (big-endian Unix seconds) before the row value. Every secondary
//! entry of a TTL table holds the same 8 bytes as its value.
//!
//! This module owns: parsing and validating the comment (MyRocks' errors 4066,
//! 4069, 4070), the row's time ([`row_time`], [`sk_time`]), the clock and its
//! test-only offsets, the read filter ([`hidden`]) and the engine compaction
//! filter ([`Registry`], one per catalog, installed in every column family).
//!
//! A row is expired at time `now` when `time + duration <= now`. Reads hide it
//! (read filtering, `strata_enable_ttl_read_filtering`) at the time the
//! transaction's read view was taken (the statement's or transaction's
//! snapshot; the current time when it has none), so a transaction sees the same
//! rows all along; compactions remove it (`strata_enable_ttl`) at the time they
//! took their snapshot list (`lsm::FilterContext::unix_time`), but never a version a snapshot older than the compaction can read
//! (`lsm::compaction::filter`), so an open transaction keeps what it reads
//! however long it runs. A snapshot taken while a compaction runs is newer than
//! the compaction's clock, so it hides what the compaction removes, as long as
//! read filtering is on; with it off, expired rows may go from under it (as in
//! MyRocks). Reads never use a clock behind the compactions' (the debug read
//! offset is never negative).
//!
//! A row and its secondary entries are removed by different compactions, so an
//! expired entry may outlive its row (and a new row take the key): reads that
//! do not hide expired entries check them against their row
//! (`table::sk_skipped`), and an insert over an expired row deletes its entries.
use crate::schema::TableDef;
use crate::value::{TypeKind, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// A table's TTL: rows expire `duration` seconds after their time, which is
/// column `col` or (None) the time kept with the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ttl {
    pub duration: u64,
    pub col: Option<usize>,
}

/// Bytes of the time kept before an implicit-TTL row value and as a TTL
/// table's secondary entry value.
pub const TS_LEN: usize = 8;

/// Why a TTL comment is refused, with MySQL's error to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtlError {
    /// 4066 ER_RDB_TTL_DURATION_FORMAT: the duration text.
    Duration(String),
    /// 4069 ER_RDB_TTL_UNSUPPORTED: a table without a primary key.
    HiddenPk,
    /// 4070 ER_RDB_TTL_COL_FORMAT: the column name.
    Column(String),
    /// 1235: a form Strata does not support (what).
    Unsupported(String),
}

/// The value of qualifier `name=` in a comment (up to `;` or the end), and
/// whether some other qualifier ends in `_name=` (a per-partition one).
fn qualifier<'a>(comment: &'a str, name: &str) -> (Option<&'a str>, bool) {
    let mut found = None;
    let mut partition = false;
    for part in comment.split(';') {
        let part = part.trim();
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if k.eq_ignore_ascii_case(name) {
            found.get_or_insert(v.trim());
        } else if k.len() > name.len()
            && k.is_char_boundary(k.len() - name.len() - 1)
            && k[k.len() - name.len() - 1..].eq_ignore_ascii_case(&format!("_{name}"))
        {
            partition = true;
        }
    }
    (found, partition)
}

/// The TTL a table COMMENT asks for, validated against the table's columns:
/// None when it names no `ttl_duration`. MyRocks' rules: the duration is a
/// positive integer (4066); `ttl_col` names an existing `BIGINT UNSIGNED NOT
/// NULL` column and needs a duration (4070); a table without a primary key has
/// no TTL (4069). Per-partition TTL (`p0_ttl_duration=`) is 1235.
pub fn from_comment(comment: &str, def: &TableDef) -> Result<Option<Ttl>, TtlError> {
    let (dur, pd) = qualifier(comment, "ttl_duration");
    let (col, pc) = qualifier(comment, "ttl_col");
    if pd || pc {
        return Err(TtlError::Unsupported(format!(
            "per-partition TTL: COMMENT '{comment}'"
        )));
    }
    let Some(dur) = dur else {
        return match col {
            Some(c) => Err(TtlError::Column(c.to_string())),
            None => Ok(None),
        };
    };
    let duration = match dur.parse::<u64>() {
        Ok(d) if d > 0 => d,
        _ => return Err(TtlError::Duration(dur.to_string())),
    };
    let col = match col {
        None => None,
        Some(name) => {
            let ok = def.column(name).filter(|&c| {
                let col = &def.columns[c];
                col.ty.kind == TypeKind::BigInt && col.ty.unsigned && !col.nullable
            });
            match ok {
                Some(c) => Some(c),
                None => return Err(TtlError::Column(name.to_string())),
            }
        }
    };
    if def.hidden_pk {
        return Err(TtlError::HiddenPk);
    }
    Ok(Some(Ttl { duration, col }))
}

/// Test-only clock offsets in seconds (MyRocks' debug variables), process-wide
/// as MyRocks' are server-wide: added to the time a row is stamped with
/// (`strata_debug_ttl_rec_ts`), to the time compactions and reads compare with
/// (`strata_debug_ttl_snapshot_ts`), and to the time reads compare with
/// (`strata_debug_ttl_read_filter_ts`).
pub static DEBUG_REC_TS: AtomicI64 = AtomicI64::new(0);
/// See [`DEBUG_REC_TS`].
pub static DEBUG_SNAPSHOT_TS: AtomicI64 = AtomicI64::new(0);
/// See [`DEBUG_REC_TS`].
pub static DEBUG_READ_FILTER_TS: AtomicI64 = AtomicI64::new(0);

/// The current Unix time in seconds.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn offset(t: u64, by: &AtomicI64) -> u64 {
    t.saturating_add_signed(by.load(Ordering::Relaxed))
}

/// The time a row written now is stamped with.
pub fn stamp_now() -> u64 {
    offset(unix_now(), &DEBUG_REC_TS)
}

/// The time reads of a read view taken at `snapshot_time` (None: no read
/// view, the current time) compare row times with.
pub fn read_time(snapshot_time: Option<u64>) -> u64 {
    let t = offset(snapshot_time.unwrap_or_else(unix_now), &DEBUG_SNAPSHOT_TS);
    // Never behind the compactions' clock (`FilterFactory`): reads must hide
    // at least what compactions may remove (SET refuses a negative offset).
    t.saturating_add(
        DEBUG_READ_FILTER_TS
            .load(Ordering::Relaxed)
            .max(0)
            .unsigned_abs(),
    )
}

/// True when a row of time `time` has expired at `now`.
pub fn expired(ttl: &Ttl, time: u64, now: u64) -> bool {
    time.saturating_add(ttl.duration) <= now
}

/// The 8-byte time prefix of an implicit-TTL row value, and the rest.
pub fn split_value(value: &[u8]) -> crate::Result<(u64, &[u8])> {
    let (ts, rest) = value
        .split_first_chunk::<TS_LEN>()
        .ok_or_else(|| crate::Error::Corruption("TTL row value without its time".into()))?;
    Ok((u64::from_be_bytes(*ts), rest))
}

/// A row's time: its `ttl_col` value, or `stamp` (the time kept with it).
pub fn row_time(ttl: &Ttl, values: &[Value], stamp: Option<u64>) -> u64 {
    match ttl.col {
        Some(c) => match values.get(c) {
            Some(Value::UInt(u)) => *u,
            Some(Value::Int(i)) => (*i).max(0) as u64,
            _ => 0,
        },
        None => stamp.unwrap_or(0),
    }
}

/// A secondary entry's time (its value); None if the value is not one.
pub fn sk_time(value: &[u8]) -> Option<u64> {
    let b: [u8; TS_LEN] = value.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// Compactions remove expired rows (`strata_enable_ttl`, MyRocks'
/// `rocksdb_enable_ttl`). Process-wide, as MyRocks' variables are server-wide
/// (a server runs one instance).
pub static ENABLE: AtomicBool = AtomicBool::new(true);
/// Reads hide expired rows (`strata_enable_ttl_read_filtering`, MyRocks'
/// `rocksdb_enable_ttl_read_filtering`); only while [`ENABLE`] is on too.
pub static READ_FILTERING: AtomicBool = AtomicBool::new(true);

/// True when reads hide expired rows.
pub fn filtering() -> bool {
    READ_FILTERING.load(Ordering::Relaxed) && ENABLE.load(Ordering::Relaxed)
}

/// The time `txn`'s reads compare row times with: when its read view was
/// taken (or now, without one), plus the test offsets.
pub fn now_for(txn: &txn::Txn) -> u64 {
    read_time(txn.snapshot_time())
}

/// The time reads of the latest committed versions (locking reads, duplicate
/// checks) compare row times with: now, plus the test offsets. Such reads see
/// what other transactions did since `txn`'s read view, so they must judge
/// expiry by the same clock those transactions did: a row another
/// transaction already took as expired (and replaced under a unique key) must
/// not be live to a locking read judged at an older snapshot's time.
pub fn now_latest() -> u64 {
    read_time(None)
}

/// True when reads at `now` hide the primary key entry `key` -> `value` of
/// `def` (false for tables without TTL, or with read filtering off).
pub fn pk_hidden(def: &TableDef, key: &[u8], value: &[u8], now: u64) -> bool {
    filtering() && pk_expired(def, key, value, now)
}

/// True when a secondary entry of `def` whose value is `value` is hidden from
/// reads at `now`.
pub fn sk_hidden(def: &TableDef, value: &[u8], now: u64) -> bool {
    filtering() && sk_expired(def, value, now)
}

/// True when the primary key entry `key` -> `value` of `def` has expired at
/// `now` (false for a table without TTL), whatever the variables say.
pub fn pk_expired(def: &TableDef, key: &[u8], value: &[u8], now: u64) -> bool {
    def.ttl
        .is_some_and(|ttl| pk_time(def, &ttl, key, value).is_some_and(|t| expired(&ttl, t, now)))
}

/// True when a secondary entry of `def` with value `value` has expired at `now`.
pub fn sk_expired(def: &TableDef, value: &[u8], now: u64) -> bool {
    def.ttl
        .is_some_and(|ttl| sk_time(value).is_some_and(|t| expired(&ttl, t, now)))
}

/// A primary key entry's time (None if it does not decode).
fn pk_time(def: &TableDef, ttl: &Ttl, key: &[u8], value: &[u8]) -> Option<u64> {
    match ttl.col {
        None => split_value(value).ok().map(|(t, _)| t),
        Some(c) => {
            let mut want = vec![false; def.columns.len()];
            *want.get_mut(c)? = true;
            crate::table::decode_row(def, key, value, Some(&want))
                .ok()
                .map(|r| row_time(ttl, &r.values, None))
        }
    }
}

/// The TTL of every index of an instance's TTL tables, kept current by the
/// catalog: what the engine compaction filter of every column family reads.
#[derive(Debug, Default)]
pub struct Registry {
    indexes: RwLock<Arc<HashMap<u32, IndexTtl>>>,
}

/// How the compaction filter finds an entry's time.
#[derive(Debug, Clone)]
enum IndexTtl {
    /// A primary key entry of this table.
    Primary(Arc<TableDef>, Ttl),
    /// A secondary entry (time in the value).
    Secondary(Ttl),
}

impl Registry {
    /// Replaces the index map with the TTL tables of `tables`, each with the
    /// indexes being built for it.
    pub fn refresh<'a>(&self, tables: impl Iterator<Item = &'a crate::catalog::Table>) {
        let mut m = HashMap::new();
        for t in tables {
            let Some(ttl) = t.def.ttl else {
                continue;
            };
            m.insert(t.def.pk.id, IndexTtl::Primary(Arc::new(t.def.clone()), ttl));
            for ix in t.def.secondary.iter().chain(&t.building) {
                m.insert(ix.id, IndexTtl::Secondary(ttl));
            }
        }
        *self.indexes.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(m);
    }

    fn map(&self) -> Arc<HashMap<u32, IndexTtl>> {
        self.indexes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The compaction filter of one compaction: the index map and "now" as the
/// compaction started.
struct Filter {
    map: Arc<HashMap<u32, IndexTtl>>,
    now: u64,
}

impl lsm::CompactionFilter for Filter {
    fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> lsm::Decision {
        let Some(id) = key.first_chunk::<4>().map(|b| u32::from_be_bytes(*b)) else {
            return lsm::Decision::Keep;
        };
        // Anything that does not decode is kept: the filter never guesses.
        let time = match self.map.get(&id) {
            None => return lsm::Decision::Keep,
            Some(IndexTtl::Secondary(ttl)) => sk_time(value).map(|t| (t, ttl)),
            Some(IndexTtl::Primary(def, ttl)) => pk_time(def, ttl, key, value).map(|t| (t, ttl)),
        };
        match time {
            Some((t, ttl)) if expired(ttl, t, self.now) => lsm::Decision::Remove,
            _ => lsm::Decision::Keep,
        }
    }
}

/// The factory the engine asks at each compaction (see `Registry`).
#[derive(Debug)]
pub struct FilterFactory(pub Arc<Registry>);

impl lsm::CompactionFilterFactory for FilterFactory {
    fn name(&self) -> &str {
        "strata.TtlCompactionFilter"
    }

    fn create(&self, ctx: &lsm::FilterContext) -> Option<Box<dyn lsm::CompactionFilter>> {
        if !ENABLE.load(Ordering::Relaxed) {
            return None;
        }
        let map = self.0.map();
        if map.is_empty() {
            return None;
        }
        Some(Box::new(Filter {
            map,
            // When the compaction's snapshot list was taken, not now: a
            // snapshot taken since is not protected, and must find every row
            // expired at its own (later) time that the filter removes.
            now: offset(ctx.unix_time, &DEBUG_SNAPSHOT_TS),
        }))
    }
}
