//! When OPTIONAL may be evaluated once per left row, with the row's values
//! substituted for the shared variables, instead of once for all rows.
//!
//! A few left rows against a large right pattern (BSBM's "the product's
//! offers, if any", one product and all offers of the store) make the plain
//! left join read the whole right side to keep a handful of rows; looking
//! the right side up per row reads only what matches.
//!
//! Substituting `v := c` into the right pattern P and then keeping the
//! solutions of P compatible with the row give the same rows exactly when
//! nothing in P can tell a substituted variable from one bound by P:
//!
//! - A basic graph pattern binds all its variables in every solution, so its
//!   substituted solutions are its solutions with `v = c`. Joins, unions and
//!   GRAPH of such patterns keep this.
//! - A FILTER sees the substituted value where the original would see P's
//!   own value of `v`. The two agree on every solution that survives when
//!   every substituted variable the condition reads is bound in every
//!   solution of the filtered pattern; a variable P may leave unbound would
//!   read as `c` instead of unbound.
//! - A nested OPTIONAL keeps its left solution alone when no right solution
//!   is compatible with it. Substituting into its right side turns right
//!   solutions with `v = c'` into no solutions, and so keeps left solutions
//!   alone that the original drops. It agrees when the substituted
//!   variables its right side and condition mention are bound in every
//!   solution of its left side, where substitution already fixed them.
//! - Not property paths (a zero-length path matches a substituted term that
//!   the data never mentions), BIND, VALUES, MINUS, subqueries or
//!   aggregates (what they produce depends on what is bound going in), nor
//!   conditions with EXISTS or random or fresh-term functions.

use crate::expr::expression_variables;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

/// `FILTER(expr)` over an OPTIONAL moved onto the OPTIONAL's left side, when
/// every variable the filter reads is bound in every left solution: the
/// OPTIONAL leaves those values as they are, so the filter keeps the same
/// rows, and the OPTIONAL then works only on the rows kept.
pub fn filter_below_optional(expr: &Expression, inner: &GraphPattern) -> Option<GraphPattern> {
    let GraphPattern::LeftJoin {
        left,
        right,
        expression,
    } = inner
    else {
        return None;
    };
    let bound = certainly_bound(left, &[])?;
    let mut read = FxHashSet::default();
    expression_variables(expr, &mut read)?;
    read.iter()
        .all(|v| bound.contains(v))
        .then(|| GraphPattern::LeftJoin {
            left: Box::new(GraphPattern::Filter {
                expr: expr.clone(),
                inner: left.clone(),
            }),
            right: right.clone(),
            expression: expression.clone(),
        })
}

/// Whether `right`, the pattern of an OPTIONAL over rows of `left`
/// variables, may be evaluated per left row with substitution.
pub fn fits_per_row(right: &GraphPattern, left: &[Variable]) -> bool {
    certainly_bound(right, left).is_some()
}

/// The variables bound in every solution of `pattern`, or `None` when the
/// pattern does not allow substitution of `outer` variables.
pub fn certainly_bound(pattern: &GraphPattern, outer: &[Variable]) -> Option<FxHashSet<Variable>> {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            let mut bound = FxHashSet::default();
            for t in patterns {
                for term in [&t.subject, &t.object] {
                    if let TermPattern::Variable(v) = term {
                        bound.insert(v.clone());
                    }
                }
                if let NamedNodePattern::Variable(v) = &t.predicate {
                    bound.insert(v.clone());
                }
            }
            Some(bound)
        }
        GraphPattern::Join { left, right } => {
            let mut bound = certainly_bound(left, outer)?;
            bound.extend(certainly_bound(right, outer)?);
            Some(bound)
        }
        GraphPattern::Union { left, right } => {
            let left = certainly_bound(left, outer)?;
            let right = certainly_bound(right, outer)?;
            Some(left.intersection(&right).cloned().collect())
        }
        GraphPattern::Graph { name, inner } => {
            let mut bound = certainly_bound(inner, outer)?;
            if let NamedNodePattern::Variable(v) = name {
                bound.insert(v.clone());
            }
            Some(bound)
        }
        GraphPattern::Filter { expr, inner } => {
            let bound = certainly_bound(inner, outer)?;
            reads_only_bound(expr, &bound, outer)?;
            Some(bound)
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            let bound = certainly_bound(left, outer)?;
            certainly_bound(right, outer)?;
            if let Some(expr) = expression {
                reads_only_bound(expr, &bound, outer)?;
            }
            let mut right_unfixed = false;
            right.on_in_scope_variable(|v| {
                right_unfixed |= outer.contains(v) && !bound.contains(v);
            });
            (!right_unfixed).then_some(bound)
        }
        _ => None,
    }
}

/// `Some` when every outer variable `expr` reads is in `bound`.
fn reads_only_bound(
    expr: &Expression,
    bound: &FxHashSet<Variable>,
    outer: &[Variable],
) -> Option<()> {
    let mut read = FxHashSet::default();
    expression_variables(expr, &mut read)?;
    read.iter()
        .all(|v| bound.contains(v) || !outer.contains(v))
        .then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::SparqlParser;

    /// The right side of the OPTIONAL in `SELECT * { ?x ex:p ?y OPTIONAL {...} }`.
    fn optional(body: &str) -> GraphPattern {
        let query = format!(
            "PREFIX ex: <http://example.org/> SELECT * {{ ?x ex:p ?y OPTIONAL {{ {body} }} }}"
        );
        let query = SparqlParser::new().parse_query(&query).unwrap();
        let spargebra::Query::Select { pattern, .. } = query else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        let GraphPattern::LeftJoin { right, .. } = *inner else {
            unreachable!("{inner}")
        };
        *right
    }

    fn outer() -> Vec<Variable> {
        ["x", "y"].map(Variable::new_unchecked).to_vec()
    }

    #[test]
    fn patterns_blind_to_substitution_fit() {
        for body in [
            "?x ex:q ?z",
            "?x ex:q ?z . ?z ex:r ?w",
            "?x ex:q ?z FILTER(?z > 3) OPTIONAL { ?z ex:r ?w }",
            "{ ?x ex:q ?z } UNION { ?x ex:r ?z }",
            "GRAPH ?g { ?x ex:q ?z }",
            "?x ex:q ?z OPTIONAL { ?z ex:r ?w FILTER(?x != ?w) }",
        ] {
            assert!(fits_per_row(&optional(body), &outer()), "{body}");
        }
    }

    #[test]
    fn filters_on_left_values_move_below_optionals() {
        let GraphPattern::Filter { expr, inner } =
            filtered("?x ex:p ?y OPTIONAL { ?y ex:q ?z } FILTER(?y > 2)")
        else {
            unreachable!()
        };
        let moved = filter_below_optional(&expr, &inner).unwrap();
        let GraphPattern::LeftJoin { left, .. } = moved else {
            unreachable!()
        };
        assert!(matches!(*left, GraphPattern::Filter { .. }));
        for stays in [
            "?x ex:p ?y OPTIONAL { ?y ex:q ?z } FILTER(?z > 2)",
            "?x ex:p ?y OPTIONAL { ?y ex:q ?z } FILTER(!BOUND(?z))",
        ] {
            let GraphPattern::Filter { expr, inner } = filtered(stays) else {
                unreachable!()
            };
            assert!(filter_below_optional(&expr, &inner).is_none(), "{stays}");
        }
    }

    /// The pattern of `SELECT * { body }`.
    fn filtered(body: &str) -> GraphPattern {
        let query = format!("PREFIX ex: <http://example.org/> SELECT * {{ {body} }}");
        let query = SparqlParser::new().parse_query(&query).unwrap();
        let spargebra::Query::Select { pattern, .. } = query else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        *inner
    }

    #[test]
    fn patterns_that_see_what_is_bound_do_not_fit() {
        for body in [
            // ?y is read where the filtered pattern may leave it unbound.
            "{ ?x ex:q ?z OPTIONAL { ?z ex:r ?y } FILTER(!BOUND(?y)) }",
            // ?y is substituted where a right solution may bind it otherwise.
            "?x ex:q ?z OPTIONAL { ?z ex:r ?y }",
            "?x ex:q* ?z",
            "?x ex:q ?z BIND(1 AS ?w)",
            "?x ex:q ?z MINUS { ?z ex:r ?y }",
            "{ SELECT ?x { ?x ex:q ?z } }",
            "{ ?x ex:q ?z FILTER(RAND() < 0.5) }",
            "{ ?x ex:q ?z FILTER NOT EXISTS { ?z ex:r ?y } }",
            "VALUES ?x { ex:a }",
        ] {
            assert!(!fits_per_row(&optional(body), &outer()), "{body}");
        }
    }
}
