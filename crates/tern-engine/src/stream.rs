//! The lazy results of a started query, and how they are suspended.

use crate::construct::Construct;
use crate::context::QueryContext;
use crate::exec::BoxedOperator;
use crate::suspend::{bad_state, OperatorState, Stash, StashSize};
use crate::{CancelFlag, EngineError, SolutionRow};
use oxrdf::{Term, TermRef, Triple, Variable};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tern_index::TermRefs;

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

/// Solutions as terms, decoded a batch at a time.
pub struct SolutionStream {
    ctx: Arc<QueryContext>,
    root: BoxedOperator,
    /// Output columns of the root that are shown (internal blank-node
    /// variables are not).
    shown: Vec<usize>,
    buffer: VecDeque<SolutionRow>,
    done: bool,
}

impl SolutionStream {
    pub(crate) fn new(ctx: Arc<QueryContext>, root: BoxedOperator) -> SolutionStream {
        let shown = root
            .variables()
            .iter()
            .enumerate()
            .filter(|(_, v)| !crate::plan::is_blank_variable(v))
            .map(|(i, _)| i)
            .collect();
        SolutionStream {
            ctx,
            root,
            shown,
            buffer: VecDeque::new(),
            done: false,
        }
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
                    // Columns are decoded on all cores (decoding terms is
                    // most of the cost of exporting a large result); terms
                    // are then moved into their rows, not copied.
                    let decode = |&c: &usize| self.ctx.terms(&batch.columns[c]);
                    let decoded: Vec<Vec<Option<oxrdf::Term>>> =
                        per_column(&self.shown, batch.len, decode)?;
                    let mut columns: Vec<_> = decoded.into_iter().map(Vec::into_iter).collect();
                    self.buffer.reserve(batch.len);
                    for _ in 0..batch.len {
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
        let rows = self.buffer.drain(..).collect();
        let saved = SavedQuery {
            done: self.done,
            plan: self.root.save(stash)?,
            context: self.ctx.save(stash),
            construct: None,
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
    pub fn suspend_keeping(
        mut self,
        stash: &Stash,
    ) -> Result<(Vec<SolutionRow>, SavedQuery, u64), EngineError> {
        let rows = self.buffer.drain(..).collect();
        let portable = self.root.checkpoint().map(|plan| SavedQuery {
            done: self.done,
            plan,
            context: self.ctx.save(stash),
            construct: None,
        });
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
        fn operators(op: &dyn crate::exec::Operator) -> usize {
            1 + op.children().into_iter().map(operators).sum::<usize>()
        }
        let width = self.0.root.variables().len().max(1);
        let batches = operators(self.0.root.as_ref()) * crate::exec::BATCH_ROWS * width * 8;
        batches + self.0.ctx.largest_state() as usize
    }
}

/// A slice of a [`RowBatch`] with its terms decoded into one buffer per
/// column: how large results are written out without making a `Term`, and
/// its strings, per value.
pub struct TermBatch(Terms);

enum Terms {
    Borrowed {
        columns: Vec<TermRefs>,
        /// Terms the query made itself (its local vocabulary), which the
        /// index does not know: per column, by row.
        local: Vec<Vec<(usize, Term)>>,
        len: usize,
    },
    /// Rows decoded before.
    Owned(Vec<SolutionRow>),
}

impl TermBatch {
    pub fn len(&self) -> usize {
        match &self.0 {
            Terms::Borrowed { len, .. } => *len,
            Terms::Owned(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The terms of row `i`, into `out` (cleared first).
    pub fn row<'a>(&'a self, i: usize, out: &mut Vec<Option<TermRef<'a>>>) {
        out.clear();
        match &self.0 {
            Terms::Borrowed { columns, local, .. } => {
                for (column, made) in columns.iter().zip(local) {
                    out.push(match column.get(i) {
                        Some(term) => Some(term),
                        None => made
                            .binary_search_by_key(&i, |(row, _)| *row)
                            .ok()
                            .map(|k| made[k].1.as_ref()),
                    });
                }
            }
            Terms::Owned(rows) => out.extend(rows[i].iter().map(|t| t.as_ref().map(Term::as_ref))),
        }
    }
}

impl SolutionStream {
    /// The next batch of rows, unless the turn ends at `until` first; rows
    /// decoded earlier (by [`next_in_turn`](Self::next_in_turn) or handed
    /// back) come first. Its terms are decoded by whoever writes it, slice
    /// by slice ([`RowBatch::decode`]).
    pub fn next_batch_in_turn(&mut self, until: Option<Instant>) -> Polled<RowBatch> {
        if !self.buffer.is_empty() {
            return Polled::Ready(Ok(RowBatch(Rows::Owned(self.buffer.drain(..).collect()))));
        }
        match self.next_ids(until) {
            Ok(Some(batch)) => Polled::Ready(Ok(batch)),
            Ok(None) if self.done => Polled::End,
            Ok(None) => Polled::Pending,
            Err(e) => {
                self.done = true;
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
                    for (into, &c) in columns.iter_mut().zip(&self.shown) {
                        if into.is_empty() {
                            *into = std::mem::take(&mut batch.columns[c]);
                        } else {
                            into.extend_from_slice(&batch.columns[c]);
                        }
                    }
                    len += batch.len;
                    let slow = batch.len < crate::exec::BATCH_ROWS;
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
            })
        }))
    }
}

/// A batch of solutions still as IDs. A writer decodes the slice of rows it
/// is about to write ([`decode`](Self::decode)): decoding terms is most of
/// the cost of exporting a large result, and done slice by slice it is
/// spread over the cores that write, and is still in their caches when they
/// write.
pub struct RowBatch(Rows);

enum Rows {
    Ids {
        /// The shown columns.
        columns: Vec<Vec<tern_index::Id>>,
        len: usize,
        ctx: Arc<QueryContext>,
    },
    /// Rows decoded before (by [`SolutionStream::next_in_turn`]).
    Owned(Vec<SolutionRow>),
}

impl RowBatch {
    pub fn len(&self) -> usize {
        match &self.0 {
            Rows::Ids { len, .. } => *len,
            Rows::Owned(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The terms of rows `rows` (row 0 of the result is row `rows.start` of
    /// this batch).
    pub fn decode(&self, rows: std::ops::Range<usize>) -> Result<TermBatch, EngineError> {
        let (columns, ctx) = match &self.0 {
            Rows::Ids { columns, ctx, .. } => (columns, ctx),
            Rows::Owned(owned) => return Ok(TermBatch(Terms::Owned(owned[rows].to_vec()))),
        };
        let mut refs = Vec::with_capacity(columns.len());
        let mut local = Vec::with_capacity(columns.len());
        for column in columns {
            let ids = &column[rows.clone()];
            refs.push(ctx.index.term_refs(ids)?);
            let mut made = Vec::new();
            for (row, id) in ids.iter().enumerate() {
                if id.tag() == tern_index::Tag::LocalVocab {
                    if let Some(term) = ctx.term(*id)? {
                        made.push((row, term));
                    }
                }
            }
            local.push(made);
        }
        Ok(TermBatch(Terms::Borrowed {
            columns: refs,
            local,
            len: rows.len(),
        }))
    }
}

impl SolutionStream {
    /// The next row, unless the turn ends at `until` first (then
    /// [`Polled::Pending`]: ask again in a later turn, or suspend).
    pub fn next_in_turn(&mut self, until: Option<Instant>) -> Polled<SolutionRow> {
        if let Err(e) = self.fill(until) {
            self.done = true;
            self.buffer.clear();
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

/// The triples of CONSTRUCT and DESCRIBE.
pub struct TripleStream(pub(crate) TripleSource);

pub(crate) enum TripleSource {
    Construct(Box<Construct>),
    /// DESCRIBE's descriptions, computed when the query starts.
    Described(std::vec::IntoIter<Triple>),
}

impl TripleStream {
    /// The next triple, unless the turn ends at `until` first.
    pub fn next_in_turn(&mut self, until: Option<Instant>) -> Polled<Triple> {
        match &mut self.0 {
            TripleSource::Construct(c) => c.next_in_turn(until),
            TripleSource::Described(triples) => match triples.next() {
                Some(t) => Polled::Ready(Ok(t)),
                None => Polled::End,
            },
        }
    }
}

impl Iterator for TripleStream {
    type Item = Result<Triple, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_in_turn(None) {
            Polled::Ready(t) => Some(t),
            Polled::End | Polled::Pending => None,
        }
    }
}

impl TripleStream {
    /// Stops here: the triples already made (they belong to this page) and
    /// the saved state.
    pub fn suspend(self, stash: &Stash) -> Result<(Vec<Triple>, SavedQuery), EngineError> {
        match self.0 {
            TripleSource::Construct(construct) => construct.suspend(stash),
            TripleSource::Described(triples) => {
                let plan = OperatorState::stashed(stash.put(triples));
                let saved = SavedQuery {
                    done: false,
                    plan,
                    context: OperatorState::default(),
                    construct: None,
                };
                Ok((Vec::new(), saved))
            }
        }
    }
}

/// Where a suspended query stopped: the state of its operators, of its
/// query context and, for CONSTRUCT, of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedQuery {
    /// The operators had produced everything.
    pub done: bool,
    pub plan: OperatorState,
    pub context: OperatorState,
    pub construct: Option<OperatorState>,
}

const SAVED_QUERY_VERSION: u8 = 1;

impl SavedQuery {
    /// Whether resuming needs materialized state from the stash of the
    /// process that suspended the query (otherwise any process with the same
    /// index can resume it).
    pub fn uses_stash(&self) -> bool {
        !self.stash_handles().is_empty()
    }

    /// The state of a query only its parked operators (stash entry
    /// `handle`) can continue: it held materialized state when suspended.
    fn parked(handle: u64) -> SavedQuery {
        SavedQuery {
            done: false,
            plan: OperatorState::stashed(handle),
            context: OperatorState::default(),
            construct: None,
        }
    }

    /// Whether this is [`SavedQuery::parked`] for stash entry `handle`.
    pub fn is_parked(&self, handle: u64) -> bool {
        self.plan.stashed == Some(handle) && self.plan.children.is_empty()
    }

    /// The stash entries the saved state refers to.
    pub fn stash_handles(&self) -> Vec<u64> {
        fn collect(state: &OperatorState, out: &mut Vec<u64>) {
            out.extend(state.stashed);
            state.children.iter().for_each(|c| collect(c, out));
        }
        let mut out = Vec::new();
        collect(&self.plan, &mut out);
        collect(&self.context, &mut out);
        if let Some(construct) = &self.construct {
            collect(construct, &mut out);
        }
        out
    }

    /// Compact bytes: a version byte, then the states.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![SAVED_QUERY_VERSION, u8::from(self.done)];
        self.plan.encode(&mut out);
        self.context.encode(&mut out);
        match &self.construct {
            None => out.push(0),
            Some(state) => {
                out.push(1);
                state.encode(&mut out);
            }
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<SavedQuery, EngineError> {
        let [version, done, rest @ ..] = bytes else {
            return Err(bad_state("truncated"));
        };
        if *version != SAVED_QUERY_VERSION {
            return Err(bad_state(format!("saved by format version {version}")));
        }
        let mut rest = rest;
        let plan = OperatorState::decode(&mut rest)?;
        let context = OperatorState::decode(&mut rest)?;
        let construct = match rest.split_first() {
            Some((0, tail)) => {
                rest = tail;
                None
            }
            Some((1, tail)) => {
                rest = tail;
                Some(OperatorState::decode(&mut rest)?)
            }
            _ => return Err(bad_state("bad CONSTRUCT state")),
        };
        if !rest.is_empty() {
            return Err(bad_state("trailing bytes"));
        }
        Ok(SavedQuery {
            done: *done == 1,
            plan,
            context,
            construct,
        })
    }
}
