//! The two inputs of a join that hashes one side: the probe side read row by
//! row, the build side pulled into a table first. Hash join, OPTIONAL and
//! the equality join share how these are listed, saved and restored.

use super::cursor::{NextRow, RowCursor};
use super::{Batch, BoxedOperator, BuildSide, Operator, RowTable, BATCH_ROWS};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use tern_index::Id;

/// What an empty build side means for the join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyBuild {
    /// No rows at all (inner joins).
    EndsJoin,
    /// Every probe row still counts (OPTIONAL).
    ProbeAnyway,
}

pub struct JoinInputs {
    pub probe: RowCursor,
    pub build: BuildSide,
    /// The output batch being made: one probe row of a cross product adds
    /// the whole table to it.
    output: Option<MemoryCharge>,
}

impl JoinInputs {
    /// `key_columns`: the build side's columns its table is keyed on.
    pub fn new(probe: BoxedOperator, build: BoxedOperator, key_columns: Vec<usize>) -> JoinInputs {
        JoinInputs {
            probe: RowCursor::new(probe),
            build: BuildSide::new(build, key_columns),
            output: None,
        }
    }

    /// The probe input, then the build input while it is not pulled in.
    pub fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.probe.input.as_ref()];
        children.extend(self.build.input());
        children
    }

    /// The next batch of a join of `width` columns: the build side pulled in
    /// first (an empty batch when the turn ends meanwhile), then probe rows
    /// handed with the table to `per_row`, which adds their output rows,
    /// until the batch is full, the probe side ends (`None` if nothing came)
    /// or pauses, or the turn is over.
    pub fn next_batch(
        &mut self,
        ctx: &QueryContext,
        width: usize,
        empty: EmptyBuild,
        mut per_row: impl FnMut(&[Id], &RowTable, &mut Batch) -> Result<(), EngineError>,
    ) -> Result<Option<Batch>, EngineError> {
        // Once per output batch: one probe row of a cross product can make
        // a whole batch, so the probe side's checks alone come too rarely.
        ctx.check()?;
        let Some(table) = self.build.table(ctx)? else {
            return Ok(Some(Batch::with_columns(width)));
        };
        if empty == EmptyBuild::EndsJoin && table.rows.is_empty() {
            return Ok(None);
        }
        let mut out = Batch::with_columns(width);
        let mut probed = 0usize;
        while out.len < BATCH_ROWS {
            probed += 1;
            // A selective join may probe millions of rows for few results:
            // hand out what there is (or nothing) when the turn is over.
            if probed.is_multiple_of(1024) && ctx.stop_turn(out.len) {
                return Ok(Some(out));
            }
            let row = match self.probe.next_row(ctx)? {
                NextRow::Row(row) => row,
                NextRow::Paused => {
                    ctx.input_paused(out.len);
                    return Ok(Some(out));
                }
                NextRow::Ended => break,
            };
            per_row(&row, table, &mut out)?;
        }
        self.output
            .get_or_insert_with(|| ctx.memory_charge())
            .set((out.len * width * 8) as u64)?;
        Ok((out.len > 0).then_some(out))
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
