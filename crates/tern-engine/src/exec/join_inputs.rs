//! The two inputs of a join that hashes one side: the probe side read row by
//! row, the build side pulled into a table first. Hash join, OPTIONAL and
//! the equality join share how these are listed, saved and restored.

use super::cursor::RowCursor;
use super::{BoxedOperator, BuildSide, Operator};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;

pub struct JoinInputs {
    pub probe: RowCursor,
    pub build: BuildSide,
}

impl JoinInputs {
    /// `key_columns`: the build side's columns its table is keyed on.
    pub fn new(probe: BoxedOperator, build: BoxedOperator, key_columns: Vec<usize>) -> JoinInputs {
        JoinInputs {
            probe: RowCursor::new(probe),
            build: BuildSide::new(build, key_columns),
        }
    }

    /// The probe input, then the build input while it is not pulled in.
    pub fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.probe.input.as_ref()];
        children.extend(self.build.input());
        children
    }

    /// The probe side's state, then the build side's.
    pub fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.probe.save(stash)?;
        let table = self.build.save(stash)?;
        Ok(OperatorState::new(Vec::new(), vec![streamed, table]))
    }

    pub fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [streamed, table] = state.into_children()?;
        self.probe.restore(streamed, stash)?;
        self.build.restore(table, stash)
    }
}
