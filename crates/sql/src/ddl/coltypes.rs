//! ENUM, SET and JSON column definitions with MariaDB's rules: member lists
//! (trailing spaces stripped, duplicates under the column's collation 1291,
//! a comma in a SET member 1367, too many members 1097), and JSON as
//! MariaDB's alias: `longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`
//! with a column CHECK (json_valid(`col`)), rewritten in the statement
//! before the column is defined.
use crate::error::{Result, SqlError};
use rel::members::{Members, MAX_ENUM_MEMBERS, MAX_SET_MEMBERS};
use rel::schema::Column;
use rel::value::{ColumnType, TypeKind};
use sqlparser::ast;

/// The type of an ENUM or SET data type, members as written (checked by
/// `finish` once the column's collation is known).
pub(super) fn member_type(dt: &ast::DataType) -> Option<Result<ColumnType>> {
    let (kind, list) = match dt {
        ast::DataType::Enum(members, bits) => {
            if bits.is_some() {
                return Some(Err(SqlError::unsupported(format!("data type {dt}"))));
            }
            let mut list = Vec::with_capacity(members.len());
            for m in members {
                match m {
                    ast::EnumMember::Name(n) => list.push(n.as_bytes().to_vec()),
                    ast::EnumMember::NamedValue(..) => {
                        return Some(Err(SqlError::parse(format!("near '{m:?}'"))))
                    }
                }
            }
            (TypeKind::Enum, list)
        }
        ast::DataType::Set(members) => (
            TypeKind::Set,
            members.iter().map(|m| m.as_bytes().to_vec()).collect(),
        ),
        _ => return None,
    };
    Some(Ok(ColumnType {
        members: Members::new(list),
        ..ColumnType::new(kind)
    }))
}

/// Checks and normalizes column `c`'s members under its collation: trailing
/// spaces stripped (MariaDB), then the errors above.
pub(super) fn finish(c: &mut Column) -> Result<()> {
    let set = c.ty.kind == TypeKind::Set;
    let kind = if set { "SET" } else { "ENUM" };
    let max = if set {
        MAX_SET_MEMBERS
    } else {
        MAX_ENUM_MEMBERS
    };
    if c.ty.members.len() > max {
        return Err(SqlError::too_many_members(&c.name, kind));
    }
    let coll = c.ty.coll;
    let mut list: Vec<Vec<u8>> = Vec::with_capacity(c.ty.members.len());
    for m in c.ty.members.iter() {
        let m = if coll.pad_space() {
            rel::keycodec::trim_trailing_spaces(m)
        } else {
            m
        };
        let text = String::from_utf8_lossy(m);
        if set && m.contains(&b',') {
            return Err(SqlError::illegal_member("set", text));
        }
        if let Some(d) = list.iter().find(|d| coll.compare(d, m).is_eq()) {
            let first = String::from_utf8_lossy(d).into_owned();
            return Err(SqlError::duplicated_member(&c.name, first, kind));
        }
        list.push(m.to_vec());
    }
    c.ty.members = Members::new(list);
    Ok(())
}

/// Rewrites the JSON columns of a CREATE TABLE (see the module docs).
pub fn json_alias_create(ct: &mut ast::CreateTable) -> Result<()> {
    for cd in &mut ct.columns {
        json_column(cd)?;
    }
    Ok(())
}

/// Rewrites the JSON columns an ALTER TABLE adds or redefines.
pub fn json_alias_alter(at: &mut ast::AlterTable) -> Result<()> {
    for op in &mut at.operations {
        match op {
            ast::AlterTableOperation::AddColumn { column_def, .. } => json_column(column_def)?,
            ast::AlterTableOperation::ModifyColumn {
                col_name,
                data_type,
                options,
                ..
            }
            | ast::AlterTableOperation::ChangeColumn {
                new_name: col_name,
                data_type,
                options,
                ..
            } if *data_type == ast::DataType::JSON => {
                *data_type = ast::DataType::LongText;
                json_options(&col_name.value, options)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn json_column(cd: &mut ast::ColumnDef) -> Result<()> {
    if cd.data_type != ast::DataType::JSON {
        return Ok(());
    }
    cd.data_type = ast::DataType::LongText;
    let mut opts: Vec<ast::ColumnOption> = cd.options.iter().map(|o| o.option.clone()).collect();
    let given = opts.len();
    json_options(&cd.name.value, &mut opts)?;
    for option in opts.drain(given..) {
        cd.options.push(ast::ColumnOptionDef { name: None, option });
    }
    Ok(())
}

/// Appends JSON's character set, collation and check to `opts` (a
/// CHARACTER SET or COLLATE of the user's is refused: MariaDB's JSON is
/// utf8mb4_bin).
fn json_options(name: &str, opts: &mut Vec<ast::ColumnOption>) -> Result<()> {
    if opts.iter().any(|o| {
        matches!(
            o,
            ast::ColumnOption::CharacterSet(_) | ast::ColumnOption::Collation(_)
        )
    }) {
        return Err(SqlError::unsupported(
            "CHARACTER SET or COLLATE on a JSON column",
        ));
    }
    opts.push(ast::ColumnOption::CharacterSet(ast::ObjectName::from(
        vec![ast::Ident::new("utf8mb4")],
    )));
    opts.push(ast::ColumnOption::Collation(ast::ObjectName::from(vec![
        ast::Ident::new("utf8mb4_bin"),
    ])));
    let text = format!("json_valid(`{}`)", name.replace('`', "``"));
    let expr = sqlparser::parser::Parser::new(&sqlparser::dialect::MySqlDialect {})
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::internal(format!("JSON check: {e}")))?;
    opts.push(ast::ColumnOption::Check(ast::CheckConstraint {
        name: None,
        expr: Box::new(expr),
        no_inherit: false,
        enforced: None,
    }));
    Ok(())
}
