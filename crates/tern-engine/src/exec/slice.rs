//! OFFSET and LIMIT.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::suspend::{bad_state, OperatorState, Stash};
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

    fn estimated_rows(&self) -> Option<u64> {
        let input = self.input.estimated_rows();
        match self.remaining {
            Some(limit) => Some(input.map_or(limit as u64, |rows| rows.min(limit as u64))),
            None => input,
        }
    }

    fn describe(&self) -> OperatorInfo {
        let limit = self
            .remaining
            .map_or_else(String::new, |l| format!(" limit {l}"));
        OperatorInfo::new("Slice", format!("offset {}{limit}", self.skip))
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let remaining = self.remaining.map_or(0, |r| r as u64 + 1);
        Ok(OperatorState::new(
            vec![self.skip as u64, remaining],
            vec![self.input.save(stash)?],
        ))
    }

    /// A saved state only ever has less to skip and fewer rows to give than
    /// the query as planned: more is refused (a token that says otherwise
    /// was not made by this plan).
    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let skip = usize::try_from(state.number(0)?)
            .ok()
            .filter(|s| *s <= self.skip);
        let remaining = state.number(1)?.checked_sub(1).map(usize::try_from);
        let remaining = match (remaining, self.remaining) {
            (None, None) => None,
            (Some(Ok(r)), Some(planned)) if r <= planned => Some(r),
            _ => return Err(bad_state("slice limit")),
        };
        self.skip = skip.ok_or_else(|| bad_state("slice offset"))?;
        self.remaining = remaining;
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            if self.remaining == Some(0) {
                return Ok(None);
            }
            let Some(batch) = self.input.next_batch()? else {
                return Ok(None);
            };
            if batch.len == 0 {
                return Ok(Some(batch)); // the input paused: pass it on
            }
            let start = self.skip.min(batch.len);
            self.skip -= start;
            let mut end = batch.len;
            if let Some(remaining) = &mut self.remaining {
                end = end.min(start.saturating_add(*remaining));
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
