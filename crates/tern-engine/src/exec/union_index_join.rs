//! Index nested-loop join into a [`UnionOfPatterns`]: for each left row,
//! the union is looked up with the shared variables bound, each of its
//! patterns one index lookup. This is how a pattern the inference schema
//! extends joins a selective rest of its group (the professors of one
//! department look up each member's classes, instead of listing every
//! professor of the store and hashing them).
//!
//! As with [`IndexJoin`](super::IndexJoin), when the left input turns out
//! large the union is read whole once (all its patterns, deduplicated) and
//! the remaining rows find their matches in memory.

use super::cursor::{Filled, RowCursor};
use super::profile::OperatorInfo;
use super::rows::{Solution, Sources};
use super::union_detail::UnionDetail;
use super::union_of_patterns::{UnionOfPatterns, UnionRow};
use super::{Batch, BatchRamp, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tern_index::Id;

pub struct UnionIndexJoin {
    ctx: Arc<QueryContext>,
    memory: MemoryCharge,
    variables: Vec<Variable>,
    left: RowCursor,
    union: UnionOfPatterns,
    /// For each output column of the union, its column in the left input.
    bound_from: Vec<Option<usize>>,
    sources: Sources,
    /// Matches of the current left row already joined.
    next_match: usize,
    /// Matches of the bindings looked up lately: key → (first, count) in
    /// `found_rows`.
    found: FxHashMap<UnionRow, (usize, usize)>,
    found_rows: Vec<UnionRow>,
    ramp: BatchRamp,
    /// Lookups after which the union is read whole, once worked out.
    switch_after: Option<u64>,
    /// Whether `found` holds every binding of the union.
    complete: bool,
    /// For EXPLAIN: what the union reads.
    detail: UnionDetail,
}

/// What one pattern's lookup costs against reading one of its rows
/// (as for [`IndexJoin`](super::IndexJoin)).
const LOOKUP_COST: u64 = 2;
/// Largest union read whole into memory (estimated rows).
const MOST_ROWS_READ_WHOLE: u64 = 1 << 22;
/// Left rows joined before a batch with some rows is handed on.
const LEFT_ROWS_PER_BATCH: usize = 4096;
/// Union rows the lookup cache keeps before it starts over.
const LOOKUP_CACHE_ROWS: usize = 1 << 16;

impl UnionIndexJoin {
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        union: UnionOfPatterns,
        detail: UnionDetail,
    ) -> UnionIndexJoin {
        let (variables, sources) = Solution::merge_schemas(left.variables(), &union.variables);
        let bound_from = union
            .variables
            .iter()
            .map(|v| left.variables().iter().position(|l| l == v))
            .collect();
        UnionIndexJoin {
            memory: ctx.memory_charge(),
            ctx,
            variables,
            left: RowCursor::new(left),
            union,
            bound_from,
            sources,
            next_match: 0,
            found: FxHashMap::default(),
            found_rows: Vec::new(),
            ramp: BatchRamp::default(),
            switch_after: None,
            complete: false,
            detail,
        }
    }

    /// The union's values bound by a left row (unbound left values bind
    /// nothing).
    fn key(&self, row: &[Id]) -> UnionRow {
        let mut key = [Id::UNDEFINED; 4];
        for (slot, from) in key.iter_mut().zip(&self.bound_from) {
            if let Some(l) = from {
                *slot = row[*l];
            }
        }
        key
    }

    /// Whether a key binds every shared column (a left row may leave one
    /// unbound: it then matches any value).
    fn binds_every_shared(&self, key: &UnionRow) -> bool {
        self.bound_from
            .iter()
            .zip(key)
            .all(|(from, v)| from.is_none() || *v != Id::UNDEFINED)
    }

    fn worth_reading_whole(&mut self) -> bool {
        if self.complete {
            return false;
        }
        let switch_after = *self.switch_after.get_or_insert_with(|| {
            let rows = self.union.estimated_rows();
            let patterns = self.union.branches.len().max(1) as u64;
            if rows > MOST_ROWS_READ_WHOLE {
                u64::MAX
            } else {
                rows.div_ceil(LOOKUP_COST * patterns)
            }
        });
        self.union.lookups.load(Ordering::Relaxed) >= switch_after
    }

    /// Reads the whole union, its rows grouped by their shared values.
    fn read_whole(&mut self) -> Result<(), EngineError> {
        let unbound = vec![None; self.union.variables.len()];
        let mut all = Vec::new();
        self.union.lookup(&self.ctx, &unbound, &mut all)?;
        let key_of = |row: &UnionRow| {
            let mut key = [Id::UNDEFINED; 4];
            for (c, from) in self.bound_from.iter().enumerate() {
                if from.is_some() {
                    key[c] = row[c];
                }
            }
            key
        };
        all.sort_unstable_by_key(key_of);
        self.found.clear();
        let mut start = 0;
        while start < all.len() {
            let key = key_of(&all[start]);
            let len = all[start..].partition_point(|r| key_of(r) == key);
            self.found.insert(key, (start, len));
            start += len;
        }
        self.found_rows = all;
        self.complete = true;
        self.charge(0)
    }

    fn charge(&self, out_rows: usize) -> Result<(), EngineError> {
        let row = std::mem::size_of::<UnionRow>();
        let bytes = (self.found_rows.len() + out_rows) * row + self.union.memory() as usize;
        self.memory.set(bytes as u64)
    }

    fn hand_out(&mut self, out: Batch) -> Result<Option<Batch>, EngineError> {
        self.charge(out.len)?;
        if out.len > 0 {
            self.ramp.grow();
        }
        Ok(Some(out))
    }

    /// The matches of `key`, looked up unless cached.
    fn matches(&mut self, key: UnionRow) -> Result<(usize, usize), EngineError> {
        if let Some(&range) = self.found.get(&key) {
            return Ok(range);
        }
        if self.complete && self.binds_every_shared(&key) {
            return Ok((0, 0));
        }
        if !self.complete && self.worth_reading_whole() {
            self.read_whole()?;
            return self.matches(key);
        }
        if self.found_rows.len() > LOOKUP_CACHE_ROWS && !self.complete {
            self.found.clear();
            self.found_rows.clear();
        }
        let bound: Vec<Option<Id>> = key
            .iter()
            .zip(&self.bound_from)
            .map(|(v, from)| from.and(Some(*v)).filter(|v| *v != Id::UNDEFINED))
            .collect();
        let start = self.found_rows.len();
        let mut rows = std::mem::take(&mut self.found_rows);
        let count = self.union.lookup(&self.ctx, &bound, &mut rows);
        self.found_rows = rows;
        let range = (start, count?);
        // With the union complete, the cache must keep holding only whole
        // bindings: a partial key's rows are not remembered.
        if !self.complete {
            self.found.insert(key, range);
        }
        Ok(range)
    }
}

impl Operator for UnionIndexJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// As for [`IndexJoin`](super::IndexJoin): its left input may be read
    /// to its end.
    fn small_first_batches(&mut self, rows: usize) {
        self.ramp.start_at(rows);
        self.left.input.small_first_batches(rows);
    }

    fn describe(&self) -> OperatorInfo {
        let shared = super::bound_variable_list(&self.union.variables, &self.bound_from);
        OperatorInfo {
            name: "UnionIndexJoin",
            detail: format!(
                "on {shared} into {}",
                self.detail.describe(&self.ctx, &self.union)
            ),
            blocks_read: Some(self.union.lookups.clone()),
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.left.input.as_ref()];
        children.extend(self.union.complex().iter().map(|c| c.as_ref()));
        children
    }

    /// The left cursor and the matches of its row already joined; the
    /// union (complex branches included) is looked up again.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        self.left.save_with_matches(self.next_match, stash)
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.left.checkpoint_with_matches(self.next_match)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.next_match = self.left.restore_with_matches(state, stash)?;
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        let union_width = self.union.variables.len();
        let mut out = Batch::with_columns(width);
        let mut left_rows = 0usize;
        let mut left = Vec::new();
        loop {
            match self.left.fill(&self.ctx)? {
                Filled::Row => {}
                Filled::Paused => {
                    self.ctx.input_paused(out.len);
                    return self.hand_out(out);
                }
                Filled::Ended => {
                    self.charge(0)?;
                    return Ok((out.len > 0).then_some(out));
                }
            }
            let (batch, pos) = self.left.current();
            batch.row_into(pos, &mut left);
            let key = self.key(&left);
            let (first, count) = self.matches(key)?;
            while self.next_match < count {
                let right = self.found_rows[first + self.next_match];
                out.push_merged(&left, &right[..union_width], &self.sources);
                self.next_match += 1;
                if out.len >= self.ramp.limit() {
                    return self.hand_out(out);
                }
            }
            self.left.advance(1);
            self.next_match = 0;
            left_rows += 1;
            if out.len >= self.ramp.limit() {
                return self.hand_out(out);
            }
            if left_rows.is_multiple_of(LEFT_ROWS_PER_BATCH) {
                self.ctx.check()?;
                if out.len > 0 || self.ctx.stop_turn(out.len) {
                    return self.hand_out(out);
                }
            }
        }
    }
}
