//! The privileges a row statement needs table by table: SELECT on every
//! table it reads, INSERT/UPDATE/DELETE on the tables it writes (REPLACE
//! also DELETE, ON DUPLICATE KEY UPDATE also UPDATE). A multi-table UPDATE
//! writes the tables its SET assigns, a multi-table DELETE the tables it
//! lists; an assignment or target that cannot be tied to one table needs
//! the write privilege on every table the statement changes from (stricter
//! than MySQL, never looser). Names of WITH's common table expressions are
//! not tables.
use crate::error::Result;
use crate::stmt::{name_parts, RowStmt};
use rel::catalog::privs as p;
use sqlparser::ast;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// How the tables of a statement are checked: `check(need, command, db,
/// table)` (1142 naming `command`), bare names in database `db`.
pub struct Tables<'a> {
    pub check: Box<dyn Fn(u64, &str, &str, &str) -> Result<()> + 'a>,
    pub db: String,
}

type Name = (String, String);

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

/// The names WITH clauses anywhere in the statement define.
struct Ctes(Vec<String>);

impl ast::Visitor for Ctes {
    type Break = ();
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            for c in &w.cte_tables {
                self.0.push(c.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }
}

/// The tables a statement names (not its CTEs), in order of appearance.
fn relations<V: ast::Visit>(t: &Tables, v: &V) -> Vec<Name> {
    let mut ctes = Ctes(Vec::new());
    let _ = v.visit(&mut ctes);
    let mut out = Vec::new();
    let _ = ast::visit_relations(v, |r| {
        let parts = name_parts(r);
        let cte = parts.len() == 1 && ctes.0.iter().any(|c| c.eq_ignore_ascii_case(&parts[0]));
        if !cte {
            out.push(t.split(r));
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// The FROM items of an UPDATE or DELETE: alias (or table name) → the
/// base table (`None`: a derived table).
fn aliases(t: &Tables, list: &[&ast::TableWithJoins], out: &mut BTreeMap<String, Option<Name>>) {
    fn factor(t: &Tables, f: &ast::TableFactor, out: &mut BTreeMap<String, Option<Name>>) {
        match f {
            ast::TableFactor::Table { name, alias, .. } => {
                let n = t.split(name);
                let key = alias.as_ref().map_or_else(|| n.1.clone(), |a| a.name.value.clone());
                out.insert(key, Some(n));
            }
            ast::TableFactor::Derived {
                alias: Some(a), ..
            } => {
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

/// Every base table of the FROM items.
fn all_bases(from: &BTreeMap<String, Option<Name>>) -> Vec<Name> {
    from.values().flatten().cloned().collect()
}

/// Checks a row statement's tables.
pub fn rows(t: &Tables, r: &RowStmt) -> Result<()> {
    let (names, targets, first): (Vec<Name>, Vec<Name>, (u64, &str)) = match r {
        RowStmt::Select(q) => (relations(t, q.as_ref()), vec![], (0, "")),
        RowStmt::Insert(i) => {
            let target = match &i.table {
                ast::TableObject::TableName(n) => vec![t.split(n)],
                _ => vec![],
            };
            (relations(t, i.as_ref()), target, (p::INSERT, "INSERT"))
        }
        RowStmt::Update(u) => {
            let mut from = BTreeMap::new();
            let mut list = vec![&u.table];
            if let Some(
                ast::UpdateTableFromKind::BeforeSet(v) | ast::UpdateTableFromKind::AfterSet(v),
            ) = &u.from
            {
                list.extend(v.iter());
            }
            aliases(t, &list, &mut from);
            let mut own = BTreeMap::new();
            aliases(t, &[&u.table], &mut own);
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
                let r = if parts.len() == 1 {
                    // A bare column: the one table being updated, else each.
                    let bases = all_bases(&own);
                    if bases.len() == 1 && own.len() == 1 {
                        Ok(bases.into_iter().next())
                    } else {
                        Err(())
                    }
                } else {
                    resolve(t, &parts[..parts.len() - 1], &from)
                        .map(|x| x.or(None))
                        .and_then(|x| if parts.len() == 3 { resolve(t, &parts, &from) } else { Ok(x) })
                };
                match r {
                    Ok(Some(n)) => targets.push(n),
                    Ok(None) => {}
                    Err(()) => targets.extend(all_bases(&own)),
                }
            }
            (relations(t, u.as_ref()), targets, (p::UPDATE, "UPDATE"))
        }
        RowStmt::Delete(d) => {
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
            let mut targets = Vec::new();
            if d.tables.is_empty() {
                match list.first().map(|f| &f.relation) {
                    Some(ast::TableFactor::Table { name, .. }) => targets.push(t.split(name)),
                    _ => targets.extend(all_bases(&from)),
                }
            } else {
                for n in &d.tables {
                    let parts = name_parts(n);
                    let r = match parts.as_slice() {
                        [a] => resolve(t, std::slice::from_ref(a), &from),
                        [db, tb] => Ok(Some((db.clone(), tb.clone()))),
                        _ => Err(()),
                    };
                    match r {
                        Ok(Some(n)) => targets.push(n),
                        Ok(None) => {}
                        Err(()) => targets.extend(all_bases(&from)),
                    }
                }
            }
            (relations(t, d.as_ref()), targets, (p::DELETE, "DELETE"))
        }
    };
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
    for (db, tb) in &names {
        if !targets.iter().any(|(d, x)| d == db && x == tb) {
            (t.check)(p::SELECT, "SELECT", db, tb)?;
        }
    }
    Ok(())
}
