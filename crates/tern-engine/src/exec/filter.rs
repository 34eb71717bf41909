//! FILTER: keeps the rows whose expression has effective boolean value true.

use super::condition::Condition;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::expr::Scope;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::Arc;

pub struct Filter {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    condition: Condition,
}

impl Filter {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        condition: Expression,
        scope: Arc<Scope>,
    ) -> Filter {
        let condition = Condition::new(ctx.clone(), condition, input.variables(), scope);
        Filter {
            ctx,
            input,
            condition,
        }
    }
}

impl Operator for Filter {
    fn variables(&self) -> &[Variable] {
        self.input.variables()
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Filter", self.condition.to_string())
    }

    fn small_first_batches(&mut self, rows: usize) {
        self.input.small_first_batches(rows);
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.input.save(stash)?))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.input.checkpoint().map(OperatorState::wrapping)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let condition = &self.condition;
        next_kept(&mut self.input, &self.ctx, |batch| {
            if condition.on_ids() {
                condition.select(batch)
            } else {
                super::map_rows(batch, |row| condition.is_true(row))
            }
        })
    }
}

/// The next batch of `input`'s rows that `keep` keeps. A batch with none
/// kept is not handed on (batches are never empty), unless the input
/// paused or the turn is over: a selective filter over a long input must
/// not hold the worker until it finds a row.
pub(super) fn next_kept(
    input: &mut BoxedOperator,
    ctx: &QueryContext,
    mut keep: impl FnMut(&Batch) -> Result<Vec<bool>, EngineError>,
) -> Result<Option<Batch>, EngineError> {
    loop {
        let Some(batch) = input.next_batch()? else {
            return Ok(None);
        };
        ctx.check()?;
        let out = batch.select(&keep(&batch)?);
        if out.len > 0 || batch.len == 0 || ctx.should_yield() {
            return Ok(Some(out));
        }
    }
}
