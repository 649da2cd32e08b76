//! Window functions (`f(...) OVER (PARTITION BY ... ORDER BY ... frame)`), with
//! MariaDB's semantics and errors: `bind` turns OVER calls of a select list or ORDER BY
//! into `WinCall`s (named windows of the WINDOW clause resolved, frames checked), `plan`
//! finishes them once the query's row is known (collations, types, RANGE checks), `exec`
//! runs them over the rows left after WHERE / GROUP BY / HAVING (sorted per window by
//! `sort::Sorter`, one partition at a time in memory), `compute` evaluates one partition
//! (ranks, LAG/LEAD, values at frame edges, aggregates over sliding frames in O(n)).
//!
//! A query's window results are extra columns of its row: the row the select list sees is
//! the base row (table row, or grouped row) followed by one slot per window call.
mod bind;
mod compute;
mod exec;
mod plan;

pub use bind::{bind_call, window_only, WinCtx};
pub use exec::Windower;
pub use plan::finish;

use crate::bind::AggSpec;
use crate::expr::Expr;
use rel::value::Value;

/// While binding, a window call's slot is `Col(WIN_MARK + k)`; `plan::finish`
/// renumbers it to `Col(width + k)` once the base row's width is known.
pub const WIN_MARK: usize = 1 << 40;

/// The window functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate (SUM, COUNT, AVG, MIN, MAX, STD/VAR, BIT_*) over the frame.
    Agg,
}

/// One edge of a frame. Offsets are constants: a row count for ROWS, a number
/// for RANGE.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    UnboundedPreceding,
    Preceding(Value),
    CurrentRow,
    Following(Value),
    UnboundedFollowing,
}

/// A frame: ROWS (`rows`) or RANGE, from `start` to `end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub rows: bool,
    pub start: Bound,
    pub end: Bound,
}

impl Frame {
    /// The default frame: RANGE UNBOUNDED PRECEDING .. CURRENT ROW (with no
    /// ORDER BY every row is a peer: the whole partition).
    pub fn default_range() -> Frame {
        Frame {
            rows: false,
            start: Bound::UnboundedPreceding,
            end: Bound::CurrentRow,
        }
    }
}

/// PARTITION BY and ORDER BY of a window (over the base row; strings as
/// collation sort keys once planned).
#[derive(Debug, Clone, PartialEq)]
pub struct WinSpec {
    pub partition: Vec<Expr>,
    pub order: Vec<(Expr, bool)>,
}

/// One window function call of a query.
#[derive(Debug, Clone)]
pub struct WinCall {
    pub kind: WinKind,
    /// The function's name as written (errors, EXPLAIN).
    pub name: String,
    /// The value argument (LAG/LEAD/FIRST/LAST/NTH_VALUE), with LAG/LEAD's default second.
    pub args: Vec<Expr>,
    /// LAG/LEAD's offset, NTILE's bucket count, NTH_VALUE's n: a constant.
    pub n: Option<Expr>,
    /// The aggregate of `WinKind::Agg`.
    pub agg: Option<AggSpec>,
    pub spec: WinSpec,
    pub frame: Frame,
}

/// The window step of a planned SELECT.
#[derive(Debug, Clone)]
pub struct WindowPlan {
    pub calls: Vec<WinCall>,
    /// The base row's width: call k's value is at `width + k`.
    pub width: usize,
    /// Calls sharing one PARTITION BY / ORDER BY: one sort each, in this order.
    pub stages: Vec<Vec<usize>>,
}

impl WindowPlan {
    /// Groups calls by their window (PARTITION BY and ORDER BY).
    pub fn new(calls: Vec<WinCall>, width: usize) -> WindowPlan {
        let mut stages: Vec<Vec<usize>> = Vec::new();
        for (k, c) in calls.iter().enumerate() {
            match stages.iter_mut().find(|s| calls[s[0]].spec == c.spec) {
                Some(s) => s.push(k),
                None => stages.push(vec![k]),
            }
        }
        WindowPlan {
            calls,
            width,
            stages,
        }
    }

    /// For EXPLAIN: how many sorts (windows) the step makes.
    pub fn windows(&self) -> usize {
        self.stages.len()
    }
}

/// Renumbers window slots `Col(WIN_MARK + k)` of `e` to `Col(width + k)`.
pub fn renumber(e: &mut Expr, width: usize) {
    e.walk_mut(&mut |x| {
        if let Expr::Col(c) = x {
            if *c >= WIN_MARK {
                *c = *c - WIN_MARK + width;
            }
        }
    });
}
