//! DISTINCT and REDUCED: drops rows seen before. The same term always has the
//! same ID within a query, so comparing IDs compares terms.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use std::sync::Arc;
use tern_index::Id;

pub struct Distinct {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    input: BoxedOperator,
    seen: FxHashSet<Vec<Id>>,
}

impl Distinct {
    pub fn new(ctx: Arc<QueryContext>, input: BoxedOperator) -> Distinct {
        Distinct {
            memory: ctx.memory_charge(),
            ctx,
            input,
            seen: FxHashSet::default(),
        }
    }
}

impl Operator for Distinct {
    fn variables(&self) -> &[Variable] {
        self.input.variables()
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Distinct", "")
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState {
            stashed: Some(stash.put(std::mem::take(&mut self.seen))),
            ..OperatorState::wrapping(self.input.save(stash)?)
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if let Some(handle) = state.stashed {
            self.seen = stash.take(handle)?;
        }
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.input.variables().len();
        loop {
            let Some(batch) = self.input.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            let out = batch.retain_rows(|row| Ok(self.seen.insert(row.to_vec())))?;
            self.memory
                .set((self.seen.len() * (width * 8 + 56)) as u64)?;
            // Nothing new: go on, unless the input paused.
            if out.len > 0 || batch.len == 0 {
                return Ok(Some(out));
            }
        }
    }
}
