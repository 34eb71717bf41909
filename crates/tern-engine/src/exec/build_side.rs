//! Materializing an input a turn at a time.
//!
//! A time-sliced query must be able to pause while an operator pulls a
//! large input into memory (a join's build side, the rows to sort or
//! group), or one such operator would hold its worker for as long as that
//! takes. [`Collector`] keeps what was pulled so far in the operator, so a
//! call that stops at the end of a turn (see
//! [`QueryContext::should_yield`]) loses nothing, and a suspended query
//! stashes the rows pulled so far with the input's position.

use super::{BoxedOperator, FlatRows, Operator, RowTable, TableSteps};
use crate::context::{row_vec_bytes, MemoryCharge, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use tern_index::Id;

/// Rows pulled from an input being materialized.
#[derive(Default)]
pub struct Collector {
    rows: FlatRows,
    /// What the rows cost, counted until the collector is dropped: rows
    /// taken out are still held by the operator that took them.
    charge: Option<MemoryCharge>,
}

/// Why [`Collector::pull_up_to`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pulled {
    /// The input has ended.
    Ended,
    /// The turn is over: call again in a later turn.
    Paused,
    /// The collector holds at least the number of rows asked for.
    Full,
    /// The rows do not [`fit`](MemoryCharge::fits) in memory: the caller
    /// writes them to disk (only when pulled with
    /// [`pull_up_to`](Collector::pull_up_to) as spillable).
    TooLarge,
}

impl Collector {
    /// Pulls rows until the input ends (`true`) or the turn is over
    /// (`false`: call again in a later turn).
    pub fn pull(
        &mut self,
        input: &mut dyn Operator,
        ctx: &QueryContext,
    ) -> Result<bool, EngineError> {
        Ok(self.pull_up_to(input, ctx, usize::MAX, false)? == Pulled::Ended)
    }

    /// Pulls rows until the input ends, the turn is over or the collector
    /// holds `max_rows` rows or more. When `spillable`, it stops with
    /// [`Pulled::TooLarge`] rather than fail when the rows pulled do not
    /// fit in the memory budget, for a caller that writes them to disk.
    pub fn pull_up_to(
        &mut self,
        input: &mut dyn Operator,
        ctx: &QueryContext,
        max_rows: usize,
        spillable: bool,
    ) -> Result<Pulled, EngineError> {
        let width = input.variables().len();
        loop {
            let Some(batch) = input.next_batch()? else {
                return Ok(Pulled::Ended);
            };
            ctx.check()?;
            self.rows.push_batch(&batch);
            let bytes = row_vec_bytes(self.rows.len(), width);
            let charge = self.charge.get_or_insert_with(|| ctx.memory_charge());
            if spillable && !charge.fits(bytes) {
                charge.set_unchecked(bytes);
                return Ok(Pulled::TooLarge);
            }
            charge.set(bytes)?;
            // An empty batch: the input paused for the end of the turn.
            if batch.len == 0 || ctx.should_yield() {
                return Ok(Pulled::Paused);
            }
            if self.rows.len() >= max_rows {
                return Ok(Pulled::Full);
            }
        }
    }

    /// Counts `bytes` as what the rows pulled (and anything made of them)
    /// hold now.
    pub fn charge(&mut self, ctx: &QueryContext, bytes: u64) -> Result<(), EngineError> {
        self.charge
            .get_or_insert_with(|| ctx.memory_charge())
            .set(bytes)
    }

    /// Replaces the rows pulled so far (with the ones of them to keep).
    pub fn replace(&mut self, rows: Vec<Vec<Id>>) {
        self.rows = FlatRows::from_vecs(rows);
    }

    /// Everything pulled, one vector per row, leaving the collector empty.
    pub fn take(&mut self) -> Vec<Vec<Id>> {
        self.take_flat().into_vecs()
    }

    /// Everything pulled, leaving the collector empty.
    pub fn take_flat(&mut self) -> FlatRows {
        std::mem::take(&mut self.rows)
    }

    /// Stashes the rows pulled so far, if any.
    pub fn save(&mut self, stash: &Stash) -> Option<u64> {
        (!self.rows.is_empty()).then(|| stash.put(self.take_flat()))
    }

    pub fn restore(&mut self, handle: Option<u64>, stash: &Stash) -> Result<(), EngineError> {
        self.rows = match handle {
            Some(handle) => stash.take(handle)?,
            None => FlatRows::default(),
        };
        Ok(())
    }

    /// The state of an operator still pulling `input` in (phase
    /// [`COLLECTING`]): the rows so far, stashed, and the input's state.
    pub fn save_with(
        &mut self,
        input: &mut dyn Operator,
        stash: &Stash,
    ) -> Result<OperatorState, EngineError> {
        Ok(OperatorState {
            numbers: vec![COLLECTING],
            stashed: self.save(stash),
            children: vec![input.save(stash)?],
        })
    }

    /// Restores what [`save_with`](Self::save_with) saved (the caller has
    /// checked the phase).
    pub fn restore_with(
        &mut self,
        state: OperatorState,
        input: Option<&mut BoxedOperator>,
        stash: &Stash,
    ) -> Result<(), EngineError> {
        self.restore(state.stashed, stash)?;
        let input = input.ok_or_else(|| bad_state("collecting without an input"))?;
        input.restore(state.into_child()?, stash)
    }
}

/// `OperatorState::numbers[0]` of an operator pulling its input in with a
/// [`Collector`] (a build side, a sort).
pub const COLLECTING: u64 = 0;

/// The materialized side of a join or MINUS: its input until it is pulled
/// in, then its table while that is built, then the table.
pub struct BuildSide {
    input: Option<BoxedOperator>,
    collector: Collector,
    indexing: Option<Box<TableSteps>>,
    table: Option<RowTable>,
    key_columns: Vec<usize>,
    /// Too large for memory: the join writes it to disk, pulling the rest
    /// of the input itself.
    spilled: bool,
}

/// What [`BuildSide::prepare`] found.
pub enum Prepared {
    /// The turn ended first.
    Paused,
    /// The table is [`built`](BuildSide::built_table).
    Ready,
    /// The rows pulled so far do not fit in memory: here they are; the
    /// rest of the input is [`spilled_input`](BuildSide::spilled_input).
    TooLarge(FlatRows),
}

/// `OperatorState::numbers[0]` of a build side, after [`COLLECTING`].
const BUILT: u64 = 1;
/// Pulled in, the table being built.
const INDEXING: u64 = 2;
/// Written to disk by the join (whose state says how far).
const SPILLED: u64 = 3;

impl BuildSide {
    /// `key_columns`: the input's columns of the shared variables.
    pub fn new(input: BoxedOperator, key_columns: Vec<usize>) -> BuildSide {
        BuildSide {
            input: Some(input),
            collector: Collector::default(),
            indexing: None,
            table: None,
            key_columns,
            spilled: false,
        }
    }

    /// Like [`table`](Self::table), but, when `spillable`, hands the rows
    /// over when they do not fit in memory, for a join that can write them
    /// to disk (one with a key: the rows of a cross product cannot be
    /// split).
    pub fn prepare(
        &mut self,
        ctx: &QueryContext,
        spillable: bool,
    ) -> Result<Prepared, EngineError> {
        let spillable = spillable && !self.key_columns.is_empty();
        if let Some(input) = self.input.as_mut().filter(|_| spillable && !self.spilled) {
            match self
                .collector
                .pull_up_to(input.as_mut(), ctx, usize::MAX, true)?
            {
                Pulled::Paused => return Ok(Prepared::Paused),
                Pulled::TooLarge => {
                    self.spilled = true;
                    let rows = self.collector.take_flat();
                    self.collector.charge(ctx, 0)?;
                    return Ok(Prepared::TooLarge(rows));
                }
                Pulled::Ended | Pulled::Full => {}
            }
        }
        if self.spilled {
            return Ok(Prepared::Ready);
        }
        Ok(match self.table(ctx)? {
            Some(_) => Prepared::Ready,
            None => Prepared::Paused,
        })
    }

    /// The table, once [`prepare`](Self::prepare) said it is ready.
    pub fn built_table(&self) -> Option<&RowTable> {
        self.table.as_ref()
    }

    /// The rest of the input of a build side handed over as too large
    /// (`None` once [`end_spilled_input`](Self::end_spilled_input)).
    pub fn spilled_input(&mut self) -> Option<&mut BoxedOperator> {
        self.input.as_mut().filter(|_| self.spilled)
    }

    /// The join has read the whole input.
    pub fn end_spilled_input(&mut self) {
        self.input = None;
    }

    /// The input while it is not pulled in yet (for plan profiles).
    pub fn input(&self) -> Option<&dyn Operator> {
        self.input.as_deref().map(|i| i as &dyn Operator)
    }

    /// The table, pulling the input in and building the table first;
    /// `None` when the turn ended before that was done.
    pub fn table(&mut self, ctx: &QueryContext) -> Result<Option<&RowTable>, EngineError> {
        if let Some(input) = self.input.as_mut() {
            if !self.collector.pull(input.as_mut(), ctx)? {
                return Ok(None);
            }
            let width = input.variables().len();
            self.input = None;
            let rows = self.collector.take_flat();
            // The table's key index: a hash and a row number per row, and
            // as much again while it is sorted.
            let index = (rows.len() * 24) as u64;
            self.collector
                .charge(ctx, row_vec_bytes(rows.len(), width) + index)?;
            let steps = TableSteps::new(rows, self.key_columns.clone());
            self.indexing = Some(Box::new(steps));
        }
        if let Some(steps) = self.indexing.as_mut() {
            // A step at a time: a table of millions of rows takes longer
            // than a turn.
            while !steps.built() {
                steps.step();
                ctx.check()?;
                if !steps.built() && ctx.should_yield() {
                    return Ok(None);
                }
            }
            let steps = self.indexing.take().expect("being built");
            self.table = Some(steps.finish());
        }
        Ok(self.table.as_ref())
    }

    /// Built: the table, stashed. Indexing: the table being built,
    /// stashed. Collecting: the rows pulled so far (stashed) and the
    /// input's state.
    pub fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        if self.spilled {
            let children = match self.input.as_mut() {
                Some(input) => vec![input.save(stash)?],
                None => Vec::new(),
            };
            return Ok(OperatorState::new(vec![SPILLED], children));
        }
        if let Some(steps) = self.indexing.take() {
            return Ok(OperatorState {
                numbers: vec![INDEXING],
                stashed: Some(stash.put(*steps)),
                children: Vec::new(),
            });
        }
        match (self.table.take(), self.input.as_mut()) {
            (Some(table), _) => Ok(OperatorState {
                numbers: vec![BUILT],
                stashed: Some(stash.put(table)),
                children: Vec::new(),
            }),
            (None, Some(input)) => self.collector.save_with(input.as_mut(), stash),
            (None, None) => Err(bad_state("build side without input or table")),
        }
    }

    pub fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        match state.number(0)? {
            BUILT => {
                self.table = Some(state.take_stashed(stash, "built table")?);
                self.input = None;
                Ok(())
            }
            INDEXING => {
                self.indexing = Some(Box::new(state.take_stashed(stash, "table being built")?));
                self.input = None;
                Ok(())
            }
            COLLECTING => self
                .collector
                .restore_with(state, self.input.as_mut(), stash),
            SPILLED => {
                self.spilled = true;
                match state.children.into_iter().next() {
                    Some(child) => self
                        .input
                        .as_mut()
                        .ok_or_else(|| bad_state("spilled build side without input"))?
                        .restore(child, stash),
                    None => {
                        self.input = None;
                        Ok(())
                    }
                }
            }
            other => Err(bad_state(format!("build side phase {other}"))),
        }
    }
}
