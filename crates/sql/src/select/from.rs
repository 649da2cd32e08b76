//! The FROM clause of a SELECT: table names resolved against the catalog,
//! derived tables planned and described by stand-in tables, ON conditions
//! bound, and the join order adjusted so that a derived table is read before
//! a table it can probe on its key.
use super::SelectPlan;
use crate::access;
use crate::bind::{Binder, Scope, SubPlanner};
use crate::error::{Result, SqlError};
use crate::expr::Expr;
use rel::catalog::{CatalogState, Table};
use rel::schema::Column;
use sqlparser::ast;
use std::sync::Arc;

/// What the FROM clause needs from the query being planned.
pub(super) struct FromCtx<'a> {
    pub st: &'a CatalogState,
    pub cur_db: Option<&'a str>,
    pub params: &'a [(u64, u64)],
    /// Plans subqueries in ON conditions.
    pub sub: &'a dyn SubPlanner,
    /// Plans a derived table's query.
    pub plan_derived: &'a dyn Fn(&ast::Query) -> Result<SelectPlan>,
    /// Plans a view's body: as a derived table, but with no outer query's
    /// columns in scope (a view means the same wherever it is read).
    pub plan_view: &'a dyn Fn(&ast::Query) -> Result<SelectPlan>,
    /// The query's FOR UPDATE / LOCK IN SHARE MODE (views read under it).
    pub locks: &'a [ast::LockClause],
}

/// Resolves a table name against the catalog and current database.
pub fn resolve_table(
    st: &CatalogState,
    cur_db: Option<&str>,
    name: &ast::ObjectName,
) -> Result<Arc<Table>> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => Ok(i.value.clone()),
            _ => Err(SqlError::unsupported("computed table names")),
        })
        .collect::<Result<_>>()?;
    let (db, t) = match parts.as_slice() {
        [t] => (cur_db.ok_or_else(SqlError::no_db)?.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::parse("bad table name")),
    };
    if let Some(u) = st.unreadable.get(&(db.clone(), t.clone())) {
        return Err(rel::Error::Unreadable(format!("{db}.{t}"), u.why.clone()).into());
    }
    match st.table(&db, &t) {
        Some(t) => Ok(t.clone()),
        None if st.view(&db, &t).is_some() => Err(SqlError::wrong_object(&db, &t, "BASE TABLE")),
        None => Err(SqlError::no_table(format!("{db}.{t}"))),
    }
}

/// The scope of a table's columns under `alias`.
pub fn table_scope(t: &Table, alias: &str) -> Scope {
    Scope {
        cols: t
            .def
            .columns
            .iter()
            .map(|c| (alias.to_string(), c.name.clone()))
            .collect(),
        types: t.def.columns.iter().map(|c| c.ty.clone()).collect(),
        hidden: Vec::new(),
    }
}

pub(super) type FromTable = (
    Arc<Table>,
    String,
    bool,
    Option<Expr>,
    Option<crate::accept::IndexHint>,
    Option<usize>,
    Option<crate::join::JoinGroup>,
);

/// What `SELECT *` and unqualified names see of the FROM clause once
/// `JOIN ... USING` / `NATURAL JOIN` merged columns: `star` lists the
/// joined row's positions `*` expands to (a merged column once, first, as
/// MySQL), `hidden` the right-hand copies of merged columns, which only a
/// qualified name reaches.
#[derive(Debug, Default)]
pub(super) struct FromLayout {
    pub star: Vec<usize>,
    pub hidden: Vec<usize>,
}

/// The FROM clause as tables in join order, each with its alias, whether
/// it is the inner side of a LEFT JOIN, its ON condition bound over the
/// columns of the tables up to it, its index hint, for a derived table its
/// position among the returned derived tables' plans and, for the first
/// table of a parenthesized join `t LEFT JOIN (a JOIN b ON ..) ON ..`, the
/// group the parentheses make (its tables and its ON condition); and the
/// layout USING joins give it.
pub(super) fn from_tables(
    from: &[ast::TableWithJoins],
    subs: &FromCtx,
) -> Result<(Vec<FromTable>, Vec<SelectPlan>, FromLayout)> {
    let mut b = FromBuilder {
        subs,
        out: Vec::new(),
        derived: Vec::new(),
        scope: Scope::default(),
        tables: 0,
    };
    let mut star = Vec::new();
    for twj in from {
        if let ast::TableFactor::Table { name, .. } = &twj.relation {
            if twj.joins.is_empty()
                && name.0.len() == 1
                && name.to_string().eq_ignore_ascii_case("dual")
            {
                continue;
            }
        }
        star.extend(b.joins(twj)?);
    }
    let hidden = std::mem::take(&mut b.scope.hidden);
    Ok((b.out, b.derived, FromLayout { star, hidden }))
}

/// Builds the table list of a FROM clause in order.
struct FromBuilder<'c, 'a> {
    subs: &'c FromCtx<'a>,
    out: Vec<FromTable>,
    derived: Vec<SelectPlan>,
    /// The columns of the tables so far (ON conditions see these).
    scope: Scope,
    /// The tables the join reads so far, through the views it expands
    /// (MariaDB's 61-table bound, 1116).
    tables: usize,
}

/// How a table reference joins the ones before it.
enum Cond<'e> {
    None,
    On(&'e ast::Expr),
    /// `USING (a, b)`.
    Using(Vec<String>),
    /// `NATURAL JOIN`: USING the columns both sides name.
    Natural,
}

/// The condition a join's constraint names.
fn condition_of(c: &ast::JoinConstraint) -> Cond<'_> {
    match c {
        ast::JoinConstraint::On(e) => Cond::On(e),
        ast::JoinConstraint::None => Cond::None,
        ast::JoinConstraint::Natural => Cond::Natural,
        ast::JoinConstraint::Using(names) => Cond::Using(
            names
                .iter()
                .map(|n| crate::stmt::name_parts(n).pop().unwrap_or_default())
                .collect(),
        ),
    }
}

impl FromBuilder<'_, '_> {
    /// A table with its joins, in order; the columns `*` lists of it (see
    /// `FromLayout`).
    fn joins(&mut self, twj: &ast::TableWithJoins) -> Result<Vec<usize>> {
        use ast::JoinOperator as J;
        let (mut vis, rest) = match twj.joins.split_first() {
            // `a RIGHT JOIN b ON c` is `b LEFT JOIN a ON c`, as MySQL rewrites
            // it: b is read first, a NULL-extended. `*` still lists a's
            // columns first; with USING the merged columns (b's), then b's
            // others, then a's, as MySQL's rewrite lists them.
            Some((j, rest)) if matches!(j.join_operator, J::Right(_) | J::RightOuter(_)) => {
                let (J::Right(c) | J::RightOuter(c)) = &j.join_operator else {
                    return Err(SqlError::internal("right join"));
                };
                let bvis = self.factor(&j.relation, false, Cond::None, &[])?;
                let cond = condition_of(c);
                let merged = matches!(cond, Cond::Using(_) | Cond::Natural);
                let vis = self.factor(&twj.relation, true, cond, &bvis)?;
                if merged {
                    (vis, rest)
                } else {
                    let (b, a) = vis.split_at(bvis.len());
                    ([a, b].concat(), rest)
                }
            }
            _ => (
                self.factor(&twj.relation, false, Cond::None, &[])?,
                &twj.joins[..],
            ),
        };
        for j in rest {
            let (left, c) = match &j.join_operator {
                J::Join(c) | J::Inner(c) | J::CrossJoin(c) | J::StraightJoin(c) => (false, c),
                J::Left(c) | J::LeftOuter(c) => (true, c),
                J::Right(_) | J::RightOuter(_) => {
                    return Err(SqlError::unsupported(
                        "RIGHT JOIN after another join (put it first, or use LEFT JOIN)",
                    ))
                }
                _ => return Err(SqlError::unsupported("this join type")),
            };
            vis = self.factor(&j.relation, left, condition_of(c), &vis)?;
        }
        Ok(vis)
    }

    /// One table reference joined to the tables before it (`left`: as the
    /// inner side of a LEFT JOIN, `cond`: its condition, `lvis`: the columns
    /// of the left operand); the columns of the join so far.
    fn factor(
        &mut self,
        rel: &ast::TableFactor,
        left: bool,
        cond: Cond,
        lvis: &[usize],
    ) -> Result<Vec<usize>> {
        if let ast::TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } = rel
        {
            if alias.is_some() {
                return Err(SqlError::unsupported("an alias on a parenthesized join"));
            }
            let first = self.out.len();
            let rvis = self.joins(table_with_joins)?;
            // Tables inner-joined without a condition need no group: the
            // parentheses change nothing.
            if !left && matches!(cond, Cond::None) {
                return Ok([lvis, &rvis].concat());
            }
            let (on, vis) = self.condition(cond, lvis, &rvis)?;
            let len = self.out.len() - first;
            let Some(f) = self.out.get_mut(first) else {
                return Err(SqlError::internal("empty parenthesized join"));
            };
            f.2 = left;
            f.6 = Some(crate::join::JoinGroup { len, on });
            return Ok(vis);
        }
        let subs = self.subs;
        let (t, a, hint, d) = match rel {
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                sample,
            } => {
                if sample.is_some() {
                    return Err(SqlError::unsupported("TABLESAMPLE"));
                }
                if *lateral {
                    return Err(SqlError::unsupported("LATERAL derived tables"));
                }
                let Some(alias) = alias else {
                    return Err(SqlError::derived_alias());
                };
                // A derived table sees the queries around this one, not its siblings.
                let mut p = (subs.plan_derived)(subquery)?;
                // A column list (CTEs' `WITH c (a, b) AS`) renames its columns.
                rename_columns(&mut p, &alias.columns, SqlError::cte_wrong_list)?;
                let t = derived_table(&alias.name.value, &p)?;
                self.derived.push(p);
                (
                    t,
                    alias.name.value.clone(),
                    None,
                    Some(self.derived.len() - 1),
                )
            }
            ast::TableFactor::Table { name, alias, .. }
                if view_of(subs.cur_db, name)?.is_some() =>
            {
                let Some((v, typed)) = view_of(subs.cur_db, name)? else {
                    return Err(SqlError::internal("information_schema view vanished"));
                };
                let p = view_plan(v);
                let a = alias.as_ref().map_or(typed, |a| a.name.value.clone());
                let t = derived_table(&a, &p)?;
                self.derived.push(p);
                (t, a, None, Some(self.derived.len() - 1))
            }
            ast::TableFactor::Table { name, alias, .. }
                if super::recursive::work_columns(name).is_some() =>
            {
                let Some((id, cols)) = super::recursive::work_columns(name) else {
                    return Err(SqlError::internal("work table vanished"));
                };
                let p = work_plan(id, cols);
                let a = alias
                    .as_ref()
                    .map_or(name_parts_last(name), |a| a.name.value.clone());
                let t = derived_table(&a, &p)?;
                self.derived.push(p);
                (t, a, None, Some(self.derived.len() - 1))
            }
            ast::TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                partitions,
                index_hints,
                ..
            } if super::view::lookup(subs.st, subs.cur_db, name).is_some() => {
                let Some(v) = super::view::lookup(subs.st, subs.cur_db, name) else {
                    return Err(SqlError::internal("view vanished"));
                };
                if args.is_some()
                    || !with_hints.is_empty()
                    || !partitions.is_empty()
                    || !index_hints.is_empty()
                {
                    return Err(SqlError::unsupported("index hints or partitions on a view"));
                }
                let (p, n) = super::view::plan_view(subs.st, &v, subs.locks, subs.plan_view)?;
                // The view's tables join this query's (one already counted below).
                self.count(n.saturating_sub(1))?;
                let a = alias
                    .as_ref()
                    .map_or(name_parts_last(name), |a| a.name.value.clone());
                let t = derived_table(&a, &p)?;
                self.derived.push(p);
                (t, a, None, Some(self.derived.len() - 1))
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let t = resolve_table(subs.st, subs.cur_db, name)?;
                let hint = crate::accept::check_table(rel, &t.def)?;
                let a = alias
                    .as_ref()
                    .map_or(t.def.name.clone(), |a| a.name.value.clone());
                (t, a, hint, None)
            }
            _ => return Err(SqlError::unsupported("this kind of table reference")),
        };
        if self.out.iter().any(|(_, x, ..)| x.eq_ignore_ascii_case(&a)) {
            return Err(SqlError::duplicate_alias(a));
        }
        self.count(1)?;
        let base = self.scope.cols.len();
        self.scope
            .cols
            .extend(t.def.columns.iter().map(|c| (a.clone(), c.name.clone())));
        let rvis: Vec<usize> = (base..self.scope.cols.len()).collect();
        let (on, vis) = self.condition(cond, lvis, &rvis)?;
        self.out.push((t, a, left, on, hint, d, None));
        Ok(vis)
    }

    /// The join condition of a right operand with columns `rvis` joined to a
    /// left one with `lvis`, and the columns of the join. USING (and
    /// NATURAL) equates each named column of the two sides (1054 if a side
    /// lacks it, 1052 if it has two), lists it once, first, and hides the
    /// right copy from unqualified names. The merged column (MySQL's
    /// `COALESCE(l.c, r.c)`) always equals the left one: a RIGHT JOIN is
    /// planned as a LEFT JOIN with its operands swapped (see `joins`).
    fn condition(
        &mut self,
        cond: Cond,
        lvis: &[usize],
        rvis: &[usize],
    ) -> Result<(Option<Expr>, Vec<usize>)> {
        let names = match cond {
            Cond::None => return Ok((None, [lvis, rvis].concat())),
            Cond::On(e) => return Ok((self.bind_on(Some(e))?, [lvis, rvis].concat())),
            Cond::Using(names) => names,
            Cond::Natural => {
                let mut names: Vec<String> = Vec::new();
                for &p in lvis {
                    let n = &self.scope.cols[p].1;
                    if rvis
                        .iter()
                        .any(|&q| self.scope.cols[q].1.eq_ignore_ascii_case(n))
                        && !names.iter().any(|x| x.eq_ignore_ascii_case(n))
                    {
                        names.push(n.clone());
                    }
                }
                names
            }
        };
        let cols = &self.scope.cols;
        let find = |side: &[usize], n: &str| -> Result<usize> {
            let mut hits = side.iter().filter(|&&p| cols[p].1.eq_ignore_ascii_case(n));
            match (hits.next(), hits.next()) {
                (Some(&p), None) => Ok(p),
                (None, _) => Err(SqlError::unknown_column(n, "from clause")),
                (Some(_), Some(_)) => Err(SqlError::ambiguous_column(n, "from clause")),
            }
        };
        let mut on: Option<Expr> = None;
        let (mut ls, mut rs) = (Vec::new(), Vec::new());
        for n in &names {
            let r = find(rvis, n)?;
            let l = find(lvis, n)?;
            if ls.contains(&l) {
                // `USING (a, a)`: MySQL takes the column once.
                continue;
            }
            let eq = Expr::Bin(
                crate::expr::BinOp::Eq,
                Box::new(Expr::Col(l)),
                Box::new(Expr::Col(r)),
            );
            on = Some(match on {
                None => eq,
                Some(x) => Expr::Bin(crate::expr::BinOp::And, Box::new(x), Box::new(eq)),
            });
            ls.push(l);
            rs.push(r);
        }
        self.scope.hidden.extend(rs.iter().copied());
        let mut vis = ls.clone();
        vis.extend(lvis.iter().filter(|p| !ls.contains(p)));
        vis.extend(rvis.iter().filter(|p| !rs.contains(p)));
        Ok((on, vis))
    }

    /// Counts `n` more tables read by the join: 1116 past MariaDB's bound.
    fn count(&mut self, n: usize) -> Result<()> {
        self.tables = self.tables.saturating_add(n);
        if self.tables > super::view::MAX_TABLES {
            return Err(SqlError::too_many_tables(super::view::MAX_TABLES));
        }
        Ok(())
    }

    /// An ON condition bound over the tables so far.
    fn bind_on(&self, on: Option<&ast::Expr>) -> Result<Option<Expr>> {
        let Some(e) = on else {
            return Ok(None);
        };
        let mut b = Binder::new(self.subs.params);
        b.sub = Some(self.subs.sub);
        b.place = "on clause";
        Ok(Some(b.expr(e, &self.scope)?))
    }
}

/// Moves each derived table before the first base table that has no key
/// condition of its own but whose key starts with a column `where_` equates
/// to one of the derived table's columns.
pub(super) fn derived_first(from: &mut Vec<FromTable>, where_: &Expr) -> Vec<usize> {
    let mut bases = Vec::with_capacity(from.len());
    let mut b = 0;
    for f in from.iter() {
        bases.push(b);
        b += f.0.def.columns.len();
    }
    // Which table (and its column) a joined-row position belongs to.
    let owner = |c: usize| {
        let t = bases.iter().rposition(|&b| b <= c)?;
        Some((t, c - bases[t]))
    };
    let conj = where_.conjuncts();
    let keyed = |t: usize| {
        let (base, width) = (bases[t], from[t].0.def.columns.len());
        let own: Vec<Expr> = conj
            .iter()
            .filter_map(|c| crate::join::localize(c, base, width))
            .filter(|c| {
                let mut outer = false;
                c.walk(&mut |x| outer |= matches!(x, Expr::Outer(_)));
                !outer
            })
            .collect();
        let f = own
            .into_iter()
            .reduce(|a, b| Expr::Bin(crate::expr::BinOp::And, Box::new(a), Box::new(b)));
        !access::choose(&from[t].0.def, f.as_ref(), &[], None, false, None)
            .ranges
            .is_empty()
    };
    let mut moves: Vec<(usize, usize)> = Vec::new();
    for c in &conj {
        let Expr::Bin(crate::expr::BinOp::Eq, l, r) = c else {
            continue;
        };
        let (Expr::Col(x), Expr::Col(y)) = (&**l, &**r) else {
            continue;
        };
        let (Some((tx, cx)), Some((ty, cy))) = (owner(*x), owner(*y)) else {
            continue;
        };
        for ((d, _), (t, tc)) in [((tx, cx), (ty, cy)), ((ty, cy), (tx, cx))] {
            let def = &from[t].0.def;
            let leads = (!def.hidden_pk && def.pk.columns.first() == Some(&tc))
                || def.secondary.iter().any(|i| i.columns.first() == Some(&tc));
            if from[d].5.is_some() && from[t].5.is_none() && d > t && leads && !keyed(t) {
                moves.push((d, t));
            }
        }
    }
    // Apply from the last derived table back, each before its table.
    moves.sort_by_key(|m| std::cmp::Reverse(m.0));
    moves.dedup_by_key(|m| m.0);
    let mut order: Vec<usize> = (0..from.len()).collect();
    for (d, t) in moves {
        let (pd, pt) = (
            order.iter().position(|&i| i == d).unwrap_or(0),
            order.iter().position(|&i| i == t).unwrap_or(0),
        );
        if pd > pt {
            let x = order.remove(pd);
            order.insert(pt, x);
        }
    }
    let mut old: Vec<Option<FromTable>> = std::mem::take(from).into_iter().map(Some).collect();
    for &i in &order {
        if let Some(f) = old[i].take() {
            from.push(f);
        }
    }
    order
}

/// The information_schema view a table name names (with the name as typed),
/// None for other names; 1109 for a name information_schema does not have.
fn view_of(
    cur_db: Option<&str>,
    name: &ast::ObjectName,
) -> Result<Option<(crate::infoschema::View, String)>> {
    use crate::infoschema::{is_schema, View};
    let parts: Vec<&str> = name
        .0
        .iter()
        .filter_map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => Some(i.value.as_str()),
            _ => None,
        })
        .collect();
    let t = match parts.as_slice() {
        [d, t] if is_schema(d) => *t,
        [t] if cur_db.is_some_and(is_schema) => *t,
        _ => return Ok(None),
    };
    match View::lookup(t) {
        Some(v) => Ok(Some((v, t.to_string()))),
        None => Err(SqlError::unknown_schema_table(t)),
    }
}

/// The plan of a recursive CTE's work table read as a derived table.
fn work_plan(id: usize, columns: Vec<crate::result::ColumnInfo>) -> SelectPlan {
    let mut p = view_plan(crate::infoschema::View::Engines);
    p.sysview = None;
    p.out = (0..columns.len()).map(Expr::Col).collect();
    p.columns = columns;
    p.recursive = Some(Box::new(super::Rec::Work(id)));
    p
}

/// The plan of an information_schema view read as a derived table.
fn view_plan(v: crate::infoschema::View) -> SelectPlan {
    let cols = v.columns();
    SelectPlan {
        table: None,
        access: None,
        join: Vec::new(),
        want: Vec::new(),
        want_ranged: Vec::new(),
        filter: None,
        agg: None,
        having: None,
        window: None,
        out: (0..cols.len()).map(Expr::Col).collect(),
        order: Vec::new(),
        order_out: Vec::new(),
        presorted: false,
        distinct: false,
        group_colls: Vec::new(),
        out_colls: Vec::new(),
        limit: None,
        offset: None,
        columns: cols
            .into_iter()
            .map(|(n, ty)| {
                let mut c = crate::result::ColumnInfo::expr(n, ty);
                c.org_name = n.to_string();
                c.table = v.name().to_string();
                c.org_table = v.name().to_string();
                c.db = crate::infoschema::DB.to_string();
                c
            })
            .collect(),
        lock: None,
        into: None,
        calc_found_rows: false,
        nonblock: None,
        subqueries: Vec::new(),
        derived: Vec::new(),
        union: Vec::new(),
        sysview: Some(v),
        recursive: None,
        outer_refs: Vec::new(),
    }
}

/// The last part of a table name (a view's default alias).
fn name_parts_last(name: &ast::ObjectName) -> String {
    crate::stmt::name_parts(name).pop().unwrap_or_default()
}

/// Renames a derived table's columns after its column list (none: kept);
/// `wrong` is the error for a list of another length.
pub(super) fn rename_columns(
    p: &mut SelectPlan,
    cols: &[ast::TableAliasColumnDef],
    wrong: impl Fn() -> SqlError,
) -> Result<()> {
    if cols.is_empty() {
        return Ok(());
    }
    if cols.len() != p.columns.len() {
        return Err(wrong());
    }
    for (c, n) in p.columns.iter_mut().zip(cols) {
        c.name = n.name.value.clone();
    }
    Ok(())
}

/// A stand-in table describing a derived table's columns (no keys: it is
/// read in full from its materialized rows).
pub(super) fn derived_table(alias: &str, p: &SelectPlan) -> Result<Arc<Table>> {
    let mut columns: Vec<Column> = Vec::with_capacity(p.columns.len());
    for c in &p.columns {
        if columns.iter().any(|x| x.name.eq_ignore_ascii_case(&c.name)) {
            return Err(SqlError::duplicate_column(&c.name));
        }
        columns.push(Column::plain(
            &c.name,
            crate::types::column_type(c.ty.clone()),
        ));
    }
    let pk = rel::schema::Index {
        id: 0,
        name: "PRIMARY".into(),
        columns: vec![],
        unique: true,
        primary: true,
        ..Default::default()
    };
    let def = rel::schema::TableDef::new(
        String::new(),
        alias.to_string(),
        columns,
        pk,
        true,
        vec![],
        String::new(),
        String::new(),
    );
    Ok(Arc::new(Table::new(def, 0, 0)))
}
