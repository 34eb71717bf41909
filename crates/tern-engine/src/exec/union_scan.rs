//! A [`UnionOfPatterns`] read whole: every pattern scanned, every row
//! projected on the union's variables and deduplicated at once (one-column
//! rows as a bitmap of the vocabulary), instead of a tree of unions, sameAs
//! operators and filters under a hash DISTINCT. What the inference
//! rewriting makes of `?x a ub:Person` (43 patterns) counts its instances
//! this way.
//!
//! It reads its patterns first, pausing at the end of a turn with each
//! unfinished pattern's position (a union of 18 M index rows takes longer
//! than a turn), then hands its rows out in sorted order, a batch at a time.
//! Saved while reading, its state is the positions and the rows so far
//! (stashed); saved after, the rows (stashed) and how many it handed out.
//! Its checkpoint, once the rows are read, is how many it handed out:
//! resuming from it computes them again and skips those, so a token that
//! carries it travels to any server.
//!
//! A large union's rows are kept for later queries on the same snapshot
//! (`context::DerivedExtents`); a query that finds them kept reads none.

use super::distinct_rows::DistinctRows;
use super::profile::OperatorInfo;
use super::union_detail::UnionDetail;
use super::union_of_patterns::UnionOfPatterns;
use super::union_whole_scan::BranchTask;
use super::{Batch, Operator, BATCH_ROWS};
use crate::context::{Extent, MemoryCharge, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::{Id, Tag};

pub struct UnionScan {
    ctx: Arc<QueryContext>,
    memory: MemoryCharge,
    union: UnionOfPatterns,
    /// While the patterns are read: what is left to read, and the rows so far.
    reading: Option<Reading>,
    /// The rows, once computed (or as an earlier query kept them).
    rows: Option<Arc<Extent>>,
    /// The key to keep the rows under once computed (a large union).
    keep_as: Option<String>,
    /// Rows handed out (or, before they are computed, to skip).
    handed_out: usize,
    detail: UnionDetail,
}

struct Reading {
    tasks: Vec<BranchTask>,
    sink: DistinctRows,
}

/// `numbers[0]` of a state saved while the patterns were read; then the
/// number of tasks, and per task its branch and `0`, or `1` and the row
/// after which it goes on. The rows so far are stashed.
const READING: u64 = u64::MAX;

/// `numbers[0]` of a state saved with the rows read (stashed); then the
/// rows handed out. A checkpoint is the rows handed out alone (read again
/// on resuming, anywhere).
const STASHED_ROWS: u64 = u64::MAX - 1;

impl UnionScan {
    /// `kept`: the rows, if an earlier query kept them; `keep_as`: the key
    /// to keep the rows it reads under for later queries.
    pub fn new(
        ctx: Arc<QueryContext>,
        union: UnionOfPatterns,
        detail: UnionDetail,
        kept: Option<Arc<Extent>>,
        keep_as: Option<String>,
    ) -> UnionScan {
        UnionScan {
            memory: ctx.memory_charge(),
            ctx,
            union,
            reading: None,
            rows: kept,
            keep_as,
            handed_out: 0,
            detail,
        }
    }

    /// Reads on; `false` when the turn ended first (read on at the next
    /// call).
    fn compute(&mut self) -> Result<bool, EngineError> {
        let width = self.union.variables.len();
        let mut reading = match self.reading.take() {
            Some(reading) => reading,
            None => Reading {
                tasks: self.union.all_tasks(),
                sink: DistinctRows::new(&self.ctx, width),
            },
        };
        let memory = &self.memory;
        let charge = |bytes| memory.set(bytes);
        self.union
            .read_tasks(&self.ctx, &mut reading.tasks, &mut reading.sink, &charge)?;
        if !reading.tasks.is_empty() {
            self.reading = Some(reading);
            // The signal is this operator's: it has no rows yet and
            // returns an empty batch (the threads only looked at the clock).
            self.ctx.should_yield();
            return Ok(false);
        }
        self.union
            .finish_reading(&self.ctx, &mut reading.sink, &charge)?;
        let rows = self.hold(reading.sink.finish())?;
        if let (Some(key), Some(extents)) = (self.keep_as.take(), self.ctx.extents.get()) {
            // A term the index does not hold (a constant or a complex
            // branch's value) has an ID of this query's own, which means
            // another term in another query.
            let local = |id: &Id| id.tag() == Tag::LocalVocab;
            if !rows.columns.iter().any(|c| c.iter().any(local)) {
                extents.offer(key, rows);
            }
        }
        Ok(true)
    }

    /// Keeps the rows read, charged.
    fn hold(&mut self, rows: Batch) -> Result<Arc<Extent>, EngineError> {
        self.memory
            .set((rows.len * rows.columns.len().max(1) * 8) as u64)?;
        let rows = Arc::new(Extent {
            columns: rows.columns,
            len: rows.len,
        });
        self.rows = Some(rows.clone());
        Ok(rows)
    }

    fn save_reading(&mut self, stash: &Stash) -> Option<OperatorState> {
        let reading = self.reading.take()?;
        let mut numbers = vec![READING, reading.tasks.len() as u64];
        for task in &reading.tasks {
            numbers.push(task.branch as u64);
            match task.after {
                None => numbers.push(0),
                Some(row) => {
                    numbers.push(1);
                    numbers.extend(row);
                }
            }
        }
        let mut state = OperatorState::new(numbers, Vec::new());
        state.stashed = Some(stash.put(reading.sink));
        Some(state)
    }

    fn restore_reading(&mut self, state: &OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let bad = || bad_state("union scan positions");
        let count = state.number(1)?;
        let mut tasks = Vec::new();
        let mut at = 2;
        for _ in 0..count {
            let branch = usize::try_from(state.number(at)?).map_err(|_| bad())?;
            if branch >= self.union.branches.len() {
                return Err(bad());
            }
            let after = match state.number(at + 1)? {
                0 => None,
                1 => {
                    let mut row = [0; 4];
                    for (i, value) in row.iter_mut().enumerate() {
                        *value = state.number(at + 2 + i)?;
                    }
                    at += 4;
                    Some(row)
                }
                _ => return Err(bad()),
            };
            at += 2;
            tasks.push(BranchTask { branch, after });
        }
        let sink: DistinctRows = state.take_stashed(stash, "union rows read so far")?;
        if sink.width() != self.union.variables.len() {
            return Err(bad());
        }
        self.reading = Some(Reading { tasks, sink });
        Ok(())
    }
}

impl Operator for UnionScan {
    fn variables(&self) -> &[Variable] {
        &self.union.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        Some(self.union.estimated_rows())
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo {
            name: "UnionScan",
            detail: self.detail.describe(&self.ctx, &self.union),
            blocks_read: None,
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.union.complex().iter().map(|c| c.as_ref()).collect()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        if let Some(state) = self.save_reading(stash) {
            return Ok(state);
        }
        // The rows are kept rather than read again: reading them may have
        // taken many turns. Rows the snapshot's derived extents hold too
        // are not copied into the stash: the resumed plan finds them there
        // (or, if they were dropped since, reads them again), so the
        // handed-out count is all the state.
        if let Some(rows) = self.rows.take() {
            let Ok(rows) = Arc::try_unwrap(rows) else {
                return Ok(OperatorState::new(vec![self.handed_out as u64], Vec::new()));
            };
            let rows = Batch {
                columns: rows.columns,
                len: rows.len,
            };
            let mut state =
                OperatorState::new(vec![STASHED_ROWS, self.handed_out as u64], Vec::new());
            state.stashed = Some(stash.put(rows));
            return Ok(state);
        }
        Ok(OperatorState::new(vec![self.handed_out as u64], Vec::new()))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        // The rows read so far would have to be stashed.
        if self.reading.is_some() {
            return None;
        }
        Some(OperatorState::new(vec![self.handed_out as u64], Vec::new()))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.reading = None;
        self.handed_out = 0;
        match state.number(0)? {
            READING => {
                self.rows = None;
                return self.restore_reading(&state, stash);
            }
            STASHED_ROWS => {
                let rows: Batch = state.take_stashed(stash, "union rows")?;
                let handed_out = usize::try_from(state.number(1)?)
                    .ok()
                    .filter(|&n| n <= rows.len && rows.columns.len() == self.union.variables.len())
                    .ok_or_else(|| bad_state("union scan rows"))?;
                self.hold(rows)?;
                self.handed_out = handed_out;
                return Ok(());
            }
            _ => {}
        }
        // Rows an earlier query kept (if any) are those computing them
        // again would give.
        self.handed_out =
            usize::try_from(state.number(0)?).map_err(|_| bad_state("union scan rows"))?;
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if self.rows.is_none() && !self.compute()? {
            return Ok(Some(Batch::with_columns(self.union.variables.len())));
        }
        let rows = self.rows.as_ref().expect("computed");
        if self.handed_out >= rows.len {
            self.memory.set(0)?;
            return Ok(None);
        }
        let end = (self.handed_out + BATCH_ROWS).min(rows.len);
        let mut out = Batch::with_columns(rows.columns.len());
        for (to, from) in out.columns.iter_mut().zip(&rows.columns) {
            to.extend_from_slice(&from[self.handed_out..end]);
        }
        out.len = end - self.handed_out;
        self.handed_out = end;
        self.ctx.check()?;
        Ok(Some(out))
    }
}
