//! Merge join of two inputs sorted on the same variable (scans whose
//! permutation puts it right after the bound columns, and what preserves
//! their order): no table is built, both sides stream.

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

/// One input: its current batch and the position in it.
struct Side {
    input: BoxedOperator,
    key: usize,
    batch: Option<Batch>,
    pos: usize,
    done: bool,
}

impl Side {
    fn new(input: BoxedOperator, key: &Variable) -> Side {
        let key = input
            .variables()
            .iter()
            .position(|v| v == key)
            .expect("the join key is a variable of both inputs");
        Side {
            input,
            key,
            batch: None,
            pos: 0,
            done: false,
        }
    }

    /// The key of the next row, reading the next batch when needed.
    fn peek(&mut self) -> Result<Option<Id>, EngineError> {
        loop {
            if let Some(batch) = &self.batch {
                if self.pos < batch.len {
                    return Ok(Some(batch.columns[self.key][self.pos]));
                }
            }
            if self.done {
                return Ok(None);
            }
            self.batch = self.input.next_batch()?;
            self.pos = 0;
            self.done = self.batch.is_none();
        }
    }

    /// Skips rows whose key is below `key`.
    fn skip_below(&mut self, key: Id) -> Result<(), EngineError> {
        while let Some(next) = self.peek()? {
            if next >= key {
                break;
            }
            let batch = self.batch.as_ref().expect("peeked");
            let keys = &batch.columns[self.key][self.pos..];
            self.pos += keys.partition_point(|k| *k < key);
        }
        Ok(())
    }

    /// The rows with key `key`, which is the next key.
    fn take_run(&mut self, key: Id) -> Result<Vec<Vec<Id>>, EngineError> {
        let mut run = Vec::new();
        while self.peek()? == Some(key) {
            let batch = self.batch.as_ref().expect("peeked");
            run.push(batch.row(self.pos));
            self.pos += 1;
        }
        Ok(run)
    }

    /// The rows read but not yet used, and whether the input had ended.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let rest = self.batch.take().filter(|b| self.pos < b.len).map(|b| {
            let pos = self.pos;
            Batch {
                columns: b.columns.into_iter().map(|c| c[pos..].to_vec()).collect(),
                len: b.len - pos,
            }
        });
        Ok(OperatorState {
            numbers: vec![u64::from(self.done)],
            stashed: rest.map(|b| stash.put(b)),
            children: vec![self.input.save(stash)?],
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.done = state.number(0)? == 1;
        self.batch = match state.stashed {
            Some(handle) => Some(stash.take(handle)?),
            None => None,
        };
        self.pos = 0;
        self.input.restore(state.into_child()?, stash)
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
        vec![self.left.input.as_ref(), self.right.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::new(
            Vec::new(),
            vec![self.left.save(stash)?, self.right.save(stash)?],
        ))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [left, right] = state.into_children()?;
        if left.children.len() != 1 || right.children.len() != 1 {
            return Err(bad_state("merge join sides"));
        }
        self.left.restore(left, stash)?;
        self.right.restore(right, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let mut out = Batch::with_columns(self.variables.len());
        while out.len < BATCH_ROWS {
            let (Some(l), Some(r)) = (self.left.peek()?, self.right.peek()?) else {
                break;
            };
            if l < r {
                self.left.skip_below(r)?;
            } else if r < l {
                self.right.skip_below(l)?;
            } else {
                self.ctx.check()?;
                let left_run = self.left.take_run(l)?;
                let right_run = self.right.take_run(l)?;
                for a in &left_run {
                    for b in &right_run {
                        if Solution::compatible(a, b, &self.shared) {
                            out.push_row(&Solution::merge(a, b, &self.sources));
                        }
                    }
                }
            }
        }
        Ok((out.len > 0).then_some(out))
    }
}
