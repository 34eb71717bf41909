//! Merge join of two inputs sorted on the same variable (scans whose
//! permutation puts it right after the bound columns, and what preserves
//! their order): no table is built, both sides stream.

use super::cursor::{Filled, RowCursor};
use super::profile::OperatorInfo;
use super::rows::{Solution, Sources};
use super::{Batch, BoxedOperator, Operator, BATCH_ROWS};
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
}

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

    fn run_rows(&self) -> std::slice::ChunksExact<'_, Id> {
        self.run.chunks_exact(self.width.max(1))
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
        }
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
        Ok(OperatorState::new(
            Vec::new(),
            vec![
                self.left.cursor.save(stash)?,
                self.right.cursor.save(stash)?,
            ],
        ))
    }

    /// Runs of equal keys are joined whole, so between batches the state
    /// is the two cursors'.
    fn checkpoint(&self) -> Option<OperatorState> {
        Some(OperatorState::new(
            Vec::new(),
            vec![
                self.left.cursor.checkpoint()?,
                self.right.cursor.checkpoint()?,
            ],
        ))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [left, right] = state.into_children()?;
        if left.children.len() != 1 || right.children.len() != 1 {
            return Err(bad_state("merge join sides"));
        }
        self.left.cursor.restore(left, stash)?;
        self.right.cursor.restore(right, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let mut out = Batch::with_columns(self.variables.len());
        let mut steps = 0usize;
        while out.len < BATCH_ROWS {
            // Every few steps: a run of a selective join is a row or two,
            // and a join with little output must not hold its worker past
            // the end of the turn.
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
                for a in self.left.run_rows() {
                    for b in self.right.run_rows() {
                        if Solution::compatible(a, b, &self.shared) {
                            out.push_merged(a, b, &self.sources);
                        }
                    }
                }
            }
        }
        Ok((out.len > 0).then_some(out))
    }
}
