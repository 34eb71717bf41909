//! Negation written as `OPTIONAL { R FILTER(c) } FILTER(!bound(?v))`: the
//! rows of the left side that no solution of R (meeting c) extends, which is
//! `FILTER NOT EXISTS { R FILTER(c) }` over the left side, and so an anti
//! join (`filter`/`exists`) instead of a left join whose matches are made
//! and then thrown away.
//!
//! Exact when `?v` is bound in every solution of R and is no variable of
//! the left side: a left row that some solution of R extends (and c holds
//! for) comes out of the left join with `?v` bound and is dropped; one that
//! none extends comes out alone, with none of R's own variables bound, and
//! is kept. So the rows kept are the left rows without such a solution, with
//! nothing of R in them, and the other conjuncts of the filter read the same
//! values (R's own variables unbound) in both forms. Whether each left row
//! has such a solution is what NOT EXISTS asks; the condition c reads the
//! row's values where the left join would read the merged solution's.

use super::correlated::certainly_bound;
use super::exists;
use oxrdf::Variable;
use spargebra::algebra::{Expression, GraphPattern};

/// `FILTER(!bound(?v) && rest)` over `OPTIONAL` rewritten as
/// `FILTER(NOT EXISTS { R FILTER(c) } && rest)` over the left side.
pub fn as_not_exists(expression: &Expression, inner: &GraphPattern) -> Option<GraphPattern> {
    let GraphPattern::LeftJoin {
        left,
        right,
        expression: condition,
    } = inner
    else {
        return None;
    };
    let mut conjuncts = exists::conjuncts(expression);
    let bound_in_right = certainly_bound(right, &[])?;
    let mut left_variables: Vec<&Variable> = Vec::new();
    left.on_in_scope_variable(|v| left_variables.push(v));
    let found = conjuncts.iter().position(|c| match c {
        Expression::Not(inner) => matches!(inner.as_ref(),
            Expression::Bound(v) if bound_in_right.contains(v) && !left_variables.contains(&v)),
        _ => false,
    })?;
    let right = match condition {
        Some(c) => GraphPattern::Filter {
            expr: c.clone(),
            inner: right.clone(),
        },
        None => right.as_ref().clone(),
    };
    conjuncts[found] = Expression::Not(Box::new(Expression::Exists(Box::new(right))));
    Some(GraphPattern::Filter {
        expr: exists::and_all(conjuncts).expect("the NOT EXISTS at least"),
        inner: left.clone(),
    })
}
