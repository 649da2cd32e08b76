//! The replica's global variables with MariaDB's semantics beyond storing
//! a value: `SET GLOBAL gtid_slave_pos = 'd-s-n,...'` replaces the applied
//! GTID position (durably; file/offset stay), and `SET GLOBAL
//! sql_slave_skip_counter = N` makes the next START SLAVE skip N event
//! groups (transactions or standalone statements: what MariaDB skips with
//! GTIDs), recording their positions. Both only while the replica is
//! stopped (1198, as MariaDB). `slave_transaction_retries` is read by the
//! applier (`apply`).
use crate::error::{Result, SqlError};
use crate::Session;
use binlog::event::Gtid;
use rel::value::Value;
use std::collections::BTreeMap;

/// SET [GLOBAL] of one of the replica's variables (None: not one of them).
pub(crate) fn assign(s: &Session, name: &str, global: bool, v: &Value) -> Option<Result<()>> {
    if !matches!(name, "gtid_slave_pos" | "sql_slave_skip_counter") {
        return None;
    }
    if !global {
        return Some(Err(SqlError::global_variable(name)));
    }
    let r = &s.inst.replica;
    if r.running() {
        return Some(Err(SqlError::slave_must_stop()));
    }
    Some(match name {
        "gtid_slave_pos" => parse_gtids(&String::from_utf8_lossy(&v.text())).and_then(|g| {
            let mut p = r.shared.pos().clone();
            p.gtids = g;
            r.store.save_position(&p)?;
            *r.shared.pos() = p;
            Ok(())
        }),
        _ => {
            s.inst.set_global(name, v.clone());
            Ok(())
        }
    })
}

/// A GTID list: `domain-server-seq` items, comma-separated (spaces
/// around items allowed; empty: no position).
pub(crate) fn parse_gtids(text: &str) -> Result<BTreeMap<u32, Gtid>> {
    let bad = SqlError::incorrect_gtid_state;
    let mut out: BTreeMap<u32, Gtid> = BTreeMap::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            if text.trim().is_empty() {
                continue;
            }
            return Err(bad());
        }
        let mut it = item.split('-');
        let mut num = || {
            it.next()
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(bad)
        };
        let (d, s, n) = (num()?, num()?, num()?);
        if it.next().is_some() || d > u32::MAX as u64 || s > u32::MAX as u64 {
            return Err(bad());
        }
        let g = Gtid {
            domain: d as u32,
            server_id: s as u32,
            seq_no: n,
        };
        if let Some(o) = out.insert(g.domain, g) {
            return Err(SqlError::duplicate_gtid_domain(o, g, g.domain));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_lists() {
        let g = parse_gtids(" 0-1-5, 2-9-7").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[&2].seq_no, 7);
        assert!(parse_gtids("").unwrap().is_empty());
        for bad in [
            "0-1",
            "0-1-x",
            "0-1-2-3",
            "0-1-2,",
            "a",
            "0-1-2,,1-1-1",
            "4294967296-1-1",
        ] {
            assert_eq!(parse_gtids(bad).unwrap_err().code, 1941, "{bad}");
        }
        assert_eq!(parse_gtids("0-1-2,0-3-4").unwrap_err().code, 1943);
    }
}
