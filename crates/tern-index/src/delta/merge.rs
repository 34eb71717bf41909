//! Scans that merge the base index's rows with the delta's changes.

use super::Runs;
use crate::error::Result;
use crate::permutation::{Batch, Lookup, Permutation, Row, ScanIter, BLOCK_ROWS};
use crate::Id;

/// A scan of a snapshot: the base's batches with the delta's changes in
/// their range merged in (inserted rows added in order, deleted rows left
/// out). With no change in range it is the base scan itself.
pub struct MergedScan {
    base: ScanIter,
    /// The delta's visible state in the scan's range, sorted.
    changes: Vec<(Row, bool)>,
    /// The first change not merged yet.
    next_change: usize,
}

impl MergedScan {
    pub fn new(base: ScanIter, runs: &Runs, perm: Permutation, lo: &Row, hi: &Row) -> MergedScan {
        let changes = if runs.is_empty() || lo > hi {
            Vec::new()
        } else {
            runs.resolve(perm, lo, hi)
        };
        MergedScan {
            base,
            changes,
            next_change: 0,
        }
    }

    /// Number of base blocks decoded so far.
    pub fn blocks_read(&self) -> u64 {
        self.base.blocks_read()
    }

    /// Continues after `row` (see [`ScanIter::resume_after`]).
    pub fn resume_after(&mut self, row: Row) {
        self.base.resume_after(row);
        self.next_change = self.changes.partition_point(|(r, _)| *r <= row);
    }

    /// The base batch with the changes up to its last row merged in.
    fn merge_into(&mut self, batch: Batch) -> Batch {
        let last = batch.row(batch.len() - 1);
        let end = self.next_change
            + self.changes[self.next_change..].partition_point(|(r, _)| *r <= last);
        let changes = &self.changes[self.next_change..end];
        self.next_change = end;
        if changes.is_empty() {
            return batch;
        }
        let mut out = Batch::default();
        let (mut i, mut j) = (0, 0);
        while i < batch.len() || j < changes.len() {
            let base_row = (i < batch.len()).then(|| batch.row(i));
            match (base_row, changes.get(j)) {
                (Some(b), Some(&(c, insert))) if c <= b => {
                    if insert {
                        push(&mut out, c);
                    }
                    if c == b {
                        i += 1;
                    }
                    j += 1;
                }
                (Some(b), _) => {
                    push(&mut out, b);
                    i += 1;
                }
                (None, Some(&(c, insert))) => {
                    if insert {
                        push(&mut out, c);
                    }
                    j += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
        out
    }

    /// Inserted rows after the base's last row, a batch at a time.
    fn tail(&mut self) -> Option<Batch> {
        let mut out = Batch::default();
        while out.len() < BLOCK_ROWS {
            let Some(&(row, insert)) = self.changes.get(self.next_change) else {
                break;
            };
            self.next_change += 1;
            if insert {
                push(&mut out, row);
            }
        }
        (!out.is_empty()).then_some(out)
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
                    if self.next_change == self.changes.len() {
                        return Some(Ok(batch));
                    }
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
    runs: Runs,
    perm: Permutation,
}

impl MergedLookup {
    pub fn new(base: Lookup, runs: Runs, perm: Permutation) -> MergedLookup {
        MergedLookup { base, runs, perm }
    }

    /// Calls `each` with every visible row `r` with `lo <= r <= hi`, in order.
    pub fn rows(&mut self, lo: Row, hi: Row, mut each: impl FnMut(Row)) -> Result<()> {
        if self.runs.is_empty() {
            return self.base.rows(lo, hi, each);
        }
        let changes = self.runs.resolve(self.perm, &lo, &hi);
        if changes.is_empty() {
            return self.base.rows(lo, hi, each);
        }
        let mut changes = changes.into_iter().peekable();
        self.base.rows(lo, hi, |row| {
            let mut keep = true;
            while let Some(&(c, insert)) = changes.peek() {
                if c > row {
                    break;
                }
                changes.next();
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
        for (row, insert) in changes {
            if insert {
                each(row);
            }
        }
        Ok(())
    }
}
