//! BIND: adds a column computed by an expression (unbound where it errors).

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::expr::RowEvaluator;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::Arc;

pub struct Extend {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    variables: Vec<Variable>,
    expression: RowEvaluator,
}

impl Extend {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        variable: Variable,
        expression: Expression,
        scope: Arc<crate::expr::Scope>,
    ) -> Extend {
        let expression =
            RowEvaluator::new(ctx.clone(), expression, input.variables().to_vec(), scope);
        let mut variables = input.variables().to_vec();
        variables.push(variable);
        Extend {
            ctx,
            input,
            variables,
            expression,
        }
    }
}

impl Operator for Extend {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "Bind",
            format!(
                "{} := {}",
                self.variables[self.variables.len() - 1],
                self.expression
            ),
        )
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.input.save(stash)?))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.input.restore(state.into_child()?, stash)
    }

    fn first_rows_only(&mut self, rows: usize) {
        self.input.first_rows_only(rows);
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let Some(mut batch) = self.input.next_batch()? else {
            return Ok(None);
        };
        self.ctx.check()?;
        let column = super::map_rows(&batch, |row| self.expression.evaluate_id(row))?;
        batch.columns.push(column);
        Ok(Some(batch))
    }
}
