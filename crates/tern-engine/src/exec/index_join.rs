//! Index nested-loop join: for each row of the left input, the triple
//! pattern is looked up in the index with the shared variables bound, so a
//! few selective rows never pay for scanning a large pattern whole.

use super::pattern_rows::PatternRows;
use super::profile::OperatorInfo;
use super::rows::{Solution, Sources};
use super::scan::{GraphScope, PatternTerm, Scan};
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::permutation::Lookup;
use tern_index::{Id, Index};

pub struct IndexJoin {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    variables: Vec<Variable>,
    left: BoxedOperator,
    pattern_variables: Vec<Variable>,
    /// The pattern as planned, with the variables the left rows bind.
    pattern: PatternRows,
    /// For each pattern variable, its column in the left input, if shared.
    bound_from: Vec<Option<usize>>,
    /// For each output column, its source in (left row, pattern row).
    sources: Sources,
    /// One per permutation the lookups use, each holding the block it read
    /// last.
    readers: [Option<Lookup>; 6],
    lookups: Arc<AtomicU64>,
}

/// Lookups between two checks for cancellation.
const LOOKUPS_PER_CHECK: usize = 64;

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
            left,
            pattern_variables,
            pattern,
            bound_from,
            sources,
            readers: Default::default(),
            lookups: Arc::default(),
        }
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
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let pattern = PatternRows::ranged(terms, graph, self.pattern.range_on);
        let Some((lo, hi)) = Index::bounds(pattern.prefix(), pattern.scan_range) else {
            return Ok(0);
        };
        let ctx = &self.ctx;
        let reader = self.readers[pattern.perm as usize]
            .get_or_insert_with(|| ctx.index.lookup(pattern.perm));
        let (mut last_triple, mut found) = (None, 0);
        reader.rows(lo, hi, |stored| {
            if pattern.fill(ctx, stored, &mut last_triple, row_out) {
                rows.extend_from_slice(row_out);
                found += 1;
            }
        })?;
        Ok(found)
    }
}

impl Operator for IndexJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let shared: Vec<Variable> = self
            .pattern_variables
            .iter()
            .zip(&self.bound_from)
            .filter(|(_, b)| b.is_some())
            .map(|(v, _)| v.clone())
            .collect();
        let scan = Scan::of(
            self.ctx.clone(),
            self.pattern_variables.clone(),
            self.pattern,
        )
        .describe();
        OperatorInfo {
            name: "IndexJoin",
            detail: format!("on {} into {}", super::variable_list(&shared), scan.detail),
            // Lookups, shown where scans show blocks read.
            blocks_read: Some(self.lookups.clone()),
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.left.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.left.save(stash)?))
    }

    /// Each left batch is joined whole into one output batch.
    fn checkpoint(&self) -> Option<OperatorState> {
        self.left.checkpoint().map(OperatorState::wrapping)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.left.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        loop {
            let Some(batch) = self.left.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            // Rows of a batch often share their binding (the same subject
            // repeated): look each binding up once. Found rows go to one flat
            // buffer; the map holds where each binding's rows start, and how
            // many there are.
            let pattern_width = self.pattern_variables.len();
            let mut found: FxHashMap<([PatternTerm; 3], GraphScope), (usize, usize)> =
                FxHashMap::default();
            let mut found_rows: Vec<Id> = Vec::new();
            let mut found_count = 0;
            let mut row_out = vec![Id::UNDEFINED; pattern_width];
            let mut left = vec![Id::UNDEFINED; batch.columns.len()];
            let mut out = Batch::with_columns(width);
            for i in 0..batch.len {
                for (slot, column) in left.iter_mut().zip(&batch.columns) {
                    *slot = column[i];
                }
                let key = self.bind(&left);
                let (first, count) = match found.get(&key) {
                    Some(&range) => range,
                    None => {
                        if found.len() % LOOKUPS_PER_CHECK == LOOKUPS_PER_CHECK - 1 {
                            self.ctx.check()?;
                        }
                        let count =
                            self.lookup_into(key.0, key.1, &mut found_rows, &mut row_out)?;
                        let range = (found_count, count);
                        found_count += count;
                        found.insert(key, range);
                        range
                    }
                };
                for r in first..first + count {
                    let right = &found_rows[r * pattern_width..(r + 1) * pattern_width];
                    out.push_merged(&left, right, &self.sources);
                }
            }
            self.memory
                .set((out.len * width * 8 + found_rows.len() * 8) as u64)?;
            // Nothing joined: go on, unless the left side paused or the
            // turn is over.
            if out.len > 0 || batch.len == 0 || self.ctx.should_yield() {
                return Ok(Some(out));
            }
        }
    }
}
