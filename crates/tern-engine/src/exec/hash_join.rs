//! Inner join: the build side is materialized into a [`RowTable`] keyed on the
//! shared variables; the probe side streams through.

use super::cursor::RowCursor;
use super::{Batch, BoxedOperator, Operator, RowTable, Solution, BATCH_ROWS};
use crate::context::QueryContext;
use crate::profile::OperatorInfo;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct HashJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    probe: RowCursor,
    build: Option<BoxedOperator>,
    table: Option<RowTable>,
    /// (probe column, build column) of each shared variable.
    shared: Vec<(usize, usize)>,
    /// For each output column, its source in (probe, build).
    sources: Vec<(Option<usize>, Option<usize>)>,
}

impl HashJoin {
    /// Joins `probe` with `build`; `build` should be the smaller input.
    pub fn new(ctx: Arc<QueryContext>, probe: BoxedOperator, build: BoxedOperator) -> HashJoin {
        let (variables, sources) = Solution::merge_schemas(probe.variables(), build.variables());
        let shared = sources
            .iter()
            .filter_map(|&(l, r)| Some((l?, r?)))
            .collect();
        HashJoin {
            ctx,
            variables,
            probe: RowCursor::new(probe),
            build: Some(build),
            table: None,
            shared,
            sources,
        }
    }
}

impl Operator for HashJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "HashJoin",
            super::join_detail(&self.shared, self.probe.input.variables()),
        )
    }

    fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.probe.input.as_ref()];
        children.extend(self.build.as_deref().map(|b| b as &dyn Operator));
        children
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.probe.save(stash)?;
        let table = RowTable::save(&mut self.table, self.build.as_mut(), stash)?;
        Ok(OperatorState::new(Vec::new(), vec![streamed, table]))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [streamed, table] = state.into_children()?;
        self.probe.restore(streamed, stash)?;
        RowTable::restore(table, &mut self.table, &mut self.build, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(mut build) = self.build.take() {
            self.table = Some(RowTable::build(build.as_mut(), &self.shared, &self.ctx)?);
        }
        let table = self.table.as_ref().expect("built above");
        let width = self.variables.len();
        let mut out = Batch::with_columns(width);
        if table.rows.is_empty() {
            return Ok(None);
        }
        while out.len < BATCH_ROWS {
            let Some(left) = self.probe.next_row(&self.ctx)? else {
                break;
            };
            let key: Vec<Id> = self.shared.iter().map(|&(l, _)| left[l]).collect();
            for candidate in table.candidates(&key) {
                let right = &table.rows[candidate as usize];
                if Solution::compatible(&left, right, &self.shared) {
                    out.push_row(&Solution::merge(&left, right, &self.sources));
                }
            }
        }
        self.ctx.check_memory((out.len * (width * 8 + 24)) as u64)?;
        Ok((out.len > 0).then_some(out))
    }
}
