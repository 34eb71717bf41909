//! OPTIONAL: every left row, joined with the compatible right rows that pass
//! the optional's filter, or alone when there are none.

use super::join_inputs::walk_candidates;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, EmptyBuild, JoinInputs, Operator, Solution, BATCH_ROWS};
use crate::context::QueryContext;
use crate::expr::RowEvaluator;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::Arc;

pub struct LeftJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    inputs: JoinInputs,
    shared: Vec<(usize, usize)>,
    sources: Vec<(Option<usize>, Option<usize>)>,
    filter: Option<RowEvaluator>,
}

impl LeftJoin {
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        right: BoxedOperator,
        filter: Option<Expression>,
        scope: Arc<crate::expr::Scope>,
    ) -> LeftJoin {
        let (variables, sources) = Solution::merge_schemas(left.variables(), right.variables());
        let shared: Vec<(usize, usize)> = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        let filter = filter.map(|e| RowEvaluator::new(ctx.clone(), e, variables.clone(), scope));
        LeftJoin {
            ctx,
            variables,
            inputs: JoinInputs::new(left, right, shared.clone()),
            shared,
            sources,
            filter,
        }
    }
}

impl Operator for LeftJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.inputs.probe.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "LeftJoin",
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
        let (shared, sources, filter) = (&self.shared, &self.sources, &self.filter);
        let alone: Vec<(Option<usize>, Option<usize>)> =
            sources.iter().map(|&(l, _)| (l, None)).collect();
        self.inputs.next_batch(
            &self.ctx,
            self.variables.len(),
            EmptyBuild::ProbeAnyway,
            |left, table, out, at| {
                let candidates = table.probe_from(left, shared.iter().map(|&(l, _)| l), at.next);
                let done = walk_candidates(candidates, at, |candidate, at| {
                    let right = table.row(candidate);
                    if !Solution::compatible(left, right, shared) {
                        return Ok(false);
                    }
                    let merged = Solution::merge(left, right, sources);
                    let keep = match filter {
                        None => true,
                        Some(filter) => filter.is_true(&merged)?,
                    };
                    if keep {
                        at.matched = true;
                        out.push_row(&merged);
                    }
                    Ok(out.len >= BATCH_ROWS)
                })?;
                if !done {
                    return Ok(false);
                }
                if !at.matched {
                    out.push_merged(left, &[], &alone);
                }
                Ok(true)
            },
        )
    }
}
