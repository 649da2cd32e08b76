//! The privileges a row statement needs table by table: SELECT on every
//! table it reads, INSERT/UPDATE/DELETE on the tables it writes (REPLACE
//! also DELETE, ON DUPLICATE KEY UPDATE also UPDATE). A multi-table UPDATE
//! writes the tables its SET assigns, a multi-table DELETE the tables it
//! lists (and, as MariaDB, needs SELECT on every table of its FROM); an
//! assignment or target that cannot be tied to one table needs the write
//! privilege on every table the statement changes from (stricter than
//! MySQL, never looser). An UPDATE or DELETE whose WHERE, SET values or
//! ORDER BY read a column of a table it writes needs SELECT on that table
//! (1143 naming the column, as MariaDB; an unqualified column of a
//! multi-table statement counts for every written table). A name a WITH
//! defines is not a table where that WITH is in scope (its own query
//! expression: later CTEs, itself if RECURSIVE, the body); a view is checked as itself
//! (its definer's privileges cover what it reads).
use crate::error::{Result, SqlError};
use crate::multidml::{delete_target, set_owner, FromName};
use crate::stmt::{name_parts, RowStmt};
use rel::catalog::privs as p;
use sqlparser::ast;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// How the tables of a statement are checked: `check(need, command, db,
/// table)` (1142 naming `command`), bare names in database `db`.
pub struct Tables<'a> {
    pub check: Box<TableCheck<'a>>,
    /// `column(db, table, column)`: SELECT on the table, else 1143.
    pub column: Box<ColumnCheck<'a>>,
    pub db: String,
}

type Name = (String, String);

/// `(need, command, db, table)`: the table check (1142 naming `command`).
pub type TableCheck<'a> = dyn Fn(u64, &str, &str, &str) -> Result<()> + 'a;
/// `(db, table, column)`: SELECT on a table whose column is read (1143).
pub type ColumnCheck<'a> = dyn Fn(&str, &str, &str) -> Result<()> + 'a;

impl Tables<'_> {
    fn split(&self, n: &ast::ObjectName) -> Name {
        let parts = name_parts(n);
        match parts.as_slice() {
            [d, t] => (d.clone(), t.clone()),
            [t] => (self.db.clone(), t.clone()),
            _ => (String::new(), parts.join(".")),
        }
    }
}

/// One query expression being visited: the names its WITH defines and how
/// many of them are in scope at the point visited (a CTE's definition sees
/// the CTEs before it, and itself only WITH RECURSIVE; the body sees all).
struct Frame {
    names: Vec<String>,
    /// The CTE definitions' queries, to know when one is entered.
    defs: Vec<*const ast::Query>,
    recursive: bool,
    visible: usize,
    /// Set on a CTE definition's frame: its index in the parent's WITH.
    cte_of: Option<usize>,
}

/// The tables a statement names, skipping one-part names that a WITH in
/// scope at that point defines (as the planner applies them: only inside
/// their own query expression, never in a non-recursive CTE's own
/// definition, never outside).
struct Scoped<'a, 'b> {
    t: &'a Tables<'b>,
    stack: Vec<Frame>,
    out: Vec<Name>,
}

impl ast::Visitor for Scoped<'_, '_> {
    type Break = ();
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        let ptr = q as *const ast::Query;
        let mut cte_of = None;
        if let Some(top) = self.stack.last_mut() {
            if let Some(k) = top.defs.iter().position(|d| *d == ptr) {
                top.visible = if top.recursive { k + 1 } else { k };
                cte_of = Some(k);
            }
        }
        let (names, defs, recursive) = match &q.with {
            Some(w) => (
                w.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.clone())
                    .collect(),
                w.cte_tables
                    .iter()
                    .map(|c| &*c.query as *const ast::Query)
                    .collect(),
                w.recursive,
            ),
            None => (Vec::new(), Vec::new(), false),
        };
        // Names become visible as their definitions are passed; a WITH
        // whose definitions are never entered stays hidden (stricter).
        let visible = if names.is_empty() {
            0
        } else {
            usize::from(recursive)
        };
        self.stack.push(Frame {
            names,
            defs,
            recursive,
            visible,
            cte_of,
        });
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
        if let Some(Frame {
            cte_of: Some(k), ..
        }) = self.stack.pop()
        {
            if let Some(top) = self.stack.last_mut() {
                top.visible = (k + 1).min(top.names.len());
            }
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_relation(&mut self, r: &ast::ObjectName) -> ControlFlow<()> {
        let parts = name_parts(r);
        let cte = parts.len() == 1
            && self.stack.iter().any(|f| {
                f.names[..f.visible.min(f.names.len())]
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(&parts[0]))
            });
        if !cte {
            self.out.push(self.t.split(r));
        }
        ControlFlow::Continue(())
    }
}

/// The tables a statement names (not the CTEs in scope where they are
/// named), in order of appearance.
fn relations<V: ast::Visit>(t: &Tables, v: &V) -> Vec<Name> {
    let mut s = Scoped {
        t,
        stack: Vec::new(),
        out: Vec::new(),
    };
    let _ = v.visit(&mut s);
    s.out
}

/// The tables query `q` reads, bare names in database `db` (CTE names in
/// scope skipped): what a view's definer must hold SELECT on.
pub fn tables_read(q: &ast::Query, db: &str) -> Vec<(String, String)> {
    let t = Tables {
        check: Box::new(|_, _, _, _| Ok(())),
        column: Box::new(|_, _, _| Ok(())),
        db: db.to_string(),
    };
    relations(&t, q)
}

/// The FROM items of an UPDATE or DELETE: alias (or table name) → the
/// base table (`None`: a derived table).
fn aliases(t: &Tables, list: &[&ast::TableWithJoins], out: &mut BTreeMap<String, Option<Name>>) {
    fn factor(t: &Tables, f: &ast::TableFactor, out: &mut BTreeMap<String, Option<Name>>) {
        match f {
            ast::TableFactor::Table { name, alias, .. } => {
                let n = t.split(name);
                let key = alias
                    .as_ref()
                    .map_or_else(|| n.1.clone(), |a| a.name.value.clone());
                out.insert(key, Some(n));
            }
            ast::TableFactor::Derived { alias: Some(a), .. } => {
                out.insert(a.name.value.clone(), None);
            }
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => aliases(t, &[table_with_joins], out),
            _ => {}
        }
    }
    for twj in list {
        factor(t, &twj.relation, out);
        for j in &twj.joins {
            factor(t, &j.relation, out);
        }
    }
}

/// The base table an UPDATE column or a DELETE target names through the
/// FROM items (`Err`: cannot be told, so every base table counts).
fn resolve(
    t: &Tables,
    parts: &[String],
    from: &BTreeMap<String, Option<Name>>,
) -> std::result::Result<Option<Name>, ()> {
    match parts {
        [q] | [q, _] if parts.len() == 1 || !q.is_empty() => {
            // A qualifier (or a DELETE target): an alias or a table name.
            let hit = from
                .get(q)
                .or_else(|| {
                    from.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(q))
                        .map(|(_, v)| v)
                })
                .cloned();
            hit.ok_or(())
        }
        [d, tb, _] => Ok(Some((d.clone(), tb.clone()))),
        [d, tb] if d.is_empty() => Ok(Some((t.db.clone(), tb.clone()))),
        _ => Err(()),
    }
}

/// The FROM items of a multi-table statement in the planner's order
/// (`multidml::from_tables`), as its targets name them.
fn from_names(t: &Tables, list: &[&ast::TableWithJoins]) -> Vec<FromName> {
    fn factor(t: &Tables, f: &ast::TableFactor, out: &mut Vec<FromName>) {
        let alias = |a: &Option<ast::TableAlias>| a.as_ref().map(|a| a.name.value.clone());
        match f {
            ast::TableFactor::Table { name, alias: a, .. } => out.push(FromName {
                table: Some(t.split(name)),
                alias: alias(a),
            }),
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => walk(t, table_with_joins, out),
            ast::TableFactor::Derived { alias: a, .. } => out.push(FromName {
                table: None,
                alias: alias(a),
            }),
            // Refused by the planner; named by nothing here.
            _ => out.push(FromName {
                table: None,
                alias: None,
            }),
        }
    }
    fn walk(t: &Tables, twj: &ast::TableWithJoins, out: &mut Vec<FromName>) {
        factor(t, &twj.relation, out);
        for j in &twj.joins {
            factor(t, &j.relation, out);
        }
    }
    let mut out = Vec::new();
    for twj in list {
        walk(t, twj, &mut out);
    }
    out
}

/// Every base table of the FROM items.
fn all_bases(from: &BTreeMap<String, Option<Name>>) -> Vec<Name> {
    from.values().flatten().cloned().collect()
}

/// The columns an expression reads outside its subqueries (which are
/// checked as queries of their own): (qualifier parts, column).
#[derive(Default)]
struct Reads {
    depth: usize,
    cols: Vec<(Vec<String>, String)>,
}

impl ast::Visitor for Reads {
    type Break = ();
    fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        match e {
            ast::Expr::Identifier(i) => self.cols.push((vec![], i.value.clone())),
            ast::Expr::CompoundIdentifier(parts) if parts.len() > 1 => {
                let n = parts.len() - 1;
                self.cols.push((
                    parts[..n].iter().map(|p| p.value.clone()).collect(),
                    parts[n].value.clone(),
                ));
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

fn reads<V: ast::Visit>(r: &mut Reads, v: &V) {
    let _ = v.visit(r);
}

/// The join conditions of FROM items (they read columns too).
fn join_conditions<'x>(list: &[&'x ast::TableWithJoins], out: &mut Vec<&'x ast::Expr>) {
    for twj in list {
        for j in &twj.joins {
            use ast::{JoinConstraint as C, JoinOperator as O};
            let c = match &j.join_operator {
                O::Join(c)
                | O::Inner(c)
                | O::Left(c)
                | O::LeftOuter(c)
                | O::Right(c)
                | O::RightOuter(c)
                | O::FullOuter(c)
                | O::StraightJoin(c) => c,
                _ => continue,
            };
            if let C::On(e) = c {
                out.push(e);
            }
        }
        if let ast::TableFactor::NestedJoin {
            table_with_joins, ..
        } = &twj.relation
        {
            join_conditions(&[table_with_joins], out);
        }
    }
}

/// 1143 unless every written table whose columns `r` reads has SELECT.
fn check_reads(
    t: &Tables,
    r: &Reads,
    targets: &[Name],
    from: &BTreeMap<String, Option<Name>>,
) -> Result<()> {
    for (q, col) in &r.cols {
        let owners: Vec<Name> = if q.is_empty() {
            targets.to_vec()
        } else {
            match resolve(t, q, from) {
                Ok(Some(n)) => vec![n],
                Ok(None) => vec![],
                Err(()) if q.len() == 2 => vec![(q[0].clone(), q[1].clone())],
                Err(()) => vec![],
            }
        };
        for (db, tb) in owners.iter().filter(|n| targets.contains(n)) {
            (t.column)(db, tb, col)?;
        }
    }
    Ok(())
}

/// The targets of an UPDATE: the tables its SET assigns. A multi-table
/// UPDATE's qualifier naming no table of the join is 1054 before any
/// privilege (MariaDB's order; a single-table UPDATE checks the table
/// first).
fn update_targets(t: &Tables, u: &ast::Update) -> Result<Vec<Name>> {
    let mut own = BTreeMap::new();
    aliases(t, &[&u.table], &mut own);
    let multi = crate::multidml::is_multi_update(u);
    let items = from_names(t, &[&u.table]);
    let item_refs: Vec<&FromName> = items.iter().collect();
    let mut targets = Vec::new();
    let mut cols = Vec::new();
    for a in &u.assignments {
        match &a.target {
            ast::AssignmentTarget::ColumnName(c) => cols.push(c),
            ast::AssignmentTarget::Tuple(cs) => cols.extend(cs.iter()),
        }
    }
    for c in cols {
        let parts = name_parts(c);
        let r = match parts.len() {
            // A bare column: the one table being updated, else each.
            1 => {
                let bases = all_bases(&own);
                if bases.len() == 1 && own.len() == 1 {
                    Ok(bases.into_iter().next())
                } else {
                    Err(())
                }
            }
            0 => Err(()),
            // As the planner: the qualifier names an item of the join.
            n => match set_owner(&item_refs, &parts[..n - 1]) {
                Some(i) => Ok(items[i].table.clone()),
                None if multi => {
                    return Err(SqlError::unknown_column(parts.join("."), "SET"));
                }
                None => Err(()),
            },
        };
        match r {
            Ok(Some(n)) => targets.push(n),
            Ok(None) => {}
            Err(()) => targets.extend(all_bases(&own)),
        }
    }
    targets.sort();
    targets.dedup();
    Ok(targets)
}

/// What an UPDATE or DELETE reads besides its tables: (the FROM items by
/// alias, the columns read).
fn update_reads(t: &Tables, u: &ast::Update) -> (BTreeMap<String, Option<Name>>, Reads) {
    let mut from = BTreeMap::new();
    let mut list = vec![&u.table];
    if let Some(ast::UpdateTableFromKind::BeforeSet(v) | ast::UpdateTableFromKind::AfterSet(v)) =
        &u.from
    {
        list.extend(v.iter());
    }
    aliases(t, &list, &mut from);
    let mut r = Reads::default();
    for a in &u.assignments {
        reads(&mut r, &a.value);
    }
    reads(&mut r, &u.selection);
    reads(&mut r, &u.order_by);
    let mut on = Vec::new();
    join_conditions(&list, &mut on);
    for e in on {
        reads(&mut r, e);
    }
    (from, r)
}

/// Checks a row statement's tables.
pub fn rows(t: &Tables, r: &RowStmt) -> Result<()> {
    let names: Vec<Name>;
    let mut targets = Vec::new();
    let mut first: (u64, &str) = (0, "");
    // Written tables that are also read by name (a multi-table DELETE's).
    let mut targets_read = false;
    let mut column_reads: Option<(BTreeMap<String, Option<Name>>, Reads)> = None;
    match r {
        RowStmt::Select(q) => names = relations(t, q.as_ref()),
        RowStmt::Insert(i) => {
            if let ast::TableObject::TableName(n) = &i.table {
                targets.push(t.split(n));
            }
            names = relations(t, i.as_ref());
            first = (p::INSERT, "INSERT");
        }
        RowStmt::Update(u) => {
            let (from, rd) = update_reads(t, u);
            targets = update_targets(t, u)?;
            names = relations(t, u.as_ref());
            first = (p::UPDATE, "UPDATE");
            column_reads = Some((from, rd));
        }
        RowStmt::Delete(d, _) => {
            let mut from = BTreeMap::new();
            let list: Vec<&ast::TableWithJoins> = match &d.from {
                ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => {
                    v.iter().collect()
                }
            };
            let mut all = list.clone();
            if let Some(u) = &d.using {
                all.extend(u.iter());
            }
            aliases(t, &all, &mut from);
            let multi = !d.tables.is_empty() || d.using.is_some();
            if !multi {
                match list.first().map(|f| &f.relation) {
                    Some(ast::TableFactor::Table { name, .. }) => targets.push(t.split(name)),
                    _ => targets.extend(all_bases(&from)),
                }
            } else {
                // As the planner: `DELETE t1, t2 FROM <join>` or `DELETE
                // FROM t1, t2 USING <join>`; each target names an item of
                // the join (`multidml::delete_target`: 1109 for none, before
                // any privilege, as MariaDB).
                let mut names = Vec::new();
                let join: Vec<&ast::TableWithJoins> = match &d.using {
                    Some(u) => {
                        for f in &list {
                            match &f.relation {
                                ast::TableFactor::Table { name, .. } => names.push(Some(name)),
                                _ => names.push(None),
                            }
                        }
                        u.iter().collect()
                    }
                    None => {
                        names.extend(d.tables.iter().map(Some));
                        list.clone()
                    }
                };
                let items = from_names(t, &join);
                let item_refs: Vec<&FromName> = items.iter().collect();
                let cur = (!t.db.is_empty()).then_some(t.db.as_str());
                for n in names {
                    match n {
                        Some(n) => {
                            let i = delete_target(&item_refs, &name_parts(n), cur)?;
                            targets.extend(items[i].table.clone());
                        }
                        None => targets.extend(all_bases(&from)),
                    }
                }
            }
            targets.sort();
            targets.dedup();
            names = relations(t, d.as_ref());
            first = (p::DELETE, "DELETE");
            targets_read = multi;
            let mut rd = Reads::default();
            reads(&mut rd, &d.selection);
            reads(&mut rd, &d.order_by);
            let mut on = Vec::new();
            join_conditions(&all, &mut on);
            for e in on {
                reads(&mut rd, e);
            }
            column_reads = Some((from, rd));
        }
    }
    // REPLACE also deletes, ON DUPLICATE KEY UPDATE also updates (MySQL's rule).
    let mut extra: Vec<(u64, &str)> = Vec::new();
    if let RowStmt::Insert(i) = r {
        if i.replace_into {
            extra.push((p::DELETE, "DELETE"));
        }
        if matches!(i.on, Some(ast::OnInsert::DuplicateKeyUpdate(_))) {
            extra.push((p::UPDATE, "UPDATE"));
        }
    }
    for (db, tb) in &targets {
        for (need, cmd) in std::iter::once(first).chain(extra.iter().copied()) {
            (t.check)(need, cmd, db, tb)?;
        }
    }
    // Every other table named is read: SELECT (a target named once more,
    // as INSERT INTO t SELECT ... FROM t, is read too).
    let mut unread: Vec<&Name> = if targets_read {
        Vec::new()
    } else {
        targets.iter().collect()
    };
    for n in &names {
        if let Some(i) = unread.iter().position(|x| *x == n) {
            unread.remove(i);
            continue;
        }
        (t.check)(p::SELECT, "SELECT", &n.0, &n.1)?;
    }
    if let Some((from, rd)) = column_reads {
        check_reads(t, &rd, &targets, &from)?;
    }
    Ok(())
}
