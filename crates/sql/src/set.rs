//! Session state statements: SET of session and global system variables
//! (with MySQL's aliases, ON/OFF/DEFAULT spellings and scope rules), user
//! variables, SET NAMES, SET time_zone, and USE. (SET TRANSACTION is
//! transaction control: `txnctl`.)
use crate::error::{Result, SqlError};
use crate::result::{ok, text, Outcome};
use crate::session::Session;
use crate::stmt::{name_parts, SetStmt};
use crate::vars;
use rel::value::Value;
use sqlparser::ast;

/// Runs SET / SET NAMES / USE.
pub fn run(s: &mut Session, stmt: &SetStmt) -> Result<Outcome> {
    match stmt {
        SetStmt::Names { charset, collate } => set_names(s, charset, collate.as_deref()),
        SetStmt::CharacterSet(cs) => set_character_set(s, cs),
        SetStmt::Vars(set) => set_stmt(s, set),
        SetStmt::Use(name) => {
            if crate::infoschema::is_schema(name) {
                s.db = Some(crate::infoschema::DB.to_string());
                return ok();
            }
            if !s.inst.catalog.state().databases.contains_key(name) {
                return Err(SqlError::bad_db(name));
            }
            s.db = Some(name.clone());
            ok()
        }
    }
}

/// SET NAMES: the client, connection and results character sets, and the
/// connection collation (the character set's default unless COLLATE names
/// one); unknown or unsupported names fail as in a COLLATE clause.
fn set_names(s: &mut Session, cs: &str, collate: Option<&str>) -> Result<Outcome> {
    let cs = if cs == "default" { "utf8mb4" } else { cs };
    let c = crate::collate::resolve(Some(cs), collate, rel::collation::Collation::DEFAULT)?;
    for v in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        s.set_var(v.into(), text(c.charset()));
    }
    s.set_var("collation_connection".into(), text(c.name()));
    ok()
}

/// SET CHARACTER SET: the client and results character sets; the
/// connection's become the current database's (MySQL's rule).
fn set_character_set(s: &mut Session, cs: &str) -> Result<Outcome> {
    let cs = if cs == "default" { "utf8mb4" } else { cs };
    let c = crate::collate::resolve(Some(cs), None, rel::collation::Collation::DEFAULT)?;
    for v in ["character_set_client", "character_set_results"] {
        s.set_var(v.into(), text(c.charset()));
    }
    let db = s
        .get_var("collation_database", false)
        .and_then(|v| rel::collation::Collation::from_name(&String::from_utf8_lossy(&v.text())))
        .unwrap_or(rel::collation::Collation::DEFAULT);
    s.set_var("character_set_connection".into(), text(db.charset()));
    s.set_var("collation_connection".into(), text(db.name()));
    ok()
}

/// A change of `collation_connection` changes `character_set_connection` to
/// its character set, and one of `character_set_connection` the collation to
/// the set's default (as in MySQL); `name` was set to `v` already.
fn follow_connection(name: &str, v: &Value) -> Option<(&'static str, Value)> {
    let v = String::from_utf8_lossy(&v.text()).into_owned();
    match name {
        "collation_connection" => {
            let c = rel::collation::Collation::from_name(&v)?;
            Some(("character_set_connection", text(c.charset())))
        }
        "character_set_connection" => {
            let c = rel::collation::Collation::default_of_charset(&v)?;
            Some(("collation_connection", text(c.name())))
        }
        _ => None,
    }
}

fn set_stmt(s: &mut Session, set: &ast::Set) -> Result<Outcome> {
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
        ast::Set::SetNames {
            charset_name,
            collation_name,
        } => set_names(
            s,
            &charset_name.value.to_ascii_lowercase(),
            collation_name.as_deref(),
        ),
        ast::Set::SetNamesDefault {} => set_names(s, "default", None),
        ast::Set::SetTimeZone { value, .. } => {
            let v = vars::normalize("time_zone", eval_expr(s, value)?)?;
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
        return Err(SqlError::unknown_variable(name));
    }
    if vars::read_only(&name) && name != "gtid_slave_pos" {
        return Err(SqlError::read_only_variable(name));
    }
    let v = match e {
        ast::Expr::Identifier(id) if id.quote_style.is_none() && !id.value.starts_with('@') => {
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
    if let Some(r) = crate::replica::assign_global(s, &name, global, &v) {
        return r;
    }
    if name == "strata_bulk_load" && v.to_i128() == Some(1) {
        crate::binlogsql::refuse_unlogged(s, "strata_bulk_load=1")?;
    }
    // MariaDB: the log's session switch cannot change mid-transaction.
    if name == "sql_log_bin" && s.explicit() {
        return Err(SqlError::sql_log_bin_in_txn());
    }
    if name == "transaction_isolation" && v.text().eq_ignore_ascii_case(b"READ-UNCOMMITTED") {
        crate::txnctl::warn_read_uncommitted(s);
    }
    if name == "autocommit" && !global {
        let on = v.to_i128() == Some(1);
        return s.set_autocommit(on);
    }
    let follow = follow_connection(&name, &v);
    if global {
        s.inst.set_global(&name, v);
        if let Some((n, v)) = follow {
            s.inst.set_global(n, v);
        }
    } else {
        if vars::global_only(&name) {
            return Err(SqlError::global_variable(name));
        }
        s.set_var(name, v);
        if let Some((n, v)) = follow {
            s.set_var(n.into(), v);
        }
    }
    Ok(())
}

/// Evaluates a SET value (or a PREPARE text, an EXECUTE argument): no columns,
/// `?` from `stmt_params`; `@v := ...` inside it assigns as it goes.
pub(crate) fn eval_expr(s: &mut Session, e: &ast::Expr) -> Result<Value> {
    let _literals = crate::collate::literals(s.conn_collation());
    let mut b = crate::bind::Binder::new(&s.stmt_params.0);
    let x = crate::collate::annotate(
        b.expr(e, &crate::bind::Scope::default())?,
        crate::collate::Ctx::new(&[]),
    )?;
    let (v, assigned) = {
        let env = crate::env::StmtEnv::new(s, &s.stmt_params.1);
        let v = x.eval(&[], &env);
        (v, env.assign.into_inner())
    };
    s.user_vars.extend(assigned);
    v
}
