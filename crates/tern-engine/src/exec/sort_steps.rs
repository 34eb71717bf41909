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

/// Computes the value of sort key `.0` (one not sorted by ID) for row `.1`.
pub type TermKeyOf<'a> = dyn Fn(usize, &[Id]) -> Result<Option<Term>, EngineError> + Sync + 'a;

/// Where a sort key's values are.
#[derive(Clone, Copy)]
enum Slot {
    /// In `ids`: the IDs of a column whose ID order is term order.
    Id { slot: usize, column: usize },
    /// In `terms`, computed.
    Term(usize),
}

pub struct SortSteps {
    rows: Vec<Vec<Id>>,
    /// Per sort key, where its values are and whether it sorts up.
    keys: Vec<(Slot, bool)>,
    /// Values of the keys sorted by ID, row after row (flat, so that a
    /// comparison reads no scattered allocations).
    ids: Vec<Id>,
    id_keys: usize,
    /// Values of the other keys, row after row.
    terms: Vec<Option<Term>>,
    /// Their places among numerics (`expr::numeric_order_place`), which
    /// decide most comparisons of numeric keys without parsing them.
    places: Vec<Option<f64>>,
    term_keys: usize,
    /// Rows whose keys are computed.
    keyed: usize,
    /// Row numbers, sorted within each run once it is sorted.
    order: Vec<u32>,
    runs_sorted: usize,
    merge: Option<Merge>,
    /// Rows still to hand out at most.
    remaining: usize,
}

/// The merge of the sorted runs: a tournament ("loser") tree, which finds
/// the next row in one comparison per level (a binary heap needs two, and
/// comparing terms is most of the cost of the merge).
struct Merge {
    /// Next position in `order` of each run.
    next: Vec<usize>,
    ends: Vec<usize>,
    /// `tree[0]`: the run with the least next row; `tree[p]` for `p` in
    /// `1..runs`: the run that lost at node `p`, whose children are nodes
    /// (or, from `runs` on, runs `c - runs`) `2p` and `2p + 1`.
    tree: Vec<usize>,
}

impl SortSteps {
    /// `ascending`: per sort key, whether it sorts up; `by_id`: per sort
    /// key, the column whose IDs it sorts by, if it does (kept for
    /// whoever computes the keys after a suspension).
    pub fn new(rows: Vec<Vec<Id>>, ascending: &[bool], by_id: &[Option<usize>]) -> SortSteps {
        let (mut id_keys, mut term_keys) = (0, 0);
        let keys = by_id
            .iter()
            .zip(ascending)
            .map(|(by_id, &asc)| {
                let slot = match *by_id {
                    Some(column) => {
                        id_keys += 1;
                        Slot::Id {
                            slot: id_keys - 1,
                            column,
                        }
                    }
                    None => {
                        term_keys += 1;
                        Slot::Term(term_keys - 1)
                    }
                };
                (slot, asc)
            })
            .collect();
        SortSteps {
            order: (0..rows.len() as u32).collect(),
            ids: Vec::with_capacity(rows.len() * id_keys),
            terms: Vec::with_capacity(rows.len() * term_keys),
            places: Vec::with_capacity(rows.len() * term_keys),
            keys,
            id_keys,
            term_keys,
            keyed: 0,
            remaining: usize::MAX,
            rows,
            runs_sorted: 0,
            merge: None,
        }
    }

    /// Hands out only the first `rows` rows.
    pub fn keep_first(&mut self, rows: usize) {
        self.remaining = rows;
    }

    /// Whether the rows are ready to hand out.
    pub fn sorted(&self) -> bool {
        self.merge.is_some()
    }

    /// Does one step of the sort.
    pub fn step(&mut self, term_key_of: &TermKeyOf) -> Result<(), EngineError> {
        if self.keyed < self.rows.len() {
            let (start, end) = (
                self.keyed,
                (self.keyed + KEY_STEP_ROWS).min(self.rows.len()),
            );
            let rows = &self.rows[start..end];
            for row in rows {
                for (slot, _) in &self.keys {
                    if let Slot::Id { column, .. } = slot {
                        self.ids.push(row[*column]);
                    }
                }
            }
            if self.term_keys > 0 {
                let keys = &self.keys;
                let terms = super::map_indexes(rows.len(), |i| {
                    let computed = keys.iter().enumerate();
                    computed
                        .filter(|(_, (slot, _))| matches!(slot, Slot::Term(_)))
                        .map(|(k, _)| term_key_of(k, &rows[i]))
                        .collect::<Result<Vec<_>, _>>()
                })?;
                let from = self.terms.len();
                self.terms.extend(terms.into_iter().flatten());
                let places = self.terms[from..].iter();
                self.places
                    .extend(places.map(|t| expr::numeric_order_place(t.as_ref())));
            }
            self.keyed = end;
            return Ok(());
        }
        let runs = self.run_ranges();
        if self.runs_sorted < runs.len() {
            let now = rayon::current_num_threads().max(1);
            let (from, to) = (self.runs_sorted, (self.runs_sorted + now).min(runs.len()));
            let (first, last) = (runs[from].start, runs[to - 1].end);
            // Taken out for the sort, which reads the keys of `self`.
            let mut order = std::mem::take(&mut self.order);
            let this = &*self;
            let first_only = self.remaining;
            // Stable within a run, and runs merge earlier run first: rows
            // with equal keys keep their input order.
            order[first..last].par_chunks_mut(RUN_ROWS).for_each(|run| {
                if first_only.saturating_mul(4) < run.len() {
                    // Only the first `first_only` rows are handed out (a
                    // LIMIT above), so no run gives more: they are selected,
                    // then only they are sorted (about 2n comparisons instead
                    // of n log n, and each compares computed terms). Ties
                    // broken by input position keep the stable sort's
                    // choice.
                    let by_key_then_position =
                        |a: &u32, b: &u32| this.compare(*a, *b).then(a.cmp(b));
                    run.select_nth_unstable_by(first_only, by_key_then_position);
                    run[..first_only].sort_by(by_key_then_position);
                } else {
                    run.sort_by(|&a, &b| this.compare(a, b));
                }
            });
            self.order = order;
            self.runs_sorted = to;
            return Ok(());
        }
        let mut merge = Merge {
            next: runs.iter().map(|r| r.start).collect(),
            ends: runs.iter().map(|r| r.end).collect(),
            tree: vec![0; runs.len().max(1)],
        };
        let k = runs.len();
        let mut winners = vec![0; k];
        for node in (1..k).rev() {
            let [a, b] = [2 * node, 2 * node + 1].map(|c| if c >= k { c - k } else { winners[c] });
            let (winner, loser) = if self.before(&merge, b, a) {
                (b, a)
            } else {
                (a, b)
            };
            winners[node] = winner;
            merge.tree[node] = loser;
        }
        merge.tree[0] = if k > 1 { winners[1] } else { 0 };
        self.merge = Some(merge);
        Ok(())
    }

    /// The next batch of sorted rows, once [`sorted`](Self::sorted).
    pub fn next_batch(&mut self, width: usize) -> Option<Batch> {
        let mut merge = self.merge.take()?;
        let mut out = Batch::with_columns(width);
        let k = merge.next.len();
        while out.len < BATCH_ROWS.min(self.remaining) {
            let mut winner = merge.tree[0];
            if k == 0 || merge.next[winner] == merge.ends[winner] {
                break;
            }
            out.push_row(&self.rows[self.order[merge.next[winner]] as usize]);
            merge.next[winner] += 1;
            // Replays the winner's path: at each node it meets the run
            // that lost there, and the two swap if that one now wins.
            let mut node = (winner + k) / 2;
            while node >= 1 {
                if self.before(&merge, merge.tree[node], winner) {
                    std::mem::swap(&mut merge.tree[node], &mut winner);
                }
                node /= 2;
            }
            merge.tree[0] = winner;
        }
        self.merge = Some(merge);
        self.remaining -= out.len;
        (out.len > 0).then_some(out)
    }

    /// Compares rows `a` and `b` by their keys.
    fn compare(&self, a: u32, b: u32) -> Ordering {
        let (a, b) = (a as usize, b as usize);
        for &(slot, ascending) in &self.keys {
            let o = match slot {
                Slot::Id { slot, .. } => {
                    self.ids[a * self.id_keys + slot].cmp(&self.ids[b * self.id_keys + slot])
                }
                Slot::Term(slot) => {
                    let (a, b) = (a * self.term_keys + slot, b * self.term_keys + slot);
                    match (self.places[a], self.places[b]) {
                        (Some(x), Some(y)) if x != y => x.total_cmp(&y),
                        _ => expr::order_cmp(self.terms[a].as_ref(), self.terms[b].as_ref()),
                    }
                }
            };
            if o != Ordering::Equal {
                return if ascending { o } else { o.reverse() };
            }
        }
        Ordering::Equal
    }

    fn run_ranges(&self) -> Vec<Range<usize>> {
        (0..self.rows.len().div_ceil(RUN_ROWS))
            .map(|r| r * RUN_ROWS..((r + 1) * RUN_ROWS).min(self.rows.len()))
            .collect()
    }

    /// Whether run `a`'s next row sorts before run `b`'s (a run without
    /// rows left sorts last; equal rows, the earlier run first).
    fn before(&self, merge: &Merge, a: usize, b: usize) -> bool {
        let left = |run: usize| merge.next[run] < merge.ends[run];
        match (left(a), left(b)) {
            (true, true) => {}
            (true, false) => return true,
            (false, true) => return false,
            (false, false) => return a < b,
        }
        let row = |run: usize| self.order[merge.next[run]];
        match self.compare(row(a), row(b)) {
            Ordering::Equal => a < b,
            o => o == Ordering::Less,
        }
    }
}

impl StashSize for SortSteps {
    fn stash_bytes(&self) -> usize {
        let row = self.rows.first().map_or(0, |r| r.len() * 8 + 24);
        let terms = self.terms.len() * (std::mem::size_of::<Option<Term>>() + 16);
        self.rows.len() * (row + 4) + self.ids.len() * 8 + terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorts `values` (one key, one column) step by step, as an operator
    /// would between pauses, and returns them in output order.
    fn sorted_in_steps(values: &[u64], ascending: bool) -> Vec<u64> {
        let rows = values.iter().map(|&v| vec![Id(v)]).collect();
        let mut sorter = SortSteps::new(rows, &[ascending], &[Some(0)]);
        let keys_of = |_: usize, _: &[Id]| Ok(None);
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

    /// With only the first rows wanted, the runs are selected rather than
    /// sorted; the rows handed out are the stable sort's first rows, ties
    /// included.
    #[test]
    fn the_first_rows_only_are_those_of_the_whole_sort() {
        let len = 2 * RUN_ROWS + 77;
        let rows: Vec<Vec<Id>> = (0..len as u64)
            .map(|i| vec![Id(i * 7919 % 50), Id(i)])
            .collect();
        for (top, ascending) in [(1, true), (10, false), (1000, true), (RUN_ROWS, true)] {
            let mut sorter = SortSteps::new(rows.clone(), &[ascending], &[Some(0)]);
            sorter.keep_first(top);
            let keys_of = |_: usize, _: &[Id]| Ok(None);
            while !sorter.sorted() {
                sorter.step(&keys_of).unwrap();
            }
            let mut out = Vec::new();
            while let Some(batch) = sorter.next_batch(2) {
                out.extend((0..batch.len).map(|i| batch.row(i)));
            }
            let mut expected = rows.clone();
            expected.sort_by(|a, b| {
                let o = a[0].cmp(&b[0]);
                if ascending {
                    o
                } else {
                    o.reverse()
                }
            });
            expected.truncate(top);
            assert_eq!(out, expected, "top {top}, ascending {ascending}");
        }
    }

    /// Rows with equal keys come out in input order, whichever runs they
    /// were in (as a stable sort of the whole input would give them).
    #[test]
    fn equal_keys_keep_their_input_order() {
        let len = 3 * RUN_ROWS + 10;
        let rows: Vec<Vec<Id>> = (0..len as u64).map(|i| vec![Id(i % 3), Id(i)]).collect();
        let mut sorter = SortSteps::new(rows, &[true], &[Some(0)]);
        let keys_of = |_: usize, _: &[Id]| Ok(None);
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
