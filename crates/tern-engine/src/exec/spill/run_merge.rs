//! The merge of sorted runs written to a [`RowFile`]: the last phase of a
//! sort larger than memory.
//!
//! Each run's next row is compared by its sort keys, computed once per row
//! as it comes up (the runs were sorted in memory, where a key could be
//! compared by ID; here every key is a term, so that runs sorted with
//! different shortcuts merge by one order). The runs wait in a binary heap
//! ordered by their next rows; ties go to the earlier run, so rows with
//! equal keys keep their input order as in the in-memory sort.

use super::{RowFile, Segment, SegmentReader};
use crate::exec::sort_steps::TermKeyOf;
use crate::exec::{Batch, BATCH_ROWS};
use crate::expr;
use crate::suspend::StashSize;
use crate::EngineError;
use oxrdf::Term;
use std::cmp::Ordering;
use tern_index::Id;

pub struct RunMerge {
    runs: Vec<RunHead>,
    /// Runs with rows left, a heap with the run whose next row sorts
    /// first at the top; `None` until the first rows are read.
    heap: Option<Vec<usize>>,
    width: usize,
}

/// A run's block being read and the keys of its next row.
struct RunHead {
    reader: SegmentReader,
    rows: Vec<Id>,
    count: usize,
    at: usize,
    keys: Vec<Option<Term>>,
}

impl RunMerge {
    pub fn new(runs: &[Segment], width: usize) -> RunMerge {
        RunMerge {
            runs: runs
                .iter()
                .map(|run| RunHead {
                    reader: run.reader(),
                    rows: Vec::new(),
                    count: 0,
                    at: 0,
                    keys: Vec::new(),
                })
                .collect(),
            heap: None,
            width,
        }
    }

    /// The next batch of merged rows (`None` when every run is done).
    /// `ascending`: per sort key, whether it sorts up; `keys_of` computes a
    /// key of a row.
    pub fn next_batch(
        &mut self,
        file: &RowFile,
        ascending: &[bool],
        keys_of: &TermKeyOf,
    ) -> Result<Option<Batch>, EngineError> {
        let mut heap = match self.heap.take() {
            Some(heap) => heap,
            None => {
                let mut heap = Vec::new();
                for run in 0..self.runs.len() {
                    if self.advance(run, file, ascending.len(), keys_of)? {
                        heap.push(run);
                        self.sift_up(&mut heap, ascending);
                    }
                }
                heap
            }
        };
        let mut out = Batch::with_columns(self.width);
        while out.len < BATCH_ROWS {
            let Some(&run) = heap.first() else { break };
            let head = &self.runs[run];
            let w = self.width;
            out.push_row(&head.rows[head.at * w..(head.at + 1) * w]);
            self.runs[run].at += 1;
            if !self.advance(run, file, ascending.len(), keys_of)? {
                let last = heap.pop().expect("a run on the heap");
                if heap.is_empty() {
                    break;
                }
                heap[0] = last;
            }
            self.sift_down(&mut heap, ascending);
        }
        self.heap = Some(heap);
        Ok((out.len > 0).then_some(out))
    }

    /// Moves run `run` to its next row (reading its next block when the
    /// block is done) and computes that row's keys; false when the run has
    /// no rows left.
    fn advance(
        &mut self,
        run: usize,
        file: &RowFile,
        keys: usize,
        keys_of: &TermKeyOf,
    ) -> Result<bool, EngineError> {
        let head = &mut self.runs[run];
        if head.at >= head.count {
            head.count = file.read_block(&mut head.reader, &mut head.rows)?;
            head.at = 0;
            if head.count == 0 {
                head.rows = Vec::new();
                return Ok(false);
            }
        }
        let row = &head.rows[head.at * self.width..(head.at + 1) * self.width];
        head.keys.clear();
        for key in 0..keys {
            head.keys.push(keys_of(key, row)?);
        }
        Ok(true)
    }

    /// Whether run `a`'s next row sorts before run `b`'s.
    fn before(&self, a: usize, b: usize, ascending: &[bool]) -> bool {
        let (ka, kb) = (&self.runs[a].keys, &self.runs[b].keys);
        for ((x, y), &up) in ka.iter().zip(kb).zip(ascending) {
            let o = expr::order_cmp(x.as_ref(), y.as_ref());
            if o != Ordering::Equal {
                return (o == Ordering::Less) == up;
            }
        }
        a < b
    }

    fn sift_up(&self, heap: &mut [usize], ascending: &[bool]) {
        let mut i = heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.before(heap[i], heap[parent], ascending) {
                break;
            }
            heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&self, heap: &mut [usize], ascending: &[bool]) {
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut first = i;
            if l < heap.len() && self.before(heap[l], heap[first], ascending) {
                first = l;
            }
            if r < heap.len() && self.before(heap[r], heap[first], ascending) {
                first = r;
            }
            if first == i {
                return;
            }
            heap.swap(i, first);
            i = first;
        }
    }
}

impl StashSize for RunMerge {
    fn stash_bytes(&self) -> usize {
        self.runs
            .iter()
            .map(|r| r.rows.capacity() * 8 + r.keys.len() * 64 + 64)
            .sum()
    }
}
