//! FILTER: conjuncts that are (NOT) EXISTS of a suitable pattern become
//! semi (anti) joins ([`exists`]) after a filter of the other conjuncts.

use super::exists;
use super::optional::per_row_is_cheaper;
use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, Filter, Measured, SemiJoin};
use crate::EngineError;
use spargebra::algebra::Expression;

impl Planner {
    /// FILTER: conjuncts that are (NOT) EXISTS of a suitable pattern become
    /// semi (anti) joins after a filter of the other conjuncts. A row passes
    /// `A && B` exactly when it passes both, in either order.
    pub(super) fn plan_filter(
        &self,
        expression: &Expression,
        input: BoxedOperator,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let mut rest = Vec::new();
        let mut joins = Vec::new();
        for conjunct in exists::conjuncts(expression) {
            let Some(spec) = exists::as_semi_join(&conjunct, input.variables()) else {
                rest.push(conjunct);
                continue;
            };
            let pattern = self.plan(&spec.pattern, graph)?;
            // A few rows are cheaper checked one by one (the pattern
            // planned with each row's values) than against the pattern
            // evaluated whole.
            if per_row_is_cheaper(input.estimated_rows(), pattern.estimated_rows()) {
                rest.push(conjunct);
            } else {
                joins.push((spec, pattern));
            }
        }
        if joins.is_empty() {
            return Ok(Box::new(Filter::new(
                self.ctx.clone(),
                input,
                expression.clone(),
                self.scope(graph),
            )));
        }
        let mut operator = input;
        if let Some(rest) = exists::and_all(rest) {
            operator = Box::new(Measured::new(
                Box::new(Filter::new(
                    self.ctx.clone(),
                    operator,
                    rest,
                    self.scope(graph),
                )),
                None,
            ));
        }
        let last = joins.len() - 1;
        for (i, (spec, pattern)) in joins.into_iter().enumerate() {
            let join: BoxedOperator = Box::new(SemiJoin::new(
                self.ctx.clone(),
                operator,
                pattern,
                spec.residual,
                spec.anti,
                self.scope(graph),
            ));
            // The caller measures the outermost one.
            operator = if i == last {
                join
            } else {
                Box::new(Measured::new(join, None))
            };
        }
        Ok(operator)
    }
}
