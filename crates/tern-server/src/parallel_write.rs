//! Decoding and formatting the rows of a batch on all cores. Exporting a
//! large result is mostly this work, which a single core cannot keep up with
//! the network at; each core decodes the rows it writes, so their terms are
//! still in its cache when it writes them.

use rayon::prelude::*;
use tern_engine::{EngineError, RowBatch};
use tern_export::SolutionsWriter;

/// Rows of a batch left to write from which they are written on all cores.
pub const PARALLEL_WRITE_ROWS: usize = 2048;
/// Most rows written on all cores at once: the producer looks at the clock
/// between such runs (one probe row of a cross product can make a batch of
/// any size). Longer rounds cost less per row but hold more bytes at once:
/// at 16K rows, a full export of BSBM 10M ran about 5% faster but the server
/// grew 25 MB more.
pub const PARALLEL_WRITE_MAX: usize = 4 * 1024;

/// The fewest rows in a run: each run looks its keys up in the vocabulary
/// once, which costs too much for a few rows.
const MIN_RUN_ROWS: usize = 512;

/// Decodes rows `rows` of `batch` and writes them one after the other into
/// `out`.
pub fn write_rows(
    writer: &mut dyn SolutionsWriter,
    batch: &RowBatch,
    rows: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), EngineError> {
    let terms = batch.decode(rows)?;
    let mut row = Vec::with_capacity(8);
    for i in 0..terms.len() {
        terms.row(i, &mut row);
        writer.row(out, &row);
    }
    Ok(())
}

/// Writes runs of rows in parallel, keeping its buffers from run to run
/// (handing fresh buffers on as chunks instead of copying them out measured
/// slower).
#[derive(Default)]
pub struct ParallelWriter {
    /// One buffer per run, reused.
    buffers: Vec<Vec<u8>>,
}

impl ParallelWriter {
    /// Gives the buffers back (a query waiting for its client keeps none).
    pub fn release(&mut self) {
        self.buffers = Vec::new();
    }

    /// Writes the rows of `batch` from `from` on (at most
    /// [`PARALLEL_WRITE_MAX`]), cut into one run per core, each run decoded
    /// and written by a fork of `writer` into its own buffer, the buffers
    /// then appended to `out` in order; the number of rows written, or
    /// `None` when the format cannot fork (then rows go one by one).
    pub fn write(
        &mut self,
        writer: &mut dyn SolutionsWriter,
        batch: &RowBatch,
        from: usize,
        out: &mut Vec<u8>,
    ) -> Option<Result<usize, EngineError>> {
        self.write_while(writer, batch, from, out, || ())
            .map(|(rows, ())| rows)
    }

    /// [`write`](Self::write), running `meanwhile` on another core at the
    /// same time: the producer fetches the next batch while this one is
    /// written, so that neither core waits for the other.
    pub fn write_while<R: Send>(
        &mut self,
        writer: &mut dyn SolutionsWriter,
        batch: &RowBatch,
        from: usize,
        out: &mut Vec<u8>,
        meanwhile: impl FnOnce() -> R + Send,
    ) -> Option<(Result<usize, EngineError>, R)> {
        let rows = (batch.len() - from).min(PARALLEL_WRITE_MAX);
        let until = from + rows;
        // One run per core: more, shorter runs balance better but decode
        // less efficiently (measured slower on BSBM 10M).
        let runs = rayon::current_num_threads()
            .clamp(1, 16)
            .min(rows.div_ceil(MIN_RUN_ROWS));
        let per_run = rows.div_ceil(runs);
        if per_run < writer.rows_per_fork() {
            // Runs this short would be units of their own in the output
            // (a Parquet row group each): the rows go one by one.
            return None;
        }
        let forks: Vec<Box<dyn SolutionsWriter>> = (0..runs)
            .map(|_| writer.fork_rows())
            .collect::<Option<_>>()?;
        self.buffers.resize_with(runs, Vec::new);
        let buffers = &mut self.buffers;
        let (written, other) = rayon::join(
            || {
                forks
                    .into_par_iter()
                    .zip(buffers.par_iter_mut())
                    .enumerate()
                    .map(|(run, (mut fork, buf))| {
                        buf.clear();
                        let start = (from + run * per_run).min(until);
                        let end = (start + per_run).min(until);
                        write_rows(fork.as_mut(), batch, start..end, buf)?;
                        fork.end_run(buf);
                        Ok(())
                    })
                    .collect::<Result<(), EngineError>>()
            },
            meanwhile,
        );
        if let Err(e) = written {
            return Some((Err(e), other));
        }
        let written: usize = self.buffers.iter().map(Vec::len).sum();
        if out.is_empty() && out.capacity() < written {
            // The producer's buffer is empty after each chunk it hands on,
            // and a step's rows often make a little more than a chunk:
            // growing the empty buffer would copy its whole old allocation.
            *out = Vec::with_capacity(written);
        } else {
            out.reserve(written);
        }
        for buf in &self.buffers {
            out.extend_from_slice(buf);
        }
        // What the forks made elsewhere (Parquet's row groups, put into the
        // file by its own thread) goes out now, not when the result ends.
        writer.ready_bytes(out);
        Some((Ok(rows), other))
    }
}
