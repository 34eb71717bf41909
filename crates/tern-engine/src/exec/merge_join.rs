//! Merge join of two inputs sorted on the same variable (scans whose
//! permutation puts it right after the bound columns, and what preserves
//! their order): no table is built, both sides stream.

use super::cursor::{Filled, RowCursor};
use super::profile::OperatorInfo;
use super::rows::{Solution, Sources};
use super::{Batch, BatchRamp, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct MergeJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    left: Side,
    right: Side,
    /// (left column, right column) of every shared variable.
    shared: Vec<(usize, usize)>,
    sources: Sources,
    key: Variable,
    /// While the runs of one key are joined: the pairs of rows done. A
    /// skewed key's runs make more rows than a batch holds (3,000 × 3,000
    /// of them), so their pairs are made a batch at a time.
    next_pair: Option<usize>,
    /// Rows its next batch may hold (small first ones under a LIMIT).
    ramp: BatchRamp,
}

/// Pairs of run rows between two looks at the clock when few are compatible.
const PAIRS_PER_CHECK: usize = 4096;

/// One input, read row by row, and the column of the join key.
struct Side {
    cursor: RowCursor,
    key: usize,
    width: usize,
    /// The rows of the current run, one after the other (reused, so that
    /// joining allocates nothing per row).
    run: Vec<Id>,
}

/// The next key of a side.
enum Peeked {
    Key(Id),
    Paused,
    Ended,
}

impl Side {
    fn new(input: BoxedOperator, key: &Variable) -> Side {
        let key = input
            .variables()
            .iter()
            .position(|v| v == key)
            .expect("the join key is a variable of both inputs");
        let width = input.variables().len();
        Side {
            cursor: RowCursor::new(input),
            key,
            width,
            run: Vec::new(),
        }
    }

    /// The key of the next row, reading the next batch when needed.
    fn peek(&mut self, ctx: &QueryContext) -> Result<Peeked, EngineError> {
        Ok(match self.cursor.fill(ctx)? {
            Filled::Row => {
                let (batch, pos) = self.cursor.current();
                Peeked::Key(batch.columns[self.key][pos])
            }
            Filled::Paused => Peeked::Paused,
            Filled::Ended => Peeked::Ended,
        })
    }

    /// Skips the rows of the current batch whose key is below `key` (the
    /// next step looks at the next batch, so that a long skip still passes
    /// the turn checks).
    fn skip_below(&mut self, key: Id) {
        let (batch, pos) = self.cursor.current();
        let below = batch.columns[self.key][pos..].partition_point(|k| *k < key);
        self.cursor.advance(below);
    }

    /// Reads the rows with key `key`, which is the next key, into `run`.
    fn take_run(&mut self, key: Id, ctx: &QueryContext) -> Result<(), EngineError> {
        self.run.clear();
        loop {
            match self.peek(ctx)? {
                Peeked::Key(next) if next == key => {}
                Peeked::Key(_) | Peeked::Ended => return Ok(()),
                // A run is not part of the saved state, so it is read
                // whole; the signal goes back for the join to stop after it.
                Peeked::Paused => {
                    ctx.input_paused(1);
                    continue;
                }
            }
            let (batch, pos) = self.cursor.current();
            // The run's end in this batch (keys are sorted).
            let end = pos + batch.columns[self.key][pos..].partition_point(|k| *k == key);
            for i in pos..end {
                self.run.extend(batch.columns.iter().map(|c| c[i]));
            }
            self.cursor.advance(end - pos);
        }
    }

    fn run_len(&self) -> usize {
        self.run.len() / self.width.max(1)
    }

    fn run_row(&self, i: usize) -> &[Id] {
        &self.run[i * self.width..(i + 1) * self.width]
    }
}

impl MergeJoin {
    /// Joins two inputs both sorted (by ID) on `key`.
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        right: BoxedOperator,
        key: Variable,
    ) -> MergeJoin {
        let (variables, sources) = Solution::merge_schemas(left.variables(), right.variables());
        let shared = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        MergeJoin {
            ctx,
            variables,
            left: Side::new(left, &key),
            right: Side::new(right, &key),
            shared,
            sources,
            key,
            next_pair: None,
            ramp: BatchRamp::default(),
        }
    }

    /// Joins pairs of the current runs' rows from `first` on, until the
    /// batch is full or the clock says stop; returns the next pair to do,
    /// or `None` when the runs are done.
    fn join_runs(&self, first: usize, out: &mut Batch) -> Result<Option<usize>, EngineError> {
        let (left, right) = (&self.left, &self.right);
        let total = left.run_len() * right.run_len();
        let across = right.run_len().max(1);
        let mut pair = first;
        while pair < total {
            let (a, b) = (left.run_row(pair / across), right.run_row(pair % across));
            pair += 1;
            if Solution::compatible(a, b, &self.shared) {
                out.push_merged(a, b, &self.sources);
                if out.len >= self.ramp.limit() {
                    break;
                }
            }
            if pair.is_multiple_of(PAIRS_PER_CHECK) {
                self.ctx.check()?;
                if self.ctx.stop_turn(out.len) {
                    break;
                }
            }
        }
        Ok((pair < total).then_some(pair))
    }
}

impl Operator for MergeJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("MergeJoin", format!("on {}", self.key))
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![
            self.left.cursor.input.as_ref(),
            self.right.cursor.input.as_ref(),
        ]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let mut state = OperatorState::new(
            Vec::new(),
            vec![
                self.left.cursor.save(stash)?,
                self.right.cursor.save(stash)?,
            ],
        );
        // The cursors are past the runs being joined: those go to the stash.
        if let Some(pair) = self.next_pair {
            state.numbers.push(pair as u64);
            let runs = vec![
                std::mem::take(&mut self.left.run),
                std::mem::take(&mut self.right.run),
            ];
            state.stashed = Some(stash.put(runs));
        }
        Ok(state)
    }

    /// Between runs, the state is the two cursors'; in the middle of a run
    /// it needs the stash.
    fn checkpoint(&self) -> Option<OperatorState> {
        if self.next_pair.is_some() {
            return None;
        }
        Some(OperatorState::new(
            Vec::new(),
            vec![
                self.left.cursor.checkpoint()?,
                self.right.cursor.checkpoint()?,
            ],
        ))
    }

    fn small_first_batches(&mut self, rows: usize) {
        self.ramp.start_at(rows);
        self.left.cursor.input.small_first_batches(rows);
        self.right.cursor.input.small_first_batches(rows);
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.next_pair = match (&state.numbers[..], state.stashed) {
            ([], None) => None,
            (&[pair], Some(handle)) => {
                let [left, right]: [Vec<Id>; 2] = stash
                    .take::<Vec<Vec<Id>>>(handle)?
                    .try_into()
                    .map_err(|_| bad_state("merge join runs"))?;
                (self.left.run, self.right.run) = (left, right);
                Some(usize::try_from(pair).map_err(|_| bad_state("merge join pair"))?)
            }
            _ => return Err(bad_state("merge join runs")),
        };
        let [left, right] = state.into_children()?;
        if left.children.len() != 1 || right.children.len() != 1 {
            return Err(bad_state("merge join sides"));
        }
        self.left.cursor.restore(left, stash)?;
        self.right.cursor.restore(right, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let out = Batch::with_columns(self.variables.len());
        let out = self.join_until_full(out)?;
        if out.as_ref().is_some_and(|b| b.len > 0) {
            self.ramp.grow();
        }
        Ok(out)
    }
}

impl MergeJoin {
    /// Joins rows into `out` until it holds what the ramp allows, an input
    /// ends or pauses, or the turn is over (an empty batch says so).
    fn join_until_full(&mut self, mut out: Batch) -> Result<Option<Batch>, EngineError> {
        let mut steps = 0usize;
        while out.len < self.ramp.limit() {
            // Every few steps: a run of a selective join is a row or two,
            // and a join with little output must not hold its worker past
            // the end of the turn.
            if let Some(pair) = self.next_pair {
                self.next_pair = self.join_runs(pair, &mut out)?;
                if self.next_pair.is_some() {
                    // Full, or the turn is over (an empty batch says so).
                    return Ok(Some(out));
                }
                continue;
            }
            steps += 1;
            if steps.is_multiple_of(64) {
                self.ctx.check()?;
                if self.ctx.stop_turn(out.len) {
                    return Ok(Some(out));
                }
            }
            let (l, r) = match (self.left.peek(&self.ctx)?, self.right.peek(&self.ctx)?) {
                (Peeked::Key(l), Peeked::Key(r)) => (l, r),
                (Peeked::Ended, _) | (_, Peeked::Ended) => break,
                _ => {
                    self.ctx.input_paused(out.len);
                    return Ok(Some(out));
                }
            };
            if l < r {
                self.left.skip_below(r);
            } else if r < l {
                self.right.skip_below(l);
            } else {
                self.left.take_run(l, &self.ctx)?;
                self.right.take_run(l, &self.ctx)?;
                self.next_pair = Some(0);
            }
        }
        Ok((out.len > 0).then_some(out))
    }
}
