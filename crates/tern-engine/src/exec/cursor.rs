//! Reads an input row by row, so that operators whose output per input row
//! can be large (joins) stop after a bounded batch and carry on from the
//! same row next time, instead of turning a whole input batch into one huge
//! output batch that no cancellation, deadline or memory check interrupts.

use super::{Batch, BoxedOperator};
use crate::context::QueryContext;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use tern_index::Id;

pub struct RowCursor {
    pub input: BoxedOperator,
    batch: Option<Batch>,
    pos: usize,
    done: bool,
}

impl RowCursor {
    pub fn new(input: BoxedOperator) -> RowCursor {
        RowCursor {
            input,
            batch: None,
            pos: 0,
            done: false,
        }
    }

    /// The next row, reading the next batch of the input when needed.
    pub fn next_row(&mut self, ctx: &QueryContext) -> Result<Option<Vec<Id>>, EngineError> {
        if !self.fill(ctx)? {
            return Ok(None);
        }
        let (batch, pos) = self.current();
        let row = batch.row(pos);
        self.pos += 1;
        Ok(Some(row))
    }

    /// Makes sure there is a current row, reading the next batch of the
    /// input when needed; false at the end of the input.
    pub fn fill(&mut self, ctx: &QueryContext) -> Result<bool, EngineError> {
        loop {
            if self.batch.as_ref().is_some_and(|b| self.pos < b.len) {
                return Ok(true);
            }
            if self.done {
                return Ok(false);
            }
            ctx.check()?;
            self.batch = self.input.next_batch()?;
            self.pos = 0;
            self.done = self.batch.is_none();
        }
    }

    /// The current batch and the position of the current row in it, once
    /// [`fill`](Self::fill) said there is one.
    pub fn current(&self) -> (&Batch, usize) {
        (self.batch.as_ref().expect("filled"), self.pos)
    }

    /// Moves past `rows` rows of the current batch.
    pub fn advance(&mut self, rows: usize) {
        self.pos += rows;
    }

    /// The input's state, with the rows read but not yet used stashed.
    pub fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let pos = self.pos;
        let rest = self.batch.take().filter(|b| pos < b.len).map(|b| Batch {
            columns: b.columns.into_iter().map(|c| c[pos..].to_vec()).collect(),
            len: b.len - pos,
        });
        Ok(OperatorState {
            numbers: vec![u64::from(self.done)],
            stashed: rest.map(|b| stash.put(b)),
            children: vec![self.input.save(stash)?],
        })
    }

    pub fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.done = state.number(0)? == 1;
        self.batch = match state.stashed {
            Some(handle) => Some(stash.take(handle)?),
            None => None,
        };
        self.pos = 0;
        self.input.restore(state.into_child()?, stash)
    }
}
