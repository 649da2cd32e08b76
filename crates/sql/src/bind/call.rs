//! Binding function calls: scalar functions by name (`func::Func`) and
//! aggregate calls (arguments, DISTINCT, ORDER BY and SEPARATOR) into slots
//! of the grouped row.
use super::*;

impl Binder<'_> {
    pub(super) fn function(&mut self, f: &ast::Function, scope: &Scope) -> Result<Expr> {
        let name = f.name.to_string().to_ascii_uppercase();
        if f.over.is_some() {
            return crate::window::bind_call(self, f, &name, scope);
        }
        crate::accept::check_function(f, &name)?;
        let (args, distinct, star) = match &f.args {
            ast::FunctionArguments::None => (vec![], false, false),
            ast::FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("subqueries")),
            ast::FunctionArguments::List(l) => {
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut out = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            out.push(e.clone())
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(SqlError::unsupported(format!("argument form in {name}"))),
                    }
                }
                (out, distinct, star)
            }
        };
        if matches!(
            name.as_str(),
            "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE"
        ) {
            let [d, iv] = args.as_slice() else {
                return Err(SqlError::wrong_param_count());
            };
            return self.interval_add(d, iv, name.ends_with("SUB") || name == "SUBDATE", scope);
        }
        if matches!(name.as_str(), "TIMESTAMPDIFF" | "TIMESTAMPADD") {
            let [u, a, b] = args.as_slice() else {
                return Err(SqlError::wrong_param_count());
            };
            let unit = match u {
                ast::Expr::Identifier(i) if i.quote_style.is_none() => {
                    crate::func::time::Unit::from_name(&i.value)?
                }
                other => return Err(SqlError::parse(format!("near '{other}' in {name}"))),
            };
            let (a, b) = (self.expr(a, scope)?, self.expr(b, scope)?);
            return Ok(if name == "TIMESTAMPADD" {
                Expr::Func(Func::DateAdd(unit), vec![b, a])
            } else {
                Expr::Func(Func::TimestampDiff(unit), vec![a, b])
            });
        }
        let agg_func = match name.as_str() {
            "COUNT" if star => Some(AggFunc::CountStar),
            "COUNT" => Some(AggFunc::Count),
            "SUM" => Some(AggFunc::Sum),
            "AVG" => Some(AggFunc::Avg),
            "MIN" => Some(AggFunc::Min),
            "MAX" => Some(AggFunc::Max),
            "GROUP_CONCAT" => Some(AggFunc::GroupConcat),
            "JSON_ARRAYAGG" => Some(AggFunc::JsonArrayAgg),
            "JSON_OBJECTAGG" => Some(AggFunc::JsonObjectAgg),
            "ANY_VALUE" => Some(AggFunc::AnyValue),
            "STD" | "STDDEV" | "STDDEV_POP" => Some(AggFunc::StdPop),
            "STDDEV_SAMP" => Some(AggFunc::StdSamp),
            "VARIANCE" | "VAR_POP" => Some(AggFunc::VarPop),
            "VAR_SAMP" => Some(AggFunc::VarSamp),
            "BIT_AND" => Some(AggFunc::BitAnd),
            "BIT_OR" => Some(AggFunc::BitOr),
            "BIT_XOR" => Some(AggFunc::BitXor),
            _ => None,
        };
        if let Some(func) = agg_func {
            let Some(mut agg) = self.agg.take() else {
                return Err(SqlError::invalid_group_function());
            };
            // Arguments are bound over the base row.
            let win = self.win.take();
            let outer = std::mem::replace(&mut self.agg_arg, true);
            let r = self.agg_spec(func, f, &args, distinct, scope);
            self.win = win;
            self.agg_arg = outer;
            match r {
                Ok(spec) => agg.aggs.push(spec),
                Err(e) => {
                    self.agg = Some(agg);
                    return Err(e);
                }
            }
            let slot = agg.group.len() + agg.aggs.len() - 1;
            self.agg = Some(agg);
            return Ok(Expr::Col(slot));
        }
        if name == "VALUES" {
            if let (Some(base), Some(ast::Expr::Identifier(id))) = (self.values_base, args.first())
            {
                let p = scope
                    .find(None, &id.value)?
                    .ok_or_else(|| SqlError::unknown_column(&id.value, "field list"))?;
                return Ok(Expr::Col(base + p));
            }
        }
        let func = Func::by_name(&name).ok_or_else(|| {
            if crate::window::window_only(&name) {
                SqlError::parse(format!("{name}() needs an OVER clause"))
            } else {
                SqlError::unknown_function(&name)
            }
        })?;
        let typed = func.json_args_typed();
        let bound = args
            .iter()
            .map(|a| match a {
                // TRUE/FALSE stay truth values inside JSON (`true`, not 1).
                ast::Expr::Value(v) if typed && matches!(v.value, ast::Value::Boolean(_)) => {
                    let b = matches!(v.value, ast::Value::Boolean(true));
                    Ok(Expr::IsBool(
                        Box::new(Expr::Const(Value::Int(b as i64))),
                        true,
                        false,
                    ))
                }
                a => self.expr(a, scope),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr::Func(func, bound))
    }
}

impl Binder<'_> {
    /// Binds an aggregate call's arguments and clauses (`self.agg` is taken out
    /// while this runs, so the arguments bind over the base row).
    fn agg_spec(
        &mut self,
        func: AggFunc,
        f: &ast::Function,
        args: &[ast::Expr],
        distinct: bool,
        scope: &Scope,
    ) -> Result<AggSpec> {
        let name = f.name.to_string().to_ascii_uppercase();
        if func != AggFunc::CountStar && args.is_empty() {
            return Err(SqlError::parse(format!("{name}() needs an argument")));
        }
        if distinct && func.statistic() {
            return Err(SqlError::parse(format!("near 'DISTINCT' in {name}")));
        }
        let mut bound = Vec::with_capacity(args.len());
        if func != AggFunc::CountStar {
            for a in args {
                bound.push(self.expr(a, scope)?);
            }
        }
        let arg = match (func, bound.len()) {
            (AggFunc::CountStar, _) => None,
            (AggFunc::JsonObjectAgg, 2) => Some(Expr::Func(Func::JsonObject, bound.clone())),
            (AggFunc::JsonObjectAgg, _) => {
                return Err(SqlError::wrong_param_count_to("json_objectagg"))
            }
            (_, 1) => Some(bound[0].clone()),
            // GROUP_CONCAT(a, b) concatenates; a NULL in any skips the row, as CONCAT.
            (AggFunc::GroupConcat, _) => Some(Expr::Func(Func::Concat, bound.clone())),
            (AggFunc::Count, _) if distinct => {
                return Err(SqlError::unsupported(
                    "COUNT(DISTINCT) over several expressions",
                ))
            }
            _ => return Err(SqlError::parse(format!("{name} takes one argument"))),
        };
        let mut spec = AggSpec::new(func, arg, distinct);
        if func == AggFunc::JsonObjectAgg {
            spec.sep = b", ".to_vec();
        }
        if let ast::FunctionArguments::List(l) = &f.args {
            for c in &l.clauses {
                match c {
                    ast::FunctionArgumentClause::OrderBy(v) => {
                        for o in v {
                            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                            // ORDER BY n names the n-th argument.
                            let pos = match &o.expr {
                                ast::Expr::Value(v) => match &v.value {
                                    ast::Value::Number(n, _) => n.parse::<usize>().ok(),
                                    _ => None,
                                },
                                _ => None,
                            };
                            let e = match pos {
                                Some(n) if n >= 1 && n <= bound.len() => bound[n - 1].clone(),
                                Some(n) => return Err(SqlError::unknown_column(n, "order clause")),
                                None => self.expr(&o.expr, scope)?,
                            };
                            spec.order.push((e, desc));
                        }
                    }
                    ast::FunctionArgumentClause::Separator(v) => {
                        spec.sep = match literal(&v.value)? {
                            Value::Bytes(b) => b,
                            _ => return Err(SqlError::parse("SEPARATOR needs a string")),
                        };
                    }
                    other => {
                        return Err(SqlError::unsupported(format!("{other} in {name}")));
                    }
                }
            }
        }
        Ok(spec)
    }
}
