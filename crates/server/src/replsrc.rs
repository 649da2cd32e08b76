//! Strata as a replication source, the connection side: COM_REGISTER_SLAVE
//! (the replica's entry in SHOW SLAVE HOSTS) and COM_BINLOG_DUMP (the
//! stream: `binlog::dump` with the settings the replica put in its session,
//! `sql::replsrc`). Both need REPLICATION SLAVE. A dump ends when the
//! replica goes, on KILL, at server shutdown, or at the end of the log
//! with BINLOG_DUMP_NON_BLOCK (then EOF); a fatal error reaches the replica
//! as ERR 1236 (ER_MASTER_FATAL_ERROR_READING_BINLOG).
use crate::Shared;
use sql::Session;
use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use wire::{Conn, OkPacket};

/// ER_MASTER_FATAL_ERROR_READING_BINLOG.
const ER_MASTER_FATAL: u16 = 1236;

fn denied<S: Read + Write>(conn: &mut Conn<S>, sess: &Session) -> wire::Result<bool> {
    match sql::replsrc::check_replication_slave(sess) {
        Ok(()) => Ok(false),
        Err(e) => {
            conn.send_err(e.code, e.state, &e.msg)?;
            Ok(true)
        }
    }
}

/// COM_REGISTER_SLAVE: remembers the replica for SHOW SLAVE HOSTS (until
/// its connection ends); OK.
pub fn register<S: Read + Write>(
    conn: &mut Conn<S>,
    sess: &mut Session,
    r: wire::RegisterSlave,
) -> wire::Result<()> {
    sess.count_com("register_slave");
    if denied(conn, sess)? {
        return Ok(());
    }
    if let Some(b) = &sess.inst.binlog {
        b.register_replica(
            sess.conn_id,
            binlog::dump::Replica {
                server_id: r.server_id,
                host: r.host,
                port: r.port,
                // 0: this server (as MariaDB fills it in).
                master_id: match r.master_id {
                    0 => b.server_id(),
                    id => id,
                },
            },
        );
    }
    conn.send_ok(&OkPacket::default())
}

/// Sends the stream as packets on the connection.
struct Stream<'a, S: Read + Write> {
    conn: &'a mut Conn<S>,
    sess: &'a Session,
    shared: &'a Shared,
    payload: Vec<u8>,
    /// A write to the replica failed: it is gone.
    gone: bool,
}

impl<S: Read + Write> binlog::dump::Target for Stream<'_, S> {
    fn event(&mut self, ev: &[u8]) -> std::io::Result<()> {
        self.payload.clear();
        self.payload.push(0);
        self.payload.extend_from_slice(ev);
        let r = self.conn.send_packet(&self.payload);
        self.wire(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.conn.flush();
        self.wire(r)
    }

    fn stopped(&self) -> bool {
        self.gone
            || self.sess.proc.connection_killed()
            // A replica sends nothing during a dump: anything it sends
            // (COM_QUIT, a TLS close_notify) or its end of stream is it
            // leaving.
            || self.sess.proc.client_spoke()
            || self.shared.stopping.load(Ordering::Relaxed)
    }

    fn closer(&self) -> Option<binlog::dump::Closer> {
        // As KILL CONNECTION: the socket is shut down, a blocked write fails.
        let proc = self.sess.proc.clone();
        Some(std::sync::Arc::new(move || proc.kill(true)))
    }
}

impl<S: Read + Write> Stream<'_, S> {
    fn wire(&mut self, r: wire::Result<()>) -> std::io::Result<()> {
        r.map_err(|e| {
            self.gone = true;
            std::io::Error::other(e.to_string())
        })
    }
}

/// COM_BINLOG_DUMP. `Ok(true)`: the connection ends (the replica is gone
/// or the dump was stopped).
pub fn dump<S: Read + Write>(
    conn: &mut Conn<S>,
    sess: &mut Session,
    shared: &Shared,
    d: wire::BinlogDump,
) -> wire::Result<bool> {
    sess.count_com("binlog_dump");
    if denied(conn, sess)? {
        return Ok(false);
    }
    let Some(b) = sess.inst.binlog.clone() else {
        conn.send_err(ER_MASTER_FATAL, "HY000", "Binary log is not open")?;
        return Ok(false);
    };
    let set = sql::replsrc::dump_settings(sess);
    let Some(checksum) = set.checksum else {
        // As MariaDB: a replica that did not say it knows checksums.
        conn.send_err(
            ER_MASTER_FATAL,
            "HY000",
            "Slave can not handle replication events with the checksum that master is \
             configured to log",
        )?;
        return Ok(false);
    };
    let start = match &set.connect_state {
        Some(st) => match binlog::dump::parse_gtid_list(st) {
            Some(g) => binlog::dump::Start::Gtid(g),
            None => {
                conn.send_err(ER_MASTER_FATAL, "HY000", "Could not parse GTID list")?;
                return Ok(false);
            }
        },
        None => binlog::dump::Start::File {
            name: d.file.clone(),
            pos: d.pos.into(),
        },
    };
    let opts = binlog::dump::Options {
        checksum,
        heartbeat: set.heartbeat,
        non_block: d.flags & wire::BINLOG_DUMP_NON_BLOCK != 0,
        gtid_strict: set.gtid_strict,
    };
    sql::replsrc::mark_dump(sess, true);
    let mut st = Stream {
        conn,
        sess,
        shared,
        payload: Vec::new(),
        gone: false,
    };
    let r = b.dump(d.server_id, &start, opts, &mut st);
    let gone = st.gone;
    sql::replsrc::mark_dump(sess, false);
    if gone {
        return Ok(true);
    }
    match r {
        Ok(binlog::dump::End::EndOfLog) => {
            conn.send_eof(0, 0)?;
            Ok(false)
        }
        Ok(binlog::dump::End::Stopped) => Ok(true),
        Err(binlog::Error::Dump(m)) => {
            conn.send_err(ER_MASTER_FATAL, "HY000", &m)?;
            Ok(false)
        }
        Err(e) => {
            conn.send_err(ER_MASTER_FATAL, "HY000", &e.to_string())?;
            Ok(false)
        }
    }
}
