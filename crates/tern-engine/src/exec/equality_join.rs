//! A cross product filtered by `?a = ?b` (or `sameTerm(?a, ?b)`), `?a` from
//! the probe side and `?b` from the build side, run as a hash join instead
//! of testing every pair (BSBM BI Q2: one product's features against every
//! product's).
//!
//! `=` between an IRI or a blank node and any term is true only for the same
//! term, that is the same ID, so such probe rows look their ID up. So do
//! all probe rows when the build side's literals are all strings (a string
//! equals only itself). Other literals are equal by value (`1 = 1.0`),
//! which IDs do not show, so a literal probe row is then tested with the
//! condition itself against the build side's literal rows that may be
//! equal to it ([`LiteralBuckets`]), and nothing else.

use super::condition::Condition;
use super::join_inputs::walk_candidates;
use super::literal_buckets::LiteralBuckets;
use super::profile::OperatorInfo;
use super::rows::Sources;
use super::{
    Batch, BoxedOperator, EmptyBuild, JoinInputs, Operator, RowTable, Solution, BATCH_ROWS,
};
use crate::context::QueryContext;
use crate::expr::Scope;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::Arc;
use tern_index::Id;

pub struct EqualityJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    inputs: JoinInputs,
    probe_column: usize,
    build_column: usize,
    sources: Sources,
    condition: Condition,
    /// Build rows whose key is a literal, grouped by value, found when a
    /// literal probe row first needs them.
    literal_rows: Option<LiteralBuckets>,
}

impl EqualityJoin {
    /// `probe` and `build` share no variable; `condition` compares
    /// `probe_variable` with `build_variable`.
    pub fn new(
        ctx: Arc<QueryContext>,
        probe: BoxedOperator,
        build: BoxedOperator,
        probe_variable: &Variable,
        build_variable: &Variable,
        condition: Expression,
        scope: Arc<Scope>,
    ) -> EqualityJoin {
        let (variables, sources) = Solution::merge_schemas(probe.variables(), build.variables());
        let column = |op: &BoxedOperator, v: &Variable| {
            op.variables()
                .iter()
                .position(|x| x == v)
                .expect("the planner gives each side its variable")
        };
        let probe_column = column(&probe, probe_variable);
        let build_column = column(&build, build_variable);
        let condition = Condition::new(ctx.clone(), condition, &variables, scope);
        EqualityJoin {
            ctx,
            variables,
            // Equal literals may have different IDs (`1 = 1.0`): parts
            // split by ID would separate them.
            inputs: JoinInputs::new(probe, build, vec![(probe_column, build_column)])
                .in_memory_only(),
            probe_column,
            build_column,
            sources,
            condition,
            literal_rows: None,
        }
    }
}

/// Build rows whose key column holds a literal, grouped by value.
fn literal_rows(
    ctx: &QueryContext,
    table: &RowTable,
    column: usize,
) -> Result<LiteralBuckets, EngineError> {
    let mut literals = Vec::new();
    for (i, row) in table.iter().enumerate() {
        if ctx.is_literal(row[column])? {
            literals.push((i as u32, row[column]));
        }
    }
    LiteralBuckets::new(ctx, literals.into_iter())
}

impl Operator for EqualityJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("EqualityJoin", format!("on {}", self.condition))
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.inputs.children()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        self.inputs.save(stash)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.inputs.restore(state, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let EqualityJoin {
            ctx,
            variables,
            inputs,
            probe_column,
            build_column,
            sources,
            condition,
            literal_rows: literals,
        } = self;
        let (probe_column, build_column) = (*probe_column, *build_column);
        inputs.next_batch(
            ctx,
            variables.len(),
            EmptyBuild::EndsJoin,
            |left, table, out, at| {
                let key = left[probe_column];
                // `=` with an unbound side is an error: no row.
                if key == Id::UNDEFINED {
                    return Ok(true);
                }
                // The build side's literals are grouped (decoded) only once
                // a literal probe value needs them.
                let is_literal = ctx.is_literal(key)?;
                if is_literal && literals.is_none() {
                    *literals = Some(literal_rows(ctx, table, build_column)?);
                }
                let by_value = literals
                    .as_ref()
                    .filter(|buckets| is_literal && !buckets.only_strings());
                let Some(buckets) = by_value else {
                    let candidates = table.candidates_from(std::iter::once(key), at.next);
                    return walk_candidates(candidates, at, |candidate, _| {
                        let right = table.row(candidate);
                        if right[build_column] == key {
                            out.push_merged(left, right, sources);
                        }
                        Ok(out.len >= BATCH_ROWS)
                    });
                };
                let candidates = buckets.candidates(ctx, key)?;
                let rest = candidates.get(at.next..).unwrap_or_default();
                walk_candidates(rest.iter().copied(), at, |candidate, _| {
                    let merged = Solution::merge(left, table.row(candidate), sources);
                    if condition.is_true(&merged)? {
                        out.push_row(&merged);
                    }
                    Ok(out.len >= BATCH_ROWS)
                })
            },
        )
    }
}
