//! WITH RECURSIVE: a common table expression whose UNION has branches
//! reading the CTE itself. `mark` checks its shape where the WITH clause is
//! inlined (anchors: the branches that do not read it, 4005 without one;
//! MariaDB's 4008 for aggregates, window functions, GROUP BY/HAVING or a
//! reference inside a subquery of a recursive SELECT; MySQL's 1235 for
//! ORDER BY, LIMIT, DISTINCT there or two references), renames the
//! self-references to its work table and tags the query; `plan_cte` plans
//! the anchors (which give the column names and types) and the recursive
//! SELECTs over the work table; `run` iterates: each round the recursive
//! SELECTs read the rows the previous round added (converted to the
//! anchors' column types, as MySQL stores them, so a string that outgrows
//! its column is 1406), until a round adds none. `UNION DISTINCT` drops rows
//! already produced. More productive rounds than cte_max_recursion_depth
//! (MySQL's, default 1000; MariaDB's max_recursive_iterations names it too) is
//! MySQL's error 3636 (MariaDB only warns and cuts the result), and the rows
//! stay within the derived-table memory bound (1114): a recursion never runs
//! forever or exhausts memory.
use super::sub::{union_rest, Held};
use super::{exec, SelectPlan};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::result::ColumnInfo;
use rel::value::Value;
use sqlparser::ast::{self, Visit, VisitMut, Visitor, VisitorMut};
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use txn::Txn;

/// A recursive part of a plan.
#[derive(Debug, Clone)]
pub enum Rec {
    /// A recursive CTE: the plan itself and its `union` are the anchors.
    Cte(RecCte),
    /// Reads the rows recursive CTE `id`'s previous round added.
    Work(usize),
}

/// A recursive CTE's recursive SELECTs.
#[derive(Debug, Clone)]
pub struct RecCte {
    pub id: usize,
    pub name: String,
    pub steps: Vec<SelectPlan>,
    /// A UNION DISTINCT joins the recursive SELECTs: rows already produced
    /// are dropped.
    pub distinct: bool,
}

const TAG: &str = "__strata_recursive";
const COL: &str = "__strata_col";
const WORK: &str = "__strata_rec_";

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The work tables of the recursive CTEs being planned: id and columns.
    static PLANNING: RefCell<Vec<(usize, Vec<ColumnInfo>)>> = const { RefCell::new(Vec::new()) };
}

/// True when `q` (a CTE body) reads the table `name` (unqualified).
pub(super) fn refers_to(q: &ast::Query, name: &str) -> bool {
    let mut r = Refs { name, n: 0 };
    let _ = Visit::visit(q, &mut r);
    r.n > 0
}

/// Counts the unqualified references to a table name.
struct Refs<'a> {
    name: &'a str,
    n: usize,
}

impl Visitor for Refs<'_> {
    type Break = ();
    fn pre_visit_table_factor(&mut self, t: &ast::TableFactor) -> ControlFlow<()> {
        if is_ref(t, self.name) {
            self.n += 1;
        }
        ControlFlow::Continue(())
    }
}

fn is_ref(t: &ast::TableFactor, name: &str) -> bool {
    matches!(t, ast::TableFactor::Table { name: n, .. }
        if matches!(n.0.as_slice(), [ast::ObjectNamePart::Identifier(i)] if i.value.eq_ignore_ascii_case(name)))
}

/// Checks a recursive CTE `name`'s body and returns it ready to inline:
/// self-references renamed to the work table, tagged with its id and its
/// column list (`cols`).
pub(super) fn mark(
    mut q: ast::Query,
    name: &str,
    cols: &[ast::TableAliasColumnDef],
) -> Result<ast::Query> {
    if q.order_by.is_some() || q.limit_clause.is_some() {
        return Err(SqlError::unsupported(
            "ORDER BY / LIMIT over the UNION of a recursive common table expression",
        ));
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let work = format!("{WORK}{id}");
    let mut anchors = 0;
    each_leaf(&mut q.body, &mut |leaf| {
        let mut all = Refs { name, n: 0 };
        let _ = Visit::visit(&*leaf, &mut all);
        if all.n == 0 {
            anchors += 1;
            return Ok(());
        }
        let ast::SetExpr::Select(sel) = leaf else {
            // A parenthesized query with ORDER BY / LIMIT (MySQL refuses
            // these in the recursive part).
            return Err(SqlError::unsupported(
                "ORDER BY / LIMIT in the recursive SELECT of a common table expression",
            ));
        };
        check_step(sel, name, all.n)?;
        let _ = VisitMut::visit(&mut **sel, &mut Rename { name, work: &work });
        Ok(())
    })?;
    if anchors == 0 {
        return Err(SqlError::cte_no_anchor(name));
    }
    let mut settings = vec![ast::Setting {
        key: ast::Ident::new(TAG),
        value: ast::Expr::value(ast::Value::Number(id.to_string(), false)),
    }];
    settings.push(ast::Setting {
        key: ast::Ident::new(TAG),
        value: ast::Expr::Identifier(ast::Ident::new(name)),
    });
    for c in cols {
        settings.push(ast::Setting {
            key: ast::Ident::new(COL),
            value: ast::Expr::Identifier(c.name.clone()),
        });
    }
    q.settings = Some(settings);
    Ok(q)
}

/// Calls `f` on each SELECT of a UNION body, in order (other set
/// operations: 1235).
fn each_leaf(
    e: &mut ast::SetExpr,
    f: &mut dyn FnMut(&mut ast::SetExpr) -> Result<()>,
) -> Result<()> {
    let plain_parens = matches!(e, ast::SetExpr::Query(q)
        if q.order_by.is_none() && q.limit_clause.is_none() && q.with.is_none());
    match e {
        ast::SetExpr::SetOperation {
            left, op, right, ..
        } => {
            if *op != ast::SetOperator::Union {
                return Err(SqlError::unsupported(format!("{op} in a recursive CTE")));
            }
            each_leaf(left, f)?;
            each_leaf(right, f)
        }
        ast::SetExpr::Query(q) if plain_parens => each_leaf(&mut q.body, f),
        other => f(other),
    }
}

/// The restrictions on a recursive SELECT reading the CTE `refs` times.
fn check_step(sel: &ast::Select, name: &str, refs: usize) -> Result<()> {
    let restricted = || SqlError::cte_restricted(name);
    // References in its FROM clause itself (not in subqueries or derived
    // tables), and never as the inner side of an outer join.
    // (A reference inside a derived table or parenthesized join of its
    // FROM, which MariaDB reads, is not built: 1235.)
    let nested = || {
        SqlError::unsupported("a recursive CTE read inside a derived table of its recursive SELECT")
    };
    let mut direct = 0;
    for twj in &sel.from {
        if is_ref(&twj.relation, name) {
            direct += 1;
        } else if refers_in_factor(&twj.relation, name) {
            return Err(nested());
        }
        for j in &twj.joins {
            if is_ref(&j.relation, name) {
                use ast::JoinOperator as J;
                if !matches!(
                    j.join_operator,
                    J::Join(_) | J::Inner(_) | J::CrossJoin(_) | J::StraightJoin(_)
                ) {
                    return Err(restricted());
                }
                direct += 1;
            } else if refers_in_factor(&j.relation, name) {
                return Err(nested());
            }
        }
    }
    if direct != refs {
        return Err(restricted());
    }
    if refs > 1 {
        return Err(SqlError::unsupported(
            "more than one reference to a recursive CTE in one recursive SELECT",
        ));
    }
    let grouped = !matches!(&sel.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    if grouped || sel.having.is_some() || aggregates(sel) {
        return Err(restricted());
    }
    if sel.distinct.is_some() {
        return Err(SqlError::unsupported(
            "DISTINCT in the recursive SELECT of a common table expression",
        ));
    }
    Ok(())
}

fn refers_in_factor(t: &ast::TableFactor, name: &str) -> bool {
    let mut r = Refs { name, n: 0 };
    let _ = Visit::visit(t, &mut r);
    r.n > 0
}

/// An aggregate or window function in the select list or ORDER BY of `sel`.
fn aggregates(sel: &ast::Select) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(&sel.projection, |e| {
        if let ast::Expr::Function(f) = e {
            if f.over.is_some() || super::alias::is_aggregate(&f.name.to_string()) {
                found = true;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

/// Renames the self-references of a recursive SELECT to the work table
/// (keeping the CTE's name, or the alias, as the name columns are
/// qualified with).
struct Rename<'a> {
    name: &'a str,
    work: &'a str,
}

impl VisitorMut for Rename<'_> {
    type Break = ();
    fn pre_visit_table_factor(&mut self, t: &mut ast::TableFactor) -> ControlFlow<()> {
        if is_ref(t, self.name) {
            if let ast::TableFactor::Table { name, alias, .. } = t {
                if alias.is_none() {
                    *alias = Some(ast::TableAlias {
                        explicit: false,
                        at: None,
                        name: match name.0.first() {
                            Some(ast::ObjectNamePart::Identifier(i)) => i.clone(),
                            _ => ast::Ident::new(self.name),
                        },
                        columns: vec![],
                    });
                }
                *name = ast::ObjectName(vec![ast::ObjectNamePart::Identifier(ast::Ident::new(
                    self.work,
                ))]);
            }
        }
        ControlFlow::Continue(())
    }
}

/// True for a query `mark` tagged (a recursive CTE's body).
pub(super) fn is_marked(q: &ast::Query) -> bool {
    q.settings
        .as_ref()
        .is_some_and(|s| s.first().is_some_and(|x| x.key.value == TAG))
}

/// Plans a tagged recursive CTE body: anchors through `plan`, then the
/// recursive SELECTs with the work table known.
pub(super) fn plan_cte(
    q: &ast::Query,
    plan: &dyn Fn(&ast::Query) -> Result<SelectPlan>,
) -> Result<SelectPlan> {
    let settings = q.settings.clone().unwrap_or_default();
    let id = match settings.first().map(|s| &s.value) {
        Some(ast::Expr::Value(v)) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<usize>().ok(),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| SqlError::internal("recursive CTE tag"))?;
    let name = match settings.get(1).map(|s| &s.value) {
        Some(ast::Expr::Identifier(i)) => i.value.clone(),
        _ => return Err(SqlError::internal("recursive CTE tag")),
    };
    let cols: Vec<String> = settings
        .iter()
        .filter(|s| s.key.value == COL)
        .filter_map(|s| match &s.value {
            ast::Expr::Identifier(i) => Some(i.value.clone()),
            _ => None,
        })
        .collect();
    let mut q = q.clone();
    q.settings = None;
    let work = format!("{WORK}{id}");
    let mut anchors = Vec::new();
    let mut anchor_flags = Vec::new();
    let mut steps = Vec::new();
    let mut distinct = false;
    for (d, b) in super::setop::union_branches(&q)? {
        if refers_to(&b, &work) {
            distinct |= d;
            steps.push(b);
        } else {
            anchors.push(plan(&b)?);
            anchor_flags.push(d);
        }
    }
    let mut columns = super::setop::union_columns(&anchors)?;
    if !cols.is_empty() {
        if cols.len() != columns.len() {
            return Err(SqlError::cte_wrong_list());
        }
        for (c, n) in columns.iter_mut().zip(cols) {
            c.name = n;
        }
    }
    let mut rest = anchors.split_off(1).into_iter();
    let Some(mut first) = anchors.pop() else {
        return Err(SqlError::cte_no_anchor(&name));
    };
    first.columns = columns.clone();
    first.union = anchor_flags[1..]
        .iter()
        .copied()
        .zip(rest.by_ref())
        .collect();
    PLANNING.with(|p| p.borrow_mut().push((id, columns.clone())));
    let planned: Result<Vec<SelectPlan>> = steps.iter().map(plan).collect();
    PLANNING.with(|p| p.borrow_mut().retain(|(i, _)| *i != id));
    let planned = planned?;
    if planned.iter().any(|p| p.columns.len() != columns.len()) {
        return Err(SqlError::union_column_count());
    }
    first.recursive = Some(Box::new(Rec::Cte(RecCte {
        id,
        name,
        steps: planned,
        distinct,
    })));
    Ok(first)
}

/// The columns of the work table a FROM item names, if it names one
/// being planned.
pub(super) fn work_columns(name: &ast::ObjectName) -> Option<(usize, Vec<ColumnInfo>)> {
    let [ast::ObjectNamePart::Identifier(i)] = name.0.as_slice() else {
        return None;
    };
    let id: usize = i.value.strip_prefix(WORK)?.parse().ok()?;
    PLANNING.with(|p| {
        p.borrow()
            .iter()
            .find(|(x, _)| *x == id)
            .map(|(x, c)| (*x, c.clone()))
    })
}

/// Materializes a recursive CTE: its anchors' rows, then rounds of its
/// recursive SELECTs over the previous round's rows until one adds none.
pub(super) fn run(
    p: &SelectPlan,
    c: &RecCte,
    txn: &mut Txn,
    env: &dyn Env,
    mut held: Held,
) -> Result<Vec<Vec<Value>>> {
    exec::execute_counted(p, txn, env, &mut held, None)?;
    union_rest(p, txn, env, &mut held)?;
    // max_recursive_iterations (MariaDB's name) is the same variable.
    let var = "cte_max_recursion_depth";
    let limit = env
        .sys_var(var, false)
        .and_then(|x| x.to_i128())
        .map_or(1000, |n| n.clamp(0, u32::MAX as i128) as u64);
    // Rows of the recursive SELECTs are stored as the anchors' column types.
    let cols: Vec<Option<rel::schema::Column>> = p
        .columns
        .iter()
        .map(|ci| {
            (!matches!(ci.ty, crate::result::OutType::Null)).then(|| {
                rel::schema::Column::plain(&ci.name, crate::types::column_type(ci.ty.clone()))
            })
        })
        .collect();
    let colls: Vec<_> = (0..p.out.len())
        .map(|i| p.out_colls.get(i).copied().flatten())
        .collect();
    let image = |r: &[Value]| {
        let mut k = Vec::new();
        for (i, v) in r.iter().enumerate() {
            crate::collate::image(v, colls.get(i).copied().flatten(), &mut k);
        }
        k
    };
    let mut seen = std::collections::HashSet::new();
    if c.distinct {
        held.rows.retain(|r| seen.insert(image(r)));
    }
    let mut start = 0;
    let mut rounds: u64 = 0;
    loop {
        if start == held.rows.len() {
            break;
        }
        env.check_interrupt()?;
        let w = WorkEnv {
            inner: env,
            id: c.id,
            rows: held.rows[start..].to_vec(),
        };
        let before = held.rows.len();
        for s in &c.steps {
            exec::execute_counted(s, txn, &w, &mut held, None)?;
        }
        let new = held.rows.split_off(before);
        for (n, row) in new.into_iter().enumerate() {
            let mut out = Vec::with_capacity(row.len());
            for (v, col) in row.into_iter().zip(&cols) {
                out.push(match col {
                    Some(col) => crate::convert::for_store(v, col, before + n + 1)?,
                    None => v,
                });
            }
            if !c.distinct || seen.insert(image(&out)) {
                held.rows.push(out);
            }
        }
        if held.rows.len() > before {
            rounds += 1;
            if rounds > limit {
                return Err(SqlError::cte_max_depth(rounds, var));
            }
        }
        start = before;
    }
    Ok(held.rows)
}

/// The statement's environment with one recursive CTE's work table.
struct WorkEnv<'e> {
    inner: &'e dyn Env,
    id: usize,
    rows: Vec<Vec<Value>>,
}

impl Env for WorkEnv<'_> {
    crate::env::forward_session_env!(inner);
    fn subquery(&self, k: usize) -> Option<&crate::subquery::SubResult> {
        self.inner.subquery(k)
    }
    fn derived(&self, k: usize) -> Option<&[Vec<Value>]> {
        self.inner.derived(k)
    }
    fn derived_index(&self, k: usize) -> Option<&crate::hashjoin::HashIndex> {
        self.inner.derived_index(k)
    }
    fn work_table(&self, id: usize) -> Option<&[Vec<Value>]> {
        if id == self.id {
            Some(&self.rows)
        } else {
            self.inner.work_table(id)
        }
    }
}
