//! Decoding the next batch of a large result while the current one is
//! written. An export's work per batch is two steps: decoding the batch's
//! terms whole, in vocabulary order (`RowBatch::prepare`), then formatting
//! its rows on all cores. Done one after the other, the cores wait on each
//! other at every step's end (a column's decoding is mostly one core's
//! work); with the next batch decoded on the pool meanwhile, each step
//! fills the gaps the other leaves.

use std::sync::mpsc;
use tern_engine::{EngineError, RowBatch};

type Decoded = std::thread::Result<Result<RowBatch, EngineError>>;

/// A batch being decoded on the pool.
pub struct DecodeAhead(mpsc::Receiver<Decoded>);

impl DecodeAhead {
    /// Starts decoding `batch` on the pool.
    pub fn start(mut batch: RowBatch) -> DecodeAhead {
        let (tx, rx) = mpsc::sync_channel(1);
        rayon::spawn(move || {
            // A panic in a job spawned on the pool would abort the
            // process: it is caught here and raised again on the query's
            // own thread, where the scheduler catches a query's panics.
            let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                batch.prepare().map(|()| batch)
            }));
            // The query may be gone (its client left): nobody waits then.
            let _ = tx.send(decoded);
        });
        DecodeAhead(rx)
    }

    /// The decoded batch, once it is.
    pub fn wait(self) -> Result<RowBatch, EngineError> {
        match self.0.recv() {
            Ok(Ok(decoded)) => decoded,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(mpsc::RecvError) => panic!("a batch decoded ahead was dropped unanswered"),
        }
    }
}
