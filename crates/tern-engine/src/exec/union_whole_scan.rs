//! A [`UnionOfPatterns`] read whole into [`DistinctRows`]: each stored
//! pattern scanned in the order that brings its output's repeats
//! together, column by column where the batch allows, on all cores when
//! the union is large (its patterns split between threads, each with its
//! own sink, merged at the end). The reading stops at the end of a turn
//! with each unfinished pattern's position ([`BranchTask`]), so a union of
//! millions of rows pauses like every other operator.

use super::distinct_rows::DistinctRows;
use super::pattern_rows::PatternRows;
use super::scan::PatternTerm;
use super::union_of_patterns::{
    emit, is_literal, BranchValue, UnionBranch, UnionOfPatterns, UnionRow, MAX_UNION_WIDTH,
};
use crate::context::{QueryContext, SynonymTable};
use crate::EngineError;
use rayon::prelude::*;
use tern_index::{Id, Row, ScanRange};

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

/// A pattern of the union still to read: its branch and, when it was read
/// in part, the last row read of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchTask {
    pub branch: usize,
    pub after: Option<Row>,
}

impl UnionOfPatterns {
    /// Every stored pattern, none read yet.
    pub fn all_tasks(&self) -> Vec<BranchTask> {
        (0..self.branches.len())
            .map(|branch| BranchTask {
                branch,
                after: None,
            })
            .collect()
    }

    /// Reads the patterns of `tasks` whole into `sink` until they are read
    /// or the turn is over (checked after each batch, on every thread);
    /// leaves in `tasks` what is still to read, each pattern from where it
    /// stopped. Once `tasks` is empty, [`finish_reading`](Self::finish_reading)
    /// completes the rows.
    pub fn read_tasks(
        &self,
        ctx: &QueryContext,
        tasks: &mut Vec<BranchTask>,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<(), EngineError> {
        // Decided on the whole union, so that every turn decides the same.
        let total: u64 = self.branches.iter().map(|b| b.rows).sum();
        let defer_synonyms = self
            .synonyms
            .as_deref()
            .is_some_and(|t| total >= t.len() as u64 * DEFERRED_SYNONYM_RATIO);
        let reader = self.reader(defer_synonyms);
        let left: u64 = tasks.iter().map(|t| self.branches[t.branch].rows).sum();
        let threads = rayon::current_num_threads().min(tasks.len());
        if threads > 1 && left >= PARALLEL_ROWS {
            let groups = balance(&self.branches, std::mem::take(tasks), threads);
            let branches = &self.branches;
            let read: Vec<Result<(DistinctRows, Vec<BranchTask>), EngineError>> = groups
                .into_par_iter()
                .map(|group| {
                    let mut own = DistinctRows::new(ctx, sink.width());
                    // Each thread is charged for its share as if all
                    // held as much.
                    let share = |bytes: u64| charge(bytes * threads as u64);
                    let left = reader.read_group(ctx, branches, group, &mut own, &share)?;
                    Ok((own, left))
                })
                .collect();
            for result in read {
                let (own, left) = result?;
                sink.merge(own);
                tasks.extend(left);
            }
        } else {
            let group = std::mem::take(tasks);
            *tasks = reader.read_group(ctx, &self.branches, group, sink, charge)?;
        }
        Ok(())
    }

    /// After every pattern is read: the synonyms of one-column values added
    /// and the complex branches read whole.
    pub fn finish_reading(
        &mut self,
        ctx: &QueryContext,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<(), EngineError> {
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
    /// The patterns of `group`, one after the other, into `sink`; what is
    /// left of them when the turn ends (nothing: all read).
    fn read_group(
        &self,
        ctx: &QueryContext,
        branches: &[UnionBranch],
        group: Vec<BranchTask>,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<Vec<BranchTask>, EngineError> {
        for (i, task) in group.iter().enumerate() {
            let stopped =
                self.scan_branch(ctx, &branches[task.branch], task.after, sink, charge)?;
            if let Some(after) = stopped {
                let mut left = vec![BranchTask {
                    branch: task.branch,
                    after: Some(after),
                }];
                left.extend_from_slice(&group[i + 1..]);
                return Ok(left);
            }
        }
        Ok(Vec::new())
    }

    /// One stored pattern, read into `sink` from after `after` (from its
    /// start without); the last row read when the turn ended first.
    fn scan_branch(
        &self,
        ctx: &QueryContext,
        branch: &UnionBranch,
        after: Option<Row>,
        sink: &mut DistinctRows,
        charge: Charge<'_>,
    ) -> Result<Option<Row>, EngineError> {
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
        let mut scan = ctx
            .index
            .scan(pattern.perm, pattern.prefix(), pattern.scan_range);
        if let Some(row) = after {
            scan.resume_after(row);
        }
        for batch in scan {
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
            // The thread that hears it leaves the signal to the operator.
            if ctx.turn_over() {
                return Ok(Some(batch.row(batch.len() - 1)));
            }
        }
        Ok(None)
    }
}

/// The tasks split into `threads` groups of about equal estimated rows
/// (largest first, each to the lightest group).
fn balance(
    branches: &[UnionBranch],
    mut tasks: Vec<BranchTask>,
    threads: usize,
) -> Vec<Vec<BranchTask>> {
    tasks.sort_by_key(|t| std::cmp::Reverse(branches[t.branch].rows));
    let mut groups = vec![(0u64, Vec::new()); threads];
    for task in tasks {
        let lightest = groups
            .iter_mut()
            .min_by_key(|(rows, _)| *rows)
            .expect("at least one group");
        lightest.0 += branches[task.branch].rows.max(1);
        lightest.1.push(task);
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
