//! A join evaluated per left row: the right pattern is planned with the
//! row's values substituted for the shared variables, so a few left rows
//! look up only the right rows that match them instead of reading the
//! right side whole, and plan it knowing their values. As OPTIONAL
//! (`BindLeftJoin`) the planner chooses it for small left sides and right
//! patterns where substitution is exact (the planner's `correlated`); as an
//! inner join (`BindJoin`) for a FILTER whose comparisons with a few-row
//! component's values become scan ranges once they are known (the
//! planner's `seeded_filter`).

use super::condition::Condition;
use super::cursor::{NextRow, RowCursor};
use super::profile::OperatorInfo;
use super::rows::Sources;
use super::{Batch, BoxedOperator, Operator, Solution, BATCH_ROWS};
use crate::context::{MemoryCharge, QueryContext};
use crate::expr::Scope;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::Expression;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::Id;

/// Plans the right pattern with values substituted for variables.
pub type PlanRight =
    Box<dyn Fn(&[(Variable, Id)]) -> Result<BoxedOperator, EngineError> + Send + Sync>;

pub struct BindLeftJoin {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    variables: Vec<Variable>,
    left: RowCursor,
    /// Left columns of the variables the right pattern mentions.
    shared: Vec<(usize, Variable)>,
    plan_right: PlanRight,
    /// The right pattern, for EXPLAIN.
    right_text: String,
    filter: Option<Condition>,
    current: Option<Current>,
    /// Right evaluations, shown where scans show blocks read.
    lookups: Arc<AtomicU64>,
    /// OPTIONAL: a left row without a right match is kept alone.
    keeps_unmatched: bool,
}

/// The left row being joined and its right side.
struct Current {
    left: Vec<Id>,
    right: BoxedOperator,
    /// For each output column, its column in the left row and in the right.
    sources: Sources,
    matched: bool,
}

impl BindLeftJoin {
    /// `right_variables`: the variables in scope in the right pattern.
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        right_variables: &[Variable],
        plan_right: PlanRight,
        right_text: String,
        filter: Option<Expression>,
        scope: Arc<Scope>,
    ) -> BindLeftJoin {
        let (variables, _) = Solution::merge_schemas(left.variables(), right_variables);
        let shared = left
            .variables()
            .iter()
            .enumerate()
            .filter(|(_, v)| right_variables.contains(v))
            .map(|(i, v)| (i, v.clone()))
            .collect();
        let filter = filter.map(|e| Condition::new(ctx.clone(), e, &variables, scope));
        BindLeftJoin {
            memory: ctx.memory_charge(),
            ctx,
            variables,
            left: RowCursor::new(left),
            shared,
            plan_right,
            right_text,
            filter,
            current: None,
            lookups: Arc::default(),
            keeps_unmatched: true,
        }
    }

    /// The inner join: a left row without a right match is dropped.
    pub fn inner(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        right_variables: &[Variable],
        plan_right: PlanRight,
        right_text: String,
        scope: Arc<Scope>,
    ) -> BindLeftJoin {
        BindLeftJoin {
            keeps_unmatched: false,
            ..BindLeftJoin::new(
                ctx,
                left,
                right_variables,
                plan_right,
                right_text,
                None,
                scope,
            )
        }
    }

    /// The right side for one left row, planned with its bound shared
    /// values; `matched` says whether it already gave a row.
    fn start(&self, left: Vec<Id>, matched: bool) -> Result<Current, EngineError> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let substitution: Vec<(Variable, Id)> = self
            .shared
            .iter()
            .filter(|(c, _)| left[*c] != Id::UNDEFINED)
            .map(|(c, v)| (v.clone(), left[*c]))
            .collect();
        let right = (self.plan_right)(&substitution)?;
        // Substituted variables are constants on the right, so the right
        // operator's columns differ from row to row.
        let sources = self
            .variables
            .iter()
            .map(|v| {
                let l = self.left.input.variables().iter().position(|x| x == v);
                let r = right.variables().iter().position(|x| x == v);
                (l, r)
            })
            .collect();
        Ok(Current {
            left,
            right,
            sources,
            matched,
        })
    }
}

impl Operator for BindLeftJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let on: Vec<Variable> = self.shared.iter().map(|(_, v)| v.clone()).collect();
        OperatorInfo {
            name: if self.keeps_unmatched {
                "BindLeftJoin"
            } else {
                "BindJoin"
            },
            detail: format!(
                "on {} per left row into {{ {} }}",
                super::variable_list(&on),
                self.right_text
            ),
            blocks_read: Some(self.lookups.clone()),
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.left.input.as_ref()]
    }

    fn estimated_rows(&self) -> Option<u64> {
        // The inner join's right side is planned per row: not known before.
        self.keeps_unmatched
            .then(|| self.left.input.estimated_rows())
            .flatten()
    }

    /// Numbers: whether a left row is in progress, whether it matched, and
    /// the row itself; children: the left input's state, then the right
    /// side's (the right side is planned again from the row).
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let mut children = vec![self.left.save(stash)?];
        let numbers = match self.current.as_mut() {
            None => vec![0, 0],
            Some(current) => {
                children.push(current.right.save(stash)?);
                let mut numbers = vec![1, u64::from(current.matched)];
                numbers.extend(current.left.iter().map(|id| id.0));
                numbers
            }
        };
        Ok(OperatorState::new(numbers, children))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let in_progress = state.number(0)? == 1;
        let matched = state.number(1)? == 1;
        // The left row in progress follows the two flags (see `save`).
        let row: Vec<Id> = state.numbers[2..].iter().map(|&n| Id(n)).collect();
        let mut children = state.children.into_iter();
        let left = children.next().ok_or_else(|| bad_state("left input"))?;
        self.left.restore(left, stash)?;
        self.current = None;
        if in_progress {
            if row.len() != self.left.input.variables().len() {
                return Err(bad_state("left row of the wrong width"));
            }
            let mut current = self.start(row, matched)?;
            let right = children.next().ok_or_else(|| bad_state("right side"))?;
            current.right.restore(right, stash)?;
            self.current = Some(current);
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        self.ctx.check()?;
        let width = self.variables.len();
        let mut out = Batch::with_columns(width);
        let mut ended = false;
        while out.len < BATCH_ROWS {
            let current = match self.current.as_mut() {
                Some(current) => current,
                None => {
                    if self.ctx.stop_turn(out.len) {
                        break;
                    }
                    let left = match self.left.next_row(&self.ctx)? {
                        NextRow::Row(left) => left,
                        NextRow::Paused => {
                            self.ctx.input_paused(out.len);
                            break;
                        }
                        NextRow::Ended => {
                            ended = true;
                            break;
                        }
                    };
                    self.current = Some(self.start(left, false)?);
                    self.current.as_mut().expect("just set")
                }
            };
            match current.right.next_batch()? {
                None => {
                    let current = self.current.take().expect("in progress");
                    if !current.matched && self.keeps_unmatched {
                        let alone: Vec<(Option<usize>, Option<usize>)> =
                            current.sources.iter().map(|&(l, _)| (l, None)).collect();
                        out.push_row(&Solution::merge(&current.left, &[], &alone));
                    }
                }
                // The right side paused for the end of the turn.
                Some(batch) if batch.len == 0 => {
                    self.ctx.input_paused(out.len);
                    break;
                }
                Some(batch) => {
                    for i in 0..batch.len {
                        let merged =
                            Solution::merge(&current.left, &batch.row(i), &current.sources);
                        let keep = match &self.filter {
                            None => true,
                            Some(filter) => filter.is_true(&merged)?,
                        };
                        if keep {
                            current.matched = true;
                            out.push_row(&merged);
                        }
                    }
                }
            }
        }
        self.memory.set((out.len * width * 8) as u64)?;
        if ended && out.len == 0 {
            return Ok(None);
        }
        Ok(Some(out))
    }
}
