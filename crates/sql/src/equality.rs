//! Equality propagation: from the conjuncts `a = b` and `b = 5` the planner
//! may also use `a = 5`, and from `a = b` and `b = c` also `a = c`. The
//! implied conjuncts only guide the choice of access paths (the full WHERE
//! is still evaluated on every row), so they must be implied, never merely
//! plausible: columns are joined into one class only when `=` compares
//! them the way it compares each of them with a constant, i.e. within one
//! comparison family (exact numbers; non-binary strings; binary strings;
//! one temporal type). So `customer.c_w_id = warehouse.w_id AND w_id = ?`
//! lets the customer table, read first, be probed on its whole primary key.
use crate::expr::{BinOp, Expr};
use rel::value::{ColumnType, TypeKind};

/// How `=` compares values of a column type; None: never propagated.
pub fn family(t: &ColumnType) -> Option<u8> {
    use TypeKind as K;
    Some(match t.kind {
        K::TinyInt | K::SmallInt | K::MediumInt | K::Int | K::BigInt | K::Decimal => 0,
        K::Char | K::VarChar | K::Text => 1,
        K::Binary | K::VarBinary | K::Blob => 2,
        K::Date => 3,
        K::DateTime | K::Timestamp => 4,
        K::Time => 5,
        K::Year => 6,
        // Approximate numbers: `=` on doubles is not transitive with exact values.
        K::Float | K::Double => return None,
        // `=` against a string compares the text, against a number the member number.
        K::Enum | K::Set => return None,
    })
}

/// A literal or a parameter: the same value wherever it is evaluated (unlike
/// RAND() or a column of an earlier table).
fn constant(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Param(_) => true,
        Expr::Neg(x) => constant(x),
        _ => false,
    }
}

/// `filter` with the conjuncts it implies (see `implied`) added, for the
/// choice of an access path; None when it implies nothing new.
pub fn with_implied(filter: Option<&Expr>, types: &[ColumnType]) -> Option<Expr> {
    let f = filter?;
    let conj = f.conjuncts();
    let extra = implied(&conj, types);
    if extra.is_empty() {
        return None;
    }
    Some(extra.into_iter().fold(f.clone(), |a, b| {
        Expr::Bin(BinOp::And, Box::new(a), Box::new(b))
    }))
}

fn find(p: &mut [usize], mut x: usize) -> usize {
    while p[x] != x {
        p[x] = p[p[x]];
        x = p[x];
    }
    x
}

/// The conjuncts implied by `conj` (over a row of `types.len()` columns)
/// and not already among them: for each class of columns equal to one
/// another, every member equal to each constant one member equals, and
/// every pair of members equal.
pub fn implied(conj: &[&Expr], types: &[ColumnType]) -> Vec<Expr> {
    let n = types.len();
    let fam: Vec<Option<u8>> = types.iter().map(family).collect();
    let same = |a: usize, b: usize| a < n && b < n && fam[a].is_some() && fam[a] == fam[b];
    let mut parent: Vec<usize> = (0..n).collect();
    let mut consts: Vec<(usize, &Expr)> = Vec::new();
    let mut joined = false;
    for c in conj {
        let Expr::Bin(BinOp::Eq, a, b) = c else {
            continue;
        };
        match (&**a, &**b) {
            (Expr::Col(x), Expr::Col(y)) if x != y && same(*x, *y) => {
                let (rx, ry) = (find(&mut parent, *x), find(&mut parent, *y));
                if rx != ry {
                    parent[rx] = ry;
                    joined = true;
                }
            }
            (Expr::Col(x), v) | (v, Expr::Col(x)) if *x < n && constant(v) => {
                consts.push((*x, v));
            }
            _ => {}
        }
    }
    if !joined {
        return Vec::new();
    }
    let mut classes: Vec<Vec<usize>> = vec![Vec::new(); n];
    for c in 0..n {
        let r = find(&mut parent, c);
        classes[r].push(c);
    }
    let has = |e: &Expr| conj.contains(&e);
    let mut out: Vec<Expr> = Vec::new();
    let push = |e: Expr, out: &mut Vec<Expr>| {
        if !has(&e) && !out.contains(&e) {
            out.push(e);
        }
    };
    for (col, v) in &consts {
        let r = find(&mut parent, *col);
        for &m in &classes[r] {
            if m != *col {
                push(
                    Expr::Bin(BinOp::Eq, Box::new(Expr::Col(m)), Box::new((*v).clone())),
                    &mut out,
                );
            }
        }
    }
    for class in classes.iter().filter(|c| c.len() > 2) {
        for (i, &a) in class.iter().enumerate() {
            for &b in &class[i + 1..] {
                let (x, y) = (Expr::Col(a), Expr::Col(b));
                let rev = Expr::Bin(BinOp::Eq, Box::new(y.clone()), Box::new(x.clone()));
                if !has(&rev) && !out.contains(&rev) {
                    push(Expr::Bin(BinOp::Eq, Box::new(x), Box::new(y)), &mut out);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rel::value::Value;

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::Bin(BinOp::Eq, Box::new(a), Box::new(b))
    }

    #[test]
    fn constants_and_columns_propagate_within_a_family() {
        let int = ColumnType::new(TypeKind::Int);
        let text = ColumnType::new(TypeKind::VarChar);
        let dbl = ColumnType::new(TypeKind::Double);
        // cols: 0 int, 1 int, 2 int, 3 varchar, 4 double
        let types = [int.clone(), int.clone(), int, text, dbl];
        let c = |i| Expr::Col(i);
        let five = Expr::Const(Value::Int(5));
        let w = [eq(c(0), c(1)), eq(c(1), Expr::Param(0)), eq(c(2), c(0))];
        let got = implied(&w.iter().collect::<Vec<_>>(), &types);
        assert!(got.contains(&eq(c(0), Expr::Param(0))));
        assert!(got.contains(&eq(c(2), Expr::Param(0))));
        assert!(got.contains(&eq(c(1), c(2))) || got.contains(&eq(c(2), c(1))));
        // Nothing already present is repeated.
        assert!(!got.contains(&eq(c(1), Expr::Param(0))));
        // An int column equal to a string column, or a double: no class.
        let w = [eq(c(0), c(3)), eq(c(3), five.clone())];
        assert!(implied(&w.iter().collect::<Vec<_>>(), &types).is_empty());
        let w = [eq(c(0), c(4)), eq(c(4), five.clone())];
        assert!(implied(&w.iter().collect::<Vec<_>>(), &types).is_empty());
        // A column compared with an expression over the row is no constant.
        let w = [eq(c(0), c(1)), eq(c(1), Expr::Neg(Box::new(c(2))))];
        assert!(implied(&w.iter().collect::<Vec<_>>(), &types).is_empty());
    }
}
