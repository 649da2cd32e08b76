//! Views where a query names them: the stored SELECT text parsed again, its
//! unqualified table names qualified with the view's database (so it reads
//! the same tables whatever the current database), checked for view
//! recursion, and planned as a derived table under the view's name (its
//! column list renaming the columns). A body that no longer plans because
//! a table or column it names is gone is MySQL's 1356.
use crate::error::{Result, SqlError};
use rel::catalog::CatalogState;
use rel::view::ViewDef;
use sqlparser::ast::{self, Visit, VisitMut, Visitor, VisitorMut};
use std::ops::ControlFlow;
use std::sync::Arc;

/// How deep views may nest (MySQL has no fixed bound; this keeps planning's
/// recursion bounded).
const MAX_NESTING: usize = 64;

/// Refuses a write whose target names a view (updatable views are not
/// built: 1235, never a silent change elsewhere).
pub fn refuse_write(
    st: &CatalogState,
    cur_db: Option<&str>,
    name: &ast::ObjectName,
    what: &str,
) -> Result<()> {
    match lookup(st, cur_db, name) {
        Some(_) => Err(SqlError::unsupported(format!("{what} through a view"))),
        None => Ok(()),
    }
}

/// The view a table name names, if any.
pub fn lookup(
    st: &CatalogState,
    cur_db: Option<&str>,
    name: &ast::ObjectName,
) -> Option<Arc<ViewDef>> {
    if st.views.is_empty() {
        return None;
    }
    let parts = crate::stmt::name_parts(name);
    let (db, t) = match parts.as_slice() {
        [t] => (cur_db?, t.as_str()),
        [d, t] => (d.as_str(), t.as_str()),
        _ => return None,
    };
    st.view(db, t).cloned()
}

/// The view's SELECT, ready to plan as a derived table: names qualified,
/// recursion through other views refused (1462).
pub fn body(st: &CatalogState, v: &ViewDef) -> Result<ast::Query> {
    let q = qualified(v)?;
    let mut stack = vec![(v.db.clone(), v.name.clone())];
    check_nesting(st, &q, &mut stack, v)?;
    Ok(q)
}

/// The stored text parsed, its table names qualified with the view's
/// database.
fn qualified(v: &ViewDef) -> Result<ast::Query> {
    let parsed = crate::parse::parse(&v.query)?;
    let crate::stmt::Stmt::Rows(crate::stmt::RowStmt::Select(q)) = parsed.stmt else {
        return Err(SqlError::view_invalid(&v.db, &v.name));
    };
    let mut q = *q;
    let mut ctes = CteNames(Vec::new());
    let _ = Visit::visit(&q, &mut ctes);
    let _ = VisitMut::visit(
        &mut q,
        &mut Qualify {
            db: &v.db,
            ctes: &ctes.0,
        },
    );
    Ok(q)
}

/// Refuses a view that reaches itself through the views it reads.
fn check_nesting(
    st: &CatalogState,
    q: &ast::Query,
    stack: &mut Vec<(String, String)>,
    top: &ViewDef,
) -> Result<()> {
    let mut names = Names(Vec::new());
    let _ = Visit::visit(q, &mut names);
    for (d, n) in names.0 {
        let Some(w) = st.view(&d, &n) else {
            continue;
        };
        if stack.contains(&(d.clone(), n.clone())) || stack.len() >= MAX_NESTING {
            return Err(SqlError::view_recursive(&top.db, &top.name));
        }
        let wq = qualified(w)?;
        stack.push((d, n));
        check_nesting(st, &wq, stack, top)?;
        stack.pop();
    }
    Ok(())
}

/// A view planned as a derived table (`plan` plans its body), its columns
/// renamed by its column list; a body naming what is gone is 1356.
pub(super) fn plan_view(
    st: &CatalogState,
    v: &ViewDef,
    plan: &dyn Fn(&ast::Query) -> Result<super::SelectPlan>,
) -> Result<super::SelectPlan> {
    let invalid = |e: SqlError| {
        if invalid_body(&e) {
            SqlError::view_invalid(&v.db, &v.name)
        } else {
            e
        }
    };
    let q = body(st, v)?;
    let mut p = plan(&q).map_err(invalid)?;
    let cols: Vec<ast::TableAliasColumnDef> = v
        .columns
        .iter()
        .map(|c| ast::TableAliasColumnDef {
            name: ast::Ident::new(c),
            data_type: None,
        })
        .collect();
    super::from::rename_columns(&mut p, &cols, || SqlError::view_invalid(&v.db, &v.name))?;
    Ok(p)
}

/// A view's columns as a stand-in table (SHOW COLUMNS, information_schema).
pub fn view_table(st: &CatalogState, v: &ViewDef) -> Result<Arc<rel::catalog::Table>> {
    let p = plan_view(st, v, &|q| super::plan(q, st, Some(&v.db), &[]))?;
    super::from::derived_table(&v.name, &p)
}

/// Whether an error planning a view's body means the view is invalid
/// (a table or column it names is gone): MySQL reports 1356 instead.
pub fn invalid_body(e: &SqlError) -> bool {
    matches!(
        e.code,
        crate::error::ER_NO_SUCH_TABLE
            | crate::error::ER_BAD_FIELD_ERROR
            | crate::error::ER_SP_DOES_NOT_EXIST
            | crate::error::ER_BAD_DB_ERROR
    )
}

/// The names of every common table expression in a query.
struct CteNames(Vec<String>);

impl Visitor for CteNames {
    type Break = ();
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            self.0
                .extend(w.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
        ControlFlow::Continue(())
    }
}

/// Qualifies single-part table names (not CTE names, not DUAL) with `db`.
struct Qualify<'a> {
    db: &'a str,
    ctes: &'a [String],
}

impl VisitorMut for Qualify<'_> {
    type Break = ();
    fn pre_visit_table_factor(&mut self, t: &mut ast::TableFactor) -> ControlFlow<()> {
        if let ast::TableFactor::Table { name, .. } = t {
            if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
                let n = &id.value;
                if !n.eq_ignore_ascii_case("dual")
                    && !self.ctes.iter().any(|c| c.eq_ignore_ascii_case(n))
                {
                    name.0.insert(
                        0,
                        ast::ObjectNamePart::Identifier(ast::Ident::with_quote('`', self.db)),
                    );
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The two-part table names a (qualified) query reads.
struct Names(Vec<(String, String)>);

impl Visitor for Names {
    type Break = ();
    fn pre_visit_table_factor(&mut self, t: &ast::TableFactor) -> ControlFlow<()> {
        if let ast::TableFactor::Table { name, .. } = t {
            if let [d, n] = crate::stmt::name_parts(name).as_slice() {
                self.0.push((d.clone(), n.clone()));
            }
        }
        ControlFlow::Continue(())
    }
}
