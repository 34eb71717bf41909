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
use tern_index::{Id, Tag};

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
            let first_literal = self.ctx.index.first_literal()?;
            let by_id: Vec<Option<usize>> = self
                .keys
                .iter()
                .map(|(k, _)| {
                    k.plain_column()
                        .filter(|&c| ids_in_term_order(&rows, c, first_literal))
                })
                .collect();
            // Sort keys are computed and sorted on all cores.
            let keys = super::map_indexes(rows.len(), |i| {
                if i % 4096 == 0 {
                    self.ctx.check()?;
                }
                self.keys
                    .iter()
                    .zip(&by_id)
                    .map(|((k, _), by_id)| match by_id {
                        Some(c) => Ok(SortKey::Id(rows[i][*c])),
                        None => k.evaluate(&rows[i]).map(SortKey::Term),
                    })
                    .collect::<Result<Vec<SortKey>, _>>()
            })?;
            let mut keyed: Vec<(Vec<SortKey>, Vec<Id>)> = keys.into_iter().zip(rows).collect();
            let ascending: Vec<bool> = self.keys.iter().map(|(_, a)| *a).collect();
            keyed.par_sort_by(|(a, _), (b, _)| {
                for (i, asc) in ascending.iter().enumerate() {
                    let o = a[i].cmp(&b[i]);
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

/// One row's value of one sort key.
enum SortKey {
    /// An ID of a column whose ID order is term order.
    Id(Id),
    Term(Option<Term>),
}

impl SortKey {
    /// Keys of one sort key are all of one kind.
    fn cmp(&self, other: &SortKey) -> std::cmp::Ordering {
        match (self, other) {
            (SortKey::Id(a), SortKey::Id(b)) => a.cmp(b),
            (SortKey::Term(a), SortKey::Term(b)) => expr::order_cmp(a.as_ref(), b.as_ref()),
            (SortKey::Id(_), SortKey::Term(_)) => std::cmp::Ordering::Less,
            (SortKey::Term(_), SortKey::Id(_)) => std::cmp::Ordering::Greater,
        }
    }
}

/// Whether sorting `column` by ID sorts it in SPARQL's order: the values
/// are unbound, blank nodes or IRIs (IDs order them in that order, and IRIs
/// by their text since the vocabulary is sorted), or unbound and inline
/// values of one numeric type (stored in value order). Literals of the
/// vocabulary do not qualify: `"10"^^xsd:float` sorts before `"9"` there.
fn ids_in_term_order(rows: &[Vec<Id>], column: usize, first_literal: Id) -> bool {
    let resources = |id: Id| {
        matches!(id.tag(), Tag::Undefined | Tag::BlankNode)
            || (id.tag() == Tag::Vocab && id < first_literal)
    };
    let numbers = |tag: Tag| move |id: Id| id == Id::UNDEFINED || id.tag() == tag;
    let all = |accept: &dyn Fn(Id) -> bool| rows.iter().all(|row| accept(row[column]));
    all(&resources) || all(&numbers(Tag::Integer)) || all(&numbers(Tag::Decimal))
}
