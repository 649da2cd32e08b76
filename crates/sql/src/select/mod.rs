//! SELECT: `plan` binds a query into a `SelectPlan`; `exec` runs it,
//! streaming rows to a sink when no sort, grouping or DISTINCT needs them
//! all first; aggregation is in `crate::agg`, sorting and grouping spills
//! in `crate::tail` and `crate::sort`.
pub(crate) mod alias;
mod correlated;
mod decorrelate;
mod exec;
mod from;
mod output;
mod plan;
mod recursive;
mod semijoin;
mod setop;
mod sub;
pub mod view;

pub use crate::agg::hash_image;
pub use exec::{execute, execute_counted};
pub use from::{resolve_table, table_scope};
pub use plan::{plan, SubPlans};
pub use recursive::{Rec, RecCte};
pub use sub::QueryEnv;

use crate::access::Access;
use crate::bind::AggSpec;
use crate::expr::Expr;
use crate::join::JoinTable;
use crate::result::ColumnInfo;
use crate::subquery::SubKind;
use rel::catalog::Table;
use sqlparser::ast;
use std::sync::Arc;
use txn::LockMode;

/// A planned SELECT.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub table: Option<Arc<Table>>,
    pub access: Option<Access>,
    /// Two or more tables: nested-loop join (then `table` is None).
    pub join: Vec<JoinTable>,
    /// Columns decoded from rows.
    pub want: Vec<bool>,
    /// Columns decoded from rows when the access path's range replaces the
    /// WHERE (`access::for_each_row`): `want` without the columns only the
    /// WHERE reads. Empty when that is `want`.
    pub want_ranged: Vec<bool>,
    pub filter: Option<Expr>,
    pub agg: Option<(Vec<Expr>, Vec<AggSpec>)>,
    pub having: Option<Expr>,
    /// Window functions, computed after HAVING over the rows then held: the
    /// select list and ORDER BY read their values past the row (`crate::window`).
    pub window: Option<crate::window::WindowPlan>,
    pub out: Vec<Expr>,
    pub order: Vec<(Expr, bool)>,
    /// Per ORDER BY key, the output column whose value it is (a computed
    /// select item the key names: not evaluated twice); empty: none is.
    pub order_out: Vec<Option<usize>>,
    /// The access path already yields rows in ORDER BY order.
    pub presorted: bool,
    pub distinct: bool,
    /// The collation GROUP BY groups each group expression by, and DISTINCT
    /// each output column by (None: as values; see `collate::group_colls`).
    pub group_colls: Vec<Option<rel::collation::Collation>>,
    pub out_colls: Vec<Option<rel::collation::Collation>>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub columns: Vec<ColumnInfo>,
    pub lock: Option<LockMode>,
    /// SELECT ... INTO @a, @b: user variables receiving the single row.
    pub into: Option<Vec<String>>,
    /// SQL_CALC_FOUND_ROWS: count the rows LIMIT leaves out.
    pub calc_found_rows: bool,
    /// NOWAIT / SKIP LOCKED of the locking clause.
    pub nonblock: Option<ast::NonBlock>,
    /// Uncorrelated subqueries its expressions read (`Expr::Subquery(k)`
    /// etc.), computed before the first row.
    pub subqueries: Vec<(SelectPlan, SubKind)>,
    /// Derived tables of its FROM (`JoinTable::derived`), materialized
    /// before the first row.
    pub derived: Vec<SelectPlan>,
    /// A UNION (only as a derived table): the branches after this one, each
    /// with whether the rows so far are deduplicated after adding it.
    pub union: Vec<(bool, SelectPlan)>,
    /// An information_schema view: the rows come from it (`Env::view_rows`),
    /// not from a table (only as a derived table).
    pub sysview: Option<crate::infoschema::View>,
    /// A correlated subquery: the positions of the outer row it reads
    /// (its `Expr::Correlated(j)` is position `outer_refs[j]`).
    pub outer_refs: Vec<usize>,
    /// A recursive CTE (only as a derived table), or the work table its
    /// recursive SELECTs read (`recursive.rs`).
    pub recursive: Option<Box<Rec>>,
}
