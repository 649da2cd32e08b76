//! System variables: the names clients and tools read or set, their
//! defaults, and which ones change behaviour (autocommit, isolation, lock
//! wait timeout). Unknown names are an error (1193), as in MySQL.
use crate::error::SqlError;
use rel::value::Value;
use std::collections::BTreeMap;

/// Server version string sent in the handshake and by VERSION(). Major
/// version 10 so that MariaDB's tools take Strata as a source: a MariaDB
/// replica uses GTIDs only with a source of major version 10 or later
/// (slave.cc: `mysql_get_server_version() / 10000 >= 10`), and
/// `mariadb-binlog --read-from-remote-server` accepts only a `SELECT
/// VERSION()` of major 3, 4, 5 or 10. No "MariaDB" in it: drivers that see
/// that word switch to their MariaDB dialect (SQLAlchemy and Django use
/// INSERT ... RETURNING with MariaDB 10.5+); MySQL drivers and ORMs
/// compare the version with MySQL's and, 10.11 being above every 8.0.x,
/// take the same MySQL 8.0 paths as before (their gates are at 8.0.x; the
/// MySQL 8.4 names tools send to a non-MariaDB server above 8.4, SHOW
/// BINARY LOG STATUS and SHOW REPLICAS, are aliases). docs/REPLICATION.md has the
/// reasoning; `--server-version` overrides it.
pub const VERSION: &str = "10.11.9-strata-0.1.0";

fn s(v: &str) -> Value {
    Value::Bytes(v.as_bytes().to_vec())
}

/// The global defaults. `settings` are (name, value) pairs from the
/// server's configuration, overriding defaults.
pub fn defaults(settings: &[(String, String)]) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    let i = Value::Int;
    for (k, v) in [
        ("autocommit", i(1)),
        ("auto_increment_increment", i(1)),
        ("auto_increment_offset", i(1)),
        ("character_set_client", s("utf8mb4")),
        ("character_set_connection", s("utf8mb4")),
        ("character_set_database", s("utf8mb4")),
        ("character_set_results", s("utf8mb4")),
        ("character_set_server", s("utf8mb4")),
        ("character_set_system", s("utf8mb3")),
        ("collation_connection", s("utf8mb4_general_ci")),
        ("collation_database", s("utf8mb4_general_ci")),
        ("collation_server", s("utf8mb4_general_ci")),
        ("cte_max_recursion_depth", i(1000)),
        ("default_storage_engine", s("STRATA")),
        ("foreign_key_checks", i(1)),
        ("check_constraint_checks", i(1)),
        ("group_concat_max_len", i(1 << 20)),
        ("sql_notes", i(1)),
        ("sql_quote_show_create", i(1)),
        ("strata_auto_parameterize", i(1)),
        ("sql_warnings", i(0)),
        // TLS (the server passes its settings: crates/server/src/tls.rs).
        ("have_ssl", s("DISABLED")),
        ("have_openssl", s("NO")),
        ("ssl_ca", Value::Null),
        ("ssl_capath", Value::Null),
        ("ssl_cert", Value::Null),
        ("ssl_cipher", Value::Null),
        ("ssl_crl", Value::Null),
        ("ssl_crlpath", Value::Null),
        ("ssl_key", Value::Null),
        ("tls_version", s("TLSv1.2,TLSv1.3")),
        ("version_ssl_library", s("rustls 0.23")),
        ("require_secure_transport", i(0)),
        ("hostname", s("localhost")),
        ("init_connect", s("")),
        ("innodb_lock_wait_timeout", i(50)),
        ("lock_wait_timeout", i(31536000)),
        ("interactive_timeout", i(28800)),
        ("license", s("Apache-2.0")),
        ("lower_case_table_names", i(0)),
        ("max_allowed_packet", i(67108864)),
        ("max_connections", i(151)),
        ("max_execution_time", i(0)),
        ("max_statement_time", s("0.000000")),
        ("long_query_time", s("10.000000")),
        ("slow_query_log", i(0)),
        ("slow_query_log_file", s("strata-slow.log")),
        ("log_output", s("FILE")),
        ("max_prepared_stmt_count", i(16382)),
        ("net_buffer_length", i(16384)),
        ("net_read_timeout", i(30)),
        ("connect_timeout", i(10)),
        ("net_write_timeout", i(60)),
        ("performance_schema", i(0)),
        ("port", i(3306)),
        ("query_cache_size", i(0)),
        ("query_cache_type", s("OFF")),
        ("sql_auto_is_null", i(0)),
        ("sql_big_selects", i(1)),
        ("sql_mode", s("STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION")),
        ("sql_select_limit", Value::UInt(u64::MAX)),
        ("sql_safe_updates", i(0)),
        ("sql_log_bin", i(1)),
        // The binary log (binlogsql; `--log-bin` sets log_bin and its names).
        ("log_bin", i(0)),
        ("log_bin_basename", Value::Null),
        ("log_bin_index", Value::Null),
        ("sync_binlog", i(0)),
        ("server_id", i(1)),
        ("binlog_format", s("ROW")),
        ("binlog_row_image", s("FULL")),
        ("binlog_checksum", s("CRC32")),
        ("max_binlog_size", i(1 << 30)),
        ("gtid_domain_id", i(0)),
        ("gtid_binlog_pos", s("")),
        ("gtid_current_pos", s("")),
        ("gtid_slave_pos", s("")),
        ("sql_slave_skip_counter", i(0)),
        ("slave_transaction_retries", i(10)),
        ("system_time_zone", s("UTC")),
        ("time_zone", s("SYSTEM")),
        ("transaction_isolation", s("REPEATABLE-READ")),
        ("tx_isolation", s("REPEATABLE-READ")),
        ("transaction_read_only", i(0)),
        ("tx_read_only", i(0)),
        ("unique_checks", i(1)),
        ("version", s(VERSION)),
        (
            "version_comment",
            s("Strata (MySQL-compatible, LSM storage)"),
        ),
        ("version_compile_machine", s("x86_64")),
        ("version_compile_os", s("Linux")),
        ("wait_timeout", i(28800)),
        ("warning_count", i(0)),
        ("error_count", i(0)),
        ("tmp_table_size", i(16777216)),
        ("max_heap_table_size", i(16777216)),
        ("datadir", s("./strata-data/")),
        ("socket", s("")),
        ("strata_sync_on_commit", i(1)),
        ("strata_block_cache_size", i(64 << 20)),
        ("strata_write_buffer_size", i(64 << 20)),
        ("rocksdb_flush_log_at_trx_commit", i(1)),
        ("rocksdb_max_row_locks", i(1 << 20)),
        ("rocksdb_write_batch_max_bytes", i(0)),
        ("strata_max_txn_memory", i(256 << 20)),
        ("rocksdb_commit_in_the_middle", i(0)),
        ("rocksdb_bulk_load_size", i(1000)),
        ("local_infile", i(1)),
        ("strata_bulk_load", i(0)),
        ("rocksdb_bulk_load", i(0)),
        // TTL tables (rel::ttl): process-wide, as MyRocks' rocksdb_enable_ttl,
        // rocksdb_enable_ttl_read_filtering and the test-only rocksdb_debug_ttl_*.
        ("strata_enable_ttl", i(1)),
        ("strata_enable_ttl_read_filtering", i(1)),
        ("strata_debug_ttl_rec_ts", i(0)),
        ("strata_debug_ttl_snapshot_ts", i(0)),
        ("strata_debug_ttl_read_filter_ts", i(0)),
        ("secure_file_priv", Value::Null),
        (
            "strata_merge_buf_size",
            i(crate::ddl::sortbuild::DEFAULT_MERGE_BUF),
        ),
        ("innodb_flush_log_at_trx_commit", i(1)),
        ("innodb_buffer_pool_size", i(0)),
        ("session_track_system_variables", s("")),
        ("default_authentication_plugin", s("mysql_native_password")),
        ("protocol_version", i(10)),
        ("read_only", i(0)),
        ("skip_name_resolve", i(1)),
        ("thread_handling", s("one-thread-per-connection")),
    ] {
        m.insert(k.to_string(), v);
    }
    for (k, v) in settings {
        let key = k.replace('-', "_").to_ascii_lowercase();
        let val = match v.parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) if key == "secure_file_priv" && v.eq_ignore_ascii_case("NULL") => Value::Null,
            Err(_) => s(v),
        };
        m.insert(key, val);
    }
    m
}

/// Canonical name of a variable (aliases folded).
pub fn canonical(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.as_str() {
        "tx_isolation" => "transaction_isolation".into(),
        "tx_read_only" => "transaction_read_only".into(),
        // MariaDB's name for MySQL's bound on recursive CTE rounds.
        "max_recursive_iterations" => "cte_max_recursion_depth".into(),
        // MariaDB 10.11's names of the slow log settings.
        "log_slow_query" => "slow_query_log".into(),
        "log_slow_query_file" => "slow_query_log_file".into(),
        "log_slow_query_time" => "long_query_time".into(),
        _ => n,
    }
}

/// Variables that exist only globally (SET SESSION on them fails; the
/// read-only ones below fail first).
pub fn global_only(name: &str) -> bool {
    matches!(
        name,
        "max_connections"
            | "local_infile"
            | "strata_block_cache_size"
            | "strata_write_buffer_size"
            | "max_prepared_stmt_count"
            | "slow_query_log"
            | "slow_query_log_file"
            | "log_output"
            | "require_secure_transport"
            | "strata_enable_ttl"
            | "strata_enable_ttl_read_filtering"
            | "strata_debug_ttl_rec_ts"
            | "strata_debug_ttl_snapshot_ts"
            | "strata_debug_ttl_read_filter_ts"
            | "server_id"
            | "max_binlog_size"
            | "sync_binlog"
            | "sql_slave_skip_counter"
            | "slave_transaction_retries"
    )
}

/// Applies a global variable that the engine layers read from process-wide
/// state (TTL tables: `rel::ttl`); other names change nothing.
pub fn apply_global(name: &str, v: &Value) {
    use std::sync::atomic::Ordering::Relaxed;
    let n = v.to_i128().unwrap_or(0);
    let secs = n.clamp(-3600, 3600) as i64;
    match name {
        "strata_enable_ttl" => rel::ttl::ENABLE.store(n != 0, Relaxed),
        "strata_enable_ttl_read_filtering" => rel::ttl::READ_FILTERING.store(n != 0, Relaxed),
        "strata_debug_ttl_rec_ts" => rel::ttl::DEBUG_REC_TS.store(secs, Relaxed),
        "strata_debug_ttl_snapshot_ts" => rel::ttl::DEBUG_SNAPSHOT_TS.store(secs, Relaxed),
        "strata_debug_ttl_read_filter_ts" => {
            rel::ttl::DEBUG_READ_FILTER_TS.store(secs.max(0), Relaxed)
        }
        _ => {}
    }
}

/// Variables that cannot be SET at all (MySQL's 1238): what the server is, or
/// counters of the session.
pub fn read_only(name: &str) -> bool {
    matches!(
        name,
        "version"
            | "version_comment"
            | "version_compile_machine"
            | "version_compile_os"
            | "protocol_version"
            | "datadir"
            | "port"
            | "socket"
            | "hostname"
            | "license"
            | "lower_case_table_names"
            | "system_time_zone"
            | "have_ssl"
            | "have_openssl"
            | "ssl_ca"
            | "ssl_capath"
            | "ssl_cert"
            | "ssl_cipher"
            | "ssl_crl"
            | "ssl_crlpath"
            | "ssl_key"
            | "tls_version"
            | "version_ssl_library"
            | "character_set_system"
            | "log_bin"
            | "log_bin_basename"
            | "log_bin_index"
            | "gtid_binlog_pos"
            | "gtid_current_pos"
            | "gtid_slave_pos"
            | "gtid_domain_id"
            | "binlog_checksum"
            | "performance_schema"
            | "thread_handling"
            | "skip_name_resolve"
            | "default_authentication_plugin"
            | "warning_count"
            | "error_count"
            | "secure_file_priv"
    )
}

/// 1231: a value the variable cannot take.
fn bad_value(name: &str, v: &str) -> SqlError {
    SqlError::wrong_value_for_var(name, v)
}

/// `+HH:MM` / `-HH:MM` within MySQL's range (-13:59 to +14:00).
pub(crate) fn is_offset(t: &str) -> bool {
    let b = t.as_bytes();
    if b.len() < 5 || !(b[0] == b'+' || b[0] == b'-') {
        return false;
    }
    let Some((h, m)) = t[1..].split_once(':') else {
        return false;
    };
    let digits = |x: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&x.len()) && x.bytes().all(|c| c.is_ascii_digit())
    };
    if !digits(h, 1..=2) || !digits(m, 2..=2) {
        return false;
    }
    let (h, m) = (
        h.parse::<u32>().unwrap_or(99),
        m.parse::<u32>().unwrap_or(99),
    );
    m < 60 && h * 60 + m <= if b[0] == b'+' { 14 * 60 } else { 13 * 60 + 59 }
}

/// Normalizes a value being SET (booleans, isolation level spelling) and refuses values
/// Strata would not honour.
pub fn normalize(name: &str, v: Value) -> Result<Value, SqlError> {
    let text = || String::from_utf8_lossy(&v.text()).to_ascii_uppercase();
    match name {
        "autocommit"
        | "foreign_key_checks"
        | "check_constraint_checks"
        | "unique_checks"
        | "sql_auto_is_null"
        | "sql_safe_updates"
        | "transaction_read_only"
        | "read_only"
        | "sql_log_bin"
        | "sql_notes"
        | "sql_warnings"
        | "sql_big_selects"
        | "sql_quote_show_create"
        | "strata_auto_parameterize"
        | "slow_query_log"
        | "rocksdb_commit_in_the_middle"
        | "local_infile"
        | "strata_bulk_load"
        | "require_secure_transport"
        | "strata_enable_ttl"
        | "strata_enable_ttl_read_filtering"
        | "strata_sync_on_commit" => {
            let b = match v {
                Value::Int(0) | Value::Int(1) => v,
                Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => {
                    return Err(bad_value(name, &text()))
                }
                _ => match text().as_str() {
                    "ON" | "TRUE" | "1" => Value::Int(1),
                    "OFF" | "FALSE" | "0" => Value::Int(0),
                    t => return Err(bad_value(name, t)),
                },
            };
            if name == "sql_auto_is_null" && b == Value::Int(1) {
                return Err(SqlError::unsupported("sql_auto_is_null=1"));
            }
            if name == "sql_warnings" && b == Value::Int(1) {
                return Err(SqlError::unsupported(
                    "sql_warnings=1 (single-row INSERTs report no warning summary)",
                ));
            }
            if name == "sql_big_selects" && b == Value::Int(0) {
                return Err(SqlError::unsupported(
                    "sql_big_selects=0 (Strata has no max_join_size)",
                ));
            }
            if name == "sql_quote_show_create" && b == Value::Int(0) {
                return Err(SqlError::unsupported(
                    "sql_quote_show_create=0 (SHOW CREATE TABLE always quotes names)",
                ));
            }
            Ok(b)
        }
        // Times are UTC (system_time_zone); another zone would need TIMESTAMP columns
        // converted on every read and write, which Strata does not do yet.
        "time_zone" => {
            let t = text();
            match t.as_str() {
                "SYSTEM" | "UTC" | "GMT" => Ok(v),
                _ if is_offset(&t) && t[1..].split(':').all(|p| p.parse() == Ok(0u32)) => Ok(v),
                _ if is_offset(&t) => Err(SqlError::unsupported(format!(
                    "time_zone '{t}' (only UTC is supported)"
                ))),
                _ => Err(SqlError::unknown_time_zone(t)),
            }
        }
        "transaction_isolation" => {
            let t = text().replace(' ', "-");
            match t.as_str() {
                "READ-COMMITTED" | "REPEATABLE-READ" | "READ-UNCOMMITTED" => Ok(s(&t)),
                "SERIALIZABLE" => Err(isolation_unsupported()),
                _ => Err(bad_value(name, &t)),
            }
        }
        "collation_connection" | "collation_database" | "collation_server" => {
            Ok(s(collation_value(&v)?.name()))
        }
        // A character set by name, or by one of its collations' ids.
        "character_set_connection" => match v {
            Value::Int(_) | Value::UInt(_) => Ok(s(collation_value(&v)?.charset())),
            _ => {
                let name = String::from_utf8_lossy(&v.text()).to_ascii_lowercase();
                let c =
                    crate::collate::resolve(Some(&name), None, rel::collation::Collation::DEFAULT)?;
                Ok(s(c.charset()))
            }
        },
        "sql_mode" => crate::sqlmode::normalize(&v),
        // The binary log has row events with full images only.
        "binlog_format" => match text().as_str() {
            "ROW" => Ok(s("ROW")),
            "STATEMENT" | "MIXED" => Err(SqlError::unsupported(format!(
                "binlog_format={} (only ROW)",
                text()
            ))),
            t => Err(bad_value(name, t)),
        },
        "binlog_row_image" => match text().as_str() {
            "FULL" => Ok(s("FULL")),
            "MINIMAL" | "NOBLOB" | "FULL_NODUP" => Err(SqlError::unsupported(format!(
                "binlog_row_image={} (only FULL)",
                text()
            ))),
            t => Err(bad_value(name, t)),
        },
        "server_id" => match v.to_i128() {
            Some(n) if (1..=u32::MAX as i128).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        "max_binlog_size" => match v.to_i128() {
            Some(n) if (4096..=1 << 30).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        "sql_slave_skip_counter" | "slave_transaction_retries" => match v.to_i128() {
            Some(n) if (0..=u32::MAX as i128).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        "gtid_slave_pos" => Ok(Value::Bytes(v.text().to_vec())),
        "sync_binlog" => match v.to_i128() {
            Some(n) if (0..=u32::MAX as i128).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        // Accepted only at the value Strata always runs with: any other would be ignored.
        "auto_increment_increment" | "auto_increment_offset" => match v.to_i128() {
            Some(1) => Ok(Value::Int(1)),
            Some(n) if (1..=65535).contains(&n) => Err(SqlError::unsupported(format!(
                "{name}={n} (AUTO_INCREMENT always counts by 1)"
            ))),
            _ => Err(bad_value(name, &text())),
        },
        "init_connect" | "session_track_system_variables" => {
            if v.text().is_empty() {
                Ok(s(""))
            } else {
                Err(SqlError::unsupported(format!("{name} other than ''")))
            }
        }
        // Not MyRocks' exactly (Strata's loads only empty tables and holds other
        // writers out): refused rather than half honoured.
        "rocksdb_bulk_load" => match v.to_i128() {
            Some(0) => Ok(Value::Int(0)),
            _ if text() == "OFF" => Ok(Value::Int(0)),
            _ => Err(SqlError::unsupported(
                "rocksdb_bulk_load=1 (use strata_bulk_load=1: rows in primary key order into an empty table)",
            )),
        },
        // Memory of an index build's sort before it spills runs to disk.
        "strata_merge_buf_size" => match v.to_i128() {
            Some(n) if (65536..=i64::MAX as i128).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        // Seconds, fractional (MariaDB shows six decimals).
        "long_query_time" | "max_statement_time" => {
            let n = match v {
                Value::Int(_) | Value::UInt(_) | Value::Decimal(..) | Value::Double(_) => {
                    String::from_utf8_lossy(&v.text()).parse::<f64>().ok()
                }
                _ => None,
            };
            match n {
                Some(n) if n.is_finite() => Ok(s(&format!("{:.6}", n.clamp(0.0, 31_536_000.0)))),
                _ => Err(SqlError::wrong_type_for_var(name)),
            }
        }
        "slow_query_log_file" => {
            let t = String::from_utf8_lossy(&v.text()).into_owned();
            if t.is_empty() || t.contains('\0') {
                Err(bad_value(name, &t))
            } else {
                Ok(s(&t))
            }
        }
        "log_output" => match text().as_str() {
            "FILE" => Ok(s("FILE")),
            "TABLE" | "NONE" => Err(SqlError::unsupported(format!(
                "log_output={} (the slow query log is a file)",
                text()
            ))),
            t => Err(bad_value(name, t)),
        },
        // Test-only clock offsets of TTL tables (MariaDB's range for MyRocks' own).
        // The read filter's offset only moves reads' clock ahead of the
        // compactions' (0..3600): a negative one would show rows compactions
        // already judged expired and may remove at any moment.
        "strata_debug_ttl_rec_ts" | "strata_debug_ttl_snapshot_ts" | "strata_debug_ttl_read_filter_ts" => {
            let lo = if name == "strata_debug_ttl_read_filter_ts" { 0 } else { -3600 };
            match v {
                Value::Int(_) | Value::UInt(_) => match v.to_i128() {
                    Some(n) if (lo..=3600).contains(&n) => Ok(Value::Int(n as i64)),
                    _ => Err(bad_value(name, &text())),
                },
                _ => Err(SqlError::wrong_type_for_var(name)),
            }
        }
        "max_execution_time" | "cte_max_recursion_depth" => match v.to_i128() {
            Some(n) if (0..=u32::MAX as i128).contains(&n) => Ok(Value::Int(n as i64)),
            _ => Err(bad_value(name, &text())),
        },
        _ => Ok(v),
    }
}

/// A collation given by name or by MySQL id (`SET collation_connection = 8`).
fn collation_value(v: &Value) -> Result<rel::collation::Collation, SqlError> {
    let name = String::from_utf8_lossy(&v.text()).to_ascii_lowercase();
    if let Value::Int(_) | Value::UInt(_) = v {
        let id = v.to_i128().and_then(|i| u16::try_from(i).ok());
        return id
            .and_then(rel::collation::Collation::from_id)
            .ok_or_else(|| SqlError::unknown_collation(&name));
    }
    crate::collate::resolve(None, Some(&name), rel::collation::Collation::DEFAULT)
}

/// SERIALIZABLE would need gap (next-key) locks, which Strata does not have.
pub fn isolation_unsupported() -> SqlError {
    SqlError::unsupported(
        "SERIALIZABLE isolation (no gap locks): use REPEATABLE READ or READ COMMITTED",
    )
}

/// SQL LIKE for SHOW ... LIKE patterns (case-insensitive).
pub fn like_ci(name: &str, pat: &str) -> bool {
    crate::expr::like(
        name.to_ascii_lowercase().as_bytes(),
        pat.to_ascii_lowercase().as_bytes(),
        b'\\',
    )
}
