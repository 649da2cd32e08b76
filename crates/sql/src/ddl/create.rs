//! CREATE TABLE ... LIKE (the source's columns and indexes, not its
//! foreign keys, as MySQL) and CREATE TABLE ... [AS] SELECT (columns named
//! in the statement first, then the select's columns with types from its
//! result types; the rows inserted as INSERT ... SELECT would, and the table
//! dropped again if that fails).
use super::{define::table_def, split_name};
use crate::error::{Result, SqlError};
use crate::result::{ok, Collect, OutType, Outcome};
use crate::select::resolve_table;
use crate::session::Session;
use crate::stmt::RowStmt;
use rel::schema::{Column, Index, TableDef};
use rel::value::{ColumnType, TypeKind};
use sqlparser::ast;

/// CREATE TABLE new LIKE old.
pub fn create_like(
    s: &mut Session,
    ct: &ast::CreateTable,
    like: &ast::ObjectName,
) -> Result<Outcome> {
    let (db, name) = split_name(s, &ct.name)?;
    let src = resolve_table(&s.inst.catalog.state(), s.db.as_deref(), like)?;
    let mut def = src.def.clone();
    def.db = db;
    def.name = name;
    def.foreign_keys.clear();
    def.instant.clear();
    def.instant_from = 0;
    // A new (empty) table: the current key format.
    def.key_format = rel::keycodec::KeyFormat::PadSpace;
    def.derive();
    if !s.inst.catalog.create_table(def, ct.if_not_exists)? {
        s.warn("Note", SqlError::table_exists(ct.name.to_string()));
    }
    ok()
}

/// The column type a select result column gets: a string made of literals
/// takes the connection's collation (`conn`), as MariaDB, not the database's.
fn column_of(ty: &OutType, conn: rel::collation::Collation) -> ColumnType {
    let t = |kind: TypeKind, len: u32| {
        let mut c = ColumnType {
            len,
            ..ColumnType::new(kind)
        };
        if c.is_text() {
            c.coll = conn;
        }
        c
    };
    match ty {
        OutType::Column(c) => c.clone(),
        OutType::Int { unsigned } => ColumnType {
            unsigned: *unsigned,
            ..t(TypeKind::BigInt, 0)
        },
        OutType::Decimal { scale } => ColumnType {
            scale: (*scale).min(30),
            ..t(TypeKind::Decimal, 38)
        },
        OutType::Double => t(TypeKind::Double, 0),
        OutType::Text { len } if *len <= 16383 => t(TypeKind::VarChar, *len),
        OutType::Text { len } if *len <= 65535 => t(TypeKind::Text, 65535),
        OutType::Text { len } if *len <= 16777215 => t(TypeKind::Text, 16777215),
        OutType::Text { .. } => t(TypeKind::Text, 4294967295),
        OutType::Date => t(TypeKind::Date, 0),
        OutType::DateTime => t(TypeKind::DateTime, 0),
        OutType::Time => t(TypeKind::Time, 0),
        OutType::Null => t(TypeKind::Binary, 0),
    }
}

/// For each select item of a plain SELECT: whether it is a non-NULL
/// literal (MySQL makes its column NOT NULL).
fn literal_items(q: &ast::Query) -> Vec<bool> {
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return vec![];
    };
    let wildcard = sel.projection.iter().any(|i| {
        matches!(
            i,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    if wildcard {
        // Items and columns no longer line up.
        return vec![];
    }
    sel.projection
        .iter()
        .map(|item| {
            let e = match item {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
                _ => return false,
            };
            matches!(e, ast::Expr::Value(v) if !matches!(v.value, ast::Value::Null))
                || matches!(e, ast::Expr::Prefixed { .. })
        })
        .collect()
}

/// CREATE TABLE t [(columns)] [AS] SELECT ...
pub fn create_as_select(
    s: &mut Session,
    ct: &ast::CreateTable,
    query: &ast::Query,
) -> Result<Outcome> {
    let (db, name) = split_name(s, &ct.name)?;
    crate::accept::check_create_table(&ast::CreateTable {
        query: None,
        ..ct.clone()
    })?;
    let plan = crate::exec::plan(s, &RowStmt::Select(Box::new(query.clone())), &[])?;
    let crate::exec::Plan::Select(sp) = &plan else {
        return Err(SqlError::internal("CREATE TABLE ... SELECT: not a select"));
    };
    let mut def = if ct.columns.is_empty() {
        if !ct.constraints.is_empty() {
            return Err(SqlError::unsupported(
                "CREATE TABLE ... SELECT with keys but no column definitions",
            ));
        }
        TableDef::new(
            db.clone(),
            name.clone(),
            vec![],
            Index {
                id: 0,
                name: "PRIMARY".into(),
                columns: vec![],
                unique: true,
                primary: true,
                ..Default::default()
            },
            true,
            vec![],
            "STRATA".into(),
            String::new(),
        )
    } else {
        let plain = ast::CreateTable {
            query: None,
            ..ct.clone()
        };
        let (def, fks) = table_def(&plain, &db, &name, super::db_collation(s, &db)?)?;
        if !fks.is_empty() {
            return Err(SqlError::unsupported(
                "CREATE TABLE ... SELECT with FOREIGN KEY",
            ));
        }
        def
    };
    if ct.columns.is_empty() {
        def.collation = super::db_collation(s, &db)?;
    }
    let literal = literal_items(query);
    let mut select_names = Vec::new();
    for (i, c) in sp.columns.iter().enumerate() {
        if select_names
            .iter()
            .any(|n: &String| n.eq_ignore_ascii_case(&c.name))
        {
            return Err(SqlError::duplicate_column(&c.name));
        }
        select_names.push(c.name.clone());
        if def.column(&c.name).is_none() {
            def.columns.push(Column {
                nullable: c.nullable && !literal.get(i).copied().unwrap_or(false),
                ..Column::plain(c.name.clone(), column_of(&c.ty, s.conn_collation()))
            });
        }
    }
    if def.columns.is_empty() {
        return Err(SqlError::no_columns());
    }
    def.derive();
    if !s.inst.catalog.create_table(def, ct.if_not_exists)? {
        s.warn("Note", SqlError::table_exists(&name));
        return ok();
    }
    let quote = |n: &str| format!("`{}`", n.replace('`', "``"));
    let cols: Vec<String> = select_names.iter().map(|n| quote(n)).collect();
    let insert = format!(
        "INSERT INTO {}.{} ({}) {}",
        quote(&db),
        quote(&name),
        cols.join(", "),
        query
    );
    let mut sink = Collect::default();
    match s.query_inner(&insert, &mut sink) {
        Ok(o) => Ok(o),
        Err(e) => {
            let _ = s.inst.catalog.drop_table(&db, &name, true);
            Err(e)
        }
    }
}
