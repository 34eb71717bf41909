//! Keeps the rows whose value of one variable lies in a copy's morsels:
//! the build side of a hash join in one of several copies of a pipeline
//! (`ParallelPipelines`). Each copy's probe rows come from its own morsels
//! of the driving scan, so only build rows with the same values can join
//! them; each copy then hashes its share of the build side instead of all
//! of it. A row that leaves the variable unbound joins any value and stays
//! in every copy.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct MorselFilter {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    column: usize,
    /// The values kept: sorted, disjoint ranges (first and last included).
    ranges: Vec<(u64, u64)>,
}

impl MorselFilter {
    /// `None` if the input has no column for `variable`.
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        variable: &Variable,
        ranges: Vec<(u64, u64)>,
    ) -> Result<MorselFilter, BoxedOperator> {
        match input.variables().iter().position(|v| v == variable) {
            Some(column) => Ok(MorselFilter {
                ctx,
                input,
                column,
                ranges,
            }),
            None => Err(input),
        }
    }
}

/// Whether `id` is in one of `ranges` (sorted and disjoint), or unbound.
fn keeps(ranges: &[(u64, u64)], id: Id) -> bool {
    if id == Id::UNDEFINED {
        return true;
    }
    let at = ranges.partition_point(|&(_, last)| last < id.0);
    ranges.get(at).is_some_and(|&(first, _)| first <= id.0)
}

impl Operator for MorselFilter {
    fn variables(&self) -> &[Variable] {
        self.input.variables()
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "MorselFilter",
            format!(
                "{} in this copy's {} morsels",
                self.input.variables()[self.column],
                self.ranges.len()
            ),
        )
    }

    fn small_first_batches(&mut self, rows: usize) {
        self.input.small_first_batches(rows);
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.input.save(stash)?))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.input.checkpoint().map(OperatorState::wrapping)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let (column, ranges) = (self.column, &self.ranges);
        super::filter::next_kept(&mut self.input, &self.ctx, |batch| {
            Ok(batch.columns[column]
                .iter()
                .map(|&id| keeps(ranges, id))
                .collect())
        })
    }
}
