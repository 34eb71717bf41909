//! GROUP BY on all cores: the input's rows are routed by a hash of their
//! key to one [`Group`] per core, so each group lives in exactly one
//! partition and every aggregate (DISTINCT, GROUP_CONCAT, SAMPLE) is
//! computed there whole, with nothing to merge afterwards.
//!
//! The routing runs on one core as the input's batches come (a pass over
//! the key columns), and the partitions aggregate what was routed side by
//! side every [`ROUTED_ROWS`] rows; once the input has ended they finish
//! their groups and hand them out side by side too, a batch each per
//! round. Each partition is an ordinary `Group` reading [`HandedRows`]: it
//! charges its own memory and spills on its own, deciding as if its share
//! of the free memory were all there is (`Group::share_memory`).
//!
//! A key that most rows share puts most of the work in one partition:
//! the grouping is then as fast as on one core, plus the routing.
//!
//! Like the copies of a pipeline (`ParallelPipelines`), the partitions hear
//! the end of a turn each (`QueryContext::share_turn_end`); the groups are
//! materialized state, so a suspension stashes them (there is no
//! checkpoint), and paged queries, which plan on one core, never get here.

use super::group::{key_columns, Group};
use super::handed_rows::{lock, HandedRows, RowQueue, SharedRowQueue};
use super::parallel_pipelines::next_batch_of_each;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Measured, Operator, BATCH_ROWS};
use crate::context::QueryContext;
use crate::expr::Scope;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::AggregateExpression;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tern_index::Id;

/// Rows routed before the partitions aggregate them side by side: a
/// round's hand-over (tens of microseconds) is then little against the
/// grouping (a few milliseconds).
const ROUTED_ROWS: usize = 2 * BATCH_ROWS;

/// `OperatorState::numbers[0]`: reading the input (its state is the last
/// child),
const READING: u64 = 0;
/// or handing out the partitions' groups.
const HANDING_OUT: u64 = 1;

pub struct ParallelGroup {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    input: Option<BoxedOperator>,
    /// The input's columns of the GROUP BY variables.
    key_columns: Vec<Option<usize>>,
    partitions: Vec<BoxedOperator>,
    queues: Vec<SharedRowQueue>,
    /// Rows routed to each partition and not queued yet.
    routed: Vec<Batch>,
    routed_rows: usize,
    /// Which partitions have handed out all their groups.
    finished: Vec<bool>,
    /// Batches of groups of the last round not handed out yet.
    ready: VecDeque<Batch>,
}

impl ParallelGroup {
    /// GROUP BY `keys` (at least one) with `aggregates`, in `parts`
    /// partitions.
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        keys: Vec<Variable>,
        aggregates: Vec<(Variable, AggregateExpression)>,
        scope: Arc<Scope>,
        parts: usize,
    ) -> ParallelGroup {
        let input_variables = input.variables().to_vec();
        let key_columns = key_columns(&keys, &input_variables);
        let queues: Vec<SharedRowQueue> = (0..parts)
            .map(|_| Arc::new(Mutex::new(RowQueue::default())))
            .collect();
        let partitions: Vec<BoxedOperator> = queues
            .iter()
            .map(|queue| {
                let rows = HandedRows::new(input_variables.clone(), queue.clone());
                // Measured, so that EXPLAIN shows each partition's rows and time.
                let rows = Measured::new(Box::new(rows), None);
                let mut group = Group::new(
                    ctx.clone(),
                    Box::new(rows),
                    keys.clone(),
                    aggregates.clone(),
                    scope.clone(),
                );
                group.share_memory(parts);
                Box::new(Measured::new(Box::new(group), None)) as BoxedOperator
            })
            .collect();
        let variables = partitions[0].variables().to_vec();
        ParallelGroup {
            ctx,
            routed: vec![Batch::with_columns(input_variables.len()); parts],
            routed_rows: 0,
            variables,
            input: Some(input),
            key_columns,
            finished: vec![false; parts],
            partitions,
            queues,
            ready: VecDeque::new(),
        }
    }

    /// Routes `batch`'s rows to their partitions.
    fn route(&mut self, batch: Batch) {
        let parts = self.partitions.len() as u64;
        let mut hashes = vec![0u64; batch.len];
        for column in &self.key_columns {
            let Some(column) = *column else { continue };
            for (hash, id) in hashes.iter_mut().zip(&batch.columns[column]) {
                *hash = mix(*hash, *id);
            }
        }
        // The top bits of the hash pick the partition: the partition's own
        // hash table indexes by the low bits of another hash of the key.
        let partition_of: Vec<u8> = hashes
            .iter()
            .map(|&h| (((h >> 32) * parts) >> 32) as u8)
            .collect();
        for (c, values) in batch.columns.iter().enumerate() {
            for (&p, &id) in partition_of.iter().zip(values) {
                self.routed[p as usize].columns[c].push(id);
            }
        }
        for &p in &partition_of {
            self.routed[p as usize].len += 1;
        }
        self.routed_rows += batch.len;
    }

    /// Moves the routed rows to the partitions' queues.
    fn queue_routed(&mut self) {
        for (routed, queue) in self.routed.iter_mut().zip(&self.queues) {
            let columns = routed.columns.len();
            let batch = std::mem::replace(routed, Batch::with_columns(columns));
            lock(queue).push(batch);
        }
        self.routed_rows = 0;
    }

    /// The partitions with rows queued take them in, side by side.
    fn aggregate(&mut self) -> Result<(), EngineError> {
        self.queue_routed();
        let idle: Vec<bool> = self.queues.iter().map(|q| lock(q).is_empty()).collect();
        for (batch, idle) in next_batch_of_each(&self.ctx, &mut self.partitions, &idle)
            .into_iter()
            .zip(idle)
        {
            match batch? {
                Some(batch) if batch.len == 0 => {}
                None if idle => {}
                _ => return Err(bad_state("a partition ended before its input")),
            }
        }
        Ok(())
    }

    /// A batch of groups from each partition not finished, side by side.
    /// Returns whether one paused for the end of the turn.
    fn hand_out_round(&mut self) -> Result<bool, EngineError> {
        let made = next_batch_of_each(&self.ctx, &mut self.partitions, &self.finished);
        let mut paused = false;
        for (i, batch) in made.into_iter().enumerate() {
            match batch? {
                None => self.finished[i] = true,
                Some(batch) if batch.len == 0 => paused = true,
                Some(batch) => self.ready.push_back(batch),
            }
        }
        Ok(paused)
    }

    /// Reads and routes the input until enough rows are routed, it
    /// pauses, or it ends. Returns whether it paused.
    fn read_input(&mut self) -> Result<bool, EngineError> {
        while self.routed_rows < ROUTED_ROWS {
            let input = self.input.as_mut().expect("reading the input");
            match input.next_batch()? {
                None => {
                    self.input = None;
                    self.queue_routed();
                    for queue in &self.queues {
                        lock(queue).end();
                    }
                    return Ok(false);
                }
                Some(batch) if batch.len == 0 => return Ok(true),
                Some(batch) => {
                    self.ctx.check()?;
                    self.route(batch);
                }
            }
        }
        Ok(false)
    }
}

/// The running hash of a key with one more of its values (a multiplier
/// other than the one of the partitions' hash tables).
fn mix(hash: u64, id: Id) -> u64 {
    (hash.rotate_left(23) ^ id.0).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Operator for ParallelGroup {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.as_ref()?.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        let group = self.partitions[0].describe();
        OperatorInfo::new(
            "ParallelGroup",
            format!(
                "{}; {} partitions by a hash of the key",
                group.detail,
                self.partitions.len()
            ),
        )
    }

    /// The input (while it is read), then the partitions.
    fn children(&self) -> Vec<&dyn Operator> {
        let input = self.input.as_deref().map(|i| i as &dyn Operator);
        input
            .into_iter()
            .chain(self.partitions.iter().map(|p| p.as_ref()))
            .collect()
    }

    /// The partitions' states (their groups stashed, with the rows queued
    /// for them), then the input's while it is read; the groups made and
    /// not handed out, stashed.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        self.queue_routed();
        let mut children = self
            .partitions
            .iter_mut()
            .map(|p| p.save(stash))
            .collect::<Result<Vec<_>, _>>()?;
        let phase = match self.input.as_mut() {
            Some(input) => {
                children.push(input.save(stash)?);
                READING
            }
            None => HANDING_OUT,
        };
        let mut numbers = vec![phase];
        numbers.extend(self.finished.iter().map(|&f| u64::from(f)));
        let mut state = OperatorState::new(numbers, children);
        if !self.ready.is_empty() {
            let rest = Batch::concat(self.variables.len(), self.ready.drain(..));
            state.stashed = Some(stash.put(rest));
        }
        Ok(state)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let parts = self.partitions.len();
        let phase = state.number(0)?;
        let reading = match phase {
            READING => true,
            HANDING_OUT => false,
            other => return Err(bad_state(format!("parallel group phase {other}"))),
        };
        if state.numbers.len() != parts + 1 || state.children.len() != parts + usize::from(reading)
        {
            return Err(bad_state(format!(
                "the query was suspended grouping in {} partitions, and is planned with {parts} \
                 here (a server with another number of cores)",
                state.numbers.len().saturating_sub(1)
            )));
        }
        for (finished, &number) in self.finished.iter_mut().zip(&state.numbers[1..]) {
            *finished = number == 1;
        }
        self.ready.clear();
        if let Some(handle) = state.stashed {
            self.ready.push_back(stash.take(handle)?);
        }
        let mut children = state.children.into_iter();
        for partition in &mut self.partitions {
            let child = children
                .next()
                .ok_or_else(|| bad_state("partition state"))?;
            partition.restore(child, stash)?;
        }
        match children.next() {
            Some(child) => {
                let input = self
                    .input
                    .as_mut()
                    .ok_or_else(|| bad_state("parallel group input"))?;
                input.restore(child, stash)?;
            }
            None => self.input = None,
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let paused = Batch::with_columns(self.variables.len());
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Ok(Some(batch));
            }
            self.ctx.check()?;
            if self.input.is_some() {
                let input_paused = self.read_input()?;
                // Once the input has ended, the partitions take the rest of
                // their rows in as they start handing out.
                if self.input.is_some() {
                    self.aggregate()?;
                    if input_paused || self.ctx.turn_over() {
                        return Ok(Some(paused));
                    }
                }
                continue;
            }
            if self.finished.iter().all(|&f| f) {
                return Ok(None);
            }
            if self.hand_out_round()? {
                // A partition took the end-of-turn signal: with groups in
                // hand they go up first and the signal with them.
                let rows: usize = self.ready.iter().map(|b| b.len).sum();
                if rows == 0 {
                    return Ok(Some(paused));
                }
                self.ctx.input_paused(rows);
            }
        }
    }
}
