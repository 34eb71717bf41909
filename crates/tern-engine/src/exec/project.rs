//! Projection: keeps and reorders columns; a projected variable the input does
//! not bind becomes an unbound column.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

pub struct Project {
    input: BoxedOperator,
    variables: Vec<Variable>,
    sources: Vec<Option<usize>>,
}

impl Project {
    pub fn new(input: BoxedOperator, variables: Vec<Variable>) -> Project {
        let sources = variables
            .iter()
            .map(|v| input.variables().iter().position(|i| i == v))
            .collect();
        Project {
            input,
            variables,
            sources,
        }
    }
}

impl Operator for Project {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Project", super::variable_list(&self.variables))
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.input.save(stash)?))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.input.checkpoint().map(OperatorState::wrapping)
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
        let Some(batch) = self.input.next_batch()? else {
            return Ok(None);
        };
        let len = batch.len;
        let columns = self
            .sources
            .iter()
            .map(|s| s.map_or_else(|| vec![Id::UNDEFINED; len], |c| batch.columns[c].clone()))
            .collect();
        Ok(Some(Batch { columns, len }))
    }
}
