//! Wraps an operator to count its rows, batches and time for EXPLAIN and the
//! server's runtime information.

use super::profile::{OperatorInfo, OperatorStats, ProfileNode};
use super::{Batch, BoxedOperator, Operator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub struct Measured {
    inner: BoxedOperator,
    estimated_rows: Option<u64>,
    stats: Arc<OperatorStats>,
}

impl Measured {
    pub fn new(inner: BoxedOperator, estimated_rows: Option<u64>) -> Measured {
        Measured {
            inner,
            estimated_rows,
            stats: Arc::default(),
        }
    }
}

impl Operator for Measured {
    fn variables(&self) -> &[Variable] {
        self.inner.variables()
    }

    fn first_rows_only(&mut self, rows: usize) {
        self.inner.first_rows_only(rows);
    }

    fn small_first_batches(&mut self, rows: usize) {
        self.inner.small_first_batches(rows);
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let started = Instant::now();
        let batch = self.inner.next_batch();
        let nanos = started.elapsed().as_nanos() as u64;
        self.stats.nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Ok(Some(batch)) = &batch {
            self.stats.batches.fetch_add(1, Ordering::Relaxed);
            self.stats
                .rows
                .fetch_add(batch.len as u64, Ordering::Relaxed);
        }
        batch
    }

    fn describe(&self) -> OperatorInfo {
        self.inner.describe()
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.estimated_rows.or_else(|| self.inner.estimated_rows())
    }

    fn runs_as_copies(&self) -> bool {
        self.inner.runs_as_copies()
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.inner.children()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        self.inner.save(stash)
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.inner.checkpoint()
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.inner.restore(state, stash)
    }

    fn profile(&self) -> ProfileNode {
        let mut node = self.inner.profile();
        node.estimated_rows = self.estimated_rows;
        node.stats = Some(self.stats.clone());
        node
    }
}
