//! Index nested-loop join: for each row of the left input, the triple
//! pattern is looked up in the index with the shared variables bound, so a
//! few selective rows never pay for scanning a large pattern whole.
//!
//! When the left input turns out large (the estimate was low, or a plan for
//! the first rows of a LIMIT or ASK had to read on), the lookups would cost
//! more than reading the pattern once: after as many lookups as the pattern
//! has rows divided by [`LOOKUP_COST`], the pattern is read whole into the
//! lookup cache and the remaining left rows find their matches there. The
//! join then never costs much more than twice the cheaper of the two ways.

use super::cursor::{Filled, RowCursor};
use super::parallel_lookups::{
    lookup_binding, LookupKey, ParallelLookups, Readers, LOOKUPS_PER_CHECK, PARALLEL_MIN_KEYS,
};
use super::pattern_rows::PatternRows;
use super::profile::OperatorInfo;
use super::rows::{Solution, Sources};
use super::scan::{GraphScope, PatternTerm, Scan};
use super::{Batch, BatchRamp, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::Id;

pub struct IndexJoin {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    variables: Vec<Variable>,
    /// The left input, read row by row: a left row may match many rows
    /// (an author with 5,000 papers), so the output of one left batch is
    /// made a batch at a time.
    left: RowCursor,
    /// Matches of the current left row already joined.
    next_match: usize,
    /// Matches of the bindings looked up lately (left rows often repeat
    /// their values): key → (first row in `found_rows`, count).
    found: FxHashMap<LookupKey, (usize, usize)>,
    found_rows: Vec<Id>,
    pattern_variables: Vec<Variable>,
    /// The pattern as planned, with the variables the left rows bind.
    pattern: PatternRows,
    /// For each pattern variable, its column in the left input, if shared.
    bound_from: Vec<Option<usize>>,
    /// For each output column, its source in (left row, pattern row).
    sources: Sources,
    /// One per permutation the lookups use, each holding the block it read
    /// last.
    readers: Readers,
    /// The lookups of a new left batch, shared among the cores.
    parallel: ParallelLookups,
    /// The left batch (as counted by the cursor) whose bindings were
    /// looked up together.
    prefetched_batch: u64,
    /// For each row of that batch from `batch_matches_from` on, its
    /// matches in the lookup cache, where they were found together.
    batch_matches: Vec<Option<(usize, usize)>>,
    batch_matches_from: usize,
    lookups: Arc<AtomicU64>,
    /// Rows a batch it hands out holds at most: fewer at first when only
    /// the first rows will be read (a LIMIT above), so it stops looking up
    /// early.
    ramp: BatchRamp,
    /// Lookups after which the pattern is read whole, once worked out.
    switch_after: Option<u64>,
    /// Whether the lookup cache holds the whole pattern: a binding it does
    /// not have has no match.
    complete: bool,
    /// As a filter (see [`IndexJoin::existence`]): `Some(anti)`.
    existence: Option<bool>,
}

/// What a lookup costs against reading one row of a scan and keeping it
/// in the cache (measured: 0.15-0.4 µs against 0.1 µs; with 8, BSBM Q5 at
/// 10M switched too early and took 6.7 ms instead of 4).
const LOOKUP_COST: u64 = 2;
/// Largest pattern read whole into the lookup cache (rows).
const MOST_ROWS_READ_WHOLE: u64 = 1 << 22;
/// How much sooner the switch comes when the left input is expected to be
/// large (biblio's ask-union-false: after 655 of 21,753 lookups instead of
/// 10,473). If the estimate is wrong and the left input ends just after,
/// the pattern was read for nothing: at most [`MOST_ROWS_READ_EARLY`] rows.
const EARLY_SWITCH: u64 = 16;
/// Largest pattern read whole early on the planner's word.
const MOST_ROWS_READ_EARLY: u64 = 1 << 20;

/// Pattern rows the lookup cache keeps before it starts over.
pub const LOOKUP_CACHE_ROWS: usize = 1 << 16;
/// Left rows joined before a batch with some rows is handed on.
const LEFT_ROWS_PER_BATCH: usize = 4096;

impl IndexJoin {
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        pattern_variables: Vec<Variable>,
        pattern: PatternRows,
    ) -> IndexJoin {
        let (variables, sources) = Solution::merge_schemas(left.variables(), &pattern_variables);
        let bound_from = pattern_variables
            .iter()
            .map(|v| left.variables().iter().position(|l| l == v))
            .collect();
        IndexJoin {
            memory: ctx.memory_charge(),
            ctx,
            variables,
            left: RowCursor::new(left),
            next_match: 0,
            found: FxHashMap::default(),
            found_rows: Vec::new(),
            pattern_variables,
            pattern,
            bound_from,
            sources,
            readers: Default::default(),
            parallel: ParallelLookups::default(),
            prefetched_batch: 0,
            batch_matches: Vec::new(),
            batch_matches_from: 0,
            lookups: Arc::default(),
            ramp: BatchRamp::default(),
            switch_after: None,
            complete: false,
            existence: None,
        }
    }

    /// `FILTER EXISTS { pattern }` (or `NOT EXISTS` if `anti`) over the
    /// left rows, the pattern looked up with each row's values in place of
    /// its variables: exactly the substitution SPARQL defines (a variable
    /// the row leaves unbound stays free). Each row passes or not, with no
    /// columns added. Left rows repeat their values (BSBM BI Q4: 145,684
    /// offers and features, 7,740 distinct pairs), and the lookup cache
    /// answers repeats; past the point where reading the pattern whole is
    /// cheaper, it is read whole (the join that read all 604,278 product
    /// features into a table instead took 270 ms there).
    pub fn existence(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        pattern_variables: Vec<Variable>,
        pattern: PatternRows,
        anti: bool,
    ) -> IndexJoin {
        let mut join = IndexJoin::new(ctx, left, pattern_variables, pattern);
        join.variables = join.left.input.variables().to_vec();
        join.existence = Some(anti);
        join
    }

    /// Whether the lookups done so far cost as much as reading the pattern
    /// whole would (and it is not too large to hold).
    fn worth_reading_whole(&mut self) -> Result<bool, EngineError> {
        if self.complete || self.pattern.graph != GraphScope::Default {
            return Ok(false);
        }
        let lookups = self.lookups.load(Ordering::Relaxed);
        let switch_after = match self.switch_after {
            Some(lookups) => lookups,
            None => {
                let lookups = self.lookups_before_reading_whole()?;
                *self.switch_after.insert(lookups)
            }
        };
        Ok(lookups >= switch_after)
    }

    /// After how many lookups reading the pattern whole is cheaper (never,
    /// `u64::MAX`, for a pattern too large to hold): worked out once, from
    /// the pattern's rows and the planner's estimate of the left input.
    fn lookups_before_reading_whole(&self) -> Result<u64, EngineError> {
        let rows = Scan::estimate(&self.ctx, &self.pattern)?;
        if rows > MOST_ROWS_READ_WHOLE {
            return Ok(u64::MAX);
        }
        // When the planner expects the left input to outlast the lookups
        // worth doing, the switch comes sooner: a plan for the first rows
        // (ASK, LIMIT) that finds none early reads on to the end, and its
        // lookups would only delay reading the pattern whole.
        let expected = self.left.input.estimated_rows().unwrap_or(0);
        let divisor = match expected.saturating_mul(LOOKUP_COST) >= rows {
            true if rows <= MOST_ROWS_READ_EARLY => LOOKUP_COST * EARLY_SWITCH,
            _ => LOOKUP_COST,
        };
        Ok(rows.div_ceil(divisor))
    }

    /// Whether a bound pattern has a value for every shared variable (a
    /// left row may leave one unbound: it then matches any value).
    fn binds_every_shared(&self, bound: &[PatternTerm; 3]) -> bool {
        !bound
            .iter()
            .any(|t| matches!(t, PatternTerm::Variable(c) if self.bound_from[*c].is_some()))
    }

    /// Reads the whole pattern into the lookup cache, by binding.
    fn read_whole(&mut self, row_out: &mut [Id]) -> Result<(), EngineError> {
        let width = self.pattern_variables.len().max(1);
        let mut all = Vec::new();
        let count = self.lookup_into(self.pattern.terms, self.pattern.graph, &mut all, row_out)?;
        let key_of = |row: &[Id]| {
            self.pattern.terms.map(|t| match t {
                PatternTerm::Variable(c) if self.bound_from[c].is_some() => {
                    PatternTerm::Constant(row[c])
                }
                other => other,
            })
        };
        let keys: Vec<[PatternTerm; 3]> = (0..count)
            .map(|r| key_of(all.get(r * width..(r + 1) * width).unwrap_or_default()))
            .collect();
        // Rows of one binding must be one stretch of the cache. A scan of
        // the pattern mostly gives them so already (the shared variable
        // comes first in its permutation): then nothing is sorted or copied.
        self.found.clear();
        self.batch_matches.clear();
        if keys.is_sorted() {
            self.found_rows = all;
        } else {
            let mut order: Vec<usize> = (0..count).collect();
            order.sort_by_key(|&r| keys[r]);
            self.found_rows.clear();
            self.found_rows.reserve(all.len());
            for &r in &order {
                let row = all.get(r * width..(r + 1) * width).unwrap_or_default();
                self.found_rows.extend_from_slice(row);
            }
            let sorted_keys = order.iter().map(|&r| keys[r]).collect();
            return self.index_runs(sorted_keys);
        }
        self.index_runs(keys)
    }

    /// Indexes the stretches of equal bindings of a lookup cache that holds
    /// the whole pattern, `keys` being its rows' bindings in order.
    fn index_runs(&mut self, keys: Vec<[PatternTerm; 3]>) -> Result<(), EngineError> {
        let mut start = 0;
        while start < keys.len() {
            let len = keys[start..].partition_point(|k| *k == keys[start]);
            let key = (keys[start], self.pattern.graph);
            self.found.insert(key, (start, len));
            start += len;
        }
        debug_assert_eq!(
            self.found_rows.len(),
            keys.len() * self.pattern_variables.len()
        );
        self.complete = true;
        self.memory.set((self.found_rows.len() * 8) as u64)
    }

    /// Charges the output batch and the lookup cache.
    fn charge(&self, out: &Batch, width: usize) -> Result<(), EngineError> {
        self.memory
            .set((out.len * width * 8 + self.found_rows.len() * 8) as u64)
    }

    /// A batch that may be empty (the turn is over, or the input paused).
    fn hand_out(&mut self, out: Batch, width: usize) -> Result<Option<Batch>, EngineError> {
        self.charge(&out, width)?;
        if out.len > 0 {
            self.ramp.grow();
        }
        Ok(Some(out))
    }

    /// The pattern with the left row's values in place of shared variables.
    fn bind(&self, row: &[Id]) -> ([PatternTerm; 3], GraphScope) {
        let value = |column: usize| {
            self.bound_from[column]
                .map(|l| row[l])
                .filter(|id| *id != Id::UNDEFINED)
        };
        let terms = self.pattern.terms.map(|t| match t {
            PatternTerm::Variable(c) => value(c).map_or(t, PatternTerm::Constant),
            constant => constant,
        });
        let graph = match self.pattern.graph {
            GraphScope::NamedVariable(c) => value(c).map_or(self.pattern.graph, GraphScope::Named),
            other => other,
        };
        (terms, graph)
    }

    /// Appends the pattern's rows for one binding (its own columns) to
    /// `rows`; returns how many.
    fn lookup_into(
        &mut self,
        terms: [PatternTerm; 3],
        graph: GraphScope,
        rows: &mut Vec<Id>,
        row_out: &mut [Id],
    ) -> Result<usize, EngineError> {
        lookup_binding(
            &self.ctx,
            &mut self.readers,
            (terms, graph),
            &self.pattern,
            rows,
            row_out,
            &self.lookups,
        )
    }

    /// Looks up, on all cores, the bindings of the current left batch's
    /// remaining rows that the lookup cache lacks, adds them to it, and
    /// notes each row's matches in `batch_matches` (see
    /// `parallel_lookups`). Does nothing for a small batch, a cache that
    /// holds the whole pattern, or when the lookups would reach the point
    /// where reading the pattern whole is cheaper: the row-by-row path then
    /// switches as before.
    fn look_up_batch(&mut self) -> Result<(), EngineError> {
        self.batch_matches.clear();
        if self.complete || self.ctx.cores() < 2 {
            return Ok(());
        }
        let (batch, pos) = self.left.current();
        if batch.len - pos < PARALLEL_MIN_KEYS {
            return Ok(());
        }
        // Each row's matches: known (cached) or the number of its binding
        // among those to look up. Left rows come in runs of one value (the
        // output of a scan or of another join): a run is bound once.
        let mut left = Vec::new();
        let mut keys = Vec::new();
        let mut slots = Vec::with_capacity(batch.len - pos);
        let mut previous: Option<LookupKey> = None;
        for i in pos..batch.len {
            batch.row_into(i, &mut left);
            let key = self.bind(&left);
            let slot = match self.found.get(&key) {
                Some(&range) => Ok(range),
                None if previous == Some(key) => Err(keys.len() - 1),
                None => {
                    keys.push(key);
                    Err(keys.len() - 1)
                }
            };
            previous = Some(key);
            slots.push(slot);
        }
        if keys.len() < PARALLEL_MIN_KEYS {
            return Ok(());
        }
        if self.pattern.graph == GraphScope::Default {
            self.worth_reading_whole()?;
            let done = self.lookups.load(Ordering::Relaxed);
            if done + keys.len() as u64 >= self.switch_after.unwrap_or(u64::MAX) {
                return Ok(());
            }
        }
        let width = self.pattern_variables.len();
        let most_values = LOOKUP_CACHE_ROWS * width.max(1);
        if self.found_rows.len() > most_values {
            // The cached ranges of the slots go with it.
            return Ok(());
        }
        let shares = self.parallel.run(
            &self.ctx,
            &keys,
            &self.pattern,
            width,
            most_values,
            &self.lookups,
        )?;
        let mut looked_up = vec![None; keys.len()];
        for share in shares {
            let mut start = self.found_rows.len() / width.max(1);
            self.found_rows.extend_from_slice(&share.rows);
            for (k, &count) in share.counts.iter().enumerate() {
                let key = share.first_key + k;
                self.found.insert(keys[key], (start, count));
                looked_up[key] = Some((start, count));
                start += count;
            }
        }
        self.batch_matches_from = pos;
        self.batch_matches = slots
            .into_iter()
            .map(|slot| slot.map_or_else(|key| looked_up[key], Some))
            .collect();
        self.memory.set((self.found_rows.len() * 8) as u64)
    }

    /// The matches of the current left row found by
    /// [`look_up_batch`](Self::look_up_batch), if it found them.
    fn batch_match(&self, pos: usize) -> Option<(usize, usize)> {
        let at = pos.checked_sub(self.batch_matches_from)?;
        self.batch_matches.get(at).copied().flatten()
    }
}

impl Operator for IndexJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// Its left input may still be read to its end (rows without
    /// matches): it is only asked for small first batches too.
    fn small_first_batches(&mut self, rows: usize) {
        self.ramp.start_at(rows);
        self.left.input.small_first_batches(rows);
    }

    fn describe(&self) -> OperatorInfo {
        let shared = super::bound_variable_list(&self.pattern_variables, &self.bound_from);
        let scan = Scan::of(
            self.ctx.clone(),
            self.pattern_variables.clone(),
            self.pattern,
        )
        .describe();
        let (name, how) = match self.existence {
            None => ("IndexJoin", "into"),
            Some(false) => ("SemiJoin", "by lookups of"),
            Some(true) => ("AntiJoin", "by lookups of"),
        };
        OperatorInfo {
            name,
            detail: format!("on {shared} {how} {}", scan.detail),
            // Lookups, shown where scans show blocks read.
            blocks_read: Some(self.lookups.clone()),
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.left.input.as_ref()]
    }

    /// The left cursor (at the current row) and the matches of that row
    /// already joined; the lookup cache is looked up again.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        self.left.save_with_matches(self.next_match, stash)
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        self.left.checkpoint_with_matches(self.next_match)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.found.clear();
        self.found_rows.clear();
        self.batch_matches.clear();
        self.complete = false;
        self.next_match = self.left.restore_with_matches(state, stash)?;
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        let pattern_width = self.pattern_variables.len();
        let mut row_out = vec![Id::UNDEFINED; pattern_width];
        let mut out = Batch::with_columns(width);
        let mut left_rows = 0usize;
        let mut left = Vec::new();
        loop {
            match self.left.fill(&self.ctx)? {
                Filled::Row => {}
                Filled::Paused => {
                    self.ctx.input_paused(out.len);
                    return self.hand_out(out, width);
                }
                Filled::Ended => {
                    self.charge(&out, width)?;
                    return Ok((out.len > 0).then_some(out));
                }
            }
            if self.left.batches_read() != self.prefetched_batch {
                self.prefetched_batch = self.left.batches_read();
                self.look_up_batch()?;
            }
            let (batch, pos) = self.left.current();
            batch.row_into(pos, &mut left);
            let key = self.bind(&left);
            let cached = match self.batch_match(pos) {
                Some(range) => Some(range),
                None => self.found.get(&key).copied(),
            };
            let (first, count) = match cached {
                Some(range) => range,
                // Every binding of the pattern is there (unless the left
                // row left a shared variable unbound).
                None if self.complete && self.binds_every_shared(&key.0) => (0, 0),
                None if self.worth_reading_whole()? => {
                    self.read_whole(&mut row_out)?;
                    continue;
                }
                None => {
                    if self.found_rows.len() > LOOKUP_CACHE_ROWS * pattern_width.max(1)
                        && !self.complete
                    {
                        self.found.clear();
                        self.found_rows.clear();
                        self.batch_matches.clear();
                    }
                    if self.found.len() % LOOKUPS_PER_CHECK == LOOKUPS_PER_CHECK - 1 {
                        self.ctx.check()?;
                    }
                    let start = self.found_rows.len() / pattern_width.max(1);
                    let mut rows = std::mem::take(&mut self.found_rows);
                    let count = self.lookup_into(key.0, key.1, &mut rows, &mut row_out);
                    self.found_rows = rows;
                    let range = (start, count?);
                    self.found.insert(key, range);
                    range
                }
            };
            if let Some(anti) = self.existence {
                if (count > 0) != anti {
                    out.push_row(&left);
                }
            }
            while self.existence.is_none() && self.next_match < count {
                let r = first + self.next_match;
                let right = &self.found_rows[r * pattern_width..(r + 1) * pattern_width];
                out.push_merged(&left, right, &self.sources);
                self.next_match += 1;
                if out.len >= self.ramp.limit() {
                    return self.hand_out(out, width);
                }
            }
            self.left.advance(1);
            self.next_match = 0;
            left_rows += 1;
            if out.len >= self.ramp.limit() {
                return self.hand_out(out, width);
            }
            if left_rows.is_multiple_of(LEFT_ROWS_PER_BATCH) {
                self.ctx.check()?;
                if out.len > 0 || self.ctx.stop_turn(out.len) {
                    return self.hand_out(out, width);
                }
            }
        }
    }
}
