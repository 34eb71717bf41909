//! A [`UnionOfPatterns`] read whole: every pattern scanned, every row
//! projected on the union's variables and deduplicated at once (one-column
//! rows as a bitmap of the vocabulary), instead of a tree of unions, sameAs
//! operators and filters under a hash DISTINCT. What the inference
//! rewriting makes of `?x a ub:Person` (43 patterns) counts its instances
//! this way.
//!
//! It computes its rows on the first call, in sorted order, and hands them
//! out a batch at a time. Its state is how many it handed out: resuming
//! computes them again and skips those, so the token travels to any server.

use super::distinct_rows::DistinctRows;
use super::profile::OperatorInfo;
use super::union_of_patterns::UnionOfPatterns;
use super::{Batch, Operator, BATCH_ROWS};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;

pub struct UnionScan {
    ctx: Arc<QueryContext>,
    memory: MemoryCharge,
    union: UnionOfPatterns,
    /// The rows, once computed.
    rows: Option<Batch>,
    /// Rows handed out (or, before they are computed, to skip).
    handed_out: usize,
    detail: String,
}

impl UnionScan {
    pub fn new(ctx: Arc<QueryContext>, union: UnionOfPatterns, detail: String) -> UnionScan {
        UnionScan {
            memory: ctx.memory_charge(),
            ctx,
            union,
            rows: None,
            handed_out: 0,
            detail,
        }
    }

    fn compute(&mut self) -> Result<(), EngineError> {
        let mut sink = DistinctRows::new(&self.ctx, self.union.variables.len());
        let memory = &self.memory;
        self.union
            .scan_all(&self.ctx, &mut sink, &|bytes| memory.set(bytes))?;
        let rows = sink.finish();
        self.memory
            .set((rows.len * rows.columns.len().max(1) * 8) as u64)?;
        self.rows = Some(rows);
        Ok(())
    }
}

impl Operator for UnionScan {
    fn variables(&self) -> &[Variable] {
        &self.union.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        Some(self.union.estimated_rows())
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo {
            name: "UnionScan",
            detail: self.detail.clone(),
            blocks_read: None,
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.union.complex().iter().map(|c| c.as_ref()).collect()
    }

    fn save(&mut self, _stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::new(vec![self.handed_out as u64], Vec::new()))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        Some(OperatorState::new(vec![self.handed_out as u64], Vec::new()))
    }

    fn restore(&mut self, state: OperatorState, _stash: &Stash) -> Result<(), EngineError> {
        self.handed_out =
            usize::try_from(state.number(0)?).map_err(|_| bad_state("union scan rows"))?;
        self.rows = None;
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if self.rows.is_none() {
            self.compute()?;
        }
        let rows = self.rows.as_ref().expect("computed");
        if self.handed_out >= rows.len {
            self.memory.set(0)?;
            return Ok(None);
        }
        let end = (self.handed_out + BATCH_ROWS).min(rows.len);
        let mut out = Batch::with_columns(rows.columns.len());
        for (to, from) in out.columns.iter_mut().zip(&rows.columns) {
            to.extend_from_slice(&from[self.handed_out..end]);
        }
        out.len = end - self.handed_out;
        self.handed_out = end;
        self.ctx.check()?;
        Ok(Some(out))
    }
}
