//! The memo of a session's hot variables: the values of the few variables
//! every statement reads (sql_mode, tmp_table_size, the statement deadlines,
//! the slow log's settings, ...) as `Session::get_var` resolved them, and
//! sql_mode parsed. Reading one is a name match and a generation check
//! instead of a lower-cased copy of the name, two map lookups under the
//! globals' lock and the parse of sql_mode's text. A memo is valid while the
//! session's variables (`Session::set_var`) and the globals
//! (`Instance::set_global`) keep the generations it was filled under; any
//! change empties it, so a read after a SET sees the new value.
use crate::sqlmode::SqlMode;
use rel::value::Value;

/// The memoized variables (canonical names). Not here: variables whose value
/// depends on more than the session's and the global map (warning_count,
/// last_insert_id, the current database's character set and collation).
const HOT: [&str; 27] = [
    "sql_mode",
    "tmp_table_size",
    "max_execution_time",
    "max_statement_time",
    "strata_bulk_load",
    "sql_select_limit",
    "sql_safe_updates",
    "long_query_time",
    "slow_query_log",
    "character_set_results",
    "wait_timeout",
    "strata_auto_parameterize",
    "lock_wait_timeout",
    "transaction_read_only",
    "read_only",
    "foreign_key_checks",
    "autocommit",
    "check_constraint_checks",
    "sql_notes",
    "rocksdb_commit_in_the_middle",
    "rocksdb_max_row_locks",
    "rocksdb_write_batch_max_bytes",
    "strata_max_txn_memory",
    "rocksdb_bulk_load_size",
    "unique_checks",
    "character_set_client",
    "collation_connection",
];

/// A variable's position in `HOT` (a match: the compiler tells names apart
/// by their length first, where a search compared up to 27 strings).
fn slot(name: &str) -> Option<usize> {
    Some(match name {
        "sql_mode" => 0,
        "tmp_table_size" => 1,
        "max_execution_time" => 2,
        "max_statement_time" => 3,
        "strata_bulk_load" => 4,
        "sql_select_limit" => 5,
        "sql_safe_updates" => 6,
        "long_query_time" => 7,
        "slow_query_log" => 8,
        "character_set_results" => 9,
        "wait_timeout" => 10,
        "strata_auto_parameterize" => 11,
        "lock_wait_timeout" => 12,
        "transaction_read_only" => 13,
        "read_only" => 14,
        "foreign_key_checks" => 15,
        "autocommit" => 16,
        "check_constraint_checks" => 17,
        "sql_notes" => 18,
        "rocksdb_commit_in_the_middle" => 19,
        "rocksdb_max_row_locks" => 20,
        "rocksdb_write_batch_max_bytes" => 21,
        "strata_max_txn_memory" => 22,
        "rocksdb_bulk_load_size" => 23,
        "unique_checks" => 24,
        "character_set_client" => 25,
        "collation_connection" => 26,
        _ => return None,
    })
}

/// The memo (see the module comment).
#[derive(Default)]
pub(crate) struct VarMemo {
    /// (globals generation, session variables generation) of the values.
    generation: (u64, u64),
    /// Per `HOT` entry, session-then-global reads [0] and global reads [1]:
    /// None = not read yet.
    values: [[Option<Option<Value>>; 2]; HOT.len()],
    sql_mode: Option<SqlMode>,
    /// Per `HOT` entry, the session-then-global value as seconds
    /// (`slowlog::secs_var`).
    secs: [Option<f64>; HOT.len()],
}

impl VarMemo {
    /// Forgets every value unless they were read under `generation`.
    fn check(&mut self, generation: (u64, u64)) {
        if self.generation != generation {
            *self = VarMemo {
                generation,
                ..VarMemo::default()
            };
        }
    }

    /// The memoized value of `name` (canonical), reading it with `read` on a
    /// miss; `None` from the outer option: `name` is not memoized.
    pub(crate) fn get(
        &mut self,
        generation: (u64, u64),
        name: &str,
        global: bool,
        read: impl FnOnce() -> Option<Value>,
    ) -> Option<Option<Value>> {
        self.peek(generation, name, global, read)
            .map(|v| v.cloned())
    }

    /// As `get`, borrowing the value instead of copying it.
    pub(crate) fn peek(
        &mut self,
        generation: (u64, u64),
        name: &str,
        global: bool,
        read: impl FnOnce() -> Option<Value>,
    ) -> Option<Option<&Value>> {
        let i = slot(name)?;
        self.check(generation);
        let v = self.values[i][usize::from(global)].get_or_insert_with(read);
        Some(v.as_ref())
    }

    /// The value of `name` (canonical) as seconds, `parse`d on a miss;
    /// `None`: `name` is not memoized.
    pub(crate) fn secs(
        &mut self,
        generation: (u64, u64),
        name: &str,
        parse: impl FnOnce() -> f64,
    ) -> Option<f64> {
        let i = slot(name)?;
        self.check(generation);
        Some(*self.secs[i].get_or_insert_with(parse))
    }

    /// The parsed sql_mode, parsing `read()` on a miss.
    pub(crate) fn sql_mode(
        &mut self,
        generation: (u64, u64),
        read: impl FnOnce() -> Option<Value>,
    ) -> SqlMode {
        self.check(generation);
        *self
            .sql_mode
            .get_or_insert_with(|| SqlMode::of(read().as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hot_variable_has_its_slot() {
        for (i, h) in HOT.iter().enumerate() {
            assert_eq!(slot(h), Some(i), "{h}");
        }
        assert_eq!(slot("time_zone"), None);
    }

    #[test]
    fn every_row_writers_variables_are_hot() {
        // Session::writer reads these for each INSERT, UPDATE and DELETE, and
        // an INSERT the client's character set and collation.
        for n in [
            "foreign_key_checks",
            "unique_checks",
            "sql_safe_updates",
            "character_set_client",
            "collation_connection",
        ] {
            assert!(slot(n).is_some(), "{n}");
        }
    }

    #[test]
    fn a_new_generation_rereads() {
        let mut m = VarMemo::default();
        let one = || Some(Value::Int(1));
        assert_eq!(m.get((0, 0), "tmp_table_size", false, one), Some(one()));
        // Same generation: the memo answers, the reader is not asked.
        let two = || Some(Value::Int(2));
        assert_eq!(m.get((0, 0), "tmp_table_size", false, two), Some(one()));
        // Global reads are kept apart from session reads.
        assert_eq!(m.get((0, 0), "tmp_table_size", true, two), Some(two()));
        assert_eq!(m.get((1, 0), "tmp_table_size", false, two), Some(two()));
        assert_eq!(m.get((1, 1), "tmp_table_size", false, || None), Some(None));
        // Not a hot variable: not memoized.
        assert_eq!(m.get((1, 1), "time_zone", false, one), None);
        assert_eq!(m.secs((1, 1), "long_query_time", || 1.5), Some(1.5));
        assert_eq!(m.secs((1, 1), "long_query_time", || 2.0), Some(1.5));
        assert_eq!(m.secs((1, 2), "long_query_time", || 2.0), Some(2.0));
        assert_eq!(m.secs((1, 2), "time_zone", || 2.0), None);
    }
}
