//! Scans that merge the base index's rows with the delta's changes.
//!
//! The changes in a scan's range are read lazily, straight from the runs (a
//! [`ChangeCursor`] merges the runs' slices as the scan advances, nothing is
//! copied up front), and a base batch is copied in stretches between the
//! changes that fall into it.

use super::Runs;
use crate::error::Result;
use crate::permutation::{partition, Batch, Lookup, Permutation, Row, ScanIter, BLOCK_ROWS};
use crate::Id;

/// The changes of several runs in one range, merged in row order; where
/// runs disagree on a row, the newest decides.
pub struct ChangeCursor {
    runs: Runs,
    perm: Permutation,
    /// Per run, newest first: (next position, end) in its rows.
    at: Vec<(usize, usize)>,
    /// The run indexes of `at`, newest first.
    order: Vec<usize>,
    /// The next change, found once per step rather than on every look.
    head: Option<(Row, bool)>,
}

impl ChangeCursor {
    pub fn new(runs: &Runs, perm: Permutation, lo: &Row, hi: &Row) -> ChangeCursor {
        let mut cursor = ChangeCursor {
            runs: runs.clone(),
            perm,
            at: Vec::new(),
            order: Vec::new(),
            head: None,
        };
        cursor.reset(lo, hi);
        cursor
    }

    /// Starts over on another range (keeping its buffers: a lookup per
    /// left row allocates nothing).
    pub fn reset(&mut self, lo: &Row, hi: &Row) {
        self.at.clear();
        self.order.clear();
        if lo <= hi {
            for (i, run) in self.runs.0.iter().enumerate().rev() {
                let (start, end) = run.range_bounds(self.perm, lo, hi);
                if start < end {
                    self.at.push((start, end));
                    self.order.push(i);
                }
            }
        }
        self.head = self.find_head();
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The next change without taking it.
    #[inline]
    pub fn peek(&self) -> Option<(Row, bool)> {
        self.head
    }

    fn find_head(&self) -> Option<(Row, bool)> {
        if let [(start, end)] = self.at[..] {
            return (start < end).then(|| self.runs.0[self.order[0]].row_at(self.perm, start));
        }
        let mut best: Option<(Row, bool)> = None;
        for (k, &(start, end)) in self.at.iter().enumerate() {
            if start < end {
                let entry = self.runs.0[self.order[k]].row_at(self.perm, start);
                // Newest first: an equal row of an older run does not win.
                if best.is_none_or(|(b, _)| entry.0 < b) {
                    best = Some(entry);
                }
            }
        }
        best
    }

    /// Takes the next change (every run's entry for that row).
    pub fn next_change(&mut self) -> Option<(Row, bool)> {
        let best = self.head?;
        for (k, (start, end)) in self.at.iter_mut().enumerate() {
            if *start < *end && self.runs.0[self.order[k]].row_at(self.perm, *start).0 == best.0 {
                *start += 1;
            }
        }
        self.head = self.find_head();
        Some(best)
    }

    /// Skips the changes up to and including `row`.
    pub fn skip_through(&mut self, row: &Row) {
        for (k, (start, end)) in self.at.iter_mut().enumerate() {
            let run = &self.runs.0[self.order[k]];
            *start += run
                .rows_from(self.perm, *start, *end)
                .partition_point(|(r, _)| r <= row);
        }
        self.head = self.find_head();
    }
}

/// A scan of a snapshot: the base's batches with the delta's changes in
/// their range merged in (inserted rows added in order, deleted rows left
/// out). With no change in range it is the base scan itself.
pub struct MergedScan {
    base: ScanIter,
    changes: ChangeCursor,
}

impl MergedScan {
    pub fn new(base: ScanIter, runs: &Runs, perm: Permutation, lo: &Row, hi: &Row) -> MergedScan {
        MergedScan {
            base,
            changes: ChangeCursor::new(runs, perm, lo, hi),
        }
    }

    /// Number of base blocks decoded so far.
    pub fn blocks_read(&self) -> u64 {
        self.base.blocks_read()
    }

    /// Continues after `row` (see [`ScanIter::resume_after`]).
    pub fn resume_after(&mut self, row: Row) {
        self.base.resume_after(row);
        self.changes.skip_through(&row);
    }

    /// The base batch with the changes up to its last row merged in.
    fn merge_into(&mut self, batch: Batch) -> Batch {
        let last = batch.row(batch.len() - 1);
        if self.changes.peek().is_none_or(|(row, _)| row > last) {
            return batch;
        }
        let mut out = Batch::default();
        for column in &mut out.columns {
            column.reserve(batch.len() + 16);
        }
        let mut copied = 0;
        while let Some((row, insert)) = self.changes.peek().filter(|(row, _)| *row <= last) {
            self.changes.next_change();
            // Base rows before the change go over as one stretch.
            let at = gallop(&batch, copied, &row);
            copy(&batch, copied, at, &mut out);
            copied = at;
            if insert {
                push(&mut out, row);
            }
            if copied < batch.len() && batch.row(copied) == row {
                // Deleted, or inserted again after a delete: once at most.
                copied += 1;
            }
        }
        copy(&batch, copied, batch.len(), &mut out);
        out
    }

    /// Inserted rows after the base's last row, a batch at a time.
    fn tail(&mut self) -> Option<Batch> {
        let mut out = Batch::default();
        while out.len() < BLOCK_ROWS {
            let Some((row, insert)) = self.changes.next_change() else {
                break;
            };
            if insert {
                push(&mut out, row);
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// The first position from `from` on whose row is not below `row`: steps
/// of 1, 2, 4… then a binary search, since with many changes in a batch the
/// next one is mostly near.
fn gallop(batch: &Batch, from: usize, row: &Row) -> usize {
    let n = batch.len();
    let below = |i: usize| batch.row(i) < *row;
    let (mut lo, mut step) = (from, 1);
    while lo + step <= n && below(lo + step - 1) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(n);
    lo + partition(hi - lo, |i| below(lo + i))
}

fn copy(batch: &Batch, from: usize, to: usize, out: &mut Batch) {
    if from < to {
        for (column, source) in out.columns.iter_mut().zip(&batch.columns) {
            column.extend_from_slice(&source[from..to]);
        }
    }
}

fn push(batch: &mut Batch, row: Row) {
    for (column, value) in batch.columns.iter_mut().zip(row) {
        column.push(Id(value));
    }
}

impl Iterator for MergedScan {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        loop {
            match self.base.next() {
                Some(Ok(batch)) => {
                    let merged = self.merge_into(batch);
                    if !merged.is_empty() {
                        return Some(Ok(merged));
                    }
                }
                Some(Err(e)) => return Some(Err(e)),
                None => return self.tail().map(Ok),
            }
        }
    }
}

/// Repeated small scans of a snapshot (see [`Lookup`]).
pub struct MergedLookup {
    base: Lookup,
    /// `None` when the snapshot has no changes.
    changes: Option<ChangeCursor>,
}

impl MergedLookup {
    pub fn new(base: Lookup, runs: Runs, perm: Permutation) -> MergedLookup {
        let changes = (!runs.is_empty()).then(|| ChangeCursor::new(&runs, perm, &[1; 4], &[0; 4]));
        MergedLookup { base, changes }
    }

    /// Calls `each` with every visible row `r` with `lo <= r <= hi`, in order.
    pub fn rows(&mut self, lo: Row, hi: Row, mut each: impl FnMut(Row)) -> Result<()> {
        let Some(changes) = &mut self.changes else {
            return self.base.rows(lo, hi, each);
        };
        changes.reset(&lo, &hi);
        if changes.is_empty() {
            return self.base.rows(lo, hi, each);
        }
        self.base.rows(lo, hi, |row| {
            let mut keep = true;
            while let Some((c, insert)) = changes.peek().filter(|(c, _)| *c <= row) {
                changes.next_change();
                if c == row {
                    // Deleted, or inserted again after a delete: once at most.
                    keep = false;
                }
                if insert {
                    each(c);
                }
            }
            if keep {
                each(row);
            }
        })?;
        while let Some((row, insert)) = changes.next_change() {
            if insert {
                each(row);
            }
        }
        Ok(())
    }
}
