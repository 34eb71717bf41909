//! `FILTER(?v = <c>)`, `FILTER(sameTerm(?v, c))` and `FILTER(?v IN (<a>,
//! <b>))` over a basic graph pattern: the constant put into the pattern
//! (one pattern per constant of an IN), so that the index finds the rows of
//! `<c>` instead of the planner scanning every value of `?v` and the filter
//! dropping all but one (a variable predicate with a filter on it scans the
//! whole store otherwise).
//!
//! Exact because a basic graph pattern binds `?v` in every solution, and for
//! the constants taken `=` holds exactly when the two terms are the same:
//! - an IRI equals only itself (RDF terms of other kinds compare as false or
//!   as a type error, which a FILTER treats as false);
//! - a simple literal (an `xsd:string`) equals only the same string; other
//!   literals compare with it as false or as a type error.
//!
//! `sameTerm` is sameness for every constant. Numbers, dates, language-tagged
//! strings and other literals are left to the filter (`"1"^^xsd:integer =
//! "01"^^xsd:integer`; comparisons with constants become scan ranges in
//! `value_range`). An IN list's duplicates count once, as IN keeps a row once.

use super::exists;
use super::union_chain::union_chain;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

/// Most constants of an IN list put into copies of the pattern; a longer
/// list stays a filter.
const MAX_IN_CONSTANTS: usize = 16;

/// The filtered pattern with the constants of one such conjunct put in:
/// `Extend(Filter(rest, P[v := c]), v, c)` (a UNION of them for IN), or
/// the rest filtered after the binding when it reads `v`. `None` when no
/// conjunct qualifies. `substituted` tells the variables the planner
/// already fixed (left as they are).
pub fn bind_constants(
    expression: &Expression,
    patterns: &[TriplePattern],
    substituted: impl Fn(&Variable) -> bool,
) -> Option<GraphPattern> {
    let mut conjuncts = exists::conjuncts(expression);
    let (found, variable, constants) = conjuncts.iter().enumerate().find_map(|(i, c)| {
        let (v, constants) = constants_of(c)?;
        let in_pattern = patterns.iter().any(|t| mentions(t, &v));
        (in_pattern && !substituted(&v)).then_some((i, v, constants))
    })?;
    conjuncts.remove(found);
    let rest = exists::and_all(conjuncts);
    let rest_reads_variable = rest.as_ref().is_some_and(|r| reads(r, &variable));
    let branches = constants.into_iter().map(|constant| {
        let substituted = substitute(patterns, &variable, &constant);
        // No rows at all where the constant cannot stand in the pattern.
        let mut inner = substituted.map_or_else(
            || GraphPattern::Values {
                variables: Vec::new(),
                bindings: Vec::new(),
            },
            |patterns| GraphPattern::Bgp { patterns },
        );
        if let (Some(rest), false) = (&rest, rest_reads_variable) {
            inner = GraphPattern::Filter {
                expr: rest.clone(),
                inner: Box::new(inner),
            };
        }
        GraphPattern::Extend {
            inner: Box::new(inner),
            variable: variable.clone(),
            expression: constant_expression(constant),
        }
    });
    let union = union_chain(branches).expect("at least one constant");
    Some(match (rest, rest_reads_variable) {
        (Some(rest), true) => GraphPattern::Filter {
            expr: rest,
            inner: Box::new(union),
        },
        _ => union,
    })
}

/// `?v` and its constants when `conjunct` is `?v = c`, `c = ?v`,
/// `sameTerm(?v, c)`, `?v IN (c, ...)` or an `||` of such equalities on
/// one variable, with constants that are equal only to themselves.
fn constants_of(conjunct: &Expression) -> Option<(Variable, Vec<Term>)> {
    let (variable, constants) = match conjunct {
        Expression::Equal(a, b) => {
            let (v, c) = variable_and_constant(a, b)?;
            (v, vec![only_self_equal(c)?])
        }
        Expression::SameTerm(a, b) => {
            let (v, c) = variable_and_constant(a, b)?;
            (v, vec![constant_term(c)?])
        }
        Expression::In(v, list) => {
            let Expression::Variable(v) = v.as_ref() else {
                return None;
            };
            let constants = list
                .iter()
                .map(only_self_equal)
                .collect::<Option<Vec<_>>>()?;
            (v.clone(), constants)
        }
        Expression::Or(a, b) => {
            let (va, mut ca) = constants_of(a)?;
            let (vb, cb) = constants_of(b)?;
            if va != vb {
                return None;
            }
            ca.extend(cb);
            (va, ca)
        }
        _ => return None,
    };
    let mut unique: Vec<Term> = Vec::with_capacity(constants.len());
    for c in constants {
        if !unique.contains(&c) {
            unique.push(c);
        }
    }
    (!unique.is_empty() && unique.len() <= MAX_IN_CONSTANTS).then_some((variable, unique))
}

fn variable_and_constant<'a>(
    a: &'a Expression,
    b: &'a Expression,
) -> Option<(Variable, &'a Expression)> {
    match (a, b) {
        (Expression::Variable(v), c) | (c, Expression::Variable(v))
            if !matches!(c, Expression::Variable(_)) =>
        {
            Some((v.clone(), c))
        }
        _ => None,
    }
}

fn constant_term(expression: &Expression) -> Option<Term> {
    match expression {
        Expression::NamedNode(n) => Some(n.clone().into()),
        Expression::Literal(l) => Some(l.clone().into()),
        _ => None,
    }
}

/// A constant that `=` finds equal only to itself: an IRI or a simple
/// literal.
fn only_self_equal(expression: &Expression) -> Option<Term> {
    match expression {
        Expression::NamedNode(n) => Some(n.clone().into()),
        Expression::Literal(l) if l.datatype() == oxrdf::vocab::xsd::STRING => {
            Some(l.clone().into())
        }
        _ => None,
    }
}

fn constant_expression(term: Term) -> Expression {
    match term {
        Term::NamedNode(n) => Expression::NamedNode(n),
        Term::Literal(l) => Expression::Literal(l),
        Term::BlankNode(_) => unreachable!("constants are IRIs and literals"),
        #[allow(unreachable_patterns)]
        _ => unreachable!("constants are IRIs and literals"),
    }
}

/// Whether the pattern has `v` in any position.
pub(super) fn mentions(t: &TriplePattern, v: &Variable) -> bool {
    matches!(&t.subject, TermPattern::Variable(x) if x == v)
        || matches!(&t.predicate, NamedNodePattern::Variable(x) if x == v)
        || matches!(&t.object, TermPattern::Variable(x) if x == v)
}

/// Whether an expression reads `v` (also inside EXISTS, conservatively).
fn reads(expression: &Expression, v: &Variable) -> bool {
    let mut read = rustc_hash::FxHashSet::default();
    match crate::expr::expression_variables(expression, &mut read) {
        Some(()) => read.contains(v),
        None => true,
    }
}

/// The patterns with `v` replaced by `c`; `None` when `c` cannot stand
/// where `v` does (a literal as a predicate), so that nothing matches.
fn substitute(patterns: &[TriplePattern], v: &Variable, c: &Term) -> Option<Vec<TriplePattern>> {
    let term = |t: &TermPattern| match t {
        TermPattern::Variable(x) if x == v => match c {
            Term::NamedNode(n) => TermPattern::NamedNode(n.clone()),
            Term::Literal(l) => TermPattern::Literal(l.clone()),
            _ => t.clone(),
        },
        other => other.clone(),
    };
    patterns
        .iter()
        .map(|t| {
            let predicate = match &t.predicate {
                NamedNodePattern::Variable(x) if x == v => match c {
                    Term::NamedNode(n) => NamedNodePattern::NamedNode(NamedNode::clone(n)),
                    _ => return None,
                },
                other => other.clone(),
            };
            Some(TriplePattern {
                subject: term(&t.subject),
                predicate,
                object: term(&t.object),
            })
        })
        .collect()
}
