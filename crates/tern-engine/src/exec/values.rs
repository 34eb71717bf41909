//! Constant rows: VALUES, and the single empty solution of an empty pattern.

use super::{Batch, Operator};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

pub struct Values {
    variables: Vec<Variable>,
    rows: Option<Vec<Vec<Id>>>,
}

impl Values {
    pub fn new(variables: Vec<Variable>, rows: Vec<Vec<Id>>) -> Values {
        Values {
            variables,
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
