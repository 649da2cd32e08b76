//! Table definitions from CREATE TABLE: MySQL column types, defaults,
//! AUTO_INCREMENT, keys, ENGINE=; index column lists; constant
//! expressions (defaults, SET values).
use crate::bind::{literal, Binder, Scope};
use crate::convert::for_store;
use crate::error::{Result, SqlError};
use crate::expr::NoEnv;
use rel::catalog::Table;
use rel::collation::Collation;
use rel::schema::{Column, Index, TableDef};
use rel::value::{ColumnType, TypeKind, Value};
use sqlparser::ast;
use std::collections::HashSet;

fn ident_list(cols: &[ast::IndexColumn], def_cols: &[Column]) -> Result<Vec<usize>> {
    cols.iter()
        .map(|ic| {
            let name = match &ic.column.expr {
                ast::Expr::Identifier(i) => i.value.clone(),
                ast::Expr::Function(f) => f.name.to_string(), // col(10) prefix: whole column
                other => other.to_string(),
            };
            def_cols
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(&name))
                .ok_or_else(|| SqlError::no_key_column(name))
        })
        .collect()
}

/// Maps a SQL data type to a column type.
pub fn column_type(dt: &ast::DataType) -> Result<ColumnType> {
    use ast::DataType as D;
    let t = |kind: TypeKind, unsigned: bool, len: Option<u64>| ColumnType {
        kind,
        unsigned,
        // Every caller bounds `len` first (see `bounded`); TEXT and BLOB
        // lengths are constants within u32.
        len: len.unwrap_or(0).min(u32::MAX as u64) as u32,
        scale: 0,
        coll: rel::collation::Collation::Binary,
        members: rel::members::Members::NONE,
    };
    // A length over the type's maximum is an error, never a wrapped or
    // clamped length (MySQL: 1074, or 1439 for integer display widths).
    let bounded = |len: Option<u64>, max: u64, what: &str| -> Result<Option<u64>> {
        match len {
            Some(n) if n > max => Err(if what == "display width" {
                SqlError::display_width(max)
            } else {
                SqlError::column_length(what, max)
            }),
            l => Ok(l),
        }
    };
    let w = |l: &Option<u64>| bounded(*l, 255, "display width");
    let frac = |p: &Option<u64>| -> Result<u8> {
        match p {
            Some(n) if *n > 6 => Err(SqlError::precision(n, 6)),
            Some(n) => Ok(*n as u8),
            None => Ok(0),
        }
    };
    let chars = |l: &Option<ast::CharacterLength>, dflt: u64| match l {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => *length,
        Some(ast::CharacterLength::Max) => 65535,
        None => dflt,
    };
    Ok(match dt {
        D::TinyInt(l) => t(TypeKind::TinyInt, false, w(l)?),
        D::TinyIntUnsigned(l) => t(TypeKind::TinyInt, true, w(l)?),
        D::Bool | D::Boolean => t(TypeKind::TinyInt, false, Some(1)),
        D::SmallInt(l) | D::Int2(l) => t(TypeKind::SmallInt, false, w(l)?),
        D::SmallIntUnsigned(l) | D::Int2Unsigned(l) => t(TypeKind::SmallInt, true, w(l)?),
        D::MediumInt(l) => t(TypeKind::MediumInt, false, w(l)?),
        D::MediumIntUnsigned(l) => t(TypeKind::MediumInt, true, w(l)?),
        D::Int(l) | D::Integer(l) | D::Int4(l) => t(TypeKind::Int, false, w(l)?),
        D::IntUnsigned(l) | D::IntegerUnsigned(l) | D::Int4Unsigned(l) => {
            t(TypeKind::Int, true, w(l)?)
        }
        D::BigInt(l) | D::Int8(l) => t(TypeKind::BigInt, false, w(l)?),
        D::BigIntUnsigned(l) | D::Int8Unsigned(l) => t(TypeKind::BigInt, true, w(l)?),
        D::Float(_) | D::Real | D::Float4 | D::FloatUnsigned(_) | D::RealUnsigned => {
            t(TypeKind::Float, false, None)
        }
        D::Double(_)
        | D::DoublePrecision
        | D::Float8
        | D::DoubleUnsigned(_)
        | D::DoublePrecisionUnsigned => t(TypeKind::Double, false, None),
        D::Decimal(info)
        | D::Numeric(info)
        | D::Dec(info)
        | D::DecimalUnsigned(info)
        | D::DecUnsigned(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, (*s).max(0) as u64),
            };
            // DECIMAL values are 128-bit: 38 digits, not MySQL's 65 (an
            // error, never a silent cap).
            if p > 38 {
                return Err(SqlError::precision(p, 38));
            }
            if s > 30 {
                return Err(SqlError::scale(s, 30));
            }
            if p == 0 || s > p {
                return Err(SqlError::m_bigger_than_d(p, s));
            }
            ColumnType {
                kind: TypeKind::Decimal,
                unsigned: matches!(dt, D::DecimalUnsigned(_) | D::DecUnsigned(_)),
                len: p as u32,
                scale: s as u8,
                coll: rel::collation::Collation::Binary,
                members: rel::members::Members::NONE,
            }
        }
        D::Char(l) | D::Character(l) => t(
            TypeKind::Char,
            false,
            bounded(Some(chars(l, 1)), 255, "CHAR")?,
        ),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            if l.is_none() {
                return Err(SqlError::parse("VARCHAR needs a length"));
            }
            t(
                TypeKind::VarChar,
                false,
                bounded(Some(chars(l, 255)), 16383, "VARCHAR")?,
            )
        }
        D::Binary(l) => t(
            TypeKind::Binary,
            false,
            bounded(Some(l.unwrap_or(1)), 255, "BINARY")?,
        ),
        D::Varbinary(l) => {
            let n = match l {
                Some(ast::BinaryLength::IntegerLength { length }) => *length,
                _ => 65535,
            };
            t(
                TypeKind::VarBinary,
                false,
                bounded(Some(n), 65535, "VARBINARY")?,
            )
        }
        D::Text => t(TypeKind::Text, false, Some(65535)),
        D::TinyText => t(TypeKind::Text, false, Some(255)),
        D::MediumText => t(TypeKind::Text, false, Some(16777215)),
        D::LongText => t(TypeKind::Text, false, Some(4294967295)),
        D::Blob(_) => t(TypeKind::Blob, false, Some(65535)),
        D::TinyBlob => t(TypeKind::Blob, false, Some(255)),
        D::MediumBlob => t(TypeKind::Blob, false, Some(16777215)),
        D::LongBlob => t(TypeKind::Blob, false, Some(4294967295)),
        D::Date => t(TypeKind::Date, false, None),
        D::Datetime(p) => ColumnType {
            scale: frac(p)?,
            ..t(TypeKind::DateTime, false, None)
        },
        D::Timestamp(p, _) => ColumnType {
            scale: frac(p)?,
            ..t(TypeKind::Timestamp, false, None)
        },
        D::Time(p, _) => ColumnType {
            scale: frac(p)?,
            ..t(TypeKind::Time, false, None)
        },
        D::Custom(name, _) if name.to_string().eq_ignore_ascii_case("year") => {
            t(TypeKind::Year, true, None)
        }
        other => match super::coltypes::member_type(other) {
            Some(t) => t?,
            None => return Err(SqlError::unsupported(format!("data type {other}"))),
        },
    })
}

/// A DEFAULT expression: its value, or true for CURRENT_TIMESTAMP.
pub(super) fn default_expr(e: &ast::Expr) -> Result<(Option<Value>, bool)> {
    match e {
        ast::Expr::Value(v) => Ok((Some(literal(&v.value)?), false)),
        // `_binary'..'`, `_utf8mb4'..'` (as MySQL 8's dumps write defaults).
        ast::Expr::Prefixed { .. } => {
            let x = Binder::new(&[]).expr(e, &Scope::default())?;
            Ok((Some(x.eval(&[], &NoEnv)?), false))
        }
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => {
            let mut b = Binder::new(&[]);
            let x = b.expr(
                &ast::Expr::UnaryOp {
                    op: ast::UnaryOperator::Minus,
                    expr: expr.clone(),
                },
                &Scope::default(),
            )?;
            Ok((Some(x.eval(&[], &NoEnv)?), false))
        }
        ast::Expr::Function(f) if is_now(&f.name.to_string()) => Ok((None, true)),
        ast::Expr::Identifier(i) if is_now(&i.value) => Ok((None, true)),
        ast::Expr::Nested(x) => default_expr(x),
        other => Err(SqlError::unsupported(format!("DEFAULT {other}"))),
    }
}

fn is_now(n: &str) -> bool {
    matches!(
        n.to_ascii_uppercase().as_str(),
        "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIMESTAMP" | "LOCALTIME"
    )
}

/// One column as CREATE TABLE or ALTER TABLE ADD/MODIFY/CHANGE gives it:
/// the column, and the keys its options declare.
pub struct ColumnSpec {
    pub col: Column,
    /// PRIMARY KEY (the column is made NOT NULL).
    pub primary: bool,
    /// UNIQUE.
    pub unique: bool,
    /// REFERENCES (a foreign key on this column alone).
    pub fk: Option<ast::ForeignKeyConstraint>,
}

/// Builds a column from its name, type and options.
pub fn column_spec<'a>(
    name: &str,
    data_type: &ast::DataType,
    options: impl Iterator<Item = &'a ast::ColumnOption>,
    table_coll: Collation,
) -> Result<ColumnSpec> {
    let options: Vec<&ast::ColumnOption> = options.collect();
    let mut ty = column_type(data_type)?;
    if ty.is_text() {
        ty.coll = column_collation(options.iter().copied(), table_coll)?;
        // CHARACTER SET binary makes a binary string type (MariaDB: CHAR(n)
        // is BINARY(n), 0x00-padded; VARCHAR is VARBINARY, TEXT is BLOB).
        if ty.coll == Collation::Binary {
            ty.kind = match ty.kind {
                TypeKind::Char => TypeKind::Binary,
                TypeKind::VarChar => TypeKind::VarBinary,
                TypeKind::Text => TypeKind::Blob,
                k => k,
            };
        }
    }
    let mut c = Column::plain(name, ty);
    if c.ty.is_enum_or_set() {
        super::coltypes::finish(&mut c)?;
    }
    let (mut primary, mut unique, mut fk_out) = (false, false, None);
    let mut explicit_null = false;
    let mut default_ast = None;
    for o in options {
        match o {
            ast::ColumnOption::Null => explicit_null = true,
            ast::ColumnOption::NotNull => c.nullable = false,
            ast::ColumnOption::Default(e) => default_ast = Some(e.clone()),
            ast::ColumnOption::PrimaryKey(_) => {
                c.nullable = false;
                primary = true;
            }
            ast::ColumnOption::Unique(_) => unique = true,
            ast::ColumnOption::Comment(s) => c.comment = s.clone(),
            ast::ColumnOption::OnUpdate(e) => {
                if default_expr(e)?.1 {
                    c.on_update_now = true;
                }
            }
            ast::ColumnOption::DialectSpecific(toks) => {
                let s: String = toks
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if s.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    c.auto_increment = true;
                } else {
                    return Err(SqlError::unsupported(format!("column option {s}")));
                }
            }
            ast::ColumnOption::CharacterSet(_) | ast::ColumnOption::Collation(_) => {}
            // Collected by `check::of_create` / ALTER TABLE.
            ast::ColumnOption::Check(_) => {}
            ast::ColumnOption::ForeignKey(fk) => {
                let mut fk = fk.clone();
                fk.columns = vec![ast::Ident::new(name)];
                fk_out = Some(fk);
            }
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    if c.auto_increment {
        c.nullable = c.nullable && explicit_null;
        if !c.ty.is_integer() && c.ty.kind != TypeKind::Float && c.ty.kind != TypeKind::Double {
            return Err(SqlError::column_specifier(&c.name));
        }
    }
    if let Some(e) = default_ast {
        let (v, now) = default_expr(&e)?;
        c.default_now = now;
        if let Some(v) = v {
            let stored = if v.is_null() {
                Value::Null
            } else if c.ty.is_enum_or_set() && !matches!(v, Value::Bytes(_)) {
                // MariaDB: a number is no ENUM/SET default (1067).
                return Err(SqlError::invalid_default(&c.name));
            } else {
                for_store(v, &c, 0).map_err(|_| SqlError::invalid_default(&c.name))?
            };
            if stored.is_null() && !c.nullable {
                return Err(SqlError::invalid_default(&c.name));
            }
            c.default = Some(stored);
        }
    }
    Ok(ColumnSpec {
        col: c,
        primary,
        unique,
        fk: fk_out,
    })
}

/// Builds a table definition from CREATE TABLE, and returns its FOREIGN KEY
/// clauses (table and column level) for `fkey::add`.
/// `db_coll`: the database's default collation (the table's when it names none).
pub fn table_def(
    ct: &ast::CreateTable,
    db: &str,
    name: &str,
    db_coll: Collation,
) -> Result<(TableDef, Vec<ast::ForeignKeyConstraint>)> {
    let mut fks = Vec::new();
    if ct.query.is_some() || ct.like.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE ... SELECT / LIKE"));
    }
    let mut cols = Vec::new();
    let mut pk_cols: Option<Vec<usize>> = None;
    let mut pk_meta = (String::new(), String::new());
    let mut secondary: Vec<Index> = Vec::new();
    let table_coll = table_collation(ct, db_coll)?;
    for (i, cd) in ct.columns.iter().enumerate() {
        let spec = column_spec(
            &cd.name.value,
            &cd.data_type,
            cd.options.iter().map(|o| &o.option),
            table_coll,
        )?;
        if spec.primary {
            pk_cols = Some(vec![i]);
        }
        if spec.unique {
            secondary.push(Index {
                id: 0,
                name: spec.col.name.clone(),
                columns: vec![i],
                unique: true,
                primary: false,
                ..Default::default()
            });
        }
        fks.extend(spec.fk);
        cols.push(spec.col);
    }
    if cols.is_empty() {
        return Err(SqlError::no_columns());
    }
    for (i, c) in cols.iter().enumerate() {
        if cols[..i]
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(SqlError::duplicate_column(&c.name));
        }
    }
    for con in &ct.constraints {
        match con {
            ast::TableConstraint::PrimaryKey(pk) => {
                if pk_cols.is_some() {
                    return Err(SqlError::multiple_primary_keys());
                }
                pk_cols = Some(ident_list(&pk.columns, &cols)?);
                pk_meta = crate::accept::index_meta(&pk.index_options)?;
            }
            ast::TableConstraint::Unique(u) => {
                let c = ident_list(&u.columns, &cols)?;
                let name = u
                    .name
                    .as_ref()
                    .or(u.index_name.as_ref())
                    .map(|n| n.value.clone());
                let (cf, comment) = crate::accept::index_meta(&u.index_options)?;
                secondary.push(Index {
                    id: 0,
                    name: name.unwrap_or_else(|| cols[c[0]].name.clone()),
                    columns: c,
                    unique: true,
                    primary: false,
                    cf,
                    comment,
                });
            }
            ast::TableConstraint::Index(ix) => {
                let c = ident_list(&ix.columns, &cols)?;
                let name = ix.name.as_ref().map(|n| n.value.clone());
                let (cf, comment) = crate::accept::index_meta(&ix.index_options)?;
                secondary.push(Index {
                    id: 0,
                    name: name.unwrap_or_else(|| cols[c[0]].name.clone()),
                    columns: c,
                    unique: false,
                    primary: false,
                    cf,
                    comment,
                });
            }
            ast::TableConstraint::ForeignKey(fk) => {
                crate::accept::check_constraint(con)?;
                fks.push(fk.clone());
            }
            ast::TableConstraint::Check(_) => {} // `check::of_create` below
            other => return Err(SqlError::unsupported(format!("constraint {other}"))),
        }
    }
    dedupe_index_names(&mut secondary);
    let hidden = pk_cols.is_none();
    let pk_cols = pk_cols.unwrap_or_default();
    for &c in &pk_cols {
        cols[c].nullable = false;
    }
    if let Some(a) = cols.iter().position(|c| c.auto_increment) {
        let keyed = pk_cols.first() == Some(&a)
            || secondary.iter().any(|ix| ix.columns.first() == Some(&a));
        if !keyed {
            return Err(SqlError::wrong_auto_key());
        }
    }
    let engine = engine_of(ct);
    let pk = Index {
        id: 0,
        name: "PRIMARY".into(),
        columns: pk_cols,
        unique: true,
        primary: true,
        cf: pk_meta.0,
        comment: pk_meta.1,
    };
    // The parser keeps COMMENT= either apart or among the table options.
    let comment = ct
        .comment
        .iter()
        .chain(
            crate::accept::table_options(ct)
                .iter()
                .filter_map(|o| match o {
                    ast::SqlOption::Comment(c) => Some(c),
                    _ => None,
                }),
        )
        .map(|c| match c {
            ast::CommentDef::WithEq(s) | ast::CommentDef::WithoutEq(s) => s.clone(),
        })
        .next()
        .unwrap_or_default();
    let mut def = TableDef::new(
        db.into(),
        name.into(),
        cols,
        pk,
        hidden,
        secondary,
        engine,
        comment,
    );
    def.collation = table_coll;
    def.ttl = rel::ttl::from_comment(&def.comment, &def)?;
    def.checks = crate::check::of_create(ct, &def.columns)?;
    crate::check::Checks::of(&def)?;
    Ok((def, fks))
}

fn unquoted(n: &str) -> String {
    n.trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

/// A table's default collation from DEFAULT CHARSET= / COLLATE= (the
/// database's, `dflt`, when absent).
fn table_collation(ct: &ast::CreateTable, dflt: Collation) -> Result<Collation> {
    let (mut cs, mut co) = (None, None);
    for o in crate::accept::table_options(ct) {
        if let ast::SqlOption::KeyValue { key, value } = o {
            match crate::accept::option_key(key).as_str() {
                "CHARSET" | "DEFAULT CHARSET" | "CHARACTER SET" | "DEFAULT CHARACTER SET" => {
                    cs = Some(unquoted(&value.to_string()))
                }
                "COLLATE" | "DEFAULT COLLATE" => co = Some(unquoted(&value.to_string())),
                _ => {}
            }
        }
    }
    crate::collate::resolve(cs.as_deref(), co.as_deref(), dflt)
}

/// A character column's collation from its CHARACTER SET / COLLATE
/// options, else the table's.
pub fn column_collation<'a>(
    opts: impl Iterator<Item = &'a ast::ColumnOption>,
    table: Collation,
) -> Result<Collation> {
    let (mut cs, mut co) = (None, None);
    for o in opts {
        match o {
            ast::ColumnOption::CharacterSet(n) => cs = Some(unquoted(&n.to_string())),
            ast::ColumnOption::Collation(n) => co = Some(unquoted(&n.to_string())),
            _ => {}
        }
    }
    crate::collate::resolve(cs.as_deref(), co.as_deref(), table)
}

fn dedupe_index_names(ix: &mut [Index]) {
    let mut seen = HashSet::new();
    for i in ix.iter_mut() {
        let base = i.name.clone();
        let mut n = 2;
        while !seen.insert(i.name.to_ascii_lowercase()) {
            i.name = format!("{base}_{n}");
            n += 1;
        }
    }
}

fn engine_of(ct: &ast::CreateTable) -> String {
    let s = ct.table_options.to_string();
    let up = s.to_ascii_uppercase();
    if let Some(p) = up.find("ENGINE") {
        let rest = s[p + 6..].trim_start().trim_start_matches('=').trim_start();
        let e: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !e.is_empty() {
            return e.to_ascii_uppercase();
        }
    }
    "STRATA".into()
}

/// Columns of an index given as names (CREATE INDEX / ALTER TABLE).
pub fn index_columns(t: &Table, cols: &[ast::IndexColumn]) -> Result<Vec<usize>> {
    ident_list(cols, &t.def.columns)
}

/// Evaluates a constant expression (used by SET and friends).
pub fn const_eval(e: &ast::Expr) -> Result<Value> {
    let mut b = Binder::new(&[]);
    let x = crate::collate::annotate(b.expr(e, &Scope::default())?, crate::collate::Ctx::new(&[]))?;
    x.eval(&[], &NoEnv)
}
