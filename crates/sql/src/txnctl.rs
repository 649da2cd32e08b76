//! Transaction control: BEGIN / START TRANSACTION (isolation, access
//! mode, WITH CONSISTENT SNAPSHOT), COMMIT / ROLLBACK [AND CHAIN],
//! SAVEPOINT / ROLLBACK TO SAVEPOINT / RELEASE SAVEPOINT, and SET [GLOBAL |
//! SESSION] TRANSACTION.
use crate::error::{Result, SqlError};
use crate::result::{ok, text, Outcome};
use crate::session::Session;
use crate::stmt::TxnStmt;
use rel::value::Value;
use sqlparser::ast;
use txn::Isolation;

/// Runs a transaction-control statement.
pub fn run(s: &mut Session, stmt: &TxnStmt) -> Result<Outcome> {
    match stmt {
        TxnStmt::Start { snapshot, modes } => {
            let (iso, ro) = transaction_modes(modes)?;
            s.start_transaction(*snapshot, iso, ro)?;
            ok()
        }
        TxnStmt::Commit { chain } => {
            let modes = s.chain_modes();
            s.commit()?;
            if *chain {
                s.start_transaction(false, Some(modes.0), Some(modes.1))?;
            }
            ok()
        }
        TxnStmt::Rollback { chain } => {
            let modes = s.chain_modes();
            s.rollback();
            if *chain {
                s.start_transaction(false, Some(modes.0), Some(modes.1))?;
            }
            ok()
        }
        TxnStmt::Savepoint(name) => {
            s.set_savepoint(name);
            ok()
        }
        TxnStmt::RollbackTo(name) => {
            s.rollback_to_savepoint(name)?;
            ok()
        }
        TxnStmt::Release(name) => {
            s.release_savepoint(name)?;
            ok()
        }
        TxnStmt::Characteristics {
            scope,
            modes,
            snapshot,
        } => set_transaction(s, modes, *snapshot, *scope),
    }
}

/// SET [GLOBAL | SESSION] TRANSACTION: `scope` None is the next transaction only,
/// Some(true) the global default, Some(false) the session's.
pub fn set_transaction(
    s: &mut Session,
    modes: &[ast::TransactionMode],
    snapshot: bool,
    scope: Option<bool>,
) -> Result<Outcome> {
    if snapshot {
        return Err(SqlError::unsupported("SET TRANSACTION SNAPSHOT"));
    }
    let (iso, ro) = transaction_modes(modes)?;
    if scope.is_none() && s.in_transaction() {
        return Err(SqlError::in_transaction());
    }
    let read_uncommitted = modes.iter().any(|m| {
        matches!(
            m,
            ast::TransactionMode::IsolationLevel(ast::TransactionIsolationLevel::ReadUncommitted)
        )
    });
    let iso_text = iso.map(|i| match (i, read_uncommitted) {
        (_, true) => "READ-UNCOMMITTED",
        (txn::Isolation::ReadCommitted, _) => "READ-COMMITTED",
        _ => "REPEATABLE-READ",
    });
    match scope {
        None => {
            if iso.is_some() {
                s.next_txn.0 = iso;
            }
            if ro.is_some() {
                s.next_txn.1 = ro;
            }
        }
        Some(global) => {
            let mut set = |name: &str, v: Value| {
                if global {
                    s.inst.set_global(name, v);
                } else {
                    s.set_var(name.into(), v);
                }
            };
            if let Some(t) = iso_text {
                set("transaction_isolation", text(t));
            }
            if let Some(r) = ro {
                set("transaction_read_only", Value::Int(r as i64));
            }
        }
    }
    if read_uncommitted {
        warn_read_uncommitted(s);
    }
    ok()
}

pub(crate) fn warn_read_uncommitted(s: &mut Session) {
    s.warn(
        "Warning",
        SqlError::not_honoured(
            "READ UNCOMMITTED runs as READ COMMITTED in Strata (no dirty reads)",
        ),
    );
}

/// The isolation level and access mode named by START/SET TRANSACTION.
pub fn transaction_modes(
    modes: &[ast::TransactionMode],
) -> Result<(Option<Isolation>, Option<bool>)> {
    let (mut iso, mut ro) = (None, None);
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                iso = Some(match l {
                    ast::TransactionIsolationLevel::ReadCommitted
                    | ast::TransactionIsolationLevel::ReadUncommitted => Isolation::ReadCommitted,
                    ast::TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                    _ => return Err(crate::vars::isolation_unsupported()),
                })
            }
            ast::TransactionMode::AccessMode(a) => {
                ro = Some(matches!(a, ast::TransactionAccessMode::ReadOnly));
            }
        }
    }
    Ok((iso, ro))
}
