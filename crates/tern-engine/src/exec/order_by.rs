//! ORDER BY: materializes its input and sorts it with SPARQL's order of terms.

use super::{restore_collected, save_collected, Batch, BoxedOperator, Collector, Operator};
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
    collector: Collector,
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
            collector: Collector::default(),
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

    fn estimated_rows(&self) -> Option<u64> {
        self.input.as_ref()?.estimated_rows()
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
        save_collected(
            self.input.is_none(),
            &mut self.sorted,
            &mut self.collector,
            self.input.as_mut(),
            stash,
        )
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if restore_collected(
            state,
            &mut self.sorted,
            &mut self.collector,
            self.input.as_mut(),
            stash,
        )? {
            self.input = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(input) = self.input.as_mut() {
            if !self.collector.pull(input.as_mut(), &self.ctx)? {
                // The turn ended while the input was pulled in.
                return Ok(Some(Batch::with_columns(self.variables.len())));
            }
            self.input = None;
            let rows = self.collector.take();
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
