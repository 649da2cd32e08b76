//! The rows of the information_schema views that list the catalog's
//! objects (TABLES, VIEWS, COLUMNS, STATISTICS, constraints, key column
//! usage, referential constraints), built from one catalog snapshot.
use super::*;

pub(super) fn t(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

pub(super) fn opt(s: Option<&str>) -> Value {
    s.map_or(Value::Null, t)
}

/// The rows `f` gives for every table, in (database, name) order.
pub(super) fn each_table(
    st: &CatalogState,
    f: impl Fn(&TableDef) -> Vec<Vec<Value>>,
) -> Vec<Vec<Value>> {
    st_tables(st).flat_map(|tb| f(&tb.def)).collect()
}

/// The tables in name order.
pub(super) fn st_tables(
    st: &CatalogState,
) -> impl Iterator<Item = &std::sync::Arc<rel::catalog::Table>> {
    let mut names: Vec<&(String, String)> = st.tables.keys().collect();
    names.sort_unstable();
    names.into_iter().filter_map(|k| st.tables.get(k))
}

/// information_schema.VIEWS: one row per view (MariaDB's columns).
pub(super) fn views(st: &CatalogState) -> Vec<Vec<Value>> {
    let mut names: Vec<&(String, String)> = st.views.keys().collect();
    names.sort_unstable();
    names
        .into_iter()
        .filter_map(|k| st.views.get(k))
        .map(|v| {
            vec![
                t("def"),
                t(&v.db),
                t(&v.name),
                t(&v.query),
                t(v.check.name()),
                t(if crate::viewdml::updatable(st, v) {
                    "YES"
                } else {
                    "NO"
                }),
                t(&format!("{}@{}", v.definer_user, v.definer_host)),
                t(if v.invoker { "INVOKER" } else { "DEFINER" }),
                t(&v.charset_client),
                t(&v.collation_connection),
                t(v.algorithm.name()),
            ]
        })
        .collect()
}

/// information_schema.COLUMNS rows of the views: each view's columns as
/// its body plans now (a view naming what is gone lists none, as MariaDB
/// skips it with a warning).
pub(super) fn view_columns(st: &CatalogState) -> Vec<Vec<Value>> {
    let mut names: Vec<&(String, String)> = st.views.keys().collect();
    names.sort_unstable();
    let mut out = Vec::new();
    for v in names.into_iter().filter_map(|k| st.views.get(k)) {
        let Ok(tb) = crate::select::view::view_table(st, v) else {
            continue;
        };
        for mut r in columns(&tb.def) {
            r[1] = t(&v.db);
            r[2] = t(&v.name);
            out.push(r);
        }
    }
    out
}

pub(super) fn tables(st: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut names: Vec<&(String, String)> = st.tables.keys().collect();
    names.sort_unstable();
    for k in names {
        let Some(tb) = st.tables.get(k) else {
            continue;
        };
        let def = &tb.def;
        let auto = def.auto_inc_column().map_or(Value::Null, |_| {
            Value::UInt(tb.auto_inc.load(std::sync::atomic::Ordering::Relaxed))
        });
        out.push(vec![
            t("def"),
            t(&def.db),
            t(&def.name),
            t("BASE TABLE"),
            t(&def.engine),
            Value::UInt(10),
            t("Dynamic"),
            Value::UInt(tb.estimate.rows()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            auto,
            Value::Null,
            Value::Null,
            Value::Null,
            t(def.collation.name()),
            Value::Null,
            t(""),
            t(&def.comment),
        ]);
    }
    let mut names: Vec<&(String, String)> = st.views.keys().collect();
    names.sort_unstable();
    for (d, n) in names {
        let mut r = vec![t("def"), t(d), t(n), t("VIEW")];
        r.extend(std::iter::repeat_n(Value::Null, 16));
        r.push(t("VIEW"));
        out.push(r);
    }
    for v in View::ALL {
        let mut r = vec![t("def"), t(DB), t(v.name()), t("SYSTEM VIEW"), t("MEMORY")];
        r.push(Value::UInt(10));
        r.push(t("Fixed"));
        r.extend(std::iter::repeat_n(Value::Null, 10));
        r.extend([t("utf8mb4_bin"), Value::Null, t(""), t("")]);
        out.push(r);
    }
    out
}

/// COLUMN_KEY as SHOW COLUMNS gives it.
pub fn column_key(def: &TableDef, i: usize) -> &'static str {
    if !def.hidden_pk && def.pk.columns.first() == Some(&i) {
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
    }
}

/// (NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION) of a column.
pub(super) fn precision(c: &Column) -> (Value, Value, Value) {
    let ty = &c.ty;
    let u = Value::UInt;
    let int = |signed: u64, unsigned: u64| {
        (
            u(if ty.unsigned { unsigned } else { signed }),
            u(0),
            Value::Null,
        )
    };
    match ty.kind {
        TypeKind::TinyInt => int(3, 3),
        TypeKind::SmallInt => int(5, 5),
        TypeKind::MediumInt => int(7, 8),
        TypeKind::Int => int(10, 10),
        TypeKind::BigInt => int(19, 20),
        TypeKind::Float => (u(12), Value::Null, Value::Null),
        TypeKind::Double => (u(22), Value::Null, Value::Null),
        TypeKind::Decimal => (u(ty.len as u64), u(ty.scale as u64), Value::Null),
        TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time => {
            (Value::Null, Value::Null, u(ty.scale as u64))
        }
        _ => (Value::Null, Value::Null, Value::Null),
    }
}

/// The character sets Strata stores: (name, default collation, description).
pub fn charsets() -> Vec<(&'static str, Collation, &'static str)> {
    vec![
        ("binary", Collation::Binary, "Binary pseudo charset"),
        ("latin1", Collation::Latin1SwedishCi, "cp1252 West European"),
        ("utf8mb3", Collation::Utf8mb3GeneralCi, "UTF-8 Unicode"),
        ("utf8mb4", Collation::Utf8mb4GeneralCi, "UTF-8 Unicode"),
    ]
}

pub(super) fn columns(def: &TableDef) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for (i, c) in def.columns.iter().enumerate() {
        let ty = &c.ty;
        let (chars, octets) = if ty.is_string() {
            let n = ty.len as u64;
            (
                Value::UInt(n),
                Value::UInt(if ty.is_binary() || ty.kind == TypeKind::Text {
                    n
                } else {
                    n * ty.coll.max_len() as u64
                }),
            )
        } else if ty.is_enum_or_set() {
            let n = ty.members.char_len(ty.kind == TypeKind::Set) as u64;
            (Value::UInt(n), Value::UInt(n * ty.coll.max_len() as u64))
        } else {
            (Value::Null, Value::Null)
        };
        let (np, ns, dp) = precision(c);
        let text_col = ty.is_text();
        let default = if c.default_now {
            t("current_timestamp()")
        } else {
            match &c.default {
                None | Some(Value::Null) => Value::Null,
                Some(v) => t(&default_sql(v)),
            }
        };
        let sql_name = ty.sql_name();
        let data_type = sql_name
            .split(['(', ' '])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let extra = if c.auto_increment {
            "auto_increment"
        } else if c.on_update_now {
            "on update current_timestamp()"
        } else {
            ""
        };
        out.push(vec![
            t("def"),
            t(&def.db),
            t(&def.name),
            t(&c.name),
            Value::UInt(i as u64 + 1),
            default,
            t(if c.nullable { "YES" } else { "NO" }),
            t(&data_type),
            chars,
            octets,
            np,
            ns,
            dp,
            opt(text_col.then_some(c.ty.coll.charset())),
            opt(text_col.then_some(c.ty.coll.name())),
            // ENUM/SET members keep their case.
            t(&if ty.is_enum_or_set() {
                sql_name.clone()
            } else {
                sql_name.to_ascii_lowercase()
            }),
            t(column_key(def, i)),
            t(extra),
            t("select,insert,update,references"),
            t(&c.comment),
            Value::Null,
        ]);
    }
    out
}

pub(super) fn statistics(tb: &std::sync::Arc<rel::catalog::Table>) -> Vec<Vec<Value>> {
    let def = &tb.def;
    let mut out = Vec::new();
    for ix in def.indexes() {
        if ix.primary && def.hidden_pk {
            continue;
        }
        for (seq, &c) in ix.columns.iter().enumerate() {
            let col = &def.columns[c];
            out.push(vec![
                t("def"),
                t(&def.db),
                t(&def.name),
                Value::UInt(!ix.unique as u64),
                t(&def.db),
                t(&ix.name),
                Value::UInt(seq as u64 + 1),
                t(&col.name),
                t("A"),
                Value::UInt(tb.estimate.cardinality(ix, seq + 1)),
                Value::Null,
                Value::Null,
                t(if col.nullable { "YES" } else { "" }),
                t("BTREE"),
                t(""),
                t(&ix.comment),
                t("YES"),
                Value::Null,
            ]);
        }
    }
    out
}

pub(super) fn table_constraints(def: &TableDef) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let row = |name: &str, kind: &str| {
        vec![
            t("def"),
            t(&def.db),
            t(name),
            t(&def.db),
            t(&def.name),
            t(kind),
            t("YES"),
        ]
    };
    if !def.hidden_pk {
        out.push(row("PRIMARY", "PRIMARY KEY"));
    }
    for ix in def.secondary.iter().filter(|i| i.unique) {
        out.push(row(&ix.name, "UNIQUE"));
    }
    for fk in &def.foreign_keys {
        out.push(row(&fk.name, "FOREIGN KEY"));
    }
    for c in &def.checks {
        out.push(row(&c.name, "CHECK"));
    }
    out
}

pub(super) fn check_constraints(def: &TableDef) -> Vec<Vec<Value>> {
    def.checks
        .iter()
        .map(|c| {
            vec![
                t("def"),
                t(&def.db),
                t(&def.name),
                t(&c.name),
                t(match c.level {
                    rel::schema::CheckLevel::Column => "Column",
                    rel::schema::CheckLevel::Table => "Table",
                }),
                t(&c.expr),
            ]
        })
        .collect()
}

pub(super) fn key_column_usage(def: &TableDef) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let base = |name: &str, col: &str, pos: usize| {
        vec![
            t("def"),
            t(&def.db),
            t(name),
            t("def"),
            t(&def.db),
            t(&def.name),
            t(col),
            Value::UInt(pos as u64 + 1),
        ]
    };
    for ix in def
        .indexes()
        .filter(|i| i.unique && !(i.primary && def.hidden_pk))
    {
        for (p, &c) in ix.columns.iter().enumerate() {
            let mut r = base(&ix.name, &def.columns[c].name, p);
            r.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
            out.push(r);
        }
    }
    for fk in &def.foreign_keys {
        for (p, (&c, pc)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
            let mut r = base(&fk.name, &def.columns[c].name, p);
            r.extend([
                Value::UInt(p as u64 + 1),
                t(&fk.parent_db),
                t(&fk.parent_table),
                t(pc),
            ]);
            out.push(r);
        }
    }
    out
}

pub(super) fn referential_constraints(def: &TableDef, st: &CatalogState) -> Vec<Vec<Value>> {
    def.foreign_keys
        .iter()
        .map(|fk| {
            // The parent index the key uses (unique or not, as MariaDB reports it).
            let unique = st.table(&fk.parent_db, &fk.parent_table).and_then(|p| {
                let cols = resolve_columns(&p.def, &fk.parent_columns)?;
                Some(index_led_by(&p.def, &cols)?.name.clone())
            });
            vec![
                t("def"),
                t(&def.db),
                t(&fk.name),
                t("def"),
                t(&fk.parent_db),
                opt(unique.as_deref()),
                t("NONE"),
                t(fk.on_update.sql()),
                t(fk.on_delete.sql()),
                t(&def.name),
                t(&fk.parent_table),
            ]
        })
        .collect()
}
