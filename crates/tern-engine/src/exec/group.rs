//! GROUP BY with aggregates: materializes groups keyed on the group variables.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::expr::Accumulator;
use crate::expr::MemoizedEvaluator;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression};
use std::sync::Arc;
use tern_index::Id;

enum AggregateInput {
    /// COUNT(DISTINCT *): the whole row.
    Row,
    /// COUNT(*): every row counts.
    EveryRow,
    /// COUNT(?v): the rows where this column is bound (`None`: a variable
    /// the input does not have, never bound).
    Bound(Option<usize>),
    Expression(MemoizedEvaluator),
}

pub struct Group {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    input: Option<BoxedOperator>,
    variables: Vec<Variable>,
    key_columns: Vec<Option<usize>>,
    aggregates: Vec<(AggregateExpression, AggregateInput)>,
    /// Groups so far while the input is read (across turns); then the
    /// groups whose rows are not handed out yet.
    partial: Groups,
    /// Once the input has ended: how many groups (of `partial.order`) are
    /// handed out. Their aggregates are finished a batch at a time, so that
    /// a million groups do not hold a turn.
    handed_out: usize,
}

/// Groups being aggregated, in order of first appearance.
#[derive(Default)]
pub struct Groups {
    groups: FxHashMap<Vec<Id>, Vec<Accumulator>>,
    order: Vec<Vec<Id>>,
    /// What the accumulators keep (DISTINCT sets, GROUP_CONCAT text).
    held: usize,
}

impl crate::suspend::StashSize for Groups {
    /// Keys twice (map and order) and an estimate per accumulator.
    fn stash_bytes(&self) -> usize {
        self.held
            + self
                .order
                .first()
                .map_or(0, |k| self.order.len() * (2 * (k.len() * 8 + 24) + 64))
    }
}

/// `OperatorState::numbers[0]` of a group.
const AGGREGATING: u64 = 0;
const DONE: u64 = 1;

impl Group {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        keys: Vec<Variable>,
        aggregates: Vec<(Variable, AggregateExpression)>,
        scope: Arc<crate::expr::Scope>,
    ) -> Group {
        let input_variables = input.variables().to_vec();
        let key_columns = keys
            .iter()
            .map(|k| input_variables.iter().position(|v| v == k))
            .collect();
        let mut variables = keys;
        let aggregates = aggregates
            .into_iter()
            .map(|(v, a)| {
                variables.push(v);
                let evaluator = match &a {
                    AggregateExpression::CountSolutions { distinct: false } => {
                        AggregateInput::EveryRow
                    }
                    AggregateExpression::CountSolutions { distinct: true } => AggregateInput::Row,
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Count,
                        expr: Expression::Variable(v),
                        distinct: false,
                    } => AggregateInput::Bound(input_variables.iter().position(|i| i == v)),
                    AggregateExpression::FunctionCall { expr, .. } => {
                        AggregateInput::Expression(MemoizedEvaluator::new(
                            ctx.clone(),
                            expr.clone(),
                            input_variables.clone(),
                            scope.clone(),
                        ))
                    }
                };
                (a, evaluator)
            })
            .collect();
        Group {
            memory: ctx.memory_charge(),
            ctx,
            input: Some(input),
            variables,
            key_columns,
            aggregates,
            handed_out: 0,
            partial: Groups::default(),
        }
    }

    fn accumulators(&self) -> Vec<Accumulator> {
        self.aggregates
            .iter()
            .map(|(a, _)| match a {
                AggregateExpression::CountSolutions { distinct } => {
                    Accumulator::count_star(*distinct)
                }
                AggregateExpression::FunctionCall { name, distinct, .. } => {
                    Accumulator::new(name, *distinct)
                }
            })
            .collect()
    }
}

impl Group {
    fn describe_keys(&self) -> String {
        let keys = self.key_columns.len();
        let by = super::variable_list(&self.variables[..keys]);
        let aggregates: Vec<String> = self.variables[keys..]
            .iter()
            .zip(&self.aggregates)
            .map(|(v, (a, _))| format!("{v} := {a}"))
            .collect();
        format!("by {by}; {}", aggregates.join(", "))
    }
}

impl Operator for Group {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// One row without GROUP BY, else at most one per input row.
    fn estimated_rows(&self) -> Option<u64> {
        if self.key_columns.is_empty() {
            return Some(1);
        }
        self.input.as_ref()?.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Group", self.describe_keys())
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input
            .as_deref()
            .map(|i| i as &dyn Operator)
            .into_iter()
            .collect()
    }

    /// Aggregating: the groups so far (stashed) and the input's state.
    /// Done: the groups not yet handed out (stashed).
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let Some(input) = self.input.as_mut() else {
            let mut left = std::mem::take(&mut self.partial);
            left.order.drain(..self.handed_out);
            return Ok(OperatorState {
                numbers: vec![DONE],
                stashed: Some(stash.put(left)),
                children: Vec::new(),
            });
        };
        let partial = std::mem::take(&mut self.partial);
        Ok(OperatorState {
            numbers: vec![AGGREGATING],
            stashed: (!partial.order.is_empty()).then(|| stash.put(partial)),
            children: vec![input.save(stash)?],
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        match state.number(0)? {
            DONE => {
                self.partial = state.take_stashed(stash, "grouped rows")?;
                self.handed_out = 0;
                self.input = None;
            }
            AGGREGATING => {
                if let Some(handle) = state.stashed {
                    self.partial = stash.take(handle)?;
                }
                let input = self
                    .input
                    .as_mut()
                    .ok_or_else(|| bad_state("group input"))?;
                input.restore(state.into_child()?, stash)?;
            }
            other => return Err(bad_state(format!("group phase {other}"))),
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(mut input) = self.input.take() {
            let Groups {
                mut groups,
                mut order,
                mut held,
            } = std::mem::take(&mut self.partial);
            while let Some(batch) = input.next_batch()? {
                self.ctx.check()?;
                // The input paused, or the turn is over: keep the groups
                // for the next call.
                if batch.len == 0 || self.ctx.should_yield() {
                    self.add_batch(&batch, &mut groups, &mut order, &mut held)?;
                    self.partial = Groups {
                        groups,
                        order,
                        held,
                    };
                    self.input = Some(input);
                    return Ok(Some(Batch::with_columns(self.variables.len())));
                }
                self.add_batch(&batch, &mut groups, &mut order, &mut held)?;
            }
            // Without GROUP BY, an empty input still makes one (empty) group.
            if groups.is_empty() && self.key_columns.is_empty() {
                order.push(Vec::new());
                groups.insert(Vec::new(), self.accumulators());
            }
            self.partial = Groups {
                groups,
                order,
                held,
            };
            self.handed_out = 0;
        }
        self.ctx.check()?;
        let Groups { groups, order, .. } = &mut self.partial;
        let end = (self.handed_out + super::BATCH_ROWS).min(order.len());
        let mut batch = Batch::with_columns(self.variables.len());
        for key in &mut order[self.handed_out..end] {
            let accumulators = groups
                .remove(key.as_slice())
                .expect("every key has a group");
            let mut row = std::mem::take(key);
            for acc in accumulators {
                row.push(match acc.finish() {
                    Some(term) => self.ctx.intern(&term)?,
                    None => Id::UNDEFINED,
                });
            }
            batch.push_row(&row);
        }
        self.handed_out = end;
        Ok((batch.len > 0).then_some(batch))
    }
}

impl Group {
    /// Charges the groups' keys and what their accumulators keep.
    fn charge(&self, groups: usize, held: usize) -> Result<(), EngineError> {
        self.memory
            .set((groups * (self.variables.len() * 64 + 64) + held) as u64)
    }

    /// Adds one batch's rows to the groups.
    /// Adds one row to a group's accumulators.
    fn accumulate(
        &self,
        row: &[Id],
        accumulators: &mut [Accumulator],
        held: &mut usize,
    ) -> Result<(), EngineError> {
        for ((_, input), acc) in self.aggregates.iter().zip(accumulators.iter_mut()) {
            let before = acc.held_bytes();
            match input {
                AggregateInput::Row => {
                    let terms = self.ctx.terms(row)?;
                    acc.add_row(&terms);
                }
                AggregateInput::EveryRow => acc.count_one(true),
                AggregateInput::Bound(column) => {
                    acc.count_one(column.is_some_and(|c| row[c] != Id::UNDEFINED))
                }
                AggregateInput::Expression(e) => acc.add(e.evaluate(row)?),
            }
            *held = (*held + acc.held_bytes()).saturating_sub(before);
        }
        Ok(())
    }

    fn add_batch(
        &self,
        batch: &Batch,
        groups: &mut FxHashMap<Vec<Id>, Vec<Accumulator>>,
        order: &mut Vec<Vec<Id>>,
        held: &mut usize,
    ) -> Result<(), EngineError> {
        let mut row = vec![Id::UNDEFINED; batch.columns.len()];
        let mut key = vec![Id::UNDEFINED; self.key_columns.len()];
        for i in 0..batch.len {
            for (slot, column) in row.iter_mut().zip(&batch.columns) {
                *slot = column[i];
            }
            for (slot, column) in key.iter_mut().zip(&self.key_columns) {
                *slot = column.map_or(Id::UNDEFINED, |c| row[c]);
            }
            // One lookup for a group seen before (most rows).
            match groups.get_mut(key.as_slice()) {
                Some(accumulators) => self.accumulate(&row, accumulators, held)?,
                None => {
                    let mut accumulators = self.accumulators();
                    self.accumulate(&row, &mut accumulators, held)?;
                    groups.insert(key.clone(), accumulators);
                    order.push(key.clone());
                }
            }
            if i % 1024 == 1023 {
                self.charge(groups.len(), *held)?;
            }
        }
        self.charge(groups.len(), *held)
    }
}
