//! Small builders of algebra the rewriting shares.

use crate::expr::blank_variable;
use crate::infer::schema::Direction;
use crate::infer::vocabulary as v;
use crate::plan::union_chain;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{GraphPattern, PropertyPathExpression as Path};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};

/// The union of `patterns` (no solution when there are none).
pub(super) fn union(patterns: Vec<GraphPattern>) -> GraphPattern {
    union_chain(patterns).unwrap_or(GraphPattern::Values {
        variables: Vec::new(),
        bindings: Vec::new(),
    })
}

/// The union of `patterns`, unless there are none: an alternative that
/// can give no row is left out rather than planned.
pub(super) fn union_of_some(patterns: Vec<GraphPattern>) -> Option<GraphPattern> {
    (!patterns.is_empty()).then(|| union(patterns))
}

pub(super) fn alternatives_path(steps: Vec<Path>) -> Option<Path> {
    steps
        .into_iter()
        .reduce(|a, b| Path::Alternative(Box::new(a), Box::new(b)))
}

pub(super) fn oriented_step(property: &NamedNode, direction: Direction) -> Path {
    let step = Path::NamedNode(property.clone());
    match direction {
        Direction::Forward => step,
        Direction::Backward => Path::Reverse(Box::new(step)),
    }
}

/// (subject, object) of a stored triple that gives `(subject P object)`
/// read in `direction`.
pub(super) fn oriented<'a>(
    subject: &'a TermPattern,
    object: &'a TermPattern,
    direction: Direction,
) -> (&'a TermPattern, &'a TermPattern) {
    match direction {
        Direction::Forward => (subject, object),
        Direction::Backward => (object, subject),
    }
}

pub(super) fn named_blank(term: &TermPattern) -> TermPattern {
    match term {
        TermPattern::BlankNode(b) => TermPattern::Variable(blank_variable(b.as_str())),
        other => other.clone(),
    }
}

pub(super) fn pattern_variables(pattern: &TriplePattern) -> Vec<Variable> {
    let mut variables = Vec::new();
    let predicate = match &pattern.predicate {
        NamedNodePattern::Variable(v) => Some(v),
        NamedNodePattern::NamedNode(_) => None,
    };
    let subject = match &pattern.subject {
        TermPattern::Variable(v) => Some(v),
        _ => None,
    };
    let object = match &pattern.object {
        TermPattern::Variable(v) => Some(v),
        _ => None,
    };
    for v in [subject, predicate, object].into_iter().flatten() {
        if !variables.contains(v) {
            variables.push(v.clone());
        }
    }
    variables
}

pub(super) fn is_same_as(pattern: &TriplePattern) -> bool {
    matches!(&pattern.predicate, NamedNodePattern::NamedNode(p) if p.as_ref() == v::SAME_AS)
}

pub(super) fn ground(term: &Term) -> Option<GroundTerm> {
    match term {
        Term::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        Term::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

pub(super) fn ground_of(term: &TermPattern) -> Option<GroundTerm> {
    match term {
        TermPattern::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        TermPattern::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

pub(super) fn term_pattern(term: &Term) -> Option<TermPattern> {
    match term {
        Term::NamedNode(n) => Some(TermPattern::NamedNode(n.clone())),
        Term::Literal(l) => Some(TermPattern::Literal(l.clone())),
        _ => None,
    }
}

/// `VALUES` of the `(subject, object)` pairs that agree with the pattern's
/// constants, over its variables.
pub(super) fn values_matching(
    subject: &TermPattern,
    object: &TermPattern,
    rows: Vec<(GroundTerm, GroundTerm)>,
) -> GraphPattern {
    let fits = |term: &TermPattern, value: &GroundTerm| match term {
        TermPattern::Variable(_) => true,
        other => ground_of(other).as_ref() == Some(value),
    };
    let same_variable =
        matches!((subject, object), (TermPattern::Variable(a), TermPattern::Variable(b)) if a == b);
    let mut variables = Vec::new();
    for term in [subject, object] {
        if let TermPattern::Variable(v) = term {
            if !variables.contains(v) {
                variables.push(v.clone());
            }
        }
    }
    let bindings = rows
        .into_iter()
        .filter(|(a, b)| fits(subject, a) && fits(object, b) && (!same_variable || a == b))
        .map(|(a, b)| {
            let mut row = Vec::new();
            if matches!(subject, TermPattern::Variable(_)) {
                row.push(Some(a));
            }
            if matches!(object, TermPattern::Variable(_)) && !same_variable {
                row.push(Some(b));
            }
            row
        })
        .collect();
    GraphPattern::Values {
        variables,
        bindings,
    }
}

/// `inner` without the solutions where `variable` is a literal.
pub(super) fn not_literal(variable: &Variable, inner: GraphPattern) -> GraphPattern {
    GraphPattern::Filter {
        expr: spargebra::algebra::Expression::Not(Box::new(
            spargebra::algebra::Expression::FunctionCall(
                spargebra::algebra::Function::IsLiteral,
                vec![spargebra::algebra::Expression::Variable(variable.clone())],
            ),
        )),
        inner: Box::new(inner),
    }
}

/// `inner`'s distinct values of `subject` (one row at most when it is a
/// constant).
pub(super) fn distinct_on(subject: &TermPattern, inner: GraphPattern) -> GraphPattern {
    distinct_over(&[subject], inner)
}

/// `inner`'s distinct solutions on the variables among `terms`.
pub(super) fn distinct_over(terms: &[&TermPattern], inner: GraphPattern) -> GraphPattern {
    let mut variables: Vec<Variable> = Vec::new();
    for term in terms {
        if let TermPattern::Variable(v) = term {
            if !variables.contains(v) {
                variables.push(v.clone());
            }
        }
    }
    GraphPattern::Distinct {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(inner),
            variables,
        }),
    }
}
