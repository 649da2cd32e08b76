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
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

/// How deep views may nest (MySQL has no fixed bound; this keeps planning's
/// recursion bounded).
const MAX_NESTING: usize = 64;

/// The most tables one join may read (MariaDB's MAX_TABLES; 1116 past it).
pub const MAX_TABLES: usize = 61;

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
/// recursion through other views refused (1462), and an expansion reading
/// more than [`MAX_TABLES`] tables refused (1116) before anything is
/// expanded.
pub fn body(st: &CatalogState, v: &ViewDef) -> Result<ast::Query> {
    Ok(expand(st, v)?.0)
}

/// The view's SELECT (as [`body`]) and how many tables its join reads.
fn expand(st: &CatalogState, v: &ViewDef) -> Result<(ast::Query, usize)> {
    let q = qualified(v)?;
    let mut w = Walk {
        st,
        top: v,
        memo: HashMap::new(),
    };
    w.memo.insert((v.db.clone(), v.name.clone()), None);
    let n = w.tables(&q, 1)?;
    Ok((q, n.join))
}

/// The stored text parsed, its table names qualified with the view's
/// database.
pub(crate) fn qualified(v: &ViewDef) -> Result<ast::Query> {
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

/// A walk over the views a view reads, each visited once: view recursion
/// (1462), nesting depth (1436), and two counts through the views it reads,
/// each refused (1116) as soon as it passes its bound, so views that each
/// read the one before twice cost linear time, never their exponential
/// expansion: the tables of its join (the FROM clause's tables, a view
/// there counted by its own join's; MariaDB's 61) and every table reference
/// of the whole expansion, subqueries included ([`MAX_EXPANSION`]).
struct Walk<'a> {
    st: &'a CatalogState,
    top: &'a ViewDef,
    /// Per view reached: its counts; None while it is being walked (reaching
    /// it again is recursion).
    memo: HashMap<(String, String), Option<Counts>>,
}

/// A view's expansion: the tables of its join and all its table references.
#[derive(Clone, Copy)]
struct Counts {
    join: usize,
    total: usize,
}

/// The most table references a view's full expansion may hold.
const MAX_EXPANSION: usize = 4096;

impl Walk<'_> {
    fn tables(&mut self, q: &ast::Query, depth: usize) -> Result<Counts> {
        let mut names = Names(Vec::new());
        let _ = Visit::visit(q, &mut names);
        let mut total = 0usize;
        for (d, n) in names.0 {
            total = total.saturating_add(self.view(&d, &n, depth)?.map_or(1, |c| c.total));
            if total > MAX_EXPANSION {
                return Err(SqlError::too_many_view_tables(MAX_EXPANSION));
            }
        }
        let mut join = 0usize;
        for name in join_names(q) {
            join = join.saturating_add(match name {
                Some((d, n)) => self.view(&d, &n, depth)?.map_or(1, |c| c.join),
                None => 1,
            });
            if join > MAX_TABLES {
                return Err(SqlError::too_many_tables(MAX_TABLES));
            }
        }
        Ok(Counts { join, total })
    }

    /// The counts of the view `d`.`n` (None: it is not a view).
    fn view(&mut self, d: &str, n: &str, depth: usize) -> Result<Option<Counts>> {
        let Some(w) = self.st.view(d, n) else {
            return Ok(None);
        };
        let key = (w.db.clone(), w.name.clone());
        match self.memo.get(&key) {
            Some(Some(c)) => Ok(Some(*c)),
            Some(None) => Err(SqlError::view_recursive(&self.top.db, &self.top.name)),
            None => {
                if depth >= MAX_NESTING {
                    return Err(SqlError::plan_too_deep(MAX_NESTING));
                }
                let w = w.clone();
                self.memo.insert(key.clone(), None);
                let c = self.tables(&qualified(&w)?, depth + 1)?;
                self.memo.insert(key, Some(c));
                Ok(Some(c))
            }
        }
    }
}

/// The tables a query's own join reads (its FROM clause; a set operation or
/// a parenthesized query is one materialized table): two-part names, None
/// for anything else (a derived table, a CTE).
fn join_names(q: &ast::Query) -> Vec<Option<(String, String)>> {
    fn factor(f: &ast::TableFactor, out: &mut Vec<Option<(String, String)>>) {
        match f {
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => twj(table_with_joins, out),
            ast::TableFactor::Table { name, .. } => {
                match crate::stmt::name_parts(name).as_slice() {
                    [d, n] => out.push(Some((d.clone(), n.clone()))),
                    _ => out.push(None),
                }
            }
            _ => out.push(None),
        }
    }
    fn twj(t: &ast::TableWithJoins, out: &mut Vec<Option<(String, String)>>) {
        factor(&t.relation, out);
        for j in &t.joins {
            factor(&j.relation, out);
        }
    }
    let mut out = Vec::new();
    match &*q.body {
        ast::SetExpr::Select(s) => s.from.iter().for_each(|t| twj(t, &mut out)),
        _ => out.push(None),
    }
    out
}

/// A view planned as a derived table (`plan` plans its body, with no outer
/// query's columns in scope), its columns renamed by its column list; a
/// body naming what is gone is 1356. Read by a locking SELECT (`locks`: its
/// FOR UPDATE / LOCK IN SHARE MODE), a mergeable view's body reads its rows
/// under the same locks, as MariaDB locks a merged view's rows; a view
/// MariaDB would materialize (aggregates, DISTINCT, LIMIT, UNION, window
/// functions, ALGORITHM=TEMPTABLE) cannot be locked: 1235, never a read
/// without the locks asked for.
pub(super) fn plan_view(
    st: &CatalogState,
    v: &ViewDef,
    locks: &[ast::LockClause],
    plan: &dyn Fn(&ast::Query) -> Result<super::SelectPlan>,
) -> Result<(super::SelectPlan, usize)> {
    let invalid = |e: SqlError| {
        if invalid_body(&e) {
            SqlError::view_invalid(&v.db, &v.name)
        } else {
            e
        }
    };
    let (mut q, tables) = expand(st, v)?;
    definer_is_current(v, &mut q);
    let locking = !locks.is_empty();
    if locking {
        if !mergeable_text(v, &q) {
            return Err(unlockable(v));
        }
        q.locks = locks.to_vec();
    }
    // Its literals take the collation_connection it was created under.
    let mut p = {
        let c = rel::collation::Collation::from_name(&v.collation_connection);
        let _literals = crate::collate::literals(c.unwrap_or(rel::collation::Collation::DEFAULT));
        let mut p = plan(&q).map_err(invalid)?;
        // Its string columns made of literals keep that collation when the
        // query reading the view describes them (`from::derived_table`).
        for col in &mut p.columns {
            if matches!(col.ty, crate::result::OutType::Text { .. }) {
                col.ty = crate::result::OutType::Column(crate::types::column_type(col.ty.clone()));
            }
        }
        p
    };
    if locking && !mergeable_plan(&p) {
        return Err(unlockable(v));
    }
    let cols: Vec<ast::TableAliasColumnDef> = v
        .columns
        .iter()
        .map(|c| ast::TableAliasColumnDef {
            name: ast::Ident::new(c),
            data_type: None,
        })
        .collect();
    super::from::rename_columns(&mut p, &cols, || SqlError::view_invalid(&v.db, &v.name))?;
    Ok((p, tables))
}

/// Inside a SQL SECURITY DEFINER view CURRENT_USER() is the definer
/// (MySQL, MariaDB): each call in its body becomes that constant (the
/// bodies of views it reads are planned each with its own).
/// In a SQL SECURITY DEFINER view's text `q` (read, or written through:
/// `viewdml`), CURRENT_USER() is the view's definer. An unaliased select
/// item holding it keeps the name it was written with (`CURRENT_USER()`),
/// never the definer's literal.
pub(crate) fn definer_is_current(v: &ViewDef, q: &mut ast::Query) {
    if !v.invoker {
        let _ = VisitMut::visit(
            q,
            &mut DefinerIsCurrent(format!("{}@{}", v.definer_user, v.definer_host)),
        );
    }
}

struct DefinerIsCurrent(String);

/// Whether `e` is CURRENT_USER() or bare CURRENT_USER.
fn is_current_user(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Function(f) => {
            f.name.0.len() == 1 && f.name.to_string().eq_ignore_ascii_case("CURRENT_USER")
        }
        // Bare CURRENT_USER (a reserved word: never a column unquoted).
        ast::Expr::Identifier(i) => {
            i.quote_style.is_none() && i.value.eq_ignore_ascii_case("CURRENT_USER")
        }
        _ => false,
    }
}

/// Whether expression `e` holds CURRENT_USER anywhere.
fn holds_current_user(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if is_current_user(x) {
            found = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found
}

/// Aliases every unaliased select item of `body` holding CURRENT_USER with
/// the name the planner would give it before the substitution.
fn keep_names(body: &mut ast::SetExpr) {
    match body {
        ast::SetExpr::Select(s) => {
            for item in &mut s.projection {
                if let ast::SelectItem::UnnamedExpr(e) = item {
                    if holds_current_user(e) {
                        let alias = ast::Ident::new(e.to_string());
                        *item = ast::SelectItem::ExprWithAlias {
                            expr: e.clone(),
                            alias,
                        };
                    }
                }
            }
        }
        ast::SetExpr::SetOperation { left, right, .. } => {
            keep_names(left);
            keep_names(right);
        }
        ast::SetExpr::Query(q) => keep_names(&mut q.body),
        _ => {}
    }
}

impl VisitorMut for DefinerIsCurrent {
    type Break = ();
    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
        keep_names(&mut q.body);
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        if is_current_user(e) {
            *e = ast::Expr::value(ast::Value::SingleQuotedString(self.0.clone()));
        }
        ControlFlow::Continue(())
    }
}

/// The refusal of a locking read through a view that cannot be locked.
fn unlockable(v: &ViewDef) -> SqlError {
    SqlError::unsupported(format!(
        "FOR UPDATE / LOCK IN SHARE MODE through view `{}`.`{}` (it is not mergeable)",
        v.db, v.name
    ))
}

/// Whether a view's text is one MariaDB merges into the query reading it
/// (so that query's row locks reach its tables).
fn mergeable_text(v: &ViewDef, q: &ast::Query) -> bool {
    if v.algorithm == rel::view::Algorithm::TempTable
        || q.with.is_some()
        || q.limit_clause.is_some()
        || q.fetch.is_some()
        || !q.locks.is_empty()
    {
        return false;
    }
    match &*q.body {
        ast::SetExpr::Select(s) => {
            s.distinct.is_none()
                && s.having.is_none()
                && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty())
        }
        _ => false,
    }
}

/// Whether a planned view body reads its rows straight (no aggregation,
/// window, DISTINCT, LIMIT or set operation between the rows and the view).
fn mergeable_plan(p: &super::SelectPlan) -> bool {
    straight(p)
        && p.lock.is_some()
        // A derived table in the body would be read without the locks
        // (nested views carry them: they are planned here too).
        && p.derived.iter().all(|d| d.lock.is_some())
}

/// A view's column names, and whether its planned body reads its rows
/// straight from its FROM clause (no aggregation, window, DISTINCT, LIMIT
/// or set operation): a condition of an updatable view (`crate::viewdml`,
/// which also requires its FROM clause to be one table or view).
pub(crate) fn straight_columns(st: &CatalogState, v: &ViewDef) -> Result<(bool, Vec<String>)> {
    let (p, _) = plan_view(st, v, &[], &|q| super::plan(q, st, Some(&v.db), &[]))?;
    Ok((
        straight(&p),
        p.columns.iter().map(|c| c.name.clone()).collect(),
    ))
}

/// A plan that reads its rows straight from its FROM clause.
fn straight(p: &super::SelectPlan) -> bool {
    p.agg.is_none()
        && p.window.is_none()
        && !p.distinct
        && p.limit.is_none()
        && p.offset.is_none()
        && p.union.is_empty()
        && p.sysview.is_none()
        && p.recursive.is_none()
}

/// A view's columns as a stand-in table (SHOW COLUMNS, information_schema).
pub fn view_table(st: &CatalogState, v: &ViewDef) -> Result<Arc<rel::catalog::Table>> {
    let (p, _) = plan_view(st, v, &[], &|q| super::plan(q, st, Some(&v.db), &[]))?;
    super::from::derived_table(&v.name, &p)
}

/// Whether an error planning a view's body means the view is invalid
/// (a table or column it names is gone): MySQL reports 1356 instead, naming
/// the outermost view (a 1356 of a view beneath is named again, so the
/// statement never learns what the view reads).
pub fn invalid_body(e: &SqlError) -> bool {
    matches!(
        e.code,
        crate::error::ER_NO_SUCH_TABLE
            | crate::error::ER_BAD_FIELD_ERROR
            | crate::error::ER_SP_DOES_NOT_EXIST
            | crate::error::ER_BAD_DB_ERROR
            | crate::error::ER_VIEW_INVALID
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
