//! Projection: keeps and reorders columns; a projected variable the input does
//! not bind becomes an unbound column.

use super::{Batch, BoxedOperator, Operator};
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
