//! Constant rows: VALUES, and the single empty solution of an empty pattern.

use super::profile::OperatorInfo;
use super::{Batch, Operator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

pub struct Values {
    variables: Vec<Variable>,
    rows: Option<Vec<Vec<Id>>>,
    /// Rows it has in all (known exactly: the planner builds the smaller
    /// side of a join).
    count: u64,
}

impl Values {
    pub fn new(variables: Vec<Variable>, rows: Vec<Vec<Id>>) -> Values {
        Values {
            variables,
            count: rows.len() as u64,
            rows: Some(rows),
        }
    }

    /// One solution binding nothing: the identity of joins.
    pub fn unit() -> Values {
        Values::new(Vec::new(), vec![Vec::new()])
    }

    /// No solutions at all.
    pub fn empty(variables: Vec<Variable>) -> Values {
        Values::new(variables, Vec::new())
    }
}

impl Operator for Values {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        Some(self.count)
    }

    fn describe(&self) -> OperatorInfo {
        let rows = self.rows.as_ref().map_or(0, Vec::len);
        OperatorInfo::new(
            "Values",
            format!("{} ({rows} rows)", super::variable_list(&self.variables)),
        )
    }

    fn save(&mut self, _: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::new(
            vec![u64::from(self.rows.is_none())],
            vec![],
        ))
    }

    fn restore(&mut self, state: OperatorState, _: &Stash) -> Result<(), EngineError> {
        if state.number(0)? == 1 {
            self.rows = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let Some(rows) = self.rows.take() else {
            return Ok(None);
        };
        if rows.is_empty() {
            return Ok(None);
        }
        let mut batch = super::batch_of(&rows, self.variables.len());
        batch.len = rows.len();
        Ok(Some(batch))
    }
}
