//! `SELECT DISTINCT` of a UNION of single triple patterns as one leaf of a
//! group's join order: what the inference rewriting makes of each pattern
//! the schema extends (`?x a ub:Professor` with every subclass, domain and
//! range; `?x ub:worksFor ?d` with its subproperties), and what a query may
//! write itself.
//!
//! Planned apart, such a union is read whole and hash-joined with the rest
//! of its group: the professors of one department still list every
//! professor of the store. As a leaf, the join order weighs it like a
//! triple pattern (its rows the sum of its patterns') and may look it up
//! per row of the rest ([`UnionIndexJoin`](crate::exec::UnionIndexJoin)),
//! each of its patterns one index lookup.
//!
//! The shape recognized, under `DISTINCT` and a projection on the leaf's
//! variables (at most four: a triple pattern's and a graph's):
//! - UNIONs of branches, each one triple pattern binding every variable
//!   of the leaf, possibly under
//!   - the sameAs service (`urn:tern:synonyms:all:…`): the values stand
//!     for their synonyms,
//!   - `FILTER(!isLiteral(?v))`,
//!   - `BIND(<iri> AS ?v)` of a leaf variable (a variable class or
//!     predicate bound to each class or property the schema extends),
//!   - a cross product with a small non-empty VALUES (a `hasValue`
//!     restriction's value): its values of leaf variables become constants
//!     of a copy of the branches per row, the others are projected away,
//!   - projections that keep the leaf's variables, and DISTINCT (the leaf
//!     is distinct anyway).
//! - Any other branch (a join, a path, VALUES) is kept as a "complex"
//!   branch: planned as usual and read whole at the first lookup.
//!
//! The inference rewriting leaves out branches another branch answers
//! (`subsumed_branches`), once per rewritten query.
//!
//! Exact because DISTINCT of a union is the set union of the branches'
//! projected solutions, and each rule above keeps a branch's projected set.

use super::join_order::PatternEstimate;
use super::planner::{ground_term, GraphContext, Planner, SYNONYMS_SERVICE};
use crate::context::Extent;
use crate::exec::{
    BoxedOperator, BranchValue, Distinct, UnionBranch, UnionDetail, UnionOfPatterns, UnionScan,
    MAX_UNION_WIDTH,
};
use crate::EngineError;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{Expression, Function, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::sync::Arc;
use tern_index::{Id, Tag};

/// Most rows of a VALUES whose values become constants of copies of the
/// branches (more: the branch is complex).
const MAX_VALUES_COPIES: usize = 16;

/// A recognized union leaf, before it is resolved against the index.
#[derive(Debug, Clone)]
pub(super) struct UnionLeafShape<'a> {
    /// The pattern as written: what a scan of the whole leaf plans.
    pub pattern: &'a GraphPattern,
    pub variables: Vec<Variable>,
    pub branches: Vec<BranchShape>,
    pub complex: Vec<GraphPattern>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct BranchShape {
    pub pattern: Option<TriplePattern>,
    pub constants: Vec<(Variable, Term)>,
    pub synonyms: Vec<Variable>,
    pub not_literal: Vec<Variable>,
}

/// The union leaf `pattern` is, if it is one with at least one single
/// pattern branch.
pub(super) fn of(pattern: &GraphPattern) -> Option<UnionLeafShape<'_>> {
    let GraphPattern::Distinct { inner } = pattern else {
        return None;
    };
    let GraphPattern::Project { inner, variables } = inner.as_ref() else {
        return None;
    };
    if variables.is_empty() || variables.len() > MAX_UNION_WIDTH {
        return None;
    }
    let mut shape = UnionLeafShape {
        pattern,
        variables: variables.clone(),
        branches: Vec::new(),
        complex: Vec::new(),
    };
    collect(inner, &mut BranchShape::default(), &mut shape);
    (!shape.branches.is_empty()).then_some(shape)
}

/// A join of basic graph patterns and union leaves (at least one): its
/// triple patterns and its leaves, to be ordered together.
pub(super) fn group_of(
    pattern: &GraphPattern,
) -> Option<(Vec<TriplePattern>, Vec<UnionLeafShape<'_>>)> {
    let mut patterns = Vec::new();
    let mut leaves = Vec::new();
    group_parts(pattern, &mut patterns, &mut leaves)?;
    (!leaves.is_empty()).then_some((patterns, leaves))
}

fn group_parts<'a>(
    pattern: &'a GraphPattern,
    patterns: &mut Vec<TriplePattern>,
    leaves: &mut Vec<UnionLeafShape<'a>>,
) -> Option<()> {
    match pattern {
        GraphPattern::Join { left, right } => {
            group_parts(left, patterns, leaves)?;
            group_parts(right, patterns, leaves)
        }
        // Blank nodes are scoped to their group: merged with another
        // group's, equal labels would join.
        GraphPattern::Bgp { patterns: bgp } if !has_blank_node(bgp) => {
            patterns.extend(bgp.iter().cloned());
            Some(())
        }
        other => {
            leaves.push(of(other)?);
            Some(())
        }
    }
}

/// Whether the leaves can join a group planned under `graph`: under
/// `GRAPH ?g`, a leaf that does not project `?g` does not join on it.
pub(super) fn fit(leaves: &[UnionLeafShape<'_>], graph: &GraphContext) -> bool {
    match graph {
        GraphContext::Variable(g) => leaves.iter().all(|l| l.variables.contains(g)),
        _ => true,
    }
}

pub(super) fn has_blank_node(patterns: &[TriplePattern]) -> bool {
    patterns.iter().any(|p| {
        matches!(p.subject, TermPattern::BlankNode(_))
            || matches!(p.object, TermPattern::BlankNode(_))
    })
}

/// Adds the branches of `pattern`, read with what `around` says. What a
/// node adds to `around` for the nodes below it is taken off again on the
/// way back (one shape for the walk, cloned only into a branch: planning
/// walks 30-50 branches of a variable predicate at every query).
fn collect(pattern: &GraphPattern, around: &mut BranchShape, shape: &mut UnionLeafShape<'_>) {
    if collect_simple(pattern, around, shape).is_none() {
        shape.complex.push(wrapped(pattern.clone(), around));
    }
}

/// `None` when `pattern` is no simple branch (nothing was added then, and
/// `around` is as it was).
fn collect_simple(
    pattern: &GraphPattern,
    around: &mut BranchShape,
    shape: &mut UnionLeafShape<'_>,
) -> Option<()> {
    use GraphPattern as G;
    match pattern {
        G::Union { left, right } => {
            collect(left, around, shape);
            collect(right, around, shape);
        }
        G::Values { bindings, .. } if bindings.is_empty() => {}
        G::Bgp { patterns } if patterns.len() == 1 => {
            let triple = &patterns[0];
            let binds = |v: &Variable| {
                around.constants.iter().any(|(c, _)| c == v) || pattern_binds(triple, v)
            };
            if !shape.variables.iter().all(binds) {
                return None;
            }
            shape.branches.push(BranchShape {
                pattern: Some(triple.clone()),
                ..around.clone()
            });
        }
        G::Service {
            name: NamedNodePattern::NamedNode(name),
            inner,
            ..
        } => {
            let names = name
                .as_str()
                .strip_prefix(SYNONYMS_SERVICE)?
                .strip_prefix("all:")?;
            let mark = around.synonyms.len();
            for name in names.split(',') {
                // Hidden variables of the rewriting are named with `#`, which
                // no query variable has: not checked as query names.
                around.synonyms.push(Variable::new_unchecked(name));
            }
            collect(inner, around, shape);
            around.synonyms.truncate(mark);
        }
        G::Filter { expr, inner } => {
            let Expression::Not(negated) = expr else {
                return None;
            };
            let Expression::FunctionCall(Function::IsLiteral, arguments) = negated.as_ref() else {
                return None;
            };
            let [Expression::Variable(v)] = arguments.as_slice() else {
                return None;
            };
            around.not_literal.push(v.clone());
            collect(inner, around, shape);
            around.not_literal.pop();
        }
        G::Join { left, right } => {
            let G::Values {
                variables,
                bindings,
            } = right.as_ref()
            else {
                return None;
            };
            let mut used = Vec::new();
            left.on_in_scope_variable(|v| used.push(v.clone()));
            let apart = variables.iter().all(|v| !used.contains(v));
            let complete = bindings.iter().flatten().all(Option::is_some);
            if bindings.is_empty() || !apart || !complete {
                return None;
            }
            // A cross product with VALUES: each row's values of the leaf's
            // variables are constants of a copy of the branches (a
            // hasValue restriction's value); values of other variables
            // are projected away.
            let outputs: Vec<(usize, &Variable)> = variables
                .iter()
                .enumerate()
                .filter(|(_, v)| shape.variables.contains(v))
                .collect();
            if outputs.is_empty() {
                collect(left, around, shape);
                return Some(());
            }
            if bindings.len() > MAX_VALUES_COPIES {
                return None;
            }
            if outputs
                .iter()
                .any(|(_, v)| around.constants.iter().any(|(c, _)| c == *v))
            {
                return None;
            }
            let copies = bindings
                .iter()
                .map(|row| {
                    outputs
                        .iter()
                        .map(|(i, v)| Some(((*v).clone(), ground_term(row[*i].as_ref()?).ok()?)))
                        .collect::<Option<Vec<_>>>()
                })
                .collect::<Option<Vec<_>>>()?;
            let mark = around.constants.len();
            for values in copies {
                around.constants.extend(values);
                collect(left, around, shape);
                around.constants.truncate(mark);
            }
        }
        G::Extend {
            inner,
            variable,
            expression: Expression::NamedNode(value),
        } => {
            let mut used = Vec::new();
            inner.on_in_scope_variable(|v| used.push(v.clone()));
            let fixed = around.constants.iter().any(|(c, _)| c == variable);
            if !shape.variables.contains(variable) || fixed || used.contains(variable) {
                return None;
            }
            around
                .constants
                .push((variable.clone(), value.clone().into()));
            collect(inner, around, shape);
            around.constants.pop();
        }
        G::Project { inner, variables } => {
            let kept = |v: &Variable| {
                variables.contains(v) || around.constants.iter().any(|(c, _)| c == v)
            };
            if !shape.variables.iter().all(kept) {
                return None;
            }
            collect(inner, around, shape);
        }
        G::Distinct { inner } => collect(inner, around, shape),
        _ => return None,
    }
    Some(())
}

fn pattern_binds(triple: &TriplePattern, v: &Variable) -> bool {
    let is = |t: &TermPattern| matches!(t, TermPattern::Variable(x) if x == v);
    is(&triple.subject)
        || is(&triple.object)
        || matches!(&triple.predicate, NamedNodePattern::Variable(x) if x == v)
}

/// A complex branch with what was around it put back: the synonyms
/// innermost, then the constants, the `!isLiteral` filters outermost (a
/// filter may read a constant: a `hasValue` literal where a range's
/// instance was asked for).
pub(super) fn wrapped(mut pattern: GraphPattern, around: &BranchShape) -> GraphPattern {
    if !around.synonyms.is_empty() {
        let names: Vec<&str> = around.synonyms.iter().map(Variable::as_str).collect();
        pattern = GraphPattern::Service {
            name: NamedNodePattern::NamedNode(NamedNode::new_unchecked(format!(
                "{SYNONYMS_SERVICE}all:{}",
                names.join(",")
            ))),
            inner: Box::new(pattern),
            silent: false,
        };
    }
    for (v, value) in &around.constants {
        let expression = match value {
            Term::NamedNode(n) => Expression::NamedNode(n.clone()),
            Term::Literal(l) => Expression::Literal(l.clone()),
            // Constants come from IRIs and VALUES, which hold no blank node.
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        pattern = GraphPattern::Extend {
            inner: Box::new(pattern),
            variable: v.clone(),
            expression,
        };
    }
    for v in &around.not_literal {
        pattern = GraphPattern::Filter {
            expr: Expression::Not(Box::new(Expression::FunctionCall(
                Function::IsLiteral,
                vec![Expression::Variable(v.clone())],
            ))),
            inner: Box::new(pattern),
        };
    }
    pattern
}

/// A union leaf resolved against the index.
pub(super) struct ResolvedLeaf<'a> {
    /// The pattern as written (see [`UnionLeafShape::pattern`]).
    pub pattern: &'a GraphPattern,
    /// Its output variables (those not substituted by the planner).
    pub variables: Vec<Variable>,
    pub branches: Vec<UnionBranch>,
    /// Each branch's column variables (for EXPLAIN).
    pub branch_variables: Vec<Vec<Variable>>,
    /// Complex branches (planned when the leaf is looked up).
    pub complex: Vec<GraphPattern>,
    /// Distinct values per output variable, estimated.
    pub distinct: Vec<f64>,
    /// The start of the key its rows, read whole, are kept under for later
    /// queries on the same snapshot (the snapshot and a fingerprint of the
    /// leaf), when they are worth keeping: the whole key is written out
    /// only when that start is found kept or the leaf is read whole.
    pub extent_prefix: Option<String>,
    /// Its rows, read whole by an earlier query on the same snapshot.
    pub kept: Option<Arc<Extent>>,
}

/// Index rows (estimated, duplicates counted) from which a union read
/// whole keeps its rows for later queries. Reading 10,000 rows again takes
/// 30-100 us; naming them (formatting the key) and looking them up, a few.
/// The research topics of the university benchmark (q05: 80,045 rows read
/// for 200 topics) took 0.29 ms each time at the former bound of 100,000,
/// against 0.04 ms over the materialized data.
const KEPT_FROM_ROWS: u64 = 10_000;

impl ResolvedLeaf<'_> {
    /// Its rows: exact when kept, else its patterns' (an upper bound:
    /// branches overlap).
    pub fn rows(&self) -> u64 {
        match &self.kept {
            Some(rows) => rows.len as u64,
            None => self.read_rows(),
        }
    }

    /// The index rows its patterns read.
    fn read_rows(&self) -> u64 {
        self.branches.iter().map(|b| b.rows).sum()
    }

    /// What the join order knows of it: its rows, none sorted; a lookup looks up each
    /// pattern, most of which find nothing (about half the cost of one that
    /// reads rows, measured on the university benchmark's classes).
    pub fn estimate(&self) -> PatternEstimate {
        PatternEstimate {
            rows: self.rows() as f64,
            variables: self
                .variables
                .iter()
                .cloned()
                .zip(self.distinct.iter().copied())
                .collect(),
            sorted_on: None,
            lookup_cost: (self.branches.len() as f64 * 0.5).max(1.0) + self.complex.len() as f64,
        }
    }

    /// Nothing can match.
    pub fn is_empty(&self) -> bool {
        self.branches.is_empty() && self.complex.is_empty()
    }

    /// What EXPLAIN needs to say what its lookups read.
    pub fn detail(&self) -> UnionDetail {
        UnionDetail::new(&self.branch_variables, self.kept.is_some())
    }
}

impl Planner {
    /// The leaf ready to be looked up or read, its complex branches
    /// planned.
    pub(super) fn union_of(
        &self,
        leaf: &ResolvedLeaf<'_>,
        graph: &GraphContext,
    ) -> Result<UnionOfPatterns, EngineError> {
        let complex = leaf
            .complex
            .iter()
            .map(|p| self.plan(p, graph))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(UnionOfPatterns::new(
            &self.ctx,
            leaf.variables.clone(),
            leaf.branches.clone(),
            complex,
        ))
    }

    /// The leaf read whole: as one operator that scans its patterns and
    /// deduplicates at once, unless only a few first rows are wanted (a
    /// LIMIT above), when the pattern as written streams them sooner.
    pub(super) fn plan_union_scan(
        &self,
        leaf: &ResolvedLeaf<'_>,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        if self.first_rows() > 0 {
            let GraphPattern::Distinct { inner } = leaf.pattern else {
                unreachable!("a union leaf is a DISTINCT");
            };
            let inner = self.plan(inner, graph)?;
            return Ok(Box::new(Distinct::new(self.ctx.clone(), inner)));
        }
        let union = self.union_of(leaf, graph)?;
        let detail = leaf.detail();
        // Rows found kept are not offered again.
        let keep_as = match &leaf.kept {
            Some(_) => None,
            None => (leaf.extent_prefix.as_ref()).map(|p| self.extent_key(leaf, p, graph)),
        };
        Ok(Box::new(UnionScan::new(
            self.ctx.clone(),
            union,
            detail,
            leaf.kept.clone(),
            keep_as,
        )))
    }

    /// The leaf's branches resolved against the index.
    pub(super) fn resolve_union_leaf<'a>(
        &self,
        shape: &UnionLeafShape<'a>,
        graph: &GraphContext,
    ) -> Result<ResolvedLeaf<'a>, EngineError> {
        let variables: Vec<Variable> = shape
            .variables
            .iter()
            .filter(|v| self.bound_value(v).is_none())
            .cloned()
            .collect();
        let mut leaf = ResolvedLeaf {
            pattern: shape.pattern,
            distinct: vec![0.0; variables.len()],
            variables,
            branches: Vec::new(),
            branch_variables: Vec::new(),
            complex: shape.complex.clone(),
            extent_prefix: None,
            kept: None,
        };
        for branch in &shape.branches {
            let Some(triple) = &branch.pattern else {
                continue;
            };
            match self.resolve_branch(&leaf.variables, branch, triple, graph)? {
                Resolution::Missing => {}
                Resolution::Branch(b, distinct, names) => {
                    for (total, d) in leaf.distinct.iter_mut().zip(distinct) {
                        *total += d;
                    }
                    leaf.branches.push(*b);
                    leaf.branch_variables.push(names);
                }
                Resolution::Complex => leaf.complex.push(wrapped(
                    GraphPattern::Bgp {
                        patterns: vec![triple.clone()],
                    },
                    branch,
                )),
            }
        }
        self.find_kept_rows(&mut leaf, graph);
        let rows = leaf.rows().max(1) as f64;
        for d in &mut leaf.distinct {
            *d = d.clamp(1.0, rows);
        }
        Ok(leaf)
    }

    /// Names a large leaf's rows for the snapshot's derived extents, and
    /// takes them if an earlier query read them. The name holds all their
    /// rows depend on: the snapshot, the pattern as written with its
    /// resolved branches (IDs, graphs, synonym columns), the values the
    /// planner substitutes, the graph and dataset its complex branches are
    /// planned in, and whether sameAs synonyms are read.
    fn find_kept_rows(&self, leaf: &mut ResolvedLeaf<'_>, graph: &GraphContext) {
        let Some(extents) = self.ctx.extents.get() else {
            return;
        };
        // A term the index does not hold has an ID of this query's own: the
        // same ID means another term in another query.
        let local = self.bound.iter().any(|(_, id)| id.tag() == Tag::LocalVocab);
        if leaf.read_rows() < KEPT_FROM_ROWS || self.first_rows() > 0 || local {
            return;
        }
        // Writing the key out (every pattern and ID of the leaf) took
        // longer than planning the rest of a query that only looks the
        // leaf up (0.029 -> 0.050 ms): a fingerprint of the key's parts
        // goes first, and the key is written when that is found kept or
        // the leaf is read whole.
        let prefix = format!(
            "{}\n{:016x}\n",
            self.ctx.index.name(),
            fingerprint(leaf, &self.bound)
        );
        if extents.may_hold(&prefix) {
            leaf.kept = extents.get(&self.extent_key(leaf, &prefix, graph));
        }
        leaf.extent_prefix = Some(prefix);
    }

    /// The whole key of a leaf's rows: `prefix` (the snapshot and the
    /// leaf's fingerprint), then everything the rows depend on.
    fn extent_key(&self, leaf: &ResolvedLeaf<'_>, prefix: &str, graph: &GraphContext) -> String {
        format!(
            "{prefix}{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?} {:?}\n{}",
            leaf.pattern,
            leaf.variables,
            leaf.branches,
            leaf.complex,
            self.bound,
            graph,
            self.ctx.default_graph,
            self.ctx.named_graphs,
            self.ctx.synonyms.get().is_some(),
        )
    }

    fn resolve_branch(
        &self,
        outputs: &[Variable],
        branch: &BranchShape,
        triple: &TriplePattern,
        graph: &GraphContext,
    ) -> Result<Resolution, EngineError> {
        let (variables, spec) = self.resolve_pattern(triple, graph, &[])?;
        let Some((rows, _, pattern)) = spec else {
            return Ok(Resolution::Missing);
        };
        // A literal constant where the branch wants no literal (a hasValue
        // literal read as the object of a range): no rows.
        let literal_constant = branch
            .constants
            .iter()
            .any(|(v, value)| value.is_literal() && branch.not_literal.contains(v));
        if literal_constant {
            return Ok(Resolution::Missing);
        }
        let estimate = self.pattern_estimate(rows, &variables, &pattern);
        let column = |v: &Variable| variables.iter().position(|x| x == v);
        let mut output = Vec::with_capacity(outputs.len());
        let mut distinct = Vec::with_capacity(outputs.len());
        for v in outputs {
            let constant = branch.constants.iter().find(|(c, _)| c == v);
            match (constant, column(v)) {
                (Some((_, value)), _) => {
                    output.push(BranchValue::Constant(self.ctx.intern(value)?));
                    distinct.push(1.0);
                }
                (None, Some(c)) => {
                    output.push(BranchValue::Column(c));
                    distinct.push(estimate.variables[c].1);
                }
                (None, None) => return Ok(Resolution::Complex),
            }
        }
        // A substituted variable fixed by a constant of the branch: the
        // branch holds only if they agree.
        for (v, value) in &branch.constants {
            if let Some(id) = self.bound_value(v) {
                if self.ctx.lookup(value)? != Some(id) {
                    return Ok(Resolution::Missing);
                }
            }
        }
        let columns = |vs: &[Variable]| vs.iter().filter_map(column).collect::<Vec<_>>();
        Ok(Resolution::Branch(
            Box::new(UnionBranch {
                pattern,
                width: variables.len(),
                output,
                synonyms: columns(&branch.synonyms),
                not_literal: columns(&branch.not_literal),
                rows,
            }),
            distinct,
            variables.clone(),
        ))
    }
}

enum Resolution {
    /// A constant of the pattern is not in the index: no rows.
    Missing,
    Branch(Box<UnionBranch>, Vec<f64>, Vec<Variable>),
    /// The branch cannot give the leaf's row shape: planned as it is.
    Complex,
}

/// A hash of parts of a leaf's key (each branch's rows estimate, shape and
/// synonym columns, the substituted values, the variables, the number of
/// complex branches): equal keys have equal fingerprints, so a kept key is
/// found under its fingerprint; unequal ones rarely share one, and then
/// only cost writing the whole key out.
fn fingerprint(leaf: &ResolvedLeaf<'_>, bound: &[(Variable, Id)]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for branch in &leaf.branches {
        (branch.rows, branch.width, &branch.output).hash(&mut hasher);
        (&branch.synonyms, &branch.not_literal).hash(&mut hasher);
    }
    (bound, &leaf.variables, leaf.complex.len()).hash(&mut hasher);
    hasher.finish()
}
