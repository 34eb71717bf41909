//! OFFSET and LIMIT.

use super::{Batch, BoxedOperator, Operator};
use crate::EngineError;
use oxrdf::Variable;

pub struct Slice {
    input: BoxedOperator,
    skip: usize,
    remaining: Option<usize>,
}

impl Slice {
    pub fn new(input: BoxedOperator, start: usize, length: Option<usize>) -> Slice {
        Slice {
            input,
            skip: start,
            remaining: length,
        }
    }
}

impl Operator for Slice {
    fn variables(&self) -> &[Variable] {
        self.input.variables()
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            if self.remaining == Some(0) {
                return Ok(None);
            }
            let Some(batch) = self.input.next_batch()? else {
                return Ok(None);
            };
            let start = self.skip.min(batch.len);
            self.skip -= start;
            let mut end = batch.len;
            if let Some(remaining) = &mut self.remaining {
                end = end.min(start + *remaining);
                *remaining -= end - start;
            }
            if start < end {
                let columns = batch
                    .columns
                    .into_iter()
                    .map(|c| c[start..end].to_vec())
                    .collect();
                return Ok(Some(Batch {
                    columns,
                    len: end - start,
                }));
            }
        }
    }
}
