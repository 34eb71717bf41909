//! From `spargebra`'s algebra to a tree of physical operators.
//!
//! Basic graph patterns are ordered by cost ([`crate::join_order`]): exact
//! row counts per pattern from the index, distinct values per variable from
//! the predicate statistics; each join is a hash join (smaller side built) or
//! an index nested-loop join (a pattern looked up per row of a small input).
//!
//! FILTER (NOT) EXISTS becomes a semi (anti) join where that is exact
//! ([`crate::exists`]); elsewhere the pattern is planned again per solution
//! by a planner that substitutes the solution's values for its variables.

use crate::context::QueryContext;
use crate::correlated;
use crate::engine::OptionalJoins;
use crate::exec::{
    BindLeftJoin, Distinct, EqualityJoin, Extend, Filter, GraphScope, Group, HashJoin, IndexJoin,
    LeftJoin, Measured, MergeJoin, Minus, OrderBy, PathScan, PatternRows, PatternTerm, PlanRight,
    Project, Scan, SemiJoin, Slice, Union, Values,
};
use crate::exec::{BoxedOperator, Operator};
use crate::exists::{self, Scope};
use crate::join_order::{self, JoinTree, PatternEstimate};
use crate::per_graph;
use crate::value_range;
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};
use std::ops::Bound;
use std::sync::Arc;
use tern_index::{Id, Permutation, ScanRange, Tag};

/// Most named graphs over which `GRAPH ?g` is planned once per graph (see
/// [`per_graph`]); with more, `?g` is pushed down into the scans whatever
/// the pattern.
const PER_GRAPH_LIMIT: u64 = 256;

/// Which literals [`Planner::literal_objects`] counts.
#[derive(Clone, Copy)]
enum Literals {
    All,
    /// Those stored in the vocabulary, not inline in their IDs.
    OfVocabulary,
}

/// The graph a pattern is evaluated in.
#[derive(Debug, Clone)]
pub enum GraphContext {
    Default,
    Named(Id),
    Variable(Variable),
}

pub struct Planner {
    ctx: Arc<QueryContext>,
    /// Values substituted for variables (the solution an EXISTS pattern is
    /// evaluated for, SPARQL 1.1 §18.6): such a variable is a constant in
    /// the pattern, in its expressions and in its GRAPH clauses.
    bound: Arc<[(Variable, Id)]>,
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
        Planner {
            ctx,
            bound: Arc::new([]),
        }
    }

    fn bound_value(&self, variable: &Variable) -> Option<Id> {
        self.bound
            .iter()
            .find_map(|(v, id)| (v == variable).then_some(*id))
    }

    /// What expressions planned in `graph` need for their EXISTS.
    fn scope(&self, graph: &GraphContext) -> Arc<Scope> {
        Arc::new(Scope {
            graph: graph.clone(),
            bound: self.bound.clone(),
        })
    }

    /// The operator tree of a pattern, every operator measured for EXPLAIN.
    pub fn plan(
        &self,
        pattern: &GraphPattern,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let substituted;
        let graph = match graph {
            GraphContext::Variable(v) => match self.bound_value(v) {
                Some(id) => {
                    substituted = GraphContext::Named(id);
                    &substituted
                }
                None => graph,
            },
            _ => graph,
        };
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
            GraphPattern::Join { left, right } => {
                let (left, right) = (self.plan(left, graph)?, self.plan(right, graph)?);
                // The side estimated smaller is built.
                match (left.estimated_rows(), right.estimated_rows()) {
                    (Some(l), Some(r)) if l < r => {
                        Box::new(HashJoin::new(ctx.clone(), right, left))
                    }
                    _ => Box::new(HashJoin::new(ctx.clone(), left, right)),
                }
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => self.plan_optional(self.plan(left, graph)?, right, expression, graph)?,
            GraphPattern::Filter { expr, inner } => {
                if let GraphPattern::Bgp { patterns } = inner.as_ref() {
                    if let Some(joined) = self.plan_equality_join(expr, patterns, graph)? {
                        return Ok(joined);
                    }
                    let ranges = value_range::from_filter(expr, ctx)?;
                    if !ranges.is_empty() {
                        let narrowed = self.plan_ranged_bgp(patterns, graph, &ranges)?;
                        return self.plan_filter(expr, narrowed, graph);
                    }
                }
                match correlated::filter_below_optional(expr, inner) {
                    Some(moved) => self.plan_operator(&moved, graph)?,
                    None => self.plan_filter(expr, self.plan(inner, graph)?, graph)?,
                }
            }
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
                    NamedNodePattern::Variable(v) => match self.bound_value(v) {
                        Some(id) => GraphContext::Named(id),
                        None if per_graph::needed(inner, v)
                            && ctx.named_graph_count() <= PER_GRAPH_LIMIT =>
                        {
                            return self.plan_per_graph(inner, v);
                        }
                        None => GraphContext::Variable(v.clone()),
                    },
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
                self.scope(graph),
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
                let substituted: Vec<Option<Id>> =
                    variables.iter().map(|v| self.bound_value(v)).collect();
                let mut rows = Vec::with_capacity(bindings.len());
                'rows: for binding in bindings {
                    let mut row = Vec::with_capacity(variables.len());
                    for (value, substituted) in binding.iter().zip(&substituted) {
                        let id = match value {
                            None => Id::UNDEFINED,
                            Some(term) => ctx.intern(&ground_term(term)?)?,
                        };
                        // A substituted variable keeps the rows that agree
                        // with its value, as a join with it would.
                        row.push(match substituted {
                            Some(s) if id != Id::UNDEFINED && id != *s => continue 'rows,
                            Some(s) => *s,
                            None => id,
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
                self.scope(graph),
            )),
            GraphPattern::Project { inner, variables } => {
                // Inside a subquery, only the variables it projects are the
                // outer ones (as in the reference evaluator).
                let inner_planner = Planner {
                    ctx: ctx.clone(),
                    bound: self
                        .bound
                        .iter()
                        .filter(|(v, _)| variables.contains(v))
                        .cloned()
                        .collect(),
                };
                Box::new(Project::new(
                    inner_planner.plan(inner, graph)?,
                    variables.clone(),
                ))
            }
            GraphPattern::Distinct { inner } | GraphPattern::Reduced { inner } => {
                Box::new(Distinct::new(ctx.clone(), self.plan(inner, graph)?))
            }
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => {
                let mut input = self.plan(inner, graph)?;
                if let Some(length) = length {
                    input.first_rows_only(start.saturating_add(*length));
                }
                Box::new(Slice::new(input, *start, *length))
            }
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => Box::new(Group::new(
                ctx.clone(),
                self.plan(inner, graph)?,
                variables.clone(),
                aggregates.clone(),
                self.scope(graph),
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

    /// OPTIONAL: a left join of the two sides, or, for a few left rows and
    /// a large right side, the right side looked up per left row.
    fn plan_optional(
        &self,
        left: BoxedOperator,
        right: &GraphPattern,
        expression: &Option<Expression>,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let right_operator = self.plan(right, graph)?;
        let mut right_variables: Vec<Variable> = Vec::new();
        right.on_in_scope_variable(|v| {
            if !right_variables.contains(v) && self.bound_value(v).is_none() {
                right_variables.push(v.clone());
            }
        });
        let shares = left.variables().iter().any(|v| right_variables.contains(v));
        let wanted = match self.ctx.optional_joins() {
            OptionalJoins::ByCost => {
                per_row_is_cheaper(left.estimated_rows(), right_operator.estimated_rows())
            }
            OptionalJoins::PerRow => true,
            OptionalJoins::Whole => false,
        };
        let per_row = shares && wanted && correlated::fits_per_row(right, left.variables());
        if !per_row {
            return Ok(Box::new(LeftJoin::new(
                self.ctx.clone(),
                left,
                right_operator,
                expression.clone(),
                self.scope(graph),
            )));
        }
        let (ctx, outer) = (self.ctx.clone(), self.bound.clone());
        let (pattern, right_graph) = (right.clone(), graph.clone());
        let plan_right: PlanRight = Box::new(move |substitution| {
            let mut bound = outer.to_vec();
            bound.extend(substitution.iter().cloned());
            let planner = Planner {
                ctx: ctx.clone(),
                bound: bound.into(),
            };
            planner.plan(&pattern, &right_graph)
        });
        Ok(Box::new(BindLeftJoin::new(
            self.ctx.clone(),
            left,
            &right_variables,
            plan_right,
            right.to_string(),
            expression.clone(),
            self.scope(graph),
        )))
    }

    /// `GRAPH ?g { pattern }` as the spec defines it (see [`per_graph`]):
    /// the pattern planned in each named graph, joined with `?g` bound to
    /// that graph, the results unioned.
    fn plan_per_graph(
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

    /// `FILTER(?a = ?b && ...)` over a basic graph pattern in which `?a`
    /// and `?b` are in parts that share no variable: an equality join of
    /// the two parts instead of their cross product, then the other parts
    /// and conjuncts.
    fn plan_equality_join(
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
    fn never_literal(
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

    /// FILTER: conjuncts that are (NOT) EXISTS of a suitable pattern become
    /// semi (anti) joins after a filter of the other conjuncts. A row passes
    /// `A && B` exactly when it passes both, in either order.
    fn plan_filter(
        &self,
        expression: &Expression,
        input: BoxedOperator,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let mut rest = Vec::new();
        let mut joins = Vec::new();
        for conjunct in exists::conjuncts(expression) {
            let Some(spec) = exists::as_semi_join(&conjunct, input.variables()) else {
                rest.push(conjunct);
                continue;
            };
            let pattern = self.plan(&spec.pattern, graph)?;
            // A few rows are cheaper checked one by one (the pattern
            // planned with each row's values) than against the pattern
            // evaluated whole.
            if per_row_is_cheaper(input.estimated_rows(), pattern.estimated_rows()) {
                rest.push(conjunct);
            } else {
                joins.push((spec, pattern));
            }
        }
        if joins.is_empty() {
            return Ok(Box::new(Filter::new(
                self.ctx.clone(),
                input,
                expression.clone(),
                self.scope(graph),
            )));
        }
        let mut operator = input;
        if let Some(rest) = exists::and_all(rest) {
            operator = Box::new(Measured::new(
                Box::new(Filter::new(
                    self.ctx.clone(),
                    operator,
                    rest,
                    self.scope(graph),
                )),
                None,
            ));
        }
        let last = joins.len() - 1;
        for (i, (spec, pattern)) in joins.into_iter().enumerate() {
            let join: BoxedOperator = Box::new(SemiJoin::new(
                self.ctx.clone(),
                operator,
                pattern,
                spec.residual,
                spec.anti,
                self.scope(graph),
            ));
            // The caller measures the outermost one.
            operator = if i == last {
                join
            } else {
                Box::new(Measured::new(join, None))
            };
        }
        Ok(operator)
    }

    fn resolve_term(&self, term: &TermPattern) -> Result<Resolved, EngineError> {
        Ok(match term {
            TermPattern::Variable(v) => match self.bound_value(v) {
                Some(id) => Resolved::Constant(id),
                None => Resolved::Variable(v.clone()),
            },
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
        self.plan_ranged_bgp(patterns, graph, &[])
    }

    /// A basic graph pattern whose patterns scan only `ranges` of the values
    /// of these variables where they can (see [`value_range`]).
    fn plan_ranged_bgp(
        &self,
        patterns: &[TriplePattern],
        graph: &GraphContext,
        ranges: &[(Variable, ScanRange)],
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
        let mut scans: Vec<ScanSpec> = Vec::new();
        let mut all_variables: Vec<Variable> = Vec::new();
        let mut missing = false;
        for pattern in patterns {
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => self.resolve_constant(&n.clone().into())?,
                NamedNodePattern::Variable(v) => match self.bound_value(v) {
                    Some(id) => Resolved::Constant(id),
                    None => Resolved::Variable(v.clone()),
                },
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
                    let pattern = self.narrowed(terms, scope, &variables, ranges)?;
                    let estimate = Scan::estimate(&self.ctx, &pattern)?;
                    scans.push((estimate, variables, pattern));
                }
                Some(_) => {}
            }
        }
        if missing {
            return Ok(Box::new(Values::empty(all_variables)));
        }
        let estimates: Vec<PatternEstimate> = scans
            .iter()
            .map(|(rows, variables, pattern)| self.pattern_estimate(*rows, variables, pattern))
            .collect();
        let tree = join_order::order(&estimates);
        let estimator = join_order::Estimator::new(&estimates);
        Ok(self.build_join_tree(&tree, &scans, &estimator))
    }

    /// The pattern, narrowed to a range of its object's values if `ranges`
    /// has one for its object variable and its predicate is constant. The
    /// ranges cover inline values only, so a predicate with literal objects
    /// in the vocabulary (a date in a non-canonical form, say) is not
    /// narrowed.
    fn narrowed(
        &self,
        terms: [PatternTerm; 3],
        scope: GraphScope,
        variables: &[Variable],
        ranges: &[(Variable, ScanRange)],
    ) -> Result<PatternRows, EngineError> {
        let range = match terms {
            [subject, PatternTerm::Constant(predicate), PatternTerm::Variable(object)]
                if subject != PatternTerm::Variable(object) =>
            {
                ranges
                    .iter()
                    .find(|(v, _)| *v == variables[object])
                    .map(|(_, range)| (predicate, *range))
            }
            _ => None,
        };
        let Some((predicate, range)) = range else {
            return Ok(PatternRows::new(terms, scope));
        };
        if self.literal_objects(predicate, Literals::OfVocabulary)? > 0 {
            return Ok(PatternRows::new(terms, scope));
        }
        Ok(PatternRows::ranged(terms, scope, Some((2, range))))
    }

    /// How many objects of `predicate` are literals of the kind asked
    /// (counted from the POS permutation's directory: vocabulary literals
    /// sort after IRIs, inline values after the vocabulary).
    fn literal_objects(&self, predicate: Id, kind: Literals) -> Result<u64, EngineError> {
        let index = &self.ctx.index;
        let literals = ScanRange {
            start: Bound::Included(index.first_literal()?),
            end: match kind {
                Literals::All => Bound::Unbounded,
                Literals::OfVocabulary => Bound::Excluded(Id::new(Tag::LocalVocab, 0)),
            },
        };
        Ok(index.count(Permutation::Pos, &[predicate], literals)?)
    }

    /// Distinct values per variable of a pattern: from the predicate's
    /// statistics when only the predicate is constant, else the row count.
    fn pattern_estimate(
        &self,
        rows: u64,
        variables: &[Variable],
        pattern: &PatternRows,
    ) -> PatternEstimate {
        let terms = &pattern.terms;
        let rows = rows as f64;
        let stats = match terms[1] {
            PatternTerm::Constant(p) => self.ctx.index.stats().predicate(p.0),
            PatternTerm::Variable(_) => None,
        };
        let only_predicate_constant = matches!(
            terms,
            [
                PatternTerm::Variable(_),
                PatternTerm::Constant(_),
                PatternTerm::Variable(_)
            ]
        );
        let variables: Vec<(Variable, f64)> = variables
            .iter()
            .enumerate()
            .map(|(column, v)| {
                let position = terms
                    .iter()
                    .position(|t| *t == PatternTerm::Variable(column));
                let distinct = match (stats, position) {
                    (Some(s), Some(0)) if only_predicate_constant => s.distinct_subjects as f64,
                    (Some(s), Some(2)) if only_predicate_constant => s.distinct_objects as f64,
                    _ => rows,
                };
                (v.clone(), distinct.min(rows).max(1.0))
            })
            .collect();
        let sorted_on = pattern.sorted_column().map(|c| variables[c].0.clone());
        PatternEstimate {
            rows,
            variables,
            sorted_on,
        }
    }

    /// Operators for a join tree; every node measured with its estimate.
    fn build_join_tree(
        &self,
        tree: &JoinTree,
        scans: &[ScanSpec],
        estimates: &join_order::Estimator,
    ) -> BoxedOperator {
        let ctx = &self.ctx;
        let scan = |i: usize| -> BoxedOperator {
            let (rows, variables, pattern) = scans[i].clone();
            Box::new(Measured::new(
                Box::new(Scan::of(ctx.clone(), variables, pattern)),
                Some(rows),
            ))
        };
        let estimate = |t: &JoinTree| estimates.rows(t).round() as u64;
        let operator: BoxedOperator = match tree {
            JoinTree::Scan(i) => return scan(*i),
            JoinTree::Hash(a, b) => {
                let (mut probe, mut build) = (a, b);
                if estimate(probe) < estimate(build) {
                    std::mem::swap(&mut probe, &mut build);
                }
                Box::new(HashJoin::new(
                    ctx.clone(),
                    self.build_join_tree(probe, scans, estimates),
                    self.build_join_tree(build, scans, estimates),
                ))
            }
            JoinTree::Merge(a, b, key) => Box::new(MergeJoin::new(
                ctx.clone(),
                self.build_join_tree(a, scans, estimates),
                self.build_join_tree(b, scans, estimates),
                key.clone(),
            )),
            JoinTree::Index(left, i) => {
                let (_, variables, pattern) = scans[*i].clone();
                Box::new(IndexJoin::new(
                    ctx.clone(),
                    self.build_join_tree(left, scans, estimates),
                    variables,
                    pattern,
                ))
            }
        };
        Box::new(Measured::new(operator, Some(estimate(tree))))
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

/// Most left rows for which OPTIONAL is evaluated per row.
const PER_ROW_MAX_LEFT: u64 = 4096;

/// Right rows per left row above which evaluating OPTIONAL per left row
/// wins: planning and looking up the right side for one row costs about as
/// much as reading and hashing this many right rows.
const PER_ROW_RIGHT_FACTOR: u64 = 64;

/// Whether OPTIONAL is cheaper per left row than as one join, by the
/// planner's estimates (none: not known to be).
fn per_row_is_cheaper(left: Option<u64>, right: Option<u64>) -> bool {
    match (left, right) {
        (Some(left), Some(right)) => {
            left <= PER_ROW_MAX_LEFT && left.max(1) * PER_ROW_RIGHT_FACTOR <= right
        }
        _ => false,
    }
}

/// A triple pattern ready to scan: its exact row count, its variables (the
/// output columns), and its terms, graph and range of values.
type ScanSpec = (u64, Vec<Variable>, PatternRows);

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

/// Whether `pattern` has a solution for the row (EXISTS evaluated per
/// row): the row's bound variables, and those the scope already
/// substitutes, are substituted into the pattern, which is matched in the
/// scope's graph.
pub fn exists(
    ctx: &Arc<QueryContext>,
    pattern: &GraphPattern,
    scope: &Scope,
    variables: &[Variable],
    row: &[Id],
) -> Result<bool, EngineError> {
    let mut bound: Vec<(Variable, Id)> = variables
        .iter()
        .zip(row)
        .filter(|(v, id)| **id != Id::UNDEFINED && !is_blank_variable(v))
        .map(|(v, id)| (v.clone(), *id))
        .collect();
    for (v, id) in scope.bound.iter() {
        if !bound.iter().any(|(b, _)| b == v) {
            bound.push((v.clone(), *id));
        }
    }
    let planner = Planner {
        ctx: ctx.clone(),
        bound: bound.clone().into(),
    };
    let inner = planner.plan(pattern, &scope.graph)?;
    // Variables the pattern binds itself despite the substitution (BIND)
    // must agree with the row.
    let values = Values::new(
        bound.iter().map(|(v, _)| v.clone()).collect(),
        vec![bound.iter().map(|(_, id)| *id).collect()],
    );
    let mut joined = HashJoin::new(ctx.clone(), inner, Box::new(values));
    // An empty batch is a pause for the end of the turn, not a match: an
    // EXISTS is answered whole, and the signal goes back to the operators
    // around it, which can pause between rows.
    let mut paused = false;
    let found = loop {
        match joined.next_batch()? {
            None => break false,
            Some(batch) if batch.len == 0 => paused = true,
            Some(_) => break true,
        }
    };
    if paused {
        ctx.input_paused(1);
    }
    Ok(found)
}
