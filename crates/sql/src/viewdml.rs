//! INSERT, UPDATE and DELETE through a view (MariaDB's updatable views).
//! A view is updatable when its body is one SELECT reading one table or
//! updatable view, with no aggregate, window function, DISTINCT, GROUP BY,
//! HAVING, LIMIT, set operation, WITH, or subquery in its select list, and
//! not ALGORITHM=TEMPTABLE; else 1288 (INSERT: 1471). The statement is rewritten onto the
//! table beneath: the view's column names become the body's expressions
//! (through every view down to the table) and the views' WHEREs are added
//! to the statement's, so it changes exactly the rows the view shows. A
//! view column that is an expression cannot be assigned (1348); INSERT
//! needs every view column to be a plain column (1471). `WITH [CASCADED |
//! LOCAL] CHECK OPTION` of the named view makes every row written satisfy
//! its WHERE (LOCAL) or the WHEREs of all views beneath too (CASCADED), as
//! MariaDB (which checks only the named view's option): 1369, also under
//! IGNORE. The statement's own expressions may name only the view's
//! columns (1054), and may hold no subquery (1235); an assigned column's
//! qualifier must name the view or its alias (`db.view` its database too),
//! else 1054 `Unknown column 'x.a' in 'SET'` as MariaDB.
use crate::error::{Result, SqlError};
use rel::catalog::CatalogState;
use rel::view::{CheckOption, ViewDef};
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// How deep a write may go through views over views.
const MAX_DEPTH: usize = 64;

/// Where a write through a view lands.
#[derive(Debug, Clone)]
pub struct Target {
    /// The base table (two-part name) and the alias the expressions use.
    table: ast::ObjectName,
    alias: Option<ast::TableAlias>,
    /// The view's columns: (name, expression over the base table).
    cols: Vec<(String, ast::Expr)>,
    /// The AND of the WHEREs of the views down to the table.
    filter: Option<ast::Expr>,
    /// The condition CHECK OPTION makes every written row satisfy.
    check: Option<ast::Expr>,
    /// The named view (`db`, `name`).
    db: String,
    name: String,
}

/// What a rewritten statement must also check (CHECK OPTION).
#[derive(Debug, Clone)]
pub struct Check {
    /// The view named (1369 names it).
    pub db: String,
    pub view: String,
    /// The condition over the base table's columns, qualified by `alias`.
    pub cond: ast::Expr,
    pub alias: String,
}

/// A rewritten statement's CHECK OPTION condition, if any.
pub type ViewCheck = Option<Check>;

/// Whether view `v` is updatable (information_schema.VIEWS.IS_UPDATABLE,
/// CREATE VIEW ... WITH CHECK OPTION).
pub fn updatable(st: &CatalogState, v: &ViewDef) -> bool {
    matches!(target(st, v, 0), Ok(Some(_)))
}

/// The table or view directly beneath updatable view `v` (its FROM), as
/// (database, name): what a write through `v` writes with the rights of
/// `v`'s definer. None when `v` is not updatable.
pub fn direct_source(st: &CatalogState, v: &ViewDef) -> Result<Option<(String, String)>> {
    if target(st, v, 0)?.is_none() {
        return Ok(None);
    }
    let q = crate::select::view::qualified(v)?;
    let ast::SetExpr::Select(s) = &*q.body else {
        return Ok(None);
    };
    let Some(ast::TableFactor::Table { name, .. }) = s.from.first().map(|f| &f.relation) else {
        return Ok(None);
    };
    Ok(match crate::stmt::name_parts(name).as_slice() {
        [d, n] => Some((d.clone(), n.clone())),
        _ => None,
    })
}

/// The target of a write through view `v`; None when it is not updatable.
fn target(st: &CatalogState, v: &ViewDef, depth: usize) -> Result<Option<Target>> {
    if depth >= MAX_DEPTH {
        return Err(SqlError::view_recursive(&v.db, &v.name));
    }
    if v.algorithm == rel::view::Algorithm::TempTable {
        return Ok(None);
    }
    let mut q = crate::select::view::qualified(v)?;
    // CURRENT_USER() in a DEFINER view's own text is its definer, as when
    // it is read (the statement's own text keeps the session's account).
    crate::select::view::definer_is_current(v, &mut q);
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() || !q.locks.is_empty() {
        return Ok(None);
    }
    let ast::SetExpr::Select(s) = &*q.body else {
        return Ok(None);
    };
    let grouped =
        !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty());
    if s.distinct.is_some()
        || grouped
        || s.having.is_some()
        || s.from.len() != 1
        || !s.from[0].joins.is_empty()
        || s.projection.iter().any(|p| match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                has_subquery(e)
            }
            _ => false,
        })
    {
        return Ok(None);
    }
    let ast::TableFactor::Table {
        name, alias, args, ..
    } = &s.from[0].relation
    else {
        return Ok(None);
    };
    if args.is_some() {
        return Ok(None);
    }
    let (straight, names) = crate::select::view::straight_columns(st, v)?;
    if !straight {
        return Ok(None);
    }
    let parts = crate::stmt::name_parts(name);
    let [d, n] = parts.as_slice() else {
        return Ok(None);
    };
    // The columns the body's FROM offers, and (a view beneath) its target.
    let (from_cols, inner) = match st.view(d, n) {
        Some(w) => {
            let w = w.clone();
            match target(st, &w, depth + 1)? {
                Some(t) => (t.cols.iter().map(|(c, _)| c.clone()).collect(), Some(t)),
                None => return Ok(None),
            }
        }
        None => match st.table(d, n) {
            Some(t) => (
                t.def
                    .columns
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
                None,
            ),
            None => return Err(SqlError::view_invalid(&v.db, &v.name)),
        },
    };
    // The body's select list, wildcards expanded, over the FROM's columns.
    let mut exprs = Vec::new();
    for p in &s.projection {
        match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                exprs.push(e.clone())
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => exprs.extend(
                from_cols
                    .iter()
                    .map(|c| ast::Expr::Identifier(ast::Ident::with_quote('`', c))),
            ),
            _ => return Ok(None),
        }
    }
    if exprs.len() != names.len() {
        return Err(SqlError::view_invalid(&v.db, &v.name));
    }
    let own_filter = s.selection.clone();
    let (table, alias, cols, filter, below) = match inner {
        None => (
            name.clone(),
            alias.clone(),
            names.into_iter().zip(exprs).collect::<Vec<_>>(),
            own_filter.clone(),
            None,
        ),
        Some(t) => {
            // Names in the body are the inner view's columns.
            let quals = qualifiers(n, alias.as_ref().map(|a| &a.name));
            let sub = |e: ast::Expr| substitute(e, &t.cols, &quals, false);
            let cols = names
                .into_iter()
                .zip(exprs)
                .map(|(c, e)| Ok((c, sub(e)?)))
                .collect::<Result<Vec<_>>>()?;
            let mine = own_filter.clone().map(sub).transpose()?;
            let filter = and(mine.clone(), t.filter.clone());
            (t.table, t.alias, cols, filter, Some(mine))
        }
    };
    let check = match v.check {
        CheckOption::None => None,
        CheckOption::Cascaded => filter.clone(),
        CheckOption::Local => match below {
            Some(mine) => mine,
            None => own_filter,
        },
    };
    Ok(Some(Target {
        table,
        alias,
        cols,
        filter,
        check: check.or_else(|| (v.check != CheckOption::None).then(|| number(1))),
        db: v.db.clone(),
        name: v.name.clone(),
    }))
}

/// The target of a write naming `name`, when it names a view: 1288 when
/// that view is not updatable (`verb`: UPDATE, DELETE), 1471 for INSERT
/// and REPLACE.
fn resolve(
    st: &CatalogState,
    cur_db: Option<&str>,
    name: &ast::ObjectName,
    verb: &str,
) -> Result<Option<Target>> {
    let Some(v) = crate::select::view::lookup(st, cur_db, name) else {
        return Ok(None);
    };
    match target(st, &v, 0)? {
        Some(t) => Ok(Some(t)),
        None if verb == "UPDATE" || verb == "DELETE" => Err(SqlError::not_updatable(&v.name, verb)),
        None => Err(SqlError::not_insertable(&v.name, verb)),
    }
}

/// UPDATE through a view, rewritten onto its table; None when the target
/// is no view.
pub fn update(
    u: &ast::Update,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Result<Option<(ast::Update, ViewCheck)>> {
    let ast::TableFactor::Table { name, alias, .. } = &u.table.relation else {
        return Ok(None);
    };
    let Some(t) = resolve(st, cur_db, name, "UPDATE")? else {
        return Ok(None);
    };
    refuse_subqueries(u.assignments.iter().map(|a| &a.value))?;
    refuse_subqueries(u.selection.iter())?;
    let quals = qualifiers(&t.name, alias.as_ref().map(|a| &a.name));
    let mut out = u.clone();
    out.table.relation = base_factor(&t);
    for a in &mut out.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        a.target = ast::AssignmentTarget::ColumnName(assigned(&t, n, &quals, "SET")?);
        a.value = substitute(a.value.clone(), &t.cols, &quals, true)?;
    }
    out.selection = and(
        t.filter.clone(),
        u.selection
            .clone()
            .map(|w| substitute(w, &t.cols, &quals, false))
            .transpose()?,
    );
    for o in &mut out.order_by {
        o.expr = substitute(o.expr.clone(), &t.cols, &quals, false)?;
    }
    Ok(Some((out, view_check(&t))))
}

/// DELETE through a view, rewritten onto its table; None when the target
/// is no view.
pub fn delete(
    d: &ast::Delete,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Result<Option<ast::Delete>> {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    let [twj] = from.as_slice() else {
        return Ok(None);
    };
    let ast::TableFactor::Table { name, alias, .. } = &twj.relation else {
        return Ok(None);
    };
    let Some(t) = resolve(st, cur_db, name, "DELETE")? else {
        return Ok(None);
    };
    refuse_subqueries(d.selection.iter())?;
    let quals = qualifiers(&t.name, alias.as_ref().map(|a| &a.name));
    let mut out = d.clone();
    let relation = base_factor(&t);
    match &mut out.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => {
            v[0].relation = relation
        }
    }
    out.selection = and(
        t.filter.clone(),
        d.selection
            .clone()
            .map(|w| substitute(w, &t.cols, &quals, false))
            .transpose()?,
    );
    for o in &mut out.order_by {
        o.expr = substitute(o.expr.clone(), &t.cols, &quals, false)?;
    }
    Ok(Some(out))
}

/// INSERT / REPLACE through a view, rewritten onto its table; None when
/// the target is no view.
pub fn insert(
    ins: &ast::Insert,
    st: &CatalogState,
    cur_db: Option<&str>,
) -> Result<Option<(ast::Insert, ViewCheck)>> {
    let ast::TableObject::TableName(name) = &ins.table else {
        return Ok(None);
    };
    let verb = if ins.replace_into {
        "REPLACE"
    } else {
        "INSERT"
    };
    let Some(t) = resolve(st, cur_db, name, verb)? else {
        return Ok(None);
    };
    let Some(v) = crate::select::view::lookup(st, cur_db, name) else {
        return Ok(None);
    };
    // Every column must be a plain column, each of its own.
    let mut base = Vec::new();
    for (_, e) in &t.cols {
        match column_of(e) {
            Some(c) if !base.iter().any(|b: &String| b.eq_ignore_ascii_case(&c)) => base.push(c),
            _ => return Err(SqlError::not_insertable(&v.name, verb)),
        }
    }
    let quals = qualifiers(&t.name, None);
    let mut out = ins.clone();
    out.table = ast::TableObject::TableName(t.table.clone());
    let listed: Vec<ast::ObjectName> = if ins.columns.is_empty() && ins.assignments.is_empty() {
        t.cols
            .iter()
            .map(|(c, _)| ast::ObjectName::from(vec![ast::Ident::new(c)]))
            .collect()
    } else {
        ins.columns.clone()
    };
    if !listed.is_empty() {
        out.columns = listed
            .iter()
            .map(|n| assigned(&t, n, &quals, "INSERT INTO"))
            .collect::<Result<Vec<_>>>()?;
    }
    for a in &mut out.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        refuse_subqueries(std::iter::once(&a.value))?;
        a.target = ast::AssignmentTarget::ColumnName(assigned(&t, n, &quals, "INSERT INTO")?);
        a.value = substitute(a.value.clone(), &t.cols, &quals, true)?;
    }
    if let Some(ast::OnInsert::DuplicateKeyUpdate(set)) = &mut out.on {
        for a in set {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            refuse_subqueries(std::iter::once(&a.value))?;
            a.target = ast::AssignmentTarget::ColumnName(assigned(&t, n, &quals, "UPDATE")?);
            a.value = substitute(a.value.clone(), &t.cols, &quals, true)?;
        }
    }
    Ok(Some((out, view_check(&t))))
}

fn view_check(t: &Target) -> ViewCheck {
    let alias = match &t.alias {
        Some(a) => a.name.value.clone(),
        None => crate::stmt::name_parts(&t.table).pop().unwrap_or_default(),
    };
    t.check.clone().map(|cond| Check {
        db: t.db.clone(),
        view: t.name.clone(),
        cond,
        alias,
    })
}

/// The FROM item of the rewritten statement: the base table under the
/// alias the expressions use.
fn base_factor(t: &Target) -> ast::TableFactor {
    ast::TableFactor::Table {
        name: t.table.clone(),
        alias: t.alias.clone(),
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_hints: vec![],
    }
}

/// The base column an assignment or INSERT column list names through the
/// view: 1054 for no view column, 1348 for an expression.
/// `place` names the clause in 1054 as MariaDB does (`SET`, `INSERT INTO`, `UPDATE`).
fn assigned(
    t: &Target,
    n: &ast::ObjectName,
    quals: &[String],
    place: &str,
) -> Result<ast::ObjectName> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| match p {
                ast::ObjectNamePart::Identifier(id) => id.value.clone(),
                other => other.to_string(),
            })
            .collect();
    let name = parts.last().cloned().unwrap_or_default();
    // A qualifier must name the view (or its alias), `db.view` its database too
    // (MariaDB: 1054 `Unknown column 'x.a' in 'SET'`).
    let qual_ok = match parts.as_slice() {
        [_] => true,
        [q, _] => quals.iter().any(|x| x.eq_ignore_ascii_case(q)),
        [db, q, _] => *db == t.db && quals.iter().any(|x| x.eq_ignore_ascii_case(q)),
        _ => false,
    };
    if !qual_ok {
        return Err(SqlError::unknown_column(parts.join("."), place));
    }
    let Some((_, e)) = t.cols.iter().find(|(c, _)| c.eq_ignore_ascii_case(&name)) else {
        return Err(SqlError::unknown_column(&name, "field list"));
    };
    match column_of(e) {
        Some(c) => Ok(ast::ObjectName::from(vec![ast::Ident::with_quote('`', c)])),
        None => Err(SqlError::column_not_updatable(&name)),
    }
}

/// The column a plain column reference names.
fn column_of(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Identifier(id) => Some(id.value.clone()),
        ast::Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()),
        ast::Expr::Nested(e) => column_of(e),
        _ => None,
    }
}

/// The names a column may be qualified with: the view's name, or the
/// statement's alias for it.
fn qualifiers(view: &str, alias: Option<&ast::Ident>) -> Vec<String> {
    match alias {
        Some(a) => vec![a.value.clone()],
        None => vec![view.to_string()],
    }
}

/// `a AND b` of what is present.
fn and(a: Option<ast::Expr>, b: Option<ast::Expr>) -> Option<ast::Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(ast::Expr::BinaryOp {
            left: Box::new(ast::Expr::Nested(Box::new(a))),
            op: ast::BinaryOperator::And,
            right: Box::new(ast::Expr::Nested(Box::new(b))),
        }),
        (a, b) => a.or(b),
    }
}

fn number(n: i64) -> ast::Expr {
    ast::Expr::Value(ast::Value::Number(n.to_string(), false).into())
}

fn has_subquery(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if matches!(
            x,
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. }
        ) {
            found = true;
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

fn refuse_subqueries<'a>(es: impl Iterator<Item = &'a ast::Expr>) -> Result<()> {
    for e in es {
        if has_subquery(e) {
            return Err(SqlError::unsupported(
                "a subquery in a write through a view",
            ));
        }
    }
    Ok(())
}

/// `e` with each reference to a view column (bare, or qualified by one of
/// `quals`) replaced by the column's expression; another name is 1054.
/// `default_ok`: a bare DEFAULT stays (an assigned value).
fn substitute(
    mut e: ast::Expr,
    cols: &[(String, ast::Expr)],
    quals: &[String],
    default_ok: bool,
) -> Result<ast::Expr> {
    struct Sub<'a> {
        cols: &'a [(String, ast::Expr)],
        quals: &'a [String],
        default_ok: bool,
        err: Option<SqlError>,
    }
    impl Sub<'_> {
        fn find(&self, name: &str) -> Option<ast::Expr> {
            self.cols
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(name))
                .map(|(_, e)| ast::Expr::Nested(Box::new(e.clone())))
        }
    }
    impl VisitorMut for Sub<'_> {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            let (name, qual) = match e {
                ast::Expr::Identifier(id) => {
                    if self.default_ok
                        && id.quote_style.is_none()
                        && id.value.eq_ignore_ascii_case("DEFAULT")
                    {
                        return ControlFlow::Continue(());
                    }
                    (id.value.clone(), None)
                }
                ast::Expr::CompoundIdentifier(p) if p.len() >= 2 => (
                    p[p.len() - 1].value.clone(),
                    Some(p[p.len() - 2].value.clone()),
                ),
                _ => return ControlFlow::Continue(()),
            };
            let qual_ok = qual
                .as_ref()
                .is_none_or(|q| self.quals.iter().any(|x| x.eq_ignore_ascii_case(q)));
            match self.find(&name).filter(|_| qual_ok) {
                Some(x) => {
                    *e = x;
                    ControlFlow::Continue(())
                }
                None => {
                    let shown = match qual {
                        Some(q) => format!("{q}.{name}"),
                        None => name,
                    };
                    self.err = Some(SqlError::unknown_column(&shown, "where clause"));
                    ControlFlow::Break(())
                }
            }
        }
    }
    let mut s = Sub {
        cols,
        quals,
        default_ok,
        err: None,
    };
    let _ = VisitMut::visit(&mut e, &mut s);
    match s.err {
        Some(err) => Err(err),
        None => Ok(e),
    }
}
