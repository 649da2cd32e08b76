//! What a source's QUERY event is, for the applier: the statement text is
//! parsed with the SQL layer's own parser (`crate::parse`), never matched
//! by pattern. Transaction control (BEGIN, COMMIT, ROLLBACK and, inside a
//! transaction, SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT, which MariaDB
//! logs as statements in ROW format) acts on the applier's transaction;
//! DDL (tables, indexes, databases, views, TRUNCATE) and account
//! statements (MariaDB logs them as statements whatever binlog_format is)
//! run through a session; a few statements that change no data or
//! definition (ANALYZE, OPTIMIZE, FLUSH, ALTER TABLE ... DISABLE KEYS) run
//! too. Everything else is refused: above all statement-format DML (a
//! source with binlog_format=MIXED or STATEMENT logs INSERT/UPDATE/DELETE
//! as text), which the applier cannot run atomically with its position nor
//! with the source's timestamp, sql_mode and charset.
use crate::stmt::{DdlStmt, MaintStmt, Stmt, TxnStmt};

/// How the applier treats one QUERY event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Query {
    Begin,
    Commit,
    Rollback,
    Savepoint(String),
    RollbackTo(String),
    Release(String),
    /// DDL or another statement the applier runs through a session.
    Run,
    /// Only comments: nothing to do.
    Nothing,
    /// Refused: why (the text of a 1235).
    Refused(String),
}

/// The advice every refused DML statement carries.
const SET_ROW: &str = "set binlog_format=ROW on the source";

/// What the QUERY event text `sql` is.
pub(crate) fn classify(sql: &str) -> Query {
    // The events MariaDB writes by the million: no parser needed.
    match sql.trim() {
        "BEGIN" => return Query::Begin,
        "COMMIT" => return Query::Commit,
        "ROLLBACK" => return Query::Rollback,
        _ => {}
    }
    let stmt = match crate::parse::parse(sql) {
        Ok(p) => p.stmt,
        Err(e) => {
            return Query::Refused(format!(
                "replicating the statement '{}' (Strata cannot parse it: {})",
                first_words(sql),
                e.msg
            ))
        }
    };
    let kind = || {
        crate::com::of(&stmt)
            .and_then(|i| crate::com::NAMES.get(i).copied())
            .unwrap_or("statement")
            .replace('_', " ")
            .to_uppercase()
    };
    match &stmt {
        Stmt::Txn(t) => match t {
            TxnStmt::Start { .. } => Query::Begin,
            TxnStmt::Commit { chain: false } => Query::Commit,
            TxnStmt::Rollback { chain: false } => Query::Rollback,
            TxnStmt::Savepoint(n) => Query::Savepoint(n.clone()),
            TxnStmt::RollbackTo(n) => Query::RollbackTo(n.clone()),
            TxnStmt::Release(n) => Query::Release(n.clone()),
            _ => refused_kind(&kind()),
        },
        Stmt::Ddl(DdlStmt::CreateTable(c)) if c.temporary => {
            dml("CREATE TEMPORARY TABLE (logged only in statement format)")
        }
        Stmt::Ddl(DdlStmt::CreateTable(c)) if c.query.is_some() => {
            dml("CREATE TABLE ... SELECT as a statement")
        }
        Stmt::Ddl(_) | Stmt::Account(_) => Query::Run,
        Stmt::Maint(
            MaintStmt::Analyze(_)
            | MaintStmt::Optimize(_)
            | MaintStmt::Repair(_)
            | MaintStmt::Flush(_)
            | MaintStmt::Keys { .. },
        ) => Query::Run,
        Stmt::Rows(_) | Stmt::Load(_) => dml(&kind()),
        Stmt::Empty | Stmt::CommentOnly => Query::Nothing,
        _ => refused_kind(&kind()),
    }
}

/// A CREATE TABLE with its own column list (no SELECT, LIKE or
/// TEMPORARY): what MariaDB logs for CREATE [OR REPLACE] TABLE ... SELECT
/// in ROW format, first in the group of the rows it selected.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Creates {
    /// The table's name as written (quoted as written, maybe qualified).
    pub(crate) name: String,
    pub(crate) or_replace: bool,
}

/// The table the QUERY event text `sql` creates, if it is a plain CREATE
/// TABLE (`Creates`).
pub(crate) fn creates_table(sql: &str) -> Option<Creates> {
    match crate::parse::parse(sql).ok()?.stmt {
        Stmt::Ddl(DdlStmt::CreateTable(c))
            if !c.temporary && c.query.is_none() && c.like.is_none() && c.clone.is_none() =>
        {
            Some(Creates {
                name: c.name.to_string(),
                or_replace: c.or_replace,
            })
        }
        _ => None,
    }
}

/// For `DROP TABLE a, b` without IF EXISTS, the names (`db.t`, comma
/// separated) of those that are not tables in `st` (`db`: the event's
/// default database); None when every one is (or the text is something
/// else). A DROP TABLE that would fail partway (1051, 1965) would have
/// dropped the others with the position: the applier refuses it first.
pub(crate) fn drop_missing(sql: &str, db: &str, st: &rel::catalog::CatalogState) -> Option<String> {
    let Stmt::Ddl(DdlStmt::DropTables {
        names,
        if_exists: false,
        temporary: false,
    }) = crate::parse::parse(sql).ok()?.stmt
    else {
        return None;
    };
    let missing: Vec<String> = names
        .iter()
        .filter_map(|n| {
            let (d, t) = match crate::stmt::name_parts(n).as_slice() {
                [t] => (db.to_string(), t.clone()),
                [d, t] => (d.clone(), t.clone()),
                _ => return None,
            };
            st.table(&d, &t).is_none().then(|| format!("{d}.{t}"))
        })
        .collect();
    (!missing.is_empty()).then(|| missing.join(","))
}

/// `CREATE OR REPLACE TABLE ...` as `CREATE TABLE ...` (the words as the
/// text starts, separated by white space only; None otherwise): the
/// applier drops the table first and runs the rest.
pub(crate) fn without_or_replace(sql: &[u8]) -> Option<Vec<u8>> {
    let mut rest = sql;
    for w in ["CREATE", "OR", "REPLACE"] {
        rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace())?..];
        let end = rest.iter().position(|b| b.is_ascii_whitespace())?;
        if !rest[..end].eq_ignore_ascii_case(w.as_bytes()) {
            return None;
        }
        rest = &rest[end..];
    }
    Some([b"CREATE".as_slice(), rest].concat())
}

/// Statement-format DML: refused with the advice.
fn dml(kind: &str) -> Query {
    Query::Refused(format!(
        "applying statement-format {kind} events (Strata applies row events only: {SET_ROW})"
    ))
}

fn refused_kind(kind: &str) -> Query {
    Query::Refused(format!("replicating {kind} statements"))
}

/// The statement's first two words, upper-cased, for a message.
fn first_words(sql: &str) -> String {
    sql.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sql: &str) -> String {
        match classify(sql) {
            Query::Refused(m) => m,
            q => panic!("{sql}: {q:?}"),
        }
    }

    #[test]
    fn transaction_control_and_savepoints() {
        assert_eq!(classify("BEGIN"), Query::Begin);
        assert_eq!(classify("COMMIT"), Query::Commit);
        assert_eq!(classify("ROLLBACK"), Query::Rollback);
        assert_eq!(classify("commit /* c */"), Query::Commit);
        assert_eq!(classify("SAVEPOINT `a`"), Query::Savepoint("a".into()));
        assert_eq!(classify("ROLLBACK TO `a`"), Query::RollbackTo("a".into()));
        assert_eq!(
            classify("rollback work to savepoint `x``y`"),
            Query::RollbackTo("x`y".into())
        );
        assert_eq!(classify("RELEASE SAVEPOINT b"), Query::Release("b".into()));
    }

    #[test]
    fn ddl_runs() {
        for sql in [
            "CREATE TABLE t (a int(11) NOT NULL, PRIMARY KEY (a)) ENGINE=InnoDB",
            "create table t2 like t",
            "ALTER TABLE t ADD COLUMN b int",
            "DROP TABLE IF EXISTS `t` /* generated by server */",
            "RENAME TABLE a TO b",
            "TRUNCATE TABLE t",
            "CREATE DATABASE d",
            "DROP DATABASE d",
            "CREATE INDEX i ON t (a)",
            "DROP INDEX i ON t",
            "CREATE OR REPLACE VIEW v AS SELECT 1",
            "CREATE USER 'u'@'%' IDENTIFIED BY 'p'",
            "GRANT SELECT ON *.* TO 'u'@'%'",
            "ANALYZE TABLE t",
            "REPAIR TABLE s",
            "REPAIR NO_WRITE_TO_BINLOG TABLE s, t QUICK",
        ] {
            assert_eq!(classify(sql), Query::Run, "{sql}");
        }
        assert_eq!(classify("/* nothing */"), Query::Nothing);
    }

    #[test]
    fn create_table_forms() {
        let c = |sql: &str| creates_table(sql).map(|c| (c.name, c.or_replace));
        assert_eq!(
            c("CREATE TABLE `c` (\n  `a` int(11) NOT NULL\n)"),
            Some(("`c`".into(), false))
        );
        assert_eq!(
            c("CREATE OR REPLACE TABLE d.`c` (a int)"),
            Some(("d.`c`".into(), true))
        );
        for sql in [
            "CREATE TABLE c SELECT 1",
            "CREATE TABLE c LIKE t",
            "CREATE TEMPORARY TABLE c (a int)",
            "ALTER TABLE c ADD b int",
        ] {
            assert_eq!(c(sql), None, "{sql}");
        }
        assert_eq!(
            without_or_replace(b" create  or\nreplace TABLE `c` (a int)").as_deref(),
            Some(b"CREATE TABLE `c` (a int)".as_slice())
        );
        assert_eq!(
            without_or_replace(b"CREATE /**/ OR REPLACE TABLE c (a int)"),
            None
        );
        assert_eq!(without_or_replace(b"CREATE TABLE c (a int)"), None);
    }

    #[test]
    fn statement_dml_is_refused_with_advice() {
        for (sql, kind) in [
            ("INSERT INTO t VALUES (1)", "INSERT"),
            ("insert into t select * from u", "INSERT SELECT"),
            ("REPLACE INTO t VALUES (1)", "REPLACE"),
            ("UPDATE t SET a = a + 1", "UPDATE"),
            ("UPDATE t, u SET t.a = u.a WHERE t.a = u.a", "UPDATE MULTI"),
            ("DELETE FROM t WHERE a = 1", "DELETE"),
            ("LOAD DATA INFILE '/tmp/x' INTO TABLE t", "LOAD"),
            ("CREATE TABLE t2 SELECT * FROM t", "CREATE TABLE ... SELECT"),
            (
                "CREATE TEMPORARY TABLE tt (a int)",
                "CREATE TEMPORARY TABLE",
            ),
        ] {
            let m = refused(sql);
            assert!(m.contains(kind), "{sql}: {m}");
            assert!(m.contains("binlog_format=ROW"), "{sql}: {m}");
        }
        // Not DML, still refused: what the applier cannot honour.
        assert!(refused("SET GLOBAL max_connections = 10").contains("SET OPTION"));
        assert!(
            refused("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1")
                .contains("CREATE TRIGGER")
        );
        assert!(refused("XA START 'x'").contains("XA START"));
    }
}
