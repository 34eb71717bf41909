//! From `spargebra`'s algebra to a tree of physical operators.
//!
//! Basic graph patterns are ordered greedily: the pattern with the fewest
//! matching rows (exact counts from the index for its constants) first, then
//! repeatedly the cheapest pattern that shares a variable with what is joined
//! so far; each is joined by hash join with the new pattern as build side.

use crate::context::QueryContext;
use crate::exec::{BoxedOperator, Operator};
use crate::exec::{
    Distinct, Extend, Filter, GraphScope, Group, HashJoin, LeftJoin, Measured, Minus, OrderBy,
    PathScan, PatternTerm, Project, Scan, Slice, Union, Values,
};
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::GraphPattern;
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};
use std::sync::Arc;
use tern_index::Id;

/// The graph a pattern is evaluated in.
#[derive(Debug, Clone)]
pub enum GraphContext {
    Default,
    Named(Id),
    Variable(Variable),
}

pub struct Planner {
    ctx: Arc<QueryContext>,
}

/// A triple or path pattern's position, resolved against the index.
enum Resolved {
    Constant(Id),
    Variable(Variable),
    /// A constant the index does not contain: the pattern matches nothing.
    Missing,
}

impl Planner {
    pub fn new(ctx: Arc<QueryContext>) -> Planner {
        Planner { ctx }
    }

    /// The operator tree of a pattern, every operator measured for EXPLAIN.
    pub fn plan(
        &self,
        pattern: &GraphPattern,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        match pattern {
            // Measures its scans and joins itself.
            GraphPattern::Bgp { patterns } => self.plan_bgp(patterns, graph),
            // A GRAPH clause is no operator of its own.
            GraphPattern::Graph { .. } => self.plan_operator(pattern, graph),
            _ => Ok(Box::new(Measured::new(
                self.plan_operator(pattern, graph)?,
                None,
            ))),
        }
    }

    fn plan_operator(
        &self,
        pattern: &GraphPattern,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let ctx = &self.ctx;
        Ok(match pattern {
            GraphPattern::Bgp { patterns } => self.plan_bgp(patterns, graph)?,
            GraphPattern::Path {
                subject,
                path,
                object,
            } => {
                // A zero-length path matches a constant end to itself even when
                // no triple mentions it, so constants unknown to the index get a
                // query-local ID instead of ending the pattern.
                let s = self.resolve_path_end(subject)?;
                let o = self.resolve_path_end(object)?;
                let mut variables = Vec::new();
                let (Some(s), Some(o)) =
                    (position(&s, &mut variables), position(&o, &mut variables))
                else {
                    return Ok(Box::new(Values::empty(variables)));
                };
                let Some(scope) = scope_of(graph, &mut variables) else {
                    return Ok(Box::new(Values::empty(variables)));
                };
                Box::new(PathScan::new(
                    ctx.clone(),
                    variables,
                    s,
                    path.clone(),
                    o,
                    scope,
                ))
            }
            GraphPattern::Join { left, right } => Box::new(HashJoin::new(
                ctx.clone(),
                self.plan(left, graph)?,
                self.plan(right, graph)?,
            )),
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => Box::new(LeftJoin::new(
                ctx.clone(),
                self.plan(left, graph)?,
                self.plan(right, graph)?,
                expression.clone(),
            )),
            GraphPattern::Filter { expr, inner } => Box::new(Filter::new(
                ctx.clone(),
                self.plan(inner, graph)?,
                expr.clone(),
            )),
            GraphPattern::Union { left, right } => Box::new(Union::new(
                self.plan(left, graph)?,
                self.plan(right, graph)?,
            )),
            GraphPattern::Graph { name, inner } => {
                let inner_graph = match name {
                    NamedNodePattern::NamedNode(n) => match ctx.lookup(&n.clone().into())? {
                        Some(id) => GraphContext::Named(id),
                        None => return Ok(Box::new(Values::empty(Vec::new()))),
                    },
                    NamedNodePattern::Variable(v) => GraphContext::Variable(v.clone()),
                };
                self.plan(inner, &inner_graph)?
            }
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => Box::new(Extend::new(
                ctx.clone(),
                self.plan(inner, graph)?,
                variable.clone(),
                expression.clone(),
            )),
            GraphPattern::Minus { left, right } => Box::new(Minus::new(
                ctx.clone(),
                self.plan(left, graph)?,
                self.plan(right, graph)?,
            )),
            GraphPattern::Values {
                variables,
                bindings,
            } => {
                let mut rows = Vec::with_capacity(bindings.len());
                for binding in bindings {
                    let mut row = Vec::with_capacity(variables.len());
                    for value in binding {
                        row.push(match value {
                            None => Id::UNDEFINED,
                            Some(term) => ctx.intern(&ground_term(term)?)?,
                        });
                    }
                    rows.push(row);
                }
                Box::new(Values::new(variables.clone(), rows))
            }
            GraphPattern::OrderBy { inner, expression } => Box::new(OrderBy::new(
                ctx.clone(),
                self.plan(inner, graph)?,
                expression.clone(),
            )),
            GraphPattern::Project { inner, variables } => {
                Box::new(Project::new(self.plan(inner, graph)?, variables.clone()))
            }
            GraphPattern::Distinct { inner } | GraphPattern::Reduced { inner } => {
                Box::new(Distinct::new(ctx.clone(), self.plan(inner, graph)?))
            }
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => Box::new(Slice::new(self.plan(inner, graph)?, *start, *length)),
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => Box::new(Group::new(
                ctx.clone(),
                self.plan(inner, graph)?,
                variables.clone(),
                aggregates.clone(),
            )),
            GraphPattern::Service { name, .. } => {
                return Err(EngineError::Unsupported(format!(
                    "SERVICE {name} (federated queries)"
                )))
            }
            #[allow(unreachable_patterns)]
            other => return Err(EngineError::Unsupported(format!("graph pattern {other}"))),
        })
    }

    fn resolve_term(&self, term: &TermPattern) -> Result<Resolved, EngineError> {
        Ok(match term {
            TermPattern::Variable(v) => Resolved::Variable(v.clone()),
            TermPattern::BlankNode(b) => Resolved::Variable(blank_variable(b.as_str())),
            TermPattern::NamedNode(n) => self.resolve_constant(&n.clone().into())?,
            TermPattern::Literal(l) => self.resolve_constant(&l.clone().into())?,
            #[allow(unreachable_patterns)]
            _ => Resolved::Missing,
        })
    }

    fn resolve_path_end(&self, term: &TermPattern) -> Result<Resolved, EngineError> {
        Ok(match self.resolve_term(term)? {
            Resolved::Missing => match term {
                TermPattern::NamedNode(n) => {
                    Resolved::Constant(self.ctx.intern(&n.clone().into())?)
                }
                TermPattern::Literal(l) => Resolved::Constant(self.ctx.intern(&l.clone().into())?),
                _ => Resolved::Missing,
            },
            resolved => resolved,
        })
    }

    fn resolve_constant(&self, term: &Term) -> Result<Resolved, EngineError> {
        Ok(match self.ctx.lookup(term)? {
            Some(id) => Resolved::Constant(id),
            None => Resolved::Missing,
        })
    }

    fn plan_bgp(
        &self,
        patterns: &[TriplePattern],
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        if patterns.is_empty() {
            // The empty pattern has one solution; under GRAPH ?g, one per graph.
            if let GraphContext::Variable(v) = graph {
                let rows = self
                    .ctx
                    .named_graph_ids()?
                    .into_iter()
                    .map(|g| vec![g])
                    .collect();
                return Ok(Box::new(Values::new(vec![v.clone()], rows)));
            }
            return Ok(Box::new(Values::unit()));
        }
        let mut scans: Vec<(u64, Vec<Variable>, [PatternTerm; 3], GraphScope)> = Vec::new();
        let mut all_variables: Vec<Variable> = Vec::new();
        let mut missing = false;
        for pattern in patterns {
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => self.resolve_constant(&n.clone().into())?,
                NamedNodePattern::Variable(v) => Resolved::Variable(v.clone()),
            };
            let resolved = [
                self.resolve_term(&pattern.subject)?,
                predicate,
                self.resolve_term(&pattern.object)?,
            ];
            let mut variables = Vec::new();
            let mut terms = [PatternTerm::Constant(Id::UNDEFINED); 3];
            for (i, r) in resolved.iter().enumerate() {
                match position(r, &mut variables) {
                    Some(t) => terms[i] = t,
                    None => missing = true,
                }
            }
            let scope = scope_of(graph, &mut variables);
            for v in &variables {
                if !all_variables.contains(v) {
                    all_variables.push(v.clone());
                }
            }
            match scope {
                None => missing = true,
                Some(scope) if !missing => {
                    let estimate = Scan::estimate(&self.ctx, &terms)?;
                    scans.push((estimate, variables, terms, scope));
                }
                Some(_) => {}
            }
        }
        if missing {
            return Ok(Box::new(Values::empty(all_variables)));
        }
        // Greedy join order: cheapest first, then cheapest connected.
        let mut remaining: Vec<usize> = (0..scans.len()).collect();
        remaining.sort_by_key(|&i| scans[i].0);
        let first = remaining.remove(0);
        let mut bound: Vec<Variable> = scans[first].1.clone();
        let (_, vars, terms, scope) = scans[first].clone();
        let mut plan: BoxedOperator = Box::new(Measured::new(
            Box::new(Scan::new(self.ctx.clone(), vars, terms, scope)),
            Some(scans[first].0),
        ));
        while !remaining.is_empty() {
            let pick = remaining
                .iter()
                .position(|&i| scans[i].1.iter().any(|v| bound.contains(v)))
                .unwrap_or(0);
            let next = remaining.remove(pick);
            let (estimate, vars, terms, scope) = scans[next].clone();
            for v in &vars {
                if !bound.contains(v) {
                    bound.push(v.clone());
                }
            }
            let scan: BoxedOperator = Box::new(Measured::new(
                Box::new(Scan::new(self.ctx.clone(), vars, terms, scope)),
                Some(estimate),
            ));
            plan = Box::new(Measured::new(
                Box::new(HashJoin::new(self.ctx.clone(), plan, scan)),
                None,
            ));
        }
        Ok(plan)
    }
}

/// The pattern term for a resolved position, adding variables to `variables`.
fn position(resolved: &Resolved, variables: &mut Vec<Variable>) -> Option<PatternTerm> {
    match resolved {
        Resolved::Constant(id) => Some(PatternTerm::Constant(*id)),
        Resolved::Missing => None,
        Resolved::Variable(v) => Some(PatternTerm::Variable(
            match variables.iter().position(|x| x == v) {
                Some(i) => i,
                None => {
                    variables.push(v.clone());
                    variables.len() - 1
                }
            },
        )),
    }
}

fn scope_of(graph: &GraphContext, variables: &mut Vec<Variable>) -> Option<GraphScope> {
    Some(match graph {
        GraphContext::Default => GraphScope::Default,
        GraphContext::Named(id) => GraphScope::Named(*id),
        GraphContext::Variable(v) => match position(&Resolved::Variable(v.clone()), variables)? {
            PatternTerm::Variable(c) => GraphScope::NamedVariable(c),
            PatternTerm::Constant(_) => return None,
        },
    })
}

const BLANK_VARIABLE_PREFIX: &str = "__bnode_";

/// Blank nodes in patterns act as variables that are never projected.
fn blank_variable(label: &str) -> Variable {
    Variable::new_unchecked(format!("{BLANK_VARIABLE_PREFIX}{label}"))
}

/// Whether a variable stands for a blank node of a pattern (never shown).
pub fn is_blank_variable(variable: &Variable) -> bool {
    variable.as_str().starts_with(BLANK_VARIABLE_PREFIX)
}

pub fn ground_term(term: &GroundTerm) -> Result<Term, EngineError> {
    match term {
        GroundTerm::NamedNode(n) => Ok(n.clone().into()),
        GroundTerm::Literal(l) => Ok(l.clone().into()),
        #[allow(unreachable_patterns)]
        other => Err(EngineError::Unsupported(format!("term {other}"))),
    }
}

/// Whether `pattern` has a solution compatible with the row (EXISTS).
pub fn exists(
    ctx: &Arc<QueryContext>,
    pattern: &GraphPattern,
    variables: &[Variable],
    row: &[Id],
) -> Result<bool, EngineError> {
    let planner = Planner::new(ctx.clone());
    let bound: Vec<(Variable, Id)> = variables
        .iter()
        .zip(row)
        .filter(|(_, id)| **id != Id::UNDEFINED)
        .map(|(v, id)| (v.clone(), *id))
        .collect();
    let values = Values::new(
        bound.iter().map(|(v, _)| v.clone()).collect(),
        vec![bound.iter().map(|(_, id)| *id).collect()],
    );
    let inner = planner.plan(pattern, &GraphContext::Default)?;
    let mut joined = HashJoin::new(ctx.clone(), inner, Box::new(values));
    Ok(joined.next_batch()?.is_some())
}
