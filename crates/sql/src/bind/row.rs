//! Row constructors: `(a, b) op (x, y)` and `ROW(a, b)` compared with `=`,
//! `<>`, `<=>`, `<`, `<=`, `>`, `>=`, and `(a, b) [NOT] IN ((..), (..))`,
//! bound as the scalar comparisons MySQL's row comparison is equivalent to
//! (its `Arg_comparator::compare_row`): `=` is the AND of the equalities, `<>`
//! their OR, `<` is lexicographic (`a < x OR (a = x AND b < y)`: a NULL
//! before the first difference makes NULL), IN the OR of row equalities.
//! Rows nest (`((a, b), c) = ((1, 2), 3)`). A row where one value belongs,
//! or rows of different sizes, is 1241. Redundant conjuncts the access path
//! can use are added: `a >= x` for `(a, b) > (x, y)` (a range on the leading
//! column, filtered by the exact comparison), `a IN (..) AND b IN (..)` for a
//! row IN list (point lookups on a key over the columns).
use super::*;

/// The items of a row constructor (`(a, b)`, `ROW(a, b)`), None for a scalar.
pub(super) fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Nested(inner) => row_items(inner),
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("ROW") => {
            let ast::FunctionArguments::List(l) = &f.args else {
                return None;
            };
            let items: Option<Vec<&ast::Expr>> = l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect();
            items.filter(|i| i.len() >= 2 && f.over.is_none())
        }
        _ => None,
    }
}

/// How many columns an operand has (1 for a scalar).
fn width(e: &ast::Expr) -> usize {
    row_items(e).map_or(1, |i| i.len())
}

/// `e AND f`.
fn and(a: Expr, b: Expr) -> Expr {
    Expr::Bin(BinOp::And, Box::new(a), Box::new(b))
}

/// `e OR f`.
fn or(a: Expr, b: Expr) -> Expr {
    Expr::Bin(BinOp::Or, Box::new(a), Box::new(b))
}

/// The AND (or OR) of `items` as a balanced tree.
fn tree(items: Vec<Expr>, op: BinOp) -> Expr {
    Expr::balanced(op, items)
}

impl Binder<'_> {
    /// `l op r` where either side is a row constructor; None when neither is.
    pub(super) fn row_compare(
        &mut self,
        l: &ast::Expr,
        op: &ast::BinaryOperator,
        r: &ast::Expr,
        scope: &Scope,
    ) -> Result<Option<Expr>> {
        let (lw, rw) = (width(l), width(r));
        if lw == 1 && rw == 1 {
            return Ok(None);
        }
        if matches!(r, ast::Expr::Subquery(_)) || matches!(l, ast::Expr::Subquery(_)) {
            return Err(SqlError::unsupported("row subqueries"));
        }
        let o = binop(op)?;
        if !matches!(
            o,
            BinOp::Eq
                | BinOp::Ne
                | BinOp::NullSafeEq
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
        ) {
            return Err(SqlError::operand_columns(1));
        }
        if lw != rw {
            return Err(SqlError::operand_columns(lw));
        }
        let (ls, rs) = (
            row_items(l).unwrap_or_default(),
            row_items(r).unwrap_or_default(),
        );
        let pairs: Vec<(&ast::Expr, &ast::Expr)> = ls.into_iter().zip(rs).collect();
        self.rows_op(&pairs, o, scope).map(Some)
    }

    /// The comparison `op` of two rows given as their item pairs.
    fn rows_op(
        &mut self,
        pairs: &[(&ast::Expr, &ast::Expr)],
        o: BinOp,
        scope: &Scope,
    ) -> Result<Expr> {
        match o {
            BinOp::Eq | BinOp::NullSafeEq | BinOp::Ne => {
                let parts = pairs
                    .iter()
                    .map(|(a, b)| self.pair(a, b, o, scope))
                    .collect::<Result<Vec<_>>>()?;
                Ok(tree(
                    parts,
                    if o == BinOp::Ne {
                        BinOp::Or
                    } else {
                        BinOp::And
                    },
                ))
            }
            _ => {
                let lex = self.lexicographic(pairs, o, scope)?;
                // The leading pair bounds the first column (a range for the
                // access path); exact with NULLs too (see the module comment).
                let Some((a, b)) = pairs.first() else {
                    return Ok(lex);
                };
                if width(a) > 1 || pairs.len() < 2 {
                    return Ok(lex);
                }
                let weak = match o {
                    BinOp::Lt | BinOp::Le => BinOp::Le,
                    _ => BinOp::Ge,
                };
                Ok(and(self.pair(a, b, weak, scope)?, lex))
            }
        }
    }

    /// `a op b` for one item pair (rows again when the items are rows).
    fn pair(&mut self, a: &ast::Expr, b: &ast::Expr, o: BinOp, scope: &Scope) -> Result<Expr> {
        let (aw, bw) = (width(a), width(b));
        if aw != bw {
            return Err(SqlError::operand_columns(aw));
        }
        if aw > 1 {
            let (xs, ys) = (
                row_items(a).unwrap_or_default(),
                row_items(b).unwrap_or_default(),
            );
            let pairs: Vec<(&ast::Expr, &ast::Expr)> = xs.into_iter().zip(ys).collect();
            return self.rows_op(&pairs, o, scope);
        }
        Ok(Expr::Bin(
            o,
            Box::new(self.expr(a, scope)?),
            Box::new(self.expr(b, scope)?),
        ))
    }

    /// `(a, b, ..) op (x, y, ..)` for `<`, `<=`, `>`, `>=`: the first
    /// differing pair decides, `a < x OR (a = x AND rest)`.
    fn lexicographic(
        &mut self,
        pairs: &[(&ast::Expr, &ast::Expr)],
        o: BinOp,
        scope: &Scope,
    ) -> Result<Expr> {
        let strict = match o {
            BinOp::Le => BinOp::Lt,
            BinOp::Ge => BinOp::Gt,
            o => o,
        };
        let Some(((a, b), rest)) = pairs.split_first() else {
            return Err(SqlError::internal("empty row"));
        };
        if rest.is_empty() {
            return self.pair(a, b, o, scope);
        }
        let first = self.pair(a, b, strict, scope)?;
        let same = self.pair(a, b, BinOp::Eq, scope)?;
        let tail = self.lexicographic(rest, o, scope)?;
        Ok(or(first, and(same, tail)))
    }

    /// `row [NOT] IN (row, ...)`; None when `x` is not a row and no item is.
    pub(super) fn row_in(
        &mut self,
        x: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        scope: &Scope,
    ) -> Result<Option<Expr>> {
        let w = width(x);
        if w == 1 {
            return match list.iter().find(|i| width(i) > 1) {
                Some(_) => Err(SqlError::operand_columns(1)),
                None => Ok(None),
            };
        }
        if list.iter().any(|i| width(i) != w) {
            return Err(SqlError::operand_columns(w));
        }
        let xs = row_items(x).unwrap_or_default();
        let mut alts = Vec::with_capacity(list.len());
        for item in list {
            let ys = row_items(item).unwrap_or_default();
            let pairs: Vec<(&ast::Expr, &ast::Expr)> = xs.iter().copied().zip(ys).collect();
            alts.push(self.rows_op(&pairs, BinOp::Eq, scope)?);
        }
        let any = tree(alts, BinOp::Or);
        if negated {
            return Ok(Some(Expr::Not(Box::new(any))));
        }
        // Each scalar column IN its values: implied by the row IN, and an
        // access path can probe them (see the module comment).
        let mut conj = Vec::with_capacity(w + 1);
        for (k, c) in xs.iter().enumerate() {
            if width(c) > 1 {
                continue;
            }
            let vals = list
                .iter()
                .filter_map(|i| row_items(i).and_then(|ys| ys.get(k).copied()))
                .map(|v| self.expr(v, scope))
                .collect::<Result<Vec<_>>>()?;
            conj.push(Expr::In(Box::new(self.expr(c, scope)?), vals, false));
        }
        conj.push(any);
        Ok(Some(tree(conj, BinOp::And)))
    }
}
