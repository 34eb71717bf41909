//! BIND: adds a column computed by an expression (unbound where it errors).
//! The value is remembered for the IDs of the columns the expression reads
//! (when it is a function of them): a label built with CONCAT or a decade
//! computed from a year sees the same few inputs in many rows, and
//! decoding, computing and interning the result costs a microsecond a row.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::expr::{expression_variables, RowEvaluator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::Expression;
use std::sync::Arc;
use tern_index::Id;

pub struct Extend {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    variables: Vec<Variable>,
    expression: RowEvaluator,
    /// The columns the expression reads, when its value depends on them
    /// alone (no EXISTS, RAND, BNODE, UUID), and few.
    reads: Option<Vec<usize>>,
    /// Values by the IDs of those columns.
    memo: FxHashMap<Vec<Id>, Id>,
    hits: u64,
    misses: u64,
}

/// Most columns an expression may read to have its values remembered.
const MEMO_COLUMNS: usize = 4;
/// Most values remembered; beyond, the memo starts over.
const MEMO_ENTRIES: usize = 1 << 16;
/// Inputs computed before the memo is judged: it is kept while at least as
/// many rows find their value in it as compute one.
const MEMO_TRIAL: u64 = 1024;

impl Extend {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        variable: Variable,
        expression: Expression,
        scope: Arc<crate::expr::Scope>,
    ) -> Extend {
        let mut read = FxHashSet::default();
        let reads = expression_variables(&expression, &mut read).and_then(|()| {
            // (Not for a variable the input does not have.)
            let columns: Option<Vec<usize>> = read
                .iter()
                .map(|v| input.variables().iter().position(|x| x == v))
                .collect();
            columns.filter(|c| c.len() <= MEMO_COLUMNS)
        });
        let expression =
            RowEvaluator::new(ctx.clone(), expression, input.variables().to_vec(), scope);
        let mut variables = input.variables().to_vec();
        variables.push(variable);
        Extend {
            ctx,
            input,
            variables,
            expression,
            reads,
            memo: FxHashMap::default(),
            hits: 0,
            misses: 0,
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

    fn small_first_batches(&mut self, rows: usize) {
        self.input.small_first_batches(rows);
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let Some(mut batch) = self.input.next_batch()? else {
            return Ok(None);
        };
        self.ctx.check()?;
        let column = match self.reads.take() {
            Some(reads) => {
                let column = self.remembered(&batch, &reads)?;
                // Mostly new inputs: the memo only costs, and the rows are
                // better evaluated on all cores.
                if self.misses < MEMO_TRIAL || self.hits >= self.misses {
                    self.reads = Some(reads);
                } else {
                    self.memo = FxHashMap::default();
                }
                column
            }
            None => super::map_rows(&batch, |row| self.expression.evaluate_id(row))?,
        };
        batch.columns.push(column);
        Ok(Some(batch))
    }
}

impl Extend {
    /// The values for the rows of `batch`, looked up in the memo by the IDs
    /// of the columns `reads`, or computed and remembered.
    fn remembered(&mut self, batch: &Batch, reads: &[usize]) -> Result<Vec<Id>, EngineError> {
        let mut column = Vec::with_capacity(batch.len);
        let mut key = Vec::with_capacity(reads.len());
        for i in 0..batch.len {
            key.clear();
            key.extend(reads.iter().map(|&c| batch.columns[c][i]));
            if let Some(&id) = self.memo.get(&key) {
                self.hits += 1;
                column.push(id);
                continue;
            }
            self.misses += 1;
            let id = self.expression.evaluate_id(&batch.row(i))?;
            if self.memo.len() >= MEMO_ENTRIES {
                self.memo.clear();
            }
            self.memo.insert(key.clone(), id);
            column.push(id);
        }
        Ok(column)
    }
}
