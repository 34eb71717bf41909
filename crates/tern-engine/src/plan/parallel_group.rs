//! GROUP BY on one core (`Group`) or in partitions on all cores
//! (`ParallelGroup`): partitions when the rows to group are made by copies
//! of a join tree on all cores and expected to be as many as make one, and
//! there is a key to route them by (without GROUP BY all rows make one
//! group).

use super::decode_order;
use super::parallel::PARALLEL_MIN_ROWS;
use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, Group, ParallelGroup, ParallelPipelines};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::{AggregateExpression, GraphPattern};
use spargebra::term::TriplePattern;

impl Planner {
    pub(super) fn plan_grouping(
        &self,
        inner: &GraphPattern,
        keys: &[Variable],
        aggregates: &[(Variable, AggregateExpression)],
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let input = match grouped_in_key_order(inner, keys) {
            Some(patterns) => {
                self.plan_ranged_bgp(patterns, graph, &[decode_order::object_order(&keys[0])])?
            }
            None => self.plan(inner, graph)?,
        };
        let parts = ParallelPipelines::parts(&self.ctx);
        let from_rows = self.ctx.parallel_from_rows().unwrap_or(PARALLEL_MIN_ROWS);
        // Over rows made on one core the routing (a copy of every row, on
        // one core) costs more than grouping them where groups are few:
        // WatDiv's friends-of-friends counted by product, 95 -> 170 ms.
        // Over copies, the input's own work is shared out and the groups
        // are as a rule many (BSBM BI Q03: 213 K). Told to partition
        // whatever the size (`parallel_from_rows` 0), it does.
        let many = input.estimated_rows().is_some_and(|rows| rows >= from_rows)
            && (input.runs_as_copies() || from_rows == 0);
        let (keys, aggregates, scope) = (keys.to_vec(), aggregates.to_vec(), self.scope(graph));
        Ok(if parts >= 2 && !keys.is_empty() && many {
            let group = ParallelGroup::new(self.ctx.clone(), input, keys, aggregates, scope, parts);
            Box::new(group)
        } else {
            Box::new(Group::new(self.ctx.clone(), input, keys, aggregates, scope))
        })
    }
}

/// A GROUP BY of one variable, the object of a lone pattern (`?x bib:cites
/// ?d` grouped by `?d`), is fed by a scan in the object's order (asked for as
/// `decode_order` asks): rows of one group then come one after another, and
/// the grouping finds each row's group without hashing (the group of the
/// row before). In subject order every row is a hash lookup into all the
/// groups (482 K at 10M triples).
fn grouped_in_key_order<'a>(
    inner: &'a GraphPattern,
    keys: &[Variable],
) -> Option<&'a [TriplePattern]> {
    let (GraphPattern::Bgp { patterns }, [key]) = (inner, keys) else {
        return None;
    };
    match patterns.as_slice() {
        [pattern] if decode_order::orderable_object(pattern) == Some(key) => Some(patterns),
        _ => None,
    }
}
