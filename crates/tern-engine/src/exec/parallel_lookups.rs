//! The lookups of one left batch of an index join, on all cores.
//!
//! An index join's time at scale is its lookups: each is a search of the
//! block list, a block from the cache and a search inside the block, a few
//! cache misses each (BSBM BI Q01 at 100M: 131 K lookups of reviewers, 60%
//! of the query's profile, on one core). The left rows of a batch are all
//! known when the batch arrives, so the bindings the lookup cache lacks are
//! cut into one contiguous share per core and looked up at once, each core
//! with its own readers (which keep the block each read last, as the join's
//! own do). The join then finds every row's matches in its cache and emits
//! them in order as before: the output, its batches and the saved state do
//! not change, only who did the lookups.

use super::pattern_rows::PatternRows;
use super::scan::{GraphScope, PatternTerm};
use crate::context::QueryContext;
use crate::EngineError;
use std::sync::atomic::{AtomicU64, Ordering};
use tern_index::{Id, MergedLookup, Permutation};

/// A pattern with a left row's values in place of its shared variables.
pub type LookupKey = ([PatternTerm; 3], GraphScope);

/// Readers of every permutation, created as lookups need them.
pub type Readers = [Option<MergedLookup>; Permutation::COUNT];

/// Bindings below which a batch's lookups stay on the join's thread: the
/// hand-over costs about as much as a hundred lookups.
pub const PARALLEL_MIN_KEYS: usize = 256;

/// Lookups between two checks for cancellation and the deadline (here and
/// in the index join's own loop).
pub const LOOKUPS_PER_CHECK: usize = 64;

/// Appends the pattern's rows for one binding (its own columns) to `rows`;
/// returns how many.
pub fn lookup_binding(
    ctx: &QueryContext,
    readers: &mut Readers,
    key: LookupKey,
    unbound: &PatternRows,
    rows: &mut Vec<Id>,
    row_out: &mut [Id],
    lookups: &AtomicU64,
) -> Result<usize, EngineError> {
    lookups.fetch_add(1, Ordering::Relaxed);
    let pattern = unbound.bound_to(key.0, key.1);
    let mut found = 0;
    pattern.lookup(ctx, readers, row_out, |row| {
        rows.extend_from_slice(row);
        found += 1;
    })?;
    Ok(found)
}

/// What one core found for its share of the bindings: the rows of each
/// binding it looked up, one after the other, and how many each had. It
/// may stop before the end of its share (see [`ParallelLookups::run`]).
pub struct Share {
    /// The position in the keys of its first key.
    pub first_key: usize,
    pub rows: Vec<Id>,
    pub counts: Vec<usize>,
}

/// One set of readers per core, kept from batch to batch.
#[derive(Default)]
pub struct ParallelLookups {
    workers: Vec<Readers>,
}

impl ParallelLookups {
    /// Looks `keys` up, in contiguous shares, one per core. A core stops
    /// once its rows hold more than `most_values / cores` values (a binding
    /// may match thousands of rows: the lookup cache stays bounded); the
    /// shares come back in key order, each with the keys it did.
    pub fn run(
        &mut self,
        ctx: &QueryContext,
        keys: &[LookupKey],
        unbound: &PatternRows,
        width: usize,
        most_values: usize,
        lookups: &AtomicU64,
    ) -> Result<Vec<Share>, EngineError> {
        use rayon::prelude::*;
        let threads = ctx.cores();
        self.workers.resize_with(threads, Default::default);
        let per_share = keys.len().div_ceil(threads).max(1);
        let most_per_share = most_values / threads;
        keys.par_chunks(per_share)
            .enumerate()
            .zip(self.workers.par_iter_mut())
            .map(|((n, share), readers)| {
                let mut row_out = vec![Id::UNDEFINED; width];
                let mut found = Share {
                    first_key: n * per_share,
                    rows: Vec::new(),
                    counts: Vec::with_capacity(share.len()),
                };
                for (i, &key) in share.iter().enumerate() {
                    if found.rows.len() > most_per_share {
                        break;
                    }
                    if i % LOOKUPS_PER_CHECK == LOOKUPS_PER_CHECK - 1 {
                        ctx.check()?;
                    }
                    let count = lookup_binding(
                        ctx,
                        readers,
                        key,
                        unbound,
                        &mut found.rows,
                        &mut row_out,
                        lookups,
                    )?;
                    found.counts.push(count);
                }
                Ok(found)
            })
            .collect()
    }
}
