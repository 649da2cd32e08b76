//! The replica's network side: the connector `sql::replica` uses to reach
//! a MariaDB source with `wire::client` (connect and authenticate, set the
//! session variables a MariaDB replica sets: checksum, capability,
//! heartbeat period, GTID start state; COM_REGISTER_SLAVE;
//! COM_BINLOG_DUMP), and the event stream it reads.
use sql::replica::{ConnectRequest, Connector, Source, SourceError};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Duration;
use wire::client::{Client, Target};

fn source_err(e: wire::Error) -> SourceError {
    match e {
        wire::Error::Rejected { code, message } => SourceError::Server { code, message },
        e => SourceError::Network(e.to_string()),
    }
}

/// SQL text of a string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

struct WireSource {
    client: Client,
    sock: TcpStream,
    binlog_format: Option<String>,
}

impl Source for WireSource {
    fn next_event(&mut self) -> Result<Option<Vec<u8>>, SourceError> {
        self.client.next_event().map_err(source_err)
    }

    fn binlog_format(&self) -> Option<String> {
        self.binlog_format.clone()
    }

    fn interrupter(&self) -> Box<dyn Fn() + Send + Sync> {
        match self.sock.try_clone() {
            Ok(s) => Box::new(move || {
                let _ = s.shutdown(Shutdown::Both);
            }),
            Err(_) => Box::new(|| {}),
        }
    }
}

fn connect(r: &ConnectRequest) -> Result<Box<dyn Source>, SourceError> {
    let mut c = Client::connect(&Target {
        host: r.host.clone(),
        port: r.port,
        user: r.user.clone(),
        password: r.password.clone(),
        timeout: Duration::from_secs(10),
    })
    .map_err(source_err)?;
    // Equal server ids would make every event look like our own (skipped):
    // MariaDB's IO thread stops with 1593 instead.
    // With it, @@global.binlog_format: the replica warns when it is not ROW.
    let r0 = c
        .query("SELECT @@server_id, @@global.binlog_format")
        .map_err(source_err)?;
    let col = |i: usize| {
        r0.rows
            .first()
            .and_then(|r| r.get(i).cloned().flatten())
            .and_then(|v| String::from_utf8(v).ok())
    };
    let theirs = col(0).and_then(|v| v.parse::<u32>().ok());
    let binlog_format = col(1);
    if theirs == Some(r.server_id) {
        return Err(SourceError::Server {
            code: sql::replica::ER_SLAVE_FATAL,
            message: "Fatal error: The slave I/O thread stops because master and slave have \
                      equal MariaDB server ids; these ids must be different for replication to \
                      work (or the --replicate-same-server-id option must be used on slave but \
                      this does not always make sense; please check the manual before using it)."
                .into(),
        });
    }
    let mut q = |sql: &str| c.query(sql).map(|_| ()).map_err(source_err);
    q("SET @master_binlog_checksum = @@global.binlog_checksum")?;
    q("SET @mariadb_slave_capability = 4")?;
    if !r.heartbeat.is_zero() {
        q(&format!(
            "SET @master_heartbeat_period = {}",
            r.heartbeat.as_nanos()
        ))?;
    }
    if let Some(g) = &r.gtid {
        q(&format!("SET @slave_connect_state = {}", quote(g)))?;
        q("SET @slave_gtid_strict_mode = 0")?;
        q("SET @slave_gtid_ignore_duplicates = 0")?;
    }
    c.register_slave(r.server_id, "", 0).map_err(source_err)?;
    // Without heartbeats a silent source is waited for as long as MariaDB's
    // slave_net_timeout (60 s); with them, twice the period.
    let read_timeout = if r.heartbeat.is_zero() {
        Duration::from_secs(60)
    } else {
        (r.heartbeat * 2).max(Duration::from_secs(2))
    };
    c.set_read_timeout(read_timeout).map_err(source_err)?;
    let (file, pos) = match r.gtid {
        Some(_) => ("", 4),
        None => (r.file.as_str(), r.pos.min(u32::MAX as u64) as u32),
    };
    c.binlog_dump(r.server_id, file, pos).map_err(source_err)?;
    let sock = c.socket().map_err(source_err)?;
    Ok(Box::new(WireSource {
        client: c,
        sock,
        binlog_format,
    }))
}

/// The connector the server gives the instance at startup.
pub fn connector() -> Arc<Connector> {
    Arc::new(connect)
}
