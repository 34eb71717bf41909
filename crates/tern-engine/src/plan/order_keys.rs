//! ORDER BY keys that a BIND below has already computed: `SELECT ((?a /
//! ?b) AS ?r) ... ORDER BY DESC(?a / ?b)` sorts by `?r`'s column instead of
//! evaluating the expression again for every row (BSBM BI Q03 computes
//! `xsd:float(?monthCount) / ?monthBeforeCount` for 153 K rows at 100M,
//! and the BIND remembers repeated inputs where the sort cannot).
//!
//! A BIND's value is the expression's value for the row (unbound on an
//! error, as an ORDER BY key is), so the two orders are the same; only
//! expressions whose value is a function of the row qualify (no EXISTS,
//! RAND(), BNODE(), UUID()).

use crate::expr::expression_variables;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};

/// `order` with each key that equals the expression of a BIND right below
/// (through BINDs and FILTERs) replaced by that BIND's variable.
pub(super) fn with_bound_values(
    inner: &GraphPattern,
    order: &[OrderExpression],
) -> Vec<OrderExpression> {
    let mut bound = Vec::new();
    let mut node = inner;
    loop {
        match node {
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => {
                bound.push((expression, variable));
                node = inner;
            }
            GraphPattern::Filter { inner, .. } => node = inner,
            _ => break,
        }
    }
    let computed = |key: &Expression| -> Expression {
        let function_of_row = expression_variables(key, &mut FxHashSet::default()).is_some();
        let found = bound.iter().find(|(expression, _)| *expression == key);
        match found {
            Some((_, variable)) if function_of_row && !matches!(key, Expression::Variable(_)) => {
                Expression::Variable((*variable).clone())
            }
            _ => key.clone(),
        }
    };
    order
        .iter()
        .map(|key| match key {
            OrderExpression::Asc(e) => OrderExpression::Asc(computed(e)),
            OrderExpression::Desc(e) => OrderExpression::Desc(computed(e)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::{Query, SparqlParser};

    /// The ORDER BY keys of a SELECT query, after the substitution.
    fn keys(query: &str) -> Vec<String> {
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(query).unwrap() else {
            panic!("a SELECT query");
        };
        let mut node = &pattern;
        loop {
            match node {
                GraphPattern::OrderBy { inner, expression } => {
                    return with_bound_values(inner, expression)
                        .iter()
                        .map(|k| k.to_string())
                        .collect();
                }
                GraphPattern::Project { inner, .. }
                | GraphPattern::Slice { inner, .. }
                | GraphPattern::Distinct { inner } => node = inner,
                other => panic!("no ORDER BY: {other}"),
            }
        }
    }

    #[test]
    fn keys_computed_by_a_bind_are_read_from_its_column() {
        let got = keys(
            "SELECT ?p ((?a / ?b) AS ?r) WHERE { ?p <x:a> ?a ; <x:b> ?b } ORDER BY DESC(?a / ?b) ?p LIMIT 10",
        );
        assert_eq!(got, ["DESC(?r)", "ASC(?p)"]);
        let got = keys(
            "SELECT * WHERE { ?p <x:a> ?a BIND(STR(?a) AS ?s) FILTER(?a > 1) BIND(?a + 1 AS ?n) } ORDER BY (?a + 1) STR(?a) (?a * 2)",
        );
        assert_eq!(got[..2], ["ASC(?n)", "ASC(?s)"]);
        assert!(got[2].starts_with("ASC(?a * "), "{}", got[2]);
    }

    #[test]
    fn keys_that_differ_between_calls_are_evaluated_again() {
        let got = keys("SELECT * WHERE { ?p <x:a> ?a BIND(RAND() AS ?r) } ORDER BY RAND()");
        assert_eq!(got, ["ASC(RAND())"]);
    }
}
