//! Command phase decoding: turns one command packet into a [`Command`]
//! (COM_QUERY, COM_STMT_*, COM_PING, COM_CHANGE_USER, ...).

use crate::codec::{lossy, Reader};
use crate::consts::{cap, com};
use crate::error::{malformed, Result};
use crate::handshake::parse_attrs;
use crate::params::ExecutePacket;

/// One client command. Commands marked "no reply" must not be answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// COM_QUERY: the SQL text (bytes as sent, usually UTF-8).
    Query(Vec<u8>),
    /// COM_INIT_DB (`USE db`): reply OK or ERR.
    InitDb(Vec<u8>),
    /// COM_PING: reply OK.
    Ping,
    /// COM_QUIT: no reply; close the connection.
    Quit,
    /// COM_FIELD_LIST: reply with `send_field_list` (or ERR).
    FieldList { table: Vec<u8>, wildcard: Vec<u8> },
    /// COM_STMT_PREPARE: reply with `send_prepare_ok` (or ERR).
    StmtPrepare(Vec<u8>),
    /// COM_STMT_EXECUTE: reply OK, a binary result set, or ERR.
    StmtExecute(ExecutePacket),
    /// COM_STMT_CLOSE: no reply.
    StmtClose(u32),
    /// COM_STMT_RESET: discard long data; reply OK.
    StmtReset(u32),
    /// COM_STMT_SEND_LONG_DATA: append `data` to parameter `param`; no reply.
    StmtSendLongData {
        stmt_id: u32,
        param: u16,
        data: Vec<u8>,
    },
    /// COM_STMT_FETCH (cursors): reply ERR unless cursors are supported.
    StmtFetch { stmt_id: u32, rows: u32 },
    /// COM_STATISTICS: reply with a raw string packet (`send_packet`).
    Statistics,
    /// COM_RESET_CONNECTION: reset session state; reply OK.
    ResetConnection,
    /// COM_SET_OPTION: 0 = multi-statements on, 1 = off; reply EOF (`send_eof`).
    SetOption(u16),
    /// COM_DEBUG: reply EOF (`send_eof`) or OK.
    Debug,
    /// COM_PROCESS_KILL: reply OK or ERR.
    ProcessKill(u32),
    /// COM_CHANGE_USER: answer with `Conn::change_user`.
    ChangeUser(ChangeUser),
    /// COM_REGISTER_SLAVE: a replica announces itself; reply OK or ERR.
    RegisterSlave(RegisterSlave),
    /// COM_BINLOG_DUMP: stream the binary log from a file and position
    /// (replies: event packets, then ERR, or EOF with BINLOG_DUMP_NON_BLOCK).
    BinlogDump(BinlogDump),
    /// COM_BINLOG_DUMP_GTID (MySQL's GTID flavour; MariaDB replicas use
    /// COM_BINLOG_DUMP with `@slave_connect_state`).
    BinlogDumpGtid,
    /// Anything else (reply ERR 1047 ER_UNKNOWN_COM_ERROR).
    Unknown(u8),
}

/// A parsed COM_REGISTER_SLAVE packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterSlave {
    pub server_id: u32,
    /// The replica's `report_host` ("" when not set).
    pub host: String,
    pub user: String,
    pub password: String,
    pub port: u16,
    /// The server id of the replica's primary as the replica sees it.
    pub master_id: u32,
}

/// A parsed COM_BINLOG_DUMP packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogDump {
    pub pos: u32,
    /// BINLOG_DUMP_NON_BLOCK (1): end with EOF at the end of the log
    /// instead of waiting for new events.
    pub flags: u16,
    pub server_id: u32,
    /// The file to start in ("" for the first one, or with a GTID start).
    pub file: String,
}

/// COM_BINLOG_DUMP flag: end the stream at the end of the log.
pub const BINLOG_DUMP_NON_BLOCK: u16 = 1;

/// A parsed COM_CHANGE_USER packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser {
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub charset: Option<u16>,
    pub auth_plugin: Option<String>,
    pub attrs: Vec<(String, String)>,
}

/// Decodes a command packet; `caps` are the negotiated capabilities.
pub fn decode_command(mut payload: Vec<u8>, caps: u32) -> Result<Command> {
    let Some(&code) = payload.first() else {
        return Err(malformed("empty command packet"));
    };
    let body = |mut p: Vec<u8>| {
        p.remove(0);
        p
    };
    Ok(match code {
        com::QUERY => Command::Query(body(payload)),
        com::INIT_DB => Command::InitDb(body(payload)),
        com::STMT_PREPARE => Command::StmtPrepare(body(payload)),
        com::PING => Command::Ping,
        com::QUIT => Command::Quit,
        com::STATISTICS => Command::Statistics,
        com::DEBUG => Command::Debug,
        com::RESET_CONNECTION => Command::ResetConnection,
        com::STMT_EXECUTE => Command::StmtExecute(ExecutePacket::parse(&payload[1..])?),
        com::STMT_CLOSE => Command::StmtClose(Reader::new(&payload[1..]).u32()?),
        com::STMT_RESET => Command::StmtReset(Reader::new(&payload[1..]).u32()?),
        com::PROCESS_KILL => Command::ProcessKill(Reader::new(&payload[1..]).u32()?),
        com::SET_OPTION => Command::SetOption(Reader::new(&payload[1..]).u16()?),
        com::STMT_FETCH => {
            let mut r = Reader::new(&payload[1..]);
            Command::StmtFetch {
                stmt_id: r.u32()?,
                rows: r.u32()?,
            }
        }
        com::STMT_SEND_LONG_DATA => {
            let mut r = Reader::new(&payload[1..]);
            let stmt_id = r.u32()?;
            let param = r.u16()?;
            // Reuse the packet's allocation for the data (7 = code + id + param).
            payload.drain(..7);
            Command::StmtSendLongData {
                stmt_id,
                param,
                data: payload,
            }
        }
        com::FIELD_LIST => {
            let mut r = Reader::new(&payload[1..]);
            let table = r.nul_or_eof_bytes().to_vec();
            let wildcard = r.take_rest().to_vec();
            Command::FieldList { table, wildcard }
        }
        com::CHANGE_USER => Command::ChangeUser(parse_change_user(&payload[1..], caps)?),
        com::REGISTER_SLAVE => Command::RegisterSlave(parse_register_slave(&payload[1..])?),
        com::BINLOG_DUMP => {
            let mut r = Reader::new(&payload[1..]);
            Command::BinlogDump(BinlogDump {
                pos: r.u32()?,
                flags: r.u16()?,
                server_id: r.u32()?,
                file: lossy(r.take_rest()),
            })
        }
        com::BINLOG_DUMP_GTID => Command::BinlogDumpGtid,
        other => Command::Unknown(other),
    })
}

fn parse_register_slave(b: &[u8]) -> Result<RegisterSlave> {
    let mut r = Reader::new(b);
    let server_id = r.u32()?;
    let mut text = || -> Result<String> {
        let n = r.u8()?;
        Ok(lossy(r.take(usize::from(n))?))
    };
    let (host, user, password) = (text()?, text()?, text()?);
    let port = r.u16()?;
    r.u32()?; // replication rank (unused)
    let master_id = r.u32()?;
    Ok(RegisterSlave {
        server_id,
        host,
        user,
        password,
        port,
        master_id,
    })
}

fn parse_change_user(b: &[u8], caps: u32) -> Result<ChangeUser> {
    let mut r = Reader::new(b);
    let user = lossy(r.nul_bytes()?);
    let auth_response = if caps & cap::CLIENT_SECURE_CONNECTION != 0 {
        let n = r.u8()?;
        r.take(usize::from(n))?.to_vec()
    } else {
        r.nul_bytes()?.to_vec()
    };
    let db = r.nul_or_eof_bytes();
    let database = if db.is_empty() { None } else { Some(lossy(db)) };
    let mut cu = ChangeUser {
        user,
        auth_response,
        database,
        charset: None,
        auth_plugin: None,
        attrs: Vec::new(),
    };
    if r.remaining() >= 2 {
        cu.charset = Some(r.u16()?);
    }
    if caps & cap::CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
        cu.auth_plugin = Some(lossy(r.nul_or_eof_bytes()));
    }
    if caps & cap::CLIENT_CONNECT_ATTRS != 0 && !r.is_empty() {
        cu.attrs = parse_attrs(&mut r)?;
    }
    Ok(cu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_commands_decode() {
        // COM_REGISTER_SLAVE as a MariaDB 10.11 replica sends it.
        let mut p = vec![com::REGISTER_SLAVE];
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(&[4, b'h', b'o', b's', b't', 1, b'u', 0]);
        p.extend_from_slice(&3306u16.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&1u32.to_le_bytes());
        let c = decode_command(p.clone(), 0).expect("decodes");
        assert_eq!(
            c,
            Command::RegisterSlave(RegisterSlave {
                server_id: 7,
                host: "host".into(),
                user: "u".into(),
                password: String::new(),
                port: 3306,
                master_id: 1,
            })
        );
        // Torn: an error, never a panic.
        for n in 1..p.len() {
            assert!(decode_command(p[..n].to_vec(), 0).is_err(), "{n}");
        }
        let mut d = vec![com::BINLOG_DUMP];
        d.extend_from_slice(&256u32.to_le_bytes());
        d.extend_from_slice(&BINLOG_DUMP_NON_BLOCK.to_le_bytes());
        d.extend_from_slice(&9u32.to_le_bytes());
        d.extend_from_slice(b"mysql-bin.000002");
        assert_eq!(
            decode_command(d, 0).expect("decodes"),
            Command::BinlogDump(BinlogDump {
                pos: 256,
                flags: 1,
                server_id: 9,
                file: "mysql-bin.000002".into(),
            })
        );
        assert!(decode_command(vec![com::BINLOG_DUMP, 1, 2], 0).is_err());
    }
}
