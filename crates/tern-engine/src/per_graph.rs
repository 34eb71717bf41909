//! When `GRAPH ?g { P }` cannot be planned by pushing `?g` down into the
//! scans of `P` (each scan then outputs its graph as `?g`).
//!
//! The spec evaluates `P` on each named graph and joins the result with
//! `?g` bound to that graph. Pushing `?g` down gives the same solutions only
//! when `P` is made of scans joined, unioned, optionally joined or filtered
//! and `P` itself never mentions `?g`: a `?g` inside `P` is a variable of
//! its own until the final join (`FILTER(BOUND(?g))` is false there), a
//! subquery projects the graph away, a group or slice would span all graphs
//! instead of one, MINUS would count the graph as a shared variable, and
//! VALUES or a nested GRAPH produce rows without it.

use crate::exists::expression_variables;
use oxrdf::Variable;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

/// Whether `GRAPH graph { pattern }` needs the pattern evaluated per graph.
pub fn needed(pattern: &GraphPattern, graph: &Variable) -> bool {
    let term = |t: &TermPattern| matches!(t, TermPattern::Variable(v) if v == graph);
    let reads = |e: &Expression| {
        let mut read = rustc_hash::FxHashSet::default();
        // EXISTS and functions such as RAND: not analysed, so not pushed.
        expression_variables(e, &mut read).is_none() || read.contains(graph)
    };
    match pattern {
        GraphPattern::Bgp { patterns } => patterns.iter().any(|t| {
            term(&t.subject)
                || term(&t.object)
                || matches!(&t.predicate, NamedNodePattern::Variable(v) if v == graph)
        }),
        GraphPattern::Path {
            subject, object, ..
        } => term(subject) || term(object),
        GraphPattern::Join { left, right } | GraphPattern::Union { left, right } => {
            needed(left, graph) || needed(right, graph)
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => needed(left, graph) || needed(right, graph) || expression.as_ref().is_some_and(reads),
        GraphPattern::Filter { expr, inner } => reads(expr) || needed(inner, graph),
        GraphPattern::Extend {
            inner,
            variable,
            expression,
        } => variable == graph || reads(expression) || needed(inner, graph),
        _ => true,
    }
}
