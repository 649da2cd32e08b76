//! Bound expressions and their evaluation. The binder (`bind.rs`) turns
//! sqlparser's AST into this tree, resolving column names to row
//! positions; evaluation follows MySQL's rules for NULL (three-valued
//! logic), numeric types (integer, decimal, double) and comparisons.
use crate::collate;
use crate::error::{Result, SqlError};
use crate::func::{self, Func};
use crate::result::OutType;
use crate::subquery::SubResult;
use rel::collation::Collation;
use rel::value::{compare, Value};
use std::cmp::Ordering;

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

/// A bound expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value),
    /// The i-th `?` of a prepared statement.
    Param(usize),
    /// Position in the input row.
    Col(usize),
    /// Position in the row of the tables joined before this one (a join's
    /// index lookup key); evaluated like `Col` against that row.
    Outer(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// IS [NOT] TRUE / FALSE: (expr, want_true, negated)
    IsBool(Box<Expr>, bool, bool),
    In(Box<Expr>, Vec<Expr>, bool),
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool),
    Like(Box<Expr>, Box<Expr>, bool, u8),
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Func(Func, Vec<Expr>),
    /// Session or global variable, read at evaluation time.
    SysVar(String, bool),
    UserVar(String),
    /// `@name := expr`: assigns the user variable and yields the value.
    Assign(String, Box<Expr>),
    /// Uncorrelated subquery `k` of the statement's plan as a value (the
    /// type of its one column); computed once per execution.
    Subquery(usize, OutType),
    /// `x [NOT] IN (subquery k)`.
    InSubquery(Box<Expr>, usize, bool),
    /// `[NOT] EXISTS (subquery k)`.
    Exists(usize, bool),
    /// A correlated subquery expression (`Subquery`, `InSubquery` or
    /// `Exists`) and the positions of the row it reads (its plan's
    /// `Correlated` values): computed for each row (`select::correlated`).
    Dependent(Box<Expr>, Vec<usize>),
    /// Inside a correlated subquery: value `j` of the row of the query
    /// around it (its column's type); the same for one run of the subquery.
    Correlated(usize, OutType),
    /// `x COLLATE c`: the value of `x`, compared under `c` (explicit).
    Collate(Box<Expr>, Collation),
    /// A comparison (=, <, IN, BETWEEN, LIKE, CASE x WHEN, STRCMP, ...)
    /// evaluated under collation `c` (see `collate::annotate`).
    Collated(Collation, Box<Expr>),
    /// The sort key of a string under collation `c` (ORDER BY).
    SortKey(Collation, Box<Expr>),
}

/// What evaluation may need from the session.
pub trait Env {
    fn param(&self, i: usize) -> Option<&Value>;
    fn sys_var(&self, name: &str, global: bool) -> Option<Value>;
    fn user_var(&self, name: &str) -> Value;
    /// `@name := value` inside an expression (seen by later reads in the statement).
    fn set_user_var(&self, _name: &str, _v: Value) -> Result<()> {
        Err(SqlError::unsupported("assigning a user variable here"))
    }
    fn current_db(&self) -> Option<&str>;
    fn user(&self) -> &str;
    /// `user@host` as USER() / SESSION_USER() give it (the client's host)
    /// or, with `current`, as CURRENT_USER() does (the account the session
    /// authenticated as: its host pattern).
    fn user_host(&self, _current: bool) -> String {
        format!("{}@localhost", self.user())
    }
    fn connection_id(&self) -> u64;
    fn last_insert_id(&self) -> u64;
    fn row_count(&self) -> i64;
    fn found_rows(&self) -> u64;
    /// Statement start time, microseconds since the Unix epoch.
    fn now_micros(&self) -> i64;
    /// Records a warning for SHOW WARNINGS (ignored where nobody can see it).
    fn warn(&self, _w: SqlError) {}
    /// Records a note (level "Note") for SHOW WARNINGS.
    fn note(&self, _w: SqlError) {}
    /// The statement's sql_mode.
    fn sql_mode(&self) -> crate::sqlmode::SqlMode {
        crate::sqlmode::SqlMode::of(self.sys_var("sql_mode", false).as_ref())
    }
    /// A division by zero (the value is NULL): a warning, or the error where
    /// strict mode with ERROR_FOR_DIVISION_BY_ZERO makes it one.
    fn division_by_zero(&self) -> Result<()> {
        Ok(())
    }
    /// True for a statement that is its own transaction (autocommit, no BEGIN).
    fn autocommit_statement(&self) -> bool {
        false
    }
    /// SELECT ... SKIP LOCKED: rows locked by others are skipped.
    fn skip_locked(&self) -> bool {
        false
    }
    /// One row read: fails once the statement must stop (KILL,
    /// max_execution_time, max_statement_time).
    fn check_interrupt(&self) -> Result<()> {
        Ok(())
    }
    /// Fails once the statement must stop, reading the clock now (for
    /// waits such as SLEEP()).
    fn interrupted(&self) -> Result<()> {
        Ok(())
    }
    /// `interrupted` as a check a long operation can own and poll (a sort's
    /// merge of runs); None where nothing can interrupt the statement.
    fn interrupt(&self) -> Option<crate::runmerge::Interrupt> {
        None
    }
    /// Inside a correlated subquery: value `j` of the outer query's row.
    fn correlated(&self, _j: usize) -> Option<&Value> {
        None
    }
    /// The value of subquery `k` of the plan being executed.
    fn subquery(&self, _k: usize) -> Option<&SubResult> {
        None
    }
    /// The rows of derived table `k` of the plan being executed.
    fn derived(&self, _k: usize) -> Option<&[Vec<Value>]> {
        None
    }
    /// The hash index on derived table `k`'s join columns, if it has one.
    fn derived_index(&self, _k: usize) -> Option<&crate::hashjoin::HashIndex> {
        None
    }
    /// The rows of an information_schema view as the session sees them now.
    fn view_rows(&self, v: crate::infoschema::View) -> Result<Vec<Vec<Value>>> {
        Err(SqlError::unsupported(format!(
            "information_schema.{} here",
            v.name()
        )))
    }
    /// The rows recursive CTE `id`'s previous iteration added (its
    /// recursive SELECTs read these as the CTE).
    fn work_table(&self, _id: usize) -> Option<&[Vec<Value>]> {
        None
    }
}

/// An environment with nothing in it, for constant folding.
pub struct NoEnv;

impl Env for NoEnv {
    fn param(&self, _: usize) -> Option<&Value> {
        None
    }
    fn sys_var(&self, _: &str, _: bool) -> Option<Value> {
        None
    }
    fn user_var(&self, _: &str) -> Value {
        Value::Null
    }
    fn current_db(&self) -> Option<&str> {
        None
    }
    fn user(&self) -> &str {
        ""
    }
    fn connection_id(&self) -> u64 {
        0
    }
    fn last_insert_id(&self) -> u64 {
        0
    }
    fn row_count(&self) -> i64 {
        0
    }
    fn found_rows(&self) -> u64 {
        0
    }
    fn now_micros(&self) -> i64 {
        0
    }
}

impl Expr {
    /// `items` joined by `op` (AND, OR) as a balanced tree, so a long list
    /// nests only as deep as its logarithm; an empty list is `op`'s unit
    /// (TRUE for AND, FALSE otherwise).
    pub fn balanced(op: BinOp, mut items: Vec<Expr>) -> Expr {
        match items.len() {
            0 => Expr::Const(Value::Int(i64::from(op == BinOp::And))),
            1 => items.pop().unwrap_or(Expr::Const(Value::Int(0))),
            n => {
                let right = items.split_off(n / 2);
                Expr::Bin(
                    op,
                    Box::new(Expr::balanced(op, items)),
                    Box::new(Expr::balanced(op, right)),
                )
            }
        }
    }
}

impl Expr {
    /// Evaluates against `row`.
    pub fn eval(&self, row: &[Value], env: &dyn Env) -> Result<Value> {
        Ok(match self {
            Expr::Const(v) => v.clone(),
            Expr::Param(i) => env
                .param(*i)
                .cloned()
                .ok_or_else(|| SqlError::wrong_arguments("EXECUTE"))?,
            Expr::Col(i) | Expr::Outer(i) => row
                .get(*i)
                .cloned()
                .ok_or_else(|| SqlError::internal(format!("column {i} out of range")))?,
            Expr::Neg(e) => neg(e.eval(row, env)?)?,
            Expr::Not(e) => match e.eval(row, env)?.truth() {
                None => Value::Null,
                Some(b) => Value::Int(!b as i64),
            },
            Expr::BitNot(e) => match e.eval(row, env)?.to_i128() {
                None => Value::Null,
                Some(i) => Value::UInt(!(i as u64)),
            },
            Expr::Bin(op, a, b) => binary(*op, a, b, row, env)?,
            Expr::IsNull(e, neg) => Value::Int((e.eval(row, env)?.is_null() != *neg) as i64),
            Expr::IsBool(e, want, negated) => {
                let t = e.eval(row, env)?.truth();
                Value::Int(((t == Some(*want)) != *negated) as i64)
            }
            Expr::Correlated(j, _) => env
                .correlated(*j)
                .cloned()
                .ok_or_else(|| SqlError::internal(format!("correlated value {j} not set")))?,
            Expr::Dependent(e, _) => e.eval(row, env)?,
            Expr::Subquery(k, _) => match env.subquery(*k) {
                Some(SubResult::Scalar(v)) => v.clone(),
                _ => return Err(SqlError::internal(format!("subquery {k} not computed"))),
            },
            Expr::Exists(k, negated) => match env.subquery(*k) {
                Some(SubResult::Exists(b)) => Value::Int((*b != *negated) as i64),
                _ => return Err(SqlError::internal(format!("subquery {k} not computed"))),
            },
            Expr::InSubquery(e, k, negated) => {
                collate::eval_in_subquery(e, *k, *negated, None, row, env)?
            }
            Expr::In(e, list, negated) => collate::eval_in(e, list, *negated, None, row, env)?,
            Expr::Between(e, lo, hi, negated) => {
                collate::eval_between(e, lo, hi, *negated, None, row, env)?
            }
            Expr::Like(e, pat, negated, esc) => {
                collate::eval_like(e, pat, *negated, *esc, None, row, env)?
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => collate::eval_case(
                operand.as_deref(),
                whens,
                otherwise.as_deref(),
                None,
                row,
                env,
            )?,
            // A number under COLLATE is its text (MariaDB: `(-5) COLLATE
            // utf8mb4_bin = '-5.0'` compares strings).
            Expr::Collate(e, _) => match e.eval(row, env)? {
                v @ (Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(..)) => {
                    Value::Bytes(v.text())
                }
                v => v,
            },
            Expr::Collated(c, e) => collate::eval_collated(*c, e, row, env)?,
            Expr::SortKey(c, e) => match e.eval(row, env)? {
                Value::Bytes(b) => Value::Bytes(c.sort_key(&b)),
                v => v,
            },
            Expr::Func(f, args) => func::call(f, args, row, env)?,
            Expr::SysVar(n, g) => env
                .sys_var(n, *g)
                .ok_or_else(|| SqlError::unknown_variable(n))?,
            Expr::UserVar(n) => env.user_var(n),
            Expr::Assign(n, e) => {
                let v = e.eval(row, env)?;
                env.set_user_var(n, v.clone())?;
                v
            }
        })
    }

    /// True if the expression reads no column (constant for a statement).
    pub fn is_row_independent(&self) -> bool {
        let mut indep = true;
        self.walk(&mut |e| {
            // An assignment changes a variable at each evaluation.
            if matches!(e, Expr::Col(_) | Expr::Assign(..) | Expr::Dependent(..)) {
                indep = false;
            }
        });
        indep
    }

    /// Calls `f` on every node, parents first.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::BitNot(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::InSubquery(e, _, _)
            | Expr::Collate(e, _)
            | Expr::Collated(_, e)
            | Expr::SortKey(_, e)
            | Expr::Assign(_, e)
            | Expr::Dependent(e, _) => e.walk(f),
            Expr::Bin(_, a, b) | Expr::Like(a, b, _, _) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::In(e, l, _) => {
                e.walk(f);
                l.iter().for_each(|x| x.walk(f));
            }
            Expr::Between(a, b, c, _) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(o) = otherwise {
                    o.walk(f);
                }
            }
            Expr::Func(_, args) => args.iter().for_each(|x| x.walk(f)),
            _ => {}
        }
    }

    /// Calls `f` on every node, parents first, mutably (window slots are
    /// renumbered this way once a query's grouped row width is known).
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        f(self);
        match self {
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::BitNot(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::InSubquery(e, _, _)
            | Expr::Collate(e, _)
            | Expr::Collated(_, e)
            | Expr::SortKey(_, e)
            | Expr::Assign(_, e)
            | Expr::Dependent(e, _) => e.walk_mut(f),
            Expr::Bin(_, a, b) | Expr::Like(a, b, _, _) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Expr::In(e, l, _) => {
                e.walk_mut(f);
                l.iter_mut().for_each(|x| x.walk_mut(f));
            }
            Expr::Between(a, b, c, _) => {
                a.walk_mut(f);
                b.walk_mut(f);
                c.walk_mut(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.walk_mut(f);
                }
                for (w, t) in whens {
                    w.walk_mut(f);
                    t.walk_mut(f);
                }
                if let Some(o) = otherwise {
                    o.walk_mut(f);
                }
            }
            Expr::Func(_, args) => args.iter_mut().for_each(|x| x.walk_mut(f)),
            _ => {}
        }
    }

    /// Columns this expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        self.walk(&mut |e| match e {
            Expr::Col(c) => {
                if !out.contains(c) {
                    out.push(*c);
                }
            }
            // A correlated subquery reads these columns of the row.
            Expr::Dependent(_, refs) => {
                for c in refs {
                    if !out.contains(c) {
                        out.push(*c);
                    }
                }
            }
            _ => {}
        });
    }

    /// True if a correlated subquery (computed per row) is part of `self`.
    pub fn has_dependent(&self) -> bool {
        let mut d = false;
        self.walk(&mut |e| d |= matches!(e, Expr::Dependent(..)));
        d
    }

    /// The conjunction of `self`'s conjuncts without a correlated subquery
    /// (None if none is left).
    pub fn without_dependent(&self) -> Option<Expr> {
        self.conjuncts()
            .into_iter()
            .filter(|c| !c.has_dependent())
            .cloned()
            .reduce(|a, b| Expr::Bin(BinOp::And, Box::new(a), Box::new(b)))
    }

    /// Splits a conjunction into its terms.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut v = Vec::new();
        fn go<'a>(e: &'a Expr, v: &mut Vec<&'a Expr>) {
            if let Expr::Bin(BinOp::And, a, b) = e {
                go(a, v);
                go(b, v);
            } else {
                v.push(e);
            }
        }
        go(self, &mut v);
        v
    }
}

/// True if the WHERE value accepts the row.
pub fn accepts(v: &Value) -> bool {
    v.truth() == Some(true)
}

fn neg(v: Value) -> Result<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => match i.checked_neg() {
            Some(n) => Value::Int(n),
            None => Value::Decimal(-(i as i128), 0),
        },
        Value::UInt(u) => {
            if u <= i64::MAX as u64 + 1 {
                Value::Int((-(u as i128)) as i64)
            } else {
                return Err(out_of_range("-"));
            }
        }
        Value::Decimal(m, s) => {
            Value::Decimal(m.checked_neg().ok_or_else(|| out_of_range("-"))?, s)
        }
        Value::Double(d) => Value::Double(-d),
        other => Value::Double(-other.to_f64().unwrap_or(0.0)),
    })
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::out_of_range("BIGINT", what)
}

/// Numeric class of a value for arithmetic.
enum Num {
    Int(i128, bool),
    Dec(i128, u8),
    Dbl(f64),
}

fn num(v: &Value) -> Num {
    match v {
        Value::Int(i) => Num::Int(*i as i128, false),
        Value::UInt(u) => Num::Int(*u as i128, true),
        Value::Decimal(m, s) => Num::Dec(*m, *s),
        Value::Double(d) => Num::Dbl(*d),
        Value::Bytes(_) => Num::Dbl(v.to_f64().unwrap_or(0.0)),
        other => Num::Int(other.to_i128().unwrap_or(0), false),
    }
}

fn scale_up(m: i128, from: u8, to: u8) -> i128 {
    m.saturating_mul(10i128.pow((to - from) as u32))
}

fn int_result(r: i128, unsigned: bool, what: &str) -> Result<Value> {
    if unsigned {
        if (0..=u64::MAX as i128).contains(&r) {
            return Ok(Value::UInt(r as u64));
        }
    } else if (i64::MIN as i128..=i64::MAX as i128).contains(&r) {
        return Ok(Value::Int(r as i64));
    }
    Err(out_of_range(what))
}

pub(crate) fn arith(op: BinOp, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let (x, y) = (num(a), num(b));
    let sym = match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        _ => "/",
    };
    match op {
        BinOp::Div => {
            let (xm, xs, ym, ys) = match (&x, &y) {
                (Num::Dbl(_), _) | (_, Num::Dbl(_)) => {
                    let d = b.to_f64().unwrap_or(0.0);
                    if d == 0.0 {
                        return Ok(Value::Null);
                    }
                    return double_result(a.to_f64().unwrap_or(0.0) / d, sym);
                }
                _ => {
                    let (xm, xs) = as_dec(&x);
                    let (ym, ys) = as_dec(&y);
                    (xm, xs, ym, ys)
                }
            };
            if ym == 0 {
                return Ok(Value::Null);
            }
            let s = (xs + 4).min(30);
            // x/y at scale s: xm*10^(s - xs + ys) / ym
            let num = xm.checked_mul(10i128.pow((s + ys - xs) as u32));
            match num {
                Some(n) => Ok(Value::Decimal(round_div(n, ym), s)),
                None => Ok(Value::Double(
                    a.to_f64().unwrap_or(0.0) / b.to_f64().unwrap_or(1.0),
                )),
            }
        }
        BinOp::IntDiv | BinOp::Mod => {
            if let (Num::Int(p, pu), Num::Int(q, qu)) = (&x, &y) {
                if *q == 0 {
                    return Ok(Value::Null);
                }
                let r = if op == BinOp::IntDiv { p / q } else { p % q };
                return int_result(r, *pu || *qu && op == BinOp::IntDiv, sym);
            }
            let p = a.to_f64().unwrap_or(0.0);
            let q = b.to_f64().unwrap_or(0.0);
            if q == 0.0 {
                return Ok(Value::Null);
            }
            if op == BinOp::IntDiv {
                Ok(Value::Int((p / q).trunc() as i64))
            } else {
                match (&x, &y) {
                    (Num::Dbl(_), _) | (_, Num::Dbl(_)) => Ok(Value::Double(p % q)),
                    _ => {
                        let ((xm, xs), (ym, ys)) = (as_dec(&x), as_dec(&y));
                        let s = xs.max(ys);
                        Ok(Value::Decimal(scale_up(xm, xs, s) % scale_up(ym, ys, s), s))
                    }
                }
            }
        }
        _ => match (x, y) {
            (Num::Int(p, pu), Num::Int(q, qu)) => {
                let r = match op {
                    BinOp::Add => p + q,
                    BinOp::Sub => p - q,
                    _ => p.checked_mul(q).ok_or_else(|| out_of_range(sym))?,
                };
                int_result(r, pu || qu, sym)
            }
            (Num::Dbl(p), q) => double_result(dbl_op(op, p, to_f(&q)), sym),
            (p, Num::Dbl(q)) => double_result(dbl_op(op, to_f(&p), q), sym),
            (p, q) => {
                let ((xm, xs), (ym, ys)) = (as_dec(&p), as_dec(&q));
                let dec_err = || dec_out_of_range(sym);
                match op {
                    BinOp::Mul => {
                        // The product's scale is xs + ys, at most 30 (MySQL): round the rest.
                        let m = xm.checked_mul(ym).ok_or_else(dec_err)?;
                        let s = xs as u32 + ys as u32;
                        if s > 30 {
                            Ok(Value::Decimal(round_div(m, 10i128.pow(s - 30)), 30))
                        } else {
                            Ok(Value::Decimal(m, s as u8))
                        }
                    }
                    _ => {
                        let s = xs.max(ys);
                        let u = xm
                            .checked_mul(10i128.pow((s - xs) as u32))
                            .ok_or_else(dec_err)?;
                        let v = ym
                            .checked_mul(10i128.pow((s - ys) as u32))
                            .ok_or_else(dec_err)?;
                        let r = if op == BinOp::Add {
                            u.checked_add(v)
                        } else {
                            u.checked_sub(v)
                        };
                        Ok(Value::Decimal(r.ok_or_else(dec_err)?, s))
                    }
                }
            }
        },
    }
}

/// MySQL: a DOUBLE result that overflows is error 1690, never `inf`.
fn double_result(d: f64, sym: &str) -> Result<Value> {
    if d.is_finite() {
        Ok(Value::Double(d))
    } else {
        Err(SqlError::out_of_range("DOUBLE", sym))
    }
}

fn dec_out_of_range(sym: &str) -> SqlError {
    SqlError::out_of_range("DECIMAL", sym)
}

fn round_div(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if (r.abs() * 2) >= d.abs() {
        if (n < 0) != (d < 0) {
            q - 1
        } else {
            q + 1
        }
    } else {
        q
    }
}

fn as_dec(n: &Num) -> (i128, u8) {
    match n {
        Num::Int(i, _) => (*i, 0),
        Num::Dec(m, s) => (*m, *s),
        Num::Dbl(d) => ((*d * 1e6).round() as i128, 6),
    }
}

fn to_f(n: &Num) -> f64 {
    match n {
        Num::Int(i, _) => *i as f64,
        Num::Dec(m, s) => *m as f64 / 10f64.powi(*s as i32),
        Num::Dbl(d) => *d,
    }
}

fn dbl_op(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        _ => a * b,
    }
}

fn binary(op: BinOp, a: &Expr, b: &Expr, row: &[Value], env: &dyn Env) -> Result<Value> {
    match op {
        BinOp::And => {
            let x = a.eval(row, env)?.truth();
            if x == Some(false) {
                return Ok(Value::Int(0));
            }
            let y = b.eval(row, env)?.truth();
            return Ok(match (x, y) {
                (_, Some(false)) => Value::Int(0),
                (Some(true), Some(true)) => Value::Int(1),
                _ => Value::Null,
            });
        }
        BinOp::Or => {
            let x = a.eval(row, env)?.truth();
            if x == Some(true) {
                return Ok(Value::Int(1));
            }
            let y = b.eval(row, env)?.truth();
            return Ok(match (x, y) {
                (_, Some(true)) => Value::Int(1),
                (Some(false), Some(false)) => Value::Int(0),
                _ => Value::Null,
            });
        }
        _ => {}
    }
    let x = a.eval(row, env)?;
    let y = b.eval(row, env)?;
    match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul => arith(op, &x, &y),
        BinOp::Div | BinOp::IntDiv | BinOp::Mod => {
            let r = arith(op, &x, &y)?;
            if r.is_null() && !x.is_null() && !y.is_null() {
                env.division_by_zero()?;
            }
            Ok(r)
        }
        BinOp::NullSafeEq => Ok(Value::Int(match (x.is_null(), y.is_null()) {
            (true, true) => 1,
            (false, false) => (compare(&x, &y) == Ordering::Equal) as i64,
            _ => 0,
        })),
        BinOp::Xor => Ok(match (x.truth(), y.truth()) {
            (Some(p), Some(q)) => Value::Int((p != q) as i64),
            _ => Value::Null,
        }),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            match (x.to_i128(), y.to_i128()) {
                (Some(p), Some(q)) => {
                    let (p, q) = (p as u64, q as u64);
                    Ok(Value::UInt(match op {
                        BinOp::BitAnd => p & q,
                        BinOp::BitOr => p | q,
                        BinOp::BitXor => p ^ q,
                        BinOp::Shl => p.checked_shl(q as u32).unwrap_or(0),
                        _ => p.checked_shr(q as u32).unwrap_or(0),
                    }))
                }
                _ => Ok(Value::Null),
            }
        }
        _ => {
            if x.is_null() || y.is_null() {
                return Ok(Value::Null);
            }
            let o = compare(&x, &y);
            let r = match op {
                BinOp::Eq => o == Ordering::Equal,
                BinOp::Ne => o != Ordering::Equal,
                BinOp::Lt => o == Ordering::Less,
                BinOp::Le => o != Ordering::Greater,
                BinOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            };
            Ok(Value::Int(r as i64))
        }
    }
}

/// SQL LIKE with `%`, `_` and an escape byte; bytewise (binary collation).
pub fn like(s: &[u8], p: &[u8], esc: u8) -> bool {
    like_units(s, p, b'%', b'_', esc, |a, b| a == b)
}

/// LIKE over any unit (bytes, or characters for a collation's per-character LIKE):
/// `any` matches any run of units, `one` one unit, `esc` quotes the next pattern unit,
/// and `eq(pattern unit, subject unit)` decides a literal match. Iterative, backtracking
/// only to the last `any`: linear memory, no recursion on hostile patterns.
pub fn like_units<U: Copy + PartialEq>(
    s: &[U],
    p: &[U],
    any: U,
    one: U,
    esc: U,
    eq: impl Fn(U, U) -> bool,
) -> bool {
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            let c = p[pi];
            if c == any {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            let (lit, adv) = if c == esc && pi + 1 < p.len() {
                (Some(p[pi + 1]), 2)
            } else if c == one {
                (None, 1)
            } else {
                (Some(c), 1)
            };
            if lit.is_none_or(|l| eq(l, s[si])) {
                si += 1;
                pi += adv;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == any {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_mysql_examples() {
        assert!(like(b"abc", b"a%", b'\\'));
        assert!(like(b"abc", b"%b%", b'\\'));
        assert!(like(b"abc", b"a_c", b'\\'));
        assert!(!like(b"abc", b"a_", b'\\'));
        assert!(like(b"a%c", b"a\\%c", b'\\'));
        assert!(!like(b"abc", b"a\\%c", b'\\'));
        assert!(like(b"", b"%", b'\\'));
        assert!(like(b"mississippi", b"%iss%ppi", b'\\'));
        assert!(!like(b"abc", b"", b'\\'));
    }

    #[test]
    fn arithmetic_types() {
        assert_eq!(
            arith(BinOp::Add, &Value::Int(1), &Value::Int(2)).unwrap(),
            Value::Int(3)
        );
        assert_eq!(
            arith(BinOp::Div, &Value::Int(1), &Value::Int(3)).unwrap(),
            Value::Decimal(3333, 4)
        );
        assert_eq!(
            arith(BinOp::Div, &Value::Int(1), &Value::Int(0)).unwrap(),
            Value::Null
        );
        assert_eq!(
            arith(BinOp::Add, &Value::Decimal(150, 2), &Value::Int(1)).unwrap(),
            Value::Decimal(250, 2)
        );
        assert!(arith(BinOp::Mul, &Value::Int(i64::MAX), &Value::Int(2)).is_err());
        assert_eq!(
            arith(BinOp::Mod, &Value::Int(7), &Value::Int(3)).unwrap(),
            Value::Int(1)
        );
        assert_eq!(
            arith(BinOp::Add, &Value::Bytes(b"1.5".to_vec()), &Value::Int(1)).unwrap(),
            Value::Double(2.5)
        );
    }
}
