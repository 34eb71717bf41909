//! `FILTER(?a = ?b)` between two parts of a basic graph pattern that share
//! no variable: an equality join of the parts instead of a filtered cross
//! product (or, where neither side can be a literal, one pattern with one
//! variable for both).

use super::bgp::Literals;
use super::exists;
use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, EqualityJoin, Extend, HashJoin, Measured};
use crate::expr::blank_variable;
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

impl Planner {
    /// `FILTER(?a = ?b && ...)` over a basic graph pattern in which `?a`
    /// and `?b` are in parts that share no variable: an equality join of
    /// the two parts instead of their cross product, then the other parts
    /// and conjuncts.
    pub(super) fn plan_equality_join(
        &self,
        expression: &Expression,
        patterns: &[TriplePattern],
        graph: &GraphContext,
    ) -> Result<Option<BoxedOperator>, EngineError> {
        if matches!(graph, GraphContext::Variable(_)) {
            return Ok(None); // the graph variable joins every part
        }
        let mut conjuncts = exists::conjuncts(expression);
        let components = components(patterns);
        let part_of = |v: &Variable| components.iter().position(|c| c.1.contains(v));
        let found = conjuncts.iter().position(|c| match c {
            Expression::Equal(a, b) | Expression::SameTerm(a, b) => {
                match (a.as_ref(), b.as_ref()) {
                    (Expression::Variable(a), Expression::Variable(b)) => {
                        let (pa, pb) = (part_of(a), part_of(b));
                        pa.is_some()
                            && pb.is_some()
                            && pa != pb
                            && self.bound_value(a).is_none()
                            && self.bound_value(b).is_none()
                    }
                    _ => false,
                }
            }
            _ => false,
        });
        let Some(found) = found else {
            return Ok(None);
        };
        let condition = conjuncts.remove(found);
        let (Expression::Equal(a, b) | Expression::SameTerm(a, b)) = &condition else {
            unreachable!("found above")
        };
        let (Expression::Variable(a), Expression::Variable(b)) = (a.as_ref(), b.as_ref()) else {
            unreachable!("found above")
        };
        if self.never_literal(a, patterns)? || self.never_literal(b, patterns)? {
            // `=` on IRIs and blank nodes is sameness of the terms, so of
            // their IDs: one variable does for both, and the parts join as
            // one pattern, so the planner may look the larger part up per
            // value of the smaller one instead of scanning it whole.
            let renamed: Vec<TriplePattern> = patterns.iter().map(|t| rename(t, b, a)).collect();
            let joined = self.plan_bgp(&renamed, graph)?;
            let copied: BoxedOperator = Box::new(Measured::new(
                Box::new(Extend::new(
                    self.ctx.clone(),
                    joined,
                    b.clone(),
                    Expression::Variable(a.clone()),
                    self.scope(graph),
                )),
                None,
            ));
            return Ok(Some(match exists::and_all(conjuncts) {
                Some(rest) => {
                    Box::new(Measured::new(self.plan_filter(&rest, copied, graph)?, None))
                }
                None => copied,
            }));
        }
        let (pa, pb) = (part_of(a).expect("found"), part_of(b).expect("found"));
        let part = |i: usize| -> Vec<TriplePattern> {
            components[i]
                .0
                .iter()
                .map(|&k| patterns[k].clone())
                .collect()
        };
        let mut probe = (self.plan_bgp(&part(pa), graph)?, a);
        let mut build = (self.plan_bgp(&part(pb), graph)?, b);
        let rows = |op: &BoxedOperator| op.estimated_rows().unwrap_or(u64::MAX);
        if rows(&build.0) > rows(&probe.0) {
            std::mem::swap(&mut probe, &mut build);
        }
        let mut joined: BoxedOperator = Box::new(Measured::new(
            Box::new(EqualityJoin::new(
                self.ctx.clone(),
                probe.0,
                build.0,
                probe.1,
                build.1,
                condition.clone(),
                self.scope(graph),
            )),
            None,
        ));
        let rest: Vec<TriplePattern> = (0..components.len())
            .filter(|&i| i != pa && i != pb)
            .flat_map(part)
            .collect();
        if !rest.is_empty() {
            joined = Box::new(Measured::new(
                Box::new(HashJoin::new(
                    self.ctx.clone(),
                    joined,
                    self.plan_bgp(&rest, graph)?,
                )),
                None,
            ));
        }
        Ok(Some(match exists::and_all(conjuncts) {
            Some(rest) => Box::new(Measured::new(self.plan_filter(&rest, joined, graph)?, None)),
            None => joined,
        }))
    }

    /// Whether every value `variable` takes in `patterns` is an IRI or a
    /// blank node: it is a subject or predicate somewhere, or the object of
    /// a predicate that has no literal objects in the index.
    pub(super) fn never_literal(
        &self,
        variable: &Variable,
        patterns: &[TriplePattern],
    ) -> Result<bool, EngineError> {
        let is = |t: &TermPattern| matches!(t, TermPattern::Variable(v) if v == variable);
        for pattern in patterns {
            let predicate = match &pattern.predicate {
                NamedNodePattern::Variable(v) if v == variable => return Ok(true),
                NamedNodePattern::Variable(_) => None,
                NamedNodePattern::NamedNode(n) => Some(n),
            };
            if is(&pattern.subject) {
                return Ok(true);
            }
            if let (true, Some(predicate)) = (is(&pattern.object), predicate) {
                let Some(predicate) = self.ctx.lookup(&predicate.clone().into())? else {
                    return Ok(true); // the pattern matches nothing
                };
                if self.literal_objects(predicate, Literals::All)? == 0 {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// The pattern with `to` in place of the variable `from`.
fn rename(pattern: &TriplePattern, from: &Variable, to: &Variable) -> TriplePattern {
    let term = |t: &TermPattern| match t {
        TermPattern::Variable(v) if v == from => TermPattern::Variable(to.clone()),
        other => other.clone(),
    };
    TriplePattern {
        subject: term(&pattern.subject),
        predicate: match &pattern.predicate {
            NamedNodePattern::Variable(v) if v == from => NamedNodePattern::Variable(to.clone()),
            other => other.clone(),
        },
        object: term(&pattern.object),
    }
}

/// The parts of a basic graph pattern that share no variable with each
/// other: the indexes of their patterns and their variables (blank nodes
/// included, as the planner treats them).
fn components(patterns: &[TriplePattern]) -> Vec<(Vec<usize>, Vec<Variable>)> {
    let variables_of = |t: &TriplePattern| -> Vec<Variable> {
        let mut out = Vec::new();
        for term in [&t.subject, &t.object] {
            match term {
                TermPattern::Variable(v) => out.push(v.clone()),
                TermPattern::BlankNode(b) => out.push(blank_variable(b.as_str())),
                _ => {}
            }
        }
        if let NamedNodePattern::Variable(v) = &t.predicate {
            out.push(v.clone());
        }
        out
    };
    let mut parts: Vec<(Vec<usize>, Vec<Variable>)> = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let own = variables_of(pattern);
        let mut merged = (vec![i], own.clone());
        // Every part this pattern touches joins it.
        let mut k = 0;
        while k < parts.len() {
            if parts[k].1.iter().any(|v| own.contains(v)) {
                let (indexes, variables) = parts.swap_remove(k);
                merged.0.extend(indexes);
                for v in variables {
                    if !merged.1.contains(&v) {
                        merged.1.push(v);
                    }
                }
            } else {
                k += 1;
            }
        }
        merged.0.sort_unstable();
        parts.push(merged);
    }
    parts
}
