//! EXISTS and NOT EXISTS: when they can run as one semi or anti join instead
//! of one evaluation of their pattern per solution, and the bindings that the
//! per-solution evaluation substitutes into the pattern (SPARQL 1.1 §18.6).
//!
//! `EXISTS {P}` is true for a solution μ when `substitute(P, μ)` has a
//! solution. A join with P evaluated once gives the same answer when every
//! solution of P binds every variable of P and nothing in P can observe
//! whether a variable was substituted:
//!
//! - A basic graph pattern: a solution σ of `substitute(P, μ)` extended with
//!   μ on P's variables is a solution of P compatible with μ, and a solution
//!   of P compatible with μ binds all of P's variables, so it agrees with μ
//!   where both are bound and restricted to the others solves the
//!   substituted pattern. Joins of such patterns and GRAPH around them keep
//!   this (a GRAPH variable is bound in every solution too).
//! - A FILTER inside P whose variables are each either bound by the
//!   pattern it filters (then the substituted value equals the solution's
//!   value) or not a variable of P at all (then substitution supplies μ's
//!   value or leaves it unbound). Filters that read outer variables cannot
//!   run inside P evaluated without μ; they are checked afterwards on each
//!   pair of compatible solutions, which is where substitution would put the
//!   outer values. A variable of P that the filtered pattern does not bind
//!   is unbound inside the filter unless μ binds it, which only the
//!   per-solution path knows, so such patterns are not rewritten.
//! - Not property paths (a zero-length path matches a substituted term
//!   that the data never mentions), OPTIONAL, MINUS, UNION, BIND, VALUES or
//!   subqueries (their results depend on which variables are bound going
//!   in), nor filters calling random or fresh-term functions, whose values
//!   per solution would become one value for all.

use crate::expr::expression_variables;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

/// At most this many shared variables in a semi join (the bound ones of a
/// probe are a bit mask).
pub const MAX_SHARED: usize = 32;

/// A conjunct of a FILTER to run as a semi join (EXISTS) or anti join (NOT
/// EXISTS).
pub struct SemiJoinSpec {
    /// The pattern, without the filters that read outer variables.
    pub pattern: GraphPattern,
    /// Those filters, to check on each outer row with a matching solution.
    pub residual: Option<Expression>,
    pub anti: bool,
}

/// The top-level conjuncts of a FILTER condition.
pub fn conjuncts(expression: &Expression) -> Vec<Expression> {
    let mut out = Vec::new();
    split_and(expression, &mut out);
    out
}

fn split_and(expression: &Expression, out: &mut Vec<Expression>) {
    match expression {
        Expression::And(a, b) => {
            split_and(a, out);
            split_and(b, out);
        }
        other => out.push(other.clone()),
    }
}

/// `a && b && ...` of a non-empty list.
pub fn and_all(mut parts: Vec<Expression>) -> Option<Expression> {
    let last = parts.pop()?;
    Some(
        parts
            .into_iter()
            .rev()
            .fold(last, |acc, e| Expression::And(Box::new(e), Box::new(acc))),
    )
}

/// The semi or anti join for a FILTER conjunct over rows of `outer`'s
/// variables, if the conjunct is a (NOT) EXISTS that one allows.
pub fn as_semi_join(conjunct: &Expression, outer: &[Variable]) -> Option<SemiJoinSpec> {
    let (pattern, anti) = match conjunct {
        Expression::Exists(p) => (p.as_ref(), false),
        Expression::Not(inner) => match inner.as_ref() {
            Expression::Exists(p) => (p.as_ref(), true),
            _ => return None,
        },
        _ => return None,
    };
    let mut own = FxHashSet::default();
    pattern_variables(pattern, &mut own)?;
    // One more for the variable of an enclosing GRAPH.
    if own.len() >= MAX_SHARED {
        return None;
    }
    let mut residual = Vec::new();
    let (pattern, _) = strip(pattern, &own, outer, &mut residual)?;
    Some(SemiJoinSpec {
        pattern,
        residual: and_all(residual),
        anti,
    })
}

/// The variables of a pattern made of the allowed parts; `None` for any
/// other part.
fn pattern_variables(pattern: &GraphPattern, out: &mut FxHashSet<Variable>) -> Option<()> {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            for t in patterns {
                for term in [&t.subject, &t.object] {
                    match term {
                        TermPattern::Variable(v) => {
                            out.insert(v.clone());
                        }
                        TermPattern::NamedNode(_)
                        | TermPattern::BlankNode(_)
                        | TermPattern::Literal(_) => {}
                        #[allow(unreachable_patterns)]
                        _ => return None,
                    }
                }
                if let NamedNodePattern::Variable(v) = &t.predicate {
                    out.insert(v.clone());
                }
            }
            Some(())
        }
        GraphPattern::Join { left, right } => {
            pattern_variables(left, out)?;
            pattern_variables(right, out)
        }
        GraphPattern::Filter { inner, .. } => pattern_variables(inner, out),
        GraphPattern::Graph { name, inner } => {
            if let NamedNodePattern::Variable(v) = name {
                out.insert(v.clone());
            }
            pattern_variables(inner, out)
        }
        _ => None,
    }
}

/// The pattern without the filters that read outer variables (moved to
/// `residual`), and the variables every solution of it binds.
fn strip(
    pattern: &GraphPattern,
    own: &FxHashSet<Variable>,
    outer: &[Variable],
    residual: &mut Vec<Expression>,
) -> Option<(GraphPattern, FxHashSet<Variable>)> {
    match pattern {
        GraphPattern::Bgp { .. } => {
            let mut bound = FxHashSet::default();
            pattern_variables(pattern, &mut bound)?;
            Some((pattern.clone(), bound))
        }
        GraphPattern::Join { left, right } => {
            let (left, mut bound) = strip(left, own, outer, residual)?;
            let (right, right_bound) = strip(right, own, outer, residual)?;
            bound.extend(right_bound);
            Some((
                GraphPattern::Join {
                    left: Box::new(left),
                    right: Box::new(right),
                },
                bound,
            ))
        }
        GraphPattern::Graph { name, inner } => {
            let (inner, mut bound) = strip(inner, own, outer, residual)?;
            if let NamedNodePattern::Variable(v) = name {
                bound.insert(v.clone());
            }
            Some((
                GraphPattern::Graph {
                    name: name.clone(),
                    inner: Box::new(inner),
                },
                bound,
            ))
        }
        GraphPattern::Filter { expr, inner } => {
            let (inner, bound) = strip(inner, own, outer, residual)?;
            let mut used = FxHashSet::default();
            expression_variables(expr, &mut used)?;
            let mut reads_outer = false;
            for v in &used {
                if bound.contains(v) {
                    continue;
                }
                if own.contains(v) {
                    return None;
                }
                reads_outer |= outer.contains(v);
            }
            if reads_outer {
                residual.push(expr.clone());
                Some((inner, bound))
            } else {
                Some((
                    GraphPattern::Filter {
                        expr: expr.clone(),
                        inner: Box::new(inner),
                    },
                    bound,
                ))
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::SparqlParser;

    /// The FILTER condition of `SELECT * { ?x ?p ?y FILTER(...) }`.
    fn condition(filter: &str) -> Expression {
        let query =
            format!("PREFIX ex: <http://example.org/> SELECT * {{ ?x ?p ?y FILTER({filter}) }}");
        let query = SparqlParser::new().parse_query(&query).unwrap();
        let spargebra::Query::Select { pattern, .. } = query else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        let GraphPattern::Filter { expr, .. } = *inner else {
            unreachable!()
        };
        expr
    }

    fn outer() -> Vec<Variable> {
        ["x", "p", "y"].map(Variable::new_unchecked).to_vec()
    }

    #[test]
    fn basic_patterns_and_own_filters_become_joins() {
        let spec = as_semi_join(
            &condition("NOT EXISTS { ?x ex:q ?z FILTER(?z > 3) }"),
            &outer(),
        )
        .unwrap();
        assert!(spec.anti && spec.residual.is_none());
        assert!(matches!(spec.pattern, GraphPattern::Filter { .. }));
    }

    #[test]
    fn filters_on_outer_variables_are_checked_after_the_join() {
        let spec = as_semi_join(
            &condition("EXISTS { ?x ex:q ?z FILTER(?z != ?y) }"),
            &outer(),
        )
        .unwrap();
        assert!(!spec.anti);
        assert_eq!(spec.residual.unwrap().to_string(), "!(?z = ?y)");
        assert!(matches!(spec.pattern, GraphPattern::Bgp { .. }));
    }

    #[test]
    fn patterns_that_see_what_is_bound_stay_per_row() {
        for filter in [
            "EXISTS { ?x ex:q ?z OPTIONAL { ?z ex:r ?y } }",
            "EXISTS { ?x ex:q ?z MINUS { ?z ex:r ?y } }",
            "EXISTS { ?x ex:q* ?z }",
            "EXISTS { { ?x ex:q ?z FILTER(?w = 1) } ?z ex:r ?w }",
            "EXISTS { ?x ex:q ?z FILTER(RAND() < 0.5) }",
            "EXISTS { ?x ex:q ?z FILTER NOT EXISTS { ?z ex:r ?y } }",
            "EXISTS { ?x ex:q ?z BIND(1 AS ?w) }",
            "BOUND(?x)",
        ] {
            assert!(
                as_semi_join(&condition(filter), &outer()).is_none(),
                "{filter}"
            );
        }
    }
}
