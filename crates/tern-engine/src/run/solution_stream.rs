//! The lazy solutions of a started SELECT (or ASK), time-sliced, and how
//! they are suspended or parked between pages.

use super::row_batch::{RowBatch, Rows};
use super::SolutionRow;
use crate::context::{CancelFlag, QueryContext};
use crate::exec::{BoxedOperator, Operator, BATCH_ROWS};
use crate::expr::is_blank_variable;
use crate::suspend::{OperatorState, SavedQuery, Stash, StashSize};
use crate::EngineError;
use oxrdf::Variable;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows gathered into one [`RowBatch`] from full batches of the operators.
const GATHER_ROWS: usize = 16 * 1024;

/// Batches at least this long have their columns decoded in parallel.
const PARALLEL_DECODE_ROWS: usize = 1024;

/// `decode` of each shown column of a batch of `rows` rows, on all cores
/// for long batches: decoding terms is most of the cost of exporting a
/// large result.
fn per_column<T: Send>(
    shown: &[usize],
    rows: usize,
    decode: impl Fn(&usize) -> Result<T, EngineError> + Sync + Send,
) -> Result<Vec<T>, EngineError> {
    if rows >= PARALLEL_DECODE_ROWS && shown.len() > 1 {
        use rayon::prelude::*;
        shown.par_iter().map(decode).collect()
    } else {
        shown.iter().map(decode).collect()
    }
}

/// The operators' checkpoint before a batch, and the rows they produced
/// for it since (skipped ones included).
struct BatchMark {
    before: Option<OperatorState>,
    rows: u64,
}

/// Solutions as terms, decoded a batch at a time.
pub struct SolutionStream {
    ctx: Arc<QueryContext>,
    root: BoxedOperator,
    /// Output columns of the root that are shown (internal blank-node
    /// variables are not).
    shown: Vec<usize>,
    buffer: VecDeque<SolutionRow>,
    /// Rows handed back by the writer (see [`hand_back`](Self::hand_back)):
    /// they come next, before anything else.
    held: Option<RowBatch>,
    /// Where the operators stood before the batch `next_ids` made last,
    /// kept while [`mark_batches`](Self::mark_batches) is on: a page that
    /// hands rows of that batch back can still be resumed anywhere, from
    /// there, skipping the rows it had.
    mark: Option<BatchMark>,
    marking: bool,
    /// Rows of the operators' output still to drop: the query resumed from
    /// a point before rows an earlier page had.
    skip: u64,
    done: bool,
    /// The rows are the triples of CONSTRUCT or DESCRIBE.
    triples: bool,
}

impl SolutionStream {
    pub(crate) fn new(ctx: Arc<QueryContext>, root: BoxedOperator) -> SolutionStream {
        let shown = root
            .variables()
            .iter()
            .enumerate()
            .filter(|(_, v)| !is_blank_variable(v))
            .map(|(i, _)| i)
            .collect();
        SolutionStream {
            ctx,
            root,
            shown,
            buffer: VecDeque::new(),
            held: None,
            mark: None,
            marking: false,
            skip: 0,
            done: false,
            triples: false,
        }
    }

    /// Marks the rows as the triples of CONSTRUCT or DESCRIBE (so that a
    /// parked stream is continued as one).
    pub(crate) fn for_triples(mut self) -> SolutionStream {
        self.triples = true;
        self
    }

    /// Whether the rows are the triples of CONSTRUCT or DESCRIBE.
    pub fn is_triples(&self) -> bool {
        self.triples
    }

    pub fn variables(&self) -> Vec<Variable> {
        self.shown
            .iter()
            .map(|&i| self.root.variables()[i].clone())
            .collect()
    }

    /// Decodes batches until there is a row or the end; with a turn end
    /// (`until`), also stops when the turn is over and the operators had
    /// nothing yet (they returned an empty batch).
    fn fill(&mut self, until: Option<Instant>) -> Result<(), EngineError> {
        self.ctx.set_turn_end(until);
        while self.buffer.is_empty() && !self.done {
            match self.root.next_batch()? {
                None => self.done = true,
                Some(batch) if batch.len == 0 => {
                    // An operator paused for the end of the turn.
                    if until.is_some_and(|u| Instant::now() >= u) {
                        break;
                    }
                }
                Some(batch) => {
                    let from = self.skipped(batch.len);
                    let len = batch.len - from;
                    // Columns are decoded on all cores (decoding terms is
                    // most of the cost of exporting a large result); terms
                    // are then moved into their rows, not copied.
                    let decode = |&c: &usize| self.ctx.terms(&batch.columns[c][from..]);
                    let decoded: Vec<Vec<Option<oxrdf::Term>>> =
                        per_column(&self.shown, len, decode)?;
                    let mut columns: Vec<_> = decoded.into_iter().map(Vec::into_iter).collect();
                    self.buffer.reserve(len);
                    for _ in 0..len {
                        self.buffer
                            .push_back(columns.iter_mut().map(|c| c.next().flatten()).collect());
                    }
                }
            }
        }
        Ok(())
    }

    /// Stops here: the rows already decoded (they come before the suspension
    /// point and belong to this page) and the saved state.
    pub fn suspend(mut self, stash: &Stash) -> Result<(Vec<SolutionRow>, SavedQuery), EngineError> {
        let mut rows: Vec<SolutionRow> = match self.held.take() {
            Some(held) => held.into_rows()?,
            None => Vec::new(),
        };
        rows.extend(self.buffer.drain(..));
        let saved = SavedQuery {
            done: self.done,
            plan: self.root.save(stash)?,
            context: self.ctx.save(stash),
            skip: self.skip,
        };
        Ok((rows, saved))
    }

    /// Like [`suspend`](Self::suspend), but the operators stay as they
    /// are, parked in the stash under the returned handle, so that
    /// [`Engine::continue_parked`](crate::Engine::continue_parked) goes on
    /// without parsing, planning or restoring. When the plan is pipelined
    /// throughout (every operator has a
    /// [checkpoint](crate::exec::Operator::checkpoint)), the saved state is
    /// that point, for any other server; otherwise the query holds
    /// materialized state, only this server can resume it anyway, and the
    /// saved state names the parked stream alone (see [`SavedQuery::is_parked`]).
    ///
    /// Rows handed back ([`hand_back`](Self::hand_back)) are not handed
    /// out: they stay with the parked stream and come first on the next
    /// page. The operators are past them, so the portable point is then
    /// the one from before their batch ([`mark_batches`](Self::mark_batches)),
    /// with the rows of it that were handed out to skip; without a mark,
    /// the saved state names the parked stream alone.
    pub fn suspend_keeping(
        mut self,
        stash: &Stash,
    ) -> Result<(Vec<SolutionRow>, SavedQuery, u64), EngineError> {
        let rows = self.buffer.drain(..).collect();
        let portable = match &self.held {
            None => self.root.checkpoint().map(|plan| SavedQuery {
                done: self.done,
                plan,
                context: self.ctx.save(stash),
                skip: self.skip,
            }),
            // Before the batch the held rows are from, skipping the rows
            // of it that were handed out.
            Some(held) => self.mark.as_ref().and_then(|mark| {
                Some(SavedQuery {
                    done: false,
                    plan: mark.before.clone()?,
                    context: self.ctx.save(stash),
                    skip: mark.rows - held.len() as u64,
                })
            }),
        };
        let handle = stash.put(ParkedStream(self));
        Ok((
            rows,
            portable.unwrap_or_else(|| SavedQuery::parked(handle)),
            handle,
        ))
    }

    /// Puts a freshly started stream where `saved` left it.
    pub(crate) fn restore(&mut self, saved: &SavedQuery, stash: &Stash) -> Result<(), EngineError> {
        self.ctx.restore(&saved.context, stash)?;
        self.root.restore(saved.plan.clone(), stash)?;
        self.done = saved.done;
        self.skip = saved.skip;
        Ok(())
    }
}

/// A suspended stream kept running, parked in the stash of the server that
/// suspended it until its next page.
pub(crate) struct ParkedStream(SolutionStream);

impl ParkedStream {
    /// The stream again, now serving a request with cancellation flag
    /// `cancel` and `timeout` (counted from now).
    pub fn resume(self, cancel: CancelFlag, timeout: Option<Duration>) -> SolutionStream {
        self.0.ctx.rearm(cancel, timeout);
        self.0
    }
}

impl StashSize for ParkedStream {
    /// Batches held by the operators, about one per operator (a join's
    /// inputs hold the batch they are reading), and the largest
    /// materialized state an operator reported (a hash table, sorted rows).
    fn stash_bytes(&self) -> usize {
        fn operators(op: &dyn Operator) -> usize {
            1 + op.children().into_iter().map(operators).sum::<usize>()
        }
        let width = self.0.root.variables().len().max(1);
        let batches = operators(self.0.root.as_ref()) * BATCH_ROWS * width * 8;
        batches + self.0.ctx.largest_state() as usize
    }
}

impl SolutionStream {
    /// Keeps, from now on, where the operators stood before each batch,
    /// so that rows handed back ([`hand_back`](Self::hand_back)) do not
    /// tie the query to this server (a checkpoint per batch: for paged
    /// requests with a row limit).
    pub fn mark_batches(&mut self) {
        self.marking = true;
    }

    /// How many rows at the front of a batch of `len` rows from the
    /// operators are dropped as already handed out (see [`SavedQuery::skip`]).
    fn skipped(&mut self, len: usize) -> usize {
        let from = self.skip.min(len as u64);
        self.skip -= from;
        from as usize
    }

    /// Gives back the rows of a batch from
    /// [`next_batch_in_turn`](Self::next_batch_in_turn) that the caller
    /// did not use (a page of `page-rows` rows ending within the batch):
    /// they are the next batch, and a suspension keeps them for the next
    /// page ([`suspend_keeping`](Self::suspend_keeping)).
    pub fn hand_back(&mut self, rows: RowBatch) {
        debug_assert!(self.held.is_none(), "one batch handed back at a time");
        if !rows.is_empty() {
            self.held = Some(rows);
        }
    }

    /// The next batch of rows, unless the turn ends at `until` first; rows
    /// decoded earlier (by [`next_in_turn`](Self::next_in_turn) or handed
    /// back) come first. Its terms are decoded by whoever writes it, slice
    /// by slice ([`RowBatch::decode`]).
    pub fn next_batch_in_turn(&mut self, until: Option<Instant>) -> Polled<RowBatch> {
        if let Some(held) = self.held.take() {
            return Polled::Ready(Ok(held));
        }
        if !self.buffer.is_empty() {
            return Polled::Ready(Ok(RowBatch(Rows::Owned(self.buffer.drain(..).collect()))));
        }
        match self.next_ids(until) {
            Ok(Some(batch)) => Polled::Ready(Ok(batch)),
            Ok(None) if self.done => Polled::End,
            Ok(None) => Polled::Pending,
            Err(e) => {
                self.stop();
                Polled::Ready(Err(e))
            }
        }
    }

    /// The next rows as IDs: the operators' next batch, and while they come
    /// in full batches, the ones after it up to [`GATHER_ROWS`] (so that a
    /// fast stream, a large export, is written in runs long enough to share
    /// out over the cores).
    fn next_ids(&mut self, until: Option<Instant>) -> Result<Option<RowBatch>, EngineError> {
        self.ctx.set_turn_end(until);
        if self.marking {
            self.mark = Some(BatchMark {
                before: self.root.checkpoint(),
                rows: 0,
            });
        }
        let mut columns: Vec<Vec<tern_index::Id>> = vec![Vec::new(); self.shown.len()];
        let mut len = 0;
        while !self.done && len < GATHER_ROWS {
            match self.root.next_batch()? {
                None => self.done = true,
                Some(batch) if batch.len == 0 => {
                    // An operator paused for the end of the turn.
                    if until.is_some_and(|u| Instant::now() >= u) {
                        break;
                    }
                }
                Some(mut batch) => {
                    if let Some(mark) = &mut self.mark {
                        mark.rows += batch.len as u64;
                    }
                    let from = self.skipped(batch.len);
                    for (into, &c) in columns.iter_mut().zip(&self.shown) {
                        if into.is_empty() && from == 0 {
                            *into = std::mem::take(&mut batch.columns[c]);
                        } else {
                            into.extend_from_slice(&batch.columns[c][from..]);
                        }
                    }
                    len += batch.len - from;
                    if len == 0 {
                        // All of it was handed out before: on to the next.
                        continue;
                    }
                    let slow = batch.len < BATCH_ROWS;
                    if slow || until.is_some_and(|u| Instant::now() >= u) {
                        break;
                    }
                }
            }
        }
        Ok((len > 0).then(|| {
            RowBatch(Rows::Ids {
                columns,
                len,
                ctx: Arc::clone(&self.ctx),
                decoded: None,
            })
        }))
    }
}

impl SolutionStream {
    /// Ends the stream after an error (a timeout, a cancellation): nothing
    /// more comes, and the operators' state is dropped in the background.
    fn stop(&mut self) {
        self.done = true;
        self.buffer.clear();
        self.held = None;
        super::retire::retire(&mut self.root);
    }

    /// The next row, unless the turn ends at `until` first (then
    /// [`Polled::Pending`]: ask again in a later turn, or suspend).
    pub fn next_in_turn(&mut self, until: Option<Instant>) -> Polled<SolutionRow> {
        if let Err(e) = self.fill(until) {
            self.stop();
            return Polled::Ready(Err(e));
        }
        match self.buffer.pop_front() {
            Some(row) => Polled::Ready(Ok(row)),
            None if self.done => Polled::End,
            None => Polled::Pending,
        }
    }
}

/// What a time-sliced stream gives within a turn.
#[derive(Debug)]
pub enum Polled<T> {
    Ready(Result<T, EngineError>),
    /// The turn ended before the next item was ready.
    Pending,
    End,
}

impl Iterator for SolutionStream {
    type Item = Result<SolutionRow, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_in_turn(None) {
            Polled::Ready(row) => Some(row),
            Polled::End | Polled::Pending => None,
        }
    }
}
