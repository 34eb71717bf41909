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
//! what suspension needs: the state is the copies' states and the batches
//! not handed out yet.

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
    /// Batches of the last round not handed out yet.
    ready: VecDeque<Batch>,
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
            pipelines,
            ready: VecDeque::new(),
        }
    }

    /// How many copies a pipeline gets: one per core the query may use.
    pub fn parts(ctx: &QueryContext) -> usize {
        ctx.cores().clamp(1, MOST_PARTS)
    }

    /// One batch of every copy that has not ended, made on all cores.
    /// Returns whether a copy paused for the end of the turn.
    fn round(&mut self) -> Result<bool, EngineError> {
        use rayon::prelude::*;
        self.ctx.share_turn_end(self.pipelines.len());
        let made: Vec<Result<Option<Batch>, EngineError>> = self
            .pipelines
            .par_iter_mut()
            .zip(self.ended.par_iter())
            .map(|(pipeline, &ended)| match ended {
                true => Ok(None),
                false => pipeline.next_batch(),
            })
            .collect();
        self.ctx.share_turn_end(0);
        let mut paused = false;
        for (i, batch) in made.into_iter().enumerate() {
            match batch? {
                None => self.ended[i] = true,
                Some(batch) if batch.len == 0 => paused = true,
                Some(batch) => self.ready.push_back(batch),
            }
        }
        Ok(paused)
    }
}

impl Operator for ParallelPipelines {
    fn variables(&self) -> &[Variable] {
        &self.variables
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

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let children = self
            .pipelines
            .iter_mut()
            .map(|p| p.save(stash))
            .collect::<Result<_, _>>()?;
        let numbers = self.ended.iter().map(|&e| u64::from(e)).collect();
        let mut state = OperatorState::new(numbers, children);
        if !self.ready.is_empty() {
            let mut rest = Batch::with_columns(self.variables.len());
            for batch in self.ready.drain(..) {
                for (column, values) in rest.columns.iter_mut().zip(batch.columns) {
                    column.extend(values);
                }
                rest.len += batch.len;
            }
            state.stashed = Some(stash.put(rest));
        }
        Ok(state)
    }

    /// Only between rounds, when no batch waits.
    fn checkpoint(&self) -> Option<OperatorState> {
        if !self.ready.is_empty() {
            return None;
        }
        let children = self
            .pipelines
            .iter()
            .map(|p| p.checkpoint())
            .collect::<Option<_>>()?;
        let numbers = self.ended.iter().map(|&e| u64::from(e)).collect();
        Some(OperatorState::new(numbers, children))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if state.children.len() != self.pipelines.len() || state.numbers.len() != self.ended.len() {
            return Err(bad_state(format!(
                "the query was suspended running {} copies of a pipeline, and is planned with {} \
                 here (a server with another number of cores)",
                state.children.len(),
                self.pipelines.len()
            )));
        }
        for (ended, &number) in self.ended.iter_mut().zip(&state.numbers) {
            *ended = number == 1;
        }
        self.ready.clear();
        if let Some(handle) = state.stashed {
            self.ready.push_back(stash.take(handle)?);
        }
        for (pipeline, child) in self.pipelines.iter_mut().zip(state.children) {
            pipeline.restore(child, stash)?;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Ok(Some(batch));
            }
            if self.ended.iter().all(|&e| e) {
                return Ok(None);
            }
            self.ctx.check()?;
            if self.round()? {
                // A copy took the end-of-turn signal: with rows in hand they
                // go up first and the signal with them; without, the pause.
                let rows: usize = self.ready.iter().map(|b| b.len).sum();
                if rows == 0 {
                    return Ok(Some(Batch::with_columns(self.variables.len())));
                }
                self.ctx.input_paused(rows);
            }
        }
    }
}
