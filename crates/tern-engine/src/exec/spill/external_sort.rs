//! A sort larger than memory: runs of rows that fit are sorted in memory
//! ([`SortSteps`]) and written to one file, then merged ([`RunMerge`]).
//! Every phase goes a bounded step at a time, so the operator above can
//! pause at the end of a turn and be suspended with the sort as it is.

use super::{RowFile, RunMerge, Segment};
use crate::context::QueryContext;
use crate::exec::sort_steps::{SortSteps, TermKeyOf};
use crate::exec::Batch;
use crate::suspend::StashSize;
use crate::EngineError;

pub struct ExternalSort {
    file: RowFile,
    width: usize,
    /// Per sort key, whether it sorts up.
    ascending: Vec<bool>,
    runs: Vec<Segment>,
    /// The run being sorted, then written.
    run: Option<Box<SortSteps>>,
    merge: Option<RunMerge>,
}

impl ExternalSort {
    pub fn new(
        ctx: &QueryContext,
        width: usize,
        ascending: Vec<bool>,
    ) -> Result<ExternalSort, EngineError> {
        Ok(ExternalSort {
            file: RowFile::for_query(ctx, width)?,
            width,
            ascending,
            runs: Vec::new(),
            run: None,
            merge: None,
        })
    }

    /// Rows to sort and write as the next run (the previous one is
    /// written: [`write_run`](Self::write_run) said so).
    pub fn add_run(&mut self, sorter: SortSteps) {
        debug_assert!(self.run.is_none() && self.merge.is_none());
        self.run = Some(Box::new(sorter));
    }

    /// Whether a run is waiting to be sorted or written.
    pub fn writing(&self) -> bool {
        self.run.is_some()
    }

    /// Sorts the pending run and writes it, until it is written (true) or
    /// the turn is over (false: call again in a later turn).
    pub fn write_run(
        &mut self,
        ctx: &QueryContext,
        keys_of: &TermKeyOf,
    ) -> Result<bool, EngineError> {
        let Some(run) = self.run.as_mut() else {
            return Ok(true);
        };
        while !run.sorted() {
            run.step(keys_of)?;
            ctx.check()?;
            if ctx.should_yield() {
                return Ok(false);
            }
        }
        while let Some(batch) = run.next_batch(self.width) {
            let mut row = Vec::with_capacity(self.width);
            for i in 0..batch.len {
                batch.row_into(i, &mut row);
                self.file.push(&row)?;
            }
            ctx.check()?;
            if ctx.should_yield() {
                return Ok(false);
            }
        }
        let segment = self.file.finish_segment()?;
        self.runs.push(segment);
        self.run = None;
        Ok(true)
    }

    /// The next batch of the whole sorted input, once every run is written.
    pub fn next_batch(&mut self, keys_of: &TermKeyOf) -> Result<Option<Batch>, EngineError> {
        debug_assert!(self.run.is_none());
        let merge = self
            .merge
            .get_or_insert_with(|| RunMerge::new(&self.runs, self.width));
        merge.next_batch(&self.file, &self.ascending, keys_of)
    }
}

impl StashSize for ExternalSort {
    fn stash_bytes(&self) -> usize {
        self.file.stash_bytes()
            + self.run.as_ref().map_or(0, |r| r.stash_bytes())
            + self.merge.as_ref().map_or(0, StashSize::stash_bytes)
    }
}
