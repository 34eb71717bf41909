//! Parts of a join that are neither triple patterns nor union leaves
//! (subqueries, DISTINCT projections, filtered groups) as leaves of the
//! group's join order, where the join as written multiplies: in
//! `{ SELECT DISTINCT ?x {..} } { SELECT DISTINCT ?y {..} } ?d dc:creator
//! ?x , ?y`, joined as written, the two subqueries share no variable, so
//! their join is a cross product (10,427 × 10,427 co-authors of one person
//! on the 10M bibliography: 108 M rows, then hash-joined with every pair
//! of co-authors of the store). As leaves, the join order starts from one
//! subquery's rows, looks its values up in the triple patterns, and joins
//! the other subquery by hash.
//!
//! A leaf's rows are computed once (they are a planned operator), so it is
//! read whole or hash-joined, never looked up per row: its lookup cost is
//! infinite, and a lookup the order still asks for (`pipelined`, small
//! LIMITs) becomes a hash join with the leaf built.
//!
//! Only parts whose every variable is bound in every row are leaves: the
//! index joins a leaf's rows drive take an unbound value for a wildcard,
//! which SPARQL's join does not. Only where two such parts share no
//! variable: elsewhere the written order has no cross product, and the
//! plans it gives are the ones the benchmarks measured.

use super::join_order::PatternEstimate;
use super::union_leaf::has_blank_node;
use crate::exec::BoxedOperator;
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::cell::RefCell;

/// A lookup cost no join order pays (finite: costs are added and compared,
/// and infinity times no rows is not a number).
const NEVER_LOOKED_UP: f64 = 1e12;

/// A planned part of a group, with its estimate.
pub(super) struct RowsLeaf {
    pub variables: Vec<Variable>,
    pub rows: u64,
    operator: RefCell<Option<BoxedOperator>>,
}

impl RowsLeaf {
    pub fn new(operator: BoxedOperator) -> RowsLeaf {
        RowsLeaf {
            variables: operator.variables().to_vec(),
            // Unknown (a part the estimates do not reach): as large as a
            // leaf that should not drive the order.
            rows: operator.estimated_rows().unwrap_or(1 << 20),
            operator: RefCell::new(Some(operator)),
        }
    }

    /// The leaf weighed in the join order: its variables' distinct values
    /// unknown (as many as its rows), and never worth a lookup per row.
    pub fn estimate(&self) -> PatternEstimate {
        let rows = self.rows.max(1) as f64;
        PatternEstimate {
            rows,
            variables: self.variables.iter().map(|v| (v.clone(), rows)).collect(),
            sorted_on: None,
            lookup_cost: NEVER_LOOKED_UP,
        }
    }

    /// The leaf's operator; a join tree uses each leaf once.
    pub fn take(&self) -> Result<BoxedOperator, EngineError> {
        self.operator
            .borrow_mut()
            .take()
            .ok_or_else(|| EngineError::Unsupported("a join part planned twice".into()))
    }
}

/// The triple patterns and the other parts of a join, when at least two of
/// the other parts share no variable (see the module comment) and every
/// other part binds all its variables in every row.
pub(super) fn group_with_parts(
    pattern: &GraphPattern,
) -> Option<(Vec<TriplePattern>, Vec<&GraphPattern>)> {
    let (mut patterns, mut parts) = (Vec::new(), Vec::new());
    collect(pattern, &mut patterns, &mut parts)?;
    let bound: Vec<Vec<Variable>> = parts
        .iter()
        .map(|p| always_bound(p))
        .collect::<Option<_>>()?;
    let disjoint = bound.iter().enumerate().any(|(i, a)| {
        bound[i + 1..]
            .iter()
            .any(|b| !a.iter().any(|v| b.contains(v)))
    });
    (!patterns.is_empty() && disjoint).then_some((patterns, parts))
}

fn collect<'a>(
    pattern: &'a GraphPattern,
    patterns: &mut Vec<TriplePattern>,
    parts: &mut Vec<&'a GraphPattern>,
) -> Option<()> {
    match pattern {
        GraphPattern::Join { left, right } => {
            collect(left, patterns, parts)?;
            collect(right, patterns, parts)
        }
        // Blank nodes are scoped to their group: merged with another
        // group's, equal labels would join.
        GraphPattern::Bgp { patterns: bgp } if !has_blank_node(bgp) => {
            patterns.extend(bgp.iter().cloned());
            Some(())
        }
        GraphPattern::Bgp { .. } => None,
        other => {
            parts.push(other);
            Some(())
        }
    }
}

/// The variables of `pattern`, when each is bound in every solution it
/// has; `None` when some may be unbound, or the shape is not one this
/// knows.
fn always_bound(pattern: &GraphPattern) -> Option<Vec<Variable>> {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            let mut out = Vec::new();
            let mut add = |v: &Variable| {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            };
            for p in patterns {
                for term in [&p.subject, &p.object] {
                    match term {
                        TermPattern::Variable(v) => add(v),
                        TermPattern::BlankNode(_) => return None,
                        _ => {}
                    }
                }
                if let NamedNodePattern::Variable(v) = &p.predicate {
                    add(v);
                }
            }
            Some(out)
        }
        GraphPattern::Project { inner, variables } => {
            let inner = always_bound(inner)?;
            variables
                .iter()
                .all(|v| inner.contains(v))
                .then(|| variables.clone())
        }
        GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Filter { inner, .. }
        | GraphPattern::Slice { inner, .. } => always_bound(inner),
        GraphPattern::Join { left, right } => {
            let mut out = always_bound(left)?;
            for v in always_bound(right)? {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Some(out)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::{Query, SparqlParser};

    /// The number of triple patterns and of other parts of the WHERE
    /// clause of `query`, if it is such a group.
    fn split(query: &str) -> Option<(usize, usize)> {
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(query).unwrap() else {
            unreachable!()
        };
        let GraphPattern::Project { inner, .. } = pattern else {
            unreachable!()
        };
        group_with_parts(&inner).map(|(p, parts)| (p.len(), parts.len()))
    }

    #[test]
    fn parts_that_would_multiply_become_leaves() {
        let x = "{ SELECT DISTINCT ?x WHERE { ?d <http://c> <http://p20>, ?x } }";
        let y = "{ SELECT DISTINCT ?y WHERE { ?e <http://c> <http://p20>, ?y } }";
        let bgp = "?f <http://c> ?x, ?y .";
        assert_eq!(
            split(&format!("SELECT * WHERE {{ {x} {y} {bgp} }}")),
            Some((2, 2))
        );
        // Parts sharing a variable: the written order has no cross product.
        let x2 = "{ SELECT DISTINCT ?x WHERE { ?e <http://c> ?x } }";
        assert_eq!(split(&format!("SELECT * WHERE {{ {x} {x2} {bgp} }}")), None);
        // No triple pattern to look the parts' values up in.
        assert_eq!(split(&format!("SELECT * WHERE {{ {x} {y} }}")), None);
        // A part that may leave a variable unbound.
        let optional = "{ SELECT ?y WHERE { ?e <http://c> ?z OPTIONAL { ?z <http://n> ?y } } }";
        assert_eq!(
            split(&format!("SELECT * WHERE {{ {x} {optional} {bgp} }}")),
            None
        );
    }
}
