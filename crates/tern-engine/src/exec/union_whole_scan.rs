//! A [`UnionOfPatterns`] read whole into [`DistinctRows`]: each stored
//! pattern scanned in the order that brings its output's repeats
//! together, column by column where the batch allows, on all cores when
//! the union is large (its patterns split between threads, each with its
//! own sink, merged at the end).

use super::distinct_rows::DistinctRows;
use super::pattern_rows::PatternRows;
use super::scan::PatternTerm;
use super::union_of_patterns::{
    emit, is_literal, BranchValue, UnionBranch, UnionOfPatterns, UnionRow, MAX_UNION_WIDTH,
};
use crate::context::{QueryContext, SynonymTable};
use crate::EngineError;
use rayon::prelude::*;
use tern_index::{Id, ScanRange};

/// Rows (estimated) from which a union is read on several threads: below,
/// the threads' start and their sinks' merge cost more than they save.
const PARALLEL_ROWS: u64 = 1 << 16;

/// The sameAs synonyms of a one-column union are added once at the end, a
/// pass over the whole synonym table, rather than looked up per value,
/// when the union has this many times more rows (estimated) than the table
/// has members.
const DEFERRED_SYNONYM_RATIO: u64 = 4;

/// What a whole scan hears after each batch: the bytes its sinks hold (the
/// query's memory budget may refuse them).
pub type Charge<'a> = &'a (dyn Fn(u64) -> Result<(), EngineError> + Sync);

impl UnionOfPatterns {
    /// Every row of the union into `sink` (nothing bound): each pattern
    /// scanned whole, the complex branches read whole.
    pub fn scan_all(
        &mut self,
        ctx: &QueryContext,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<(), EngineError> {
        let total: u64 = self.branches.iter().map(|b| b.rows).sum();
        let defer_synonyms = self
            .synonyms
            .as_deref()
            .is_some_and(|t| total >= t.len() as u64 * DEFERRED_SYNONYM_RATIO);
        let threads = rayon::current_num_threads().min(self.branches.len());
        if threads > 1 && total >= PARALLEL_ROWS {
            let groups = balance(&self.branches, threads);
            let reader = self.reader(defer_synonyms);
            let branches = &self.branches;
            let sinks: Vec<Result<DistinctRows, EngineError>> = groups
                .into_par_iter()
                .map(|group| {
                    let mut own = DistinctRows::new(ctx, sink.width());
                    // Each thread is charged for its share as if all
                    // held as much.
                    let share = |bytes: u64| charge(bytes * threads as u64);
                    for b in group {
                        reader.scan_branch(ctx, &branches[b], &mut own, &share)?;
                    }
                    Ok(own)
                })
                .collect();
            for own in sinks {
                sink.merge(own?);
            }
        } else {
            let reader = self.reader(defer_synonyms);
            for branch in &self.branches {
                reader.scan_branch(ctx, branch, sink, charge)?;
            }
        }
        if let Some(table) = self.synonyms.as_deref() {
            sink.expand_synonyms(table);
        }
        if !self.complex().is_empty() {
            let unbound = vec![None; self.variables.len()];
            let mut chunk = Vec::new();
            self.probe_complex(ctx, &unbound, &mut chunk)?;
            sink.add(&mut chunk);
            charge((sink.bytes() + self.memory() as usize) as u64)?;
        }
        Ok(())
    }

    /// What reading its patterns needs, shareable between threads (the
    /// complex branches are not).
    fn reader(&self, defer_synonyms: bool) -> BranchReader<'_> {
        BranchReader {
            defer_synonyms,
            columns: self.variables.len(),
            synonyms: self.synonyms.as_deref(),
            first_literal: self.first_literal,
        }
    }
}

/// See [`UnionOfPatterns::reader`].
struct BranchReader<'a> {
    /// See [`DEFERRED_SYNONYM_RATIO`].
    defer_synonyms: bool,
    columns: usize,
    synonyms: Option<&'a SynonymTable>,
    first_literal: Option<Id>,
}

impl BranchReader<'_> {
    /// One stored pattern, read whole, into `sink`.
    fn scan_branch(
        &self,
        ctx: &QueryContext,
        branch: &UnionBranch,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<(), EngineError> {
        let unbound = vec![None; self.columns];
        let mut chunk: Vec<UnionRow> = Vec::new();
        let synonyms = self.synonyms;
        let pattern = branch.pattern_for_scan();
        let mut row_out = vec![Id::UNDEFINED; branch.width];
        let mut last_triple = None;
        // Batches of the default graph are read column by column, and
        // a row whose output repeats the last row kept (a subject with
        // many objects, read in subject order) is skipped before it
        // costs anything: the sink keeps distinct rows anyway.
        let stored = pattern.stored_columns(ctx, branch.width);
        let deciding = branch.deciding_columns();
        // A one-column union fed by one pattern column: its values go
        // to the sink as they are read.
        let single = match &branch.output[..] {
            [BranchValue::Column(pc)] if sink.width() == 1 => {
                Some((*pc, synonyms.is_some() && branch.synonyms.contains(pc)))
            }
            _ => None,
        };
        let emit_row = |row: &[Id], chunk: &mut Vec<UnionRow>| {
            emit(
                ctx,
                branch,
                &unbound,
                row,
                self.first_literal,
                synonyms,
                chunk,
            )
        };
        let mut previous: Option<UnionRow> = None;
        for batch in ctx
            .index
            .scan(pattern.perm, pattern.prefix(), pattern.scan_range)
        {
            let batch = batch?;
            ctx.check()?;
            let default_graph = batch.columns[3].iter().all(|g| *g == Id::DEFAULT_GRAPH);
            match &stored {
                Some(from) if default_graph && single.is_some() => {
                    let (pc, expands) = single.expect("matched");
                    let mut last = previous.map(|row| row[0]);
                    'rows: for (i, &value) in
                        batch.columns[from[pc]][..batch.len()].iter().enumerate()
                    {
                        if last == Some(value) {
                            continue;
                        }
                        for &check in &branch.not_literal {
                            let checked = batch.columns[from[check]][i];
                            if is_literal(ctx, self.first_literal, checked)? {
                                continue 'rows;
                            }
                        }
                        last = Some(value);
                        match synonyms.filter(|_| expands) {
                            Some(_) if self.defer_synonyms => sink.add_with_synonyms(value),
                            Some(table) => match table.class_of(value) {
                                Some(class) => class.iter().for_each(|&m| sink.add_value(m)),
                                None => sink.add_value(value),
                            },
                            None => sink.add_value(value),
                        }
                    }
                    previous = last.map(|v| [v, Id::UNDEFINED, Id::UNDEFINED, Id::UNDEFINED]);
                }
                Some(from) if default_graph => {
                    for i in 0..batch.len() {
                        for &pc in &deciding {
                            row_out[pc] = batch.columns[from[pc]][i];
                        }
                        let mut key = [Id::UNDEFINED; MAX_UNION_WIDTH];
                        for (slot, value) in key.iter_mut().zip(&branch.output) {
                            if let BranchValue::Column(pc) = value {
                                *slot = row_out[*pc];
                            }
                        }
                        if previous == Some(key) {
                            continue;
                        }
                        let before = chunk.len();
                        emit_row(&row_out, &mut chunk)?;
                        // Only a row that was kept: one dropped for a
                        // literal does not stand for the next.
                        if chunk.len() > before {
                            previous = Some(key);
                        }
                    }
                }
                _ => {
                    previous = None;
                    for i in 0..batch.len() {
                        let stored = batch.columns.each_ref().map(|c| c[i].0);
                        if pattern.fill(ctx, stored, &mut last_triple, &mut row_out) {
                            emit_row(&row_out, &mut chunk)?;
                        }
                    }
                }
            }
            sink.add(&mut chunk);
            charge(sink.bytes() as u64)?;
        }
        Ok(())
    }
}

/// The branches split into `threads` groups of about equal estimated rows
/// (largest first, each to the lightest group).
fn balance(branches: &[UnionBranch], threads: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..branches.len()).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(branches[b].rows));
    let mut groups = vec![(0u64, Vec::new()); threads];
    for b in order {
        let lightest = groups
            .iter_mut()
            .min_by_key(|(rows, _)| *rows)
            .expect("at least one group");
        lightest.0 += branches[b].rows.max(1);
        lightest.1.push(b);
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

impl UnionBranch {
    /// The pattern as a whole scan reads it: where one pattern column alone
    /// gives the output, in the permutation sorted on it (after the
    /// constants), so that its repeats come together.
    fn pattern_for_scan(&self) -> PatternRows {
        let pattern = self.pattern;
        if pattern.range_on.is_some() {
            return pattern;
        }
        let mut columns = self.output_columns();
        let (Some(column), None) = (columns.next(), columns.next()) else {
            return pattern;
        };
        let position = pattern
            .terms
            .iter()
            .position(|t| *t == PatternTerm::Variable(column));
        match position {
            Some(position) => PatternRows::ranged(
                pattern.terms,
                pattern.graph,
                Some((position, ScanRange::ALL)),
            ),
            None => pattern,
        }
    }

    /// The pattern columns the output takes values from (not constants).
    fn output_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.output.iter().filter_map(|v| match v {
            BranchValue::Column(pc) => Some(*pc),
            BranchValue::Constant(_) => None,
        })
    }

    /// The pattern columns that decide a row's output: those it outputs
    /// and those whose literals drop it.
    fn deciding_columns(&self) -> Vec<usize> {
        let mut columns: Vec<usize> = self
            .output_columns()
            .chain(self.not_literal.iter().copied())
            .collect();
        columns.sort_unstable();
        columns.dedup();
        columns
    }
}
