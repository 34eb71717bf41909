//! MINUS: left rows that have no compatible right row sharing a bound variable.

use super::{Batch, BoxedOperator, Operator, RowTable, Solution};
use crate::context::QueryContext;
use crate::profile::OperatorInfo;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct Minus {
    ctx: Arc<QueryContext>,
    left: BoxedOperator,
    right: Option<BoxedOperator>,
    table: Option<RowTable>,
    shared: Vec<(usize, usize)>,
}

impl Minus {
    pub fn new(ctx: Arc<QueryContext>, left: BoxedOperator, right: BoxedOperator) -> Minus {
        let (_, sources) = Solution::merge_schemas(left.variables(), right.variables());
        let shared = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        Minus {
            ctx,
            left,
            right: Some(right),
            table: None,
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
        children.extend(self.right.as_deref().map(|b| b as &dyn Operator));
        children
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.left.save(stash)?;
        let table = RowTable::save(&mut self.table, self.right.as_mut(), stash)?;
        Ok(OperatorState::new(Vec::new(), vec![streamed, table]))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [streamed, table] = state.into_children()?;
        self.left.restore(streamed, stash)?;
        RowTable::restore(table, &mut self.table, &mut self.right, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(mut right) = self.right.take() {
            self.table = Some(RowTable::build(right.as_mut(), &self.shared, &self.ctx)?);
        }
        let table = self.table.as_ref().expect("built above");
        loop {
            let Some(batch) = self.left.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            let out = batch.retain_rows(|left| {
                let key: Vec<Id> = self.shared.iter().map(|&(l, _)| left[l]).collect();
                let removed = table.candidates(&key).into_iter().any(|c| {
                    let right = &table.rows[c as usize];
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
