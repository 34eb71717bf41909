//! Inner join: the build side is materialized into a [`RowTable`] keyed on the
//! shared variables; the probe side streams through.

use super::join_inputs::walk_candidates;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, EmptyBuild, JoinInputs, Operator, Solution, BATCH_ROWS};
use crate::context::QueryContext;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;

pub struct HashJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    inputs: JoinInputs,
    /// (probe column, build column) of each shared variable.
    shared: Vec<(usize, usize)>,
    /// For each output column, its source in (probe, build).
    sources: Vec<(Option<usize>, Option<usize>)>,
}

impl HashJoin {
    /// Joins `probe` with `build`; `build` should be the smaller input.
    pub fn new(ctx: Arc<QueryContext>, probe: BoxedOperator, build: BoxedOperator) -> HashJoin {
        let (variables, sources) = Solution::merge_schemas(probe.variables(), build.variables());
        let shared: Vec<(usize, usize)> = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        HashJoin {
            ctx,
            variables,
            inputs: JoinInputs::new(probe, build, shared.clone()),
            shared,
            sources,
        }
    }
}

impl Operator for HashJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "HashJoin",
            super::join_detail(&self.shared, self.inputs.probe.input.variables()),
        )
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
        let (shared, sources) = (&self.shared, &self.sources);
        self.inputs.next_batch(
            &self.ctx,
            self.variables.len(),
            EmptyBuild::EndsJoin,
            |left, table, out, at| {
                let candidates = table.probe_from(left, shared.iter().map(|&(l, _)| l), at.next);
                walk_candidates(candidates, at, |candidate, _| {
                    let right = table.row(candidate);
                    if Solution::compatible(left, right, shared) {
                        out.push_merged(left, right, sources);
                    }
                    Ok(out.len >= BATCH_ROWS)
                })
            },
        )
    }
}
