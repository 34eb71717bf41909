//! MINUS: left rows that have no compatible right row sharing a bound variable.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, BuildSide, Operator, Solution};
use crate::context::QueryContext;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct Minus {
    ctx: Arc<QueryContext>,
    left: BoxedOperator,
    right: BuildSide,
    shared: Vec<(usize, usize)>,
}

impl Minus {
    pub fn new(ctx: Arc<QueryContext>, left: BoxedOperator, right: BoxedOperator) -> Minus {
        let (_, sources) = Solution::merge_schemas(left.variables(), right.variables());
        let shared: Vec<(usize, usize)> = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        Minus {
            ctx,
            left,
            right: BuildSide::new(right, shared.iter().map(|&(_, r)| r).collect()),
            shared,
        }
    }
}

impl Operator for Minus {
    fn variables(&self) -> &[Variable] {
        self.left.variables()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "Minus",
            super::join_detail(&self.shared, self.left.variables()),
        )
    }

    fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.left.as_ref()];
        children.extend(self.right.input());
        children
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.left.save(stash)?;
        let table = self.right.save(stash)?;
        Ok(OperatorState::new(Vec::new(), vec![streamed, table]))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [streamed, table] = state.into_children()?;
        self.left.restore(streamed, stash)?;
        self.right.restore(table, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.left.variables().len();
        let Some(table) = self.right.table(&self.ctx)? else {
            // The turn ended while the right side was pulled in.
            return Ok(Some(Batch::with_columns(width)));
        };
        loop {
            let Some(batch) = self.left.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            if batch.len == 0 {
                return Ok(Some(batch)); // the left side paused
            }
            let out = batch.retain_rows(|left| {
                let columns = self.shared.iter().map(|&(l, _)| l);
                let removed = table.probe_from(left, columns, 0).any(|c| {
                    let right = table.row(c);
                    let overlaps = self
                        .shared
                        .iter()
                        .any(|&(l, r)| left[l] != Id::UNDEFINED && right[r] != Id::UNDEFINED);
                    overlaps && Solution::compatible(left, right, &self.shared)
                });
                Ok(!removed)
            })?;
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
    }
}
