//! Evaluates expressions on rows of IDs: decodes the terms an expression reads,
//! calls the term-level evaluator in [`crate::expr`], and turns results back
//! into IDs.

use crate::context::QueryContext;
use crate::exists::Scope;
use crate::{expr, plan, EngineError};
use oxrdf::{Term, Variable};
use spargebra::algebra::Expression;
use std::cell::RefCell;
use std::sync::Arc;
use tern_index::Id;

pub struct RowEvaluator {
    ctx: Arc<QueryContext>,
    expression: Expression,
    variables: Vec<Variable>,
    scope: Arc<Scope>,
}

impl RowEvaluator {
    /// An evaluator of `expression` on rows of `variables`, inside the
    /// pattern `scope` describes.
    pub fn new(
        ctx: Arc<QueryContext>,
        expression: Expression,
        variables: Vec<Variable>,
        scope: Arc<Scope>,
    ) -> RowEvaluator {
        RowEvaluator {
            ctx,
            expression,
            variables,
            scope,
        }
    }

    /// The value of the expression for `row`; `None` for SPARQL errors.
    pub fn evaluate(&self, row: &[Id]) -> Result<Option<Term>, EngineError> {
        let failure: RefCell<Option<EngineError>> = RefCell::new(None);
        let binding = |v: &Variable| -> Option<Term> {
            // Substituted by an enclosing EXISTS: the variable is a constant
            // here, whatever the row says.
            let id = match self.scope.value(v) {
                Some(id) => id,
                None => row[self.variables.iter().position(|x| x == v)?],
            };
            match self.ctx.term(id) {
                Ok(term) => term,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    None
                }
            }
        };
        let exists = |pattern: &spargebra::algebra::GraphPattern,
                      _: &dyn Fn(&Variable) -> Option<Term>|
         -> bool {
            match plan::exists(&self.ctx, pattern, &self.scope, &self.variables, row) {
                Ok(found) => found,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    false
                }
            }
        };
        let eval_ctx = expr::EvalContext {
            now: self.ctx.now,
            base_iri: self.ctx.base_iri.clone(),
            exists: &exists,
        };
        let value = expr::evaluate(&self.expression, &binding, &eval_ctx);
        match failure.into_inner() {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }

    /// Effective boolean value; errors count as false (as FILTER requires).
    pub fn is_true(&self, row: &[Id]) -> Result<bool, EngineError> {
        Ok(self
            .evaluate(row)?
            .and_then(|t| expr::effective_boolean_value(&t))
            .unwrap_or(false))
    }

    /// The value as an ID, [`Id::UNDEFINED`] for errors.
    pub fn evaluate_id(&self, row: &[Id]) -> Result<Id, EngineError> {
        match self.evaluate(row)? {
            Some(term) => self.ctx.intern(&term),
            None => Ok(Id::UNDEFINED),
        }
    }
}

impl std::fmt::Display for RowEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.expression.fmt(f)
    }
}
