//! The `strata` server: opens the database, listens on TCP and a unix
//! socket, and serves each connection on its own thread (as MySQL does).
//! SIGTERM / SIGINT stop accepting, close client connections, flush the
//! engine and exit 0.
mod accounts;
mod config;
mod conn;
mod decoy_key;
mod keyfile;
mod metrics;
mod replica;
mod replsrc;
mod results;
mod sha2_keys;
mod tls;
mod watch;

use config::Config;

/// mimalloc instead of glibc's malloc: under sysbench-tpcc glibc's allocator took
/// 15-20% of the server's CPU (malloc_consolidate, _int_malloc, _int_free on the
/// per-statement parse and plan allocations; docs/BENCHMARKS.md, TPC-C).
/// The `sysalloc` feature keeps glibc's malloc, for heap profilers that hook it
/// (`heaptrack`; docs/BENCHMARKS.md, "Heap profiles").
#[cfg(not(feature = "sysalloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// State shared by every connection.
pub struct Shared {
    pub inst: Arc<sql::Instance>,
    pub max_connections: usize,
    pub max_packet: usize,
    /// Open client sockets, closed at shutdown.
    clients: Mutex<HashMap<u64, Client>>,
    pub stopping: AtomicBool,
    /// Connections that have not authenticated yet (bounded apart from
    /// max_connections, which counts sessions).
    pub handshaking: std::sync::atomic::AtomicUsize,
    /// TLS offered to clients (`--ssl-cert`/`--ssl-key`).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// caching_sha2_password's RSA key pair (full authentication without TLS).
    pub rsa: Option<Arc<wire::RsaKeys>>,
}

enum Client {
    Tcp(TcpStream),
    Unix(UnixStream),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("strata {}", sql::vars::VERSION);
        return;
    }
    let cfg = match Config::from_args(&args) {
        Ok(Some(c)) => c,
        Ok(None) => {
            print!("{}", config::HELP);
            return;
        }
        Err(e) => {
            eprintln!("strata: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(cfg) {
        eprintln!("strata: {e}");
        std::process::exit(1);
    }
}

fn run(cfg: Config) -> Result<(), String> {
    // The data directory is its owner's alone (0700), as the engine's files (0600).
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&cfg.datadir)
            .map_err(|e| format!("cannot create {}: {e}", cfg.datadir.display()))?;
    }
    // A live server on our socket is not ours to take over: refuse before opening
    // anything (the datadir's LOCK refuses a second server on the same data).
    if let Some(p) = cfg.socket_path() {
        if std::os::unix::net::UnixStream::connect(&p).is_ok() {
            return Err(format!(
                "another server is listening on the unix socket {}: stop it or choose another --socket",
                p.display()
            ));
        }
    }
    // Bad TLS files stop the server before anything is opened.
    let tls = if cfg.ssl { tls::load(&cfg.tls)? } else { None };
    // So does a metrics port that is taken.
    let metrics_listener = metrics::listen(&cfg)?;
    let secure_file_priv = match &cfg.secure_file_priv {
        Some(v) => v.clone(),
        None => {
            // Beside the datadir (as MySQL's packages put mysql-files beside mysql).
            let data = std::fs::canonicalize(&cfg.datadir).unwrap_or_else(|_| cfg.datadir.clone());
            let dir = data
                .parent()
                .map(|p| p.join("strata-files"))
                .unwrap_or_else(|| std::path::PathBuf::from("strata-files"));
            let _ = std::fs::create_dir_all(&dir);
            format!("{}/", dir.display())
        }
    };
    let mut vars = vec![
        ("secure_file_priv".to_string(), secure_file_priv),
        ("port".to_string(), cfg.port.to_string()),
        ("datadir".to_string(), format!("{}/", cfg.datadir.display())),
        (
            "max_connections".to_string(),
            cfg.max_connections.to_string(),
        ),
        (
            "max_allowed_packet".to_string(),
            cfg.max_allowed_packet.to_string(),
        ),
        (
            "innodb_lock_wait_timeout".to_string(),
            cfg.lock_wait_timeout.to_string(),
        ),
        ("connect_timeout".into(), cfg.connect_timeout.to_string()),
        ("wait_timeout".into(), cfg.wait_timeout.to_string()),
        (
            "interactive_timeout".into(),
            cfg.interactive_timeout.to_string(),
        ),
    ];
    // One transaction may use a sixth of the memory the server may use (cgroup v1 or v2),
    // at most 256 MiB: a big statement fails with 1206 instead of the server being killed.
    if let Some(limit) = memory_limit() {
        let cap = (limit / 6).min(256 << 20);
        eprintln!(
            "strata: memory limit {} MiB: strata_max_txn_memory = {} MiB",
            limit >> 20,
            cap >> 20
        );
        vars.push(("strata_max_txn_memory".into(), cap.to_string()));
    }
    if tls.is_some() {
        vars.push(("have_ssl".into(), "YES".into()));
        for (name, f) in [
            ("ssl_cert", &cfg.tls.cert),
            ("ssl_key", &cfg.tls.key),
            ("ssl_ca", &cfg.tls.ca),
        ] {
            if let Some(f) = f {
                vars.push((name.into(), f.clone()));
            }
        }
    }
    vars.push((
        "require_secure_transport".into(),
        u8::from(cfg.require_secure_transport).to_string(),
    ));
    if let Some(iso) = &cfg.transaction_isolation {
        vars.push(("transaction_isolation".into(), iso.clone()));
    }
    if let Some(s) = cfg.socket_path() {
        vars.push(("socket".into(), s.display().to_string()));
    }
    vars.extend(cfg.variables.iter().cloned());
    let opts = sql::InstanceOptions {
        sync_on_commit: cfg.sync_on_commit,
        block_cache_size: cfg.block_cache_size,
        write_buffer_size: cfg.write_buffer_size,
        background_jobs: cfg.background_jobs,
        rate_limit: cfg.rate_limit,
        rate_limit_auto_tune: cfg.rate_limit_auto_tune,
        delayed_write_rate: cfg.delayed_write_rate,
        cache_index_and_filter_blocks: cfg.cache_index_and_filter_blocks,
        max_open_files: cfg.max_open_files,
        block_size: cfg.block_size,
        compression: cfg.compression,
        bottommost_compression: cfg.bottommost_compression,
        use_direct_reads: cfg.use_direct_reads,
        default_cf_options: cfg.default_cf_options.clone(),
        override_cf_options: cfg.override_cf_options.clone(),
        variables: vars,
        log_bin: cfg.log_bin.clone(),
        server_id: cfg.server_id,
        max_binlog_size: cfg.max_binlog_size,
    };
    if cfg.skip_grant_tables {
        accounts::skip_grant_tables(&cfg)?;
    }
    eprintln!("strata: opening {}", cfg.datadir.display());
    let inst = sql::Instance::open(&cfg.datadir, &opts)
        .map_err(|e| format!("cannot open the database: {}", e.msg))?;
    accounts::bootstrap(&inst, &cfg)?;
    // Replication resumes where it was (START SLAVE before the stop).
    inst.replica.set_connector(replica::connector());
    inst.replica
        .resume(&inst)
        .map_err(|e| format!("cannot resume replication: {}", e.msg))?;
    // Bad caching_sha2_password key files stop the server (a missing default
    // pair is generated in the datadir).
    let rsa = sha2_keys::load(&cfg)?;
    // Unknown users' stand-ins keep their plugins across restarts.
    decoy_key::load(&cfg)?;
    // BACKUP DATABASE copies the key files too: a copy started on it keeps
    // the source's RSA pair and stand-ins.
    let mut keys = sha2_keys::backup_files(&cfg);
    keys.push(cfg.datadir.join(decoy_key::FILE));
    sql::backup::set_extra_files(&inst, keys);
    let shared = Arc::new(Shared {
        inst,
        max_connections: cfg.max_connections,
        max_packet: cfg.max_allowed_packet,
        clients: Mutex::new(HashMap::new()),
        stopping: AtomicBool::new(false),
        handshaking: std::sync::atomic::AtomicUsize::new(0),
        tls,
        rsa,
    });
    let mut acceptors = Vec::new();
    {
        let sh = shared.clone();
        acceptors.push(std::thread::spawn(move || watch::watch(sh)));
    }
    if cfg.port != 0 {
        let addr = format!("{}:{}", cfg.bind_address, cfg.port);
        let l = TcpListener::bind(&addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
        eprintln!("strata: listening on {addr}");
        let sh = shared.clone();
        acceptors.push(std::thread::spawn(move || accept_tcp(sh, l)));
    }
    let sock = cfg.socket_path();
    if let Some(p) = &sock {
        let _ = std::fs::remove_file(p);
        match UnixListener::bind(p) {
            Ok(l) => {
                l.set_nonblocking(true).map_err(|e| e.to_string())?;
                // Anyone on the machine may connect (and then authenticate), as MySQL.
                {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777));
                }
                eprintln!("strata: listening on {}", p.display());
                let sh = shared.clone();
                acceptors.push(std::thread::spawn(move || accept_unix(sh, l)));
            }
            Err(e) => eprintln!("strata: unix socket {} disabled: {e}", p.display()),
        }
    }
    if acceptors.len() == 1 {
        return Err("nothing to listen on (--port=0 and no socket)".into());
    }
    if let Some(l) = metrics_listener {
        let sh = shared.clone();
        acceptors.push(std::thread::spawn(move || metrics::serve(sh, l)));
    }
    eprintln!(
        "strata: ready for connections (version {})",
        sql::vars::VERSION
    );
    let term = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, term.clone()).map_err(|e| e.to_string())?;
    }
    while !term.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("strata: shutting down");
    shared.stopping.store(true, Ordering::SeqCst);
    for a in acceptors {
        let _ = a.join();
    }
    for (_, c) in shared
        .clients
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .drain()
    {
        match c {
            Client::Tcp(s) => {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
            Client::Unix(s) => {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
    // Give connection threads a moment to roll back and exit.
    for _ in 0..100 {
        if shared.inst.threads_connected() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(p) = &sock {
        let _ = std::fs::remove_file(p);
    }
    shared
        .inst
        .shutdown()
        .map_err(|e| format!("flush at shutdown failed: {}", e.msg))?;
    eprintln!("strata: shutdown complete");
    Ok(())
}

/// The memory limit of this process's cgroup (v1 `memory.limit_in_bytes` or v2
/// `memory.max`), if there is one.
fn memory_limit() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let file = if ctrl.split(',').any(|c| c == "memory") {
            format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
        } else if ctrl.is_empty() {
            format!("/sys/fs/cgroup{path}/memory.max")
        } else {
            continue;
        };
        if let Ok(v) = std::fs::read_to_string(&file) {
            if let Ok(n) = v.trim().parse::<u64>() {
                // "Unlimited" is a huge number in v1 ("max" in v2 does not parse).
                if n < (1 << 50) {
                    return Some(n);
                }
            }
        }
    }
    None
}

fn next_client_id() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Registers a client socket (so shutdown can close it) and serves it on
/// its own thread.
fn spawn_client(sh: &Arc<Shared>, stream: tls::Stream, handle: Option<Client>, peer: String) {
    let id = next_client_id();
    if let Some(c) = handle {
        sh.clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, c);
    }
    let sh2 = sh.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("conn-{id}"))
        .stack_size(sql::SESSION_STACK_SIZE)
        .spawn(move || {
            conn::serve(&sh2, stream, &peer);
            sh2.clients
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        });
    if let Err(e) = spawned {
        eprintln!("strata: cannot start a connection thread: {e}");
    }
}

/// Accept loop shared by the TCP and unix listeners: polls until shutdown.
fn accept_loop<T>(
    sh: &Arc<Shared>,
    mut accept: impl FnMut() -> std::io::Result<T>,
    mut on: impl FnMut(T),
) {
    while !sh.stopping.load(Ordering::SeqCst) {
        match accept() {
            Ok(c) => on(c),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => {
                eprintln!("strata: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn accept_tcp(sh: Arc<Shared>, l: TcpListener) {
    accept_loop(
        &sh,
        || l.accept(),
        |(s, peer)| {
            let _ = s.set_nonblocking(false);
            let _ = s.set_nodelay(true);
            let handle = s.try_clone().ok().map(Client::Tcp);
            spawn_client(&sh, tls::Stream::tcp(s), handle, peer.ip().to_string());
        },
    );
}

fn accept_unix(sh: Arc<Shared>, l: UnixListener) {
    accept_loop(
        &sh,
        || l.accept(),
        |(s, _)| {
            let _ = s.set_nonblocking(false);
            let handle = s.try_clone().ok().map(Client::Unix);
            spawn_client(&sh, tls::Stream::unix(s), handle, "localhost".to_string());
        },
    );
}
