//! Server options from the command line and an optional my.cnf-style file
//! (`--defaults-file=F`; sections `[mysqld]`, `[server]` and `[strata]`).
//! Names follow MySQL where an equivalent exists; `-` and `_` are the same.
use std::path::PathBuf;

/// Everything the server needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    pub datadir: PathBuf,
    pub port: u16,
    pub bind_address: String,
    pub socket: Option<PathBuf>,
    pub max_connections: usize,
    pub block_cache_size: usize,
    pub write_buffer_size: usize,
    pub background_jobs: usize,
    pub rate_limit: u64,
    pub rate_limit_auto_tune: bool,
    pub delayed_write_rate: u64,
    pub cache_index_and_filter_blocks: bool,
    pub max_open_files: usize,
    pub block_size: usize,
    pub compression: lsm::Compression,
    pub bottommost_compression: lsm::Compression,
    pub use_direct_reads: bool,
    /// RocksDB option strings for every column family / named ones (MyRocks'
    /// rocksdb_default_cf_options, rocksdb_override_cf_options).
    pub default_cf_options: String,
    pub override_cf_options: String,
    pub sync_on_commit: bool,
    pub root_password: Option<String>,
    /// A file whose first line is root's password (not visible in `ps`).
    pub root_password_file: Option<PathBuf>,
    /// First start: a random root password, written to `<datadir>/root-password` (0600).
    pub initialize: bool,
    /// Recovery: every login is accepted without a password and holds every
    /// privilege (MySQL's --skip-grant-tables); loopback only.
    pub skip_grant_tables: bool,
    /// Where server-side LOAD DATA INFILE may read: a directory, "" for
    /// anywhere, "NULL" for nowhere; default: `strata-files` beside the datadir.
    pub secure_file_priv: Option<String>,
    pub max_allowed_packet: usize,
    pub lock_wait_timeout: u64,
    pub transaction_isolation: Option<String>,
    /// Seconds a client has to complete the handshake.
    pub connect_timeout: u64,
    /// Seconds an idle session is kept (interactive clients: interactive_timeout).
    pub wait_timeout: u64,
    pub interactive_timeout: u64,
    /// Settings of system variables passed through as they are (the slow
    /// query log, max_statement_time): (name, value).
    pub variables: Vec<(String, String)>,
    /// TLS: the server's certificate, key and the CA client certificates are
    /// checked against (PEM files).
    pub tls: crate::tls::TlsFiles,
    /// `--skip-ssl` / `--ssl=0`: no TLS even with the files given.
    pub ssl: bool,
    /// Refuse plain TCP connections (TLS and unix sockets only).
    pub require_secure_transport: bool,
    /// caching_sha2_password's RSA key files (relative: in the datadir; default
    /// private_key.pem and public_key.pem, generated when both are absent).
    pub sha2_private_key: Option<String>,
    pub sha2_public_key: Option<String>,
    /// Generate the default key pair when it is absent (MySQL's
    /// caching_sha2_password_auto_generate_rsa_keys, default on).
    pub sha2_auto_generate: bool,
    /// Port of the Prometheus endpoint (`GET /metrics`); 0: off.
    pub metrics_port: u16,
    /// Address it listens on (default 127.0.0.1).
    pub metrics_bind: String,
    /// `--log-bin[=basename]`: the binary log (off by default; basename
    /// `mysql-bin`).
    pub log_bin: Option<String>,
    /// `--server-id` (@@server_id, the binary log's server id).
    pub server_id: u32,
    /// `--max-binlog-size`: a binary log file is rotated at this size.
    pub max_binlog_size: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            datadir: PathBuf::from("./strata-data"),
            port: 3306,
            bind_address: "127.0.0.1".into(),
            socket: None,
            max_connections: 151,
            block_cache_size: 64 << 20,
            write_buffer_size: 64 << 20,
            background_jobs: 2,
            rate_limit: 0,
            rate_limit_auto_tune: true,
            delayed_write_rate: 16 << 20,
            cache_index_and_filter_blocks: true,
            max_open_files: 4096,
            block_size: 16 << 10,
            compression: lsm::Compression::Lz4,
            bottommost_compression: lsm::Compression::Zstd,
            use_direct_reads: false,
            default_cf_options: String::new(),
            override_cf_options: String::new(),
            sync_on_commit: true,
            root_password: None,
            root_password_file: None,
            initialize: false,
            skip_grant_tables: false,
            secure_file_priv: None,
            max_allowed_packet: 64 << 20,
            lock_wait_timeout: 50,
            transaction_isolation: None,
            connect_timeout: 10,
            wait_timeout: 28800,
            variables: Vec::new(),
            interactive_timeout: 28800,
            sha2_private_key: None,
            sha2_public_key: None,
            sha2_auto_generate: true,
            tls: Default::default(),
            ssl: true,
            require_secure_transport: false,
            metrics_port: 0,
            metrics_bind: "127.0.0.1".into(),
            log_bin: None,
            server_id: 1,
            max_binlog_size: 1 << 30,
        }
    }
}

pub const HELP: &str = "\
strata: a MySQL-compatible server on an LSM-tree engine

Usage: strata [--option=value ...]

  --datadir=DIR                 data directory (default ./strata-data, created if missing)
  --secure-file-priv=DIR        LOAD DATA INFILE reads only files in DIR ('' anywhere,
                                NULL nowhere; default: strata-files beside the datadir)
  --port=N                      TCP port (default 3306; 0 disables TCP)
  --bind-address=ADDR           address to listen on (default 127.0.0.1)
  --socket=PATH                 unix socket (default DATADIR/strata.sock; '' disables)
  --max-connections=N           authenticated sessions (default 151; error 1040 beyond; root
                                gets one more, as MySQL's SUPER users do)
  --connect-timeout=S           seconds to complete the handshake (default 10)
  --wait-timeout=S              seconds an idle session is kept (default 28800)
  --interactive-timeout=S       the same for interactive clients (default 28800)
  --block-cache-size=BYTES      engine block cache (default 64M; K/M/G suffixes)
  --write-buffer-size=BYTES     memtable size (default 64M)
  --background-jobs=N           background threads (default 2): a quarter (at least one) only
                                flush memtables, the rest (at least one) compact
  --rate-limit=BYTES            compaction write rate limit per second (default 0: none); flushes
                                are never held by it, and compactions ignore it while writes are
                                throttled by compaction debt
  --rate-limit-auto-tune=1|0    tune that limit within [limit/20, limit] to the demand (default 1)
  --delayed-write-rate=BYTES    write rate per second when a write slowdown starts (default 16M);
                                it falls while compaction debt grows (see docs/WRITE-STALLS.md)
  --cache-index-and-filter-blocks=1|0  keep table index and bloom blocks in the block
                                cache, charged to its size (default 1; 0 pins them per open table)
  --max-open-files=N            open table files kept (default 4096)
  --block-size=BYTES            uncompressed table data block size (default 16K; MyRocks'
                                rocksdb_block_size is 4K: smaller blocks decompress less per
                                point read but read more per range at 600 MB, see
                                bench/results/block-size-2026-11-27.md)
  --compression=none|lz4|zstd   block compression above the bottommost level (default lz4)
  --bottommost-compression=none|lz4|zstd  compression of the last level, where most data
                                lives (default zstd: about 2x on sysbench rows, where lz4 gets 1.1x)
  --default-cf-options=STR      options of every column family, RocksDB's syntax (as MyRocks'
                                rocksdb_default_cf_options), over the flags above, e.g.
                                'write_buffer_size=64m;compression=kLZ4Compression;
                                bottommost_compression=kZSTD;block_based_table_factory=
                                {block_size=16k;filter_policy=bloomfilter:10:false}';
                                an unknown or unsupported option stops startup
  --override-cf-options=STR     'cf1={...};cf2={...}': options of named column families
                                (index COMMENT 'cfname=cf1'), over the defaults
  --use-direct-reads=1|0        read table files with O_DIRECT, bypassing the OS page cache
                                (default 0); then the block cache is the only cache of table
                                data: size it to most of the memory. Alias rocksdb_use_direct_reads
  --sync-on-commit=1|0          fsync the log at every commit (default 1);
                                alias --innodb-flush-log-at-trx-commit / --rocksdb-flush-log-at-trx-commit
  --root-password=PW            sets the password of the root accounts at this start
                                (visible in `ps`: prefer --root-password-file)
  --root-password-file=FILE     the same, read from the file's first line
  --initialize                  on a new datadir: root gets a random password, printed
                                once and written to <datadir>/root-password (mode 0600);
                                without it a new instance's root has no password
  --skip-grant-tables           recovery when no account can log in (all dropped, password
                                lost): any user logs in without a password and holds every
                                privilege; refused unless --bind-address is a loopback address
  --max-allowed-packet=BYTES    largest packet accepted (default 64M)
  --innodb-lock-wait-timeout=S  row lock wait timeout in seconds (default 50)
  --transaction-isolation=L     READ-COMMITTED or REPEATABLE-READ (default)
  --slow-query-log=1|0          log statements slower than --long-query-time (default 0)
  --long-query-time=S           seconds, fractional (default 10)
  --slow-query-log-file=FILE    the slow log (default strata-slow.log; relative to the datadir)
  --log-bin[=BASENAME]          the binary log (MariaDB's ROW format with GTIDs) in
                                BASENAME.000001... in the datadir (default mysql-bin; off)
  --server-id=N                 @@server_id, written into binary log events (default 1)
  --max-binlog-size=N           rotate binary log files at N bytes (4096..1G, default 1G)
  --server-version=V            the version clients see (handshake, @@version; default
                                10.11.9-strata-...: MariaDB replicas use GTIDs, and
                                mariadb-binlog reads remotely, only from a version 10 or
                                later; docs/REPLICATION.md)
  --max-statement-time=S        abort statements running longer (MariaDB's, 1969; default 0: off)
  --ssl-cert=FILE               the server's TLS certificate (PEM; a chain: the server's first)
  --ssl-key=FILE                its private key (PEM); with --ssl-cert clients may use TLS
                                (`mariadb --ssl`); a bad file stops the server at startup
  --ssl-ca=FILE                 CA certificates (PEM) client certificates are checked against
  --skip-ssl                    no TLS even with the files above (also --ssl=0)
  --require-secure-transport=1|0  refuse TCP connections without TLS (error 3159; unix
                                socket connections are secure); SET GLOBAL changes it
  --caching-sha2-password-private-key-path=FILE  RSA private key (PEM) for caching_sha2_password
                                logins without TLS (default private_key.pem in the datadir)
  --caching-sha2-password-public-key-path=FILE   its public key sent to clients (default
                                public_key.pem); both defaults absent: a pair is generated
  --caching-sha2-password-auto-generate-rsa-keys=1|0  generate that pair (default 1)
  --metrics-port=N              serve the status counters for Prometheus at
                                http://127.0.0.1:N/metrics (default 0: off)
  --metrics-bind=ADDR           address of that endpoint (default 127.0.0.1)
  --defaults-file=FILE          read options from a my.cnf-style file first
  --version                     print the version
  --help                        this text
";

/// Parses a size with an optional K/M/G suffix.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .map(|n| n.saturating_mul(mult))
        .map_err(|_| format!("bad size '{s}'"))
}

fn parse_compression(s: &str) -> Result<lsm::Compression, String> {
    lsm::Compression::from_name(s.trim())
        .ok_or_else(|| format!("bad compression '{s}' (use none, lz4 or zstd)"))
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" | "2" => Ok(true),
        "0" | "off" | "false" | "no" => Ok(false),
        _ => Err(format!("bad boolean '{s}'")),
    }
}

impl Config {
    /// Applies one option; `Ok(false)` for an unknown name.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let n = name
            .trim()
            .trim_start_matches("--")
            .replace('-', "_")
            .to_ascii_lowercase();
        let num = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("bad number '{v}' for --{name}"))
        };
        match n.as_str() {
            "datadir" => self.datadir = PathBuf::from(value),
            "port" => {
                self.port = num(value)?
                    .try_into()
                    .map_err(|_| format!("bad port '{value}'"))?
            }
            "bind_address" => self.bind_address = value.to_string(),
            "metrics_port" => {
                self.metrics_port = num(value)?
                    .try_into()
                    .map_err(|_| format!("bad port '{value}'"))?
            }
            "metrics_bind" => self.metrics_bind = value.to_string(),
            "socket" => {
                self.socket = if value.is_empty() {
                    Some(PathBuf::new())
                } else {
                    Some(PathBuf::from(value))
                }
            }
            "max_connections" => self.max_connections = num(value)? as usize,
            "block_cache_size" | "strata_block_cache_size" | "rocksdb_block_cache_size" => {
                self.block_cache_size = parse_size(value)?
            }
            "write_buffer_size" | "strata_write_buffer_size" => {
                self.write_buffer_size = parse_size(value)?
            }
            "background_jobs" | "max_background_jobs" => {
                self.background_jobs = num(value)?.max(1) as usize
            }
            "rate_limit" | "rocksdb_rate_limiter_bytes_per_sec" => {
                self.rate_limit = parse_size(value)? as u64
            }
            "rate_limit_auto_tune" => self.rate_limit_auto_tune = parse_bool(value)?,
            "delayed_write_rate" | "rocksdb_delayed_write_rate" => {
                self.delayed_write_rate = (parse_size(value)? as u64).max(16 << 10)
            }
            "cache_index_and_filter_blocks" | "rocksdb_cache_index_and_filter_blocks" => {
                self.cache_index_and_filter_blocks = parse_bool(value)?
            }
            "max_open_files" | "rocksdb_max_open_files" => {
                self.max_open_files = num(value)?.max(16) as usize
            }
            "block_size" | "rocksdb_block_size" => {
                let n = parse_size(value)?;
                if !(1024..=(4 << 20)).contains(&n) {
                    return Err(format!("--block-size must be 1K..4M, not '{value}'"));
                }
                self.block_size = n
            }
            "compression" => self.compression = parse_compression(value)?,
            "bottommost_compression" => self.bottommost_compression = parse_compression(value)?,
            "default_cf_options" | "rocksdb_default_cf_options" => {
                lsm::optstr::apply(&lsm::CfOptions::default(), value)
                    .map_err(|e| format!("--default-cf-options: {e}"))?;
                self.default_cf_options = value.to_string()
            }
            "override_cf_options" | "rocksdb_override_cf_options" => {
                lsm::CfConfig::parse(&lsm::CfOptions::default(), "", value)
                    .map_err(|e| format!("--override-cf-options: {e}"))?;
                self.override_cf_options = value.to_string()
            }
            "use_direct_reads" | "rocksdb_use_direct_reads" => {
                self.use_direct_reads = parse_bool(value)?
            }
            "sync_on_commit"
            | "strata_sync_on_commit"
            | "innodb_flush_log_at_trx_commit"
            | "rocksdb_flush_log_at_trx_commit" => self.sync_on_commit = parse_bool(value)?,
            "root_password" => self.root_password = Some(value.to_string()),
            "root_password_file" => self.root_password_file = Some(PathBuf::from(value)),
            "initialize" => self.initialize = parse_bool(value)?,
            "skip_grant_tables" => self.skip_grant_tables = parse_bool(value)?,
            "secure_file_priv" => self.secure_file_priv = Some(value.to_string()),
            "max_allowed_packet" => self.max_allowed_packet = parse_size(value)?,
            "innodb_lock_wait_timeout" | "lock_wait_timeout" => {
                self.lock_wait_timeout = num(value)?
            }
            "connect_timeout" => self.connect_timeout = num(value)?.max(1),
            "wait_timeout" => self.wait_timeout = num(value)?.max(1),
            "interactive_timeout" => self.interactive_timeout = num(value)?.max(1),
            "slow_query_log" | "log_slow_query" => self.variables.push((
                "slow_query_log".into(),
                (parse_bool(value)? as u8).to_string(),
            )),
            "long_query_time" | "log_slow_query_time" | "max_statement_time" => {
                let secs = value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| format!("bad number of seconds '{value}' for --{name}"))?;
                let var = if n == "max_statement_time" {
                    "max_statement_time"
                } else {
                    "long_query_time"
                };
                self.variables
                    .push((var.into(), format!("{:.6}", secs.min(31_536_000.0))))
            }
            "server_version" => {
                if !value.starts_with(|c: char| c.is_ascii_digit()) || value.contains('\0') {
                    return Err(format!(
                        "--server-version takes a version such as 10.11.9-MariaDB-strata, not '{value}'"
                    ));
                }
                self.variables.push(("version".into(), value.to_string()))
            }
            "slow_query_log_file" | "log_slow_query_file" => {
                if value.is_empty() {
                    return Err(format!("--{name} needs a file name"));
                }
                self.variables
                    .push(("slow_query_log_file".into(), value.to_string()))
            }
            "caching_sha2_password_private_key_path" => {
                self.sha2_private_key = Some(value.to_string())
            }
            "caching_sha2_password_public_key_path" => {
                self.sha2_public_key = Some(value.to_string())
            }
            "caching_sha2_password_auto_generate_rsa_keys" => {
                self.sha2_auto_generate = parse_bool(value)?
            }
            "ssl_cert" => self.tls.cert = Some(value.to_string()),
            "ssl_key" => self.tls.key = Some(value.to_string()),
            "ssl_ca" => self.tls.ca = Some(value.to_string()),
            "ssl" => self.ssl = parse_bool(value)?,
            "skip_ssl" => self.ssl = !parse_bool(value)?,
            "require_secure_transport" => self.require_secure_transport = parse_bool(value)?,
            "transaction_isolation" | "tx_isolation" => {
                self.transaction_isolation = Some(value.to_ascii_uppercase())
            }
            "log_bin" => {
                let v = value.trim();
                self.log_bin = match v {
                    "" | "1" | "ON" | "on" => Some("mysql-bin".into()),
                    "0" | "OFF" | "off" => None,
                    _ if v.contains('/') || v.contains('.') => {
                        return Err(format!(
                            "--log-bin takes a basename in the datadir, not '{v}'"
                        ))
                    }
                    _ => Some(v.to_string()),
                }
            }
            "server_id" => {
                self.server_id = num(value)?
                    .try_into()
                    .map_err(|_| format!("bad server id '{value}'"))?
            }
            "max_binlog_size" => {
                let n = num(value)?;
                if !(4096..=1 << 30).contains(&n) {
                    return Err(format!("--max-binlog-size must be 4096..1G, not '{value}'"));
                }
                self.max_binlog_size = n;
            }
            // Row events are the only format; sync_binlog is accepted at any value (the
            // log is written in the engine's own synced commits, docs/REPLICATION.md) and
            // shown as given in @@sync_binlog, as MariaDB shows it.
            "binlog_format" => {
                if !value.trim().eq_ignore_ascii_case("ROW") {
                    return Err(format!("--binlog-format={value}: only ROW is supported"));
                }
            }
            "sync_binlog" => {
                let n = num(value)?;
                if n > u32::MAX as u64 {
                    return Err(format!(
                        "--sync-binlog must be 0..4294967295, not '{value}'"
                    ));
                }
                self.variables.push(("sync_binlog".into(), n.to_string()))
            }
            // Accepted for compatibility with MySQL option files.
            "user"
            | "pid_file"
            | "log_error"
            | "skip_name_resolve"
            | "default_storage_engine"
            | "character_set_server"
            | "collation_server" => {}
            "skip_log_bin" | "disable_log_bin" => self.log_bin = None,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a my.cnf-style file.
    pub fn load_file(&mut self, path: &str) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let mut on = true;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                continue;
            }
            if l.starts_with('[') {
                let sec = l
                    .trim_matches(|c| c == '[' || c == ']')
                    .to_ascii_lowercase();
                on = matches!(sec.as_str(), "mysqld" | "server" | "strata");
                continue;
            }
            if !on {
                continue;
            }
            let (k, v) = l
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
                .unwrap_or((l, "1"));
            if !self.set(k, v)? {
                eprintln!("strata: {path}:{}: ignoring unknown option '{k}'", i + 1);
            }
        }
        Ok(())
    }

    /// Parses command-line arguments (after the program name).
    pub fn from_args(args: &[String]) -> Result<Option<Config>, String> {
        let mut c = Config::default();
        if let Some(f) = args.iter().find_map(|a| a.strip_prefix("--defaults-file=")) {
            c.load_file(f)?;
        }
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if a == "--help" || a == "-h" || a == "-?" {
                return Ok(None);
            }
            if a.starts_with("--defaults-file=") {
                continue;
            }
            let Some(opt) = a.strip_prefix("--") else {
                return Err(format!("unexpected argument '{a}' (see --help)"));
            };
            let (k, v) = match opt.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => {
                    let takes_value = !matches!(
                        opt.replace('-', "_").as_str(),
                        "skip_name_resolve"
                            | "log_bin"
                            | "skip_log_bin"
                            | "disable_log_bin"
                            | "initialize"
                            | "ssl"
                            | "skip_ssl"
                            | "skip_grant_tables"
                    );
                    if takes_value && i < args.len() && !args[i].starts_with("--") {
                        i += 1;
                        (opt.to_string(), args[i - 1].clone())
                    } else {
                        (opt.to_string(), "1".to_string())
                    }
                }
            };
            if !c.set(&k, &v)? {
                return Err(format!("unknown option '--{k}' (see --help)"));
            }
        }
        Ok(Some(c))
    }

    /// The unix socket path, if enabled.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.socket {
            Some(p) if p.as_os_str().is_empty() => None,
            Some(p) => Some(p.clone()),
            None => Some(self.datadir.join("strata.sock")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_and_sizes() {
        let a: Vec<String> = [
            "--port=3307",
            "--datadir",
            "/tmp/x",
            "--block_cache_size=1G",
            "--sync-on-commit=off",
            "--use-direct-reads=1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = Config::from_args(&a).unwrap().unwrap();
        assert_eq!(c.port, 3307);
        assert_eq!(c.datadir, PathBuf::from("/tmp/x"));
        assert_eq!(c.block_cache_size, 1 << 30);
        assert!(!c.sync_on_commit);
        assert!(c.use_direct_reads);
        assert!(!Config::default().use_direct_reads);
        assert!(Config::from_args(&["--nope=1".to_string()]).is_err());
        assert!(Config::from_args(&["--port=abc".to_string()]).is_err());
        assert_eq!(parse_size("64K").unwrap(), 65536);
    }

    #[test]
    fn sync_binlog_is_shown_as_given() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c = Config::from_args(&args(&["--sync-binlog=1"]))
            .unwrap()
            .unwrap();
        assert!(c
            .variables
            .contains(&("sync_binlog".to_string(), "1".to_string())));
        assert!(Config::from_args(&args(&["--sync-binlog=4294967296"])).is_err());
        assert!(Config::from_args(&args(&["--sync-binlog=x"])).is_err());
    }

    #[test]
    fn tls_options() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c = Config::from_args(&args(&[
            "--ssl-cert=/c.pem",
            "--ssl-key",
            "/k.pem",
            "--ssl-ca=/ca.pem",
            "--require-secure-transport=ON",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.tls.cert.as_deref(), Some("/c.pem"));
        assert_eq!(c.tls.key.as_deref(), Some("/k.pem"));
        assert_eq!(c.tls.ca.as_deref(), Some("/ca.pem"));
        assert!(c.require_secure_transport && c.ssl);
        let c = Config::from_args(&args(&["--skip-ssl", "--ssl-cert=/c.pem"]))
            .unwrap()
            .unwrap();
        assert!(!c.ssl);
        assert!(!Config::default().require_secure_transport);
        assert!(Config::from_args(&args(&["--require-secure-transport=maybe"])).is_err());
    }

    #[test]
    fn table_format_options() {
        let c = Config::default();
        assert_eq!(c.block_size, 16 << 10);
        assert_eq!(c.bottommost_compression, lsm::Compression::Zstd);
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c = Config::from_args(&args(&[
            "--block-size=4K",
            "--compression=none",
            "--bottommost-compression=kLZ4Compression",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.block_size, 4096);
        assert_eq!(c.compression, lsm::Compression::None);
        assert_eq!(c.bottommost_compression, lsm::Compression::Lz4);
        assert!(Config::from_args(&args(&["--compression=gzip"])).is_err());
        let c = Config::from_args(&args(&[
            "--default-cf-options=write_buffer_size=8m;compression=kZSTD",
            "--override-cf-options=cf1={compression=kNoCompression};cf2={}",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            c.default_cf_options,
            "write_buffer_size=8m;compression=kZSTD"
        );
        assert_eq!(
            c.override_cf_options,
            "cf1={compression=kNoCompression};cf2={}"
        );
        for bad in [
            "--default-cf-options=no_such_option=1",
            "--default-cf-options=compression=kSnappyCompression",
            "--override-cf-options=cf1={write_buffer_size=x}",
            "--override-cf-options=cf1={",
        ] {
            assert!(Config::from_args(&args(&[bad])).is_err(), "{bad}");
        }
        assert!(Config::from_args(&args(&["--block-size=100"])).is_err());
    }
}
