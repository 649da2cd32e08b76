//! SHOW output that describes tables, from the catalog: columns
//! (DESCRIBE), indexes, CREATE TABLE text, table status.
use crate::error::Result;
use crate::result::rows;
use crate::result::{text, Outcome, ResultSink};
use crate::session::Session;
use rel::catalog::{default_sql, Table};
use rel::schema::TableDef;
use rel::value::Value;

/// DESCRIBE / SHOW [FULL] COLUMNS.
pub fn columns(t: &Table, full: bool, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let def = &t.def;
    let mut out = Vec::new();
    for (i, c) in def.columns.iter().enumerate() {
        let key = if !def.hidden_pk && def.pk.columns.first() == Some(&i) {
            "PRI"
        } else if def
            .secondary
            .iter()
            .any(|ix| ix.unique && ix.columns.first() == Some(&i))
        {
            "UNI"
        } else if def
            .secondary
            .iter()
            .any(|ix| ix.columns.first() == Some(&i))
        {
            "MUL"
        } else {
            ""
        };
        let default = if c.default_now {
            text("CURRENT_TIMESTAMP")
        } else {
            match &c.default {
                Some(Value::Null) | None => Value::Null,
                Some(v) => Value::Bytes(v.text()),
            }
        };
        let extra = if c.auto_increment {
            "auto_increment"
        } else if c.on_update_now {
            "on update CURRENT_TIMESTAMP"
        } else {
            ""
        };
        let mut r = vec![text(&c.name), text(c.ty.sql_name())];
        if full {
            r.push(if c.ty.is_text() {
                text(c.ty.coll.name())
            } else {
                Value::Null
            });
        }
        r.extend([
            text(if c.nullable { "YES" } else { "NO" }),
            text(key),
            default,
            text(extra),
        ]);
        if full {
            r.extend([text("select,insert,update,references"), text(&c.comment)]);
        }
        out.push(r);
    }
    if full {
        rows(
            sink,
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ],
            out,
        )
    } else {
        rows(
            sink,
            &["Field", "Type", "Null", "Key", "Default", "Extra"],
            out,
        )
    }
}

/// SHOW INDEX.
pub fn index(t: &Table, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let def = &t.def;
    let mut out = Vec::new();
    for ix in def.indexes() {
        if ix.primary && def.hidden_pk {
            continue;
        }
        for (seq, &c) in ix.columns.iter().enumerate() {
            out.push(vec![
                text(&def.name),
                Value::Int(!ix.unique as i64),
                text(&ix.name),
                Value::Int(seq as i64 + 1),
                text(&def.columns[c].name),
                text("A"),
                Value::Int(t.estimate.cardinality(ix, seq + 1).min(i64::MAX as u64) as i64),
                Value::Null,
                Value::Null,
                text(if def.columns[c].nullable { "YES" } else { "" }),
                text("LSMTREE"),
                text(""),
                text(&ix.comment),
                text("YES"),
                Value::Null,
            ]);
        }
    }
    rows(
        sink,
        &[
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
            "Visible",
            "Expression",
        ],
        out,
    )
}

fn quote(n: &str) -> String {
    format!("`{}`", n.replace('`', "``"))
}

/// SHOW CREATE TABLE text.
pub fn create_table(def: &TableDef) -> String {
    let mut lines = Vec::new();
    for c in &def.columns {
        let mut l = format!("  {} {}", quote(&c.name), c.ty.sql_name());
        // As MariaDB 10.11: the character set and collation when the
        // collation is not the table's.
        if c.ty.is_text() && c.ty.coll != def.collation {
            l.push_str(&format!(
                " CHARACTER SET {} COLLATE {}",
                c.ty.coll.charset(),
                c.ty.coll.name()
            ));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        } else if c.default_now {
            l.push_str(" DEFAULT CURRENT_TIMESTAMP");
        } else if let Some(d) = &c.default {
            l.push_str(&format!(" DEFAULT {}", default_sql(d)));
        } else if c.nullable {
            l.push_str(" DEFAULT NULL");
        }
        if c.on_update_now {
            l.push_str(" ON UPDATE CURRENT_TIMESTAMP");
        }
        if !c.comment.is_empty() {
            l.push_str(&format!(" COMMENT '{}'", c.comment.replace('\'', "''")));
        }
        let own = def.checks.iter().find(|k| {
            k.level == rel::schema::CheckLevel::Column && k.name.eq_ignore_ascii_case(&c.name)
        });
        if let Some(k) = own {
            l.push_str(&format!(" CHECK ({})", k.expr));
        }
        lines.push(l);
    }
    let cols = |ix: &rel::schema::Index| {
        ix.columns
            .iter()
            .map(|&c| quote(&def.columns[c].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    // MariaDB prints an index's COMMENT after its columns.
    let comment = |ix: &rel::schema::Index| {
        if ix.comment.is_empty() {
            String::new()
        } else {
            format!(" COMMENT '{}'", ix.comment.replace('\'', "''"))
        }
    };
    if !def.hidden_pk {
        lines.push(format!(
            "  PRIMARY KEY ({}){}",
            cols(&def.pk),
            comment(&def.pk)
        ));
    }
    for ix in &def.secondary {
        let kind = if ix.unique { "UNIQUE KEY" } else { "KEY" };
        lines.push(format!(
            "  {kind} {} ({}){}",
            quote(&ix.name),
            cols(ix),
            comment(ix)
        ));
    }
    for k in 0..def.foreign_keys.len() {
        lines.push(format!("  {}", rel::fk::describe(def, k, false)));
    }
    for k in def
        .checks
        .iter()
        .filter(|k| k.level == rel::schema::CheckLevel::Table)
    {
        lines.push(format!("  {}", crate::check::describe(k)));
    }
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE={} DEFAULT CHARSET={} COLLATE={}{}",
        quote(&def.name),
        lines.join(",\n"),
        def.engine,
        def.collation.charset(),
        def.collation.name(),
        if def.comment.is_empty() {
            String::new()
        } else {
            format!(" COMMENT='{}'", def.comment.replace('\'', "''"))
        }
    )
}

/// SHOW TABLE STATUS.
pub fn table_status(s: &Session, like: Option<&str>, sink: &mut dyn ResultSink) -> Result<Outcome> {
    let db = s.db.clone().ok_or_else(crate::error::SqlError::no_db)?;
    let st = s.inst.catalog.state();
    let mut out = Vec::new();
    let mut names = st.table_names(&db);
    names.extend(st.view_names(&db));
    names.sort();
    // Only the tables the account holds something on, as SHOW TABLES.
    let vis = crate::account::Visibility::of(s);
    for name in names {
        if like.is_some_and(|p| !crate::vars::like_ci(&name, p)) || !vis.table(&db, &name) {
            continue;
        }
        let Some(t) = st.table(&db, &name) else {
            if st.view(&db, &name).is_some() {
                // A view: MySQL's row of NULLs with the comment VIEW.
                let mut r = vec![Value::Null; 18];
                r[0] = text(&name);
                r[17] = text("VIEW");
                out.push(r);
            }
            continue;
        };
        out.push(vec![
            text(&name),
            text(&t.def.engine),
            Value::Int(10),
            text("Dynamic"),
            Value::UInt(t.estimate.rows()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::UInt(t.auto_inc.load(std::sync::atomic::Ordering::Relaxed)),
            Value::Null,
            Value::Null,
            Value::Null,
            text(t.def.collation.name()),
            Value::Null,
            text(""),
            text(&t.def.comment),
        ]);
    }
    rows(
        sink,
        &[
            "Name",
            "Engine",
            "Version",
            "Row_format",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Create_time",
            "Update_time",
            "Check_time",
            "Collation",
            "Checksum",
            "Create_options",
            "Comment",
        ],
        out,
    )
}
