//! information_schema: its views, each a fixed list of columns and rows
//! computed when a statement reads it (from the catalog snapshot, the
//! session's variables and status). A query names one like a table
//! (`information_schema.TABLES`, any case); the planner reads it as a
//! derived table (select/from.rs), so WHERE, joins, ORDER BY and the rest
//! work on it as on any table. Views of objects Strata does not have
//! (VIEWS, ROUTINES, TRIGGERS, EVENTS, PARTITIONS) are empty.
use crate::error::{Result, SqlError};
use crate::result::OutType;
use crate::session::Session;
use rel::catalog::{default_sql, CatalogState};
use rel::collation::Collation;
use rel::fk::{index_led_by, resolve_columns};
use rel::schema::{Column, TableDef};
use rel::value::{TypeKind, Value};

mod engine;
mod rows;
use rows::*;
pub use rows::{charsets, column_key};

/// The name information_schema answers to.
pub const DB: &str = "information_schema";

/// True for `information_schema` in any case.
pub fn is_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(DB)
}

/// One view of information_schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Schemata,
    Tables,
    Columns,
    Statistics,
    TableConstraints,
    KeyColumnUsage,
    ReferentialConstraints,
    Views,
    Routines,
    Triggers,
    CheckConstraints,
    Events,
    Partitions,
    Engines,
    CharacterSets,
    Collations,
    CollationCharsets,
    Processlist,
    SessionVariables,
    GlobalVariables,
    SessionStatus,
    GlobalStatus,
    StrataCf,
    StrataCfOptions,
    StrataCompactionStats,
    StrataDdl,
    StrataSstFiles,
}

const S: OutType = OutType::Text { len: 64 };
const L: OutType = OutType::Text { len: 2048 };
const N: OutType = OutType::Int { unsigned: true };

impl View {
    /// Every view, in SHOW TABLES order.
    pub const ALL: [View; 27] = [
        View::CharacterSets,
        View::CheckConstraints,
        View::CollationCharsets,
        View::Collations,
        View::Columns,
        View::Engines,
        View::Events,
        View::GlobalStatus,
        View::GlobalVariables,
        View::KeyColumnUsage,
        View::Partitions,
        View::Processlist,
        View::ReferentialConstraints,
        View::Routines,
        View::Schemata,
        View::SessionStatus,
        View::SessionVariables,
        View::Statistics,
        View::StrataCf,
        View::StrataCfOptions,
        View::StrataCompactionStats,
        View::StrataDdl,
        View::StrataSstFiles,
        View::TableConstraints,
        View::Tables,
        View::Triggers,
        View::Views,
    ];

    /// The view's name as information_schema lists it.
    pub fn name(self) -> &'static str {
        match self {
            View::Schemata => "SCHEMATA",
            View::Tables => "TABLES",
            View::Columns => "COLUMNS",
            View::Statistics => "STATISTICS",
            View::TableConstraints => "TABLE_CONSTRAINTS",
            View::KeyColumnUsage => "KEY_COLUMN_USAGE",
            View::ReferentialConstraints => "REFERENTIAL_CONSTRAINTS",
            View::Views => "VIEWS",
            View::Routines => "ROUTINES",
            View::Triggers => "TRIGGERS",
            View::CheckConstraints => "CHECK_CONSTRAINTS",
            View::Events => "EVENTS",
            View::Partitions => "PARTITIONS",
            View::Engines => "ENGINES",
            View::CharacterSets => "CHARACTER_SETS",
            View::Collations => "COLLATIONS",
            View::CollationCharsets => "COLLATION_CHARACTER_SET_APPLICABILITY",
            View::Processlist => "PROCESSLIST",
            View::SessionVariables => "SESSION_VARIABLES",
            View::GlobalVariables => "GLOBAL_VARIABLES",
            View::SessionStatus => "SESSION_STATUS",
            View::GlobalStatus => "GLOBAL_STATUS",
            View::StrataCf => "STRATA_CF",
            View::StrataCfOptions => "STRATA_CF_OPTIONS",
            View::StrataCompactionStats => "STRATA_COMPACTION_STATS",
            View::StrataDdl => "STRATA_DDL",
            View::StrataSstFiles => "STRATA_SST_FILES",
        }
    }

    /// The view named `name` (any case).
    pub fn lookup(name: &str) -> Option<View> {
        View::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(name))
    }

    /// Column names and types.
    pub fn columns(self) -> Vec<(&'static str, OutType)> {
        if let Some(cols) = engine::columns(self) {
            return cols.to_vec();
        }
        let cols: &[(&str, OutType)] = match self {
            View::Schemata => &[
                ("CATALOG_NAME", S),
                ("SCHEMA_NAME", S),
                ("DEFAULT_CHARACTER_SET_NAME", S),
                ("DEFAULT_COLLATION_NAME", S),
                ("SQL_PATH", S),
                ("SCHEMA_COMMENT", S),
            ],
            View::Tables => &[
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("TABLE_TYPE", S),
                ("ENGINE", S),
                ("VERSION", N),
                ("ROW_FORMAT", S),
                ("TABLE_ROWS", N),
                ("AVG_ROW_LENGTH", N),
                ("DATA_LENGTH", N),
                ("MAX_DATA_LENGTH", N),
                ("INDEX_LENGTH", N),
                ("DATA_FREE", N),
                ("AUTO_INCREMENT", N),
                ("CREATE_TIME", OutType::DateTime),
                ("UPDATE_TIME", OutType::DateTime),
                ("CHECK_TIME", OutType::DateTime),
                ("TABLE_COLLATION", S),
                ("CHECKSUM", N),
                ("CREATE_OPTIONS", L),
                ("TABLE_COMMENT", L),
            ],
            View::Columns => &[
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("COLUMN_NAME", S),
                ("ORDINAL_POSITION", N),
                ("COLUMN_DEFAULT", L),
                ("IS_NULLABLE", S),
                ("DATA_TYPE", S),
                ("CHARACTER_MAXIMUM_LENGTH", N),
                ("CHARACTER_OCTET_LENGTH", N),
                ("NUMERIC_PRECISION", N),
                ("NUMERIC_SCALE", N),
                ("DATETIME_PRECISION", N),
                ("CHARACTER_SET_NAME", S),
                ("COLLATION_NAME", S),
                ("COLUMN_TYPE", L),
                ("COLUMN_KEY", S),
                ("EXTRA", S),
                ("PRIVILEGES", S),
                ("COLUMN_COMMENT", L),
                ("GENERATION_EXPRESSION", L),
            ],
            View::Statistics => &[
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("NON_UNIQUE", N),
                ("INDEX_SCHEMA", S),
                ("INDEX_NAME", S),
                ("SEQ_IN_INDEX", N),
                ("COLUMN_NAME", S),
                ("COLLATION", S),
                ("CARDINALITY", N),
                ("SUB_PART", N),
                ("PACKED", S),
                ("NULLABLE", S),
                ("INDEX_TYPE", S),
                ("COMMENT", S),
                ("INDEX_COMMENT", L),
                ("IS_VISIBLE", S),
                ("EXPRESSION", L),
            ],
            View::TableConstraints => &[
                ("CONSTRAINT_CATALOG", S),
                ("CONSTRAINT_SCHEMA", S),
                ("CONSTRAINT_NAME", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("CONSTRAINT_TYPE", S),
                ("ENFORCED", S),
            ],
            View::KeyColumnUsage => &[
                ("CONSTRAINT_CATALOG", S),
                ("CONSTRAINT_SCHEMA", S),
                ("CONSTRAINT_NAME", S),
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("COLUMN_NAME", S),
                ("ORDINAL_POSITION", N),
                ("POSITION_IN_UNIQUE_CONSTRAINT", N),
                ("REFERENCED_TABLE_SCHEMA", S),
                ("REFERENCED_TABLE_NAME", S),
                ("REFERENCED_COLUMN_NAME", S),
            ],
            View::ReferentialConstraints => &[
                ("CONSTRAINT_CATALOG", S),
                ("CONSTRAINT_SCHEMA", S),
                ("CONSTRAINT_NAME", S),
                ("UNIQUE_CONSTRAINT_CATALOG", S),
                ("UNIQUE_CONSTRAINT_SCHEMA", S),
                ("UNIQUE_CONSTRAINT_NAME", S),
                ("MATCH_OPTION", S),
                ("UPDATE_RULE", S),
                ("DELETE_RULE", S),
                ("TABLE_NAME", S),
                ("REFERENCED_TABLE_NAME", S),
            ],
            View::Views => &[
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("VIEW_DEFINITION", L),
                ("CHECK_OPTION", S),
                ("IS_UPDATABLE", S),
                ("DEFINER", S),
                ("SECURITY_TYPE", S),
                ("CHARACTER_SET_CLIENT", S),
                ("COLLATION_CONNECTION", S),
                ("ALGORITHM", S),
            ],
            View::Routines => &[
                ("SPECIFIC_NAME", S),
                ("ROUTINE_CATALOG", S),
                ("ROUTINE_SCHEMA", S),
                ("ROUTINE_NAME", S),
                ("ROUTINE_TYPE", S),
                ("DATA_TYPE", S),
                ("ROUTINE_DEFINITION", L),
                ("DEFINER", S),
            ],
            View::CheckConstraints => &[
                ("CONSTRAINT_CATALOG", S),
                ("CONSTRAINT_SCHEMA", S),
                ("TABLE_NAME", S),
                ("CONSTRAINT_NAME", S),
                ("LEVEL", S),
                ("CHECK_CLAUSE", L),
            ],
            View::Triggers => &[
                ("TRIGGER_CATALOG", S),
                ("TRIGGER_SCHEMA", S),
                ("TRIGGER_NAME", S),
                ("EVENT_MANIPULATION", S),
                ("EVENT_OBJECT_SCHEMA", S),
                ("EVENT_OBJECT_TABLE", S),
                ("ACTION_STATEMENT", L),
                ("ACTION_TIMING", S),
                ("DEFINER", S),
            ],
            View::Events => &[
                ("EVENT_CATALOG", S),
                ("EVENT_SCHEMA", S),
                ("EVENT_NAME", S),
                ("DEFINER", S),
                ("EVENT_DEFINITION", L),
                ("STATUS", S),
            ],
            View::Partitions => &[
                ("TABLE_CATALOG", S),
                ("TABLE_SCHEMA", S),
                ("TABLE_NAME", S),
                ("PARTITION_NAME", S),
                ("PARTITION_METHOD", S),
                ("PARTITION_EXPRESSION", L),
                ("TABLE_ROWS", N),
            ],
            View::Engines => &[
                ("ENGINE", S),
                ("SUPPORT", S),
                ("COMMENT", L),
                ("TRANSACTIONS", S),
                ("XA", S),
                ("SAVEPOINTS", S),
            ],
            View::CharacterSets => &[
                ("CHARACTER_SET_NAME", S),
                ("DEFAULT_COLLATE_NAME", S),
                ("DESCRIPTION", S),
                ("MAXLEN", N),
            ],
            View::CollationCharsets => &[
                ("COLLATION_NAME", S),
                ("CHARACTER_SET_NAME", S),
                ("FULL_COLLATION_NAME", S),
                ("ID", N),
                ("IS_DEFAULT", S),
            ],
            View::Collations => &[
                ("COLLATION_NAME", S),
                ("CHARACTER_SET_NAME", S),
                ("ID", N),
                ("IS_DEFAULT", S),
                ("IS_COMPILED", S),
                ("SORTLEN", N),
                ("PAD_ATTRIBUTE", S),
            ],
            View::Processlist => &[
                ("ID", N),
                ("USER", S),
                ("HOST", S),
                ("DB", S),
                ("COMMAND", S),
                ("TIME", N),
                ("STATE", S),
                ("INFO", L),
                ("TIME_MS", S),
                ("STAGE", N),
                ("MAX_STAGE", N),
                ("PROGRESS", S),
                ("MEMORY_USED", N),
                ("MAX_MEMORY_USED", N),
                ("EXAMINED_ROWS", N),
                ("QUERY_ID", N),
                ("INFO_BINARY", L),
                ("TID", N),
            ],
            View::SessionVariables
            | View::GlobalVariables
            | View::SessionStatus
            | View::GlobalStatus => &[("VARIABLE_NAME", S), ("VARIABLE_VALUE", L)],
            View::StrataCf
            | View::StrataCfOptions
            | View::StrataCompactionStats
            | View::StrataDdl
            | View::StrataSstFiles => &[],
        };
        cols.to_vec()
    }

    /// The view's rows now, as `s` sees them: only the databases and
    /// tables its account holds some privilege on (SHOW DATABASES shows
    /// every database, as MariaDB); the engine's STRATA_* views need PROCESS
    /// (1227, as InnoDB's: their SST key bounds hold row bytes of every table).
    pub fn rows(self, s: &Session) -> Result<Vec<Vec<Value>>> {
        if let Some(rows) = engine::rows(self, s.inst.txdb.db()) {
            if !crate::account::has_global(s, rel::catalog::privs::PROCESS) {
                return Err(SqlError::specific_access_denied("PROCESS"));
            }
            return Ok(rows);
        }
        let mut rows = self.all_rows(s)?;
        let cols = self.columns();
        let at = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| cols.iter().position(|(c, _)| c == n))
        };
        let schema = at(&["TABLE_SCHEMA", "CONSTRAINT_SCHEMA", "SCHEMA_NAME"]);
        let table = at(&["TABLE_NAME"]);
        if let Some(si) = schema {
            let vis = crate::account::Visibility::of(s);
            let name = |v: &Value| String::from_utf8_lossy(&v.text()).into_owned();
            rows.retain(|r| {
                let db = r.get(si).map(name).unwrap_or_default();
                match table.and_then(|ti| r.get(ti)) {
                    Some(t) => vis.table(&db, &name(t)),
                    None => vis.db(&db),
                }
            });
        }
        Ok(rows)
    }

    /// Every row of the view (not filtered by privileges).
    fn all_rows(self, s: &Session) -> Result<Vec<Vec<Value>>> {
        let st = s.inst.catalog.state();
        if self == View::StrataDdl {
            return Ok(engine::ddl_rows(&st, s.inst.txdb.db()));
        }
        Ok(match self {
            View::Schemata => {
                // NULL character set and collation: the database's record
                // could not be read.
                let mut dbs: Vec<(&str, Option<Collation>)> = st
                    .databases
                    .iter()
                    .map(|(d, c)| (d.as_str(), c.as_ref().ok().copied()))
                    .collect();
                dbs.push((DB, Some(Collation::Utf8mb3GeneralCi)));
                dbs.sort_unstable_by_key(|d| d.0);
                dbs.into_iter()
                    .map(|(d, c)| {
                        vec![
                            t("def"),
                            t(d),
                            c.map_or(Value::Null, |c| t(c.charset())),
                            c.map_or(Value::Null, |c| t(c.name())),
                            Value::Null,
                            t(""),
                        ]
                    })
                    .collect()
            }
            View::Tables => tables(&st),
            View::Columns => {
                let mut out = each_table(&st, columns);
                out.extend(rows::view_columns(&st));
                out
            }
            View::Statistics => st_tables(&st).flat_map(statistics).collect(),
            View::TableConstraints => each_table(&st, table_constraints),
            View::KeyColumnUsage => each_table(&st, key_column_usage),
            View::ReferentialConstraints => {
                each_table(&st, |def| referential_constraints(def, &st))
            }
            View::Views => views(&st),
            View::CheckConstraints => each_table(&st, check_constraints),
            View::Routines | View::Triggers | View::Events | View::Partitions => Vec::new(),
            View::Engines => vec![vec![
                t("STRATA"),
                t("DEFAULT"),
                t("LSM-tree storage engine"),
                t("YES"),
                t("NO"),
                t("NO"),
            ]],
            View::CharacterSets => charsets()
                .into_iter()
                .map(|(cs, dflt, desc)| {
                    vec![
                        t(cs),
                        t(dflt.name()),
                        t(desc),
                        Value::UInt(dflt.max_len() as u64),
                    ]
                })
                .collect(),
            View::Collations | View::CollationCharsets => rel::collation::ALL
                .iter()
                .map(|c| {
                    let dflt = Collation::default_of_charset(c.charset()) == Some(*c);
                    let dflt = t(if dflt { "Yes" } else { "" });
                    let id = Value::UInt(c.id() as u64);
                    if self == View::CollationCharsets {
                        return vec![t(c.name()), t(c.charset()), t(c.name()), id, dflt];
                    }
                    let pad = if c.pad_space() { "PAD SPACE" } else { "NO PAD" };
                    let sortlen = Value::UInt(c.sortlen() as u64);
                    vec![
                        t(c.name()),
                        t(c.charset()),
                        id,
                        dflt,
                        t("Yes"),
                        sortlen,
                        t(pad),
                    ]
                })
                .collect(),
            View::Processlist => crate::procs::visible(s)
                .iter()
                .map(|p| p.row(true))
                .collect(),
            View::SessionVariables | View::GlobalVariables => {
                let global = self == View::GlobalVariables;
                s.inst
                    .all_vars()
                    .into_iter()
                    .map(|(k, _)| {
                        let v = s.get_var(&k, global).unwrap_or(Value::Null);
                        vec![t(&k.to_ascii_uppercase()), Value::Bytes(v.text())]
                    })
                    .collect()
            }
            View::SessionStatus | View::GlobalStatus => {
                crate::show::status::status(s, self == View::GlobalStatus)
                    .into_iter()
                    .map(|(k, v)| vec![t(&k.to_ascii_uppercase()), Value::Bytes(v.text())])
                    .collect()
            }
            View::StrataCf
            | View::StrataCfOptions
            | View::StrataCompactionStats
            | View::StrataDdl
            | View::StrataSstFiles => Vec::new(),
        })
    }
}
