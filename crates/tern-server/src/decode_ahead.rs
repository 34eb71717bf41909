//! Decoding the next batch of a large result while the current one is
//! written. An export's work per batch is two steps: decoding the batch's
//! terms whole, in vocabulary order (`RowBatch::prepare`), then formatting
//! its rows on all cores. Done one after the other, the cores wait on each
//! other at every step's end (a column's decoding is mostly one core's
//! work); with the next batch decoded on the pool meanwhile, each step
//! fills the gaps the other leaves.

use crate::pool_job::PoolJob;
use tern_engine::{EngineError, RowBatch};

/// A batch being decoded on the pool.
pub struct DecodeAhead(PoolJob<Result<RowBatch, EngineError>>);

impl DecodeAhead {
    /// Starts decoding `batch` on the pool.
    pub fn start(mut batch: RowBatch) -> DecodeAhead {
        DecodeAhead(PoolJob::spawn(None, move || {
            batch.prepare().map(|()| batch)
        }))
    }

    /// The decoded batch, once it is.
    pub fn wait(self) -> Result<RowBatch, EngineError> {
        self.0.wait()
    }
}
