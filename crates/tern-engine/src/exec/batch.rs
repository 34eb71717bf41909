//! [`Batch`]: the unit operators exchange, one column of IDs per variable;
//! and helpers that spread per-row work over the cores.

use super::rows::Solution;
use crate::suspend::StashSize;
use crate::EngineError;
use tern_index::Id;

/// Rows per batch produced by operators that build batches themselves.
pub const BATCH_ROWS: usize = 4096;

/// Rows an operator's next batch holds at most: [`BATCH_ROWS`], or, when
/// its consumer wants the first rows soon but may read on (see
/// [`Operator::small_first_batches`](super::Operator::small_first_batches)),
/// a small first batch and then four times more per batch up to
/// [`BATCH_ROWS`]. Under a LIMIT 10 a join then does the work of about ten
/// rows before its first batch, not of 4,096; a consumer that reads
/// everything after all gets full batches after five smaller ones.
#[derive(Debug, Clone, Copy)]
pub struct BatchRamp {
    next: usize,
}

impl Default for BatchRamp {
    fn default() -> BatchRamp {
        BatchRamp { next: BATCH_ROWS }
    }
}

impl BatchRamp {
    /// The next batch holds about `rows` rows (at least one).
    pub fn start_at(&mut self, rows: usize) {
        self.next = rows.clamp(1, BATCH_ROWS);
    }

    /// Rows the batch being made may hold.
    pub fn limit(&self) -> usize {
        self.next
    }

    /// A batch was handed out: the next may hold more.
    pub fn grow(&mut self) {
        self.next = self.next.saturating_mul(4).min(BATCH_ROWS);
    }
}

/// A batch of solutions: one column of IDs per variable of the producing
/// operator's schema; [`Id::UNDEFINED`] where a variable is unbound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub columns: Vec<Vec<Id>>,
    pub len: usize,
}

impl Batch {
    /// The rows of `batches` (each `width` columns wide) in one batch.
    pub fn concat(width: usize, batches: impl IntoIterator<Item = Batch>) -> Batch {
        let mut all = Batch::with_columns(width);
        for batch in batches {
            for (column, values) in all.columns.iter_mut().zip(batch.columns) {
                column.extend(values);
            }
            all.len += batch.len;
        }
        all
    }

    pub fn with_columns(width: usize) -> Batch {
        Batch {
            columns: vec![Vec::new(); width],
            len: 0,
        }
    }

    /// Adds the merge of two compatible rows (see [`Solution::merge`](Solution::merge))
    /// without building it first.
    pub fn push_merged(
        &mut self,
        left: &[Id],
        right: &[Id],
        sources: &[(Option<usize>, Option<usize>)],
    ) {
        for (column, &source) in self.columns.iter_mut().zip(sources) {
            column.push(Solution::merged(left, right, source));
        }
        self.len += 1;
    }

    pub fn push_row(&mut self, row: &[Id]) {
        for (column, &id) in self.columns.iter_mut().zip(row) {
            column.push(id);
        }
        self.len += 1;
    }

    pub fn row(&self, i: usize) -> Vec<Id> {
        self.columns.iter().map(|c| c[i]).collect()
    }

    /// Row `i` into `row` (a buffer reused from row to row: no allocation
    /// per row).
    pub fn row_into(&self, i: usize, row: &mut Vec<Id>) {
        row.clear();
        row.extend(self.columns.iter().map(|c| c[i]));
    }

    /// The rows whose `keep` entry is true, column by column.
    pub fn select(&self, keep: &[bool]) -> Batch {
        debug_assert_eq!(keep.len(), self.len);
        let columns = self
            .columns
            .iter()
            .map(|column| {
                column
                    .iter()
                    .zip(keep)
                    .filter_map(|(&id, &k)| k.then_some(id))
                    .collect()
            })
            .collect();
        Batch {
            columns,
            len: keep.iter().filter(|&&k| k).count(),
        }
    }

    /// The rows for which `keep` says true, in order (for FILTER, DISTINCT,
    /// MINUS).
    pub fn retain_rows(
        &self,
        mut keep: impl FnMut(&[Id]) -> Result<bool, EngineError>,
    ) -> Result<Batch, EngineError> {
        let mut out = Batch::with_columns(self.columns.len());
        let mut row = Vec::with_capacity(self.columns.len());
        for i in 0..self.len {
            self.row_into(i, &mut row);
            if keep(&row)? {
                out.push_row(&row);
            }
        }
        Ok(out)
    }
}

impl StashSize for Batch {
    fn stash_bytes(&self) -> usize {
        self.columns.iter().map(|c| c.capacity() * 8).sum()
    }
}

/// Below this many rows, per-row work stays on the calling thread: handing
/// it to other cores costs more than it saves.
const PARALLEL_MIN_ROWS: usize = 512;

/// `f` of every row of a batch, in row order, computed on all cores for
/// large batches (FILTER conditions, BIND values).
pub fn map_rows<T: Send>(
    batch: &Batch,
    f: impl Fn(&[Id]) -> Result<T, EngineError> + Sync + Send,
) -> Result<Vec<T>, EngineError> {
    use rayon::prelude::*;
    let width = batch.columns.len();
    if batch.len < PARALLEL_MIN_ROWS {
        let mut row = Vec::with_capacity(width);
        return (0..batch.len)
            .map(|i| {
                batch.row_into(i, &mut row);
                f(&row)
            })
            .collect();
    }
    (0..batch.len)
        .into_par_iter()
        .with_min_len(PARALLEL_MIN_ROWS / 2)
        .map_init(
            || Vec::with_capacity(width),
            |row, i| {
                batch.row_into(i, row);
                f(row)
            },
        )
        .collect()
}

/// `f` of every index below `len`, in order, on all cores when `len` is large.
pub fn map_indexes<T: Send>(
    len: usize,
    f: impl Fn(usize) -> Result<T, EngineError> + Sync + Send,
) -> Result<Vec<T>, EngineError> {
    use rayon::prelude::*;
    if len < PARALLEL_MIN_ROWS {
        return (0..len).map(f).collect();
    }
    (0..len)
        .into_par_iter()
        .with_min_len(PARALLEL_MIN_ROWS / 2)
        .map(f)
        .collect()
}

/// The next batch of a materialized result, `None` when it is used up.
pub fn next_chunk(rows: &mut std::vec::IntoIter<Vec<Id>>, width: usize) -> Option<Batch> {
    let chunk: Vec<Vec<Id>> = rows.by_ref().take(BATCH_ROWS).collect();
    (!chunk.is_empty()).then(|| batch_of(&chunk, width))
}

/// Cuts rows into batches for output.
pub fn batch_of(rows: &[Vec<Id>], width: usize) -> Batch {
    let mut batch = Batch::with_columns(width);
    for row in rows {
        batch.push_row(row);
    }
    batch
}
