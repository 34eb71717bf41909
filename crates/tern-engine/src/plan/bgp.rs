//! Basic graph patterns: each triple pattern resolved against the index
//! (constants to IDs, blank nodes to hidden variables), narrowed to value
//! ranges where a FILTER allows, estimated, and joined in the order
//! [`join_order`] picks, as merge, index nested-loop or hash joins.

use super::join_order::{self, JoinTree, PatternEstimate};
use super::planner::{GraphContext, Planner};
use crate::exec::{
    BoxedOperator, GraphScope, HashJoin, IndexJoin, Measured, MergeJoin, PatternRows, PatternTerm,
    Scan, Values,
};
use crate::expr::blank_variable;
use crate::EngineError;
use oxrdf::{Term, Variable};
use rustc_hash::FxHashSet;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::ops::Bound;
use tern_index::{Id, Permutation, ScanRange, Tag};

/// Most triple patterns in one basic graph pattern (a property path of
/// plain predicates counts one per step).
pub const MAX_BGP_PATTERNS: usize = 1_000;

/// Which literals [`Planner::literal_objects`] counts.
#[derive(Clone, Copy)]
pub(super) enum Literals {
    All,
    /// Those stored in the vocabulary, not inline in their IDs.
    OfVocabulary,
}

/// A triple or path pattern's position, resolved against the index.
pub(super) enum Resolved {
    Constant(Id),
    Variable(Variable),
    /// A constant the index does not contain: the pattern matches nothing.
    Missing,
}

impl Planner {
    pub(super) fn resolve_term(&self, term: &TermPattern) -> Result<Resolved, EngineError> {
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

    pub(super) fn resolve_path_end(&self, term: &TermPattern) -> Result<Resolved, EngineError> {
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

    pub(super) fn resolve_constant(&self, term: &Term) -> Result<Resolved, EngineError> {
        Ok(match self.ctx.lookup(term)? {
            Some(id) => Resolved::Constant(id),
            None => Resolved::Missing,
        })
    }

    pub(super) fn plan_bgp(
        &self,
        patterns: &[TriplePattern],
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        self.plan_ranged_bgp(patterns, graph, &[])
    }

    /// A basic graph pattern whose patterns scan only `ranges` of the values
    /// of these variables where they can (see [`value_range`]).
    pub(super) fn plan_ranged_bgp(
        &self,
        patterns: &[TriplePattern],
        graph: &GraphContext,
        ranges: &[(Variable, ScanRange)],
    ) -> Result<BoxedOperator, EngineError> {
        // Each triple pattern becomes a scan and a join, and ordering the
        // joins takes time quadratic in their number (4,000 patterns took
        // 1.8 s, 16,000 took 37 s), which no deadline interrupts.
        if patterns.len() > MAX_BGP_PATTERNS {
            return Err(EngineError::TooComplex(format!(
                "a group of {} triple patterns; the limit is {MAX_BGP_PATTERNS} in one group",
                patterns.len()
            )));
        }
        self.spend(patterns.len())?;
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
        let mut seen_variables: FxHashSet<Variable> = FxHashSet::default();
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
                if seen_variables.insert(v.clone()) {
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
    pub(super) fn narrowed(
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
    pub(super) fn literal_objects(
        &self,
        predicate: Id,
        kind: Literals,
    ) -> Result<u64, EngineError> {
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
    pub(super) fn pattern_estimate(
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
    pub(super) fn build_join_tree(
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

/// A triple pattern ready to scan: its exact row count, its variables (the
/// output columns), and its terms, graph and range of values.
type ScanSpec = (u64, Vec<Variable>, PatternRows);

/// The pattern term for a resolved position, adding variables to `variables`.
pub(super) fn position(resolved: &Resolved, variables: &mut Vec<Variable>) -> Option<PatternTerm> {
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

pub(super) fn scope_of(graph: &GraphContext, variables: &mut Vec<Variable>) -> Option<GraphScope> {
    Some(match graph {
        GraphContext::Default => GraphScope::Default,
        GraphContext::Named(id) => GraphScope::Named(*id),
        GraphContext::Variable(v) => match position(&Resolved::Variable(v.clone()), variables)? {
            PatternTerm::Variable(c) => GraphScope::NamedVariable(c),
            PatternTerm::Constant(_) => return None,
        },
    })
}
