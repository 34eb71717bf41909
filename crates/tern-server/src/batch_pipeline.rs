//! Writing a large result a whole batch per core. Each batch of a fast
//! stream (a large export) is decoded whole, in vocabulary order, and
//! written by a fork of the result's writer, all on one core of the pool,
//! while the other cores do the same with the batches after it; the
//! producer hands the batches' bytes on in order.
//!
//! Splitting each batch's work over the cores instead (decode its columns
//! side by side, then write its rows in a run per core) made the cores
//! wait for each other at every step: on two cores an export of BSBM 10M
//! kept them 75-80% busy and spent a tenth of its time in the kernel
//! switching threads. A batch per core has nothing to wait for but the
//! batch before it.
//!
//! Each batch runs on a lane: a pool of one thread, one lane per core. The
//! parallel loops inside a batch's work (a column's blocks decoded side by
//! side) then run inline on the lane, instead of handing pieces to cores
//! that are busy with batches of their own and waiting for them: on the
//! shared pool, the threads slept and woke about 1,200 times a second each.
//!
//! Memory: at most one batch per core in flight, each its decoded terms
//! and its bytes (about 4 + 4 MB for 16K rows of BSBM).

use crate::parallel_write::write_rows;
use crate::pool_job::PoolJob;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::VecDeque;
use std::sync::OnceLock;
use tern_engine::{EngineError, RowBatch};
use tern_export::{FormatError, SolutionsWriter};

/// A batch written.
pub struct WrittenBatch {
    pub bytes: Vec<u8>,
    pub rows: usize,
    /// A row the writer could not write (RDF/XML): the result is cut there.
    pub failure: Option<FormatError>,
}

/// Why no more batches are started.
pub enum End {
    /// The stream ended (or failed).
    Stream(Result<(), EngineError>),
    /// The writer would not fork: the rest is written as before the
    /// pipeline (no writer does this once it forked, but nothing relies on
    /// it).
    Unforked,
}

/// Batches being written on the pool, oldest first, and how the stream
/// ended once it has.
#[derive(Default)]
pub struct BatchPipeline {
    in_flight: VecDeque<PoolJob<Result<WrittenBatch, EngineError>>>,
    ended: Option<End>,
    /// Batches started: the next one goes to lane `started % lanes`.
    started: usize,
}

/// The lanes: one single-threaded pool per core of the shared pool (none
/// if threads cannot be made; batches then go to the shared pool).
fn lanes() -> &'static [ThreadPool] {
    static LANES: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    LANES.get_or_init(|| {
        (0..rayon::current_num_threads().clamp(1, 16))
            .map_while(|lane| {
                ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(move |_| format!("tern-export-{lane}"))
                    .build()
                    .ok()
            })
            .collect()
    })
}

impl BatchPipeline {
    /// Whether a batch per core is in flight. (One more, so that each lane
    /// has the next queued, was faster but held more than an export may.)
    pub fn is_full(&self) -> bool {
        self.in_flight.len() >= rayon::current_num_threads().clamp(1, 16)
    }

    /// Whether the stream has ended (or failed): nothing more to start.
    pub fn stream_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// Notes why no more batches start, to be told once the batches before
    /// are handed on.
    pub fn end_with(&mut self, end: End) {
        self.ended = Some(end);
    }

    /// Starts decoding and writing `batch` with `fork` on the next lane.
    pub fn start(&mut self, batch: RowBatch, mut fork: Box<dyn SolutionsWriter>) {
        let lanes = lanes();
        let lane = (!lanes.is_empty()).then(|| &lanes[self.started % lanes.len()]);
        let job = PoolJob::spawn(lane, move || write_batch(batch, fork.as_mut()));
        self.started += 1;
        self.in_flight.push_back(job);
    }

    /// The oldest batch once it is written; `None` when none is in flight.
    pub fn next(&mut self) -> Option<Result<WrittenBatch, EngineError>> {
        self.in_flight.pop_front().map(PoolJob::wait)
    }

    /// Why no more batches start, once every batch before is handed on.
    pub fn take_end(&mut self) -> Option<End> {
        if self.in_flight.is_empty() {
            self.ended.take()
        } else {
            None
        }
    }
}

/// Decodes `batch` whole and writes it with `fork`.
fn write_batch(
    mut batch: RowBatch,
    fork: &mut dyn SolutionsWriter,
) -> Result<WrittenBatch, EngineError> {
    batch.prepare()?;
    let rows = batch.len();
    let mut bytes = Vec::new();
    write_rows(fork, &batch, 0..rows, &mut bytes)?;
    drop(batch);
    fork.end_run(&mut bytes);
    Ok(WrittenBatch {
        bytes,
        rows,
        failure: fork.take_failure(),
    })
}
