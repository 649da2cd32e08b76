//! SET: session and global system variables (with MySQL's aliases,
//! ON/OFF/DEFAULT spellings and scope rules), user variables, SET NAMES,
//! SET TRANSACTION and SET time_zone.
use crate::ddl;
use crate::error::{Result, SqlError};
use crate::result::Outcome;
use crate::session::Session;
use crate::vars;
use rel::value::Value;
use sqlparser::ast;

fn text(s: impl AsRef<str>) -> Value {
    Value::Bytes(s.as_ref().as_bytes().to_vec())
}

fn ok() -> Result<Outcome> {
    Ok(Outcome::default())
}

fn name_parts(n: &ast::ObjectName) -> Vec<String> {
    crate::admin::name_parts(n)
}

pub fn set_stmt(s: &mut Session, set: &ast::Set) -> Result<Outcome> {
    match set {
        ast::Set::SingleAssignment {
            scope,
            variable,
            values,
            ..
        } => {
            let v = values
                .first()
                .ok_or_else(|| SqlError::parse("SET without a value"))?;
            assign(s, scope.as_ref(), variable, v)?;
            ok()
        }
        ast::Set::MultipleAssignments { assignments } => {
            for a in assignments {
                assign(s, a.scope.as_ref(), &a.name, &a.value)?;
            }
            ok()
        }
        ast::Set::SetTransaction {
            modes, snapshot, ..
        } => set_transaction(s, modes, snapshot.is_some(), None),
        ast::Set::SetNames { charset_name, .. } => {
            for v in [
                "character_set_client",
                "character_set_connection",
                "character_set_results",
            ] {
                s.set_var(v.into(), text(&charset_name.value));
            }
            ok()
        }
        ast::Set::SetNamesDefault {} => ok(),
        ast::Set::SetTimeZone { value, .. } => {
            let v = vars::normalize("time_zone", ddl::const_eval(value)?)?;
            s.set_var("time_zone".into(), v);
            ok()
        }
        other => Err(SqlError::unsupported(format!("{other}"))),
    }
}

fn assign(
    s: &mut Session,
    scope: Option<&ast::ContextModifier>,
    var: &ast::ObjectName,
    e: &ast::Expr,
) -> Result<()> {
    let parts = name_parts(var);
    let mut global = matches!(scope, Some(ast::ContextModifier::Global));
    let raw = parts.join(".");
    // @user_var
    if let Some(u) = raw.strip_prefix('@').filter(|r| !r.starts_with('@')) {
        let v = eval_expr(s, e)?;
        s.user_vars.insert(u.to_ascii_lowercase(), v);
        return Ok(());
    }
    let mut name = raw.trim_start_matches("@@").to_string();
    for (p, g) in [("global.", true), ("session.", false), ("local.", false)] {
        if name.len() > p.len()
            && name
                .get(..p.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(p))
        {
            name = name[p.len()..].to_string();
            global = g;
        }
    }
    let name = vars::canonical(&name);
    if s.inst.global_var(&name).is_none() {
        return Err(SqlError::new(
            1193,
            "HY000",
            format!("Unknown system variable '{name}'"),
        ));
    }
    let v = match e {
        ast::Expr::Identifier(id) if id.quote_style.is_none() => {
            let up = id.value.to_ascii_uppercase();
            match up.as_str() {
                "DEFAULT" => s.inst.global_var(&name).unwrap_or(Value::Null),
                "ON" => Value::Int(1),
                "OFF" => Value::Int(0),
                _ => text(&id.value),
            }
        }
        other => eval_expr(s, other)?,
    };
    let v = vars::normalize(&name, v)?;
    if name == "transaction_isolation" && v.text().eq_ignore_ascii_case(b"READ-UNCOMMITTED") {
        warn_read_uncommitted(s);
    }
    if name == "autocommit" && !global {
        let on = v.to_i128() == Some(1);
        return s.set_autocommit(on);
    }
    if global {
        s.inst.set_global(&name, v);
    } else {
        if vars::global_only(&name) {
            return Err(SqlError::new(
                1229,
                "HY000",
                format!("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"),
            ));
        }
        s.set_var(name, v);
    }
    Ok(())
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
    let (iso, ro) = crate::admin::transaction_modes(modes)?;
    if scope.is_none() && s.in_transaction() {
        return Err(SqlError::new(
            1568,
            "25001",
            "Transaction characteristics can't be changed while a transaction is in progress",
        ));
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

fn warn_read_uncommitted(s: &mut Session) {
    s.warn(
        "Warning",
        1235,
        "READ UNCOMMITTED runs as READ COMMITTED in Strata (no dirty reads)",
    );
}

fn eval_expr(s: &Session, e: &ast::Expr) -> Result<Value> {
    let mut b = crate::bind::Binder::new(&s.stmt_params.0);
    let x = b.expr(e, &crate::bind::Scope::default())?;
    let env = crate::session::StmtEnv::new(s, &s.stmt_params.1);
    x.eval(&[], &env)
}
