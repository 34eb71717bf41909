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

use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, HashJoin, Measured, Union, Values};
use crate::expr::expression_variables;
use crate::EngineError;
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

/// Most named graphs over which `GRAPH ?g` is planned once per graph (see
/// [`per_graph`]); with more, `?g` is pushed down into the scans whatever
/// the pattern.
pub(super) const PER_GRAPH_LIMIT: u64 = 256;

impl Planner {
    /// `GRAPH ?g { pattern }` as the spec defines it (see [`per_graph`]):
    /// the pattern planned in each named graph, joined with `?g` bound to
    /// that graph, the results unioned.
    pub(super) fn plan_per_graph(
        &self,
        pattern: &GraphPattern,
        graph: &Variable,
    ) -> Result<BoxedOperator, EngineError> {
        let mut branches = Vec::new();
        for id in self.ctx.named_graph_ids()? {
            let inner = self.plan(pattern, &GraphContext::Named(id))?;
            let bound = Box::new(Values::new(vec![graph.clone()], vec![vec![id]]));
            branches.push(Box::new(Measured::new(
                Box::new(HashJoin::new(self.ctx.clone(), inner, bound)),
                None,
            )) as BoxedOperator);
        }
        Ok(branches
            .into_iter()
            .reduce(|all, next| Box::new(Measured::new(Box::new(Union::new(all, next)), None)))
            .unwrap_or_else(|| Box::new(Values::empty(vec![graph.clone()]))))
    }
}
