//! Rows handed to an operator by the one above it instead of pulled from an
//! input: the input of each partition of a parallel GROUP BY
//! (`ParallelGroup` routes its input's rows to the partitions by key).
//!
//! The rows wait in a queue shared with whoever hands them over. An empty
//! queue is a pause (an empty batch), not the end: the end comes when the
//! hander says so. A suspension stashes the rows still queued.

use super::profile::OperatorInfo;
use super::{Batch, Operator};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// The queue between the hander and a [`HandedRows`].
#[derive(Default)]
pub struct RowQueue {
    batches: VecDeque<Batch>,
    /// No more rows will come once the queue is empty.
    ended: bool,
}

impl RowQueue {
    pub fn push(&mut self, batch: Batch) {
        if batch.len > 0 {
            self.batches.push_back(batch);
        }
    }

    /// No rows will be handed over after those queued.
    pub fn end(&mut self) {
        self.ended = true;
    }

    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }
}

/// A queue shared by the operator above (which fills it) and the
/// [`HandedRows`] below (which empties it); they never use it at the same
/// time, so the lock is never contended.
pub type SharedRowQueue = Arc<Mutex<RowQueue>>;

pub struct HandedRows {
    variables: Vec<Variable>,
    queue: SharedRowQueue,
}

impl HandedRows {
    pub fn new(variables: Vec<Variable>, queue: SharedRowQueue) -> HandedRows {
        HandedRows { variables, queue }
    }

    fn queue(&self) -> MutexGuard<'_, RowQueue> {
        lock(&self.queue)
    }
}

/// The queue, even if a thread panicked holding it (the query then fails
/// on that panic anyway).
pub fn lock(queue: &SharedRowQueue) -> MutexGuard<'_, RowQueue> {
    queue
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Operator for HandedRows {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("HandedRows", "this partition's rows, routed by key")
    }

    /// `numbers[0]`: whether the queue was ended; the rows queued, stashed.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let mut queue = self.queue();
        let rest = Batch::concat(self.variables.len(), queue.batches.drain(..));
        Ok(OperatorState {
            numbers: vec![u64::from(queue.ended)],
            stashed: (rest.len > 0).then(|| stash.put(rest)),
            children: Vec::new(),
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let ended = match state.number(0)? {
            0 => false,
            1 => true,
            other => return Err(bad_state(format!("handed rows ended {other}"))),
        };
        let mut queue = self.queue();
        queue.batches.clear();
        queue.ended = ended;
        if let Some(handle) = state.stashed {
            queue.push(stash.take(handle)?);
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let mut queue = self.queue();
        match queue.batches.pop_front() {
            Some(batch) => Ok(Some(batch)),
            None if queue.ended => Ok(None),
            None => Ok(Some(Batch::with_columns(self.variables.len()))),
        }
    }
}
