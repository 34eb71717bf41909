//! Index scan of one triple pattern. Constants become the bound prefix of the
//! permutation that has them as leading columns; the graph column (last in
//! every permutation) is filtered row by row.

use super::pattern_rows::PatternRows;
use super::profile::OperatorInfo;
use super::{Batch, Operator};
use crate::context::{GraphSet, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::Id;
use tern_index::{MergedScan, Row};

/// One position of a triple pattern (ordered constants first, then
/// variables: the lookup cache sorts bindings by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PatternTerm {
    Constant(Id),
    /// A variable, given as its output column.
    Variable(usize),
}

/// Which graphs a pattern matches in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphScope {
    /// The query's default graph.
    Default,
    /// `GRAPH <iri>`.
    Named(Id),
    /// `GRAPH ?g`: any named graph; the graph goes to this output column.
    NamedVariable(usize),
}

pub struct Scan {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    pattern: PatternRows,
    iter: MergedScan,
    /// The triple of the last row emitted, to merge graphs of a default graph
    /// that spans several graphs.
    last_triple: Option<[u64; 3]>,
    /// The last index row read: where a resumed scan continues.
    last_row: Option<[u64; 4]>,
    blocks_read: Arc<AtomicU64>,
    /// For each output column, the stored column it is a copy of, when
    /// batches can be copied whole (see [`PatternRows::stored_columns`]).
    stored_columns: Option<Vec<usize>>,
    /// In a copy of a pipeline for one core (see [`Scan::part`]): the
    /// morsels of the pattern's rows it reads, one after the other, the
    /// one it is reading, and which copy of how many it is (for EXPLAIN).
    morsels: Vec<(Row, Row)>,
    morsel: usize,
    part: Option<(usize, usize)>,
    /// Blocks read by the morsels before the current one.
    blocks_before: u64,
}

impl Scan {
    pub fn new(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        terms: [PatternTerm; 3],
        graph: GraphScope,
    ) -> Scan {
        Scan::of(ctx, variables, PatternRows::new(terms, graph))
    }

    pub fn of(ctx: Arc<QueryContext>, variables: Vec<Variable>, pattern: PatternRows) -> Scan {
        let iter = ctx
            .index
            .scan(pattern.perm, pattern.prefix(), pattern.scan_range);
        Scan::reading(ctx, variables, pattern, iter)
    }

    /// The rows of `pattern` in `morsels` only (each the index rows from
    /// its first to its last, both included), read one morsel after the
    /// other: the part `part.0` of `part.1` copies of a pipeline that
    /// together read the pattern, each on a core (`ParallelPipelines`).
    pub fn part(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        pattern: PatternRows,
        morsels: Vec<(Row, Row)>,
        part: (usize, usize),
    ) -> Scan {
        let (lo, hi) = morsels.first().copied().unwrap_or(([u64::MAX; 4], [0; 4]));
        let iter = ctx.index.scan_between(pattern.perm, lo, hi);
        let mut scan = Scan::reading(ctx, variables, pattern, iter);
        scan.morsels = morsels;
        scan.part = Some(part);
        scan
    }

    /// Moves on to morsel `morsel` (of a copy's scan); false past the last.
    fn start_morsel(&mut self, morsel: usize) -> bool {
        let Some(&(lo, hi)) = self.morsels.get(morsel) else {
            return false;
        };
        self.blocks_before += self.iter.blocks_read();
        self.iter = self.ctx.index.scan_between(self.pattern.perm, lo, hi);
        self.morsel = morsel;
        self.last_row = None;
        true
    }

    fn reading(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        pattern: PatternRows,
        iter: MergedScan,
    ) -> Scan {
        let stored_columns = pattern.stored_columns(&ctx, variables.len());
        Scan {
            ctx,
            variables,
            pattern,
            iter,
            last_triple: None,
            last_row: None,
            blocks_read: Arc::default(),
            stored_columns,
            morsels: Vec::new(),
            morsel: 0,
            part: None,
            blocks_before: 0,
        }
    }

    /// Whether equal triples of different graphs are one row (a default
    /// graph that is the union of graphs).
    fn merges_graphs(&self) -> bool {
        matches!(self.ctx.default_graph, GraphSet::All)
    }

    /// Exact number of index rows the pattern's constants (and range)
    /// select, graphs and repeated variables not yet taken into account: the
    /// optimizer's estimate.
    pub fn estimate(ctx: &QueryContext, pattern: &PatternRows) -> Result<u64, EngineError> {
        Ok(ctx
            .index
            .count(pattern.perm, pattern.prefix(), pattern.scan_range)?)
    }

    /// The last row read (and triple produced, when graphs are merged).
    /// A copy's scan puts the morsel it reads first.
    fn position(&self) -> OperatorState {
        let mut numbers = Vec::with_capacity(8);
        if self.part.is_some() {
            numbers.push(self.morsel as u64);
        }
        if let Some(row) = self.last_row {
            numbers.extend_from_slice(&row);
            if let Some(triple) = self.last_triple {
                numbers.extend_from_slice(&triple);
            }
        }
        OperatorState::new(numbers, Vec::new())
    }
}

impl Operator for Scan {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let pattern = describe_pattern(&self.ctx, &self.variables, &self.pattern);
        let part = match self.part {
            Some((part, parts)) => format!(" (part {} of {parts})", part + 1),
            None => String::new(),
        };
        OperatorInfo {
            name: "Scan",
            detail: format!("{pattern}{part}"),
            blocks_read: Some(self.blocks_read.clone()),
        }
    }

    fn save(&mut self, _: &Stash) -> Result<OperatorState, EngineError> {
        Ok(self.position())
    }

    /// A scan resumes after the last row it read, and its batches are the
    /// matching parts of whole blocks: the same batch comes again.
    fn checkpoint(&self) -> Option<OperatorState> {
        Some(self.position())
    }

    fn restore(&mut self, state: OperatorState, _: &Stash) -> Result<(), EngineError> {
        let mut numbers = &state.numbers[..];
        if self.part.is_some() {
            let Some((&morsel, rest)) = numbers.split_first() else {
                return Err(bad_state("a morsel scan's position has no morsel"));
            };
            let morsel = usize::try_from(morsel).map_err(|_| bad_state("morsel"))?;
            if !self.start_morsel(morsel) {
                return Err(bad_state("a morsel scan's morsel is past its last"));
            }
            numbers = rest;
        }
        match numbers.len() {
            0 => return Ok(()),
            4 | 7 => {}
            n => {
                return Err(bad_state(format!(
                    "a scan position has 4 or 7 numbers, not {n}"
                )))
            }
        }
        let row = [numbers[0], numbers[1], numbers[2], numbers[3]];
        self.iter.resume_after(row);
        self.last_row = Some(row);
        if numbers.len() == 7 {
            self.last_triple = Some([numbers[4], numbers[5], numbers[6]]);
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        loop {
            self.ctx.check()?;
            let Some(rows) = self.iter.next() else {
                if self.start_morsel(self.morsel + 1) {
                    continue;
                }
                return Ok(None);
            };
            let mut rows = rows?;
            self.blocks_read.store(
                self.blocks_before + self.iter.blocks_read(),
                Ordering::Relaxed,
            );
            if !rows.is_empty() {
                self.last_row = Some(rows.row(rows.len() - 1));
            }
            if let Some(from) = &self.stored_columns {
                // Rows all of the default graph: none is dropped, and none
                // repeats a triple (one graph), unless the first repeats the
                // last of the batch before, from another graph.
                let triple = |row: [u64; 4]| {
                    let quad = self.pattern.perm.quad_of(row);
                    [quad[0], quad[1], quad[2]]
                };
                let merges = self.merges_graphs();
                if !rows.is_empty()
                    && rows.columns[3].iter().all(|g| *g == Id::DEFAULT_GRAPH)
                    && !(merges && self.last_triple == Some(triple(rows.row(0))))
                {
                    if merges {
                        self.last_triple = Some(triple(rows.row(rows.len() - 1)));
                    }
                    let len = rows.len();
                    let columns = from
                        .iter()
                        .map(|&c| std::mem::take(&mut rows.columns[c]))
                        .collect();
                    return Ok(Some(Batch { columns, len }));
                }
            }
            let mut out = Batch::with_columns(width);
            let mut row_out = vec![Id::UNDEFINED; width];
            for i in 0..rows.len() {
                let stored = rows.row(i);
                if self
                    .pattern
                    .fill(&self.ctx, stored, &mut self.last_triple, &mut row_out)
                {
                    out.push_row(&row_out);
                }
            }
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
    }
}

/// A pattern as EXPLAIN shows it: the permutation read, its terms, its
/// graph and the range of its last column read.
pub(super) fn describe_pattern(
    ctx: &QueryContext,
    variables: &[Variable],
    pattern: &PatternRows,
) -> String {
    let names = ["S", "P", "O"];
    let term = |id: Id| match ctx.term(id) {
        Ok(Some(term)) => term.to_string(),
        _ => format!("{id:?}"),
    };
    let terms: Vec<String> = pattern
        .terms
        .iter()
        .map(|t| match *t {
            PatternTerm::Constant(id) => term(id),
            PatternTerm::Variable(c) => variables[c].to_string(),
        })
        .collect();
    let order: String = pattern.perm.order().iter().map(|&p| names[p]).collect();
    let graph = match pattern.graph {
        GraphScope::Default => String::new(),
        GraphScope::Named(g) => format!(" in graph {g:?}"),
        GraphScope::NamedVariable(c) => format!(" in graph {}", variables[c]),
    };
    let range = if pattern.scan_range.is_all() {
        String::new()
    } else {
        let bound = |b: Bound<Id>| match b {
            Bound::Included(id) | Bound::Excluded(id) => term(id),
            Bound::Unbounded => "..".into(),
        };
        let range = pattern.scan_range;
        format!(" reading {} to {}", bound(range.start), bound(range.end))
    };
    format!("{order} {}{graph}{range}", terms.join(" "))
}
