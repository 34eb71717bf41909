//! ORDER BY: materializes its input and sorts it with SPARQL's order of terms.

use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::expr_eval::RowEvaluator;
use crate::profile::OperatorInfo;
use crate::suspend::{OperatorState, Stash};
use crate::{expr, EngineError};
use oxrdf::{Term, Variable};
use rayon::slice::ParallelSliceMut;
use spargebra::algebra::OrderExpression;
use std::sync::Arc;
use tern_index::Id;

pub struct OrderBy {
    ctx: Arc<QueryContext>,
    input: Option<BoxedOperator>,
    variables: Vec<Variable>,
    keys: Vec<(RowEvaluator, bool)>,
    sorted: std::vec::IntoIter<Vec<Id>>,
}

impl OrderBy {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        order: Vec<OrderExpression>,
        scope: Arc<crate::exists::Scope>,
    ) -> OrderBy {
        let variables = input.variables().to_vec();
        let keys = order
            .into_iter()
            .map(|o| match o {
                OrderExpression::Asc(e) => (
                    RowEvaluator::new(ctx.clone(), e, variables.clone(), scope.clone()),
                    true,
                ),
                OrderExpression::Desc(e) => (
                    RowEvaluator::new(ctx.clone(), e, variables.clone(), scope.clone()),
                    false,
                ),
            })
            .collect();
        OrderBy {
            ctx,
            input: Some(input),
            variables,
            keys,
            sorted: Vec::new().into_iter(),
        }
    }
}

impl OrderBy {
    fn describe_keys(&self) -> String {
        self.keys
            .iter()
            .map(|(k, asc)| {
                if *asc {
                    format!("ASC({k})")
                } else {
                    format!("DESC({k})")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Operator for OrderBy {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("OrderBy", self.describe_keys())
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input
            .as_deref()
            .map(|i| i as &dyn Operator)
            .into_iter()
            .collect()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        super::save_materialized(
            self.input.is_none(),
            &mut self.sorted,
            self.input.as_mut(),
            stash,
        )
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if super::restore_materialized(state, &mut self.sorted, self.input.as_mut(), stash)? {
            self.input = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(mut input) = self.input.take() {
            let rows = super::collect_rows(input.as_mut(), &self.ctx)?;
            // Sort keys are computed and sorted on all cores.
            let keys = super::map_indexes(rows.len(), |i| {
                if i % 4096 == 0 {
                    self.ctx.check()?;
                }
                self.keys
                    .iter()
                    .map(|(k, _)| k.evaluate(&rows[i]))
                    .collect::<Result<Vec<Option<Term>>, _>>()
            })?;
            let mut keyed: Vec<(Vec<Option<Term>>, Vec<Id>)> = keys.into_iter().zip(rows).collect();
            let ascending: Vec<bool> = self.keys.iter().map(|(_, a)| *a).collect();
            keyed.par_sort_by(|(a, _), (b, _)| {
                for (i, asc) in ascending.iter().enumerate() {
                    let o = expr::order_cmp(a[i].as_ref(), b[i].as_ref());
                    let o = if *asc { o } else { o.reverse() };
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
            self.sorted = keyed
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter();
        }
        self.ctx.check()?;
        Ok(super::next_chunk(&mut self.sorted, self.variables.len()))
    }
}
