//! The depth of a parsed query's algebra, measured without recursion.

use super::dismantle::dismantle;
use super::MAX_ALGEBRA_DEPTH;
use crate::expr::sub_expressions;
use crate::EngineError;
use spargebra::algebra::{
    AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression,
};
use spargebra::{GraphUpdateOperation, Query, Update};

/// A node of a query's algebra, for walking it without recursion.
enum Node<'a> {
    Pattern(&'a GraphPattern),
    Expression(&'a Expression),
    Path(&'a PropertyPathExpression),
}

/// The pattern of any query form.
fn pattern_of(query: &Query) -> &GraphPattern {
    match query {
        Query::Select { pattern, .. }
        | Query::Construct { pattern, .. }
        | Query::Describe { pattern, .. }
        | Query::Ask { pattern, .. } => pattern,
    }
}

/// The number of levels of the query's algebra.
pub fn algebra_depth(query: &Query) -> usize {
    pattern_depth(pattern_of(query))
}

/// The number of levels of a graph pattern.
pub fn pattern_depth(pattern: &GraphPattern) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(Node::Pattern(pattern), 1usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        let below = depth + 1;
        match node {
            Node::Pattern(p) => push_pattern_children(p, below, &mut stack),
            Node::Expression(e) => push_expression_children(e, below, &mut stack),
            Node::Path(p) => match p {
                PropertyPathExpression::NamedNode(_)
                | PropertyPathExpression::NegatedPropertySet(_) => {}
                PropertyPathExpression::Reverse(a)
                | PropertyPathExpression::ZeroOrMore(a)
                | PropertyPathExpression::OneOrMore(a)
                | PropertyPathExpression::ZeroOrOne(a) => stack.push((Node::Path(a), below)),
                PropertyPathExpression::Sequence(a, b)
                | PropertyPathExpression::Alternative(a, b) => {
                    stack.push((Node::Path(a), below));
                    stack.push((Node::Path(b), below));
                }
            },
        }
    }
    deepest
}

fn push_pattern_children<'a>(
    p: &'a GraphPattern,
    below: usize,
    stack: &mut Vec<(Node<'a>, usize)>,
) {
    use GraphPattern as P;
    match p {
        P::Bgp { .. } | P::Values { .. } => {}
        P::Path { path, .. } => stack.push((Node::Path(path), below)),
        P::Join { left, right } | P::Union { left, right } | P::Minus { left, right } => {
            stack.push((Node::Pattern(left), below));
            stack.push((Node::Pattern(right), below));
        }
        P::LeftJoin {
            left,
            right,
            expression,
        } => {
            stack.push((Node::Pattern(left), below));
            stack.push((Node::Pattern(right), below));
            if let Some(e) = expression {
                stack.push((Node::Expression(e), below));
            }
        }
        P::Filter { expr, inner } => {
            stack.push((Node::Expression(expr), below));
            stack.push((Node::Pattern(inner), below));
        }
        P::Extend {
            inner, expression, ..
        } => {
            stack.push((Node::Expression(expression), below));
            stack.push((Node::Pattern(inner), below));
        }
        P::OrderBy { inner, expression } => {
            stack.push((Node::Pattern(inner), below));
            for e in expression {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = e;
                stack.push((Node::Expression(e), below));
            }
        }
        P::Group {
            inner, aggregates, ..
        } => {
            stack.push((Node::Pattern(inner), below));
            for (_, aggregate) in aggregates {
                if let AggregateExpression::FunctionCall { expr, .. } = aggregate {
                    stack.push((Node::Expression(expr), below));
                }
            }
        }
        P::Graph { inner, .. }
        | P::Project { inner, .. }
        | P::Distinct { inner }
        | P::Reduced { inner }
        | P::Slice { inner, .. }
        | P::Service { inner, .. } => stack.push((Node::Pattern(inner), below)),
    }
}

fn push_expression_children<'a>(
    e: &'a Expression,
    below: usize,
    stack: &mut Vec<(Node<'a>, usize)>,
) {
    match e {
        Expression::Exists(p) => stack.push((Node::Pattern(p), below)),
        _ => stack.extend(
            sub_expressions(e)
                .into_iter()
                .map(|e| (Node::Expression(e), below)),
        ),
    }
}

/// Fails when the parsed query is deeper than [`MAX_ALGEBRA_DEPTH`]; the
/// query is then taken apart without recursion.
pub fn check_algebra(query: Query) -> Result<Query, EngineError> {
    let depth = algebra_depth(&query);
    if depth <= MAX_ALGEBRA_DEPTH {
        return Ok(query);
    }
    dismantle(query);
    Err(too_deep(depth))
}

/// The same check for the WHERE clauses of an update.
pub fn check_update(mut update: Update) -> Result<Update, EngineError> {
    let deepest = update
        .operations
        .iter()
        .map(|op| match op {
            GraphUpdateOperation::DeleteInsert { pattern, .. } => pattern_depth(pattern),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    if deepest <= MAX_ALGEBRA_DEPTH {
        return Ok(update);
    }
    for op in update.operations.drain(..) {
        if let GraphUpdateOperation::DeleteInsert { pattern, .. } = op {
            dismantle(Query::Select {
                dataset: None,
                pattern: *pattern,
                base_iri: None,
            });
        }
    }
    Err(too_deep(deepest))
}

fn too_deep(depth: usize) -> EngineError {
    EngineError::TooComplex(format!(
        "the query's algebra is {depth} levels deep; the limit is {MAX_ALGEBRA_DEPTH} \
         (long chains of UNION, OPTIONAL, FILTER or operators each add a level: \
         VALUES or IN lists do not)"
    ))
}
