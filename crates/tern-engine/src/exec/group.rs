//! GROUP BY with aggregates: materializes groups keyed on the group variables.
//! When the groups do not fit in the memory budget, the groups it holds go
//! on taking their rows and rows of new keys go to disk by hash
//! ([`SpilledParts`]); each part is grouped alone afterwards (and split
//! again if it does not fit either).

use super::profile::OperatorInfo;
use super::spill::SpilledParts;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::expr::Accumulator;
use crate::expr::MemoizedEvaluator;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use spargebra::algebra::{AggregateExpression, AggregateFunction, Expression};
use std::sync::Arc;
use tern_index::inline::integer_id;
use tern_index::Id;

enum AggregateInput {
    /// COUNT(DISTINCT *): the whole row.
    Row,
    /// COUNT(*): every row counts.
    EveryRow,
    /// COUNT(?v): the rows where this column is bound (`None`: a variable
    /// the input does not have, never bound).
    Bound(Option<usize>),
    /// `AGG(DISTINCT ?v)` of a column: deduplicated on IDs, each new one
    /// decoded once.
    DistinctColumn(usize, MemoizedEvaluator),
    /// `COUNT(DISTINCT ?v)` of a column: distinct bound IDs, none decoded.
    DistinctCount(usize),
    Expression(MemoizedEvaluator),
}

pub struct Group {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    input: Option<BoxedOperator>,
    variables: Vec<Variable>,
    key_columns: Vec<Option<usize>>,
    aggregates: Vec<(AggregateExpression, AggregateInput)>,
    /// Groups so far while the input is read (across turns); then the
    /// groups whose rows are not handed out yet.
    partial: Groups,
    /// Once the input (or a part on disk) has ended: how many groups (of
    /// `partial.order`) are handed out. Their aggregates are finished a
    /// batch at a time, so that a million groups do not hold a turn.
    handed_out: usize,
    /// The rows written to disk, once the groups did not fit in memory.
    spilled: Option<Box<SpilledParts>>,
    /// Columns of the input's rows.
    input_width: usize,
    /// The key of the row being added (its vector reused).
    key: GroupKey,
    /// How many groupings share the query's memory side by side (the
    /// partitions of a `ParallelGroup`): each leaves room for the others.
    sharing: u64,
    /// Rows added between two charges of the groups' memory (fewer when
    /// several groupings share it).
    charge_every: usize,
}

/// Groups being aggregated, in order of first appearance.
///
/// A group is a number: its key and its accumulators are found by it in
/// flat vectors, so that a new group costs no allocation of its own (with
/// a single key column) and handing groups out walks them in order
/// without a second hash lookup. BSBM BI Q03 at 100M makes 213 K groups of
/// 2.3 rows on average, where the cost of a group is the cost of a row.
#[derive(Default)]
pub struct Groups {
    /// The group number of each key.
    index: FxHashMap<GroupKey, u32>,
    /// Each group's key, by group number.
    keys: Vec<GroupKey>,
    /// Each group's accumulators, one after another by group number.
    accumulators: Vec<Accumulator>,
    /// What the accumulators keep (DISTINCT sets, GROUP_CONCAT text).
    held: usize,
    /// The group of the row added last: a row of the same key (the next
    /// row of input sorted on the key, as a scan in the key's order is)
    /// finds it without hashing. Only a hint: checked against its key.
    last: usize,
}

/// The values of a group's key columns: one ID without an allocation
/// (most GROUP BYs have one variable), or several.
#[derive(Clone, PartialEq, Eq, Hash)]
enum GroupKey {
    One(Id),
    Many(Vec<Id>),
}

impl GroupKey {
    fn values(&self) -> &[Id] {
        match self {
            GroupKey::One(id) => std::slice::from_ref(id),
            GroupKey::Many(ids) => ids,
        }
    }
}

impl Groups {
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// Adds a group (its key not yet held) with these accumulators.
    fn push(&mut self, key: GroupKey, accumulators: impl IntoIterator<Item = Accumulator>) {
        self.index.insert(key.clone(), self.keys.len() as u32);
        self.keys.push(key);
        self.accumulators.extend(accumulators);
    }
}

impl crate::suspend::StashSize for Groups {
    /// Keys twice (map and list) and an estimate per accumulator.
    fn stash_bytes(&self) -> usize {
        self.held
            + self.keys.first().map_or(0, |k| {
                self.keys.len() * (2 * (k.values().len() * 8 + 24) + 64)
            })
    }
}

/// `OperatorState::numbers[0]` of a group (`numbers[1]`: the stash handle
/// of its parts on disk plus one, or 0): reading its input,
const AGGREGATING: u64 = 0;
/// handing out groups,
const DONE: u64 = 1;
/// reading a part from disk.
const READING_PART: u64 = 2;

/// The input's column of each GROUP BY variable (`None`: never bound).
pub fn key_columns(keys: &[Variable], input_variables: &[Variable]) -> Vec<Option<usize>> {
    keys.iter()
        .map(|k| input_variables.iter().position(|v| v == k))
        .collect()
}

/// Rows added between two charges of the groups' memory.
const CHARGE_EVERY_ROWS: usize = 1024;

/// Why a source of rows stopped being read.
enum Read {
    Paused,
    Ended,
}

impl Group {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        keys: Vec<Variable>,
        aggregates: Vec<(Variable, AggregateExpression)>,
        scope: Arc<crate::expr::Scope>,
    ) -> Group {
        let input_variables = input.variables().to_vec();
        let key_columns = key_columns(&keys, &input_variables);
        let mut variables = keys;
        let aggregates = aggregates
            .into_iter()
            .map(|(v, a)| {
                variables.push(v);
                let evaluator = match &a {
                    AggregateExpression::CountSolutions { distinct: false } => {
                        AggregateInput::EveryRow
                    }
                    AggregateExpression::CountSolutions { distinct: true } => AggregateInput::Row,
                    AggregateExpression::FunctionCall {
                        name: AggregateFunction::Count,
                        expr: Expression::Variable(v),
                        distinct: false,
                    } => AggregateInput::Bound(input_variables.iter().position(|i| i == v)),
                    AggregateExpression::FunctionCall {
                        name,
                        expr,
                        distinct,
                    } => {
                        let evaluator = MemoizedEvaluator::new(
                            ctx.clone(),
                            expr.clone(),
                            input_variables.clone(),
                            scope.clone(),
                        );
                        let column = match expr {
                            Expression::Variable(v) if *distinct => {
                                input_variables.iter().position(|i| i == v)
                            }
                            _ => None,
                        };
                        match (column, name) {
                            (Some(column), AggregateFunction::Count) => {
                                AggregateInput::DistinctCount(column)
                            }
                            (Some(column), _) => AggregateInput::DistinctColumn(column, evaluator),
                            (None, _) => AggregateInput::Expression(evaluator),
                        }
                    }
                };
                (a, evaluator)
            })
            .collect();
        Group {
            memory: ctx.memory_charge(),
            ctx,
            input: Some(input),
            variables,
            key_columns,
            aggregates,
            handed_out: 0,
            partial: Groups::default(),
            spilled: None,
            input_width: input_variables.len(),
            key: GroupKey::Many(Vec::new()),
            sharing: 1,
            charge_every: CHARGE_EVERY_ROWS,
        }
    }

    /// This grouping is one of `groupings` that share the query's memory
    /// side by side: each decides to spill as if it had only its share.
    /// (Deciding alone, each would leave half of what is free for its
    /// groups to grow into, and several such halves overrun the budget.)
    pub fn share_memory(&mut self, groupings: usize) {
        self.sharing = groupings.max(1) as u64;
        self.charge_every = (CHARGE_EVERY_ROWS / groupings.max(1)).max(1);
    }

    /// A new group's accumulators.
    fn accumulators(&self) -> impl Iterator<Item = Accumulator> + '_ {
        self.aggregates.iter().map(|(a, input)| match a {
            AggregateExpression::CountSolutions { distinct } => Accumulator::count_star(*distinct),
            // A column's DISTINCT is done on IDs (`Accumulator::first_id`).
            AggregateExpression::FunctionCall { name, distinct, .. } => Accumulator::new(
                name,
                *distinct && matches!(input, AggregateInput::Expression(_)),
            ),
        })
    }
}

impl Group {
    fn describe_keys(&self) -> String {
        let keys = self.key_columns.len();
        let by = super::variable_list(&self.variables[..keys]);
        let aggregates: Vec<String> = self.variables[keys..]
            .iter()
            .zip(&self.aggregates)
            .map(|(v, (a, _))| format!("{v} := {a}"))
            .collect();
        format!("by {by}; {}", aggregates.join(", "))
    }
}

impl Operator for Group {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// One row without GROUP BY, else at most one per input row.
    fn estimated_rows(&self) -> Option<u64> {
        if self.key_columns.is_empty() {
            return Some(1);
        }
        self.input.as_ref()?.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("Group", self.describe_keys())
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input
            .as_deref()
            .map(|i| i as &dyn Operator)
            .into_iter()
            .collect()
    }

    /// Aggregating: the groups so far (stashed) and the input's state.
    /// Done: the groups not yet handed out (stashed). Reading a part: the
    /// groups so far. With the parts on disk, when there are any.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let reading_part = self.spilled.as_ref().is_some_and(|s| s.reading());
        let spilled = self.spilled.take().map_or(0, |parts| stash.put(*parts) + 1);
        let mut partial = std::mem::take(&mut self.partial);
        let (phase, children) = match self.input.as_mut() {
            Some(input) => (AGGREGATING, vec![input.save(stash)?]),
            None if reading_part => (READING_PART, Vec::new()),
            None => {
                // Only the groups not handed out are kept, in order; no
                // row is added to them any more.
                let per_group = self.aggregates.len();
                partial.keys.drain(..self.handed_out);
                partial.accumulators.drain(..self.handed_out * per_group);
                partial.index.clear();
                (DONE, Vec::new())
            }
        };
        Ok(OperatorState {
            numbers: vec![phase, spilled],
            stashed: Some(stash.put(partial)),
            children,
        })
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if let Some(handle) = state.number(1)?.checked_sub(1) {
            self.spilled = Some(Box::new(stash.take(handle)?));
        }
        self.partial = state.take_stashed(stash, "grouped rows")?;
        self.handed_out = 0;
        match state.number(0)? {
            DONE | READING_PART => self.input = None,
            AGGREGATING => {
                let input = self
                    .input
                    .as_mut()
                    .ok_or_else(|| bad_state("group input"))?;
                input.restore(state.into_child()?, stash)?;
            }
            other => return Err(bad_state(format!("group phase {other}"))),
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let paused = Ok(Some(Batch::with_columns(self.variables.len())));
        loop {
            let reading_part = self.spilled.as_ref().is_some_and(|s| s.reading());
            let read = if self.input.is_some() {
                self.read_input()?
            } else if reading_part {
                self.read_part()?
            } else {
                // Handing out the groups of the source that ended.
                if let Some(batch) = self.hand_out()? {
                    return Ok(Some(batch));
                }
                let Some(spilled) = self.spilled.as_mut() else {
                    return Ok(None);
                };
                if !spilled.next_part() {
                    return Ok(None);
                }
                self.partial = Groups::default();
                self.handed_out = 0;
                continue;
            };
            match read {
                Read::Paused => return paused,
                Read::Ended => {
                    if let Some(spilled) = self.spilled.as_mut() {
                        spilled.end_source()?;
                    }
                    self.handed_out = 0;
                }
            }
        }
    }
}

impl Group {
    /// Reads the input until it ends or the turn is over.
    fn read_input(&mut self) -> Result<Read, EngineError> {
        let mut input = self.input.take().expect("reading the input");
        let mut partial = std::mem::take(&mut self.partial);
        // Without GROUP BY, counts of every row (`COUNT(*)`) alone count
        // batches: no row is looked at (12 ns a row otherwise).
        let rows_counted_only = self.key_columns.is_empty()
            && self
                .aggregates
                .iter()
                .all(|(_, input)| matches!(input, AggregateInput::EveryRow));
        while let Some(batch) = input.next_batch()? {
            self.ctx.check()?;
            if rows_counted_only && batch.len > 0 {
                if partial.len() == 0 {
                    partial.push(GroupKey::Many(Vec::new()), self.accumulators());
                }
                for acc in partial.accumulators.iter_mut() {
                    acc.count_rows(batch.len as u64);
                }
            } else {
                let mut row = vec![Id::UNDEFINED; batch.columns.len()];
                for i in 0..batch.len {
                    batch.row_into(i, &mut row);
                    self.add_row(&row, &mut partial, i)?;
                }
            }
            self.charge_or_spill(&partial)?;
            // The input paused, or the turn is over: keep the groups for
            // the next call.
            if batch.len == 0 || self.ctx.should_yield() {
                self.partial = partial;
                self.input = Some(input);
                return Ok(Read::Paused);
            }
        }
        // Without GROUP BY, an empty input still makes one (empty) group.
        if partial.len() == 0 && self.key_columns.is_empty() {
            partial.push(GroupKey::Many(Vec::new()), self.accumulators());
        }
        self.partial = partial;
        Ok(Read::Ended)
    }

    /// Reads the part on disk being grouped until it ends or the turn is
    /// over.
    fn read_part(&mut self) -> Result<Read, EngineError> {
        let mut partial = std::mem::take(&mut self.partial);
        let width = self.input_width;
        let mut rows = Vec::new();
        let read = loop {
            let spilled = self.spilled.as_mut().expect("reading a part");
            let count = spilled.read_block(&mut rows)?;
            if count == 0 {
                break Read::Ended;
            }
            for i in 0..count {
                self.add_row(&rows[i * width..(i + 1) * width], &mut partial, i)?;
            }
            self.charge_or_spill(&partial)?;
            self.ctx.check()?;
            if self.ctx.should_yield() {
                break Read::Paused;
            }
        };
        self.partial = partial;
        Ok(read)
    }

    /// Hands out the next batch of the groups of the source that ended.
    fn hand_out(&mut self) -> Result<Option<Batch>, EngineError> {
        self.ctx.check()?;
        let per_group = self.aggregates.len();
        let groups = &mut self.partial;
        let end = (self.handed_out + super::BATCH_ROWS).min(groups.len());
        let mut batch = Batch::with_columns(self.variables.len());
        let mut row = Vec::with_capacity(self.variables.len());
        for g in self.handed_out..end {
            row.clear();
            row.extend_from_slice(groups.keys[g].values());
            for acc in &mut groups.accumulators[g * per_group..(g + 1) * per_group] {
                // A count is an inline integer: no literal made and
                // interned for it.
                if let Some(id) = acc
                    .count()
                    .and_then(|n| i64::try_from(n).ok())
                    .and_then(integer_id)
                {
                    row.push(id);
                    continue;
                }
                let acc = std::mem::replace(acc, Accumulator::count_star(false));
                row.push(match acc.finish() {
                    Some(term) => self.ctx.intern(&term)?,
                    None => Id::UNDEFINED,
                });
            }
            batch.push_row(&row);
        }
        self.handed_out = end;
        if batch.len == 0 {
            // Done with these groups: what they held is given back.
            self.partial = Groups::default();
            self.handed_out = 0;
            self.memory.set(0)?;
        }
        Ok((batch.len > 0).then_some(batch))
    }
}

impl Group {
    /// What the groups' keys and their accumulators hold.
    fn group_bytes(&self, groups: &Groups) -> u64 {
        (groups.len() * (self.variables.len() * 64 + 64) + groups.held) as u64
    }

    /// Charges the groups; when they would not fit twice over (times the
    /// groupings sharing the memory, see [`Group::share_memory`]; and there
    /// are keys to split by), rows of new keys go to disk from now on. The
    /// groups kept go on taking rows, and what their aggregates hold
    /// (DISTINCT sets, GROUP_CONCAT) grows: half the room is left for that.
    fn charge_or_spill(&mut self, groups: &Groups) -> Result<(), EngineError> {
        let bytes = self.group_bytes(groups);
        let spilling = self.spilled.as_ref().is_some_and(|s| s.spilling());
        if !spilling && !self.key_columns.is_empty() && !self.memory.fits(2 * self.sharing * bytes)
        {
            let width = self.input_width;
            let keys = self.key_columns.iter().flatten().copied().collect();
            self.spilled
                .get_or_insert_with(|| Box::new(SpilledParts::new(width, keys)))
                .start(&self.ctx)?;
            self.memory.set_unchecked(bytes);
            return Ok(());
        }
        self.memory.set(bytes)
    }

    /// Adds one row to a group's accumulators.
    fn accumulate(
        &self,
        row: &[Id],
        accumulators: &mut [Accumulator],
        held: &mut usize,
    ) -> Result<(), EngineError> {
        for ((_, input), acc) in self.aggregates.iter().zip(accumulators.iter_mut()) {
            let before = acc.held_bytes();
            match input {
                AggregateInput::Row => {
                    let terms = self.ctx.terms(row)?;
                    acc.add_row(&terms);
                }
                AggregateInput::EveryRow => acc.count_one(true),
                AggregateInput::Bound(column) => {
                    acc.count_one(column.is_some_and(|c| row[c] != Id::UNDEFINED))
                }
                AggregateInput::DistinctCount(column) => acc.count_distinct_id(row[*column]),
                AggregateInput::DistinctColumn(column, e) => {
                    if acc.first_id(row[*column]) {
                        acc.add(e.evaluate(row)?);
                    }
                }
                AggregateInput::Expression(e) => acc.add(e.evaluate(row)?),
            }
            *held = (*held + acc.held_bytes()).saturating_sub(before);
        }
        Ok(())
    }

    /// Adds row number `i` of a batch to its group: a group held in memory
    /// takes it; a new key makes a group, or goes to disk while spilling.
    fn add_row(&mut self, row: &[Id], groups: &mut Groups, i: usize) -> Result<(), EngineError> {
        let value = |column: &Option<usize>| column.map_or(Id::UNDEFINED, |c| row[c]);
        let key = match &self.key_columns[..] {
            [column] => GroupKey::One(value(column)),
            columns => {
                let mut key = match std::mem::replace(&mut self.key, GroupKey::Many(Vec::new())) {
                    GroupKey::Many(key) => key,
                    GroupKey::One(_) => Vec::new(),
                };
                key.clear();
                key.extend(columns.iter().map(value));
                GroupKey::Many(key)
            }
        };
        let per_group = self.aggregates.len();
        // The group of the row before, or one lookup for a group seen
        // before (most rows).
        let seen = match groups.keys.get(groups.last) == Some(&key) {
            true => Some(groups.last),
            false => groups.index.get(&key).map(|&g| g as usize),
        };
        if let Some(g) = seen {
            groups.last = g;
            let accumulators = &mut groups.accumulators[g * per_group..(g + 1) * per_group];
            self.accumulate(row, accumulators, &mut groups.held)?;
        } else if let Some(spilled) = self.spilled.as_mut().filter(|s| s.spilling()) {
            spilled.push(row)?;
        } else {
            let g = groups.len();
            groups.push(key.clone(), self.accumulators());
            groups.last = g;
            let accumulators = &mut groups.accumulators[g * per_group..];
            self.accumulate(row, accumulators, &mut groups.held)?;
        }
        self.key = key;
        // Between two checks the groups grow by up to this many rows' worth
        // (a new group is about 200 bytes): groupings sharing the memory
        // check as much more often as they are many.
        if i % self.charge_every == self.charge_every - 1 {
            self.charge_or_spill(groups)?;
        }
        Ok(())
    }
}
