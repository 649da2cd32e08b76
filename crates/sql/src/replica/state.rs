//! The replica's durable state in the `__replica__` column family (made at
//! the first CHANGE MASTER TO): its configuration (CHANGE MASTER TO, key `cfg`) and the applied position
//! (key `pos`: the source's file and offset after the last applied
//! transaction and @@gtid_slave_pos), which the applier writes in the same
//! transaction as the rows it applies, so after any crash the position and
//! the data agree. Byte layouts: docs/formats/replica.md.
use crate::error::{Result, SqlError};
use binlog::event::{crc32, Gtid};
use lsm::{ColumnFamily, Db};
use std::collections::BTreeMap;

/// The column family.
pub const CF_NAME: &str = "__replica__";
const KEY_CFG: &[u8] = b"cfg";
pub(crate) const KEY_POS: &[u8] = b"pos";
const VERSION: u8 = 1;

/// CHANGE MASTER TO's settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// MASTER_CONNECT_RETRY: the longest wait between reconnections (s).
    pub connect_retry: u32,
    /// MASTER_HEARTBEAT_PERIOD (s; 0: none).
    pub heartbeat: f64,
    /// MASTER_USE_GTID=slave_pos (else file and position).
    pub use_gtid: bool,
    /// Started (START SLAVE) and not stopped: resumed at server start.
    pub running: bool,
}

/// Where the applier is in the source's log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Position {
    pub file: String,
    pub pos: u64,
    /// @@gtid_slave_pos: the last applied GTID of each domain.
    pub gtids: BTreeMap<u32, Gtid>,
}

impl Position {
    /// @@gtid_slave_pos's text: `domain-server-seq`, comma-separated.
    pub fn gtid_text(&self) -> String {
        self.gtids
            .values()
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Reads what `put_str` and the fixed fields wrote; errors on short input.
struct Rd<'a>(&'a [u8]);

impl Rd<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if n > self.0.len() {
            return Err(corrupt());
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Ok(h)
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| corrupt())?))
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().map_err(|_| corrupt())?))
    }
    fn str(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt())
    }
}

fn corrupt() -> SqlError {
    SqlError::engine(format!("{CF_NAME}: corrupt replica state"))
}

/// Version byte + fields + CRC32 of both.
fn seal(mut body: Vec<u8>) -> Vec<u8> {
    body.insert(0, VERSION);
    let c = crc32(&body);
    body.extend_from_slice(&c.to_le_bytes());
    body
}

fn open_sealed(v: &[u8]) -> Result<&[u8]> {
    let n = v.len().checked_sub(4).ok_or_else(corrupt)?;
    let (body, sum) = v.split_at(n);
    if crc32(body).to_le_bytes() != sum || body.first() != Some(&VERSION) {
        return Err(corrupt());
    }
    Ok(&body[1..])
}

pub(crate) fn encode_position(p: &Position) -> Vec<u8> {
    let mut b = Vec::with_capacity(32 + p.file.len() + 16 * p.gtids.len());
    put_str(&mut b, &p.file);
    b.extend_from_slice(&p.pos.to_le_bytes());
    b.extend_from_slice(&(p.gtids.len() as u32).to_le_bytes());
    for g in p.gtids.values() {
        b.extend_from_slice(&g.domain.to_le_bytes());
        b.extend_from_slice(&g.server_id.to_le_bytes());
        b.extend_from_slice(&g.seq_no.to_le_bytes());
    }
    seal(b)
}

pub(crate) fn decode_position(v: &[u8]) -> Result<Position> {
    let mut r = Rd(open_sealed(v)?);
    let file = r.str()?;
    let pos = r.u64()?;
    let n = r.u32()? as usize;
    let mut gtids = BTreeMap::new();
    for _ in 0..n {
        let g = Gtid {
            domain: r.u32()?,
            server_id: r.u32()?,
            seq_no: r.u64()?,
        };
        gtids.insert(g.domain, g);
    }
    Ok(Position { file, pos, gtids })
}

fn encode_config(c: &Config) -> Vec<u8> {
    let mut b = Vec::with_capacity(64);
    put_str(&mut b, &c.host);
    b.extend_from_slice(&(c.port as u32).to_le_bytes());
    put_str(&mut b, &c.user);
    put_str(&mut b, &c.password);
    b.extend_from_slice(&c.connect_retry.to_le_bytes());
    b.extend_from_slice(&c.heartbeat.to_bits().to_le_bytes());
    b.push(c.use_gtid as u8 | (c.running as u8) << 1);
    seal(b)
}

fn decode_config(v: &[u8]) -> Result<Config> {
    let mut r = Rd(open_sealed(v)?);
    let host = r.str()?;
    let port = r.u32()? as u16;
    let user = r.str()?;
    let password = r.str()?;
    let connect_retry = r.u32()?;
    let heartbeat = f64::from_bits(r.u64()?);
    let fl = r.take(1)?[0];
    Ok(Config {
        host,
        port,
        user,
        password,
        connect_retry,
        heartbeat,
        use_gtid: fl & 1 != 0,
        running: fl & 2 != 0,
    })
}

/// The column family and its two keys. The family is made at the first
/// write (CHANGE MASTER TO), not in every datadir: until then the
/// configuration is none and the position the default.
#[derive(Clone)]
pub(crate) struct Store {
    db: Db,
    cf: std::sync::Arc<std::sync::Mutex<Option<ColumnFamily>>>,
}

impl Store {
    pub(crate) fn open(db: &Db) -> Result<Store> {
        Ok(Store {
            db: db.clone(),
            cf: std::sync::Arc::new(std::sync::Mutex::new(db.cf(CF_NAME))),
        })
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<ColumnFamily>> {
        self.cf.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The family, made if missing.
    pub(crate) fn cf(&self) -> Result<ColumnFamily> {
        let mut slot = self.slot();
        if let Some(cf) = *slot {
            return Ok(cf);
        }
        let cf = self.db.ensure_cf(CF_NAME)?;
        *slot = Some(cf);
        Ok(cf)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(cf) = *self.slot() else {
            return Ok(None);
        };
        Ok(self.db.get_cf(&lsm::ReadOptions::default(), cf, key)?)
    }

    pub(crate) fn load_config(&self) -> Result<Option<Config>> {
        match self.get(KEY_CFG)? {
            Some(v) => Ok(Some(decode_config(&v)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn load_position(&self) -> Result<Position> {
        match self.get(KEY_POS)? {
            Some(v) => decode_position(&v),
            None => Ok(Position::default()),
        }
    }

    fn write(&self, key: &[u8], v: Option<Vec<u8>>) -> Result<()> {
        let cf = self.cf()?;
        let mut b = lsm::WriteBatch::new();
        match v {
            Some(v) => b.put_cf(cf.0, key, &v),
            None => b.delete_cf(cf.0, key),
        }
        // WriteOptions' default syncs the WAL.
        self.db.write(lsm::WriteOptions::default(), b)?;
        Ok(())
    }

    pub(crate) fn save_config(&self, c: &Config) -> Result<()> {
        self.write(KEY_CFG, Some(encode_config(c)))
    }

    pub(crate) fn forget_config(&self) -> Result<()> {
        self.write(KEY_CFG, None)
    }

    /// Writes the position outside the applier (CHANGE MASTER, RESET SLAVE).
    pub(crate) fn save_position(&self, p: &Position) -> Result<()> {
        self.write(KEY_POS, Some(encode_position(p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_damage() {
        let mut p = Position {
            file: "mysql-bin.000003".into(),
            pos: 1234,
            gtids: BTreeMap::new(),
        };
        p.gtids.insert(
            0,
            Gtid {
                domain: 0,
                server_id: 1,
                seq_no: 77,
            },
        );
        p.gtids.insert(
            2,
            Gtid {
                domain: 2,
                server_id: 9,
                seq_no: 5,
            },
        );
        let b = encode_position(&p);
        assert_eq!(decode_position(&b).ok(), Some(p.clone()));
        assert_eq!(p.gtid_text(), "0-1-77,2-9-5");
        for i in 0..b.len() {
            let mut x = b.clone();
            x[i] ^= 0x40;
            assert!(decode_position(&x).is_err(), "flip at {i}");
            assert!(decode_position(&b[..i]).is_err(), "cut at {i}");
        }
        let c = Config {
            host: "h".into(),
            port: 3306,
            user: "u".into(),
            password: "p".into(),
            connect_retry: 60,
            heartbeat: 1.5,
            use_gtid: true,
            running: true,
        };
        assert_eq!(decode_config(&encode_config(&c)).ok(), Some(c));
    }
}
