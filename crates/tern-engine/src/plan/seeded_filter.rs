//! A FILTER that compares variables with the values of a few-row part of
//! its basic graph pattern: that part (the seed) is evaluated first, and the
//! rest is planned once per seed row with the row's values substituted, so
//! that the comparisons have constant bounds and narrow scans
//! ([`value_range`]).
//!
//! BSBM's "products like X" is the case: `X bsbm:productPropertyNumeric1
//! ?orig1` has one row, and `FILTER(?sim1 < ?orig1 + 120 && ?sim1 >
//! ?orig1 - 120)` then reads only the band of `?sim1` values around it
//! instead of looking up every candidate product's value (at 100 M
//! triples, tens of thousands of lookups against two range scans of a
//! fifth to a quarter of the products each).
//!
//! Exact by [`correlated`]'s rules: a basic graph pattern binds all its
//! variables in every solution, so substituting the seed's values into the
//! rest and joining gives the same solutions as joining first, and a filter
//! over it reads the substituted value where it would read the bound one.
//!
//! [`value_range`]: super::value_range
//! [`correlated`]: super::correlated

use super::bgp::Resolved;
use super::planner::{GraphContext, Planner};
use super::value_range;
use crate::exec::{BindLeftJoin, BoxedOperator};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

/// Most rows one seed pattern may have, and the whole seed: the rest is
/// planned once per seed row.
const SEED_MAX_ROWS: u64 = 16;

impl Planner {
    /// The filtered pattern as a join per seed row, when the filter compares
    /// a variable with an expression of seed values, and the compared
    /// variable is the object of a pattern with a constant predicate (which
    /// a range can narrow); none otherwise.
    pub(super) fn plan_seeded_filter(
        &self,
        expr: &Expression,
        patterns: &[TriplePattern],
        graph: &GraphContext,
    ) -> Result<Option<BoxedOperator>, EngineError> {
        // A variable graph is a column the per-row plans would have to
        // share; not worth it here.
        if matches!(graph, GraphContext::Variable(_)) {
            return Ok(None);
        }
        let comparisons = compared_pairs(expr, &self.bound);
        if comparisons.is_empty() {
            return Ok(None);
        }
        let seed_variables: FxHashSet<&Variable> =
            comparisons.iter().flat_map(|(_, bounds)| bounds).collect();
        let mut seed = Vec::new();
        let mut rest = Vec::new();
        for pattern in patterns {
            match self.seed_object(pattern) {
                Some(v) if seed_variables.contains(v) => seed.push(pattern.clone()),
                _ => rest.push(pattern.clone()),
            }
        }
        let seeded: FxHashSet<&Variable> = seed
            .iter()
            .filter_map(|p| match &p.object {
                TermPattern::Variable(v) => Some(v),
                _ => None,
            })
            .collect();
        // A comparison that becomes a range: all its bound's variables come
        // from the seed, and the compared variable is the object of a
        // pattern whose predicate's numbers a range of integers holds.
        let mut narrows = false;
        'search: for (compared, bounds) in &comparisons {
            if seeded.contains(compared) || !bounds.iter().all(|v| seeded.contains(v)) {
                continue;
            }
            for pattern in &rest {
                let NamedNodePattern::NamedNode(predicate) = &pattern.predicate else {
                    continue;
                };
                if !matches!(&pattern.object, TermPattern::Variable(o) if o == compared)
                    || pattern.subject == TermPattern::Variable(compared.clone())
                {
                    continue;
                }
                if let Resolved::Constant(p) = self.resolve_constant(&predicate.clone().into())? {
                    if self.integer_ranges_fit(p)? {
                        narrows = true;
                        break 'search;
                    }
                }
            }
        }
        if !narrows || rest.is_empty() {
            return Ok(None);
        }
        let mut seed_rows: u64 = 1;
        for pattern in &seed {
            let (_, scan) = self.resolve_pattern(pattern, graph, &[])?;
            // A constant the index lacks: the ordinary plan is empty at once.
            let Some((rows, _, _)) = scan else {
                return Ok(None);
            };
            seed_rows = seed_rows.saturating_mul(rows);
            if seed_rows > SEED_MAX_ROWS {
                return Ok(None);
            }
        }
        let left = self.plan_bgp(&seed, graph)?;
        let right = GraphPattern::Filter {
            expr: expr.clone(),
            inner: Box::new(GraphPattern::Bgp { patterns: rest }),
        };
        // The seed's variables are shared: the right side gets their values
        // substituted (its filter reads them).
        let mut right_variables: Vec<Variable> = seeded.iter().map(|&v| v.clone()).collect();
        right.on_in_scope_variable(|v| {
            if !right_variables.contains(v) && self.bound_value(v).is_none() {
                right_variables.push(v.clone());
            }
        });
        let text = right.to_string();
        let plan_right = self.per_row(right, graph);
        Ok(Some(Box::new(BindLeftJoin::inner(
            self.ctx.clone(),
            left,
            &right_variables,
            plan_right,
            text,
            self.scope(graph),
        ))))
    }

    /// The object variable of a pattern whose subject and predicate are
    /// constants (or substituted values).
    fn seed_object<'a>(&self, pattern: &'a TriplePattern) -> Option<&'a Variable> {
        let constant = |term: &TermPattern| match term {
            TermPattern::NamedNode(_) | TermPattern::Literal(_) => true,
            TermPattern::Variable(v) => self.bound_value(v).is_some(),
            _ => false,
        };
        let predicate_constant = match &pattern.predicate {
            NamedNodePattern::NamedNode(_) => true,
            NamedNodePattern::Variable(v) => self.bound_value(v).is_some(),
        };
        match &pattern.object {
            TermPattern::Variable(v)
                if constant(&pattern.subject)
                    && predicate_constant
                    && self.bound_value(v).is_none() =>
            {
                Some(v)
            }
            _ => None,
        }
    }
}

/// The comparisons of `expr`'s conjuncts between an unbound variable and an
/// arithmetic expression of other unbound variables and numbers: the
/// compared variable and the expression's variables.
fn compared_pairs(
    expr: &Expression,
    bound: &[(Variable, tern_index::Id)],
) -> Vec<(Variable, Vec<Variable>)> {
    let is_bound = |v: &Variable| bound.iter().any(|(b, _)| b == v);
    let mut out = Vec::new();
    for conjunct in super::exists::conjuncts(expr) {
        let Some((a, b, _, _)) = value_range::operands(&conjunct) else {
            continue;
        };
        for (side, other) in [(a, b), (b, a)] {
            let Expression::Variable(v) = side else {
                continue;
            };
            let mut variables = Vec::new();
            if is_bound(v) || !value_range::arithmetic_variables(other, &mut variables) {
                continue;
            }
            variables.retain(|x| !is_bound(x));
            if !variables.is_empty() && !variables.contains(v) {
                out.push((v.clone(), variables));
            }
        }
    }
    out
}
