//! GROUP BY on one core (`Group`) or in partitions on all cores
//! (`ParallelGroup`): partitions when the rows expected to be grouped are
//! as many as would make a join tree run as copies, and there is a key to
//! route them by (without GROUP BY all rows make one group).

use super::parallel::PARALLEL_MIN_ROWS;
use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, Group, ParallelGroup, ParallelPipelines};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::{AggregateExpression, GraphPattern};

impl Planner {
    pub(super) fn plan_grouping(
        &self,
        inner: &GraphPattern,
        keys: &[Variable],
        aggregates: &[(Variable, AggregateExpression)],
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let input = self.plan(inner, graph)?;
        let parts = ParallelPipelines::parts(&self.ctx);
        let from_rows = self.ctx.parallel_from_rows().unwrap_or(PARALLEL_MIN_ROWS);
        let many = input.estimated_rows().is_some_and(|rows| rows >= from_rows);
        let (keys, aggregates, scope) = (keys.to_vec(), aggregates.to_vec(), self.scope(graph));
        Ok(if parts >= 2 && !keys.is_empty() && many {
            let group = ParallelGroup::new(self.ctx.clone(), input, keys, aggregates, scope, parts);
            Box::new(group)
        } else {
            Box::new(Group::new(self.ctx.clone(), input, keys, aggregates, scope))
        })
    }
}
