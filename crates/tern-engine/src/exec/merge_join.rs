//! Merge join of two inputs sorted on the same variable (scans whose
//! permutation puts it right after the bound columns, and what preserves
//! their order): no table is built, both sides stream.

use super::cursor::RowCursor;
use super::rows::{Solution, Sources};
use super::{Batch, BoxedOperator, Operator, BATCH_ROWS};
use crate::context::QueryContext;
use crate::profile::OperatorInfo;
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
    fn peek(&mut self, ctx: &QueryContext) -> Result<Option<Id>, EngineError> {
        if !self.cursor.fill(ctx)? {
            return Ok(None);
        }
        let (batch, pos) = self.cursor.current();
        Ok(Some(batch.columns[self.key][pos]))
    }

    /// Skips rows whose key is below `key`.
    fn skip_below(&mut self, key: Id, ctx: &QueryContext) -> Result<(), EngineError> {
        while let Some(next) = self.peek(ctx)? {
            if next >= key {
                break;
            }
            let (batch, pos) = self.cursor.current();
            let below = batch.columns[self.key][pos..].partition_point(|k| *k < key);
            self.cursor.advance(below);
        }
        Ok(())
    }

    /// Reads the rows with key `key`, which is the next key, into `run`.
    fn take_run(&mut self, key: Id, ctx: &QueryContext) -> Result<(), EngineError> {
        self.run.clear();
        while self.peek(ctx)? == Some(key) {
            let (batch, pos) = self.cursor.current();
            // The run's end in this batch (keys are sorted).
            let end = pos + batch.columns[self.key][pos..].partition_point(|k| *k == key);
            for i in pos..end {
                self.run.extend(batch.columns.iter().map(|c| c[i]));
            }
            self.cursor.advance(end - pos);
        }
        Ok(())
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
        let mut runs = 0usize;
        while out.len < BATCH_ROWS {
            let (Some(l), Some(r)) = (self.left.peek(&self.ctx)?, self.right.peek(&self.ctx)?)
            else {
                break;
            };
            if l < r {
                self.left.skip_below(r, &self.ctx)?;
            } else if r < l {
                self.right.skip_below(l, &self.ctx)?;
            } else {
                // Every few runs: a run of a selective join is a row or two.
                runs += 1;
                if runs.is_multiple_of(64) {
                    self.ctx.check()?;
                }
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
