//! Dropping a query of any depth: each node's children are moved out onto
//! a heap stack before the node itself is dropped, so no drop recurses.

use spargebra::algebra::{
    AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression,
};
use spargebra::Query;

/// An owned node of a query's algebra, for dropping it without recursion.
enum Owned {
    Pattern(GraphPattern),
    Expression(Expression),
    Path(PropertyPathExpression),
}

/// Drops a query of any depth: each node's children are moved out onto a
/// heap stack before the node itself is dropped, so no drop recurses.
pub fn dismantle(query: Query) {
    let pattern = match query {
        Query::Select { pattern, .. }
        | Query::Construct { pattern, .. }
        | Query::Describe { pattern, .. }
        | Query::Ask { pattern, .. } => pattern,
    };
    let mut stack = vec![Owned::Pattern(pattern)];
    while let Some(node) = stack.pop() {
        match node {
            Owned::Pattern(p) => take_pattern_children(p, &mut stack),
            Owned::Expression(e) => take_expression_children(e, &mut stack),
            Owned::Path(p) => match p {
                PropertyPathExpression::NamedNode(_)
                | PropertyPathExpression::NegatedPropertySet(_) => {}
                PropertyPathExpression::Reverse(a)
                | PropertyPathExpression::ZeroOrMore(a)
                | PropertyPathExpression::OneOrMore(a)
                | PropertyPathExpression::ZeroOrOne(a) => stack.push(Owned::Path(*a)),
                PropertyPathExpression::Sequence(a, b)
                | PropertyPathExpression::Alternative(a, b) => {
                    stack.push(Owned::Path(*a));
                    stack.push(Owned::Path(*b));
                }
            },
        }
    }
}

fn take_pattern_children(p: GraphPattern, stack: &mut Vec<Owned>) {
    use GraphPattern as P;
    match p {
        P::Bgp { .. } | P::Values { .. } => {}
        P::Path { path, .. } => stack.push(Owned::Path(path)),
        P::Join { left, right } | P::Union { left, right } | P::Minus { left, right } => {
            stack.push(Owned::Pattern(*left));
            stack.push(Owned::Pattern(*right));
        }
        P::LeftJoin {
            left,
            right,
            expression,
        } => {
            stack.push(Owned::Pattern(*left));
            stack.push(Owned::Pattern(*right));
            stack.extend(expression.map(Owned::Expression));
        }
        P::Filter { expr, inner } => {
            stack.push(Owned::Expression(expr));
            stack.push(Owned::Pattern(*inner));
        }
        P::Extend {
            inner, expression, ..
        } => {
            stack.push(Owned::Expression(expression));
            stack.push(Owned::Pattern(*inner));
        }
        P::OrderBy { inner, expression } => {
            stack.push(Owned::Pattern(*inner));
            for e in expression {
                let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = e;
                stack.push(Owned::Expression(e));
            }
        }
        P::Group {
            inner, aggregates, ..
        } => {
            stack.push(Owned::Pattern(*inner));
            for (_, aggregate) in aggregates {
                if let AggregateExpression::FunctionCall { expr, .. } = aggregate {
                    stack.push(Owned::Expression(expr));
                }
            }
        }
        P::Graph { inner, .. }
        | P::Project { inner, .. }
        | P::Distinct { inner }
        | P::Reduced { inner }
        | P::Slice { inner, .. }
        | P::Service { inner, .. } => stack.push(Owned::Pattern(*inner)),
    }
}

fn take_expression_children(e: Expression, stack: &mut Vec<Owned>) {
    use Expression as E;
    match e {
        E::NamedNode(_) | E::Literal(_) | E::Variable(_) | E::Bound(_) => {}
        E::Or(a, b)
        | E::And(a, b)
        | E::Equal(a, b)
        | E::SameTerm(a, b)
        | E::Greater(a, b)
        | E::GreaterOrEqual(a, b)
        | E::Less(a, b)
        | E::LessOrEqual(a, b)
        | E::Add(a, b)
        | E::Subtract(a, b)
        | E::Multiply(a, b)
        | E::Divide(a, b) => {
            stack.push(Owned::Expression(*a));
            stack.push(Owned::Expression(*b));
        }
        E::UnaryPlus(a) | E::UnaryMinus(a) | E::Not(a) => stack.push(Owned::Expression(*a)),
        E::In(a, list) => {
            stack.push(Owned::Expression(*a));
            stack.extend(list.into_iter().map(Owned::Expression));
        }
        E::If(a, b, c) => {
            for e in [a, b, c] {
                stack.push(Owned::Expression(*e));
            }
        }
        E::Coalesce(list) | E::FunctionCall(_, list) => {
            stack.extend(list.into_iter().map(Owned::Expression));
        }
        E::Exists(p) => stack.push(Owned::Pattern(*p)),
    }
}
