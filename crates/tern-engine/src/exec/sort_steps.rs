//! Sorting materialized rows a bounded step at a time.
//!
//! Sorting a large input in one call holds the worker for as long as that
//! takes (1.5 s for a million rows ordered by literals), far past a time
//! quantum. [`SortSteps`] does the same work in steps of bounded size:
//! the sort keys of a slice of rows, then one sorted run of rows per core,
//! then a merge of the runs that hands out a batch at a time. The operator
//! can pause between any two steps, and a suspended query stashes the
//! sorter as it is.

use super::{Batch, BATCH_ROWS};
use crate::expr;
use crate::suspend::StashSize;
use crate::EngineError;
use oxrdf::Term;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::ops::Range;
use tern_index::Id;

/// Rows whose keys one step computes (on all cores).
const KEY_STEP_ROWS: usize = 8 * 1024;
/// Rows of one sorted run; a step sorts one run per core.
const RUN_ROWS: usize = 32 * 1024;

/// One row's value of one sort key.
pub enum SortKey {
    /// An ID of a column whose ID order is term order.
    Id(Id),
    Term(Option<Term>),
}

impl SortKey {
    /// Keys of one sort key are all of one kind.
    fn cmp(&self, other: &SortKey) -> Ordering {
        match (self, other) {
            (SortKey::Id(a), SortKey::Id(b)) => a.cmp(b),
            (SortKey::Term(a), SortKey::Term(b)) => expr::order_cmp(a.as_ref(), b.as_ref()),
            (SortKey::Id(_), SortKey::Term(_)) => Ordering::Less,
            (SortKey::Term(_), SortKey::Id(_)) => Ordering::Greater,
        }
    }
}

/// Computes the sort keys of one row.
pub type KeysOf<'a> = dyn Fn(&[Id]) -> Result<Vec<SortKey>, EngineError> + Sync + 'a;

pub struct SortSteps {
    rows: Vec<Vec<Id>>,
    keys: Vec<Vec<SortKey>>,
    ascending: Vec<bool>,
    /// Per sort key, the column it sorts by ID, if it does.
    by_id: Vec<Option<usize>>,
    /// Row numbers, sorted within each run once it is sorted.
    order: Vec<u32>,
    runs_sorted: usize,
    merge: Option<Merge>,
}

/// The merge of the sorted runs: a binary heap of runs by their next row.
struct Merge {
    /// Next position in `order` of each run.
    next: Vec<usize>,
    ends: Vec<usize>,
    /// Runs that have rows left, the one with the least next row first.
    heap: Vec<usize>,
}

impl SortSteps {
    /// `ascending`: per sort key, whether it sorts up; `by_id`: per sort
    /// key, the column whose IDs it sorts by, if it does (kept for
    /// whoever computes the keys after a suspension).
    pub fn new(rows: Vec<Vec<Id>>, ascending: Vec<bool>, by_id: Vec<Option<usize>>) -> SortSteps {
        SortSteps {
            order: (0..rows.len() as u32).collect(),
            keys: Vec::with_capacity(rows.len()),
            rows,
            ascending,
            by_id,
            runs_sorted: 0,
            merge: None,
        }
    }

    pub fn by_id(&self) -> &[Option<usize>] {
        &self.by_id
    }

    /// Whether the rows are ready to hand out.
    pub fn sorted(&self) -> bool {
        self.merge.is_some()
    }

    /// Does one step of the sort.
    pub fn step(&mut self, keys_of: &KeysOf) -> Result<(), EngineError> {
        if self.keys.len() < self.rows.len() {
            let start = self.keys.len();
            let end = (start + KEY_STEP_ROWS).min(self.rows.len());
            let rows = &self.rows;
            let keys = super::map_indexes(end - start, |i| keys_of(&rows[start + i]))?;
            self.keys.extend(keys);
            return Ok(());
        }
        let runs = self.run_ranges();
        if self.runs_sorted < runs.len() {
            let now = rayon::current_num_threads().max(1);
            let (from, to) = (self.runs_sorted, (self.runs_sorted + now).min(runs.len()));
            let (keys, ascending) = (&self.keys, &self.ascending);
            let first = runs[from].start;
            let chunks = self.order[first..runs[to - 1].end].par_chunks_mut(RUN_ROWS);
            // Stable within a run, and runs merge earlier run first: rows
            // with equal keys keep their input order.
            chunks.for_each(|run| run.sort_by(|&a, &b| compare(keys, ascending, a, b)));
            self.runs_sorted = to;
            return Ok(());
        }
        let ends: Vec<usize> = runs.iter().map(|r| r.end).collect();
        let mut merge = Merge {
            next: runs.iter().map(|r| r.start).collect(),
            heap: Vec::with_capacity(ends.len()),
            ends,
        };
        for run in 0..merge.next.len() {
            if merge.next[run] < merge.ends[run] {
                merge.heap.push(run);
                let at = merge.heap.len() - 1;
                self.sift_up(&mut merge, at);
            }
        }
        self.merge = Some(merge);
        Ok(())
    }

    /// The next batch of sorted rows, once [`sorted`](Self::sorted).
    pub fn next_batch(&mut self, width: usize) -> Option<Batch> {
        let mut merge = self.merge.take()?;
        let mut out = Batch::with_columns(width);
        while out.len < BATCH_ROWS {
            let Some(&run) = merge.heap.first() else {
                break;
            };
            out.push_row(&self.rows[self.order[merge.next[run]] as usize]);
            merge.next[run] += 1;
            if merge.next[run] == merge.ends[run] {
                let last = merge.heap.pop().expect("not empty");
                if merge.heap.is_empty() {
                    continue;
                }
                merge.heap[0] = last;
            }
            self.sift_down(&mut merge, 0);
        }
        self.merge = Some(merge);
        (out.len > 0).then_some(out)
    }

    fn run_ranges(&self) -> Vec<Range<usize>> {
        (0..self.rows.len().div_ceil(RUN_ROWS))
            .map(|r| r * RUN_ROWS..((r + 1) * RUN_ROWS).min(self.rows.len()))
            .collect()
    }

    /// Whether run `a`'s next row sorts before run `b`'s.
    fn before(&self, merge: &Merge, a: usize, b: usize) -> bool {
        let row = |run: usize| self.order[merge.next[run]];
        match compare(&self.keys, &self.ascending, row(a), row(b)) {
            Ordering::Equal => a < b,
            o => o == Ordering::Less,
        }
    }

    fn sift_up(&self, merge: &mut Merge, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if !self.before(merge, merge.heap[at], merge.heap[parent]) {
                break;
            }
            merge.heap.swap(at, parent);
            at = parent;
        }
    }

    fn sift_down(&self, merge: &mut Merge, mut at: usize) {
        loop {
            let mut least = at;
            for child in [2 * at + 1, 2 * at + 2] {
                if child < merge.heap.len()
                    && self.before(merge, merge.heap[child], merge.heap[least])
                {
                    least = child;
                }
            }
            if least == at {
                return;
            }
            merge.heap.swap(at, least);
            at = least;
        }
    }
}

/// Compares rows `a` and `b` by their keys.
fn compare(keys: &[Vec<SortKey>], ascending: &[bool], a: u32, b: u32) -> Ordering {
    let (a, b) = (&keys[a as usize], &keys[b as usize]);
    for (i, asc) in ascending.iter().enumerate() {
        let o = a[i].cmp(&b[i]);
        let o = if *asc { o } else { o.reverse() };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl StashSize for SortSteps {
    fn stash_bytes(&self) -> usize {
        let row = self.rows.first().map_or(0, |r| r.len() * 8 + 24);
        let key = self.ascending.len() * std::mem::size_of::<SortKey>() + 24;
        self.rows.len() * (row + 4) + self.keys.len() * key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorts `values` (one key, one column) step by step, as an operator
    /// would between pauses, and returns them in output order.
    fn sorted_in_steps(values: &[u64], ascending: bool) -> Vec<u64> {
        let rows = values.iter().map(|&v| vec![Id(v)]).collect();
        let mut sorter = SortSteps::new(rows, vec![ascending], vec![Some(0)]);
        let keys_of = |row: &[Id]| Ok(vec![SortKey::Id(row[0])]);
        let mut steps = 0;
        while !sorter.sorted() {
            sorter.step(&keys_of).unwrap();
            steps += 1;
        }
        let expected_steps = values.len().div_ceil(KEY_STEP_ROWS)
            + values
                .len()
                .div_ceil(RUN_ROWS)
                .div_ceil(rayon::current_num_threads())
            + 1;
        assert_eq!(steps, expected_steps, "{} rows", values.len());
        let mut out = Vec::new();
        while let Some(batch) = sorter.next_batch(1) {
            assert!(batch.len <= BATCH_ROWS);
            out.extend(batch.columns[0].iter().map(|id| id.0));
        }
        out
    }

    #[test]
    fn merged_runs_give_the_whole_input_in_order() {
        let mut state = 7u64;
        for len in [0, 1, 5, RUN_ROWS, RUN_ROWS + 1, 5 * RUN_ROWS + 123] {
            let values: Vec<u64> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % 1000
                })
                .collect();
            for ascending in [true, false] {
                let mut expected = values.clone();
                expected.sort_unstable();
                if !ascending {
                    expected.reverse();
                }
                assert_eq!(sorted_in_steps(&values, ascending), expected);
            }
        }
    }

    /// Rows with equal keys come out in input order, whichever runs they
    /// were in (as a stable sort of the whole input would give them).
    #[test]
    fn equal_keys_keep_their_input_order() {
        let len = 3 * RUN_ROWS + 10;
        let rows: Vec<Vec<Id>> = (0..len as u64).map(|i| vec![Id(i % 3), Id(i)]).collect();
        let mut sorter = SortSteps::new(rows, vec![true], vec![Some(0)]);
        let keys_of = |row: &[Id]| Ok(vec![SortKey::Id(row[0])]);
        while !sorter.sorted() {
            sorter.step(&keys_of).unwrap();
        }
        let mut out = Vec::new();
        while let Some(batch) = sorter.next_batch(2) {
            out.extend((0..batch.len).map(|i| (batch.columns[0][i].0, batch.columns[1][i].0)));
        }
        assert_eq!(out.len(), len);
        for pair in out.windows(2) {
            let ((k1, i1), (k2, i2)) = (pair[0], pair[1]);
            assert!(k1 < k2 || (k1 == k2 && i1 < i2), "{pair:?}");
        }
    }
}
