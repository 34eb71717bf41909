//! Basic graph patterns: each triple pattern resolved against the index
//! (constants to IDs, blank nodes to hidden variables), narrowed to value
//! ranges where a FILTER allows, estimated, and joined in the order
//! [`join_order`] picks, as merge, index nested-loop or hash joins.

use super::exists;
use super::join_order::{self, JoinTree, PatternEstimate};
use super::join_sample::{self, ScanSpec};
use super::planner::{GraphContext, Planner};
use super::rows_leaf::RowsLeaf;
use super::union_leaf::{ResolvedLeaf, UnionLeafShape};
use crate::context::QueryContext;
use crate::exec::{
    BoxedOperator, Filter, GraphScope, HashJoin, IndexJoin, Measured, MergeJoin, MorselFilter,
    PatternRows, PatternTerm, Scan, UnionIndexJoin, Values,
};
use crate::expr::{blank_variable, expression_variables, Scope};
use crate::EngineError;
use oxrdf::{Term, Variable};
use rustc_hash::FxHashSet;
use spargebra::algebra::Expression;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::ops::Bound;
use std::sync::Arc;
use tern_index::{Id, Permutation, ScanRange, Tag};

/// Most triple patterns in one basic graph pattern (a property path of
/// plain predicates counts one per step).
pub const MAX_BGP_PATTERNS: usize = 1_000;

/// A numeric range is read instead of its whole predicate when it holds at
/// most one in this many of the predicate's rows.
const RANGE_MAX_SHARE: u64 = 3;

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
        let mut no_filters = FilterPlacement::default();
        self.plan_filtered_bgp(patterns, graph, ranges, &mut no_filters)
    }

    /// A basic graph pattern under a FILTER: scans narrowed to `ranges`, and
    /// each of `filters`' conjuncts checked at the lowest join that binds
    /// all its variables (those it cannot place are left unplaced for the
    /// caller).
    pub(super) fn plan_filtered_bgp(
        &self,
        patterns: &[TriplePattern],
        graph: &GraphContext,
        ranges: &[(Variable, ScanRange)],
        filters: &mut FilterPlacement,
    ) -> Result<BoxedOperator, EngineError> {
        self.plan_group(patterns, &[], Vec::new(), graph, ranges, filters)
    }

    /// A group of triple patterns, union leaves ([`union_leaf`]) and other
    /// planned parts ([`rows_leaf`]), joined in one order: a union leaf is
    /// weighed like a pattern and may be looked up per row of the rest; a
    /// planned part is read whole or hash-joined.
    pub(super) fn plan_group(
        &self,
        patterns: &[TriplePattern],
        leaves: &[UnionLeafShape<'_>],
        rows: Vec<RowsLeaf>,
        graph: &GraphContext,
        ranges: &[(Variable, ScanRange)],
        filters: &mut FilterPlacement,
    ) -> Result<BoxedOperator, EngineError> {
        // Each triple pattern becomes a scan and a join, and ordering the
        // joins takes time quadratic in their number (4,000 patterns took
        // 1.8 s, 16,000 took 37 s), which no deadline interrupts.
        let parts = patterns.len() + leaves.len() + rows.len();
        if parts > MAX_BGP_PATTERNS {
            return Err(EngineError::TooComplex(format!(
                "a group of {parts} triple patterns; the limit is {MAX_BGP_PATTERNS} in one group",
            )));
        }
        self.spend(parts)?;
        if parts == 0 {
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
        let mut add_variables = |variables: &[Variable]| {
            for v in variables {
                if seen_variables.insert(v.clone()) {
                    all_variables.push(v.clone());
                }
            }
        };
        let mut missing = false;
        for pattern in patterns {
            let (variables, scan) = self.resolve_pattern(pattern, graph, ranges)?;
            add_variables(&variables);
            match scan {
                Some(scan) if !missing => scans.push(scan),
                Some(_) => {}
                None => missing = true,
            }
        }
        let mut resolved = Vec::with_capacity(leaves.len());
        for shape in leaves {
            let leaf = self.resolve_union_leaf(shape, graph)?;
            add_variables(&leaf.variables);
            missing |= leaf.is_empty();
            resolved.push(leaf);
        }
        for leaf in &rows {
            add_variables(&leaf.variables);
        }
        if missing {
            return Ok(Box::new(Values::empty(all_variables)));
        }
        let mut estimates: Vec<PatternEstimate> = scans
            .iter()
            .map(|(rows, variables, pattern)| self.pattern_estimate(*rows, variables, pattern))
            .collect();
        estimates.extend(resolved.iter().map(ResolvedLeaf::estimate));
        estimates.extend(rows.iter().map(RowsLeaf::estimate));
        // For one row (ASK, LIMIT 1), index joins from the smallest pattern
        // find it without reading any input whole; for more, the cheapest
        // plan with its hash joins turned into lookups (`build_join_tree`)
        // was faster on biblio (union-limit: merge joins of sorted scans
        // stream as well). Only triple patterns are sampled (the first
        // `scans.len()` leaves of the order).
        let (tree, sampled) = if self.first_rows() == 1 {
            (join_order::pipelined(&estimates), Vec::new())
        } else {
            let sampled = join_sample::sampled_joins(&self.ctx, &scans)?;
            (join_order::order(&estimates, &sampled), sampled)
        };
        let estimator = join_order::Estimator::new(&estimates, &sampled);
        let scope = self.scope(graph);
        let leaves = Leaves {
            scans: &scans,
            unions: &resolved,
            rows: &rows,
            graph,
            morsel: None,
        };
        // (A planned part is one operator: it cannot be copied per core.)
        if rows.is_empty() {
            if let Some(parallel) =
                self.parallel_join_tree(&tree, &leaves, &estimator, filters, &scope)?
            {
                return Ok(parallel);
            }
        }
        let mut placed = |operator: BoxedOperator| filters.place(&self.ctx, operator, &scope);
        self.build_join_tree(&tree, &leaves, &estimator, &mut placed)
    }

    /// One triple pattern resolved against the index and estimated: its
    /// variables (output columns) and, unless one of its constants is not in
    /// the index (then it matches nothing), how to scan it.
    pub(super) fn resolve_pattern(
        &self,
        pattern: &TriplePattern,
        graph: &GraphContext,
        ranges: &[(Variable, ScanRange)],
    ) -> Result<(Vec<Variable>, Option<ScanSpec>), EngineError> {
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
        let mut missing = false;
        for (i, r) in resolved.iter().enumerate() {
            match position(r, &mut variables) {
                Some(t) => terms[i] = t,
                None => missing = true,
            }
        }
        let scope = scope_of(graph, &mut variables);
        let Some(scope) = scope.filter(|_| !missing) else {
            return Ok((variables, None));
        };
        let rows = self.narrowed(terms, scope, &variables, ranges)?;
        let estimate = Scan::estimate(&self.ctx, &rows)?;
        Ok((variables.clone(), Some((estimate, variables, rows))))
    }

    /// The pattern, narrowed to a range of its object's values if `ranges`
    /// has one for its object variable and its predicate is constant. A
    /// range of inline values misses the literals of the vocabulary (a date
    /// in a non-canonical form, say), so a predicate with such literals is
    /// not narrowed to one; a range of the vocabulary (a string prefix) is
    /// exact.
    pub(super) fn narrowed(
        &self,
        terms: [PatternTerm; 3],
        scope: GraphScope,
        variables: &[Variable],
        ranges: &[(Variable, ScanRange)],
    ) -> Result<PatternRows, EngineError> {
        // A whole range: not a narrowing, the object order a filter that
        // decodes the object asked for (`decode_order`).
        if let PatternTerm::Variable(object) = terms[2] {
            let whole = ranges
                .iter()
                .any(|(v, range)| *v == variables[object] && range.is_all());
            if whole
                && terms[..2]
                    .iter()
                    .all(|t| *t != PatternTerm::Variable(object))
            {
                return Ok(PatternRows::ranged(terms, scope, Some((2, ScanRange::ALL))));
            }
        }
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
        let tag = match range.start {
            Bound::Included(id) | Bound::Excluded(id) => id.tag(),
            Bound::Unbounded => Tag::Undefined,
        };
        let of_vocabulary = tag == Tag::Vocab;
        if !of_vocabulary && self.literal_objects(predicate, Literals::OfVocabulary)? > 0 {
            return Ok(PatternRows::new(terms, scope));
        }
        // A numeric bound admits decimals and doubles too: a range of
        // integers covers the predicate only if it has none. And it is
        // read only where it keeps few of the predicate's rows: a range
        // comes in value order, so its pattern no longer merge-joins on
        // its subject, and keeping most rows does not pay for the hash
        // join that takes the merge join's place (or for the state a
        // suspended query then keeps).
        if tag == Tag::Integer {
            let index = &self.ctx.index;
            let all = index.count(Permutation::Pos, &[predicate], ScanRange::ALL)?;
            let kept = index.count(Permutation::Pos, &[predicate], range)?;
            // (Its vocabulary literals were counted above.)
            if kept.saturating_mul(RANGE_MAX_SHARE) > all
                || self.inline_non_integers(predicate)? > 0
            {
                return Ok(PatternRows::new(terms, scope));
            }
        }
        Ok(PatternRows::ranged(terms, scope, Some((2, range))))
    }

    /// Whether a range of inline integers holds every object of
    /// `predicate` that a numeric comparison can let through: it has no
    /// literals in the vocabulary (a number in another form) and no
    /// inline decimals or doubles.
    pub(super) fn integer_ranges_fit(&self, predicate: Id) -> Result<bool, EngineError> {
        Ok(
            self.literal_objects(predicate, Literals::OfVocabulary)? == 0
                && self.inline_non_integers(predicate)? == 0,
        )
    }

    /// How many objects of `predicate` are inline decimals or doubles.
    fn inline_non_integers(&self, predicate: Id) -> Result<u64, EngineError> {
        let numbers = ScanRange {
            start: Bound::Included(Id::tag_range(Tag::Decimal).0),
            end: Bound::Included(Id::tag_range(Tag::Double).1),
        };
        Ok(self
            .ctx
            .index
            .count(Permutation::Pos, &[predicate], numbers)?)
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
        let mut count = index.count(Permutation::Pos, &[predicate], literals)?;
        if index.delta_terms() > 0 {
            // Terms that updates brought are not in term order: count
            // them all (IRIs too; more is the safe side here).
            let (first, last) = Id::tag_range(Tag::DeltaVocab);
            let delta = ScanRange {
                start: Bound::Included(first),
                end: Bound::Included(last),
            };
            count += index.count(Permutation::Pos, &[predicate], delta)?;
        }
        Ok(count)
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
        let all_stats = self.ctx.index.stats();
        let stats = match terms[1] {
            PatternTerm::Constant(p) => all_stats.predicate(p.0),
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
            lookup_cost: 1.0,
        }
    }

    /// Operators for a join tree; every node measured with its estimate and
    /// passed through `placed` (which adds the filters it can check there).
    pub(super) fn build_join_tree(
        &self,
        tree: &JoinTree,
        leaves: &Leaves,
        estimates: &join_order::Estimator,
        placed: &mut dyn FnMut(BoxedOperator) -> BoxedOperator,
    ) -> Result<BoxedOperator, EngineError> {
        let ctx = &self.ctx;
        let estimate = |t: &JoinTree| estimates.rows(t).round() as u64;
        let mut build = |t: &JoinTree| self.build_join_tree(t, leaves, estimates, &mut *placed);
        let operator: BoxedOperator = match tree {
            JoinTree::Scan(i) => {
                let scan = match leaves.get(*i) {
                    Leaf::Pattern((rows, variables, pattern)) => match leaves.morsel_of(*i) {
                        Some((morsels, part)) => {
                            let (variables, pattern) = (variables.clone(), *pattern);
                            let scan = Scan::part(ctx.clone(), variables, pattern, morsels, part);
                            Measured::new(Box::new(scan), Some(rows / part.1 as u64))
                        }
                        _ => {
                            let scan = Box::new(Scan::of(ctx.clone(), variables.clone(), *pattern));
                            Measured::new(scan, Some(*rows))
                        }
                    },
                    Leaf::Union(leaf) => {
                        let union = self.plan_union_scan(leaf, leaves.graph)?;
                        Measured::new(union, Some(leaf.rows()))
                    }
                    Leaf::Rows(leaf) => Measured::new(leaf.take()?, Some(leaf.rows)),
                };
                return Ok(placed(Box::new(scan)));
            }
            JoinTree::Hash(a, b) => {
                let (mut probe, mut build_side) = (a, b);
                if estimate(probe) < estimate(build_side) {
                    std::mem::swap(&mut probe, &mut build_side);
                }
                let probe = build(probe)?;
                match self.lookup_for_first_rows(build_side, leaves, probe.variables()) {
                    Some(i) => self.index_join(probe, leaves, i)?,
                    None => {
                        let mut built = build(build_side)?;
                        if let Some(morsel) = &leaves.morsel {
                            built = morsel.share_of(ctx, build_side, built);
                        }
                        Box::new(HashJoin::new(ctx.clone(), probe, built))
                    }
                }
            }
            JoinTree::Merge(a, b, key) => {
                let a = build(a)?;
                Box::new(MergeJoin::new(ctx.clone(), a, build(b)?, key.clone()))
            }
            JoinTree::Index(left, i) => {
                let left = build(left)?;
                self.index_join(left, leaves, *i)?
            }
        };
        Ok(placed(Box::new(Measured::new(
            operator,
            Some(estimate(tree)),
        ))))
    }

    /// `left` joined with leaf `i` looked up per row.
    fn index_join(
        &self,
        left: BoxedOperator,
        leaves: &Leaves,
        i: usize,
    ) -> Result<BoxedOperator, EngineError> {
        let ctx = &self.ctx;
        Ok(match leaves.get(i) {
            Leaf::Pattern((_, variables, pattern)) => Box::new(IndexJoin::new(
                ctx.clone(),
                left,
                variables.clone(),
                *pattern,
            )),
            Leaf::Union(leaf) => {
                let union = self.union_of(leaf, leaves.graph)?;
                Box::new(UnionIndexJoin::new(ctx.clone(), left, union, leaf.detail()))
            }
            // Never looked up: built once (see `rows_leaf`).
            Leaf::Rows(leaf) => Box::new(HashJoin::new(ctx.clone(), left, leaf.take()?)),
        })
    }
}

/// The leaves of a join order: triple patterns first, then union leaves,
/// then planned parts.
pub(super) struct Leaves<'a> {
    pub scans: &'a [ScanSpec],
    pub unions: &'a [ResolvedLeaf<'a>],
    pub rows: &'a [RowsLeaf],
    pub graph: &'a GraphContext,
    /// In a copy of the tree for one core, the part of its driving
    /// pattern's rows it reads (`parallel`).
    pub morsel: Option<Morsel>,
}

/// Index rows from the first to the last: a morsel of a pattern's rows.
pub(super) type RowRange = (tern_index::Row, tern_index::Row);

/// One core's part of the rows of some patterns, in copy `part.0` of
/// `part.1` of a join tree: each of these leaves reads only its morsels of
/// index rows (each from its first row to its last).
pub(super) struct Morsel {
    pub scans: Vec<(usize, Vec<RowRange>)>,
    pub part: (usize, usize),
    /// Build sides of hash joins (by the address of their node in the join
    /// tree, which all copies share) that keep only the rows whose
    /// `key` has a value of the copy's morsels, `key_ranges`.
    pub partitioned_builds: Vec<usize>,
    pub key: Option<Variable>,
    pub key_ranges: Vec<(u64, u64)>,
}

impl Morsel {
    fn of_leaf(&self, leaf: usize) -> Option<&[RowRange]> {
        let (_, morsels) = self.scans.iter().find(|(l, _)| *l == leaf)?;
        Some(morsels)
    }

    /// `build` (the operator for `side`), keeping only the copy's share
    /// if `side` is a partitioned build side.
    fn share_of(
        &self,
        ctx: &Arc<QueryContext>,
        side: &JoinTree,
        build: BoxedOperator,
    ) -> BoxedOperator {
        let address = side as *const JoinTree as usize;
        let Some(key) = self
            .key
            .as_ref()
            .filter(|_| self.partitioned_builds.contains(&address))
        else {
            return build;
        };
        match MorselFilter::new(ctx.clone(), build, key, self.key_ranges.clone()) {
            Ok(filter) => Box::new(Measured::new(Box::new(filter), None)),
            Err(build) => build,
        }
    }
}

pub(super) enum Leaf<'a> {
    Pattern(&'a ScanSpec),
    Union(&'a ResolvedLeaf<'a>),
    Rows(&'a RowsLeaf),
}

impl<'a> Leaves<'a> {
    /// In a copy for one core, the morsels leaf `i` reads and the copy.
    fn morsel_of(&self, i: usize) -> Option<(Vec<RowRange>, (usize, usize))> {
        let morsel = self.morsel.as_ref()?;
        Some((morsel.of_leaf(i)?.to_vec(), morsel.part))
    }

    pub fn get(&self, i: usize) -> Leaf<'a> {
        let union = i.wrapping_sub(self.scans.len());
        match self.scans.get(i) {
            Some(scan) => Leaf::Pattern(scan),
            None => match self.unions.get(union) {
                Some(leaf) => Leaf::Union(leaf),
                None => Leaf::Rows(&self.rows[union - self.unions.len()]),
            },
        }
    }

    pub fn variables(&self, i: usize) -> &'a [Variable] {
        match self.get(i) {
            Leaf::Pattern((_, variables, _)) => variables,
            Leaf::Union(leaf) => &leaf.variables,
            Leaf::Rows(leaf) => &leaf.variables,
        }
    }
}

/// Most rows a LIMIT may ask for to have hash joins turned into lookups.
const FIRST_ROWS_BY_LOOKUP: usize = 10_000;

impl Planner {
    /// Under a small LIMIT, the pattern to look up for each probe row
    /// instead of building a hash table of `build_side`, when that is one
    /// pattern sharing a variable with the probe side: a hash join reads
    /// its build side whole before its first row (62,892 names to give 10
    /// rows, in biblio's union-limit), lookups only what the rows need. (Had
    /// the LIMIT not been reached early, the lookups cost about
    /// `LOOKUP_COST` times more per probe row than the table would have.)
    fn lookup_for_first_rows(
        &self,
        build_side: &JoinTree,
        leaves: &Leaves,
        probe: &[Variable],
    ) -> Option<usize> {
        let JoinTree::Scan(i) = build_side else {
            return None;
        };
        let shares = leaves.variables(*i).iter().any(|v| probe.contains(v));
        (self.wants_first_rows() && shares).then_some(*i)
    }

    /// Whether only a few first rows will be read (see `first_rows`).
    fn wants_first_rows(&self) -> bool {
        (1..=FIRST_ROWS_BY_LOOKUP).contains(&self.first_rows())
    }
}

/// FILTER conjuncts over a basic graph pattern, each waiting for the lowest
/// join (or scan) whose rows bind all its variables: a row that fails there
/// is not joined further. A conjunct's value depends on its variables only,
/// and joins only add columns, so checking it early drops exactly the rows
/// (and all their extensions) that checking it at the end would.
#[derive(Default, Clone)]
pub(super) struct FilterPlacement {
    /// Conjuncts not placed yet, with the variables they read.
    waiting: Vec<(Expression, FxHashSet<Variable>)>,
}

impl FilterPlacement {
    /// The conjuncts of `expression` that can be placed (not EXISTS, no
    /// function whose value changes between calls), and the others.
    pub(super) fn of(expression: &Expression) -> (FilterPlacement, Vec<Expression>) {
        let mut waiting = Vec::new();
        let mut others = Vec::new();
        for conjunct in exists::conjuncts(expression) {
            let mut variables = FxHashSet::default();
            match expression_variables(&conjunct, &mut variables) {
                Some(()) => waiting.push((conjunct, variables)),
                None => others.push(conjunct),
            }
        }
        (FilterPlacement { waiting }, others)
    }

    /// `operator`, with a filter of the waiting conjuncts its rows bind.
    pub(super) fn place(
        &mut self,
        ctx: &Arc<QueryContext>,
        operator: BoxedOperator,
        scope: &Arc<Scope>,
    ) -> BoxedOperator {
        let bound: FxHashSet<&Variable> = operator.variables().iter().collect();
        let (here, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, variables)| variables.iter().all(|v| bound.contains(v)));
        self.waiting = waiting;
        let Some(condition) = exists::and_all(here.into_iter().map(|(e, _)| e).collect()) else {
            return operator;
        };
        let filter = Filter::new(ctx.clone(), operator, condition, scope.clone());
        Box::new(Measured::new(Box::new(filter), None))
    }

    /// The conjuncts no join bound all the variables of.
    pub(super) fn unplaced(self) -> Vec<Expression> {
        self.waiting.into_iter().map(|(e, _)| e).collect()
    }
}

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
