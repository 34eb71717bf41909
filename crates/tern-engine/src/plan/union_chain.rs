//! A UNION of many patterns, as the algebra writes it: nested to the left
//! (the rewritings and the planner's own rewrites all build them so).

use spargebra::algebra::GraphPattern;

/// The union of `patterns` in their order; `None` when there are none.
pub(crate) fn union_chain(
    patterns: impl IntoIterator<Item = GraphPattern>,
) -> Option<GraphPattern> {
    patterns
        .into_iter()
        .reduce(|left, right| GraphPattern::Union {
            left: Box::new(left),
            right: Box::new(right),
        })
}
