//! UNION: the rows of the left input, then of the right, on a common schema.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

pub struct Union {
    variables: Vec<Variable>,
    inputs: Vec<(BoxedOperator, Vec<Option<usize>>)>,
    current: usize,
}

impl Union {
    pub fn new(left: BoxedOperator, right: BoxedOperator) -> Union {
        let mut variables = left.variables().to_vec();
        for v in right.variables() {
            if !variables.contains(v) {
                variables.push(v.clone());
            }
        }
        let inputs = [left, right]
            .into_iter()
            .map(|input| {
                let sources = variables
                    .iter()
                    .map(|v| input.variables().iter().position(|i| i == v))
                    .collect();
                (input, sources)
            })
            .collect();
        Union {
            variables,
            inputs,
            current: 0,
        }
    }
}

impl Operator for Union {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.inputs.iter().try_fold(0u64, |sum, (input, _)| {
            Some(sum.saturating_add(input.estimated_rows()?))
        })
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Union", "")
    }

    /// Either side's first rows are all that the first rows can use.
    fn first_rows_only(&mut self, rows: usize) {
        for (input, _) in &mut self.inputs {
            input.first_rows_only(rows);
        }
    }

    fn small_first_batches(&mut self, rows: usize) {
        for (input, _) in &mut self.inputs {
            input.small_first_batches(rows);
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.inputs
            .iter()
            .map(|(input, _)| input.as_ref())
            .collect()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let children = self
            .inputs
            .iter_mut()
            .map(|(input, _)| input.save(stash))
            .collect::<Result<_, _>>()?;
        Ok(OperatorState::new(vec![self.current as u64], children))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.current = state.number(0)? as usize;
        let [left, right] = state.into_children()?;
        self.inputs[0].0.restore(left, stash)?;
        self.inputs[1].0.restore(right, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        while self.current < self.inputs.len() {
            let (input, sources) = &mut self.inputs[self.current];
            if let Some(batch) = input.next_batch()? {
                let len = batch.len;
                let columns = sources
                    .iter()
                    .map(|s| {
                        s.map_or_else(|| vec![Id::UNDEFINED; len], |c| batch.columns[c].clone())
                    })
                    .collect();
                return Ok(Some(Batch { columns, len }));
            }
            self.current += 1;
        }
        Ok(None)
    }
}
