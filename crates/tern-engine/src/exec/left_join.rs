//! OPTIONAL: every left row, joined with the compatible right rows that pass
//! the optional's filter, or alone when there are none.

use super::{Batch, BoxedOperator, JoinInputs, Operator, Solution, BATCH_ROWS};
use crate::context::QueryContext;
use crate::expr_eval::RowEvaluator;
use crate::profile::OperatorInfo;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::Arc;
use tern_index::Id;

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
        scope: Arc<crate::exists::Scope>,
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
            inputs: JoinInputs::new(left, right, shared.iter().map(|&(_, r)| r).collect()),
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
        self.ctx.check()?;
        let width = self.variables.len();
        let Some(table) = self.inputs.build.table(&self.ctx)? else {
            // The turn ended while the right side was pulled in.
            return Ok(Some(Batch::with_columns(width)));
        };
        let alone: Vec<(Option<usize>, Option<usize>)> =
            self.sources.iter().map(|&(l, _)| (l, None)).collect();
        let mut out = Batch::with_columns(width);
        let mut probed = 0usize;
        while out.len < BATCH_ROWS {
            probed += 1;
            if probed.is_multiple_of(1024) && self.ctx.stop_turn(out.len) {
                return Ok(Some(out)); // the turn is over: what there is
            }
            let Some(left) = self.inputs.probe.next_row(&self.ctx)? else {
                break;
            };
            let key: Vec<Id> = self.shared.iter().map(|&(l, _)| left[l]).collect();
            let mut matched = false;
            for candidate in table.candidates(&key) {
                let right = &table.rows[candidate as usize];
                if !Solution::compatible(&left, right, &self.shared) {
                    continue;
                }
                let merged = Solution::merge(&left, right, &self.sources);
                let keep = match &self.filter {
                    None => true,
                    Some(filter) => filter.is_true(&merged)?,
                };
                if keep {
                    matched = true;
                    out.push_row(&merged);
                }
            }
            if !matched {
                out.push_row(&Solution::merge(&left, &[], &alone));
            }
        }
        self.ctx.check_memory((out.len * (width * 8 + 24)) as u64)?;
        Ok((out.len > 0).then_some(out))
    }
}
