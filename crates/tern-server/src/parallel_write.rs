//! Formatting the rows of a batch on all cores. Exporting a large result is
//! mostly this formatting, which a single core cannot keep up with the
//! network at.

use rayon::prelude::*;
use tern_engine::TermBatch;
use tern_export::SolutionsWriter;

/// Rows of a batch left to write from which they are written on all cores.
pub const PARALLEL_WRITE_ROWS: usize = 2048;
/// Most rows written on all cores at once: the producer looks at the clock
/// between such runs (one probe row of a cross product can make a batch of
/// any size).
pub const PARALLEL_WRITE_MAX: usize = 16 * 1024;

/// Writes rows `rows` of `batch` one after the other into `out`.
pub fn write_rows(
    writer: &mut dyn SolutionsWriter,
    batch: &TermBatch,
    rows: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) {
    let mut terms = Vec::with_capacity(8);
    for i in rows {
        batch.row(i, &mut terms);
        writer.row(out, &terms);
    }
}

/// Writes runs of rows in parallel, keeping its buffers from run to run.
#[derive(Default)]
pub struct ParallelWriter {
    /// One buffer per core, reused.
    buffers: Vec<Vec<u8>>,
}

impl ParallelWriter {
    /// Writes the rows of `batch` from `from` on (at most
    /// [`PARALLEL_WRITE_MAX`]), cut into one run per core, each run by a
    /// fork of `writer` into its own buffer, the buffers then appended to
    /// `out` in order; the number of rows written, or `None` when the format
    /// cannot fork (then rows go one by one).
    pub fn write(
        &mut self,
        writer: &dyn SolutionsWriter,
        batch: &TermBatch,
        from: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        self.write_while(writer, batch, from, out, || ())
            .map(|(rows, ())| rows)
    }

    /// [`write`](Self::write), running `meanwhile` on another core at the
    /// same time: the producer fetches the next batch while this one is
    /// formatted, so that neither core waits for the other.
    pub fn write_while<R: Send>(
        &mut self,
        writer: &dyn SolutionsWriter,
        batch: &TermBatch,
        from: usize,
        out: &mut Vec<u8>,
        meanwhile: impl FnOnce() -> R + Send,
    ) -> Option<(usize, R)> {
        let rows = (batch.len() - from).min(PARALLEL_WRITE_MAX);
        let until = from + rows;
        let runs = rayon::current_num_threads().clamp(1, 16);
        let per_run = rows.div_ceil(runs);
        let forks: Vec<Box<dyn SolutionsWriter>> = (0..runs)
            .map(|_| writer.fork_rows())
            .collect::<Option<_>>()?;
        self.buffers.resize_with(runs, Vec::new);
        let buffers = &mut self.buffers;
        let ((), other) = rayon::join(
            || {
                forks
                    .into_par_iter()
                    .zip(buffers.par_iter_mut())
                    .enumerate()
                    .for_each(|(run, (mut fork, buf))| {
                        buf.clear();
                        let start = from + run * per_run;
                        let end = (start + per_run).min(until);
                        write_rows(fork.as_mut(), batch, start..end, buf);
                    })
            },
            meanwhile,
        );
        let written: usize = self.buffers.iter().map(Vec::len).sum();
        out.reserve(written);
        for buf in &self.buffers {
            out.extend_from_slice(buf);
        }
        Some((rows, other))
    }
}
