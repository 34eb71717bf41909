//! Reads an input row by row, so that operators whose output per input row
//! can be large (joins) stop after a bounded batch and carry on from the
//! same row next time, instead of turning a whole input batch into one huge
//! output batch that no cancellation, deadline or memory check interrupts.
//!
//! A cursor suspended in the middle of a batch has read rows it has not
//! used. When its input can say where it stood before that batch (see
//! [`Operator::checkpoint`]), the cursor saves that position and how many
//! rows of the batch it had used: resuming reads the batch again and skips
//! them. The state then fits in the token, so any server can resume the
//! query. Otherwise the unused rows go to the server's stash.

use super::{Batch, BoxedOperator};
use crate::context::QueryContext;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use tern_index::Id;

/// Where a cursor stands after [`RowCursor::fill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filled {
    /// There is a current row.
    Row,
    /// The input paused for the end of the turn (it returned an empty
    /// batch): the reader should pause too, or its caller never hears of it.
    Paused,
    /// The input has ended.
    Ended,
}

/// The next row of a [`RowCursor`].
pub enum NextRow {
    Row(Vec<Id>),
    Paused,
    Ended,
}

pub struct RowCursor {
    pub input: BoxedOperator,
    batch: Option<Batch>,
    pos: usize,
    done: bool,
    /// The input's checkpoint from before it produced `batch`.
    before_batch: Option<OperatorState>,
    /// Rows of the next batch already used before a suspension.
    replayed: usize,
    /// Batches read from the input so far, so that a reader can tell a new
    /// batch from the one it was working on (an index join looks up a new
    /// batch's bindings together).
    batches_read: u64,
}

impl RowCursor {
    pub fn new(input: BoxedOperator) -> RowCursor {
        RowCursor {
            input,
            batch: None,
            pos: 0,
            done: false,
            before_batch: None,
            replayed: 0,
            batches_read: 0,
        }
    }

    /// Batches read from the input so far.
    pub fn batches_read(&self) -> u64 {
        self.batches_read
    }

    /// The next row, reading the next batch of the input when needed.
    pub fn next_row(&mut self, ctx: &QueryContext) -> Result<NextRow, EngineError> {
        Ok(match self.fill(ctx)? {
            Filled::Row => {
                let (batch, pos) = self.current();
                let row = batch.row(pos);
                self.pos += 1;
                NextRow::Row(row)
            }
            Filled::Paused => NextRow::Paused,
            Filled::Ended => NextRow::Ended,
        })
    }

    /// Makes sure there is a current row, reading the next batch of the
    /// input when needed.
    pub fn fill(&mut self, ctx: &QueryContext) -> Result<Filled, EngineError> {
        loop {
            if self.batch.as_ref().is_some_and(|b| self.pos < b.len) {
                return Ok(Filled::Row);
            }
            if self.done {
                return Ok(Filled::Ended);
            }
            ctx.check()?;
            self.before_batch = self.input.checkpoint();
            self.batch = self.input.next_batch()?;
            self.done = self.batch.is_none();
            self.batches_read += 1;
            self.pos = 0;
            let len = self.batch.as_ref().map_or(0, |b| b.len);
            // An empty batch (the input's turn ended) is not the one to
            // read again.
            if len > 0 || self.done {
                let used = std::mem::take(&mut self.replayed);
                if len < used {
                    if self.done {
                        return Err(bad_state("a resumed input ended early"));
                    }
                    // The input gives the same rows again, but may cut its
                    // batches elsewhere (one that stops at the end of a
                    // turn): the used rows go on into the next batch.
                    self.replayed = used - len;
                    self.pos = len;
                    continue;
                }
                self.pos = used;
            } else {
                return Ok(Filled::Paused);
            }
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

    /// The input's state: before its current batch and how many rows of it
    /// were used, or, when the input has no checkpoint, with the rows read
    /// but not yet used stashed.
    pub fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let pos = self.pos;
        let Some(batch) = self.batch.take().filter(|b| pos < b.len) else {
            let input = self.input.save(stash)?;
            return Ok(self.state(self.pending_replay(), input));
        };
        if let Some(before) = self.before_batch.take() {
            return Ok(self.state(Some(pos), before));
        }
        let rest = Batch {
            columns: batch
                .columns
                .into_iter()
                .map(|c| c[pos..].to_vec())
                .collect(),
            len: batch.len - pos,
        };
        Ok(OperatorState {
            numbers: vec![u64::from(self.done)],
            stashed: Some(stash.put(rest)),
            children: vec![self.input.save(stash)?],
        })
    }

    /// What [`save`](Self::save) would return now, if nothing needs
    /// stashing; the cursor is left as it is.
    pub fn checkpoint(&self) -> Option<OperatorState> {
        match &self.batch {
            Some(batch) if self.pos < batch.len => {
                Some(self.state(Some(self.pos), self.before_batch.clone()?))
            }
            _ => Some(self.state(self.pending_replay(), self.input.checkpoint()?)),
        }
    }

    /// Rows to skip of a batch not read again yet since resuming.
    fn pending_replay(&self) -> Option<usize> {
        (self.replayed > 0).then_some(self.replayed)
    }

    /// `used`: rows of the batch after `input` that were used, if it is
    /// to be read again.
    fn state(&self, used: Option<usize>, input: OperatorState) -> OperatorState {
        let mut numbers = vec![u64::from(self.done)];
        numbers.extend(used.map(|n| n as u64));
        OperatorState::new(numbers, vec![input])
    }

    pub fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.done = state.number(0)? == 1;
        self.replayed = match state.numbers.get(1) {
            Some(&used) => usize::try_from(used).map_err(|_| bad_state("rows used"))?,
            None => 0,
        };
        self.batch = match state.stashed {
            Some(handle) => Some(stash.take(handle)?),
            None => None,
        };
        self.pos = 0;
        self.before_batch = None;
        self.input.restore(state.into_child()?, stash)
    }
}

/// The state of a join that looks its right side up per left row (index
/// joins): the left cursor, at the current row, and how many matches of
/// that row were joined already. Whatever the lookups cached is looked up
/// again after restoring.
impl RowCursor {
    pub fn save_with_matches(
        &mut self,
        next_match: usize,
        stash: &Stash,
    ) -> Result<OperatorState, EngineError> {
        let left = self.save(stash)?;
        Ok(OperatorState::new(vec![next_match as u64], vec![left]))
    }

    pub fn checkpoint_with_matches(&self, next_match: usize) -> Option<OperatorState> {
        let left = self.checkpoint()?;
        Some(OperatorState::new(vec![next_match as u64], vec![left]))
    }

    /// Restores the cursor; returns the matches already joined.
    pub fn restore_with_matches(
        &mut self,
        state: OperatorState,
        stash: &Stash,
    ) -> Result<usize, EngineError> {
        let next_match =
            usize::try_from(state.number(0)?).map_err(|_| bad_state("index join matches"))?;
        let [left] = state.into_children()?;
        self.restore(left, stash)?;
        Ok(next_match)
    }
}
