//! FILTER: conjuncts that are (NOT) EXISTS of a suitable pattern become
//! semi (anti) joins ([`exists`]) after a filter of the other conjuncts.

use super::exists;
use super::optional::per_row_is_cheaper;
use super::planner::{GraphContext, Planner};
use crate::exec::{BoxedOperator, Filter, IndexJoin, Measured, SemiJoin, Values};
use crate::EngineError;
use spargebra::algebra::{Expression, GraphPattern};

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
        let mut lookups = Vec::new();
        for conjunct in exists::conjuncts(expression) {
            let Some(spec) = exists::as_semi_join(&conjunct, input.variables()) else {
                rest.push(conjunct);
                continue;
            };
            // One triple pattern sharing a variable with the rows: looked up
            // per row (see `IndexJoin::existence`, which turns to reading it
            // whole when that is cheaper). Sharing none, it is evaluated
            // once by the semi join.
            if let (None, GraphPattern::Bgp { patterns }) = (&spec.residual, &spec.pattern) {
                if let [pattern] = patterns.as_slice() {
                    let (variables, scan) = self.resolve_pattern(pattern, graph, &[])?;
                    if variables.iter().any(|v| input.variables().contains(v)) {
                        lookups.push((spec.anti, scan));
                        continue;
                    }
                }
            }
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
        if joins.is_empty() && lookups.is_empty() {
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
        for (anti, scan) in lookups {
            operator = match scan {
                Some((_, variables, pattern)) => Box::new(Measured::new(
                    Box::new(IndexJoin::existence(
                        self.ctx.clone(),
                        operator,
                        variables,
                        pattern,
                        anti,
                    )),
                    None,
                )),
                // A constant the index does not hold: no row has a match.
                None if anti => operator,
                None => Box::new(Values::empty(operator.variables().to_vec())),
            };
        }
        let Some(last) = joins.len().checked_sub(1) else {
            return Ok(operator);
        };
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
