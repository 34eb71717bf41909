//! Copies of one pipeline run side by side, one per core: morsel-driven
//! parallelism for a single query.
//!
//! The planner builds the same join tree once per core, the scan that
//! drives each copy reading its own morsel of the pattern's rows (cut at
//! rows of about equal counts, `Scan::part`); everything above that scan in
//! the copy (index joins, filters, small hash joins' probes) then works on
//! that morsel's rows only, so the copies' outputs together are the
//! tree's, in another order. Each copy is a chain of ordinary operators
//! with no state shared with the others (each builds its own small hash
//! tables and lookup caches), so nothing is locked.
//!
//! The copies run in rounds: each makes its next batch on a core of the
//! query pool, and the batches are handed out one by one before the next
//! round. Between two calls every copy is at a batch boundary, which is
//! what suspension needs: the state is where the round started and the
//! rows of each copy handed out since (positions only, when every copy has
//! them), or the copies' states and the batches not handed out yet.
//!
//! The order of the rows across copies depends on where each copy cut its
//! batches, which may differ when a query runs again from a saved state
//! (an operator stops at the end of a turn with what it has): resumed, the
//! same rows come, in another order. So the operator has no checkpoint
//! (`Operator::checkpoint`, which promises the same order): a reader above
//! it stashes the rows it read and has not used. The server reads paged
//! queries on one core (`QueryRequest::cores`), so that their tokens stay
//! free of stashed state and any server resumes them.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::collections::VecDeque;
use std::sync::Arc;

/// Most copies of a pipeline, whatever the cores.
const MOST_PARTS: usize = 8;

pub struct ParallelPipelines {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    pipelines: Vec<BoxedOperator>,
    /// Which copies have ended.
    ended: Vec<bool>,
    /// Batches of the last round not handed out yet, with their copy.
    ready: VecDeque<(usize, Batch)>,
    /// Rows of each copy's output still to drop: a restored round's rows
    /// that were handed out before the suspension.
    replay: Vec<usize>,
    /// Where the last round started, so that a suspension in the middle of
    /// it saves positions only (see [`Round`]).
    round: Option<Round>,
}

/// The start of a round: each copy's checkpoint then (when every copy has
/// one), which had ended, the rows each was to drop, and the rows of each
/// handed out since. Saved in the middle of the round, it makes the round
/// run again on resuming, dropping what was handed out: the state fits in
/// the token, so any server can resume a pipelined query.
struct Round {
    checkpoints: Vec<OperatorState>,
    ended: Vec<bool>,
    replay: Vec<usize>,
    handed_out: Vec<usize>,
}

impl ParallelPipelines {
    /// Copies of one pipeline (the same variables in the same order).
    pub fn new(ctx: Arc<QueryContext>, pipelines: Vec<BoxedOperator>) -> ParallelPipelines {
        let variables = pipelines
            .first()
            .map(|p| p.variables().to_vec())
            .unwrap_or_default();
        debug_assert!(pipelines.iter().all(|p| p.variables() == variables));
        ParallelPipelines {
            ctx,
            variables,
            ended: vec![false; pipelines.len()],
            replay: vec![0; pipelines.len()],
            pipelines,
            ready: VecDeque::new(),
            round: None,
        }
    }

    /// How many copies a pipeline gets: one per core the query may use.
    pub fn parts(ctx: &QueryContext) -> usize {
        ctx.cores().clamp(1, MOST_PARTS)
    }

    /// One batch of every copy that has not ended, made on all cores.
    /// Returns whether a copy paused for the end of the turn.
    fn round(&mut self) -> Result<bool, EngineError> {
        self.round = self
            .pipelines
            .iter()
            .map(|p| p.checkpoint())
            .collect::<Option<Vec<_>>>()
            .map(|checkpoints| Round {
                checkpoints,
                ended: self.ended.clone(),
                replay: self.replay.clone(),
                handed_out: vec![0; self.pipelines.len()],
            });
        let made = next_batch_of_each(&self.ctx, &mut self.pipelines, &self.ended);
        let mut paused = false;
        for (i, batch) in made.into_iter().enumerate() {
            match batch? {
                None => self.ended[i] = true,
                Some(batch) if batch.len == 0 => paused = true,
                Some(batch) => {
                    let dropped = self.replay[i].min(batch.len);
                    self.replay[i] -= dropped;
                    if dropped < batch.len {
                        self.ready.push_back((i, skip_rows(batch, dropped)));
                    }
                }
            }
        }
        Ok(paused)
    }

    /// The state from the start of the current round, with what was
    /// handed out of it to drop; `None` when a copy had no checkpoint.
    fn round_state(&self) -> Option<OperatorState> {
        let round = self.round.as_ref()?;
        let replay = round
            .replay
            .iter()
            .zip(&round.handed_out)
            .map(|(&r, &h)| r + h);
        Some(OperatorState::new(
            numbers(&round.ended, replay),
            round.checkpoints.clone(),
        ))
    }
}

/// The next batch of each operator not `done`, made side by side on the
/// query pool (`None` for those done). Each may hear the end of the turn
/// (`QueryContext::share_turn_end`).
pub(super) fn next_batch_of_each(
    ctx: &QueryContext,
    operators: &mut [BoxedOperator],
    done: &[bool],
) -> Vec<Result<Option<Batch>, EngineError>> {
    use rayon::prelude::*;
    ctx.share_turn_end(operators.len());
    let made = operators
        .par_iter_mut()
        .zip(done.par_iter())
        .map(|(operator, &done)| match done {
            true => Ok(None),
            false => operator.next_batch(),
        })
        .collect();
    ctx.share_turn_end(0);
    made
}

/// `ended` flags, then the rows to drop per copy.
fn numbers(ended: &[bool], replay: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut numbers: Vec<u64> = ended.iter().map(|&e| u64::from(e)).collect();
    numbers.extend(replay.map(|r| r as u64));
    numbers
}

/// `batch` without its first `rows` rows.
fn skip_rows(batch: Batch, rows: usize) -> Batch {
    if rows == 0 {
        return batch;
    }
    Batch {
        columns: batch
            .columns
            .into_iter()
            .map(|c| c[rows..].to_vec())
            .collect(),
        len: batch.len - rows,
    }
}

impl Operator for ParallelPipelines {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn runs_as_copies(&self) -> bool {
        true
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.pipelines.iter().try_fold(0u64, |sum, pipeline| {
            Some(sum.saturating_add(pipeline.estimated_rows()?))
        })
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new(
            "Parallel",
            format!(
                "{} copies, each on a morsel of its first scan",
                self.pipelines.len()
            ),
        )
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.pipelines.iter().map(|p| p.as_ref()).collect()
    }

    /// Any one copy may hold all the first rows.
    fn first_rows_only(&mut self, rows: usize) {
        for pipeline in &mut self.pipelines {
            pipeline.first_rows_only(rows);
        }
    }

    fn small_first_batches(&mut self, rows: usize) {
        for pipeline in &mut self.pipelines {
            pipeline.small_first_batches(rows);
        }
    }

    /// In the middle of a round, its start (positions only) when it has
    /// one; otherwise the copies' states and the batches not handed out,
    /// stashed.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        if !self.ready.is_empty() {
            if let Some(state) = self.round_state() {
                return Ok(state);
            }
        }
        let children = self
            .pipelines
            .iter_mut()
            .map(|p| p.save(stash))
            .collect::<Result<_, _>>()?;
        let mut state =
            OperatorState::new(numbers(&self.ended, self.replay.iter().copied()), children);
        if !self.ready.is_empty() {
            let rest = self.ready.drain(..).map(|(_, batch)| batch);
            state.stashed = Some(stash.put(Batch::concat(self.variables.len(), rest)));
        }
        Ok(state)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let copies = self.pipelines.len();
        if state.children.len() != copies || state.numbers.len() != 2 * copies {
            return Err(bad_state(format!(
                "the query was suspended running {} copies of a pipeline, and is planned with {} \
                 here (a server with another number of cores)",
                state.children.len(),
                copies
            )));
        }
        for (ended, &number) in self.ended.iter_mut().zip(&state.numbers) {
            *ended = number == 1;
        }
        for (replay, &number) in self.replay.iter_mut().zip(&state.numbers[copies..]) {
            *replay = usize::try_from(number).map_err(|_| bad_state("rows to drop"))?;
        }
        self.ready.clear();
        self.round = None;
        if let Some(handle) = state.stashed {
            self.ready.push_back((0, stash.take(handle)?));
        }
        for (pipeline, child) in self.pipelines.iter_mut().zip(state.children) {
            pipeline.restore(child, stash)?;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            if let Some((copy, batch)) = self.ready.pop_front() {
                if let Some(round) = &mut self.round {
                    round.handed_out[copy] += batch.len;
                }
                return Ok(Some(batch));
            }
            if self.ended.iter().all(|&e| e) {
                return Ok(None);
            }
            self.ctx.check()?;
            if self.round()? {
                // A copy took the end-of-turn signal: with rows in hand they
                // go up first and the signal with them; without, the pause.
                let rows: usize = self.ready.iter().map(|(_, b)| b.len).sum();
                if rows == 0 {
                    return Ok(Some(Batch::with_columns(self.variables.len())));
                }
                self.ctx.input_paused(rows);
            }
        }
    }
}
