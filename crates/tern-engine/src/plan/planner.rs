//! The [`Planner`]: walks `spargebra`'s algebra and makes one operator per
//! node; basic graph patterns, OPTIONAL, FILTER, equality joins and
//! per-graph GRAPH are planned in the files beside this one.

use super::bgp::{position, scope_of, FilterPlacement};
use super::exists_per_row::ExistsPerRow;
use super::optional::OptionalJoins;
use super::order_keys;
use super::per_graph::{self, PER_GRAPH_LIMIT};
use super::rows_leaf::RowsLeaf;
use super::union_leaf::UnionLeafShape;
use super::{
    constant_filter, correlated, decode_order, exists, group_merge, path_service, rows_leaf,
    unbound_negation, union_leaf, value_range, values_filter,
};
use crate::context::QueryContext;
use crate::exec::{
    BoxedOperator, Distinct, Extend, HashJoin, Measured, Minus, OrderBy, PathScan, Project, Slice,
    Synonyms, Union, Values,
};
use crate::expr::Scope;
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{GroundTerm, NamedNodePattern, TriplePattern};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    pub(super) ctx: Arc<QueryContext>,
    /// Values substituted for variables (the solution an EXISTS pattern is
    /// evaluated for, SPARQL 1.1 §18.6): such a variable is a constant in
    /// the pattern, in its expressions and in its GRAPH clauses.
    pub(super) bound: Arc<[(Variable, Id)]>,
    pub(super) optional_joins: OptionalJoins,
    /// Patterns this planning may still plan, shared by the planners of one
    /// planning: `GRAPH ?g` nested in `GRAPH ?g` is planned once per named
    /// graph at each level, so plans can grow exponentially with the text.
    pub(super) budget: Arc<AtomicUsize>,
    /// While planning the input of a LIMIT that rows stream through (no
    /// ORDER BY, GROUP BY or other operator that reads its whole input in
    /// between): the rows it needs; 0 otherwise. Joins then favour plans
    /// that give their first rows at once (see `build_join_tree`).
    pub(super) first_rows: AtomicUsize,
}

/// Most patterns one planning plans (each becomes an operator or more).
pub const MAX_PLANNED_PATTERNS: usize = 50_000;

impl Planner {
    pub fn new(ctx: Arc<QueryContext>, optional_joins: OptionalJoins) -> Planner {
        Planner {
            ctx,
            bound: Arc::new([]),
            optional_joins,
            budget: Arc::new(AtomicUsize::new(MAX_PLANNED_PATTERNS)),
            first_rows: AtomicUsize::new(0),
        }
    }

    /// A planner for a pattern planned on its own later (per row): it gets
    /// a budget of its own.
    pub(super) fn fresh(
        ctx: Arc<QueryContext>,
        bound: Arc<[(Variable, Id)]>,
        optional_joins: OptionalJoins,
    ) -> Planner {
        Planner {
            bound,
            ..Planner::new(ctx, optional_joins)
        }
    }

    /// Takes `patterns` from the planning's budget, or fails when it is spent.
    pub(super) fn spend(&self, patterns: usize) -> Result<(), EngineError> {
        let spent = self
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(patterns)
            });
        if spent.is_err() {
            return Err(EngineError::TooComplex(format!(
                "the query's plan would have more than {MAX_PLANNED_PATTERNS} patterns \
                 (GRAPH ?g inside GRAPH ?g is planned once per named graph at each level)"
            )));
        }
        Ok(())
    }

    /// Plans for a consumer that reads only the first `rows` rows (ASK
    /// reads one).
    pub fn first_rows_only(&self, rows: usize) {
        self.first_rows.store(rows, Ordering::Relaxed);
    }

    /// The rows the consumer of what is being planned reads (0: all).
    pub(super) fn first_rows(&self) -> usize {
        self.first_rows.load(Ordering::Relaxed)
    }

    /// A planner like this one with `bound` substituted instead.
    pub(super) fn with_bound(&self, bound: Arc<[(Variable, Id)]>) -> Planner {
        Planner {
            ctx: self.ctx.clone(),
            bound,
            optional_joins: self.optional_joins,
            budget: self.budget.clone(),
            first_rows: AtomicUsize::new(self.first_rows()),
        }
    }

    pub(super) fn bound_value(&self, variable: &Variable) -> Option<Id> {
        self.bound
            .iter()
            .find_map(|(v, id)| (v == variable).then_some(*id))
    }

    /// What expressions planned in `graph` need for their EXISTS.
    pub(super) fn scope(&self, graph: &GraphContext) -> Arc<Scope> {
        Arc::new(Scope {
            bound: self.bound.clone(),
            patterns: Arc::new(ExistsPerRow {
                graph: graph.clone(),
                optional_joins: self.optional_joins,
            }),
        })
    }

    /// The operator tree of a pattern, every operator measured for EXPLAIN.
    pub fn plan(
        &self,
        pattern: &GraphPattern,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        self.spend(1)?;
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
        // Operators that pass rows on as they come keep a LIMIT's hint for
        // their inputs; any other reads its input whole.
        let streams = matches!(
            pattern,
            GraphPattern::Bgp { .. }
                | GraphPattern::Project { .. }
                | GraphPattern::Union { .. }
                | GraphPattern::Extend { .. }
                | GraphPattern::Filter { .. }
                | GraphPattern::Distinct { .. }
                | GraphPattern::Reduced { .. }
                | GraphPattern::Slice { .. }
                | GraphPattern::Graph { .. }
        );
        if !streams {
            let hint = self.first_rows.swap(0, Ordering::Relaxed);
            let planned = self.plan_measured(pattern, graph);
            self.first_rows.store(hint, Ordering::Relaxed);
            return planned;
        }
        self.plan_measured(pattern, graph)
    }

    fn plan_measured(
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
                if let Some(union) = group_merge::path_as_union(subject, path, object) {
                    return self.plan_operator(&union, graph);
                }
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
                // A path search takes the other side's rows as its input.
                if path_service::is_path_service(right) {
                    let input = self.plan(left, graph)?;
                    return self.plan_path_service(right, Some(input), graph);
                }
                if path_service::is_path_service(left) {
                    let input = self.plan(right, graph)?;
                    return self.plan_path_service(left, Some(input), graph);
                }
                if let Some((patterns, leaves)) = union_leaf::group_of(pattern) {
                    if union_leaf::fit(&leaves, graph) {
                        let mut no_filters = FilterPlacement::default();
                        return self.plan_group(
                            &patterns,
                            &leaves,
                            Vec::new(),
                            graph,
                            &[],
                            &mut no_filters,
                        );
                    }
                }
                if let Some(filtered) = values_filter::as_in_filter(left, right) {
                    return self.plan_operator(&filtered, graph);
                }
                if let Some(merged) = group_merge::merge_join(left, right) {
                    return self.plan_operator(&merged, graph);
                }
                if let Some(regrouped) = group_merge::regroup(left, right) {
                    return self.plan_operator(&regrouped, graph);
                }
                if let Some(group) = self.plan_group_of_parts(pattern, None, graph)? {
                    return Ok(group);
                }
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
                    let fixed = |v: &Variable| {
                        self.bound_value(v).is_some()
                            || matches!(graph, GraphContext::Variable(g) if g == v)
                    };
                    if let Some(bound) = constant_filter::bind_constants(expr, patterns, fixed) {
                        return self.plan_operator(&bound, graph);
                    }
                    if let Some(joined) = self.plan_equality_join(expr, patterns, graph)? {
                        return Ok(joined);
                    }
                    if let Some(seeded) = self.plan_seeded_filter(expr, patterns, graph)? {
                        return Ok(seeded);
                    }
                    let mut ranges = value_range::from_filter(expr, ctx, &self.bound)?;
                    if let [pattern] = patterns.as_slice() {
                        decode_order::order_by_decoded_object(expr, pattern, &mut ranges);
                    }
                    let (mut placement, mut rest) = FilterPlacement::of(expr);
                    let bgp = self.plan_filtered_bgp(patterns, graph, &ranges, &mut placement)?;
                    rest.extend(placement.unplaced());
                    return match exists::and_all(rest) {
                        Some(rest) => self.plan_filter(&rest, bgp, graph),
                        None => Ok(bgp),
                    };
                }
                if let Some(group) = self.plan_filtered_group(expr, inner, graph)? {
                    return Ok(group);
                }
                if let Some(anti) = unbound_negation::as_not_exists(expr, inner) {
                    return self.plan_operator(&anti, graph);
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
                order_keys::with_bound_values(inner, expression),
                self.scope(graph),
            )),
            GraphPattern::Project { inner, variables } => {
                // Inside a subquery, only the variables it projects are the
                // outer ones (as in the reference evaluator).
                let inner_planner = self.with_bound(
                    self.bound
                        .iter()
                        .filter(|(v, _)| variables.contains(v))
                        .cloned()
                        .collect(),
                );
                Box::new(Project::new(
                    inner_planner.plan(inner, graph)?,
                    variables.clone(),
                ))
            }
            GraphPattern::Distinct { inner } | GraphPattern::Reduced { inner } => {
                // A DISTINCT union of triple patterns is read by one
                // deduplicating scan.
                let shape = match pattern {
                    GraphPattern::Distinct { .. } => union_leaf::of(pattern)
                        .filter(|s| union_leaf::fit(std::slice::from_ref(s), graph)),
                    _ => None,
                };
                match shape {
                    Some(shape) => {
                        let leaf = self.resolve_union_leaf(&shape, graph)?;
                        if leaf.is_empty() {
                            return Ok(Box::new(Values::empty(leaf.variables)));
                        }
                        self.plan_union_scan(&leaf, graph)?
                    }
                    None => Box::new(Distinct::new(ctx.clone(), self.plan(inner, graph)?)),
                }
            }
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => {
                let needed = length.map(|length| start.saturating_add(length));
                let hint = self.first_rows.swap(needed.unwrap_or(0), Ordering::Relaxed);
                let input = self.plan(inner, graph);
                self.first_rows.store(hint, Ordering::Relaxed);
                let mut input = input?;
                if let Some(needed) = needed {
                    input.first_rows_only(needed);
                }
                Box::new(Slice::new(input, *start, *length))
            }
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => self.plan_grouping(inner, variables, aggregates, graph)?,
            GraphPattern::Service {
                name: NamedNodePattern::NamedNode(name),
                inner,
                ..
            } if name.as_str().starts_with(SYNONYMS_SERVICE) => {
                let inner = self.plan(inner, graph)?;
                return Ok(self.with_synonyms(inner, &name.as_str()[SYNONYMS_SERVICE.len()..]));
            }
            GraphPattern::Service { .. } if path_service::is_path_service(pattern) => {
                return self.plan_path_service(pattern, None, graph)
            }
            GraphPattern::Service { name, .. } => {
                return Err(EngineError::Unsupported(format!(
                    "SERVICE {name} (federated queries)"
                )))
            }
            #[allow(unreachable_patterns)]
            other => return Err(EngineError::Unsupported(format!("graph pattern {other}"))),
        })
    }
}

impl Planner {
    /// A FILTER over a group with union leaves: the group planned as one
    /// join order, each conjunct checked at the lowest join that binds its
    /// variables (when every leaf binds all its variables in every row:
    /// no complex branch that might leave one unbound), the rest above.
    fn plan_filtered_group(
        &self,
        expr: &Expression,
        inner: &GraphPattern,
        graph: &GraphContext,
    ) -> Result<Option<BoxedOperator>, EngineError> {
        let Some((patterns, leaves)) = union_leaf::group_of(inner) else {
            return self.plan_group_of_parts(inner, Some(expr), graph);
        };
        if !union_leaf::fit(&leaves, graph) {
            return Ok(None);
        }
        // A leaf that may leave a variable unbound takes no filter below it.
        let placed = leaves.iter().all(|l| l.complex.is_empty());
        self.plan_group_under(&patterns, &leaves, Vec::new(), Some((expr, placed)), graph)
            .map(Some)
    }

    /// A join whose parts other than triple patterns would multiply as
    /// written, planned as one group with those parts as leaves
    /// ([`rows_leaf`]), under `filter` if given; `None` for other joins.
    fn plan_group_of_parts(
        &self,
        pattern: &GraphPattern,
        filter: Option<&Expression>,
        graph: &GraphContext,
    ) -> Result<Option<BoxedOperator>, EngineError> {
        // Under GRAPH ?g a part may not bind ?g, and would not join on it.
        if matches!(graph, GraphContext::Variable(_)) {
            return Ok(None);
        }
        let Some((patterns, parts)) = rows_leaf::group_with_parts(pattern) else {
            return Ok(None);
        };
        let rows = parts
            .into_iter()
            .map(|part| Ok(RowsLeaf::new(self.plan(part, graph)?)))
            .collect::<Result<Vec<_>, EngineError>>()?;
        self.plan_group_under(&patterns, &[], rows, filter.map(|f| (f, true)), graph)
            .map(Some)
    }

    /// A group (triple patterns, union leaves, planned parts) under
    /// `filter`: its ranges narrow the scans, its conjuncts go to the lowest
    /// join that binds their variables when `placed` (the rest, and all of
    /// it otherwise, above the group).
    fn plan_group_under(
        &self,
        patterns: &[TriplePattern],
        leaves: &[UnionLeafShape<'_>],
        rows: Vec<RowsLeaf>,
        filter: Option<(&Expression, bool)>,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let ranges = match filter {
            Some((expr, _)) => value_range::from_filter(expr, &self.ctx, &self.bound)?,
            None => Vec::new(),
        };
        let (mut placement, mut rest) = match filter {
            Some((expr, true)) => FilterPlacement::of(expr),
            Some((expr, false)) => (FilterPlacement::default(), vec![expr.clone()]),
            None => (FilterPlacement::default(), Vec::new()),
        };
        let group = self.plan_group(patterns, leaves, rows, graph, &ranges, &mut placement)?;
        rest.extend(placement.unplaced());
        match exists::and_all(rest) {
            Some(rest) => self.plan_filter(&rest, group, graph),
            None => Ok(group),
        }
    }
}

/// The prefix of the SERVICE IRIs the inference rewriting puts around a
/// pattern whose values stand for their owl:sameAs synonyms:
/// `urn:tern:synonyms:all:x,y` (or `canonical:`), then the variables.
pub const SYNONYMS_SERVICE: &str = "urn:tern:synonyms:";

impl Planner {
    /// `input` with the named variables' values replaced by their synonyms
    /// (`spec`: `all:` or `canonical:`, then variable names, comma
    /// separated); as it is when the query has no sameAs classes.
    fn with_synonyms(&self, input: BoxedOperator, spec: &str) -> BoxedOperator {
        let Some(table) = self.ctx.synonyms.get() else {
            return input;
        };
        let (mode, names) = spec.split_once(':').unwrap_or((spec, ""));
        let columns: Vec<usize> = names
            .split(',')
            .filter_map(|name| input.variables().iter().position(|v| v.as_str() == name))
            .collect();
        if columns.is_empty() {
            return input;
        }
        Box::new(Synonyms::new(
            self.ctx.clone(),
            input,
            columns,
            table.clone(),
            mode == "canonical",
        ))
    }
}

pub fn ground_term(term: &GroundTerm) -> Result<Term, EngineError> {
    match term {
        GroundTerm::NamedNode(n) => Ok(n.clone().into()),
        GroundTerm::Literal(l) => Ok(l.clone().into()),
        #[allow(unreachable_patterns)]
        other => Err(EngineError::Unsupported(format!("term {other}"))),
    }
}
